# `cmake --install` puts the binary, the profiles and the presets under a prefix; the installed
# binary, run from elsewhere, finds them there. A data folder that cannot be read is an input
# error naming it (exit 2), not an empty list.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()
set(bin ${WORK}/prefix/bin/tessera)
execute_process(COMMAND ${bin} list WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "hardware profiles: [^\n]*b200 b300 gb200 gb300 h100-sxm h100-sxm-96gb h200-sxm h800-sxm"
   OR NOT out MATCHES "topology presets: [^\n]*gb200-nvl72 single-node")
  message(FATAL_ERROR "installed tessera list (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${bin} run ${SCENARIO} --quiet WORKING_DIRECTORY ${WORK}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed tessera run failed (${rc}): ${err}")
endif()
file(MAKE_DIRECTORY ${WORK}/data/hwprofiles)
execute_process(COMMAND ${CMAKE_COMMAND} -E env TESSERA_DATA_DIR=${WORK}/data ${bin} list
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "is not a folder")
  message(FATAL_ERROR "a data folder without topology/presets: expected exit 2 naming it, got "
                      "${rc}: ${err}")
endif()

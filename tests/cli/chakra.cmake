# `tessera synth --chakra` writes one .et per rank and the groups JSON; `inspect` summarizes
# a file; `simulate --chakra` times the traces; a corrupt file is an input error (exit 2).
execute_process(COMMAND ${TESSERA} synth ${SCENARIO} --chakra ${WORK}/et/tiny
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "synth failed (${rc}): ${err}")
endif()
foreach(r 0 1 2 3 4 5 6 7)
  if(NOT EXISTS ${WORK}/et/tiny.${r}.et)
    message(FATAL_ERROR "synth did not write tiny.${r}.et")
  endif()
endforeach()
if(NOT EXISTS ${WORK}/et/tiny.groups.json)
  message(FATAL_ERROR "synth did not write tiny.groups.json")
endif()
execute_process(COMMAND ${TESSERA} inspect ${WORK}/et/tiny.0.et
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
string(FIND "${out}" "COMP_NODE" at)
if(NOT rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "inspect failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} simulate --chakra ${WORK}/et/tiny --hardware h100-sxm
                        --topology single-node
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(FIND "${out}" "step time" at)
if(NOT rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "simulate failed (${rc}): ${out}${err}")
endif()
file(WRITE ${WORK}/et/broken.0.et "\x05\x0a\x03")
execute_process(COMMAND ${TESSERA} inspect ${WORK}/et/broken.0.et
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "a truncated trace should exit 2, got ${rc}: ${err}")
endif()

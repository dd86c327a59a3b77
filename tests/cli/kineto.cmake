# `tessera validate` and `tessera replay` (as measured, and moved to H100) run on a shipped
# Kineto trace (exit 0, the expected rows); garbage, truncated gzip and a JSON that is not a
# trace exit 2.
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TESSERA} validate ${SCENARIO} --measured ${TRACE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(FIND "${out}" "all-reduce collectives" at)
if(NOT rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "validate failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} validate ${SCENARIO} --measured ${TRACE} --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(JSON steps ERROR_VARIABLE jerr GET "${out}" traces 0 iterations)
if(NOT rc EQUAL 0 OR NOT steps EQUAL 3)
  message(FATAL_ERROR "validate --format json failed (${rc}, ${jerr}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} replay --measured ${TRACE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(FIND "${out}" "replayed" at)
if(NOT rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "replay failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} replay --measured ${TRACE} --hardware h100-sxm
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(FIND "${out}" "on a100-sxm-80gb, predicted" at)
string(FIND "${out}" "moved from a100-sxm-80gb to h100-sxm" moved)
if(NOT rc EQUAL 0 OR at EQUAL -1 OR moved EQUAL -1)
  message(FATAL_ERROR "replay --hardware failed (${rc}): ${out}${err}")
endif()
file(WRITE ${WORK}/garbage.json "this is not json")
file(WRITE ${WORK}/notrace.json "{\"schemaVersion\": 1}")
foreach(bad garbage.json notrace.json)
  execute_process(COMMAND ${TESSERA} validate ${SCENARIO} --measured ${WORK}/${bad}
                  RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
  string(FIND "${err}" "${bad}" named)
  if(NOT rc EQUAL 2 OR named EQUAL -1)
    message(FATAL_ERROR "validate on ${bad} should exit 2 naming the file, got ${rc}: ${err}")
  endif()
endforeach()
execute_process(COMMAND ${TESSERA} replay --measured ${WORK}/garbage.json
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "replay on garbage should exit 2, got ${rc}: ${err}")
endif()

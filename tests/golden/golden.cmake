# Runs one shipped scenario and compares its summary.json and ranks.csv with the golden copies
# in tests/golden/scenarios/<name>/ (golden_diff: numbers within a relative 1e-9).
execute_process(COMMAND ${TESSERA} run ${SCENARIO} --quiet --out ${WORK}
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera run ${SCENARIO} failed (${rc}): ${err}")
endif()
set(failed "")
foreach(f summary.json ranks.csv)
  execute_process(COMMAND ${GOLDEN_DIFF} ${GOLDEN}/${f} ${WORK}/${f} RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    list(APPEND failed ${f})
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${SCENARIO}: ${failed} moved from the golden results")
endif()

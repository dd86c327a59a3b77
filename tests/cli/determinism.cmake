# Runs a scenario twice and requires byte-identical outputs.
foreach(i 1 2)
  execute_process(COMMAND ${TESSERA} run ${SCENARIO} --quiet --out ${WORK}/run${i}
                  RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${i} failed (${rc}): ${err}")
  endif()
endforeach()
foreach(f summary.json ranks.csv timeline.json.gz)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/run1/${f} ${WORK}/run2/${f}
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${f} differs between two runs of ${SCENARIO}")
  endif()
endforeach()

# `tessera compare` prints one row per schedule, writes compare.csv/json and per-schedule
# reports, explains a schedule that cannot run, and rejects an unknown schedule with exit 2.
execute_process(COMMAND ${TESSERA} compare ${SCENARIO} --schedules 1f1b,gpipe,interleaved:2
                        --set model.layers=4 --out ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compare failed (${rc}): ${err}")
endif()
foreach(word "1f1b" "gpipe" "interleaved (v=2)" "speedup")
  string(FIND "${out}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "compare output lacks '${word}':\n${out}")
  endif()
endforeach()
file(STRINGS ${WORK}/compare.csv rows)
list(LENGTH rows n)
if(NOT n EQUAL 4)
  message(FATAL_ERROR "compare.csv should have a header and 3 rows, has ${n} lines")
endif()
foreach(f summary-1f1b.json timeline-gpipe.json.gz ranks-interleaved-2.csv compare.json)
  if(NOT EXISTS ${WORK}/${f})
    message(FATAL_ERROR "compare did not write ${f}")
  endif()
endforeach()
execute_process(COMMAND ${TESSERA} compare ${SCENARIO} --schedules 1f1b,zigzag
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "an unknown schedule should exit 2, got ${rc}: ${err}")
endif()

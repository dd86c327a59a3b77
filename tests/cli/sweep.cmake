# `tessera compare --sweep` reruns the comparison per value of one key: a speedup matrix on the
# console, sweep.csv/json and an SVG chart with --out (no timelines), a "cannot run" row for a
# value that makes the scenario invalid, and exit 2 for a malformed --sweep.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${TESSERA} compare ${SCENARIO} --schedules 1f1b,gpipe,interleaved:2
                        --sweep model.layers=4,8 --out ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compare --sweep failed (${rc}): ${err}")
endif()
foreach(word "model.layers" "interleaved (v=2)" "speedup vs 1f1b")
  string(FIND "${out}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "compare --sweep output lacks '${word}':\n${out}")
  endif()
endforeach()
file(STRINGS ${WORK}/sweep.csv rows)
list(LENGTH rows n)
if(NOT n EQUAL 7)
  message(FATAL_ERROR "sweep.csv should have a header and 2 x 3 rows, has ${n} lines")
endif()
# Each row names the swept key and value and carries the configuration as fields.
list(GET rows 0 header)
list(GET rows 1 first)
if(NOT header MATCHES "^key,value,schedule,.*,tp,pp,dp,sp,micro_batch,.*,hardware,topology$"
   OR NOT first MATCHES "^\"model.layers\",")
  message(FATAL_ERROR "sweep.csv lacks the key or configuration columns:\n${header}\n${first}")
endif()
foreach(f sweep.json sweep.svg summary-4-1f1b.json summary-8-interleaved-2.json)
  if(NOT EXISTS ${WORK}/${f})
    message(FATAL_ERROR "compare --sweep did not write ${f}")
  endif()
endforeach()
file(READ ${WORK}/sweep.svg svg)
string(FIND "${svg}" "<svg" at)
string(FIND "${svg}" "</svg>" end)
if(NOT at EQUAL 0 OR end EQUAL -1)
  message(FATAL_ERROR "sweep.svg is not a standalone SVG document")
endif()
file(GLOB timelines ${WORK}/timeline*)
if(timelines)
  message(FATAL_ERROR "compare --sweep should not write timelines: ${timelines}")
endif()

# A value the scenario cannot take (pp=2 does not divide 3 layers) is a row, not an abort.
execute_process(COMMAND ${TESSERA} compare ${SCENARIO} --schedules 1f1b,gpipe
                        --sweep model.layers=3,4
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(FIND "${out}" "cannot run" at)
if(NOT rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "an invalid swept value should show as 'cannot run' (rc ${rc}):\n${out}${err}")
endif()

# Malformed --sweep arguments are bad input.
foreach(bad "model.layers" "model.layers=" "model.layers=4,,8")
  execute_process(COMMAND ${TESSERA} compare ${SCENARIO} --schedules 1f1b --sweep ${bad}
                  RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 20)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "--sweep '${bad}' should exit 2, got ${rc}: ${err}")
  endif()
  string(FIND "${err}" "--sweep" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the error for --sweep '${bad}' does not name the option: ${err}")
  endif()
endforeach()

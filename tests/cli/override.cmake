# `tessera run SCENARIO --set parallelism.tp=4 --set parallelism.dp=1 --quiet --out DIR`
# succeeds silently and the overrides reach the report: summary.json says "TP4 PP2 DP1".
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${TESSERA} run ${SCENARIO} --set parallelism.tp=4 --set parallelism.dp=1
                        --quiet --out ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera run with --set overrides failed (${rc}): ${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "--quiet should print nothing, printed:\n${out}")
endif()
if(NOT EXISTS ${WORK}/summary.json)
  message(FATAL_ERROR "no summary.json in ${WORK}")
endif()
file(READ ${WORK}/summary.json js)
string(JSON parallelism ERROR_VARIABLE e GET "${js}" parallelism)
if(e)
  message(FATAL_ERROR "summary.json lacks parallelism: ${e}")
endif()
if(NOT parallelism STREQUAL "TP4 PP2 DP1")
  message(FATAL_ERROR "summary.json parallelism is '${parallelism}', expected 'TP4 PP2 DP1'")
endif()
# DP1 with global batch 8 and micro batch 2: 4 microbatches per replica.
string(JSON mbs ERROR_VARIABLE e GET "${js}" microbatches)
if(e OR NOT mbs EQUAL 4)
  message(FATAL_ERROR "summary.json microbatches is '${mbs}', expected 4 ${e}")
endif()

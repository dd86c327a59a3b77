# Runs `tessera check CASE` in this folder and requires exit code 2 and exactly the message
# stored in CASE's .expected file (a missing .expected file fails, printing what came out).
execute_process(COMMAND ${TESSERA} check ${CASE}.yaml
                WORKING_DIRECTORY ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 10)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "${CASE}: expected exit code 2, got '${rc}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT EXISTS ${DIR}/${CASE}.expected)
  message(FATAL_ERROR "${CASE}: no ${CASE}.expected; stderr was:\n${err}")
endif()
file(READ ${DIR}/${CASE}.expected expected)
if(NOT err STREQUAL expected)
  message(FATAL_ERROR "${CASE}: message differs\nexpected: ${expected}\ngot:      ${err}")
endif()

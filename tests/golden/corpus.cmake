# Simulates the corpus of published runs and compares runs.csv with the golden copy in
# tests/golden/corpus/ (golden_diff: numbers within a relative 1e-9, the rest exactly).
execute_process(COMMAND ${TESSERA} runs ${RUNS} --recipes ${RECIPES} --summary --out ${WORK}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 880)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera runs ${RUNS} failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${GOLDEN_DIFF} ${GOLDEN}/runs.csv ${WORK}/runs.csv RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  message(FATAL_ERROR "the corpus moved from its golden results (regenerate on purpose: "
                      "scripts/regen-golden.sh)")
endif()

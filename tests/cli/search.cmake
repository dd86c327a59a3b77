# `tessera search` ranks a space of configurations: the ranked table and the rejection counts on
# the console, search.csv/json/svg and the journal with --out, the same search.csv from two
# shards joined by --merge, and exit 2 with the message for each kind of bad input.
file(REMOVE_RECURSE ${WORK})
set(space --set model.layers=8 --set training.global_batch=16 --vary tp=1,2 --vary pp=1,2,4)
execute_process(COMMAND ${TESSERA} search ${SCENARIO} ${space} --top 3 --out ${WORK}/whole
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "search failed (${rc}): ${err}")
endif()
foreach(word "ranked by step_time" "rank  tp  pp  dp" "step time" "rejected:" "schedule at pp=1")
  string(FIND "${out}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "search output lacks '${word}':\n${out}")
  endif()
endforeach()
foreach(f search.csv search.json search.svg points.jsonl)
  if(NOT EXISTS ${WORK}/whole/${f})
    message(FATAL_ERROR "search --out did not write ${f}")
  endif()
endforeach()
foreach(i 0 1)
  execute_process(COMMAND ${TESSERA} search ${SCENARIO} ${space} --shard ${i}/2
                          --out ${WORK}/shard${i}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "search --shard ${i}/2 failed (${rc}): ${err}")
  endif()
endforeach()
execute_process(COMMAND ${TESSERA} search --merge ${WORK}/shard0 ${WORK}/shard1
                        --out ${WORK}/merged
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
file(READ ${WORK}/whole/search.csv whole)
file(READ ${WORK}/merged/search.csv merged)
if(NOT rc EQUAL 0 OR NOT whole STREQUAL merged)
  message(FATAL_ERROR "merged shards differ from the whole search (${rc}): ${err}")
endif()

function(expect_bad expected)
  execute_process(COMMAND ${TESSERA} search ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  string(FIND "${err}" "${expected}" at)
  if(NOT rc EQUAL 2 OR at EQUAL -1)
    message(FATAL_ERROR "search ${ARGN}: expected exit 2 with '${expected}', got ${rc}:\n${err}")
  endif()
endfunction()
expect_bad("'tpp' is not a search axis (did you mean 'tp'?)" ${SCENARIO} --vary tpp=2)
expect_bad("--vary tp: value 'two': expected an integer >= 1" ${SCENARIO} --vary tp=1,two)
expect_bad("--devices 12: error: devices=12 is not a multiple of the 8 devices per node"
           ${SCENARIO} --devices 12)
expect_bad("--shard 3/2: expected i/N" ${SCENARIO} --shard 3/2 --out ${WORK}/bad)
expect_bad("has no valid configuration on 8 devices" ${SCENARIO} --vary tp=3)
expect_bad("--objective fastest: expected step_time, mfu or tokens_per_s" ${SCENARIO}
           --objective fastest)

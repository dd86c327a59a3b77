# `tessera synth --chakra` writes one .et per rank and the groups JSON; `inspect` summarizes
# a file; `simulate --chakra` times the traces exactly as `run` does (the tessera.*
# attributes); ASTRA-sim's network/system/memory configs are written beside them; a corrupt file is an input error (exit 2).
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
foreach(f groups.json network.yml system.json memory.json)
  if(NOT EXISTS ${WORK}/et/tiny.${f})
    message(FATAL_ERROR "synth did not write tiny.${f}")
  endif()
endforeach()
file(READ ${WORK}/et/tiny.network.yml yml)
string(FIND "${yml}" "npus_count: [ 8 ]" at)
if(at EQUAL -1)
  message(FATAL_ERROR "tiny.network.yml should describe one 8-NPU dimension: ${yml}")
endif()
execute_process(COMMAND ${TESSERA} inspect ${WORK}/et/tiny.0.et
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
string(FIND "${out}" "COMP_NODE" at)
string(FIND "${out}" "critical path" cp)
if(NOT rc EQUAL 0 OR at EQUAL -1 OR cp EQUAL -1)
  message(FATAL_ERROR "inspect failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} simulate --chakra ${WORK}/et/tiny --hardware h100-sxm
                        --topology single-node
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(REGEX MATCH "step time +[0-9.]+ [a-z]+" imported "${out}")
if(NOT rc EQUAL 0 OR imported STREQUAL "")
  message(FATAL_ERROR "simulate failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} run ${SCENARIO}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(REGEX MATCH "step time +[0-9.]+ [a-z]+" direct "${out}")
if(NOT rc EQUAL 0 OR NOT imported STREQUAL direct)
  message(FATAL_ERROR "the round trip should time as the direct run: '${imported}' vs '${direct}'")
endif()
file(WRITE ${WORK}/et/broken.0.et "\x05\x0a\x03")
execute_process(COMMAND ${TESSERA} inspect ${WORK}/et/broken.0.et
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "a truncated trace should exit 2, got ${rc}: ${err}")
endif()

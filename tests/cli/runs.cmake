# `tessera runs`: a CSV of the tiny scenario and an override simulates both runs and writes
# runs.csv and no scenario files (the CSV form has no translated scenario); a malformed runs
# file exits 2 naming file:line:col and writes nothing; a missing file (or recipes file) exits 2.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/runs.csv "id,scenario,set,step_time_s\n"
           "tiny,${SCENARIO},,0.002\n"
           "tiny-tp4,${SCENARIO},\"parallelism.tp=4;parallelism.dp=1\",0.003\n")
execute_process(COMMAND ${TESSERA} runs ${WORK}/runs.csv --out ${WORK}/out
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera runs on a good CSV exited ${rc}: ${err}")
endif()
foreach(word "2 runs, 2 simulated" "| tiny-tp4 | h100-sxm | bf16 | 0.003 s" "| own | 2 |")
  string(FIND "${out}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "tessera runs did not print '${word}':\n${out}")
  endif()
endforeach()
if(NOT EXISTS ${WORK}/out/runs.csv)
  message(FATAL_ERROR "tessera runs --out wrote no runs.csv")
endif()

file(WRITE ${WORK}/bad.yaml "cases:\n- id: x\n  model: {layers: 2, hidden: 64, heads: 4, vocab: 100}\n"
           "  training: {seq_len: 128, global_batch: 8, micro_batch: 1, precision: bf16}\n"
           "  parallelism: {tp: 1, pp: 1, dp: eight}\n"
           "  cluster: {hardware: H100 SXM, gpus: 8}\n  measured: {step_time_s: 1}\n")
execute_process(COMMAND ${TESSERA} runs ${WORK}/bad.yaml --out ${WORK}/bad_out
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "tessera runs on a malformed file should exit 2, exited ${rc}: ${err}")
endif()
string(FIND "${err}" "bad.yaml:5:35: error:" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the error does not name file:line:col:\n${err}")
endif()
if(EXISTS ${WORK}/bad_out)
  message(FATAL_ERROR "tessera runs wrote ${WORK}/bad_out for a malformed runs file")
endif()

execute_process(COMMAND ${TESSERA} runs ${WORK}/no-such-runs.yaml
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "tessera runs on a missing file should exit 2, exited ${rc}: ${err}")
endif()
# A recipes file: missing, or given with the CSV form (whose runs state their own keys), exits
# 2 and writes nothing.
foreach(args "${WORK}/bad.yaml;--recipes;${WORK}/no-such-recipes.yaml"
             "${WORK}/runs.csv;--recipes;${WORK}/bad.yaml")
  execute_process(COMMAND ${TESSERA} runs ${args} --out ${WORK}/recipes_out
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
  if(NOT rc EQUAL 2 OR EXISTS ${WORK}/recipes_out)
    message(FATAL_ERROR "tessera runs ${args} should exit 2 and write nothing, exited ${rc}: "
                        "${err}")
  endif()
endforeach()

# `tessera calibrate` on the good CSV: a profile that extends h100-sxm and its report, usable
# by `tessera run` at once; refused inputs exit 2 and write nothing.
execute_process(COMMAND ${TESSERA} calibrate ${WORK}/runs.csv --profile h100-sxm
                        --out ${WORK}/cal/mine.yaml --fit under_load.math --no-hold-out
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera calibrate exited ${rc}: ${err}")
endif()
foreach(f mine.yaml mine.fit.md)
  if(NOT EXISTS ${WORK}/cal/${f})
    message(FATAL_ERROR "tessera calibrate wrote no ${f}")
  endif()
endforeach()
execute_process(COMMAND ${TESSERA} run ${SCENARIO} --set cluster.hardware=${WORK}/cal/mine.yaml
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera run on the calibrated profile exited ${rc}: ${err}")
endif()
# On the microbenchmark fits file: the kernel models refitted, a profile `tessera run` takes.
execute_process(COMMAND ${TESSERA} calibrate ${FITS} --profile h100-sxm --out ${WORK}/cal/k.yaml
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "## bf16 GEMM" OR NOT EXISTS ${WORK}/cal/k.fit.md)
  message(FATAL_ERROR "tessera calibrate on ${FITS} exited ${rc}: ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} run ${SCENARIO} --set cluster.hardware=${WORK}/cal/k.yaml
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera run on the kernel-calibrated profile exited ${rc}: ${err}")
endif()
# A run known by its Kineto trace alone: the step time and the kernel times come from it.
file(WRITE ${WORK}/traced.csv "id,scenario,set,step_time_s,source,trace\n"
           "t0,${SCENARIO},cluster.hardware=a100-sxm-80gb,,own,${TRACE}\n")
execute_process(COMMAND ${TESSERA} calibrate ${WORK}/traced.csv --profile a100-sxm-80gb
                        --out ${WORK}/cal/traced.yaml --fit under_load.math
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "kernel time per step from the runs' traces")
  message(FATAL_ERROR "tessera calibrate on a traced run exited ${rc}: ${out}${err}")
endif()
file(WRITE ${WORK}/fits.yaml "fits:\n  - profile: h100-sxm\n    name: x\n    fit: {}\n"
                             "    rows:\n      - {table: nope, model: gemm, dtype: bf16}\n")
foreach(args "${WORK}/bad.yaml;--profile;h100-sxm" "${WORK}/runs.csv;--profile;h100-sxn"
             "${WORK}/runs.csv;--profile;b200" "${WORK}/fits.yaml;--profile;h100-sxm"
             "${FITS};--profile;ascend-910c" "${FITS};--profile;h100-sxm;--hold-out-by;model"
             "${FITS};--profile;h100-sxm;--no-hold-out"
             "${FITS};--profile;h100-sxm;--recipes;${WORK}/bad.yaml")
  execute_process(COMMAND ${TESSERA} calibrate ${args} --out ${WORK}/refused/p.yaml
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "tessera calibrate ${args} should exit 2, exited ${rc}: ${err}")
  endif()
  if(EXISTS ${WORK}/refused)
    message(FATAL_ERROR "tessera calibrate ${args} wrote ${WORK}/refused")
  endif()
endforeach()

# `tessera replay --all` reports an iteration without GPU activity as a line and goes on with
# the others (exit 0); asked for by number, that iteration is bad input (exit 2).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(trace ${WORK}/idle-step.json)
file(WRITE ${trace} [=[{"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}], "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "tid": 1, "ts": 0, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_bf16bf16", "ts": 20, "dur": 50, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "tid": 1, "ts": 100, "dur": 100},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "tid": 1, "ts": 200, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 210, "dur": 5, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_bf16bf16", "ts": 220, "dur": 50, "args": {"stream": 7, "correlation": 2}}
]}]=])
execute_process(COMMAND ${TESSERA} replay --measured ${trace} --all --out ${WORK}/out
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "replay --all should go past an idle iteration, got ${rc}:\n${out}${err}")
endif()
foreach(word "iteration 0 (ProfilerStep#1): measured" "iteration 1 (ProfilerStep#2): no GPU activity"
             "iteration 2 (ProfilerStep#3): measured")
  string(FIND "${out}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "replay --all output lacks '${word}':\n${out}")
  endif()
endforeach()
foreach(f summary_0.json summary_2.json)
  if(NOT EXISTS ${WORK}/out/${f})
    message(FATAL_ERROR "replay --all did not write ${f}")
  endif()
endforeach()
execute_process(COMMAND ${TESSERA} replay --measured ${trace} --iteration 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(FIND "${err}" "no GPU activity" at)
if(NOT rc EQUAL 2 OR at EQUAL -1)
  message(FATAL_ERROR "replay --iteration of an idle iteration should exit 2, got ${rc}:\n${err}")
endif()

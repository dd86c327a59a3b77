# Output paths are checked before anything is simulated: `--out` (run, compare, compare
# --sweep, replay, simulate) or `synth --chakra PREFIX` naming an existing regular file, or a
# folder that cannot be made, exits 2 at once with a message naming the path (never the
# internal error 1 after a whole simulation). A scenario path that is a folder, or not a
# regular file, is bad input too.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(file ${WORK}/a-file.txt)
file(WRITE ${file} "not a folder\n")

function(expect_bad what needle)
  execute_process(COMMAND ${TESSERA} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${what}: expected exit 2, got '${rc}':\n${out}${err}")
  endif()
  string(FIND "${err}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: the error does not name '${needle}':\n${err}")
  endif()
  if(NOT "${out}" STREQUAL "")
    message(FATAL_ERROR "${what}: nothing should run before the check, but it printed:\n${out}")
  endif()
endfunction()

# Traces for `simulate --chakra` and `replay`.
execute_process(COMMAND ${TESSERA} synth ${SCENARIO} --chakra ${WORK}/et/tiny
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "synth --chakra failed (${rc}): ${err}")
endif()

foreach(out ${file} ${file}/sub)
  expect_bad("run --out ${out}" "${out}" run ${SCENARIO} --out ${out})
  expect_bad("compare --out ${out}" "${out}" compare ${SCENARIO} --schedules 1f1b --out ${out})
  expect_bad("compare --sweep --out ${out}" "${out}" compare ${SCENARIO} --schedules 1f1b
             --sweep model.layers=4,8 --out ${out})
  expect_bad("replay --out ${out}" "${out}" replay --measured ${TRACE} --out ${out})
  expect_bad("simulate --out ${out}" "${out}" simulate --chakra ${WORK}/et/tiny
             --hardware h100-sxm --topology single-node --out ${out})
endforeach()
expect_bad("synth --chakra under a file" "${file}" synth ${SCENARIO} --chakra ${file}/tiny)

# A scenario that is a folder says so; a device is not a regular file.
foreach(cmd run check compare synth)
  set(extra)
  if(cmd STREQUAL "compare")
    set(extra --schedules 1f1b)
  elseif(cmd STREQUAL "synth")
    set(extra --chakra ${WORK}/et2/x)
  endif()
  expect_bad("${cmd} on a folder" "is a directory" ${cmd} ${WORK} ${extra})
endforeach()
expect_bad("run on /dev/null" "not a regular file" run /dev/null)
expect_bad("validate on a folder" "is a directory" validate ${WORK} --measured ${TRACE})
expect_bad("replay on a folder" "is a directory" replay --measured ${WORK})

# A --sweep value that is not valid input is bad input naming the value, with the loader's
# did-you-mean; a value the schedules cannot run stays a row (sweep.cmake).
expect_bad("--sweep with a misspelt value" "fulll" compare ${SCENARIO} --schedules 1f1b
           --sweep training.recompute=none,fulll)
execute_process(COMMAND ${TESSERA} compare ${SCENARIO} --schedules 1f1b
                        --sweep training.recompute=none,fulll
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 30)
foreach(word "--sweep" "did you mean 'full'")
  string(FIND "${err}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the --sweep value error lacks '${word}':\n${err}")
  endif()
endforeach()
expect_bad("--sweep of a misspelt key" "--sweep" compare ${SCENARIO} --schedules 1f1b
           --sweep training.recompte=none,full)

# Inputs that are not regular files never hang a reader.
expect_bad("inspect on a folder" "is a directory" inspect ${WORK})
expect_bad("inspect on /dev/zero" "not a regular file" inspect /dev/zero)
expect_bad("replay --hardware /dev/zero" "not a regular file" replay --measured ${TRACE}
           --hardware /dev/zero)
expect_bad("simulate --hardware a folder" "is a directory" simulate --chakra ${WORK}/et/tiny
           --hardware ${WORK} --topology single-node)

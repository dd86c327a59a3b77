# `tessera run` on a file that does not exist is bad input: exit code 2 and a message naming
# the file, not a crash or an internal error.
set(missing ${WORK}/no-such-scenario.yaml)
file(REMOVE ${missing})
execute_process(COMMAND ${TESSERA} run ${missing} --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc STREQUAL "2")
  message(FATAL_ERROR "tessera run on a missing file should exit 2, exited '${rc}': ${err}")
endif()
string(FIND "${err}" "no-such-scenario.yaml" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the error does not name the missing file:\n${err}")
endif()

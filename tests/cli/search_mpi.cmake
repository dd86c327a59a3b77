# `mpirun -n R tessera search ...` (OpenMPI): the ranks share the space out and rank 0 writes
# the search.csv of a single-process search, for 1 and 2 ranks on localhost; a rank whose
# journal is of another search stops the launch with its error, and no rank hangs.
file(REMOVE_RECURSE ${WORK})
set(space --set model.layers=8 --set training.global_batch=16 --vary tp=1,2 --vary pp=1,2,4)
execute_process(COMMAND ${TESSERA} search ${SCENARIO} ${space} --out ${WORK}/single
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "search failed (${rc}): ${err}")
endif()
file(READ ${WORK}/single/search.csv single)
# Root in CI containers, and more ranks than this machine may have cores.
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(ENV{OMPI_MCA_rmaps_base_oversubscribe} 1)
foreach(ranks 1 2)
  execute_process(COMMAND ${MPIEXEC} -n ${ranks} ${TESSERA} search ${SCENARIO} ${space}
                          --out ${WORK}/mpi${ranks}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun -n ${ranks} search failed (${rc}): ${err}\n${out}")
  endif()
  file(READ ${WORK}/mpi${ranks}/search.csv csv)
  if(NOT csv STREQUAL single)
    message(FATAL_ERROR "mpirun -n ${ranks}: search.csv differs from a single process's")
  endif()
  string(REGEX MATCHALL "ranked by step_time" tables "${out}")
  list(LENGTH tables n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "mpirun -n ${ranks}: rank 0 alone should print the table:\n${out}")
  endif()
endforeach()

# Rank 1's journal replaced by rank 0's (shard 0/2, another search): exit 2, naming rank 1.
file(READ ${WORK}/mpi2/mpi-0-of-2/points.jsonl journal)
file(WRITE ${WORK}/mpi2/mpi-1-of-2/points.jsonl "${journal}")
execute_process(COMMAND ${MPIEXEC} -n 2 ${TESSERA} search ${SCENARIO} ${space} --out ${WORK}/mpi2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(rc EQUAL 0 OR NOT err MATCHES "MPI rank 1: error: .*points.jsonl.*different search")
  message(FATAL_ERROR "a rank with another search's journal: expected its error (${rc}):\n"
                      "${err}\n${out}")
endif()

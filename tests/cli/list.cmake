# `tessera list` exits 0 and lists the shipped profiles and presets, every schedule kind and
# every encoder placement and collective algorithm, and the search axes.
execute_process(COMMAND ${TESSERA} list
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera list failed (${rc}): ${err}")
endif()
foreach(word "hardware profiles" "h100-sxm" "qwen2-vl-vit" " zb-h2" " dualpipe\n" " transpose"
            "collective algorithms" " hierarchical" " rail_pairwise" "search axes"
            "  micro_batch ")
  string(FIND "${out}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "tessera list does not mention '${word}':\n${out}")
  endif()
endforeach()

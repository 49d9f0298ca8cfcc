# Warning flags for the project's own targets (third-party headers are included as SYSTEM).
set(ONEFLOW_CXX_WARNINGS -Wall -Wextra -Wno-unused-parameter)
# GCC 12 at -O3 reports std::vector<int64_t> destructors after inlining as "free of a non-heap
# object" (a known false positive of -Wfree-nonheap-object); keep the other warnings fatal.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND ONEFLOW_CXX_WARNINGS -Wno-free-nonheap-object)
endif()
if(ONEFLOW_WERROR)
  list(APPEND ONEFLOW_CXX_WARNINGS -Werror)
endif()

# oneflow_target_warnings(target): apply the project's warnings to C++ sources; CUDA sources get
# the host-compiler warnings through -Xcompiler.
function(oneflow_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${ONEFLOW_CXX_WARNINGS}>)
  if(ONEFLOW_WITH_CUDA)
    string(REPLACE ";" "," _xc "${ONEFLOW_CXX_WARNINGS}")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_xc}>)
  endif()
endfunction()

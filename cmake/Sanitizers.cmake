# ONEFLOW_SANITIZE=address,undefined or thread: instrument every target of the project (the core,
# the C++ tests and, when built, the Python extension). Used by tools/sanitize.sh, which builds
# into its own folder. Third-party libraries (oneDNN, OpenBLAS, libgomp) stay uninstrumented.
if(ONEFLOW_SANITIZE)
  if(ONEFLOW_SANITIZE MATCHES "thread" AND ONEFLOW_SANITIZE MATCHES "address")
    message(FATAL_ERROR "ONEFLOW_SANITIZE: thread cannot be combined with address")
  endif()
  set(_san_flags -fsanitize=${ONEFLOW_SANITIZE} -fno-omit-frame-pointer -g)
  if(ONEFLOW_SANITIZE MATCHES "undefined")
    # Every UB report fails the run instead of printing and going on.
    list(APPEND _san_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_san_flags}>")
  add_link_options(-fsanitize=${ONEFLOW_SANITIZE})
  message(STATUS "sanitizers: ${ONEFLOW_SANITIZE}")
endif()

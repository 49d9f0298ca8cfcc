# System dependencies (installed by tools/install_deps.sh from third_party/debian-packages.txt).
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(dnnl CONFIG REQUIRED)          # oneDNN: matmul (and later conv, pooling, norms)
# Sleef: vectorised transcendental functions (exp, erf, tanh) in the elementwise kernels.
find_path(SLEEF_INCLUDE_DIR sleef.h PATH_SUFFIXES x86_64-linux-gnu REQUIRED)
find_library(SLEEF_LIBRARY NAMES sleef REQUIRED)

# OpenBLAS: float64 GEMM where oneDNN has no kernel. Found explicitly (not FindBLAS) so that the
# header and the library always come from the same OpenBLAS build.
find_path(CBLAS_INCLUDE_DIR cblas.h
          PATH_SUFFIXES x86_64-linux-gnu/openblas-pthread x86_64-linux-gnu/openblas-openmp openblas
          REQUIRED)
find_library(OPENBLAS_LIBRARY NAMES openblas
             PATH_SUFFIXES openblas-pthread openblas-openmp x86_64-linux-gnu/openblas-pthread
             REQUIRED)
message(STATUS "OpenBLAS: ${OPENBLAS_LIBRARY} (cblas.h in ${CBLAS_INCLUDE_DIR})")

# Gloo: collectives between processes over TCP for CPU tensors (oneflow.comm, core/comm/).
find_path(GLOO_INCLUDE_DIR gloo/allreduce.h REQUIRED)
find_library(GLOO_LIBRARY NAMES gloo REQUIRED)

# Protocol Buffers: the graph IR on disk (core/graph/graph.proto), compiled by protoc.
find_package(Protobuf REQUIRED)
# Image decoding of the OFRecord image decoders (core/data/image_codec.cpp); optional: without
# them those decoders raise NotImplementedError.
find_package(JPEG)
find_package(PNG)

if(ONEFLOW_BUILD_PYTHON)
  find_package(Python 3.8 REQUIRED COMPONENTS Interpreter Development.Module)
  if(NOT pybind11_DIR)
    execute_process(COMMAND ${Python_EXECUTABLE} -m pybind11 --cmakedir
                    OUTPUT_VARIABLE _pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _pybind11_rc ERROR_QUIET)
    if(_pybind11_rc EQUAL 0)
      set(pybind11_DIR ${_pybind11_dir})
    endif()
  endif()
  # pybind11 adds -flto to the module unless IPO is set explicitly; LTO makes every relink of the
  # bindings slow and buys nothing measurable for them, so it stays off unless asked for.
  if(NOT DEFINED CMAKE_INTERPROCEDURAL_OPTIMIZATION)
    set(CMAKE_INTERPROCEDURAL_OPTIMIZATION OFF)
  endif()
  find_package(pybind11 CONFIG REQUIRED)
endif()

if(ONEFLOW_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

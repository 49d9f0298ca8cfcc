# System dependencies (installed by tools/install_deps.sh from third_party/debian-packages.txt).
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(dnnl CONFIG REQUIRED)          # oneDNN: matmul (and later conv, pooling, norms)
find_package(BLAS REQUIRED)                 # OpenBLAS: float64 GEMM where oneDNN has no kernel
find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread
          x86_64-linux-gnu REQUIRED)

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
  find_package(pybind11 CONFIG REQUIRED)
endif()

if(ONEFLOW_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

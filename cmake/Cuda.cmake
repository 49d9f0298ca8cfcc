# CUDA toolchain and libraries. cuBLAS comes from the CUDA install or, where the install lacks
# it, from the nvidia-cublas Python wheel (its include/ and lib/ folders are searched).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES ${ONEFLOW_CUDA_ARCHITECTURES})
endif()
enable_language(CUDA)
# Set after enable_language: CMake before 3.26 knows nvcc's flags only up to C++17 and would
# fail the compiler's own check; nvcc 12+ takes -std=c++20.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
find_package(CUDAToolkit REQUIRED)

set(_cublas_hints "")
find_package(Python 3.8 COMPONENTS Interpreter)
if(Python_Interpreter_FOUND)
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c
            "import nvidia, os; print(';'.join(os.path.join(p, 'cu13') + ';' + os.path.join(p, 'cublas') for p in nvidia.__path__))"
    OUTPUT_VARIABLE _cublas_hints OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
find_path(ONEFLOW_CUBLAS_INCLUDE_DIR cublas_v2.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} ${_cublas_hints} PATH_SUFFIXES include REQUIRED)
find_library(ONEFLOW_CUBLAS_LIBRARY NAMES cublas libcublas.so.13 libcublas.so.12
             HINTS ${CUDAToolkit_LIBRARY_DIR} ${_cublas_hints} PATH_SUFFIXES lib lib64 REQUIRED)
message(STATUS "cuBLAS: ${ONEFLOW_CUBLAS_LIBRARY} (headers ${ONEFLOW_CUBLAS_INCLUDE_DIR})")
add_library(oneflow_cublas INTERFACE)
target_include_directories(oneflow_cublas SYSTEM INTERFACE ${ONEFLOW_CUBLAS_INCLUDE_DIR})
target_link_libraries(oneflow_cublas INTERFACE ${ONEFLOW_CUBLAS_LIBRARY})

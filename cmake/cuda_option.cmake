# DEVTENSOR_CUDA=AUTO|ON|OFF decides whether the CUDA plugin (libdevtensor-cuda.so,
# src/cuda) is built. The core never links CUDA either way: it dlopens the plugin.
# AUTO builds it when nvcc is found (/usr/local/cuda/bin/nvcc is tried when nvcc is not
# on PATH); ON requires it. Sanitizer builds leave it out: nvcc does not take the
# sanitizer flags, and the plugin's host code is exercised by the release build.
include(CheckLanguage)
set(DEVTENSOR_WITH_CUDA OFF)
if(DEVTENSOR_SANITIZE OR DEVTENSOR_TSAN)
  if(DEVTENSOR_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DEVTENSOR_CUDA=ON cannot be combined with a sanitizer build")
  endif()
elseif(NOT DEVTENSOR_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Ampere and Hopper machine code (each with its PTX); override on the command line.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures of the plugin")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(DEVTENSOR_WITH_CUDA ON)
  elseif(DEVTENSOR_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DEVTENSOR_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "devtensor: CUDA backend option ${DEVTENSOR_CUDA}; plugin built: ${DEVTENSOR_WITH_CUDA}"
               " (architectures: ${CMAKE_CUDA_ARCHITECTURES})")

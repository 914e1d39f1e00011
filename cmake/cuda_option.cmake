# DEVTENSOR_CUDA=AUTO|ON|OFF decides whether the CUDA plugin (libdevtensor-cuda.so) is
# built. The core never links CUDA either way; the plugin arrives with issue #3, so for
# now the option only records the decision and checks that nvcc exists when ON.
include(CheckLanguage)
set(DEVTENSOR_WITH_CUDA OFF)
if(NOT DEVTENSOR_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(DEVTENSOR_CUDA_COMPILER_FOUND ON)
  elseif(DEVTENSOR_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DEVTENSOR_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "devtensor: CUDA backend option ${DEVTENSOR_CUDA}; nvcc found: ${DEVTENSOR_CUDA_COMPILER_FOUND}; plugin built: ${DEVTENSOR_WITH_CUDA}")

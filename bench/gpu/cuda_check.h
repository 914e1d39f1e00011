// CHECK(call): the GPU bench programs' guard around a CUDA runtime call: on failure, print
// the call and CUDA's message and exit 1 (exit code 0 proves nothing, METHOD.md).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                     \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

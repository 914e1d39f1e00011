// Host/device annotations shared by the CPU and (later) CUDA compilation of the one
// definition of each op. Only this header knows whether nvcc is compiling.
#pragma once

#if defined(__CUDACC__)
#define DT_HD __host__ __device__ __forceinline__
#else
#define DT_HD inline
#endif

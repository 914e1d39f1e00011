// One GEMM with cuBLASLt's bias epilogue: D = op(A) op(B) + bias, bias added to every
// column of the column-major D ([m] values), in the same kernel. Linear's product and bias
// (KernelOp::Addmm) in one launch where cuBLAS's GEMM and a bias kernel took two.
#pragma once
#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>

namespace dt::cudap {

// Column-major, cuBLAS's terms: A is m x k (k x m when op_a transposes), B k x n (n x k),
// D m x n with leading dimension ldd; bias [m] of D's type, contiguous.
struct LtGemm {
  cublasOperation_t op_a, op_b;
  int64_t m, n, k;
  const void* a;
  int64_t lda;
  const void* b;
  int64_t ldb;
  void* d;
  int64_t ldd;
  const void* bias;
  cudaDataType_t type;  // of A, B, D and bias
  cublasComputeType_t compute;
};

// Raises for a cuBLAS or cuBLASLt status other than success: "what on cuda:N: name:
// text", OUT_OF_MEMORY for an allocation failure, BACKEND otherwise (matmul.cu).
void check_blas(cublasStatus_t s, int device, const char* what);

// Runs the product on the device's current stream and returns true, or returns false,
// having queued nothing, when cuBLASLt offers no algorithm for it or refuses the one it
// offered (the answer is kept per shape, layout and alignment, as is the plan when there
// is one), or when the bias is not 16-byte aligned. Failures of the calls themselves
// raise, as the other cuBLAS calls do.
bool gemm_bias_lt(int device, const LtGemm& g);

}  // namespace dt::cudap

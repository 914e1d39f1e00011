// Row-major GEMM on the CPU: c[m, n] = op(a)[m, k] · op(b)[k, n] (alpha 1, beta 0), op
// being a transpose when the flag says so, with BLAS's leading-dimension rules.
//
// float32 runs on oneDNN's sgemm when the library was built with it (DT_HAVE_ONEDNN):
// its JIT kernels use AVX-512 where the CPU has it, where Debian's OpenBLAS 0.3.21 falls
// back to its AVX2 (Haswell) kernels on CPUs it does not know (measured on the 2-vCPU
// Zen 5 EPYC here: 190-210 GFLOP/s a thread against OpenBLAS's 90-100). The product is cut
// into blocks of rows (or of columns, for a short, wide product) chosen from the shape
// alone, and devtensor's own threads run the blocks, each on one thread: so no OpenMP
// or OpenBLAS team spins on the cores after the call, and a result never depends on the
// thread count (the same calls compute every element, whichever thread runs them).
// float64, and float32 without oneDNN, go to OpenBLAS whole, on its own threads (whose
// split, and so a result's last bits, follows the thread count).
#pragma once
#include <cstdint>
#include <functional>

namespace dt::cpu {

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double* c, int64_t ldc);

// A batch of `count` products of one shape and layout; item(i) gives product i's
// operands. Every (item, block) pair is a unit of work for devtensor's threads, so a
// batch of small products (attention's heads) spreads over them too; each item is
// computed exactly as gemm computes it alone.
// bias, when not null, is added to every row of c ([n] floats, c[i, j] += bias[j]) by the
// thread that computed each block, right after its product, while the block is in cache:
// Linear's bias costs no pass of its own. The sum rounds as an add after the product would.
struct GemmItem {
  const float* a;
  const float* b;
  float* c;
  const float* bias = nullptr;
};
void gemm_batch(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                int64_t count, const std::function<GemmItem(int64_t)>& item);

}  // namespace dt::cpu

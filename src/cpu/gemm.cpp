#include "cpu/gemm.h"

#include <cblas.h>

#include "cpu/openmp.h"
#include "cpu/parallel.h"

#ifdef DT_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>

#include "core/error.h"
#endif

namespace dt::cpu {
namespace {

CBLAS_TRANSPOSE blas_trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

#ifndef DT_HAVE_ONEDNN
// Whole, on OpenBLAS's threads.
void openblas_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float* c, int64_t ldc) {
  openblas_set_num_threads(num_threads());
  cblas_sgemm(CblasRowMajor, blas_trans(ta), blas_trans(tb), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c,
              static_cast<blasint>(ldc));
}
#endif

#ifdef DT_HAVE_ONEDNN
// Blocks: about 8 MFLOP each at least (~40 us on one thread, well above a handoff to a
// pool thread), at least 64 rows or columns each (narrower blocks lose a quarter of the
// kernel's speed to packing, measured), at most 16 (so 16 threads can share one product).
// A power of two, so two or four threads share the blocks evenly.
constexpr double kFlopsPerBlock = 8e6;
constexpr int64_t kMinBlock = 64, kMaxParts = 16;

// How a product of this shape is cut: `parts` blocks along the rows (by_rows) or the
// columns. Depends on the shape only.
struct GemmSplit {
  int64_t parts;
  bool by_rows;
};

GemmSplit gemm_split(int64_t m, int64_t n, int64_t k) {
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  int64_t parts = 1;
  while (parts < kMaxParts && flops / static_cast<double>(parts * 2) >= kFlopsPerBlock) parts *= 2;
  // Rows unless there are too few of them for the blocks and more columns.
  const bool by_rows = m / parts >= kMinBlock || m >= n;
  const int64_t extent = by_rows ? m : n;
  while (parts > 1 && extent / parts < kMinBlock) parts /= 2;
  return {parts, by_rows};
}

// One block [m0, m1) x [n0, n1) of the product, on the calling thread.
void onednn_block(bool ta, bool tb, int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t k, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  const float* ab = ta ? a + m0 : a + m0 * lda;
  const float* bb = tb ? b + n0 * ldb : b + n0;
  const dnnl_status_t s = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m1 - m0, n1 - n0, k, 1.0f, ab, lda, bb, ldb,
                                     0.0f, c + m0 * ldc + n0, ldc);
  if (s != dnnl_success) {
    if (s == dnnl_out_of_memory) fail(DT_ERR_OUT_OF_MEMORY, "matmul: oneDNN's sgemm ran out of memory");
    fail(DT_ERR_INTERNAL, cat("matmul: oneDNN's sgemm failed with status ", static_cast<int>(s)));
  }
}
#endif

// c[i, j] += bias[j] over rows [m0, m1) and columns [n0, n1).
void add_bias(float* c, int64_t ldc, const float* bias, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  for (int64_t i = m0; i < m1; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = n0; j < n1; ++j) row[j] += bias[j];
  }
}

}  // namespace

void gemm_batch(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                int64_t count, const std::function<GemmItem(int64_t)>& item) {
  if (count <= 0 || m == 0 || n == 0) return;
#ifdef DT_HAVE_ONEDNN
  const GemmSplit split = gemm_split(m, n, k);
  const int64_t units = count * split.parts;
  parallel_for(units, 1, [&](int64_t begin, int64_t end) {
    set_openmp_threads(1);
    for (int64_t u = begin; u < end; ++u) {
      const GemmItem it = item(u / split.parts);
      const int64_t p = u % split.parts, extent = split.by_rows ? m : n;
      const int64_t lo = extent * p / split.parts, hi = extent * (p + 1) / split.parts;
      const int64_t m0 = split.by_rows ? lo : 0, m1 = split.by_rows ? hi : m;
      const int64_t n0 = split.by_rows ? 0 : lo, n1 = split.by_rows ? n : hi;
      onednn_block(ta, tb, m0, m1, n0, n1, k, it.a, lda, it.b, ldb, it.c, ldc);
      if (it.bias) add_bias(it.c, ldc, it.bias, m0, m1, n0, n1);
    }
  });
#else
  for (int64_t i = 0; i < count; ++i) {
    const GemmItem it = item(i);
    openblas_sgemm(ta, tb, m, n, k, it.a, lda, it.b, ldb, it.c, ldc);
    if (it.bias) add_bias(it.c, ldc, it.bias, 0, m, 0, n);
  }
#endif
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          float* c, int64_t ldc) {
  gemm_batch(ta, tb, m, n, k, lda, ldb, ldc, 1, [&](int64_t) { return GemmItem{a, b, c}; });
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  openblas_set_num_threads(num_threads());
  cblas_dgemm(CblasRowMajor, blas_trans(ta), blas_trans(tb), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0, c,
              static_cast<blasint>(ldc));
}

}  // namespace dt::cpu

// Running sums along one dim (torch.cumsum) of a contiguous tensor viewed as [outer, n,
// inner]: one thread per (outer, inner) line walks it in order, neighbouring threads on
// neighbouring columns. Accumulates in scan_acc_t (core/dtype.h), as the CPU does, so
// float32 in double (PyTorch's CUDA kernel uses float: devtensor answers the same on
// every device), integers wrapping on overflow. Long single lines (inner 1,
// few lines) run one thread each: correct, not fast; a block-wide scan (CUB's
// BlockScan) is the step up when a profile asks for it.
#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "ops/scan.h"

namespace dt::cudap {
namespace {

// A named template, not a generic lambda: nvcc allows no __device__ lambda inside one.
template <typename T>
void cumsum_typed(const dtp_tensor& out, const dtp_tensor& in, int64_t outer, int64_t n, int64_t inner, bool reverse) {
  const T* x = static_cast<const T*>(in.data);
  T* y = static_cast<T*>(out.data);
  launch(out.device, outer * inner, "cumsum",
         [=] __device__(int64_t line) { scan::cumsum_line(x, y, line, n, inner, reverse); });
}

}  // namespace

void cumsum(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, bool reverse) {
  int64_t n = in.sizes[dim], inner = 1, outer = 1;
  for (int d = 0; d < dim; ++d) outer *= in.sizes[d];
  for (int d = dim + 1; d < in.ndim; ++d) inner *= in.sizes[d];
  if (n == 0) return;
  dispatch(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    // the front end sums bool as int64
    if constexpr (!std::is_same<T, bool>::value) cumsum_typed<T>(out, in, outer, n, inner, reverse);
  });
}

}  // namespace dt::cudap

// Running sums along one dim (torch.cumsum), forward or from the end (its gradient).
// The input and output are contiguous here and share a dtype (the front end casts):
// viewed as [outer, n, inner], each (outer, inner) line is summed in order by one
// thread, in scan_acc_t (core/dtype.h: PyTorch's CPU accumulation type), integers
// wrapping on overflow as PyTorch's.
#include <type_traits>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "ops/functors.h"

namespace dt::cpu {
namespace {

template <typename T>
void cumsum_lines(const Tensor& out, const Tensor& in, int dim, bool reverse) {
  using A = scan_acc_t<T>;
  int64_t n = in.size(dim), inner = 1, outer = 1;
  for (int d = 0; d < dim; ++d) outer *= in.size(d);
  for (int d = dim + 1; d < in.ndim(); ++d) inner *= in.size(d);
  if (n == 0) return;
  const T* x = in.data_as<T>();
  T* y = out.data_as<T>();
  const int64_t lines = outer * inner;
  parallel_for(lines, std::max<int64_t>(1, kGrainCheap / n), [&](int64_t b, int64_t e) {
    for (int64_t line = b; line < e; ++line) {
      const int64_t base = (line / inner) * n * inner + line % inner;
      A acc = A(0);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = base + (reverse ? n - 1 - k : k) * inner;
        acc = fn::wrap_add(acc, static_cast<A>(x[at]));
        y[at] = static_cast<T>(acc);
      }
    }
  });
}

}  // namespace

void CpuBackend::cumsum(const Tensor& out, const Tensor& in, int dim, bool reverse) {
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same<T, bool>::value) cumsum_lines<T>(out, in, dim, reverse);
    // bool never gets here: the front end sums booleans as int64
  });
}

}  // namespace dt::cpu

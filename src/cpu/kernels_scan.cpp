// Running sums along one dim (torch.cumsum), forward or from the end (its gradient).
// The input and output are contiguous here and share a dtype (the front end casts):
// viewed as [outer, n, inner], each (outer, inner) line is summed in order by one
// thread (ops/scan.h, shared with CUDA).
#include <type_traits>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "ops/scan.h"

namespace dt::cpu {
namespace {

template <typename T>
void cumsum_lines(const Tensor& out, const Tensor& in, int dim, bool reverse) {
  int64_t n = in.size(dim), inner = 1, outer = 1;
  for (int d = 0; d < dim; ++d) outer *= in.size(d);
  for (int d = dim + 1; d < in.ndim(); ++d) inner *= in.size(d);
  if (n == 0) return;
  const T* x = in.data_as<T>();
  T* y = out.data_as<T>();
  const int64_t lines = outer * inner;
  parallel_for(lines, std::max<int64_t>(1, kGrainCheap / n), [&](int64_t b, int64_t e) {
    for (int64_t line = b; line < e; ++line) scan::cumsum_line(x, y, line, n, inner, reverse);
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

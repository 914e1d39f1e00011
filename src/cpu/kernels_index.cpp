// index_select and gather on the CPU (indices already validated by the front end).
#include <cstring>
#include "cpu/cpu_backend.h"
#include "cpu/loops.h"

namespace dt::cpu {

void CpuBackend::index_select(const Tensor& out, const Tensor& in, int dim, const Tensor& index) {
  // out has in's shape with size(dim) = index.numel(); walk out, map coordinate dim.
  const int64_t* idx = index.data_as<int64_t>();
  const int64_t istride = index.ndim() ? index.stride(0) : 0;
  const int64_t esize = static_cast<int64_t>(in.itemsize());
  const int nd = out.ndim();
  parallel_for(out.numel(), kGrainCheap, [&](int64_t b, int64_t e) {
    for (int64_t lin = b; lin < e; ++lin) {
      int64_t rem = lin, src = 0, dst = 0;
      for (int d = nd - 1; d >= 0; --d) {
        int64_t i = rem % out.size(d);
        rem /= out.size(d);
        dst += i * out.stride(d);
        src += (d == dim ? idx[i * istride] : i) * in.stride(d);
      }
      std::memcpy(out.data() + dst * esize, in.data() + src * esize, static_cast<size_t>(esize));
    }
  });
}

void CpuBackend::gather(const Tensor& out, const Tensor& in, int dim, const Tensor& index) {
  // out has index's shape: out[i] = in[i with coordinate dim replaced by index[i]].
  const int64_t esize = static_cast<int64_t>(in.itemsize());
  const int nd = out.ndim();
  const int64_t* idx = index.data_as<int64_t>();
  parallel_for(out.numel(), kGrainCheap, [&](int64_t b, int64_t e) {
    for (int64_t lin = b; lin < e; ++lin) {
      int64_t rem = lin, src = 0, dst = 0, ioff = 0;
      int64_t coord[kMaxDims];
      for (int d = nd - 1; d >= 0; --d) {
        coord[d] = rem % out.size(d);
        rem /= out.size(d);
        dst += coord[d] * out.stride(d);
        ioff += coord[d] * index.stride(d);
      }
      for (int d = 0; d < nd; ++d) src += (d == dim ? idx[ioff] : coord[d]) * in.stride(d);
      std::memcpy(out.data() + dst * esize, in.data() + src * esize, static_cast<size_t>(esize));
    }
  });
}

}  // namespace dt::cpu

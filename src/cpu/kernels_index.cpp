// index_select, gather, index_add and scatter_add on the CPU. The front end checks the
// indices, except while a graph captures (they have no values yet): so each kernel
// checks them again before it writes anything, which a replay relies on.
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "ops/cast.h"
#include "ops/functors.h"

namespace dt::cpu {
namespace {

// INVALID_ARGUMENT unless every index (a contiguous or strided int64 walk over `index`'s
// elements) lies in [0, size). Cheap next to the copy it guards.
void check_indices(const char* op, const Tensor& index, int64_t size) {
  const int64_t* idx = index.data_as<int64_t>();
  const int nd = index.ndim();
  for (int64_t lin = 0; lin < index.numel(); ++lin) {
    int64_t rem = lin, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rem % index.size(d)) * index.stride(d);
      rem /= index.size(d);
    }
    if (idx[off] < 0 || idx[off] >= size)
      fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": index ", idx[off], " is out of bounds for dimension with size ", size));
  }
}

}  // namespace

void CpuBackend::index_select(const Tensor& out, const Tensor& in, int dim, const Tensor& index) {
  // out has in's shape with size(dim) = index.numel(); walk out, map coordinate dim.
  check_indices("index_select", index, in.size(dim));
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
  check_indices("gather", index, in.size(dim));
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

namespace {

// self[.. index(p) ..] += values[p] along dim d, for every position p of a walk shape W:
// values' shape (index_add, a 1-d index along d) or index's shape (scatter_add, one index
// per position). Positions that differ off dim d add into different elements of self, so
// the work is split over them, and each walks dim d in order: no race, and the same sums
// for any thread count.
template <typename T>
void add_at(const Tensor& self, const Tensor& index, const Tensor& values, int d, bool per_position) {
  using M = opmath_t<T>;
  const Dims& walk = per_position ? index.shape() : values.shape();
  const int nd = walk.n;
  const int64_t len = walk[d];
  if (len == 0) return;
  const int64_t rest = numel_of(walk) / len;
  const int64_t idx_step = per_position ? index.stride(d) : (index.ndim() ? index.stride(0) : 0);
  const int64_t self_step = self.stride(d), val_step = values.stride(d);
  const int64_t* idx = index.data_as<int64_t>();
  T* out = self.data_as<T>();
  const T* val = values.data_as<T>();
  const int64_t grain = std::max<int64_t>(1, kGrainCostly / len);
  parallel_for(rest, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t rem = r, so = 0, vo = 0, io = 0;
      for (int k = nd - 1; k >= 0; --k) {
        if (k == d) continue;
        const int64_t c = rem % walk[k];
        rem /= walk[k];
        so += c * self.stride(k);
        vo += c * values.stride(k);
        if (per_position) io += c * index.stride(k);
      }
      for (int64_t j = 0; j < len; ++j) {
        T& target = out[so + idx[io + j * idx_step] * self_step];
        target = T(fn::Add{}(M(target), M(val[vo + j * val_step])));
      }
    }
  });
}

}  // namespace

void CpuBackend::index_add(const Tensor& self, int dim, const Tensor& index, const Tensor& source) {
  check_indices("index_add", index, self.size(dim));
  dispatch_dtype(self.dtype(), [&](auto tag) { add_at<decltype(tag)>(self, index, source, dim, false); });
}

void CpuBackend::scatter_add(const Tensor& self, int dim, const Tensor& index, const Tensor& src) {
  check_indices("scatter_add", index, self.size(dim));
  dispatch_dtype(self.dtype(), [&](auto tag) { add_at<decltype(tag)>(self, index, src, dim, true); });
}

}  // namespace dt::cpu

// index_select, gather, index_add and scatter_add (indices are int64 on the device,
// validated by the front end).
#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "ops/cast.h"
#include "ops/functors.h"

namespace dt::cudap {
namespace {

// Element sizes 1, 2, 4 and 8 bytes move as one integer of that size.
template <typename F>
void by_element_size(int32_t dtype, F&& f) {
  switch (dtype_size(static_cast<DType>(dtype))) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

struct Shape {
  int ndim;
  int64_t sizes[DT_MAX_DIMS], out_strides[DT_MAX_DIMS], in_strides[DT_MAX_DIMS], index_strides[DT_MAX_DIMS];
};

Shape shape_of(const dtp_tensor& out, const dtp_tensor& in, const dtp_tensor* index) {
  Shape s;
  s.ndim = out.ndim;
  for (int d = 0; d < out.ndim; ++d) {
    s.sizes[d] = out.sizes[d];
    s.out_strides[d] = out.strides[d];
    s.in_strides[d] = in.strides[d];
    s.index_strides[d] = index && index->ndim == out.ndim ? index->strides[d] : 0;
  }
  return s;
}

template <typename E>
void index_select_typed(const dtp_tensor& out, const dtp_tensor& in, int dim, const dtp_tensor& index) {
  const Shape s = shape_of(out, in, nullptr);
  const int64_t istride = index.ndim ? index.strides[0] : 0;
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  const E* x = static_cast<const E*>(in.data);
  E* o = static_cast<E*>(out.data);
  launch(out.device, out.numel, "index_select", [=] __device__(int64_t lin) {
    int64_t src = 0, dst = 0;
    for (int d = s.ndim - 1; d >= 0; --d) {
      int64_t i = lin % s.sizes[d];
      lin /= s.sizes[d];
      dst += i * s.out_strides[d];
      src += (d == dim ? idx[i * istride] : i) * s.in_strides[d];
    }
    o[dst] = x[src];
  });
}

template <typename E>
void gather_typed(const dtp_tensor& out, const dtp_tensor& in, int dim, const dtp_tensor& index) {
  const Shape s = shape_of(out, in, &index);
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  const E* x = static_cast<const E*>(in.data);
  E* o = static_cast<E*>(out.data);
  launch(out.device, out.numel, "gather", [=] __device__(int64_t lin) {
    int64_t coord[DT_MAX_DIMS];
    int64_t dst = 0, ioff = 0, src = 0;
    for (int d = s.ndim - 1; d >= 0; --d) {
      coord[d] = lin % s.sizes[d];
      lin /= s.sizes[d];
      dst += coord[d] * s.out_strides[d];
      ioff += coord[d] * s.index_strides[d];
    }
    for (int d = 0; d < s.ndim; ++d) src += (d == dim ? idx[ioff] : coord[d]) * s.in_strides[d];
    o[dst] = x[src];
  });
}

// self[.. index(p) ..] += values[p] along dim d for every position p of the walk shape
// (values' for index_add with a 1-d index, index's for scatter_add), as the CPU's add_at:
// one thread per position off dim d, walking dim d in order, so no two threads add into
// one element (no atomics, for every dtype) and the sums are the CPU's, in its order.
// (Parallel over index rows with atomics would be faster for few columns: issue 19's.)
struct Walk {
  int ndim, dim, per_position;
  int64_t sizes[DT_MAX_DIMS], self_strides[DT_MAX_DIMS], val_strides[DT_MAX_DIMS], idx_strides[DT_MAX_DIMS];
  int64_t idx_step;
};

template <typename T>
void add_at_typed(const dtp_tensor& self, const dtp_tensor& index, const dtp_tensor& values, int dim, bool per_position) {
  using M = opmath_t<T>;
  const dtp_tensor& w = per_position ? index : values;
  Walk s;
  s.ndim = w.ndim;
  s.dim = dim;
  s.per_position = per_position ? 1 : 0;
  int64_t rest = 1;
  for (int k = 0; k < w.ndim; ++k) {
    s.sizes[k] = w.sizes[k];
    s.self_strides[k] = self.strides[k];
    s.val_strides[k] = values.strides[k];
    s.idx_strides[k] = per_position ? index.strides[k] : 0;
    if (k != dim) rest *= w.sizes[k];
  }
  s.idx_step = per_position ? index.strides[dim] : (index.ndim ? index.strides[0] : 0);
  const int64_t len = w.sizes[dim];
  if (len == 0 || rest == 0) return;
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  const T* val = static_cast<const T*>(values.data);
  T* out = static_cast<T*>(self.data);
  launch(self.device, rest, per_position ? "scatter_add" : "index_add", [=] __device__(int64_t r) {
    int64_t so = 0, vo = 0, io = 0;
    for (int k = s.ndim - 1; k >= 0; --k) {
      if (k == s.dim) continue;
      const int64_t c = r % s.sizes[k];
      r /= s.sizes[k];
      so += c * s.self_strides[k];
      vo += c * s.val_strides[k];
      io += c * s.idx_strides[k];
    }
    for (int64_t j = 0; j < len; ++j) {
      T& target = out[so + idx[io + j * s.idx_step] * s.self_strides[s.dim]];
      target = T(fn::Add{}(M(target), M(val[vo + j * s.val_strides[s.dim]])));
    }
  });
}

}  // namespace

void index_add(const dtp_tensor& self, int32_t dim, const dtp_tensor& index, const dtp_tensor& source) {
  dispatch(self.dtype, [&](auto tag) { add_at_typed<decltype(tag)>(self, index, source, dim, false); });
}

void scatter_add(const dtp_tensor& self, int32_t dim, const dtp_tensor& index, const dtp_tensor& src) {
  dispatch(self.dtype, [&](auto tag) { add_at_typed<decltype(tag)>(self, index, src, dim, true); });
}

void index_select(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, const dtp_tensor& index) {
  by_element_size(in.dtype, [&](auto tag) { index_select_typed<decltype(tag)>(out, in, dim, index); });
}

void gather(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, const dtp_tensor& index) {
  by_element_size(in.dtype, [&](auto tag) { gather_typed<decltype(tag)>(out, in, dim, index); });
}

}  // namespace dt::cudap

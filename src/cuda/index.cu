// index_select and gather (indices are int64 on the device, validated by the front end).
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

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

}  // namespace

void index_select(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, const dtp_tensor& index) {
  by_element_size(in.dtype, [&](auto tag) { index_select_typed<decltype(tag)>(out, in, dim, index); });
}

void gather(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, const dtp_tensor& index) {
  by_element_size(in.dtype, [&](auto tag) { gather_typed<decltype(tag)>(out, in, dim, index); });
}

}  // namespace dt::cudap

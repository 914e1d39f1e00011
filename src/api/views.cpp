// View and shape entry points.
#include "api/shim.h"
#include "nn/functions.h"
#include "ops/ops.h"

using namespace dt;
using namespace dt::api;

namespace {
template <typename F>
dt_status unary_view(const char* fn, const dt_tensor* t, dt_tensor** out, F f) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x_ref = tensor_arg(t, fn, "t");
    const Tensor& x = x_ref;
    Tensor r = f(x);
    *out = new_handle(std::move(r));
  });
}
}  // namespace

extern "C" {

DT_API dt_status dt_reshape(const dt_tensor* t, const int64_t* shape, size_t ndim, dt_tensor** out) {
  return unary_view("dt_reshape", t, out, [&](const Tensor& x) {
    return ag::reshape(x, dims_arg(shape, ndim, "dt_reshape", "shape"), false);
  });
}
DT_API dt_status dt_view(const dt_tensor* t, const int64_t* shape, size_t ndim, dt_tensor** out) {
  return unary_view("dt_view", t, out, [&](const Tensor& x) {
    return ag::reshape(x, dims_arg(shape, ndim, "dt_view", "shape"), true);
  });
}
DT_API dt_status dt_transpose(const dt_tensor* t, int64_t dim0, int64_t dim1, dt_tensor** out) {
  return unary_view("dt_transpose", t, out, [&](const Tensor& x) { return ag::transpose(x, dim0, dim1); });
}
DT_API dt_status dt_permute(const dt_tensor* t, const int64_t* dims, size_t ndim, dt_tensor** out) {
  return unary_view("dt_permute", t, out, [&](const Tensor& x) {
    return ag::permute(x, dims_arg(dims, ndim, "dt_permute", "dims"));
  });
}
DT_API dt_status dt_narrow(const dt_tensor* t, int64_t dim, int64_t start, int64_t length, dt_tensor** out) {
  return unary_view("dt_narrow", t, out, [&](const Tensor& x) { return ag::narrow(x, dim, start, length); });
}
DT_API dt_status dt_squeeze(const dt_tensor* t, const int64_t* dims, size_t ndims, dt_tensor** out) {
  return unary_view("dt_squeeze", t, out, [&](const Tensor& x) {
    dims_arg(dims, ndims, "dt_squeeze", "dims");
    return ag::squeeze(x, dims, ndims);
  });
}
DT_API dt_status dt_unsqueeze(const dt_tensor* t, int64_t dim, dt_tensor** out) {
  return unary_view("dt_unsqueeze", t, out, [&](const Tensor& x) { return ag::unsqueeze(x, dim); });
}
DT_API dt_status dt_expand(const dt_tensor* t, const int64_t* shape, size_t ndim, dt_tensor** out) {
  return unary_view("dt_expand", t, out, [&](const Tensor& x) {
    return ag::expand(x, dims_arg(shape, ndim, "dt_expand", "shape"));
  });
}
DT_API dt_status dt_contiguous(const dt_tensor* t, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_contiguous", "out");
    Borrowed x_ref = tensor_arg(t, "dt_contiguous", "t");
    const Tensor& x = x_ref;
    if (x.is_contiguous()) {
      handle_retain(t, HandleKind::Tensor);  // the same tensor, as PyTorch returns self
      *out = const_cast<dt_tensor*>(t);
      return;
    }
    *out = new_handle(ag::contiguous(x));
  });
}
DT_API dt_status dt_flatten(const dt_tensor* t, int64_t start_dim, int64_t end_dim, dt_tensor** out) {
  return unary_view("dt_flatten", t, out, [&](const Tensor& x) { return ag::flatten(x, start_dim, end_dim); });
}

}  // extern "C"

// Tensor entry points: constructors, references, queries, movement, host access, text.
#include <cmath>
#include <cstring>

#include "api/shim.h"
#include "core/context.h"
#include "core/format.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/ops.h"
#include "ops/sampling.h"
#include "ops/structured.h"

using namespace dt;
using namespace dt::api;

namespace {

// Shared body of the shape-taking constructors: checks, then make(shape, dtype, device).
template <typename Make>
dt_status construct(const char* fn, const int64_t* shape, size_t ndim, dt_dtype dtype, dt_device device,
                    dt_tensor** out, Make make) {
  return guard([&] {
    require(out, fn, "out");
    Dims s = dims_arg(shape, ndim, fn, "shape");
    numel_of(s);  // rejects negative dimensions and overflow
    DType t = resolve_dtype(dtype);
    Device d = resolve_device(device);
    Tensor result = make(s, t, d);
    *out = new_handle(std::move(result));
  });
}

template <typename Make>
dt_status construct_like(const char* fn, const dt_tensor* src, dt_tensor** out, Make make) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed s_ref = tensor_arg(src, fn, "src");
    const Tensor& s = s_ref;
    Tensor result = make(s.shape(), s.dtype(), s.device());
    *out = new_handle(std::move(result));
  });
}

template <typename Make>
dt_status construct_new(const char* fn, const dt_tensor* src, const int64_t* shape, size_t ndim, dt_tensor** out,
                        Make make) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed s_ref = tensor_arg(src, fn, "src");
    const Tensor& s = s_ref;
    Dims d = dims_arg(shape, ndim, fn, "shape");
    numel_of(d);
    Tensor result = make(d, s.dtype(), s.device());
    *out = new_handle(std::move(result));
  });
}

auto make_empty = [](const Dims& s, DType t, Device d) { return ops::empty(s, t, d); };
auto make_zeros = [](const Dims& s, DType t, Device d) { return ops::full(s, 0.0, t, d); };
auto make_ones = [](const Dims& s, DType t, Device d) { return ops::full(s, 1.0, t, d); };
auto make_full(double v) { return [v](const Dims& s, DType t, Device d) { return ops::full(s, v, t, d); }; }
auto make_rand = [](const Dims& s, DType t, Device d) { return ops::random(s, RandomDist::Uniform, t, d, "rand"); };
auto make_randn = [](const Dims& s, DType t, Device d) { return ops::random(s, RandomDist::Normal, t, d, "randn"); };
// randint and randperm default to int64, as PyTorch's; the rest resolve as construct does.
dt_dtype int64_unless_given(dt_dtype dtype) { return dtype == DT_DTYPE_DEFAULT ? DT_INT64 : dtype; }

}  // namespace

extern "C" {

DT_API dt_status dt_tensor_empty(const int64_t* shape, size_t ndim, dt_dtype dtype, dt_device device, dt_tensor** out) {
  return construct("dt_tensor_empty", shape, ndim, dtype, device, out, make_empty);
}
DT_API dt_status dt_tensor_empty_pinned(const int64_t* shape, size_t ndim, dt_dtype dtype, dt_tensor** out) {
  return construct("dt_tensor_empty_pinned", shape, ndim, dtype, dt_device{DT_DEVICE_CPU, 0}, out,
                   [](const Dims& s, DType t, Device) { return ops::empty_pinned(s, t); });
}

DT_API dt_status dt_tensor_pin_memory(const dt_tensor* t, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_pin_memory", "out");
    Borrowed x_ref = tensor_arg(t, "dt_tensor_pin_memory", "t");
    const Tensor& x = x_ref;
    Tensor result = ops::pin_memory(x);
    if (result.impl() == x.impl()) {
      handle_retain(t, HandleKind::Tensor);  // already pinned: the same handle, as PyTorch
      *out = const_cast<dt_tensor*>(t);
      return;
    }
    *out = new_handle(std::move(result));
  });
}

DT_API dt_status dt_tensor_is_pinned(const dt_tensor* t, int32_t* out) {
  return guard([&] {
    require(out, "dt_tensor_is_pinned", "out");
    *out = ops::is_pinned(tensor_arg(t, "dt_tensor_is_pinned", "t")) ? 1 : 0;
  });
}

DT_API dt_status dt_tensor_zeros(const int64_t* shape, size_t ndim, dt_dtype dtype, dt_device device, dt_tensor** out) {
  return construct("dt_tensor_zeros", shape, ndim, dtype, device, out, make_zeros);
}
DT_API dt_status dt_tensor_ones(const int64_t* shape, size_t ndim, dt_dtype dtype, dt_device device, dt_tensor** out) {
  return construct("dt_tensor_ones", shape, ndim, dtype, device, out, make_ones);
}
DT_API dt_status dt_tensor_full(const int64_t* shape, size_t ndim, double value, dt_dtype dtype, dt_device device,
                                dt_tensor** out) {
  return construct("dt_tensor_full", shape, ndim, dtype, device, out, make_full(value));
}
DT_API dt_status dt_tensor_rand(const int64_t* shape, size_t ndim, dt_dtype dtype, dt_device device, dt_tensor** out) {
  return construct("dt_tensor_rand", shape, ndim, dtype, device, out, make_rand);
}
DT_API dt_status dt_tensor_randn(const int64_t* shape, size_t ndim, dt_dtype dtype, dt_device device, dt_tensor** out) {
  return construct("dt_tensor_randn", shape, ndim, dtype, device, out, make_randn);
}

DT_API dt_status dt_tensor_arange(double start, double end, double step, dt_dtype dtype, dt_device device,
                                  dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_arange", "out");
    Device d = resolve_device(device);
    Tensor t = ops::arange(start, end, step, dtype, d);
    *out = new_handle(std::move(t));
  });
}

DT_API dt_status dt_tensor_randint(int64_t low, int64_t high, const int64_t* shape, size_t ndim, dt_dtype dtype,
                                   dt_device device, dt_tensor** out) {
  return construct("dt_tensor_randint", shape, ndim, int64_unless_given(dtype), device, out,
                   [low, high](const Dims& s, DType t, Device d) { return ops::randint(low, high, s, t, d); });
}

DT_API dt_status dt_tensor_randperm(int64_t n, dt_dtype dtype, dt_device device, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_randperm", "out");
    DType t = resolve_dtype(int64_unless_given(dtype));
    Device d = resolve_device(device);
    *out = new_handle(ops::randperm(n, t, d));
  });
}

DT_API dt_status dt_tensor_linspace(double start, double end, int64_t steps, dt_dtype dtype, dt_device device,
                                    dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_linspace", "out");
    DType t = resolve_dtype(dtype);
    Device d = resolve_device(device);
    *out = new_handle(ops::linspace(start, end, steps, t, d));
  });
}

DT_API dt_status dt_tensor_eye(int64_t n, int64_t m, dt_dtype dtype, dt_device device, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_eye", "out");
    DType t = resolve_dtype(dtype);
    Device d = resolve_device(device);
    *out = new_handle(ops::eye(n, m, t, d));
  });
}

DT_API dt_status dt_tensor_from_data(const void* data, size_t nbytes, const int64_t* shape, size_t ndim,
                                     dt_dtype dtype, dt_device device, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_from_data", "out");
    Dims s = dims_arg(shape, ndim, "dt_tensor_from_data", "shape");
    DType t = resolve_dtype(dtype);
    Device d = resolve_device(device);
    Tensor result = ops::from_host(data, nbytes, s, t, d);
    *out = new_handle(std::move(result));
  });
}

DT_API dt_status dt_tensor_from_blob(void* data, const int64_t* shape, size_t ndim, const int64_t* strides,
                                     dt_dtype dtype, dt_device device, dt_deleter deleter, void* context,
                                     dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_tensor_from_blob";
    require(out, fn, "out");
    Dims s = dims_arg(shape, ndim, fn, "shape");
    numel_of(s);  // the shape is checked before the dtype and the device
    DType t = resolve_dtype(dtype);
    Device d = resolve_device(device);
    if (!d.is_cpu())
      fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": only host memory can be borrowed, but the device is ", device_str(d)));
    Dims st = strides ? Dims(strides, ndim) : contiguous_strides(s);
    for (int i = 0; i < st.n; ++i)
      if (st.v[i] < 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": negative stride ", st.v[i], " is not supported"));
    // Build everything that can fail before taking ownership of the caller's memory.
    Tensor result = borrow_tensor(fn, data, d, t, s, st);
    Storage* storage = result.storage();
    dt_tensor* h = new_handle(std::move(result));
    // Cannot fail from here on: now the deleter belongs to the storage.
    storage->set_deleter(deleter, context);
    *out = h;
  });
}

DT_API dt_status dt_tensor_retain(dt_tensor* t) {
  return guard([&] {
    require(t, "dt_tensor_retain", "t");
    handle_retain(t, HandleKind::Tensor);
  });
}

DT_API dt_status dt_tensor_release(dt_tensor* t) {
  if (!t) return DT_OK;
  return guard([&] { handle_release(t, HandleKind::Tensor); });
}

DT_API dt_status dt_empty_like(const dt_tensor* src, dt_tensor** out) {
  return construct_like("dt_empty_like", src, out, make_empty);
}
DT_API dt_status dt_zeros_like(const dt_tensor* src, dt_tensor** out) {
  return construct_like("dt_zeros_like", src, out, make_zeros);
}
DT_API dt_status dt_ones_like(const dt_tensor* src, dt_tensor** out) {
  return construct_like("dt_ones_like", src, out, make_ones);
}
DT_API dt_status dt_full_like(const dt_tensor* src, double value, dt_tensor** out) {
  return construct_like("dt_full_like", src, out, make_full(value));
}
DT_API dt_status dt_rand_like(const dt_tensor* src, dt_tensor** out) {
  return construct_like("dt_rand_like", src, out, make_rand);
}
DT_API dt_status dt_randn_like(const dt_tensor* src, dt_tensor** out) {
  return construct_like("dt_randn_like", src, out, make_randn);
}

DT_API dt_status dt_tensor_new_empty(const dt_tensor* src, const int64_t* shape, size_t ndim, dt_tensor** out) {
  return construct_new("dt_tensor_new_empty", src, shape, ndim, out, make_empty);
}
DT_API dt_status dt_tensor_new_zeros(const dt_tensor* src, const int64_t* shape, size_t ndim, dt_tensor** out) {
  return construct_new("dt_tensor_new_zeros", src, shape, ndim, out, make_zeros);
}
DT_API dt_status dt_tensor_new_ones(const dt_tensor* src, const int64_t* shape, size_t ndim, dt_tensor** out) {
  return construct_new("dt_tensor_new_ones", src, shape, ndim, out, make_ones);
}
DT_API dt_status dt_tensor_new_full(const dt_tensor* src, const int64_t* shape, size_t ndim, double value,
                                    dt_tensor** out) {
  return construct_new("dt_tensor_new_full", src, shape, ndim, out, make_full(value));
}

// ---- queries

DT_API dt_status dt_tensor_ndim(const dt_tensor* t, size_t* out) {
  return guard([&] {
    require(out, "dt_tensor_ndim", "out");
    *out = static_cast<size_t>(tensor_arg(t, "dt_tensor_ndim", "t")->ndim());
  });
}

namespace {
dt_status write_dims(const char* fn, const dt_tensor* t, int64_t* out, size_t cap, bool strides) {
  return guard([&] {
    Borrowed x_ref = tensor_arg(t, fn, "t");
    const Tensor& x = x_ref;
    const Dims& d = strides ? x.strides() : x.shape();
    if (cap < static_cast<size_t>(d.n))
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": the buffer holds ", cap, " values but the tensor has ", d.n, " dimensions"));
    if (d.n > 0) require(out, fn, "out");
    for (int i = 0; i < d.n; ++i) out[i] = d.v[i];
  });
}
}  // namespace

DT_API dt_status dt_tensor_shape(const dt_tensor* t, int64_t* out, size_t cap) {
  return write_dims("dt_tensor_shape", t, out, cap, false);
}
DT_API dt_status dt_tensor_strides(const dt_tensor* t, int64_t* out, size_t cap) {
  return write_dims("dt_tensor_strides", t, out, cap, true);
}

DT_API dt_status dt_tensor_dtype(const dt_tensor* t, dt_dtype* out) {
  return guard([&] {
    require(out, "dt_tensor_dtype", "out");
    *out = static_cast<dt_dtype>(tensor_arg(t, "dt_tensor_dtype", "t")->dtype());
  });
}
DT_API dt_status dt_tensor_device(const dt_tensor* t, dt_device* out) {
  return guard([&] {
    require(out, "dt_tensor_device", "out");
    *out = tensor_arg(t, "dt_tensor_device", "t")->device().to_c();
  });
}
DT_API dt_status dt_tensor_numel(const dt_tensor* t, size_t* out) {
  return guard([&] {
    require(out, "dt_tensor_numel", "out");
    *out = static_cast<size_t>(tensor_arg(t, "dt_tensor_numel", "t")->numel());
  });
}
DT_API dt_status dt_tensor_nbytes(const dt_tensor* t, size_t* out) {
  return guard([&] {
    require(out, "dt_tensor_nbytes", "out");
    *out = tensor_arg(t, "dt_tensor_nbytes", "t")->nbytes();
  });
}
DT_API dt_status dt_tensor_is_contiguous(const dt_tensor* t, int32_t* out) {
  return guard([&] {
    require(out, "dt_tensor_is_contiguous", "out");
    *out = tensor_arg(t, "dt_tensor_is_contiguous", "t")->is_contiguous() ? 1 : 0;
  });
}
DT_API dt_status dt_tensor_shares_storage(const dt_tensor* a, const dt_tensor* b, int32_t* out) {
  return guard([&] {
    require(out, "dt_tensor_shares_storage", "out");
    Borrowed x_ref = tensor_arg(a, "dt_tensor_shares_storage", "a");
    const Tensor& x = x_ref;
    Borrowed y_ref = tensor_arg(b, "dt_tensor_shares_storage", "b");
    const Tensor& y = y_ref;
    *out = x.storage() == y.storage() ? 1 : 0;
  });
}

DT_API dt_status dt_dtype_size(dt_dtype dtype, size_t* out) {
  return guard([&] {
    require(out, "dt_dtype_size", "out");
    *out = dtype_size(checked_dtype(dtype));
  });
}

DT_API const char* dt_dtype_name(dt_dtype dtype) {
  return dtype_valid(dtype) ? dtype_name(static_cast<DType>(dtype)) : nullptr;
}

// ---- movement and host access

DT_API dt_status dt_tensor_to(const dt_tensor* t, dt_device device, dt_dtype dtype, uint32_t flags, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_tensor_to";
    require(out, fn, "out");
    Borrowed x_ref = tensor_arg(t, fn, "t");
    const Tensor& x = x_ref;
    if (flags & ~(DT_TO_NON_BLOCKING | DT_TO_COPY)) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": unknown flags ", flags));
    Device d = device.type == DT_DEVICE_DEFAULT ? x.device() : Device::from_c(device);
    check_device(d);
    DType ty = dtype == DT_DTYPE_DEFAULT ? x.dtype() : checked_dtype(dtype);
    bool force = (flags & DT_TO_COPY) != 0;
    if (!force && d == x.device() && ty == x.dtype()) {
      handle_retain(t, HandleKind::Tensor);  // PyTorch returns self: the same handle
      *out = const_cast<dt_tensor*>(t);
      return;
    }
    Tensor result = ag::to(x, d, ty, force, (flags & DT_TO_NON_BLOCKING) != 0);
    *out = new_handle(std::move(result));
  });
}

DT_API dt_status dt_tensor_copy_to_host(const dt_tensor* t, void* dst, size_t nbytes) {
  return guard([&] { ops::copy_to_host(tensor_arg(t, "dt_tensor_copy_to_host", "t"), dst, nbytes); });
}

DT_API dt_status dt_tensor_copy_from_host(dt_tensor* t, const void* src, size_t nbytes) {
  return guard([&] {
    Borrowed x = tensor_arg(t, "dt_tensor_copy_from_host", "t");
    // It would write now, not at each replay: fill static inputs between replays instead.
    refuse_while_capturing(static_cast<const Tensor&>(x).device(), "dt_tensor_copy_from_host",
                           "it writes now, not when the graph is replayed; fill inputs before a replay");
    ops::copy_from_host(x, src, nbytes);
  });
}

DT_API dt_status dt_copy_(dt_tensor* self, const dt_tensor* src, uint32_t flags) {
  return guard([&] {
    const char* fn = "dt_copy_";
    Borrowed s = tensor_arg(self, fn, "self");
    Borrowed from = tensor_arg(src, fn, "src");
    if (flags & ~DT_TO_NON_BLOCKING)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": unknown flags ", flags, " (only DT_TO_NON_BLOCKING applies)"));
    ag::copy_(s, from, (flags & DT_TO_NON_BLOCKING) != 0);
  });
}

DT_API dt_status dt_tensor_data_ptr(const dt_tensor* t, void** out) {
  return guard([&] {
    require(out, "dt_tensor_data_ptr", "out");
    Borrowed x_ref = tensor_arg(t, "dt_tensor_data_ptr", "t");
    const Tensor& x = x_ref;
    if (!x.device().is_cpu())
      fail(DT_ERR_NOT_SUPPORTED, cat("dt_tensor_data_ptr: a tensor on ", device_str(x.device()),
                                     " cannot be viewed as host memory; copy it with dt_tensor_to or dt_tensor_copy_to_host"));
    x.storage()->begin_write("dt_tensor_data_ptr");  // the caller may write through it (core/storage.h)
    *out = x.data();
  });
}

DT_API dt_status dt_tensor_item(const dt_tensor* t, double* out) {
  return guard([&] {
    require(out, "dt_tensor_item", "out");
    Borrowed x_ref = tensor_arg(t, "dt_tensor_item", "t");
    const Tensor& x = x_ref;
    if (x.numel() != 1)
      fail(DT_ERR_INVALID_ARGUMENT, cat("dt_tensor_item: a tensor with ", x.numel(),
                                        " elements cannot be converted to a scalar"));
    refuse_while_capturing(x.device(), "dt_tensor_item", "its value is computed only when the graph is replayed");
    Tensor v = ops::to(x, Device{DT_DEVICE_CPU, 0}, DType::Float64, false);
    *out = *v.data_as<double>();
  });
}

DT_API dt_status dt_tensor_to_string(const dt_tensor* t, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_tensor_to_string");
    Borrowed x_ref = tensor_arg(t, "dt_tensor_to_string", "t");
    const Tensor& x = x_ref;
    refuse_while_capturing(x.device(), "dt_tensor_to_string", "its values are computed only when the graph is replayed");
    Tensor host = x.device().is_cpu() ? x : ops::to(x, Device{DT_DEVICE_CPU, 0}, x.dtype(), false);
    // As PyTorch: the backward function of a recorded result, else whether a leaf requires grad.
    std::string grad;
    if (const Node* fn = ag::grad_fn(x)) grad = cat("grad_fn=<", fn->name(), ">");
    else if (ag::requires_grad(x)) grad = "requires_grad=True";
    write_string(format_tensor(host, x.device(), grad), buf, cap, needed);
  });
}

}  // extern "C"

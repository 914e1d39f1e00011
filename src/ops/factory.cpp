// Constructors, dtype/device movement and host copies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/registry.h"
#include "core/error.h"
#include "core/generator.h"
#include "core/graph.h"
#include "ops/ops.h"

namespace dt::ops {

Tensor empty(const Dims& shape, DType dtype, Device device) { return Tensor::empty(shape, dtype, device); }

void fill_(const Tensor& t, double value) {
  if (t.numel() == 0) return;
  begin_write("fill_", "", t);
  OpArgs args{&t};
  args.f[0] = value;
  run_op(KernelOp::Fill, args);
}

Tensor full(const Dims& shape, double value, DType dtype, Device device) {
  Tensor t = Tensor::empty(shape, dtype, device);
  fill_(t, value);
  return t;
}

Tensor arange(double start, double end, double step, dt_dtype dtype_code, Device device) {
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    fail(DT_ERR_INVALID_ARGUMENT, "arange: start, end and step must be finite");
  if (step == 0) fail(DT_ERR_INVALID_ARGUMENT, "arange: step must be nonzero");
  if ((step > 0 && end < start) || (step < 0 && end > start))
    fail(DT_ERR_INVALID_ARGUMENT, cat("arange: upper bound and larger bound inconsistent with step sign (start ",
                                      start, ", end ", end, ", step ", step, ")"));
  DType dtype;
  if (dtype_code == DT_DTYPE_DEFAULT) {
    bool integral = start == std::floor(start) && end == std::floor(end) && step == std::floor(step);
    dtype = integral ? DType::Int64 : default_dtype();
  } else {
    dtype = checked_dtype(dtype_code);
  }
  if (dtype == DType::Bool) fail(DT_ERR_DTYPE_MISMATCH, "arange: not implemented for bool (as in PyTorch)");
  double count = std::ceil((end - start) / step);
  if (count > 9.0e15) fail(DT_ERR_INVALID_ARGUMENT, "arange: too many elements");
  Dims shape{static_cast<int64_t>(count)};
  Tensor t = Tensor::empty(shape, dtype, device);
  if (t.numel() > 0) {
    OpArgs args{&t};
    args.f[0] = start;
    args.f[1] = step;
    run_op(KernelOp::Arange, args);
  }
  return t;
}

namespace {
// Philox blocks one random tensor consumes (see cpu/kernels_copy.cpp random_fill).
uint64_t random_blocks(DType dtype, RandomDist dist, int64_t numel) {
  uint64_t n = static_cast<uint64_t>(numel);
  bool wide = dtype == DType::Float64;
  uint64_t per_block = dist == RandomDist::Uniform ? (wide ? 2 : 4) : (wide ? 1 : 2);
  return (n + per_block - 1) / per_block;
}
}  // namespace

Tensor random(const Dims& shape, RandomDist dist, DType dtype, Device device, const char* op) {
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected a floating dtype but got ", dtype_name(dtype)));
  Tensor t = Tensor::empty(shape, dtype, device);
  if (t.numel() == 0) return t;
  refuse_while_capturing(device, op, "replay would repeat the same random numbers");
  RandomRange r = reserve_random(device, random_blocks(dtype, dist, t.numel()));
  OpArgs args{&t};
  args.i[0] = static_cast<int64_t>(dist);
  args.i[1] = static_cast<int64_t>(r.seed);  // uint64 bits, as the plugin ABI passes them
  args.i[2] = static_cast<int64_t>(r.offset);
  run_op(KernelOp::Random, args);
  return t;
}

Tensor from_host(const void* data, size_t nbytes, const Dims& shape, DType dtype, Device device) {
  int64_t n = numel_of(shape);
  size_t expected;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n), dtype_size(dtype), &expected))
    fail(DT_ERR_INVALID_ARGUMENT, cat("from_data: shape ", dims_str(shape), " is too large"));
  if (nbytes != expected)
    fail(DT_ERR_INVALID_ARGUMENT, cat("from_data: shape ", dims_str(shape), " of ", dtype_name(dtype), " needs ",
                                      expected, " bytes but ", nbytes, " were given"));
  if (!data && nbytes > 0) fail(DT_ERR_INVALID_ARGUMENT, "from_data: data is NULL");
  Tensor t = Tensor::empty(shape, dtype, device);
  if (nbytes) copy_from_host(t, data, nbytes);
  return t;
}

namespace {
// A copy queued while d or s captures (core/graph.h): recorded when both sides are one
// backend's memory; refused across the host and a device (replay would touch host memory
// the graph does not own, and CUDA cannot capture copies of pageable memory).
void record_copy(const Tensor& dst, const Tensor& src, bool non_blocking, Capture* cd, Capture* cs) {
  const Device d = dst.device(), s = src.device();
  if (d.type != s.type)
    fail(DT_ERR_NOT_SUPPORTED, cat("copy from ", device_str(s), " to ", device_str(d),
                                   ": cannot be captured into a graph (a copy between the host and a device); "
                                   "copy before the capture or after a replay. The capture goes on without it"));
  if (cd && cs && cd != cs)
    fail(DT_ERR_NOT_SUPPORTED, cat("copy from ", device_str(s), " to ", device_str(d),
                                   ": both devices are capturing, into different graphs; the captures go on without it"));
  Backend& b = backend_for(d);
  record_step(cd ? *cd : *cs, [&](Graph& g) {
    return std::function<void()>([&b, to = g.keep(dst), from = g.keep(src), non_blocking] { b.copy(to, from, non_blocking); });
  });
}
}  // namespace

void copy_(const Tensor& dst, const Tensor& src_in, bool non_blocking) {
  if (dst.numel() == 0) return;
  const Tensor src = read_apart(dst, src_in);
  begin_write("copy_", "", dst);
  const Device d = dst.device(), s = src.device();
  Capture* cd = capturing(d);
  Capture* cs = s == d ? cd : capturing(s);
  if (cd || cs) return record_copy(dst, src, non_blocking, cd, cs);
  // One device type (CPU devices share host memory; a GPU backend copies between its
  // devices), or host memory on one side: the non-host side's backend copies.
  if (d.type == s.type || s.is_cpu()) return backend_for(d).copy(dst, src, non_blocking);
  if (d.is_cpu()) return backend_for(s).copy(dst, src, false);
  // Two device types that are not the host: through host memory.
  Tensor host = Tensor::empty(src.shape(), src.dtype(), Device{DT_DEVICE_CPU, 0});
  backend_for(s).copy(host, src, false);
  backend_for(d).copy(dst, host, false);
}

void copy_broadcast_(const Tensor& dst, const Tensor& src, bool non_blocking) {
  bool fits = src.ndim() <= dst.ndim();
  for (int i = 1; fits && i <= src.ndim(); ++i) {
    const int64_t s = src.size(src.ndim() - i);
    fits = s == 1 || s == dst.size(dst.ndim() - i);
  }
  if (!fits)
    fail(DT_ERR_SHAPE_MISMATCH, cat("copy_: the source of shape ", dims_str(src.shape()),
                                    " does not broadcast to the destination's shape ", dims_str(dst.shape())));
  // copy_ and the backends' copies already take strided and broadcast operands on either
  // side of a device boundary (staging where they need dense blocks).
  copy_(dst, src.shape() == dst.shape() ? src : expand(src, dst.shape()), non_blocking);
}

Tensor to(const Tensor& t, Device device, DType dtype, bool force_copy, bool non_blocking) {
  if (!force_copy && device == t.device() && dtype == t.dtype()) return t;
  Tensor out = Tensor::empty(t.shape(), dtype, device);
  copy_(out, t, non_blocking);
  return out;
}

Tensor empty_pinned(const Dims& shape, DType dtype) {
  return Tensor::empty_from(pinned_host_allocator(), shape, dtype, Device{DT_DEVICE_CPU, 0});
}

bool is_pinned(const Tensor& t) {
  const Allocator* a = t.storage()->allocator();
  return a != nullptr && a->page_locked();
}

Tensor pin_memory(const Tensor& t) {
  if (!t.device().is_cpu())
    fail(DT_ERR_NOT_SUPPORTED, cat("pin_memory: only CPU tensors can be pinned, but the tensor is on ",
                                   device_str(t.device())));
  if (is_pinned(t)) return t;
  Tensor out = empty_pinned(t.shape(), t.dtype());
  if (out.numel() > 0) copy_(out, t);
  return out;
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  return to(t, t.device(), t.dtype(), true);
}

void copy_to_host(const Tensor& t, void* dst, size_t nbytes) {
  if (nbytes != t.nbytes())
    fail(DT_ERR_INVALID_ARGUMENT, cat("copy_to_host: the tensor has ", t.nbytes(), " bytes but the buffer ", nbytes));
  if (nbytes == 0) return;
  if (!dst) fail(DT_ERR_INVALID_ARGUMENT, "copy_to_host: dst is NULL");
  refuse_while_capturing(t.device(), "reading a tensor on the host",
                         "its values are computed only when the graph is replayed");
  if (t.device().is_cpu() && t.is_contiguous()) {
    std::memcpy(dst, t.data(), nbytes);
    return;
  }
  // Straight into the caller's memory, with no staging tensor: a GPU writes it in one
  // transfer (at the full rate when the memory is pinned) and the copy waits for it.
  Ref<Storage> st = Storage::borrow(Device{DT_DEVICE_CPU, 0}, dst, nbytes, nullptr, nullptr);
  Tensor view(Ref<TensorImpl>::adopt(TensorImpl::create(std::move(st), t.dtype(), t.shape(), contiguous_strides(t.shape()), 0)));
  copy_(view, t, false);
}

void copy_from_host(const Tensor& t, const void* src, size_t nbytes) {
  if (nbytes != t.nbytes())
    fail(DT_ERR_INVALID_ARGUMENT, cat("copy_from_host: the tensor has ", t.nbytes(), " bytes but the buffer ", nbytes));
  if (nbytes == 0) return;
  if (!src) fail(DT_ERR_INVALID_ARGUMENT, "copy_from_host: src is NULL");
  // A bool is stored as one byte holding 0 or 1 (any other byte read as a bool is
  // undefined behaviour in the kernels): copied-in bytes are normalised, nonzero is true,
  // as NumPy's and PyTorch's conversions to bool do.
  std::vector<unsigned char> normalised;
  if (t.dtype() == DType::Bool) {
    const auto* bytes = static_cast<const unsigned char*>(src);
    if (std::any_of(bytes, bytes + nbytes, [](unsigned char b) { return b > 1; })) {
      normalised.resize(nbytes);
      std::transform(bytes, bytes + nbytes, normalised.begin(), [](unsigned char b) { return b != 0; });
      src = normalised.data();
    }
  }
  begin_write("copy_from_host", "", t);
  if (t.device().is_cpu() && t.is_contiguous()) {
    std::memmove(t.data(), src, nbytes);
    return;
  }
  // (A capture would record a copy from memory the caller may free before a replay.)
  refuse_while_capturing(t.device(), "copying host memory into a tensor", "the host memory is the caller's");
  Ref<Storage> st = Storage::borrow(Device{DT_DEVICE_CPU, 0}, const_cast<void*>(src), nbytes, nullptr, nullptr);
  Tensor view(Ref<TensorImpl>::adopt(TensorImpl::create(std::move(st), t.dtype(), t.shape(), contiguous_strides(t.shape()), 0)));
  copy_(t, view);
}

Tensor scalar_tensor(double v, Device device) {
  bool integral = std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.2e18;
  Tensor t = Tensor::empty(Dims{}, integral ? DType::Int64 : DType::Float64, device);
  if (device.is_cpu()) {
    if (integral) *t.data_as<int64_t>() = static_cast<int64_t>(v);
    else *t.data_as<double>() = v;
  } else {
    fill_(t, v);
  }
  return t;
}

}  // namespace dt::ops

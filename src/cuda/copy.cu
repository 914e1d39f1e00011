// Copies: on one device (dtype conversion and broadcasting in one kernel, a plain
// cudaMemcpyAsync when nothing changes), host<->device (one contiguous transfer, with
// the conversion done on the device), and GPU to GPU (peer copy when the devices allow
// it, staged by the driver otherwise).
#include <cstring>
#include <mutex>
#include <optional>

#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "cuda/memory.h"
#include "ops/cast.h"

namespace dt::cudap {
namespace {

template <typename D, typename S>
struct Cast {
  __device__ D operator()(S v) const { return cast_value<D>(v); }
};

size_t nbytes(const dtp_tensor& t) { return static_cast<size_t>(t.numel) * dtype_size(static_cast<DType>(t.dtype)); }

bool is_linear(const dtp_tensor& t) {
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] == 1) continue;
    if (t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

bool same_shape(const dtp_tensor& a, const dtp_tensor& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.sizes[d] != b.sizes[d]) return false;
  return true;
}

// A contiguous tensor of `like`'s shape at data, on device, with dtype.
dtp_tensor contiguous_like(const dtp_tensor& like, void* data, int32_t dtype, int32_t device) {
  dtp_tensor t = like;
  t.data = data;
  t.dtype = dtype;
  t.device = device;
  t.pinned = 0;
  int64_t s = 1;
  for (int d = like.ndim - 1; d >= 0; --d) {
    t.strides[d] = s;
    s *= like.sizes[d];
  }
  return t;
}

// A plain byte copy will do: same dtype and shape, both in row-major order.
bool bytewise(const dtp_tensor& dst, const dtp_tensor& src) {
  return dst.dtype == src.dtype && same_shape(dst, src) && is_linear(dst) && is_linear(src);
}

void enable_peer_access(int from, int to) {
  static std::mutex mu;
  static bool tried[64][64];
  std::lock_guard<std::mutex> lock(mu);
  if (tried[from][to]) return;
  tried[from][to] = true;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, from, to) == cudaSuccess && can) {
    DeviceGuard guard(from);
    cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) check(e, from, "cudaDeviceEnablePeerAccess");
  }
  (void)cudaGetLastError();
}

void host_to_device(const dtp_tensor& dst, const dtp_tensor& src, bool non_blocking) {
  const int dev = dst.device;
  cudaStream_t s = stream(dev);
  if (bytewise(dst, src)) {
    check(cudaMemcpyAsync(dst.data, src.data, nbytes(dst), cudaMemcpyHostToDevice, s), dev, "copy to device");
  } else {
    Scratch staged(dev, nbytes(src));
    check(cudaMemcpyAsync(staged.get(), src.data, nbytes(src), cudaMemcpyHostToDevice, s), dev, "copy to device");
    copy_on_device(dst, contiguous_like(src, staged.get(), src.dtype, dev));
  }
  // Only a non-blocking copy from our pinned memory may still be reading the caller's
  // buffer when this returns. Any other copy waits, as PyTorch's does: memory from
  // from_blob may be page-locked by someone else, and then the driver reads it late.
  if (!(src.pinned && non_blocking)) check(cudaStreamSynchronize(s), dev, "copy to device");
}

void device_to_host(const dtp_tensor& dst, const dtp_tensor& src) {
  const int dev = src.device;
  cudaStream_t s = stream(dev);
  if (bytewise(dst, src)) {
    check(cudaMemcpyAsync(dst.data, src.data, nbytes(dst), cudaMemcpyDeviceToHost, s), dev, "copy to host");
  } else {
    Scratch staged(dev, nbytes(dst));
    copy_on_device(contiguous_like(dst, staged.get(), dst.dtype, dev), src);
    check(cudaMemcpyAsync(dst.data, staged.get(), nbytes(dst), cudaMemcpyDeviceToHost, s), dev, "copy to host");
  }
  // Always wait: the caller reads the host memory next.
  check(cudaStreamSynchronize(s), dev, "copy to host");
}

void device_to_device(const dtp_tensor& dst, const dtp_tensor& src) {
  const int from = src.device, to = dst.device;
  enable_peer_access(to, from);
  // The source's producers run on the source device's stream: finish them first.
  check(cudaStreamSynchronize(stream(from)), from, "copy between devices");
  const dtp_tensor* plain_src = &src;
  dtp_tensor packed;
  std::optional<Scratch> src_stage;
  const size_t bytes = static_cast<size_t>(dst.numel) * dtype_size(static_cast<DType>(src.dtype));
  if (!(same_shape(dst, src) && is_linear(src))) {
    DeviceGuard guard(from);
    src_stage.emplace(from, bytes);
    packed = contiguous_like(dst, src_stage->get(), src.dtype, from);
    copy_on_device(packed, src);
    check(cudaStreamSynchronize(stream(from)), from, "copy between devices");
    plain_src = &packed;
  }
  if (dst.dtype == src.dtype && is_linear(dst)) {
    check(cudaMemcpyPeerAsync(dst.data, to, plain_src->data, from, bytes, stream(to)), to, "copy between devices");
  } else {
    Scratch landed(to, bytes);
    check(cudaMemcpyPeerAsync(landed.get(), to, plain_src->data, from, bytes, stream(to)), to, "copy between devices");
    copy_on_device(dst, contiguous_like(dst, landed.get(), src.dtype, to));
  }
  // The source may be freed (stream-ordered on its own device) once this returns.
  check(cudaStreamSynchronize(stream(to)), to, "copy between devices");
}

template <typename D, typename S>
void convert(const dtp_tensor& dst, const dtp_tensor& src) {
  unary_op<D, S>(dst, src, "copy", Cast<D, S>{});
}

}  // namespace

void copy_on_device(const dtp_tensor& dst, const dtp_tensor& src) {
  if (dst.numel == 0) return;
  if (bytewise(dst, src)) {
    check(cudaMemcpyAsync(dst.data, src.data, nbytes(dst), cudaMemcpyDeviceToDevice, stream(dst.device)),
          dst.device, "copy");
    return;
  }
  dispatch(dst.dtype, [&](auto dst_tag) {
    dispatch(src.dtype, [&](auto src_tag) { convert<decltype(dst_tag), decltype(src_tag)>(dst, src); });
  });
}

void copy(const dtp_tensor& dst, const dtp_tensor& src, bool non_blocking) {
  if (dst.numel == 0) return;
  if (src.device == DTP_HOST) host_to_device(dst, src, non_blocking);
  else if (dst.device == DTP_HOST) device_to_host(dst, src);
  else if (dst.device == src.device) copy_on_device(dst, src);
  else device_to_device(dst, src);
}

}  // namespace dt::cudap

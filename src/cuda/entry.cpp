// The plugin's one exported symbol and its dtp_api table. Every function catches
// everything: a Failure becomes its code and message, anything else DT_ERR_INTERNAL.
// Each sets the device it works on (DeviceGuard) and restores the caller's.
#include <cstdio>
#include <exception>
#include <new>

#include "core/plugin_abi.h"
#include "cuda/kernels.h"
#include "cuda/memory.h"
#include "cuda/probe.h"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

void set_error(dtp_error* err, int32_t code, const char* message) {
  if (!err) return;
  err->code = code;
  std::snprintf(err->message, sizeof err->message, "%s", message);
}

template <typename F>
int32_t guarded(dtp_error* err, F&& f) {
  try {
    f();
    return DT_OK;
  } catch (const Failure& e) {
    set_error(err, e.code, e.message.c_str());
    return e.code;
  } catch (const std::bad_alloc&) {
    set_error(err, DT_ERR_OUT_OF_MEMORY, "out of host memory in the CUDA plugin");
    return DT_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_error(err, DT_ERR_INTERNAL, e.what());
    return DT_ERR_INTERNAL;
  } catch (...) {
    set_error(err, DT_ERR_INTERNAL, "unknown exception in the CUDA plugin");
    return DT_ERR_INTERNAL;
  }
}

// Work on a tensor's device: alive, current for the call.
template <typename F>
int32_t on_device(int device, dtp_error* err, F&& f) {
  return guarded(err, [&] {
    require_alive(device);
    DeviceGuard guard(device);
    f();
  });
}

int32_t device_properties(int32_t device, dt_device_props* out, dtp_error* err) {
  return guarded(err, [&] { cudap::device_properties(device, out); });
}
int32_t memory_info(int32_t device, uint64_t* f, uint64_t* t, dtp_error* err) {
  return guarded(err, [&] { cudap::memory_info(device, f, t); });
}
int32_t allocate(int32_t device, size_t n, void** out, dtp_error* err) {
  return guarded(err, [&] { *out = device_allocate(device, n); });
}
void deallocate(int32_t device, void* p, size_t n) { device_deallocate(device, p, n); }
int32_t stats(int32_t device, dtp_mem_stats* out, dtp_error* err) {
  return guarded(err, [&] { memory_stats(device, out); });
}
int32_t trim(int32_t device, dtp_error* err) {
  return guarded(err, [&] { empty_cache(device); });
}
int32_t host_alloc(size_t n, void** out, dtp_error* err) {
  return guarded(err, [&] { *out = host_allocate(n); });
}
void host_free(void* p) { host_deallocate(p); }

// The device a copy runs on: the GPU side (the destination's when both are GPUs).
int copy_device(const dtp_tensor* dst, const dtp_tensor* src) {
  return dst->device != DTP_HOST ? dst->device : src->device;
}
int32_t copy_fn(const dtp_tensor* dst, const dtp_tensor* src, int32_t non_blocking, dtp_error* err) {
  return guarded(err, [&] {
    if (src->device != DTP_HOST) require_alive(src->device);
    int dev = copy_device(dst, src);
    require_alive(dev);
    DeviceGuard guard(dev);
    copy(*dst, *src, non_blocking != 0);
  });
}
int32_t fill_fn(const dtp_tensor* dst, double v, dtp_error* err) {
  return on_device(dst->device, err, [&] { fill(*dst, v); });
}
int32_t arange_fn(const dtp_tensor* dst, double start, double step, dtp_error* err) {
  return on_device(dst->device, err, [&] { arange(*dst, start, step); });
}
int32_t random_fn(const dtp_tensor* dst, int32_t dist, uint64_t seed, uint64_t offset, dtp_error* err) {
  return on_device(dst->device, err, [&] { random(*dst, dist, seed, offset); });
}
int32_t binary_fn(int32_t op, const dtp_tensor* o, const dtp_tensor* a, const dtp_tensor* b, dtp_error* err) {
  return on_device(o->device, err, [&] { binary(op, *o, *a, *b); });
}
int32_t unary_fn(int32_t op, const dtp_tensor* o, const dtp_tensor* a, dtp_error* err) {
  return on_device(o->device, err, [&] { unary(op, *o, *a); });
}
int32_t where_fn(const dtp_tensor* o, const dtp_tensor* c, const dtp_tensor* a, const dtp_tensor* b, dtp_error* err) {
  return on_device(o->device, err, [&] { where(*o, *c, *a, *b); });
}
int32_t reduce_fn(int32_t op, const dtp_tensor* o, const dtp_tensor* in, uint32_t mask, dtp_error* err) {
  return on_device(o->device, err, [&] { reduce(op, *o, *in, mask); });
}
int32_t softmax_fn(const dtp_tensor* o, const dtp_tensor* in, int32_t dim, int32_t log, dtp_error* err) {
  return on_device(o->device, err, [&] { softmax(*o, *in, dim, log != 0); });
}
int32_t matmul_fn(const dtp_tensor* o, const dtp_tensor* a, const dtp_tensor* b, int32_t tf32, dtp_error* err) {
  return on_device(o->device, err, [&] { matmul(*o, *a, *b, tf32 != 0); });
}
int32_t index_select_fn(const dtp_tensor* o, const dtp_tensor* in, int32_t dim, const dtp_tensor* idx,
                        dtp_error* err) {
  return on_device(o->device, err, [&] { index_select(*o, *in, dim, *idx); });
}
int32_t gather_fn(const dtp_tensor* o, const dtp_tensor* in, int32_t dim, const dtp_tensor* idx, dtp_error* err) {
  return on_device(o->device, err, [&] { gather(*o, *in, dim, *idx); });
}
int32_t synchronize_fn(int32_t device, dtp_error* err) {
  return on_device(device, err, [&] { check(cudaStreamSynchronize(stream(device)), device, "synchronize"); });
}

const dtp_api kApi = {
    sizeof(dtp_api),
    DTP_ABI_VERSION,
    DT_VERSION_NUMBER,
    &probe,
    &device_properties,
    &memory_info,
    &allocate,
    &deallocate,
    &stats,
    &trim,
    &host_alloc,
    &host_free,
    &copy_fn,
    &fill_fn,
    &arange_fn,
    &random_fn,
    &binary_fn,
    &unary_fn,
    &where_fn,
    &reduce_fn,
    &softmax_fn,
    &matmul_fn,
    &index_select_fn,
    &gather_fn,
    &synchronize_fn,
};

}  // namespace
}  // namespace dt::cudap

extern "C" __attribute__((visibility("default"))) const dtp_api* devtensor_cuda_plugin_entry(uint32_t abi_version) {
  return abi_version == DTP_ABI_VERSION ? &dt::cudap::kApi : nullptr;
}

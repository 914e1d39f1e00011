#include "cuda/runtime.h"

#include <cudaTypedefs.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace dt::cudap {
namespace {
std::atomic<bool> g_lost[kMaxDevices];
std::atomic<cudaStream_t> g_streams[kMaxDevices];
std::mutex g_stream_mu;

bool launch_blocking() {
  static const bool on = [] {
    const char* v = std::getenv("DEVTENSOR_LAUNCH_BLOCKING");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

// Errors after which the CUDA context is unusable: every later call would fail.
bool sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

}  // namespace

void raise(int32_t code, std::string message) { throw Failure{code, std::move(message)}; }

void check(cudaError_t e, int device, const char* what) {
  if (e == cudaSuccess) return;
  std::string where = device >= 0 ? " on cuda:" + std::to_string(device) : std::string();
  std::string text = std::string(what) + where + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it so the next call starts clean
    raise(DT_ERR_OUT_OF_MEMORY, text);
  }
  if (sticky(e)) {
    if (device >= 0 && device < kMaxDevices) g_lost[device].store(true);
    raise(DT_ERR_DEVICE_LOST, text + " (the device is now unusable in this process)");
  }
  (void)cudaGetLastError();
  raise(DT_ERR_BACKEND, text);
}

namespace {
// DEVTENSOR_LAUNCH_BLOCKING=1: wait for the kernel just queued, so its own error names it.
void sync_if_blocking(int device, const char* kernel) {
  if (launch_blocking()) check(cudaStreamSynchronize(stream(device)), device, kernel);
}
}  // namespace

bool env_equals(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, value) == 0;
}

void check_launch(int device, const char* kernel) {
  check(cudaGetLastError(), device, kernel);
  sync_if_blocking(device, kernel);
}

void require_alive(int device) {
  if (device < 0 || device >= device_count())
    raise(DT_ERR_INVALID_DEVICE, "invalid device ordinal: cuda:" + std::to_string(device));
  if (g_lost[device].load())
    raise(DT_ERR_DEVICE_LOST, "cuda:" + std::to_string(device) +
                                  " was lost after an earlier unrecoverable CUDA error; restart the process");
}

namespace {
// The stream the core asked the current plugin call to use (StreamScope), for one device.
thread_local int t_scope_device = -1;
thread_local cudaStream_t t_scope_stream = nullptr;
}  // namespace

StreamScope::StreamScope(int device, void* s)
    : previous_device_(t_scope_device), previous_stream_(t_scope_stream) {
  t_scope_device = s ? device : -1;
  t_scope_stream = static_cast<cudaStream_t>(s);
}
StreamScope::~StreamScope() {
  t_scope_device = previous_device_;
  t_scope_stream = static_cast<cudaStream_t>(previous_stream_);
}

cudaStream_t stream(int device) {
  if (device == t_scope_device) return t_scope_stream;
  return default_stream(device);
}

cudaStream_t default_stream(int device) {
  cudaStream_t s = g_streams[device].load(std::memory_order_acquire);
  if (s) return s;
  std::lock_guard<std::mutex> lock(g_stream_mu);
  s = g_streams[device].load(std::memory_order_relaxed);
  if (s) return s;
  DeviceGuard guard(device);
  // Non-blocking: no implicit synchronisation with the legacy default stream.
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), device, "cudaStreamCreateWithFlags");
  g_streams[device].store(s, std::memory_order_release);
  return s;
}

namespace {

// A driver function from the runtime (the plugin links no libcuda), or null.
template <typename Fn>
Fn driver_function(const char* name, unsigned version) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(p);
}

// cuLaunchKernel, through the runtime so that a missing driver is reported by probe.cpp
// instead of failing the plugin's load; null when the runtime cannot give it.
PFN_cuLaunchKernel_v4000 driver_launch() {
  static const auto fn = driver_function<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000);
  return fn;
}

// Each device's primary context, learnt the first time the device is made current.
std::atomic<CUcontext> g_contexts[kMaxDevices];

}  // namespace

DeviceGuard::DeviceGuard(int device) {
  // Fast path: when the thread's current context is already the device's, there is
  // nothing to set or restore, and asking the driver for it (a thread-local read) costs
  // less than cudaGetDevice on every op.
  static const auto get_current = driver_function<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent", 4000);
  CUcontext known = g_contexts[device].load(std::memory_order_acquire);
  CUcontext current = nullptr;
  if (known && get_current && get_current(&current) == CUDA_SUCCESS && current == known) return;
  check(cudaGetDevice(&previous_), device, "cudaGetDevice");
  if (previous_ != device) {
    check(cudaSetDevice(device), device, "cudaSetDevice");
    changed_ = true;
  }
  if (!known && get_current && get_current(&current) == CUDA_SUCCESS && current)
    g_contexts[device].store(current, std::memory_order_release);
}

DeviceGuard::~DeviceGuard() {
  if (changed_) (void)cudaSetDevice(previous_);
}

}  // namespace dt::cudap

namespace dt::cudap {

int multiprocessors(int device) {
  static std::atomic<int> cached[kMaxDevices];
  int n = cached[device].load(std::memory_order_relaxed);
  if (n > 0) return n;
  check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), device, "cudaDeviceGetAttribute");
  cached[device].store(n, std::memory_order_relaxed);
  return n;
}

void launch_raw(const void* kernel, std::atomic<void*>* cache, int device, unsigned grid, unsigned block,
                void** args, const char* name) {
  PFN_cuLaunchKernel_v4000 launch = driver_launch();
  if (!launch) {
    check(cudaLaunchKernel(kernel, dim3(grid), dim3(block), args, 0, stream(device)), device, name);
    sync_if_blocking(device, name);
    return;
  }
  void* fn = cache[device].load(std::memory_order_acquire);
  if (!fn) {
    cudaFunction_t f = nullptr;
    check(cudaGetFuncBySymbol(&f, kernel), device, name);
    fn = f;
    cache[device].store(fn, std::memory_order_release);
  }
  CUresult r = launch(static_cast<CUfunction>(fn), grid, 1, 1, block, 1, 1, 0, stream(device), args, nullptr);
  // The driver's CUresult and the runtime's cudaError_t number the errors a launch can
  // return alike (out of memory 2, invalid value 1, illegal address 700, launch failure
  // 719, ...), so check() classifies and names them as for a runtime call.
  if (r != CUDA_SUCCESS) check(static_cast<cudaError_t>(r), device, name);
  sync_if_blocking(device, name);  // (the runtime's last error says nothing of a driver launch)
}

}  // namespace dt::cudap

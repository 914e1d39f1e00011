#include "cuda/runtime.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace dt::cudap {
namespace {

}  // namespace
constexpr int kMaxDevices = 64;
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

void check_launch(int device, const char* kernel) {
  check(cudaGetLastError(), device, kernel);
  if (launch_blocking()) check(cudaStreamSynchronize(stream(device)), device, kernel);
}

void require_alive(int device) {
  if (device < 0 || device >= device_count())
    raise(DT_ERR_INVALID_DEVICE, "invalid device ordinal: cuda:" + std::to_string(device));
  if (g_lost[device].load())
    raise(DT_ERR_DEVICE_LOST, "cuda:" + std::to_string(device) +
                                  " was lost after an earlier unrecoverable CUDA error; restart the process");
}

cudaStream_t stream(int device) {
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

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&previous_), device, "cudaGetDevice");
  if (previous_ != device) {
    check(cudaSetDevice(device), device, "cudaSetDevice");
    changed_ = true;
  }
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

}  // namespace dt::cudap

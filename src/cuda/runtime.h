// The CUDA plugin's runtime layer: the failure type every plugin function may throw
// (entry.cpp turns it into a dtp_error; nothing is thrown across the plugin boundary),
// CUDA error translation, the device guard, the per-device stream (and the stream of the
// current call) and the "lost" flag.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "devtensor.h"

namespace dt::cudap {

struct Failure {
  int32_t code;  // dt_status
  std::string message;
};

[[noreturn]] void raise(int32_t code, std::string message);

// Throws unless e == cudaSuccess: out of memory is DT_ERR_OUT_OF_MEMORY (the device stays
// usable); a sticky error (illegal address, launch failure, ...) marks the device lost
// and is DT_ERR_DEVICE_LOST; anything else is DT_ERR_BACKEND. The message names the CUDA
// call (`what`), the device and CUDA's own text.
void check(cudaError_t e, int device, const char* what);

// After a kernel launch: the launch error, and with DEVTENSOR_LAUNCH_BLOCKING=1 the
// error of the kernel itself (the stream is synchronised).
void check_launch(int device, const char* kernel);

// Refuses work on a device marked lost (DT_ERR_DEVICE_LOST).
void require_alive(int device);

// Whether environment variable `name` is set to exactly `value` (read at each call: the
// callers keep the answer in a static, read once).
bool env_equals(const char* name, const char* value);

int device_count();        // visible devices, after probe
// The stream work on the device goes to: the one the core passed for this call
// (StreamScope: the thread's current devtensor stream), else the device's default.
cudaStream_t stream(int device);
cudaStream_t default_stream(int device);  // devtensor's default stream for the device (created once)

// For the scope of one plugin call: stream(device) is s (null: the default stream).
class StreamScope {
 public:
  StreamScope(int device, void* s);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  int previous_device_;
  void* previous_stream_;
};

constexpr int kMaxDevices = 64;

// kernel<<<grid, block, 0, stream(device)>>>(*args...) through the driver's
// cuLaunchKernel, on the CUfunction looked up once per kernel and device (cache: one slot
// per device, owned by the caller; see launch.cuh). The runtime's launch costs about
// 0.3 us more host time per call (bench/gpu/NOTES.md, run 7); the runtime is used when the
// driver's entry point cannot be had. Checks the launch as check_launch does.
void launch_raw(const void* kernel, std::atomic<void*>* cache, int device, unsigned grid, unsigned block,
                void** args, const char* name);

// Makes `device` current for the scope and restores the caller's device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

}  // namespace dt::cudap

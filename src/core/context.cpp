#include "core/context.h"

#include <atomic>

#include "core/error.h"

namespace dt {

namespace {
std::atomic<int64_t> g_default_device{(int64_t{DT_DEVICE_CPU} << 32) | 0};
std::atomic<int32_t> g_default_dtype{DT_FLOAT32};
std::atomic<bool> g_allow_tf32{false};  // as torch.backends.cuda.matmul.allow_tf32
}  // namespace

Device default_device() {
  int64_t v = g_default_device.load(std::memory_order_relaxed);
  return Device{static_cast<int32_t>(v >> 32), static_cast<int32_t>(v & 0xffffffff)};
}
void set_default_device(Device d) {
  g_default_device.store((int64_t{d.type} << 32) | static_cast<uint32_t>(d.index), std::memory_order_relaxed);
}
DType default_dtype() { return static_cast<DType>(g_default_dtype.load(std::memory_order_relaxed)); }
void set_default_dtype(DType t) { g_default_dtype.store(static_cast<int32_t>(t), std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }
void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }

DType checked_dtype(dt_dtype code) {
  if (!dtype_valid(code)) fail(DT_ERR_INVALID_ARGUMENT, cat("unknown dtype code ", code));
  return static_cast<DType>(code);
}
DType resolve_dtype(dt_dtype code) { return code == DT_DTYPE_DEFAULT ? default_dtype() : checked_dtype(code); }

}  // namespace dt

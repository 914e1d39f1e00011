// Library-level entry points: versions, status names, the error message, build info,
// handle counting, threads.
#include <string>

#include "api/shim.h"
#include "core/plugin_backend.h"
#include "core/registry.h"
#include "cpu/parallel.h"

namespace dt::api {
const char* last_error() noexcept;
}

using namespace dt;
using namespace dt::api;

extern "C" {

DT_API uint32_t dt_version(void) { return DT_VERSION_NUMBER; }

DT_API const char* dt_version_string(void) {
#define DT_STR2(x) #x
#define DT_STR(x) DT_STR2(x)
  return DT_STR(DT_VERSION_MAJOR) "." DT_STR(DT_VERSION_MINOR) "." DT_STR(DT_VERSION_PATCH);
}

DT_API const char* dt_status_string(dt_status code) {
  switch (code) {
    case DT_OK: return "ok";
    case DT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case DT_ERR_INVALID_HANDLE: return "invalid handle";
    case DT_ERR_INVALID_DEVICE: return "invalid device";
    case DT_ERR_DEVICE_UNAVAILABLE: return "device unavailable";
    case DT_ERR_DEVICE_MISMATCH: return "device mismatch";
    case DT_ERR_SHAPE_MISMATCH: return "shape mismatch";
    case DT_ERR_DTYPE_MISMATCH: return "dtype mismatch";
    case DT_ERR_OUT_OF_MEMORY: return "out of memory";
    case DT_ERR_DEVICE_LOST: return "device lost";
    case DT_ERR_BACKEND: return "backend error";
    case DT_ERR_NOT_SUPPORTED: return "not supported";
    case DT_ERR_IO: return "I/O error";
    case DT_ERR_FORMAT: return "format error";
    case DT_ERR_INTERNAL: return "internal error";
    case DT_ERR_DISTRIBUTED: return "distributed error";
    default: return "unknown status";
  }
}

DT_API const char* dt_last_error_message(void) { return last_error(); }
DT_API dt_status dt_set_error_message(const char* message) {
  set_error(DT_OK, message ? message : "");
  return DT_OK;
}

DT_API dt_status dt_build_info(char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_build_info");
    std::string s;
    s += std::string("version: ") + dt_version_string() + "\n";
    // Every registered backend (the CUDA one even when not built: it says so).
    s += "backends:";
    bool first = true;
    for (Backend* b : all_backends()) {
      const bool plugin = b->device_type() != DT_DEVICE_CPU;
      if (b->device_type() == DT_DEVICE_CUDA && cuda_status().state == DT_CUDA_NOT_BUILT) continue;
      s += cat(first ? " " : ", ", b->name(), plugin ? " (plugin)" : "");
      first = false;
    }
    s += "\n";
    s += std::string("cuda option: ") + DT_CUDA_OPTION + "\n";
    s += "cuda: " + cuda_status().reason + "\n";
    for (Backend* b : all_backends()) {
      if (b->device_type() == DT_DEVICE_CPU || b->device_type() == DT_DEVICE_CUDA) continue;
      s += cat(b->name(), ": ", b->device_count(), " device", b->device_count() == 1 ? "" : "s", "\n");
    }
    // Each plugin's collective library (NCCL for CUDA): what it is, or why it cannot run.
    for (Backend* b : all_backends()) {
      auto* p = dynamic_cast<PluginBackend*>(b);
      if (!p || (b->device_type() == DT_DEVICE_CUDA && cuda_status().state == DT_CUDA_NOT_BUILT)) continue;
      const std::string lib = p->collectives_name();
      if (lib.empty()) continue;
      std::string what;
      const bool usable = p->collectives_usable(&what, nullptr);
      s += cat(lib, ": ", usable ? "usable, " : "not usable: ", what, "\n");
    }
    // Each usable plugin's convolution library (cuDNN for CUDA): what it is, or why not.
    for (Backend* b : all_backends()) {
      auto* p = dynamic_cast<PluginBackend*>(b);
      if (!p || p->state() != DT_CUDA_AVAILABLE) continue;
      const std::string lib = p->hook_library();
      if (!lib.empty()) s += cat(b->name(), " convolutions: ", lib, "\n");
    }
    for (const std::string& p : plugin_problems()) s += "plugin not loaded: " + p + "\n";
    s += std::string("blas: ") + DT_BLAS_NAME + "\n";
    s += std::string("cpu matrix products (float32): ") + DT_CPU_SGEMM_NAME + "\n";
    s += std::string("cpu convolutions (float32): ") + DT_CPU_CONV_NAME + "\n";
    s += "cpu threads: " + std::to_string(cpu::num_threads()) + "\n";
    s += std::string("compiler: ") + DT_COMPILER_NAME + "\n";
    write_string(s, buf, cap, needed);
  });
}

DT_API size_t dt_live_handle_count(void) { return handle_live_count(); }

DT_API dt_status dt_set_num_threads(int32_t n) {
  return guard([&] {
    if (n < 1 || n > 1024) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_set_num_threads: n must be in [1, 1024], got ", n));
    cpu::set_num_threads(n);
  });
}

DT_API dt_status dt_num_threads(int32_t* out) {
  return guard([&] { *require(out, "dt_num_threads", "out") = cpu::num_threads(); });
}

}  // extern "C"

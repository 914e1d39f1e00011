// Helpers shared by the Google Benchmark programs that use the C API
// (devtensor_bench.cpp, gpu/devtensor_gpu_bench.cpp).
#pragma once
#include <devtensor.h>

#include <string>

namespace bench {

// Owns one tensor reference.
struct Tensor {
  dt_tensor* t = nullptr;
  Tensor() = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { dt_tensor_release(t); }
};

// Owns one module reference.
struct Module {
  dt_module* m = nullptr;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() { dt_module_release(m); }
};

// "what: status (the library's message)".
inline std::string error_text(const char* what, dt_status s) {
  std::string m = std::string(what) + ": " + dt_status_string(s);
  const char* detail = dt_last_error_message();
  if (detail && *detail) m += std::string(" (") + detail + ")";
  return m;
}

}  // namespace bench

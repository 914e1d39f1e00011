#include "cpu/cpu_backend.h"

#include "core/cuda_loader.h"
#include "core/error.h"

namespace dt {

Backend& backend_for(Device d) {
  static cpu::CpuBackend* cpu_backend = new cpu::CpuBackend();
  if (d.is_cpu()) return *cpu_backend;
  cuda::require_available();
  fail(DT_ERR_DEVICE_UNAVAILABLE, cat("no backend for ", device_str(d)));
}

}  // namespace dt

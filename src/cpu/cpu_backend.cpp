#include "cpu/cpu_backend.h"

#include "core/cuda_proxy.h"
#include "core/error.h"

namespace dt {

Backend& backend_for(Device d) {
  static cpu::CpuBackend* cpu_backend = new cpu::CpuBackend();
  if (d.is_cpu()) return *cpu_backend;
  return cuda::backend();  // throws DEVICE_UNAVAILABLE with the reason
}

}  // namespace dt

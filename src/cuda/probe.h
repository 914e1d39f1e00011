// What the plugin finds at start: the driver, the devices, and each device's identity.
#pragma once
#include <cstdint>

#include "core/plugin_abi.h"

namespace dt::cudap {

void probe(dtp_probe* out);  // never throws
void device_properties(int device, dt_device_props* out);
// Free and total memory without creating a CUDA context (NVML when present).
void memory_info(int device, uint64_t* free_bytes, uint64_t* total_bytes);

}  // namespace dt::cudap

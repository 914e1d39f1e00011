// Devices as values: parsing, formatting and existence checks (through the registry of
// backends, core/registry.h, which knows each device type's name and devices), and the
// host's own facts (logical CPU devices, model name, memory) for the CPU backend.
#pragma once
#include <cstdint>
#include <string>

#include "devtensor.h"

namespace dt {

struct Device {
  int32_t type = DT_DEVICE_CPU;
  int32_t index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool is_cpu() const { return type == DT_DEVICE_CPU; }
  static Device from_c(dt_device d) { return Device{d.type, d.index}; }
  dt_device to_c() const { return dt_device{type, index}; }
};

Device parse_device(const char* text);    // throws INVALID_ARGUMENT
std::string device_str(Device d);         // "cpu:0", "cuda:1"; "<device type 7>:0" when unknown

// Number of devices of a type (throws INVALID_ARGUMENT for an unknown type).
size_t device_count(int32_t type);
size_t cpu_device_count();  // DEVTENSOR_CPU_DEVICES, read once; at least 1

// Throws INVALID_ARGUMENT / INVALID_DEVICE / DEVICE_UNAVAILABLE unless d exists.
void check_device(Device d);
// The process default device when d.type is DT_DEVICE_DEFAULT; checks the result.
Device resolve_device(dt_device d);

std::string cpu_model_name();
void host_memory(uint64_t* free_bytes, uint64_t* total_bytes);
int32_t host_core_count();

}  // namespace dt

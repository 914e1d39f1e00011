// The registry of backends, one per device type (core/backend.h). Who is in it:
//  - the CPU backend (src/cpu), registered as the library loads;
//  - the CUDA backend, a plugin (libdevtensor-cuda.so next to libdevtensor.so, or the
//    file DEVTENSOR_CUDA_PLUGIN names), known by name and type from the start and loaded
//    at its first use, so "cuda:0" always parses and an unusable CUDA says why;
//  - every plugin named in DEVTENSOR_PLUGINS (paths separated by ':'), loaded when the
//    registry is first used; one that fails to load is reported by dt_build_info.
// Lookups are by DLPack device type or by name; nothing outside the backends branches
// on a device type.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.h"

namespace dt {

// Registers b for its device type for the life of the process (b is never deleted).
// A second backend for a registered type is refused (INVALID_ARGUMENT).
void register_backend(Backend* b);

Backend* find_backend(int32_t device_type);       // null when no backend has the type
Backend* find_backend(const std::string& name);   // by name ("cuda"); null when none
std::vector<Backend*> all_backends();             // CPU first, then by device type

// Plugins named in DEVTENSOR_PLUGINS that could not be registered: "path: why" each.
std::vector<std::string> plugin_problems();

// The CUDA plugin's state (DT_CUDA_*) and a sentence saying why it is or is not usable.
struct CudaStatus {
  int32_t state;
  std::string reason;
};
CudaStatus cuda_status();

// Page-locked host memory from the first usable backend that offers it; otherwise
// DEVICE_UNAVAILABLE saying why (pinned memory comes from a GPU driver).
Allocator& pinned_host_allocator();

}  // namespace dt

// The CUDA backend as the core sees it: a Backend and Allocators whose every call goes
// through the plugin's dtp_api table (core/cuda_loader.h). No CUDA header or library is
// involved on this side; plugin errors come back as Error with the plugin's message.
#pragma once
#include <cstdint>

#include "core/allocator.h"
#include "core/backend.h"
#include "devtensor.h"

namespace dt::cuda {

Backend& backend();                   // throws DEVICE_UNAVAILABLE when CUDA is unusable
Allocator& device_allocator(int32_t ordinal);  // caller checked the ordinal
Allocator& pinned_allocator();        // page-locked host memory
bool is_pinned(const Tensor& t);

// dst = src where exactly one side is a CUDA tensor, or both are on different GPUs.
// Broadcasting and dtype conversion as Backend::copy.
void copy_between_devices(const Tensor& dst, const Tensor& src, bool non_blocking);

void device_properties(int32_t ordinal, dt_device_props* out);  // fills every field
void memory_info(int32_t ordinal, uint64_t* free_bytes, uint64_t* total_bytes);

}  // namespace dt::cuda

// Device entry points: parse/format, counts, names, memory, properties, selection
// helpers, defaults, seeds, allocator statistics.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api/shim.h"
#include "core/graph.h"
#include "core/allocator.h"
#include "core/context.h"
#include "core/registry.h"
#include "core/generator.h"
#include "core/backend.h"

using namespace dt;
using namespace dt::api;

namespace {

// Usable GPUs (the devices of every accelerator backend), or [cpu:0] when there is none.
std::vector<dt_device> gpus_or_cpu() {
  std::vector<dt_device> v;
  for (Backend* b : all_backends()) {
    if (!b->accelerator()) continue;
    const size_t n = b->device_count();
    for (size_t i = 0; i < n; ++i) v.push_back(dt_device{b->device_type(), static_cast<int32_t>(i)});
  }
  if (v.empty()) v.push_back(dt_device{DT_DEVICE_CPU, 0});
  return v;
}

void write_devices(const std::vector<dt_device>& v, dt_device* out, size_t cap, size_t* count) {
  size_t n = std::min(cap, v.size());
  for (size_t i = 0; i < n; ++i) out[i] = v[i];
  *count = v.size();
}

void memory_of(Device d, uint64_t* free_b, uint64_t* total_b) {
  check_device(d);
  backend_for(d).memory(d.index, free_b, total_b);
}

// Every field of d's properties, struct_size and device included.
dt_device_props properties_of(Device d, size_t struct_size) {
  check_device(d);
  dt_device_props p;
  std::memset(&p, 0, sizeof p);
  backend_for(d).properties(d.index, &p);
  p.struct_size = struct_size;
  p.device = d.to_c();
  p.name[sizeof p.name - 1] = '\0';
  return p;
}

}  // namespace

extern "C" {

DT_API dt_status dt_device_parse(const char* text, dt_device* out) {
  return guard([&] {
    require(out, "dt_device_parse", "out");
    Device d = parse_device(text);
    *out = d.to_c();
  });
}

DT_API dt_status dt_device_format(dt_device device, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_device_format");
    if (!find_backend(device.type))
      fail(DT_ERR_INVALID_ARGUMENT, cat("dt_device_format: unknown device type ", device.type));
    if (device.index < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_device_format: negative device index ", device.index));
    write_string(device_str(Device::from_c(device)), buf, cap, needed);
  });
}

DT_API dt_status dt_device_count(int32_t device_type, size_t* out) {
  return guard([&] {
    require(out, "dt_device_count", "out");
    *out = device_count(device_type);
  });
}

DT_API int32_t dt_cuda_is_available(void) {
  try {
    return cuda_status().state == DT_CUDA_AVAILABLE ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

DT_API dt_status dt_cuda_status(int32_t* state, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    require(state, "dt_cuda_status", "state");
    check_string_buffer(buf, cap, "dt_cuda_status");
    const CudaStatus s = cuda_status();
    write_string(s.reason, buf, cap, needed);
    *state = s.state;
  });
}

DT_API dt_status dt_device_name(dt_device device, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_device_name");
    const dt_device_props p = properties_of(Device::from_c(device), sizeof(dt_device_props));
    write_string(p.name, buf, cap, needed);
  });
}

DT_API dt_status dt_device_memory(dt_device device, uint64_t* free_bytes, uint64_t* total_bytes) {
  return guard([&] {
    require(free_bytes, "dt_device_memory", "free_bytes");
    require(total_bytes, "dt_device_memory", "total_bytes");
    uint64_t f = 0, t = 0;
    memory_of(Device::from_c(device), &f, &t);
    *free_bytes = f;
    *total_bytes = t;
  });
}

DT_API dt_status dt_device_properties(dt_device device, dt_device_props* props) {
  return guard([&] {
    require(props, "dt_device_properties", "props");
    if (props->struct_size < offsetof(dt_device_props, name))
      fail(DT_ERR_INVALID_ARGUMENT, cat("dt_device_properties: struct_size ", props->struct_size,
                                        " is too small; set it to sizeof(dt_device_props)"));
    const dt_device_props p = properties_of(Device::from_c(device), props->struct_size);
    // Copy only what the caller's struct holds.
    size_t n = std::min(props->struct_size, sizeof p);
    std::memcpy(props, &p, n);
  });
}

DT_API dt_status dt_try_gpu(int32_t i, dt_device* out) {
  return guard([&] {
    require(out, "dt_try_gpu", "out");
    if (i < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_try_gpu: negative GPU index ", i));
    const std::vector<dt_device> gpus = gpus_or_cpu();
    *out = gpus[0].type != DT_DEVICE_CPU && static_cast<size_t>(i) < gpus.size() ? gpus[static_cast<size_t>(i)]
                                                                                   : dt_device{DT_DEVICE_CPU, 0};
  });
}

DT_API dt_status dt_all_gpus(dt_device* out, size_t cap, size_t* count) {
  return guard([&] {
    require(count, "dt_all_gpus", "count");
    if (!out && cap > 0) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_all_gpus: out is NULL but cap is ", cap));
    write_devices(gpus_or_cpu(), out, cap, count);
  });
}

DT_API dt_status dt_devices_by_free_memory(dt_device* out, size_t cap, size_t* count) {
  return guard([&] {
    require(count, "dt_devices_by_free_memory", "count");
    if (!out && cap > 0) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_devices_by_free_memory: out is NULL but cap is ", cap));
    std::vector<dt_device> v = gpus_or_cpu();
    std::vector<std::pair<uint64_t, dt_device>> ranked;
    for (const dt_device& d : v) {
      uint64_t f = 0, t = 0;
      memory_of(Device::from_c(d), &f, &t);
      ranked.push_back({f, d});
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < ranked.size(); ++i) v[i] = ranked[i].second;
    write_devices(v, out, cap, count);
  });
}

DT_API dt_status dt_set_default_device(dt_device device) {
  return guard([&] {
    Device d = Device::from_c(device);
    check_device(d);
    set_default_device(d);
  });
}

DT_API dt_status dt_default_device(dt_device* out) {
  return guard([&] { *require(out, "dt_default_device", "out") = default_device().to_c(); });
}

DT_API dt_status dt_set_default_dtype(dt_dtype dtype) {
  return guard([&] {
    DType t = checked_dtype(dtype);
    if (!is_floating(t))
      fail(DT_ERR_DTYPE_MISMATCH, cat("dt_set_default_dtype: the default dtype must be floating, got ", dtype_name(t)));
    set_default_dtype(t);
  });
}

DT_API dt_status dt_default_dtype(dt_dtype* out) {
  return guard([&] { *require(out, "dt_default_dtype", "out") = static_cast<dt_dtype>(default_dtype()); });
}

DT_API dt_status dt_set_allow_tf32(int32_t allow) {
  return guard([&] {
    if (allow != 0 && allow != 1) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_set_allow_tf32: expected 0 or 1 but got ", allow));
    set_allow_tf32(allow == 1);
  });
}

DT_API dt_status dt_allow_tf32(int32_t* out) {
  return guard([&] { *require(out, "dt_allow_tf32", "out") = allow_tf32() ? 1 : 0; });
}

DT_API dt_status dt_synchronize(dt_device device) {
  return guard([&] {
    Device d = Device::from_c(device);
    check_device(d);
    refuse_while_capturing(d, "dt_synchronize", "a capture records work without running it, so there is nothing to wait for");
    backend_for(d).synchronize(d);
  });
}

DT_API dt_status dt_manual_seed(uint64_t seed) {
  return guard([&] { manual_seed_all(seed); });
}

DT_API dt_status dt_device_manual_seed(dt_device device, uint64_t seed) {
  return guard([&] {
    Device d = Device::from_c(device);
    check_device(d);
    manual_seed(d, seed);
  });
}

DT_API dt_status dt_memory_stats(dt_device device, dt_mem_stats* stats) {
  return guard([&] {
    require(stats, "dt_memory_stats", "stats");
    if (stats->struct_size < offsetof(dt_mem_stats, allocated_bytes) + sizeof(uint64_t))
      fail(DT_ERR_INVALID_ARGUMENT, cat("dt_memory_stats: struct_size ", stats->struct_size,
                                        " is too small; set it to sizeof(dt_mem_stats)"));
    Device d = Device::from_c(device);
    check_device(d);
    AllocatorStats s = allocator_for(d).stats();
    dt_mem_stats m;
    std::memset(&m, 0, sizeof m);
    m.struct_size = stats->struct_size;
    m.allocated_bytes = s.allocated_bytes;
    m.reserved_bytes = s.reserved_bytes;
    m.peak_allocated_bytes = s.peak_allocated_bytes;
    m.allocation_count = s.allocation_count;
    m.system_allocation_count = s.system_allocation_count;
    std::memcpy(stats, &m, std::min(stats->struct_size, sizeof m));
  });
}

DT_API dt_status dt_empty_cache(dt_device device) {
  return guard([&] {
    Device d = Device::from_c(device);
    check_device(d);
    allocator_for(d).empty_cache();
  });
}

}  // extern "C"

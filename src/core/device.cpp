#include "core/device.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/context.h"
#include "core/cuda_loader.h"
#include "core/error.h"

namespace dt {

namespace {
bool parse_ordinal(const char* s, int32_t* out) {
  if (*s == '\0') return false;
  int64_t v = 0;
  for (const char* p = s; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
    if (v > INT32_MAX) return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}
}  // namespace

Device parse_device(const char* text) {
  if (!text) fail(DT_ERR_INVALID_ARGUMENT, "device string is NULL");
  const char* colon = std::strchr(text, ':');
  std::string type(text, colon ? static_cast<size_t>(colon - text) : std::strlen(text));
  Device d;
  if (type == "cpu") {
    d.type = DT_DEVICE_CPU;
  } else if (type == "cuda") {
    d.type = DT_DEVICE_CUDA;
  } else {
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("invalid device string '", text, "': expected cpu, cpu:N, cuda or cuda:N"));
  }
  d.index = 0;
  if (colon && !parse_ordinal(colon + 1, &d.index)) {
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("invalid device string '", text, "': the ordinal after ':' must be a non-negative integer"));
  }
  return d;
}

std::string device_str(Device d) {
  switch (d.type) {
    case DT_DEVICE_CPU: return cat("cpu:", d.index);
    case DT_DEVICE_CUDA: return cat("cuda:", d.index);
    default: return cat("<device type ", d.type, ">:", d.index);
  }
}

size_t cpu_device_count() {
  static const size_t count = [] {
    const char* env = std::getenv("DEVTENSOR_CPU_DEVICES");
    if (!env || !*env) return size_t{1};
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end != '\0' || v < 1 || v > 1024) return size_t{1};
    return static_cast<size_t>(v);
  }();
  return count;
}

size_t device_count(int32_t type) {
  switch (type) {
    case DT_DEVICE_CPU: return cpu_device_count();
    case DT_DEVICE_CUDA: return cuda::device_count();
    default: fail(DT_ERR_INVALID_ARGUMENT, cat("unknown device type ", type, " (expected 1 for CPU or 2 for CUDA)"));
  }
}

void check_device(Device d) {
  if (d.type != DT_DEVICE_CPU && d.type != DT_DEVICE_CUDA)
    fail(DT_ERR_INVALID_ARGUMENT, cat("unknown device type ", d.type, " (expected 1 for CPU or 2 for CUDA)"));
  if (d.index < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("negative device ordinal ", d.index));
  if (d.type == DT_DEVICE_CUDA) {
    cuda::require_available(device_str(d).c_str());  // DEVICE_UNAVAILABLE naming d, with the reason
    size_t n = cuda::device_count();
    if (static_cast<size_t>(d.index) >= n)
      fail(DT_ERR_INVALID_DEVICE, cat("invalid device ordinal: ", device_str(d), " requested, ", n,
                                      " CUDA device", n == 1 ? "" : "s", " visible"));
    return;
  }
  size_t n = cpu_device_count();
  if (static_cast<size_t>(d.index) >= n)
    fail(DT_ERR_INVALID_DEVICE, cat("invalid device ordinal: ", device_str(d), " requested, ", n,
                                    " CPU device", n == 1 ? "" : "s",
                                    " (set DEVTENSOR_CPU_DEVICES for more logical CPU devices)"));
}

Device resolve_device(dt_device d) {
  Device r = d.type == DT_DEVICE_DEFAULT ? default_device() : Device::from_c(d);
  check_device(r);
  return r;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) {
        std::string v = line.substr(pos + 1);
        size_t start = v.find_first_not_of(" \t");
        return start == std::string::npos ? std::string("CPU") : v.substr(start);
      }
    }
  }
  return "CPU";
}

void host_memory(uint64_t* free_bytes, uint64_t* total_bytes) {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t value = 0, total = 0, avail = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemTotal:") total = value * 1024;
    if (key == "MemAvailable:") avail = value * 1024;
  }
  if (total == 0) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    total = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  }
  *free_bytes = avail;
  *total_bytes = total;
}

int32_t host_core_count() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int32_t>(n);
}

}  // namespace dt

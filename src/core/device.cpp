#include "core/device.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/context.h"
#include "core/registry.h"
#include "core/error.h"

namespace dt {

namespace {
bool parse_ordinal(const char* s, int32_t* out) {
  if (*s == '\0') return false;
  if (s[0] == '0' && s[1] != '\0') return false;  // "cuda:01", as torch.device refuses it
  int64_t v = 0;
  for (const char* p = s; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
    if (v > INT32_MAX) return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}
// "expected 1 for cpu, 2 for cuda, ...": the registered types, for messages.
std::string known_types() {
  std::string s = "expected ";
  bool first = true;
  for (const Backend* b : all_backends()) {
    s += cat(first ? "" : ", ", b->device_type(), " for ", b->name());
    first = false;
  }
  return s;
}
}  // namespace

Device parse_device(const char* text) {
  if (!text) fail(DT_ERR_INVALID_ARGUMENT, "device string is NULL");
  const char* colon = std::strchr(text, ':');
  std::string type(text, colon ? static_cast<size_t>(colon - text) : std::strlen(text));
  const Backend* b = type.empty() ? nullptr : find_backend(type);
  if (!b) {
    std::string names;
    for (const Backend* known : all_backends()) names += cat(names.empty() ? "" : ", ", known->name(), ", ", known->name(), ":N");
    fail(DT_ERR_INVALID_ARGUMENT, cat("invalid device string '", text, "': expected ", names));
  }
  Device d;
  d.type = b->device_type();
  d.index = 0;
  if (colon && !parse_ordinal(colon + 1, &d.index)) {
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("invalid device string '", text, "': the ordinal after ':' must be a non-negative integer without leading zeros"));
  }
  return d;
}

std::string device_str(Device d) {
  if (d.type == DT_DEVICE_CPU) return cat("cpu:", d.index);  // the hot case, without a lookup
  const Backend* b = find_backend(d.type);
  return b ? cat(b->name(), ":", d.index) : cat("<device type ", d.type, ">:", d.index);
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
  Backend* b = find_backend(type);
  if (!b) fail(DT_ERR_INVALID_ARGUMENT, cat("unknown device type ", type, " (", known_types(), ")"));
  return b->device_count();
}

void check_device(Device d) {
  Backend* b = find_backend(d.type);
  if (!b) fail(DT_ERR_INVALID_ARGUMENT, cat("unknown device type ", d.type, " (", known_types(), ")"));
  if (d.index < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("negative device ordinal ", d.index));
  b->check_device(d);
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

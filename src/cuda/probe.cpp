// Driver and device discovery. NVML (libnvidia-ml.so.1, part of the driver) is loaded
// with dlopen when present: it sees devices that CUDA_VISIBLE_DEVICES hides, gives the
// nvidia-smi index of a device, and reports memory without creating a CUDA context
// (a context alone costs hundreds of MiB of device memory).
#include "cuda/probe.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

int g_device_count = 0;

struct NvmlMemory {
  unsigned long long total, free, used;
};
using NvmlDevice = void*;

// The few NVML entry points used, bound once; all null when NVML is absent.
struct Nvml {
  int (*init)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*by_pci)(const char*, NvmlDevice*) = nullptr;
  int (*index)(NvmlDevice, unsigned*) = nullptr;
  int (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  bool ok = false;
};

const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml r;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return r;
    r.init = reinterpret_cast<int (*)()>(dlsym(h, "nvmlInit_v2"));
    r.count = reinterpret_cast<int (*)(unsigned*)>(dlsym(h, "nvmlDeviceGetCount_v2"));
    r.by_pci = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    r.index = reinterpret_cast<int (*)(NvmlDevice, unsigned*)>(dlsym(h, "nvmlDeviceGetIndex"));
    r.memory = reinterpret_cast<int (*)(NvmlDevice, NvmlMemory*)>(dlsym(h, "nvmlDeviceGetMemoryInfo"));
    r.ok = r.init && r.count && r.by_pci && r.index && r.memory && r.init() == 0;
    return r;
  }();
  return n;
}

NvmlDevice nvml_device(int device) {
  const Nvml& n = nvml();
  if (!n.ok) return nullptr;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return nullptr;
  NvmlDevice d = nullptr;
  return n.by_pci(bus, &d) == 0 ? d : nullptr;
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

void set(dtp_probe* out, int32_t state, const std::string& reason) {
  out->state = state;
  std::snprintf(out->reason, sizeof out->reason, "%s", reason.c_str());
}

}  // namespace

int device_count() { return g_device_count; }

void probe(dtp_probe* out) {
  out->device_count = 0;
  out->runtime_version = CUDART_VERSION;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    const char* why = dlerror();
    set(out, DT_CUDA_NO_DRIVER, std::string("no NVIDIA driver is installed: libcuda.so.1 could not be loaded (") +
                                    (why ? why : "unknown error") + ")");
    return;
  }
  int drv = 0;
  if (cudaDriverGetVersion(&drv) != cudaSuccess || drv == 0) {
    set(out, DT_CUDA_NO_DRIVER, "the NVIDIA driver failed to load (cudaDriverGetVersion failed)");
    return;
  }
  out->driver_version = drv;
  if (drv < CUDART_VERSION) {
    set(out, DT_CUDA_DRIVER_TOO_OLD, "the NVIDIA driver supports CUDA " + version_text(drv) +
                                         " but devtensor's CUDA plugin needs CUDA " + version_text(CUDART_VERSION) +
                                         "; update the driver");
    return;
  }
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorInsufficientDriver) {
    set(out, DT_CUDA_DRIVER_TOO_OLD, std::string("the NVIDIA driver is too old for CUDA ") +
                                         version_text(CUDART_VERSION) + ": " + cudaGetErrorString(e));
    return;
  }
  if (e != cudaSuccess && e != cudaErrorNoDevice) {
    set(out, DT_CUDA_NO_DEVICE, std::string("CUDA could not be initialised: ") + cudaGetErrorName(e) + ": " +
                                    cudaGetErrorString(e));
    (void)cudaGetLastError();
    return;
  }
  if (n <= 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    unsigned physical = 0;
    if (visible && nvml().ok) nvml().count(&physical);
    if (visible && (physical > 0 || !nvml().ok))
      set(out, DT_CUDA_ALL_HIDDEN, std::string("CUDA_VISIBLE_DEVICES=\"") + visible + "\" hides every device" +
                                       (physical > 0 ? " (" + std::to_string(physical) + " present)" : ""));
    else
      set(out, DT_CUDA_NO_DEVICE, "the NVIDIA driver " + version_text(drv) + " is loaded but sees no CUDA device");
    return;
  }
  g_device_count = n;
  out->device_count = n;
  cudaDeviceProp p;
  std::string names;
  for (int i = 0; i < n && i < 4; ++i) {
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess) names += std::string(i ? ", " : "") + p.name;
  }
  set(out, DT_CUDA_AVAILABLE, std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") + " (" + names + (n > 4 ? ", ..." : "") +
                                  "), driver " + version_text(drv) + ", runtime " + version_text(CUDART_VERSION));
}

void device_properties(int device, dt_device_props* out) {
  require_alive(device);
  cudaDeviceProp p;
  check(cudaGetDeviceProperties(&p, device), device, "cudaGetDeviceProperties");
  std::snprintf(out->name, sizeof out->name, "%s", p.name);
  out->compute_capability_major = p.major;
  out->compute_capability_minor = p.minor;
  out->multiprocessor_count = p.multiProcessorCount;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::snprintf(out->uuid, sizeof out->uuid,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  check(cudaDeviceGetPCIBusId(out->pci_bus_id, sizeof out->pci_bus_id, device), device, "cudaDeviceGetPCIBusId");
  out->physical_index = -1;  // unknown without NVML
  if (NvmlDevice d = nvml_device(device)) {
    unsigned idx = 0;
    if (nvml().index(d, &idx) == 0) out->physical_index = static_cast<int32_t>(idx);
  }
  memory_info(device, &out->free_memory, &out->total_memory);
}

void memory_info(int device, uint64_t* free_bytes, uint64_t* total_bytes) {
  require_alive(device);
  if (NvmlDevice d = nvml_device(device)) {
    NvmlMemory m;
    if (nvml().memory(d, &m) == 0) {
      *free_bytes = m.free;
      *total_bytes = m.total;
      return;
    }
  }
  DeviceGuard guard(device);
  size_t f = 0, t = 0;
  check(cudaMemGetInfo(&f, &t), device, "cudaMemGetInfo");
  *free_bytes = f;
  *total_bytes = t;
}

}  // namespace dt::cudap

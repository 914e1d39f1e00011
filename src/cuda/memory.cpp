#include "cuda/memory.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

struct DeviceMemory {
  std::once_flag once;
  cudaMemPool_t pool = nullptr;
  std::atomic<uint64_t> allocated{0}, peak{0}, count{0}, system{0}, reserved_seen{0};
};

DeviceMemory g_memory[64];

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

uint64_t reserved(cudaMemPool_t pool) {
  uint64_t r = 0;
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &r) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return r;
}

// The device's pool, created on first use: device memory, kept by the pool once freed
// (release threshold UINT64_MAX) until empty_cache trims it.
DeviceMemory& memory(int device) {
  DeviceMemory& m = g_memory[device];
  std::call_once(m.once, [&] {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    check(cudaMemPoolCreate(&m.pool, &props), device, "cudaMemPoolCreate");
    uint64_t threshold = UINT64_MAX;
    check(cudaMemPoolSetAttribute(m.pool, cudaMemPoolAttrReleaseThreshold, &threshold), device,
          "cudaMemPoolSetAttribute");
  });
  if (!m.pool) raise(DT_ERR_BACKEND, "cuda:" + std::to_string(device) + ": the memory pool could not be created");
  return m;
}

}  // namespace

void* device_allocate(int device, size_t nbytes) {
  require_alive(device);
  if (nbytes == 0) return nullptr;
  DeviceGuard guard(device);
  DeviceMemory& m = memory(device);
  void* p = nullptr;
  cudaError_t e = cudaMallocFromPoolAsync(&p, nbytes, m.pool, stream(device));
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    // Blocks freed on the stream but not yet reusable: wait for them, then retry once.
    check(cudaStreamSynchronize(stream(device)), device, "cudaStreamSynchronize");
    e = cudaMallocFromPoolAsync(&p, nbytes, m.pool, stream(device));
  }
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    (void)cudaGetLastError();
    raise(DT_ERR_OUT_OF_MEMORY, "CUDA out of memory on cuda:" + std::to_string(device) + ": tried to allocate " +
                                    mib(nbytes) + "; " + mib(free_b) + " free of " + mib(total_b) + ", " +
                                    mib(m.allocated.load()) + " allocated by devtensor, " + mib(reserved(m.pool)) +
                                    " reserved (dt_empty_cache returns unused reserved memory)");
  }
  check(e, device, "cudaMallocFromPoolAsync");
  uint64_t now = m.allocated.fetch_add(nbytes) + nbytes;
  uint64_t peak = m.peak.load();
  while (now > peak && !m.peak.compare_exchange_weak(peak, now)) {
  }
  m.count.fetch_add(1);
  // The pool grew: this allocation went to the driver.
  uint64_t r = reserved(m.pool), seen = m.reserved_seen.load();
  if (r > seen) {
    m.system.fetch_add(1);
    m.reserved_seen.store(r);
  }
  return p;
}

void device_deallocate(int device, void* p, size_t nbytes) noexcept {
  if (!p) return;
  DeviceMemory& m = g_memory[device];
  m.allocated.fetch_sub(nbytes);
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  if (previous != device) (void)cudaSetDevice(device);
  // Stream-ordered: the block is reused only after the work queued before it finishes.
  // (The stream exists: the block was allocated on it.)
  try {
    if (cudaFreeAsync(p, stream(device)) != cudaSuccess) (void)cudaGetLastError();
  } catch (const Failure&) {
  }
  if (previous >= 0 && previous != device) (void)cudaSetDevice(previous);
}

void memory_stats(int device, dtp_mem_stats* out) {
  require_alive(device);
  DeviceMemory& m = memory(device);
  out->allocated_bytes = m.allocated.load();
  out->reserved_bytes = reserved(m.pool);
  out->peak_allocated_bytes = m.peak.load();
  out->allocation_count = m.count.load();
  out->system_allocation_count = m.system.load();
}

void empty_cache(int device) {
  require_alive(device);
  DeviceGuard guard(device);
  DeviceMemory& m = memory(device);
  check(cudaStreamSynchronize(stream(device)), device, "cudaStreamSynchronize");
  check(cudaMemPoolTrimTo(m.pool, 0), device, "cudaMemPoolTrimTo");
  m.reserved_seen.store(reserved(m.pool));
}

void* host_allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  void* p = nullptr;
  cudaError_t e = cudaHostAlloc(&p, nbytes, cudaHostAllocPortable);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    raise(DT_ERR_OUT_OF_MEMORY, "out of pinned host memory: cudaHostAlloc could not allocate " + mib(nbytes));
  }
  check(e, -1, "cudaHostAlloc");
  return p;
}

void host_deallocate(void* p) noexcept {
  // cudaFreeHost waits for the device work that may still read or write the block.
  if (p && cudaFreeHost(p) != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace dt::cudap

#include "cuda/memory.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

struct DeviceMemory {
  std::once_flag once;
  cudaMemPool_t pool = nullptr;
  std::atomic<uint64_t> allocated{0}, peak{0}, count{0}, system{0}, reserved_seen{0};
};

DeviceMemory g_memory[64];

// Small blocks (up to 1 MiB) that devtensor frees stay on a per-device free list by size
// class (512-byte steps) and are handed out again with no CUDA call: a tiny op's allocate
// and free then cost a lock and a vector pop/push instead of two driver calls, which is
// most of a tiny op's host time. Reuse needs no event because only blocks allocated and
// freed on the device's default stream are kept, and work on one stream runs in order,
// the same assumption the pool's own stream-ordered reuse makes. At most 64 MiB per device is kept; empty_cache and the
// out-of-memory retry give the blocks back to the pool.
constexpr size_t kSmallStep = 512;
constexpr size_t kSmallMax = size_t(1) << 20;
constexpr uint64_t kSmallCacheCap = uint64_t(64) << 20;

struct SmallBlocks {
  std::mutex mu;
  std::vector<void*> free[kSmallMax / kSmallStep];  // free[c]: blocks of (c + 1) * 512 bytes
  uint64_t bytes = 0;                               // held in the lists
};

SmallBlocks g_small[64];

size_t small_class(size_t nbytes) { return (nbytes + kSmallStep - 1) / kSmallStep - 1; }

void* take_small(int device, size_t cls) {
  SmallBlocks& c = g_small[device];
  std::lock_guard<std::mutex> lock(c.mu);
  std::vector<void*>& list = c.free[cls];
  if (list.empty()) return nullptr;
  void* p = list.back();
  list.pop_back();
  c.bytes -= (cls + 1) * kSmallStep;
  return p;
}

bool keep_small(int device, void* p, size_t cls) noexcept {
  SmallBlocks& c = g_small[device];
  std::lock_guard<std::mutex> lock(c.mu);
  const uint64_t size = (cls + 1) * kSmallStep;
  if (c.bytes + size > kSmallCacheCap) return false;
  try {
    c.free[cls].push_back(p);
  } catch (const std::bad_alloc&) {
    return false;
  }
  c.bytes += size;
  return true;
}

// Gives every cached small block back to the pool (stream-ordered). The device is current.
void release_small(int device) {
  std::vector<void*> blocks;
  {
    SmallBlocks& c = g_small[device];
    std::lock_guard<std::mutex> lock(c.mu);
    for (std::vector<void*>& list : c.free) {
      blocks.insert(blocks.end(), list.begin(), list.end());
      list.clear();
      list.shrink_to_fit();
    }
    c.bytes = 0;
  }
  for (void* p : blocks) check(cudaFreeAsync(p, default_stream(device)), device, "cudaFreeAsync");
}

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

void count_allocation(DeviceMemory& m, size_t nbytes) {
  uint64_t now = m.allocated.fetch_add(nbytes) + nbytes;
  uint64_t peak = m.peak.load();
  while (now > peak && !m.peak.compare_exchange_weak(peak, now)) {
  }
  m.count.fetch_add(1);
}

}  // namespace

void* device_allocate(int device, size_t nbytes) {
  require_alive(device);
  if (nbytes == 0) return nullptr;
  DeviceMemory& m = memory(device);
  const bool small = nbytes <= kSmallMax;
  // Only the default stream uses the small-block lists: their reuse is safe because the
  // block's last use and its next one are on the same (default) stream. Blocks on other
  // streams go through the pool, whose stream-ordered reuse the driver keeps safe.
  const bool cached = small && stream(device) == default_stream(device);
  if (cached) {
    if (void* p = take_small(device, small_class(nbytes))) {
      count_allocation(m, nbytes);
      return p;
    }
  }
  const size_t request = small ? (small_class(nbytes) + 1) * kSmallStep : nbytes;
  DeviceGuard guard(device);
  void* p = nullptr;
  cudaError_t e = cudaMallocFromPoolAsync(&p, request, m.pool, stream(device));
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    // Cached small blocks, and blocks freed on the stream but not yet reusable: give
    // them back, wait for them, then retry once.
    release_small(device);
    check(cudaDeviceSynchronize(), device, "cudaDeviceSynchronize");
    e = cudaMallocFromPoolAsync(&p, request, m.pool, stream(device));
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
  count_allocation(m, nbytes);
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
  if (nbytes <= kSmallMax && stream(device) == default_stream(device) && keep_small(device, p, small_class(nbytes)))
    return;
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
  release_small(device);
  check(cudaDeviceSynchronize(), device, "cudaDeviceSynchronize");
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

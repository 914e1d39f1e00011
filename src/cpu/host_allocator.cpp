// Host memory for CPU tensors. Small blocks come straight from malloc (its thread caches
// are fast and already-faulted). Larger blocks are cached by size after release and
// reused, so a loop that makes a fresh 64 MB output every iteration does not fault in
// 16k new pages each time (glibc would mmap/munmap such blocks on every call). The cache
// starts at 16 KiB: a training step's activations of 16-256 KiB went through glibc's
// heap, which trimmed and regrew it (brk) every step and faulted the pages back in (perf:
// page faults in the ReLU gradient and sgemm's output, 3-4% of a Linear-stack step).
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

#include "core/allocator.h"
#include "cpu/cpu_backend.h"
#include "core/device.h"
#include "core/error.h"
#include "core/fault_injection.h"

namespace dt {
namespace {

constexpr size_t kLargeBlock = size_t{16} << 10;  // below this, plain malloc
constexpr size_t kAlignment = 64;
constexpr size_t kPageBlock = size_t{256} << 10;  // from here, page-aligned

// Rounds large requests up so near sizes share blocks: 1/8 steps within a power of two.
size_t round_large(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  size_t step = p >> 3;
  return (n + step - 1) / step * step;
}

class HostAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) nbytes = 1;
    // No machine has this much, and round_large's power of two would overflow above it.
    if (nbytes > (size_t{1} << 56))
      fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory: cannot allocate ", nbytes, " bytes on cpu"));
    void* p = nullptr;
    if (nbytes < kLargeBlock) {
      if (fault::allocation_fails() || posix_memalign(&p, kAlignment, nbytes) != 0) p = nullptr;
      if (!p) oom(nbytes);
      count(nbytes, nbytes, true);
      return p;
    }
    size_t size = round_large(nbytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(size);
      if (it != cache_.end()) {
        p = it->second;
        cache_.erase(it);
        cached_bytes_ -= size;
      }
    }
    bool fresh = p == nullptr;
    if (fresh) {
      const size_t align = size >= kPageBlock ? 4096 : kAlignment;
      if (fault::allocation_fails() || posix_memalign(&p, align, size) != 0) p = nullptr;
      if (!p) {
        empty_cache();  // give cached blocks back and retry once
        if (posix_memalign(&p, align, size) != 0) p = nullptr;
      }
      if (!p) oom(nbytes);
#ifdef MADV_HUGEPAGE
      if (size >= (size_t{2} << 20)) madvise(p, size, MADV_HUGEPAGE);
#endif
    }
    count(size, size, fresh);
    return p;
  }

  void deallocate(void* p, size_t nbytes) override {
    if (nbytes == 0) nbytes = 1;
    if (nbytes < kLargeBlock) {
      std::free(p);
      allocated_.fetch_sub(nbytes, std::memory_order_relaxed);
      reserved_.fetch_sub(nbytes, std::memory_order_relaxed);
      return;
    }
    size_t size = round_large(nbytes);
    allocated_.fetch_sub(size, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_bytes_ + size > kMaxCached) {
      std::free(p);
      reserved_.fetch_sub(size, std::memory_order_relaxed);
      return;
    }
    cache_.emplace(size, p);
    cached_bytes_ += size;
  }

  AllocatorStats stats() override {
    AllocatorStats s;
    s.allocated_bytes = allocated_.load();
    s.reserved_bytes = reserved_.load();
    s.peak_allocated_bytes = peak_.load();
    s.allocation_count = allocations_.load();
    s.system_allocation_count = system_allocations_.load();
    return s;
  }

  void empty_cache() override {
    std::multimap<size_t, void*> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      drop.swap(cache_);
      cached_bytes_ = 0;
    }
    for (auto& [size, p] : drop) {
      std::free(p);
      reserved_.fetch_sub(size, std::memory_order_relaxed);
    }
  }

 private:
  [[noreturn]] static void oom(size_t nbytes) {
    fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory: could not allocate ", nbytes, " bytes on cpu"));
  }
  void count(size_t used, size_t reserved, bool fresh) {
    uint64_t now = allocated_.fetch_add(used, std::memory_order_relaxed) + used;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    allocations_.fetch_add(1, std::memory_order_relaxed);
    if (fresh) {
      reserved_.fetch_add(reserved, std::memory_order_relaxed);
      system_allocations_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  static constexpr size_t kMaxCached = size_t{2} << 30;  // cache at most 2 GiB of free blocks
  std::mutex mu_;
  std::multimap<size_t, void*> cache_;
  size_t cached_bytes_ = 0;
  std::atomic<uint64_t> allocated_{0}, reserved_{0}, peak_{0}, allocations_{0}, system_allocations_{0};
};

}  // namespace

}  // namespace dt

namespace dt::cpu {

Allocator& host_allocator() {
  static HostAllocator* a = new HostAllocator();  // outlives static destructors
  return *a;
}

}  // namespace dt::cpu

// The allocator interface each backend implements, with the statistics dt_memory_stats
// reports. Allocation failure throws Error(DT_ERR_OUT_OF_MEMORY).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/device.h"

namespace dt {

struct AllocatorStats {
  uint64_t allocated_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t peak_allocated_bytes = 0;
  uint64_t allocation_count = 0;
  uint64_t system_allocation_count = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* p, size_t nbytes) = 0;
  // The same, ordered on a stream of the backend (core/stream.h; null: the default):
  // memory freed on a stream is reused by later work on it without waiting. Allocators
  // without streams ignore it.
  virtual void* allocate_on(size_t nbytes, void* stream) { return allocate(nbytes); }
  virtual void deallocate_on(void* p, size_t nbytes, void* stream) { deallocate(p, nbytes); }
  virtual AllocatorStats stats() = 0;
  virtual void empty_cache() = 0;
  // Page-locked host memory (pinned tensors: fast, asynchronous copies to a GPU).
  virtual bool page_locked() const { return false; }
};

// The allocator serving a device (CPU devices share the host allocator).
Allocator& allocator_for(Device d);

}  // namespace dt

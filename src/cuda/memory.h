// Device memory from a per-device stream-ordered pool (cudaMallocFromPoolAsync on
// devtensor's stream, release threshold "never"), so a steady-state loop makes no
// driver allocation, fronted by a free list of small blocks that makes a tiny op's
// allocate and free cost no CUDA call (memory.cpp says why that is safe); and
// page-locked host memory.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/plugin_abi.h"

namespace dt::cudap {

void* device_allocate(int device, size_t nbytes);  // throws OUT_OF_MEMORY with the figures
void device_deallocate(int device, void* p, size_t nbytes) noexcept;
void memory_stats(int device, dtp_mem_stats* out);
void empty_cache(int device);

void* host_allocate(size_t nbytes);
void host_deallocate(void* p) noexcept;

// Scratch device memory for one call, freed (stream-ordered) when it goes out of scope.
class Scratch {
 public:
  Scratch(int device, size_t nbytes) : device_(device), nbytes_(nbytes), p_(device_allocate(device, nbytes)) {}
  ~Scratch() { device_deallocate(device_, p_, nbytes_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }

 private:
  int device_;
  size_t nbytes_;
  void* p_;
};

}  // namespace dt::cudap

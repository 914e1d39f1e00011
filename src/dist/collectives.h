// What a collective engine (Gloo for host memory, NCCL for CUDA memory) does for a
// process group, on raw contiguous buffers. ProcessGroup checks the tensors, orders the
// calls, and turns an engine's failure into a broken group; an engine only moves bytes.
#pragma once
#include <cstddef>
#include <string>

#include "core/dtype.h"

namespace dt::dist {

// Values of DT_REDUCE_* in the public header.
enum class Reduction : int32_t { Sum = 0, Avg = 1, Min = 2, Max = 3, Product = 4 };
const char* reduction_name(Reduction r);

class Collectives {
 public:
  virtual ~Collectives() = default;
  virtual const char* name() const = 0;  // "gloo", "nccl"
  // Avg never reaches all_reduce: the group sums, then divides (divide_by_world_ in
  // process_group.cpp)...
  virtual void all_reduce(void* data, size_t count, DType dtype, Reduction op) = 0;
  // ...unless the engine averages in its own last pass with the same bits (a sum, then
  // a multiplication by the exact reciprocal of a power-of-two world): true when it did,
  // false (having done nothing) when the group must sum and divide.
  virtual bool all_reduce_avg(void* /*data*/, size_t /*count*/, DType) { return false; }
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // count elements of out = this rank's part of the reduction of every rank's in (size()
  // x count elements); false when the engine has no such collective (the group then
  // all-reduces a copy).
  virtual bool reduce_scatter(const void* /*in*/, void* /*out*/, size_t /*count*/, DType, Reduction) { return false; }
  // out holds size() * bytes; rank r's in lands at out + r * bytes.
  virtual void all_gather(const void* in, void* out, size_t bytes) = 0;
  virtual void barrier() = 0;
  virtual void send(const void* data, size_t bytes, int dst, uint32_t tag) = 0;
  virtual void recv(void* data, size_t bytes, int src, uint32_t tag) = 0;
  // Closes every connection at once after a failure, so that peers blocked on this rank
  // fail now instead of at their timeout.
  virtual void abort() noexcept = 0;
};

}  // namespace dt::dist

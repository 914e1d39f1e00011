// The interface every backend implements (the CPU one in src/cpu, CUDA in the plugin).
// The front end (src/ops) has already checked devices, shapes and dtypes; a backend
// only loops. Conventions for every kernel:
//  - `out` is freshly allocated or a checked in-place target, on this backend's device;
//  - inputs have shapes that broadcast to out's shape (a missing or size-1 dimension is
//    read with stride 0) and may have any strides;
//  - binary/unary inputs already have the compute dtype (the front end converted them);
//    comparison outputs are bool.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "core/op_kinds.h"

namespace dt {

class Backend {
 public:
  virtual ~Backend() = default;
  // dst[i] = cast(src[i]) for any dtype pair, src broadcast to dst's shape.
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;
  virtual void fill(const Tensor& dst, double value) = 0;
  virtual void arange(const Tensor& dst, double start, double step) = 0;
  virtual void random(const Tensor& dst, RandomDist dist, uint64_t seed, uint64_t offset) = 0;
  virtual void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) = 0;
  virtual void unary(UnaryOp op, const Tensor& out, const Tensor& a) = 0;
  virtual void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) = 0;
  // Reduces `in` over the dims flagged in `reduce_mask` (bit d = dim d of in) into out,
  // whose shape is in's with those dims set to 1 (keepdim form). Mean divides by the
  // reduced count; ArgMax/ArgMin write int64 and get exactly one flagged dim.
  virtual void reduce(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t reduce_mask) = 0;
  virtual void softmax(const Tensor& out, const Tensor& in, int dim, bool log) = 0;
  // out[b] = a[b] @ b[b] for 3-d tensors [B, M, K] x [B, K, N] -> [B, M, N] (any strides).
  virtual void matmul(const Tensor& out, const Tensor& a, const Tensor& b) = 0;
  // out = in.index_select(dim, index) / in.gather(dim, index); index is int64, checked.
  virtual void index_select(const Tensor& out, const Tensor& in, int dim, const Tensor& index) = 0;
  virtual void gather(const Tensor& out, const Tensor& in, int dim, const Tensor& index) = 0;
  virtual void synchronize(Device d) = 0;
};

Backend& backend_for(Device d);  // throws DEVICE_UNAVAILABLE

}  // namespace dt

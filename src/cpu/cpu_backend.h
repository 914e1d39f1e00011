// The CPU backend. Its methods are implemented across src/cpu/kernels_*.cpp, one file
// per family, so each stays small and compiles in parallel.
#pragma once
#include "core/backend.h"

namespace dt::cpu {

class CpuBackend final : public Backend {
 public:
  void copy(const Tensor& dst, const Tensor& src) override;
  void fill(const Tensor& dst, double value) override;
  void arange(const Tensor& dst, double start, double step) override;
  void random(const Tensor& dst, RandomDist dist, uint64_t seed, uint64_t offset) override;
  void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) override;
  void unary(UnaryOp op, const Tensor& out, const Tensor& a) override;
  void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) override;
  void reduce(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t reduce_mask) override;
  void softmax(const Tensor& out, const Tensor& in, int dim, bool log) override;
  void matmul(const Tensor& out, const Tensor& a, const Tensor& b) override;
  void index_select(const Tensor& out, const Tensor& in, int dim, const Tensor& index) override;
  void gather(const Tensor& out, const Tensor& in, int dim, const Tensor& index) override;
  void synchronize(Device) override {}
};

}  // namespace dt::cpu

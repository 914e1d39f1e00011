#include "ops/nonzero.h"

#include "core/error.h"
#include "ops/ops.h"

namespace dt::ops {

Tensor true_positions(const Tensor& mask) {
  const Device dev = mask.device();
  const int64_t n = mask.numel();
  if (n == 0) return empty(Dims{0}, DType::Int64, dev);
  // rank[i] = how many true elements up to i; the last is the count (read back once).
  const Tensor rank = cumsum(mask, 0);
  const Tensor last = to(narrow(rank, 0, n - 1, 1), Device{DT_DEVICE_CPU, 0}, DType::Int64, true);
  const int64_t count = *last.data_as<int64_t>();
  if (count == 0) return empty(Dims{0}, DType::Int64, dev);
  // True element i goes to slot rank[i] - 1; every false one to a spare slot `count`,
  // carrying 0 (so that slot never overflows). Each other slot gets exactly one add.
  const Tensor slot = where(mask, binary_scalar(BinaryOp::Sub, rank, 1.0), full(Dims{}, static_cast<double>(count),
                                                                                 DType::Int64, dev));
  const Tensor value = where(mask, arange(0, static_cast<double>(n), 1, DT_INT64, dev), full(Dims{}, 0.0, DType::Int64, dev));
  const Tensor out = full(Dims{count + 1}, 0.0, DType::Int64, dev);
  scatter_add_(out, 0, slot, value);
  return narrow(out, 0, 0, count);
}

std::pair<int64_t, int64_t> host_min_max(const Tensor& a) {
  const Tensor range = stack({reduce(ReduceOp::Min, a, nullptr, 0, false), reduce(ReduceOp::Max, a, nullptr, 0, false)}, 0);
  const Tensor host = to(range, Device{DT_DEVICE_CPU, 0}, DType::Int64, true);
  return {host.data_as<int64_t>()[0], host.data_as<int64_t>()[1]};
}

Tensor nonzero(const Tensor& a) {
  const Tensor truth = a.dtype() == DType::Bool ? a : binary_scalar(BinaryOp::Ne, a, 0.0);
  const Tensor flat = true_positions(reshape(truth, Dims{truth.numel()}, false));
  const int64_t count = flat.numel();
  if (a.ndim() == 0 || count == 0) return empty(Dims{count, a.ndim()}, DType::Int64, a.device());
  // Row-major coordinates: (flat / stride_d) mod size_d.
  std::vector<Tensor> coords;
  int64_t stride = 1;
  for (int d = a.ndim() - 1; d >= 0; --d) {
    Tensor c = stride == 1 ? flat : binary_scalar(BinaryOp::FloorDivide, flat, static_cast<double>(stride));
    if (d > 0) c = binary_scalar(BinaryOp::Remainder, c, static_cast<double>(a.size(d)));
    coords.insert(coords.begin(), c);
    stride *= a.size(d);
  }
  return stack(coords, 1);
}

}  // namespace dt::ops

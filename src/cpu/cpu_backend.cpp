#include "cpu/cpu_backend.h"

#include <cstring>

#include "core/error.h"
#include "core/registry.h"

namespace dt::cpu {

size_t CpuBackend::device_count() { return cpu_device_count(); }

void CpuBackend::check_device(Device d) {
  const size_t n = cpu_device_count();
  if (static_cast<size_t>(d.index) >= n)
    fail(DT_ERR_INVALID_DEVICE, cat("invalid device ordinal: ", device_str(d), " requested, ", n, " CPU device",
                                    n == 1 ? "" : "s", " (set DEVTENSOR_CPU_DEVICES for more logical CPU devices)"));
}

void CpuBackend::properties(int32_t index, dt_device_props* out) {
  const std::string model = cpu_model_name();
  std::strncpy(out->name, model.c_str(), sizeof out->name - 1);
  out->name[sizeof out->name - 1] = '\0';
  memory(index, &out->free_memory, &out->total_memory);
  out->multiprocessor_count = host_core_count();
  out->physical_index = index;
}

void CpuBackend::memory(int32_t, uint64_t* free_bytes, uint64_t* total_bytes) { host_memory(free_bytes, total_bytes); }

// Logical CPU devices share host memory: any pair copies directly.
void CpuBackend::copy(const Tensor& dst, const Tensor& src, bool) { copy(dst, src); }

bool CpuBackend::supports(int32_t op) {
  switch (op) {
#define DT_X(Name, code, ...) case code:
    DT_KERNEL_OPS(DT_X)
    DT_UNARY_OPS(DT_X)
    DT_BINARY_OPS(DT_X)
    DT_REDUCE_OPS(DT_X)
#undef DT_X
    return true;
  }
  return false;
}

void CpuBackend::run(int32_t op, const OpArgs& a) {
  const Tensor& out = *a.t[0];
  switch (static_cast<KernelOp>(op)) {
    case KernelOp::Fill: return fill(out, a.f[0]);
    case KernelOp::Arange: return arange(out, a.f[0], a.f[1]);
    case KernelOp::Random:
      return random(out, static_cast<RandomDist>(a.i[0]), static_cast<uint64_t>(a.i[1]), static_cast<uint64_t>(a.i[2]));
    case KernelOp::Where: return where(out, *a.t[1], *a.t[2], *a.t[3]);
    case KernelOp::Softmax: return softmax(out, *a.t[1], static_cast<int>(a.i[0]), a.i[1] != 0);
    case KernelOp::Cumsum: return cumsum(out, *a.t[1], static_cast<int>(a.i[0]), a.i[1] != 0);
    case KernelOp::Sort: return sort(out, *a.t[1], *a.t[2], a.i[0] != 0);
    case KernelOp::Matmul: return matmul(out, *a.t[1], *a.t[2]);
    case KernelOp::Addmm: return addmm(out, *a.t[1], *a.t[2], *a.t[3]);
    case KernelOp::CrossEntropy:
      return cross_entropy(out, *a.t[1], *a.t[2], *a.t[3], *a.t[4], a.i[0], static_cast<int>(a.i[1]));
    case KernelOp::CrossEntropyBackward:
      return cross_entropy_backward(out, *a.t[1], *a.t[2], *a.t[3], *a.t[4], *a.t[5], a.i[0], static_cast<int>(a.i[1]));
    case KernelOp::IndexSelect: return index_select(out, *a.t[1], static_cast<int>(a.i[0]), *a.t[2]);
    case KernelOp::Gather: return gather(out, *a.t[1], static_cast<int>(a.i[0]), *a.t[2]);
    case KernelOp::ScatterAdd: return scatter_add(out, static_cast<int>(a.i[0]), *a.t[1], *a.t[2]);
    case KernelOp::IndexAdd: return index_add(out, static_cast<int>(a.i[0]), *a.t[1], *a.t[2]);
    case KernelOp::SgdStep:
      return sgd_step(out, *a.t[1], a.nt > 2 ? a.t[2] : nullptr, a.f[0], a.f[1], a.i[0] != 0, a.i[1] != 0);
    case KernelOp::ReluBackward: return relu_backward(out, *a.t[1], *a.t[2]);
    case KernelOp::SgdStepMulti: return sgd_step_multi(out, *a.t[1], a.f[0], a.f[1], a.i[0] != 0);
    case KernelOp::AdaptiveStep:
      return adaptive_step(out, *a.t[1], *a.t[2], a.t + 3, a.nt - 3, static_cast<int>(a.i[0]), static_cast<int>(a.i[1]));
    case KernelOp::BatchNormEval: {
      const Tensor* weight = a.i[0] ? a.t[4] : nullptr;
      const Tensor* bias = a.i[1] ? a.t[a.i[0] ? 5 : 4] : nullptr;
      return batch_norm_eval(out, *a.t[1], *a.t[2], *a.t[3], weight, bias, a.f[0]);
    }
  }
  switch (op) {
#define DT_X(Name, code, ...) case code: return unary(UnaryOp::Name, out, *a.t[1]);
    DT_UNARY_OPS(DT_X)
#undef DT_X
#define DT_X(Name, code, ...) case code: return binary(BinaryOp::Name, out, *a.t[1], *a.t[2]);
    DT_BINARY_OPS(DT_X)
#undef DT_X
#define DT_X(Name, code, ...) case code: return reduce(ReduceOp::Name, out, *a.t[1], static_cast<uint32_t>(a.i[0]));
    DT_REDUCE_OPS(DT_X)
#undef DT_X
  }
  fail(DT_ERR_NOT_SUPPORTED, cat(op_code_name(op), ": not supported by the cpu backend"));
}

namespace {
// Registered as the library loads (core/registry.h), before any call can look it up.
const bool kRegistered = [] {
  register_backend(new CpuBackend());
  return true;
}();
}  // namespace

}  // namespace dt::cpu

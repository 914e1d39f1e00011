// Front ends of the binary, scalar, in-place, comparison, unary and where ops.
#include "core/backend.h"
#include "core/context.h"
#include "core/error.h"
#include "core/graph.h"
#include "ops/ops.h"

namespace dt::ops {

void check_integer_fits(const char* op, const char* what, DType dtype, double value) {
  double lo, hi;  // hi exclusive: 2^63 is the first double past int64
  switch (dtype) {
    case DType::Int8: lo = -128, hi = 128; break;
    case DType::UInt8: lo = 0, hi = 256; break;
    case DType::Int16: lo = -32768, hi = 32768; break;
    case DType::Int32: lo = -2147483648.0, hi = 2147483648.0; break;
    case DType::Int64: lo = -9223372036854775808.0, hi = 9223372036854775808.0; break;
    default: return;
  }
  if (!(value >= lo && value < hi))
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": ", what, " ", value, " cannot be converted to ", dtype_name(dtype),
                                      " without overflow"));
}

namespace {

// The dtype the op computes in, after PyTorch's checks for its operand dtypes (the
// table's rule for the op, core/op_table.h).
DType compute_dtype(BinaryOp op, DType common, bool any_bool) {
  switch (binary_rule(op)) {
    case BinaryRule::NoBool:
      if (any_bool)
        fail(DT_ERR_DTYPE_MISMATCH, cat(op_name(op), ": the operation with a bool tensor is not supported; use logical "
                                                     "operations instead"));
      break;
    case BinaryRule::Power:
    case BinaryRule::IntDiv:
      if (common == DType::Bool) fail(DT_ERR_DTYPE_MISMATCH, cat(op_name(op), ": not implemented for bool"));
      break;
    case BinaryRule::ToFloat:
      if (!is_floating(common)) return default_dtype();
      break;
    case BinaryRule::Arith:
    case BinaryRule::Compare:
      break;
  }
  return common;
}

// t converted to dtype (same shape and device) in `holder`, or t itself (no copy of the
// handle, no reference-count traffic on the hot path).
const Tensor& as_dtype(const Tensor& t, DType dtype, Tensor& holder) {
  if (t.dtype() == dtype) return t;
  holder = to(t, t.device(), dtype, false);
  return holder;
}

// fmod, remainder and floor_divide of integers by 0 have no answer: refused, as PyTorch
// raises ZeroDivisionError. A tensor divisor is looked at on the host (a sync on a GPU,
// as PyTorch's CPU check; these are not hot ops). While a graph captures there are no
// values to look at: the kernels give 0 there instead of trapping (ops/functors.h).
void check_integer_divisor(BinaryOp op, DType compute, const Tensor& divisor) {
  if (binary_rule(op) != BinaryRule::IntDiv || is_floating(compute) || divisor.numel() == 0) return;
  if (capturing(divisor.device())) return;
  const Tensor zeros = reduce(ReduceOp::Sum, binary_scalar(BinaryOp::Eq, divisor, 0.0), nullptr, 0, false);
  int64_t count = 0;
  copy_to_host(to(zeros, Device{DT_DEVICE_CPU, 0}, DType::Int64, false), &count, sizeof count);
  if (count > 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op_name(op), ": integer division by zero (", count, " of the divisor's ",
                                      divisor.numel(), " elements ", count == 1 ? "is" : "are", " 0)"));
}

void check_pow_scalar(BinaryOp op, DType compute, double exponent) {
  if (binary_rule(op) == BinaryRule::Power && !is_floating(compute) && compute != DType::Bool && exponent < 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op_name(op), ": integers to negative integer powers are not allowed"));
}

// maximum / minimum with a scalar are PyTorch's clamp_min / clamp_max, which refuse a
// bound that the integer result dtype cannot hold, where a wrapped bound (int8 and 300
// gives 44) would clamp to a wrong value without a word.
void check_bound_scalar(BinaryOp op, DType compute, double bound) {
  if (op == BinaryOp::Maximum || op == BinaryOp::Minimum) check_integer_fits(op_name(op), "the bound", compute, bound);
}

Tensor binary_impl(BinaryOp op, const Tensor& a, const Tensor& b, bool b_wrapped) {
  const char* name = op_name(op);
  check_same_device(name, a, b);
  DType common = result_type({{&a, false}, {&b, b_wrapped}});
  DType compute = compute_dtype(op, common, a.dtype() == DType::Bool || b.dtype() == DType::Bool);
  const Dims& shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(name, a.shape(), b.shape());
  Tensor out = Tensor::empty(shape, is_comparison(op) ? DType::Bool : compute, a.device());
  if (out.numel() == 0) return out;
  if (!b_wrapped) check_integer_divisor(op, compute, b);  // a wrapped scalar is checked as it is made
  Tensor ha, hb;
  run_op(op, OpArgs{&out, &as_dtype(a, compute, ha), &as_dtype(b, compute, hb)});
  return out;
}

void inplace_impl(BinaryOp op, const Tensor& self, const Tensor& other, bool other_wrapped) {
  const char* name = op_name(op);
  check_same_device(name, self, other);
  DType common = result_type({{&self, false}, {&other, other_wrapped}});
  DType compute = compute_dtype(op, common, self.dtype() == DType::Bool || other.dtype() == DType::Bool);
  if (!can_cast(compute, self.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(name, "_: result type ", dtype_name(compute), " can't be cast to the desired output type ",
                                    dtype_name(self.dtype())));
  Dims shape = broadcast_shapes(name, self.shape(), other.shape());
  if (shape != self.shape())
    fail(DT_ERR_SHAPE_MISMATCH, cat(name, "_: output with shape ", dims_str(self.shape()),
                                    " doesn't match the broadcast shape ", dims_str(shape)));
  if (self.numel() == 0) return;
  if (!other_wrapped) check_integer_divisor(op, compute, other);
  const Tensor source = read_apart(self, other);
  begin_write(name, "_", self);
  Tensor hs, ho;
  if (compute == self.dtype()) {
    run_op(op, OpArgs{&self, &self, &as_dtype(source, compute, ho)});
  } else {
    Tensor tmp = Tensor::empty(shape, compute, self.device());
    run_op(op, OpArgs{&tmp, &as_dtype(self, compute, hs), &as_dtype(source, compute, ho)});
    copy_(self, tmp);
  }
}

// The wrapped number b as an operand of op with tensor a: a 0-d tensor on a's device. On
// a device that is not the host it is made at once in the dtype the op computes in when
// that is floating, so the op does not queue a cast of it first: one fill instead of a
// fill, an allocation and a cast per scalar op (bench/gpu/NOTES.md: every batch norm's
// `var + eps`). The value is the same: both convert the double to that dtype once.
Tensor wrapped_scalar(BinaryOp op, const Tensor& a, double b) {
  const Device host = a.device().is_cpu() ? a.device() : Device{DT_DEVICE_CPU, 0};
  Tensor s = scalar_tensor(b, host);
  const DType common = result_type({{&a, false}, {&s, true}});
  check_pow_scalar(op, common, b);
  check_bound_scalar(op, common, b);
  if (binary_rule(op) == BinaryRule::IntDiv && !is_floating(common) && b == 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op_name(op), ": integer division by zero (the divisor is 0)"));
  if (a.device().is_cpu()) return s;
  const DType compute = compute_dtype(op, common, a.dtype() == DType::Bool);
  if (!is_floating(compute)) return scalar_tensor(b, a.device());
  Tensor on_device = Tensor::empty(Dims{}, compute, a.device());
  fill_(on_device, b);
  return on_device;
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) { return binary_impl(op, a, b, false); }

Tensor binary_scalar(BinaryOp op, const Tensor& a, double b) {
  const Tensor s = wrapped_scalar(op, a, b);
  return binary_impl(op, a, s, true);
}

void binary_(BinaryOp op, const Tensor& self, const Tensor& other) { inplace_impl(op, self, other, false); }

void binary_scalar_(BinaryOp op, const Tensor& self, double other) {
  const Tensor s = wrapped_scalar(op, self, other);
  inplace_impl(op, self, s, true);
}

Tensor unary(UnaryOp op, const Tensor& a) {
  const char* name = op_name(op);
  DType in = a.dtype();
  DType compute = in;
  switch (unary_rule(op)) {  // the table's rule for the op (core/op_table.h)
    case UnaryRule::KeepsAll:
      break;
    case UnaryRule::KeepsInt:
      if (in == DType::Bool) {
        if (op == UnaryOp::Neg)
          fail(DT_ERR_DTYPE_MISMATCH, "neg: negation of a bool tensor is not supported; use logical_not instead");
        fail(DT_ERR_DTYPE_MISMATCH, cat(name, ": bool inputs are not supported"));
      }
      break;
    case UnaryRule::IntCopy:
      if (in == DType::Bool) fail(DT_ERR_DTYPE_MISMATCH, cat(name, ": bool inputs are not supported"));
      // Integers are already whole: a copy, as torch.floor(int) returns (no kernel runs).
      if (!is_floating(in)) return to(a, a.device(), in, true);
      break;
    case UnaryRule::FloatOnly:
      if (!is_floating(in))
        fail(DT_ERR_DTYPE_MISMATCH, cat(name, ": expected a floating tensor but got ", dtype_name(in)));
      break;
    case UnaryRule::ToFloat:
      if (!is_floating(in)) compute = default_dtype();  // exp(int) is float, as in PyTorch
      break;
  }
  Tensor out = Tensor::empty(a.shape(), compute, a.device());
  Tensor ha;
  if (out.numel() > 0) run_op(op, OpArgs{&out, &as_dtype(a, compute, ha)});
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_device("where", cond, a);
  check_same_device("where", a, b);
  if (cond.dtype() != DType::Bool)
    fail(DT_ERR_DTYPE_MISMATCH, cat("where: expected a bool condition but got ", dtype_name(cond.dtype())));
  DType common = result_type({{&a, false}, {&b, false}});
  Dims shape = broadcast_shapes("where", broadcast_shapes("where", cond.shape(), a.shape()), b.shape());
  Tensor out = Tensor::empty(shape, common, a.device());
  Tensor ha, hb;
  if (out.numel() > 0) run_op(KernelOp::Where, OpArgs{&out, &cond, &as_dtype(a, common, ha), &as_dtype(b, common, hb)});
  return out;
}

}  // namespace dt::ops

#include <cstdint>

#include "core/context.h"
#include "core/error.h"
#include "ops/ops.h"

namespace dt::ops {

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (a.device() != b.device())
    fail(DT_ERR_DEVICE_MISMATCH, cat(op, ": expected device ", device_str(a.device()), " but got device ",
                                     device_str(b.device()), " (all operands must be on one device)"));
}

Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b) {
  Dims out;
  out.n = std::max(a.n, b.n);
  for (int i = 0; i < out.n; ++i) {
    int ia = a.n - out.n + i, ib = b.n - out.n + i;
    int64_t sa = ia >= 0 ? a.v[ia] : 1, sb = ib >= 0 ? b.v[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": shapes ", dims_str(a), " and ", dims_str(b),
                                      " cannot be broadcast together (size ", sa, " vs ", sb, " at dimension ", i, ")"));
    out.v[i] = sa == 1 ? sb : sa;
  }
  return out;
}

void begin_write(const char* op, const char* suffix, const Tensor& written) {
  for (int d = 0; d < written.ndim(); ++d)
    if (written.stride(d) == 0 && written.size(d) > 1)
      fail(DT_ERR_INVALID_ARGUMENT,
           cat(op, suffix, ": more than one element of the written-to tensor refers to a single memory location (dimension ", d,
               " of shape ", dims_str(written.shape()), " has stride 0, as an expanded tensor's); write into a "
               "contiguous copy instead"));
  written.storage()->begin_write(op, suffix);
}

namespace {
// The bytes [first, last) that t's elements reach (strides are never negative).
struct ByteRange {
  uintptr_t first, last;
};
ByteRange byte_range(const Tensor& t) {
  int64_t extent = 1;
  for (int d = 0; d < t.ndim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
  const auto first = reinterpret_cast<uintptr_t>(t.data());
  return {first, first + static_cast<uintptr_t>(extent) * t.itemsize()};
}

bool overlaps_partially(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || a.device() != b.device()) return false;
  // Addresses, not storages: two borrowed storages (dt_tensor_from_blob) can share memory.
  const ByteRange ra = byte_range(a), rb = byte_range(b);
  if (ra.last <= rb.first || rb.last <= ra.first) return false;
  const bool same_view = ra.first == rb.first && a.dtype() == b.dtype() && a.shape() == b.shape() && a.strides() == b.strides();
  return !same_view;
}
}  // namespace

Tensor read_apart(const Tensor& written, const Tensor& read) {
  return overlaps_partially(written, read) ? to(read, read.device(), read.dtype(), true) : read;
}

namespace {
enum Category { kNone = -1, kBool = 0, kInt = 1, kFloat = 2 };
Category category(DType t) { return t == DType::Bool ? kBool : (is_floating(t) ? kFloat : kInt); }

struct Slot {
  bool set = false;
  DType t = DType::Bool;
  void add(DType d) {
    t = set ? promote_types(t, d) : d;
    set = true;
  }
};

// PyTorch's combine_categories: the higher-priority result wins unless the lower one is
// of a higher category.
Slot combine(Slot higher, Slot lower) {
  if (!higher.set) return lower;
  if (!lower.set) return higher;
  if (category(higher.t) == kFloat) return higher;
  if (higher.t == DType::Bool || category(lower.t) == kFloat) {
    Slot s = higher;
    s.add(lower.t);
    return s;
  }
  return higher;
}
}  // namespace

DType result_type(std::initializer_list<Operand> ops) {
  // Fast path: every operand an unwrapped tensor of one dtype.
  bool same = true;
  const DType first = ops.begin()->t->dtype();
  for (const Operand& o : ops) same = same && !o.wrapped && o.t->dtype() == first;
  if (same) return first;
  Slot dim, zero, wrapped;
  for (const Operand& o : ops) {
    DType d = o.t->dtype();
    if (o.wrapped) {
      if (is_floating(d)) d = default_dtype();
      wrapped.add(d);
    } else if (o.t->ndim() == 0) {
      zero.add(d);
    } else {
      dim.add(d);
    }
  }
  return combine(dim, combine(zero, wrapped)).t;
}

}  // namespace dt::ops

// torch.nn.functional.pad, differentiable. Constant padding writes the (cropped) input
// into a tensor filled with the value, and its gradient (ConstantPadNdBackward0) is the
// output gradient narrowed back; negative pads crop first through narrow, whose own
// gradient pads again. The other modes map every output position of a padded dim to an
// input position (mirrored, clamped or wrapped) and gather it with index_select, so
// their gradient is index_select's: each input element gets the sum over its copies.
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::Constant:
      return "constant";
    case PadMode::Reflect:
      return "reflect";
    case PadMode::Replicate:
      return "replicate";
    case PadMode::Circular:
      return "circular";
  }
  return "?";
}

// The input position output position j (counted from the first padded element, before
// = the pad before the dim) reads in a dim of n elements.
int64_t source_of(int64_t j, int64_t before, int64_t n, PadMode mode) {
  const int64_t i = j - before;
  switch (mode) {
    case PadMode::Reflect:
      return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
    case PadMode::Replicate:
      return i < 0 ? 0 : i >= n ? n - 1 : i;
    case PadMode::Circular:
      return ((i % n) + n) % n;
    case PadMode::Constant:
      break;
  }
  return i;
}

// The largest padded dim: its index list (8 bytes an element) must be allocatable.
constexpr int64_t kMaxPaddedSize = std::numeric_limits<int64_t>::max() / 8;

// Refuses pads the mode cannot make, naming the dim and the sizes as PyTorch's do.
void check_dim(const Tensor& t, int64_t d, int64_t before, int64_t after, PadMode mode) {
  const int64_t n = t.size(d);
  const std::string where =
      cat("pad: dim ", d, " of ", dims_str(t.shape()), " (size ", n, ") padded by (", before, ", ", after, ")");
  int64_t size = 0;
  if (__builtin_add_overflow(n, before, &size) || __builtin_add_overflow(size, after, &size) ||
      size > kMaxPaddedSize)
    fail(DT_ERR_INVALID_ARGUMENT, cat(where, " would be too large"));
  if (size < 0) fail(DT_ERR_INVALID_ARGUMENT, cat(where, " would have a negative size"));
  // As PyTorch, which cannot narrow that far. (Each crop is at most n + the other pad here.)
  if ((before < 0 ? -static_cast<double>(before) : 0.0) + (after < 0 ? -static_cast<double>(after) : 0.0) >
      static_cast<double>(n))
    fail(DT_ERR_INVALID_ARGUMENT, cat(where, " would remove more elements than the dim has"));
  switch (mode) {
    case PadMode::Constant:
      return;
    case PadMode::Reflect:
      if (before >= n || after >= n)
        fail(DT_ERR_INVALID_ARGUMENT, cat(where, ": reflect padding must be less than the dim's size"));
      return;
    case PadMode::Replicate:
      if (n == 0) fail(DT_ERR_INVALID_ARGUMENT, cat(where, ": replicate padding needs a non-empty dim"));
      return;
    case PadMode::Circular:
      if (before > n || after > n)
        fail(DT_ERR_INVALID_ARGUMENT, cat(where, ": circular padding must be at most the dim's size"));
      return;
  }
}

Tensor constant_pad(const Tensor& t, const std::vector<int64_t>& pad, double value) {
  ops::check_integer_fits("pad", "the value", t.dtype(), value);
  // Crop first (negative pads), differentiably.
  Tensor kept = t;
  Dims shape = t.shape();
  std::vector<int64_t> offset(t.ndim(), 0);
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    const int64_t d = t.ndim() - 1 - static_cast<int64_t>(p), before = pad[2 * p], after = pad[2 * p + 1];
    const int64_t n = t.size(d), cut_before = before < 0 ? -before : 0, cut_after = after < 0 ? -after : 0;
    const int64_t left = n - cut_before - cut_after;  // check_dim: not negative
    if (left != n) kept = narrow(kept, d, cut_before, left);
    shape[d] = n + before + after;
    offset[d] = before > 0 ? before : 0;
  }
  Tensor out = ops::full(shape, value, t.dtype(), t.device());
  Tensor inside = out;
  for (int64_t d = 0; d < t.ndim(); ++d) inside = ops::narrow(inside, d, offset[d], kept.size(d));
  ops::copy_(inside, detach(kept));
  if (!should_record({&kept})) return out;
  const Dims kept_shape = kept.shape();
  record(out,
         make_node("ConstantPadNdBackward0",
                   [offset, kept_shape](const Tensor& g) {
                     Tensor grad = g;
                     for (int64_t d = 0; d < static_cast<int64_t>(offset.size()); ++d)
                       grad = ops::narrow(grad, d, offset[d], kept_shape[d]);
                     return std::vector<Tensor>{ops::contiguous(grad)};
                   }),
         {&kept});
  return out;
}

}  // namespace

Tensor pad(const Tensor& t, const std::vector<int64_t>& pad, PadMode mode, double value) {
  if (pad.size() % 2 != 0)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("pad: the padding must come in (before, after) pairs, got ", pad.size(), " values"));
  if (static_cast<int64_t>(pad.size() / 2) > t.ndim())
    fail(DT_ERR_INVALID_ARGUMENT, cat("pad: ", pad.size(), " values pad ", pad.size() / 2, " dims, but the tensor ",
                                      dims_str(t.shape()), " has ", t.ndim()));
  if (mode != PadMode::Constant && value != 0.0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("pad: mode \"", mode_name(mode), "\" takes no value (got ", value,
                                      "); only \"constant\" padding fills with one"));
  for (size_t p = 0; p < pad.size() / 2; ++p)
    check_dim(t, t.ndim() - 1 - static_cast<int64_t>(p), pad[2 * p], pad[2 * p + 1], mode);
  if (mode == PadMode::Constant) return constant_pad(t, pad, value);
  Tensor out = t;
  bool padded = false;
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    const int64_t d = t.ndim() - 1 - static_cast<int64_t>(p), before = pad[2 * p], after = pad[2 * p + 1];
    if (before == 0 && after == 0) continue;
    padded = true;
    const int64_t n = t.size(d), m = n + before + after;
    std::vector<int64_t> source(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) source[j] = source_of(j, before, n, mode);
    const Tensor index =
        ops::from_host(source.data(), source.size() * sizeof(int64_t), Dims{m}, DType::Int64, t.device());
    out = index_select(out, d, index);
  }
  // All pads zero: still a new tensor, never the input itself.
  return padded ? out : constant_pad(t, pad, 0.0);
}

}  // namespace dt::ag

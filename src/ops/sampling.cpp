#include "ops/sampling.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "ops/logical.h"
#include "ops/ops.h"

namespace dt::ops {
namespace {

constexpr double kTwo53 = 9007199254740992.0;  // every integer up to here is a float64

// The integers dtype holds exactly, [*lo, *hi]: its range for integer dtypes, up to
// 2^digits in magnitude for floating ones (PyTorch's bound for random integers).
void exact_integers(DType d, int64_t* lo, int64_t* hi) {
  switch (d) {
    case DType::Bool: *lo = 0, *hi = 1; return;
    case DType::UInt8: *lo = 0, *hi = 255; return;
    case DType::Int8: *lo = -128, *hi = 127; return;
    case DType::Int16: *lo = -32768, *hi = 32767; return;
    case DType::Int32: *lo = INT32_MIN, *hi = INT32_MAX; return;
    case DType::Int64: *lo = INT64_MIN, *hi = INT64_MAX; return;
    case DType::Float16: *lo = -(int64_t{1} << 11), *hi = int64_t{1} << 11; return;
    case DType::BFloat16: *lo = -(int64_t{1} << 8), *hi = int64_t{1} << 8; return;
    case DType::Float32: *lo = -(int64_t{1} << 24), *hi = int64_t{1} << 24; return;
    default: *lo = -(int64_t{1} << 53), *hi = int64_t{1} << 53; return;
  }
}

// k + low in int64 without rounding low: added in parts that doubles hold exactly and
// that scalar operands take as integers (below 2^62 in magnitude): low's low 20 bits and
// two halves of the rest, each a multiple of 2^19 with at most 44 significant bits. Every
// partial sum lies between k + (the parts of one sign) and k + low, so none overflows.
Tensor add_int64(const Tensor& k, int64_t low) {
  const int64_t bottom = low & ((int64_t{1} << 20) - 1);
  const int64_t top = low - bottom, half = top / 2;
  Tensor r = k;
  for (int64_t part : {half, top - half, bottom})
    if (part != 0) r = binary_scalar(BinaryOp::Add, r, static_cast<double>(part));
  return r;
}

}  // namespace

Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype, Device device) {
  if (low >= high)
    fail(DT_ERR_INVALID_ARGUMENT, cat("randint: expected low < high, but got low=", low, " >= high=", high));
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  if (range > (uint64_t{1} << 53))
    fail(DT_ERR_INVALID_ARGUMENT, cat("randint: the range [", low, ", ", high, ") holds ", range,
                                      " integers; at most 2^53 can be drawn evenly from float64 uniforms"));
  int64_t lo = 0, hi = 0;
  exact_integers(dtype, &lo, &hi);
  if (low < lo || high - 1 > hi)
    fail(DT_ERR_INVALID_ARGUMENT, cat("randint: ", dtype_name(dtype), " cannot hold ", low < lo ? low : high - 1,
                                      is_floating(dtype) ? " exactly" : "", " (its integers span ", lo, " to ", hi,
                                      ")"));
  const Tensor u = random(shape, RandomDist::Uniform, DType::Float64, device, "randint");
  // u < 1 - 2^-53, so u * range rounds below range for every range up to 2^53.
  const Tensor k = unary(UnaryOp::Floor, binary_scalar(BinaryOp::Mul, u, static_cast<double>(range)));
  if (dtype == DType::Int64) return add_int64(to(k, device, DType::Int64, false), low);
  // |low| and |high| are at most 2^53 here (checked above), so the sum is exact.
  const Tensor v = low == 0 ? k : binary_scalar(BinaryOp::Add, k, static_cast<double>(low));
  return to(v, device, dtype, false);
}

Tensor randperm(int64_t n, DType dtype, Device device) {
  if (n < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("randperm: n must be >= 0, got ", n));
  if (dtype == DType::Bool) fail(DT_ERR_INVALID_ARGUMENT, "randperm: bool cannot hold a permutation");
  int64_t lo = 0, hi = 0;
  exact_integers(dtype, &lo, &hi);
  if (n - 1 > hi)
    fail(DT_ERR_INVALID_ARGUMENT, cat("randperm: n = ", n, " is too large for ", dtype_name(dtype),
                                      ", which holds the integers up to ", hi, is_floating(dtype) ? " exactly" : ""));
  if (n == 0) return empty(Dims{0}, dtype, device);
  const Tensor keys = random(Dims{n}, RandomDist::Uniform, DType::Float64, device, "randperm");
  // Stable, so even equal keys (about n^2 / 2^54 likely) order the same on every device.
  return to(sort(keys, 0, false).indices, device, dtype, false);
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  if (probs.ndim() != 1 && probs.ndim() != 2)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("multinomial: probs must be 1-d or 2-d (weights along the last dim), got shape ", dims_str(probs.shape())));
  if (!is_floating(probs.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat("multinomial: expected floating weights but got ", dtype_name(probs.dtype())));
  if (num_samples < 1) fail(DT_ERR_INVALID_ARGUMENT, cat("multinomial: num_samples must be >= 1, got ", num_samples));
  const Device dev = probs.device();
  const Tensor p = to(probs.ndim() == 1 ? unsqueeze(probs, 0) : probs, dev, DType::Float64, false);
  const int64_t rows = p.shape()[0], cats = p.shape()[1];
  if (!replacement && num_samples > cats)
    fail(DT_ERR_INVALID_ARGUMENT, cat("multinomial: cannot draw ", num_samples, " samples from ", cats,
                                      " categories without replacement"));
  if (cats == 0) fail(DT_ERR_INVALID_ARGUMENT, "multinomial: probs has no category to draw");
  const Dims out_shape = probs.ndim() == 1 ? Dims{num_samples} : Dims{rows, num_samples};
  if (rows == 0) return empty(out_shape, DType::Int64, dev);

  // The checks PyTorch makes, read back in one copy: are all weights finite and >= 0,
  // and the smallest row sum.
  const int64_t last = 1;
  const Tensor valid = binary(BinaryOp::Mul, predicate(Predicate::IsFinite, p), binary_scalar(BinaryOp::Ge, p, 0.0));
  const Tensor all_valid = to(any_all(true, valid, nullptr, 0, false), dev, DType::Float64, false);
  const Tensor sums = reduce(ReduceOp::Sum, p, &last, 1, false);
  const Tensor min_sum = reduce(ReduceOp::Min, sums, nullptr, 0, false);
  const Tensor checks = to(stack({all_valid, min_sum}, 0), Device{DT_DEVICE_CPU, 0}, DType::Float64, true);
  const double* c = checks.data_as<double>();
  if (c[0] != 1.0)
    fail(DT_ERR_INVALID_ARGUMENT, "multinomial: probs holds a negative, NaN or infinite weight");
  if (!(c[1] > 0)) fail(DT_ERR_INVALID_ARGUMENT, "multinomial: a row's weights sum to 0 (nothing to draw)");

  Tensor picks;
  if (replacement) {
    // Draw k is the number of categories whose cumulative weight is <= u * total: the
    // first category whose cumulative weight exceeds the draw. u < 1 keeps the draw
    // below the total, and a category of weight 0 never exceeds its predecessor's sum.
    const Tensor cdf = cumsum(p, 1);
    const Tensor total = narrow(cdf, 1, cats - 1, 1);  // [R, 1]
    const Tensor u = random(Dims{rows, num_samples}, RandomDist::Uniform, DType::Float64, dev, "multinomial");
    const Tensor x = binary(BinaryOp::Mul, u, total);  // [R, S]
    const Tensor below = binary(BinaryOp::Le, unsqueeze(cdf, 1), unsqueeze(x, 2));  // [R, S, C]
    const int64_t cat_dim = 2;
    picks = reduce(ReduceOp::Sum, below, &cat_dim, 1, false);  // int64 [R, S]
  } else {
    // PyTorch's: the largest weight / E for exponential E = -log(1 - u) (u = 0 gives E =
    // 0 and an infinite key: drawn first). A weight of 0 gets key 0, never NaN, so such
    // categories follow all others in index order (topk is stable).
    const Tensor u = random(Dims{rows, cats}, RandomDist::Uniform, DType::Float64, dev, "multinomial");
    const Tensor e = unary(UnaryOp::Neg, unary(UnaryOp::Log1p, unary(UnaryOp::Neg, u)));
    const Tensor keys = where(binary_scalar(BinaryOp::Gt, p, 0.0), binary(BinaryOp::Div, p, e),
                              full(Dims{}, 0.0, DType::Float64, dev));
    picks = topk(keys, num_samples, 1, true).indices;
  }
  return reshape(picks, out_shape, false);
}

}  // namespace dt::ops

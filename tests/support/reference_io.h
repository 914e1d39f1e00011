// The shared half of the PyTorch reference tests (test_reference_ops, test_autograd):
// handles, dtype encodings, reading and comparing tensors, building a case's inputs on a
// device, and calling an op of the C API by its name with a case's parameters.
#pragma once
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "devtensor.h"
#include "../../src/core/op_table.h"  // the op table: the entry points below

namespace {

using json = nlohmann::json;

// ------------------------------------------------------------------------ handles

// Owns one reference.
class Ref {
 public:
  Ref() = default;
  explicit Ref(dt_tensor* p) : p_(p) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Ref& operator=(Ref&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  ~Ref() { reset(); }
  void reset() {
    if (p_) dt_tensor_release(p_);
    p_ = nullptr;
  }
  dt_tensor* get() const { return p_; }

 private:
  dt_tensor* p_ = nullptr;
};

// A recognisable value an out-parameter must still hold after a failing call.
dt_tensor* Sentinel() {
  static int anchor;
  return reinterpret_cast<dt_tensor*>(&anchor);
}

std::string Err(dt_status st) {
  std::ostringstream os;
  os << "status " << st << " (" << dt_status_string(st) << "): " << dt_last_error_message();
  return os.str();
}

// ------------------------------------------------------------------------ dtypes

dt_dtype DtypeOf(const std::string& name) {
  static const std::map<std::string, dt_dtype> m = {
      {"float32", DT_FLOAT32}, {"float64", DT_FLOAT64}, {"float16", DT_FLOAT16},
      {"bfloat16", DT_BFLOAT16}, {"int8", DT_INT8},     {"int16", DT_INT16},
      {"int32", DT_INT32},     {"int64", DT_INT64},     {"uint8", DT_UINT8},
      {"bool", DT_BOOL}};
  auto it = m.find(name);
  if (it == m.end()) throw std::runtime_error("unknown dtype in case file: " + name);
  return it->second;
}

std::string DtypeName(dt_dtype d) {
  const char* n = dt_dtype_name(d);
  return n ? n : ("<dtype " + std::to_string(d) + ">");
}

size_t ElemSize(dt_dtype d) {
  switch (d) {
    case DT_FLOAT64: case DT_INT64: return 8;
    case DT_FLOAT32: case DT_INT32: return 4;
    case DT_FLOAT16: case DT_BFLOAT16: case DT_INT16: return 2;
    default: return 1;
  }
}

bool IsFloating(dt_dtype d) {
  return d == DT_FLOAT32 || d == DT_FLOAT64 || d == DT_FLOAT16 || d == DT_BFLOAT16;
}

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float -> IEEE binary16, round to nearest even (the case data are exactly representable,
// so any correct rounding gives the same bits; this one is complete anyway).
uint16_t FloatToHalf(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // subnormal half or zero
    float a = BitsFloat(absx);
    // scale so that the half subnormal unit (2^-24) becomes 1, then round to even
    float scaled = a * 16777216.0f;
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15);
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1;
  return static_cast<uint16_t>(sign | h);
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (mant << 13));
  return BitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t FloatToBf16(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

float Bf16ToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

double JsonNumber(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("bad number string in case file: " + s);
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return v.get<double>();
}

int64_t JsonInt(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  return static_cast<int64_t>(JsonNumber(v));
}

std::vector<uint8_t> Encode(const json& values, dt_dtype dt) {
  const size_t es = ElemSize(dt);
  std::vector<uint8_t> out(values.size() * es);
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* p = out.data() + i * es;
    const json& v = values[i];
    switch (dt) {
      case DT_FLOAT32: { float f = static_cast<float>(JsonNumber(v)); std::memcpy(p, &f, 4); break; }
      case DT_FLOAT64: { double d = JsonNumber(v); std::memcpy(p, &d, 8); break; }
      case DT_FLOAT16: { uint16_t h = FloatToHalf(static_cast<float>(JsonNumber(v))); std::memcpy(p, &h, 2); break; }
      case DT_BFLOAT16: { uint16_t h = FloatToBf16(static_cast<float>(JsonNumber(v))); std::memcpy(p, &h, 2); break; }
      case DT_INT8: { int8_t x = static_cast<int8_t>(JsonInt(v)); std::memcpy(p, &x, 1); break; }
      case DT_INT16: { int16_t x = static_cast<int16_t>(JsonInt(v)); std::memcpy(p, &x, 2); break; }
      case DT_INT32: { int32_t x = static_cast<int32_t>(JsonInt(v)); std::memcpy(p, &x, 4); break; }
      case DT_INT64: { int64_t x = JsonInt(v); std::memcpy(p, &x, 8); break; }
      case DT_UINT8: { uint8_t x = static_cast<uint8_t>(JsonInt(v)); std::memcpy(p, &x, 1); break; }
      case DT_BOOL: { uint8_t x = JsonInt(v) != 0 ? 1 : 0; std::memcpy(p, &x, 1); break; }
      default: throw std::runtime_error("bad dtype");
    }
  }
  return out;
}

double DecodeOne(const uint8_t* p, dt_dtype dt) {
  switch (dt) {
    case DT_FLOAT32: { float f; std::memcpy(&f, p, 4); return f; }
    case DT_FLOAT64: { double d; std::memcpy(&d, p, 8); return d; }
    case DT_FLOAT16: { uint16_t h; std::memcpy(&h, p, 2); return HalfToFloat(h); }
    case DT_BFLOAT16: { uint16_t h; std::memcpy(&h, p, 2); return Bf16ToFloat(h); }
    case DT_INT8: { int8_t x; std::memcpy(&x, p, 1); return x; }
    case DT_INT16: { int16_t x; std::memcpy(&x, p, 2); return x; }
    case DT_INT32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case DT_INT64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case DT_UINT8: { return *p; }
    case DT_BOOL: { return *p; }
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

std::vector<int64_t> Ints(const json& a) {
  std::vector<int64_t> v;
  for (const auto& x : a) v.push_back(x.get<int64_t>());
  return v;
}

std::string Str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

// ------------------------------------------------------------------------ tensor I/O

struct Info {
  dt_dtype dtype = DT_DTYPE_DEFAULT;
  std::vector<int64_t> shape, strides;
  std::vector<double> values;
  std::vector<uint8_t> bytes;
  dt_device device{0, 0};
};

// Reads everything about t; false (with a gtest failure) if a query fails.
bool Read(const dt_tensor* t, Info* info) {
  size_t ndim = 0, nbytes = 0;
  dt_status st;
  if ((st = dt_tensor_ndim(t, &ndim)) != DT_OK) { ADD_FAILURE() << "dt_tensor_ndim: " << Err(st); return false; }
  info->shape.assign(ndim, 0);
  info->strides.assign(ndim, 0);
  if ((st = dt_tensor_shape(t, info->shape.data(), ndim)) != DT_OK) { ADD_FAILURE() << "dt_tensor_shape: " << Err(st); return false; }
  if ((st = dt_tensor_strides(t, info->strides.data(), ndim)) != DT_OK) { ADD_FAILURE() << "dt_tensor_strides: " << Err(st); return false; }
  if ((st = dt_tensor_dtype(t, &info->dtype)) != DT_OK) { ADD_FAILURE() << "dt_tensor_dtype: " << Err(st); return false; }
  if ((st = dt_tensor_device(t, &info->device)) != DT_OK) { ADD_FAILURE() << "dt_tensor_device: " << Err(st); return false; }
  if ((st = dt_tensor_nbytes(t, &nbytes)) != DT_OK) { ADD_FAILURE() << "dt_tensor_nbytes: " << Err(st); return false; }
  int64_t numel = 1;
  for (int64_t d : info->shape) numel *= d;
  const size_t es = ElemSize(info->dtype);
  if (nbytes != static_cast<size_t>(numel) * es) {
    ADD_FAILURE() << "dt_tensor_nbytes " << nbytes << " != numel " << numel << " * " << es;
    return false;
  }
  info->bytes.assign(nbytes, 0);
  if ((st = dt_tensor_copy_to_host(t, info->bytes.data(), nbytes)) != DT_OK) {
    ADD_FAILURE() << "dt_tensor_copy_to_host: " << Err(st);
    return false;
  }
  info->values.resize(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) info->values[i] = DecodeOne(info->bytes.data() + i * es, info->dtype);
  return true;
}

struct Tol {
  double rtol, atol;
};

Tol TolFor(dt_dtype d) {
  switch (d) {
    case DT_FLOAT64: return {1e-10, 1e-12};
    case DT_FLOAT32: return {1e-5, 1e-6};
    case DT_FLOAT16: return {1e-3, 1e-3};
    case DT_BFLOAT16: return {1e-2, 1e-2};
    default: return {0, 0};
  }
}

// Compares t with an expected {"dtype","shape","values",["strides"]} object.
void Compare(const json& exp, const dt_tensor* t, double atol_scale, const dt_device& device,
             const std::string& what) {
  SCOPED_TRACE(what);
  Info got;
  if (!Read(t, &got)) return;
  const dt_dtype edt = DtypeOf(exp.at("dtype").get<std::string>());
  const std::vector<int64_t> eshape = Ints(exp.at("shape"));
  EXPECT_EQ(DtypeName(got.dtype), DtypeName(edt)) << "result dtype differs from PyTorch's";
  EXPECT_EQ(Str(got.shape), Str(eshape)) << "result shape differs from PyTorch's";
  EXPECT_TRUE(got.device.type == device.type && got.device.index == device.index)
      << "result on device {" << got.device.type << "," << got.device.index << "}, expected {"
      << device.type << "," << device.index << "}";
  if (got.dtype != edt || got.shape != eshape) return;
  int64_t numel = 1;
  for (int64_t d : eshape) numel *= d;
  if (exp.contains("strides") && numel > 0) {
    // Strides of dimensions of size 0 or 1 do not affect the layout, and PyTorch itself
    // ignores them (is_contiguous); compare the others exactly.
    const std::vector<int64_t> es = Ints(exp.at("strides"));
    bool same = true;
    for (size_t i = 0; i < eshape.size(); ++i)
      if (eshape[i] > 1 && es[i] != got.strides[i]) same = false;
    EXPECT_TRUE(same) << "strides " << Str(got.strides) << ", PyTorch has " << Str(es)
                      << " (dims of size <= 1 ignored)";
  }
  const json& ev = exp.at("values");
  if (static_cast<int64_t>(ev.size()) != numel) {
    ADD_FAILURE() << "case file: " << ev.size() << " values for numel " << numel;
    return;
  }
  Tol tol = TolFor(edt);
  tol.atol *= atol_scale;
  int shown = 0, bad = 0;
  std::ostringstream msg;
  for (int64_t i = 0; i < numel; ++i) {
    const double e = JsonNumber(ev[i]);
    const double g = got.values[i];
    bool ok;
    if (std::isnan(e)) {
      ok = std::isnan(g);
    } else if (std::isinf(e)) {
      ok = g == e;
    } else if (!IsFloating(edt)) {
      ok = g == e;
    } else {
      ok = std::isfinite(g) && std::fabs(g - e) <= tol.atol + tol.rtol * std::fabs(e);
    }
    if (!ok) {
      ++bad;
      if (shown++ < 8) {
        msg.precision(17);
        msg << "\n  [" << i << "] got " << g << ", PyTorch " << e;
      }
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << numel << " values differ (rtol " << tol.rtol
                    << ", atol " << tol.atol << ")" << msg.str();
}

// ------------------------------------------------------------------------ ops

using Unary = dt_status (*)(const dt_tensor*, dt_tensor**);
using Binary = dt_status (*)(const dt_tensor*, const dt_tensor*, dt_tensor**);
using ScalarOp = dt_status (*)(const dt_tensor*, double, dt_tensor**);
using InplaceBin = dt_status (*)(dt_tensor*, const dt_tensor*);
using InplaceScalar = dt_status (*)(dt_tensor*, double);
using Reduce = dt_status (*)(const dt_tensor*, const int64_t*, size_t, int32_t, dt_tensor**);
using DimOpFn = dt_status (*)(const dt_tensor*, int64_t, dt_tensor**);  // one tensor and a dim

// The op table's entry points (src/core/op_table.h), by name; contiguous and matmul are
// not table ops.
#define DT_REF_ENTRY(fn) {#fn, fn},
const std::map<std::string, Unary>& UnaryOps() {
#define X(Name, code, c_name, rule, cost, visibility, ...) DT_IF_PUBLIC_##visibility(DT_REF_ENTRY(dt_##c_name))
  static const std::map<std::string, Unary> m = {DT_UNARY_OPS(X) {"dt_contiguous", dt_contiguous}};
#undef X
  return m;
}

const std::map<std::string, Binary>& BinaryOps() {
#define X(Name, code, c_name, ...) DT_REF_ENTRY(dt_##c_name)
  static const std::map<std::string, Binary> m = {DT_BINARY_OPS(X) {"dt_matmul", dt_matmul}};
#undef X
  return m;
}

const std::map<std::string, ScalarOp>& ScalarOps() {
#define X(Name, code, c_name, ...) DT_REF_ENTRY(dt_##c_name##_scalar)
  static const std::map<std::string, ScalarOp> m = {DT_BINARY_OPS(X)};
#undef X
  return m;
}

const std::map<std::string, InplaceBin>& InplaceBinOps() {
#define X(Name, code, c_name, rule, ...) DT_IF_ARITH_##rule(DT_REF_ENTRY(dt_##c_name##_))
  static const std::map<std::string, InplaceBin> m = {DT_BINARY_OPS(X)};
#undef X
  return m;
}

const std::map<std::string, InplaceScalar>& InplaceScalarOps() {
#define X(Name, code, c_name, rule, ...) DT_IF_ARITH_##rule(DT_REF_ENTRY(dt_##c_name##_scalar_))
  static const std::map<std::string, InplaceScalar> m = {DT_BINARY_OPS(X)};
#undef X
  return m;
}

const std::map<std::string, Reduce>& ReduceOps() {
#define X(Name, code, c_name, ...) DT_REF_ENTRY(dt_##c_name)
  static const std::map<std::string, Reduce> m = {DT_REDUCE_OPS(X)};
#undef X
  return m;
}
#undef DT_REF_ENTRY

const std::map<std::string, DimOpFn>& DimOps() {
  static const std::map<std::string, DimOpFn> m = {
      {"dt_softmax", dt_softmax}, {"dt_log_softmax", dt_log_softmax}, {"dt_cumsum", dt_cumsum}};
  return m;
}

// Builds input i: data on the CPU, moved to device, then the view steps. With `leaf`,
// the CPU tensor is marked requires_grad first and *leaf gets a reference to it, so the
// gradient flows back through the move and the views to it.
bool MakeInput(const json& spec, const dt_device& device, Ref* out, Ref* leaf = nullptr) {
  const dt_dtype dt = DtypeOf(spec.at("dtype").get<std::string>());
  const std::vector<int64_t> shape = Ints(spec.at("shape"));
  const std::vector<uint8_t> bytes = Encode(spec.at("data"), dt);
  const dt_device cpu{DT_DEVICE_CPU, 0};
  dt_tensor* raw = nullptr;
  dt_status st = dt_tensor_from_data(bytes.empty() ? nullptr : bytes.data(), bytes.size(),
                                     shape.empty() ? nullptr : shape.data(), shape.size(), dt,
                                     cpu, &raw);
  if (st != DT_OK) { ADD_FAILURE() << "dt_tensor_from_data: " << Err(st); return false; }
  Ref cur(raw);
  if (leaf) {
    st = dt_tensor_set_requires_grad(raw, 1);
    if (st != DT_OK) { ADD_FAILURE() << "dt_tensor_set_requires_grad: " << Err(st); return false; }
    dt_tensor_retain(raw);
    *leaf = Ref(raw);
  }
  if (device.type != DT_DEVICE_CPU) {
    st = dt_tensor_to(cur.get(), device, DT_DTYPE_DEFAULT, 0, &raw);
    if (st != DT_OK) { ADD_FAILURE() << "dt_tensor_to(device): " << Err(st); return false; }
    cur = Ref(raw);
  }
  for (const auto& step : spec.at("views")) {
    const std::string kind = step.at(0).get<std::string>();
    if (kind == "transpose") {
      st = dt_transpose(cur.get(), step.at(1).get<int64_t>(), step.at(2).get<int64_t>(), &raw);
    } else if (kind == "permute") {
      std::vector<int64_t> d = Ints(step.at(1));
      st = dt_permute(cur.get(), d.empty() ? nullptr : d.data(), d.size(), &raw);
    } else if (kind == "narrow") {
      st = dt_narrow(cur.get(), step.at(1).get<int64_t>(), step.at(2).get<int64_t>(),
                     step.at(3).get<int64_t>(), &raw);
    } else if (kind == "expand") {
      std::vector<int64_t> s = Ints(step.at(1));
      st = dt_expand(cur.get(), s.empty() ? nullptr : s.data(), s.size(), &raw);
    } else {
      ADD_FAILURE() << "case file: unknown view step " << kind;
      return false;
    }
    if (st != DT_OK) {
      ADD_FAILURE() << "input view step " << step.dump() << " failed: " << Err(st);
      return false;
    }
    cur = Ref(raw);
  }
  *out = std::move(cur);
  return true;
}

// The ops with two results, values and int64 indices (dt_sort, dt_topk), by a case's
// name and parameters; *known is false for another name.
inline dt_status CallValuesIndices(const std::string& op, const json& params, const std::vector<Ref>& in,
                                   dt_tensor** values, dt_tensor** indices, bool* known) {
  *known = op == "dt_sort" || op == "dt_topk";
  if (!*known) return DT_OK;
  const int64_t dim = params.at("dim").get<int64_t>();
  if (op == "dt_sort") return dt_sort(in.at(0).get(), dim, params.at("descending").get<int32_t>(), values, indices);
  return dt_topk(in.at(0).get(), params.at("k").get<int64_t>(), dim, params.at("largest").get<int32_t>(), values,
                 indices);
}

// Calls the single-result op named by a case (every op but in-place ones and
// chunk/split; of dt_sort and dt_topk, the values) on inputs `in`; *known is false for a
// name it does not know.
inline dt_status CallSingle(const std::string& op, const json& params, const std::vector<Ref>& in, dt_tensor** out,
                            bool* known) {
  auto I = [&](size_t i) { return in.at(i).get(); };
  dt_status st = DT_OK;
  *known = true;
  if (UnaryOps().count(op)) {
    st = UnaryOps().at(op)(I(0), out);
  } else if (BinaryOps().count(op)) {
    st = BinaryOps().at(op)(I(0), I(1), out);
  } else if (ScalarOps().count(op)) {
    st = ScalarOps().at(op)(I(0), JsonNumber(params.at("scalar")), out);
  } else if (ReduceOps().count(op)) {
    std::vector<int64_t> dims = Ints(params.at("dims"));
    st = ReduceOps().at(op)(I(0), dims.empty() ? nullptr : dims.data(), dims.size(),
                            params.at("keepdim").get<int32_t>(), out);
  } else if (DimOps().count(op)) {
    st = DimOps().at(op)(I(0), params.at("dim").get<int64_t>(), out);
  } else if (op == "dt_sort" || op == "dt_topk") {
    dt_tensor* indices = nullptr;
    st = CallValuesIndices(op, params, in, out, &indices, known);
    if (st == DT_OK) dt_tensor_release(indices);
  } else if (op == "dt_argsort") {
    st = dt_argsort(I(0), params.at("dim").get<int64_t>(), params.at("descending").get<int32_t>(), out);
  } else if (op == "dt_where") {
    st = dt_where(I(0), I(1), I(2), out);
  } else if (op == "dt_masked_fill") {
    st = dt_masked_fill(I(0), I(1), JsonNumber(params.at("value")), out);
  } else if (op == "dt_clamp") {  // "min" / "max": a number, or null for no bound
    double lo = 0, hi = 0;
    const bool has_lo = !params.at("min").is_null(), has_hi = !params.at("max").is_null();
    if (has_lo) lo = JsonNumber(params.at("min"));
    if (has_hi) hi = JsonNumber(params.at("max"));
    st = dt_clamp(I(0), has_lo ? &lo : nullptr, has_hi ? &hi : nullptr, out);
  } else if (op == "dt_pad") {  // "pad": the (before, after) pairs, "mode", "value"
    std::vector<int64_t> pad = Ints(params.at("pad"));
    st = dt_pad(I(0), pad.empty() ? nullptr : pad.data(), pad.size(), params.at("mode").get<std::string>().c_str(),
                JsonNumber(params.at("value")), out);
  } else if (op == "dt_interpolate") {  // "size" or "scale_factor" (the other null), "mode", "align_corners"
    std::vector<int64_t> size;
    std::vector<double> scale;
    if (!params.at("size").is_null()) size = Ints(params.at("size"));
    if (!params.at("scale_factor").is_null())
      for (const auto& v : params.at("scale_factor")) scale.push_back(JsonNumber(v));
    st = dt_interpolate(I(0), size.empty() ? nullptr : size.data(), scale.empty() ? nullptr : scale.data(),
                        size.empty() ? scale.size() : size.size(), params.at("mode").get<std::string>().c_str(),
                        params.at("align_corners").get<int32_t>(), out);
  } else if (op == "dt_leaky_relu") {
    st = dt_leaky_relu(I(0), JsonNumber(params.at("negative_slope")), out);
  } else if (op == "dt_triu" || op == "dt_tril") {
    const int64_t diagonal = params.at("diagonal").get<int64_t>();
    st = op == "dt_triu" ? dt_triu(I(0), diagonal, out) : dt_tril(I(0), diagonal, out);
  } else if (op == "dt_var" || op == "dt_std") {
    std::vector<int64_t> dims = Ints(params.at("dims"));
    st = (op == "dt_var" ? dt_var : dt_std)(I(0), dims.empty() ? nullptr : dims.data(), dims.size(),
                                            JsonNumber(params.at("correction")), params.at("keepdim").get<int32_t>(), out);
  } else if (op == "dt_isnan" || op == "dt_isinf" || op == "dt_isfinite" || op == "dt_logical_not") {
    st = (op == "dt_isnan" ? dt_isnan : op == "dt_isinf" ? dt_isinf : op == "dt_isfinite" ? dt_isfinite
                                                                                            : dt_logical_not)(I(0), out);
  } else if (op == "dt_logical_and" || op == "dt_logical_or" || op == "dt_logical_xor") {
    st = (op == "dt_logical_and" ? dt_logical_and : op == "dt_logical_or" ? dt_logical_or : dt_logical_xor)(I(0), I(1),
                                                                                                          out);
  } else if (op == "dt_any" || op == "dt_all") {
    std::vector<int64_t> dims = Ints(params.at("dims"));
    st = (op == "dt_any" ? dt_any : dt_all)(I(0), dims.empty() ? nullptr : dims.data(), dims.size(),
                                            params.at("keepdim").get<int32_t>(), out);
  } else if (op == "dt_tensor_linspace" || op == "dt_tensor_eye") {
    // A factory: the case's one input only says on which device.
    dt_device device{};
    if ((st = dt_tensor_device(I(0), &device)) != DT_OK) return st;
    const dt_dtype dtype = DtypeOf(params.at("dtype").get<std::string>());
    st = op == "dt_tensor_linspace"
             ? dt_tensor_linspace(JsonNumber(params.at("start")), JsonNumber(params.at("end")),
                                  params.at("steps").get<int64_t>(), dtype, device, out)
             : dt_tensor_eye(params.at("n").get<int64_t>(), params.at("m").get<int64_t>(), dtype, device, out);
  } else if (op == "dt_normalize") {
    st = dt_normalize(I(0), JsonNumber(params.at("ord")), params.at("dim").get<int64_t>(), JsonNumber(params.at("eps")),
                      out);
  } else if (op == "dt_cosine_similarity") {
    st = dt_cosine_similarity(I(0), I(1), params.at("dim").get<int64_t>(), JsonNumber(params.at("eps")), out);
  } else if (op == "dt_pairwise_distance") {
    st = dt_pairwise_distance(I(0), I(1), JsonNumber(params.at("ord")), JsonNumber(params.at("eps")),
                              params.at("keepdim").get<int32_t>(), out);
  } else if (op == "dt_bincount") {  // inputs: a, and the weights when there are two
    st = dt_bincount(I(0), in.size() > 1 ? I(1) : nullptr, params.at("minlength").get<int64_t>(), out);
  } else if (op == "dt_nonzero") {
    st = dt_nonzero(I(0), out);
  } else if (op == "dt_masked_select") {
    st = dt_masked_select(I(0), I(1), out);
  } else if (op == "dt_one_hot") {
    st = dt_one_hot(I(0), params.at("num_classes").get<int64_t>(), out);
  } else if (op == "dt_flip") {
    std::vector<int64_t> dims = Ints(params.at("dims"));
    st = dt_flip(I(0), dims.empty() ? nullptr : dims.data(), dims.size(), out);
  } else if (op == "dt_roll") {
    std::vector<int64_t> shifts = Ints(params.at("shifts")), dims = Ints(params.at("dims"));
    st = dt_roll(I(0), shifts.empty() ? nullptr : shifts.data(), shifts.size(), dims.empty() ? nullptr : dims.data(),
                 dims.size(), out);
  } else if (op == "dt_repeat") {
    std::vector<int64_t> reps = Ints(params.at("repeats"));
    st = dt_repeat(I(0), reps.empty() ? nullptr : reps.data(), reps.size(), out);
  } else if (op == "dt_logsumexp") {
    std::vector<int64_t> dims = Ints(params.at("dims"));
    st = dt_logsumexp(I(0), dims.empty() ? nullptr : dims.data(), dims.size(), params.at("keepdim").get<int32_t>(), out);
  } else if (op == "dt_vector_norm") {
    std::vector<int64_t> dims = Ints(params.at("dims"));
    st = dt_vector_norm(I(0), JsonNumber(params.at("ord")), dims.empty() ? nullptr : dims.data(), dims.size(),
                        params.at("keepdim").get<int32_t>(), out);
  } else if (op == "dt_tensor_to") {
    st = dt_tensor_to(I(0), dt_device{DT_DEVICE_DEFAULT, 0},
                      DtypeOf(params.at("dtype").get<std::string>()), 0, out);
  } else if (op == "dt_cat" || op == "dt_stack") {
    std::vector<const dt_tensor*> ts;
    for (auto& r : in) ts.push_back(r.get());
    const int64_t dim = params.at("dim").get<int64_t>();
    st = op == "dt_cat" ? dt_cat(ts.data(), ts.size(), dim, out)
                        : dt_stack(ts.data(), ts.size(), dim, out);
  } else if (op == "dt_index_select") {
    st = dt_index_select(I(0), params.at("dim").get<int64_t>(), I(1), out);
  } else if (op == "dt_gather") {
    st = dt_gather(I(0), params.at("dim").get<int64_t>(), I(1), out);
  } else if (op == "dt_index_add") {
    st = dt_index_add(I(0), params.at("dim").get<int64_t>(), I(1), I(2), out);
  } else if (op == "dt_scatter_add") {
    st = dt_scatter_add(I(0), params.at("dim").get<int64_t>(), I(1), I(2), out);
  } else if (op == "dt_transpose") {
    st = dt_transpose(I(0), params.at("dim0").get<int64_t>(), params.at("dim1").get<int64_t>(), out);
  } else if (op == "dt_permute" || op == "dt_squeeze" || op == "dt_reshape" || op == "dt_view" ||
             op == "dt_expand") {
    std::vector<int64_t> v = Ints(params.at(op == "dt_permute" || op == "dt_squeeze" ? "dims" : "shape"));
    const int64_t* p = v.empty() ? nullptr : v.data();
    if (op == "dt_permute") st = dt_permute(I(0), p, v.size(), out);
    else if (op == "dt_squeeze") st = dt_squeeze(I(0), p, v.size(), out);
    else if (op == "dt_reshape") st = dt_reshape(I(0), p, v.size(), out);
    else if (op == "dt_view") st = dt_view(I(0), p, v.size(), out);
    else st = dt_expand(I(0), p, v.size(), out);
  } else if (op == "dt_narrow") {
    st = dt_narrow(I(0), params.at("dim").get<int64_t>(), params.at("start").get<int64_t>(),
                   params.at("length").get<int64_t>(), out);
  } else if (op == "dt_unsqueeze") {
    st = dt_unsqueeze(I(0), params.at("dim").get<int64_t>(), out);
  } else if (op == "dt_conv2d") {  // inputs: input, weight[, bias]
    std::vector<int64_t> stride = Ints(params.at("stride")), dilation = Ints(params.at("dilation")), padding;
    if (params.at("padding").is_string()) padding = {DT_PADDING_SAME, 0};  // "same"
    else padding = Ints(params.at("padding"));
    st = dt_conv2d(I(0), I(1), in.size() > 2 ? I(2) : nullptr, stride.data(), padding.data(), dilation.data(),
                   params.at("groups").get<int64_t>(), out);
  } else if (op == "dt_conv1d") {  // inputs: input, weight[, bias]
    const int64_t padding = params.at("padding").is_string() ? DT_PADDING_SAME : params.at("padding").get<int64_t>();
    st = dt_conv1d(I(0), I(1), in.size() > 2 ? I(2) : nullptr, params.at("stride").get<int64_t>(), padding,
                   params.at("dilation").get<int64_t>(), params.at("groups").get<int64_t>(), out);
  } else if (op == "dt_conv_transpose2d") {  // inputs: input, weight[, bias]
    std::vector<int64_t> stride = Ints(params.at("stride")), padding = Ints(params.at("padding")),
                         outpad = Ints(params.at("output_padding")), dilation = Ints(params.at("dilation"));
    st = dt_conv_transpose2d(I(0), I(1), in.size() > 2 ? I(2) : nullptr, stride.data(), padding.data(),
                             outpad.data(), params.at("groups").get<int64_t>(), dilation.data(), out);
  } else if (op == "dt_max_pool2d" || op == "dt_avg_pool2d" || op == "dt_adaptive_avg_pool2d") {
    if (op == "dt_adaptive_avg_pool2d") {
      std::vector<int64_t> size = Ints(params.at("output_size"));
      st = dt_adaptive_avg_pool2d(I(0), size.data(), out);
    } else {
      std::vector<int64_t> k = Ints(params.at("kernel_size")), s = Ints(params.at("stride")), p = Ints(params.at("padding"));
      if (op == "dt_max_pool2d") {
        std::vector<int64_t> d = Ints(params.at("dilation"));
        st = dt_max_pool2d(I(0), k.data(), s.data(), p.data(), d.data(), params.value("ceil_mode", 0), out);
      } else {
        st = dt_avg_pool2d(I(0), k.data(), s.data(), p.data(), params.value("ceil_mode", 0),
                           params.at("count_include_pad").get<int32_t>(), out);
      }
    }
  } else if (op == "dt_flatten") {
    st = dt_flatten(I(0), params.at("start_dim").get<int64_t>(), params.at("end_dim").get<int64_t>(), out);
  } else if (op == "dt_batch_norm" || op == "dt_layer_norm" || op == "dt_group_norm") {
    // inputs: input, then those of params "has" in this order: running_mean,
    // running_var, weight, bias (the running ones written in place when training).
    std::map<std::string, dt_tensor*> opt;
    size_t next = 1;
    for (const char* name : {"running_mean", "running_var", "weight", "bias"})
      for (const auto& h : params.at("has"))
        if (h.get<std::string>() == name) opt[name] = I(next++);
    auto get = [&](const char* name) { return opt.count(name) ? opt[name] : nullptr; };
    const double eps = params.at("eps").get<double>();
    if (op == "dt_batch_norm") {
      st = dt_batch_norm(I(0), get("running_mean"), get("running_var"), get("weight"), get("bias"),
                         params.at("training").get<int32_t>(), params.at("momentum").get<double>(), eps, out);
    } else if (op == "dt_layer_norm") {
      std::vector<int64_t> shape = Ints(params.at("normalized_shape"));
      st = dt_layer_norm(I(0), shape.data(), shape.size(), get("weight"), get("bias"), eps, out);
    } else {
      st = dt_group_norm(I(0), params.at("num_groups").get<int64_t>(), get("weight"), get("bias"), eps, out);
    }
  } else if (op == "dt_scaled_dot_product_attention") {  // inputs: query, key, value[, attn_mask]
    st = dt_scaled_dot_product_attention(I(0), I(1), I(2), in.size() > 3 ? I(3) : nullptr,
                                         params.at("is_causal").get<int32_t>(), out);
  } else if (op == "dt_embedding") {  // inputs: weight, indices (PyTorch's F.embedding order is indices, weight)
    const int64_t pad = params.at("padding_idx").is_null() ? DT_PADDING_IDX_NONE : params.at("padding_idx").get<int64_t>();
    st = dt_embedding(I(1), I(0), pad, out);
  } else {
    *known = false;
  }
  return st;
}

}  // namespace

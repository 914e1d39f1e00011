// PyTorch's tensor printing (torch/_tensor_str.py), re-implemented in C++.
//
// The rules reproduced here, in PyTorch's default print options:
//  * Floating tensors (16-bit floats widened first) pick one mode from their nonzero
//    finite values: "integer mode" when all are integral ("3."), scientific mode when
//    max/min > 1000 or max > 1e8 (or, outside integer mode, min < 1e-4), else fixed
//    with 4 decimals. Every element is right-aligned to the widest nonzero finite one.
//  * Integer tensors print as integers, bool as True/False, right-aligned.
//  * More than 1000 elements: each dimension longer than 6 shows its first and last 3
//    entries around "...", and only those entries decide the width and mode.
//  * Rows wrap so that a line holds floor((80 - indent) / (width + 2)) elements.
#include "core/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/context.h"

namespace dt {

namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

enum class Kind { Floating, Integer, Boolean };

// One element as the printer sees it: floating values as double (exact for every
// floating dtype), integers and bools as int64.
struct Value {
  double f = 0.0;
  int64_t i = 0;
};

Value read_value(DType dtype, const char* p) {
  return dispatch_dtype(dtype, [p](auto tag) -> Value {
    using T = decltype(tag);
    Value v;
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t b;
      std::memcpy(&b, p, 1);
      v.i = b != 0;
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      T x;
      std::memcpy(&x, p, sizeof(T));
      v.f = static_cast<double>(static_cast<float>(x));
    } else if constexpr (std::is_floating_point_v<T>) {
      T x;
      std::memcpy(&x, p, sizeof(T));
      v.f = static_cast<double>(x);
    } else {
      T x;
      std::memcpy(&x, p, sizeof(T));
      v.i = static_cast<int64_t>(x);
    }
    return v;
  });
}

// Strided access to the elements of a host tensor.
struct Walk {
  const char* base;  // element 0 (offset applied)
  size_t itemsize;
  DType dtype;
  const int64_t* shape;
  const int64_t* strides;
  int ndim;
  Value at(int64_t elem_offset) const {
    return read_value(dtype, base + elem_offset * static_cast<int64_t>(itemsize));
  }
};

// Python's "{:.Nf}" / "{:.Ne}" of a float: like printf, but NaN is always "nan".
std::string py_float(double v, int precision, bool sci) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[512];  // %.4f of the largest double needs about 320
  std::snprintf(buf, sizeof buf, sci ? "%.*e" : "%.*f", precision, v);
  return buf;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

class Formatter {
 public:
  Formatter(Kind kind, const std::vector<Value>& values) : kind_(kind) {
    if (kind_ == Kind::Integer) {
      for (const Value& v : values) width_ = std::max(width_, std::to_string(v.i).size());
      return;
    }
    if (kind_ == Kind::Boolean) {
      for (const Value& v : values) width_ = std::max(width_, v.i ? size_t{4} : size_t{5});
      return;
    }
    std::vector<double> finite;  // nonzero finite values
    for (const Value& v : values)
      if (std::isfinite(v.f) && v.f != 0.0) finite.push_back(v.f);
    if (finite.empty()) return;  // integer mode, width 1
    double lo = std::fabs(finite[0]), hi = lo;
    for (double x : finite) {
      lo = std::min(lo, std::fabs(x));
      hi = std::max(hi, std::fabs(x));
      if (x != std::ceil(x)) int_mode_ = false;
    }
    bool wide = hi / lo > 1000.0 || hi > 1.0e8;
    sci_mode_ = int_mode_ ? wide : (wide || lo < 1.0e-4);
    for (double x : finite) {
      size_t w;
      if (sci_mode_) w = py_float(x, kPrecision, true).size();
      else if (int_mode_) w = py_float(x, 0, false).size() + 1;  // room for the "."
      else w = py_float(x, kPrecision, false).size();
      width_ = std::max(width_, w);
    }
  }

  size_t width() const { return width_; }

  std::string format(const Value& v) const {
    std::string s;
    switch (kind_) {
      case Kind::Integer: s = std::to_string(v.i); break;
      case Kind::Boolean: s = v.i ? "True" : "False"; break;
      case Kind::Floating:
        if (sci_mode_) {
          s = py_float(v.f, kPrecision, true);
        } else if (int_mode_) {
          s = py_float(v.f, 0, false);
          if (std::isfinite(v.f)) s += '.';
        } else {
          s = py_float(v.f, kPrecision, false);
        }
        break;
    }
    return pad_left(std::move(s), width_);
  }

 private:
  Kind kind_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

// The indices shown along a dimension of size n.
template <typename F>
void for_shown(int64_t n, bool summarize, F&& f) {
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) f(i, false);
    for (int64_t i = n - kEdgeItems; i < n; ++i) f(i, i == n - kEdgeItems);
  } else {
    for (int64_t i = 0; i < n; ++i) f(i, false);
  }
}

// The elements that decide the format: all of them, or the summarised corners.
void gather(const Walk& w, int dim, int64_t off, bool summarize, std::vector<Value>& out) {
  if (dim == w.ndim) {
    out.push_back(w.at(off));
    return;
  }
  for_shown(w.shape[dim], summarize, [&](int64_t i, bool) {
    gather(w, dim + 1, off + i * w.strides[dim], summarize, out);
  });
}

std::string body_str(const Walk& w, int dim, int64_t off, int indent, bool summarize,
                     const Formatter& fmt) {
  const int rem = w.ndim - dim;
  if (rem == 0) return fmt.format(w.at(off));
  std::string out = "[";
  if (rem == 1) {
    const int element_length = static_cast<int>(fmt.width()) + 2;
    int64_t per_line = static_cast<int64_t>(
        std::floor(static_cast<double>(kLineWidth - indent) / element_length));
    if (per_line < 1) per_line = 1;
    const std::string line_sep = ",\n" + std::string(indent + 1, ' ');
    int64_t k = 0;  // items emitted, " ..." included
    auto emit = [&](const std::string& item) {
      if (k > 0) out += (k % per_line == 0) ? line_sep : ", ";
      out += item;
      ++k;
    };
    for_shown(w.shape[dim], summarize, [&](int64_t i, bool after_gap) {
      if (after_gap) emit(" ...");
      emit(fmt.format(w.at(off + i * w.strides[dim])));
    });
  } else {
    const std::string sep = "," + std::string(rem - 1, '\n') + std::string(indent + 1, ' ');
    bool first = true;
    auto emit = [&](const std::string& item) {
      if (!first) out += sep;
      out += item;
      first = false;
    };
    for_shown(w.shape[dim], summarize, [&](int64_t i, bool after_gap) {
      if (after_gap) emit("...");
      emit(body_str(w, dim + 1, off + i * w.strides[dim], indent + 1, summarize, fmt));
    });
  }
  out += ']';
  return out;
}

std::string py_tuple(const Dims& shape) {
  std::string s = "(";
  for (int i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  s += shape.size() == 1 ? ",)" : ")";
  return s;
}

}  // namespace

std::string format_tensor(const Tensor& t, Device shown_device, const std::string& autograd_suffix) {
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  const DType dtype = t.dtype();
  const DType default_float = default_dtype();
  const std::string dtype_suffix = std::string("dtype=torch.") + dtype_name(dtype);

  std::vector<std::string> suffixes;
  if (!(shown_device.is_cpu() && shown_device.index == 0))
    suffixes.push_back("device='" + device_str(shown_device) + "'");

  std::string text = prefix;
  if (t.numel() == 0) {
    // PyTorch: the shape unless 1-d; the dtype unless the default float dtype (an empty
    // tensor has no elements that would show it is integral).
    if (t.ndim() != 1) suffixes.push_back("size=" + py_tuple(t.shape()));
    if (dtype != default_float) suffixes.push_back(dtype_suffix);
    text += "[]";
  } else {
    if (!(dtype == default_float || dtype == DType::Int64 || dtype == DType::Bool))
      suffixes.push_back(dtype_suffix);
    const Kind kind = is_floating(dtype) ? Kind::Floating
                      : dtype == DType::Bool ? Kind::Boolean
                                             : Kind::Integer;
    const Walk w{t.data(), t.itemsize(), dtype, t.shape().v, t.strides().v, t.ndim()};
    const bool summarize = t.numel() > kThreshold;
    std::vector<Value> values;
    gather(w, 0, 0, summarize, values);
    const Formatter fmt(kind, values);
    text += body_str(w, 0, 0, indent, summarize, fmt);
  }

  if (!autograd_suffix.empty()) suffixes.push_back(autograd_suffix);
  // Suffixes go on the last line while it stays within the line width.
  const size_t nl = text.rfind('\n');
  int64_t last_line = static_cast<int64_t>(text.size()) -
                      (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) + 1;
  for (const std::string& s : suffixes) {
    const int64_t len = static_cast<int64_t>(s.size());
    if (last_line + len + 2 > kLineWidth) {
      text += ",\n" + std::string(indent, ' ') + s;
      last_line = indent + len;
    } else {
      text += ", " + s;
      last_line += len + 2;
    }
  }
  text += ')';
  return text;
}

}  // namespace dt

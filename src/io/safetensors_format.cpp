#include "io/safetensors_format.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "core/error.h"

namespace dt::io {

namespace {

using Json = nlohmann::ordered_json;  // keeps the file's key order

const SafetensorsDType kDTypes[] = {
    {"F64", 8, true, DType::Float64},   {"F32", 4, true, DType::Float32},
    {"F16", 2, true, DType::Float16},   {"BF16", 2, true, DType::BFloat16},
    {"I64", 8, true, DType::Int64},     {"I32", 4, true, DType::Int32},
    {"I16", 2, true, DType::Int16},     {"I8", 1, true, DType::Int8},
    {"U8", 1, true, DType::UInt8},      {"BOOL", 1, true, DType::Bool},
    // Valid in the format, but devtensor has no such dtype.
    {"U64", 8, false, DType::Float32},  {"U32", 4, false, DType::Float32},
    {"U16", 2, false, DType::Float32},  {"F8_E5M2", 1, false, DType::Float32},
    {"F8_E4M3", 1, false, DType::Float32},
};

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  fail(DT_ERR_FORMAT, cat(where, ": ", what));
}

// JSON string literal of a name, for messages.
std::string quoted(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string list_str(const std::vector<uint64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The format nests at most three containers deep (header { entry { shape [ ). Deeper
// input is refused before nlohmann builds it, so a hostile header of 100 MB of '['
// cannot cost gigabytes of parser stack.
void check_nesting(const char* p, size_t n, const std::string& where) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < n; ++i) {
    char c = p[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 3) bad(where, "the header is not a safetensors header: JSON nested deeper than 3 levels");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

// Parses JSON, refusing duplicate keys in any object (nlohmann would keep the last one
// silently). Keys at depth k belong to the object most recently started at depth k - 1.
Json parse_json(const char* p, size_t n, const std::string& where) {
  std::vector<std::unordered_set<std::string>> seen;
  std::string duplicate;
  bool has_duplicate = false;
  auto cb = [&](int depth, Json::parse_event_t event, Json& parsed) {
    size_t d = static_cast<size_t>(depth);
    if (event == Json::parse_event_t::object_start) {
      if (seen.size() < d + 2) seen.resize(d + 2);
      seen[d + 1].clear();
    } else if (event == Json::parse_event_t::key) {
      if (seen.size() < d + 1) seen.resize(d + 1);
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!seen[d].insert(k).second && !has_duplicate) {
        has_duplicate = true;
        duplicate = k;
      }
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(p, p + n, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const Json::exception& e) {
    bad(where, cat("the header is not valid JSON: ", e.what()));
  }
  if (has_duplicate) bad(where, cat("duplicate key ", quoted(duplicate), " in the header"));
  return j;
}

// A non-negative JSON integer; false for anything else (floats, strings, negatives).
bool as_count(const Json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

TensorRecord parse_entry(const std::string& name, const Json& v, uint64_t buffer_size, const std::string& where) {
  std::string tw = cat(where, ": tensor ", quoted(name));
  if (name.find('\0') != std::string::npos) bad(tw, "the name contains a NUL character");
  if (!v.is_object()) bad(tw, cat("the entry is not an object but ", v.type_name()));
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& k = it.key();
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      bad(tw, cat("unexpected field ", quoted(k), " (an entry has exactly dtype, shape and data_offsets)"));
  }
  for (const char* k : {"dtype", "shape", "data_offsets"})
    if (!v.contains(k)) bad(tw, cat("the field \"", k, "\" is missing"));

  TensorRecord r;
  r.name = name;
  const Json& dt = v["dtype"];
  if (!dt.is_string()) bad(tw, cat("dtype is not a string but ", dt.type_name()));
  r.dtype = find_safetensors_dtype(dt.get_ref<const std::string&>());
  if (!r.dtype) bad(tw, cat("unknown dtype ", quoted(dt.get_ref<const std::string&>())));

  const Json& shape = v["shape"];
  if (!shape.is_array()) bad(tw, cat("shape is not a list but ", shape.type_name()));
  uint64_t numel = 1;
  bool overflow = false;  // checked multiplication; reported after the whole shape is read
  for (const Json& d : shape) {
    uint64_t x;
    if (!as_count(d, &x)) {
      if (d.is_number_integer()) bad(tw, cat("shape ", shape.dump(), " has the negative dimension ", d.get<int64_t>()));
      bad(tw, cat("shape ", shape.dump(), " is not a list of non-negative integers"));
    }
    if (x > static_cast<uint64_t>(INT64_MAX))
      bad(tw, cat("shape ", shape.dump(), " has the dimension ", x, ", beyond the largest int64"));
    if (__builtin_mul_overflow(numel, x, &numel)) overflow = true;
    r.shape.push_back(x);
  }
  uint64_t nbytes = 0;
  if (overflow || numel > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, r.dtype->size, &nbytes))
    bad(tw, cat("the element count of shape ", list_str(r.shape), " overflows"));

  const Json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !as_count(off[0], &r.begin) || !as_count(off[1], &r.end))
    bad(tw, cat("data_offsets ", off.dump(), " are not two non-negative integers"));
  if (r.begin > r.end) bad(tw, cat("data_offsets ", list_str({r.begin, r.end}), " begin after they end"));
  if (r.end > buffer_size)
    bad(tw, cat("data_offsets ", list_str({r.begin, r.end}), " end past the end of the ", buffer_size,
                "-byte data buffer"));
  if (r.end - r.begin != nbytes)
    bad(tw, cat("data_offsets ", list_str({r.begin, r.end}), " hold ", r.end - r.begin, " bytes but shape ",
                list_str(r.shape), " of ", r.dtype->code, " needs ", nbytes));
  return r;
}

}  // namespace

const SafetensorsDType* find_safetensors_dtype(const std::string& code) {
  for (const SafetensorsDType& d : kDTypes)
    if (code == d.code) return &d;
  return nullptr;
}

const SafetensorsDType& safetensors_dtype_of(DType t) {
  for (const SafetensorsDType& d : kDTypes)
    if (d.supported && d.dtype == t) return d;
  fail(DT_ERR_INTERNAL, cat("safetensors: no code for dtype ", dtype_name(t)));
}

std::vector<TensorRecord> parse_header(const char* json, size_t n, uint64_t buffer_size, const std::string& where) {
  // The format's rule: the header begins with '{' and may be padded with spaces (0x20)
  // only, so no byte-order mark, leading whitespace or NUL padding, which the reference
  // readers refuse too.
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0'; };
  if (n > 0 && (blank(json[0]) || static_cast<unsigned char>(json[0]) == 0xEF))
    bad(where, "the header must begin with '{' (no byte-order mark or leading whitespace)");
  for (size_t i = n; i > 0 && blank(json[i - 1]); --i)
    if (json[i - 1] != ' ') bad(where, "the header must be padded with spaces only (after its closing '}')");
  check_nesting(json, n, where);
  Json root = parse_json(json, n, where);
  if (!root.is_object()) bad(where, cat("the header is not a JSON object but ", root.type_name()));
  std::vector<TensorRecord> tensors;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") {
      const Json& m = it.value();
      bool ok = m.is_object();
      if (ok)
        for (const Json& x : m) ok = ok && x.is_string();
      if (!ok) bad(where, "__metadata__ is not an object of strings");
      continue;
    }
    tensors.push_back(parse_entry(it.key(), it.value(), buffer_size, where));
  }
  // Sorted by offsets, the tensors must tile the buffer exactly (the reference's rule).
  std::stable_sort(tensors.begin(), tensors.end(), [](const TensorRecord& a, const TensorRecord& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  const TensorRecord* prev = nullptr;
  for (const TensorRecord& t : tensors) {
    if (t.begin < at)
      bad(where, cat("tensor ", quoted(t.name), " (data_offsets ", list_str({t.begin, t.end}), ") overlaps tensor ",
                     quoted(prev->name), " (data_offsets ", list_str({prev->begin, prev->end}), ")"));
    if (t.begin > at)
      bad(where, cat("bytes [", at, ", ", t.begin, ") of the data buffer belong to no tensor (a hole before tensor ",
                     quoted(t.name), ")"));
    at = t.end;
    prev = &t;
  }
  if (at != buffer_size)
    bad(where, cat("bytes [", at, ", ", buffer_size, ") of the data buffer belong to no tensor (a hole at the end)"));
  return tensors;
}

std::string format_header(const std::vector<TensorRecord>& tensors) {
  Json root = Json::object();
  for (const TensorRecord& t : tensors) {
    Json e = Json::object();
    e["dtype"] = t.dtype->code;
    e["shape"] = t.shape;
    e["data_offsets"] = {t.begin, t.end};
    root[t.name] = std::move(e);
  }
  std::string s = root.dump();
  s.append((8 - s.size() % 8) % 8, ' ');
  return s;
}

}  // namespace dt::io

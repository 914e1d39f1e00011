// The safetensors header (https://github.com/huggingface/safetensors): parsing and
// validating it, and writing it. A file is an 8-byte little-endian header length N, N
// bytes of UTF-8 JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin,
// end]}, ..., "__metadata__": {str: str} (optional)}, then the byte buffer the offsets
// index. No file access here (see safetensors_io.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace dt::io {

// The reference implementation's bound on N.
constexpr uint64_t kMaxHeaderBytes = 100000000;

// A dtype code of the format. `supported` is false for the codes devtensor has no dtype
// for (U16, U32, U64, the float8s): the file is valid, but cannot be loaded.
struct SafetensorsDType {
  const char* code;  // "F32"
  size_t size;       // bytes per element
  bool supported;
  DType dtype;       // meaningful when supported
};
const SafetensorsDType* find_safetensors_dtype(const std::string& code);  // null: unknown
const SafetensorsDType& safetensors_dtype_of(DType t);

struct TensorRecord {
  std::string name;
  const SafetensorsDType* dtype = nullptr;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;  // offsets into the byte buffer
};

// Parses and validates header bytes [json, json + n) against a byte buffer of
// buffer_size bytes: everything the format requires (JSON object, unique keys, entries of
// exactly dtype/shape/data_offsets, known dtypes, shapes of non-negative integers with no
// overflow, byte counts matching shapes, offsets inside the buffer and tiling it with no
// hole or overlap, __metadata__ an object of strings). Returns the tensors sorted by
// their offsets (file order among equal offsets). Throws DT_ERR_FORMAT, the message
// starting with `where`.
std::vector<TensorRecord> parse_header(const char* json, size_t n, uint64_t buffer_size, const std::string& where);

// The header text for these tensors in this order (compact JSON, no metadata), padded
// with spaces to a multiple of 8 bytes as the reference implementation does.
std::string format_header(const std::vector<TensorRecord>& tensors);

}  // namespace dt::io

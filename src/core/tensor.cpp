#include "core/tensor.h"

#include <cstdlib>
#include <new>

#include "core/autograd_meta.h"
#include "core/error.h"
#include "core/fault_injection.h"

namespace dt {

Dims::Dims(const int64_t* p, size_t count) : n(static_cast<int32_t>(count)) {
  for (size_t i = 0; i < count; ++i) v[i] = p[i];
}
Dims::Dims(std::initializer_list<int64_t> l) {
  for (int64_t x : l) v[n++] = x;
}
bool Dims::operator==(const Dims& o) const {
  if (n != o.n) return false;
  for (int i = 0; i < n; ++i)
    if (v[i] != o.v[i]) return false;
  return true;
}

std::string dims_str(const Dims& d) {
  std::string s = "[";
  for (int i = 0; i < d.n; ++i) {
    if (i) s += ", ";
    s += std::to_string(d.v[i]);
  }
  return s + "]";
}

int64_t numel_of(const Dims& shape) {
  bool empty = false;
  for (int i = 0; i < shape.n; ++i) {
    if (shape.v[i] < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("negative dimension ", shape.v[i], " in shape ", dims_str(shape)));
    empty = empty || shape.v[i] == 0;
  }
  if (empty) return 0;  // however large the other dims
  int64_t n = 1;
  for (int i = 0; i < shape.n; ++i)
    if (__builtin_mul_overflow(n, shape.v[i], &n))
      fail(DT_ERR_INVALID_ARGUMENT, cat("shape ", dims_str(shape), " has more elements than fit in int64"));
  return n;
}

Dims contiguous_strides(const Dims& shape) {
  Dims s;
  s.n = shape.n;
  int64_t acc = 1;
  for (int i = shape.n - 1; i >= 0; --i) {
    s.v[i] = acc;
    // Only an empty tensor (a zero dim elsewhere) can overflow here, and it addresses no
    // element: saturate rather than overflow (found by fuzzing DLPack imports).
    if (__builtin_mul_overflow(acc, shape.v[i] > 1 ? shape.v[i] : 1, &acc)) acc = INT64_MAX;
  }
  return s;
}

TensorImpl* TensorImpl::create(Ref<Storage> storage, DType dtype, const Dims& shape, const Dims& strides,
                               int64_t offset, void* place) {
  // Checked before anything is allocated: views (expand, reshape) come here without
  // passing through a constructor's checks, and their sizes may overflow.
  const int64_t numel = numel_of(shape);
  // Every tensor's byte count must be representable too (dt_tensor_nbytes): a stride-0
  // view of INT64_MAX float32 elements has a valid count but no byte count (found by
  // fuzz_ops through dt_tensor_from_blob; dt_expand made the same).
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(dtype_size(dtype)), &nbytes))
    fail(DT_ERR_INVALID_ARGUMENT, cat("shape ", dims_str(shape), " of ", dtype_name(dtype),
                                      " has more bytes than fit in int64"));
  // So must the view's offset in bytes (Tensor::data() computes it): a narrow deep into
  // an empty tensor with huge other dims reached 3e18 float32 elements (fuzz_ops).
  int64_t offset_bytes = 0;
  if (offset < 0 || __builtin_mul_overflow(offset, static_cast<int64_t>(dtype_size(dtype)), &offset_bytes))
    fail(DT_ERR_INVALID_ARGUMENT, cat("a view at element offset ", offset, " of ", dtype_name(dtype),
                                      " is outside what int64 byte offsets can address"));
  void* block = place ? place : (fault::allocation_fails() ? nullptr : std::malloc(sizeof(TensorImpl)));
  if (!block) fail(DT_ERR_OUT_OF_MEMORY, "out of memory allocating a tensor record");
  TensorImpl* t = new (block) TensorImpl();
  t->in_storage_block = place != nullptr;
  t->storage = std::move(storage);
  t->dtype = dtype;
  t->shape = shape;
  t->strides = strides;
  t->offset = offset;
  t->numel = numel;
  t->contiguous = compute_contiguous(shape, strides);
  return t;
}

void TensorImpl::destroy(TensorImpl* t) {
  delete t->autograd;
  t->autograd = nullptr;
  if (t->in_storage_block) {
    // The memory belongs to the storage's block: end this object, then drop the
    // storage reference, which frees the block if it was the last.
    Ref<Storage> st = std::move(t->storage);
    t->~TensorImpl();
    return;
  }
  t->~TensorImpl();
  std::free(t);
}

namespace {
size_t checked_nbytes(const Dims& shape, DType dtype) {
  int64_t n = numel_of(shape);
  size_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n), dtype_size(dtype), &bytes))
    fail(DT_ERR_INVALID_ARGUMENT, cat("shape ", dims_str(shape), " needs more bytes than fit in memory"));
  return bytes;
}
}  // namespace

Tensor Tensor::empty_from(Allocator& alloc, const Dims& shape, DType dtype, Device device) {
  Ref<Storage> st = Storage::allocate_from(alloc, device, checked_nbytes(shape, dtype));
  return Tensor(Ref<TensorImpl>::adopt(TensorImpl::create(std::move(st), dtype, shape, contiguous_strides(shape), 0)));
}

Tensor Tensor::empty(const Dims& shape, DType dtype, Device device) {
  size_t bytes = checked_nbytes(shape, dtype);
  void* body = nullptr;  // set when the tensor body fits in the storage's block
  Ref<Storage> st = Storage::allocate(device, bytes, sizeof(TensorImpl), &body);
  TensorImpl* t = TensorImpl::create(std::move(st), dtype, shape, contiguous_strides(shape), 0, body);
  return Tensor(Ref<TensorImpl>::adopt(t));
}

Tensor Tensor::view_as(const Dims& shape, const Dims& strides, int64_t offset) const {
  return Tensor(Ref<TensorImpl>::adopt(TensorImpl::create(impl_->storage, impl_->dtype, shape, strides, offset)));
}

bool compute_contiguous(const Dims& sh, const Dims& st) {
  // An empty tensor is contiguous. Checked first: its other dims may be huge, and their
  // product may overflow (a non-empty shape's product fits, numel_of checked it).
  for (int i = 0; i < sh.n; ++i)
    if (sh.v[i] == 0) return true;
  int64_t expected = 1;
  for (int i = sh.n - 1; i >= 0; --i) {
    if (sh.v[i] == 1) continue;
    if (st.v[i] != expected) return false;
    expected *= sh.v[i];
  }
  return true;
}

namespace {
// Byte offset of the element with row-major index i of a (shape, strides) layout of bytes.
int64_t element_offset(const Dims& shape, const Dims& strides, int64_t i) {
  int64_t off = 0;
  for (int d = shape.n - 1; d >= 0; --d) {
    off += (i % shape.v[d]) * strides.v[d];
    i /= shape.v[d];
  }
  return off;
}
// The first byte of a non-empty one-byte layout (span bytes from data) that is neither 0
// nor 1. The cost follows the memory, not the element count: a dimension of stride 0 (an
// expanded tensor, of any size) is read once, and a layout whose elements overlap
// otherwise is checked over every byte it spans.
struct BadBool {
  int64_t offset = -1;   // of the byte from data; -1: every byte is 0 or 1
  int64_t element = -1;  // its row-major element index, when the layout does not overlap
};
BadBool first_non_bool_byte(const unsigned char* data, const Dims& shape, const Dims& strides, int64_t span) {
  Dims distinct = shape;  // index 0 in a stride-0 dimension stands for all of them
  for (int d = 0; d < shape.n; ++d)
    if (strides.v[d] == 0) distinct.v[d] = 1;
  BadBool bad;
  const int64_t n = numel_of(distinct);
  if (n > span) {
    for (int64_t i = 0; i < span; ++i)
      if (data[i] > 1) {
        bad.offset = i;
        return bad;
      }
    return bad;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = element_offset(distinct, strides, i);
    if (data[at] <= 1) continue;
    bad.offset = at;
    // The same multi-index in the full shape (0 in every stride-0 dimension).
    int64_t rest = i, index = 0, scale = 1;
    for (int d = shape.n - 1; d >= 0; --d) {
      index += (rest % distinct.v[d]) * scale;
      rest /= distinct.v[d];
      scale *= shape.v[d];
    }
    bad.element = index;
    return bad;
  }
  return bad;
}
}  // namespace

Tensor borrow_tensor(const char* fn, void* data, Device device, DType dtype, const Dims& shape, const Dims& strides) {
  const int64_t numel = numel_of(shape);
  const int64_t itemsize = static_cast<int64_t>(dtype_size(dtype));
  int64_t span = numel == 0 ? 0 : 1;  // elements from the first to the furthest reached
  for (int i = 0; i < shape.n && numel > 0; ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(shape.v[i] - 1, strides.v[i], &reach) || __builtin_add_overflow(span, reach, &span))
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": the strides reach past any addressable memory"));
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(span, itemsize, &bytes))
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": the strides reach past any addressable memory"));
  if (numel > 0) {
    if (!data) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": data is NULL"));
    // Every kernel reads whole elements: a misaligned start would be undefined behaviour
    // (found by fuzzing DLPack imports with odd byte offsets).
    if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(itemsize) != 0)
      fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": data (", data, ") is not aligned to the ", itemsize, "-byte elements of ",
                                     dtype_name(dtype), "; copy it to aligned memory first"));
  }
  // A bool is one byte holding 0 or 1; any other byte read as a bool is undefined
  // behaviour in every kernel. Host memory is checked here (device memory cannot be
  // read from the host: the header puts it on the producer).
  if (dtype == DType::Bool && device.is_cpu() && numel > 0) {
    const auto* bytes_at = static_cast<const unsigned char*>(data);
    const BadBool bad = first_non_bool_byte(bytes_at, shape, strides, span);
    if (bad.offset >= 0 && bad.element >= 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": element ", bad.element, " (in row-major order) of the bool tensor holds the byte ",
                                        static_cast<unsigned>(bytes_at[bad.offset]), "; a bool must be 0 or 1"));
    if (bad.offset >= 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": the bool tensor's elements overlap, and byte ", bad.offset,
                                        " of the memory they span holds ", static_cast<unsigned>(bytes_at[bad.offset]),
                                        "; a bool must be 0 or 1"));
  }
  Ref<Storage> storage = Storage::borrow(device, data, static_cast<size_t>(bytes), nullptr, nullptr);
  return Tensor(Ref<TensorImpl>::adopt(TensorImpl::create(std::move(storage), dtype, shape, strides, 0)));
}

int wrap_dim(int64_t dim, int ndim, const char* op) {
  int64_t n = ndim == 0 ? 1 : ndim;  // a 0-d tensor accepts dim 0 and -1, as PyTorch
  if (dim < -n || dim >= n)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                                      "], but got ", dim, ")"));
  return static_cast<int>(dim < 0 ? dim + n : dim);
}

}  // namespace dt

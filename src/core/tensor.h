// Tensor: a strided view (shape, strides in elements, offset) of a Storage, with a dtype.
// TensorImpl is the shared body; Tensor is the internal value type ops pass around.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "core/storage.h"

namespace dt {

constexpr int kMaxDims = DT_MAX_DIMS;

// A small fixed-capacity list of dimensions (no heap allocation). Only the first n
// entries are meaningful; copies move just those, which keeps tensor creation cheap.
struct Dims {
  int64_t v[kMaxDims];
  int32_t n = 0;
  Dims() = default;
  Dims(const Dims& o) : n(o.n) {
    for (int i = 0; i < n; ++i) v[i] = o.v[i];
  }
  Dims& operator=(const Dims& o) {
    n = o.n;
    for (int i = 0; i < n; ++i) v[i] = o.v[i];
    return *this;
  }
  Dims(const int64_t* p, size_t count);  // caller checked count <= kMaxDims
  Dims(std::initializer_list<int64_t> l);
  int64_t operator[](int i) const { return v[i]; }
  int64_t& operator[](int i) { return v[i]; }
  int size() const { return n; }
  void push(int64_t x) { v[n++] = x; }
  bool operator==(const Dims& o) const;
  bool operator!=(const Dims& o) const { return !(*this == o); }
  const int64_t* begin() const { return v; }
  const int64_t* end() const { return v + n; }
};
std::string dims_str(const Dims& d);  // "[2, 3]"
int64_t numel_of(const Dims& shape);   // throws INVALID_ARGUMENT on overflow / negative
Dims contiguous_strides(const Dims& shape);

struct AutogradMeta;  // core/autograd_meta.h

class TensorImpl : public RefCounted {
 public:
  // A new body with one reference, in malloc'd memory, or constructed at `place` (memory
  // inside the storage's own block, which then owns it: see destroy).
  static TensorImpl* create(Ref<Storage> storage, DType dtype, const Dims& shape, const Dims& strides,
                            int64_t offset, void* place = nullptr);
  static void destroy(TensorImpl* t);

  Ref<Storage> storage;
  Dims shape;
  Dims strides;   // in elements
  int64_t offset = 0;  // in elements
  int64_t numel = 0;
  DType dtype = DType::Float32;
  bool contiguous = true;  // computed once at creation (geometry never changes)
  bool in_storage_block = false;  // this body lives in its storage's block (tiny tensors)
  // A module's parameter or buffer, whose storage nn::Module::to replaces in place: read
  // only while pinned (core/move_lock.h). Set before the tensor is shared, then constant.
  bool movable = false;
  std::atomic<uint32_t> move_lock{0};  // core/move_lock.h; used only when movable
  AutogradMeta* autograd = nullptr;  // owned; set only for tensors autograd tracks

 private:
  TensorImpl() = default;
  ~TensorImpl() = default;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A fresh contiguous tensor (uninitialised).
  static Tensor empty(const Dims& shape, DType dtype, Device device);
  // The same from a given allocator (pinned host memory).
  static Tensor empty_from(Allocator& alloc, const Dims& shape, DType dtype, Device device);
  // A view of this tensor's storage with other geometry.
  Tensor view_as(const Dims& shape, const Dims& strides, int64_t offset) const;

  TensorImpl* impl() const { return impl_.get(); }
  TensorImpl* release_impl() { return impl_.release(); }
  bool defined() const { return static_cast<bool>(impl_); }

  const Dims& shape() const { return impl_->shape; }
  const Dims& strides() const { return impl_->strides; }
  int ndim() const { return impl_->shape.n; }
  int64_t size(int d) const { return impl_->shape.v[d]; }
  int64_t stride(int d) const { return impl_->strides.v[d]; }
  int64_t offset() const { return impl_->offset; }
  int64_t numel() const { return impl_->numel; }
  DType dtype() const { return impl_->dtype; }
  size_t itemsize() const { return dtype_size(impl_->dtype); }
  size_t nbytes() const { return static_cast<size_t>(impl_->numel) * itemsize(); }
  Device device() const { return impl_->storage->device(); }
  Storage* storage() const { return impl_->storage.get(); }
  bool is_contiguous() const { return impl_->contiguous; }
  // Address of element 0 (storage data + offset); meaningful only on the host for CPU.
  char* data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * static_cast<int64_t>(itemsize());
  }
  template <typename T> T* data_as() const { return reinterpret_cast<T*>(data()); }

 private:
  Ref<TensorImpl> impl_;
};

bool compute_contiguous(const Dims& shape, const Dims& strides);

// A tensor over memory someone else owns (dt_tensor_from_blob, DLPack imports). Checks
// that data is non-NULL and aligned to the element size when there are elements, and
// sizes the borrowing storage by the extent the layout reaches, every product checked
// (INVALID_ARGUMENT on overflow). Strides must be non-negative: callers refuse negative
// ones with their own status. The storage has no deleter yet; the caller hands it over
// once nothing else can fail. `fn` names the caller in messages.
Tensor borrow_tensor(const char* fn, void* data, Device device, DType dtype, const Dims& shape, const Dims& strides);

// Normalises a possibly negative dimension against ndim (throws INVALID_ARGUMENT).
int wrap_dim(int64_t dim, int ndim, const char* op);

}  // namespace dt

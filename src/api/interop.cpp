// DLPack in and out (src/io/dlpack.h), unversioned and versioned.
#include "api/shim.h"
#include "io/dlpack.h"

using namespace dt;
using namespace dt::api;

namespace {

// An import: the tensor first, then its handle; only then, when nothing can fail any
// more, does its storage take over the producer's deleter.
template <typename Managed, typename Import>
dt_status import_dlpack(Managed* managed, dt_tensor** out, const char* fn, Import import) {
  return guard([&] {
    require(out, fn, "out");
    require(managed, fn, "managed");
    Tensor t = import(managed, fn);
    Storage* storage = t.storage();
    dt_tensor* h = new_handle(std::move(t));
    io::adopt_dlpack(storage, managed);  // cannot fail: from here the deleter is the storage's to call
    *out = h;
  });
}

}  // namespace

DT_API dt_status dt_tensor_to_dlpack(const dt_tensor* t, struct DLManagedTensor** out) {
  return guard([&] {
    require(out, "dt_tensor_to_dlpack", "out");
    Borrowed x = tensor_arg(t, "dt_tensor_to_dlpack", "t");
    *out = io::to_dlpack(x);
  });
}

DT_API dt_status dt_tensor_from_dlpack(struct DLManagedTensor* managed, dt_tensor** out) {
  return import_dlpack(managed, out, "dt_tensor_from_dlpack", io::from_dlpack);
}

DT_API dt_status dt_tensor_to_dlpack_versioned(const dt_tensor* t, struct DLManagedTensorVersioned** out) {
  return guard([&] {
    require(out, "dt_tensor_to_dlpack_versioned", "out");
    Borrowed x = tensor_arg(t, "dt_tensor_to_dlpack_versioned", "t");
    *out = io::to_dlpack_versioned(x);
  });
}

DT_API dt_status dt_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned* managed, dt_tensor** out) {
  return import_dlpack(managed, out, "dt_tensor_from_dlpack_versioned", io::from_dlpack_versioned);
}

DT_API dt_status dt_tensor_is_read_only(const dt_tensor* t, int32_t* out) {
  return guard([&] {
    require(out, "dt_tensor_is_read_only", "out");
    Borrowed x = tensor_arg(t, "dt_tensor_is_read_only", "t");
    *out = x->storage()->read_only() ? 1 : 0;
  });
}

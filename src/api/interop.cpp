// DLPack in and out (src/io/dlpack.h), unversioned and versioned.
#include "api/shim.h"
#include "core/backend.h"
#include "core/stream.h"
#include "io/dlpack.h"

using namespace dt;
using namespace dt::api;

namespace {

// The thread's current stream of d waits for the work queued so far on the producer's
// stream (a value checked against what d's backend can have).
void order_after_producer(Device d, int64_t producer_stream, const char* fn) {
  Backend& b = backend_for(d);
  if (!b.has_streams()) {
    if (producer_stream != 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", device_str(d), " has no streams, so producer_stream must be -1 or 0, not ",
                                        producer_stream));
    return;
  }
  if (producer_stream == 0 || producer_stream < -1)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat(fn, ": producer_stream ", producer_stream, " is not a stream of ", device_str(d),
             producer_stream == 0 ? " (DLPack refuses 0 as ambiguous: 1 is the legacy default stream, 2 the per-thread one)"
                                  : " (-1 means no ordering)"));
  order_after_native(d, thread_native_stream(d), reinterpret_cast<void*>(static_cast<intptr_t>(producer_stream)));
}

// An import: the tensor first, then its handle; only then, when nothing can fail any
// more, does its storage take over the producer's deleter.
// producer_stream: DLPack's encoding (dt_tensor_from_dlpack_stream), or -1 for none.
template <typename Managed, typename Import>
dt_status import_dlpack(Managed* managed, dt_tensor** out, const char* fn, Import import,
                        int64_t producer_stream = -1) {
  return guard([&] {
    require(out, fn, "out");
    require(managed, fn, "managed");
    Tensor t = import(managed, fn);
    if (producer_stream != -1) order_after_producer(t.device(), producer_stream, fn);
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

DT_API dt_status dt_tensor_from_dlpack_stream(struct DLManagedTensor* managed, int64_t producer_stream,
                                              dt_tensor** out) {
  return import_dlpack(managed, out, "dt_tensor_from_dlpack_stream", io::from_dlpack, producer_stream);
}

DT_API dt_status dt_tensor_from_dlpack_versioned_stream(struct DLManagedTensorVersioned* managed,
                                                        int64_t producer_stream, dt_tensor** out) {
  return import_dlpack(managed, out, "dt_tensor_from_dlpack_versioned_stream", io::from_dlpack_versioned,
                       producer_stream);
}

DT_API dt_status dt_tensor_is_read_only(const dt_tensor* t, int32_t* out) {
  return guard([&] {
    require(out, "dt_tensor_is_read_only", "out");
    Borrowed x = tensor_arg(t, "dt_tensor_is_read_only", "t");
    *out = x->storage()->read_only() ? 1 : 0;
  });
}

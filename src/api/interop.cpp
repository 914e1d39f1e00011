// DLPack in and out (src/io/dlpack.h).
#include "api/shim.h"
#include "io/dlpack.h"

using namespace dt;
using namespace dt::api;

DT_API dt_status dt_tensor_to_dlpack(const dt_tensor* t, struct DLManagedTensor** out) {
  return guard([&] {
    require(out, "dt_tensor_to_dlpack", "out");
    Borrowed x = tensor_arg(t, "dt_tensor_to_dlpack", "t");
    *out = io::to_dlpack(x);
  });
}

DT_API dt_status dt_tensor_from_dlpack(struct DLManagedTensor* managed, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_tensor_from_dlpack";
    require(out, fn, "out");
    require(managed, fn, "managed");
    Tensor t = io::from_dlpack(managed, fn);
    Storage* storage = t.storage();
    dt_tensor* h = new_handle(std::move(t));
    io::adopt_dlpack(storage, managed);  // cannot fail: from here the deleter is the storage's to call
    *out = h;
  });
}

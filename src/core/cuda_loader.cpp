#include "core/cuda_loader.h"

#include "core/error.h"
#include "devtensor.h"

namespace dt::cuda {

const Status& status() {
  static const Status s{DT_CUDA_NOT_BUILT,
                        "devtensor was built without the CUDA backend (the CUDA plugin is not part of "
                        "this build yet)"};
  return s;
}

size_t device_count() { return 0; }  // no CUDA backend in this build yet

void require_available() {
  const Status& s = status();
  if (s.state != DT_CUDA_AVAILABLE) fail(DT_ERR_DEVICE_UNAVAILABLE, "CUDA is not available: " + s.reason);
}

}  // namespace dt::cuda

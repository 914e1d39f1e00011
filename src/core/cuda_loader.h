// The core's view of the CUDA backend. The core never links CUDA: the backend is the
// plugin libdevtensor-cuda.so, loaded on first use (issue #3). Until it is built, these
// report why CUDA is unavailable.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace dt::cuda {

struct Status {
  int32_t state;       // DT_CUDA_*
  std::string reason;  // a sentence for users
};

const Status& status();          // computed once
size_t device_count();           // 0 unless available
void require_available();        // throws DEVICE_UNAVAILABLE with the reason

}  // namespace dt::cuda

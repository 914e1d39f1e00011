// The core's view of the CUDA backend. The core never links CUDA: the backend is the
// plugin libdevtensor-cuda.so, dlopened on first use (next to libdevtensor.so, or the
// file DEVTENSOR_CUDA_PLUGIN names) and reached only through its dtp_api table
// (core/plugin_abi.h). When it cannot be used, status() says exactly why.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/plugin_abi.h"

namespace dt::cuda {

struct Status {
  int32_t state;       // DT_CUDA_*
  std::string reason;  // a sentence for users
};

const Status& status();    // loads and probes the plugin once, thread-safely
size_t device_count();     // 0 unless available
// Throws DEVICE_UNAVAILABLE with the reason; `requested` ("cuda:1"), when given, names
// the device the caller asked for.
void require_available(const char* requested = nullptr);
// The plugin's table; throws DEVICE_UNAVAILABLE with the reason when CUDA is unusable.
const dtp_api& api();

// Throws the plugin's error (code and message) unless code is DT_OK.
void check(int32_t code, const dtp_error& err);

}  // namespace dt::cuda

// Convolutions on cuDNN (conv_cudnn.cpp): the DTP_HOOK_CONV2D_* passes of the plugin ABI.
#pragma once
#include <cstdint>

#include "core/plugin_abi.h"

namespace dt::cudap {

// Whether cuDNN loaded (cudnn_library.h), so supports_op may announce the passes.
bool cudnn_convolutions_usable();
// Which of cuDNN's APIs the passes use, for build info: "classic convolution API" or
// "graph API with kept execution plans (DEVTENSOR_CUDNN_API=graph)".
const char* cudnn_convolution_api();
// One pass (a.i: the packed geometry); throws Failure, DT_ERR_NOT_SUPPORTED (nothing
// written) for what cuDNN cannot take.
void conv2d_cudnn(int32_t hook, const dtp_op_args& a);

}  // namespace dt::cudap

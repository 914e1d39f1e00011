// A module's state as a state dict (PyTorch's names, parameters then buffers) and loading
// one back: every key must exist and match in shape before anything is copied, so a bad
// state leaves the module unchanged.
#pragma once
#include <memory>

#include "io/state_dict.h"
#include "nn/module.h"

namespace dt::io {

// The module's own tensors (shared, not copied).
std::unique_ptr<StateDict> state_dict(const nn::Module& m);
// Copies sd's tensors into the module's (converting dtype and device). Missing or
// unexpected keys and shape mismatches are `code` (DT_ERR_FORMAT for files,
// DT_ERR_INVALID_ARGUMENT for state dicts) naming the key; `fn` prefixes messages.
void load_state_dict(nn::Module& m, const StateDict& sd, dt_status code, const char* fn);

}  // namespace dt::io

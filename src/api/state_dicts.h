// State-dict handles (dt_state_dict): how the C shim resolves and creates them, for
// state_dicts.cpp, safetensors.cpp and any other entry point that takes or returns one.
#pragma once
#include <memory>

#include "devtensor.h"
#include "io/state_dict.h"

namespace dt::api {

// The state dict behind a handle, borrowed for one call; INVALID_ARGUMENT when NULL,
// INVALID_HANDLE when stale, foreign or of another kind.
io::StateDict& state_dict_arg(const dt_state_dict* h, const char* fn, const char* param);
// Registers sd under a new handle (one reference) that owns it.
dt_state_dict* new_state_dict_handle(std::unique_ptr<io::StateDict> sd);

}  // namespace dt::api

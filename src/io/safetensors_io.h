// Saving and loading state dicts as safetensors files: file access, the write-then-rename
// of a save, and the memory mapping a CPU load borrows its tensors from.
#pragma once
#include <memory>
#include <string>

#include "core/device.h"
#include "io/state_dict.h"

namespace dt::io {

// Writes sd's tensors in insertion order, as contiguous little-endian bytes (copied to
// the host when needed), to a temporary file beside `path` that is then renamed over it:
// a failure never leaves a partial file. Errors: DT_ERR_IO (with strerror and the path),
// DT_ERR_INVALID_ARGUMENT (a name the format cannot hold), DT_ERR_NOT_SUPPORTED (a
// big-endian host). `fn` prefixes messages.
void save_safetensors(const StateDict& sd, const std::string& path, const char* fn);

// Reads a safetensors file, validating all of it before any tensor is made, into a new
// state dict whose tensors are on `device` (checked by the caller), in the order of their
// data offsets. On the CPU the tensors borrow a private mapping of the file (no copy).
// Errors: DT_ERR_IO, DT_ERR_FORMAT, DT_ERR_NOT_SUPPORTED (a dtype devtensor lacks, more
// than DT_MAX_DIMS dimensions, a big-endian host), DT_ERR_OUT_OF_MEMORY.
std::unique_ptr<StateDict> load_safetensors(const std::string& path, Device device, const char* fn);

}  // namespace dt::io

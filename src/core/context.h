// Process-wide settings: the default device and dtype (used only where the caller
// passes a DEFAULT sentinel) and the TF32 switch. Atomic, so any thread may read or set them.
#pragma once
#include "core/device.h"
#include "core/dtype.h"

namespace dt {

Device default_device();
void set_default_device(Device d);  // caller has checked d
DType default_dtype();
void set_default_dtype(DType t);    // caller has checked t is floating
// Whether CUDA float32 matmuls may use TF32 (off by default).
bool allow_tf32();
void set_allow_tf32(bool allow);
// DT_DTYPE_DEFAULT -> default dtype; throws INVALID_ARGUMENT for unknown codes.
DType resolve_dtype(dt_dtype code);
// Throws INVALID_ARGUMENT unless code is a real dtype (not the sentinel).
DType checked_dtype(dt_dtype code);

}  // namespace dt

// DLPack interop (https://dmlc.github.io/dlpack/): a tensor out as a DLManagedTensor (the
// 0.6 header Debian ships) or a DLManagedTensorVersioned (DLPack 1.x, dlpack_versioned.h)
// that keeps our storage alive until the consumer calls its deleter, and either one in as
// a tensor over the producer's memory, whose deleter runs once when the last tensor using
// that memory is gone. Zero-copy both ways. A versioned import flagged read-only makes a
// read-only storage, which refuses every write (Storage::begin_write); such a tensor
// leaves only as a versioned export carrying the same flag.
#pragma once
#include <dlpack/dlpack.h>

#include "io/dlpack_versioned.h"

#include "core/tensor.h"

namespace dt::io {

// A new DLManagedTensor viewing t (same data pointer, shape, strides in elements). The
// caller owns it and calls its deleter once. CUDA tensors are synchronised first, so a
// consumer on another stream sees finished data. A read-only tensor is NOT_SUPPORTED
// (the unversioned struct cannot say it is read-only).
DLManagedTensor* to_dlpack(const Tensor& t);
// The same as a DLPack 1.0 versioned tensor; flags READ_ONLY for a read-only tensor.
DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t);

// A tensor over managed's memory, every field checked; `fn` names the caller in messages.
// It does not own managed yet: once nothing else can fail (the handle exists), the caller
// hands managed to the tensor's storage with adopt_dlpack, whose release then calls the
// deleter once. On failure managed is untouched and its deleter is not called.
Tensor from_dlpack(DLManagedTensor* managed, const char* fn);
void adopt_dlpack(Storage* storage, DLManagedTensor* managed);
// The same for a versioned tensor: major version 1 only (NOT_SUPPORTED otherwise, nothing
// past the version field read); READ_ONLY makes the tensor's storage read-only.
Tensor from_dlpack_versioned(DLManagedTensorVersioned* managed, const char* fn);
void adopt_dlpack(Storage* storage, DLManagedTensorVersioned* managed);

}  // namespace dt::io

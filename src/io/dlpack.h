// DLPack interop (https://dmlc.github.io/dlpack/, the 0.6 header Debian ships): a tensor
// out as a DLManagedTensor that keeps our storage alive until the consumer calls its
// deleter, and a DLManagedTensor in as a tensor over the producer's memory, whose deleter
// runs once when the last tensor using that memory is gone. Zero-copy both ways.
#pragma once
#include <dlpack/dlpack.h>

#include "core/tensor.h"

namespace dt::io {

// A new DLManagedTensor viewing t (same data pointer, shape, strides in elements). The
// caller owns it and calls its deleter once. CUDA tensors are synchronised first, so a
// consumer on another stream sees finished data.
DLManagedTensor* to_dlpack(const Tensor& t);

// A tensor over managed's memory, every field checked; `fn` names the caller in messages.
// It does not own managed yet: once nothing else can fail (the handle exists), the caller
// hands managed to the tensor's storage with adopt_dlpack, whose release then calls the
// deleter once. On failure managed is untouched and its deleter is not called.
Tensor from_dlpack(DLManagedTensor* managed, const char* fn);
void adopt_dlpack(Storage* storage, DLManagedTensor* managed);

}  // namespace dt::io

package devtensor

// #include "shim.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// ToDLPack returns a new DLManagedTensor* (as an unsafe.Pointer to C memory) viewing t
// without a copy, for another framework to import. Whoever ends up holding it calls its
// deleter exactly once; until then it keeps t's memory alive, even after t.Close. See
// dt_tensor_to_dlpack.
func (t *Tensor) ToDLPack() (unsafe.Pointer, error) {
	h, err := t.handle("Tensor.ToDLPack")
	if err != nil {
		return nil, err
	}
	r := C.gdt_to_dlpack(h)
	runtime.KeepAlive(t)
	if err := mkerr("Tensor.ToDLPack", r.st, r.msg); err != nil {
		return nil, err
	}
	return r.p, nil
}

// FromDLPack makes a Tensor over the memory of managed, a DLManagedTensor* another
// framework produced, without a copy. On success devtensor owns managed and calls its
// deleter once, when the last tensor using the memory is released; on failure managed
// is still the caller's. See dt_tensor_from_dlpack.
func FromDLPack(managed unsafe.Pointer) (*Tensor, error) {
	r := C.gdt_from_dlpack(managed)
	return takeTensor("FromDLPack", r)
}

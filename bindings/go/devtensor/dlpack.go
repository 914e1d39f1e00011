package devtensor

// #include "shim.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// ToDLPack returns a new DLManagedTensor* (as an unsafe.Pointer to C memory) viewing t
// without a copy, for another framework to import. Whoever ends up holding it calls its
// deleter exactly once; until then it keeps t's memory alive, even after t.Close. A
// read-only tensor (IsReadOnly) fails with ErrNotSupported, since a DLManagedTensor
// cannot say so: use ToDLPackVersioned. See dt_tensor_to_dlpack.
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

// DLPack 1.x flags of a DLManagedTensorVersioned (its flags field), as DLPack's
// DLPACK_FLAG_BITMASK_READ_ONLY and DLPACK_FLAG_BITMASK_IS_COPIED.
const (
	DLPackFlagReadOnly uint64 = 1 << 0 // the consumer must not write the memory
	DLPackFlagIsCopied uint64 = 1 << 1 // the producer copied the data for this export
)

// ToDLPackVersioned is ToDLPack for DLPack 1.x: it returns a new
// DLManagedTensorVersioned* (an unsafe.Pointer to C memory) viewing t without a copy,
// with version 1.0 and flags DLPackFlagReadOnly when t is read-only (see IsReadOnly),
// else 0. Ownership is ToDLPack's: whoever ends up holding it calls its deleter exactly
// once, and until then it keeps t's memory alive, even after t.Close. It is the only way
// to export a read-only tensor (ToDLPack refuses one with ErrNotSupported). Errors:
// ErrClosed, ErrInvalidHandle, ErrOutOfMemory. Safe to call from any goroutine. See
// dt_tensor_to_dlpack_versioned.
func (t *Tensor) ToDLPackVersioned() (unsafe.Pointer, error) {
	const op = "Tensor.ToDLPackVersioned"
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_to_dlpack_versioned(h)
	runtime.KeepAlive(t)
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	return r.p, nil
}

// FromDLPackVersioned is FromDLPack for a DLManagedTensorVersioned* (DLPack 1.x) another
// framework produced: a Tensor over its memory, without a copy. On success devtensor owns
// managed and calls its deleter once, when the last tensor or view using the memory is
// released (on the thread of that release: the next call that can allocate, which
// releases the last tensor closed, a later Close, a flush such as ReleasePending, or the
// finalizer); on failure managed is still the caller's and its deleter has not been
// called. Only major version 1 is accepted
// (ErrNotSupported otherwise; nothing past the version is read). With DLPackFlagReadOnly
// set the Tensor is read-only: in-place ops (AddInPlace, AddScalarInPlace, ...), an
// optimizer step and CopyFromSlice on it or on its views fail with ErrInvalidArgument
// ("the tensor is read-only"), while out-of-place ops, ToSlice and To read it; Clone gives
// a writable copy. Other errors: as FromDLPack (ErrInvalidArgument for nil or a malformed
// tensor, ErrNotSupported for a dtype, device or layout devtensor lacks, ErrInvalidDevice,
// ErrDeviceUnavailable, ErrOutOfMemory). See dt_tensor_from_dlpack_versioned.
func FromDLPackVersioned(managed unsafe.Pointer) (*Tensor, error) {
	r := C.gdt_from_dlpack_versioned(managed)
	return takeTensor("FromDLPackVersioned", r)
}

// FromDLPackStream is FromDLPack ordered after the producer's stream: work queued
// afterwards on the calling thread's current stream of the tensor's device (the stream
// of the enclosing WithStream, else the default stream) waits for the work queued on
// producerStream so far, without the caller waiting. producerStream is encoded as
// DLPack's __dlpack__(stream=): for CUDA memory 1 is the legacy default stream, 2 the
// per-thread default stream, other values a cudaStream_t (Stream.NativeHandle of another
// library's stream), and 0 is refused as ambiguous; for host memory only -1 or 0 (no
// stream). -1 always means no ordering, as FromDLPack. Ownership: as FromDLPack (on
// failure managed is still the caller's). Errors: as FromDLPack, plus ErrInvalidArgument
// for a stream value the device cannot have, and ErrBackend. See
// dt_tensor_from_dlpack_stream.
func FromDLPackStream(managed unsafe.Pointer, producerStream int64) (*Tensor, error) {
	r := C.gdt_from_dlpack_stream(managed, C.int64_t(producerStream))
	return takeTensor("FromDLPackStream", r)
}

// FromDLPackVersionedStream is FromDLPackVersioned ordered after the producer's stream,
// as FromDLPackStream is FromDLPack: the same producerStream values, ownership and
// errors (plus FromDLPackVersioned's version check and read-only flag). See
// dt_tensor_from_dlpack_versioned_stream.
func FromDLPackVersionedStream(managed unsafe.Pointer, producerStream int64) (*Tensor, error) {
	r := C.gdt_from_dlpack_versioned_stream(managed, C.int64_t(producerStream))
	return takeTensor("FromDLPackVersionedStream", r)
}

// IsReadOnly reports whether t's memory is read-only: t (or the tensor it is a view of)
// came from FromDLPackVersioned with DLPackFlagReadOnly. See dt_tensor_is_read_only.
func (t *Tensor) IsReadOnly() (bool, error) {
	const op = "Tensor.IsReadOnly"
	h, err := t.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_is_read_only(h, &v)
	runtime.KeepAlive(t)
	return v != 0, resErr(op, r)
}

// Package dlpacktest is a testing helper of package devtensor: it builds DLPack 1.x
// DLManagedTensorVersioned structs in C memory, as a foreign producer would (with a
// deleter that counts its calls), and reads the fields of the ones devtensor exports.
// Go test files cannot use cgo, so this lives in a package of its own, imported only by
// devtensor's tests: programs that import devtensor neither link it nor need its header.
//
// It needs DLPack's header, <dlpack/dlpack.h> (Debian's libdlpack-dev), as building
// devtensor itself does. Not safe for anything but tests: no argument is validated.
package dlpacktest

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dlpack/dlpack.h>

#ifndef DLPACK_MAJOR_VERSION
// DLPack 1.0's versioned managed tensor, with the layout the 1.0 specification fixes
// (as devtensor's src/io/dlpack_versioned.h declares it). Debian's dlpack.h is DLPack
// 0.6, which lacks it; a dlpack.h of 1.0 or later defines DLPACK_MAJOR_VERSION and
// declares it itself.
typedef struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#endif

// A producer's tensor: the struct first (so a DLManagedTensorVersioned* is the block),
// its shape, and a counter of deleter calls (C memory the test owns). data is malloc'd.
typedef struct {
  DLManagedTensorVersioned m;
  int64_t shape[8];
  int64_t* deleted;
} gdtt_block;

static void gdtt_free(DLManagedTensorVersioned* m) {
  free(m->dl_tensor.data);
  free(m);
}
// The deleter: counts, then frees everything but the counter. It may run on any thread.
static void gdtt_deleter(DLManagedTensorVersioned* m) {
  gdtt_block* b = (gdtt_block*)m;
  __atomic_fetch_add(b->deleted, 1, __ATOMIC_SEQ_CST);
  gdtt_free(m);
}
static int64_t gdtt_load(const int64_t* c) { return __atomic_load_n(c, __ATOMIC_SEQ_CST); }

// A contiguous float32 CPU tensor over a copy of vals (n of them); NULL if out of memory.
static DLManagedTensorVersioned* gdtt_new_f32(const float* vals, size_t n, const int64_t* shape,
                                              int32_t ndim, uint32_t major, uint32_t minor,
                                              uint64_t flags, int64_t* deleted) {
  gdtt_block* b = (gdtt_block*)calloc(1, sizeof *b);
  void* data = malloc(n ? n * sizeof(float) : 1);
  if (!b || !data) { free(b); free(data); return NULL; }
  if (n) memcpy(data, vals, n * sizeof(float));
  for (int32_t i = 0; i < ndim; ++i) b->shape[i] = shape[i];
  b->deleted = deleted;
  b->m.version.major = major;
  b->m.version.minor = minor;
  b->m.manager_ctx = b;
  b->m.deleter = gdtt_deleter;
  b->m.flags = flags;
  b->m.dl_tensor.data = data;
  b->m.dl_tensor.device.device_type = kDLCPU;
  b->m.dl_tensor.device.device_id = 0;
  b->m.dl_tensor.ndim = ndim;
  b->m.dl_tensor.dtype.code = kDLFloat;
  b->m.dl_tensor.dtype.bits = 32;
  b->m.dl_tensor.dtype.lanes = 1;
  b->m.dl_tensor.shape = b->shape;
  b->m.dl_tensor.strides = NULL;
  b->m.dl_tensor.byte_offset = 0;
  return &b->m;
}
static void gdtt_call_deleter(DLManagedTensorVersioned* m) { if (m->deleter) m->deleter(m); }
*/
import "C"

import "unsafe"

// The flag bits of DLManagedTensorVersioned.flags, from the C declaration.
const (
	FlagReadOnly uint64 = C.DLPACK_FLAG_BITMASK_READ_ONLY
	FlagIsCopied uint64 = C.DLPACK_FLAG_BITMASK_IS_COPIED
)

// Counter counts deleter calls; it is C memory, as a deleter may run on any thread.
type Counter struct{ p *C.int64_t }

// NewCounter returns a zeroed Counter; Free it after the last deleter it counts has run.
func NewCounter() *Counter {
	p := (*C.int64_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int64_t(0)))))
	return &Counter{p}
}

// Count is the number of deleter calls so far.
func (c *Counter) Count() int { return int(C.gdtt_load(c.p)) }

// Free releases the counter's memory.
func (c *Counter) Free() { C.free(unsafe.Pointer(c.p)) }

// NewFloat32 returns a new DLManagedTensorVersioned* (C memory) as a foreign producer
// would make it: a contiguous float32 CPU tensor of the given shape (at most 8
// dimensions) over a copy of vals, with the given version and flags. Its deleter adds one
// to deleted and frees the tensor; nil when out of memory.
func NewFloat32(vals []float32, shape []int64, major, minor uint32, flags uint64, deleted *Counter) unsafe.Pointer {
	if len(shape) > 8 {
		return nil
	}
	var vp *C.float
	if len(vals) > 0 {
		vp = (*C.float)(unsafe.Pointer(&vals[0]))
	}
	var sp *C.int64_t
	if len(shape) > 0 {
		sp = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	m := C.gdtt_new_f32(vp, C.size_t(len(vals)), sp, C.int32_t(len(shape)), C.uint32_t(major),
		C.uint32_t(minor), C.uint64_t(flags), deleted.p)
	return unsafe.Pointer(m)
}

// Free frees a tensor from NewFloat32 that nobody took, without calling its deleter.
func Free(p unsafe.Pointer) { C.gdtt_free((*C.DLManagedTensorVersioned)(p)) }

// Delete calls p's deleter, as the consumer of an export does when done with it.
func Delete(p unsafe.Pointer) { C.gdtt_call_deleter((*C.DLManagedTensorVersioned)(p)) }

// Header is what a DLManagedTensorVersioned says about itself.
type Header struct {
	Major, Minor         uint32
	Flags                uint64
	HasDeleter           bool
	DeviceType, DeviceID int32
	Code, Bits           uint8
	Lanes                uint16
	Shape                []int64
	Strides              []int64 // nil when the struct's strides are NULL (contiguous)
	ByteOffset           uint64
	Data                 unsafe.Pointer
}

// Read reads p's fields through the C declaration.
func Read(p unsafe.Pointer) Header {
	m := (*C.DLManagedTensorVersioned)(p)
	t := &m.dl_tensor
	h := Header{
		Major:      uint32(m.version.major),
		Minor:      uint32(m.version.minor),
		Flags:      uint64(m.flags),
		HasDeleter: m.deleter != nil,
		DeviceType: int32(t.device.device_type),
		DeviceID:   int32(t.device.device_id),
		Code:       uint8(t.dtype.code),
		Bits:       uint8(t.dtype.bits),
		Lanes:      uint16(t.dtype.lanes),
		ByteOffset: uint64(t.byte_offset),
		Data:       t.data,
	}
	n := int(t.ndim)
	if n > 0 {
		h.Shape = make([]int64, n)
		for i, v := range unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), n) {
			h.Shape[i] = v
		}
		if t.strides != nil {
			h.Strides = make([]int64, n)
			for i, v := range unsafe.Slice((*int64)(unsafe.Pointer(t.strides)), n) {
				h.Strides[i] = v
			}
		}
	} else {
		h.Shape = []int64{}
	}
	return h
}

// Float32s copies n float32 elements from the start of a CPU tensor's memory
// (data + byte_offset), contiguous as laid out there.
func Float32s(p unsafe.Pointer, n int) []float32 {
	h := Read(p)
	out := make([]float32, n)
	if n > 0 {
		copy(out, unsafe.Slice((*float32)(unsafe.Add(h.Data, h.ByteOffset)), n))
	}
	return out
}

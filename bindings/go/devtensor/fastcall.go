package devtensor

// #include "fastcall.h"
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// The fast path. A cgo call hands the goroutine's P back to the scheduler and takes it
// again (entersyscall/exitsyscall): about 40 ns on a 2-vCPU VM, more under load, and
// most of what a tiny op costs through this binding. That hand-over exists so that a
// long C call does not hold up the other goroutines and the collector: a goroutine in
// C cannot be preempted, and a stop-the-world phase waits for it. A call that is
// certain to be short does not need it, and Go's runtime.asmcgocall (the switch to the
// system stack that every cgo call makes) runs it in about 5 ns.
//
// So the op-table methods (binary, scalar, unary and in-place ops, reductions: ops.go)
// take the fast path when every tensor they touch is SMALL: a Tensor whose small field
// holds its shape, recorded because the binding itself made it on the CPU (a constructor
// given CPU(i), FromSlice, or a fast op), with at most fastMaxNumel elements in at most
// fastMaxDims dims, and because SetRequiresGrad never marked it. A binary op's result
// shape is the broadcast of its operands', computed here without asking the library;
// it must be small too. Such an op runs no thread pool, records no autograd graph and
// allocates a few KiB: about a microsecond for an add, 18 us for the slowest measured
// (tanh of 1024 float64, on a 2-vCPU Xeon VM). Everything else (other devices, larger
// tensors, module parameters, which can move to another device in place, tensors from
// views, To, Forward...) takes the ordinary cgo call. The constructors of small CPU
// tensors (Empty, Zeros, Ones, Full, FromSlice; not Rand and Randn, whose generator a
// large draw elsewhere may hold) and the reads of a small tensor (Item, ToSlice) take the
// fast path too, and Shape, Dim and Numel answer from the record with no call at all (a
// tensor's shape never changes). Closing a small Tensor puts its handle in the small release
// slot (lifetime.go), which only the fast trampolines and cgo calls release: the other
// slot may hold a tensor whose release frees an autograd graph or a large buffer.
//
// The trampolines (fastcall.c) call the same C helpers as the cgo calls, so results and
// errors are the same either way; the tests run the package with the fast path (the
// default build) and without it (-race, and the devtensor_nofastcall tag), and
// TestFastPathMatchesCgo compares both in one process. The fast path is built on amd64
// and arm64 with Go 1.19 to 1.22 (fastcall_on.go); elsewhere, under the race detector
// or the -msan and -asan instrumentation (which follow cgo calls), and with -tags
// devtensor_nofastcall, fastcallOn is false and every call is a cgo call.

const (
	fastMaxNumel = 1024 // a small tensor's elements, at most
	fastMaxDims  = 4    // and its dims
	fastDimBits  = 11   // bits per dim in a shape record (a dim is at most 1024)
	fastNdimPos  = fastMaxDims * fastDimBits
	fastValid    = uint64(1) << 63
)

// A shape record (the small field) packs a small tensor's shape: bit 63 set, the ndim
// at bit fastNdimPos, dim i at bit i*fastDimBits. 0 means "not small".

// smallOf returns t's shape record (0: not small, or nil).
func smallOf(t *Tensor) uint64 {
	if t == nil {
		return 0
	}
	return atomic.LoadUint64(&t.small)
}

// shapeRecord packs shape when it is small (0 otherwise: too many dims or elements, or
// a negative dim, which the constructor refuses anyway).
func shapeRecord(shape []int64) uint64 {
	if len(shape) > fastMaxDims {
		return 0
	}
	r := fastValid | uint64(len(shape))<<fastNdimPos
	n := int64(1)
	for i, d := range shape {
		if d < 0 || d > fastMaxNumel {
			return 0
		}
		if n *= d; n > fastMaxNumel {
			return 0
		}
		r |= uint64(d) << (i * fastDimBits)
	}
	return r
}

// recordDims unpacks a shape record.
func recordDims(r uint64) (nd int, dims [fastMaxDims]int64) {
	nd = int(r>>fastNdimPos) & 7
	for i := 0; i < nd; i++ {
		dims[i] = int64(r>>(i*fastDimBits)) & (1<<fastDimBits - 1)
	}
	return nd, dims
}

// broadcastRecord is the record of the broadcast of two small shapes (PyTorch's rule:
// dims aligned from the right, each pair equal or one of them 1), or 0 when they do
// not broadcast (the cgo call then reports the error) or the result is not small.
func broadcastRecord(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a == b {
		return a
	}
	na, da := recordDims(a)
	nb, db := recordDims(b)
	n := na
	if nb > n {
		n = nb
	}
	var out [fastMaxDims]int64
	for i := 0; i < n; i++ { // i counts from the right
		x, y := int64(1), int64(1)
		if i < na {
			x = da[na-1-i]
		}
		if i < nb {
			y = db[nb-1-i]
		}
		switch {
		case x == y || y == 1:
			out[n-1-i] = x
		case x == 1:
			out[n-1-i] = y
		default:
			return 0
		}
	}
	return shapeRecord(out[:n])
}

// markSmallIfCPU records a constructor's result as small when it is on the CPU and
// small.
func markSmallIfCPU(t *Tensor, shape []int64, device Device) *Tensor {
	if t != nil && device.Type == DeviceCPU {
		t.small = shapeRecord(shape) // not yet published: a plain store
	}
	return t
}

// fastTensor is takeTensor for a fast op's result, which gets shape record rec.
func fastTensor(op string, r C.gdt_tres, rec uint64) (*Tensor, error) {
	t, err := takeTensor(op, r)
	if t != nil {
		t.small = rec // not yet published: a plain store
	}
	return t, err
}

// fastNoop is an empty fast call, for the benchmarks.
// recordNumel is the element count of shape record r.
func recordNumel(r uint64) int {
	nd, dims := recordDims(r)
	n := 1
	for _, d := range dims[:nd] {
		n *= int(d)
	}
	return n
}

// fastShape is the shape record of a constructor's result that the fast path may make
// (a small shape on a CPU device, in a build with the fast path), 0 otherwise.
func fastShape(shape []int64, device Device) uint64 {
	if !fastcallOn || device.Type != DeviceCPU {
		return 0
	}
	return shapeRecord(shape)
}

// fastMake makes a small CPU tensor with one fast call: x carries the constructor's kind
// and its own inputs (the value, the data), fastMake the shape, dtype and device. The
// result is recorded small (rec: its shape), as the cgo constructors' is.
func fastMake(op string, x C.gdt_fast_make_args, shape []int64, dtype DType, device Device, rec uint64) (*Tensor, error) {
	x.shape, x.ndim = shapeArg(shape)
	x.dtype, x.device = C.dt_dtype(dtype), device.c()
	fastcall(unsafe.Pointer(C.gdt_fast_make), unsafe.Pointer(&x))
	runtime.KeepAlive(shape)
	return fastTensor(op, x.r, rec)
}

// fastToSlice is ToSlice for a small tensor (rec: its shape record): one fast call checks
// the dtype and copies the elements.
func fastToSlice[T Element](op string, t *Tensor, rec uint64) ([]T, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	var z T
	want := DTypeOf[T]()
	out := make([]T, recordNumel(rec))
	x := C.gdt_fast_read_args{a: h, n: C.size_t(uintptr(len(out)) * unsafe.Sizeof(z)), want: C.int32_t(want)}
	if len(out) > 0 {
		x.dst = unsafe.Pointer(&out[0])
	}
	fastcall(unsafe.Pointer(C.gdt_fast_to_host), unsafe.Pointer(&x))
	runtime.KeepAlive(t)
	if err := resErr(op, x.r); err != nil {
		return nil, err
	}
	if got := DType(x.got); got != want {
		return nil, sliceDTypeErr(op, got, want)
	}
	return out, nil
}

// shapeFromLibrary is Shape without the shape record, for the tests.
func (t *Tensor) shapeFromLibrary() ([]int64, error) {
	h, err := t.handle("test")
	if err != nil {
		return nil, err
	}
	return t.libraryShape("test", h)
}

func fastNoop() {
	var x C.gdt_fast_args
	fastcall(unsafe.Pointer(C.gdt_fast_noop), unsafe.Pointer(&x))
}

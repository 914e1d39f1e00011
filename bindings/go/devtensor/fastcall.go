package devtensor

// #include "fastcall.h"
import "C"

import (
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
// So the op-table methods (binary, scalar, unary and in-place ops, reductions: ops.go) take the
// fast path when every tensor they touch is SMALL: a Tensor whose small field records
// that the binding itself made it on the CPU (a constructor given CPU(i), or a fast op)
// with at most fastMaxNumel elements, and that SetRequiresGrad never marked. An op on
// such tensors runs no thread pool, records no autograd graph and allocates a few KiB:
// well under a microsecond. A binary op goes fast only when the product of the
// operands' sizes bounds its broadcast result by fastMaxBroadcast elements. Everything
// else (other devices, larger tensors, module parameters, which can move to another
// device in place, tensors from views, To, Forward...) takes the ordinary cgo call.
// Closing a small Tensor puts its handle in the small release slot (lifetime.go), which
// only the fast trampolines release: the other slot may hold a tensor whose release
// frees an autograd graph or a large buffer.
//
// The trampolines (fastcall.c) call the same C helpers as the cgo calls, so results and
// errors are the same either way; the tests run the package with the fast path (the
// default build) and without it (-race, and the devtensor_nofastcall tag), and
// TestFastPathMatchesCgo compares both in one process. The fast path is built on amd64
// and arm64 with Go 1.19 to 1.22 (fastcall_on.go); elsewhere, under the race detector,
// and with -tags devtensor_nofastcall, fastcallOn is false and every call is a cgo call.

const (
	fastMaxNumel     = C.GDT_FAST_MAX_NUMEL // a small tensor's elements, at most
	fastMaxBroadcast = 1 << 16              // na*nb of a fast binary op, at most
)

// smallOf returns the record of a Tensor's size for the fast path: n+1 when it is small,
// with n its element count or a bound on it (a binary op's result records the product
// of its operands' records where that is small: fastcall.c), 0 otherwise (or for nil).
func smallOf(t *Tensor) uint32 {
	if t == nil {
		return 0
	}
	return atomic.LoadUint32(&t.small)
}

// smallRecord is the small field for a CPU tensor of n elements the binding made
// outside autograd.
func smallRecord(n uint64) uint32 {
	if n > fastMaxNumel {
		return 0
	}
	return uint32(n) + 1
}

// shapeNumel is the element count of shape (1 for a 0-d tensor), saturated above
// fastMaxNumel; negative dims count as large (the constructor fails on them).
func shapeNumel(shape []int64) uint64 {
	n := uint64(1)
	for _, d := range shape {
		if d < 0 || d > fastMaxNumel {
			return fastMaxNumel + 1
		}
		n *= uint64(d)
		if n > fastMaxNumel {
			return fastMaxNumel + 1
		}
	}
	return n
}

// markSmallIfCPU records a constructor's result as small when it is on the CPU and
// small.
func markSmallIfCPU(t *Tensor, shape []int64, device Device) *Tensor {
	if t != nil && device.Type == DeviceCPU {
		t.small = smallRecord(shapeNumel(shape)) // not yet published: a plain store
	}
	return t
}

// fastTensor turns a fast op's result into a Tensor (or the error), recording its size
// (or the trampoline's bound on it).
func fastTensor(op string, x *C.gdt_fast_args) (*Tensor, error) {
	if err := mkerr(op, x.r.st, x.r.msg); err != nil {
		return nil, err
	}
	t := newTensor(x.r.t)
	t.small = smallRecord(uint64(x.nout))
	return t, nil
}

// fastBinaryOK reports whether a binary op on operands with these records may go fast.
func fastBinaryOK(sa, sb uint32) bool {
	return fastcallOn && sa != 0 && sb != 0 && uint64(sa-1)*uint64(sb-1) <= fastMaxBroadcast
}

// fastNoop is an empty fast call, for the benchmarks.
func fastNoop() {
	var x C.gdt_fast_args
	fastcall(unsafe.Pointer(C.gdt_fast_noop), unsafe.Pointer(&x))
}

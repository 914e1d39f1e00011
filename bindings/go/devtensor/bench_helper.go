package devtensor

// #include "shim.h"
// static inline int gdt_bench_noop(int x) { return x + 1; }
// /* Tensor.Add's cgo call without the release slot: rel (the previous result) is passed
//  * in and released first, as gdt_take_slot would. */
// static inline gdt_tres gdt_bench_add_releasing(uintptr_t a, uintptr_t b, uintptr_t rel) {
//   if (rel) gdt_release_counted(rel);
//   dt_tensor* o = NULL; dt_status st = dt_add((const dt_tensor*)a, (const dt_tensor*)b, &o);
//   return gdt_tr(st, o);
// }
import "C"

import (
	"runtime"
	"sync/atomic"
)

// benchCAdd runs n × (dt_add + dt_tensor_release) inside ONE cgo call: the pure-C cost
// of a tiny op, for BenchmarkAdd4 to compare with the Go binding's per-op cost.
func benchCAdd(a, b *Tensor, n int) error {
	ah, err := a.handle("benchCAdd")
	if err != nil {
		return err
	}
	bh, err := b.handle("benchCAdd")
	if err != nil {
		return err
	}
	r := C.gdt_bench_add(ah, bh, C.long(n))
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return resErr("benchCAdd", r)
}

// benchCAddInPlace runs n × dt_add_(a, b) inside ONE cgo call: the pure-C cost of a
// tiny in-place op, for BenchmarkAddInPlace4.
func benchCAddInPlace(a, b *Tensor, n int) error {
	ah, err := a.handle("benchCAddInPlace")
	if err != nil {
		return err
	}
	bh, err := b.handle("benchCAddInPlace")
	if err != nil {
		return err
	}
	r := C.gdt_bench_add_inplace(ah, bh, C.long(n))
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return resErr("benchCAddInPlace", r)
}

// rawAddReleasing is Tensor.Add's one cgo call with nothing around it: it releases rel
// (the previous result) and returns the new sum's handle, as the release slot makes
// Add + Close do.
func rawAddReleasing(a, b *Tensor, rel uintptr) (uintptr, error) {
	r := C.gdt_bench_add_releasing(C.uintptr_t(atomic.LoadUintptr(&a.h)),
		C.uintptr_t(atomic.LoadUintptr(&b.h)), C.uintptr_t(rel))
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	if err := mkerr("rawAddReleasing", r.st, r.msg); err != nil {
		return 0, err
	}
	return uintptr(r.t), nil
}

// releaseRaw releases a handle from rawAddReleasing.
func releaseRaw(h uintptr) { C.gdt_release_counted(C.uintptr_t(h)) }

// cgoNoop is one cgo call that does nothing: the floor under any binding's per-op cost.
func cgoNoop(i int) int { return int(C.gdt_bench_noop(C.int(i))) }

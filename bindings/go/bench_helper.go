package devtensor

// #include "shim.h"
// static inline int gdt_bench_noop(int x) { return x + 1; }
import "C"

import "runtime"

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

// rawAdd does what Tensor.Add + Close do in cgo calls (two of them), without the Go
// Tensor wrapper and its finalizer: the breakdown of BenchmarkAdd4's overhead.
func rawAdd(a, b *Tensor) error {
	r := C.gdt_binary(C.GDT_ADD, a.h, b.h)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	if err := mkerr("rawAdd", r.st, r.msg); err != nil {
		return err
	}
	return resErr("rawAdd", C.gdt_release(r.t))
}

// cgoNoop is one cgo call that does nothing: the floor under any binding's per-op cost.
func cgoNoop(i int) int { return int(C.gdt_bench_noop(C.int(i))) }

//go:build (amd64 || arm64) && go1.19 && !go1.23 && !race && !msan && !asan && !devtensor_nofastcall

package devtensor

import "unsafe"

// fastcallOn: this build has the fast path (fastcall.go).
const fastcallOn = true

// asmcgocall is the runtime's switch to the system stack that runtime.cgocall makes
// between entersyscall and exitsyscall: fn(arg) with the C calling convention, on the
// thread's g0 stack. arg does not escape: the goroutine's stack cannot move while fn
// runs, since no Go code runs on it until fn returns.
//
//go:linkname asmcgocall runtime.asmcgocall
//go:noescape
func asmcgocall(fn, arg unsafe.Pointer) int32

// fastcall runs the C function fn(arg) on the system stack without the cgo call's
// hand-over to the scheduler: only for the short trampolines of fastcall.c.
func fastcall(fn, arg unsafe.Pointer) { asmcgocall(fn, arg) }

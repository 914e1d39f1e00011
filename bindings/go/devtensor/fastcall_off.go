//go:build !((amd64 || arm64) && go1.19 && !go1.23 && !race && !msan && !asan && !devtensor_nofastcall)

package devtensor

// #include "fastcall.h"
import "C"

import "unsafe"

// fastcallOn: this build has no fast path (fastcall.go); every call is a cgo call.
const fastcallOn = false

// fastcall is the fast path's call made as an ordinary cgo call; only the benchmarks'
// fastNoop reaches it in this build (the ops test fastcallOn first).
func fastcall(fn, arg unsafe.Pointer) { C.gdt_fast_call(fn, arg) }

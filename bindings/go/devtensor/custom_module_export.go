package devtensor

// The Go side of the C library's dt_module_forward_fn and dt_module_free_fn for
// NewModule (custom_module.go). A file with //export may only declare in its preamble
// (cgo's rule), so the trampolines that call these live in custom_module_shim.h.

// #include <stddef.h>
// #include <stdint.h>
import "C"

import (
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// gdtModuleForwardCall runs the Go function behind key on the handles in hs (self's,
// then n inputs'), each a reference the Go wrappers own for the call; it writes back in
// hs what is left to release, the output's reference in *out, and for a failure a
// malloc'd message in *msg (the trampoline sets it as the thread's error message and
// frees it). It never panics: the function's panics are recovered (moduleForward.call).
//
//export gdtModuleForwardCall
func gdtModuleForwardCall(key C.uintptr_t, hs *C.uintptr_t, n C.size_t, out *C.uintptr_t, msg **C.char) C.int32_t {
	f := cgo.Handle(key).Value().(*moduleForward)
	st, o, m := f.run(unsafe.Slice(hs, int(n)+1))
	*out = o
	if m != "" {
		*msg = C.CString(m)
	}
	return C.int32_t(st)
}

// gdtModuleForwardFree lets the Go function behind key go: the module and its replicas
// are gone.
//
//export gdtModuleForwardFree
func gdtModuleForwardFree(key C.uintptr_t) {
	cgo.Handle(key).Delete()
	atomic.AddInt64(&liveModuleForwards, -1)
}

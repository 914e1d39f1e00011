package devtensor

// The Go side of the C library's dt_lr_lambda_fn and dt_lr_lambda_free_fn for
// NewLambdaLR and NewMultiplicativeLR (lr_lambda.go). A file with //export may only
// declare in its preamble (cgo's rule), so the trampolines that call these live in
// lr_scheduler_shim.h.

// #include <stdint.h>
import "C"

import (
	"fmt"
	"math"
	"runtime/cgo"
	"sync/atomic"
)

// gdtLRLambdaCall runs the Go function behind key for epoch. A panic in it is recovered
// and kept for the error the step returns; the C library sees NaN, which fails the
// step and changes nothing.
//
//export gdtLRLambdaCall
func gdtLRLambdaCall(epoch C.int64_t, key C.uintptr_t) (factor C.double) {
	f := cgo.Handle(key).Value().(*lrLambda)
	f.panicked.Store("")
	defer func() {
		if r := recover(); r != nil {
			f.panicked.Store(fmt.Sprint(r))
			factor = C.double(math.NaN())
		}
	}()
	return C.double(f.fn(int64(epoch)))
}

// gdtLRLambdaFree lets the Go function behind key go: the scheduler was released for
// the last time.
//
//export gdtLRLambdaFree
func gdtLRLambdaFree(key C.uintptr_t) {
	cgo.Handle(key).Delete()
	atomic.AddInt64(&liveLRLambdas, -1)
}

package devtensor

// #include "lr_scheduler_shim.h"
import "C"

import (
	"runtime/cgo"
	"sync/atomic"
)

// lrLambda is the Go function of a LambdaLR or MultiplicativeLR, reached from C through
// a cgo.Handle (lr_lambda_export.go), and what its last call's panic said.
type lrLambda struct {
	fn       func(epoch int64) float64
	panicked atomic.Value // string: what its last call panicked with ("" if it returned)
}

// explain adds to err (a failed step or construction) the panic that caused it, if the
// function panicked.
func (f *lrLambda) explain(err error) error {
	if f == nil || err == nil {
		return err
	}
	p, _ := f.panicked.Swap("").(string)
	if e, ok := err.(*Error); ok && p != "" {
		e.Msg += " (the function panicked: " + p + ")"
	}
	return err
}

// liveLRLambdas counts the Go functions the C library may still call: made by
// newLambdaScheduler, let go by gdtLRLambdaFree (the tests check it returns to zero).
var liveLRLambdas int64

func newLambdaScheduler(op string, opt *Optimizer, fn func(epoch int64) float64, multiplicative bool) (*LRScheduler, error) {
	if fn == nil {
		return nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: "fn is nil"}
	}
	f := &lrLambda{fn: fn}
	key := cgo.NewHandle(f)
	atomic.AddInt64(&liveLRLambdas, 1)
	s, err := newLRScheduler(op, opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_lambda_lr(o, C.uintptr_t(key), cBool(multiplicative))
	})
	if err != nil {
		key.Delete() // the C library frees it only once a scheduler holds it
		atomic.AddInt64(&liveLRLambdas, -1)
		return nil, f.explain(err)
	}
	s.fns = []*lrLambda{f}
	return s, nil
}

// explainPanics adds to err (a failed step or construction) the panic of whichever of
// fns caused it, and clears what each kept.
func explainPanics(fns []*lrLambda, err error) error {
	for _, f := range fns {
		err = f.explain(err)
	}
	return err
}

// NewLambdaLR is torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=fn) (dt_lambda_lr_new):
// the rate at each epoch is the initial rate times fn(epoch). Hugging Face's warm-up
// schedules are LambdaLRs; get_linear_schedule_with_warmup(opt, warmup, total) is
//
//	NewLambdaLR(opt, func(e int64) float64 {
//		if e < warmup {
//			return float64(e) / float64(warmup)
//		}
//		return math.Max(0, float64(total-e)/float64(total-warmup))
//	})
//
// fn is called for epoch 0 before NewLambdaLR returns, then once per Step, on the
// goroutine that steps, one call at a time. It must return a finite number that leaves
// the rate >= 0: anything else, or a panic (recovered), fails that step with
// ErrInvalidArgument and changes nothing. It must not call the LRScheduler methods or
// make a scheduler (they fail there: they could wait on the scheduler being stepped).
// The scheduler holds fn until it is closed. Its StateDict holds base_lr, last_epoch
// and last_lr, not fn (as PyTorch leaves a plain function out of its own). The caller
// owns the LRScheduler and must Close it. Errors: as NewStepLR's (a nil fn; what fn
// returned for epoch 0).
func NewLambdaLR(opt *Optimizer, fn func(epoch int64) float64) (*LRScheduler, error) {
	return newLambdaScheduler("NewLambdaLR", opt, fn, false)
}

// NewMultiplicativeLR is torch.optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=fn)
// (dt_multiplicative_lr_new): each Step from epoch 1 on multiplies the rate by
// fn(epoch); making it leaves the rate as it is, without calling fn. Otherwise as
// NewLambdaLR.
func NewMultiplicativeLR(opt *Optimizer, fn func(epoch int64) float64) (*LRScheduler, error) {
	return newLambdaScheduler("NewMultiplicativeLR", opt, fn, true)
}

package devtensor

// #include "nn_shim.h"
import "C"

import (
	"runtime"
	"sync/atomic"
)

// Optimizer updates a set of parameters from their gradients (SGD, Adam, AdamW). Close
// it when done. Close may be called from several goroutines at once (exactly one
// releases), but must not race other use of the optimizer. An Optimizer must not be
// copied by value (go vet reports a copy): share the *Optimizer.
type Optimizer struct {
	_ noCopy  // go vet: an Optimizer must not be copied (lifetime.go)
	h uintptr // the dt_optimizer* (C memory), 0 once closed; read with atomic.LoadUintptr
}

func newOptimizer(op string, params []*Tensor, create func(p *C.uintptr_t, n C.size_t) C.gdt_hres) (*Optimizer, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	hs := make([]C.uintptr_t, len(params))
	for i, t := range params {
		var err error
		if hs[i], err = t.handle(op); err != nil {
			return nil, err
		}
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	r := create(p, C.size_t(len(hs)))
	runtime.KeepAlive(params)
	runtime.KeepAlive(hs)
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	o := &Optimizer{h: uintptr(r.h)}
	runtime.SetFinalizer(o, func(o *Optimizer) {
		if h := atomic.SwapUintptr(&o.h, 0); h != 0 {
			C.gdt_optimizer_release_quiet(C.uintptr_t(h))
		}
	})
	return o, nil
}

// SGD is torch.optim.SGD over params.
func SGD(params []*Tensor, lr, momentum, dampening, weightDecay float64, nesterov bool) (*Optimizer, error) {
	nest := C.int32_t(0)
	if nesterov {
		nest = 1
	}
	return newOptimizer("SGD", params, func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_sgd(p, n, C.double(lr), C.double(momentum), C.double(dampening), C.double(weightDecay), nest)
	})
}

// Adam is torch.optim.Adam; AdamW (decoupled weight decay) is Adam with decoupled true.
func Adam(params []*Tensor, lr, beta1, beta2, eps, weightDecay float64, decoupled bool) (*Optimizer, error) {
	dec := C.int32_t(0)
	if decoupled {
		dec = 1
	}
	return newOptimizer("Adam", params, func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_adam(p, n, C.double(lr), C.double(beta1), C.double(beta2), C.double(eps), C.double(weightDecay), dec)
	})
}

func (o *Optimizer) handle(op string) (C.uintptr_t, error) {
	if o == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil optimizer"}
	}
	h := atomic.LoadUintptr(&o.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed optimizer"}
	}
	return C.uintptr_t(h), nil
}

// Step updates every parameter that has a gradient, in place on its device.
func (o *Optimizer) Step() error {
	h, err := o.handle("Optimizer.Step")
	if err != nil {
		return err
	}
	r := C.gdt_optimizer_step(h)
	runtime.KeepAlive(o)
	return resErr("Optimizer.Step", r)
}

// ZeroGrad drops every parameter's gradient.
func (o *Optimizer) ZeroGrad() error {
	h, err := o.handle("Optimizer.ZeroGrad")
	if err != nil {
		return err
	}
	r := C.gdt_optimizer_zero_grad(h)
	runtime.KeepAlive(o)
	return resErr("Optimizer.ZeroGrad", r)
}

// Close releases the optimizer and returns the error of that release (nil when it
// succeeded). Closing twice is a no-op returning nil, and so is a Close that races
// another Close of the same Optimizer: the handle is swapped out atomically, so exactly
// one Close releases it (and returns its error).
func (o *Optimizer) Close() error {
	if o == nil {
		return nil
	}
	h := atomic.SwapUintptr(&o.h, 0)
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(o, nil)
	return resErr("Optimizer.Close", C.gdt_optimizer_release(C.uintptr_t(h)))
}

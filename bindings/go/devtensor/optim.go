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
	// Padding to 16 bytes keeps an Optimizer out of the runtime's tiny allocator: a
	// forgotten 8-byte one sharing a 16-byte block with a live neighbour is never
	// finalized (TestFinalizersRunBesideLiveObjects; StateDict has the same padding).
	_ [1]uintptr
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

// Params is what an optimizer takes its parameters from: Module.Parameters' result as it
// is (NamedTensors), a []Named, or a []*Tensor. The optimizer holds its own references:
// the caller still closes the Tensors it passed.
type Params interface {
	NamedTensors | []Named | []*Tensor
}

func paramTensors[P Params](params P) []*Tensor {
	switch ps := any(params).(type) {
	case NamedTensors:
		return ps.Tensors()
	case []Named:
		return NamedTensors(ps).Tensors()
	case []*Tensor:
		return ps
	}
	return nil // unreachable: Params has no other types
}

// OptimizerOption sets one hyperparameter of SGD, Adam or AdamW; an option an optimizer
// does not have (Betas for SGD, Momentum for Adam) is ErrInvalidArgument.
type OptimizerOption func(*optimConfig)

type optimConfig struct {
	momentum, dampening, weightDecay, beta1, beta2, eps float64
	nesterov                                            bool
	sgdOnly, adamOnly                                   []string // the options given, by kind
}

// Momentum is SGD's momentum factor (PyTorch's default 0).
func Momentum(m float64) OptimizerOption {
	return func(c *optimConfig) { c.momentum = m; c.sgdOnly = append(c.sgdOnly, "Momentum") }
}

// Dampening is SGD's dampening for momentum (PyTorch's default 0).
func Dampening(d float64) OptimizerOption {
	return func(c *optimConfig) { c.dampening = d; c.sgdOnly = append(c.sgdOnly, "Dampening") }
}

// Nesterov turns on SGD's Nesterov momentum (PyTorch's nesterov=True; it needs a momentum
// and zero dampening).
func Nesterov() OptimizerOption {
	return func(c *optimConfig) { c.nesterov = true; c.sgdOnly = append(c.sgdOnly, "Nesterov") }
}

// WeightDecay is the L2 penalty of SGD and Adam (PyTorch's default 0) and AdamW's
// decoupled weight decay (PyTorch's default 0.01).
func WeightDecay(w float64) OptimizerOption {
	return func(c *optimConfig) { c.weightDecay = w }
}

// Betas are Adam's and AdamW's coefficients of the running averages of the gradient and
// its square (PyTorch's default 0.9, 0.999).
func Betas(beta1, beta2 float64) OptimizerOption {
	return func(c *optimConfig) { c.beta1, c.beta2 = beta1, beta2; c.adamOnly = append(c.adamOnly, "Betas") }
}

// Eps is the term Adam and AdamW add to the denominator (PyTorch's default 1e-8).
func Eps(eps float64) OptimizerOption {
	return func(c *optimConfig) { c.eps = eps; c.adamOnly = append(c.adamOnly, "Eps") }
}

func optimOptions(op string, c optimConfig, opts []OptimizerOption, adam bool) (optimConfig, error) {
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	wrong := c.adamOnly
	if adam {
		wrong = c.sgdOnly
	}
	if len(wrong) > 0 {
		return c, &Error{Code: ErrInvalidArgument, Op: op, Msg: op + " has no option " + wrong[0]}
	}
	return c, nil
}

// SGD is torch.optim.SGD(params, lr, ...) over params (a []*Tensor, or Module.Parameters'
// result as it is), with PyTorch's defaults unless opts say otherwise: Momentum,
// Dampening, WeightDecay, Nesterov. The caller owns the Optimizer and must Close it.
func SGD[P Params](params P, lr float64, opts ...OptimizerOption) (*Optimizer, error) {
	c, err := optimOptions("SGD", optimConfig{}, opts, false)
	if err != nil {
		return nil, err
	}
	nest := C.int32_t(0)
	if c.nesterov {
		nest = 1
	}
	return newOptimizer("SGD", paramTensors(params), func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_sgd(p, n, C.double(lr), C.double(c.momentum), C.double(c.dampening), C.double(c.weightDecay), nest)
	})
}

// Adam is torch.optim.Adam(params, lr, ...) over params (as SGD's), with PyTorch's
// defaults unless opts say otherwise: Betas, Eps, WeightDecay (an L2 penalty added to
// the gradient). The caller owns the Optimizer and must Close it.
func Adam[P Params](params P, lr float64, opts ...OptimizerOption) (*Optimizer, error) {
	return adam("Adam", paramTensors(params), lr, 0, opts)
}

// AdamW is torch.optim.AdamW(params, lr, ...): Adam with decoupled weight decay
// (WeightDecay, default 0.01), the other options and defaults as Adam's.
func AdamW[P Params](params P, lr float64, opts ...OptimizerOption) (*Optimizer, error) {
	return adam("AdamW", paramTensors(params), lr, 1, opts)
}

func adam(op string, params []*Tensor, lr float64, decoupled C.int32_t, opts []OptimizerOption) (*Optimizer, error) {
	def := optimConfig{beta1: 0.9, beta2: 0.999, eps: 1e-8}
	if decoupled == 1 {
		def.weightDecay = 0.01
	}
	c, err := optimOptions(op, def, opts, true)
	if err != nil {
		return nil, err
	}
	return newOptimizer(op, params, func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_adam(p, n, C.double(lr), C.double(c.beta1), C.double(c.beta2), C.double(c.eps), C.double(c.weightDecay), decoupled)
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

// LR returns the learning rate the next Step uses (dt_optimizer_lr): the one the
// optimizer was made with, or the last SetLR or LoadStateDict. Errors: ErrClosed for a
// closed o, ErrInvalidArgument for a nil one, ErrInvalidHandle.
func (o *Optimizer) LR() (float64, error) {
	const op = "Optimizer.LR"
	h, err := o.handle(op)
	if err != nil {
		return 0, err
	}
	var lr C.double
	r := C.gdt_optimizer_lr(h, &lr)
	runtime.KeepAlive(o)
	if err := resErr(op, r); err != nil {
		return 0, err
	}
	return float64(lr), nil
}

// SetLR sets the learning rate of the steps that follow (dt_optimizer_set_lr), as
// assigning param_groups[...]["lr"] in PyTorch: what a schedule (warm-up, step or cosine
// decay) calls between steps. The other settings and the state (momentum buffers, Adam's
// moments and step count) are kept. A step captured into a Graph replays the rate it was
// captured with: capture again after changing it. SetLR may run while another goroutine
// runs Step (which then uses the old rate or the new). Errors: ErrInvalidArgument (a
// negative, infinite or NaN lr, a nil o), ErrClosed, ErrInvalidHandle.
func (o *Optimizer) SetLR(lr float64) error {
	const op = "Optimizer.SetLR"
	h, err := o.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_optimizer_set_lr(h, C.double(lr))
	runtime.KeepAlive(o)
	return resErr(op, r)
}

// StateDict returns the optimizer's state as a new StateDict (dt_optimizer_state_dict),
// for checkpoints (save it with StateDict.Save), under PyTorch's names for
// optimizer.state_dict()'s entries: "lr" (a 0-d float64 tensor) and, for each parameter
// i (its position in the list the optimizer was made with) that has state,
// "state.<i>.momentum_buffer" (SGD with momentum) or "state.<i>.step",
// "state.<i>.exp_avg" and "state.<i>.exp_avg_sq" (Adam and AdamW, in that order; the
// step a 0-d float32 tensor on the CPU, as PyTorch's). The tensors are copies: later steps do not change them. The
// caller owns the StateDict and must Close it. Errors: ErrClosed for a closed o,
// ErrInvalidArgument for a nil one, ErrInvalidHandle, ErrOutOfMemory.
func (o *Optimizer) StateDict() (*StateDict, error) {
	const op = "Optimizer.StateDict"
	h, err := o.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_optimizer_state_dict(h)
	runtime.KeepAlive(o)
	return takeStateDict(op, r)
}

// LoadStateDict restores a state saved by StateDict (dt_optimizer_load_state_dict), from
// an optimizer of the same kind over parameters of the same shapes: the tensors are
// copied to each parameter's device and dtype, the learning rate restored ("lr" is
// optional: absent, the rate stays), and parameters without an entry start with no
// state, as before their first step. All or nothing: every key, shape and value is
// checked before anything changes. sd stays the caller's to Close. Errors:
// ErrInvalidArgument (a key this optimizer does not have, such as another optimizer's,
// a parameter index out of range, a shape that is not the parameter's, a missing piece
// of a parameter's state, a negative or fractional step: the message names the key; a
// nil o or sd), ErrClosed (o or sd closed), ErrInvalidHandle, ErrOutOfMemory.
func (o *Optimizer) LoadStateDict(sd *StateDict) error {
	const op = "Optimizer.LoadStateDict"
	h, err := o.handle(op)
	if err != nil {
		return err
	}
	sh, err := sd.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_optimizer_load_state_dict(h, sh)
	runtime.KeepAlive(o)
	runtime.KeepAlive(sd)
	return resErr(op, r)
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

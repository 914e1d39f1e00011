package devtensor

// #include "nn_shim.h"
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Optimizer updates a set of parameters from their gradients (SGD, Adam, AdamW,
// RMSprop, Adagrad). Close it when done. Close may be called from several goroutines at
// once (exactly one releases), but must not race other use of the optimizer. An
// Optimizer must not be copied by value (go vet reports a copy): share the *Optimizer.
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

// OptimizerOption sets one hyperparameter of SGD, Adam, AdamW, RMSprop or Adagrad; an
// option an optimizer does not have (Betas for SGD, Momentum for Adam, Centered for
// Adagrad, LRDecay for SGD) is ErrInvalidArgument "<optimizer> has no option <name>".
// Which optimizers take which: Momentum (SGD, RMSprop), Dampening and Nesterov (SGD),
// WeightDecay (all), Betas (Adam, AdamW), Eps (Adam, AdamW, RMSprop, Adagrad), Alpha and
// Centered (RMSprop), LRDecay and InitialAccumulatorValue (Adagrad).
type OptimizerOption func(*optimConfig)

// optimKind is a set of optimizers (Adam stands for Adam and AdamW): those that take an
// option.
type optimKind uint8

const (
	kindSGD optimKind = 1 << iota
	kindAdam
	kindRMSprop
	kindAdagrad
	kindAll = kindSGD | kindAdam | kindRMSprop | kindAdagrad
)

// optimOption is an option given: its name and the optimizers that take it.
type optimOption struct {
	name  string
	kinds optimKind
}

type optimConfig struct {
	momentum, dampening, weightDecay, beta1, beta2, eps float64
	alpha, lrDecay, initialAccumulatorValue             float64
	nesterov, centered                                  bool
	given                                               []optimOption // in the order given
}

// take records that the option name, which the optimizers kinds take, was given.
func (c *optimConfig) take(name string, kinds optimKind) {
	c.given = append(c.given, optimOption{name, kinds})
}

// Momentum is the momentum factor of SGD and RMSprop (PyTorch's default 0).
func Momentum(m float64) OptimizerOption {
	return func(c *optimConfig) { c.momentum = m; c.take("Momentum", kindSGD|kindRMSprop) }
}

// Dampening is SGD's dampening for momentum (PyTorch's default 0).
func Dampening(d float64) OptimizerOption {
	return func(c *optimConfig) { c.dampening = d; c.take("Dampening", kindSGD) }
}

// Nesterov turns on SGD's Nesterov momentum (PyTorch's nesterov=True; it needs a momentum
// and zero dampening).
func Nesterov() OptimizerOption {
	return func(c *optimConfig) { c.nesterov = true; c.take("Nesterov", kindSGD) }
}

// WeightDecay is the L2 penalty of SGD, Adam, RMSprop and Adagrad (PyTorch's default 0)
// and AdamW's decoupled weight decay (PyTorch's default 0.01).
func WeightDecay(w float64) OptimizerOption {
	return func(c *optimConfig) { c.weightDecay = w; c.take("WeightDecay", kindAll) }
}

// Betas are Adam's and AdamW's coefficients of the running averages of the gradient and
// its square (PyTorch's default 0.9, 0.999).
func Betas(beta1, beta2 float64) OptimizerOption {
	return func(c *optimConfig) { c.beta1, c.beta2 = beta1, beta2; c.take("Betas", kindAdam) }
}

// Eps is the term Adam, AdamW, RMSprop and Adagrad add to the denominator (PyTorch's
// defaults: 1e-8 for Adam, AdamW and RMSprop, 1e-10 for Adagrad).
func Eps(eps float64) OptimizerOption {
	return func(c *optimConfig) { c.eps = eps; c.take("Eps", kindAdam|kindRMSprop|kindAdagrad) }
}

// Alpha is RMSprop's smoothing constant, the coefficient of the running average of the
// squared gradient (PyTorch's default 0.99).
func Alpha(a float64) OptimizerOption {
	return func(c *optimConfig) { c.alpha = a; c.take("Alpha", kindRMSprop) }
}

// Centered turns on centered RMSprop (PyTorch's centered=True): the gradient is
// normalized by an estimate of its variance, which keeps a running average of the
// gradient too ("grad_avg").
func Centered() OptimizerOption {
	return func(c *optimConfig) { c.centered = true; c.take("Centered", kindRMSprop) }
}

// LRDecay is Adagrad's learning rate decay: step t (from 1) uses lr / (1 + (t - 1) *
// lrDecay) (PyTorch's default 0).
func LRDecay(d float64) OptimizerOption {
	return func(c *optimConfig) { c.lrDecay = d; c.take("LRDecay", kindAdagrad) }
}

// InitialAccumulatorValue is the value Adagrad's sums of squared gradients ("sum") start
// from (PyTorch's default 0).
func InitialAccumulatorValue(v float64) OptimizerOption {
	return func(c *optimConfig) { c.initialAccumulatorValue = v; c.take("InitialAccumulatorValue", kindAdagrad) }
}

// optimOptions applies opts to the defaults c of optimizer op, of kind kind; the first
// option op does not take is ErrInvalidArgument naming it.
func optimOptions(op string, kind optimKind, c optimConfig, opts []OptimizerOption) (optimConfig, error) {
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	for _, g := range c.given {
		if g.kinds&kind == 0 {
			return c, &Error{Code: ErrInvalidArgument, Op: op, Msg: op + " has no option " + g.name}
		}
	}
	return c, nil
}

// SGD is torch.optim.SGD(params, lr, ...) over params (a []*Tensor, or Module.Parameters'
// result as it is), with PyTorch's defaults unless opts say otherwise: Momentum,
// Dampening, WeightDecay, Nesterov. The caller owns the Optimizer and must Close it.
func SGD[P Params](params P, lr float64, opts ...OptimizerOption) (*Optimizer, error) {
	c, err := optimOptions("SGD", kindSGD, optimConfig{}, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer("SGD", paramTensors(params), func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_sgd(p, n, C.double(lr), C.double(c.momentum), C.double(c.dampening), C.double(c.weightDecay), cBool(c.nesterov))
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
	c, err := optimOptions(op, kindAdam, def, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer(op, params, func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_adam(p, n, C.double(lr), C.double(c.beta1), C.double(c.beta2), C.double(c.eps), C.double(c.weightDecay), decoupled)
	})
}

// RMSprop is torch.optim.RMSprop(params, lr, ...) over params (as SGD's), with
// PyTorch's defaults unless opts say otherwise: Alpha (0.99), Eps (1e-8), WeightDecay
// (an L2 penalty added to the gradient, 0), Momentum (0), Centered (off); PyTorch's
// default lr is 0.01. Each step: square_avg = alpha * square_avg + (1 - alpha) * g^2
// (centered: minus grad_avg^2, grad_avg the running average of g), then
// p -= lr * g / (sqrt(square_avg) + eps), or with momentum through a momentum buffer.
// Its state is "square_avg", "momentum_buffer" (Momentum > 0) and "grad_avg" (Centered)
// and a step count kept on the host, so its Step cannot be captured into a Graph
// (ErrNotSupported). Errors: ErrInvalidArgument (a negative lr, alpha, eps, weight decay
// or momentum, naming it; an option RMSprop does not have; no parameters, or one that is
// not a leaf), ErrDTypeMismatch (a parameter that is not floating-point). The caller
// owns the Optimizer and must Close it.
func RMSprop[P Params](params P, lr float64, opts ...OptimizerOption) (*Optimizer, error) {
	const op = "RMSprop"
	c, err := optimOptions(op, kindRMSprop, optimConfig{alpha: 0.99, eps: 1e-8}, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer(op, paramTensors(params), func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_rmsprop(p, n, C.double(lr), C.double(c.alpha), C.double(c.eps), C.double(c.weightDecay),
			C.double(c.momentum), cBool(c.centered))
	})
}

// Adagrad is torch.optim.Adagrad(params, lr, ...) over params (as SGD's), with
// PyTorch's defaults unless opts say otherwise: LRDecay (0), WeightDecay (an L2 penalty
// added to the gradient, 0), InitialAccumulatorValue (0), Eps (1e-10); PyTorch's default
// lr is 0.01. At a parameter's step t (from 1): sum += g^2 and p -= lr / (1 + (t - 1) *
// lrDecay) * g / (sqrt(sum) + eps). As PyTorch's, the sums are made here, filled with
// the initial accumulator value, so a StateDict taken before the first step already
// holds "state.<i>.step" (0) and "state.<i>.sum". The step count is kept on the host, so
// its Step cannot be captured into a Graph (ErrNotSupported). Errors: ErrInvalidArgument
// (a negative lr, lr decay, weight decay, initial accumulator value or eps, naming it;
// an option Adagrad does not have; no parameters, or one that is not a leaf),
// ErrDTypeMismatch (a parameter that is not floating-point), ErrOutOfMemory. The caller
// owns the Optimizer and must Close it.
func Adagrad[P Params](params P, lr float64, opts ...OptimizerOption) (*Optimizer, error) {
	const op = "Adagrad"
	c, err := optimOptions(op, kindAdagrad, optimConfig{eps: 1e-10}, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer(op, paramTensors(params), func(p *C.uintptr_t, n C.size_t) C.gdt_hres {
		return C.gdt_adagrad(p, n, C.double(lr), C.double(c.lrDecay), C.double(c.weightDecay),
			C.double(c.initialAccumulatorValue), C.double(c.eps))
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

// Option returns the optimizer's setting name (dt_optimizer_option), as
// param_groups[0][name] in PyTorch: the value the constructor was given (or PyTorch's
// default), or the last SetOption, SetLR or LoadStateDict. Names are PyTorch's, Adam's
// betas as "beta1" and "beta2", flags as 0 or 1:
//
//	SGD:         lr, momentum, dampening, weight_decay, nesterov, maximize
//	Adam, AdamW: lr, beta1, beta2, eps, weight_decay, amsgrad, maximize
//	RMSprop:     lr, alpha, eps, weight_decay, momentum, centered, maximize
//	Adagrad:     lr, lr_decay, weight_decay, eps, initial_accumulator_value, maximize
//
// maximize (every optimizer, default 0) steps up the gradient instead of down (the
// gradient is negated first, as torch's maximize=True); amsgrad (Adam and AdamW, default
// 0) divides by the running maximum of exp_avg_sq, kept as the state "max_exp_avg_sq".
// Errors: ErrInvalidArgument (a name this optimizer does not have: the message lists
// those it has, e.g. `Adam has no setting "betas" (its settings: lr, beta1, beta2, eps,
// weight_decay, amsgrad, maximize)`; a name holding a NUL byte; a nil o), ErrClosed,
// ErrInvalidHandle.
func (o *Optimizer) Option(name string) (float64, error) {
	const op = "Optimizer.Option"
	h, err := o.handle(op)
	if err != nil {
		return 0, err
	}
	cs, err := cString(op, "setting name", name)
	if err != nil {
		return 0, err
	}
	defer C.free(unsafe.Pointer(cs))
	var v C.double
	r := C.gdt_optimizer_option(h, cs, &v)
	runtime.KeepAlive(o)
	if err := resErr(op, r); err != nil {
		return 0, err
	}
	return float64(v), nil
}

// SetOption sets the optimizer's setting name (one of Option's names) for the steps
// that follow (dt_optimizer_set_option), as assigning param_groups[0][name] in PyTorch:
// what a schedule of momentum or betas, such as OneCycleLR's momentum cycling, does
// between steps. The value is checked as the constructor checks it, together with the
// other settings (nesterov needs a momentum and no dampening; a flag is 0 or 1); when
// it is refused nothing changes. The state is kept; state a new setting needs (amsgrad's
// max_exp_avg_sq, a momentum buffer, centered RMSprop's grad_avg) starts from zeros at
// the next Step, and a StateDict holds it from then on; initial_accumulator_value only
// fills sums made later. SetOption may run while another goroutine runs Step (which
// then sees the old value or the new). A step captured into a Graph replays the
// settings it was captured with: capture again after changing them. Errors:
// ErrInvalidArgument (an unknown name, the message listing the optimizer's settings; a
// value the constructor would refuse, with its message, e.g. `SGD: Nesterov momentum
// requires a momentum and zero dampening`; a flag not 0 or 1; a name holding a NUL
// byte; a nil o), ErrClosed, ErrInvalidHandle.
func (o *Optimizer) SetOption(name string, value float64) error {
	const op = "Optimizer.SetOption"
	h, err := o.handle(op)
	if err != nil {
		return err
	}
	cs, err := cString(op, "setting name", name)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cs))
	r := C.gdt_optimizer_set_option(h, cs, C.double(value))
	runtime.KeepAlive(o)
	return resErr(op, r)
}

// StateDict returns the optimizer's state as a new StateDict (dt_optimizer_state_dict),
// for checkpoints (save it with StateDict.Save), under PyTorch's names for
// optimizer.state_dict()'s entries: every setting Option reads, lr first, each under
// its name as a 0-d float64 tensor (PyTorch's param_groups: a momentum or betas schedule
// resumes where it was), and, for each parameter i (its position in the list the optimizer was made with) that has state,
// "state.<i>.momentum_buffer" (SGD with momentum) or "state.<i>.step",
// "state.<i>.exp_avg" and "state.<i>.exp_avg_sq" (Adam and AdamW, in that order; the
// step a 0-d float32 tensor on the CPU, as PyTorch's), "state.<i>.step",
// "state.<i>.square_avg", "state.<i>.momentum_buffer" (with Momentum) and
// "state.<i>.grad_avg" (Centered) (RMSprop), or "state.<i>.step" and "state.<i>.sum"
// (Adagrad, whose state exists from the start: step 0 before the first Step). The
// tensors are copies: later steps do not change them. The caller owns the StateDict and
// must Close it. Errors: ErrClosed for a closed o,
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
// copied to each parameter's device and dtype, the settings restored (each optional:
// absent, as in checkpoints written before they were saved, the setting stays; they are
// checked together as SetOption checks one), and parameters without an entry start with
// no state, as before their first step. All or nothing: every key, shape and value is
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

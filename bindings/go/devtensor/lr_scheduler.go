package devtensor

// #include "lr_scheduler_shim.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// LRScheduler is a learning-rate scheduler of torch.optim.lr_scheduler (PyTorch 1.13's
// formulas) bound to one Optimizer: NewStepLR, NewMultiStepLR, NewExponentialLR,
// NewLinearLR, NewConstantLR, NewPolynomialLR, NewCosineAnnealingLR,
// NewCosineAnnealingWarmRestarts, NewOneCycleLR, NewCyclicLR, NewReduceLROnPlateau,
// NewSequentialLR, NewChainedScheduler, NewLambdaLR and NewMultiplicativeLR make one.
// Each sets its optimizer's learning rate (Optimizer.SetLR; OneCycleLR its momentum
// too): call Step once per epoch (or per batch, as the schedule is meant;
// ReduceLROnPlateau: StepMetric), after Optimizer.Step, as in PyTorch. Making one takes
// its first step at once: the optimizer's rate becomes the schedule's rate for epoch 0
// (LinearLR's startFactor * lr, ConstantLR's factor * lr, OneCycleLR's maxLR /
// divFactor, CyclicLR's baseLR, LambdaLR's fn(0) * lr; the others leave it as it is).
//
// The rate a schedule starts from (PyTorch's base_lrs, the optimizer's "initial_lr") is
// the optimizer's rate when its first scheduler is made; later schedulers of the same
// optimizer start from that value too, as in PyTorch. Steps use PyTorch's chained
// formulas: each scales the optimizer's current rate, so several schedulers stacked on
// one optimizer, or a rate set by hand between steps, combine as they do in PyTorch. A
// step is all or nothing: a failed one changes neither the optimizer nor the scheduler.
//
// The scheduler holds a reference to its optimizer of its own (dt_lr_scheduler_*
// retains it): it keeps working after the caller Closes the Optimizer, which is then
// released with the last scheduler. Calls on one scheduler may come from several
// goroutines at once (the C library runs them one at a time); stepping two schedulers
// of one optimizer at once interleaves their updates of its rate.
//
// Close it when done; a finalizer releases a forgotten one, only as a safety net. Close
// may be called from several goroutines at once (exactly one releases), but must not
// race other use of the scheduler. An LRScheduler must not be copied by value (go vet
// reports a copy): share the *LRScheduler.
type LRScheduler struct {
	_ noCopy  // go vet: an LRScheduler must not be copied (lifetime.go)
	h uintptr // the dt_lr_scheduler* (C memory), 0 once closed; read with atomic.LoadUintptr
	// The Go functions its steps may call, for the panic their errors report: a
	// LambdaLR's or MultiplicativeLR's own, a SequentialLR's schedulers' (none for the
	// others). Holding a pointer, it also keeps an LRScheduler out of the runtime's tiny
	// allocator, as Optimizer's padding does: a forgotten 8-byte one sharing a 16-byte
	// block with a live neighbour would never be finalized
	// (TestFinalizersRunBesideLiveObjects).
	fns []*lrLambda
}

// newLRScheduler makes the scheduler create returns for opt's handle. opt is kept alive
// across the call only: the C scheduler retains the optimizer itself.
func newLRScheduler(op string, opt *Optimizer, create func(o C.uintptr_t) C.gdt_hres) (*LRScheduler, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	oh, err := opt.handle(op)
	if err != nil {
		return nil, err
	}
	r := create(oh)
	runtime.KeepAlive(opt)
	return adoptLRScheduler(op, r)
}

// adoptLRScheduler wraps the new scheduler in r, with the finalizer that releases it.
func adoptLRScheduler(op string, r C.gdt_hres) (*LRScheduler, error) {
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	s := &LRScheduler{h: uintptr(r.h)}
	runtime.SetFinalizer(s, func(s *LRScheduler) {
		if h := atomic.SwapUintptr(&s.h, 0); h != 0 {
			C.gdt_lr_scheduler_release_quiet(C.uintptr_t(h))
		}
	})
	return s, nil
}

// int64s returns a pointer to xs's first element for C (nil when xs is empty): Go memory
// holding integers only, which C reads during the call. The caller keeps xs alive
// (runtime.KeepAlive) until the call returns.
func int64s(xs []int64) *C.int64_t {
	if len(xs) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&xs[0]))
}

// NewStepLR is torch.optim.lr_scheduler.StepLR(opt, step_size=stepSize, gamma=gamma)
// (dt_step_lr_new): the rate is multiplied by gamma every stepSize epochs (PyTorch's
// default gamma is 0.1). The caller owns the LRScheduler and must Close it. Errors:
// ErrInvalidArgument (stepSize < 1, gamma < 0 or not finite: the message names it; a nil
// opt), ErrClosed (a closed opt), ErrInvalidHandle, ErrVersion.
func NewStepLR(opt *Optimizer, stepSize int64, gamma float64) (*LRScheduler, error) {
	return newLRScheduler("NewStepLR", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_step_lr(o, C.int64_t(stepSize), C.double(gamma))
	})
}

// NewMultiStepLR is torch.optim.lr_scheduler.MultiStepLR(opt, milestones, gamma=gamma)
// (dt_multi_step_lr_new): the rate is multiplied by gamma at each epoch listed in
// milestones (any order; an epoch listed twice multiplies twice, as PyTorch's Counter;
// PyTorch's default gamma is 0.1). milestones is copied: the caller may change it
// afterwards. The caller owns the LRScheduler and must Close it. Errors: as NewStepLR's
// (a negative milestone, gamma < 0).
func NewMultiStepLR(opt *Optimizer, milestones []int64, gamma float64) (*LRScheduler, error) {
	s, err := newLRScheduler("NewMultiStepLR", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_multi_step_lr(o, int64s(milestones), C.size_t(len(milestones)), C.double(gamma))
	})
	runtime.KeepAlive(milestones)
	return s, err
}

// NewExponentialLR is torch.optim.lr_scheduler.ExponentialLR(opt, gamma)
// (dt_exponential_lr_new): the rate is multiplied by gamma every epoch (gamma >= 0). The
// caller owns the LRScheduler and must Close it. Errors: as NewStepLR's.
func NewExponentialLR(opt *Optimizer, gamma float64) (*LRScheduler, error) {
	return newLRScheduler("NewExponentialLR", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_exponential_lr(o, C.double(gamma))
	})
}

// NewLinearLR is torch.optim.lr_scheduler.LinearLR(opt, start_factor=startFactor,
// end_factor=endFactor, total_iters=totalIters) (dt_linear_lr_new), a warm-up: the rate
// is the initial rate times a factor going linearly from startFactor (epoch 0, in
// (0, 1]) to endFactor (epoch totalIters and after, in [0, 1]); totalIters >= 1.
// PyTorch's defaults: startFactor 1/3, endFactor 1, totalIters 5. Making it sets the
// optimizer's rate to startFactor times it. (PyTorch 1.13 takes a startFactor of 0 and
// divides by zero at the second step; later versions and this one refuse it.) The
// caller owns the LRScheduler and must Close it. Errors: as NewStepLR's.
func NewLinearLR(opt *Optimizer, startFactor, endFactor float64, totalIters int64) (*LRScheduler, error) {
	return newLRScheduler("NewLinearLR", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_linear_lr(o, C.double(startFactor), C.double(endFactor), C.int64_t(totalIters))
	})
}

// NewConstantLR is torch.optim.lr_scheduler.ConstantLR(opt, factor=factor,
// total_iters=totalIters) (dt_constant_lr_new), a warm-up at one lower rate: factor
// times the initial rate for epochs 0 to totalIters - 1, then the initial rate. factor
// in (0, 1], totalIters >= 1; PyTorch's defaults: factor 1/3, totalIters 5. Making it
// sets the optimizer's rate to factor times it. (PyTorch 1.13 takes a factor of 0 and
// divides by zero at totalIters, and a totalIters of 0 that never gives the rate back;
// this one refuses both.) The caller owns the LRScheduler and must Close it. Errors: as
// NewStepLR's.
func NewConstantLR(opt *Optimizer, factor float64, totalIters int64) (*LRScheduler, error) {
	return newLRScheduler("NewConstantLR", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_constant_lr(o, C.double(factor), C.int64_t(totalIters))
	})
}

// NewPolynomialLR is torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=totalIters,
// power=power) (dt_polynomial_lr_new): at epoch e the rate is the initial rate times
// (1 - min(e, totalIters) / totalIters)^power, down to 0 at totalIters (power 0: left
// as it is). totalIters >= 1, power finite and >= 0; PyTorch's defaults: totalIters 5,
// power 1. (PyTorch 1.13 checks neither, and divides by zero or raises 0 to a negative
// power.) The caller owns the LRScheduler and must Close it. Errors: as NewStepLR's.
func NewPolynomialLR(opt *Optimizer, totalIters int64, power float64) (*LRScheduler, error) {
	return newLRScheduler("NewPolynomialLR", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_polynomial_lr(o, C.int64_t(totalIters), C.double(power))
	})
}

// NewCosineAnnealingLR is torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=tMax,
// eta_min=etaMin) (dt_cosine_annealing_lr_new): at epoch e the rate is etaMin +
// (initial - etaMin) * (1 + cos(pi * e / tMax)) / 2, by PyTorch's chained form (past
// tMax it rises again: a cosine of period 2 tMax). tMax >= 1, etaMin >= 0 (PyTorch's
// default 0). The caller owns the LRScheduler and must Close it. Errors: as NewStepLR's.
func NewCosineAnnealingLR(opt *Optimizer, tMax int64, etaMin float64) (*LRScheduler, error) {
	return newLRScheduler("NewCosineAnnealingLR", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_cosine_annealing_lr(o, C.int64_t(tMax), C.double(etaMin))
	})
}

// NewCosineAnnealingWarmRestarts is torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
// opt, T_0=t0, T_mult=tMult, eta_min=etaMin) (dt_cosine_annealing_warm_restarts_new),
// SGDR: a cosine from the initial rate down to etaMin over t0 epochs, then again from
// the top over t0 * tMult, t0 * tMult^2, ... epochs. t0 >= 1, tMult >= 1 (PyTorch's
// default 1), etaMin >= 0 (PyTorch's default 0). Its StateDict holds T_cur and T_i. The
// caller owns the LRScheduler and must Close it. Errors: as NewStepLR's.
func NewCosineAnnealingWarmRestarts(opt *Optimizer, t0, tMult int64, etaMin float64) (*LRScheduler, error) {
	return newLRScheduler("NewCosineAnnealingWarmRestarts", opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_cosine_annealing_warm_restarts(o, C.int64_t(t0), C.int64_t(tMult), C.double(etaMin))
	})
}

// OneCycleOption sets one setting of NewOneCycleLR (OneCyclePctStart,
// OneCycleAnnealStrategy, OneCycleCycleMomentum, OneCycleMomentum, OneCycleDivFactor,
// OneCycleFinalDivFactor, OneCycleThreePhase); those not given keep PyTorch's defaults.
type OneCycleOption func(*oneCycleConfig)

type oneCycleConfig struct {
	pctStart, baseMomentum, maxMomentum, divFactor, finalDivFactor float64
	annealStrategy                                                 string
	cycleMomentum, threePhase                                      bool
}

// OneCyclePctStart is the fraction of the steps spent raising the rate (OneCycleLR's
// pct_start; PyTorch's default 0.3). One that leaves a phase without steps (pctStart *
// totalSteps <= 1, or 1) is refused: PyTorch divides by zero there.
func OneCyclePctStart(p float64) OneCycleOption {
	return func(c *oneCycleConfig) { c.pctStart = p }
}

// OneCycleAnnealStrategy is how OneCycleLR moves between its rates, "cos" (PyTorch's
// default) or "linear" (anneal_strategy); another is ErrInvalidArgument.
func OneCycleAnnealStrategy(strategy string) OneCycleOption {
	return func(c *oneCycleConfig) { c.annealStrategy = strategy }
}

// OneCycleCycleMomentum turns OneCycleLR's momentum cycling on or off (cycle_momentum;
// PyTorch's default on). On, the optimizer's momentum (Adam's and AdamW's beta1) moves
// against the rate, between OneCycleMomentum's max and base, through
// Optimizer.SetOption; an optimizer without one (Adagrad) is then refused.
func OneCycleCycleMomentum(on bool) OneCycleOption {
	return func(c *oneCycleConfig) { c.cycleMomentum = on }
}

// OneCycleMomentum is the lowest and highest momentum of OneCycleLR's momentum cycling
// (base_momentum, max_momentum; PyTorch's defaults 0.85 and 0.95): max at the start
// and end, base at the peak rate.
func OneCycleMomentum(base, max float64) OneCycleOption {
	return func(c *oneCycleConfig) { c.baseMomentum, c.maxMomentum = base, max }
}

// OneCycleDivFactor sets OneCycleLR's first rate to maxLR / d (div_factor; PyTorch's
// default 25).
func OneCycleDivFactor(d float64) OneCycleOption {
	return func(c *oneCycleConfig) { c.divFactor = d }
}

// OneCycleFinalDivFactor sets OneCycleLR's last rate to maxLR / divFactor / d
// (final_div_factor; PyTorch's default 1e4).
func OneCycleFinalDivFactor(d float64) OneCycleOption {
	return func(c *oneCycleConfig) { c.finalDivFactor = d }
}

// OneCycleThreePhase gives OneCycleLR a third phase (three_phase=True; PyTorch's default
// off): the rate goes up to maxLR, back down to maxLR / divFactor in as many steps, then
// down to its last rate.
func OneCycleThreePhase() OneCycleOption {
	return func(c *oneCycleConfig) { c.threePhase = true }
}

// NewOneCycleLR is torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=maxLR,
// total_steps=totalSteps, ...) (dt_one_cycle_lr_new), stepped once per batch: the rate
// rises from maxLR / divFactor to maxLR over the first pctStart of totalSteps, then
// falls to maxLR / divFactor / finalDivFactor, while the momentum cycles the other way.
// PyTorch's defaults unless opts say otherwise: OneCyclePctStart 0.3,
// OneCycleAnnealStrategy "cos", OneCycleCycleMomentum on, OneCycleMomentum 0.85 and
// 0.95, OneCycleDivFactor 25, OneCycleFinalDivFactor 1e4, OneCycleThreePhase off.
// Making it sets the optimizer's rate to maxLR / divFactor (and its momentum to the max
// one). Stepping past totalSteps steps after it was made is ErrInvalidArgument, as
// PyTorch's ValueError. The caller owns the LRScheduler and must Close it. Errors: as
// NewStepLR's (a setting PyTorch refuses; momentum cycling on an optimizer without
// momentum; an anneal strategy holding a NUL byte).
func NewOneCycleLR(opt *Optimizer, maxLR float64, totalSteps int64, opts ...OneCycleOption) (*LRScheduler, error) {
	const op = "NewOneCycleLR"
	c := oneCycleConfig{pctStart: 0.3, annealStrategy: "cos", cycleMomentum: true, baseMomentum: 0.85,
		maxMomentum: 0.95, divFactor: 25, finalDivFactor: 1e4}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	strategy, err := cString(op, "anneal_strategy", c.annealStrategy)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(strategy))
	return newLRScheduler(op, opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_one_cycle_lr(o, C.double(maxLR), C.int64_t(totalSteps), C.double(c.pctStart), strategy,
			cBool(c.cycleMomentum), C.double(c.baseMomentum), C.double(c.maxMomentum), C.double(c.divFactor),
			C.double(c.finalDivFactor), cBool(c.threePhase))
	})
}

// CyclicOption sets one setting of NewCyclicLR (CyclicStepSize, CyclicMode, CyclicGamma,
// CyclicCycleMomentum, CyclicMomentum); those not given keep PyTorch's defaults.
type CyclicOption func(*cyclicConfig)

type cyclicConfig struct {
	stepSizeUp, stepSizeDown         int64
	mode                             string
	gamma, baseMomentum, maxMomentum float64
	cycleMomentum                    bool
}

// CyclicStepSize is how many steps CyclicLR's rate takes to rise from baseLR to maxLR
// (step_size_up >= 1; PyTorch's default 2000) and to fall back (step_size_down; 0, the
// default, is as many as up).
func CyclicStepSize(up, down int64) CyclicOption {
	return func(c *cyclicConfig) { c.stepSizeUp, c.stepSizeDown = up, down }
}

// CyclicMode scales each of CyclicLR's cycles: "triangular" (PyTorch's default: every
// cycle the same), "triangular2" (each cycle half as high as the one before) or
// "exp_range" (the height times gamma^step, CyclicGamma); another is ErrInvalidArgument.
func CyclicMode(mode string) CyclicOption {
	return func(c *cyclicConfig) { c.mode = mode }
}

// CyclicGamma is the factor of CyclicMode("exp_range"), per step (gamma >= 0; PyTorch's
// default 1). Above 1 the height grows, and a step whose rate would not be finite and
// >= 0 fails.
func CyclicGamma(gamma float64) CyclicOption {
	return func(c *cyclicConfig) { c.gamma = gamma }
}

// CyclicCycleMomentum turns CyclicLR's momentum cycling on or off (cycle_momentum;
// PyTorch's default on). On, the optimizer's momentum (Adam's and AdamW's beta1, as
// PyTorch 2; PyTorch 1.13 refuses them) moves against the rate, between
// CyclicMomentum's max and base, through Optimizer.SetOption; an optimizer without one
// (Adagrad) is then refused.
func CyclicCycleMomentum(on bool) CyclicOption {
	return func(c *cyclicConfig) { c.cycleMomentum = on }
}

// CyclicMomentum is the lowest and highest momentum of CyclicLR's momentum cycling
// (base_momentum, max_momentum; PyTorch's defaults 0.8 and 0.9): max where the rate is
// baseLR, base where it is maxLR.
func CyclicMomentum(base, max float64) CyclicOption {
	return func(c *cyclicConfig) { c.baseMomentum, c.maxMomentum = base, max }
}

// NewCyclicLR is torch.optim.lr_scheduler.CyclicLR(opt, base_lr=baseLR, max_lr=maxLR,
// ...) (dt_cyclic_lr_new), stepped once per batch: the rate goes up from baseLR to
// maxLR and back down, again and again, each cycle's height scaled by its mode, while
// the momentum cycles the other way. PyTorch's defaults unless opts say otherwise:
// CyclicStepSize 2000 and 0 (as many down as up), CyclicMode "triangular", CyclicGamma
// 1, CyclicCycleMomentum on, CyclicMomentum 0.8 and 0.9. Making it sets the optimizer's
// rate to baseLR (to its initial rate when an earlier scheduler set one, as PyTorch)
// and its momentum to the max one. baseLR and maxLR finite and >= 0. PyTorch's custom
// scale_fn is not offered. The caller owns the LRScheduler and must Close it. Errors:
// as NewStepLR's (a setting PyTorch refuses; momentum cycling on an optimizer without
// momentum; a mode holding a NUL byte); Step: ErrInvalidArgument when the rate would
// not be finite and >= 0, nothing changed.
func NewCyclicLR(opt *Optimizer, baseLR, maxLR float64, opts ...CyclicOption) (*LRScheduler, error) {
	const op = "NewCyclicLR"
	c := cyclicConfig{stepSizeUp: 2000, mode: "triangular", gamma: 1, cycleMomentum: true, baseMomentum: 0.8,
		maxMomentum: 0.9}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	mode, err := cString(op, "mode", c.mode)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(mode))
	return newLRScheduler(op, opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_cyclic_lr(o, C.double(baseLR), C.double(maxLR), C.int64_t(c.stepSizeUp),
			C.int64_t(c.stepSizeDown), mode, C.double(c.gamma), cBool(c.cycleMomentum), C.double(c.baseMomentum),
			C.double(c.maxMomentum))
	})
}

// PlateauOption sets one setting of NewReduceLROnPlateau (PlateauMode, PlateauFactor,
// PlateauPatience, PlateauThreshold, PlateauCooldown, PlateauMinLR, PlateauEps); those
// not given keep PyTorch's defaults.
type PlateauOption func(*plateauConfig)

type plateauConfig struct {
	mode, thresholdMode           string
	factor, threshold, minLR, eps float64
	patience, cooldown            int64
}

// PlateauMode is "min" (PyTorch's default: the metric should fall, a loss) or "max"
// (it should rise, an accuracy); another is ErrInvalidArgument.
func PlateauMode(mode string) PlateauOption {
	return func(c *plateauConfig) { c.mode = mode }
}

// PlateauFactor is what ReduceLROnPlateau multiplies the rate by, in [0, 1) (factor;
// PyTorch's default 0.1).
func PlateauFactor(f float64) PlateauOption {
	return func(c *plateauConfig) { c.factor = f }
}

// PlateauPatience is how many steps in a row without improvement ReduceLROnPlateau
// waits: the rate drops at the next one (patience; PyTorch's default 10).
func PlateauPatience(n int64) PlateauOption {
	return func(c *plateauConfig) { c.patience = n }
}

// PlateauThreshold is what counts as an improvement (threshold, threshold_mode;
// PyTorch's defaults 1e-4 and "rel"): in mode "min", a metric below best * (1 - value)
// with mode "rel", below best - value with "abs" (mode "max" the other way); another
// mode is ErrInvalidArgument.
func PlateauThreshold(value float64, mode string) PlateauOption {
	return func(c *plateauConfig) { c.threshold, c.thresholdMode = value, mode }
}

// PlateauCooldown is how many steps after a drop are not counted (cooldown; PyTorch's
// default 0).
func PlateauCooldown(n int64) PlateauOption {
	return func(c *plateauConfig) { c.cooldown = n }
}

// PlateauMinLR is the lowest rate ReduceLROnPlateau goes to (min_lr; PyTorch's default
// 0).
func PlateauMinLR(lr float64) PlateauOption {
	return func(c *plateauConfig) { c.minLR = lr }
}

// PlateauEps is the smallest change of the rate ReduceLROnPlateau makes: a smaller one
// is skipped (eps; PyTorch's default 1e-8).
func PlateauEps(eps float64) PlateauOption {
	return func(c *plateauConfig) { c.eps = eps }
}

// NewReduceLROnPlateau is torch.optim.lr_scheduler.ReduceLROnPlateau(opt, ...)
// (dt_reduce_lr_on_plateau_new): stepped with StepMetric (a validation loss, say), not
// Step. After more than patience steps in a row without improvement the rate becomes
// max(rate * factor, minLR) (when that changes it by more than eps), and the next
// cooldown steps are not counted. PyTorch's defaults unless opts say otherwise:
// PlateauMode "min", PlateauFactor 0.1, PlateauPatience 10, PlateauThreshold 1e-4 "rel",
// PlateauCooldown 0, PlateauMinLR 0, PlateauEps 1e-8. Making it leaves the rate as it
// is. The caller owns the LRScheduler and must Close it. Errors: as NewStepLR's (a mode
// or threshold mode that is not one of the two, or holds a NUL byte; a factor outside
// [0, 1); a negative setting).
func NewReduceLROnPlateau(opt *Optimizer, opts ...PlateauOption) (*LRScheduler, error) {
	const op = "NewReduceLROnPlateau"
	c := plateauConfig{mode: "min", factor: 0.1, patience: 10, threshold: 1e-4, thresholdMode: "rel", eps: 1e-8}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	mode, err := cString(op, "mode", c.mode)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(mode))
	thresholdMode, err := cString(op, "threshold_mode", c.thresholdMode)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(thresholdMode))
	return newLRScheduler(op, opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_reduce_lr_on_plateau(o, mode, C.double(c.factor), C.int64_t(c.patience), C.double(c.threshold),
			thresholdMode, C.int64_t(c.cooldown), C.double(c.minLR), C.double(c.eps))
	})
}

// NewSequentialLR is torch.optim.lr_scheduler.SequentialLR(opt, schedulers, milestones)
// (dt_sequential_lr_new): schedulers[0] until epoch milestones[0], then schedulers[1]
// (restarted from its epoch 0, by its closed form) until milestones[1], and so on:
// len(schedulers) - 1 increasing milestones >= 1, every scheduler one of opt's. As
// PyTorch's constructor, it sets the rate back to the initial one and starts
// schedulers[0] again. The SequentialLR holds references of its own to the schedulers:
// the caller still Closes those it passed (and may do so at once; stepping them itself
// afterwards would move the sequence's rate too). The caller owns the LRScheduler and
// must Close it. Errors: as NewStepLR's, and ErrInvalidArgument (not len(schedulers) - 1
// milestones; a nil scheduler, the message naming its index; a scheduler of another
// optimizer, one listed twice, a ReduceLROnPlateau or SequentialLR among them; no
// schedulers), ErrClosed (a closed scheduler).
func NewSequentialLR(opt *Optimizer, schedulers []*LRScheduler, milestones []int64) (*LRScheduler, error) {
	const op = "NewSequentialLR"
	want := len(schedulers) - 1
	if want < 0 {
		want = 0
	}
	if len(milestones) != want {
		return nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: fmt.Sprintf(
			"%d schedulers take %d milestones, got %d", len(schedulers), want, len(milestones))}
	}
	hs, fns, err := schedulerHandles(op, schedulers)
	if err != nil {
		return nil, err
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	s, err := newLRScheduler(op, opt, func(o C.uintptr_t) C.gdt_hres {
		return C.gdt_sequential_lr(o, p, C.size_t(len(hs)), int64s(milestones))
	})
	runtime.KeepAlive(schedulers)
	runtime.KeepAlive(hs)
	runtime.KeepAlive(milestones)
	if err != nil {
		return nil, explainPanics(fns, err)
	}
	s.fns = fns
	return s, nil
}

// NewChainedScheduler is torch.optim.lr_scheduler.ChainedScheduler(schedulers)
// (dt_chained_scheduler_new): each Step steps every one of schedulers, in order (their
// rates combine by PyTorch's chained formulas: a ConstantLR and an ExponentialLR hold a
// lower rate for a while under the decay). Making it steps nothing; its LastEpoch counts
// its own steps. A Step is all or nothing: when one of them refuses, those stepped
// before it and the optimizer's rate and momentum are put back (a LambdaLR's function
// already called is not undone). It holds its own references to the schedulers: step
// only the chain afterwards. The caller owns the LRScheduler and must Close it. Errors:
// ErrInvalidArgument (no scheduler, a nil one, schedulers of different optimizers, one
// listed twice, a ReduceLROnPlateau, SequentialLR or ChainedScheduler among them),
// ErrClosed (a closed one), ErrInvalidHandle.
func NewChainedScheduler(schedulers []*LRScheduler) (*LRScheduler, error) {
	const op = "NewChainedScheduler"
	if versionErr != nil {
		return nil, versionErr
	}
	hs, fns, err := schedulerHandles(op, schedulers)
	if err != nil {
		return nil, err
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	s, err := adoptLRScheduler(op, C.gdt_chained_scheduler(p, C.size_t(len(hs))))
	runtime.KeepAlive(schedulers)
	runtime.KeepAlive(hs)
	if err != nil {
		return nil, explainPanics(fns, err)
	}
	s.fns = fns
	return s, nil
}

// schedulerHandles returns the handles of a SequentialLR's or ChainedScheduler's
// schedulers (Go memory holding integers only, which C may read during a call), and
// the Go functions their steps may call, for the panics their errors report.
func schedulerHandles(op string, schedulers []*LRScheduler) ([]C.uintptr_t, []*lrLambda, error) {
	hs := make([]C.uintptr_t, len(schedulers))
	var fns []*lrLambda
	for i, s := range schedulers {
		h, err := s.handle(op)
		if e, ok := err.(*Error); ok {
			return nil, nil, &Error{Code: e.Code, Op: op, Msg: fmt.Sprintf("schedulers[%d]: %s", i, e.Msg)}
		}
		hs[i] = h
		fns = append(fns, s.fns...)
	}
	return hs, fns, nil
}

func (s *LRScheduler) handle(op string) (C.uintptr_t, error) {
	if s == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil scheduler"}
	}
	h := atomic.LoadUintptr(&s.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed scheduler"}
	}
	return C.uintptr_t(h), nil
}

// Step moves the schedule one epoch (or batch) on and sets the optimizer's rate for it
// (dt_lr_scheduler_step), as PyTorch's scheduler.step(). Errors: ErrInvalidArgument (a
// ReduceLROnPlateau, which steps with StepMetric; a OneCycleLR stepped past its
// totalSteps; a LambdaLR's or MultiplicativeLR's function returning what no rate can
// be, or panicking: the message says with what; a nil s), ErrClosed, ErrInvalidHandle;
// the optimizer and the scheduler are unchanged then.
func (s *LRScheduler) Step() error {
	const op = "LRScheduler.Step"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_lr_scheduler_step(h)
	runtime.KeepAlive(s)
	return explainPanics(s.fns, resErr(op, r))
}

// StepMetric is ReduceLROnPlateau's step with the metric it watches, a validation loss
// say (dt_lr_scheduler_step_metric), as PyTorch's scheduler.step(metrics). Errors:
// ErrInvalidArgument (any other scheduler, which steps with Step; a nil s), ErrClosed,
// ErrInvalidHandle.
func (s *LRScheduler) StepMetric(metric float64) error {
	const op = "LRScheduler.StepMetric"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_lr_scheduler_step_metric(h, C.double(metric))
	runtime.KeepAlive(s)
	return resErr(op, r)
}

// LastLR returns the rate the scheduler last set (dt_lr_scheduler_last_lr), as PyTorch's
// get_last_lr()[0]: right after it was made, the rate for epoch 0. Errors:
// ErrInvalidArgument (a nil s), ErrClosed, ErrInvalidHandle.
func (s *LRScheduler) LastLR() (float64, error) {
	const op = "LRScheduler.LastLR"
	h, err := s.handle(op)
	if err != nil {
		return 0, err
	}
	r := C.gdt_lr_scheduler_last_lr(h)
	runtime.KeepAlive(s)
	if err := mkerr(op, r.st, r.msg); err != nil {
		return 0, err
	}
	return float64(r.v), nil
}

// LastEpoch returns the epoch of the last step (dt_lr_scheduler_last_epoch), as
// PyTorch's last_epoch: 0 right after the scheduler was made, one more per Step (or
// StepMetric). Errors: ErrInvalidArgument (a nil s), ErrClosed, ErrInvalidHandle.
func (s *LRScheduler) LastEpoch() (int64, error) {
	const op = "LRScheduler.LastEpoch"
	h, err := s.handle(op)
	if err != nil {
		return 0, err
	}
	r := C.gdt_lr_scheduler_last_epoch(h)
	runtime.KeepAlive(s)
	if err := mkerr(op, r.st, r.msg); err != nil {
		return 0, err
	}
	return int64(r.v), nil
}

// Kind returns the scheduler's kind, PyTorch's class name: "StepLR", "MultiStepLR",
// "ExponentialLR", "LinearLR", "ConstantLR", "PolynomialLR", "CosineAnnealingLR",
// "CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR", "ReduceLROnPlateau",
// "SequentialLR", "ChainedScheduler", "LambdaLR" or "MultiplicativeLR"
// (dt_lr_scheduler_kind). Errors:
// ErrInvalidArgument (a nil s), ErrClosed, ErrInvalidHandle, ErrOutOfMemory.
func (s *LRScheduler) Kind() (string, error) {
	const op = "LRScheduler.Kind"
	h, err := s.handle(op)
	if err != nil {
		return "", err
	}
	r := C.gdt_lr_scheduler_kind(h)
	runtime.KeepAlive(s)
	return takeString(op, r)
}

// StateDict returns the scheduler's settings and state as a new StateDict
// (dt_lr_scheduler_state_dict), for checkpoints, as PyTorch's scheduler.state_dict():
// each number a 0-d float64 tensor on the CPU under PyTorch's attribute name (base_lr,
// last_epoch, last_lr, then the scheduler's own: gamma, step_size, T_max, T_cur, best,
// num_bad_epochs, ...; flags 0 or 1), MultiStepLR's and SequentialLR's "milestones" a
// 1-d int64 tensor, and SequentialLR's schedulers' entries under "schedulers.<k>.". The
// optimizer's rate is not in it: save Optimizer.StateDict too. The caller owns the
// StateDict and must Close it. Errors: ErrInvalidArgument (a nil s), ErrClosed,
// ErrInvalidHandle, ErrOutOfMemory.
func (s *LRScheduler) StateDict() (*StateDict, error) {
	const op = "LRScheduler.StateDict"
	h, err := s.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_lr_scheduler_state_dict(h)
	runtime.KeepAlive(s)
	return takeStateDict(op, r)
}

// LoadStateDict restores a state saved by StateDict from a scheduler of the same kind
// (dt_lr_scheduler_load_state_dict), as PyTorch's scheduler.load_state_dict(); a key
// absent keeps its value. All or nothing: every key and value is checked, then the
// settings together as the constructor checks them. As PyTorch's, the optimizer is not
// touched: restore its rate with Optimizer.LoadStateDict. sd stays the caller's to
// Close. Errors: ErrInvalidArgument (an unknown key, such as another kind's, a value
// that is not one number, a fraction where a whole number belongs, a setting the
// constructor refuses: the message names the key; a nil s or sd), ErrClosed (s or sd
// closed), ErrInvalidHandle.
func (s *LRScheduler) LoadStateDict(sd *StateDict) error {
	const op = "LRScheduler.LoadStateDict"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	sh, err := sd.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_lr_scheduler_load_state_dict(h, sh)
	runtime.KeepAlive(s)
	runtime.KeepAlive(sd)
	return resErr(op, r)
}

// Close releases the scheduler (and, with it, its hold on the optimizer and, for a
// SequentialLR, on its schedulers) and returns the error of that release (nil when it
// succeeded). Closing twice is a no-op returning nil, and so is a Close that races
// another Close of the same LRScheduler: the handle is swapped out atomically, so
// exactly one Close releases it (and returns its error).
func (s *LRScheduler) Close() error {
	if s == nil {
		return nil
	}
	h := atomic.SwapUintptr(&s.h, 0)
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(s, nil)
	return resErr("LRScheduler.Close", C.gdt_lr_scheduler_release(C.uintptr_t(h)))
}

package devtensor

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// Compile checks of the schedulers' signatures.
var (
	_ func(*Optimizer, int64, float64) (*LRScheduler, error)                    = NewStepLR
	_ func(*Optimizer, []int64, float64) (*LRScheduler, error)                  = NewMultiStepLR
	_ func(*Optimizer, float64) (*LRScheduler, error)                           = NewExponentialLR
	_ func(*Optimizer, float64, float64, int64) (*LRScheduler, error)           = NewLinearLR
	_ func(*Optimizer, float64, int64) (*LRScheduler, error)                    = NewConstantLR
	_ func(*Optimizer, int64, float64) (*LRScheduler, error)                    = NewPolynomialLR
	_ func(*Optimizer, int64, float64) (*LRScheduler, error)                    = NewCosineAnnealingLR
	_ func(*Optimizer, int64, int64, float64) (*LRScheduler, error)             = NewCosineAnnealingWarmRestarts
	_ func(*Optimizer, float64, int64, ...OneCycleOption) (*LRScheduler, error) = NewOneCycleLR
	_ func(*Optimizer, float64, float64, ...CyclicOption) (*LRScheduler, error) = NewCyclicLR
	_ func(*Optimizer, ...PlateauOption) (*LRScheduler, error)                  = NewReduceLROnPlateau
	_ func(*Optimizer, []*LRScheduler, []int64) (*LRScheduler, error)           = NewSequentialLR
	_ func([]*LRScheduler) (*LRScheduler, error)                                = NewChainedScheduler
	_ func(*Optimizer, func(int64) float64) (*LRScheduler, error)               = NewLambdaLR
	_ func(*Optimizer, func(int64) float64) (*LRScheduler, error)               = NewMultiplicativeLR
	_ func(*LRScheduler) error                                                  = (*LRScheduler).Step
	_ func(*LRScheduler, float64) error                                         = (*LRScheduler).StepMetric
	_ func(*LRScheduler) (float64, error)                                       = (*LRScheduler).LastLR
	_ func(*LRScheduler) (int64, error)                                         = (*LRScheduler).LastEpoch
	_ func(*LRScheduler) (string, error)                                        = (*LRScheduler).Kind
	_ func(*LRScheduler) (*StateDict, error)                                    = (*LRScheduler).StateDict
	_ func(*LRScheduler, *StateDict) error                                      = (*LRScheduler).LoadStateDict
	_ func(*LRScheduler) error                                                  = (*LRScheduler).Close
)

// schedSGD returns an SGD (with opts) over one fresh float64 parameter at rate lr,
// closed when the test ends (call noLeaks first, so that its check runs after).
func schedSGD(t *testing.T, lr float64, opts ...OptimizerOption) *Optimizer {
	t.Helper()
	w := must(FromSlice([]float64{0}, []int64{1}, CPU(0)))
	MustOK(w.SetRequiresGrad(true))
	o := must(SGD([]*Tensor{w}, lr, opts...))
	MustOK(w.Close()) // the optimizer holds a reference of its own
	t.Cleanup(func() { MustOK(o.Close()) })
	return o
}

// schedKeeper returns keep, used as keep(NewStepLR(...)): it returns the scheduler made
// (failing the test on an error) and closes it when the test ends.
func schedKeeper(t *testing.T) func(*LRScheduler, error) *LRScheduler {
	return func(s *LRScheduler, err error) *LRScheduler {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { MustOK(s.Close()) })
		return s
	}
}

// rateNear reports whether got is want within a relative 1e-12 (absolute near 0).
func rateNear(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// checkRate fails unless both the scheduler's LastLR and the optimizer's LR are want
// and its LastEpoch is epoch.
func checkRate(t *testing.T, what string, s *LRScheduler, o *Optimizer, epoch int64, want float64) {
	t.Helper()
	last := must(s.LastLR())
	lr := must(o.LR())
	e := must(s.LastEpoch())
	if !rateNear(last, want) || !rateNear(lr, want) || e != epoch {
		t.Errorf("%s: epoch %d (want %d): LastLR %.17g, Optimizer.LR %.17g, want %.17g", what, e, epoch, last, lr, want)
	}
}

// Every epoch-stepped schedule against rates worked out by hand from PyTorch's formulas,
// and each one's Kind, PyTorch's class name.
func TestLRSchedulerSchedules(t *testing.T) {
	noLeaks(t)
	keep := schedKeeper(t)
	cos := func(x float64) float64 { return math.Cos(x) }
	pi := math.Pi
	for _, c := range []struct {
		name string
		lr   float64
		make func(o *Optimizer) *LRScheduler
		kind string
		want []float64 // the rate after construction (epoch 0), then after each Step
	}{
		// lr * 0.5^(epoch / 2), rounded down.
		{"StepLR 2 0.5", 1, func(o *Optimizer) *LRScheduler { return keep(NewStepLR(o, 2, 0.5)) }, "StepLR",
			[]float64{1, 1, 0.5, 0.5, 0.25}},
		// times 0.1 at epoch 1, and twice at epoch 3 (listed twice): 1, 0.1, 0.1, 0.001.
		{"MultiStepLR 3 1 3", 1, func(o *Optimizer) *LRScheduler { return keep(NewMultiStepLR(o, []int64{3, 1, 3}, 0.1)) },
			"MultiStepLR", []float64{1, 0.1, 0.1, 0.001, 0.001}},
		// no milestones: the rate stays.
		{"MultiStepLR none", 0.5, func(o *Optimizer) *LRScheduler { return keep(NewMultiStepLR(o, nil, 0.1)) },
			"MultiStepLR", []float64{0.5, 0.5, 0.5}},
		{"ExponentialLR 0.5", 1, func(o *Optimizer) *LRScheduler { return keep(NewExponentialLR(o, 0.5)) },
			"ExponentialLR", []float64{1, 0.5, 0.25, 0.125}},
		// factor 0.25 + 0.75 * epoch / 4 of 0.1, then 1 from epoch 4 on.
		{"LinearLR 0.25 1 4", 0.1, func(o *Optimizer) *LRScheduler { return keep(NewLinearLR(o, 0.25, 1, 4)) },
			"LinearLR", []float64{0.025, 0.04375, 0.0625, 0.08125, 0.1, 0.1}},
		// 0.5 of 0.1 for epochs 0-2, the whole rate from epoch 3 on.
		{"ConstantLR 0.5 3", 0.1, func(o *Optimizer) *LRScheduler { return keep(NewConstantLR(o, 0.5, 3)) },
			"ConstantLR", []float64{0.05, 0.05, 0.05, 0.1, 0.1}},
		// 0.1 * (1 - e / 4)^2: 0.1, 0.05625, 0.025, 0.00625, then 0 from epoch 4 on.
		{"PolynomialLR 4 2", 0.1, func(o *Optimizer) *LRScheduler { return keep(NewPolynomialLR(o, 4, 2)) },
			"PolynomialLR", []float64{0.1, 0.05625, 0.025, 0.00625, 0, 0}},
		// 0.1 * (1 + cos(pi e / 4)) / 2; past T_max it rises again (epoch 5 = epoch 3).
		{"CosineAnnealingLR 4", 0.1, func(o *Optimizer) *LRScheduler { return keep(NewCosineAnnealingLR(o, 4, 0)) },
			"CosineAnnealingLR", []float64{0.1, 0.1 * (1 + cos(pi/4)) / 2, 0.05, 0.1 * (1 + cos(3*pi/4)) / 2, 0,
				0.1 * (1 + cos(5*pi/4)) / 2}},
		// eta_min 0.01: 0.01 + 0.09 * (1 + cos(pi e / 2)) / 2.
		{"CosineAnnealingLR 2 eta_min", 0.1, func(o *Optimizer) *LRScheduler { return keep(NewCosineAnnealingLR(o, 2, 0.01)) },
			"CosineAnnealingLR", []float64{0.1, 0.055, 0.01}},
		// periods 2, 4, 8: (1 + cos(pi T_cur / T_i)) / 2, T_cur back to 0 at epochs 2 and 6.
		{"CosineAnnealingWarmRestarts 2 2", 1,
			func(o *Optimizer) *LRScheduler { return keep(NewCosineAnnealingWarmRestarts(o, 2, 2, 0)) },
			"CosineAnnealingWarmRestarts", []float64{1, 0.5, 1, (1 + cos(pi/4)) / 2, 0.5, (1 + cos(3*pi/4)) / 2, 1,
				(1 + cos(pi/8)) / 2}},
		// linear, pct_start 0.5 of 10: up from 1/25 to 1 over epochs 0-4 (steps of 0.24),
		// then down to 0.04 / 1e4 = 4e-6 over epochs 4-9.
		{"OneCycleLR linear", 0.1, func(o *Optimizer) *LRScheduler {
			return keep(NewOneCycleLR(o, 1, 10, OneCyclePctStart(0.5), OneCycleAnnealStrategy("linear"),
				OneCycleCycleMomentum(false)))
		}, "OneCycleLR", []float64{0.04, 0.28, 0.52, 0.76, 1, 1 - (1-4e-6)/5, 1 - 2*(1-4e-6)/5, 1 - 3*(1-4e-6)/5,
			1 - 4*(1-4e-6)/5, 4e-6}},
		// three phases, div 10, final div 100, linear: 0.1 up to 1 by epoch 2 (3 steps = 0.3
		// of 10, the phase ending at step 2), back to 0.1 by epoch 4, then to 0.001 by epoch 9.
		{"OneCycleLR three phases", 0.5, func(o *Optimizer) *LRScheduler {
			return keep(NewOneCycleLR(o, 1, 10, OneCycleThreePhase(), OneCycleDivFactor(10), OneCycleFinalDivFactor(100),
				OneCycleAnnealStrategy("linear")))
		}, "OneCycleLR", []float64{0.1, 0.55, 1, 0.55, 0.1, 0.1 - 0.099/5, 0.1 - 2*0.099/5, 0.1 - 3*0.099/5,
			0.1 - 4*0.099/5, 0.001}},
		// triangular2, 2 up and 1 down: 0.01 + 0.09 * height, the height 0, 0.5, 1, 0 in the
		// first cycle, halved in the second.
		{"CyclicLR triangular2", 0.5, func(o *Optimizer) *LRScheduler {
			return keep(NewCyclicLR(o, 0.01, 0.1, CyclicStepSize(2, 1), CyclicMode("triangular2")))
		}, "CyclicLR", []float64{0.01, 0.055, 0.1, 0.01, 0.0325, 0.055, 0.01}},
		// exp_range with gamma 0.5, 1 up and 1 down, no momentum: 0.1 + 0.1 * 0.5^e at odd e.
		{"CyclicLR exp_range", 0.5, func(o *Optimizer) *LRScheduler {
			return keep(NewCyclicLR(o, 0.1, 0.2, CyclicStepSize(1, 0), CyclicMode("exp_range"), CyclicGamma(0.5),
				CyclicCycleMomentum(false)))
		}, "CyclicLR", []float64{0.1, 0.15, 0.1, 0.1125, 0.1}},
		// ConstantLR(0.5, 2) and ExponentialLR(0.5) stepped together: 0.5 at construction,
		// halved each step, doubled back at epoch 2 (ConstantLR's end).
		{"ChainedScheduler", 1, func(o *Optimizer) *LRScheduler {
			c := keep(NewConstantLR(o, 0.5, 2))
			e := keep(NewExponentialLR(o, 0.5))
			return keep(NewChainedScheduler([]*LRScheduler{c, e}))
		}, "ChainedScheduler", []float64{0.5, 0.25, 0.25, 0.125}},
		// 0.2 times 1 / (epoch + 1), from the initial rate each time.
		{"LambdaLR 1/(e+1)", 0.2, func(o *Optimizer) *LRScheduler {
			return keep(NewLambdaLR(o, func(e int64) float64 { return 1 / float64(e+1) }))
		}, "LambdaLR", []float64{0.2, 0.1, 0.2 / 3, 0.05}},
		// unchanged at construction, then times 0.5 at odd epochs, times 3 at even ones.
		{"MultiplicativeLR", 0.2, func(o *Optimizer) *LRScheduler {
			return keep(NewMultiplicativeLR(o, func(e int64) float64 {
				if e%2 == 1 {
					return 0.5
				}
				return 3
			}))
		}, "MultiplicativeLR", []float64{0.2, 0.1, 0.3, 0.15}},
	} {
		o := schedSGD(t, c.lr, Momentum(0.9))
		s := c.make(o)
		if k := must(s.Kind()); k != c.kind {
			t.Errorf("%s: Kind %q, want %q", c.name, k, c.kind)
		}
		for i, want := range c.want {
			if i > 0 {
				if err := s.Step(); err != nil {
					t.Fatalf("%s: step %d: %v", c.name, i, err)
				}
			}
			checkRate(t, c.name, s, o, int64(i), want)
		}
	}
}

// OneCycleLR with PyTorch's defaults (pct_start 0.3, "cos", momentum cycled between 0.95
// and 0.85, div 25, final div 1e4) on SGD with momentum 0.9, max_lr 0.5, 20 steps; and its
// refusal of a step past total_steps.
func TestLRSchedulerOneCycleDefaults(t *testing.T) {
	noLeaks(t)
	o := schedSGD(t, 0.1, Momentum(0.9))
	s := schedKeeper(t)(NewOneCycleLR(o, 0.5, 20))
	momentum := func() float64 { return must(o.Option("momentum")) }
	// Made: the rate max_lr / 25, the momentum max_momentum.
	checkRate(t, "made", s, o, 0, 0.02)
	if m := momentum(); !rateNear(m, 0.95) {
		t.Errorf("momentum after construction %v, want 0.95", m)
	}
	// The rise ends at step 0.3 * 20 - 1 = 5: at step e <= 5 the rate is
	// 0.5 + (0.02 - 0.5) * (1 + cos(pi e / 5)) / 2, the momentum
	// 0.85 + (0.95 - 0.85) * (1 + cos(pi e / 5)) / 2.
	for e := 1; e <= 5; e++ {
		MustOK(s.Step())
		c := (1 + math.Cos(math.Pi*float64(e)/5)) / 2
		checkRate(t, "rise", s, o, int64(e), 0.5+(0.02-0.5)*c)
		if m := momentum(); !rateNear(m, 0.85+0.1*c) {
			t.Errorf("step %d: momentum %v, want %v", e, m, 0.85+0.1*c)
		}
	}
	// The fall ends at step 19, at 0.02 / 1e4 = 2e-6, the momentum back at 0.95; step 12
	// is halfway: (0.5 + 2e-6) / 2 and 0.9.
	for e := 6; e <= 19; e++ {
		MustOK(s.Step())
		if e == 12 {
			checkRate(t, "halfway", s, o, 12, (0.5+2e-6)/2)
			if m := momentum(); !rateNear(m, 0.9) {
				t.Errorf("step 12: momentum %v, want 0.9", m)
			}
		}
	}
	checkRate(t, "end", s, o, 19, 2e-6)
	if m := momentum(); !rateNear(m, 0.95) {
		t.Errorf("step 19: momentum %v, want 0.95", m)
	}
	// Step 20 (the 21st rate, as PyTorch allows) goes on past the end; 21 is refused and
	// changes nothing.
	MustOK(s.Step())
	before := must(o.LR())
	err := s.Step()
	wantCode(t, err, ErrInvalidArgument)
	if !strings.Contains(err.Error(), "total_steps") {
		t.Errorf("step past the end: %v does not mention total_steps", err)
	}
	if e := must(s.LastEpoch()); e != 20 {
		t.Errorf("LastEpoch %d after the refused step, want 20", e)
	}
	if lr := must(o.LR()); lr != before {
		t.Errorf("the refused step changed the rate: %v, was %v", lr, before)
	}

	// cycle_momentum off leaves the momentum alone, and works on Adagrad, which has none;
	// on, Adagrad is refused.
	o2 := schedSGD(t, 0.1, Momentum(0.9))
	schedKeeper(t)(NewOneCycleLR(o2, 0.5, 20, OneCycleCycleMomentum(false)))
	if m := must(o2.Option("momentum")); m != 0.9 {
		t.Errorf("cycle_momentum off: momentum %v, want 0.9", m)
	}
	w := must(FromSlice([]float64{0}, []int64{1}, CPU(0)))
	defer w.Close()
	MustOK(w.SetRequiresGrad(true))
	ada := must(Adagrad([]*Tensor{w}, 0.1))
	defer ada.Close()
	_, err = NewOneCycleLR(ada, 0.5, 20)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "cycle_momentum") || e.Op != "NewOneCycleLR" {
		t.Errorf("OneCycleLR on Adagrad: %v", err)
	}
	s3 := schedKeeper(t)(NewOneCycleLR(ada, 0.5, 20, OneCycleCycleMomentum(false)))
	checkRate(t, "Adagrad", s3, ada, 0, 0.02)
	// Adam's momentum is beta1; OneCycleMomentum sets the range.
	adam := must(Adam([]*Tensor{w}, 0.1))
	defer adam.Close()
	schedKeeper(t)(NewOneCycleLR(adam, 0.5, 20, OneCycleMomentum(0.8, 0.85)))
	if b := must(adam.Option("beta1")); !rateNear(b, 0.85) {
		t.Errorf("Adam: beta1 %v after construction, want 0.85 (max_momentum)", b)
	}
}

// ReduceLROnPlateau against PyTorch's rules: the defaults, then patience, threshold,
// mode, cooldown and min_lr; and the step with a metric against the plain one.
func TestLRSchedulerReduceLROnPlateau(t *testing.T) {
	noLeaks(t)
	keep := schedKeeper(t)
	for _, c := range []struct {
		name    string
		lr      float64
		opts    []PlateauOption
		metrics []float64
		want    []float64 // the rate after each StepMetric
	}{
		// patience 0, abs threshold 0: the first 1.0 is an improvement (on +inf), each
		// later 1.0 is not: times 0.1 at once.
		{"patience 0", 1, []PlateauOption{PlateauPatience(0), PlateauThreshold(0, "abs"), PlateauFactor(0.1)},
			[]float64{1, 1, 1}, []float64{1, 0.1, 0.01}},
		// the defaults: patience 10, so the 11th step without improvement drops it.
		{"defaults", 1, nil, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
			[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.1}},
		// rel threshold 1e-4: 0.99995 is not below 1 * (1 - 1e-4), 0.9 is.
		{"rel threshold", 1, []PlateauOption{PlateauPatience(0)}, []float64{1, 0.99995, 0.9},
			[]float64{1, 0.1, 0.1}},
		// max mode, cooldown 1, min_lr 0.05, factor 0.5: halve at steps 2 and 4 (the step
		// after each drop is not counted), then 0.025 would be below min_lr: 0.05.
		{"max cooldown min_lr", 0.2, []PlateauOption{PlateauMode("max"), PlateauFactor(0.5), PlateauPatience(0),
			PlateauCooldown(1), PlateauMinLR(0.05)}, []float64{1, 1, 1, 1, 1, 1},
			[]float64{0.2, 0.1, 0.1, 0.05, 0.05, 0.05}},
		// max mode: rising is improving, falling is not.
		{"max rising", 1, []PlateauOption{PlateauMode("max"), PlateauPatience(0)}, []float64{1, 2, 3, 2},
			[]float64{1, 1, 1, 0.1}},
		// eps 0.5: a drop by 0.9 * 0.1 = 0.09 < 0.5 is skipped.
		{"eps", 0.1, []PlateauOption{PlateauPatience(0), PlateauEps(0.5)}, []float64{1, 1, 1},
			[]float64{0.1, 0.1, 0.1}},
	} {
		o := schedSGD(t, c.lr)
		s := keep(NewReduceLROnPlateau(o, c.opts...))
		if k := must(s.Kind()); k != "ReduceLROnPlateau" {
			t.Errorf("%s: Kind %q", c.name, k)
		}
		if lr := must(o.LR()); lr != c.lr {
			t.Errorf("%s: making it changed the rate to %v", c.name, lr)
		}
		for i, m := range c.metrics {
			MustOK(s.StepMetric(m))
			checkRate(t, c.name, s, o, int64(i+1), c.want[i])
		}
	}

	// Step is refused on a plateau, StepMetric on any other scheduler; neither changes
	// anything.
	o := schedSGD(t, 1)
	p := keep(NewReduceLROnPlateau(o))
	err := p.Step()
	if e := wantCode(t, err, ErrInvalidArgument); e.Op != "LRScheduler.Step" {
		t.Errorf("Step on a plateau: %v", err)
	}
	if e := must(p.LastEpoch()); e != 0 {
		t.Errorf("the refused Step moved LastEpoch to %d", e)
	}
	st := keep(NewStepLR(schedSGD(t, 1), 1, 0.5))
	err = st.StepMetric(1)
	if e := wantCode(t, err, ErrInvalidArgument); e.Op != "LRScheduler.StepMetric" {
		t.Errorf("StepMetric on StepLR: %v", err)
	}
	if e := must(st.LastEpoch()); e != 0 {
		t.Errorf("the refused StepMetric moved LastEpoch to %d", e)
	}
}

// SequentialLR: a LinearLR warm-up over 3 epochs, then CosineAnnealingLR(6) from the
// initial rate; the schedulers passed may be closed at once.
func TestLRSchedulerSequentialLR(t *testing.T) {
	noLeaks(t)
	o := schedSGD(t, 0.1)
	warm := must(NewLinearLR(o, 0.1, 1, 3))
	cosine := must(NewCosineAnnealingLR(o, 6, 0))
	s := schedKeeper(t)(NewSequentialLR(o, []*LRScheduler{warm, cosine}, []int64{3}))
	// The SequentialLR holds its own references.
	MustOK(warm.Close())
	MustOK(cosine.Close())
	if k := must(s.Kind()); k != "SequentialLR" {
		t.Errorf("Kind %q", k)
	}
	c := func(e float64) float64 { return 0.1 * (1 + math.Cos(math.Pi*e/6)) / 2 }
	// Warm-up: 0.1 * (0.1 + 0.9 e / 3) for e = 0, 1, 2; at the milestone the cosine
	// restarts from 0.1 (its epoch 0), then 0.1 * (1 + cos(pi k / 6)) / 2.
	for e, want := range []float64{0.01, 0.04, 0.07, 0.1, c(1), c(2), c(3), c(4)} {
		if e > 0 {
			MustOK(s.Step())
		}
		checkRate(t, "SequentialLR", s, o, int64(e), want)
	}
}

// Constructors' errors: what PyTorch refuses, with messages naming the setting; nil and
// closed arguments; none leaves a handle or changes the optimizer's rate.
func TestLRSchedulerConstructorErrors(t *testing.T) {
	noLeaks(t)
	keep := schedKeeper(t)
	o := schedSGD(t, 0.1, Momentum(0.9))
	other := schedSGD(t, 0.1)
	closed := schedSGD(t, 0.1)
	MustOK(closed.Close()) // its cleanup's Close is then a no-op
	step := keep(NewStepLR(o, 10, 0.5))
	plateau := keep(NewReduceLROnPlateau(o))
	foreign := keep(NewStepLR(other, 10, 0.5))
	closedSched := must(NewStepLR(o, 10, 0.5))
	MustOK(closedSched.Close())
	lin := keep(NewLinearLR(o, 0.5, 1, 2)) // sets the rate to 0.05
	before := must(o.LR())
	for _, c := range []struct {
		name     string
		err      error
		code     Code
		op, mono string // the operation, and a word the message must hold
	}{
		{"StepLR step_size 0", ctorErr(NewStepLR(o, 0, 0.5)), ErrInvalidArgument, "NewStepLR", "step_size"},
		{"StepLR gamma -1", ctorErr(NewStepLR(o, 1, -1)), ErrInvalidArgument, "NewStepLR", "gamma"},
		{"StepLR gamma NaN", ctorErr(NewStepLR(o, 1, math.NaN())), ErrInvalidArgument, "NewStepLR", "gamma"},
		{"StepLR nil optimizer", ctorErr(NewStepLR(nil, 1, 0.5)), ErrInvalidArgument, "NewStepLR", "nil optimizer"},
		{"StepLR closed optimizer", ctorErr(NewStepLR(closed, 1, 0.5)), ErrClosed, "NewStepLR", "closed optimizer"},
		{"MultiStepLR negative milestone", ctorErr(NewMultiStepLR(o, []int64{2, -1}, 0.1)), ErrInvalidArgument,
			"NewMultiStepLR", "milestones"},
		{"ExponentialLR gamma -0.5", ctorErr(NewExponentialLR(o, -0.5)), ErrInvalidArgument, "NewExponentialLR", "gamma"},
		{"LinearLR start_factor 0", ctorErr(NewLinearLR(o, 0, 1, 4)), ErrInvalidArgument, "NewLinearLR", "start_factor"},
		{"LinearLR end_factor 2", ctorErr(NewLinearLR(o, 0.5, 2, 4)), ErrInvalidArgument, "NewLinearLR", "end_factor"},
		{"LinearLR total_iters 0", ctorErr(NewLinearLR(o, 0.5, 1, 0)), ErrInvalidArgument, "NewLinearLR", "total_iters"},
		{"ConstantLR factor 0", ctorErr(NewConstantLR(o, 0, 4)), ErrInvalidArgument, "NewConstantLR", "factor"},
		{"ConstantLR total_iters 0", ctorErr(NewConstantLR(o, 0.5, 0)), ErrInvalidArgument, "NewConstantLR",
			"total_iters"},
		{"PolynomialLR total_iters 0", ctorErr(NewPolynomialLR(o, 0, 1)), ErrInvalidArgument, "NewPolynomialLR",
			"total_iters"},
		{"PolynomialLR power -1", ctorErr(NewPolynomialLR(o, 4, -1)), ErrInvalidArgument, "NewPolynomialLR", "power"},
		{"CosineAnnealingLR T_max 0", ctorErr(NewCosineAnnealingLR(o, 0, 0)), ErrInvalidArgument,
			"NewCosineAnnealingLR", "T_max"},
		{"CosineAnnealingLR eta_min -1", ctorErr(NewCosineAnnealingLR(o, 4, -1)), ErrInvalidArgument,
			"NewCosineAnnealingLR", "eta_min"},
		{"CosineAnnealingWarmRestarts T_0 0", ctorErr(NewCosineAnnealingWarmRestarts(o, 0, 1, 0)), ErrInvalidArgument,
			"NewCosineAnnealingWarmRestarts", "T_0"},
		{"CosineAnnealingWarmRestarts T_mult 0", ctorErr(NewCosineAnnealingWarmRestarts(o, 2, 0, 0)),
			ErrInvalidArgument, "NewCosineAnnealingWarmRestarts", "T_mult"},
		{"OneCycleLR total_steps 0", ctorErr(NewOneCycleLR(o, 1, 0)), ErrInvalidArgument, "NewOneCycleLR", "total_steps"},
		{"OneCycleLR anneal_strategy", ctorErr(NewOneCycleLR(o, 1, 10, OneCycleAnnealStrategy("square"))),
			ErrInvalidArgument, "NewOneCycleLR", "anneal_strategy"},
		{"OneCycleLR anneal_strategy NUL", ctorErr(NewOneCycleLR(o, 1, 10, OneCycleAnnealStrategy("cos\x00"))),
			ErrInvalidArgument, "NewOneCycleLR", "NUL"},
		{"OneCycleLR pct_start 1", ctorErr(NewOneCycleLR(o, 1, 10, OneCyclePctStart(1))), ErrInvalidArgument,
			"NewOneCycleLR", "pct_start"},
		{"OneCycleLR div_factor 0", ctorErr(NewOneCycleLR(o, 1, 10, OneCycleDivFactor(0))), ErrInvalidArgument,
			"NewOneCycleLR", "div_factor"},
		{"CyclicLR step size 0", ctorErr(NewCyclicLR(o, 0.01, 0.1, CyclicStepSize(0, 0))), ErrInvalidArgument,
			"NewCyclicLR", "step_size_up"},
		{"CyclicLR mode", ctorErr(NewCyclicLR(o, 0.01, 0.1, CyclicMode("sawtooth"))), ErrInvalidArgument,
			"NewCyclicLR", "mode"},
		{"CyclicLR mode NUL", ctorErr(NewCyclicLR(o, 0.01, 0.1, CyclicMode("triangular\x00"))), ErrInvalidArgument,
			"NewCyclicLR", "NUL"},
		{"CyclicLR max_lr NaN", ctorErr(NewCyclicLR(o, 0.01, math.NaN())), ErrInvalidArgument, "NewCyclicLR", "max_lr"},
		{"ReduceLROnPlateau mode", ctorErr(NewReduceLROnPlateau(o, PlateauMode("median"))), ErrInvalidArgument,
			"NewReduceLROnPlateau", "mode"},
		{"ReduceLROnPlateau threshold_mode", ctorErr(NewReduceLROnPlateau(o, PlateauThreshold(1e-4, "pct"))),
			ErrInvalidArgument, "NewReduceLROnPlateau", "threshold_mode"},
		{"ReduceLROnPlateau factor 1", ctorErr(NewReduceLROnPlateau(o, PlateauFactor(1))), ErrInvalidArgument,
			"NewReduceLROnPlateau", "factor"},
		{"ReduceLROnPlateau patience -1", ctorErr(NewReduceLROnPlateau(o, PlateauPatience(-1))), ErrInvalidArgument,
			"NewReduceLROnPlateau", "patience"},
		{"SequentialLR milestones missing", ctorErr(NewSequentialLR(o, []*LRScheduler{step, lin}, nil)),
			ErrInvalidArgument, "NewSequentialLR", "milestones"},
		{"SequentialLR no schedulers", ctorErr(NewSequentialLR(o, nil, nil)), ErrInvalidArgument, "NewSequentialLR",
			"scheduler"},
		{"SequentialLR nil scheduler", ctorErr(NewSequentialLR(o, []*LRScheduler{step, nil}, []int64{1})),
			ErrInvalidArgument, "NewSequentialLR", "schedulers[1]"},
		{"SequentialLR closed scheduler", ctorErr(NewSequentialLR(o, []*LRScheduler{closedSched, step}, []int64{1})),
			ErrClosed, "NewSequentialLR", "schedulers[0]"},
		{"SequentialLR twice", ctorErr(NewSequentialLR(o, []*LRScheduler{step, step}, []int64{1})),
			ErrInvalidArgument, "NewSequentialLR", "same scheduler"},
		{"SequentialLR plateau", ctorErr(NewSequentialLR(o, []*LRScheduler{step, plateau}, []int64{1})),
			ErrInvalidArgument, "NewSequentialLR", "ReduceLROnPlateau"},
		{"SequentialLR other optimizer", ctorErr(NewSequentialLR(o, []*LRScheduler{step, foreign}, []int64{1})),
			ErrInvalidArgument, "NewSequentialLR", "schedulers[1]"},
		{"SequentialLR milestone 0", ctorErr(NewSequentialLR(o, []*LRScheduler{step, lin}, []int64{0})),
			ErrInvalidArgument, "NewSequentialLR", "milestones"},
		{"ChainedScheduler no schedulers", ctorErr(NewChainedScheduler(nil)), ErrInvalidArgument,
			"NewChainedScheduler", "at least one"},
		{"ChainedScheduler nil scheduler", ctorErr(NewChainedScheduler([]*LRScheduler{step, nil})),
			ErrInvalidArgument, "NewChainedScheduler", "schedulers[1]"},
		{"ChainedScheduler closed scheduler", ctorErr(NewChainedScheduler([]*LRScheduler{closedSched})), ErrClosed,
			"NewChainedScheduler", "schedulers[0]"},
		{"ChainedScheduler plateau", ctorErr(NewChainedScheduler([]*LRScheduler{step, plateau})), ErrInvalidArgument,
			"NewChainedScheduler", "ReduceLROnPlateau"},
		{"ChainedScheduler other optimizer", ctorErr(NewChainedScheduler([]*LRScheduler{step, foreign})),
			ErrInvalidArgument, "NewChainedScheduler", "another optimizer"},
	} {
		var e *Error
		if !errors.Is(c.err, c.code) || !errors.As(c.err, &e) {
			t.Errorf("%s: want %v, got %v", c.name, c.code, c.err)
			continue
		}
		if e.Op != c.op || !strings.Contains(e.Msg, c.mono) {
			t.Errorf("%s: %v: want op %s and a message holding %q", c.name, c.err, c.op, c.mono)
		}
	}
	if lr := must(o.LR()); lr != before {
		t.Errorf("the refused constructors changed the rate to %v, was %v", lr, before)
	}
}

// ctorErr returns a constructor's error, closing a scheduler it made by mistake.
func ctorErr(s *LRScheduler, err error) error {
	if err == nil {
		_ = s.Close()
	}
	return err
}

// A checkpoint: the scheduler's state dict under PyTorch's names, loaded into a new
// scheduler (with the optimizer's own state dict) resumes the same schedule; a state
// dict of another kind and nil or closed arguments are refused.
func TestLRSchedulerStateDictRoundTrip(t *testing.T) {
	noLeaks(t)
	keep := schedKeeper(t)
	o := schedSGD(t, 1)
	s := keep(NewStepLR(o, 2, 0.5))
	for i := 0; i < 3; i++ {
		MustOK(s.Step())
	}
	sd := must(s.StateDict())
	defer sd.Close()
	for name, want := range map[string]float64{"base_lr": 1, "last_epoch": 3, "last_lr": 0.5, "step_size": 2,
		"gamma": 0.5} {
		v := must(sd.Get(name))
		got := must(ToSlice[float64](v))
		MustOK(v.Close())
		if len(got) != 1 || got[0] != want {
			t.Errorf("state dict %q: %v, want [%v]", name, got, want)
		}
	}
	osd := must(o.StateDict())
	defer osd.Close()

	// A new optimizer and scheduler with other settings take both state dicts.
	o2 := schedSGD(t, 3)
	s2 := keep(NewStepLR(o2, 5, 0.1))
	MustOK(s2.LoadStateDict(sd))
	MustOK(o2.LoadStateDict(osd))
	if e1, e2 := must(s.LastEpoch()), must(s2.LastEpoch()); e1 != e2 {
		t.Errorf("LastEpoch %d after loading, want %d", e2, e1)
	}
	if l := must(s2.LastLR()); l != 0.5 {
		t.Errorf("LastLR %v after loading, want 0.5", l)
	}
	// Both go on alike: epoch 4 halves the rate, epoch 5 keeps it.
	for e, want := range []float64{0.25, 0.25} {
		MustOK(s.Step())
		MustOK(s2.Step())
		checkRate(t, "original", s, o, int64(4+e), want)
		checkRate(t, "restored", s2, o2, int64(4+e), want)
	}

	// A SequentialLR's holds its schedulers' under "schedulers.<k>.", and its milestones.
	o3 := schedSGD(t, 0.1)
	seq := func(o *Optimizer) *LRScheduler {
		a := must(NewLinearLR(o, 0.1, 1, 3))
		b := must(NewExponentialLR(o, 0.5))
		defer a.Close()
		defer b.Close()
		return keep(NewSequentialLR(o, []*LRScheduler{a, b}, []int64{3}))
	}
	q := seq(o3)
	for i := 0; i < 4; i++ {
		MustOK(q.Step())
	}
	qsd := must(q.StateDict())
	defer qsd.Close()
	names := strings.Join(must(qsd.Names()), " ")
	for _, want := range []string{"milestones", "schedulers.0.", "schedulers.1.gamma"} {
		if !strings.Contains(names, want) {
			t.Errorf("SequentialLR state dict %q lacks %q", names, want)
		}
	}
	o3sd := must(o3.StateDict())
	defer o3sd.Close()
	o4 := schedSGD(t, 0.1)
	q2 := seq(o4)
	MustOK(q2.LoadStateDict(qsd))
	MustOK(o4.LoadStateDict(o3sd))
	for e := int64(5); e <= 6; e++ {
		MustOK(q.Step())
		MustOK(q2.Step())
		checkRate(t, "SequentialLR restored", q2, o4, e, must(q.LastLR()))
	}

	// Another kind's state dict: ExponentialLR has no step_size.
	ex := keep(NewExponentialLR(schedSGD(t, 1), 0.5))
	err := ex.LoadStateDict(sd)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "step_size") || e.Op != "LRScheduler.LoadStateDict" {
		t.Errorf("loading StepLR's state dict into ExponentialLR: %v", err)
	}
	if e := must(ex.LastEpoch()); e != 0 {
		t.Errorf("the refused load changed LastEpoch to %d", e)
	}
	wantCode(t, ex.LoadStateDict(nil), ErrInvalidArgument)
	closedSD := must(NewStateDict())
	MustOK(closedSD.Close())
	wantCode(t, ex.LoadStateDict(closedSD), ErrClosed)
}

// Close is idempotent and safe from several goroutines at once; any use after it is
// ErrClosed, a nil scheduler ErrInvalidArgument.
func TestLRSchedulerCloseAndUseAfterClose(t *testing.T) {
	noLeaks(t)
	o := schedSGD(t, 1)
	s := must(NewExponentialLR(o, 0.5))
	MustOK(s.Close())
	MustOK(s.Close())
	sd := must(NewStateDict())
	defer sd.Close()
	uses := map[string]error{
		"Step":          s.Step(),
		"StepMetric":    s.StepMetric(1),
		"LastLR":        errOf(s.LastLR()),
		"LastEpoch":     errOf(s.LastEpoch()),
		"Kind":          errOf(s.Kind()),
		"StateDict":     errOf(s.StateDict()),
		"LoadStateDict": s.LoadStateDict(sd),
	}
	for name, err := range uses {
		e := wantCode(t, err, ErrClosed)
		if e.Op != "LRScheduler."+name || !strings.Contains(e.Msg, "closed scheduler") {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	var nilSched *LRScheduler
	wantCode(t, nilSched.Step(), ErrInvalidArgument)
	wantCode(t, errOf(nilSched.LastLR()), ErrInvalidArgument)
	if err := nilSched.Close(); err != nil {
		t.Errorf("Close of a nil scheduler: %v", err)
	}

	// Eight goroutines close each of 20 schedulers at once: exactly one releases it, and
	// every Close returns nil.
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		s := must(NewStepLR(o, 1, 0.5))
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
}

// errOf returns the error of a call with a result, closing a result that has a Close.
func errOf[T any](v T, err error) error {
	if c, ok := any(v).(interface{ Close() error }); ok && err == nil {
		_ = c.Close()
	}
	return err
}

// The C scheduler retains its optimizer: it keeps setting the rate (and reading and
// loading its state) after the Go Optimizer was closed, and nothing is left once the
// scheduler is closed too (noLeaks).
func TestLRSchedulerOutlivesItsOptimizer(t *testing.T) {
	noLeaks(t)
	w := must(FromSlice([]float64{0}, []int64{1}, CPU(0)))
	MustOK(w.SetRequiresGrad(true))
	o := must(SGD([]*Tensor{w}, 1))
	MustOK(w.Close())
	s := must(NewStepLR(o, 1, 0.5))
	MustOK(o.Close()) // the handle goes; the optimizer stays, the scheduler's
	for e, want := range []float64{0.5, 0.25, 0.125} {
		MustOK(s.Step())
		if l := must(s.LastLR()); l != want {
			t.Errorf("step %d after the Optimizer's Close: LastLR %v, want %v", e+1, l, want)
		}
	}
	sd := must(s.StateDict())
	MustOK(s.LoadStateDict(sd))
	MustOK(sd.Close())
	MustOK(s.Close())
}

// Steps of one scheduler from several goroutines at once are serialised by the C library:
// none is lost (run under -race by run_tests.sh).
func TestLRSchedulerConcurrentSteps(t *testing.T) {
	noLeaks(t)
	o := schedSGD(t, 1)
	s := schedKeeper(t)(NewExponentialLR(o, 0.9))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if err := s.Step(); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.LastLR(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if e := must(s.LastEpoch()); e != 100 {
		t.Errorf("LastEpoch %d after 100 concurrent steps", e)
	}
	if l := must(s.LastLR()); math.Abs(l-math.Pow(0.9, 100)) > 1e-12 {
		t.Errorf("LastLR %v after 100 steps, want 0.9^100 = %v", l, math.Pow(0.9, 100))
	}
}

// Forgotten schedulers are released by their finalizers, even beside a live object (the
// 16-byte padding), and free their hold on the optimizer.
func TestLRSchedulerFinalizer(t *testing.T) {
	if size := unsafe.Sizeof(LRScheduler{}); size < 16 {
		t.Errorf("LRScheduler is %d bytes: below 16 its finalizer may never run (tiny allocator)", size)
	}
	noLeaks(t)
	o := schedSGD(t, 1)
	forgetBesideLive(t, "LRScheduler", 20, func(int) { must(NewStepLR(o, 1, 0.5)) })
}

// LambdaLR's and MultiplicativeLR's Go function: the epochs it sees, a nil one, a value
// no rate can be, a panic (the step fails, says why, and changes nothing; the next
// step goes on), scheduler calls from inside it (refused, no deadlock), and the
// function let go when the scheduler is closed, or when making it failed.
func TestLRSchedulerLambdaFunctions(t *testing.T) {
	noLeaks(t)
	before := atomic.LoadInt64(&liveLRLambdas)
	defer func() {
		if n := atomic.LoadInt64(&liveLRLambdas); n != before {
			t.Errorf("%d lambda functions still held, want %d", n, before)
		}
	}()
	o := schedSGD(t, 1)
	if _, err := NewLambdaLR(o, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil fn: %v, want ErrInvalidArgument", err)
	}
	_, err := NewLambdaLR(o, func(int64) float64 { return math.NaN() })
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "returned nan at epoch 0") {
		t.Errorf("NaN at epoch 0: %v", err)
	}
	_, err = NewLambdaLR(o, func(int64) float64 { panic("no schedule here") })
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "the function panicked: no schedule here") {
		t.Errorf("panic at epoch 0: %v", err)
	}
	if lr := must(o.LR()); lr != 1 {
		t.Errorf("the failed constructors moved the rate to %g", lr)
	}

	var epochs []int64
	var inside []error
	var s *LRScheduler
	mode := "ok"
	factor := func(e int64) float64 {
		epochs = append(epochs, e)
		if s != nil {
			_, err := s.LastLR()
			inside = append(inside, err)
		}
		switch mode {
		case "panic":
			panic(fmt.Sprintf("at epoch %d", e))
		case "negative":
			return -1
		}
		return 0.5
	}
	s = must(NewMultiplicativeLR(o, factor))
	MustOK(s.Step()) // epoch 1: 0.5
	for _, c := range []struct{ mode, want string }{
		{"panic", "(the function panicked: at epoch 2)"},
		{"negative", "which makes the rate -0.5"},
	} {
		mode = c.mode
		err := s.Step()
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Step (%s): %v, want ErrInvalidArgument saying %q", c.mode, err, c.want)
		}
		checkRate(t, "after a failed step", s, o, 1, 0.5)
	}
	mode = "ok"
	MustOK(s.Step()) // epoch 2 at last: 0.25
	checkRate(t, "after the failed steps", s, o, 2, 0.25)
	if fmt.Sprint(epochs) != "[1 2 2 2]" {
		t.Errorf("the function saw epochs %v, want [1 2 2 2]", epochs)
	}
	if len(inside) != 4 {
		t.Fatalf("%d calls with the scheduler set, want 4", len(inside))
	}
	for _, err := range inside {
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "inside") {
			t.Errorf("LastLR inside the function: %v, want ErrInvalidArgument", err)
		}
	}
	MustOK(s.Close())

	// A SequentialLR reports the panic of a function it calls: restarting its first
	// scheduler when made, and stepping it.
	o2 := schedSGD(t, 1)
	boom := false
	lam := must(NewLambdaLR(o2, func(int64) float64 {
		if boom {
			panic("boom in a sequence")
		}
		return 0.5
	}))
	exp := must(NewExponentialLR(o2, 0.5))
	const said = "(the function panicked: boom in a sequence)"
	boom = true
	if _, err := NewSequentialLR(o2, []*LRScheduler{lam, exp}, []int64{3}); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), said) {
		t.Errorf("NewSequentialLR over a panicking function: %v, want ErrInvalidArgument saying %q", err, said)
	}
	boom = false
	seq := must(NewSequentialLR(o2, []*LRScheduler{lam, exp}, []int64{3}))
	boom = true
	if err := seq.Step(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), said) {
		t.Errorf("SequentialLR.Step over a panicking function: %v, want ErrInvalidArgument saying %q", err, said)
	}
	checkRate(t, "after the sequence's failed step", seq, o2, 0, 0.5)
	boom = false
	MustOK(seq.Step())
	checkRate(t, "after the sequence's next step", seq, o2, 1, 0.5)
	for _, x := range []*LRScheduler{seq, exp, lam} {
		MustOK(x.Close())
	}
}

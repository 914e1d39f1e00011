package devtensor

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// Compile checks of the signatures of RMSprop, Adagrad and their options.
var (
	_ func([]*Tensor, float64, ...OptimizerOption) (*Optimizer, error)    = RMSprop[[]*Tensor]
	_ func(NamedTensors, float64, ...OptimizerOption) (*Optimizer, error) = RMSprop[NamedTensors]
	_ func([]Named, float64, ...OptimizerOption) (*Optimizer, error)      = Adagrad[[]Named]
	_ func(NamedTensors, float64, ...OptimizerOption) (*Optimizer, error) = Adagrad[NamedTensors]
	_ func(float64) OptimizerOption                                       = Alpha
	_ func() OptimizerOption                                              = Centered
	_ func(float64) OptimizerOption                                       = LRDecay
	_ func(float64) OptimizerOption                                       = InitialAccumulatorValue
)

// rmspropRef is torch.optim.RMSprop's update worked out in plain Go from the documented
// formulas (an expectation independent of the library), over one parameter's elements.
type rmspropRef struct {
	lr, alpha, eps, weightDecay, momentum float64
	centered                              bool
	p, squareAvg, gradAvg, buf            []float64
}

func newRMSpropRef(p []float64, lr, alpha, eps, weightDecay, momentum float64, centered bool) *rmspropRef {
	n := len(p)
	return &rmspropRef{lr: lr, alpha: alpha, eps: eps, weightDecay: weightDecay, momentum: momentum,
		centered: centered, p: append([]float64(nil), p...), squareAvg: make([]float64, n),
		gradAvg: make([]float64, n), buf: make([]float64, n)}
}

func (r *rmspropRef) step(grad []float64) {
	for i := range r.p {
		g := grad[i] + r.weightDecay*r.p[i]
		r.squareAvg[i] = r.alpha*r.squareAvg[i] + (1-r.alpha)*g*g
		v := r.squareAvg[i]
		if r.centered {
			r.gradAvg[i] = r.alpha*r.gradAvg[i] + (1-r.alpha)*g
			v -= r.gradAvg[i] * r.gradAvg[i]
		}
		avg := math.Sqrt(v) + r.eps
		if r.momentum > 0 {
			r.buf[i] = r.momentum*r.buf[i] + g/avg
			r.p[i] -= r.lr * r.buf[i]
		} else {
			r.p[i] -= r.lr * g / avg
		}
	}
}

// adagradRef is torch.optim.Adagrad's update in plain Go, as rmspropRef.
type adagradRef struct {
	lr, lrDecay, weightDecay, eps float64
	t                             int
	p, sum                        []float64
}

func newAdagradRef(p []float64, lr, lrDecay, weightDecay, initial, eps float64) *adagradRef {
	r := &adagradRef{lr: lr, lrDecay: lrDecay, weightDecay: weightDecay, eps: eps,
		p: append([]float64(nil), p...), sum: make([]float64, len(p))}
	for i := range r.sum {
		r.sum[i] = initial
	}
	return r
}

func (r *adagradRef) step(grad []float64) {
	r.t++
	clr := r.lr / (1 + float64(r.t-1)*r.lrDecay)
	for i := range r.p {
		g := grad[i] + r.weightDecay*r.p[i]
		r.sum[i] += g * g
		r.p[i] -= clr * g / (math.Sqrt(r.sum[i]) + r.eps)
	}
}

var adaptiveGrads = [][]float64{{0.5, 1, -2}, {1, -0.25, 3}, {-1, 2, 0.5}}

// stepWith clears p's gradient, sets it to g and steps o.
func stepWith(t *testing.T, s *Scope, o *Optimizer, p *Tensor, g []float64) {
	t.Helper()
	MustOK(o.ZeroGrad())
	setGrad(t, s, p, g)
	MustOK(o.Step())
}

// RMSprop's steps against the formulas worked out by hand: the first step of the
// defaults in closed form, then three steps of each variant (weight decay, momentum,
// centered) against rmspropRef, and the state it keeps.
func TestRMSpropSteps(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	start := []float64{1, -2, 0.5}

	// First step, defaults (lr 0.01, alpha 0.99, eps 1e-8): square_avg = 0.01 g^2, so
	// p -= 0.01 * g / (0.1 |g| + 1e-8), about 0.1 sign(g).
	p := linearLeaf(t, s, start)
	opt := must(RMSprop([]*Tensor{p}, 0.01))
	defer opt.Close()
	stepWith(t, s, opt, p, adaptiveGrads[0])
	want := make([]float64, len(start))
	for i, g := range adaptiveGrads[0] {
		want[i] = start[i] - 0.01*g/(math.Sqrt(0.01*g*g)+1e-8)
	}
	near(t, "RMSprop's first step", must(ToSlice[float64](p)), want, 1e-12)
	near(t, "about 0.1 sign(g)", must(ToSlice[float64](p)), []float64{0.9, -2.1, 0.6}, 1e-6)

	for _, c := range []struct {
		name                     string
		opts                     []OptimizerOption
		alpha, eps, wd, momentum float64
		centered                 bool
	}{
		{"defaults", nil, 0.99, 1e-8, 0, 0, false},
		{"alpha 0.9, eps 1e-3", []OptimizerOption{Alpha(0.9), Eps(1e-3)}, 0.9, 1e-3, 0, 0, false},
		{"weight decay 0.1", []OptimizerOption{WeightDecay(0.1)}, 0.99, 1e-8, 0.1, 0, false},
		{"momentum 0.9", []OptimizerOption{Momentum(0.9)}, 0.99, 1e-8, 0, 0.9, false},
		{"centered", []OptimizerOption{Centered()}, 0.99, 1e-8, 0, 0, true},
		{"all", []OptimizerOption{Alpha(0.95), Eps(1e-6), WeightDecay(0.05), Momentum(0.5), Centered()},
			0.95, 1e-6, 0.05, 0.5, true},
	} {
		p := linearLeaf(t, s, start)
		opt := must(RMSprop([]*Tensor{p}, 0.05, c.opts...))
		ref := newRMSpropRef(start, 0.05, c.alpha, c.eps, c.wd, c.momentum, c.centered)
		for i, g := range adaptiveGrads {
			stepWith(t, s, opt, p, g)
			ref.step(g)
			near(t, fmt.Sprintf("%s: step %d", c.name, i+1), must(ToSlice[float64](p)), ref.p, 1e-12)
		}
		sd := must(opt.StateDict())
		if st := must(must(s.Track(sd.Get("state.0.step"))).Item()); st != 3 {
			t.Errorf("%s: state.0.step %v, want 3", c.name, st)
		}
		near(t, c.name+": square_avg", must(ToSlice[float64](must(s.Track(sd.Get("state.0.square_avg"))))), ref.squareAvg, 1e-12)
		if c.momentum > 0 {
			near(t, c.name+": momentum_buffer", must(ToSlice[float64](must(s.Track(sd.Get("state.0.momentum_buffer"))))), ref.buf, 1e-12)
		}
		if c.centered {
			near(t, c.name+": grad_avg", must(ToSlice[float64](must(s.Track(sd.Get("state.0.grad_avg"))))), ref.gradAvg, 1e-12)
		}
		MustOK(sd.Close())
		MustOK(opt.Close())
	}
}

// Adagrad's steps against the formulas worked out by hand: the first step with the
// defaults in closed form, then three steps of each variant (lr decay, weight decay, an
// initial accumulator value, eps) against adagradRef, and the sums it keeps.
func TestAdagradSteps(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	start := []float64{1, -2, 0.5}

	// First step, defaults (initial 0, eps 1e-10): sum = g^2, p -= lr g / (|g| + eps).
	p := linearLeaf(t, s, start)
	opt := must(Adagrad([]*Tensor{p}, 0.1))
	defer opt.Close()
	stepWith(t, s, opt, p, adaptiveGrads[0])
	want := make([]float64, len(start))
	for i, g := range adaptiveGrads[0] {
		want[i] = start[i] - 0.1*g/(math.Abs(g)+1e-10)
	}
	near(t, "Adagrad's first step", must(ToSlice[float64](p)), want, 1e-12)
	near(t, "about 0.1 sign(g)", must(ToSlice[float64](p)), []float64{0.9, -2.1, 0.6}, 1e-9)

	for _, c := range []struct {
		name                      string
		opts                      []OptimizerOption
		lrDecay, wd, initial, eps float64
	}{
		{"defaults", nil, 0, 0, 0, 1e-10},
		{"lr decay 0.5", []OptimizerOption{LRDecay(0.5)}, 0.5, 0, 0, 1e-10},
		{"weight decay 0.1", []OptimizerOption{WeightDecay(0.1)}, 0, 0.1, 0, 1e-10},
		{"initial 0.25, eps 1e-3", []OptimizerOption{InitialAccumulatorValue(0.25), Eps(1e-3)}, 0, 0, 0.25, 1e-3},
		{"all", []OptimizerOption{LRDecay(0.1), WeightDecay(0.01), InitialAccumulatorValue(1), Eps(1e-6)},
			0.1, 0.01, 1, 1e-6},
	} {
		p := linearLeaf(t, s, start)
		opt := must(Adagrad([]*Tensor{p}, 0.1, c.opts...))
		ref := newAdagradRef(start, 0.1, c.lrDecay, c.wd, c.initial, c.eps)
		for i, g := range adaptiveGrads {
			stepWith(t, s, opt, p, g)
			ref.step(g)
			near(t, fmt.Sprintf("%s: step %d", c.name, i+1), must(ToSlice[float64](p)), ref.p, 1e-12)
		}
		sd := must(opt.StateDict())
		if st := must(must(s.Track(sd.Get("state.0.step"))).Item()); st != 3 {
			t.Errorf("%s: state.0.step %v, want 3", c.name, st)
		}
		near(t, c.name+": sum", must(ToSlice[float64](must(s.Track(sd.Get("state.0.sum"))))), ref.sum, 1e-12)
		MustOK(sd.Close())
		MustOK(opt.Close())
	}
}

// optimStateNames returns the names of o's state dict.
func optimStateNames(t *testing.T, o *Optimizer) string {
	t.Helper()
	sd := must(o.StateDict())
	defer sd.Close()
	return strings.Join(must(sd.Names()), " ")
}

// The state dicts of RMSprop and Adagrad hold PyTorch's names in PyTorch's order;
// Adagrad's exists before the first step (step 0, the sums at the initial value).
func TestRMSpropAdagradStateDictNames(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	// The settings (PyTorch's param_groups) come first, then the state.
	const rms = "lr alpha eps weight_decay momentum centered maximize"
	const ada = "lr lr_decay weight_decay eps initial_accumulator_value maximize"
	for _, c := range []struct {
		name   string
		opts   []OptimizerOption
		before string
		after  string
	}{
		{"defaults", nil, rms, rms + " state.0.step state.0.square_avg state.1.step state.1.square_avg"},
		{"momentum", []OptimizerOption{Momentum(0.9)}, rms,
			rms + " state.0.step state.0.square_avg state.0.momentum_buffer state.1.step state.1.square_avg state.1.momentum_buffer"},
		{"centered", []OptimizerOption{Centered()}, rms,
			rms + " state.0.step state.0.square_avg state.0.grad_avg state.1.step state.1.square_avg state.1.grad_avg"},
		{"momentum and centered", []OptimizerOption{Centered(), Momentum(0.5)}, rms,
			rms + " state.0.step state.0.square_avg state.0.momentum_buffer state.0.grad_avg " +
				"state.1.step state.1.square_avg state.1.momentum_buffer state.1.grad_avg"},
	} {
		a, b := linearLeaf(t, s, []float64{1, 2}), linearLeaf(t, s, []float64{3})
		opt := must(RMSprop([]*Tensor{a, b}, 0.01, c.opts...))
		if got := optimStateNames(t, opt); got != c.before {
			t.Errorf("RMSprop %s before a step: %q, want %q", c.name, got, c.before)
		}
		setGrad(t, s, a, []float64{1, -1})
		setGrad(t, s, b, []float64{2})
		MustOK(opt.Step())
		if got := optimStateNames(t, opt); got != c.after {
			t.Errorf("RMSprop %s: %q, want %q", c.name, got, c.after)
		}
		MustOK(opt.Close())
	}

	a, b := linearLeaf(t, s, []float64{1, 2}), linearLeaf(t, s, []float64{3})
	opt := must(Adagrad([]*Tensor{a, b}, 0.01, InitialAccumulatorValue(0.1)))
	defer opt.Close()
	const names = ada + " state.0.step state.0.sum state.1.step state.1.sum"
	if got := optimStateNames(t, opt); got != names {
		t.Fatalf("Adagrad before a step: %q, want %q", got, names)
	}
	sd := must(opt.StateDict())
	if st := must(must(s.Track(sd.Get("state.0.step"))).Item()); st != 0 {
		t.Errorf("Adagrad state.0.step before a step: %v, want 0", st)
	}
	near(t, "Adagrad state.0.sum before a step", must(ToSlice[float64](must(s.Track(sd.Get("state.0.sum"))))), []float64{0.1, 0.1}, 0)
	near(t, "Adagrad state.1.sum before a step", must(ToSlice[float64](must(s.Track(sd.Get("state.1.sum"))))), []float64{0.1}, 0)
	MustOK(sd.Close())
	setGrad(t, s, a, []float64{1, -1})
	setGrad(t, s, b, []float64{2})
	MustOK(opt.Step())
	if got := optimStateNames(t, opt); got != names {
		t.Errorf("Adagrad after a step: %q, want %q", got, names)
	}
	sd = must(opt.StateDict())
	defer sd.Close()
	if st := must(must(s.Track(sd.Get("state.1.step"))).Item()); st != 1 {
		t.Errorf("Adagrad state.1.step after a step: %v, want 1", st)
	}
	near(t, "Adagrad state.1.sum after a step (0.1 + 2^2)", must(ToSlice[float64](must(s.Track(sd.Get("state.1.sum"))))), []float64{4.1}, 1e-12)
}

// Bad settings are ErrInvalidArgument naming the setting: a negative value (refused by
// the library), an option of another optimizer (refused here); the options each new
// optimizer does have are accepted.
func TestRMSpropAdagradErrors(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	p := linearLeaf(t, s, []float64{1, 2})
	ps := []*Tensor{p}
	for _, c := range []struct {
		name string
		mk   func() (*Optimizer, error)
		msg  string // what the message must hold
	}{
		{"RMSprop negative lr", func() (*Optimizer, error) { return RMSprop(ps, -0.1) }, "learning rate"},
		{"Adagrad negative lr", func() (*Optimizer, error) { return Adagrad(ps, -0.1) }, "learning rate"},
		{"RMSprop negative alpha", func() (*Optimizer, error) { return RMSprop(ps, 0.01, Alpha(-0.5)) }, "alpha"},
		{"RMSprop negative eps", func() (*Optimizer, error) { return RMSprop(ps, 0.01, Eps(-1)) }, "epsilon"},
		{"RMSprop negative momentum", func() (*Optimizer, error) { return RMSprop(ps, 0.01, Momentum(-0.9)) }, "momentum"},
		{"RMSprop negative weight decay", func() (*Optimizer, error) { return RMSprop(ps, 0.01, WeightDecay(-1)) }, "weight_decay"},
		{"RMSprop NaN alpha", func() (*Optimizer, error) { return RMSprop(ps, 0.01, Alpha(math.NaN())) }, "alpha"},
		{"Adagrad negative lr decay", func() (*Optimizer, error) { return Adagrad(ps, 0.01, LRDecay(-1)) }, "lr_decay"},
		{"Adagrad negative initial accumulator value", func() (*Optimizer, error) {
			return Adagrad(ps, 0.01, InitialAccumulatorValue(-1))
		}, "initial_accumulator_value"},
		{"Adagrad negative eps", func() (*Optimizer, error) { return Adagrad(ps, 0.01, Eps(-1)) }, "epsilon"},
		{"Adagrad with Centered", func() (*Optimizer, error) { return Adagrad(ps, 0.01, Centered()) }, "Adagrad has no option Centered"},
		{"SGD with LRDecay", func() (*Optimizer, error) { return SGD(ps, 0.01, LRDecay(0.1)) }, "SGD has no option LRDecay"},
		{"Adam with Alpha", func() (*Optimizer, error) { return Adam(ps, 0.01, Alpha(0.9)) }, "Adam has no option Alpha"},
		{"AdamW with InitialAccumulatorValue", func() (*Optimizer, error) {
			return AdamW(ps, 0.01, InitialAccumulatorValue(0.1))
		}, "AdamW has no option InitialAccumulatorValue"},
		{"RMSprop with Betas", func() (*Optimizer, error) { return RMSprop(ps, 0.01, Betas(0.9, 0.99)) }, "RMSprop has no option Betas"},
		{"RMSprop with Nesterov", func() (*Optimizer, error) { return RMSprop(ps, 0.01, Momentum(0.9), Nesterov()) }, "RMSprop has no option Nesterov"},
		{"RMSprop with LRDecay", func() (*Optimizer, error) { return RMSprop(ps, 0.01, LRDecay(0.1)) }, "RMSprop has no option LRDecay"},
		{"Adagrad with Momentum", func() (*Optimizer, error) { return Adagrad(ps, 0.01, Momentum(0.9)) }, "Adagrad has no option Momentum"},
		{"Adagrad with Dampening", func() (*Optimizer, error) { return Adagrad(ps, 0.01, Dampening(0.1)) }, "Adagrad has no option Dampening"},
		{"SGD with Alpha", func() (*Optimizer, error) { return SGD(ps, 0.01, Alpha(0.9)) }, "SGD has no option Alpha"},
		{"SGD with Centered", func() (*Optimizer, error) { return SGD(ps, 0.01, Centered()) }, "SGD has no option Centered"},
		{"RMSprop with no parameters", func() (*Optimizer, error) { return RMSprop([]*Tensor{}, 0.01) }, "empty parameter list"},
		{"Adagrad with no parameters", func() (*Optimizer, error) { return Adagrad([]*Tensor{}, 0.01) }, "empty parameter list"},
	} {
		o, err := c.mk()
		if err == nil {
			MustOK(o.Close())
			t.Errorf("%s: no error", c.name)
			continue
		}
		e := wantCode(t, err, ErrInvalidArgument)
		if !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: message %q does not hold %q", c.name, e.Msg, c.msg)
		}
	}

	// The options each has are accepted, zero values included.
	for name, mk := range map[string]func() (*Optimizer, error){
		"RMSprop": func() (*Optimizer, error) {
			return RMSprop(ps, 0, Alpha(0), Eps(0), WeightDecay(0), Momentum(0), Centered())
		},
		"Adagrad": func() (*Optimizer, error) {
			return Adagrad(ps, 0, LRDecay(0), WeightDecay(0), InitialAccumulatorValue(0), Eps(0))
		},
		"SGD with WeightDecay": func() (*Optimizer, error) { return SGD(ps, 0.1, WeightDecay(0.1)) },
		"Adam with Eps":        func() (*Optimizer, error) { return Adam(ps, 0.1, Eps(1e-6)) },
	} {
		o, err := mk()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		MustOK(o.Close())
	}
}

// RMSprop's and Adagrad's steps cannot be captured into a graph: ErrNotSupported naming
// the optimizer, the parameter left alone, and the capture goes on.
func TestRMSpropAdagradStepNotCapturable(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	p := linearLeaf(t, s, []float64{1, 2})
	setGrad(t, s, p, []float64{1, -1})
	rms := must(RMSprop([]*Tensor{p}, 0.01))
	defer rms.Close()
	ada := must(Adagrad([]*Tensor{p}, 0.01))
	defer ada.Close()
	x := must(s.Track(FromSlice([]float64{1, 2}, []int64{2}, CPU(0))))

	st := must(NewStream(CPU(0)))
	defer st.Close()
	var y *Tensor
	g, err := CaptureGraph(st, func() (err error) {
		for name, o := range map[string]*Optimizer{"RMSprop": rms, "Adagrad": ada} {
			if e := wantCode(t, o.Step(), ErrNotSupported); !strings.Contains(e.Msg, name+" step") {
				t.Errorf("%s's message %q does not name it", name, e.Msg)
			}
		}
		y, err = x.MulScalar(2)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	MustOK(g.Close())
	MustOK(y.Close())
	near(t, "p after refused steps", must(ToSlice[float64](p)), []float64{1, 2}, 0)
	// Outside a capture they step.
	MustOK(rms.Step())
	MustOK(ada.Step())
}

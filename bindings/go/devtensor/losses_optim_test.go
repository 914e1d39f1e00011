package devtensor

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// Compile checks of the signatures of the pointwise losses, the optimizer's learning
// rate and state, and gradient clipping.
var (
	_ func(Reduction) (*Module, error)                            = L1Loss
	_ func(Reduction, float64) (*Module, error)                   = SmoothL1Loss
	_ func(Reduction, float64) (*Module, error)                   = HuberLoss
	_ func(BCELossOptions) (*Module, error)                       = BCELoss
	_ func(BCEWithLogitsLossOptions) (*Module, error)             = BCEWithLogitsLoss
	_ func(Reduction, bool) (*Module, error)                      = KLDivLoss
	_ func(*Optimizer) (float64, error)                           = (*Optimizer).LR
	_ func(*Optimizer, float64) error                             = (*Optimizer).SetLR
	_ func(*Optimizer, string) (float64, error)                   = (*Optimizer).Option
	_ func(*Optimizer, string, float64) error                     = (*Optimizer).SetOption
	_ func(*Optimizer) (*StateDict, error)                        = (*Optimizer).StateDict
	_ func(*Optimizer, *StateDict) error                          = (*Optimizer).LoadStateDict
	_ func([]*Tensor, float64, float64, bool) (*Tensor, error)    = ClipGradNorm[[]*Tensor]
	_ func(NamedTensors, float64, float64, bool) (*Tensor, error) = ClipGradNorm[NamedTensors]
	_ func([]Named, float64) error                                = ClipGradValue[[]Named]
	_ func(NamedTensors, float64) error                           = ClipGradValue[NamedTensors]
)

// lossRun runs loss m on (input, target), float64 tensors of shape, with the input
// requiring grad; it returns the loss's values and, for a 0-d loss, the input's gradient
// (nil otherwise).
func lossRun(t *testing.T, s *Scope, m *Module, input, target []float64, shape []int64) (loss, grad []float64) {
	t.Helper()
	x := must(s.Track(FromSlice(input, shape, CPU(0))))
	MustOK(x.SetRequiresGrad(true))
	y := must(s.Track(FromSlice(target, shape, CPU(0))))
	l := must(s.Track(m.Forward(x, y)))
	loss = must(ToSlice[float64](l))
	if sh := must(l.Shape()); len(sh) != 0 {
		return loss, nil
	}
	MustOK(l.Backward(nil))
	return loss, must(ToSlice[float64](must(s.Track(x.Grad()))))
}

// lossKeeper returns newLoss, used as newLoss(L1Loss(r)): it returns the module made
// (failing the test on an error) and closes it when the test ends.
func lossKeeper(t *testing.T) func(*Module, error) *Module {
	return func(m *Module, err error) *Module {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { MustOK(m.Close()) })
		return m
	}
}

// The pointwise losses' values and gradients against examples worked out by hand, each
// reduction, and PyTorch's class names.
func TestPointwiseLossValuesAndGradients(t *testing.T) {
	noLeaks(t)
	newLoss := lossKeeper(t)
	s := NewScope()
	defer s.Close()
	ln2, ln3 := math.Log(2), math.Log(3)
	v3 := []int64{3}
	zeros3 := []float64{0, 0, 0}
	for _, c := range []struct {
		name          string
		m             *Module
		kind          string
		input, target []float64
		shape         []int64
		want          []float64 // the loss
		grad          []float64 // d loss / d input (0-d losses only)
	}{
		// L1: |[1, -2, 3] - 0| = [1, 2, 3]; mean 6 / 3 = 2, gradient sign(d) / 3.
		{"L1Loss mean", newLoss(L1Loss(ReductionMean)), "L1Loss", []float64{1, -2, 3}, zeros3, v3,
			[]float64{2}, []float64{1.0 / 3, -1.0 / 3, 1.0 / 3}},
		// sum 1 + 2 + 3 = 6, gradient sign(d).
		{"L1Loss sum", newLoss(L1Loss(ReductionSum)), "L1Loss", []float64{1, -2, 3}, zeros3, v3,
			[]float64{6}, []float64{1, -1, 1}},
		// none: the elements; the target is subtracted: |[1, -2, 3] - [2, 2, 2]| = [1, 4, 1].
		{"L1Loss none", newLoss(L1Loss(ReductionNone)), "L1Loss", []float64{1, -2, 3}, []float64{2, 2, 2}, v3,
			[]float64{1, 4, 1}, nil},
		// SmoothL1, beta 1, d = [0.5, 2, -3]: 0.5 * 0.5^2 / 1 = 0.125 (|d| < beta);
		// 2 - 0.5 = 1.5; 3 - 0.5 = 2.5. Mean (0.125 + 1.5 + 2.5) / 3 = 4.125 / 3 = 1.375.
		// Gradient d / beta inside, sign(d) outside, / 3: [0.5, 1, -1] / 3.
		{"SmoothL1Loss beta 1 mean", newLoss(SmoothL1Loss(ReductionMean, 1)), "SmoothL1Loss",
			[]float64{0.5, 2, -3}, zeros3, v3, []float64{1.375}, []float64{0.5 / 3, 1.0 / 3, -1.0 / 3}},
		// beta 4: every |d| < 4: 0.5 d^2 / 4 = [0.03125, 0.5, 1.125], sum 1.65625;
		// gradient d / 4 = [0.125, 0.5, -0.75].
		{"SmoothL1Loss beta 4 sum", newLoss(SmoothL1Loss(ReductionSum, 4)), "SmoothL1Loss",
			[]float64{0.5, 2, -3}, zeros3, v3, []float64{1.65625}, []float64{0.125, 0.5, -0.75}},
		// beta 0 is L1: |d| = [0.5, 2, 3], sum 5.5, gradient sign(d).
		{"SmoothL1Loss beta 0 sum", newLoss(SmoothL1Loss(ReductionSum, 0)), "SmoothL1Loss",
			[]float64{0.5, 2, -3}, zeros3, v3, []float64{5.5}, []float64{1, 1, -1}},
		// Huber, delta 2, d = [0.5, 3, -4]: 0.5 * 0.25 = 0.125 (|d| < delta);
		// 2 * (3 - 1) = 4; 2 * (4 - 1) = 6. Mean 10.125 / 3 = 3.375. Gradient d inside,
		// delta sign(d) outside, / 3: [0.5, 2, -2] / 3.
		{"HuberLoss delta 2 mean", newLoss(HuberLoss(ReductionMean, 2)), "HuberLoss",
			[]float64{0.5, 3, -4}, zeros3, v3, []float64{3.375}, []float64{0.5 / 3, 2.0 / 3, -2.0 / 3}},
		{"HuberLoss delta 2 none", newLoss(HuberLoss(ReductionNone, 2)), "HuberLoss",
			[]float64{0.5, 3, -4}, zeros3, v3, []float64{0.125, 4, 6}, nil},
		// BCE, p = [0.5, 0.8], target [1, 0]: -ln 0.5 = ln 2; -ln(1 - 0.8) = ln 5.
		// Mean (ln 2 + ln 5) / 2 = ln 10 / 2. Gradient -(t / p - (1 - t) / (1 - p)) / 2:
		// -(1 / 0.5) / 2 = -1; (1 / 0.2) / 2 = 2.5.
		{"BCELoss mean", newLoss(BCELoss(BCELossOptions{})), "BCELoss", []float64{0.5, 0.8}, []float64{1, 0},
			[]int64{2}, []float64{math.Log(10) / 2}, []float64{-1, 2.5}},
		// p 0 with target 1 and p 1 with target 0: each log clamped at -100, loss 100 each.
		{"BCELoss clamp", newLoss(BCELoss(BCELossOptions{Reduction: ReductionNone})), "BCELoss",
			[]float64{0, 1}, []float64{1, 0}, []int64{2}, []float64{100, 100}, nil},
		// BCEWithLogits, x = [0, ln 3], target [1, 0]: sigmoid = [1/2, 3/4];
		// -ln(1/2) = ln 2; -ln(1 - 3/4) = ln 4 = 2 ln 2. Sum 3 ln 2. Gradient sigmoid(x) - t:
		// [-1/2, 3/4].
		{"BCEWithLogitsLoss sum", newLoss(BCEWithLogitsLoss(BCEWithLogitsLossOptions{Reduction: ReductionSum})),
			"BCEWithLogitsLoss", []float64{0, ln3}, []float64{1, 0}, []int64{2}, []float64{3 * ln2}, []float64{-0.5, 0.75}},
		// KLDiv (log_target false), input log-probabilities [[ln 1/4, ln 3/4], [ln 1/2, ln 1/2]],
		// target [[1/2, 1/2], [1, 0]]: t (ln t - x) per element:
		// row 0: 1/2 (ln 1/2 - ln 1/4) + 1/2 (ln 1/2 - ln 3/4) = 1/2 ln 2 + 1/2 ln(2/3) = 1/2 ln(4/3);
		// row 1: 1 (ln 1 - ln 1/2) + 0 (the target 0 gives 0) = ln 2.
		// Sum 1/2 ln(4/3) + ln 2; batchmean divides by the 2 rows, mean by the 4 elements.
		// Gradient -t / 2 (batchmean): [[-1/4, -1/4], [-1/2, 0]].
		{"KLDivLoss batchmean", newLoss(KLDivLoss(ReductionBatchMean, false)), "KLDivLoss",
			[]float64{math.Log(0.25), math.Log(0.75), math.Log(0.5), math.Log(0.5)}, []float64{0.5, 0.5, 1, 0},
			[]int64{2, 2}, []float64{(0.5*math.Log(4.0/3) + ln2) / 2}, []float64{-0.25, -0.25, -0.5, 0}},
		{"KLDivLoss mean", newLoss(KLDivLoss(ReductionMean, false)), "KLDivLoss",
			[]float64{math.Log(0.25), math.Log(0.75), math.Log(0.5), math.Log(0.5)}, []float64{0.5, 0.5, 1, 0},
			[]int64{2, 2}, []float64{(0.5*math.Log(4.0/3) + ln2) / 4}, []float64{-0.125, -0.125, -0.25, 0}},
		{"KLDivLoss none", newLoss(KLDivLoss(ReductionNone, false)), "KLDivLoss",
			[]float64{math.Log(0.25), math.Log(0.75), math.Log(0.5), math.Log(0.5)}, []float64{0.5, 0.5, 1, 0},
			[]int64{2, 2}, []float64{0.5 * ln2, 0.5 * math.Log(2.0/3), ln2, 0}, nil},
		// log_target true: the target as log-probabilities, exp(t) (t - x): row 0 of the
		// case above, target [ln 1/2, ln 1/2]: 1/2 ln(4/3), the sum, batchmean over 1 row.
		{"KLDivLoss log_target batchmean", newLoss(KLDivLoss(ReductionBatchMean, true)), "KLDivLoss",
			[]float64{math.Log(0.25), math.Log(0.75)}, []float64{math.Log(0.5), math.Log(0.5)},
			[]int64{1, 2}, []float64{0.5 * math.Log(4.0/3)}, []float64{-0.5, -0.5}},
	} {
		if k := must(c.m.Kind()); k != c.kind {
			t.Errorf("%s: kind %q, want %q", c.name, k, c.kind)
		}
		loss, grad := lossRun(t, s, c.m, c.input, c.target, c.shape)
		near(t, c.name+" loss", loss, c.want, 1e-12)
		if c.grad != nil {
			near(t, c.name+" gradient", grad, c.grad, 1e-12)
		}
	}
}

// BCELoss's Weight and BCEWithLogitsLoss's PosWeight (one per class, broadcast over the
// batch) and Weight: values, gradients and the buffers they are copied into.
func TestBCEWeights(t *testing.T) {
	noLeaks(t)
	newLoss := lossKeeper(t)
	s := NewScope()
	defer s.Close()
	ln2, ln3 := math.Log(2), math.Log(3)

	// BCELoss, p = [0.5, 0.8], target [1, 0], weight [2, 1]: 2 ln 2 + ln 5, summed.
	w := must(s.Track(FromSlice([]float64{2, 1}, []int64{2}, CPU(0))))
	bce := newLoss(BCELoss(BCELossOptions{Weight: w, Reduction: ReductionSum}))
	loss, grad := lossRun(t, s, bce, []float64{0.5, 0.8}, []float64{1, 0}, []int64{2})
	near(t, "BCELoss weight [2, 1]", loss, []float64{2*ln2 + math.Log(5)}, 1e-12)
	// gradient -w (t / p - (1 - t) / (1 - p)): -2 * 2 = -4; 1 / 0.2 = 5.
	near(t, "BCELoss weight gradient", grad, []float64{-4, 5}, 1e-12)
	if names, _ := namedOf(t, must(bce.Buffers())); len(names) != 1 || names[0] != "weight" {
		t.Errorf("BCELoss buffers %v, want [weight]", names)
	}

	// BCEWithLogits, logits [[0, ln 3], [0, ln 3]], target [[1, 0], [0, 1]], pos_weight [2, 3]
	// (one per class, the last dim): -(pw t ln sigmoid(x) + (1 - t) ln(1 - sigmoid(x))):
	//   [0][0]: t 1, pw 2, sigmoid 1/2: 2 ln 2
	//   [0][1]: t 0, sigmoid 3/4: -ln(1/4) = 2 ln 2
	//   [1][0]: t 0, sigmoid 1/2: ln 2
	//   [1][1]: t 1, pw 3, sigmoid 3/4: -3 ln(3/4) = 3 (2 ln 2 - ln 3)
	// Mean over 4: (5 ln 2 + 6 ln 2 - 3 ln 3) / 4 = (11 ln 2 - 3 ln 3) / 4.
	// Gradient -pw t (1 - sigmoid) + (1 - t) sigmoid, / 4:
	//   [0][0]: -2 * 1/2 = -1; [0][1]: 3/4; [1][0]: 1/2; [1][1]: -3 * 1/4 = -3/4.
	pw := must(s.Track(FromSlice([]float64{2, 3}, []int64{2}, CPU(0))))
	logits := []float64{0, ln3, 0, ln3}
	target := []float64{1, 0, 0, 1}
	bcel := newLoss(BCEWithLogitsLoss(BCEWithLogitsLossOptions{PosWeight: pw}))
	loss, grad = lossRun(t, s, bcel, logits, target, []int64{2, 2})
	near(t, "BCEWithLogitsLoss pos_weight [2, 3]", loss, []float64{(11*ln2 - 3*ln3) / 4}, 1e-12)
	near(t, "BCEWithLogitsLoss pos_weight gradient", grad, []float64{-0.25, 0.75 / 4, 0.125, -0.75 / 4}, 1e-12)
	if names, _ := namedOf(t, must(bcel.Buffers())); len(names) != 1 || names[0] != "pos_weight" {
		t.Errorf("BCEWithLogitsLoss{PosWeight} buffers %v, want [pos_weight] only", names)
	}
	// The buffer is a copy: changing pw afterwards changes nothing.
	MustOK(pw.MulScalarInPlace(10))
	loss, _ = lossRun(t, s, bcel, logits, target, []int64{2, 2})
	near(t, "BCEWithLogitsLoss after changing the caller's pos_weight", loss, []float64{(11*ln2 - 3*ln3) / 4}, 1e-12)

	// Both: weight [[1], [2]] (one per sample) doubles row 1, summed:
	// row 0: 2 ln 2 + 2 ln 2 = 4 ln 2; row 1: 2 (ln 2 + 6 ln 2 - 3 ln 3) = 14 ln 2 - 6 ln 3.
	pw2 := must(s.Track(FromSlice([]float64{2, 3}, []int64{2}, CPU(0))))
	w2 := must(s.Track(FromSlice([]float64{1, 2}, []int64{2, 1}, CPU(0))))
	both := newLoss(BCEWithLogitsLoss(BCEWithLogitsLossOptions{Weight: w2, PosWeight: pw2, Reduction: ReductionSum}))
	loss, _ = lossRun(t, s, both, logits, target, []int64{2, 2})
	near(t, "BCEWithLogitsLoss weight and pos_weight", loss, []float64{18*ln2 - 6*ln3}, 1e-12)
	if names, _ := namedOf(t, must(both.Buffers())); len(names) != 2 || names[0] != "weight" || names[1] != "pos_weight" {
		t.Errorf("BCEWithLogitsLoss buffers %v, want [weight pos_weight]", names)
	}
	// Integer 0/1 labels are converted to the input's dtype.
	x := must(s.Track(FromSlice([]float32{0, float32(ln3)}, []int64{2}, CPU(0))))
	y := must(s.Track(FromSlice([]int64{1, 0}, []int64{2}, CPU(0))))
	plain := newLoss(BCEWithLogitsLoss(BCEWithLogitsLossOptions{Reduction: ReductionSum}))
	if got := must(must(s.Track(plain.Forward(x, y))).Item()); math.Abs(got-3*ln2) > 1e-5 {
		t.Errorf("BCEWithLogitsLoss on int64 labels: %v, want 3 ln 2 = %v", got, 3*ln2)
	}
}

// The losses' errors: shapes that differ (the message names both), settings out of
// range, ReductionBatchMean outside KLDivLoss, inputs BCELoss refuses, closed weights.
func TestPointwiseLossErrors(t *testing.T) {
	noLeaks(t)
	newLoss := lossKeeper(t)
	s := NewScope()
	defer s.Close()
	x3 := must(s.Track(FromSlice([]float32{0.1, 0.2, 0.3}, []int64{3}, CPU(0))))
	y22 := must(s.Track(FromSlice([]float32{0, 0, 0, 0}, []int64{2, 2}, CPU(0))))
	for _, m := range []*Module{
		newLoss(L1Loss(ReductionMean)),
		newLoss(SmoothL1Loss(ReductionMean, 1)),
		newLoss(HuberLoss(ReductionMean, 1)),
		newLoss(BCELoss(BCELossOptions{})),
		newLoss(BCEWithLogitsLoss(BCEWithLogitsLossOptions{})),
		newLoss(KLDivLoss(ReductionBatchMean, false)),
	} {
		_, err := m.Forward(x3, y22)
		e := wantCode(t, err, ErrShapeMismatch)
		if !strings.Contains(e.Msg, "[3]") || !strings.Contains(e.Msg, "[2, 2]") || !strings.Contains(e.Msg, must(m.Kind())) {
			t.Errorf("%s: message %q should name both shapes [3] and [2, 2] and the loss", must(m.Kind()), e.Msg)
		}
		if e.Op != "Module.Forward" {
			t.Errorf("Op %q", e.Op)
		}
	}

	// Settings out of range.
	for _, c := range []struct {
		name string
		err  error
	}{
		{"SmoothL1Loss beta -1", madeErr(SmoothL1Loss(ReductionMean, -1))},
		{"SmoothL1Loss beta NaN", madeErr(SmoothL1Loss(ReductionMean, math.NaN()))},
		{"SmoothL1Loss beta +Inf", madeErr(SmoothL1Loss(ReductionMean, math.Inf(1)))},
		{"HuberLoss delta 0", madeErr(HuberLoss(ReductionMean, 0))},
		{"HuberLoss delta -2", madeErr(HuberLoss(ReductionSum, -2))},
		{"L1Loss Reduction(9)", madeErr(L1Loss(Reduction(9)))},
		{"KLDivLoss Reduction(-1)", madeErr(KLDivLoss(Reduction(-1), false))},
	} {
		if !errors.Is(c.err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", c.name, c.err)
		}
	}
	_, err := SmoothL1Loss(ReductionMean, -1)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "beta") || e.Op != "SmoothL1Loss" {
		t.Errorf("negative beta: %v", e)
	}

	// ReductionBatchMean is KLDivLoss's alone: the library refuses it for the others.
	for _, c := range []struct {
		name string
		err  error
	}{
		{"L1Loss", madeErr(L1Loss(ReductionBatchMean))},
		{"SmoothL1Loss", madeErr(SmoothL1Loss(ReductionBatchMean, 1))},
		{"HuberLoss", madeErr(HuberLoss(ReductionBatchMean, 1))},
		{"BCELoss", madeErr(BCELoss(BCELossOptions{Reduction: ReductionBatchMean}))},
		{"BCEWithLogitsLoss", madeErr(BCEWithLogitsLoss(BCEWithLogitsLossOptions{Reduction: ReductionBatchMean}))},
		{"MSELoss", madeErr(MSELoss(ReductionBatchMean))},
		{"CrossEntropyLoss", madeErr(CrossEntropyLoss(CrossEntropyLossOptions{Reduction: ReductionBatchMean}))},
	} {
		e := wantCode(t, c.err, ErrInvalidArgument)
		if !strings.Contains(e.Msg, "KLDivLoss") {
			t.Errorf("%s(ReductionBatchMean): message %q should say only KLDivLoss takes it", c.name, e.Msg)
		}
	}

	// BCELoss: inputs outside [0, 1] (or NaN) fail at Forward.
	bce := newLoss(BCELoss(BCELossOptions{}))
	y2 := must(s.Track(FromSlice([]float32{1, 0}, []int64{2}, CPU(0))))
	for _, in := range [][]float32{{1.5, 0.5}, {0.5, -0.1}, {float32(math.NaN()), 0.5}} {
		x := must(s.Track(FromSlice(in, []int64{2}, CPU(0))))
		_, err := bce.Forward(x, y2)
		wantCode(t, err, ErrInvalidArgument)
	}

	// An integer input; input and target on different devices; a non-floating weight.
	l1 := newLoss(L1Loss(ReductionMean))
	ints := must(s.Track(FromSlice([]int64{1, 2}, []int64{2}, CPU(0))))
	_, err = l1.Forward(ints, y2)
	wantCode(t, err, ErrDTypeMismatch)
	other := must(s.Track(FromSlice([]float32{1, 0}, []int64{2}, CPU(1))))
	_, err = l1.Forward(y2, other)
	wantCode(t, err, ErrDeviceMismatch)
	_, err = BCELoss(BCELossOptions{Weight: ints})
	wantCode(t, err, ErrDTypeMismatch)

	// Closed or nil arguments.
	closed := must(FromSlice([]float32{1, 1}, []int64{2}, CPU(0)))
	closed.Close()
	_, err = BCELoss(BCELossOptions{Weight: closed})
	wantCode(t, err, ErrClosed)
	_, err = BCEWithLogitsLoss(BCEWithLogitsLossOptions{PosWeight: closed})
	wantCode(t, err, ErrClosed)
	_, err = l1.Forward(y2, nil)
	wantCode(t, err, ErrInvalidArgument)
	_, err = l1.Forward(y2)
	wantCode(t, err, ErrInvalidArgument)
}

// madeErr returns err, dropping a module made despite the test's expectation (closed).
func madeErr(m *Module, err error) error {
	if m != nil {
		m.Close()
	}
	return err
}

// linearLeaf returns a new leaf float64 tensor of values that requires grad (tracked by s).
func linearLeaf(t *testing.T, s *Scope, values []float64) *Tensor {
	t.Helper()
	p := must(s.Track(FromSlice(values, []int64{int64(len(values))}, CPU(0))))
	MustOK(p.SetRequiresGrad(true))
	return p
}

// setGrad makes p's gradient c by backward of sum(p * c).
func setGrad(t *testing.T, s *Scope, p *Tensor, c []float64) {
	t.Helper()
	ct := must(s.Track(FromSlice(c, []int64{int64(len(c))}, CPU(0))))
	MustOK(must(s.Track(must(s.Track(p.Mul(ct))).Sum())).Backward(nil))
}

// SetLR changes the rate the next Step uses (SGD without momentum: p -= lr g), and the
// errors of LR and SetLR.
func TestOptimizerSetLR(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	p := linearLeaf(t, s, []float64{1, 2})
	opt := must(SGD([]*Tensor{p}, 0.1))
	defer opt.Close()
	if lr := must(opt.LR()); lr != 0.1 {
		t.Fatalf("LR() = %v, want 0.1", lr)
	}
	// One step at 0.1 with gradient [3, 4]: [1 - 0.3, 2 - 0.4] = [0.7, 1.6].
	setGrad(t, s, p, []float64{3, 4})
	MustOK(opt.Step())
	near(t, "step at lr 0.1", must(ToSlice[float64](p)), []float64{0.7, 1.6}, 1e-12)
	// SetLR(0.5), same gradient: [0.7 - 1.5, 1.6 - 2] = [-0.8, -0.4].
	MustOK(opt.SetLR(0.5))
	if lr := must(opt.LR()); lr != 0.5 {
		t.Fatalf("LR() after SetLR(0.5) = %v", lr)
	}
	MustOK(opt.ZeroGrad())
	setGrad(t, s, p, []float64{3, 4})
	MustOK(opt.Step())
	near(t, "step at lr 0.5", must(ToSlice[float64](p)), []float64{-0.8, -0.4}, 1e-12)
	// 0 is a valid rate: the step changes nothing.
	MustOK(opt.SetLR(0))
	MustOK(opt.Step())
	near(t, "step at lr 0", must(ToSlice[float64](p)), []float64{-0.8, -0.4}, 1e-12)

	// Negative or NaN rates are refused and leave the rate as it was.
	for _, lr := range []float64{-0.1, math.NaN()} {
		e := wantCode(t, opt.SetLR(lr), ErrInvalidArgument)
		if e.Op != "Optimizer.SetLR" {
			t.Errorf("Op %q", e.Op)
		}
	}
	if lr := must(opt.LR()); lr != 0 {
		t.Fatalf("LR() after refused SetLR = %v, want 0", lr)
	}

	// Nil and closed optimizers.
	var nilOpt *Optimizer
	_, err := nilOpt.LR()
	wantCode(t, err, ErrInvalidArgument)
	wantCode(t, nilOpt.SetLR(1), ErrInvalidArgument)
	closedOpt := must(Adam([]*Tensor{p}, 1e-3))
	MustOK(closedOpt.Close())
	_, err = closedOpt.LR()
	wantCode(t, err, ErrClosed)
	wantCode(t, closedOpt.SetLR(1), ErrClosed)
	_, err = closedOpt.StateDict()
	wantCode(t, err, ErrClosed)
	sd := must(opt.StateDict())
	defer sd.Close()
	wantCode(t, closedOpt.LoadStateDict(sd), ErrClosed)
	wantCode(t, opt.LoadStateDict(nil), ErrInvalidArgument)
}

// leaf32 is a float32 leaf of values requiring grad (a 1-d CPU tensor tracked by s).
func leaf32(t *testing.T, s *Scope, values []float32) *Tensor {
	t.Helper()
	p := must(s.Track(FromSlice(values, []int64{int64(len(values))}, CPU(0))))
	MustOK(p.SetRequiresGrad(true))
	return p
}

// setGrad32 makes p's gradient c by backward of sum(p * c), c a float32 tensor.
func setGrad32(t *testing.T, s *Scope, p *Tensor, c []float32) {
	t.Helper()
	ct := must(s.Track(FromSlice(c, []int64{int64(len(c))}, CPU(0))))
	MustOK(must(s.Track(must(s.Track(p.Mul(ct))).Sum())).Backward(nil))
}

// wantOptions fails unless opt's settings are want (exactly, up to a relative 1e-15: the
// values are kept as given).
func wantOptions(t *testing.T, what string, opt *Optimizer, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		got, err := opt.Option(name)
		if err != nil {
			t.Fatalf("%s: Option(%q): %v", what, name, err)
		}
		if math.Abs(got-w) > 1e-15*math.Abs(w) {
			t.Errorf("%s: Option(%q) = %v, want %v", what, name, got, w)
		}
	}
}

// Option reads back what each optimizer was made with and PyTorch's defaults (maximize 0
// everywhere, amsgrad 0 for Adam and AdamW), and SetOption changes what Option reads.
func TestOptimizerOptionReadBack(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	p := linearLeaf(t, s, []float64{1, 2})
	ps := []*Tensor{p}

	sgd := must(SGD(ps, 0.1, Momentum(0.9), Dampening(0.25), WeightDecay(0.01)))
	defer sgd.Close()
	wantOptions(t, "SGD", sgd, map[string]float64{"lr": 0.1, "momentum": 0.9, "dampening": 0.25,
		"weight_decay": 0.01, "nesterov": 0, "maximize": 0})
	nest := must(SGD(ps, 0.05, Momentum(0.8), Nesterov()))
	defer nest.Close()
	wantOptions(t, "SGD with Nesterov", nest, map[string]float64{"lr": 0.05, "momentum": 0.8, "dampening": 0,
		"weight_decay": 0, "nesterov": 1, "maximize": 0})

	adam := must(Adam(ps, 1e-3))
	defer adam.Close()
	wantOptions(t, "Adam", adam, map[string]float64{"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
		"weight_decay": 0, "amsgrad": 0, "maximize": 0})
	adamW := must(AdamW(ps, 2e-3, Betas(0.8, 0.99), Eps(1e-6)))
	defer adamW.Close()
	wantOptions(t, "AdamW", adamW, map[string]float64{"lr": 2e-3, "beta1": 0.8, "beta2": 0.99, "eps": 1e-6,
		"weight_decay": 0.01, "amsgrad": 0, "maximize": 0})

	rms := must(RMSprop(ps, 0.01, Alpha(0.9), Momentum(0.5), Centered()))
	defer rms.Close()
	wantOptions(t, "RMSprop", rms, map[string]float64{"lr": 0.01, "alpha": 0.9, "eps": 1e-8,
		"weight_decay": 0, "momentum": 0.5, "centered": 1, "maximize": 0})

	ada := must(Adagrad(ps, 0.01, LRDecay(0.1), InitialAccumulatorValue(0.5)))
	defer ada.Close()
	wantOptions(t, "Adagrad", ada, map[string]float64{"lr": 0.01, "lr_decay": 0.1, "weight_decay": 0,
		"eps": 1e-10, "initial_accumulator_value": 0.5, "maximize": 0})

	// SetOption changes what Option (and, for "lr", LR) reads; SetLR what Option("lr") reads.
	MustOK(adam.SetOption("beta1", 0.85))
	MustOK(adam.SetOption("lr", 0.02))
	wantOptions(t, "Adam after SetOption", adam, map[string]float64{"beta1": 0.85, "lr": 0.02, "beta2": 0.999})
	if lr := must(adam.LR()); lr != 0.02 {
		t.Errorf("LR() after SetOption(\"lr\", 0.02) = %v", lr)
	}
	MustOK(adam.SetLR(0.03))
	wantOptions(t, "Adam after SetLR", adam, map[string]float64{"lr": 0.03})
	MustOK(sgd.SetOption("momentum", 0.95))
	MustOK(sgd.SetOption("maximize", 1))
	wantOptions(t, "SGD after SetOption", sgd, map[string]float64{"momentum": 0.95, "maximize": 1, "dampening": 0.25})
}

// What Option and SetOption refuse: an unknown name (the message lists the settings), a
// value the constructor would refuse, a flag not 0 or 1, a name holding a NUL byte, nil
// and closed optimizers; a refused SetOption changes nothing.
func TestOptimizerOptionRefusals(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	p := linearLeaf(t, s, []float64{1, 2})
	adam := must(Adam([]*Tensor{p}, 1e-3))
	defer adam.Close()

	// A name Adam does not have ("betas" is torch's tuple: here beta1 and beta2).
	const adamSettings = "lr, beta1, beta2, eps, weight_decay, amsgrad, maximize"
	_, err := adam.Option("betas")
	e := wantCode(t, err, ErrInvalidArgument)
	if e.Op != "Optimizer.Option" || !strings.Contains(e.Msg, "betas") || !strings.Contains(e.Msg, adamSettings) {
		t.Errorf("Option(\"betas\"): %v, want the name and Adam's settings (%s)", err, adamSettings)
	}
	e = wantCode(t, adam.SetOption("momentum", 0.9), ErrInvalidArgument)
	if e.Op != "Optimizer.SetOption" || !strings.Contains(e.Msg, "momentum") || !strings.Contains(e.Msg, adamSettings) {
		t.Errorf("SetOption(\"momentum\"): %v, want the name and Adam's settings (%s)", e, adamSettings)
	}
	_, err = adam.Option("")
	wantCode(t, err, ErrInvalidArgument)
	// A NUL byte would cut the name short in C ("lr"): refused here.
	_, err = adam.Option("lr\x00junk")
	wantCode(t, err, ErrInvalidArgument)
	wantCode(t, adam.SetOption("lr\x00junk", 1), ErrInvalidArgument)
	wantOptions(t, "Adam after refusals", adam, map[string]float64{"lr": 1e-3})

	// Values the constructor refuses, each leaving the setting as it was.
	wantCode(t, adam.SetOption("beta1", 1.5), ErrInvalidArgument)
	wantCode(t, adam.SetOption("eps", -1), ErrInvalidArgument)
	wantCode(t, adam.SetOption("lr", math.NaN()), ErrInvalidArgument)
	wantCode(t, adam.SetOption("amsgrad", 0.5), ErrInvalidArgument)
	wantOptions(t, "Adam after refused values", adam, map[string]float64{"beta1": 0.9, "eps": 1e-8, "lr": 1e-3, "amsgrad": 0})

	// Nesterov without momentum is refused (as SGD's constructor refuses it) and the
	// setting stays 0.
	sgd := must(SGD([]*Tensor{p}, 0.1))
	defer sgd.Close()
	e = wantCode(t, sgd.SetOption("nesterov", 1), ErrInvalidArgument)
	if !strings.Contains(e.Msg, "Nesterov momentum requires a momentum and zero dampening") {
		t.Errorf("SetOption(\"nesterov\", 1) without momentum: %v", e)
	}
	wantOptions(t, "SGD after refused nesterov", sgd, map[string]float64{"nesterov": 0, "momentum": 0})
	// With a momentum it is taken; then momentum 0 is refused, nesterov needing it.
	MustOK(sgd.SetOption("momentum", 0.9))
	MustOK(sgd.SetOption("nesterov", 1))
	wantCode(t, sgd.SetOption("momentum", 0), ErrInvalidArgument)
	wantCode(t, sgd.SetOption("dampening", 0.1), ErrInvalidArgument)
	wantOptions(t, "SGD with nesterov after refusals", sgd, map[string]float64{"nesterov": 1, "momentum": 0.9, "dampening": 0})

	// A flag of 2.
	e = wantCode(t, sgd.SetOption("nesterov", 2), ErrInvalidArgument)
	if !strings.Contains(e.Msg, `"nesterov" is a flag: 0 or 1, got 2`) {
		t.Errorf("SetOption(\"nesterov\", 2): %v", e)
	}
	wantCode(t, sgd.SetOption("maximize", 2), ErrInvalidArgument)
	wantOptions(t, "SGD after refused flags", sgd, map[string]float64{"nesterov": 1, "maximize": 0})

	// Nil and closed optimizers.
	var nilOpt *Optimizer
	_, err = nilOpt.Option("lr")
	wantCode(t, err, ErrInvalidArgument)
	wantCode(t, nilOpt.SetOption("lr", 1), ErrInvalidArgument)
	closedOpt := must(Adam([]*Tensor{p}, 1e-3))
	MustOK(closedOpt.Close())
	_, err = closedOpt.Option("lr")
	wantCode(t, err, ErrClosed)
	wantCode(t, closedOpt.SetOption("lr", 1), ErrClosed)
}

// maximize steps up the gradient: SGD (no momentum) with lr 0.1 on p = [1, 2] with
// gradient g = [0.5, -1] goes to p + lr g = [1.05, 1.9]; back to 0, the same gradient
// takes it back to [1, 2].
func TestOptimizerOptionMaximize(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	for _, dt := range []string{"float64", "float32"} {
		var p *Tensor
		if dt == "float64" {
			p = linearLeaf(t, s, []float64{1, 2})
		} else {
			p = leaf32(t, s, []float32{1, 2})
		}
		opt := must(SGD([]*Tensor{p}, 0.1))
		grad := func() {
			MustOK(opt.ZeroGrad())
			if dt == "float64" {
				setGrad(t, s, p, []float64{0.5, -1})
			} else {
				setGrad32(t, s, p, []float32{0.5, -1})
			}
		}
		values := func() []float64 {
			if dt == "float64" {
				return must(ToSlice[float64](p))
			}
			return widen(must(ToSlice[float32](p)))
		}
		tol := map[string]float64{"float64": 1e-12, "float32": 1e-6}[dt]
		MustOK(opt.SetOption("maximize", 1))
		if v := must(opt.Option("maximize")); v != 1 {
			t.Fatalf("%s: Option(\"maximize\") = %v after SetOption 1", dt, v)
		}
		grad()
		MustOK(opt.Step())
		near(t, dt+": SGD step with maximize", values(), []float64{1 + 0.1*0.5, 2 + 0.1*-1}, tol)
		MustOK(opt.SetOption("maximize", 0))
		grad()
		MustOK(opt.Step())
		near(t, dt+": SGD step after maximize back to 0", values(), []float64{1, 2}, tol)
		MustOK(opt.Close())
	}
}

// amsgrad switched on between steps: Adam (lr 0.1, betas 0.9 and 0.999, eps 1e-8) on a
// float32 parameter, step 1 with g = 1 as plain Adam, then amsgrad on (max_exp_avg_sq
// starting from zeros) and steps 2 to 5 with g = 0, each worked out here from Adam's
// formula. Step 2 alone cannot tell amsgrad from Adam (max(0, v) = v); the later steps
// can, v falling below the maximum kept (by 1.2e-4 in p after step 5).
func TestOptimizerOptionAMSGrad(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	const lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
	p := leaf32(t, s, []float32{1})
	opt := must(Adam([]*Tensor{p}, lr, Betas(b1, b2), Eps(eps)))
	defer opt.Close()

	// The expected values, from m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
	// vmax = max(vmax, v) (with amsgrad) and
	// p -= lr / (1 - b1^t) * m / (sqrt(vmax or v) / sqrt(1 - b2^t) + eps).
	want, plain := 1.0, 1.0 // with amsgrad from step 2, and plain Adam throughout
	m, v, vmax := 0.0, 0.0, 0.0
	adamStep := func(tt int, g float64, amsgrad bool) {
		m = b1*m + (1-b1)*g
		v = b2*v + (1-b2)*g*g
		c1, c2 := 1-math.Pow(b1, float64(tt)), 1-math.Pow(b2, float64(tt))
		plain -= lr / c1 * m / (math.Sqrt(v)/math.Sqrt(c2) + eps)
		d := v
		if amsgrad {
			vmax = math.Max(vmax, v)
			d = vmax
		}
		want -= lr / c1 * m / (math.Sqrt(d)/math.Sqrt(c2) + eps)
	}
	step := func(tt int, g float32, amsgrad bool) {
		t.Helper()
		MustOK(opt.ZeroGrad())
		setGrad32(t, s, p, []float32{g})
		MustOK(opt.Step())
		adamStep(tt, float64(g), amsgrad)
		near(t, fmt.Sprintf("step %d (amsgrad %v)", tt, amsgrad), widen(must(ToSlice[float32](p))), []float64{want}, 1e-6)
	}
	step(1, 1, false)
	MustOK(opt.SetOption("amsgrad", 1))
	if a := must(opt.Option("amsgrad")); a != 1 {
		t.Fatalf("Option(\"amsgrad\") = %v after SetOption 1", a)
	}
	for tt := 2; tt <= 5; tt++ {
		step(tt, 0, true)
	}
	if math.Abs(want-plain) < 1e-4 {
		t.Fatalf("amsgrad %v and plain Adam %v agree after step 5: the test shows nothing", want, plain)
	}
	// The maximum is state now: a checkpoint holds it.
	sd := must(opt.StateDict())
	defer sd.Close()
	if names := strings.Join(must(sd.Names()), " "); !strings.Contains(names, "state.0.max_exp_avg_sq") {
		t.Errorf("Adam state dict with amsgrad: %s, want state.0.max_exp_avg_sq", names)
	}
}

// Adam's state survives a StateDict / LoadStateDict round trip (through a safetensors
// file too): an optimizer loaded with it steps exactly as the original, and one without
// it does not.
func TestOptimizerStateDictRoundTrip(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	start := []float64{1, -2, 3}
	p := linearLeaf(t, s, start)
	opt := must(Adam([]*Tensor{p}, 0.1))
	defer opt.Close()
	grads := [][]float64{{0.5, 1, -2}, {1, -0.25, 3}, {-1, 2, 0.5}}
	step := func(o *Optimizer, p *Tensor, g []float64) {
		t.Helper()
		MustOK(o.ZeroGrad())
		setGrad(t, s, p, g)
		MustOK(o.Step())
	}
	step(opt, p, grads[0])
	step(opt, p, grads[1])

	sd := must(opt.StateDict())
	defer sd.Close()
	names := must(sd.Names())
	// The settings (PyTorch's param_groups), then the state in PyTorch's order.
	want := []string{"lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize",
		"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("Adam state dict %v, want %v", names, want)
	}
	stepT := must(s.Track(sd.Get("state.0.step")))
	if dt := must(stepT.DType()); dt != Float32 || must(stepT.Item()) != 2 {
		t.Fatalf("state.0.step: %v %v, want 2 as float32", dt, must(stepT.Item()))
	}
	if lr := must(must(s.Track(sd.Get("lr"))).Item()); lr != 0.1 {
		t.Fatalf("lr entry %v", lr)
	}
	expAvg := must(ToSlice[float64](must(s.Track(sd.Get("state.0.exp_avg")))))

	// A copy of the parameters, an Adam at another rate, the state loaded (from a file).
	path := filepath.Join(t.TempDir(), "adam.safetensors")
	MustOK(sd.Save(path))
	loaded := must(LoadSafetensors(path, CPU(0)))
	defer loaded.Close()
	q := linearLeaf(t, s, must(ToSlice[float64](p)))
	opt2 := must(Adam([]*Tensor{q}, 0.5))
	defer opt2.Close()
	MustOK(opt2.LoadStateDict(loaded))
	if lr := must(opt2.LR()); lr != 0.1 {
		t.Fatalf("LR after LoadStateDict = %v, want the saved 0.1", lr)
	}
	// A third without the state, from the same values.
	r := linearLeaf(t, s, must(ToSlice[float64](p)))
	opt3 := must(Adam([]*Tensor{r}, 0.1))
	defer opt3.Close()

	step(opt, p, grads[2])
	step(opt2, q, grads[2])
	step(opt3, r, grads[2])
	pv, qv, rv := must(ToSlice[float64](p)), must(ToSlice[float64](q)), must(ToSlice[float64](r))
	near(t, "parameters after loading the state and stepping", qv, pv, 0)
	same := true
	for i := range pv {
		same = same && pv[i] == rv[i]
	}
	if same {
		t.Fatalf("an Adam without the state stepped as the one with it (%v): the test shows nothing", rv)
	}
	// The state dict's tensors are copies: the later steps left them alone.
	near(t, "exp_avg saved before the third step", must(ToSlice[float64](must(s.Track(sd.Get("state.0.exp_avg"))))), expAvg, 0)

	// A state dict without "lr" keeps the rate.
	noLR := must(NewStateDict(
		Named{"state.0.exp_avg", must(s.Track(sd.Get("state.0.exp_avg")))},
		Named{"state.0.exp_avg_sq", must(s.Track(sd.Get("state.0.exp_avg_sq")))},
		Named{"state.0.step", stepT}))
	defer noLR.Close()
	MustOK(opt2.SetLR(0.3))
	MustOK(opt2.LoadStateDict(noLR))
	if lr := must(opt2.LR()); lr != 0.3 {
		t.Fatalf("LR after loading a state without lr = %v, want 0.3 kept", lr)
	}

	// A state dict with another optimizer's keys is refused naming the key, and nothing
	// changes.
	m := must(s.Track(FromSlice([]float64{0, 0, 0}, []int64{3}, CPU(0))))
	sgdState := must(NewStateDict(Named{"state.0.momentum_buffer", m}))
	defer sgdState.Close()
	e := wantCode(t, opt2.LoadStateDict(sgdState), ErrInvalidArgument)
	if !strings.Contains(e.Msg, "momentum_buffer") {
		t.Errorf("message %q should name the key", e.Msg)
	}
	if lr := must(opt2.LR()); lr != 0.3 {
		t.Fatalf("LR after a refused load = %v", lr)
	}
	bad := must(NewStateDict(Named{"state.0.exp_avg", m}))
	defer bad.Close()
	wantCode(t, opt2.LoadStateDict(bad), ErrInvalidArgument) // exp_avg_sq and step missing
	closedSD := must(NewStateDict())
	MustOK(closedSD.Close())
	wantCode(t, opt2.LoadStateDict(closedSD), ErrClosed)

	// SGD with momentum: its buffer under PyTorch's name; an empty state before a step.
	sp := linearLeaf(t, s, []float64{1, 2})
	sgd := must(SGD([]*Tensor{sp}, 0.1, Momentum(0.9)))
	defer sgd.Close()
	empty := must(sgd.StateDict())
	sgdSettings := "lr momentum dampening weight_decay nesterov maximize"
	if n := must(empty.Names()); strings.Join(n, " ") != sgdSettings {
		t.Errorf("SGD state before a step: %v, want its settings %s", n, sgdSettings)
	}
	MustOK(empty.Close())
	step(sgd, sp, []float64{3, 4})
	ssd := must(sgd.StateDict())
	defer ssd.Close()
	if n := must(ssd.Names()); strings.Join(n, " ") != sgdSettings+" state.0.momentum_buffer" {
		t.Errorf("SGD state: %v", n)
	}
	near(t, "SGD momentum buffer after one step (the gradient)", must(ToSlice[float64](must(s.Track(ssd.Get("state.0.momentum_buffer"))))), []float64{3, 4}, 0)
	// Adam's state is not SGD's.
	wantCode(t, opt2.LoadStateDict(ssd), ErrInvalidArgument)
}

// ClipGradNorm: the 2-norm of [3, 4] is 5; clipping to 1 scales the gradient by
// 1 / (5 + 1e-6), giving [0.6, 0.8]; the infinity norm; no clipping below the limit;
// parameters without gradients; over a module's parameters; the errors.
func TestClipGradNorm(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	p := linearLeaf(t, s, []float64{0, 0})
	setGrad(t, s, p, []float64{3, 4})
	norm := must(s.Track(ClipGradNorm([]*Tensor{p}, 1, 2, false)))
	if sh := must(norm.Shape()); len(sh) != 0 || must(norm.DType()) != Float64 {
		t.Fatalf("total norm: shape %v dtype %v, want a 0-d float64", sh, must(norm.DType()))
	}
	if v := must(norm.Item()); math.Abs(v-5) > 1e-12 {
		t.Fatalf("total norm %v, want sqrt(3^2 + 4^2) = 5", v)
	}
	near(t, "clipped gradient", must(ToSlice[float64](must(s.Track(p.Grad())))), []float64{0.6, 0.8}, 1e-6)

	// Below the limit nothing changes: the 2-norm of [0.6, 0.8] is 1 (less 1e-6 / 5), < 10.
	norm = must(s.Track(ClipGradNorm([]*Tensor{p}, 10, 2, true)))
	if v := must(norm.Item()); math.Abs(v-1) > 1e-6 {
		t.Fatalf("norm %v, want 1", v)
	}
	near(t, "gradient under the limit", must(ToSlice[float64](must(s.Track(p.Grad())))), []float64{0.6, 0.8}, 1e-6)

	// The infinity norm over two parameters, one without a gradient: gradients [3, -4]
	// and [1]: the largest magnitude is 4; clipping to 2 scales by 2 / 4: [1.5, -2], [0.5].
	a := linearLeaf(t, s, []float64{0, 0})
	b := linearLeaf(t, s, []float64{0})
	none := linearLeaf(t, s, []float64{7})
	setGrad(t, s, a, []float64{3, -4})
	setGrad(t, s, b, []float64{1})
	norm = must(s.Track(ClipGradNorm([]*Tensor{a, none, b}, 2, math.Inf(1), false)))
	if v := must(norm.Item()); math.Abs(v-4) > 1e-12 {
		t.Fatalf("infinity norm %v, want 4", v)
	}
	near(t, "inf-clipped a", must(ToSlice[float64](must(s.Track(a.Grad())))), []float64{1.5, -2}, 1e-6)
	near(t, "inf-clipped b", must(ToSlice[float64](must(s.Track(b.Grad())))), []float64{0.5}, 1e-6)
	if g := must(none.Grad()); g != nil {
		g.Close()
		t.Fatal("a parameter without a gradient got one")
	}
	// The 1-norm: |1.5| + |-2| + |0.5| = 4.
	norm = must(s.Track(ClipGradNorm([]*Tensor{a, b}, 100, 1, false)))
	if v := must(norm.Item()); math.Abs(v-4) > 1e-6 {
		t.Fatalf("1-norm %v, want 4", v)
	}
	// No gradient at all, or no parameters: the norm is 0.
	for _, ps := range [][]*Tensor{{none}, nil} {
		norm = must(s.Track(ClipGradNorm(ps, 1, 2, false)))
		if v := must(norm.Item()); v != 0 {
			t.Fatalf("norm of no gradients %v, want 0", v)
		}
	}

	// Over Module.Parameters' result as it is: a Linear's weight and bias.
	lin := must(Linear(2, 1, LinearOptions{DType: Float64}))
	defer lin.Close()
	params := must(lin.Parameters())
	defer params.Close()
	x := must(s.Track(FromSlice([]float64{3, 4}, []int64{1, 2}, CPU(0))))
	MustOK(must(s.Track(must(s.Track(lin.Forward(x))).Sum())).Backward(nil))
	// d/dweight = x = [3, 4], d/dbias = 1: the 2-norm is sqrt(9 + 16 + 1) = sqrt(26).
	norm = must(s.Track(ClipGradNorm(params, 1, 2, false)))
	if v := must(norm.Item()); math.Abs(v-math.Sqrt(26)) > 1e-12 {
		t.Fatalf("Linear's gradient norm %v, want sqrt(26)", v)
	}
	k := 1 / (math.Sqrt(26) + 1e-6)
	near(t, "clipped weight gradient", must(ToSlice[float64](must(s.Track(params[0].Tensor.Grad())))), []float64{3 * k, 4 * k}, 1e-12)
	near(t, "clipped bias gradient", must(ToSlice[float64](must(s.Track(params[1].Tensor.Grad())))), []float64{k}, 1e-12)

	// errorIfNonfinite: an infinite or NaN norm is refused and the gradients left as they
	// were. Without it they are scaled anyway, as PyTorch's: by 1 / (Inf + 1e-6) = 0 for
	// an infinite norm ([Inf, 1] becomes [Inf * 0 = NaN, 0]), by NaN for a NaN norm.
	inf := linearLeaf(t, s, []float64{0, 0})
	setGrad(t, s, inf, []float64{math.Inf(1), 1})
	nan := linearLeaf(t, s, []float64{0, 0})
	setGrad(t, s, nan, []float64{math.NaN(), 1})
	for _, q := range []*Tensor{inf, nan} {
		_, err := ClipGradNorm([]*Tensor{q}, 1, 2, true)
		wantCode(t, err, ErrInvalidArgument)
		if g := must(ToSlice[float64](must(s.Track(q.Grad())))); g[1] != 1 {
			t.Fatalf("gradient after a refused clip %v, want it unchanged", g)
		}
	}
	norm = must(s.Track(ClipGradNorm([]*Tensor{inf}, 1, 2, false)))
	if v := must(norm.Item()); !math.IsInf(v, 1) {
		t.Fatalf("norm %v, want +Inf", v)
	}
	if g := must(ToSlice[float64](must(s.Track(inf.Grad())))); !math.IsNaN(g[0]) || g[1] != 0 {
		t.Fatalf("gradient after clipping by an infinite norm %v, want [NaN 0] (PyTorch's)", g)
	}
	norm = must(s.Track(ClipGradNorm([]*Tensor{nan}, 1, 2, false)))
	if v := must(norm.Item()); !math.IsNaN(v) {
		t.Fatalf("norm %v, want NaN", v)
	}
	if g := must(ToSlice[float64](must(s.Track(nan.Grad())))); !math.IsNaN(g[1]) {
		t.Fatalf("gradient after clipping by a NaN norm %v, want NaN (PyTorch's)", g)
	}

	// Arguments out of range; nil and closed tensors.
	for _, c := range []struct {
		name          string
		max, normType float64
	}{{"max_norm -1", -1, 2}, {"max_norm NaN", math.NaN(), 2}, {"norm_type 0", 1, 0}, {"norm_type -2", 1, -2}} {
		_, err := ClipGradNorm([]*Tensor{p}, c.max, c.normType, false)
		if e := wantCode(t, err, ErrInvalidArgument); e.Op != "ClipGradNorm" {
			t.Errorf("%s: Op %q", c.name, e.Op)
		}
	}
	_, err := ClipGradNorm([]*Tensor{p, nil}, 1, 2, false)
	wantCode(t, err, ErrInvalidArgument)
	closed := must(FromSlice([]float64{1}, []int64{1}, CPU(0)))
	closed.Close()
	_, err = ClipGradNorm([]*Tensor{closed}, 1, 2, false)
	wantCode(t, err, ErrClosed)
}

// ClipGradValue clamps each gradient element to [-clip, clip].
func TestClipGradValue(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	a := linearLeaf(t, s, []float64{0, 0, 0})
	b := linearLeaf(t, s, []float64{0})
	none := linearLeaf(t, s, []float64{0})
	setGrad(t, s, a, []float64{3, -4, 0.5})
	setGrad(t, s, b, []float64{-0.25})
	MustOK(ClipGradValue([]*Tensor{a, b, none}, 1))
	near(t, "clamped a", must(ToSlice[float64](must(s.Track(a.Grad())))), []float64{1, -1, 0.5}, 0)
	near(t, "clamped b", must(ToSlice[float64](must(s.Track(b.Grad())))), []float64{-0.25}, 0)
	if g := must(none.Grad()); g != nil {
		g.Close()
		t.Fatal("a parameter without a gradient got one")
	}
	// Over []Named; clip 0 zeroes the gradient.
	MustOK(ClipGradValue([]Named{{"a", a}}, 0))
	near(t, "clamped to 0", must(ToSlice[float64](must(s.Track(a.Grad())))), []float64{0, 0, 0}, 0)
	MustOK(ClipGradValue([]*Tensor(nil), 1))

	for _, v := range []float64{-1, math.NaN()} {
		e := wantCode(t, ClipGradValue([]*Tensor{a}, v), ErrInvalidArgument)
		if e.Op != "ClipGradValue" {
			t.Errorf("Op %q", e.Op)
		}
	}
	closed := must(FromSlice([]float64{1}, []int64{1}, CPU(0)))
	closed.Close()
	wantCode(t, ClipGradValue([]*Tensor{closed}, 1), ErrClosed)
	wantCode(t, ClipGradValue([]*Tensor{nil}, 1), ErrInvalidArgument)
}

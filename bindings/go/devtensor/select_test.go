package devtensor

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// Hand-computed values for MaskedFill, Clamp, Triu, Tril, Var and Std, with their errors.
func TestSelectOpsAndSpreads(t *testing.T) {
	x := must(FromSlice([]float32{-2, 0.25, 3, 1}, []int64{2, 2}, CPU(0)))
	defer x.Close()
	mask := must(FromSlice([]bool{false, true}, []int64{2}, CPU(0)))
	defer mask.Close()

	check := func(what string, r *Tensor, err error, want []float32) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer r.Close()
		if got := must(ToSlice[float32](r)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
	r, err := x.MaskedFill(mask, -9)
	check("MaskedFill", r, err, []float32{-2, -9, 3, -9})
	r, err = x.Clamp(-1, 1)
	check("Clamp", r, err, []float32{-1, 0.25, 1, 1})
	r, err = x.ClampMin(0.5)
	check("ClampMin", r, err, []float32{0.5, 0.5, 3, 1})
	r, err = x.ClampMax(0)
	check("ClampMax", r, err, []float32{-2, 0, 0, 0})
	r, err = x.Triu(0)
	check("Triu", r, err, []float32{-2, 0.25, 0, 1})
	r, err = x.Tril(-1)
	check("Tril(-1)", r, err, []float32{0, 0, 3, 0})

	v := must(FromSlice([]float64{1, 2, 3, 5}, []int64{2, 2}, CPU(0)))
	defer v.Close()
	all := must(v.Var())
	defer all.Close()
	if got := must(all.Item()); math.Abs(got-(8.75/3)) > 1e-12 { // mean 2.75, squares 7.1875+... = 8.75
		t.Fatalf("Var() = %v, want %v", got, 8.75/3)
	}
	rows := must(v.Std(Dims(1), Correction(0), KeepDim()))
	defer rows.Close()
	if got, shape := must(ToSlice[float64](rows)), must(rows.Shape()); !reflect.DeepEqual(got, []float64{0.5, 1}) ||
		!reflect.DeepEqual(shape, []int64{2, 1}) {
		t.Fatalf("Std(Dims(1), Correction(0), KeepDim()) = %v %v, want [0.5 1] [2 1]", got, shape)
	}

	if _, err := x.MaskedFill(x, 0); !errors.Is(err, ErrDTypeMismatch) {
		t.Fatalf("a float mask: %v, want ErrDTypeMismatch", err)
	}
	if _, err := mask.Triu(0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Triu of a 1-d tensor: %v, want ErrInvalidArgument", err)
	}
	ints := must(FromSlice([]int64{1, 2}, []int64{2}, CPU(0)))
	defer ints.Close()
	if _, err := ints.Var(); !errors.Is(err, ErrDTypeMismatch) {
		t.Fatalf("Var of int64: %v, want ErrDTypeMismatch", err)
	}
	if _, err := v.Sum(Correction(0)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Sum(Correction(0)): %v, want ErrInvalidArgument", err)
	}
}

// LogSumExp and VectorNorm against values worked out by hand: overflow safety, every
// dim, KeepDim, integer promotion, each ord, the gradients (none NaN at a zero norm) and
// the errors.
func TestLogSumExpAndVectorNorm(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	check := func(what string, r *Tensor, wantShape []int64, want []float64, tol float64) {
		t.Helper()
		got, shape := must(ToSlice[float32](r)), must(r.Shape())
		if len(got) != len(want) || !reflect.DeepEqual(shape, wantShape) {
			t.Fatalf("%s = %v %v, want %v %v", what, got, shape, want, wantShape)
		}
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > tol {
				t.Fatalf("%s = %v, want %v (within %g)", what, got, want, tol)
			}
		}
	}

	// log(1 + 3) = ln 4; log(2 e^1000) = 1000 + ln 2, where exp(1000) alone overflows.
	x := must(s.Track(FromSlice([]float32{0, float32(math.Log(3)), 1000, 1000}, []int64{2, 2}, CPU(0))))
	check("LogSumExp(Dims(1))", must(s.Track(x.LogSumExp(Dims(1)))), []int64{2},
		[]float64{math.Log(4), 1000 + math.Ln2}, 1e-4)
	check("LogSumExp(Dims(-1), KeepDim())", must(s.Track(x.LogSumExp(Dims(-1), KeepDim()))), []int64{2, 1},
		[]float64{math.Log(4), 1000 + math.Ln2}, 1e-4)
	// Every dim: log(1 + 3 + 4 + 8) = ln 16.
	y := must(s.Track(FromSlice([]float32{0, float32(math.Log(3)), float32(math.Log(4)), float32(math.Log(8))},
		[]int64{2, 2}, CPU(0))))
	check("LogSumExp()", must(s.Track(y.LogSumExp())), []int64{}, []float64{4 * math.Ln2}, 1e-6)
	check("LogSumExp(KeepDim())", must(s.Track(y.LogSumExp(KeepDim()))), []int64{1, 1}, []float64{4 * math.Ln2}, 1e-6)
	// Integers are taken as the default dtype (float32): log(e + e) = 1 + ln 2.
	ints := must(s.Track(FromSlice([]int64{1, 1}, []int64{2}, CPU(0))))
	li := must(s.Track(ints.LogSumExp()))
	if dt := must(li.DType()); dt != Float32 || dt != must(GetDefaultDType()) {
		t.Fatalf("LogSumExp of int64: dtype %v, want float32 (the default)", dt)
	}
	check("LogSumExp of int64 [1 1]", li, []int64{}, []float64{1 + math.Ln2}, 1e-6)

	// VectorNorm of [[3, -4], [0, 0]] along dim 1.
	v := must(s.Track(FromSlice([]float32{3, -4, 0, 0}, []int64{2, 2}, CPU(0))))
	for _, c := range []struct {
		name string
		ord  float64
		want []float64
	}{
		{"2", 2, []float64{5, 0}},
		{"1", 1, []float64{7, 0}},
		{"+Inf", math.Inf(1), []float64{4, 0}},
		{"-Inf", math.Inf(-1), []float64{3, 0}},
		{"0", 0, []float64{2, 0}},
		{"3", 3, []float64{math.Cbrt(27 + 64), 0}},
	} {
		check("VectorNorm("+c.name+", Dims(1))", must(s.Track(v.VectorNorm(c.ord, Dims(1)))), []int64{2}, c.want, 1e-6)
	}
	check("VectorNorm(2)", must(s.Track(v.VectorNorm(2))), []int64{}, []float64{5}, 1e-6)
	check("VectorNorm(1, Dims(0), KeepDim())", must(s.Track(v.VectorNorm(1, Dims(0), KeepDim()))), []int64{1, 2},
		[]float64{3, 4}, 1e-6)

	// Gradients: d|x|/dx = x / |x| = [0.6, -0.8] for [3, -4], and 0 (not NaN) for the
	// zero row; LogSumExp's is the softmax, [1/4, 3/4] for [0, ln 3].
	g := must(s.Track(FromSlice([]float32{3, -4, 0, 0}, []int64{2, 2}, CPU(0))))
	MustOK(g.SetRequiresGrad(true))
	n := must(s.Track(g.VectorNorm(2, Dims(1))))
	if fn := must(n.GradFnName()); fn != "LinalgVectorNormBackward0" {
		t.Fatalf("VectorNorm grad_fn %q, want LinalgVectorNormBackward0", fn)
	}
	MustOK(must(s.Track(n.Sum())).Backward(nil))
	check("VectorNorm(2, Dims(1)) gradient", must(s.Track(g.Grad())), []int64{2, 2}, []float64{0.6, -0.8, 0, 0}, 1e-6)
	h := must(s.Track(FromSlice([]float32{0, float32(math.Log(3))}, []int64{2}, CPU(0))))
	MustOK(h.SetRequiresGrad(true))
	l := must(s.Track(h.LogSumExp()))
	if fn := must(l.GradFnName()); fn != "LogsumexpBackward0" {
		t.Fatalf("LogSumExp grad_fn %q, want LogsumexpBackward0", fn)
	}
	MustOK(l.Backward(nil))
	check("LogSumExp() gradient", must(s.Track(h.Grad())), []int64{2}, []float64{0.25, 0.75}, 1e-6)

	// Over an empty dim: the 2-norm is 0, logsumexp -Inf, the inf-norm has no identity.
	e := must(s.Track(Zeros([]int64{2, 0}, Float32, CPU(0))))
	check("VectorNorm(2) over an empty dim", must(s.Track(e.VectorNorm(2, Dims(1)))), []int64{2}, []float64{0, 0}, 0)
	if got := must(ToSlice[float32](must(s.Track(e.LogSumExp(Dims(1)))))); !reflect.DeepEqual(got,
		[]float32{float32(math.Inf(-1)), float32(math.Inf(-1))}) {
		t.Fatalf("LogSumExp over an empty dim = %v, want [-Inf -Inf]", got)
	}

	for _, c := range []struct {
		what string
		err  error
		want error
	}{
		{"VectorNorm of int64", func() error { _, err := ints.VectorNorm(2); return err }(), ErrDTypeMismatch},
		{"VectorNorm(NaN)", func() error { _, err := v.VectorNorm(math.NaN()); return err }(), ErrInvalidArgument},
		{"VectorNorm(+Inf) over an empty dim", func() error { _, err := e.VectorNorm(math.Inf(1), Dims(1)); return err }(),
			ErrInvalidArgument},
		{"VectorNorm(2, Dims(2))", func() error { _, err := v.VectorNorm(2, Dims(2)); return err }(), ErrInvalidArgument},
		{"LogSumExp(Dims(0, 0))", func() error { _, err := x.LogSumExp(Dims(0, 0)); return err }(), ErrInvalidArgument},
		{"LogSumExp(Correction(0))", func() error { _, err := x.LogSumExp(Correction(0)); return err }(),
			ErrInvalidArgument},
		{"VectorNorm(2, Correction(0))", func() error { _, err := v.VectorNorm(2, Correction(0)); return err }(),
			ErrInvalidArgument},
	} {
		if !errors.Is(c.err, c.want) {
			t.Fatalf("%s: %v, want %v", c.what, c.err, c.want)
		}
	}
}

// Flip, Roll and Repeat against values worked out by hand on x = [[0, 1, 2], [3, 4, 5]]:
// several dims, negative dims, the flattened roll, shifts past the size, a repeated roll
// dim, tiling with a new leading dim, an integer dtype, the gradients and the errors.
func TestFlipRollRepeat(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	check := func(what string, r *Tensor, wantShape []int64, want []float32) {
		t.Helper()
		got, shape := must(ToSlice[float32](r)), must(r.Shape())
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(shape, wantShape) {
			t.Fatalf("%s = %v %v, want %v %v", what, got, shape, want, wantShape)
		}
	}
	x := must(s.Track(must(s.Track(Arange(0, 6, 1, Float32, CPU(0)))).Reshape(2, 3)))

	check("Flip(0, 1)", must(s.Track(x.Flip(0, 1))), []int64{2, 3}, []float32{5, 4, 3, 2, 1, 0})
	check("Flip(0)", must(s.Track(x.Flip(0))), []int64{2, 3}, []float32{3, 4, 5, 0, 1, 2})
	check("Flip(-1)", must(s.Track(x.Flip(-1))), []int64{2, 3}, []float32{2, 1, 0, 5, 4, 3})
	check("Flip()", must(s.Track(x.Flip())), []int64{2, 3}, []float32{0, 1, 2, 3, 4, 5})

	check("Roll({1}, nil)", must(s.Track(x.Roll([]int64{1}, nil))), []int64{2, 3}, []float32{5, 0, 1, 2, 3, 4})
	check("Roll({-2}, {})", must(s.Track(x.Roll([]int64{-2}, []int64{}))), []int64{2, 3},
		[]float32{2, 3, 4, 5, 0, 1})
	check("Roll({1, -1}, {0, 1})", must(s.Track(x.Roll([]int64{1, -1}, []int64{0, 1}))), []int64{2, 3},
		[]float32{4, 5, 3, 1, 2, 0})
	check("Roll({7}, {1})", must(s.Track(x.Roll([]int64{7}, []int64{1}))), []int64{2, 3},
		[]float32{2, 0, 1, 5, 3, 4})
	check("Roll({1, 1}, {1, -1})", must(s.Track(x.Roll([]int64{1, 1}, []int64{1, -1}))), []int64{2, 3},
		[]float32{1, 2, 0, 4, 5, 3})

	check("Repeat(2, 1, 2)", must(s.Track(x.Repeat(2, 1, 2))), []int64{2, 2, 6},
		[]float32{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5})
	check("Repeat(2, 1)", must(s.Track(x.Repeat(2, 1))), []int64{4, 3},
		[]float32{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5})
	check("Repeat(1, 0)", must(s.Track(x.Repeat(1, 0))), []int64{2, 0}, []float32{})

	// Any dtype: int64 [1, 2] repeated 2 times is [1, 2, 1, 2] (tiled, not interleaved).
	ints := must(s.Track(FromSlice([]int64{1, 2}, []int64{2}, CPU(0))))
	for _, c := range []struct {
		what string
		r    *Tensor
		want []int64
	}{
		{"int64 Repeat(2)", must(s.Track(ints.Repeat(2))), []int64{1, 2, 1, 2}},
		{"int64 Flip(0)", must(s.Track(ints.Flip(0))), []int64{2, 1}},
		{"int64 Roll({1}, nil)", must(s.Track(ints.Roll([]int64{1}, nil))), []int64{2, 1}},
	} {
		if got := must(ToSlice[int64](c.r)); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s = %v, want %v", c.what, got, c.want)
		}
	}

	// Gradients of sum(f(leaf) * w), after checking f's grad_fn.
	grad := func(what, wantFn string, f func(leaf *Tensor) (*Tensor, error), w *Tensor, wantGrad []float32) {
		t.Helper()
		leaf := must(s.Track(FromSlice([]float32{0, 1, 2, 3, 4, 5}, []int64{2, 3}, CPU(0))))
		MustOK(leaf.SetRequiresGrad(true))
		y := must(s.Track(f(leaf)))
		if fn := must(y.GradFnName()); fn != wantFn {
			t.Fatalf("%s grad_fn %q, want %q", what, fn, wantFn)
		}
		MustOK(must(s.Track(must(s.Track(y.Mul(w))).Sum())).Backward(nil))
		check(what+" gradient", must(s.Track(leaf.Grad())), []int64{2, 3}, wantGrad)
	}
	w := must(s.Track(FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(0))))
	// Every element has 2 * 3 copies, each with weight 1.
	grad("Repeat(2, 3)", "RepeatBackward0", func(l *Tensor) (*Tensor, error) { return l.Repeat(2, 3) },
		must(s.Track(Ones([]int64{4, 9}, Float32, CPU(0)))), []float32{6, 6, 6, 6, 6, 6})
	// The gradient of Flip(0) is w flipped back.
	grad("Flip(0)", "FlipBackward0", func(l *Tensor) (*Tensor, error) { return l.Flip(0) },
		w, []float32{4, 5, 6, 1, 2, 3})
	// y[i] = x[i-1] (flattened): x[j]'s gradient is w[j+1], w rolled back by one.
	grad("Roll({1}, nil)", "RollBackward0", func(l *Tensor) (*Tensor, error) { return l.Roll([]int64{1}, nil) },
		w, []float32{2, 3, 4, 5, 6, 1})

	for _, c := range []struct {
		what string
		err  error
	}{
		{"Flip(0, 0)", func() error { _, err := x.Flip(0, 0); return err }()},
		{"Flip(1, -1)", func() error { _, err := x.Flip(1, -1); return err }()},
		{"Flip(2)", func() error { _, err := x.Flip(2); return err }()},
		{"Roll({1, 2}, {0})", func() error { _, err := x.Roll([]int64{1, 2}, []int64{0}); return err }()},
		{"Roll({1}, {0, 1})", func() error { _, err := x.Roll([]int64{1}, []int64{0, 1}); return err }()},
		{"Roll({1, 2}, nil)", func() error { _, err := x.Roll([]int64{1, 2}, nil); return err }()},
		{"Roll(nil, nil)", func() error { _, err := x.Roll(nil, nil); return err }()},
		{"Roll({1}, {2})", func() error { _, err := x.Roll([]int64{1}, []int64{2}); return err }()},
		{"Repeat(2)", func() error { _, err := x.Repeat(2); return err }()},
		{"Repeat()", func() error { _, err := x.Repeat(); return err }()},
		{"Repeat(2, -1)", func() error { _, err := x.Repeat(2, -1); return err }()},
	} {
		if !errors.Is(c.err, ErrInvalidArgument) {
			t.Fatalf("%s: %v, want ErrInvalidArgument", c.what, c.err)
		}
	}
	var nilT *Tensor
	if _, err := nilT.Flip(0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Flip of a nil tensor: %v, want ErrInvalidArgument", err)
	}
	closed := must(FromSlice([]float32{1}, []int64{1}, CPU(0)))
	MustOK(closed.Close())
	if _, err := closed.Repeat(2); !errors.Is(err, ErrClosed) {
		t.Fatalf("Repeat of a closed tensor: %v, want ErrClosed", err)
	}
}

// Pad against values worked out by hand: each mode on [1, 2, 3], two dims of a [2, 2],
// crops, an integer dtype, the gradients (each element gets its number of copies), and
// the errors.
func TestPad(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	check := func(what string, x *Tensor, pad []int64, mode PadMode, value float64, wantShape []int64, want []float32) {
		t.Helper()
		r := must(s.Track(x.Pad(pad, mode, value)))
		got, shape := must(ToSlice[float32](r)), must(r.Shape())
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(shape, wantShape) {
			t.Fatalf("%s = %v %v, want %v %v", what, got, shape, want, wantShape)
		}
	}
	x := must(s.Track(FromSlice([]float32{1, 2, 3}, []int64{3}, CPU(0))))
	check("constant (1, 2) value 9", x, []int64{1, 2}, PadConstant, 9, []int64{6}, []float32{9, 1, 2, 3, 9, 9})
	check("reflect (2, 0)", x, []int64{2, 0}, PadReflect, 0, []int64{5}, []float32{3, 2, 1, 2, 3})
	check("replicate (1, 2)", x, []int64{1, 2}, PadReplicate, 0, []int64{6}, []float32{1, 1, 2, 3, 3, 3})
	check("circular (1, 1)", x, []int64{1, 1}, PadCircular, 0, []int64{5}, []float32{3, 1, 2, 3, 1})
	check("no pad: a copy", x, nil, PadConstant, 0, []int64{3}, []float32{1, 2, 3})

	// [[1, 2], [3, 4]]: the pairs go from the last dim backwards.
	m := must(s.Track(FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, CPU(0))))
	check("constant (1, 0, 0, 1)", m, []int64{1, 0, 0, 1}, PadConstant, 0, []int64{3, 3},
		[]float32{0, 1, 2, 0, 3, 4, 0, 0, 0})
	check("reflect (1, 1, 1, 1)", m, []int64{1, 1, 1, 1}, PadReflect, 0, []int64{4, 4},
		[]float32{4, 3, 4, 3, 2, 1, 2, 1, 4, 3, 4, 3, 2, 1, 2, 1})
	check("replicate (0, 1, 1, 0)", m, []int64{0, 1, 1, 0}, PadReplicate, 0, []int64{3, 3},
		[]float32{1, 2, 2, 1, 2, 2, 3, 4, 4})
	check("circular (1, 0, 0, 1)", m, []int64{1, 0, 0, 1}, PadCircular, 0, []int64{3, 3},
		[]float32{2, 1, 2, 4, 3, 4, 2, 1, 2})

	// Negative values crop.
	five := must(s.Track(FromSlice([]float32{1, 2, 3, 4, 5}, []int64{5}, CPU(0))))
	check("constant (-1, -2)", five, []int64{-1, -2}, PadConstant, 0, []int64{2}, []float32{2, 3})
	check("constant (-1, 1) value 7", five, []int64{-1, 1}, PadConstant, 7, []int64{5}, []float32{2, 3, 4, 5, 7})
	check("constant (0, 0, -1, 0) of [2, 2]", m, []int64{0, 0, -1, 0}, PadConstant, 0, []int64{1, 2}, []float32{3, 4})

	// An integer tensor keeps its dtype.
	ints := must(s.Track(FromSlice([]int64{1, 2, 3}, []int64{3}, CPU(0))))
	ip := must(s.Track(ints.Pad([]int64{1, 1}, PadConstant, -4)))
	if got, dt := must(ToSlice[int64](ip)), must(ip.DType()); dt != Int64 || !reflect.DeepEqual(got, []int64{-4, 1, 2, 3, -4}) {
		t.Fatalf("int64 constant (1, 1) value -4 = %v %v, want int64 [-4 1 2 3 -4]", dt, got)
	}

	// Gradients: sum of the padded tensor, so each element's gradient is its number of
	// copies. reflect (2, 1) of [a, b, c] is [c, b, a, b, c, b]: a once, b 3 times, c twice.
	grad := func(what string, pad []int64, mode PadMode, want []float32, wantFn string) {
		t.Helper()
		g := must(s.Track(FromSlice([]float32{1, 2, 3}, []int64{3}, CPU(0))))
		MustOK(g.SetRequiresGrad(true))
		p := must(s.Track(g.Pad(pad, mode, 0)))
		if fn := must(p.GradFnName()); wantFn != "" && fn != wantFn {
			t.Fatalf("%s: grad_fn %q, want %q", what, fn, wantFn)
		}
		MustOK(must(s.Track(p.Sum())).Backward(nil))
		if got := must(ToSlice[float32](must(s.Track(g.Grad())))); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: gradient %v, want %v", what, got, want)
		}
	}
	grad("reflect (2, 1)", []int64{2, 1}, PadReflect, []float32{1, 3, 2}, "")
	grad("replicate (1, 2)", []int64{1, 2}, PadReplicate, []float32{2, 1, 3}, "")
	grad("circular (1, 1)", []int64{1, 1}, PadCircular, []float32{2, 1, 2}, "")
	grad("constant (1, 2)", []int64{1, 2}, PadConstant, []float32{1, 1, 1}, "ConstantPadNdBackward0")
	grad("constant (-1, 0)", []int64{-1, 0}, PadConstant, []float32{0, 1, 1}, "ConstantPadNdBackward0")

	// The modes' names.
	for m, want := range map[PadMode]string{PadConstant: "constant", PadReflect: "reflect",
		PadReplicate: "replicate", PadCircular: "circular", PadMode(7): "PadMode(7)"} {
		if got := m.String(); got != want {
			t.Fatalf("PadMode(%d).String() = %q, want %q", int32(m), got, want)
		}
	}

	// Errors.
	_, err := x.Pad([]int64{1}, PadConstant, 0)
	wantCode(t, err, ErrInvalidArgument) // an odd number of values
	_, err = x.Pad([]int64{1, 1, 1, 1}, PadConstant, 0)
	wantCode(t, err, ErrInvalidArgument) // more pairs than dims
	_, err = x.Pad([]int64{3, 0}, PadReflect, 0)
	wantCode(t, err, ErrInvalidArgument) // a reflect pad not below the size
	_, err = x.Pad([]int64{4, 0}, PadCircular, 0)
	wantCode(t, err, ErrInvalidArgument) // a circular pad over the size
	_, err = x.Pad([]int64{-2, -2}, PadConstant, 0)
	wantCode(t, err, ErrInvalidArgument) // a negative size
	_, err = x.Pad([]int64{1, 1}, PadReflect, 5)
	wantCode(t, err, ErrInvalidArgument) // a value for mode reflect
	_, err = x.Pad([]int64{1, 1}, PadMode(7), 0)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "PadMode(7)") {
		t.Fatalf("an unknown mode: %q does not name it", e.Msg)
	}
	closed := must(FromSlice([]float32{1, 2}, []int64{2}, CPU(0)))
	MustOK(closed.Close())
	_, err = closed.Pad([]int64{1, 1}, PadConstant, 0)
	wantCode(t, err, ErrClosed)
	var none *Tensor
	_, err = none.Pad([]int64{1, 1}, PadConstant, 0)
	wantCode(t, err, ErrInvalidArgument)
}

// Interpolate against values worked out by hand: nearest by a factor and to a size (one
// value for every dim or one each), bilinear and trilinear with align corners (a linear
// function comes back exact), linear without (the positions clamped at both ends),
// nearest by a fractional factor, the gradient, the modes' names, and the errors.
func TestInterpolate(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	check := func(what string, x *Tensor, opts InterpolateOptions, wantShape []int64, want []float64) *Tensor {
		t.Helper()
		r := must(s.Track(x.Interpolate(opts)))
		if shape := must(r.Shape()); !reflect.DeepEqual(shape, wantShape) {
			t.Fatalf("%s: shape %v, want %v", what, shape, wantShape)
		}
		near(t, what, must(ToSlice[float32](r)), want, 1e-6)
		return r
	}
	// [[0, 3], [6, 9]]: each element becomes a 2x2 block.
	x := must(s.Track(FromSlice([]float32{0, 3, 6, 9}, []int64{1, 1, 2, 2}, CPU(0))))
	blocks := []float64{0, 0, 3, 3, 0, 0, 3, 3, 6, 6, 9, 9, 6, 6, 9, 9}
	check("nearest, scale 2", x, InterpolateOptions{ScaleFactor: []float64{2}}, []int64{1, 1, 4, 4}, blocks)
	check("nearest, scale (2, 2)", x, InterpolateOptions{ScaleFactor: []float64{2, 2}}, []int64{1, 1, 4, 4}, blocks)
	check("nearest, size 4", x, InterpolateOptions{Size: []int64{4}, Mode: InterpolateNearest}, []int64{1, 1, 4, 4}, blocks)
	check("nearest, size (1, 4)", x, InterpolateOptions{Size: []int64{1, 4}}, []int64{1, 1, 1, 4}, []float64{0, 0, 3, 3})

	// bilinear, align corners, to (2, 4): the rows stay, the columns read 0, 1/3, 2/3, 1.
	bil := InterpolateOptions{Size: []int64{2, 4}, Mode: InterpolateBilinear, AlignCorners: true}
	check("bilinear align_corners (2, 4)", x, bil, []int64{1, 1, 2, 4}, []float64{0, 1, 2, 3, 6, 7, 8, 9})
	// Without align corners the columns read (j + 0.5) / 2 - 0.5 clamped to [0, 1]: 0,
	// 0.25, 0.75, 1; the rows (i + 0.5) - 0.5 = i.
	check("bilinear (2, 4)", x, InterpolateOptions{Size: []int64{2, 4}, Mode: InterpolateBilinear},
		[]int64{1, 1, 2, 4}, []float64{0, 0.75, 2.25, 3, 6, 6.75, 8.25, 9})

	// linear, [0, 4] to 4 without align corners: positions 0 (clamped from -0.25), 0.25,
	// 0.75, 1 (1.25 clamped at the last element): 0, 1, 3, 4.
	l := must(s.Track(FromSlice([]float32{0, 4}, []int64{1, 1, 2}, CPU(0))))
	check("linear 4", l, InterpolateOptions{Size: []int64{4}, Mode: InterpolateLinear}, []int64{1, 1, 4}, []float64{0, 1, 3, 4})
	check("linear 3 align_corners", l, InterpolateOptions{Size: []int64{3}, Mode: InterpolateLinear, AlignCorners: true},
		[]int64{1, 1, 3}, []float64{0, 2, 4})

	// nearest, [0 .. 4] by 1.5: 7 elements, output i reads floor(i / 1.5).
	five := must(s.Track(FromSlice([]float32{0, 1, 2, 3, 4}, []int64{1, 1, 5}, CPU(0))))
	check("nearest 1-d, scale 1.5", five, InterpolateOptions{ScaleFactor: []float64{1.5}}, []int64{1, 1, 7},
		[]float64{0, 0, 1, 2, 2, 3, 4})

	// trilinear, align corners, 2x2x2 to 3x3x3 of v(d, h, w) = 4d + 2h + w: linear, so
	// exact, output (i, j, k) = 4 i/2 + 2 j/2 + k/2.
	cube := must(s.Track(FromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7}, []int64{1, 1, 2, 2, 2}, CPU(0))))
	var tri []float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				tri = append(tri, 2*float64(i)+float64(j)+0.5*float64(k))
			}
		}
	}
	check("trilinear align_corners 3", cube, InterpolateOptions{Size: []int64{3}, Mode: InterpolateTrilinear, AlignCorners: true},
		[]int64{1, 1, 3, 3, 3}, tri)

	// The gradient of the sum of bilinear align corners to (2, 4): each column weight
	// pair (1 - c, c) for c = 0, 1/3, 2/3, 1 adds up to 2 per input element.
	g := must(s.Track(FromSlice([]float64{0, 3, 6, 9}, []int64{1, 1, 2, 2}, CPU(0))))
	MustOK(g.SetRequiresGrad(true))
	y := must(s.Track(g.Interpolate(bil)))
	near(t, "bilinear float64", must(ToSlice[float64](y)), []float64{0, 1, 2, 3, 6, 7, 8, 9}, 1e-12)
	if fn := must(y.GradFnName()); fn != "UpsampleBilinear2DBackward1" {
		t.Fatalf("grad_fn %q, want UpsampleBilinear2DBackward1", fn)
	}
	MustOK(must(s.Track(y.Sum())).Backward(nil))
	near(t, "bilinear gradient", must(ToSlice[float64](must(s.Track(g.Grad())))), []float64{2, 2, 2, 2}, 1e-12)
	// nearest by 2: each input element is copied 4 times.
	g2 := must(s.Track(FromSlice([]float64{0, 3, 6, 9}, []int64{1, 1, 2, 2}, CPU(0))))
	MustOK(g2.SetRequiresGrad(true))
	MustOK(must(s.Track(must(s.Track(g2.Interpolate(InterpolateOptions{ScaleFactor: []float64{2}}))).Sum())).Backward(nil))
	near(t, "nearest gradient", must(ToSlice[float64](must(s.Track(g2.Grad())))), []float64{4, 4, 4, 4}, 0)

	// PyTorch's names.
	for m, want := range map[InterpolateMode]string{InterpolateNearest: "nearest", InterpolateLinear: "linear",
		InterpolateBilinear: "bilinear", InterpolateTrilinear: "trilinear", InterpolateMode(7): "InterpolateMode(7)"} {
		if got := m.String(); got != want {
			t.Fatalf("InterpolateMode(%d).String() = %q, want %q", int32(m), got, want)
		}
	}

	// Errors.
	_, err := x.Interpolate(InterpolateOptions{Size: []int64{4, 4}, ScaleFactor: []float64{2}})
	wantCode(t, err, ErrInvalidArgument) // both
	_, err = x.Interpolate(InterpolateOptions{})
	wantCode(t, err, ErrInvalidArgument) // neither
	_, err = x.Interpolate(InterpolateOptions{Size: []int64{4, 4, 4}})
	wantCode(t, err, ErrInvalidArgument) // 3 sizes for 2 spatial dims
	_, err = x.Interpolate(InterpolateOptions{Size: []int64{0}})
	wantCode(t, err, ErrInvalidArgument) // an empty output
	_, err = x.Interpolate(InterpolateOptions{ScaleFactor: []float64{0}})
	wantCode(t, err, ErrInvalidArgument) // a factor that is not positive
	_, err = x.Interpolate(InterpolateOptions{Size: []int64{4}, AlignCorners: true})
	wantCode(t, err, ErrInvalidArgument) // align corners with nearest
	_, err = l.Interpolate(InterpolateOptions{Size: []int64{4, 4}, Mode: InterpolateBilinear})
	if e := wantCode(t, err, ErrShapeMismatch); !strings.Contains(e.Msg, "bilinear") {
		t.Fatalf("bilinear on a 3-d input: %q does not name the mode", e.Msg)
	}
	_, err = x.Interpolate(InterpolateOptions{Size: []int64{4}, Mode: InterpolateLinear})
	wantCode(t, err, ErrShapeMismatch) // linear on a 4-d input
	_, err = x.Interpolate(InterpolateOptions{Size: []int64{4}, Mode: InterpolateMode(7)})
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "InterpolateMode(7)") {
		t.Fatalf("an unknown mode: %q does not name it", e.Msg)
	}
	ints := must(s.Track(FromSlice([]int64{0, 3, 6, 9}, []int64{1, 1, 2, 2}, CPU(0))))
	_, err = ints.Interpolate(InterpolateOptions{ScaleFactor: []float64{2}})
	wantCode(t, err, ErrDTypeMismatch)
	flat := must(s.Track(FromSlice([]float32{1, 2}, []int64{2}, CPU(0))))
	_, err = flat.Interpolate(InterpolateOptions{Size: []int64{4}})
	wantCode(t, err, ErrShapeMismatch) // no spatial dim
	closed := must(FromSlice([]float32{1, 2}, []int64{1, 1, 2}, CPU(0)))
	MustOK(closed.Close())
	_, err = closed.Interpolate(InterpolateOptions{Size: []int64{4}})
	wantCode(t, err, ErrClosed)
	var none *Tensor
	_, err = none.Interpolate(InterpolateOptions{Size: []int64{4}})
	wantCode(t, err, ErrInvalidArgument)
}

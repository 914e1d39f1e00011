package devtensor

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// Compile checks of the activation modules' signatures.
var (
	_ func() (*Module, error)        = GELU
	_ func() (*Module, error)        = GELUTanh
	_ func() (*Module, error)        = SiLU
	_ func(float64) (*Module, error) = LeakyReLU
)

// GELUTanh is torch.nn.GELU(approximate="tanh"): its values against the formula computed
// here, its kind, the tensor op's result, and the dtypes it refuses.
func TestGELUTanhModule(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	m := must(GELUTanh())
	defer m.Close()
	if kind := must(m.Kind()); kind != "GELU" {
		t.Fatalf("kind %q, want PyTorch's class name GELU", kind)
	}
	if ps := must(m.Parameters()); len(ps) != 0 {
		ps.Close()
		t.Fatal("GELUTanh has parameters")
	}
	in := []float64{-3, -1, -0.5, 0, 0.5, 1, 2, 3}
	var want []float64
	for _, x := range in {
		want = append(want, x/2*(1+math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))))
	}
	x64 := must(s.Track(FromSlice(in, []int64{2, 4}, CPU(0))))
	y64 := must(s.Track(m.Forward(x64)))
	if sh, dt := must(y64.Shape()), must(y64.DType()); dt != Float64 || len(sh) != 2 || sh[0] != 2 || sh[1] != 4 {
		t.Fatalf("float64 [2, 4] in: %v %v out", dt, sh)
	}
	near(t, "GELUTanh float64", must(ToSlice[float64](y64)), want, 1e-10)
	x32 := must(s.Track(x64.ToDType(Float32)))
	y32 := must(ToSlice[float32](must(s.Track(m.Forward(x32)))))
	near(t, "GELUTanh float32", y32, want, 1e-6)
	// The module is the op Tensor.GELUTanh, and not the exact form: at 1 the two differ
	// by 1.5e-4 (0.841192 against 0.841345).
	op := must(ToSlice[float32](must(s.Track(x32.GELUTanh()))))
	for i := range op {
		if op[i] != y32[i] {
			t.Fatalf("module %v, op %v", y32, op)
		}
	}
	exact := must(GELU())
	defer exact.Close()
	e := must(ToSlice[float32](must(s.Track(exact.Forward(x32)))))
	if d := math.Abs(float64(e[5] - y32[5])); d < 1e-4 {
		t.Fatalf("GELUTanh(1) = %v, GELU(1) = %v: not the tanh form", y32[5], e[5])
	}
	// In a Sequential, differentiable: d/dx at 0 is 1/2.
	z := must(s.Track(Zeros([]int64{1, 1}, Float32, CPU(0))))
	MustOK(z.SetRequiresGrad(true))
	lin := must(Linear(1, 1, LinearOptions{NoBias: true}))
	seq := must(Sequential(must(GELUTanh()), lin)) // takes both over
	defer seq.Close()
	y := must(s.Track(seq.Forward(z)))
	MustOK(must(s.Track(y.Sum())).Backward(nil))
	g := must(ToSlice[float32](must(s.Track(z.Grad()))))
	params := must(lin.Parameters())
	defer params.Close()
	w := must(ToSlice[float32](params[0].Tensor))
	if math.Abs(float64(g[0]-w[0]/2)) > 1e-6 {
		t.Fatalf("gradient at 0: %v, want weight / 2 = %v", g[0], w[0]/2)
	}
	// Floating inputs only, as the op.
	ints := must(s.Track(FromSlice([]int64{1, 2}, []int64{2}, CPU(0))))
	_, err := m.Forward(ints)
	wantCode(t, err, ErrDTypeMismatch)
}

// Tensor.LeakyReLU against values worked out by hand: [-2, 0, 3] with slope 0.1 is
// [-0.2, 0, 3]; its gradient is the slope where x <= 0 (at 0 too, as PyTorch's), 1
// elsewhere; floating tensors only; a slope that is not finite is refused.
func TestLeakyReLU(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float64{-2, 0, 3}, []int64{3}, CPU(0))))
	MustOK(x.SetRequiresGrad(true))
	y := must(s.Track(x.LeakyReLU(0.1)))
	near(t, "LeakyReLU(0.1) float64", must(ToSlice[float64](y)), []float64{-0.2, 0, 3}, 1e-15)
	if fn := must(y.GradFnName()); fn != "LeakyReluBackward0" {
		t.Fatalf("grad_fn %q, want LeakyReluBackward0", fn)
	}
	MustOK(must(s.Track(y.Sum())).Backward(nil))
	near(t, "LeakyReLU(0.1) gradient", must(ToSlice[float64](must(s.Track(x.Grad())))), []float64{0.1, 0.1, 1}, 1e-15)
	x32 := must(s.Track(FromSlice([]float32{-2, 0, 3, -0.5}, []int64{2, 2}, CPU(0))))
	y32 := must(s.Track(x32.LeakyReLU(0.01)))
	if sh := must(y32.Shape()); len(sh) != 2 || sh[0] != 2 || sh[1] != 2 {
		t.Fatalf("shape %v, want [2 2]", sh)
	}
	near(t, "LeakyReLU(0.01) float32", must(ToSlice[float32](y32)), []float64{-0.02, 0, 3, -0.005}, 1e-7)
	// A slope of 0 is ReLU; a negative one is allowed (PyTorch's too).
	near(t, "LeakyReLU(0)", must(ToSlice[float32](must(s.Track(x32.LeakyReLU(0))))), []float64{0, 0, 3, 0}, 0)
	near(t, "LeakyReLU(-1)", must(ToSlice[float32](must(s.Track(x32.LeakyReLU(-1))))), []float64{2, 0, 3, 0.5}, 0)

	ints := must(s.Track(FromSlice([]int32{-1, 2}, []int64{2}, CPU(0))))
	_, err := ints.LeakyReLU(0.1)
	wantCode(t, err, ErrDTypeMismatch)
	_, err = x32.LeakyReLU(math.NaN())
	wantCode(t, err, ErrInvalidArgument)
	_, err = x32.LeakyReLU(math.Inf(1))
	wantCode(t, err, ErrInvalidArgument)
	closed := must(FromSlice([]float32{1}, []int64{1}, CPU(0)))
	MustOK(closed.Close())
	_, err = closed.LeakyReLU(0.1)
	wantCode(t, err, ErrClosed)
}

// The LeakyReLU and SiLU modules: their kinds, no parameters, the values worked out here
// (SiLU(x) = x / (1 + e^-x)), the same as the tensor ops', the dtypes they refuse, and
// LeakyReLU's refused slope.
func TestLeakyReLUAndSiLUModules(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float64{-2, -1, 0, 0.5, 1, 3}, []int64{2, 3}, CPU(0))))
	ints := must(s.Track(FromSlice([]int64{1, 2}, []int64{2}, CPU(0))))

	lr := must(LeakyReLU(0.1))
	defer lr.Close()
	if kind := must(lr.Kind()); kind != "LeakyReLU" {
		t.Fatalf("kind %q, want LeakyReLU", kind)
	}
	if ps := must(lr.Parameters()); len(ps) != 0 {
		ps.Close()
		t.Fatal("LeakyReLU has parameters")
	}
	y := must(s.Track(lr.Forward(x)))
	if sh := must(y.Shape()); len(sh) != 2 || sh[0] != 2 || sh[1] != 3 {
		t.Fatalf("shape %v, want [2 3]", sh)
	}
	near(t, "LeakyReLU(0.1) module", must(ToSlice[float64](y)), []float64{-0.2, -0.1, 0, 0.5, 1, 3}, 1e-15)
	_, err := lr.Forward(ints)
	wantCode(t, err, ErrDTypeMismatch)
	_, err = LeakyReLU(math.NaN())
	wantCode(t, err, ErrInvalidArgument)
	_, err = LeakyReLU(math.Inf(-1))
	wantCode(t, err, ErrInvalidArgument)

	si := must(SiLU())
	defer si.Close()
	if kind := must(si.Kind()); kind != "SiLU" {
		t.Fatalf("kind %q, want SiLU", kind)
	}
	if ps := must(si.Parameters()); len(ps) != 0 {
		ps.Close()
		t.Fatal("SiLU has parameters")
	}
	var want []float64
	for _, v := range []float64{-2, -1, 0, 0.5, 1, 3} {
		want = append(want, v/(1+math.Exp(-v)))
	}
	got := must(ToSlice[float64](must(s.Track(si.Forward(x)))))
	near(t, "SiLU module float64", got, want, 1e-12)
	near(t, "SiLU module against Tensor.SiLU", got, must(ToSlice[float64](must(s.Track(x.SiLU())))), 0)
	x32 := must(s.Track(x.ToDType(Float32)))
	near(t, "SiLU module float32", must(ToSlice[float32](must(s.Track(si.Forward(x32))))), want, 1e-6)
	_, err = si.Forward(ints)
	wantCode(t, err, ErrDTypeMismatch)

	// In a Sequential: LeakyReLU(0.1) then SiLU, differentiable. At x = -1: y = SiLU(-0.1),
	// dy/dx = 0.1 * SiLU'(-0.1), SiLU'(z) = sigmoid(z) (1 + z (1 - sigmoid(z))).
	seq := must(Sequential(must(LeakyReLU(0.1)), must(SiLU()))) // takes both over
	defer seq.Close()
	if kinds := must(seq.Kind()); kinds != "Sequential" {
		t.Fatalf("kind %q, want Sequential", kinds)
	}
	z := must(s.Track(FromSlice([]float64{-1}, []int64{1}, CPU(0))))
	MustOK(z.SetRequiresGrad(true))
	out := must(s.Track(seq.Forward(z)))
	near(t, "Sequential(LeakyReLU, SiLU)(-1)", must(ToSlice[float64](out)), []float64{-0.1 / (1 + math.Exp(0.1))}, 1e-12)
	MustOK(must(s.Track(out.Sum())).Backward(nil))
	sg := 1 / (1 + math.Exp(0.1))
	near(t, "its gradient", must(ToSlice[float64](must(s.Track(z.Grad())))), []float64{0.1 * sg * (1 - 0.1*(1-sg))}, 1e-12)
}

// A compile check of Upsample's signature.
var _ func(InterpolateOptions) (*Module, error) = Upsample

// The Upsample module: its kind, no parameters, its forward equal to Tensor.Interpolate
// with the same options (the values worked out by hand in TestInterpolate), its options
// copied, the gradient through it, and its errors, those of forward naming the module.
func TestUpsampleModule(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float32{0, 3, 6, 9}, []int64{1, 1, 2, 2}, CPU(0))))

	size := []int64{2, 4}
	opts := InterpolateOptions{Size: size, Mode: InterpolateBilinear, AlignCorners: true}
	up := must(Upsample(opts))
	defer up.Close()
	size[1] = 8 // the module copied its options
	if kind := must(up.Kind()); kind != "Upsample" {
		t.Fatalf("kind %q, want Upsample", kind)
	}
	if ps := must(up.Parameters()); len(ps) != 0 {
		ps.Close()
		t.Fatal("Upsample has parameters")
	}
	y := must(s.Track(up.Forward(x)))
	if sh := must(y.Shape()); !reflect.DeepEqual(sh, []int64{1, 1, 2, 4}) {
		t.Fatalf("shape %v, want [1 1 2 4]", sh)
	}
	got := must(ToSlice[float32](y))
	near(t, "Upsample(size=(2, 4), bilinear, align_corners)", got, []float64{0, 1, 2, 3, 6, 7, 8, 9}, 1e-6)
	want := InterpolateOptions{Size: []int64{2, 4}, Mode: InterpolateBilinear, AlignCorners: true}
	if f := must(ToSlice[float32](must(s.Track(x.Interpolate(want))))); !reflect.DeepEqual(got, f) {
		t.Fatalf("Upsample's forward %v, Tensor.Interpolate %v", got, f)
	}

	near2 := must(Upsample(InterpolateOptions{ScaleFactor: []float64{2}}))
	defer near2.Close()
	got2 := must(ToSlice[float32](must(s.Track(near2.Forward(x)))))
	near(t, "Upsample(scale_factor=2)", got2, []float64{0, 0, 3, 3, 0, 0, 3, 3, 6, 6, 9, 9, 6, 6, 9, 9}, 0)
	f2 := must(ToSlice[float32](must(s.Track(x.Interpolate(InterpolateOptions{ScaleFactor: []float64{2}})))))
	if !reflect.DeepEqual(got2, f2) {
		t.Fatalf("Upsample's forward %v, Tensor.Interpolate %v", got2, f2)
	}

	// The gradient of the sum through the module: 2 for each input element.
	g := must(s.Track(FromSlice([]float64{0, 3, 6, 9}, []int64{1, 1, 2, 2}, CPU(0))))
	MustOK(g.SetRequiresGrad(true))
	MustOK(must(s.Track(must(s.Track(up.Forward(g))).Sum())).Backward(nil))
	near(t, "gradient through Upsample", must(ToSlice[float64](must(s.Track(g.Grad())))), []float64{2, 2, 2, 2}, 1e-12)

	// Forward's errors name the module.
	l := must(s.Track(FromSlice([]float32{0, 4}, []int64{1, 1, 2}, CPU(0))))
	_, err := up.Forward(l)
	if e := wantCode(t, err, ErrShapeMismatch); !strings.Contains(e.Msg, "Upsample(size=(2, 4), mode='bilinear', align_corners=True)") {
		t.Fatalf("bilinear on a 3-d input: %q does not name the module", e.Msg)
	}
	ints := must(s.Track(FromSlice([]int64{0, 3, 6, 9}, []int64{1, 1, 2, 2}, CPU(0))))
	_, err = up.Forward(ints)
	wantCode(t, err, ErrDTypeMismatch)

	// The constructor's.
	_, err = Upsample(InterpolateOptions{Size: []int64{4}, ScaleFactor: []float64{2}})
	wantCode(t, err, ErrInvalidArgument) // both
	_, err = Upsample(InterpolateOptions{Mode: InterpolateBilinear})
	wantCode(t, err, ErrInvalidArgument) // neither
	_, err = Upsample(InterpolateOptions{Size: []int64{1, 2, 3, 4}})
	wantCode(t, err, ErrInvalidArgument) // more than 3 values
	_, err = Upsample(InterpolateOptions{Size: []int64{-1}})
	wantCode(t, err, ErrInvalidArgument)
	_, err = Upsample(InterpolateOptions{ScaleFactor: []float64{2}, AlignCorners: true})
	wantCode(t, err, ErrInvalidArgument) // align corners with nearest
	_, err = Upsample(InterpolateOptions{ScaleFactor: []float64{2}, Mode: InterpolateMode(-1)})
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "InterpolateMode(-1)") {
		t.Fatalf("an unknown mode: %q does not name it", e.Msg)
	}
}

// A tiny classifier learns a separable problem: the loss must fall, gradients must be
// there, and everything is released.
func TestTrainingLowersTheLoss(t *testing.T) {
	noLeaks(t)
	if err := ManualSeed(3); err != nil {
		t.Fatal(err)
	}
	l1 := must(Linear(2, 8, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer l1.Close()
	act := must(ReLU())
	defer act.Close()
	l2 := must(Linear(8, 2, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer l2.Close()
	model := must(Sequential(l1, act, l2))
	defer model.Close()
	loss := must(CrossEntropyLoss(CrossEntropyLossOptions{}))
	defer loss.Close()
	x := must(FromSlice([]float32{-1, -1, -1, 1, 1, -1, 1, 1}, []int64{4, 2}, CPU(0)))
	defer x.Close()
	y := must(FromSlice([]int64{0, 1, 1, 0}, []int64{4}, CPU(0)))
	defer y.Close()
	params := must(model.Parameters())
	names := []string{}
	ts := []*Tensor{}
	for _, p := range params {
		names = append(names, p.Name)
		ts = append(ts, p.Tensor)
		defer p.Tensor.Close()
	}
	if got := strings.Join(names, ","); got != "0.weight,0.bias,2.weight,2.bias" {
		t.Fatalf("parameter names %q", got)
	}
	opt := must(Adam(ts, 0.05))
	defer opt.Close()
	var first, last float64
	for step := 0; step < 200; step++ {
		if err := opt.ZeroGrad(); err != nil {
			t.Fatal(err)
		}
		logits := must(model.Forward(x))
		l := must(loss.Forward(logits, y))
		if step == 0 {
			name := must(l.GradFnName())
			if name == "" {
				t.Fatalf("the loss has no grad_fn")
			}
		}
		if err := l.Backward(nil); err != nil {
			t.Fatal(err)
		}
		v := must(l.Item())
		if step == 0 {
			first = v
		}
		last = v
		if err := opt.Step(); err != nil {
			t.Fatal(err)
		}
		logits.Close()
		l.Close()
	}
	if !(last < 0.1*first) {
		t.Fatalf("loss %.4f -> %.4f: not learning", first, last)
	}
	g := must(ts[0].Grad())
	if g == nil {
		t.Fatal("no gradient on the first weight")
	}
	g.Close()
}

// Module.To moves in place: a parameter taken before the move follows it; the input on
// another device is a DeviceMismatch naming both devices.
func TestModuleToInPlaceAndMismatch(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(3, 2, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer lin.Close()
	params := must(lin.Parameters())
	w := params[0].Tensor
	defer w.Close()
	defer params[1].Tensor.Close()
	if err := lin.To(CPU(1)); err != nil {
		t.Fatal(err)
	}
	if d := must(w.Device()); d != CPU(1) {
		t.Fatalf("the weight handle is on %v after Module.To(cpu:1)", d)
	}
	x := must(Ones([]int64{4, 3}, Float32, CPU(0)))
	defer x.Close()
	_, err := lin.Forward(x)
	if !errors.Is(err, ErrDeviceMismatch) || !strings.Contains(err.Error(), "module parameters are on cpu:1 but the input is on cpu:0") {
		t.Fatalf("got %v", err)
	}
	if err := lin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lin.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := lin.Forward(x); !errors.Is(err, ErrClosed) {
		t.Fatalf("Forward after Close: %v", err)
	}
}

func TestModuleSaveLoadRoundTrip(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "lin.safetensors")
	a := must(Linear(4, 3, LinearOptions{DType: Float64, Device: CPU(0)}))
	defer a.Close()
	b := must(Linear(4, 3, LinearOptions{DType: Float64, Device: CPU(0)}))
	defer b.Close()
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := b.Load(path); err != nil {
		t.Fatal(err)
	}
	pa, pb := must(a.Parameters()), must(b.Parameters())
	for i := range pa {
		va, vb := must(ToSlice[float64](pa[i].Tensor)), must(ToSlice[float64](pb[i].Tensor))
		for j := range va {
			if va[j] != vb[j] {
				t.Fatalf("%s[%d]: %v != %v", pa[i].Name, j, va[j], vb[j])
			}
		}
		pa[i].Tensor.Close()
		pb[i].Tensor.Close()
	}
	os.WriteFile(path, []byte("not a safetensors file"), 0o644)
	if err := b.Load(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("loading a bad file: %v", err)
	}
}

func TestModuleDevice(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(2, 2, LinearOptions{DType: Float32, Device: CPU(1)}))
	defer lin.Close()
	if d := must(lin.Device()); d != CPU(1) {
		t.Errorf("Linear on cpu:1 reports %v", d)
	}
	if err := lin.To(CPU(2)); err != nil {
		t.Fatal(err)
	}
	if d := must(lin.Device()); d != CPU(2) {
		t.Errorf("after To(cpu:2): %v", d)
	}
	act := must(ReLU())
	defer act.Close()
	if d := must(act.Device()); d != CPU(0) {
		t.Errorf("a module without parameters reports %v, want cpu:0", d)
	}
	if err := act.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := act.Device(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Device after Close: %v", err)
	}
}

func TestRequiresGradAndIsLeaf(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2}, nil, CPU(0)))
	defer x.Close()
	if must(x.RequiresGrad()) || !must(x.IsLeaf()) {
		t.Error("a new tensor: want a leaf that does not require grad")
	}
	if err := x.SetRequiresGrad(true); err != nil {
		t.Fatal(err)
	}
	if !must(x.RequiresGrad()) || !must(x.IsLeaf()) {
		t.Error("a marked tensor: want a leaf that requires grad")
	}
	y := must(x.MulScalar(2))
	defer y.Close()
	if !must(y.RequiresGrad()) || must(y.IsLeaf()) {
		t.Error("a recorded result: want a non-leaf that requires grad")
	}
	d := must(y.Detach())
	defer d.Close()
	if must(d.RequiresGrad()) || !must(d.IsLeaf()) {
		t.Error("a detached tensor: want a leaf that does not require grad")
	}
	c := must(Zeros([]int64{1}, Float32, CPU(0)))
	c.Close()
	if _, err := c.RequiresGrad(); !errors.Is(err, ErrClosed) {
		t.Errorf("RequiresGrad after Close: %v", err)
	}
	if _, err := c.IsLeaf(); !errors.Is(err, ErrClosed) {
		t.Errorf("IsLeaf after Close: %v", err)
	}
}

// NoGrad stops recording in its own goroutine only: another goroutine running at the
// same time still records, and after NoGrad the goroutine records again.
func TestNoGradIsThisGoroutinesAlone(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2}, nil, CPU(0)))
	defer x.Close()
	if err := x.SetRequiresGrad(true); err != nil {
		t.Fatal(err)
	}
	records := func() (bool, error) {
		y, err := x.MulScalar(2)
		if err != nil {
			return false, err
		}
		defer y.Close()
		return y.RequiresGrad()
	}
	const rounds = 500
	start := make(chan struct{})
	otherDone := make(chan error, 1)
	go func() { // not in NoGrad: must record throughout
		<-start
		for i := 0; i < rounds; i++ {
			if on, err := records(); err != nil || !on {
				otherDone <- fmt.Errorf("round %d: another goroutine's result requires grad = %v (%v)", i, on, err)
				return
			}
			if on, err := GradEnabled(); err != nil || !on {
				otherDone <- fmt.Errorf("round %d: GradEnabled = %v (%v) in another goroutine", i, on, err)
				return
			}
		}
		otherDone <- nil
	}()
	err := NoGrad(func() error {
		close(start)
		for i := 0; i < rounds; i++ {
			if on, err := records(); err != nil || on {
				return fmt.Errorf("round %d: inside NoGrad the result requires grad = %v (%v)", i, on, err)
			}
			if on := must(GradEnabled()); on {
				return fmt.Errorf("round %d: GradEnabled inside NoGrad", i)
			}
			runtime.Gosched() // give the goroutine every chance to move (it must not)
		}
		return <-otherDone
	})
	if err != nil {
		t.Fatal(err)
	}
	if !must(records()) || !must(GradEnabled()) {
		t.Fatal("after NoGrad the goroutine does not record")
	}
}

// NoGrad returns f's error, nests, and restores the thread's mode when f panics.
func TestNoGradErrorsNestingAndPanic(t *testing.T) {
	noLeaks(t)
	sentinel := errors.New("from f")
	if err := NoGrad(func() error { return sentinel }); err != sentinel {
		t.Fatalf("NoGrad returned %v, want f's error", err)
	}
	err := NoGrad(func() error {
		if err := NoGrad(func() error { return nil }); err != nil {
			return err
		}
		if must(GradEnabled()) {
			return errors.New("the inner NoGrad turned grad mode back on")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Stay on one thread, so what the panic left behind on it is what GradEnabled sees.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v", r)
			}
		}()
		_ = NoGrad(func() error { panic("boom") })
	}()
	if !must(GradEnabled()) {
		t.Fatal("a panic in f left grad mode off on the thread")
	}
	// The process-wide switch is what a goroutine outside NoGrad follows.
	if err := SetGradEnabled(false); err != nil {
		t.Fatal(err)
	}
	off := must(GradEnabled())
	if err := SetGradEnabled(true); err != nil {
		t.Fatal(err)
	}
	if off || !must(GradEnabled()) {
		t.Fatal("GradEnabled does not follow SetGradEnabled")
	}
}

// The loss options: the zero value is PyTorch's defaults (reduction "mean", ignore_index
// -100, no weight, no smoothing), and each field changes what PyTorch's keyword does.
// Hand-computed values: equal logits over 2 classes cost ln 2 per sample.
func TestLossOptions(t *testing.T) {
	noLeaks(t)
	ln2 := math.Log(2)
	s := NewScope()
	defer s.Close()
	zeros := must(s.Track(Zeros([]int64{3, 2}, Float32, CPU(0))))
	y := must(s.Track(FromSlice([]int64{0, 1, 0}, []int64{3}, CPU(0))))
	loss := func(m *Module, err error) func(x, y *Tensor) float64 {
		t.Helper()
		m = must(m, err)
		t.Cleanup(func() { m.Close() })
		return func(x, y *Tensor) float64 {
			t.Helper()
			return must(must(s.Track(m.Forward(x, y))).Item())
		}
	}
	zero := int64(0)
	one := int64(1)
	ignored := must(s.Track(FromSlice([]int64{0, -100, 1}, []int64{3}, CPU(0))))
	weight := must(s.Track(FromSlice([]float32{1, 3}, []int64{2}, CPU(0))))
	// logits [0, ln 3]: p = [1/4, 3/4]; label smoothing 0.5 on target 0:
	// 0.5 * -ln(1/4) + 0.5 * (-ln(1/4) - ln(3/4)) / 2
	skew := must(s.Track(FromSlice([]float32{0, float32(math.Log(3))}, []int64{1, 2}, CPU(0))))
	y0 := must(s.Track(FromSlice([]int64{0}, []int64{1}, CPU(0))))
	smoothed := 0.5*math.Log(4) + 0.25*(math.Log(4)+math.Log(4.0/3))
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"CrossEntropyLoss{}", loss(CrossEntropyLoss(CrossEntropyLossOptions{}))(zeros, y), ln2},
		{"Reduction: Sum", loss(CrossEntropyLoss(CrossEntropyLossOptions{Reduction: ReductionSum}))(zeros, y), 3 * ln2},
		{"default IgnoreIndex -100", loss(CrossEntropyLoss(CrossEntropyLossOptions{Reduction: ReductionSum}))(zeros, ignored), 2 * ln2},
		{"IgnoreIndex: &0", loss(CrossEntropyLoss(CrossEntropyLossOptions{Reduction: ReductionSum, IgnoreIndex: &zero}))(zeros, y), ln2},
		{"Weight [1, 3], sum", loss(CrossEntropyLoss(CrossEntropyLossOptions{Weight: weight, Reduction: ReductionSum}))(zeros, y), 5 * ln2},
		{"LabelSmoothing 0.5", loss(CrossEntropyLoss(CrossEntropyLossOptions{LabelSmoothing: 0.5}))(skew, y0), smoothed},
	} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	none := must(CrossEntropyLoss(CrossEntropyLossOptions{Reduction: ReductionNone}))
	defer none.Close()
	per := must(ToSlice[float32](must(s.Track(none.Forward(zeros, y)))))
	if len(per) != 3 || math.Abs(float64(per[2])-ln2) > 1e-6 {
		t.Errorf("ReductionNone: %v, want [ln 2] * 3", per)
	}

	// NLLLoss over log-probabilities [[-1, -2], [-3, -4]] and targets [1, 0]: 2 and 3.
	logp := must(s.Track(FromSlice([]float32{-1, -2, -3, -4}, []int64{2, 2}, CPU(0))))
	t10 := must(s.Track(FromSlice([]int64{1, 0}, []int64{2}, CPU(0))))
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"NLLLoss{}", loss(NLLLoss(NLLLossOptions{}))(logp, t10), 2.5},
		{"Reduction: Sum", loss(NLLLoss(NLLLossOptions{Reduction: ReductionSum}))(logp, t10), 5},
		{"IgnoreIndex: &1", loss(NLLLoss(NLLLossOptions{Reduction: ReductionSum, IgnoreIndex: &one}))(logp, t10), 3},
		{"Weight [1, 3], mean", loss(NLLLoss(NLLLossOptions{Weight: weight}))(logp, t10), 9.0 / 4},
	} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}

	// Errors: an unknown Reduction is the library's ErrInvalidArgument; a closed Weight
	// is ErrClosed; nothing is made.
	if _, err := CrossEntropyLoss(CrossEntropyLossOptions{Reduction: Reduction(7)}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Reduction(7): %v, want ErrInvalidArgument", err)
	}
	if _, err := NLLLoss(NLLLossOptions{Reduction: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NLLLoss Reduction(-1): %v, want ErrInvalidArgument", err)
	}
	if _, err := MSELoss(Reduction(3)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("MSELoss(Reduction(3)): %v, want ErrInvalidArgument", err)
	}
	closed := must(FromSlice([]float32{1, 1}, []int64{2}, CPU(0)))
	closed.Close()
	if _, err := CrossEntropyLoss(CrossEntropyLossOptions{Weight: closed}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed Weight: %v, want ErrClosed", err)
	}
	if _, err := NLLLoss(NLLLossOptions{Weight: closed}); !errors.Is(err, ErrClosed) {
		t.Errorf("NLLLoss closed Weight: %v, want ErrClosed", err)
	}

	// MSELoss: the zero Reduction is the mean, as PyTorch's MSELoss().
	a := must(s.Track(FromSlice([]float32{1, 2}, []int64{2}, CPU(0))))
	b := must(s.Track(FromSlice([]float32{2, 4}, []int64{2}, CPU(0))))
	if got := loss(MSELoss(0))(a, b); math.Abs(got-2.5) > 1e-6 {
		t.Errorf("MSELoss(0): %v, want the mean (1 + 4) / 2 = 2.5", got)
	}
	if got := loss(MSELoss(ReductionSum))(a, b); math.Abs(got-5) > 1e-6 {
		t.Errorf("MSELoss(ReductionSum): %v, want 5", got)
	}
}

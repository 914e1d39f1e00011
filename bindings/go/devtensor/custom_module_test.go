package devtensor

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// childForward runs self's child name on x.
func childForward(self *Module, name string, x *Tensor) (*Tensor, error) {
	c, err := self.Child(name)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Forward(x)
}

// basicBlockForward is torchvision's BasicBlock with a learnt scale on the residual
// branch: relu(bn2(conv2(relu(bn1(conv1(x))))) * scale + x).
func basicBlockForward(self *Module, in []*Tensor) (*Tensor, error) {
	s := NewScope()
	defer s.Close()
	x := in[0]
	h := x
	for _, name := range []string{"conv1", "bn1", "", "conv2", "bn2"} {
		var err error
		if name == "" {
			h, err = s.Track(h.ReLU())
		} else {
			h, err = s.Track(childForward(self, name, h))
		}
		if err != nil {
			return nil, err
		}
	}
	scale, err := s.Track(self.GetParameter("scale"))
	if err != nil {
		return nil, err
	}
	if h, err = s.Track(h.Mul(scale)); err != nil {
		return nil, err
	}
	if h, err = s.Track(h.Add(x)); err != nil {
		return nil, err
	}
	return h.ReLU() // not tracked: the module takes it over
}

// newBasicBlock makes a BasicBlock of c channels on cpu:0, float32, with its own
// parameter "scale" (1.5) and int64 buffer "steps" (7).
func newBasicBlock(t *testing.T, c int64) *Module {
	t.Helper()
	conv := func() *Module {
		return must(Conv2d(c, c, [2]int64{3, 3}, Conv2dOptions{Padding: [2]int64{1, 1}, NoBias: true, DType: Float32, Device: CPU(0)}))
	}
	bn := func() *Module { return must(BatchNorm2d(c, BatchNormOptions{DType: Float32, Device: CPU(0)})) }
	scale := must(FromSlice([]float32{1.5}, []int64{1}, CPU(0)))
	defer scale.Close()
	steps := must(FromSlice([]int64{7}, []int64{}, CPU(0)))
	defer steps.Close()
	return must(NewModule("BasicBlock", ModuleSpec{
		Children:   NamedModules{{"conv1", conv()}, {"bn1", bn()}, {"conv2", conv()}, {"bn2", bn()}},
		Parameters: NamedTensors{{"scale", scale}},
		Buffers:    NamedTensors{{"steps", steps}},
	}, basicBlockForward))
}

// byHand is the BasicBlock's forward computed outside it, on its children (taken with
// Child) and its scale; it also returns the residual branch before the scale.
func byHand(t *testing.T, block *Module, x *Tensor) (out, branch []float32) {
	t.Helper()
	s := NewScope()
	defer s.Close()
	h := x
	for _, name := range []string{"conv1", "bn1", "", "conv2", "bn2"} {
		if name == "" {
			h = must(s.Track(h.ReLU()))
			continue
		}
		c := must(block.Child(name))
		h = must(s.Track(c.Forward(h)))
		MustOK(c.Close())
	}
	scale := must(s.Track(block.GetParameter("scale")))
	y := must(s.Track(h.Mul(scale)))
	y = must(s.Track(y.Add(x)))
	y = must(s.Track(y.ReLU()))
	return must(ToSlice[float32](y)), must(ToSlice[float32](h))
}

func closeSlices(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > tol {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func sortedNames(t *testing.T, ns NamedTensors) []string {
	t.Helper()
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}

// A ResNet BasicBlock as a module of the caller's: its output is its children's ops
// called by hand; its parameters, buffers and state dict are PyTorch's names; Backward
// reaches every parameter (the scale's gradient checked against its formula); Train and
// Eval reach the children; it runs inside a Sequential and inside another custom
// module (re-entrantly), and from several goroutines at once.
func TestCustomModuleBasicBlock(t *testing.T) {
	noLeaks(t)
	errs := releaseErrors()
	before := atomic.LoadInt64(&liveModuleForwards)
	MustOK(ManualSeed(11))
	block := newBasicBlock(t, 3)
	defer block.Close()
	if k := must(block.Kind()); k != "BasicBlock" {
		t.Errorf("Kind %q, want BasicBlock", k)
	}
	kids := must(block.Children())
	var kidNames []string
	for _, k := range kids {
		kidNames = append(kidNames, k.Name+":"+must(k.Module.Kind()))
	}
	MustOK(kids.Close())
	if got := strings.Join(kidNames, " "); got != "conv1:Conv2d bn1:BatchNorm2d conv2:Conv2d bn2:BatchNorm2d" {
		t.Errorf("children %s", got)
	}

	params := must(block.Parameters())
	defer params.Close()
	wantParams := []string{"bn1.bias", "bn1.weight", "bn2.bias", "bn2.weight", "conv1.weight", "conv2.weight", "scale"}
	if got := sortedNames(t, params); fmt.Sprint(got) != fmt.Sprint(wantParams) {
		t.Errorf("parameters %v, want %v", got, wantParams)
	}
	bufs := must(block.Buffers())
	wantBufs := []string{"bn1.num_batches_tracked", "bn1.running_mean", "bn1.running_var",
		"bn2.num_batches_tracked", "bn2.running_mean", "bn2.running_var", "steps"}
	if got := sortedNames(t, bufs); fmt.Sprint(got) != fmt.Sprint(wantBufs) {
		t.Errorf("buffers %v, want %v", got, wantBufs)
	}
	MustOK(bufs.Close())
	sd := must(block.StateDict())
	names := must(sd.Names())
	sort.Strings(names)
	wantSD := append(append([]string(nil), wantParams...), wantBufs...)
	sort.Strings(wantSD)
	if fmt.Sprint(names) != fmt.Sprint(wantSD) {
		t.Errorf("state dict %v, want %v", names, wantSD)
	}
	steps := must(sd.Get("steps"))
	if dt := must(steps.DType()); dt != Int64 {
		t.Errorf("steps is %v, want int64", dt)
	}
	if v := must(steps.Item()); v != 7 {
		t.Errorf("steps %v, want 7", v)
	}
	MustOK(steps.Close())
	MustOK(sd.Close())
	for _, p := range params {
		if !must(p.Tensor.RequiresGrad()) {
			t.Errorf("%s does not require grad", p.Name)
		}
	}

	// Forward against the same ops by hand, in training mode (batch statistics).
	x := must(Randn([]int64{2, 3, 4, 4}, Float32, CPU(0)))
	defer x.Close()
	y := must(block.Forward(x))
	want, branch := byHand(t, block, x)
	closeSlices(t, "forward", must(ToSlice[float32](y)), want, 1e-5)
	if sh := fmt.Sprint(must(y.Shape())); sh != "[2 3 4 4]" {
		t.Errorf("output shape %s", sh)
	}

	// Backward: every parameter gets a gradient; d sum(relu(b*s + x)) / ds is the sum
	// of b where b*s + x > 0.
	loss := must(y.Sum())
	MustOK(loss.Backward(nil))
	closeAll(t, loss, y)
	for _, p := range params {
		g := must(p.Tensor.Grad())
		if g == nil {
			t.Fatalf("%s has no gradient", p.Name)
		}
		vals := must(ToSlice[float32](g))
		nonzero := false
		for _, v := range vals {
			nonzero = nonzero || v != 0
		}
		if !nonzero {
			t.Errorf("%s's gradient is zero", p.Name)
		}
		if p.Name == "scale" {
			xs := must(ToSlice[float32](x))
			var ds float64
			for i, b := range branch {
				if b*1.5+xs[i] > 0 {
					ds += float64(b)
				}
			}
			if math.Abs(float64(vals[0])-ds) > 1e-3*math.Max(1, math.Abs(ds)) {
				t.Errorf("scale's gradient %v, want %v", vals[0], ds)
			}
		}
		MustOK(g.Close())
		MustOK(p.Tensor.ClearGrad())
	}

	// Train and Eval reach the children: in evaluation a forward leaves bn1's running
	// statistics alone, in training it updates them.
	runningMean := must(block.GetBuffer("bn1.running_mean"))
	defer runningMean.Close()
	tracked := must(block.GetBuffer("bn1.num_batches_tracked"))
	defer tracked.Close()
	forward := func() {
		t.Helper()
		out := must(block.Forward(x))
		MustOK(out.Close())
	}
	MustOK(block.Eval())
	m0, n0 := must(ToSlice[float32](runningMean)), must(tracked.Item())
	forward()
	if m1, n1 := must(ToSlice[float32](runningMean)), must(tracked.Item()); fmt.Sprint(m1) != fmt.Sprint(m0) || n1 != n0 {
		t.Errorf("a forward in eval mode changed bn1: running_mean %v -> %v, num_batches_tracked %v -> %v", m0, m1, n0, n1)
	}
	evalOut := must(block.Forward(x))
	evalWant, _ := byHand(t, block, x) // the children are in eval mode too
	closeSlices(t, "forward in eval mode", must(ToSlice[float32](evalOut)), evalWant, 1e-5)
	MustOK(block.Train())
	forward()
	if n := must(tracked.Item()); n != n0+1 {
		t.Errorf("a forward in training mode left num_batches_tracked at %v, want %v", n, n0+1)
	}
	MustOK(evalOut.Close())
	MustOK(block.Eval())

	// From several goroutines at once: each gets the same output.
	refOut := must(block.Forward(x))
	ref := must(ToSlice[float32](refOut))
	MustOK(refOut.Close())
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				out, err := block.Forward(x)
				if err != nil {
					t.Error(err)
					return
				}
				got := must(ToSlice[float32](out))
				MustOK(out.Close())
				for j := range ref {
					if got[j] != ref[j] {
						t.Errorf("concurrent forward [%d] = %v, want %v", j, got[j], ref[j])
						return
					}
				}
			}
		}()
	}
	wg.Wait()

	// Inside another custom module (its forward runs the block's: re-entrant).
	// Outer takes the block over, as Sequential does below: closing either closes the
	// block's *Module, while the C modules hold references of their own.
	outer := must(NewModule("Outer", ModuleSpec{Children: NamedModules{{"block", block}}},
		func(self *Module, in []*Tensor) (*Tensor, error) {
			y, err := childForward(self, "block", in[0])
			if err != nil {
				return nil, err
			}
			defer y.Close()
			return y.MulScalar(2)
		}))
	defer outer.Close()
	MustOK(outer.Eval())
	oy := must(outer.Forward(x))
	got := must(ToSlice[float32](oy))
	MustOK(oy.Close())
	for i := range ref {
		ref[i] *= 2
	}
	closeSlices(t, "outer forward", got, ref, 1e-5)
	oparams := must(outer.Parameters())
	if n := sortedNames(t, oparams); len(n) != 7 || n[0] != "block.bn1.bias" || n[6] != "block.scale" {
		t.Errorf("outer's parameters %v", n)
	}
	MustOK(oparams.Close())

	// In a Sequential, which takes the block over (closing the block again is harmless).
	relu := must(ReLU())
	seq := must(Sequential(block, relu))
	defer seq.Close()
	sy := must(seq.Forward(x))
	by := must(block.Forward(x))
	closeSlices(t, "Sequential", must(ToSlice[float32](sy)), must(ToSlice[float32](by)), 0)
	closeAll(t, sy, by)
	sp := must(seq.StateDict())
	if rv, err := sp.Get("0.bn2.running_var"); err != nil {
		t.Errorf("Sequential's state dict: %v", err)
	} else {
		closeAll(t, rv)
	}
	MustOK(sp.Close())
	MustOK(seq.Close())
	MustOK(outer.Close())
	MustOK(block.Close())
	MustOK(params.Close())
	if n := atomic.LoadInt64(&liveModuleForwards); n != before {
		t.Errorf("%d forward functions held after Close, want %d", n, before)
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Errorf("%d release errors", n)
	}
}

// GetParameter and GetBuffer return the module's own tensors (writes through them are
// the state dict's), reach nested paths, and name what is missing.
func TestCustomModuleGetParameterAndBuffer(t *testing.T) {
	noLeaks(t)
	block := newBasicBlock(t, 3)
	defer block.Close()
	w := must(block.GetParameter("bn1.weight"))
	defer w.Close()
	sd := must(block.StateDict())
	defer sd.Close()
	sw := must(sd.Get("bn1.weight"))
	defer sw.Close()
	if !must(w.SharesStorage(sw)) {
		t.Error("GetParameter(bn1.weight) does not share the state dict's tensor")
	}
	MustOK(CopyFromSlice(w, []float32{2, 3, 4}))
	if got := must(ToSlice[float32](sw)); fmt.Sprint(got) != "[2 3 4]" {
		t.Errorf("the state dict's bn1.weight is %v after a write through GetParameter, want [2 3 4]", got)
	}
	bn1 := must(block.Child("bn1"))
	bw := must(bn1.GetParameter("weight"))
	if got := must(ToSlice[float32](bw)); fmt.Sprint(got) != "[2 3 4]" {
		t.Errorf("bn1's own weight is %v, want [2 3 4]", got)
	}
	closeAll(t, bw)
	MustOK(bn1.Close())

	scale := must(block.GetParameter("scale"))
	if v := must(scale.Item()); v != 1.5 {
		t.Errorf("scale %v, want 1.5", v)
	}
	if !must(scale.RequiresGrad()) {
		t.Error("scale does not require grad")
	}
	closeAll(t, scale)
	steps := must(block.GetBuffer("steps"))
	MustOK(steps.AddScalarInPlace(1))
	closeAll(t, steps)
	steps = must(sd.Get("steps"))
	if v := must(steps.Item()); v != 8 {
		t.Errorf("steps %v after an increment through GetBuffer, want 8", v)
	}
	closeAll(t, steps)
	rv := must(block.GetBuffer("bn2.running_var"))
	if got := must(ToSlice[float32](rv)); fmt.Sprint(got) != "[1 1 1]" {
		t.Errorf("bn2.running_var %v, want [1 1 1]", got)
	}
	closeAll(t, rv)

	for _, c := range []struct {
		param bool
		path  string
		want  []string
	}{
		{false, "bn1.nope", []string{`"bn1.nope"`, "running_mean", "BatchNorm2d"}},
		{false, "bn3.running_mean", []string{`"bn3"`}},
		{false, "scale", []string{`"scale"`, "steps"}}, // a parameter, not a buffer
		{true, "steps", []string{`"steps"`, "scale"}},  // a buffer, not a parameter
		{true, "conv1.bias", []string{`"conv1.bias"`, "weight"}},
		{true, "conv1.weight.x", []string{"weight"}},
	} {
		var err error
		if c.param {
			_, err = block.GetParameter(c.path)
		} else {
			_, err = block.GetBuffer(c.path)
		}
		e := wantCode(t, err, ErrInvalidArgument)
		for _, w := range c.want {
			if !strings.Contains(e.Msg, w) {
				t.Errorf("%q: message %q does not say %s", c.path, e.Msg, w)
			}
		}
	}
	_, err := block.GetBuffer("a\x00b")
	wantCode(t, err, ErrInvalidArgument)
	var nilModule *Module
	_, err = nilModule.GetParameter("weight")
	wantCode(t, err, ErrInvalidArgument)
	// Every module answers, not only custom ones.
	lin := must(Linear(2, 3, LinearOptions{}))
	lb := must(lin.GetParameter("bias"))
	if sh := fmt.Sprint(must(lb.Shape())); sh != "[3]" {
		t.Errorf("Linear's bias has shape %s", sh)
	}
	closeAll(t, lb)
	MustOK(lin.Close())
	_, err = lin.GetParameter("bias")
	wantCode(t, err, ErrClosed)
}

// A forward function's failures: its own error (the message quotes it and names the
// kind), a devtensor error from a child (its code kept), a panic (recovered, its text
// reported; an error value keeps its code), no output, a closed output, the wrong number
// of inputs. Nothing leaks, and the module works again afterwards.
func TestCustomModuleForwardErrors(t *testing.T) {
	noLeaks(t)
	errs := releaseErrors()
	block := newBasicBlock(t, 3)
	defer block.Close()
	x4 := must(Randn([]int64{1, 4, 5, 5}, Float32, CPU(0))) // 4 channels: conv1 takes 3
	defer x4.Close()
	_, err := block.Forward(x4)
	e := wantCode(t, err, ErrShapeMismatch)
	if !strings.Contains(e.Msg, "BasicBlock") {
		t.Errorf("a child's failure: %q does not name BasicBlock", e.Msg)
	}

	var mode atomic.Value
	m := must(NewModule("Failing", ModuleSpec{}, func(self *Module, in []*Tensor) (*Tensor, error) {
		switch mode.Load().(string) {
		case "error":
			return nil, errors.New("boom")
		case "wrapped":
			_, err := in[0].Add(x4) // [2] + [1, 4, 5, 5]: shape mismatch
			return nil, fmt.Errorf("adding: %w", err)
		case "code":
			return nil, ErrNotSupported
		case "panic":
			panic("kaboom")
		case "panic error":
			return Must(in[0].Add(x4)), nil
		case "nil":
			return nil, nil
		case "closed":
			y := must(in[0].MulScalar(2))
			MustOK(y.Close())
			return y, nil
		}
		return in[0].MulScalar(2)
	}))
	defer m.Close()
	x := must(FromSlice([]float32{1, 2}, []int64{2}, CPU(0)))
	defer x.Close()
	for _, c := range []struct {
		mode string
		code Code
		want string
	}{
		{"error", ErrInvalidArgument, "boom"},
		{"wrapped", ErrShapeMismatch, "adding: devtensor: Tensor.Add"},
		{"code", ErrNotSupported, "not supported"},
		{"panic", ErrInvalidArgument, "the forward function panicked: kaboom"},
		{"panic error", ErrShapeMismatch, "the forward function panicked: devtensor: Tensor.Add"},
		{"nil", ErrInvalidArgument, "no output"},
		{"closed", ErrInvalidArgument, "returned a closed Tensor"},
	} {
		mode.Store(c.mode)
		y, err := m.Forward(x)
		if y != nil {
			t.Errorf("%s: Forward returned a tensor with its error", c.mode)
		}
		e := wantCode(t, err, c.code)
		if !strings.Contains(e.Msg, c.want) || !strings.Contains(e.Msg, "Failing") || e.Op != "Module.Forward" {
			t.Errorf("%s: %v, want the message to name Failing and say %q", c.mode, err, c.want)
		}
	}
	mode.Store("ok")
	y := must(m.Forward(x))
	if got := must(ToSlice[float32](y)); fmt.Sprint(got) != "[2 4]" {
		t.Errorf("after the failures: %v, want [2 4]", got)
	}
	closeAll(t, y)
	// The error message of a later failure is its own, and a success leaves the thread's
	// last message as it was.
	_, err = m.Forward(x, x)
	e = wantCode(t, err, ErrInvalidArgument)
	if strings.Contains(e.Msg, "boom") || strings.Contains(e.Msg, "panicked") {
		t.Errorf("wrong input count: %q repeats an earlier failure", e.Msg)
	}
	_, err = m.Forward()
	wantCode(t, err, ErrInvalidArgument)
	if n := releaseErrors() - errs; n != 0 {
		t.Errorf("%d release errors", n)
	}
}

// self and the inputs are the function's for the call only (closed after, whatever the
// function did with them); an input may be returned; inputs between MinInputs and
// MaxInputs, and no nil one.
func TestCustomModuleCallLifetime(t *testing.T) {
	noLeaks(t)
	errs := releaseErrors()
	var kept []*Tensor
	var keptSelf *Module
	var counts []int
	var mu sync.Mutex
	m := must(NewModule("Pick", ModuleSpec{MinInputs: 1, MaxInputs: 3}, func(self *Module, in []*Tensor) (*Tensor, error) {
		mu.Lock()
		defer mu.Unlock()
		kept = append(kept, in...)
		keptSelf = self
		counts = append(counts, len(in))
		if k, err := self.Kind(); err != nil || k != "Pick" {
			return nil, fmt.Errorf("self.Kind() = %q, %v", k, err)
		}
		switch len(in) {
		case 1:
			return in[0], nil // an input, handed back
		case 2:
			MustOK(in[0].Close()) // closing an input or self is harmless
			MustOK(self.Close())
			return in[1].Add(in[1])
		}
		return in[0].Add(in[2])
	}))
	defer m.Close()
	a := must(FromSlice([]float32{1, 2}, []int64{2}, CPU(0)))
	defer a.Close()
	b := must(FromSlice([]float32{10, 20}, []int64{2}, CPU(0)))
	defer b.Close()
	y := must(m.Forward(a))
	if !must(y.SharesStorage(a)) {
		t.Error("returning the input gave another tensor")
	}
	closeAll(t, y)
	y = must(m.Forward(a, b))
	if got := must(ToSlice[float32](y)); fmt.Sprint(got) != "[20 40]" {
		t.Errorf("two inputs: %v", got)
	}
	closeAll(t, y)
	if got := must(ToSlice[float32](a)); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("the caller's input after the function closed its own: %v", got)
	}
	y = must(m.Forward(a, b, b))
	if got := must(ToSlice[float32](y)); fmt.Sprint(got) != "[11 22]" {
		t.Errorf("three inputs: %v", got)
	}
	closeAll(t, y)
	// Inputs past MinInputs may be nil (PyTorch's None): the function sees nil there.
	y = must(m.ForwardOptional(a, nil, b))
	if got := must(ToSlice[float32](y)); fmt.Sprint(got) != "[11 22]" {
		t.Errorf("three inputs, the second nil: %v", got)
	}
	closeAll(t, y)
	// The first (required, MinInputs 1) may not be: refused before the function runs.
	_, err := m.ForwardOptional(nil, a)
	wantCode(t, err, ErrInvalidArgument)
	_, err = m.Forward(a, b, a, b)
	wantCode(t, err, ErrInvalidArgument)
	for i, k := range kept {
		if k == nil {
			continue
		}
		if _, err := k.Shape(); !errors.Is(err, ErrClosed) {
			t.Errorf("input %d kept past its call: Shape gives %v, want ErrClosed", i, err)
		}
	}
	if _, err := keptSelf.Kind(); !errors.Is(err, ErrClosed) {
		t.Errorf("self kept past its call: Kind gives %v, want ErrClosed", err)
	}
	if fmt.Sprint(counts) != "[1 2 3 3]" {
		t.Errorf("the function saw %v inputs, want [1 2 3 3]", counts)
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Errorf("%d release errors", n)
	}
}

// Bad specs fail before anything is made, take nothing (the children stay the caller's)
// and hold no function.
func TestCustomModuleSpecErrors(t *testing.T) {
	noLeaks(t)
	before := atomic.LoadInt64(&liveModuleForwards)
	lin := must(Linear(2, 2, LinearOptions{}))
	defer lin.Close()
	f32 := must(Zeros([]int64{2}, Float32, CPU(0)))
	defer f32.Close()
	i64 := must(Zeros([]int64{2}, Int64, CPU(0)))
	defer i64.Close()
	closedT := must(Zeros([]int64{2}, Float32, CPU(0)))
	MustOK(closedT.Close())
	closedM := must(ReLU())
	MustOK(closedM.Close())
	id := func(self *Module, in []*Tensor) (*Tensor, error) { return in[0], nil }
	for _, c := range []struct {
		name string
		kind string
		spec ModuleSpec
		fn   ForwardFunc
		code Code
		want string
	}{
		{"empty kind", "", ModuleSpec{}, id, ErrInvalidArgument, "kind is empty"},
		{"NUL in kind", "A\x00B", ModuleSpec{}, id, ErrInvalidArgument, "NUL"},
		{"nil forward", "M", ModuleSpec{}, nil, ErrInvalidArgument, "forward is nil"},
		{"dotted child", "M", ModuleSpec{Children: NamedModules{{"a.b", lin}}}, id, ErrInvalidArgument, `"a.b"`},
		{"empty name", "M", ModuleSpec{Parameters: NamedTensors{{"", f32}}}, id, ErrInvalidArgument, `name ""`},
		{"NUL in name", "M", ModuleSpec{Buffers: NamedTensors{{"a\x00", f32}}}, id, ErrInvalidArgument, "NUL"},
		{"twice", "M", ModuleSpec{Children: NamedModules{{"w", lin}}, Parameters: NamedTensors{{"w", f32}}}, id,
			ErrInvalidArgument, `"w" names both a child and a parameter`},
		{"int parameter", "M", ModuleSpec{Parameters: NamedTensors{{"n", i64}}}, id, ErrDTypeMismatch, `"n"`},
		{"nil child", "M", ModuleSpec{Children: NamedModules{{"c", nil}}}, id, ErrInvalidArgument, `child "c"`},
		{"closed child", "M", ModuleSpec{Children: NamedModules{{"c", closedM}}}, id, ErrClosed, `child "c"`},
		{"closed buffer", "M", ModuleSpec{Buffers: NamedTensors{{"b", closedT}}}, id, ErrClosed, `buffer "b"`},
		{"min over max", "M", ModuleSpec{MinInputs: 3, MaxInputs: 2}, id, ErrInvalidArgument, "min_inputs"},
		{"max over 16", "M", ModuleSpec{MaxInputs: 17}, id, ErrInvalidArgument, "16"},
		{"negative", "M", ModuleSpec{MinInputs: -1, MaxInputs: 1}, id, ErrInvalidArgument, "negative"},
	} {
		m, err := NewModule(c.kind, c.spec, c.fn)
		if m != nil {
			t.Errorf("%s: a module with the error", c.name)
		}
		e := wantCode(t, err, c.code)
		if !strings.Contains(e.Msg, c.want) || e.Op != "NewModule" {
			t.Errorf("%s: %v, want NewModule saying %q", c.name, err, c.want)
		}
		if n := atomic.LoadInt64(&liveModuleForwards); n != before {
			t.Errorf("%s: %d forward functions held, want %d", c.name, n, before)
		}
	}
	// The children were not taken: lin still works after the failures.
	x := must(Ones([]int64{1, 2}, Float32, DefaultDevice))
	defer x.Close()
	y := must(lin.Forward(x))
	closeAll(t, y)
}

// The function is let go when the module is closed, or, under DataParallel, when the
// wrapper (holding the replicas) is closed too; and when the module is finalized.
func TestCustomModuleFunctionReleased(t *testing.T) {
	noLeaks(t)
	before := atomic.LoadInt64(&liveModuleForwards)
	held := func() int64 { return atomic.LoadInt64(&liveModuleForwards) - before }
	block := newBasicBlock(t, 2)
	if n := held(); n != 1 {
		t.Fatalf("%d functions held after NewModule, want 1", n)
	}
	MustOK(block.Close())
	if n := held(); n != 0 {
		t.Fatalf("%d functions held after Close, want 0", n)
	}

	block = newBasicBlock(t, 2)
	dp := must(DataParallel(block, []Device{CPU(0), CPU(1)}, DefaultDevice))
	x := must(Randn([]int64{4, 2, 3, 3}, Float32, CPU(0)))
	y := must(dp.Forward(x)) // makes the replica
	closeAll(t, x, y)
	MustOK(block.Close())
	if n := held(); n != 1 {
		t.Errorf("%d functions held with the DataParallel open, want 1", n)
	}
	MustOK(dp.Close())
	if n := held(); n != 0 {
		t.Errorf("%d functions held after the DataParallel's Close, want 0", n)
	}

	// A forgotten module: its finalizer releases it, and the function with it (its
	// children's *Modules, which it kept reachable, follow in a later cycle).
	live := LiveHandles()
	func() { newBasicBlock(t, 2) }()
	for i := 0; i < 100 && (held() != 0 || LiveHandles() != live); i++ {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if n := held(); n != 0 {
		t.Errorf("%d functions held after the forgotten module's finalizer, want 0", n)
	}
}

// DataParallel over cpu:0 and cpu:1 runs the function on a replica per device (self is
// the replica: its children and parameters live there) and gives the plain module's
// output and gradients.
func TestCustomModuleDataParallel(t *testing.T) {
	noLeaks(t)
	MustOK(ManualSeed(5))
	block := newBasicBlock(t, 3)
	defer block.Close()
	MustOK(block.Eval()) // running statistics: the same on every replica
	params := must(block.Parameters())
	defer params.Close()
	var devices sync.Map
	dp := must(DataParallel(block, []Device{CPU(0), CPU(1)}, DefaultDevice))
	defer dp.Close()
	for _, rows := range []int64{4, 3} {
		x := must(Randn([]int64{rows, 3, 4, 4}, Float32, CPU(0)))
		MustOK(x.SetRequiresGrad(true))
		c := must(Randn([]int64{rows, 3, 4, 4}, Float32, CPU(0)))
		out, gx, gp, _ := dpRun(t, block, params, x, c)
		dout, dgx, dgp, dev := dpRun(t, dp, params, x, c)
		if dev != CPU(0) {
			t.Errorf("output on %v, want cpu:0", dev)
		}
		dpClose(t, out, dout, "output")
		dpClose(t, gx, dgx, "input grad")
		for i := range gp {
			dpClose(t, gp[i], dgp[i], params[i].Name+" grad")
		}
		closeAll(t, x, c)
	}
	// The replica's self is on cpu:1.
	one := must(Ones([]int64{1}, Float32, CPU(0)))
	defer one.Close()
	probe := must(NewModule("Probe", ModuleSpec{Parameters: NamedTensors{{"w", one}}},
		func(self *Module, in []*Tensor) (*Tensor, error) {
			w, err := self.GetParameter("w")
			if err != nil {
				return nil, err
			}
			defer w.Close()
			d, err := w.Device()
			if err != nil {
				return nil, err
			}
			devices.Store(d, true)
			return in[0].Mul(w)
		}))
	defer probe.Close()
	pdp := must(DataParallel(probe, []Device{CPU(0), CPU(1)}, DefaultDevice))
	defer pdp.Close()
	x := must(Ones([]int64{4, 2}, Float32, CPU(0)))
	defer x.Close()
	y := must(pdp.Forward(x))
	closeAll(t, y)
	for _, d := range []Device{CPU(0), CPU(1)} {
		if _, ok := devices.Load(d); !ok {
			t.Errorf("no replica ran with its parameter on %v", d)
		}
	}
}

package devtensor

import (
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// float32Bits returns the bit patterns of t's float32 values, so that "equal" means the
// same bits (NaN and -0 included).
func float32Bits(t *testing.T, x *Tensor) []uint32 {
	t.Helper()
	v, err := ToSlice[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]uint32, len(v))
	for i, f := range v {
		b[i] = math.Float32bits(f)
	}
	return b
}

// Capture records x*2 + x without computing it; each replay recomputes it from x's
// current values, into the same output tensors, also after the Go handle of an
// intermediate was closed inside the capture.
func TestCaptureGraphReplaysOpsOnTheSameMemory(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3}, []int64{3}, CPU(0)))
	defer x.Close()
	s := must(NewStream(CPU(0)))
	defer s.Close()
	if must(s.IsCapturing()) {
		t.Error("a new stream is capturing")
	}
	var y, z *Tensor
	g, err := CaptureGraph(s, func() (err error) {
		if !must(s.IsCapturing()) {
			t.Error("inside CaptureGraph the stream is not capturing")
		}
		if threadStreamIsDefault(t, CPU(0)) {
			t.Error("inside CaptureGraph the thread's cpu:0 stream is the default")
		}
		if !threadStreamIsDefault(t, CPU(1)) {
			t.Error("CaptureGraph on cpu:0 changed cpu:1's stream")
		}
		twice, err := x.MulScalar(2)
		if err != nil {
			return err
		}
		defer twice.Close() // the graph keeps its memory
		if y, err = twice.Add(x); err != nil {
			return err
		}
		z, err = y.Mul(x)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer closeAll(t, y, z)
	if must(s.IsCapturing()) {
		t.Error("the stream is still capturing after CaptureGraph")
	}
	if n := must(g.NumSteps()); n < 3 {
		t.Errorf("NumSteps = %d, want at least 3 (mul_scalar, add, mul)", n)
	}
	if d := must(g.Device()); d != CPU(0) {
		t.Errorf("the graph is on %v, want cpu:0", d)
	}
	// Capture computed nothing: x is as it was.
	if got := must(ToSlice[float32](x)); !reflect.DeepEqual(got, []float32{1, 2, 3}) {
		t.Errorf("x = %v after capture", got)
	}

	if err := g.Replay(); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](y)); !reflect.DeepEqual(got, []float32{3, 6, 9}) {
		t.Errorf("y after the first replay = %v, want [3 6 9]", got)
	}
	if got := must(ToSlice[float32](z)); !reflect.DeepEqual(got, []float32{3, 12, 27}) {
		t.Errorf("z after the first replay = %v, want [3 12 27]", got)
	}
	// New values in the static input: the next replay reads them.
	if err := CopyFromSlice(x, []float32{10, -20, 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := g.Replay(); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](y)); !reflect.DeepEqual(got, []float32{30, -60, 1.5}) {
		t.Errorf("y after the second replay = %v, want [30 -60 1.5]", got)
	}
	if got := must(ToSlice[float32](z)); !reflect.DeepEqual(got, []float32{300, 1200, 0.75}) {
		t.Errorf("z after the second replay = %v, want [300 1200 0.75]", got)
	}
	// Replaying twice on the same input gives the same output (no accumulation).
	if err := g.Replay(); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](y)); !reflect.DeepEqual(got, []float32{30, -60, 1.5}) {
		t.Errorf("y after the third replay = %v, want [30 -60 1.5]", got)
	}
}

// graphMLP is Linear(8, 16), ReLU, Linear(16, 4) with CrossEntropyLoss and SGD (lr 0.1,
// momentum 0.9), initialised from the given seed.
type graphMLP struct {
	model, loss *Module
	params      NamedTensors
	opt         *Optimizer
}

func newGraphMLP(t *testing.T, seed uint64) *graphMLP {
	t.Helper()
	if err := ManualSeed(seed); err != nil {
		t.Fatal(err)
	}
	l1 := must(Linear(8, 16, LinearOptions{DType: Float32, Device: CPU(0)}))
	act := must(ReLU())
	l2 := must(Linear(16, 4, LinearOptions{DType: Float32, Device: CPU(0)}))
	m := &graphMLP{model: must(Sequential(l1, act, l2))} // takes the three over
	m.loss = must(CrossEntropyLoss(CrossEntropyLossOptions{}))
	m.params = must(m.model.Parameters())
	m.opt = must(SGD(m.params, 0.1, Momentum(0.9)))
	return m
}

func (m *graphMLP) close(t *testing.T) {
	t.Helper()
	for _, err := range []error{m.opt.Close(), m.params.Close(), m.loss.Close(), m.model.Close()} {
		if err != nil {
			t.Error(err)
		}
	}
}

// step is one training step (zero_grad, forward, loss, backward, step); it returns the
// loss tensor.
func (m *graphMLP) step(x, y *Tensor) (*Tensor, error) {
	if err := m.opt.ZeroGrad(); err != nil {
		return nil, err
	}
	logits, err := m.model.Forward(x)
	if err != nil {
		return nil, err
	}
	defer logits.Close()
	l, err := m.loss.Forward(logits, y)
	if err != nil {
		return nil, err
	}
	if err := l.Backward(nil); err != nil {
		l.Close()
		return nil, err
	}
	if err := m.opt.Step(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// graphBatch returns a deterministic batch (a small LCG): 6 rows of 8 features and 6
// class targets in [0, 4).
func graphBatch(step int) ([]float32, []int64) {
	x := make([]float32, 6*8)
	s := uint32(12345 + 7919*step)
	for i := range x {
		s = s*1664525 + 1013904223
		x[i] = float32((s>>8)&0xffff)/32768 - 1
	}
	y := make([]int64, 6)
	for i := range y {
		y[i] = int64((i*3 + step) % 4)
	}
	return x, y
}

// A captured training step, replayed on new batches copied into its static inputs, gives
// the bits of the same steps run eagerly on a twin model: every loss and every parameter.
func TestCaptureGraphTrainingStepMatchesEagerBits(t *testing.T) {
	noLeaks(t)
	eager := newGraphMLP(t, 7)
	defer eager.close(t)
	graphed := newGraphMLP(t, 7)
	defer graphed.close(t)
	if len(eager.params) != 4 {
		t.Fatalf("%d parameters, want 4", len(eager.params))
	}
	sameParams := func(when string) {
		t.Helper()
		for i := range eager.params {
			if e, g := float32Bits(t, eager.params[i].Tensor), float32Bits(t, graphed.params[i].Tensor); !reflect.DeepEqual(e, g) {
				t.Errorf("%s: parameter %s differs (eager %v, graphed %v)", when, eager.params[i].Name,
					must(ToSlice[float32](eager.params[i].Tensor)), must(ToSlice[float32](graphed.params[i].Tensor)))
			}
		}
	}
	sameParams("after construction with one seed")

	// The static inputs of the graphed model, holding batch 0 for the warm-up.
	xv, yv := graphBatch(0)
	xs := must(FromSlice(xv, []int64{6, 8}, CPU(0)))
	defer xs.Close()
	ys := must(FromSlice(yv, nil, CPU(0)))
	defer ys.Close()

	// Warm-up: one eager step on both, so SGD's momentum buffers exist before capture.
	xe := must(FromSlice(xv, []int64{6, 8}, CPU(0)))
	ye := must(FromSlice(yv, nil, CPU(0)))
	le := must(eager.step(xe, ye))
	lg := must(graphed.step(xs, ys))
	if e, g := float32Bits(t, le), float32Bits(t, lg); !reflect.DeepEqual(e, g) {
		t.Errorf("warm-up losses differ: %v, %v", e, g)
	}
	closeAll(t, xe, ye, le, lg)
	sameParams("after the warm-up")

	s := must(NewStream(CPU(0)))
	defer s.Close()
	var staticLoss *Tensor
	g, err := CaptureGraph(s, func() (err error) {
		staticLoss, err = graphed.step(xs, ys)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer staticLoss.Close()
	// Forward (2 products, a ReLU), the loss, its backward and 4 SGD steps: at least 10
	// recorded steps however far the ops are fused (20 on the CPU today).
	if n := must(g.NumSteps()); n < 10 {
		t.Errorf("a training step recorded %d steps, want at least 10", n)
	}
	sameParams("after capture (capture computes nothing)")

	prev := float32Bits(t, eager.params[0].Tensor)
	var losses []float32
	for step := 1; step <= 3; step++ {
		xv, yv := graphBatch(step)
		xe := must(FromSlice(xv, []int64{6, 8}, CPU(0)))
		ye := must(FromSlice(yv, nil, CPU(0)))
		le := must(eager.step(xe, ye))

		if err := CopyFromSlice(xs, xv); err != nil {
			t.Fatal(err)
		}
		if err := CopyFromSlice(ys, yv); err != nil {
			t.Fatal(err)
		}
		if err := g.Replay(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		e, r := float32Bits(t, le), float32Bits(t, staticLoss)
		if len(e) != 1 || !reflect.DeepEqual(e, r) {
			t.Errorf("step %d: eager loss %v, replayed loss %v", step,
				must(ToSlice[float32](le)), must(ToSlice[float32](staticLoss)))
		}
		losses = append(losses, math.Float32frombits(r[0]))
		sameParams("step " + string(rune('0'+step)))
		// The step changed the weights, so the comparison compared something new.
		now := float32Bits(t, eager.params[0].Tensor)
		if reflect.DeepEqual(now, prev) {
			t.Errorf("step %d left the first weight unchanged", step)
		}
		prev = now
		closeAll(t, xe, ye, le)
	}
	if losses[0] == losses[1] && losses[1] == losses[2] {
		t.Errorf("the replayed losses %v are all one value", losses)
	}
	// The gradients backward set are outputs of the graph too.
	for i := range eager.params {
		ge := must(eager.params[i].Tensor.Grad())
		gg := must(graphed.params[i].Tensor.Grad())
		if ge == nil || gg == nil {
			t.Fatalf("parameter %s: gradient missing (eager %v, graphed %v)", eager.params[i].Name, ge != nil, gg != nil)
		}
		if !reflect.DeepEqual(float32Bits(t, ge), float32Bits(t, gg)) {
			t.Errorf("parameter %s: the gradients differ", eager.params[i].Name)
		}
		closeAll(t, ge, gg)
	}
}

// Calls that need values fail with ErrNotSupported inside fn and the capture goes on:
// the graph holds the work recorded before and after them.
func TestCaptureGraphRefusedCallsAndTheCaptureGoesOn(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3}, []int64{3}, CPU(0)))
	defer x.Close()
	one := must(FromSlice([]float32{5}, []int64{}, CPU(0)))
	defer one.Close()
	// An Adam optimizer whose parameter has a gradient: its step cannot be captured.
	p := must(FromSlice([]float32{1, 2}, nil, CPU(0)))
	defer p.Close()
	if err := p.SetRequiresGrad(true); err != nil {
		t.Fatal(err)
	}
	ps := must(p.Sum())
	if err := ps.Backward(nil); err != nil {
		t.Fatal(err)
	}
	ps.Close()
	adam := must(Adam([]*Tensor{p}, 0.1))
	defer adam.Close()

	s := must(NewStream(CPU(0)))
	defer s.Close()
	var before, after *Tensor
	g, err := CaptureGraph(s, func() (err error) {
		if before, err = x.MulScalar(2); err != nil {
			return err
		}
		_, err = one.Item()
		if e := wantCode(t, err, ErrNotSupported); !strings.Contains(e.Msg, "captur") {
			t.Errorf("Item's error message %q does not mention the capture", e.Msg)
		}
		_, err = ToSlice[float32](x)
		wantCode(t, err, ErrNotSupported)
		wantCode(t, CopyFromSlice(x, []float32{7, 7, 7}), ErrNotSupported)
		wantCode(t, s.Synchronize(), ErrNotSupported)
		wantCode(t, adam.Step(), ErrNotSupported)
		_, err = Randn([]int64{2}, Float32, CPU(0))
		wantCode(t, err, ErrNotSupported)
		if !must(s.IsCapturing()) {
			t.Error("a refused call ended the capture")
		}
		after, err = before.Add(x)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer closeAll(t, before, after)
	// The refused calls did nothing: x and p keep their values.
	if got := must(ToSlice[float32](x)); !reflect.DeepEqual(got, []float32{1, 2, 3}) {
		t.Errorf("x = %v after a refused CopyFromSlice", got)
	}
	if got := must(ToSlice[float32](p)); !reflect.DeepEqual(got, []float32{1, 2}) {
		t.Errorf("p = %v after a refused Adam step", got)
	}
	if err := g.Replay(); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](before)); !reflect.DeepEqual(got, []float32{2, 4, 6}) {
		t.Errorf("the work recorded before the refused calls gave %v, want [2 4 6]", got)
	}
	if got := must(ToSlice[float32](after)); !reflect.DeepEqual(got, []float32{3, 6, 9}) {
		t.Errorf("the work recorded after the refused calls gave %v, want [3 6 9]", got)
	}
	// Outside the capture the same calls work again.
	if v := must(one.Item()); v != 5 {
		t.Errorf("Item after the capture = %v, want 5", v)
	}
}

// CaptureGraph's errors: a stream that cannot capture (fn is not run); fn's error or
// panic (the capture is ended, the thread back on its stream, the graph released);
// captures inside a capture; Close, and use after Close.
func TestCaptureGraphErrorsAndClose(t *testing.T) {
	noLeaks(t)
	// So the thread checks below see the thread CaptureGraph used.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ran := false
	fn := func() error { ran = true; return nil }

	def := must(DefaultStream(CPU(0)))
	defer def.Close()
	_, err := CaptureGraph(def, fn)
	if e := wantCode(t, err, ErrInvalidArgument); e.Op != "CaptureGraph" {
		t.Errorf("error from %q, want CaptureGraph", e.Op)
	}
	_, err = CaptureGraph(nil, fn)
	wantCode(t, err, ErrInvalidArgument)
	closed := must(NewStream(CPU(0)))
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = CaptureGraph(closed, fn)
	wantCode(t, err, ErrClosed)
	_, err = closed.IsCapturing()
	wantCode(t, err, ErrClosed)
	if ran {
		t.Error("fn ran although the capture could not begin")
	}
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("a capture that could not begin changed the thread's stream")
	}

	s := must(NewStream(CPU(0)))
	defer s.Close()
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	defer x.Close()

	// fn fails: its error comes back, the capture has ended, the thread is on its
	// previous stream, and the graph was released (noLeaks).
	sentinel := errors.New("fn failed")
	g, err := CaptureGraph(s, func() error {
		y, err := x.AddScalar(1)
		if err != nil {
			return err
		}
		y.Close()
		return sentinel
	})
	if err != sentinel || g != nil {
		t.Errorf("CaptureGraph returned (%v, %v), want (nil, fn's error)", g, err)
	}
	if must(s.IsCapturing()) {
		t.Error("the stream is still capturing after fn failed")
	}
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("after fn failed the thread's stream is not the default again")
	}

	// fn panics: the panic goes on, after the end.
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want fn's panic", r)
			}
		}()
		_, _ = CaptureGraph(s, func() error { panic("boom") })
	}()
	if must(s.IsCapturing()) {
		t.Error("the stream is still capturing after fn panicked")
	}
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("after fn panicked the thread's stream is not the default again")
	}

	// Inside a capture: the same stream, or another on the same device from the same
	// thread, cannot capture, and a graph cannot be replayed; the outer capture goes on.
	empty := must(CaptureGraph(s, func() error { return nil }))
	defer empty.Close()
	other := must(NewStream(CPU(0)))
	defer other.Close()
	g, err = CaptureGraph(s, func() error {
		_, err := CaptureGraph(s, fn)
		wantCode(t, err, ErrInvalidArgument)
		_, err = CaptureGraph(other, fn)
		wantCode(t, err, ErrInvalidArgument)
		wantCode(t, empty.Replay(), ErrNotSupported)
		return x.MulScalarInPlace(3)
	})
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("fn of a capture inside a capture ran")
	}
	if must(other.IsCapturing()) || must(s.IsCapturing()) {
		t.Error("a stream is still capturing")
	}
	if err := g.Replay(); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](x)); !reflect.DeepEqual(got, []float32{3, 3, 3, 3}) {
		t.Errorf("x after one replay of x *= 3 = %v", got)
	}

	// A graph of no work replays as nothing.
	if n := must(empty.NumSteps()); n != 0 {
		t.Errorf("an empty capture recorded %d steps", n)
	}
	if err := empty.Replay(); err != nil {
		t.Error(err)
	}

	// Close: twice is a no-op, a nil Graph's too; use afterwards is ErrClosed.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var nilGraph *Graph
	if err := nilGraph.Close(); err != nil {
		t.Errorf("Close of a nil Graph: %v", err)
	}
	if e := wantCode(t, g.Replay(), ErrClosed); e.Op != "Graph.Replay" {
		t.Errorf("error from %q", e.Op)
	}
	_, err = g.NumSteps()
	wantCode(t, err, ErrClosed)
	_, err = g.Device()
	wantCode(t, err, ErrClosed)
	wantCode(t, nilGraph.Replay(), ErrInvalidArgument)
	if got := must(ToSlice[float32](x)); !reflect.DeepEqual(got, []float32{3, 3, 3, 3}) {
		t.Errorf("x = %v after the closed graph's refused replay", got)
	}
}

// fn may close the capturing Stream (its only Go reference): the capture keeps a
// reference of its own, so it still ends and the graph still replays.
func TestCaptureGraphSurvivesClosingTheStreamInFn(t *testing.T) {
	noLeaks(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := must(FromSlice([]float32{1, 2}, nil, CPU(0)))
	defer x.Close()
	s := must(NewStream(CPU(0)))
	var y *Tensor
	g, err := CaptureGraph(s, func() (err error) {
		if err := s.Close(); err != nil {
			return err
		}
		y, err = x.AddScalar(10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer y.Close()
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("after the capture the thread's stream is not the default again")
	}
	if err := g.Replay(); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](y)); !reflect.DeepEqual(got, []float32{11, 12}) {
		t.Errorf("y = %v, want [11 12]", got)
	}
}

// A forgotten Graph is released by its finalizer, also beside a live object.
func TestGraphFinalizer(t *testing.T) {
	noLeaks(t)
	s := must(NewStream(CPU(0)))
	defer s.Close()
	x := must(Ones([]int64{2}, Float32, CPU(0)))
	defer x.Close()
	forgetBesideLive(t, "Graph", 10, func(int) {
		must(CaptureGraph(s, func() error { return x.AddScalarInPlace(1) }))
	})
}

// On a GPU the replay is queued on the capturing stream: synchronise it, then read.
func TestCaptureGraphOnCUDA(t *testing.T) {
	if !CUDAIsAvailable() {
		t.Skip("CUDA is not usable here")
	}
	noLeaks(t)
	dev := CUDA(0)
	xh := must(FromSlice([]float32{1, 2, 3}, nil, CPU(0)))
	defer xh.Close()
	x := must(xh.To(dev))
	defer x.Close()
	s := must(NewStream(dev))
	defer s.Close()
	def := must(DefaultStream(dev))
	defer def.Close()
	if err := s.WaitStream(def); err != nil { // x was made on the default stream
		t.Fatal(err)
	}
	var y *Tensor
	g, err := CaptureGraph(s, func() (err error) {
		twice, err := x.MulScalar(2)
		if err != nil {
			return err
		}
		defer twice.Close()
		y, err = twice.Add(x)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer y.Close()
	if d := must(g.Device()); d != dev {
		t.Errorf("the graph is on %v", d)
	}
	for round, want := range [][]float32{{3, 6, 9}, {3, 6, 9}} {
		if err := g.Replay(); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if got := must(ToSlice[float32](y)); !reflect.DeepEqual(got, want) {
			t.Errorf("replay %d: y = %v, want %v", round, got, want)
		}
	}
}

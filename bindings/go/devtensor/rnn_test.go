package devtensor

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// Compile checks of the recurrent signatures.
var (
	_ func(int64, int64, RNNOptions) (*Module, error)                             = LSTM
	_ func(int64, int64, RNNOptions) (*Module, error)                             = GRU
	_ func(int64, int64, string, RNNOptions) (*Module, error)                     = RNN
	_ func(*Module, *Tensor, *Tensor, *Tensor) (*Tensor, *Tensor, *Tensor, error) = (*Module).RNNForward
)

func (k *tensors) f64(data []float64, shape ...int64) *Tensor {
	return k.keep(must(FromSlice(data, shape, CPU(0))))
}

// f64s returns x's values and shape, and closes x.
func f64s(t *testing.T, x *Tensor) ([]float64, []int64) {
	t.Helper()
	defer x.Close()
	return must(ToSlice[float64](x)), must(x.Shape())
}

// checkTensor64 fails unless x (float64) has shape and the values want within tol; it
// closes x.
func checkTensor64(t *testing.T, what string, x *Tensor, shape []int64, want []float64, tol float64) {
	t.Helper()
	got, s := f64s(t, x)
	if !reflect.DeepEqual(s, shape) {
		t.Fatalf("%s: shape %v, want %v", what, s, shape)
	}
	near(t, what, got, want, tol)
}

// loadWeights loads a state dict of float64 vectors (each [rows, 1] for the weights,
// [rows] for the biases, of hidden size 1 and input size 1) into m.
func loadWeights(t *testing.T, m *Module, wih, whh, bih, bhh []float64) {
	t.Helper()
	k := newTensors(t)
	n := int64(len(wih))
	sd := must(NewStateDict(
		Named{"weight_ih_l0", k.f64(wih, n, 1)},
		Named{"weight_hh_l0", k.f64(whh, n, 1)},
		Named{"bias_ih_l0", k.f64(bih, n)},
		Named{"bias_hh_l0", k.f64(bhh, n)},
	))
	defer sd.Close()
	MustOK(m.LoadStateDict(sd))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func TestLSTMShapesBidirectionalBatchFirst(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	const N, L, in, H = 2, 5, 3, 4
	m := must(LSTM(in, H, RNNOptions{NumLayers: 2, Bidirectional: true, BatchFirst: true}))
	defer m.Close()
	if kind := must(m.Kind()); kind != "LSTM" {
		t.Fatalf("kind %q", kind)
	}
	x := k.randn(N, L, in)
	out, hN, cN, err := m.RNNForward(x, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cN == nil {
		t.Fatal("an LSTM gave no c_n")
	}
	o, os := f32s(t, out)
	hn, hs := f32s(t, hN)
	_, cs := f32s(t, cN)
	if !reflect.DeepEqual(os, []int64{N, L, 2 * H}) || !reflect.DeepEqual(hs, []int64{4, N, H}) ||
		!reflect.DeepEqual(cs, []int64{4, N, H}) {
		t.Fatalf("shapes: output %v, h_n %v, c_n %v", os, hs, cs)
	}
	// The last layer's states: the forward direction's (row 2) is the output at time L-1,
	// the backward one's (row 3) the output at time 0, second half.
	for n := 0; n < N; n++ {
		for h := 0; h < H; h++ {
			if fw, want := hn[2*N*H+n*H+h], o[n*L*2*H+(L-1)*2*H+h]; fw != want {
				t.Fatalf("h_n[2, %d, %d] = %v, output[%d, L-1, %d] = %v", n, h, fw, n, h, want)
			}
			if bw, want := hn[3*N*H+n*H+h], o[n*L*2*H+H+h]; bw != want {
				t.Fatalf("h_n[3, %d, %d] = %v, output[%d, 0, %d] = %v", n, h, bw, n, H+h, want)
			}
		}
	}
	// Forward gives the same output; given zero states, the same again.
	near(t, "Forward", vals(t, must(m.Forward(x))), widen(o), 0)
	z := k.keep(must(Zeros([]int64{4, N, H}, Float32, CPU(0))))
	near(t, "Forward with zero states", vals(t, must(m.Forward(x, z, z))), widen(o), 0)
	near(t, "ForwardOptional(x, nil, nil)", vals(t, must(m.ForwardOptional(x, nil, nil))), widen(o), 0)

	// Unbatched: [L, in] gives [L, 2H], states [4, H].
	out, hN, cN, err = m.RNNForward(k.randn(L, in), k.randn(4, H), k.randn(4, H))
	if err != nil {
		t.Fatal(err)
	}
	_, os = f32s(t, out)
	_, hs = f32s(t, hN)
	_, cs = f32s(t, cN)
	if !reflect.DeepEqual(os, []int64{L, 2 * H}) || !reflect.DeepEqual(hs, []int64{4, H}) || !reflect.DeepEqual(cs, []int64{4, H}) {
		t.Fatalf("unbatched shapes: output %v, h_n %v, c_n %v", os, hs, cs)
	}

	// GRU and RNN: the same shapes, and no c_n. Time-major without BatchFirst.
	for _, c := range []struct {
		kind string
		make func() (*Module, error)
	}{
		{"GRU", func() (*Module, error) { return GRU(in, H, RNNOptions{NumLayers: 2, Bidirectional: true}) }},
		{"RNN", func() (*Module, error) { return RNN(in, H, "relu", RNNOptions{NumLayers: 3}) }},
	} {
		g := must(c.make())
		if kind := must(g.Kind()); kind != c.kind {
			t.Fatalf("kind %q, want %q", kind, c.kind)
		}
		out, hN, cN, err := g.RNNForward(k.randn(L, N, in), nil, nil)
		MustOK(g.Close())
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if cN != nil {
			t.Fatalf("%s gave a c_n", c.kind)
		}
		_, os := f32s(t, out)
		_, hs := f32s(t, hN)
		D, layers := int64(2), int64(2)
		if c.kind == "RNN" {
			D, layers = 1, 3
		}
		if !reflect.DeepEqual(os, []int64{L, N, D * H}) || !reflect.DeepEqual(hs, []int64{layers * D, N, H}) {
			t.Fatalf("%s shapes: output %v, h_n %v", c.kind, os, hs)
		}
	}
}

func widen(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// RNN(tanh) and RNN(relu) of hidden size 1 against values computed by hand.
func TestRNNByHand(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	m := must(RNN(1, 1, "", RNNOptions{DType: Float64}))
	defer m.Close()
	loadWeights(t, m, []float64{0.5}, []float64{0.25}, []float64{0.1}, []float64{0.0})
	x := k.f64([]float64{1.0, 2.0}, 2, 1) // unbatched, L = 2
	out, hN, cN, err := m.RNNForward(x, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cN != nil {
		t.Fatal("an RNN gave a c_n")
	}
	h1 := math.Tanh(0.5*1 + 0.1)
	h2 := math.Tanh(0.5*2 + 0.1 + 0.25*h1)
	checkTensor64(t, "output", out, []int64{2, 1}, []float64{h1, h2}, 1e-12)
	checkTensor64(t, "h_n", hN, []int64{1, 1}, []float64{h2}, 1e-12)
	checkTensor64(t, "Forward", must(m.Forward(x)), []int64{2, 1}, []float64{h1, h2}, 1e-12)

	// A given h0 of 0.8, batched [L, N=1, 1].
	xb := k.f64([]float64{1.0, 2.0}, 2, 1, 1)
	h0 := k.f64([]float64{0.8}, 1, 1, 1)
	out, hN, _, err = m.RNNForward(xb, h0, nil)
	if err != nil {
		t.Fatal(err)
	}
	h1 = math.Tanh(0.5*1 + 0.1 + 0.25*0.8)
	h2 = math.Tanh(0.5*2 + 0.1 + 0.25*h1)
	checkTensor64(t, "output from h0", out, []int64{2, 1, 1}, []float64{h1, h2}, 1e-12)
	checkTensor64(t, "h_n from h0", hN, []int64{1, 1, 1}, []float64{h2}, 1e-12)

	// relu: x = 1 then -3, w_ih 1, w_hh 0.5, no bias terms: h1 = 1, h2 = relu(-3 + 0.5) = 0.
	r := must(RNN(1, 1, "relu", RNNOptions{DType: Float64}))
	defer r.Close()
	loadWeights(t, r, []float64{1}, []float64{0.5}, []float64{0}, []float64{0})
	out, hN, _, err = r.RNNForward(k.f64([]float64{1, -3}, 2, 1), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkTensor64(t, "relu output", out, []int64{2, 1}, []float64{1, 0}, 1e-12)
	checkTensor64(t, "relu h_n", hN, []int64{1, 1}, []float64{0}, 1e-12)
}

// GRU of hidden size 1, two steps from a given h0, against PyTorch's equations by hand:
// r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
// n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h.
func TestGRUByHand(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	wih := []float64{0.2, -0.4, 0.6} // reset, update, new
	whh := []float64{0.5, 0.3, -0.7}
	bih := []float64{0.1, 0.05, -0.2}
	bhh := []float64{-0.15, 0.25, 0.35}
	m := must(GRU(1, 1, RNNOptions{DType: Float64}))
	defer m.Close()
	loadWeights(t, m, wih, whh, bih, bhh)
	step := func(x, h float64) float64 {
		r := sigmoid(wih[0]*x + bih[0] + whh[0]*h + bhh[0])
		z := sigmoid(wih[1]*x + bih[1] + whh[1]*h + bhh[1])
		n := math.Tanh(wih[2]*x + bih[2] + r*(whh[2]*h+bhh[2]))
		return (1-z)*n + z*h
	}
	h1 := step(0.7, 0.3)
	h2 := step(-1.1, h1)
	out, hN, cN, err := m.RNNForward(k.f64([]float64{0.7, -1.1}, 2, 1), k.f64([]float64{0.3}, 1, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cN != nil {
		t.Fatal("a GRU gave a c_n")
	}
	checkTensor64(t, "output", out, []int64{2, 1}, []float64{h1, h2}, 1e-12)
	checkTensor64(t, "h_n", hN, []int64{1, 1}, []float64{h2}, 1e-12)

	// The brief's simplest case: h0 = 0, one step: h = (1 - z) n with n's r (b_hn).
	x := 0.7
	r := sigmoid(wih[0]*x + bih[0] + bhh[0])
	z := sigmoid(wih[1]*x + bih[1] + bhh[1])
	n := math.Tanh(wih[2]*x + bih[2] + r*bhh[2])
	out, hN, _, err = m.RNNForward(k.f64([]float64{x}, 1, 1), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Close()
	checkTensor64(t, "h_n from zeros", hN, []int64{1, 1}, []float64{(1 - z) * n}, 1e-12)
}

// LSTM of hidden size 1, two steps from given h0 and c0, by hand: gates in PyTorch's
// order (input, forget, cell, output), c' = f c + i g, h' = o tanh(c').
func TestLSTMByHand(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	wih := []float64{0.3, -0.2, 0.5, 0.8}
	whh := []float64{0.1, 0.4, -0.3, 0.2}
	bih := []float64{0.05, 0.1, -0.1, 0.0}
	bhh := []float64{0.0, 0.2, 0.15, -0.05}
	m := must(LSTM(1, 1, RNNOptions{DType: Float64}))
	defer m.Close()
	loadWeights(t, m, wih, whh, bih, bhh)
	step := func(x, h, c float64) (float64, float64) {
		gate := func(j int) float64 { return wih[j]*x + bih[j] + whh[j]*h + bhh[j] }
		i, f, g, o := sigmoid(gate(0)), sigmoid(gate(1)), math.Tanh(gate(2)), sigmoid(gate(3))
		c = f*c + i*g
		return o * math.Tanh(c), c
	}
	h1, c1 := step(0.9, 0.2, -0.4)
	h2, c2 := step(-0.6, h1, c1)
	out, hN, cN, err := m.RNNForward(k.f64([]float64{0.9, -0.6}, 2, 1), k.f64([]float64{0.2}, 1, 1),
		k.f64([]float64{-0.4}, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	checkTensor64(t, "output", out, []int64{2, 1}, []float64{h1, h2}, 1e-12)
	checkTensor64(t, "h_n", hN, []int64{1, 1}, []float64{h2}, 1e-12)
	checkTensor64(t, "c_n", cN, []int64{1, 1}, []float64{c2}, 1e-12)
}

func TestRNNStateDictNames(t *testing.T) {
	noLeaks(t)
	m := must(LSTM(3, 4, RNNOptions{NumLayers: 2, Bidirectional: true}))
	defer m.Close()
	var want []string
	var shapes [][]int64
	for l, in := range []int64{3, 8} {
		for _, sfx := range []string{"", "_reverse"} {
			for _, p := range []string{"weight_ih", "weight_hh", "bias_ih", "bias_hh"} {
				want = append(want, p+"_l"+string(rune('0'+l))+sfx)
			}
			shapes = append(shapes, []int64{16, in}, []int64{16, 4}, []int64{16}, []int64{16})
		}
	}
	names, got := namedOf(t, must(m.Parameters()))
	if !reflect.DeepEqual(names, want) || !reflect.DeepEqual(got, shapes) {
		t.Fatalf("LSTM parameters %v %v,\nwant %v %v", names, got, want, shapes)
	}
	if sn := stateNames(t, m); !reflect.DeepEqual(sn, want) {
		t.Fatalf("state dict %v, want %v", sn, want)
	}
	// Initialised uniform in ±1/sqrt(hidden_size) = ±0.5.
	ps := must(m.Parameters())
	for _, p := range ps {
		for _, v := range must(ToSlice[float32](p.Tensor)) {
			if v < -0.5 || v > 0.5 {
				t.Fatalf("%s holds %v, outside ±0.5", p.Name, v)
			}
		}
	}
	ps.Close()

	// NoBias: the weights alone. GRU: 3 gates; RNN: 1.
	nb := must(GRU(2, 5, RNNOptions{NoBias: true}))
	defer nb.Close()
	names, got = namedOf(t, must(nb.Parameters()))
	if !reflect.DeepEqual(names, []string{"weight_ih_l0", "weight_hh_l0"}) ||
		!reflect.DeepEqual(got, [][]int64{{15, 2}, {15, 5}}) {
		t.Fatalf("GRU without bias: %v %v", names, got)
	}
	r := must(RNN(2, 5, "tanh", RNNOptions{}))
	defer r.Close()
	names, got = namedOf(t, must(r.Parameters()))
	if !reflect.DeepEqual(names, []string{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}) ||
		!reflect.DeepEqual(got, [][]int64{{5, 2}, {5, 5}, {5}, {5}}) {
		t.Fatalf("RNN: %v %v", names, got)
	}
	// DType and Device are honoured.
	d := must(LSTM(2, 3, RNNOptions{DType: Float64, Device: CPU(1)}))
	defer d.Close()
	if dev := must(d.Device()); dev != CPU(1) {
		t.Fatalf("device %v", dev)
	}
	ps = must(d.Parameters())
	defer ps.Close()
	if dt := must(ps[0].Tensor.DType()); dt != Float64 {
		t.Fatalf("dtype %v", dt)
	}
}

func TestRNNErrors(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	// Constructors.
	_, err := RNN(2, 3, "sigmoid", RNNOptions{})
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "sigmoid") {
		t.Fatalf("unknown nonlinearity: %v", err)
	}
	_, err = RNN(2, 3, "tanh\x00", RNNOptions{})
	wantCode(t, err, ErrInvalidArgument)
	_, err = LSTM(2, 0, RNNOptions{})
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "hidden_size") {
		t.Fatalf("hidden size 0: %v", err)
	}
	_, err = GRU(2, 3, RNNOptions{NumLayers: -1})
	wantCode(t, err, ErrInvalidArgument)
	_, err = LSTM(2, 3, RNNOptions{Dropout: 1.5})
	wantCode(t, err, ErrInvalidArgument)
	_, err = GRU(2, 3, RNNOptions{DType: Int64})
	wantCode(t, err, ErrDTypeMismatch)

	m := must(LSTM(3, 4, RNNOptions{}))
	defer m.Close()
	// An input of the wrong width: ErrShapeMismatch naming the module and input_size.
	bad := k.randn(5, 2, 2)
	for _, err := range []error{second(m.Forward(bad)), fourth(m.RNNForward(bad, nil, nil))} {
		if e := wantCode(t, err, ErrShapeMismatch); !strings.Contains(e.Msg, "input_size") || !strings.Contains(e.Msg, "LSTM") {
			t.Fatalf("wrong input size: %v", err)
		}
	}
	x := k.randn(5, 2, 3)
	s := k.randn(1, 2, 4)
	// h0 without c0 (and the reverse); a state of the wrong shape; another dtype.
	_, _, _, err = m.RNNForward(x, s, nil)
	wantCode(t, err, ErrInvalidArgument)
	_, _, _, err = m.RNNForward(x, nil, s)
	wantCode(t, err, ErrInvalidArgument)
	_, _, _, err = m.RNNForward(x, k.randn(2, 2, 4), s)
	if e := wantCode(t, err, ErrShapeMismatch); !strings.Contains(e.Msg, "h0") {
		t.Fatalf("h0 of the wrong shape: %v", err)
	}
	_, _, _, err = m.RNNForward(k.keep(must(Zeros([]int64{5, 2, 3}, Float64, CPU(0)))), nil, nil)
	wantCode(t, err, ErrDTypeMismatch)
	_, _, _, err = m.RNNForward(k.keep(must(Zeros([]int64{5, 2, 3}, Float32, CPU(1)))), nil, nil)
	wantCode(t, err, ErrDeviceMismatch)

	// A GRU with a c0: through RNNForward and through Forward.
	g := must(GRU(3, 4, RNNOptions{}))
	defer g.Close()
	out, hN, cN, err := g.RNNForward(x, s, s)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "c0") {
		t.Fatalf("GRU with c0: %v", err)
	}
	if out != nil || hN != nil || cN != nil {
		t.Fatal("results on error")
	}
	_, err = g.Forward(x, s, s)
	wantCode(t, err, ErrInvalidArgument)

	// A module of another kind: ErrInvalidArgument naming it.
	lin := must(Linear(3, 4, LinearOptions{}))
	defer lin.Close()
	out, hN, cN, err = lin.RNNForward(x, nil, nil)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "Linear") {
		t.Fatalf("a Linear: %v", err)
	}
	if out != nil || hN != nil || cN != nil {
		t.Fatal("results on error")
	}
	// nil and closed modules and tensors.
	var nilModule *Module
	_, _, _, err = nilModule.RNNForward(x, nil, nil)
	wantCode(t, err, ErrInvalidArgument)
	_, _, _, err = m.RNNForward(nil, nil, nil)
	wantCode(t, err, ErrInvalidArgument)
	closed := must(Zeros([]int64{1, 2, 4}, Float32, CPU(0)))
	closed.Close()
	for _, in := range [][3]*Tensor{{closed}, {x, closed, s}, {x, s, closed}} {
		_, _, _, err = m.RNNForward(in[0], in[1], in[2])
		wantCode(t, err, ErrClosed)
	}
	gone := must(GRU(3, 4, RNNOptions{}))
	MustOK(gone.Close())
	_, _, _, err = gone.RNNForward(x, nil, nil)
	wantCode(t, err, ErrClosed)
}

func fourth(_, _, _ *Tensor, err error) error { return err }

func TestRNNGradientsFlow(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	m := must(LSTM(3, 4, RNNOptions{NumLayers: 2, Bidirectional: true, BatchFirst: true}))
	defer m.Close()
	x := k.randn(2, 5, 3)
	MustOK(x.SetRequiresGrad(true))
	h0 := k.randn(4, 2, 4)
	MustOK(h0.SetRequiresGrad(true))
	c0 := k.randn(4, 2, 4)
	out, hN, cN, err := m.RNNForward(x, h0, c0)
	if err != nil {
		t.Fatal(err)
	}
	k.keep(out)
	k.keep(hN)
	k.keep(cN)
	loss := k.keep(must(out.Sum()))
	MustOK(loss.Backward(nil))
	gx := must(x.Grad())
	if gx == nil {
		t.Fatal("the input has no gradient")
	}
	g, shape := f32s(t, gx)
	if !reflect.DeepEqual(shape, []int64{2, 5, 3}) {
		t.Fatalf("input gradient shape %v", shape)
	}
	nonzero := false
	for _, v := range g {
		if math.IsNaN(float64(v)) {
			t.Fatalf("NaN in the input gradient %v", g)
		}
		nonzero = nonzero || v != 0
	}
	if !nonzero {
		t.Fatal("the input gradient is all zeros")
	}
	if gh := must(h0.Grad()); gh == nil {
		t.Fatal("h0 has no gradient")
	} else if _, s := f32s(t, gh); !reflect.DeepEqual(s, []int64{4, 2, 4}) {
		t.Fatalf("h0 gradient shape %v", s)
	}
	// Every parameter has a gradient of its own shape.
	ps := must(m.Parameters())
	defer ps.Close()
	for _, p := range ps {
		gp := must(p.Tensor.Grad())
		if gp == nil {
			t.Fatalf("%s has no gradient", p.Name)
		}
		if _, s := f32s(t, gp); !reflect.DeepEqual(s, must(p.Tensor.Shape())) {
			t.Fatalf("%s gradient shape %v", p.Name, s)
		}
	}
	// h_n and c_n are in the graph too: their sum reaches the input (a new forward).
	MustOK(x.ClearGrad())
	out, hN, cN, err = m.RNNForward(x, h0, c0)
	if err != nil {
		t.Fatal(err)
	}
	k.keep(out)
	k.keep(hN)
	k.keep(cN)
	both := k.keep(must(hN.Add(cN)))
	MustOK(k.keep(must(both.Sum())).Backward(nil))
	if gx := must(x.Grad()); gx == nil {
		t.Fatal("h_n + c_n: the input has no gradient")
	} else {
		gx.Close()
	}
}

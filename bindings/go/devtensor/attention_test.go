package devtensor

import (
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Compile checks of the attention signatures.
var (
	_ func(*Module, ...*Tensor) (*Tensor, error)                                                 = (*Module).ForwardOptional
	_ func(*Tensor, *Tensor, *Tensor, *Tensor, bool) (*Tensor, error)                            = (*Tensor).ScaledDotProductAttention
	_ func(int64, int64, MultiheadAttentionOptions) (*Module, error)                             = MultiheadAttention
	_ func(int64, int64, TransformerEncoderLayerOptions) (*Module, error)                        = TransformerEncoderLayer
	_ func([]*Module, *Module) (*Module, error)                                                  = TransformerEncoder
	_ func(*Module, *Tensor, *Tensor, *Tensor, *Tensor, *Tensor, bool) (*Tensor, *Tensor, error) = (*Module).AttentionWithWeights
)

// tensors makes tensors that are closed when the test ends (before noLeaks' check, when
// noLeaks was called first).
type tensors struct {
	t  *testing.T
	ts []*Tensor
}

func newTensors(t *testing.T) *tensors {
	k := &tensors{t: t}
	t.Cleanup(func() { closeAll(t, k.ts...) })
	return k
}

func (k *tensors) keep(x *Tensor) *Tensor { k.ts = append(k.ts, x); return x }

func (k *tensors) f32(data []float32, shape ...int64) *Tensor {
	return k.keep(must(FromSlice(data, shape, CPU(0))))
}

func (k *tensors) bools(data []bool, shape ...int64) *Tensor {
	return k.keep(must(FromSlice(data, shape, CPU(0))))
}

func (k *tensors) randn(shape ...int64) *Tensor {
	return k.keep(must(Randn(shape, Float32, CPU(0))))
}

// vals returns x's values as float64s and closes x.
func vals(t *testing.T, x *Tensor) []float64 {
	t.Helper()
	got, _ := f32s(t, x)
	out := make([]float64, len(got))
	for i, v := range got {
		out[i] = float64(v)
	}
	return out
}

// stateNames returns the names of m's state dict.
func stateNames(t *testing.T, m *Module) []string {
	t.Helper()
	sd := must(m.StateDict())
	defer sd.Close()
	return must(sd.Names())
}

// identityMHA is MultiheadAttention(2, heads) with identity projections and out_proj.bias
// outBias: its output is the attention of the raw query, key and value, plus the bias.
func identityMHA(t *testing.T, heads int64, opts MultiheadAttentionOptions, outBias [2]float32) *Module {
	t.Helper()
	k := newTensors(t)
	eye := k.f32([]float32{1, 0, 0, 1}, 2, 2)
	in := k.keep(must(Cat([]*Tensor{eye, eye, eye}, 0)))
	sd := must(NewStateDict(
		Named{"in_proj_weight", in},
		Named{"in_proj_bias", k.f32(make([]float32, 6), 6)},
		Named{"out_proj.weight", eye},
		Named{"out_proj.bias", k.f32(outBias[:], 2)},
	))
	defer sd.Close()
	m := must(MultiheadAttention(2, heads, opts))
	MustOK(m.LoadStateDict(sd))
	return m
}

// zeroLinears zeroes every entry of m's state dict whose name holds no "norm".
func zeroLinears(t *testing.T, m *Module) {
	t.Helper()
	sd := must(m.StateDict())
	defer sd.Close()
	es := must(sd.Entries())
	defer es.Close()
	var zeroed NamedTensors
	defer func() { zeroed.Close() }()
	for _, e := range es {
		z := e.Tensor
		if !strings.Contains(e.Name, "norm") {
			z = must(e.Tensor.ZerosLike())
			zeroed = append(zeroed, Named{e.Name, z})
		}
		MustOK(sd.Set(e.Name, z))
	}
	MustOK(m.LoadStateDict(sd))
}

func TestScaledDotProductAttentionByHand(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	// Keys all zero: every score is 0, the weights uniform, the output the mean of the
	// value rows, whatever the query.
	q := k.f32([]float32{0.3, -2, 5, 1}, 2, 2)
	keys := k.f32(make([]float32, 6), 3, 2)
	v := k.f32([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	y := must(q.ScaledDotProductAttention(keys, v, nil, false))
	if s := must(y.Shape()); !reflect.DeepEqual(s, []int64{2, 2}) {
		t.Fatalf("shape %v", s)
	}
	near(t, "equal keys", vals(t, y), []float64{3, 4, 3, 4}, 1e-5)

	// E = 1, scores 0 and ln 3: weights 1/4 and 3/4 of values 0 and 4.
	q1 := k.f32([]float32{1}, 1, 1)
	k1 := k.f32([]float32{0, float32(math.Log(3))}, 2, 1)
	v1 := k.f32([]float32{0, 4}, 2, 1)
	near(t, "weights 1/4, 3/4", vals(t, must(q1.ScaledDotProductAttention(k1, v1, nil, false))), []float64{3}, 1e-5)
	// The scale is 1/sqrt(E): with E = 4 the dot product ln 9 scores ln 3.
	l := float32(math.Log(9) / 4)
	q4 := k.f32([]float32{1, 1, 1, 1}, 1, 4)
	k4 := k.f32([]float32{0, 0, 0, 0, l, l, l, l}, 2, 4)
	near(t, "scale", vals(t, must(q4.ScaledDotProductAttention(k4, v1, nil, false))), []float64{3}, 1e-5)

	// Causal: query i attends to keys 0..i; query 0 gives value row 0.
	q3 := k.f32([]float32{9, -1, 2, 2, 0.5, 7}, 3, 2)
	near(t, "causal", vals(t, must(q3.ScaledDotProductAttention(keys, v, nil, true))), []float64{1, 2, 2, 3, 3, 4}, 1e-5)
	kr := k.randn(3, 2)
	near(t, "causal, first query", vals(t, must(q3.ScaledDotProductAttention(kr, v, nil, true)))[:2], []float64{1, 2}, 1e-6)

	// SDPA's bool mask is TRUE where the query MAY attend.
	allow := k.bools([]bool{true, true, false, false, false, true}, 2, 3)
	near(t, "bool mask", vals(t, must(q.ScaledDotProductAttention(keys, v, allow, false))), []float64{2, 3, 5, 6}, 1e-5)
	// A float mask is added: -Inf removes key 1, ln 3 triples key 2's weight.
	add := k.f32([]float32{0, float32(math.Inf(-1)), float32(math.Log(3))}, 3)
	near(t, "float mask", vals(t, must(q.ScaledDotProductAttention(keys, v, add, false))), []float64{4, 5, 4, 5}, 1e-5)
	// No key at all: NaN, as PyTorch's.
	none := k.bools([]bool{false, false, false}, 3)
	for _, x := range vals(t, must(q.ScaledDotProductAttention(keys, v, none, false))) {
		if !math.IsNaN(x) {
			t.Fatalf("a query with no key: %v, want NaN", x)
		}
	}

	// Differentiable.
	qg := k.randn(2, 2)
	MustOK(qg.SetRequiresGrad(true))
	y = k.keep(must(qg.ScaledDotProductAttention(kr, v, nil, false)))
	s := k.keep(must(y.Sum()))
	MustOK(s.Backward(nil))
	g := must(qg.Grad())
	if sh := must(g.Shape()); !reflect.DeepEqual(sh, []int64{2, 2}) {
		t.Fatalf("gradient shape %v", sh)
	}
	g.Close()

	// Errors.
	_, err := q.ScaledDotProductAttention(keys, v, allow, true)
	wantCode(t, err, ErrInvalidArgument)
	_, err = q.ScaledDotProductAttention(k.f32([]float32{0, 0, 0}, 3, 1), v, nil, false)
	wantCode(t, err, ErrShapeMismatch)
	_, err = q.ScaledDotProductAttention(nil, v, nil, false)
	wantCode(t, err, ErrInvalidArgument)
	k64 := k.keep(must(keys.ToDType(Float64)))
	_, err = q.ScaledDotProductAttention(k64, v, nil, false)
	wantCode(t, err, ErrDTypeMismatch)
}

func TestMultiheadAttentionNamesAndShapes(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	mha := must(MultiheadAttention(8, 2, MultiheadAttentionOptions{}))
	defer mha.Close()
	if kind := must(mha.Kind()); kind != "MultiheadAttention" {
		t.Fatalf("kind %q", kind)
	}
	names, shapes := namedOf(t, must(mha.Parameters()))
	if !reflect.DeepEqual(names, []string{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}) ||
		!reflect.DeepEqual(shapes, [][]int64{{24, 8}, {24}, {8, 8}, {8}}) {
		t.Fatalf("parameters %v %v", names, shapes)
	}
	if got := stateNames(t, mha); !reflect.DeepEqual(got, names) {
		t.Fatalf("state dict %v", got)
	}
	// [L, N, E] -> [L, N, E]; cross-attention over 5 keys; unbatched [L, E].
	q := k.randn(3, 4, 8)
	if _, s := f32s(t, must(mha.Forward(q))); !reflect.DeepEqual(s, []int64{3, 4, 8}) {
		t.Fatalf("self-attention shape %v", s)
	}
	kv := k.randn(5, 4, 8)
	if _, s := f32s(t, must(mha.ForwardOptional(q, kv, kv))); !reflect.DeepEqual(s, []int64{3, 4, 8}) {
		t.Fatalf("cross-attention shape %v", s)
	}
	if _, s := f32s(t, must(mha.Forward(k.randn(3, 8)))); !reflect.DeepEqual(s, []int64{3, 8}) {
		t.Fatalf("unbatched shape %v", s)
	}
	// BatchFirst: [N, L, E]. NoBias; float64.
	bf := must(MultiheadAttention(8, 4, MultiheadAttentionOptions{BatchFirst: true}))
	defer bf.Close()
	if _, s := f32s(t, must(bf.Forward(k.randn(4, 3, 8)))); !reflect.DeepEqual(s, []int64{4, 3, 8}) {
		t.Fatalf("batch_first shape %v", s)
	}
	nb := must(MultiheadAttention(4, 1, MultiheadAttentionOptions{NoBias: true, DType: Float64, Device: CPU(0)}))
	defer nb.Close()
	if got := stateNames(t, nb); !reflect.DeepEqual(got, []string{"in_proj_weight", "out_proj.weight"}) {
		t.Fatalf("NoBias state dict %v", got)
	}
	x := k.keep(must(Randn([]int64{2, 1, 4}, Float64, CPU(0))))
	y := must(nb.Forward(x))
	defer y.Close()
	if dt := must(y.DType()); dt != Float64 {
		t.Fatalf("dtype %v", dt)
	}
}

func TestMultiheadAttentionValuesAndMasks(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	mha := identityMHA(t, 1, MultiheadAttentionOptions{}, [2]float32{10, 20})
	defer mha.Close()
	q := k.f32([]float32{7, -3}, 1, 1, 2) // [L=1, N=1, E=2]
	keys := k.f32(make([]float32, 6), 3, 1, 2)
	v := k.f32([]float32{1, 2, 3, 4, 5, 6}, 3, 1, 2)
	// Uniform weights: the mean of the values (3, 4), plus out_proj.bias.
	y := must(mha.ForwardOptional(q, keys, v))
	got, shape := f32s(t, y)
	if !reflect.DeepEqual(shape, []int64{1, 1, 2}) {
		t.Fatalf("shape %v", shape)
	}
	near(t, "mean of the values", got, []float64{13, 24}, 1e-5)
	// The module's bool masks are TRUE where attention is NOT allowed.
	pad := k.bools([]bool{false, false, true}, 1, 3) // [N, S]: key 2 is padding
	near(t, "key padding mask", vals(t, must(mha.ForwardOptional(q, keys, v, pad))), []float64{12, 23}, 1e-5)
	am := k.bools([]bool{true, false, false}, 1, 3) // [L, S]: key 0 hidden
	near(t, "attn mask", vals(t, must(mha.ForwardOptional(q, keys, v, nil, am))), []float64{14, 25}, 1e-5)
	near(t, "both masks", vals(t, must(mha.ForwardOptional(q, keys, v, pad, am))), []float64{13, 24}, 1e-5)
	// A float attn_mask is added: -Inf on key 0, ln 3 on key 2: weights 0, 1/4, 3/4.
	fm := k.f32([]float32{float32(math.Inf(-1)), 0, float32(math.Log(3))}, 1, 3)
	near(t, "float attn mask", vals(t, must(mha.ForwardOptional(q, keys, v, nil, fm))), []float64{14.5, 25.5}, 1e-5)
	// A nil value is the key: keys (= values) all zero give 0, plus the bias.
	near(t, "nil value", vals(t, must(mha.ForwardOptional(q, keys, nil))), []float64{10, 20}, 1e-6)
	// Two heads of width 1: equal keys still give the mean.
	two := identityMHA(t, 2, MultiheadAttentionOptions{}, [2]float32{})
	defer two.Close()
	near(t, "two heads", vals(t, must(two.ForwardOptional(q, keys, v))), []float64{3, 4}, 1e-5)
	// Dropout acts in training mode only.
	drop := identityMHA(t, 1, MultiheadAttentionOptions{Dropout: 0.5}, [2]float32{10, 20})
	defer drop.Close()
	MustOK(drop.Eval())
	near(t, "dropout in eval", vals(t, must(drop.ForwardOptional(q, keys, v))), []float64{13, 24}, 1e-5)

	// Self-attention: one input is the query passed three times, and trailing nils
	// change nothing.
	m := must(MultiheadAttention(4, 2, MultiheadAttentionOptions{}))
	defer m.Close()
	x := k.randn(5, 2, 4)
	one := vals(t, must(m.Forward(x)))
	for what, y := range map[string]*Tensor{
		"query three times": must(m.Forward(x, x, x)),
		"trailing nils":     must(m.ForwardOptional(x, nil, nil, nil, nil)),
		"ForwardOptional":   must(m.ForwardOptional(x)),
	} {
		if got := vals(t, y); !reflect.DeepEqual(got, one) {
			t.Fatalf("%s: %v, want %v", what, got, one)
		}
	}

	// A padded key hides its position: changing it leaves the other outputs alone.
	data := make([]float32, 12)
	for i := range data {
		data[i] = float32(math.Sin(float64(i) * 0.37))
	}
	moved := append([]float32(nil), data...)
	copy(moved[8:], []float32{5, -5, 2, 9}) // position 2 of 3
	a, b := k.f32(data, 3, 1, 4), k.f32(moved, 3, 1, 4)
	ya := vals(t, must(m.ForwardOptional(a, nil, nil, pad)))
	yb := vals(t, must(m.ForwardOptional(b, nil, nil, pad)))
	near(t, "padded key hidden", yb[:8], ya[:8], 1e-6)
}

func TestMultiheadAttentionErrors(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	_, err := MultiheadAttention(6, 4, MultiheadAttentionOptions{})
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "num_heads") {
		t.Fatalf("embed_dim not divisible: %v", err)
	}
	_, err = MultiheadAttention(4, 1, MultiheadAttentionOptions{Dropout: 1.5})
	wantCode(t, err, ErrInvalidArgument)
	_, err = MultiheadAttention(4, 1, MultiheadAttentionOptions{DType: Int64})
	wantCode(t, err, ErrDTypeMismatch)

	m := must(MultiheadAttention(4, 2, MultiheadAttentionOptions{}))
	defer m.Close()
	// A query of the wrong width: ErrShapeMismatch naming the module and the shape.
	_, err = m.Forward(k.randn(3, 1, 5))
	if e := wantCode(t, err, ErrShapeMismatch); !strings.Contains(e.Msg, "MultiheadAttention") || !strings.Contains(e.Msg, "[3, 1, 5]") {
		t.Fatalf("wrong width: %v", err)
	}
	x := k.randn(3, 1, 4)
	_, err = m.ForwardOptional(x, nil, nil, k.bools([]bool{false, false, false, false}, 1, 4))
	wantCode(t, err, ErrShapeMismatch)
	_, err = m.ForwardOptional(x, nil, nil, nil, k.keep(must(Zeros([]int64{3, 3}, Float64, CPU(0)))))
	wantCode(t, err, ErrDTypeMismatch)
	// No query, six inputs, none at all; Forward refuses a nil before the library.
	_, err = m.ForwardOptional(nil, x)
	wantCode(t, err, ErrInvalidArgument)
	_, err = m.ForwardOptional(x, x, x, x, x, x)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "1 to 5") {
		t.Fatalf("six inputs: %v", err)
	}
	_, err = m.ForwardOptional()
	wantCode(t, err, ErrInvalidArgument)
	_, err = m.Forward(x, nil)
	wantCode(t, err, ErrInvalidArgument)
	// A module without optional inputs refuses a nil; a closed input is ErrClosed.
	lin := must(Linear(4, 4, LinearOptions{}))
	defer lin.Close()
	_, err = lin.ForwardOptional(x, nil)
	wantCode(t, err, ErrInvalidArgument)
	closed := must(Zeros([]int64{3, 1, 4}, Float32, CPU(0)))
	closed.Close()
	_, err = m.ForwardOptional(x, closed)
	wantCode(t, err, ErrClosed)
	var nilModule *Module
	_, err = nilModule.ForwardOptional(x)
	wantCode(t, err, ErrInvalidArgument)
}

// mustPair returns a and b, and panics on err (as must, for two results).
func mustPair(a, b *Tensor, err error) (*Tensor, *Tensor) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// softmax of xs, computed here by hand (-Inf gives 0).
func softmax(xs ...float64) []float64 {
	top := math.Inf(-1)
	for _, x := range xs {
		top = math.Max(top, x)
	}
	out := make([]float64, len(xs))
	sum := 0.0
	for i, x := range xs {
		out[i] = math.Exp(x - top)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// checkTensor fails unless x has shape and the values want within tol; it closes x.
func checkTensor(t *testing.T, what string, x *Tensor, shape []int64, want []float64, tol float64) {
	t.Helper()
	got, s := f32s(t, x)
	if !reflect.DeepEqual(s, shape) {
		t.Fatalf("%s: shape %v, want %v", what, s, shape)
	}
	near(t, what, got, want, tol)
}

// AttentionWithWeights against weights computed by hand: with identity projections the
// weights are softmax(q.k_j / sqrt(headDim) + mask) of the raw query and keys, and the
// output their mix of the values, plus out_proj.bias.
func TestMultiheadAttentionWithWeightsByHand(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	mha := identityMHA(t, 1, MultiheadAttentionOptions{}, [2]float32{10, 20})
	defer mha.Close()
	q := k.f32([]float32{1, 2}, 1, 1, 2)                // [L=1, N=1, E=2]
	keys := k.f32([]float32{0, 0, 1, 0, 0, 1}, 3, 1, 2) // [S=3, N=1, E=2]
	v := k.f32([]float32{1, 2, 3, 4, 5, 6}, 3, 1, 2)    // value rows (1, 2), (3, 4), (5, 6)
	mix := func(w []float64, rows [3][2]float64, bias [2]float64) []float64 {
		out := []float64{bias[0], bias[1]}
		for j, r := range rows {
			out[0] += w[j] * r[0]
			out[1] += w[j] * r[1]
		}
		return out
	}
	vrows := [3][2]float64{{1, 2}, {3, 4}, {5, 6}}
	bias := [2]float64{10, 20}
	r2 := math.Sqrt2
	w := softmax(0, 1/r2, 2/r2) // q.k_j = 0, 1, 2 over sqrt(2)

	out, weights := mustPair(mha.AttentionWithWeights(q, keys, v, nil, nil, true))
	checkTensor(t, "output", out, []int64{1, 1, 2}, mix(w, vrows, bias), 1e-5)
	checkTensor(t, "averaged weights [N, L, S]", weights, []int64{1, 1, 3}, w, 1e-6)
	// One head: the per-head weights are the same, [N, H, L, S].
	out, weights = mustPair(mha.AttentionWithWeights(q, keys, v, nil, nil, false))
	checkTensor(t, "output, per head", out, []int64{1, 1, 2}, mix(w, vrows, bias), 1e-5)
	checkTensor(t, "per-head weights [N, H, L, S]", weights, []int64{1, 1, 1, 3}, w, 1e-6)
	// The output is exactly ForwardOptional's.
	out, weights = mustPair(mha.AttentionWithWeights(q, keys, v, nil, nil, true))
	weights.Close()
	if a, b := vals(t, out), vals(t, must(mha.ForwardOptional(q, keys, v))); !reflect.DeepEqual(a, b) {
		t.Fatalf("output %v, ForwardOptional's %v", a, b)
	}

	// Masks (bool: TRUE where attention is NOT allowed): a masked key weighs exactly 0.
	pad := k.bools([]bool{false, false, true}, 1, 3) // [N, S]: key 2 is padding
	wp := append(softmax(0, 1/r2), 0)
	out, weights = mustPair(mha.AttentionWithWeights(q, keys, v, pad, nil, true))
	checkTensor(t, "key padding mask: output", out, []int64{1, 1, 2}, mix(wp, vrows, bias), 1e-5)
	checkTensor(t, "key padding mask: weights", weights, []int64{1, 1, 3}, wp, 1e-6)
	am := k.bools([]bool{true, false, false}, 1, 3) // [L, S]: key 0 hidden
	wa := append([]float64{0}, softmax(1/r2, 2/r2)...)
	out, weights = mustPair(mha.AttentionWithWeights(q, keys, v, nil, am, true))
	out.Close()
	checkTensor(t, "bool attn mask: weights", weights, []int64{1, 1, 3}, wa, 1e-6)
	// A float attn_mask is added to the scores: ln 3 on key 0.
	fm := k.f32([]float32{float32(math.Log(3)), 0, 0}, 1, 3)
	wf := softmax(math.Log(3), 1/r2, 2/r2)
	out, weights = mustPair(mha.AttentionWithWeights(q, keys, v, nil, fm, true))
	checkTensor(t, "float attn mask: output", out, []int64{1, 1, 2}, mix(wf, vrows, bias), 1e-5)
	checkTensor(t, "float attn mask: weights", weights, []int64{1, 1, 3}, wf, 1e-6)

	// A nil value is the key; nil key and value are the query (one key: weight 1).
	krows := [3][2]float64{{0, 0}, {1, 0}, {0, 1}}
	out, weights = mustPair(mha.AttentionWithWeights(q, keys, nil, nil, nil, true))
	checkTensor(t, "nil value: output", out, []int64{1, 1, 2}, mix(w, krows, bias), 1e-5)
	checkTensor(t, "nil value: weights", weights, []int64{1, 1, 3}, w, 1e-6)
	out, weights = mustPair(mha.AttentionWithWeights(q, nil, nil, nil, nil, true))
	checkTensor(t, "self-attention: output", out, []int64{1, 1, 2}, []float64{11, 22}, 1e-5)
	checkTensor(t, "self-attention: weights", weights, []int64{1, 1, 1}, []float64{1}, 1e-6)

	// The weights are [N, L, S], batch first, although the query is [L, N, E]: query
	// (l=0, n=1) is (1, 2), the others zero (uniform weights u).
	u := []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}
	q22 := k.f32([]float32{0, 0, 1, 2, 0, 0, 0, 0}, 2, 2, 2) // [L=2, N=2, E=2]
	k2 := k.f32([]float32{0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1}, 3, 2, 2)
	out, weights = mustPair(mha.AttentionWithWeights(q22, k2, k2, nil, nil, true))
	out.Close()
	checkTensor(t, "[N, L, S] layout", weights, []int64{2, 2, 3}, concat(u, u, w, u), 1e-6)
	// Unbatched: query [L, E], weights [L, S].
	q2 := k.f32([]float32{0, 0, 1, 2}, 2, 2)
	k1 := k.f32([]float32{0, 0, 1, 0, 0, 1}, 3, 2)
	out, weights = mustPair(mha.AttentionWithWeights(q2, k1, k1, nil, nil, true))
	checkTensor(t, "unbatched: output", out, []int64{2, 2}, concat(mix(u, krows, bias), mix(w, krows, bias)), 1e-5)
	checkTensor(t, "unbatched: weights [L, S]", weights, []int64{2, 3}, concat(u, w), 1e-6)

	// Two heads of width 1 (scale 1): head 0 scores q0 * k_j0 = 0, 1, 0, head 1
	// q1 * k_j1 = 0, 0, 2. Per head [N, H, L, S]; averaged, their mean.
	two := identityMHA(t, 2, MultiheadAttentionOptions{}, [2]float32{})
	defer two.Close()
	w0, w1 := softmax(0, 1, 0), softmax(0, 0, 2)
	mean := make([]float64, 3)
	for j := range mean {
		mean[j] = (w0[j] + w1[j]) / 2
	}
	heads := []float64{w0[0]*1 + w0[1]*3 + w0[2]*5, w1[0]*2 + w1[1]*4 + w1[2]*6} // head h mixes value column h
	out, weights = mustPair(two.AttentionWithWeights(q, keys, v, nil, nil, false))
	checkTensor(t, "two heads: output", out, []int64{1, 1, 2}, heads, 1e-5)
	checkTensor(t, "two heads: per-head weights", weights, []int64{1, 2, 1, 3}, concat(w0, w1), 1e-6)
	out, weights = mustPair(two.AttentionWithWeights(q, keys, v, nil, nil, true))
	checkTensor(t, "two heads: output, averaged", out, []int64{1, 1, 2}, heads, 1e-5)
	checkTensor(t, "two heads: averaged weights", weights, []int64{1, 1, 3}, mean, 1e-6)
	out, weights = mustPair(two.AttentionWithWeights(k.f32([]float32{1, 2}, 1, 2), k1, k1, nil, nil, false))
	out.Close()
	checkTensor(t, "two heads, unbatched: [H, L, S]", weights, []int64{2, 1, 3}, concat(w0, w1), 1e-6)

	// Dropout in training mode (a new module's): the weights are returned after dropout,
	// each 1/8 zeroed or doubled to 1/4, and the output is the mix of exactly those.
	drop := identityMHA(t, 1, MultiheadAttentionOptions{Dropout: 0.5}, [2]float32{10, 20})
	defer drop.Close()
	zeros8 := k.f32(make([]float32, 16), 8, 1, 2) // equal keys: weights 1/8
	vdata := make([]float32, 16)
	for i := range vdata {
		vdata[i] = float32(i + 1)
	}
	v8 := k.f32(vdata, 8, 1, 2)
	out, weights = mustPair(drop.AttentionWithWeights(q, zeros8, v8, nil, nil, true))
	wd := vals(t, weights)
	want := []float64{10, 20}
	for j, x := range wd {
		if math.Abs(x) > 1e-7 && math.Abs(x-0.25) > 1e-6 {
			t.Fatalf("dropout weights %v: want each 0 or 1/4", wd)
		}
		want[0] += x * float64(vdata[2*j])
		want[1] += x * float64(vdata[2*j+1])
	}
	checkTensor(t, "dropout: output mixes the returned weights", out, []int64{1, 1, 2}, want, 1e-4)
	MustOK(drop.Eval())
	out, weights = mustPair(drop.AttentionWithWeights(q, zeros8, v8, nil, nil, true))
	out.Close()
	checkTensor(t, "dropout in eval", weights, []int64{1, 1, 8}, []float64{0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125}, 1e-6)

	// The weights are part of the autograd graph: sum(weights^2) reaches the query.
	qg := k.f32([]float32{1, 2}, 1, 1, 2)
	MustOK(qg.SetRequiresGrad(true))
	out, weights = mustPair(mha.AttentionWithWeights(qg, keys, v, nil, nil, true))
	out.Close()
	k.keep(weights)
	sq := k.keep(must(weights.Mul(weights)))
	loss := k.keep(must(sq.Sum()))
	MustOK(loss.Backward(nil))
	g, gs := f32s(t, must(qg.Grad()))
	if !reflect.DeepEqual(gs, []int64{1, 1, 2}) || (g[0] == 0 && g[1] == 0) {
		t.Fatalf("query gradient %v %v through the weights", g, gs)
	}
}

// concat joins float64 slices.
func concat(xs ...[]float64) []float64 {
	var out []float64
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// AttentionWithWeights on random modules: the shapes for every layout, rows that sum to
// 1, the averaged weights the mean of the per-head ones, the output Forward's.
func TestMultiheadAttentionWithWeightsShapes(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	m := must(MultiheadAttention(8, 2, MultiheadAttentionOptions{}))
	defer m.Close()
	q := k.randn(3, 4, 8)  // [L, N, E]
	kv := k.randn(5, 4, 8) // [S, N, E]
	out, avg := mustPair(m.AttentionWithWeights(q, kv, kv, nil, nil, true))
	if _, s := f32s(t, out); !reflect.DeepEqual(s, []int64{3, 4, 8}) {
		t.Fatalf("output shape %v", s)
	}
	out, per := mustPair(m.AttentionWithWeights(q, kv, kv, nil, nil, false))
	out.Close()
	a, as := f32s(t, avg)
	p, ps := f32s(t, per)
	if !reflect.DeepEqual(as, []int64{4, 3, 5}) || !reflect.DeepEqual(ps, []int64{4, 2, 3, 5}) {
		t.Fatalf("weights shapes %v (averaged), %v (per head)", as, ps)
	}
	for n := 0; n < 4; n++ {
		for l := 0; l < 3; l++ {
			row := 0.0
			for s := 0; s < 5; s++ {
				h0, h1 := p[((n*2+0)*3+l)*5+s], p[((n*2+1)*3+l)*5+s]
				got := a[(n*3+l)*5+s]
				if math.Abs(float64(got)-float64(h0+h1)/2) > 1e-6 {
					t.Fatalf("averaged weight %v, heads %v and %v", got, h0, h1)
				}
				row += float64(got)
			}
			if math.Abs(row-1) > 1e-5 {
				t.Fatalf("a row of weights sums to %v", row)
			}
		}
	}
	// Self-attention with a nil key and value: the output is Forward's.
	out, w := mustPair(m.AttentionWithWeights(q, nil, nil, nil, nil, true))
	if _, s := f32s(t, w); !reflect.DeepEqual(s, []int64{4, 3, 3}) {
		t.Fatalf("self-attention weights shape %v", s)
	}
	if a, b := vals(t, out), vals(t, must(m.Forward(q))); !reflect.DeepEqual(a, b) {
		t.Fatal("the output differs from Forward's")
	}
	// BatchFirst: query [N, L, E]; the weights are [N, L, S] as without it.
	bf := must(MultiheadAttention(8, 4, MultiheadAttentionOptions{BatchFirst: true}))
	defer bf.Close()
	out, w = mustPair(bf.AttentionWithWeights(k.randn(4, 3, 8), k.randn(4, 6, 8), nil, nil, nil, false))
	if _, s := f32s(t, out); !reflect.DeepEqual(s, []int64{4, 3, 8}) {
		t.Fatalf("batch_first output shape %v", s)
	}
	if _, s := f32s(t, w); !reflect.DeepEqual(s, []int64{4, 4, 3, 6}) {
		t.Fatalf("batch_first per-head weights shape %v", s)
	}
	// Float64 modules give float64 weights.
	d := must(MultiheadAttention(4, 1, MultiheadAttentionOptions{DType: Float64, Device: CPU(0)}))
	defer d.Close()
	out, w = mustPair(d.AttentionWithWeights(k.keep(must(Randn([]int64{2, 4}, Float64, CPU(0)))), nil, nil, nil, nil, true))
	out.Close()
	defer w.Close()
	if dt, s := must(w.DType()), must(w.Shape()); dt != Float64 || !reflect.DeepEqual(s, []int64{2, 2}) {
		t.Fatalf("float64 unbatched weights: %v %v", dt, s)
	}
}

func TestMultiheadAttentionWithWeightsErrors(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	x := k.randn(3, 1, 4)
	// A module that is not a MultiheadAttention: ErrInvalidArgument naming its kind.
	lin := must(Linear(4, 4, LinearOptions{}))
	defer lin.Close()
	out, w, err := lin.AttentionWithWeights(x, nil, nil, nil, nil, true)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "Linear") || !strings.Contains(e.Msg, "MultiheadAttention") {
		t.Fatalf("a Linear: %v", err)
	}
	if out != nil || w != nil {
		t.Fatal("results on error")
	}
	layer := must(TransformerEncoderLayer(4, 2, TransformerEncoderLayerOptions{DimFeedforward: 8}))
	defer layer.Close()
	_, _, err = layer.AttentionWithWeights(x, nil, nil, nil, nil, true)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "TransformerEncoderLayer") {
		t.Fatalf("a TransformerEncoderLayer: %v", err)
	}
	// Its self_attn child is one.
	sa := must(layer.Child("self_attn"))
	defer sa.Close()
	out, w = mustPair(sa.AttentionWithWeights(x, nil, nil, nil, nil, true))
	out.Close()
	if _, s := f32s(t, w); !reflect.DeepEqual(s, []int64{1, 3, 3}) {
		t.Fatalf("self_attn weights shape %v", s)
	}

	m := must(MultiheadAttention(4, 2, MultiheadAttentionOptions{}))
	defer m.Close()
	// The forward errors: a query of the wrong width names the module and the shape.
	_, _, err = m.AttentionWithWeights(k.randn(3, 1, 5), nil, nil, nil, nil, true)
	if e := wantCode(t, err, ErrShapeMismatch); !strings.Contains(e.Msg, "MultiheadAttention") || !strings.Contains(e.Msg, "[3, 1, 5]") {
		t.Fatalf("wrong width: %v", err)
	}
	_, _, err = m.AttentionWithWeights(x, nil, nil, k.bools([]bool{false, false, false, false}, 1, 4), nil, true)
	wantCode(t, err, ErrShapeMismatch)
	_, _, err = m.AttentionWithWeights(x, nil, nil, nil, k.keep(must(Zeros([]int64{3, 3}, Float64, CPU(0)))), false)
	wantCode(t, err, ErrDTypeMismatch)
	// nil query or module; closed module or input.
	_, _, err = m.AttentionWithWeights(nil, x, x, nil, nil, true)
	wantCode(t, err, ErrInvalidArgument)
	var nilModule *Module
	_, _, err = nilModule.AttentionWithWeights(x, nil, nil, nil, nil, true)
	wantCode(t, err, ErrInvalidArgument)
	closed := must(Zeros([]int64{3, 1, 4}, Float32, CPU(0)))
	closed.Close()
	for _, in := range [][5]*Tensor{{closed}, {x, closed}, {x, x, closed}, {x, nil, nil, closed}, {x, nil, nil, nil, closed}} {
		_, _, err = m.AttentionWithWeights(in[0], in[1], in[2], in[3], in[4], true)
		wantCode(t, err, ErrClosed)
	}
	gone := must(MultiheadAttention(4, 2, MultiheadAttentionOptions{}))
	MustOK(gone.Close())
	_, _, err = gone.AttentionWithWeights(x, nil, nil, nil, nil, true)
	wantCode(t, err, ErrClosed)
}

func TestTransformerEncoderLayer(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	layer := must(TransformerEncoderLayer(4, 2, TransformerEncoderLayerOptions{DimFeedforward: 6}))
	defer layer.Close()
	if kind := must(layer.Kind()); kind != "TransformerEncoderLayer" {
		t.Fatalf("kind %q", kind)
	}
	want := []string{"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
		"self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
		"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}
	if got := stateNames(t, layer); !reflect.DeepEqual(got, want) {
		t.Fatalf("state dict %v", got)
	}
	cs := must(layer.Children())
	var kids []string
	for _, c := range cs {
		kids = append(kids, c.Name)
	}
	cs.Close()
	if !reflect.DeepEqual(kids, []string{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2"}) {
		t.Fatalf("children %v", kids)
	}
	// PyTorch's default dim_feedforward is 2048.
	dflt := must(TransformerEncoderLayer(4, 1, TransformerEncoderLayerOptions{}))
	defer dflt.Close()
	lin2 := must(dflt.Child("linear2"))
	_, shapes := namedOf(t, must(lin2.Parameters()))
	lin2.Close()
	if !reflect.DeepEqual(shapes[0], []int64{4, 2048}) {
		t.Fatalf("default linear2.weight %v", shapes[0])
	}

	// Zeroed Linears: attention and feed-forward add nothing. Post-norm: the layer is
	// norm2(norm1(x)); [1, 2, 3, 6] has mean 3 and biased variance 3.5.
	x := k.f32([]float32{1, 2, 3, 6}, 1, 1, 4)
	var normed []float64
	for _, v := range []float64{1, 2, 3, 6} {
		normed = append(normed, (v-3)/math.Sqrt(3.5+1e-5))
	}
	zero := 0.0
	for _, act := range []Activation{ActivationReLU, ActivationGELU} {
		post := must(TransformerEncoderLayer(4, 2, TransformerEncoderLayerOptions{DimFeedforward: 6, Activation: act, Dropout: &zero}))
		zeroLinears(t, post)
		near(t, "post-norm "+act.String(), vals(t, must(post.Forward(x))), normed, 1e-4)
		post.Close()
	}
	// Pre-norm: x + sa(norm1(x)) + ff(norm2(...)) = x.
	pre := must(TransformerEncoderLayer(4, 2, TransformerEncoderLayerOptions{DimFeedforward: 6, NormFirst: true}))
	defer pre.Close()
	MustOK(pre.Eval())
	zeroLinears(t, pre)
	near(t, "pre-norm", vals(t, must(pre.Forward(x))), []float64{1, 2, 3, 6}, 1e-6)
	// LayerNormEps reaches the norms: eps 3.5 doubles the root of norm1's variance.
	eps := must(TransformerEncoderLayer(4, 2, TransformerEncoderLayerOptions{DimFeedforward: 6, Dropout: &zero, LayerNormEps: 3.5}))
	defer eps.Close()
	zeroLinears(t, eps)
	var twice []float64
	for _, v := range []float64{1, 2, 3, 6} {
		once := (v - 3) / math.Sqrt(7) // variance of once: 0.5
		twice = append(twice, once/2)  // once / sqrt(0.5 + 3.5)
	}
	near(t, "layer norm eps", vals(t, must(eps.Forward(x))), twice, 1e-5)

	// Masks are the module's (true = NOT attended): a causal mask keeps a later position
	// from the earlier outputs, a padding mask keeps a padded one from the others.
	l := must(TransformerEncoderLayer(4, 2, TransformerEncoderLayerOptions{DimFeedforward: 8, BatchFirst: true}))
	defer l.Close()
	MustOK(l.Eval())
	data := make([]float32, 12)
	for i := range data {
		data[i] = float32(math.Cos(float64(i) * 0.71))
	}
	moved := append([]float32(nil), data...)
	copy(moved[8:], []float32{3, -1, 0.5, 4}) // position 2 of 3

	a, b := k.f32(data, 1, 3, 4), k.f32(moved, 1, 3, 4) // [N, S, E]
	causal := k.bools([]bool{false, true, true, false, false, true, false, false, false}, 3, 3)
	pad := k.bools([]bool{false, false, true}, 1, 3)
	for what, masks := range map[string][2]*Tensor{"src_mask": {causal, nil}, "src_key_padding_mask": {nil, pad}} {
		ya := vals(t, must(l.ForwardOptional(a, masks[0], masks[1])))
		yb := vals(t, must(l.ForwardOptional(b, masks[0], masks[1])))
		near(t, what, yb[:8], ya[:8], 1e-5)
		if math.Abs(ya[8]-yb[8]) < 1e-3 {
			t.Fatalf("%s: position 2 itself did not change", what)
		}
	}
	ya, yb := vals(t, must(l.Forward(a))), vals(t, must(l.Forward(b)))
	changed := false
	for i := 0; i < 8; i++ {
		changed = changed || math.Abs(ya[i]-yb[i]) > 1e-4
	}
	if !changed {
		t.Fatal("without a mask position 2 does not reach the others")
	}

	// Errors.
	_, err := TransformerEncoderLayer(6, 4, TransformerEncoderLayerOptions{})
	wantCode(t, err, ErrInvalidArgument)
	bad := -0.1
	for _, o := range []TransformerEncoderLayerOptions{{DimFeedforward: -1}, {Dropout: &bad}, {LayerNormEps: -1}, {Activation: 7}} {
		_, err := TransformerEncoderLayer(4, 2, o)
		wantCode(t, err, ErrInvalidArgument)
	}
	_, err = l.Forward(k.randn(1, 3, 5))
	if e := wantCode(t, err, ErrShapeMismatch); !strings.Contains(e.Msg, "MultiheadAttention") {
		t.Fatalf("wrong width: %v", err)
	}
	_, err = l.ForwardOptional(a, nil, nil, a)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "1 to 3") {
		t.Fatalf("four inputs: %v", err)
	}
}

func TestTransformerEncoder(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	zero := 0.0
	opts := TransformerEncoderLayerOptions{DimFeedforward: 6, Dropout: &zero}
	l0, l1 := must(TransformerEncoderLayer(4, 2, opts)), must(TransformerEncoderLayer(4, 2, opts))
	norm := must(LayerNorm([]int64{4}, LayerNormOptions{}))
	enc := must(TransformerEncoder([]*Module{l0, l1}, norm)) // takes l0, l1 and norm over
	defer enc.Close()
	if kind := must(enc.Kind()); kind != "TransformerEncoder" {
		t.Fatalf("kind %q", kind)
	}
	names := stateNames(t, enc)
	if len(names) != 2*12+2 || names[0] != "layers.0.self_attn.in_proj_weight" ||
		names[12] != "layers.1.self_attn.in_proj_weight" || names[23] != "layers.1.norm2.bias" ||
		!reflect.DeepEqual(names[24:], []string{"norm.weight", "norm.bias"}) {
		t.Fatalf("state dict %v", names)
	}
	// The layers are the modules passed in (not copies), each with its own parameters.
	sd := must(enc.StateDict())
	defer sd.Close()
	w0 := k.keep(must(sd.Get("layers.0.self_attn.in_proj_weight")))
	w1 := k.keep(must(sd.Get("layers.1.self_attn.in_proj_weight")))
	mine := must(l0.Parameters())
	defer mine.Close()
	if !must(w0.SharesStorage(mine[0].Tensor)) || must(w0.SharesStorage(w1)) {
		t.Fatal("layers.0 is not l0's own module, or shares layers.1's weight")
	}

	// Zeroed Linears: each layer is two LayerNorms, then the final norm.
	zeroLinears(t, enc)
	x := k.f32([]float32{1, 2, 3, 6, 1, 2, 3, 6}, 2, 1, 4)
	var want []float64
	for _, v := range []float64{1, 2, 3, 6, 1, 2, 3, 6} {
		want = append(want, (v-3)/math.Sqrt(3.5))
	}
	got, shape := f32s(t, must(enc.Forward(x)))
	if !reflect.DeepEqual(shape, []int64{2, 1, 4}) {
		t.Fatalf("shape %v", shape)
	}
	near(t, "encoder", got, want, 1e-3)
	// Masks pass through to every layer.
	causal := k.bools([]bool{false, true, false, false}, 2, 2)
	pad := k.bools([]bool{false, true}, 1, 2)
	near(t, "encoder with masks", vals(t, must(enc.ForwardOptional(x, causal, pad))), want, 1e-3)
	_, err := enc.ForwardOptional(x, nil, k.bools([]bool{false, false, false}, 1, 3))
	wantCode(t, err, ErrShapeMismatch)

	// No final norm.
	plain := must(TransformerEncoder([]*Module{must(TransformerEncoderLayer(4, 2, opts))}, nil))
	defer plain.Close()
	for _, n := range stateNames(t, plain) {
		if !strings.HasPrefix(n, "layers.0.") {
			t.Fatalf("an encoder without norm has %q", n)
		}
	}

	// Errors, after which the caller still owns the modules.
	_, err = TransformerEncoder(nil, nil)
	wantCode(t, err, ErrInvalidArgument)
	l2 := must(TransformerEncoderLayer(4, 2, opts))
	defer l2.Close()
	_, err = TransformerEncoder([]*Module{l2, l2}, nil)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "same module") {
		t.Fatalf("a layer twice: %v", err)
	}
	relu := must(ReLU())
	defer relu.Close()
	_, err = TransformerEncoder([]*Module{relu}, nil)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "ReLU") {
		t.Fatalf("a ReLU as a layer: %v", err)
	}
	_, err = TransformerEncoder([]*Module{l2, nil}, nil)
	wantCode(t, err, ErrInvalidArgument)
	if _, s := f32s(t, must(l2.Forward(x))); !reflect.DeepEqual(s, []int64{2, 1, 4}) {
		t.Fatal("l2 unusable after the failed constructions")
	}
}

// Forward from several goroutines at once on one encoder gives the serial result.
func TestTransformerEncoderConcurrentForward(t *testing.T) {
	noLeaks(t)
	k := newTensors(t)
	enc := must(TransformerEncoder([]*Module{must(TransformerEncoderLayer(4, 2, TransformerEncoderLayerOptions{DimFeedforward: 8}))}, nil))
	defer enc.Close()
	MustOK(enc.Eval())
	x := k.randn(3, 2, 4)
	pad := k.bools([]bool{false, false, true, false, false, false}, 2, 3)
	want := vals(t, must(enc.ForwardOptional(x, nil, pad)))
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			y, err := enc.ForwardOptional(x, nil, pad)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer y.Close()
			got, err := ToSlice[float32](y)
			if err != nil {
				errs <- err.Error()
				return
			}
			for j := range got {
				if float64(got[j]) != want[j] {
					errs <- "a concurrent forward differs"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

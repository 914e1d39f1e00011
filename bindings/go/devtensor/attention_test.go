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
	_ func(*Module, ...*Tensor) (*Tensor, error)                          = (*Module).ForwardOptional
	_ func(*Tensor, *Tensor, *Tensor, *Tensor, bool) (*Tensor, error)     = (*Tensor).ScaledDotProductAttention
	_ func(int64, int64, MultiheadAttentionOptions) (*Module, error)      = MultiheadAttention
	_ func(int64, int64, TransformerEncoderLayerOptions) (*Module, error) = TransformerEncoderLayer
	_ func([]*Module, *Module) (*Module, error)                           = TransformerEncoder
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

package devtensor

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// Compile checks of the normalisation and embedding signatures.
var (
	_ func(int64, BatchNormOptions) (*Module, error)                                       = BatchNorm1d
	_ func(int64, BatchNormOptions) (*Module, error)                                       = BatchNorm2d
	_ func([]int64, LayerNormOptions) (*Module, error)                                     = LayerNorm
	_ func(int64, int64, GroupNormOptions) (*Module, error)                                = GroupNorm
	_ func(int64, int64, EmbeddingOptions) (*Module, error)                                = Embedding
	_ func(*Tensor, *Tensor, *Tensor, *Tensor, *Tensor, BatchNormOptions) (*Tensor, error) = (*Tensor).BatchNorm
	_ func(*Tensor, []int64, *Tensor, *Tensor, LayerNormOptions) (*Tensor, error)          = (*Tensor).LayerNorm
	_ func(*Tensor, int64, *Tensor, *Tensor, GroupNormOptions) (*Tensor, error)            = (*Tensor).GroupNorm
	_ func(*Tensor, *Tensor, EmbeddingOptions) (*Tensor, error)                            = (*Tensor).Embedding
)

// near fails unless got and want have the same length and agree within tol.
func near[T float32 | float64](t *testing.T, what string, got []T, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > tol {
			t.Fatalf("%s: %v, want %v (within %g)", what, got, want, tol)
		}
	}
}

// namedOf returns the names and shapes of ns, and closes ns.
func namedOf(t *testing.T, ns NamedTensors) ([]string, [][]int64) {
	t.Helper()
	defer ns.Close()
	var names []string
	var shapes [][]int64
	for _, n := range ns {
		names = append(names, n.Name)
		shapes = append(shapes, must(n.Tensor.Shape()))
	}
	return names, shapes
}

// buffer returns the values of m's buffer name as float64s (num_batches_tracked: int64).
func buffer(t *testing.T, m *Module, name string) []float64 {
	t.Helper()
	bs := must(m.Buffers())
	defer bs.Close()
	for _, b := range bs {
		if b.Name != name {
			continue
		}
		x := must(b.Tensor.ToDType(Float64))
		defer x.Close()
		return must(ToSlice[float64](x))
	}
	t.Fatalf("no buffer %q", name)
	return nil
}

// A BatchNorm2d step by hand. x [N=2, C=2, 1, 1]: channel 0 holds {0, 2} (mean 1, biased
// variance 1, unbiased 2), channel 1 {10, 14} (mean 12, biased variance 4, unbiased 8).
func TestBatchNorm2dTrainingAndEval(t *testing.T) {
	noLeaks(t)
	bn := must(BatchNorm2d(2, BatchNormOptions{}))
	defer bn.Close()
	names, shapes := namedOf(t, must(bn.Parameters()))
	if !reflect.DeepEqual(names, []string{"weight", "bias"}) || !reflect.DeepEqual(shapes, [][]int64{{2}, {2}}) {
		t.Fatalf("parameters %v %v", names, shapes)
	}
	names, shapes = namedOf(t, must(bn.Buffers()))
	if !reflect.DeepEqual(names, []string{"running_mean", "running_var", "num_batches_tracked"}) ||
		!reflect.DeepEqual(shapes, [][]int64{{2}, {2}, {}}) {
		t.Fatalf("buffers %v %v", names, shapes)
	}
	if k := must(bn.Kind()); k != "BatchNorm2d" {
		t.Fatalf("kind %q", k)
	}
	// The buffer tensors taken before the step see its update (they are the module's).
	bs := must(bn.Buffers())
	defer bs.Close()

	x := must(FromSlice([]float32{0, 10, 2, 14}, []int64{2, 2, 1, 1}, CPU(0)))
	defer x.Close()
	y := must(bn.Forward(x)) // training mode: a new module trains, as in PyTorch
	got, shape := f32s(t, y)
	// (x - mean) / sqrt(var + 1e-5): -1, +1 per channel (0.999995 and 0.99999875)
	near(t, "training output", got, []float64{-1, -1, 1, 1}, 1e-4)
	if !reflect.DeepEqual(shape, []int64{2, 2, 1, 1}) {
		t.Fatalf("shape %v", shape)
	}
	// running = 0.9 * running + 0.1 * batch (the variance unbiased)
	near(t, "running_mean", buffer(t, bn, "running_mean"), []float64{0.1, 1.2}, 1e-6)
	near(t, "running_var", buffer(t, bn, "running_var"), []float64{0.9 + 0.1*2, 0.9 + 0.1*8}, 1e-6)
	if n := buffer(t, bn, "num_batches_tracked"); !reflect.DeepEqual(n, []float64{1}) {
		t.Fatalf("num_batches_tracked %v", n)
	}
	if v := must(ToSlice[float32](bs[0].Tensor)); math.Abs(float64(v[1])-1.2) > 1e-6 {
		t.Fatalf("a running_mean taken before the step: %v", v)
	}

	// Eval mode normalises with the running statistics and updates nothing.
	MustOK(bn.Eval())
	got, _ = f32s(t, must(bn.Forward(x)))
	near(t, "eval output", got, []float64{
		(0 - 0.1) / math.Sqrt(1.1+1e-5), (10 - 1.2) / math.Sqrt(1.7+1e-5),
		(2 - 0.1) / math.Sqrt(1.1+1e-5), (14 - 1.2) / math.Sqrt(1.7+1e-5)}, 1e-4)
	if n := buffer(t, bn, "num_batches_tracked"); !reflect.DeepEqual(n, []float64{1}) {
		t.Fatalf("eval changed num_batches_tracked: %v", n)
	}
	near(t, "running_mean after eval", buffer(t, bn, "running_mean"), []float64{0.1, 1.2}, 1e-6)

	// A wrong channel count: ErrShapeMismatch naming the module.
	bad := must(Zeros([]int64{2, 3, 1, 1}, Float32, CPU(0)))
	defer bad.Close()
	if _, err := bn.Forward(bad); !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "BatchNorm2d") {
		t.Fatalf("wrong channel count: %v", err)
	}
	flat := must(Zeros([]int64{2, 2}, Float32, CPU(0)))
	defer flat.Close()
	if _, err := bn.Forward(flat); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("2-d input to BatchNorm2d: %v", err)
	}
}

func TestBatchNormMomentumOptions(t *testing.T) {
	noLeaks(t)
	b1 := must(FromSlice([]float32{0, 2}, []int64{2, 1}, CPU(0))) // mean 1, unbiased variance 2
	defer b1.Close()
	b2 := must(FromSlice([]float32{4, 6}, []int64{2, 1}, CPU(0))) // mean 5, unbiased variance 2
	defer b2.Close()

	// Cumulative (momentum=None): the plain average of the batches' statistics.
	cum := must(BatchNorm1d(1, BatchNormOptions{Cumulative: true}))
	defer cum.Close()
	for _, b := range []*Tensor{b1, b2} {
		must(cum.Forward(b)).Close()
	}
	near(t, "cumulative running_mean", buffer(t, cum, "running_mean"), []float64{(1 + 5) / 2.0}, 1e-6)
	near(t, "cumulative running_var", buffer(t, cum, "running_var"), []float64{2}, 1e-6)
	if n := buffer(t, cum, "num_batches_tracked"); !reflect.DeepEqual(n, []float64{2}) {
		t.Fatalf("num_batches_tracked %v", n)
	}

	// An explicit momentum of 0 (not the default 0.1): the running statistics stay.
	zero, half := 0.0, 0.5
	frozen := must(BatchNorm1d(1, BatchNormOptions{Momentum: &zero}))
	defer frozen.Close()
	must(frozen.Forward(b1)).Close()
	near(t, "momentum 0", append(buffer(t, frozen, "running_mean"), buffer(t, frozen, "running_var")...), []float64{0, 1}, 0)
	m5 := must(BatchNorm1d(1, BatchNormOptions{Momentum: &half}))
	defer m5.Close()
	must(m5.Forward(b1)).Close()
	near(t, "momentum 0.5", append(buffer(t, m5, "running_mean"), buffer(t, m5, "running_var")...), []float64{0.5, 1.5}, 1e-6)

	// No affine, no tracking: no parameters, no buffers, batch statistics in eval too.
	plain := must(BatchNorm1d(1, BatchNormOptions{NoAffine: true, NoTrackRunningStats: true, DType: Float64}))
	defer plain.Close()
	names, _ := namedOf(t, must(plain.Parameters()))
	bnames, _ := namedOf(t, must(plain.Buffers()))
	if len(names) != 0 || len(bnames) != 0 {
		t.Fatalf("NoAffine/NoTrackRunningStats: %v %v", names, bnames)
	}
	MustOK(plain.Eval())
	x := must(FromSlice([]float64{0, 2}, []int64{2, 1}, CPU(0)))
	defer x.Close()
	y := must(plain.Forward(x))
	defer y.Close()
	near(t, "untracked eval", must(ToSlice[float64](y)), []float64{-1, 1}, 1e-4)

	bad := -0.5
	for _, o := range []BatchNormOptions{{Cumulative: true, Momentum: &half}, {Momentum: &bad}, {Training: true}, {Eps: -1}} {
		if _, err := BatchNorm2d(2, o); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("%+v: %v", o, err)
		}
	}
	if _, err := BatchNorm2d(0, BatchNormOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("zero features: %v", err)
	}
	if _, err := BatchNorm1d(2, BatchNormOptions{DType: Int64}); !errors.Is(err, ErrDTypeMismatch) {
		t.Fatalf("int64 parameters: %v", err)
	}
}

func TestBatchNormFunctional(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{0, 10, 2, 14}, []int64{2, 2}, CPU(0)))
	defer x.Close()
	rm := must(Zeros([]int64{2}, Float32, CPU(0)))
	defer rm.Close()
	rv := must(Ones([]int64{2}, Float32, CPU(0)))
	defer rv.Close()
	w := must(FromSlice([]float32{2, 3}, []int64{2}, CPU(0)))
	defer w.Close()
	b := must(FromSlice([]float32{0.5, -1}, []int64{2}, CPU(0)))
	defer b.Close()

	// Training: batch statistics, times weight plus bias; rm and rv updated in place.
	got, _ := f32s(t, must(x.BatchNorm(rm, rv, w, b, BatchNormOptions{Training: true})))
	near(t, "training", got, []float64{-2 + 0.5, -3 - 1, 2 + 0.5, 3 - 1}, 1e-4)
	near(t, "running_mean", toF64(t, rm), []float64{0.1, 1.2}, 1e-6)
	near(t, "running_var", toF64(t, rv), []float64{1.1, 1.7}, 1e-6)

	// Evaluation: the running statistics given, nothing written.
	got, _ = f32s(t, must(x.BatchNorm(rm, rv, nil, nil, BatchNormOptions{})))
	near(t, "eval", got, []float64{
		-0.1 / math.Sqrt(1.1+1e-5), 8.8 / math.Sqrt(1.7+1e-5),
		1.9 / math.Sqrt(1.1+1e-5), 12.8 / math.Sqrt(1.7+1e-5)}, 1e-4)
	near(t, "running_mean after eval", toF64(t, rm), []float64{0.1, 1.2}, 1e-6)

	// Training without running statistics.
	got, _ = f32s(t, must(x.BatchNorm(nil, nil, nil, nil, BatchNormOptions{Training: true})))
	near(t, "training, no running", got, []float64{-1, -1, 1, 1}, 1e-4)

	if _, err := x.BatchNorm(nil, nil, nil, nil, BatchNormOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("eval without running statistics: %v", err)
	}
	if _, err := x.BatchNorm(rm, nil, nil, nil, BatchNormOptions{Training: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("one running tensor: %v", err)
	}
	if _, err := x.BatchNorm(rm, rv, nil, nil, BatchNormOptions{NoAffine: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a module-only option: %v", err)
	}
	three := must(Ones([]int64{3}, Float32, CPU(0)))
	defer three.Close()
	if _, err := x.BatchNorm(nil, nil, three, nil, BatchNormOptions{Training: true}); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("a weight of another size: %v", err)
	}
}

func toF64(t *testing.T, x *Tensor) []float64 {
	t.Helper()
	d := must(x.ToDType(Float64))
	defer d.Close()
	return must(ToSlice[float64](d))
}

func TestLayerNorm(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3}, []int64{1, 3}, CPU(0)))
	defer x.Close()
	// mean 2, biased variance 2/3: (x - 2) / sqrt(2/3 + 1e-5)
	want := []float64{-1.2247357, 0, 1.2247357}
	got, _ := f32s(t, must(x.LayerNorm([]int64{3}, nil, nil, LayerNormOptions{})))
	near(t, "layer_norm", got, want, 1e-5)

	ln := must(LayerNorm([]int64{3}, LayerNormOptions{}))
	defer ln.Close()
	if k := must(ln.Kind()); k != "LayerNorm" {
		t.Fatalf("kind %q", k)
	}
	names, shapes := namedOf(t, must(ln.Parameters()))
	if !reflect.DeepEqual(names, []string{"weight", "bias"}) || !reflect.DeepEqual(shapes, [][]int64{{3}, {3}}) {
		t.Fatalf("parameters %v %v", names, shapes)
	}
	got, _ = f32s(t, must(ln.Forward(x)))
	near(t, "LayerNorm module", got, want, 1e-5)

	// weight and bias: y * w + b
	w := must(FromSlice([]float32{2, 2, 2}, []int64{3}, CPU(0)))
	defer w.Close()
	b := must(FromSlice([]float32{1, 1, 1}, []int64{3}, CPU(0)))
	defer b.Close()
	got, _ = f32s(t, must(x.LayerNorm([]int64{3}, w, b, LayerNormOptions{})))
	near(t, "layer_norm affine", got, []float64{1 - 2*1.2247357, 1, 1 + 2*1.2247357}, 1e-4)

	noBias := must(LayerNorm([]int64{2, 3}, LayerNormOptions{NoBias: true, DType: Float64}))
	defer noBias.Close()
	names, shapes = namedOf(t, must(noBias.Parameters()))
	if !reflect.DeepEqual(names, []string{"weight"}) || !reflect.DeepEqual(shapes, [][]int64{{2, 3}}) {
		t.Fatalf("NoBias: %v %v", names, shapes)
	}
	none := must(LayerNorm([]int64{3}, LayerNormOptions{NoElementwiseAffine: true}))
	defer none.Close()
	if names, _ := namedOf(t, must(none.Parameters())); len(names) != 0 {
		t.Fatalf("NoElementwiseAffine: %v", names)
	}

	x4 := must(Zeros([]int64{2, 4}, Float32, CPU(0)))
	defer x4.Close()
	if _, err := ln.Forward(x4); !errors.Is(err, ErrShapeMismatch) ||
		!strings.Contains(err.Error(), "LayerNorm") {
		t.Fatalf("wrong last dim: %v", err)
	}
	if _, err := LayerNorm(nil, LayerNormOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("empty shape: %v", err)
	}
	if _, err := x.LayerNorm([]int64{3}, nil, nil, LayerNormOptions{NoBias: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a module-only option: %v", err)
	}
}

func TestGroupNorm(t *testing.T) {
	noLeaks(t)
	gn := must(GroupNorm(2, 4, GroupNormOptions{}))
	defer gn.Close()
	if k := must(gn.Kind()); k != "GroupNorm" {
		t.Fatalf("kind %q", k)
	}
	names, shapes := namedOf(t, must(gn.Parameters()))
	if !reflect.DeepEqual(names, []string{"weight", "bias"}) || !reflect.DeepEqual(shapes, [][]int64{{4}, {4}}) {
		t.Fatalf("parameters %v %v", names, shapes)
	}
	x := must(Randn([]int64{2, 4, 3}, Float32, CPU(0)))
	defer x.Close()
	_, shape := f32s(t, must(gn.Forward(x)))
	if !reflect.DeepEqual(shape, []int64{2, 4, 3}) {
		t.Fatalf("shape %v", shape)
	}
	// Two groups of two channels: {1, 3} (mean 2, variance 1), {10, 14} (mean 12, variance 4).
	v := must(FromSlice([]float32{1, 3, 10, 14}, []int64{1, 4}, CPU(0)))
	defer v.Close()
	got, _ := f32s(t, must(v.GroupNorm(2, nil, nil, GroupNormOptions{})))
	near(t, "group_norm", got, []float64{-1, 1, -1, 1}, 1e-4)
	got, _ = f32s(t, must(gn.Forward(v)))
	near(t, "GroupNorm module", got, []float64{-1, 1, -1, 1}, 1e-4)

	plain := must(GroupNorm(1, 3, GroupNormOptions{NoAffine: true}))
	defer plain.Close()
	if names, _ := namedOf(t, must(plain.Parameters())); len(names) != 0 {
		t.Fatalf("NoAffine: %v", names)
	}
	if _, err := GroupNorm(3, 4, GroupNormOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("channels not a multiple of the groups: %v", err)
	}
	if _, err := v.GroupNorm(3, nil, nil, GroupNormOptions{}); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("functional, channels not a multiple: %v", err)
	}
	x6 := must(Zeros([]int64{1, 6}, Float32, CPU(0)))
	defer x6.Close()
	if _, err := gn.Forward(x6); !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "GroupNorm") {
		t.Fatalf("wrong channel count: %v", err)
	}
}

func TestEmbedding(t *testing.T) {
	noLeaks(t)
	w := must(FromSlice([]float32{0, 1, 2, 3, 4, 5}, []int64{3, 2}, CPU(0)))
	defer w.Close()
	idx := must(FromSlice([]int64{2, 0, 1, 1}, []int64{2, 2}, CPU(0)))
	defer idx.Close()
	got, shape := f32s(t, must(idx.Embedding(w, EmbeddingOptions{})))
	if !reflect.DeepEqual(got, []float32{4, 5, 0, 1, 2, 3, 2, 3}) || !reflect.DeepEqual(shape, []int64{2, 2, 2}) {
		t.Fatalf("embedding: %v %v", got, shape)
	}
	idx32 := must(FromSlice([]int32{1}, []int64{1}, CPU(0)))
	defer idx32.Close()
	if got, _ := f32s(t, must(idx32.Embedding(w, EmbeddingOptions{}))); !reflect.DeepEqual(got, []float32{2, 3}) {
		t.Fatalf("int32 indices: %v", got)
	}

	// The module: N(0, 1) rows, the padding row zeroed; it gets no gradient.
	pad := int64(0)
	emb := must(Embedding(5, 3, EmbeddingOptions{PaddingIdx: &pad}))
	defer emb.Close()
	if k := must(emb.Kind()); k != "Embedding" {
		t.Fatalf("kind %q", k)
	}
	ps := must(emb.Parameters())
	defer ps.Close()
	if len(ps) != 1 || ps[0].Name != "weight" || !reflect.DeepEqual(must(ps[0].Tensor.Shape()), []int64{5, 3}) {
		t.Fatalf("parameters %v", ps)
	}
	rows := must(ToSlice[float32](ps[0].Tensor))
	if !reflect.DeepEqual(rows[:3], []float32{0, 0, 0}) {
		t.Fatalf("padding row 0: %v", rows[:3])
	}
	nonzero := 0
	for _, v := range rows[3:] {
		if v != 0 {
			nonzero++
		}
	}
	if nonzero < 10 {
		t.Fatalf("the other rows are not drawn from N(0, 1): %v", rows)
	}
	i := must(FromSlice([]int64{0, 2, 2}, []int64{3}, CPU(0)))
	defer i.Close()
	y := must(emb.Forward(i))
	defer y.Close()
	got, shape = f32s(t, must(y.Narrow(0, 1, 1)))
	if !reflect.DeepEqual(got, rows[6:9]) || !reflect.DeepEqual(shape, []int64{1, 3}) {
		t.Fatalf("module forward: %v %v, want row 2 %v", got, shape, rows[6:9])
	}
	s := must(y.Sum())
	defer s.Close()
	MustOK(s.Backward(nil))
	g := must(ps[0].Tensor.Grad())
	defer g.Close()
	gv := must(ToSlice[float32](g))
	if !reflect.DeepEqual(gv, []float32{0, 0, 0, 0, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("gradient (row 0 padding, row 2 used twice): %v", gv)
	}

	last := int64(-1)
	emb2 := must(Embedding(4, 2, EmbeddingOptions{PaddingIdx: &last, DType: Float64}))
	defer emb2.Close()
	ps2 := must(emb2.Parameters())
	defer ps2.Close()
	if r := must(ToSlice[float64](ps2[0].Tensor)); r[6] != 0 || r[7] != 0 {
		t.Fatalf("padding -1 is the last row: %v", r)
	}

	// Errors: float indices, an index out of range, a padding index outside.
	fidx := must(FromSlice([]float32{0, 1}, []int64{2}, CPU(0)))
	defer fidx.Close()
	if _, err := emb.Forward(fidx); !errors.Is(err, ErrDTypeMismatch) {
		t.Fatalf("float indices to the module: %v", err)
	}
	if _, err := fidx.Embedding(w, EmbeddingOptions{}); !errors.Is(err, ErrDTypeMismatch) {
		t.Fatalf("float indices: %v", err)
	}
	far := must(FromSlice([]int64{3}, []int64{1}, CPU(0)))
	defer far.Close()
	if _, err := far.Embedding(w, EmbeddingOptions{}); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "3") {
		t.Fatalf("index out of range: %v", err)
	}
	five := int64(5)
	if _, err := Embedding(5, 3, EmbeddingOptions{PaddingIdx: &five}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("padding index outside: %v", err)
	}
	if _, err := idx.Embedding(w, EmbeddingOptions{DType: Float64}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a module-only option: %v", err)
	}
	if _, err := idx.Embedding(nil, EmbeddingOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil weight: %v", err)
	}
}

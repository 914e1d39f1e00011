package devtensor

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Compile checks of the convolution and pooling signatures.
var (
	_ func(int64, int64, int64, Conv1dOptions) (*Module, error)                = Conv1d
	_ func(*Tensor, *Tensor, *Tensor, Conv1dOptions) (*Tensor, error)          = (*Tensor).Conv1d
	_ func(int64, int64, [2]int64, Conv2dOptions) (*Module, error)             = Conv2d
	_ func(*Tensor, *Tensor, *Tensor, Conv2dOptions) (*Tensor, error)          = (*Tensor).Conv2d
	_ func([2]int64, MaxPool2dOptions) (*Module, error)                        = MaxPool2d
	_ func([2]int64, AvgPool2dOptions) (*Module, error)                        = AvgPool2d
	_ func([2]int64) (*Module, error)                                          = AdaptiveAvgPool2d
	_ func(int64, int64, [2]int64, ConvTranspose2dOptions) (*Module, error)    = ConvTranspose2d
	_ func(*Tensor, *Tensor, *Tensor, ConvTranspose2dOptions) (*Tensor, error) = (*Tensor).ConvTranspose2d
	_ func(*Tensor, [2]int64, MaxPool2dOptions) (*Tensor, error)               = (*Tensor).MaxPool2d
	_ func(*Tensor, [2]int64, AvgPool2dOptions) (*Tensor, error)               = (*Tensor).AvgPool2d
	_ func(*Tensor, [2]int64) (*Tensor, error)                                 = (*Tensor).AdaptiveAvgPool2d
)

func f32s(t *testing.T, x *Tensor) ([]float32, []int64) {
	t.Helper()
	defer x.Close()
	return must(ToSlice[float32](x)), must(x.Shape())
}

func TestConv2dModule(t *testing.T) {
	conv := must(Conv2d(4, 6, [2]int64{3, 3}, Conv2dOptions{Stride: [2]int64{2, 2}, Padding: [2]int64{1, 1}, Groups: 2}))
	defer conv.Close()
	ps := must(conv.Parameters())
	defer ps.Close()
	if len(ps) != 2 || ps[0].Name != "weight" || ps[1].Name != "bias" {
		t.Fatalf("parameters %v", ps)
	}
	if s := must(ps[0].Tensor.Shape()); !reflect.DeepEqual(s, []int64{6, 2, 3, 3}) {
		t.Fatalf("weight shape %v", s)
	}
	if s := must(ps[1].Tensor.Shape()); !reflect.DeepEqual(s, []int64{6}) {
		t.Fatalf("bias shape %v", s)
	}
	x := must(Randn([]int64{2, 4, 7, 8}, Float32, CPU(0)))
	defer x.Close()
	_, shape := f32s(t, must(conv.Forward(x)))
	if !reflect.DeepEqual(shape, []int64{2, 6, 4, 4}) {
		t.Fatalf("output shape %v", shape)
	}

	same := must(Conv2d(1, 1, [2]int64{3, 3}, Conv2dOptions{PaddingSame: true, NoBias: true, DType: Float64}))
	defer same.Close()
	ps2 := must(same.Parameters())
	defer ps2.Close()
	if len(ps2) != 1 || must(ps2[0].Tensor.DType()) != Float64 {
		t.Fatalf("NoBias/Float64: %v", ps2)
	}
	y := must(Randn([]int64{1, 5, 6}, Float64, CPU(0)))
	defer y.Close()
	o := must(same.Forward(y))
	defer o.Close()
	if s := must(o.Shape()); !reflect.DeepEqual(s, []int64{1, 5, 6}) {
		t.Fatalf("padding same: shape %v", s)
	}

	// a kernel larger than the input: ErrShapeMismatch naming the module
	small := must(Randn([]int64{1, 4, 2, 2}, Float32, CPU(0)))
	defer small.Close()
	big := must(Conv2d(4, 1, [2]int64{3, 3}, Conv2dOptions{}))
	defer big.Close()
	_, err := big.Forward(small)
	if !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "Conv2d") {
		t.Fatalf("kernel larger than the input: %v", err)
	}
	if _, err := Conv2d(1, 1, [2]int64{3, 3}, Conv2dOptions{PaddingSame: true, Stride: [2]int64{2, 2}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("same with a stride: %v", err)
	}
	if _, err := Conv2d(3, 2, [2]int64{3, 3}, Conv2dOptions{Groups: 2}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("groups not dividing: %v", err)
	}
	if _, err := Conv2d(1, 1, [2]int64{3, 3}, Conv2dOptions{PaddingSame: true, Padding: [2]int64{1, 1}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("same with a padding: %v", err)
	}
}

func TestConv2dFunctional(t *testing.T) {
	x := must(FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, []int64{1, 1, 3, 3}, CPU(0)))
	defer x.Close()
	w := must(Ones([]int64{1, 1, 2, 2}, Float32, CPU(0)))
	defer w.Close()
	got, shape := f32s(t, must(x.Conv2d(w, nil, Conv2dOptions{})))
	if !reflect.DeepEqual(got, []float32{12, 16, 24, 28}) || !reflect.DeepEqual(shape, []int64{1, 1, 2, 2}) {
		t.Fatalf("conv2d: %v %v", got, shape)
	}
	b := must(FromSlice([]float32{0.5}, []int64{1}, CPU(0)))
	defer b.Close()
	got, _ = f32s(t, must(x.Conv2d(w, b, Conv2dOptions{Stride: [2]int64{2, 2}, Padding: [2]int64{1, 1}})))
	// padded 5x5, windows at rows/cols 0 and 2: [1, 2+3, 4+7, 5+6+8+9] + 0.5
	if !reflect.DeepEqual(got, []float32{1.5, 5.5, 11.5, 28.5}) {
		t.Fatalf("conv2d stride 2 padding 1 bias: %v", got)
	}
	got, _ = f32s(t, must(x.Conv2d(w, nil, Conv2dOptions{Dilation: [2]int64{2, 2}})))
	if !reflect.DeepEqual(got, []float32{1 + 3 + 7 + 9}) {
		t.Fatalf("conv2d dilation 2: %v", got)
	}
	if _, err := x.Conv2d(w, nil, Conv2dOptions{NoBias: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("NoBias in the functional form: %v", err)
	}
	big := must(Ones([]int64{1, 1, 4, 4}, Float32, CPU(0)))
	defer big.Close()
	if _, err := x.Conv2d(big, nil, Conv2dOptions{}); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("kernel larger than the input: %v", err)
	}
	if _, err := x.Conv2d(nil, nil, Conv2dOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil weight: %v", err)
	}
}

func TestPool2d(t *testing.T) {
	x := must(Arange(0, 16, 1, Float32, CPU(0)))
	defer x.Close()
	x4 := must(x.Reshape(1, 1, 4, 4))
	defer x4.Close()
	k := [2]int64{2, 2}

	got, shape := f32s(t, must(x4.MaxPool2d(k, MaxPool2dOptions{})))
	if !reflect.DeepEqual(got, []float32{5, 7, 13, 15}) || !reflect.DeepEqual(shape, []int64{1, 1, 2, 2}) {
		t.Fatalf("max_pool2d: %v %v", got, shape)
	}
	got, _ = f32s(t, must(x4.AvgPool2d(k, AvgPool2dOptions{})))
	if !reflect.DeepEqual(got, []float32{2.5, 4.5, 10.5, 12.5}) {
		t.Fatalf("avg_pool2d: %v", got)
	}
	got, shape = f32s(t, must(x4.AdaptiveAvgPool2d([2]int64{1, 1})))
	if !reflect.DeepEqual(got, []float32{7.5}) || !reflect.DeepEqual(shape, []int64{1, 1, 1, 1}) {
		t.Fatalf("adaptive_avg_pool2d: %v %v", got, shape)
	}
	// stride 1 and padding 1: the corner window of avg counts the padding (2 zeros) unless ExcludePad
	got, _ = f32s(t, must(x4.AvgPool2d(k, AvgPool2dOptions{Stride: [2]int64{1, 1}, Padding: [2]int64{1, 1}})))
	if len(got) != 25 || got[0] != 0 || got[1] != 0.25 {
		t.Fatalf("avg_pool2d padded: %v", got)
	}
	got, _ = f32s(t, must(x4.AvgPool2d(k, AvgPool2dOptions{Stride: [2]int64{1, 1}, Padding: [2]int64{1, 1}, ExcludePad: true})))
	if got[1] != 0.5 {
		t.Fatalf("avg_pool2d ExcludePad: %v", got)
	}

	mp := must(MaxPool2d(k, MaxPool2dOptions{}))
	defer mp.Close()
	ap := must(AvgPool2d(k, AvgPool2dOptions{}))
	defer ap.Close()
	aap := must(AdaptiveAvgPool2d([2]int64{1, 1}))
	defer aap.Close()
	for _, c := range []struct {
		m    *Module
		want []float32
	}{{mp, []float32{5, 7, 13, 15}}, {ap, []float32{2.5, 4.5, 10.5, 12.5}}, {aap, []float32{7.5}}} {
		got, _ := f32s(t, must(c.m.Forward(x4)))
		if !reflect.DeepEqual(got, c.want) {
			t.Fatalf("pool module: %v, want %v", got, c.want)
		}
		ps := must(c.m.Parameters())
		if len(ps) != 0 {
			t.Fatalf("a pool has parameters: %v", ps)
		}
	}

	big := must(MaxPool2d([2]int64{5, 5}, MaxPool2dOptions{}))
	defer big.Close()
	if _, err := big.Forward(x4); !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "MaxPool2d") {
		t.Fatalf("kernel larger than the input: %v", err)
	}
	if _, err := x4.AvgPool2d([2]int64{5, 5}, AvgPool2dOptions{}); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("avg kernel larger than the input: %v", err)
	}
	if _, err := MaxPool2d([2]int64{0, 2}, MaxPool2dOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("zero kernel: %v", err)
	}
	if _, err := AdaptiveAvgPool2d([2]int64{0, 1}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("zero output size: %v", err)
	}
	if _, err := x4.MaxPool2d(k, MaxPool2dOptions{Padding: [2]int64{2, 2}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("padding over half the kernel: %v", err)
	}
}

func TestConv1dModule(t *testing.T) {
	conv := must(Conv1d(4, 6, 3, Conv1dOptions{Stride: 2, Padding: 1, Groups: 2}))
	defer conv.Close()
	ps := must(conv.Parameters())
	defer ps.Close()
	if len(ps) != 2 || ps[0].Name != "weight" || ps[1].Name != "bias" {
		t.Fatalf("parameters %v", ps)
	}
	if s := must(ps[0].Tensor.Shape()); !reflect.DeepEqual(s, []int64{6, 2, 3}) {
		t.Fatalf("weight shape %v", s)
	}
	if s := must(ps[1].Tensor.Shape()); !reflect.DeepEqual(s, []int64{6}) {
		t.Fatalf("bias shape %v", s)
	}
	x := must(Randn([]int64{2, 4, 8}, Float32, CPU(0)))
	defer x.Close()
	_, shape := f32s(t, must(conv.Forward(x)))
	if !reflect.DeepEqual(shape, []int64{2, 6, 4}) {
		t.Fatalf("output shape %v", shape)
	}
	x2 := must(Randn([]int64{4, 8}, Float32, CPU(0)))
	defer x2.Close()
	if _, shape := f32s(t, must(conv.Forward(x2))); !reflect.DeepEqual(shape, []int64{6, 4}) {
		t.Fatalf("unbatched output shape %v", shape)
	}

	same := must(Conv1d(1, 1, 3, Conv1dOptions{PaddingSame: true, NoBias: true, DType: Float64, Device: CPU(0)}))
	defer same.Close()
	ps2 := must(same.Parameters())
	defer ps2.Close()
	if len(ps2) != 1 || must(ps2[0].Tensor.DType()) != Float64 {
		t.Fatalf("NoBias/Float64: %v", ps2)
	}
	if s := must(ps2[0].Tensor.Shape()); !reflect.DeepEqual(s, []int64{1, 1, 3}) {
		t.Fatalf("weight shape %v", s)
	}
	y := must(Randn([]int64{2, 1, 5}, Float64, CPU(0)))
	defer y.Close()
	o := must(same.Forward(y))
	defer o.Close()
	if s := must(o.Shape()); !reflect.DeepEqual(s, []int64{2, 1, 5}) {
		t.Fatalf("padding same: shape %v", s)
	}

	// a wrong channel count and a kernel larger than the input: ErrShapeMismatch naming the module
	wrong := must(Randn([]int64{1, 3, 8}, Float32, CPU(0)))
	defer wrong.Close()
	if _, err := conv.Forward(wrong); !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "Conv1d") {
		t.Fatalf("wrong channel count: %v", err)
	}
	small := must(Randn([]int64{1, 4, 2}, Float32, CPU(0)))
	defer small.Close()
	big := must(Conv1d(4, 1, 3, Conv1dOptions{}))
	defer big.Close()
	if _, err := big.Forward(small); !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "Conv1d") {
		t.Fatalf("kernel larger than the input: %v", err)
	}
	if _, err := Conv1d(1, 1, 3, Conv1dOptions{PaddingSame: true, Stride: 2}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("same with a stride: %v", err)
	}
	if _, err := Conv1d(3, 2, 3, Conv1dOptions{Groups: 2}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("groups not dividing: %v", err)
	}
	if _, err := Conv1d(1, 1, 3, Conv1dOptions{PaddingSame: true, Padding: 1}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("same with a padding: %v", err)
	}
	if _, err := Conv1d(1, 1, 0, Conv1dOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("zero kernel: %v", err)
	}
	if _, err := Conv1d(1, 1, 3, Conv1dOptions{DType: Int64}); !errors.Is(err, ErrDTypeMismatch) {
		t.Fatalf("integer dtype: %v", err)
	}
}

func TestConv1dModuleEqualsFunctional(t *testing.T) {
	opts := Conv1dOptions{Stride: 2, Padding: 2, Dilation: 2, Groups: 3}
	conv := must(Conv1d(3, 6, 3, opts))
	defer conv.Close()
	ps := must(conv.Parameters())
	defer ps.Close()
	x := must(Randn([]int64{2, 3, 11}, Float32, CPU(0)))
	defer x.Close()
	m, mshape := f32s(t, must(conv.Forward(x)))
	f, fshape := f32s(t, must(x.Conv1d(ps[0].Tensor, ps[1].Tensor, Conv1dOptions{Stride: 2, Padding: 2, Dilation: 2, Groups: 3})))
	if !reflect.DeepEqual(mshape, []int64{2, 6, 6}) || !reflect.DeepEqual(mshape, fshape) || !reflect.DeepEqual(m, f) {
		t.Fatalf("module %v %v, functional %v %v", mshape, m, fshape, f)
	}
}

func TestConv1dFunctional(t *testing.T) {
	x := must(FromSlice([]float32{1, 2, 3, 4}, []int64{1, 1, 4}, CPU(0)))
	defer x.Close()
	w := must(Ones([]int64{1, 1, 2}, Float32, CPU(0)))
	defer w.Close()
	got, shape := f32s(t, must(x.Conv1d(w, nil, Conv1dOptions{})))
	if !reflect.DeepEqual(got, []float32{3, 5, 7}) || !reflect.DeepEqual(shape, []int64{1, 1, 3}) {
		t.Fatalf("conv1d: %v %v", got, shape)
	}
	if got, _ = f32s(t, must(x.Conv1d(w, nil, Conv1dOptions{Stride: 2}))); !reflect.DeepEqual(got, []float32{3, 7}) {
		t.Fatalf("conv1d stride 2: %v", got)
	}
	// padded to [0, 1, 2, 3, 4, 0], plus a bias of 0.5
	b := must(FromSlice([]float32{0.5}, []int64{1}, CPU(0)))
	defer b.Close()
	if got, _ = f32s(t, must(x.Conv1d(w, b, Conv1dOptions{Padding: 1}))); !reflect.DeepEqual(got, []float32{1.5, 3.5, 5.5, 7.5, 4.5}) {
		t.Fatalf("conv1d padding 1 bias: %v", got)
	}
	if got, _ = f32s(t, must(x.Conv1d(w, nil, Conv1dOptions{Dilation: 2}))); !reflect.DeepEqual(got, []float32{1 + 3, 2 + 4}) {
		t.Fatalf("conv1d dilation 2: %v", got)
	}
	// "same" with an even kernel: the extra zero at the end
	if got, _ = f32s(t, must(x.Conv1d(w, nil, Conv1dOptions{PaddingSame: true}))); !reflect.DeepEqual(got, []float32{3, 5, 7, 4}) {
		t.Fatalf("conv1d same: %v", got)
	}
	if _, err := x.Conv1d(w, nil, Conv1dOptions{NoBias: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("NoBias in the functional form: %v", err)
	}
	big := must(Ones([]int64{1, 1, 5}, Float32, CPU(0)))
	defer big.Close()
	if _, err := x.Conv1d(big, nil, Conv1dOptions{}); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("kernel larger than the input: %v", err)
	}
	w4 := must(Ones([]int64{1, 1, 2, 2}, Float32, CPU(0)))
	defer w4.Close()
	if _, err := x.Conv1d(w4, nil, Conv1dOptions{}); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("4-d weight: %v", err)
	}
	w2 := must(Ones([]int64{1, 2, 2}, Float32, CPU(0)))
	defer w2.Close()
	if _, err := x.Conv1d(w2, nil, Conv1dOptions{}); !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("wrong channel count: %v", err)
	}
	if _, err := x.Conv1d(nil, nil, Conv1dOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil weight: %v", err)
	}
}

// Expected values by hand, checked against torch.nn.functional.conv_transpose2d (1.13):
// each input element stamps the all-ones 2x2 kernel, scaled, at its position times the
// stride; overlapping stamps add.
func TestConvTranspose2dFunctional(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3, 4}, []int64{1, 1, 2, 2}, CPU(0)))
	defer x.Close()
	w := must(Ones([]int64{1, 1, 2, 2}, Float32, CPU(0)))
	defer w.Close()
	got, shape := f32s(t, must(x.ConvTranspose2d(w, nil, ConvTranspose2dOptions{})))
	if !reflect.DeepEqual(got, []float32{1, 3, 2, 4, 10, 6, 3, 7, 4}) || !reflect.DeepEqual(shape, []int64{1, 1, 3, 3}) {
		t.Fatalf("stride 1: %v %v", got, shape)
	}
	got, shape = f32s(t, must(x.ConvTranspose2d(w, nil, ConvTranspose2dOptions{Stride: [2]int64{2, 2}})))
	if !reflect.DeepEqual(got, []float32{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}) ||
		!reflect.DeepEqual(shape, []int64{1, 1, 4, 4}) {
		t.Fatalf("stride 2 (one block per input element): %v %v", got, shape)
	}
	// output_padding adds a row and a column nobody writes: zeros.
	got, shape = f32s(t, must(x.ConvTranspose2d(w, nil, ConvTranspose2dOptions{Stride: [2]int64{2, 2},
		OutputPadding: [2]int64{1, 1}})))
	want := []float32{1, 1, 2, 2, 0, 1, 1, 2, 2, 0, 3, 3, 4, 4, 0, 3, 3, 4, 4, 0, 0, 0, 0, 0, 0}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(shape, []int64{1, 1, 5, 5}) {
		t.Fatalf("output_padding 1: %v %v", got, shape)
	}
	// padding takes a row and a column off each side of the 4x4 result.
	got, _ = f32s(t, must(x.ConvTranspose2d(w, nil, ConvTranspose2dOptions{Stride: [2]int64{2, 2},
		Padding: [2]int64{1, 1}})))
	if !reflect.DeepEqual(got, []float32{1, 2, 3, 4}) {
		t.Fatalf("padding 1: %v", got)
	}
	b := must(FromSlice([]float32{0.5}, []int64{1}, CPU(0)))
	defer b.Close()
	got, _ = f32s(t, must(x.ConvTranspose2d(w, b, ConvTranspose2dOptions{})))
	if !reflect.DeepEqual(got, []float32{1.5, 3.5, 2.5, 4.5, 10.5, 6.5, 3.5, 7.5, 4.5}) {
		t.Fatalf("bias 0.5: %v", got)
	}
	if _, err := x.ConvTranspose2d(w, nil, ConvTranspose2dOptions{Stride: [2]int64{2, 2},
		OutputPadding: [2]int64{2, 2}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("output_padding not below the stride: %v", err)
	}
	if _, err := x.ConvTranspose2d(w, nil, ConvTranspose2dOptions{NoBias: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("NoBias in the functional form: %v", err)
	}
	two := must(Ones([]int64{2, 1, 2, 2}, Float32, CPU(0))) // for 2 input channels, not 1
	defer two.Close()
	_, err := x.ConvTranspose2d(two, nil, ConvTranspose2dOptions{})
	if !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "[2, 1, 2, 2]") ||
		!strings.Contains(err.Error(), "[1, 1, 2, 2]") {
		t.Fatalf("wrong channel count: %v", err)
	}
	if _, err := x.ConvTranspose2d(nil, nil, ConvTranspose2dOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil weight: %v", err)
	}
}

func TestConvTranspose2dModule(t *testing.T) {
	noLeaks(t)
	up := must(ConvTranspose2d(4, 6, [2]int64{3, 2}, ConvTranspose2dOptions{Stride: [2]int64{2, 2},
		Padding: [2]int64{1, 1}, OutputPadding: [2]int64{1, 1}, Groups: 2}))
	defer up.Close()
	ps := must(up.Parameters())
	defer ps.Close()
	if len(ps) != 2 || ps[0].Name != "weight" || ps[1].Name != "bias" {
		t.Fatalf("parameters %v", ps)
	}
	// PyTorch's layout: in_channels first, [in, out / groups, kH, kW].
	if s := must(ps[0].Tensor.Shape()); !reflect.DeepEqual(s, []int64{4, 3, 3, 2}) {
		t.Fatalf("weight shape %v", s)
	}
	if s := must(ps[1].Tensor.Shape()); !reflect.DeepEqual(s, []int64{6}) {
		t.Fatalf("bias shape %v", s)
	}
	x := must(Randn([]int64{2, 4, 5, 7}, Float32, CPU(0)))
	defer x.Close()
	// OH = (5 - 1) * 2 - 2 + (3 - 1) + 1 + 1 = 10, OW = (7 - 1) * 2 - 2 + (2 - 1) + 1 + 1 = 13
	_, shape := f32s(t, must(up.Forward(x)))
	if !reflect.DeepEqual(shape, []int64{2, 6, 10, 13}) {
		t.Fatalf("output shape %v", shape)
	}
	// The module is the functional form with its parameters.
	m, _ := f32s(t, must(up.Forward(x)))
	f, _ := f32s(t, must(x.ConvTranspose2d(ps[0].Tensor, ps[1].Tensor, ConvTranspose2dOptions{
		Stride: [2]int64{2, 2}, Padding: [2]int64{1, 1}, OutputPadding: [2]int64{1, 1}, Groups: 2})))
	if !reflect.DeepEqual(m, f) {
		t.Fatal("the module differs from the functional form with its parameters")
	}
	plain := must(ConvTranspose2d(1, 1, [2]int64{2, 2}, ConvTranspose2dOptions{NoBias: true, DType: Float64}))
	defer plain.Close()
	ps2 := must(plain.Parameters())
	defer ps2.Close()
	if len(ps2) != 1 || must(ps2[0].Tensor.DType()) != Float64 {
		t.Fatalf("NoBias/Float64: %v", ps2)
	}
	wrong := must(Randn([]int64{1, 3, 5, 5}, Float32, CPU(0)))
	defer wrong.Close()
	if _, err := up.Forward(wrong); !errors.Is(err, ErrShapeMismatch) || !strings.Contains(err.Error(), "ConvTranspose2d") ||
		!strings.Contains(err.Error(), "[1, 3, 5, 5]") {
		t.Fatalf("wrong channel count: %v", err)
	}
	if _, err := ConvTranspose2d(1, 1, [2]int64{2, 2}, ConvTranspose2dOptions{OutputPadding: [2]int64{1, 1}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("output_padding not below the stride (1) or the dilation (1): %v", err)
	}
	if _, err := ConvTranspose2d(3, 2, [2]int64{2, 2}, ConvTranspose2dOptions{Groups: 2}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("channels not divisible by groups: %v", err)
	}
	if _, err := ConvTranspose2d(1, 1, [2]int64{2, 2}, ConvTranspose2dOptions{DType: Int64}); !errors.Is(err, ErrDTypeMismatch) {
		t.Fatalf("integer weights: %v", err)
	}
}

// ceil_mode on 1..9 in a 3x3 plane, kernel 2, stride 2 (values from torch 1.13): the
// second window of each row and column hangs over the edge; only its elements inside
// count, in the max and in the mean's divisor.
func TestPool2dCeilMode(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, []int64{1, 1, 3, 3}, CPU(0)))
	defer x.Close()
	k := [2]int64{2, 2}
	got, shape := f32s(t, must(x.MaxPool2d(k, MaxPool2dOptions{CeilMode: true})))
	if !reflect.DeepEqual(got, []float32{5, 6, 8, 9}) || !reflect.DeepEqual(shape, []int64{1, 1, 2, 2}) {
		t.Fatalf("max, ceil_mode: %v %v", got, shape)
	}
	got, _ = f32s(t, must(x.MaxPool2d(k, MaxPool2dOptions{})))
	if !reflect.DeepEqual(got, []float32{5}) {
		t.Fatalf("max, floor: %v", got)
	}
	got, _ = f32s(t, must(x.AvgPool2d(k, AvgPool2dOptions{CeilMode: true})))
	if !reflect.DeepEqual(got, []float32{3, 4.5, 7.5, 9}) {
		t.Fatalf("avg, ceil_mode: %v", got)
	}
	got, _ = f32s(t, must(x.AvgPool2d(k, AvgPool2dOptions{})))
	if !reflect.DeepEqual(got, []float32{3}) {
		t.Fatalf("avg, floor: %v", got)
	}
	for _, m := range []*Module{must(MaxPool2d(k, MaxPool2dOptions{CeilMode: true})),
		must(AvgPool2d(k, AvgPool2dOptions{CeilMode: true}))} {
		_, shape = f32s(t, must(m.Forward(x)))
		m.Close()
		if !reflect.DeepEqual(shape, []int64{1, 1, 2, 2}) {
			t.Fatalf("module with ceil_mode: output shape %v", shape)
		}
	}
}

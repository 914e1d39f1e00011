package devtensor

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Compile checks of the convolution and pooling signatures.
var (
	_ func(int64, int64, [2]int64, Conv2dOptions) (*Module, error)    = Conv2d
	_ func(*Tensor, *Tensor, *Tensor, Conv2dOptions) (*Tensor, error) = (*Tensor).Conv2d
	_ func([2]int64, MaxPool2dOptions) (*Module, error)               = MaxPool2d
	_ func([2]int64, AvgPool2dOptions) (*Module, error)               = AvgPool2d
	_ func([2]int64) (*Module, error)                                 = AdaptiveAvgPool2d
	_ func(*Tensor, [2]int64, MaxPool2dOptions) (*Tensor, error)      = (*Tensor).MaxPool2d
	_ func(*Tensor, [2]int64, AvgPool2dOptions) (*Tensor, error)      = (*Tensor).AvgPool2d
	_ func(*Tensor, [2]int64) (*Tensor, error)                        = (*Tensor).AdaptiveAvgPool2d
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

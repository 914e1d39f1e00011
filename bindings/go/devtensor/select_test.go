package devtensor

import (
	"errors"
	"math"
	"reflect"
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

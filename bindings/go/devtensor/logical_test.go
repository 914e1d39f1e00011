package devtensor

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// checkBools fails unless r is a bool tensor of shape wantShape holding want.
func checkBools(t *testing.T, what string, r *Tensor, wantShape []int64, want []bool) {
	t.Helper()
	if dt := must(r.DType()); dt != Bool {
		t.Fatalf("%s: dtype %v, want bool", what, dt)
	}
	got, shape := must(ToSlice[bool](r)), must(r.Shape())
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(shape, wantShape) {
		t.Fatalf("%s = %v %v, want %v %v", what, got, shape, want, wantShape)
	}
}

// IsNaN, IsInf, IsFinite and LogicalNot against values worked out by hand, on a float
// tensor holding each kind of value and on an integer one.
func TestIsNaNIsInfIsFiniteLogicalNot(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	inf := float32(math.Inf(1))
	x := must(s.Track(FromSlice([]float32{float32(math.NaN()), inf, -inf, 0, float32(math.Copysign(0, -1)), 1.5},
		[]int64{6}, CPU(0))))
	for _, c := range []struct {
		what string
		f    func() (*Tensor, error)
		want []bool
	}{
		{"IsNaN", x.IsNaN, []bool{true, false, false, false, false, false}},
		{"IsInf", x.IsInf, []bool{false, true, true, false, false, false}},
		{"IsFinite", x.IsFinite, []bool{false, false, false, true, true, true}},
		// NaN and the infinities are nonzero (true), so their negation is false; -0 is zero.
		{"LogicalNot", x.LogicalNot, []bool{false, false, false, true, true, false}},
	} {
		checkBools(t, c.what, must(s.Track(c.f())), []int64{6}, c.want)
	}

	// Integers are never NaN or infinite.
	ints := must(s.Track(FromSlice([]int64{0, 3}, []int64{2}, CPU(0))))
	checkBools(t, "IsNaN of int64", must(s.Track(ints.IsNaN())), []int64{2}, []bool{false, false})
	checkBools(t, "IsInf of int64", must(s.Track(ints.IsInf())), []int64{2}, []bool{false, false})
	checkBools(t, "IsFinite of int64", must(s.Track(ints.IsFinite())), []int64{2}, []bool{true, true})
	checkBools(t, "LogicalNot of int64", must(s.Track(ints.LogicalNot())), []int64{2}, []bool{true, false})

	// The result is a new tensor: not recorded by autograd.
	g := must(s.Track(FromSlice([]float32{1, float32(math.NaN())}, []int64{2}, CPU(0))))
	MustOK(g.SetRequiresGrad(true))
	n := must(s.Track(g.IsNaN()))
	if must(n.RequiresGrad()) {
		t.Fatalf("IsNaN of a tensor that requires grad requires grad")
	}

	var none *Tensor
	if _, err := none.IsNaN(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("IsNaN of a nil tensor: %v, want ErrInvalidArgument", err)
	}
}

// LogicalAnd, LogicalOr and LogicalXor against values worked out by hand: mixed dtypes,
// broadcasting and the errors.
func TestLogicalAndOrXor(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	a := must(s.Track(FromSlice([]int64{1, 0, 2, 0}, []int64{4}, CPU(0))))
	b := must(s.Track(FromSlice([]bool{true, true, false, false}, []int64{4}, CPU(0))))
	for _, c := range []struct {
		what string
		f    func(*Tensor) (*Tensor, error)
		want []bool
	}{
		{"LogicalAnd", a.LogicalAnd, []bool{true, false, false, false}},
		{"LogicalOr", a.LogicalOr, []bool{true, true, true, false}},
		{"LogicalXor", a.LogicalXor, []bool{false, true, true, false}},
	} {
		checkBools(t, c.what, must(s.Track(c.f(b))), []int64{4}, c.want)
	}

	// [3, 1] with [4]: [3, 4]. Rows 0, NaN (true), -2; columns 0, 1, 0, 0.5.
	col := must(s.Track(FromSlice([]float32{0, float32(math.NaN()), -2}, []int64{3, 1}, CPU(0))))
	row := must(s.Track(FromSlice([]float64{0, 1, 0, 0.5}, []int64{4}, CPU(0))))
	checkBools(t, "LogicalAnd([3, 1], [4])", must(s.Track(col.LogicalAnd(row))), []int64{3, 4}, []bool{
		false, false, false, false,
		false, true, false, true,
		false, true, false, true,
	})
	checkBools(t, "LogicalOr([3, 1], [4])", must(s.Track(col.LogicalOr(row))), []int64{3, 4}, []bool{
		false, true, false, true,
		true, true, true, true,
		true, true, true, true,
	})
	checkBools(t, "LogicalXor([3, 1], [4])", must(s.Track(col.LogicalXor(row))), []int64{3, 4}, []bool{
		false, true, false, true,
		true, false, true, false,
		true, false, true, false,
	})

	x23 := must(s.Track(Zeros([]int64{2, 3}, Float32, CPU(0))))
	x4 := must(s.Track(Zeros([]int64{4}, Float32, CPU(0))))
	for name, f := range map[string]func(*Tensor) (*Tensor, error){
		"LogicalAnd": x23.LogicalAnd, "LogicalOr": x23.LogicalOr, "LogicalXor": x23.LogicalXor,
	} {
		r, err := f(x4)
		if r != nil {
			r.Close()
		}
		if e := wantCode(t, err, ErrShapeMismatch); e.Op != "Tensor."+name {
			t.Fatalf("%s of [2, 3] and [4]: op %q", name, e.Op)
		}
	}
	other := must(s.Track(Zeros([]int64{4}, Float32, CPU(1))))
	if _, err := x4.LogicalOr(other); !errors.Is(err, ErrDeviceMismatch) {
		t.Fatalf("LogicalOr across devices: %v, want ErrDeviceMismatch", err)
	}
	if _, err := x4.LogicalAnd(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("LogicalAnd(nil): %v, want ErrInvalidArgument", err)
	}
}

// Any and All against values worked out by hand: every dim, Dims, KeepDim, empty
// reductions, NaN as true, other dtypes, and the errors.
func TestAnyAll(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float32{0, 0, 0, 1}, []int64{2, 2}, CPU(0))))
	checkBools(t, "Any()", must(s.Track(x.Any())), []int64{}, []bool{true})
	checkBools(t, "All()", must(s.Track(x.All())), []int64{}, []bool{false})
	checkBools(t, "Any(Dims(1))", must(s.Track(x.Any(Dims(1)))), []int64{2}, []bool{false, true})
	checkBools(t, "All(Dims(1))", must(s.Track(x.All(Dims(1)))), []int64{2}, []bool{false, false})
	checkBools(t, "Any(Dims(1), KeepDim())", must(s.Track(x.Any(Dims(1), KeepDim()))), []int64{2, 1},
		[]bool{false, true})
	checkBools(t, "All(Dims(-1), KeepDim())", must(s.Track(x.All(Dims(-1), KeepDim()))), []int64{2, 1},
		[]bool{false, false})
	checkBools(t, "Any(Dims(0))", must(s.Track(x.Any(Dims(0)))), []int64{2}, []bool{false, true})
	checkBools(t, "All(KeepDim())", must(s.Track(x.All(KeepDim()))), []int64{1, 1}, []bool{false})

	// Over no element: false / true, a 0-d result.
	e := must(s.Track(Zeros([]int64{0, 3}, Float32, CPU(0))))
	checkBools(t, "Any() of [0, 3]", must(s.Track(e.Any())), []int64{}, []bool{false})
	checkBools(t, "All() of [0, 3]", must(s.Track(e.All())), []int64{}, []bool{true})
	checkBools(t, "Any(Dims(0)) of [0, 3]", must(s.Track(e.Any(Dims(0)))), []int64{3}, []bool{false, false, false})
	checkBools(t, "All(Dims(0)) of [0, 3]", must(s.Track(e.All(Dims(0)))), []int64{3}, []bool{true, true, true})

	// NaN is nonzero: true.
	nan := must(s.Track(FromSlice([]float64{0, math.NaN()}, []int64{2}, CPU(0))))
	checkBools(t, "Any() of [0, NaN]", must(s.Track(nan.Any())), []int64{}, []bool{true})
	nans := must(s.Track(FromSlice([]float64{math.NaN(), math.NaN()}, []int64{2}, CPU(0))))
	checkBools(t, "All() of [NaN, NaN]", must(s.Track(nans.All())), []int64{}, []bool{true})

	// Bool for every dtype, uint8 included.
	u := must(s.Track(FromSlice([]uint8{0, 7}, []int64{2}, CPU(0))))
	checkBools(t, "Any() of uint8", must(s.Track(u.Any())), []int64{}, []bool{true})
	checkBools(t, "All() of uint8", must(s.Track(u.All())), []int64{}, []bool{false})
	bs := must(s.Track(FromSlice([]bool{true, true}, []int64{2}, CPU(0))))
	checkBools(t, "All() of bool", must(s.Track(bs.All())), []int64{}, []bool{true})

	for _, c := range []struct {
		what string
		err  error
		want error
	}{
		{"Any(Dims(2))", func() error { _, err := x.Any(Dims(2)); return err }(), ErrInvalidArgument},
		{"All(Dims(-3))", func() error { _, err := x.All(Dims(-3)); return err }(), ErrInvalidArgument},
		{"Any(Dims(0, 0))", func() error { _, err := x.Any(Dims(0, 0)); return err }(), ErrInvalidArgument},
		{"All(Correction(0))", func() error { _, err := x.All(Correction(0)); return err }(), ErrInvalidArgument},
	} {
		if !errors.Is(c.err, c.want) {
			t.Fatalf("%s: %v, want %v", c.what, c.err, c.want)
		}
	}
}

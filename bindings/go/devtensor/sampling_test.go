package devtensor

import (
	"errors"
	"math"
	"reflect"
	"sort"
	"testing"
)

// checkMeta fails unless x has the shape and dtype given.
func checkMeta(t *testing.T, what string, x *Tensor, shape []int64, dtype DType) {
	t.Helper()
	if s, d := must(x.Shape()), must(x.DType()); !reflect.DeepEqual(s, shape) || d != dtype {
		t.Fatalf("%s: shape %v dtype %v, want %v %v", what, s, d, shape, dtype)
	}
}

// Eye and Linspace against PyTorch's values, and their errors.
func TestEyeLinspace(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	e := must(s.Track(Eye(2, 3, Float32, CPU(0))))
	checkMeta(t, "Eye(2, 3)", e, []int64{2, 3}, Float32)
	wantSlice(t, "Eye(2, 3)", must(ToSlice[float32](e)), []float32{1, 0, 0, 0, 1, 0})
	ei := must(s.Track(Eye(3, 2, Int64, CPU(0))))
	checkMeta(t, "Eye(3, 2) int64", ei, []int64{3, 2}, Int64)
	wantSlice(t, "Eye(3, 2) int64", readI64(t, ei), []int64{1, 0, 0, 1, 0, 0})
	checkMeta(t, "Eye(0, 2)", must(s.Track(Eye(0, 2, Float64, CPU(0)))), []int64{0, 2}, Float64)
	ed := must(s.Track(Eye(1, 1, DefaultDType, CPU(0))))
	checkMeta(t, "Eye(1, 1) default dtype", ed, []int64{1, 1}, must(GetDefaultDType()))
	_, err := Eye(-1, 2, Float32, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
	_, err = Eye(2, -1, Float32, CPU(0))
	wantCode(t, err, ErrInvalidArgument)

	l := must(s.Track(Linspace(0, 1, 5, Float32, CPU(0))))
	checkMeta(t, "Linspace(0, 1, 5)", l, []int64{5}, Float32)
	wantSlice(t, "Linspace(0, 1, 5)", must(ToSlice[float32](l)), []float32{0, 0.25, 0.5, 0.75, 1})
	// torch.linspace(0, 10, 4, dtype=torch.int64): 10/3 steps, truncated toward zero, the
	// second half counted back from the end.
	li := must(s.Track(Linspace(0, 10, 4, Int64, CPU(0))))
	wantSlice(t, "Linspace(0, 10, 4) int64", readI64(t, li), []int64{0, 3, 6, 10})
	ld := must(s.Track(Linspace(1, -1, 3, Float64, CPU(0))))
	wantSlice(t, "Linspace(1, -1, 3)", must(ToSlice[float64](ld)), []float64{1, 0, -1})
	wantSlice(t, "Linspace(2, 5, 1)", must(ToSlice[float64](must(s.Track(Linspace(2, 5, 1, Float64, CPU(0)))))),
		[]float64{2})
	checkMeta(t, "Linspace(0, 1, 0)", must(s.Track(Linspace(0, 1, 0, DefaultDType, CPU(0)))), []int64{0},
		must(GetDefaultDType()))
	_, err = Linspace(0, 1, -1, Float32, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
	_, err = Linspace(0, 1, 2, Bool, CPU(0))
	wantCode(t, err, ErrDTypeMismatch)
}

// OneHot against rows of the identity, num_classes -1, and its errors.
func TestOneHot(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	idx := must(s.Track(FromSlice([]int64{0, 2, 1}, nil, CPU(0))))
	o := must(s.Track(idx.OneHot(3)))
	checkMeta(t, "OneHot([0 2 1], 3)", o, []int64{3, 3}, Int64)
	wantSlice(t, "OneHot([0 2 1], 3)", readI64(t, o), []int64{1, 0, 0, 0, 0, 1, 0, 1, 0})
	o4 := must(s.Track(idx.OneHot(4)))
	wantSlice(t, "OneHot([0 2 1], 4)", readI64(t, o4), []int64{1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0})
	// -1: the largest index + 1; the indices keep their shape.
	idx2 := must(s.Track(FromSlice([]int64{1, 0}, []int64{2, 1}, CPU(0))))
	o2 := must(s.Track(idx2.OneHot(-1)))
	checkMeta(t, "OneHot([[1] [0]], -1)", o2, []int64{2, 1, 2}, Int64)
	wantSlice(t, "OneHot([[1] [0]], -1)", readI64(t, o2), []int64{0, 1, 1, 0})

	neg := must(s.Track(FromSlice([]int64{0, -1}, nil, CPU(0))))
	_, err := neg.OneHot(3)
	wantCode(t, err, ErrInvalidArgument)
	_, err = idx.OneHot(2) // index 2 >= 2 classes
	wantCode(t, err, ErrInvalidArgument)
	_, err = idx.OneHot(-2)
	wantCode(t, err, ErrInvalidArgument)
	f := must(s.Track(FromSlice([]float32{0, 1}, nil, CPU(0))))
	_, err = f.OneHot(2)
	wantCode(t, err, ErrDTypeMismatch)
	var none *Tensor
	if _, err := none.OneHot(2); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("OneHot of a nil tensor: %v, want ErrInvalidArgument", err)
	}
}

// seededF64 returns a Float64 Rand of shape drawn right after ManualSeed(seed).
func seededF64(t *testing.T, s *Scope, seed uint64, shape []int64) *Tensor {
	t.Helper()
	MustOK(ManualSeed(seed))
	return must(s.Track(Rand(shape, Float64, CPU(0))))
}

// Randint is low + floor(u*(high-low)) for a Float64 Rand u of the same shape after the
// same seed, and advances the generator as that Rand does.
func TestRandint(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	const seed, low, high = 1234, -3, 10
	shape := []int64{4, 50}
	MustOK(ManualSeed(seed))
	r1 := must(s.Track(Randint(low, high, shape, DefaultDType, CPU(0))))
	r2 := must(s.Track(Randint(low, high, shape, DefaultDType, CPU(0))))
	checkMeta(t, "Randint", r1, shape, Int64)
	u1 := seededF64(t, s, seed, shape)
	u2 := must(s.Track(Rand(shape, Float64, CPU(0))))
	for _, c := range []struct{ r, u *Tensor }{{r1, u1}, {r2, u2}} {
		u := must(ToSlice[float64](c.u))
		want := make([]int64, len(u))
		for j, v := range u {
			want[j] = low + int64(math.Floor(v*(high-low)))
		}
		wantSlice(t, "Randint against low + floor(u*(high-low))", readI64(t, c.r), want)
	}
	seen := map[int64]bool{}
	for _, v := range readI64(t, r1) {
		if v < low || v >= high {
			t.Fatalf("Randint(%d, %d) gave %d", low, high, v)
		}
		seen[v] = true
	}
	if len(seen) != high-low {
		t.Fatalf("200 draws of Randint(%d, %d) hit %d values, want all %d", low, high, len(seen), high-low)
	}
	checkMeta(t, "Randint int32", must(s.Track(Randint(0, 5, []int64{3}, Int32, CPU(0)))), []int64{3}, Int32)
	checkMeta(t, "Randint 0-d", must(s.Track(Randint(0, 5, nil, DefaultDType, CPU(0)))), []int64{}, Int64)

	_, err := Randint(5, 5, shape, DefaultDType, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
	_, err = Randint(6, 5, shape, DefaultDType, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
	_, err = Randint(0, 300, shape, Uint8, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
}

// Randperm is a permutation, the stable argsort of a Float64 Rand after the same seed.
func TestRandperm(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	const seed, n = 99, 100
	MustOK(ManualSeed(seed))
	p := must(s.Track(Randperm(n, DefaultDType, CPU(0))))
	checkMeta(t, "Randperm(100)", p, []int64{n}, Int64)
	got := readI64(t, p)
	sorted := append([]int64(nil), got...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	iota := make([]int64, n)
	for i := range iota {
		iota[i] = int64(i)
	}
	wantSlice(t, "Randperm(100) sorted", sorted, iota)
	if reflect.DeepEqual(got, iota) {
		t.Fatalf("Randperm(100) is the identity")
	}
	u := seededF64(t, s, seed, []int64{n})
	wantSlice(t, "Randperm(100) vs argsort of Rand", got, readI64(t, must(s.Track(u.Argsort(0, false)))))

	checkMeta(t, "Randperm(5) int32", must(s.Track(Randperm(5, Int32, CPU(0)))), []int64{5}, Int32)
	checkMeta(t, "Randperm(0)", must(s.Track(Randperm(0, DefaultDType, CPU(0)))), []int64{0}, Int64)
	_, err := Randperm(-1, DefaultDType, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
	_, err = Randperm(3, Bool, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
	_, err = Randperm(300, Uint8, CPU(0)) // 299 does not fit
	wantCode(t, err, ErrInvalidArgument)
}

// Multinomial never draws a category of weight 0 with replacement, puts the weight-0
// ones last in index order without, and its errors.
func TestMultinomial(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	MustOK(ManualSeed(5))
	w := must(s.Track(FromSlice([]float32{0, 1, 0, 3}, nil, CPU(0))))
	m := must(s.Track(w.Multinomial(1000, true)))
	checkMeta(t, "Multinomial(1000, true)", m, []int64{1000}, Int64)
	counts := map[int64]int{}
	for _, v := range readI64(t, m) {
		counts[v]++
	}
	if counts[0] != 0 || counts[2] != 0 || counts[1]+counts[3] != 1000 {
		t.Fatalf("Multinomial of [0 1 0 3] with replacement drew %v", counts)
	}
	// Weight 3 against 1: about 750 of 1000 (the standard deviation is under 14).
	if counts[3] < 650 || counts[3] > 850 {
		t.Fatalf("Multinomial of [0 1 0 3] drew 3 %d times in 1000, want about 750", counts[3])
	}
	for i := 0; i < 20; i++ {
		p := readI64(t, must(s.Track(w.Multinomial(4, false))))
		if len(p) != 4 || p[2] != 0 || p[3] != 2 || !(p[0] == 1 && p[1] == 3 || p[0] == 3 && p[1] == 1) {
			t.Fatalf("Multinomial of [0 1 0 3] without replacement: %v, want 1 and 3, then 0, 2", p)
		}
	}
	// 2-d: a row per distribution.
	w2 := must(s.Track(FromSlice([]float64{1, 0, 0, 2}, []int64{2, 2}, CPU(0))))
	m2 := must(s.Track(w2.Multinomial(3, true)))
	checkMeta(t, "Multinomial 2-d", m2, []int64{2, 3}, Int64)
	wantSlice(t, "Multinomial of [[1 0] [0 2]]", readI64(t, m2), []int64{0, 0, 0, 1, 1, 1})

	_, err := w.Multinomial(0, true)
	wantCode(t, err, ErrInvalidArgument)
	_, err = w.Multinomial(5, false)
	wantCode(t, err, ErrInvalidArgument)
	bad := must(s.Track(FromSlice([]float32{1, -1}, nil, CPU(0))))
	_, err = bad.Multinomial(1, true)
	wantCode(t, err, ErrInvalidArgument)
	zero := must(s.Track(FromSlice([]float32{0, 0}, nil, CPU(0))))
	_, err = zero.Multinomial(1, true)
	wantCode(t, err, ErrInvalidArgument)
	ints := must(s.Track(FromSlice([]int64{1, 2}, nil, CPU(0))))
	_, err = ints.Multinomial(1, true)
	wantCode(t, err, ErrDTypeMismatch)
	var none *Tensor
	if _, err := none.Multinomial(1, true); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Multinomial of a nil tensor: %v, want ErrInvalidArgument", err)
	}
}

// Nonzero and MaskedSelect against PyTorch's values (torch.nonzero / torch.masked_select
// of the same tensors), MaskedSelect's gradient, and their errors.
func TestNonzeroMaskedSelect(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float64{0, 1.5, 0, -2, 0, math.NaN()}, []int64{2, 3}, CPU(0))))
	nz := must(s.Track(x.Nonzero()))
	checkMeta(t, "Nonzero", nz, []int64{3, 2}, Int64)
	wantSlice(t, "Nonzero", readI64(t, nz), []int64{0, 1, 1, 0, 1, 2})

	w := must(s.Track(FromSlice([]float64{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(0))))
	MustOK(w.SetRequiresGrad(true))
	rowMask := must(s.Track(FromSlice([]bool{true, false, true}, []int64{3}, CPU(0)))) // broadcast over rows
	sel := must(s.Track(w.MaskedSelect(rowMask)))
	wantSlice(t, "MaskedSelect", must(ToSlice[float64](sel)), []float64{1, 3, 4, 6})
	MustOK(must(s.Track(sel.Sum())).Backward(nil))
	wantSlice(t, "MaskedSelect gradient", must(ToSlice[float64](must(s.Track(w.Grad())))), []float64{1, 0, 1, 1, 0, 1})

	_, err := w.MaskedSelect(x) // a float mask
	wantCode(t, err, ErrDTypeMismatch)
	four := must(s.Track(FromSlice([]bool{true, false, true, true}, []int64{4}, CPU(0))))
	_, err = w.MaskedSelect(four)
	wantCode(t, err, ErrShapeMismatch)
	_, err = w.MaskedSelect(nil)
	wantCode(t, err, ErrInvalidArgument)
}

// Unique and Bincount against PyTorch's values (torch.unique(sorted=True,
// return_inverse=True, return_counts=True) and torch.bincount of the same tensors), and
// their errors.
func TestUniqueBincount(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]int64{2, 1, 1, 3}, []int64{2, 2}, CPU(0))))
	v, inv, cnt, err := x.Unique(true, true)
	MustOK(err)
	s.Track(v, nil)
	s.Track(inv, nil)
	s.Track(cnt, nil)
	wantSlice(t, "Unique values", readI64(t, v), []int64{1, 2, 3})
	checkMeta(t, "Unique inverse", inv, []int64{2, 2}, Int64)
	wantSlice(t, "Unique inverse", readI64(t, inv), []int64{1, 0, 0, 2})
	wantSlice(t, "Unique counts", readI64(t, cnt), []int64{2, 1, 1})
	only, noInv, noCnt, err := x.Unique(false, false)
	MustOK(err)
	s.Track(only, nil)
	if noInv != nil || noCnt != nil {
		t.Fatalf("Unique(false, false) gave inverse %v and counts %v, want nil", noInv, noCnt)
	}
	wantSlice(t, "Unique values alone", readI64(t, only), []int64{1, 2, 3})

	idx := must(s.Track(FromSlice([]int64{0, 2, 2, 5}, []int64{4}, CPU(0))))
	wantSlice(t, "Bincount", readI64(t, must(s.Track(idx.Bincount(nil, 0)))), []int64{1, 0, 2, 0, 0, 1})
	wantSlice(t, "Bincount minlength 8", readI64(t, must(s.Track(idx.Bincount(nil, 8)))), []int64{1, 0, 2, 0, 0, 1, 0, 0})
	w := must(s.Track(FromSlice([]float32{0.5, 1, 2, 4}, []int64{4}, CPU(0))))
	bw := must(s.Track(idx.Bincount(w, 0)))
	checkMeta(t, "Bincount weighted", bw, []int64{6}, Float32)
	wantSlice(t, "Bincount weighted", must(ToSlice[float32](bw)), []float32{0.5, 0, 3, 0, 0, 4})

	neg := must(s.Track(FromSlice([]int64{1, -1}, []int64{2}, CPU(0))))
	_, err = neg.Bincount(nil, 0)
	wantCode(t, err, ErrInvalidArgument)
	_, err = w.Bincount(nil, 0) // floating values
	wantCode(t, err, ErrDTypeMismatch)
	_, _, _, err = (*Tensor)(nil).Unique(true, true)
	wantCode(t, err, ErrInvalidArgument)
}

// Normalize, CosineSimilarity and PairwiseDistance against values worked out by hand
// (PyTorch gives the same: F.normalize, F.cosine_similarity, F.pairwise_distance), and
// their errors.
func TestDistances(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float64{3, 4, 0, 0}, []int64{2, 2}, CPU(0))))
	n := must(s.Track(x.Normalize(2, 1, 1e-12)))
	near(t, "Normalize", must(ToSlice[float64](n)), []float64{0.6, 0.8, 0, 0}, 1e-15)
	y := must(s.Track(FromSlice([]float64{4, 3, 1, 0}, []int64{2, 2}, CPU(0))))
	// [3,4].[4,3] / (5 * 5) = 0.96; a zero vector has cosine 0.
	near(t, "CosineSimilarity", must(ToSlice[float64](must(s.Track(x.CosineSimilarity(y, 1, 1e-8))))), []float64{0.96, 0}, 1e-15)
	// ||[3,4] - [4,3]|| = sqrt(2); ||[0,0] - [1,0]||_1 = 1 (eps 0).
	near(t, "PairwiseDistance", must(ToSlice[float64](must(s.Track(x.PairwiseDistance(y, 2, 0, false))))), []float64{math.Sqrt(2), 1}, 1e-15)
	d := must(s.Track(x.PairwiseDistance(y, 1, 0, true)))
	checkMeta(t, "PairwiseDistance keepdim", d, []int64{2, 1}, Float64)
	near(t, "PairwiseDistance p=1", must(ToSlice[float64](d)), []float64{2, 1}, 0)

	_, err := x.Normalize(2, 2, 1e-12)
	wantCode(t, err, ErrInvalidArgument)
	three := must(s.Track(FromSlice([]float64{1, 2, 3}, []int64{3}, CPU(0))))
	_, err = x.CosineSimilarity(three, 1, 1e-8)
	wantCode(t, err, ErrShapeMismatch)
	ints := must(s.Track(FromSlice([]int64{1, 2}, []int64{2}, CPU(0))))
	_, err = ints.PairwiseDistance(ints, 2, 1e-6, false)
	wantCode(t, err, ErrDTypeMismatch)
	_, err = x.CosineSimilarity(nil, 1, 1e-8)
	wantCode(t, err, ErrInvalidArgument)
}

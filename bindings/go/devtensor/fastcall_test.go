package devtensor

import (
	"bytes"
	"math"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
)

// slowTwin runs f with t's fast-path record cleared, so that the ops f makes on t take
// the ordinary cgo call, and restores it.
func slowTwin[R any](t *Tensor, f func() R) R {
	old := atomic.SwapUint64(&t.small, 0)
	defer atomic.StoreUint64(&t.small, old)
	return f()
}

func sameTensor(t *testing.T, what string, a, b *Tensor) {
	t.Helper()
	da, db := must(a.DType()), must(b.DType())
	sa, sb := must(a.Shape()), must(b.Shape())
	if da != db || len(sa) != len(sb) {
		t.Fatalf("%s: fast %v%v, cgo %v%v", what, da, sa, db, sb)
	}
	for i := range sa {
		if sa[i] != sb[i] {
			t.Fatalf("%s: fast shape %v, cgo %v", what, sa, sb)
		}
	}
	fa := must(a.ToDType(Float64))
	defer fa.Close()
	fb := must(b.ToDType(Float64))
	defer fb.Close()
	va, vb := must(ToSlice[float64](fa)), must(ToSlice[float64](fb))
	for i := range va {
		if math.Float64bits(va[i]) != math.Float64bits(vb[i]) && !(math.IsNaN(va[i]) && math.IsNaN(vb[i])) {
			t.Fatalf("%s: element %d: fast %v, cgo %v", what, i, va[i], vb[i])
		}
	}
}

// Every op family gives on the fast path what the cgo call gives: the same dtype, shape
// and bits, and the same error (code and message) for bad input.
func TestFastPathMatchesCgo(t *testing.T) {
	start := LiveHandles()
	a := must(FromSlice([]float32{-1.5, 0, 2, 7.25, -3, 0.5}, []int64{2, 3}, CPU(0)))
	defer a.Close()
	b := must(FromSlice([]float32{0.25, -2, 4}, []int64{3}, CPU(0)))
	defer b.Close()
	i := must(FromSlice([]int64{3, -4, 5}, []int64{3}, CPU(0)))
	defer i.Close()
	if fastcallOn && (smallOf(a) != shapeRecord([]int64{2, 3}) || smallOf(b) != shapeRecord([]int64{3}) ||
		smallOf(i) != shapeRecord([]int64{3})) {
		t.Fatalf("shape records %#x %#x %#x, want [2 3], [3], [3]", smallOf(a), smallOf(b), smallOf(i))
	}
	binary := map[string]func(x, y *Tensor) (*Tensor, error){
		"Add": (*Tensor).Add, "Sub": (*Tensor).Sub, "Mul": (*Tensor).Mul, "Div": (*Tensor).Div,
		"Pow": (*Tensor).Pow, "Maximum": (*Tensor).Maximum, "Lt": (*Tensor).Lt, "Eq": (*Tensor).Eq,
	}
	for name, f := range binary {
		for _, pair := range [][2]*Tensor{{a, b}, {b, a}, {a, i}, {i, b}} {
			x, y := pair[0], pair[1]
			fast := must(f(x, y))
			cgo := slowTwin(x, func() *Tensor { return must(f(x, y)) })
			sameTensor(t, name, fast, cgo)
			if smallOf(cgo) != 0 {
				t.Fatalf("%s: a cgo call's result is recorded small", name)
			}
			// the broadcast computed in Go is the library's
			if sh := must(fast.Shape()); fastcallOn && smallOf(fast) != shapeRecord(sh) {
				t.Fatalf("%s: fast result's record %#x, want %v's", name, smallOf(fast), sh)
			}
			fast.Close()
			cgo.Close()
		}
	}
	for name, f := range map[string]func(x *Tensor) (*Tensor, error){
		"Neg": (*Tensor).Neg, "Exp": (*Tensor).Exp, "Sqrt": (*Tensor).Sqrt,
		"Tanh": (*Tensor).Tanh, "Abs": (*Tensor).Abs,
	} {
		fast := must(f(a))
		cgo := slowTwin(a, func() *Tensor { return must(f(a)) })
		sameTensor(t, name, fast, cgo)
		fast.Close()
		cgo.Close()
	}
	for name, f := range map[string]func(x *Tensor, v float64) (*Tensor, error){
		"AddScalar": (*Tensor).AddScalar, "MulScalar": (*Tensor).MulScalar,
		"PowScalar": (*Tensor).PowScalar, "GtScalar": (*Tensor).GtScalar,
	} {
		fast := must(f(a, 1.75))
		cgo := slowTwin(a, func() *Tensor { return must(f(a, 1.75)) })
		sameTensor(t, name, fast, cgo)
		fast.Close()
		cgo.Close()
	}
	for name, f := range map[string]func(x *Tensor, o ...ReduceOption) (*Tensor, error){
		"Sum": (*Tensor).Sum, "Mean": (*Tensor).Mean, "Max": (*Tensor).Max, "Argmax": (*Tensor).Argmax,
	} {
		for _, opts := range [][]ReduceOption{nil, {Dims(1)}, {Dims(0), KeepDim()}} {
			fast := must(f(a, opts...))
			cgo := slowTwin(a, func() *Tensor { return must(f(a, opts...)) })
			sameTensor(t, name, fast, cgo)
			want := uint64(0) // a reduction over every dim is 0-d; the others are not recorded
			if opts == nil {
				want = shapeRecord(nil)
			}
			if fastcallOn && smallOf(fast) != want {
				t.Fatalf("%s: record %#x, want %#x", name, smallOf(fast), want)
			}
			fast.Close()
			cgo.Close()
		}
		_, ef := f(a, Dims(5))
		es := slowTwin(a, func() error { _, err := f(a, Dims(5)); return err })
		fe, ok1 := ef.(*Error)
		se, ok2 := es.(*Error)
		if !ok1 || !ok2 || fe.Code != se.Code || fe.Msg != se.Msg {
			t.Fatalf("%s(Dims(5)): fast error %v, cgo error %v", name, ef, es)
		}
	}
	// in place: the same op on two copies of a
	for name, f := range map[string]func(x, y *Tensor) error{
		"AddInPlace": (*Tensor).AddInPlace, "MulInPlace": (*Tensor).MulInPlace,
		"DivInPlace": (*Tensor).DivInPlace,
	} {
		x1, x2 := must(a.Add(b)), must(a.Add(b))
		if err := f(x1, b); err != nil {
			t.Fatal(err)
		}
		if err := slowTwin(x2, func() error { return f(x2, b) }); err != nil {
			t.Fatal(err)
		}
		sameTensor(t, name, x1, x2)
		x1.Close()
		x2.Close()
	}
	x1, x2 := must(a.Add(b)), must(a.Add(b))
	wantNoErr(t, x1.MulScalarInPlace(-0.5))
	wantNoErr(t, slowTwin(x2, func() error { return x2.MulScalarInPlace(-0.5) }))
	sameTensor(t, "MulScalarInPlace", x1, x2)
	x1.Close()
	x2.Close()

	// errors: the same code and message either way
	c := must(FromSlice([]float32{1, 2, 3, 4}, nil, CPU(0)))
	defer c.Close()
	_, ef := a.Add(c)
	es := slowTwin(a, func() error { _, err := a.Add(c); return err })
	fe, se := wantCode(t, ef, ErrShapeMismatch), wantCode(t, es, ErrShapeMismatch)
	if fe.Msg != se.Msg || fe.Op != se.Op {
		t.Fatalf("fast error %q, cgo error %q", fe.Error(), se.Error())
	}
	wantCode(t, a.AddInPlace(c), ErrShapeMismatch)
	// two CPU devices (TestMain sets four): the device mismatch, either way
	d1 := must(FromSlice([]float32{1, 2, 3}, nil, CPU(1)))
	defer d1.Close()
	_, ef = b.Add(d1)
	es = slowTwin(b, func() error { _, err := b.Add(d1); return err })
	fe, se = wantCode(t, ef, ErrDeviceMismatch), wantCode(t, es, ErrDeviceMismatch)
	if fe.Msg != se.Msg {
		t.Fatalf("fast error %q, cgo error %q", fe.Error(), se.Error())
	}
	wantCode(t, b.MulInPlace(d1), ErrDeviceMismatch)
	if got := LiveHandles(); got != start+5 {
		t.Fatalf("live handles %d, want %d (a, b, i, c, d1)", got, start+5)
	}
}

func wantNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Which tensors the fast path takes (fastcall.go): small CPU tensors the binding made,
// never large ones, other devices' or the default device's, autograd's, or a cgo call's
// results; a binary op only when its broadcast result is bounded.
func TestFastPathTakesOnlySmallCPUTensors(t *testing.T) {
	if !fastcallOn {
		t.Skip("this build has no fast path (race detector, devtensor_nofastcall, or Go >= 1.23)")
	}
	start := LiveHandles()
	var open []*Tensor
	keep := func(x *Tensor) *Tensor { open = append(open, x); return x }
	defer func() {
		for _, x := range open {
			x.Close()
		}
		if got := LiveHandles(); got != start {
			t.Errorf("live handles %d, want %d", got, start)
		}
	}()
	records := []struct {
		what string
		x    *Tensor
		want uint64
	}{
		{"Ones(4, CPU(0))", keep(must(Ones([]int64{4}, Float32, CPU(0)))), shapeRecord([]int64{4})},
		{"Zeros(0-d)", keep(must(Zeros(nil, Float64, CPU(0)))), shapeRecord(nil)},
		{"Empty(0 elements)", keep(must(Empty([]int64{3, 0}, Float32, CPU(0)))), shapeRecord([]int64{3, 0})},
		{"Full(32x32)", keep(must(Full([]int64{32, 32}, 2, Float32, CPU(0)))), shapeRecord([]int64{32, 32})},
		{"Full(1x1x1x1x2): 5 dims", keep(must(Full([]int64{1, 1, 1, 1, 2}, 2, Float32, CPU(0)))), 0},
		{"Rand(1025)", keep(must(Rand([]int64{1025}, Float32, CPU(0)))), 0},
		{"Empty(0x2000): a dim too large", keep(must(Empty([]int64{0, 2000}, Float32, CPU(0)))), 0},
		{"Randn(DefaultDevice)", keep(must(Randn([]int64{4}, Float32, DefaultDevice))), 0},
		{"FromSlice", keep(must(FromSlice([]int32{1, 2, 3}, nil, CPU(0)))), shapeRecord([]int64{3})},
		{"Arange (a cgo call)", keep(must(Arange(0, 4, 1, Float32, CPU(0)))), 0},
	}
	for _, r := range records {
		if got := smallOf(r.x); got != r.want {
			t.Errorf("%s: shape record %#x, want %#x", r.what, got, r.want)
		}
	}
	col := keep(must(Ones([]int64{32, 1}, Float32, CPU(0))))
	row := keep(must(Ones([]int64{1, 32}, Float32, CPU(0))))
	if got := smallOf(keep(must(col.Add(row)))); got != shapeRecord([]int64{32, 32}) {
		t.Errorf("[32,1]+[1,32]: record %#x, want [32 32]'s", got)
	}
	col33 := keep(must(Ones([]int64{33, 1}, Float32, CPU(0))))
	row33 := keep(must(Ones([]int64{1, 33}, Float32, CPU(0))))
	if got := smallOf(keep(must(col33.Add(row33)))); got != 0 {
		t.Errorf("[33,1]+[1,33] (1089 elements: a cgo call): record %#x, want 0", got)
	}
	v := keep(must(Ones([]int64{1000}, Float32, CPU(0))))
	if got := smallOf(keep(must(v.Add(v)))); got != smallOf(v) {
		t.Errorf("[1000]+[1000]: record %#x, want [1000]'s", got)
	}
	s := keep(must(Ones(nil, Float32, CPU(0))))
	if got := smallOf(keep(must(s.Mul(records[3].x)))); got != shapeRecord([]int64{32, 32}) {
		t.Errorf("0-d * [32,32]: record %#x, want [32 32]'s", got)
	}

	// autograd: SetRequiresGrad, and an in-place op with a tensor of the graph
	w := keep(must(Ones([]int64{4}, Float32, CPU(0))))
	wantNoErr(t, w.SetRequiresGrad(true))
	if smallOf(w) != 0 {
		t.Fatal("SetRequiresGrad(true) left the small record")
	}
	y := keep(must(w.MulScalar(2)))
	if smallOf(y) != 0 {
		t.Fatal("a result of autograd's tensor is recorded small")
	}
	x := keep(must(Zeros([]int64{4}, Float32, CPU(0))))
	wantNoErr(t, x.AddInPlace(y))
	if smallOf(x) != 0 {
		t.Fatal("x += y with y in autograd's graph left x's small record")
	}
}

// Closing a small tensor releases it at once, with a fast call; any other tensor waits in
// the release slot, which fast ops leave alone (its tensor may be costly to release) and
// the next cgo call that can allocate empties.
func TestClosingASmallTensorReleasesItAtOnce(t *testing.T) {
	if !fastcallOn {
		t.Skip("this build has no fast path")
	}
	ReleasePending()
	start := liveHandlesUnflushed()
	errs := releaseErrors()
	a := must(Ones([]int64{4}, Float32, CPU(0)))
	big := must(Ones([]int64{5000}, Float32, CPU(0)))
	small := must(a.AddScalar(1)) // a fast op's result is small too
	if smallOf(small) == 0 || smallOf(big) != 0 {
		t.Fatal("want small recorded small and big not")
	}
	big.Close()
	if atomicSlot() == 0 {
		t.Fatal("the large tensor should wait in the release slot")
	}
	small.Close()
	if got := liveHandlesUnflushed(); got != start+2 {
		t.Fatalf("live %d after closing small, want %d (a, and big waiting): small not released at once", got, start+2)
	}
	z := must(a.Neg()) // fast: leaves big in the slot
	if atomicSlot() == 0 {
		t.Fatal("a fast op emptied the release slot")
	}
	if got := liveHandlesUnflushed(); got != start+3 {
		t.Fatalf("live %d, want %d (a, z, and big waiting)", got, start+3)
	}
	a2 := must(Randn([]int64{4}, Float32, CPU(0))) // a cgo call (Randn takes no fast path): empties the slot
	if atomicSlot() != 0 {
		t.Fatal("a cgo call left the slot full")
	}
	for _, x := range []*Tensor{z, a2, a} {
		x.Close()
	}
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after closing everything, want %d", got, start)
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Fatalf("%d releases failed", n)
	}
}

// Goroutines hammering the fast path while the collector runs and a CPU profile samples
// them (SIGPROF lands in C code run without the cgo hand-over): right results, nothing
// leaked, no failed release.
func TestFastPathUnderGCAndProfiling(t *testing.T) {
	start := LiveHandles()
	errs := releaseErrors()
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err == nil {
		defer pprof.StopCPUProfile()
	}
	stop := make(chan struct{})
	var gcWG sync.WaitGroup
	gcWG.Add(1)
	go func() {
		defer gcWG.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	var wg sync.WaitGroup
	failures := make(chan string, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := must(FromSlice([]float64{float64(g), 1, 2, 3}, nil, CPU(0)))
			defer x.Close()
			acc := must(Zeros([]int64{4}, Float64, CPU(0)))
			for i := 0; i < 20000; i++ {
				y := must(x.MulScalar(2))
				z := must(y.Sub(x)) // = x
				wantNoErr(t, acc.AddInPlace(z))
				y.Close()
				z.Close()
			}
			v := must(ToSlice[float64](acc))
			for k, want := range []float64{float64(g), 1, 2, 3} {
				if v[k] != want*20000 {
					failures <- "wrong sum"
				}
			}
			acc.Close()
		}(g)
	}
	wg.Wait()
	close(stop)
	gcWG.Wait()
	close(failures)
	for f := range failures {
		t.Fatal(f)
	}
	runtime.GC()
	if got := LiveHandles(); got != start {
		t.Fatalf("live handles %d, want %d", got, start)
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Fatalf("%d releases failed", n)
	}
}

// broadcastRecord, the fast path's own broadcast of two shapes, agrees with the library
// on every pair of shapes from a set with 0, 1 and mismatched dims: where it gives a
// record, the op succeeds with that shape; where it gives none, the op fails with a
// shape mismatch or its result is not small.
func TestFastPathBroadcastMatchesTheLibrary(t *testing.T) {
	noLeaks(t)
	shapes := [][]int64{nil, {1}, {3}, {0}, {2, 3}, {2, 1}, {1, 3}, {3, 1}, {4, 3}, {2, 0}, {1, 0},
		{2, 1, 3}, {5, 2, 3}, {1, 1, 1, 3}, {8, 1, 1, 1}, {40}, {40, 1}, {1, 30}, {1024}}
	for _, sa := range shapes {
		for _, sb := range shapes {
			x := must(Zeros(sa, Float32, CPU(0)))
			y := must(Zeros(sb, Float32, CPU(0)))
			r := broadcastRecord(smallOf(x), smallOf(y))
			var z *Tensor
			var err error
			slowTwin(x, func() struct{} { z, err = x.Add(y); return struct{}{} }) // the library's answer
			switch {
			case err != nil:
				wantCode(t, err, ErrShapeMismatch)
				if r != 0 {
					t.Errorf("%v + %v: the library refuses it, the record is %#x", sa, sb, r)
				}
			case r != shapeRecord(must(z.Shape())):
				t.Errorf("%v + %v: library shape %v, record %#x", sa, sb, must(z.Shape()), r)
			}
			if z != nil {
				z.Close()
			}
			x.Close()
			y.Close()
		}
	}
}

// The constructors of small CPU tensors (Empty, Zeros, Ones, Full, FromSlice), Item and
// ToSlice take the fast path and give what the cgo calls give; Shape, Dim and Numel
// answer from the shape record what the library answers. The cgo twins: a constructor
// given DefaultDevice (set to cpu:0) is a cgo call, and slowTwin clears a tensor's record.
func TestFastPathConstructorsAndReads(t *testing.T) {
	noLeaks(t)
	old := must(GetDefaultDevice())
	wantNoErr(t, SetDefaultDevice(CPU(0)))
	defer func() { wantNoErr(t, SetDefaultDevice(old)) }()
	for _, shape := range [][]int64{{}, {0}, {3}, {2, 3}, {1, 4, 1, 2}, {1024}, {2, 2, 2, 2}} {
		cases := map[string]func(d Device) (*Tensor, error){
			"Zeros":   func(d Device) (*Tensor, error) { return Zeros(shape, Float64, d) },
			"Default": func(d Device) (*Tensor, error) { return Ones(shape, DefaultDType, d) },
			"Ones":    func(d Device) (*Tensor, error) { return Ones(shape, Int32, d) },
			"Full":    func(d Device) (*Tensor, error) { return Full(shape, -2.5, Float32, d) },
			"Empty":   func(d Device) (*Tensor, error) { return Empty(shape, Float32, d) },
			"FromInt": func(d Device) (*Tensor, error) { return FromSlice(iotaOf[int64](shape), shape, d) },
			"FromF32": func(d Device) (*Tensor, error) { return FromSlice(iotaOf[float32](shape), shape, d) },
		}
		for name, make := range cases {
			fast := must(make(CPU(0)))
			cgo := must(make(DefaultDevice))
			if fastcallOn && smallOf(fast) != shapeRecord(shape) {
				t.Fatalf("%s%v: record %#x, want %#x", name, shape, smallOf(fast), shapeRecord(shape))
			}
			lib := must(fast.shapeFromLibrary())
			if sh, nd, n := must(fast.Shape()), must(fast.Dim()), must(fast.Numel()); !sameElems(sh, shape) ||
				!sameElems(lib, shape) || nd != len(shape) || n != numelOf(shape) {
				t.Fatalf("%s%v: Shape %v (library %v), Dim %d, Numel %d", name, shape, sh, lib, nd, n)
			}
			if name != "Empty" {
				sameTensor(t, name, fast, cgo)
			}
			fast.Close()
			cgo.Close()
		}
		x := must(FromSlice(iotaOf[float32](shape), shape, CPU(0)))
		fv, fe := ToSlice[float32](x)
		var sv []float32
		se := slowTwin(x, func() (err error) { sv, err = ToSlice[float32](x); return })
		if fe != nil || se != nil || len(fv) != numelOf(shape) || !sameElems(fv, sv) {
			t.Fatalf("ToSlice%v: fast %v (%v), cgo %v (%v)", shape, fv, fe, sv, se)
		}
		_, fe = ToSlice[int64](x) // the wrong element type
		se = slowTwin(x, func() error { _, err := ToSlice[int64](x); return err })
		sameError(t, "ToSlice[int64]", fe, se, ErrDTypeMismatch)
		fi, fe := x.Item()
		var si float64
		se = slowTwin(x, func() (err error) { si, err = x.Item(); return })
		if numelOf(shape) == 1 {
			if fe != nil || se != nil || fi != si || fi != 0 {
				t.Fatalf("Item%v: fast %v (%v), cgo %v (%v)", shape, fi, fe, si, se)
			}
		} else {
			sameError(t, "Item", fe, se, ErrInvalidArgument)
		}
		x.Close()
	}
	// Bad input fails on the fast path as on the cgo call, and makes nothing.
	_, fe := Zeros([]int64{2}, Float32, CPU(9))
	wantCode(t, fe, ErrInvalidDevice)
	_, fe = FromSlice([]float32{1, 2, 3}, []int64{2, 2}, CPU(0))
	_, se := FromSlice([]float32{1, 2, 3}, []int64{2, 2}, DefaultDevice)
	sameError(t, "FromSlice with 3 values for [2 2]", fe, se, ErrInvalidArgument)
	_, fe = Full([]int64{2}, 1, DType(99), CPU(0))
	_, se = Full([]int64{2}, 1, DType(99), DefaultDevice)
	if fe == nil || se == nil || fe.Error() != se.Error() {
		t.Fatalf("Full with dtype 99: fast %v, cgo %v", fe, se)
	}
	// A closed small tensor is refused, without a call.
	y := must(Zeros([]int64{2}, Float32, CPU(0)))
	y.Close()
	for _, err := range []error{second(y.Shape()), second(y.Dim()), second(y.Numel()), second(y.Item()),
		second(ToSlice[float32](y))} {
		wantCode(t, err, ErrClosed)
	}
}

func iotaOf[T float32 | int64](shape []int64) []T {
	out := make([]T, numelOf(shape))
	for i := range out {
		out[i] = T(i)
	}
	return out
}

func numelOf(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// sameElems reports whether a and b hold the same elements (== for each).
func sameElems[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameError checks that the fast and the cgo call failed alike, with code.
func sameError(t *testing.T, what string, fast, cgo error, code Code) {
	t.Helper()
	if fast == nil || cgo == nil || fast.Error() != cgo.Error() {
		t.Fatalf("%s: fast %v, cgo %v", what, fast, cgo)
	}
	wantCode(t, fast, code)
}

func second[A any](_ A, err error) error { return err }

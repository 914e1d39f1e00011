package devtensor

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// Four logical CPU devices, so device-mismatch rules are tested for real. Must be set
	// before the library first counts devices.
	os.Setenv("DEVTENSOR_CPU_DEVICES", "4")
	os.Exit(m.Run())
}

// noLeaks fails the test if the live-handle count differs at its end from its start.
func noLeaks(t *testing.T) {
	t.Helper()
	start := LiveHandles()
	t.Cleanup(func() {
		if n := LiveHandles(); n != start {
			t.Errorf("live handles: %d at start, %d at end", start, n)
		}
	})
}

// must panics on error: for tests only (the package itself never panics). A panic
// fails the test with the error's message.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func closeAll(t testing.TB, ts ...*Tensor) {
	t.Helper()
	for _, x := range ts {
		if err := x.Close(); err != nil {
			t.Error(err)
		}
	}
}

func wantCode(t *testing.T, err error, code Code) *Error {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("want %v (%d), got %v", code, int32(code), err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	return e
}

func TestVersion(t *testing.T) {
	if err := CheckVersion(); err != nil {
		t.Fatal(err)
	}
	if Version() == "" {
		t.Fatal("empty version")
	}
	info, err := BuildInfo()
	if err != nil || !strings.Contains(info, "version") {
		t.Fatalf("BuildInfo: %q, %v", info, err)
	}
}

func TestDevicesByHandle(t *testing.T) {
	noLeaks(t)
	for _, c := range []struct {
		in   string
		want Device
		str  string
	}{
		{"cpu", CPU(0), "cpu:0"},
		{"cpu:1", CPU(1), "cpu:1"},
		{"cuda", CUDA(0), "cuda:0"},
		{"cuda:3", CUDA(3), "cuda:3"},
	} {
		d, err := ParseDevice(c.in)
		if err != nil || d != c.want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", c.in, d, err, c.want)
		}
		if d.String() != c.str {
			t.Errorf("String() = %q, want %q", d.String(), c.str)
		}
	}
	for _, bad := range []string{"gpu", "cuda:-1", "cuda:x", "", "cpu 0"} {
		_, err := ParseDevice(bad)
		e := wantCode(t, err, ErrInvalidArgument)
		if e.Msg == "" || e.Op != "ParseDevice" {
			t.Errorf("ParseDevice(%q): %+v", bad, e)
		}
	}
	n := must(DeviceCount(DeviceCPU))
	if n != 4 {
		t.Errorf("DEVTENSOR_CPU_DEVICES=4 gives %d CPU devices", n)
	}
	ncuda := must(DeviceCount(DeviceCUDA))
	state, why, err := CUDAStatus()
	if err != nil || why == "" {
		t.Fatalf("CUDAStatus: %v %q %v", state, why, err)
	}
	if (state == CUDAAvailable) != CUDAIsAvailable() {
		t.Errorf("CUDAStatus %d disagrees with CUDAIsAvailable", state)
	}
	g := must(TryGPU(0))
	all := must(AllGPUs())
	byFree := must(DevicesByFreeMemory())
	if ncuda == 0 {
		if g != CPU(0) || len(all) != 1 || all[0] != CPU(0) || len(byFree) != 1 || byFree[0] != CPU(0) {
			t.Errorf("no GPU: TryGPU=%v AllGPUs=%v ByFree=%v", g, all, byFree)
		}
		// Asking for CUDA where none is usable fails cleanly, and says why.
		_, err := Zeros([]int64{2}, Float32, CUDA(0))
		if !errors.Is(err, ErrDeviceUnavailable) && !errors.Is(err, ErrInvalidDevice) {
			t.Errorf("Zeros on cuda:0 without CUDA: %v", err)
		}
		t.Logf("no CUDA (%s); GPU device checks skipped", why)
	} else {
		if g != CUDA(0) || len(all) != ncuda || len(byFree) != ncuda {
			t.Errorf("GPU: TryGPU=%v AllGPUs=%v ByFree=%v", g, all, byFree)
		}
		_, err := Zeros([]int64{2}, Float32, CUDA(ncuda))
		e := wantCode(t, err, ErrInvalidDevice)
		if !strings.Contains(e.Msg, fmt.Sprintf("cuda:%d", ncuda)) {
			t.Errorf("message %q does not name the device", e.Msg)
		}
	}
	// A CPU device that does not exist.
	_, err = Zeros([]int64{2}, Float32, CPU(7))
	e := wantCode(t, err, ErrInvalidDevice)
	if !strings.Contains(e.Msg, "cpu:7") {
		t.Errorf("message %q does not name cpu:7", e.Msg)
	}
	name := must(CPU(0).Name())
	free, total := must2(t)(CPU(0).Memory())
	if name == "" || total == 0 || free > total {
		t.Errorf("cpu: name %q free %d total %d", name, free, total)
	}
	p := must(CPU(1).Properties())
	if p.Device != CPU(1) || p.TotalMemory == 0 {
		t.Errorf("properties %+v", p)
	}
	if err := CPU(0).Synchronize(); err != nil {
		t.Error(err)
	}
}

func must2(t *testing.T) func(a, b uint64, err error) (uint64, uint64) {
	return func(a, b uint64, err error) (uint64, uint64) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

// CUDAState prints as a short name, through fmt too; an unknown value as CUDAState(N).
func TestCUDAStateString(t *testing.T) {
	for state, want := range map[CUDAState]string{
		CUDAAvailable:      "available",
		CUDANotBuilt:       "not built",
		CUDAPluginMissing:  "plugin missing",
		CUDAPluginMismatch: "plugin mismatch",
		CUDANoDriver:       "no driver",
		CUDADriverTooOld:   "driver too old",
		CUDANoDevice:       "no device",
		CUDAAllHidden:      "all hidden",
		CUDAState(42):      "CUDAState(42)",
		CUDAState(-1):      "CUDAState(-1)",
	} {
		if got := state.String(); got != want {
			t.Errorf("CUDAState(%d).String() = %q, want %q", int32(state), got, want)
		}
		if got := fmt.Sprint(state); got != want {
			t.Errorf("fmt.Sprint(CUDAState(%d)) = %q, want %q", int32(state), got, want)
		}
	}
	state, _, err := CUDAStatus()
	if err != nil {
		t.Fatal(err)
	}
	if s := state.String(); strings.HasPrefix(s, "CUDAState(") {
		t.Errorf("the library's own state %d has no name", int32(state))
	}
}

func TestFromSliceToSlice(t *testing.T) {
	noLeaks(t)
	a := must(FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(0)))
	defer a.Close()
	if s := must(a.Shape()); fmt.Sprint(s) != "[2 3]" {
		t.Errorf("shape %v", s)
	}
	if d := must(a.DType()); d != Float32 || d.String() != "float32" {
		t.Errorf("dtype %v", d)
	}
	if n := must(a.Numel()); n != 6 {
		t.Errorf("numel %d", n)
	}
	if got := must(ToSlice[float32](a)); fmt.Sprint(got) != "[1 2 3 4 5 6]" {
		t.Errorf("ToSlice %v", got)
	}
	_, err := ToSlice[float64](a)
	wantCode(t, err, ErrDTypeMismatch)

	i := must(FromSlice([]int64{-1, 7}, nil, CPU(1)))
	defer i.Close()
	if d := must(i.Device()); d != CPU(1) {
		t.Errorf("device %v", d)
	}
	if got := must(ToSlice[int64](i)); fmt.Sprint(got) != "[-1 7]" {
		t.Errorf("int64 %v", got)
	}
	b := must(FromSlice([]bool{true, false, true}, nil, CPU(0)))
	defer b.Close()
	if got := must(ToSlice[bool](b)); fmt.Sprint(got) != "[true false true]" {
		t.Errorf("bool %v", got)
	}
	u := must(FromSlice([]uint8{0, 255}, nil, CPU(0)))
	defer u.Close()
	if got := must(ToSlice[uint8](u)); fmt.Sprint(got) != "[0 255]" {
		t.Errorf("uint8 %v", got)
	}
	s := must(FromSlice([]float64{2.5}, []int64{}, CPU(0)))
	defer s.Close()
	if v := must(s.Item()); v != 2.5 {
		t.Errorf("item %v", v)
	}
	if err := CopyFromSlice(a, []float32{6, 5, 4, 3, 2, 1}); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](a)); fmt.Sprint(got) != "[6 5 4 3 2 1]" {
		t.Errorf("after CopyFromSlice %v", got)
	}
	// Shape and data disagree.
	_, err = FromSlice([]float32{1, 2, 3}, []int64{2, 2}, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
}

func TestConstructors(t *testing.T) {
	noLeaks(t)
	sc := NewScope()
	defer sc.Close()
	z := must(sc.Track(Zeros([]int64{3}, Float64, CPU(0))))
	o := must(sc.Track(Ones([]int64{3}, Int32, CPU(0))))
	f := must(sc.Track(Full([]int64{2}, 1.5, Float32, CPU(0))))
	r := must(sc.Track(Arange(0, 5, 1, DefaultDType, CPU(0))))
	e := must(sc.Track(Empty([]int64{4, 4}, Float32, CPU(0))))
	u := must(sc.Track(Rand([]int64{100}, Float32, CPU(0))))
	n := must(sc.Track(Randn([]int64{100}, Float64, CPU(0))))
	if v := must(ToSlice[float64](z)); fmt.Sprint(v) != "[0 0 0]" {
		t.Error(v)
	}
	if v := must(ToSlice[int32](o)); fmt.Sprint(v) != "[1 1 1]" {
		t.Error(v)
	}
	if v := must(ToSlice[float32](f)); fmt.Sprint(v) != "[1.5 1.5]" {
		t.Error(v)
	}
	if v := must(ToSlice[int64](r)); fmt.Sprint(v) != "[0 1 2 3 4]" {
		t.Error(v)
	}
	if s := must(e.Shape()); fmt.Sprint(s) != "[4 4]" {
		t.Error(s)
	}
	for _, x := range must(ToSlice[float32](u)) {
		if x < 0 || x >= 1 {
			t.Fatalf("rand out of [0,1): %v", x)
		}
	}
	if d := must(n.DType()); d != Float64 {
		t.Error(d)
	}
	_, err := Zeros([]int64{-1}, Float32, CPU(0))
	wantCode(t, err, ErrInvalidArgument)
	_, err = Rand([]int64{2}, Int64, CPU(0))
	wantCode(t, err, ErrDTypeMismatch)
}

func TestToReturnsNewTensorAndLeavesSource(t *testing.T) {
	noLeaks(t)
	a := must(FromSlice([]float32{1, 2, 3}, nil, CPU(0)))
	defer a.Close()
	b := must(a.To(CPU(1)))
	defer b.Close()
	if sameHandle(a, b) {
		t.Fatal("To(cpu:1) returned the source")
	}
	if d := must(a.Device()); d != CPU(0) {
		t.Errorf("source moved to %v", d)
	}
	if d := must(b.Device()); d != CPU(1) {
		t.Errorf("result on %v", d)
	}
	if share := must(a.SharesStorage(b)); share {
		t.Error("a copy to another device shares storage")
	}
	if v := must(ToSlice[float32](b)); fmt.Sprint(v) != "[1 2 3]" {
		t.Error(v)
	}
	// dtype conversion likewise.
	c := must(a.ToDType(Int64))
	defer c.Close()
	if d := must(a.DType()); d != Float32 {
		t.Errorf("source dtype changed to %v", d)
	}
	if v := must(ToSlice[int64](c)); fmt.Sprint(v) != "[1 2 3]" {
		t.Error(v)
	}
}

func TestToAliasesWhenNothingChanges(t *testing.T) {
	noLeaks(t)
	a := must(FromSlice([]float32{1, 2}, nil, CPU(0)))
	b := must(a.To(CPU(0)))
	c := must(a.ToDType(Float32))
	d := must(a.ToDeviceDType(CPU(0), Float32, ToOptions{}))
	if !sameHandle(a, b) || !sameHandle(a, c) || !sameHandle(a, d) {
		t.Fatal("To with nothing to change did not alias the source")
	}
	if share := must(a.SharesStorage(b)); !share {
		t.Error("alias does not share storage")
	}
	// DT_TO_COPY forces a copy.
	e := must(a.ToDeviceDType(CPU(0), Float32, ToOptions{Copy: true}))
	if sameHandle(a, e) || must(a.SharesStorage(e)) {
		t.Error("copy=true aliased")
	}
	// Each alias is its own reference: closing the source leaves the alias usable.
	closeAll(t, a)
	if v := must(ToSlice[float32](b)); fmt.Sprint(v) != "[1 2]" {
		t.Error(v)
	}
	closeAll(t, b, c, d, e)
}

func TestDeviceMismatch(t *testing.T) {
	noLeaks(t)
	a := must(Ones([]int64{3}, Float32, CPU(0)))
	defer a.Close()
	b := must(Ones([]int64{3}, Float32, CPU(1)))
	defer b.Close()
	ops := map[string]func() (*Tensor, error){
		"Add":    func() (*Tensor, error) { return a.Add(b) },
		"Mul":    func() (*Tensor, error) { return a.Mul(b) },
		"Matmul": func() (*Tensor, error) { return a.Matmul(b) },
	}
	for name, f := range ops {
		c, err := f()
		if c != nil {
			c.Close()
			t.Fatalf("%s: mixed devices succeeded", name)
		}
		e := wantCode(t, err, ErrDeviceMismatch)
		if !strings.Contains(e.Msg, "cpu:0") || !strings.Contains(e.Msg, "cpu:1") {
			t.Errorf("%s: message %q does not name both devices", name, e.Msg)
		}
		if e.Op != "Tensor."+name || !strings.Contains(err.Error(), e.Msg) {
			t.Errorf("%s: %+v / %v", name, e, err)
		}
	}
	// In place too.
	wantCode(t, a.AddInPlace(b), ErrDeviceMismatch)
}

// Hundreds of goroutines fail differently at once; each error must carry its own
// message, even though goroutines move between OS threads (the message is thread-local
// in C; the binding reads it in the same cgo call as the failing function).
func TestErrorMessagesPerGoroutine(t *testing.T) {
	noLeaks(t)
	a0 := must(Ones([]int64{2}, Float32, CPU(0)))
	defer a0.Close()
	a1 := must(Ones([]int64{2}, Float32, CPU(1)))
	defer a1.Close()
	base := must(Zeros([]int64{6}, Float32, CPU(0)))
	defer base.Close()

	const G, iters = 300, 20
	var wg sync.WaitGroup
	errs := make(chan string, G)
	for g := 0; g < G; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			if g%3 == 0 {
				// Pin some goroutines so the others are pushed between threads.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			for i := 0; i < iters; i++ {
				runtime.Gosched()
				switch (g + i) % 3 {
				case 0: // a parse error naming this goroutine's text
					text := fmt.Sprintf("gpu%d_%d", g, i)
					_, err := ParseDevice(text)
					var e *Error
					if !errors.As(err, &e) || e.Code != ErrInvalidArgument || !strings.Contains(e.Msg, text) {
						errs <- fmt.Sprintf("g%d i%d parse: %v", g, i, err)
						return
					}
				case 1: // a device mismatch, in either order
					x, y, first, second := a0, a1, "cpu:0", "cpu:1"
					if g%2 == 1 {
						x, y, first, second = a1, a0, "cpu:1", "cpu:0"
					}
					c, err := x.Sub(y)
					var e *Error
					if c != nil || !errors.As(err, &e) || e.Code != ErrDeviceMismatch ||
						!strings.Contains(e.Msg, "expected device "+first+" but got device "+second) {
						errs <- fmt.Sprintf("g%d i%d mismatch: %v", g, i, err)
						c.Close()
						return
					}
				case 2: // a shape mismatch naming this goroutine's shape
					n := int64(7 + g)
					c, err := base.Reshape(n, 5)
					var e *Error
					if c != nil || !errors.As(err, &e) || e.Code != ErrShapeMismatch ||
						!strings.Contains(e.Msg, fmt.Sprint(n)) {
						errs <- fmt.Sprintf("g%d i%d reshape: %v", g, i, err)
						c.Close()
						return
					}
				}
				// Burn a little time so goroutines overlap and migrate.
				if i%5 == 0 {
					time.Sleep(time.Microsecond)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for m := range errs {
		t.Error(m)
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	noLeaks(t)
	a := must(Ones([]int64{2}, Float32, CPU(0)))
	b := must(Ones([]int64{2}, Float32, CPU(0)))
	defer b.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	var nilT *Tensor
	if err := nilT.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := a.Add(b)
	wantCode(t, err, ErrClosed)
	_, err = b.Add(a)
	wantCode(t, err, ErrClosed)
	_, err = a.Shape()
	wantCode(t, err, ErrClosed)
	_, err = a.To(CPU(1))
	wantCode(t, err, ErrClosed)
	_, err = ToSlice[float32](a)
	wantCode(t, err, ErrClosed)
	_, err = a.Sum()
	wantCode(t, err, ErrClosed)
	_, err = a.Reshape(2, 1)
	wantCode(t, err, ErrClosed)
	wantCode(t, a.AddScalarInPlace(1), ErrClosed)
	if s := a.String(); s != "tensor(<closed>)" {
		t.Errorf("String of closed: %q", s)
	}
	if !errors.Is(err, ErrClosed) || errors.Is(err, ErrInvalidHandle) {
		t.Error("ErrClosed is distinct from ErrInvalidHandle")
	}
	_, err = nilT.Add(b)
	wantCode(t, err, ErrInvalidArgument)
}

func TestOps(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	a := must(s.Track(FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(0))))
	b := must(s.Track(FromSlice([]float32{10, 20, 30}, nil, CPU(0))))
	check := func(name string, x *Tensor, err error, want string) {
		t.Helper()
		x = must(s.Track(x, err))
		v := must(ToSlice[float32](x))
		if got := fmt.Sprint(v); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	x, err := a.Add(b)
	check("add", x, err, "[11 22 33 14 25 36]")
	x, err = b.Sub(a)
	check("sub", x, err, "[9 18 27 6 15 24]")
	x, err = a.Mul(b)
	check("mul", x, err, "[10 40 90 40 100 180]")
	x, err = b.Div(a)
	check("div", x, err, "[10 10 10 2.5 4 5]")
	x, err = a.MulScalar(2)
	check("mulscalar", x, err, "[2 4 6 8 10 12]")
	at := must(s.Track(a.Transpose(0, 1)))
	if sh := must(at.Shape()); fmt.Sprint(sh) != "[3 2]" {
		t.Error(sh)
	}
	if c := must(at.IsContiguous()); c {
		t.Error("transpose is contiguous")
	}
	x, err = at.Contiguous()
	check("transpose", x, err, "[1 4 2 5 3 6]")
	x, err = a.Matmul(at)
	check("matmul", x, err, "[14 32 32 77]")
	x, err = a.Sum()
	check("sum", x, err, "[21]")
	x, err = a.Sum(Dims(1))
	check("sum dim1", x, err, "[6 15]")
	x, err = a.Mean(Dims(0), KeepDim())
	check("mean", x, err, "[2.5 3.5 4.5]")
	x, err = a.Max()
	check("max", x, err, "[6]")
	x, err = a.Cumsum(1)
	check("cumsum dim1", x, err, "[1 3 6 4 9 15]")
	x, err = a.Cumsum(-2)
	check("cumsum dim0", x, err, "[1 2 3 5 7 9]")
	un := must(s.Track(FromSlice([]float32{3, 1, 2, 1, 5, 0}, []int64{2, 3}, CPU(0))))
	vals, idx, err := un.Sort(1, false)
	check("sort values", vals, err, "[1 2 3 0 1 5]")
	if got := fmt.Sprint(must(ToSlice[int64](must(s.Track(idx, nil))))); got != "[1 2 0 2 0 1]" {
		t.Errorf("sort indices = %s, want [1 2 0 2 0 1]", got)
	}
	vals, idx, err = un.Topk(2, 0, true) // per column: the larger of the two rows, then the other
	check("topk values", vals, err, "[3 5 2 1 1 0]")
	if got := fmt.Sprint(must(ToSlice[int64](must(s.Track(idx, nil))))); got != "[0 1 0 1 0 1]" {
		t.Errorf("topk indices = %s, want [0 1 0 1 0 1]", got)
	}
	order := must(s.Track(un.Argsort(1, true)))
	if got := fmt.Sprint(must(ToSlice[int64](order))); got != "[0 2 1 1 0 2]" {
		t.Errorf("argsort descending = %s, want [0 2 1 1 0 2]", got)
	}
	if _, _, err := un.Topk(4, 1, true); err == nil {
		t.Error("topk with k 4 of 3 succeeded")
	} else {
		wantCode(t, err, ErrInvalidArgument)
	}
	sm := must(s.Track(a.Softmax(-1)))
	tot := must(s.Track(sm.Sum(Dims(-1))))
	for _, v := range must(ToSlice[float32](tot)) {
		if v < 0.9999 || v > 1.0001 {
			t.Errorf("softmax row sums to %v", v)
		}
	}
	am := must(s.Track(a.Argmax(Dims(1))))
	if v := must(ToSlice[int64](am)); fmt.Sprint(v) != "[2 2]" {
		t.Error(v)
	}
	x, err = a.Neg()
	check("neg", x, err, "[-1 -2 -3 -4 -5 -6]")
	gt := must(s.Track(a.GtScalar(3)))
	if v := must(ToSlice[bool](gt)); fmt.Sprint(v) != "[false false false true true true]" {
		t.Error(v)
	}
	zero := must(s.Track(Zeros([]int64{1}, Float32, CPU(0))))
	x, err = Where(gt, a, zero)
	check("where", x, err, "[0 0 0 4 5 6]")

	// Views share storage: an in-place write through the view is seen by the source.
	v := must(s.Track(a.Reshape(3, 2)))
	if sh := must(v.SharesStorage(a)); !sh {
		t.Error("reshape of a contiguous tensor is not a view")
	}
	if err := v.AddScalarInPlace(100); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](a)); fmt.Sprint(got) != "[101 102 103 104 105 106]" {
		t.Errorf("write through view not seen: %v", got)
	}
	n := must(s.Track(a.Narrow(1, 1, 2)))
	if sh := must(n.Shape()); fmt.Sprint(sh) != "[2 2]" {
		t.Error(sh)
	}
	u := must(s.Track(b.Unsqueeze(0)))
	if sh := must(u.Shape()); fmt.Sprint(sh) != "[1 3]" {
		t.Error(sh)
	}
	_, err = at.View(6)
	wantCode(t, err, ErrShapeMismatch)
	_, err = a.Add(must(s.Track(Ones([]int64{4}, Float32, CPU(0)))))
	wantCode(t, err, ErrShapeMismatch)
	must(s.Track(a.Mean()))
	ints := must(s.Track(Ones([]int64{2}, Int64, CPU(0))))
	_, err = ints.Mean()
	wantCode(t, err, ErrDTypeMismatch)
}

func TestString(t *testing.T) {
	noLeaks(t)
	a := must(FromSlice([]float32{1, 2}, nil, CPU(0)))
	defer a.Close()
	if s := a.String(); s != "tensor([1., 2.])" {
		t.Errorf("String = %q", s)
	}
	b := must(FromSlice([]int64{1, 2}, nil, CPU(1)))
	defer b.Close()
	if s := b.String(); !strings.HasPrefix(s, "tensor([1, 2]") {
		t.Errorf("String = %q", s)
	}
	// Big tensors are summarised, and the string helper grows its buffer.
	big := must(Arange(0, 5000, 1, Float64, CPU(0)))
	defer big.Close()
	if s := big.String(); !strings.Contains(s, "...") || !strings.Contains(s, "torch.float64") {
		t.Errorf("big String = %q", s)
	}
}

func TestScope(t *testing.T) {
	noLeaks(t)
	start := LiveHandles()
	s := NewScope()
	for i := 0; i < 10; i++ {
		if _, err := s.Track(Zeros([]int64{int64(i)}, Float32, CPU(0))); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != 10 || LiveHandles() != start+10 {
		t.Fatalf("scope holds %d, live %d (start %d)", s.Len(), LiveHandles(), start)
	}
	// An error passes through untouched and registers nothing.
	if _, err := s.Track(Zeros([]int64{-1}, Float32, CPU(0))); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if LiveHandles() != start {
		t.Fatalf("live %d after Scope.Close, want %d", LiveHandles(), start)
	}
	_, err := s.Track(Zeros([]int64{1}, Float32, CPU(0)))
	wantCode(t, err, ErrClosed)
}

func TestFinalizerSafetyNet(t *testing.T) {
	start := LiveHandles()
	func() {
		for i := 0; i < 10; i++ {
			_, _ = Zeros([]int64{8}, Float32, CPU(0)) // leaked on purpose
		}
	}()
	for i := 0; i < 100 && LiveHandles() != start; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if n := LiveHandles(); n != start {
		t.Fatalf("finalizers did not release leaked tensors: %d live, want %d", n, start)
	}
}

func TestConcurrentOpsOnSharedInputs(t *testing.T) {
	noLeaks(t)
	a := must(Ones([]int64{16}, Float32, CPU(0)))
	defer a.Close()
	b := must(Full([]int64{16}, 2, Float32, CPU(0)))
	defer b.Close()
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				c, err := a.Add(b)
				if err != nil {
					t.Error(err)
					return
				}
				v, err := ToSlice[float32](c)
				if err != nil || v[0] != 3 {
					t.Errorf("%v %v", v, err)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
}

func TestErrorFormatting(t *testing.T) {
	if ErrDeviceMismatch.Error() != "device mismatch" {
		t.Errorf("%q", ErrDeviceMismatch.Error())
	}
	for c := ErrInvalidArgument; c <= ErrDistributed; c++ {
		if c.Error() == "" || c.Error() == "unknown status" {
			t.Errorf("code %d: %q", c, c.Error())
		}
	}
	e := &Error{Code: ErrShapeMismatch, Op: "Tensor.Reshape", Msg: "reshape: bad"}
	if !errors.Is(e, ErrShapeMismatch) || errors.Is(e, ErrDeviceMismatch) {
		t.Error("errors.Is")
	}
	if e.Error() != "devtensor: Tensor.Reshape: reshape: bad (shape mismatch)" {
		t.Errorf("%q", e.Error())
	}
}

// With a library too old for the header, constructors fail cleanly with ErrVersion.
func TestVersionTooOldFailsConstructors(t *testing.T) {
	noLeaks(t)
	saved := versionErr
	versionErr = &Error{Code: ErrVersion, Op: "CheckVersion", Msg: "simulated old library"}
	defer func() { versionErr = saved }()
	_, err := Zeros([]int64{1}, Float32, CPU(0))
	wantCode(t, err, ErrVersion)
	_, err = FromSlice([]float32{1}, nil, CPU(0))
	wantCode(t, err, ErrVersion)
	if !errors.Is(CheckVersion(), ErrVersion) {
		t.Fatal(CheckVersion())
	}
}

func TestLikeJoinSplitIndex(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	a := must(s.Track(FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(1))))
	z := must(s.Track(a.ZerosLike()))
	if d := must(z.Device()); d != CPU(1) {
		t.Errorf("ZerosLike on %v", d)
	}
	f := must(s.Track(a.FullLike(7)))
	if v := must(ToSlice[float32](f)); fmt.Sprint(v) != "[7 7 7 7 7 7]" {
		t.Error(v)
	}
	c := must(s.Track(Cat([]*Tensor{a, f}, 0)))
	if sh := must(c.Shape()); fmt.Sprint(sh) != "[4 3]" {
		t.Error(sh)
	}
	st := must(s.Track(Stack([]*Tensor{a, f}, 0)))
	if sh := must(st.Shape()); fmt.Sprint(sh) != "[2 2 3]" {
		t.Error(sh)
	}
	other := must(s.Track(Ones([]int64{2, 3}, Float32, CPU(0))))
	_, err := Cat([]*Tensor{a, other}, 0)
	wantCode(t, err, ErrDeviceMismatch)
	_, err = Cat(nil, 0)
	wantCode(t, err, ErrInvalidArgument)
	parts := must(a.Chunk(3, 1))
	if len(parts) != 3 {
		t.Fatalf("%d chunks", len(parts))
	}
	for _, p := range parts {
		s.Track(p, nil)
	}
	if v := must(ToSlice[float32](parts[2])); fmt.Sprint(v) != "[3 6]" {
		t.Error(v)
	}
	sp := must(a.Split(2, 1))
	for _, p := range sp {
		s.Track(p, nil)
	}
	if len(sp) != 2 {
		t.Errorf("%d splits", len(sp))
	}
	idx := must(s.Track(FromSlice([]int64{2, 0}, nil, CPU(1))))
	sel := must(s.Track(a.IndexSelect(1, idx)))
	if v := must(ToSlice[float32](sel)); fmt.Sprint(v) != "[3 1 6 4]" {
		t.Error(v)
	}
	// index_add: both columns of src land in column 0; scatter_add: one element per row.
	twice := must(s.Track(FromSlice([]int64{0, 0}, nil, CPU(1))))
	ones := must(s.Track(Ones([]int64{2, 2}, Float32, CPU(1))))
	added := must(s.Track(a.IndexAdd(1, twice, ones)))
	if v := must(ToSlice[float32](added)); fmt.Sprint(v) != "[3 2 3 6 5 6]" {
		t.Error("IndexAdd:", v)
	}
	where := must(s.Track(FromSlice([]int64{2, 0}, []int64{2, 1}, CPU(1))))
	vals := must(s.Track(FromSlice([]float32{10, 20}, []int64{2, 1}, CPU(1))))
	scattered := must(s.Track(a.ScatterAdd(1, where, vals)))
	if v := must(ToSlice[float32](scattered)); fmt.Sprint(v) != "[1 2 13 24 5 6]" {
		t.Error("ScatterAdd:", v)
	}
}

func TestProcessSettings(t *testing.T) {
	noLeaks(t)
	if d := must(GetDefaultDType()); d != Float32 {
		t.Errorf("default dtype %v", d)
	}
	wantCode(t, SetDefaultDType(Int64), ErrDTypeMismatch)
	if err := SetDefaultDType(Float64); err != nil {
		t.Fatal(err)
	}
	x := must(Zeros([]int64{1}, DefaultDType, DefaultDevice))
	if d := must(x.DType()); d != Float64 {
		t.Errorf("default dtype not used: %v", d)
	}
	closeAll(t, x)
	if err := SetDefaultDType(Float32); err != nil {
		t.Fatal(err)
	}
	n := must(NumThreads())
	wantCode(t, SetNumThreads(0), ErrInvalidArgument)
	if err := SetNumThreads(n); err != nil {
		t.Fatal(err)
	}
	if err := CPU(0).ManualSeed(1); err != nil {
		t.Fatal(err)
	}
	ms := must(CPU(0).MemoryStats())
	if ms.AllocationCount == 0 {
		t.Errorf("memory stats %+v", ms)
	}
	if err := CPU(0).EmptyCache(); err != nil {
		t.Error(err)
	}
	a := must(Zeros([]int64{2, 3}, Float32, CPU(0)))
	defer a.Close()
	if st := must(a.Strides()); fmt.Sprint(st) != "[3 1]" {
		t.Error(st)
	}
	// Same seed, same numbers.
	if err := ManualSeed(42); err != nil {
		t.Fatal(err)
	}
	r1 := must(Rand([]int64{4}, Float32, CPU(0)))
	defer r1.Close()
	if err := ManualSeed(42); err != nil {
		t.Fatal(err)
	}
	r2 := must(Rand([]int64{4}, Float32, CPU(1)))
	defer r2.Close()
	if fmt.Sprint(must(ToSlice[float32](r1))) != fmt.Sprint(must(ToSlice[float32](r2))) {
		t.Error("same seed gave different values")
	}
}

// new_* constructors take src's dtype and device and the given shape.
func TestNewConstructors(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	src := must(s.Track(FromSlice([]float64{1, 2, 3}, nil, CPU(1))))
	e := must(s.Track(src.NewEmpty([]int64{2, 2})))
	z := must(s.Track(src.NewZeros([]int64{2, 2})))
	o := must(s.Track(src.NewOnes([]int64{3})))
	f := must(s.Track(src.NewFull([]int64{2}, 2.5)))
	for _, x := range []*Tensor{e, z, o, f} {
		if d := must(x.Device()); d != CPU(1) {
			t.Errorf("new_* tensor on %v, want cpu:1", d)
		}
		if d := must(x.DType()); d != Float64 {
			t.Errorf("new_* tensor of %v, want float64", d)
		}
	}
	if sh := must(e.Shape()); fmt.Sprint(sh) != "[2 2]" {
		t.Error(sh)
	}
	if v := must(ToSlice[float64](z)); fmt.Sprint(v) != "[0 0 0 0]" {
		t.Error(v)
	}
	if v := must(ToSlice[float64](o)); fmt.Sprint(v) != "[1 1 1]" {
		t.Error(v)
	}
	if v := must(ToSlice[float64](f)); fmt.Sprint(v) != "[2.5 2.5]" {
		t.Error(v)
	}
	// A 0-d result from a nil shape; the value is cast to src's dtype.
	i := must(s.Track(FromSlice([]int32{7}, nil, CPU(0))))
	fi := must(s.Track(i.NewFull(nil, 3.9)))
	if v := must(ToSlice[int32](fi)); fmt.Sprint(v) != "[3]" {
		t.Error(v)
	}
	if sh := must(fi.Shape()); len(sh) != 0 {
		t.Error(sh)
	}
	_, err := src.NewZeros([]int64{-1})
	wantCode(t, err, ErrInvalidArgument)
	c := must(Zeros([]int64{1}, Float32, CPU(0)))
	c.Close()
	_, err = c.NewOnes([]int64{1})
	wantCode(t, err, ErrClosed)
}

// Pinned memory needs CUDA: without it EmptyPinned and PinMemory fail with
// ErrDeviceUnavailable, and no tensor is pinned.
func TestPinnedMemory(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, CPU(0)))
	defer x.Close()
	if must(x.IsPinned()) {
		t.Error("an ordinary tensor is pinned")
	}
	if !CUDAIsAvailable() {
		_, err := EmptyPinned([]int64{4}, Float32)
		if e := wantCode(t, err, ErrDeviceUnavailable); e.Msg == "" {
			t.Error("EmptyPinned's error gives no reason")
		}
		_, err = x.PinMemory()
		wantCode(t, err, ErrDeviceUnavailable)
		return
	}
	e := must(EmptyPinned([]int64{4}, Float32))
	defer e.Close()
	if !must(e.IsPinned()) {
		t.Error("EmptyPinned is not pinned")
	}
	if d := must(e.Device()); d != CPU(0) {
		t.Errorf("EmptyPinned on %v", d)
	}
	p := must(x.PinMemory())
	defer p.Close()
	if !must(p.IsPinned()) || sameHandle(p, x) {
		t.Error("PinMemory of an unpinned tensor is not a pinned copy")
	}
	if v := must(ToSlice[float32](p)); fmt.Sprint(v) != "[1 2 3 4]" {
		t.Error(v)
	}
	again := must(p.PinMemory())
	defer again.Close()
	if !sameHandle(again, p) {
		t.Error("PinMemory of a pinned tensor is not the tensor itself")
	}
	g := must(x.To(CUDA(0)))
	defer g.Close()
	_, err := g.PinMemory()
	wantCode(t, err, ErrNotSupported)
}

func TestAllowTF32(t *testing.T) {
	if must(AllowTF32()) {
		t.Fatal("TF32 is allowed by default")
	}
	if err := SetAllowTF32(true); err != nil {
		t.Fatal(err)
	}
	if !must(AllowTF32()) {
		t.Error("SetAllowTF32(true) did not stick")
	}
	if err := SetAllowTF32(false); err != nil {
		t.Fatal(err)
	}
	if must(AllowTF32()) {
		t.Error("SetAllowTF32(false) did not stick")
	}
}

// CopyFrom (dt_copy_): a row broadcast and cast into t, t's view sees it; a shape that
// does not broadcast is refused with t unchanged; a tensor that requires grad takes a
// copy only inside NoGrad.
func TestCopyFromBroadcastsCastsAndRespectsGradMode(t *testing.T) {
	dst := must(Zeros([]int64{2, 2}, Float64, CPU(0)))
	defer dst.Close()
	row := must(FromSlice([]float32{1.5, -2}, []int64{2}, CPU(0)))
	defer row.Close()
	if err := dst.CopyFrom(row); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float64](dst)); fmt.Sprint(got) != "[1.5 -2 1.5 -2]" {
		t.Errorf("after CopyFrom %v", got)
	}
	three := must(Zeros([]int64{3}, Float32, CPU(0)))
	defer three.Close()
	wantCode(t, dst.CopyFrom(three), ErrShapeMismatch)
	if got := must(ToSlice[float64](dst)); fmt.Sprint(got) != "[1.5 -2 1.5 -2]" {
		t.Errorf("a failed CopyFrom changed t: %v", got)
	}
	w := must(Zeros([]int64{2}, Float32, CPU(0)))
	defer w.Close()
	if err := w.SetRequiresGrad(true); err != nil {
		t.Fatal(err)
	}
	wantCode(t, w.CopyFrom(row), ErrNotSupported)
	if err := NoGrad(func() error { return w.CopyFrom(row) }); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](w)); fmt.Sprint(got) != "[1.5 -2]" {
		t.Errorf("inside NoGrad %v", got)
	}
}

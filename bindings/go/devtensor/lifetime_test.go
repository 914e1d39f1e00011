package devtensor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// slotN is the element count of the tensors these tests close into the release slot:
// more than the fast path takes (fastMaxNumel), so that they wait there in every build
// (a small tensor's Close releases it at once where the build has the fast path:
// TestClosingASmallTensorReleasesItAtOnce).
const slotN = fastMaxNumel + 1

// Close defers the release; ReleasePending and LiveHandles release it.
func TestCloseDefersRelease(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	x := must(Zeros([]int64{slotN}, Float32, CPU(0)))
	if got := liveHandlesUnflushed(); got != start+1 {
		t.Fatalf("live %d after Zeros, want %d", got, start+1)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got := liveHandlesUnflushed(); got != start+1 {
		t.Fatalf("the tensor was released at Close (live %d); it should wait in the release slot", got)
	}
	_, err := x.Add(x) // fails before its cgo call: must leave the slot alone
	wantCode(t, err, ErrClosed)
	if got := liveHandlesUnflushed(); got != start+1 {
		t.Fatalf("live %d after a failed Add, want %d (the slot still holding x)", got, start+1)
	}
	ReleasePending()
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after ReleasePending, want %d", got, start)
	}
}

// ReleasePending empties the release slot, and LiveHandles too.
func TestReleasePendingFlushesSlot(t *testing.T) {
	ReleasePending()
	if h := atomicSlot(); h != 0 {
		t.Fatalf("release slot holds %#x after ReleasePending", h)
	}
	start := liveHandlesUnflushed()
	errs := releaseErrors()
	x := must(Zeros([]int64{slotN}, Float32, CPU(0)))
	_ = x.Close()
	if atomicSlot() == 0 {
		t.Fatal("Close left the release slot empty")
	}
	if got := liveHandlesUnflushed(); got != start+1 {
		t.Fatalf("live %d with x in the slot, want %d", got, start+1)
	}
	ReleasePending()
	if h := atomicSlot(); h != 0 {
		t.Fatalf("release slot holds %#x after ReleasePending", h)
	}
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after ReleasePending, want %d", got, start)
	}
	y := must(Zeros([]int64{slotN}, Float32, CPU(0)))
	_ = y.Close()
	if got := LiveHandles(); got != start {
		t.Fatalf("LiveHandles %d with y closed, want %d (it must empty the slot)", got, start)
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Fatalf("%d deferred releases failed", n)
	}
}

// The next cgo call that makes a tensor (an op, a constructor, To, Cat, Detach) releases
// the slot's handle in its own call, even when the call itself fails; in-place ops leave
// the slot alone. (The tensors here are too large for the fast path, whose calls leave
// the slot alone: TestClosingASmallTensorReleasesItAtOnce.)
func TestOpReleasesSlot(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	a := must(Ones([]int64{slotN}, Float32, CPU(0)))
	defer a.Close()
	x := must(Zeros([]int64{slotN}, Float32, CPU(0)))
	_ = x.Close()
	if err := a.AddInPlace(a); err != nil {
		t.Fatal(err)
	}
	if got := liveHandlesUnflushed(); got != start+2 {
		t.Fatalf("live %d after an in-place op, want %d (x still in the slot)", got, start+2)
	}
	z := must(a.Add(a))
	if got := liveHandlesUnflushed(); got != start+2 { // a, z: x released by Add
		t.Fatalf("live %d after Add, want %d (x released by it)", got, start+2)
	}
	if got := must(ToSlice[float32](z)); got[0] != 4 || got[slotN-1] != 4 {
		t.Fatalf("Add after the slot release: %v, want every element 4", got[:4])
	}
	_ = z.Close()
	b := must(Ones([]int64{3}, Float32, CPU(0)))
	defer b.Close()
	_, err := a.Add(b) // shapes [slotN] and [3] do not broadcast: the op fails in C
	wantCode(t, err, ErrShapeMismatch)
	if got := liveHandlesUnflushed(); got != start+2 { // a, b: z released by the failed Add
		t.Fatalf("live %d after a failing Add, want %d (z released by it)", got, start+2)
	}
	cond := must(a.Gt(a))
	defer cond.Close()
	idx := must(FromSlice([]int64{0, 2}, nil, CPU(0)))
	defer idx.Close()
	for i, f := range []func() (*Tensor, error){
		func() (*Tensor, error) { return a.MulScalar(2) },
		func() (*Tensor, error) { return a.Neg() },
		func() (*Tensor, error) { return Where(cond, a, a) },
		func() (*Tensor, error) { return a.Sum() },
		func() (*Tensor, error) { return a.Softmax(0) },
		func() (*Tensor, error) { return a.Cumsum(0) },
		func() (*Tensor, error) { return a.Argsort(0, false) },
		func() (*Tensor, error) { return a.Reshape(1, slotN) },
		func() (*Tensor, error) { return a.Unsqueeze(0) },
		func() (*Tensor, error) { return a.ZerosLike() },
		func() (*Tensor, error) { return a.FullLike(1) },
		func() (*Tensor, error) { return a.IndexSelect(0, idx) },
		func() (*Tensor, error) { return Zeros([]int64{slotN}, Float32, CPU(0)) },
		func() (*Tensor, error) { return Full([]int64{slotN}, 7, Float32, CPU(0)) },
		func() (*Tensor, error) { return Arange(0, 3, 1, Float32, CPU(0)) },
		func() (*Tensor, error) { return FromSlice(make([]float32, slotN), nil, CPU(0)) },
		func() (*Tensor, error) { return a.ToDType(Float64) },
		func() (*Tensor, error) { return Cat([]*Tensor{a, a}, 0) },
		func() (*Tensor, error) { return a.Detach() },
	} {
		_ = ReleasePending()
		x := must(Zeros([]int64{slotN}, Float32, CPU(0)))
		_ = x.Close()
		before := liveHandlesUnflushed()
		y := must(f())
		// f made y (+1) and released x (-1).
		if got := liveHandlesUnflushed(); got != before {
			t.Fatalf("op %d: live %d after the op, want %d (x released by it)", i, got, before)
		}
		_ = y.Close()
	}
	ReleasePending()
	if got := liveHandlesUnflushed(); got != start+4 { // a, b, cond, idx
		t.Fatalf("live %d at the end, want %d", got, start+4)
	}
}

// A closed reference to a tensor still open through another (To to the same device gives
// the same handle, retained) is released by the next op even when that op reads the
// other reference: the release drops one reference, and the op reads the tensor after.
func TestSlotReleaseOfAliasedHandle(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3, 4}, nil, CPU(0)))
	defer x.Close()
	x2 := must(x.To(CPU(0)))
	if !sameHandle(x, x2) {
		t.Skip("To to the same device made a new handle; nothing aliased to test")
	}
	_ = x2.Close()
	if atomicSlot() == 0 {
		t.Fatal("the closed alias is not in the release slot")
	}
	z := must(x.Add(x)) // releases x2's reference, then reads x
	defer z.Close()
	if got := must(ToSlice[float32](z)); got[0] != 2 || got[3] != 8 {
		t.Fatalf("x + x = %v, want [2 4 6 8]", got)
	}
	if got := must(ToSlice[float32](x)); got[0] != 1 || got[3] != 4 {
		t.Fatalf("x = %v after its alias was released, want [1 2 3 4]", got)
	}
}

// When Close finds the slot full, it releases the older handle at once: at most one
// closed tensor waits.
func TestCloseReleasesTheWaitingTensor(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	ts := make([]*Tensor, 5)
	for i := range ts {
		ts[i] = must(Zeros([]int64{slotN}, Float32, CPU(0)))
	}
	for i, x := range ts {
		_ = x.Close()
		// ts[i] waits in the slot; the ones closed before it are released.
		if got, want := liveHandlesUnflushed(), start+len(ts)-i; got != want {
			t.Fatalf("live %d after closing %d of %d, want %d (one waiting)", got, i+1, len(ts), want)
		}
	}
	ReleasePending()
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after ReleasePending, want %d", got, start)
	}
}

// A Scope releases everything it tracked in one go, the slot's tensor too.
func TestScopeCloseReleasesAll(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	x := must(Ones([]int64{slotN}, Float32, CPU(0)))
	s := NewScope()
	a := must(s.Track(x.AddScalar(1)))
	b := must(s.Track(a.Mul(a)))
	must(s.Track(b, nil))                              // tracked twice: released once
	_ = a.Close()                                      // already closed when the Scope closes: skipped
	_ = x.Close()                                      // waits in the slot (a was released by it)
	if got := liveHandlesUnflushed(); got != start+2 { // b, and x waiting
		t.Fatalf("live %d before Scope.Close, want %d", got, start+2)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after Scope.Close, want %d", got, start)
	}
	if _, err := b.Neg(); !errors.Is(err, ErrClosed) {
		t.Fatalf("b after Scope.Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// releaseErrors, which TestReleaseSlotConcurrent relies on, sees a double release, and
// ReleasePending returns the error of the release it performed.
func TestDoubleReleaseIsCounted(t *testing.T) {
	ReleasePending()
	errs := releaseErrors()
	x := must(Zeros([]int64{4}, Float32, CPU(0)))
	h := x.h
	_ = x.Close()
	if err := ReleasePending(); err != nil {
		t.Fatalf("ReleasePending of a live tensor: %v", err)
	}
	releaseLater(h) // released already: the library refuses it (generation check)
	wantCode(t, ReleasePending(), ErrInvalidHandle)
	if n := releaseErrors() - errs; n != 1 {
		t.Fatalf("releaseErrors counted %d failed releases, want 1", n)
	}
	if err := ReleasePending(); err != nil { // the slot is empty
		t.Fatalf("ReleasePending with an empty slot: %v", err)
	}
}

// Many goroutines closing and making tensors at once: every handle is released exactly
// once (no release fails, the live count comes back) and no op sees a released input.
func TestReleaseSlotConcurrent(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	errs := releaseErrors()
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	y := must(Ones([]int64{4}, Float32, CPU(0)))
	const goroutines, iters = 200, 100
	var wg sync.WaitGroup
	fail := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				z, err := x.Add(y)
				if err != nil {
					fail <- err
					return
				}
				w, err := z.MulScalar(3)
				if err != nil {
					fail <- err
					return
				}
				if (g+i)%2 == 0 { // both orders of Close
					_ = z.Close()
				}
				v, err := ToSlice[float32](w)
				if err != nil {
					fail <- err
					return
				}
				if v[0] != 6 || v[3] != 6 {
					fail <- &Error{Code: ErrInternal, Op: "test", Msg: "wrong sum"}
					return
				}
				_ = w.Close()
				_ = z.Close() // a no-op when closed above
				switch (g + i) % 37 {
				case 0:
					ReleasePending()
				case 1:
					_ = LiveHandles()
				case 2: // a larger tensor takes the same path
					_ = must(Zeros([]int64{1 << 14}, Float32, CPU(0))).Close()
				}
			}
		}(g)
	}
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	_ = x.Close()
	_ = y.Close()
	ReleasePending()
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after the goroutines and ReleasePending, want %d", got, start)
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Fatalf("%d deferred releases failed (a handle released twice?)", n)
	}
}

// A large closed tensor waits no longer than a small one: the next call that can
// allocate releases it before allocating, so a loop that closes one large tensor and
// makes the next never holds two.
func TestLargeTensorReleasedBeforeNextAllocation(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	const n = 16 << 20 // 64 MiB of float32
	before := must(CPU(0).MemoryStats())
	x := must(Zeros([]int64{n}, Float32, CPU(0)))
	_ = x.Close()
	if atomicSlot() == 0 {
		t.Fatal("the closed tensor is not in the release slot")
	}
	y := must(Zeros([]int64{n}, Float32, CPU(0))) // releases x first
	if atomicSlot() != 0 {
		t.Fatal("Zeros left the closed tensor in the release slot")
	}
	if got := liveHandlesUnflushed(); got != start+1 {
		t.Fatalf("live %d after Zeros, want %d (x released by it)", got, start+1)
	}
	_ = y.Close()
	if got := LiveHandles(); got != start {
		t.Fatalf("LiveHandles %d at the end, want %d", got, start)
	}
	// Had y been allocated before x's release, the peak would have reached 128 MiB over
	// what was live before (unless an earlier peak hides it).
	after := must(CPU(0).MemoryStats())
	if both := before.AllocatedBytes + 2*4*n; before.PeakAllocatedBytes >= both {
		t.Logf("an earlier peak (%d bytes) hides this one; peak not checked", before.PeakAllocatedBytes)
	} else if after.PeakAllocatedBytes >= both {
		t.Fatalf("peak %d bytes: x (64 MiB) and y were live at once over %d bytes before",
			after.PeakAllocatedBytes, before.AllocatedBytes)
	}
}

// A DLPack round trip shares memory, and the export's memory outlives the original Tensor.
func TestDLPackRoundTrip(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, CPU(0)))
	p, err := x.ToDLPack()
	if err != nil {
		t.Fatal(err)
	}
	y, err := FromDLPack(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := y.AddScalarInPlace(10); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](x)); got[0] != 11 || got[3] != 14 {
		t.Fatalf("a write through the import is not seen: %v", got)
	}
	_ = x.Close()
	if got := must(ToSlice[float32](y)); got[1] != 12 {
		t.Fatalf("the import lost its memory when the original closed: %v", got)
	}
	_ = y.Close()
	_, err = FromDLPack(nil)
	wantCode(t, err, ErrInvalidArgument)
}

// closeAtOnce calls closeIt from n goroutines released together (they spin on a
// counter until all are ready, so those on a CPU start within nanoseconds of each other),
// and returns the errors they got (nil ones included).
func closeAtOnce(n int, closeIt func() error) []error {
	var wg sync.WaitGroup
	var ready int32
	errs := make([]error, n)
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			atomic.AddInt32(&ready, 1)
			for atomic.LoadInt32(&ready) < int32(n) {
				runtime.Gosched()
			}
			errs[g] = closeIt()
		}(g)
	}
	wg.Wait()
	return errs
}

// The race detector (go test -race) reports a Close that reads or writes the handle
// field without an atomic at once; without it, a lost race (two Closes both taking the
// handle) is rarer, hence many rounds.
const closers, closeRounds = 16, 2000

// Many goroutines closing one Tensor at once release its reference exactly once: its
// alias (To to the same device: the same handle, retained) keeps its own reference and
// still reads back its values.
func TestTensorCloseConcurrent(t *testing.T) {
	noLeaks(t)
	errs := releaseErrors()
	for r := 0; r < closeRounds; r++ {
		_ = ReleasePending()
		start := liveHandlesUnflushed()
		x := must(FromSlice([]float32{1, 2, 3, 4}, nil, CPU(0)))
		x2 := must(x.To(CPU(0)))
		if !sameHandle(x, x2) {
			_, _ = x.Close(), x2.Close()
			t.Skip("To to the same device made a new handle; nothing aliased to test")
		}
		for _, err := range closeAtOnce(closers, x.Close) {
			if err != nil {
				t.Fatalf("round %d: Tensor.Close: %v", r, err)
			}
		}
		if err := ReleasePending(); err != nil {
			t.Fatalf("round %d: the release of x failed: %v", r, err)
		}
		got, err := ToSlice[float32](x2)
		if err != nil {
			t.Fatalf("round %d: the alias after %d concurrent x.Close: %v (its reference was released too)",
				r, closers, err)
		}
		if got[0] != 1 || got[3] != 4 {
			t.Fatalf("round %d: the alias reads %v, want [1 2 3 4]", r, got)
		}
		if live := liveHandlesUnflushed(); live != start+1 {
			t.Fatalf("round %d: live %d with the alias open, want %d", r, live, start+1)
		}
		_ = x2.Close()
		if err := ReleasePending(); err != nil {
			t.Fatalf("round %d: the release of the alias failed: %v", r, err)
		}
		if live := liveHandlesUnflushed(); live != start {
			t.Fatalf("round %d: live %d after closing both, want %d", r, live, start)
		}
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Fatalf("%d deferred releases failed (a handle released twice?)", n)
	}
}

// Many goroutines closing one Module at once: exactly one releases it (the live count
// drops by one) and every Close returns nil (a second release would fail with
// ErrInvalidHandle). A Sequential holding the module keeps working.
func TestModuleCloseConcurrent(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{-1, 2}, nil, CPU(0)))
	defer x.Close()
	for r := 0; r < closeRounds; r++ {
		start := LiveHandles()
		m := must(ReLU())
		seq := must(Sequential(m))
		if live := LiveHandles(); live != start+2 {
			t.Fatalf("round %d: live %d after ReLU and Sequential, want %d", r, live, start+2)
		}
		for _, err := range closeAtOnce(closers, m.Close) {
			if err != nil {
				t.Fatalf("round %d: concurrent Module.Close: %v (released twice?)", r, err)
			}
		}
		if live := LiveHandles(); live != start+1 {
			t.Fatalf("round %d: live %d after the concurrent Closes, want %d (exactly one release)",
				r, live, start+1)
		}
		y, err := seq.Forward(x)
		if err != nil {
			t.Fatalf("round %d: Sequential after its child's concurrent Close: %v", r, err)
		}
		if got := must(ToSlice[float32](y)); got[0] != 0 || got[1] != 2 {
			t.Fatalf("round %d: relu(%v) = %v", r, []float32{-1, 2}, got)
		}
		_ = y.Close()
		if err := seq.Close(); err != nil {
			t.Fatal(err)
		}
		if live := LiveHandles(); live != start {
			t.Fatalf("round %d: live %d at the end, want %d", r, live, start)
		}
	}
}

// The same for an Optimizer: exactly one of the concurrent Closes releases it.
func TestOptimizerCloseConcurrent(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(2, 2, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer lin.Close()
	params := must(lin.Parameters())
	ps := make([]*Tensor, len(params))
	for i, p := range params {
		ps[i] = p.Tensor
		defer p.Tensor.Close()
	}
	for r := 0; r < closeRounds; r++ {
		start := LiveHandles()
		opt := must(SGD(ps, 0.1))
		if live := LiveHandles(); live != start+1 {
			t.Fatalf("round %d: live %d after SGD, want %d", r, live, start+1)
		}
		for _, err := range closeAtOnce(closers, opt.Close) {
			if err != nil {
				t.Fatalf("round %d: concurrent Optimizer.Close: %v (released twice?)", r, err)
			}
		}
		if live := LiveHandles(); live != start {
			t.Fatalf("round %d: live %d after the concurrent Closes, want %d (exactly one release)",
				r, live, start)
		}
		wantCode(t, opt.Step(), ErrClosed)
	}
}

// Scope.Close racing Scope.Close, Track, and Close of the Tensors it tracks: every
// handle is released exactly once.
func TestScopeCloseConcurrent(t *testing.T) {
	noLeaks(t)
	errs := releaseErrors()
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	defer x.Close()
	for r := 0; r < closeRounds/3; r++ {
		s := NewScope()
		tracked := make([]*Tensor, 8)
		for i := range tracked {
			tracked[i] = must(s.Track(x.AddScalar(float64(i))))
		}
		var wg sync.WaitGroup
		gate := make(chan struct{})
		fail := make(chan error, closers)
		for g := 0; g < closers; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				<-gate
				switch g % 4 {
				case 0:
					_ = s.Close()
				case 1: // a Track after Close closes its Tensor and says so
					y, err := s.Track(x.Neg())
					if err != nil && !errors.Is(err, ErrClosed) {
						fail <- err
					}
					if err == nil && y == nil {
						fail <- errors.New("Track returned neither a tensor nor an error")
					}
				default: // the tracked tensors closed directly, racing Scope.Close
					for _, tt := range tracked {
						_ = tt.Close()
					}
				}
			}(g)
		}
		close(gate)
		wg.Wait()
		close(fail)
		for err := range fail {
			t.Fatalf("round %d: %v", r, err)
		}
		_ = s.Close() // the Tracks that won the race against the first Close
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Fatalf("%d deferred releases failed (a handle released twice?)", n)
	}
}

// go vet reports a copy of a Tensor, Module, Optimizer, Scope, Stream, Event or
// ProcessGroup (their noCopy field): a copy would be a second owner of one reference.
// Vets a tiny package that imports this one through a replace directive (no module
// proxy needed).
func TestVetReportsCopies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const modPath = "github.com/devtensor/devtensor/bindings/go/devtensor"
	gomod := "module vetcopy\n\ngo 1.19\n\nrequire " + modPath + " v0.0.0\n\nreplace " + modPath + " => " + here + "\n"
	src := `package vetcopy

import dt "` + modPath + `"

func CopyTensor(x *dt.Tensor) { y := *x; _ = y.Close }
func CopyModule(m *dt.Module) { n := *m; _ = n.Close }
func CopyOptimizer(o *dt.Optimizer) { p := *o; _ = p.Close }
func CopyScope(s *dt.Scope) { c := *s; _ = c.Close }
func CopyStream(s *dt.Stream) { c := *s; _ = c.Close }
func CopyEvent(e *dt.Event) { f := *e; _ = f.Close }
func CopyProcessGroup(g *dt.ProcessGroup) { h := *g; _ = h.Close }
func ByPointer(x *dt.Tensor) error { return x.Close() } // fine: not reported
`
	for name, text := range map[string]string{"go.mod": gomod, "copy.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The environment passes through (PKG_CONFIG_PATH, or CGO_CFLAGS/CGO_LDFLAGS, and
	// GOCACHE), so the cgo build of this package finds the library as its tests did.
	cmd := exec.Command(gobin, "vet", "-tags="+cgoBuildTags, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go vet passed a package that copies a Tensor by value:\n%s", out)
	}
	if !strings.Contains(string(out), "copies lock") && !strings.Contains(string(out), "passes lock by value") {
		t.Fatalf("go vet failed (%v), but not on the copies:\n%s", err, out)
	}
	for line, what := range map[int]string{5: "Tensor", 6: "Module", 7: "Optimizer", 8: "Scope", 9: "Stream", 10: "Event",
		11: "ProcessGroup"} {
		if !strings.Contains(string(out), fmt.Sprintf("copy.go:%d:", line)) {
			t.Errorf("go vet did not report the copy of a %s (copy.go:%d):\n%s", what, line, out)
		}
	}
	if strings.Contains(string(out), "copy.go:12:") {
		t.Errorf("go vet reported the use by pointer (copy.go:12):\n%s", out)
	}
}

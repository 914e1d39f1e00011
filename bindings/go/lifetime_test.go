package devtensor

import (
	"errors"
	"sync"
	"testing"
)

// Close defers the release; ReleasePending and LiveHandles release it.
func TestCloseDefersRelease(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	x := must(Zeros([]int64{4}, Float32, CPU))
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
	x := must(Zeros([]int64{4}, Float32, CPU))
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
	y := must(Zeros([]int64{4}, Float32, CPU))
	_ = y.Close()
	if got := LiveHandles(); got != start {
		t.Fatalf("LiveHandles %d with y closed, want %d (it must empty the slot)", got, start)
	}
	if n := releaseErrors() - errs; n != 0 {
		t.Fatalf("%d deferred releases failed", n)
	}
}

// The next call that makes a tensor (an op, a constructor, To, Cat, Detach) releases the
// slot's handle in its own cgo call, even when the call itself fails; in-place ops leave
// the slot alone.
func TestOpReleasesSlot(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	a := must(Ones([]int64{4}, Float32, CPU))
	defer a.Close()
	x := must(Zeros([]int64{4}, Float32, CPU))
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
	if got := must(ToSlice[float32](z)); got[0] != 4 || got[3] != 4 {
		t.Fatalf("Add after the slot release: %v, want [4 4 4 4]", got)
	}
	_ = z.Close()
	b := must(Ones([]int64{3}, Float32, CPU))
	defer b.Close()
	_, err := a.Add(b) // shapes [4] and [3] do not broadcast: the op fails in C
	wantCode(t, err, ErrShapeMismatch)
	if got := liveHandlesUnflushed(); got != start+2 { // a, b: z released by the failed Add
		t.Fatalf("live %d after a failing Add, want %d (z released by it)", got, start+2)
	}
	cond := must(a.Gt(a))
	defer cond.Close()
	idx := must(FromSlice([]int64{0, 2}, nil, CPU))
	defer idx.Close()
	for _, f := range []func() (*Tensor, error){
		func() (*Tensor, error) { return a.MulScalar(2) },
		func() (*Tensor, error) { return a.Neg() },
		func() (*Tensor, error) { return Where(cond, a, a) },
		func() (*Tensor, error) { return a.Sum(nil, false) },
		func() (*Tensor, error) { return a.Softmax(0) },
		func() (*Tensor, error) { return a.Reshape(2, 2) },
		func() (*Tensor, error) { return a.Unsqueeze(0) },
		func() (*Tensor, error) { return a.ZerosLike() },
		func() (*Tensor, error) { return a.FullLike(1) },
		func() (*Tensor, error) { return a.IndexSelect(0, idx) },
		func() (*Tensor, error) { return Zeros([]int64{2}, Float32, CPU) },
		func() (*Tensor, error) { return Full([]int64{2}, 7, Float32, CPU) },
		func() (*Tensor, error) { return Arange(0, 3, 1, Float32, CPU) },
		func() (*Tensor, error) { return FromSlice([]float32{1, 2}, nil, CPU) },
		func() (*Tensor, error) { return a.ToDType(Float64) },
		func() (*Tensor, error) { return Cat([]*Tensor{a, a}, 0) },
		func() (*Tensor, error) { return a.Detach() },
	} {
		x := must(Zeros([]int64{4}, Float32, CPU))
		_ = x.Close()
		before := liveHandlesUnflushed()
		y := must(f())
		// f made y (+1) and released x (-1).
		if got := liveHandlesUnflushed(); got != before {
			t.Fatalf("live %d after the op, want %d (x released by it)", got, before)
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
	x := must(FromSlice([]float32{1, 2, 3, 4}, nil, CPU))
	defer x.Close()
	x2 := must(x.To(CPU))
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
		ts[i] = must(Zeros([]int64{2}, Float32, CPU))
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
	x := must(Ones([]int64{3}, Float32, CPU))
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

// releaseErrors, which TestReleaseSlotConcurrent relies on, sees a double release.
func TestDoubleReleaseIsCounted(t *testing.T) {
	ReleasePending()
	errs := releaseErrors()
	x := must(Zeros([]int64{4}, Float32, CPU))
	h := x.h
	_ = x.Close()
	ReleasePending()
	releaseLater(h) // released already: the library refuses it (generation check)
	ReleasePending()
	if n := releaseErrors() - errs; n != 1 {
		t.Fatalf("releaseErrors counted %d failed releases, want 1", n)
	}
}

// Many goroutines closing and making tensors at once: every handle is released exactly
// once (no release fails, the live count comes back) and no op sees a released input.
func TestReleaseSlotConcurrent(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	errs := releaseErrors()
	x := must(Ones([]int64{4}, Float32, CPU))
	y := must(Ones([]int64{4}, Float32, CPU))
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
					_ = must(Zeros([]int64{1 << 14}, Float32, CPU)).Close()
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
	before := must(CPU.MemoryStats())
	x := must(Zeros([]int64{n}, Float32, CPU))
	_ = x.Close()
	if atomicSlot() == 0 {
		t.Fatal("the closed tensor is not in the release slot")
	}
	y := must(Zeros([]int64{n}, Float32, CPU)) // releases x first
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
	after := must(CPU.MemoryStats())
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
	x := must(FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, CPU))
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

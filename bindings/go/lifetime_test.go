package devtensor

import "testing"

// Close of a small tensor queues its release; ReleasePending and LiveHandles release it.
func TestCloseQueuesSmallTensors(t *testing.T) {
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
		t.Fatalf("a 16-byte tensor was released at Close (live %d); it should wait in the queue", got)
	}
	_, err := x.Add(x)
	wantCode(t, err, ErrClosed)
	ReleasePending()
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after ReleasePending, want %d", got, start)
	}
}

// The 64th queued Close releases the whole queue in one call.
func TestQueueReleasesWhenFull(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	ts := make([]*Tensor, pendingCap)
	for i := range ts {
		ts[i] = must(Zeros([]int64{2}, Float32, CPU))
	}
	for i := 0; i < pendingCap-1; i++ {
		_ = ts[i].Close()
	}
	if got := liveHandlesUnflushed(); got != start+pendingCap {
		t.Fatalf("live %d with %d queued, want %d", got, pendingCap-1, start+pendingCap)
	}
	_ = ts[pendingCap-1].Close()
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after the %dth Close, want %d", got, pendingCap, start)
	}
}

// A tensor of 64 KiB or more is released by Close itself: GPU memory never waits.
func TestCloseReleasesLargeTensorsAtOnce(t *testing.T) {
	ReleasePending()
	start := liveHandlesUnflushed()
	x := must(Zeros([]int64{smallTensorBytes / 4}, Float32, CPU)) // exactly 64 KiB
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got := liveHandlesUnflushed(); got != start {
		t.Fatalf("live %d after closing a 64 KiB tensor, want %d", got, start)
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

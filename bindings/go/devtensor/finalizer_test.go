package devtensor

import (
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"
)

// Go's tiny allocator packs pointer-free objects smaller than 16 bytes into shared
// 16-byte blocks, and a block is freed only when every object in it is unreachable: the
// finalizer of a forgotten object that shares its block with a live one never runs
// (runtime.SetFinalizer's documentation says as much). Every type that carries a
// finalizer is therefore at least 16 bytes (or holds a pointer), which keeps it out of
// the tiny allocator (commit 30b6155 found it for StateDict; Optimizer, Stream, Event and
// ProcessGroup had the same 8-byte layout).
func TestFinalizerTypesAvoidTheTinyAllocator(t *testing.T) {
	const maxTiny = 16 // the runtime's maxTinySize: objects below it may share a block
	for name, size := range map[string]uintptr{
		"Tensor slab":  unsafe.Sizeof(tensorSlab{}),
		"Module":       unsafe.Sizeof(Module{}),
		"StateDict":    unsafe.Sizeof(StateDict{}),
		"Optimizer":    unsafe.Sizeof(Optimizer{}),
		"Stream":       unsafe.Sizeof(Stream{}),
		"Event":        unsafe.Sizeof(Event{}),
		"Graph":        unsafe.Sizeof(Graph{}),
		"ProcessGroup": unsafe.Sizeof(ProcessGroup{}),
	} {
		if size < maxTiny {
			t.Errorf("%s is %d bytes: below %d its finalizer may never run (tiny allocator)", name, size, maxTiny)
		}
	}
}

// neighbours are live 8-byte pointer-free objects, each allocated right after a handle
// that is then forgotten: before the padding, each sat in the same 16-byte tiny block as
// the handle, whose finalizer then never ran.
var neighbours []*uint64

// forgetBesideLive calls create n times, forgetting each result and allocating a live
// neighbour right after it, then collects (while the neighbours live) until the live
// handle count is back where it was (or gives up) and reports a difference.
func forgetBesideLive(t *testing.T, what string, n int, create func(i int)) {
	t.Helper()
	before := LiveHandles()
	neighbours = make([]*uint64, 0, n)
	for i := 0; i < n; i++ {
		create(i)
		neighbours = append(neighbours, new(uint64))
	}
	for i := 0; i < 100 && LiveHandles() != before; i++ {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if got := LiveHandles(); got != before {
		t.Errorf("%s: %d of %d forgotten handles were never finalized (each beside a live object)", what, got-before, n)
	}
	// Without their neighbours the blocks are freed and any finalizer still waiting
	// runs, so that the next type starts from the same count.
	runtime.KeepAlive(neighbours)
	neighbours = nil
	for i := 0; i < 100 && LiveHandles() != before; i++ {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
}

// Forgotten Optimizers, Streams, Events, ProcessGroups and StateDicts, each beside a
// live pointer-free object, are all released by their finalizers.
func TestFinalizersRunBesideLiveObjects(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(2, 2, LinearOptions{}))
	defer lin.Close()
	params := must(lin.Parameters())
	defer params.Close()
	forgetBesideLive(t, "Optimizer", 20, func(int) { must(SGD(params, 0.1)) })
	forgetBesideLive(t, "Stream", 20, func(int) { must(NewStream(CPU(0))) })
	forgetBesideLive(t, "Event", 20, func(int) { must(NewEvent(CPU(0))) })
	forgetBesideLive(t, "StateDict", 20, func(int) { must(lin.StateDict()) })
	dir := t.TempDir()
	forgetBesideLive(t, "ProcessGroup", 5, func(i int) {
		store := "file://" + filepath.Join(dir, "store"+strconv.Itoa(i))
		must(NewProcessGroup("gloo", store, 0, 1, 10*time.Second))
	})
}

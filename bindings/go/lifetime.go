package devtensor

// #include "shim.h"
// uint64_t gdt_release_errors;
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The per-op cost of the binding is one cgo call (about 65 ns on a 2-vCPU VM) plus what
// the wrapper adds, and a per-Tensor finalizer alone costs more than the cgo call
// (runtime.SetFinalizer and clearing it: about 175 ns). Two devices keep a tiny op near
// the cost of its cgo call:
//
//   - Tensors are allocated 64 at a time in a slab that carries ONE finalizer. The GC
//     runs it once every Tensor of the slab is unreachable, and it releases those still
//     open: the safety net for a forgotten Close, at 1/64 of a finalizer per Tensor.
//     (A Tensor kept alive keeps its slab-mates' forgotten handles too, until it dies.)
//   - Close of a tensor under smallTensorBytes costs no cgo call: it puts the handle in
//     a one-handle release slot, and the next op that makes a tensor (the elementwise
//     families, reductions, views: the shims that take a trailing "rel" argument) takes
//     it out and passes it BY VALUE to its C shim, which releases it just before the op.
//     So in a loop of z := x.Add(y); z.Close() every op frees the previous result right
//     before allocating its own, and the allocator hands back the chunk it just freed,
//     still in cache, as the C loop does. Why: with the 64-handle queue alone, 64 results
//     were released after 64 ops, which costs 110 ns per add+release in C instead of 85
//     (the freed chunks are no longer hot), plus the queue's mutex and batch call; Add +
//     Close went from 242 to 214 ns (medians, 2-vCPU VM, 2026-11-22). A handle is in
//     exactly one place at a time: the slot, the queue, or the hands of the one op that
//     swapped it out (atomic swaps), so it is released once and never lost; an op takes
//     it only once nothing can fail before its cgo call, which always releases it.
//   - When Close finds the slot full, the older handle goes to the queue, which is
//     released in one cgo call when 64 have gathered, or before anything that reports or
//     frees memory (LiveHandles, MemoryStats, EmptyCache, Synchronize, Scope.Close,
//     ReleasePending), which empty the slot too. Larger tensors are released at once, so
//     GPU memory never waits; at most 64 × 64 KiB waits in the slot and the queue.

const (
	slabSize         = 64
	smallTensorBytes = 64 << 10
	pendingCap       = 64
)

type tensorSlab struct {
	next  int // the next free item
	items [slabSize]Tensor
}

// Slabs with free items wait in a sync.Pool: Get and Put are per-P and lock-free, and the
// GC empties pools, so no global keeps a slab (and the tensors leaked into it) alive.
var slabPool sync.Pool

func (s *tensorSlab) finalize() {
	for i := range s.items {
		if h := s.items[i].h; h != 0 {
			s.items[i].h = 0
			C.gdt_release_quiet(h)
		}
	}
}

// newTensor hands out the next Tensor of a slab.
func newTensor(h C.uintptr_t, small bool) *Tensor {
	s, _ := slabPool.Get().(*tensorSlab)
	if s == nil {
		s = new(tensorSlab)
		runtime.SetFinalizer(s, (*tensorSlab).finalize)
	}
	t := &s.items[s.next]
	s.next++
	if s.next < slabSize {
		slabPool.Put(s)
	}
	t.h, t.small = h, small
	return t
}

var pending struct {
	mu sync.Mutex
	h  [pendingCap]C.uintptr_t
	n  int
}

// releaseSlot holds the handle (a C.uintptr_t) of the last small tensor closed, or 0; the
// next op that makes a tensor releases it (takeReleaseSlot).
var releaseSlot uintptr

// releaseLater puts a small tensor's handle in the release slot, and the one it held, if
// any, in the queue.
func releaseLater(h C.uintptr_t) {
	if old := atomic.SwapUintptr(&releaseSlot, uintptr(h)); old != 0 {
		enqueue(C.uintptr_t(old))
	}
}

// takeReleaseSlot empties the release slot and returns its handle (0 if none) for the
// caller's cgo call to release (the shims' rel argument). The caller must make that call:
// take the slot only once nothing can fail before it. The plain load keeps the atomic
// swap off ops that find the slot empty.
func takeReleaseSlot() C.uintptr_t {
	if atomic.LoadUintptr(&releaseSlot) == 0 {
		return 0
	}
	return C.uintptr_t(atomic.SwapUintptr(&releaseSlot, 0))
}

// enqueue queues a handle; the 64th releases the lot.
func enqueue(h C.uintptr_t) {
	pending.mu.Lock()
	pending.h[pending.n] = h
	pending.n++
	if pending.n == pendingCap {
		releaseQueued()
	}
	pending.mu.Unlock()
}

// releaseQueued releases the queue in one cgo call. pending.mu is held.
func releaseQueued() {
	if pending.n > 0 {
		C.gdt_release_many(&pending.h[0], C.size_t(pending.n))
		pending.n = 0
	}
}

// ReleasePending releases, now, the tensors whose Close was deferred (see Tensor.Close).
// The functions that report or free memory call it themselves. (A handle that an op
// running concurrently in another goroutine has just taken from the release slot is
// released by that op's cgo call, not here.)
func ReleasePending() {
	slot := C.uintptr_t(atomic.SwapUintptr(&releaseSlot, 0))
	pending.mu.Lock()
	if slot != 0 {
		pending.h[pending.n] = slot
		pending.n++
	}
	releaseQueued()
	pending.mu.Unlock()
}

// releaseErrors counts the deferred releases that failed (a double release would be one);
// for the tests.
func releaseErrors() uint64 { return uint64(atomic.LoadUint64((*uint64)(&C.gdt_release_errors))) }

// liveHandlesUnflushed is dt_live_handle_count without releasing the queue first, for
// tests of the queue itself.
func liveHandlesUnflushed() int { return int(C.dt_live_handle_count()) }

// atomicSlot returns the release slot's handle (0: empty), for the tests.
func atomicSlot() uintptr { return atomic.LoadUintptr(&releaseSlot) }

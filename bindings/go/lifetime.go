package devtensor

// #include "shim.h"
// uint64_t gdt_release_errors;
// uintptr_t gdt_release_slot;
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The per-op cost of the binding is one cgo call (about 45 ns on a 2-vCPU VM) plus what
// the wrapper adds, and a per-Tensor finalizer alone costs more than the cgo call
// (runtime.SetFinalizer and clearing it: about 175 ns). Two devices keep a tiny op near
// the cost of its cgo call:
//
//   - Tensors are allocated 64 at a time in a slab that carries ONE finalizer. The GC
//     runs it once every Tensor of the slab is unreachable, and it releases those still
//     open: the safety net for a forgotten Close, at 1/64 of a finalizer per Tensor.
//     (A Tensor kept alive keeps its slab-mates' forgotten handles too, until it dies.)
//   - Close costs no cgo call: it swaps its handle into the release slot, a C global
//     (gdt_release_slot), and the next cgo call that can allocate (every shim that makes a
//     tensor, module or optimizer; backward, step, load, Module.To) swaps it out and
//     releases it first, inside its own call (gdt_take_slot in shim.h). So in a loop of
//     z := x.Add(y); z.Close() each op frees the previous result right before allocating
//     its own, and the allocator hands back the chunk it just freed, still in cache, as a
//     C loop does. When Close finds the slot full, it releases the older handle itself
//     (one cgo call), so at most ONE closed tensor waits, of any size, and only until the
//     next such call, the next Close, or anything that reports or frees memory
//     (LiveHandles, MemoryStats, EmptyCache, Synchronize, Scope.Close, ReleasePending).
//     A handle is in exactly one place at a time (the slot, or the hands of the one
//     caller that swapped it out), so it is released once and never lost.
//
// Why no size test: deciding "small tensors wait, large ones go at once" took a
// dt_tensor_nbytes call per op, 10 to 20 ns of the cgo call, and a view's size says
// nothing of the storage it keeps; letting any one tensor wait, but never past the next
// allocating call, bounds the waiting memory without it.

const slabSize = 64

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
			C.gdt_release_counted(h)
		}
	}
}

// newTensor hands out the next Tensor of a slab, owning handle h.
func newTensor(h C.uintptr_t) *Tensor {
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
	t.h = h
	return t
}

// releaseSlot is gdt_release_slot seen from Go: Go's atomics work on C memory, and Close
// needs no cgo call to reach it.
var releaseSlot = (*uintptr)(unsafe.Pointer(&C.gdt_release_slot))

// releaseLater puts a closed tensor's handle in the release slot and releases the one it
// held, if any, now.
func releaseLater(h C.uintptr_t) {
	if old := atomic.SwapUintptr(releaseSlot, uintptr(h)); old != 0 {
		C.gdt_release_counted(C.uintptr_t(old))
	}
}

// takeSlot empties the release slot from Go and returns its handle (0: none) for the
// caller to release; the C helpers do the same in gdt_take_slot. The plain load keeps
// the atomic swap off the empty case.
func takeSlot() C.uintptr_t {
	if atomic.LoadUintptr(releaseSlot) == 0 {
		return 0
	}
	return C.uintptr_t(atomic.SwapUintptr(releaseSlot, 0))
}

// ReleasePending releases, now, the tensor whose Close is waiting in the release slot
// (see Tensor.Close). The functions that report or free memory call it themselves. (A
// handle that a call running concurrently in another goroutine has just taken from the
// slot is released by that call, not here.)
func ReleasePending() {
	if h := takeSlot(); h != 0 {
		C.gdt_release_counted(h)
	}
}

// releaseErrors counts the deferred releases that failed (a double release would be one);
// for the tests.
func releaseErrors() uint64 { return uint64(atomic.LoadUint64((*uint64)(&C.gdt_release_errors))) }

// liveHandlesUnflushed is dt_live_handle_count without emptying the slot first, for tests
// of the slot itself.
func liveHandlesUnflushed() int { return int(C.dt_live_handle_count()) }

// atomicSlot returns the release slot's handle (0: empty), for the tests.
func atomicSlot() uintptr { return atomic.LoadUintptr(releaseSlot) }

package devtensor

// #include "shim.h"
import "C"

import (
	"runtime"
	"sync"
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
//   - Close of a tensor under smallTensorBytes queues its handle, and the queue is
//     released in one cgo call when 64 have gathered, or before anything that reports or
//     frees memory (LiveHandles, MemoryStats, EmptyCache, Synchronize, Scope.Close,
//     ReleasePending). Larger tensors are released at once, so GPU memory never waits
//     behind the queue; at most 64 × 64 KiB waits in it.

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

// releaseLater queues a small tensor's handle; the 64th releases the lot.
func releaseLater(h C.uintptr_t) {
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

// ReleasePending releases, now, the tensors whose Close was queued (see Tensor.Close).
// The functions that report or free memory call it themselves.
func ReleasePending() {
	pending.mu.Lock()
	releaseQueued()
	pending.mu.Unlock()
}

// liveHandlesUnflushed is dt_live_handle_count without releasing the queue first, for
// tests of the queue itself.
func liveHandlesUnflushed() int { return int(C.dt_live_handle_count()) }

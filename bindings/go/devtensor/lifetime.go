package devtensor

// #include "fastcall.h"
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
// (runtime.SetFinalizer and clearing it: about 175 ns). Three devices keep a tiny op near
// the cost of its C work: the fast path for small CPU tensors (fastcall.go), and:
//
//   - Tensors are allocated 64 at a time in a slab that carries ONE finalizer. The GC
//     runs it once every Tensor of the slab is unreachable, and it releases those still
//     open: the safety net for a forgotten Close, at 1/64 of a finalizer per Tensor.
//     (A Tensor kept alive keeps its slab-mates' forgotten handles too, until it dies.)
//     Each P hands out Tensors from a slab of its own (slabcache_pinned.go), or, in
//     builds that cannot pin a goroutine to its P, from a sync.Pool.
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
//     Where the build has the fast path, a small tensor (fastcall.go) skips the slot: its
//     Close releases it at once with a fast call (about 9 ns on the system stack, less
//     than the slot's swap in and the next call's swap out, two locked instructions:
//     measured 51 -> 45 ns per tiny op). Its release is short (a small CPU buffer, no
//     autograd graph), and freed right before the next op allocates, the chunk is as hot.
//     A handle is in exactly one place at a time (its Tensor, the slot, or the hands of
//     the one caller that swapped it out), so it is released once and never lost. Close
//     takes the handle out of its Tensor with an atomic swap too, so when several
//     goroutines close one Tensor at once exactly one of them gets the handle (the others
//     see 0): a handle shared by two Tensors (To to the same device returns the same
//     handle, retained) loses one reference, not both. Every other read of a handle field
//     is an atomic load (a plain MOV on amd64 and arm64). The swap is one locked
//     instruction per Close, a few ns.
//
// Why no size test: deciding "small tensors wait, large ones go at once" took a
// dt_tensor_nbytes call per op, 10 to 20 ns of the cgo call, and a view's size says
// nothing of the storage it keeps; letting any one tensor wait, but never past the next
// allocating call, bounds the waiting memory without it.

// noCopy makes go vet's copylocks check report a copy of the struct that embeds it (as
// in the standard library): Tensor, Module, Optimizer, StateDict, Scope, Stream, Event,
// Graph and ProcessGroup each own a reference, and a copy (y := *x) would be a second owner of
// it, so that closing both released it twice. Zero-size and the FIRST field of each, so it adds no padding (a
// zero-size last field would).
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

const slabSize = 64

type tensorSlab struct {
	next  int // the next free item
	items [slabSize]Tensor
}

// newSlab makes an empty slab, with the finalizer that is the safety net of its Tensors.
func newSlab() *tensorSlab {
	s := new(tensorSlab)
	runtime.SetFinalizer(s, (*tensorSlab).finalize)
	return s
}

// finalize runs once no Tensor of the slab is reachable, so no Close can race it; the
// loads are atomic all the same (a plain MOV on amd64 and arm64), as for every read of
// a handle field, and the store happens only for a forgotten tensor.
func (s *tensorSlab) finalize() {
	for i := range s.items {
		if h := atomic.LoadUintptr(&s.items[i].h); h != 0 {
			atomic.StoreUintptr(&s.items[i].h, 0)
			C.gdt_release_counted(C.uintptr_t(h))
		}
	}
}

// newTensor hands out the next Tensor of a slab, owning handle h. The store of h is
// plain: no other goroutine can see the Tensor before newTensor returns it (a slab item
// is handed out once), and whatever publishes it orders the store before any read.
// Where the build can pin the goroutine to its P, the slab comes from a per-P cache
// (slabcache_pinned.go); elsewhere from a sync.Pool (slabcache_pooled.go).
func newTensor(h C.uintptr_t) *Tensor {
	t := nextSlabItem()
	t.h = uintptr(h)
	return t
}

// Slabs with free items wait in a sync.Pool where the build has no per-P cache, and
// for P ids beyond it: Get and Put are per-P and lock-free, and the GC empties pools, so
// no global keeps a slab (and the tensors leaked into it) alive.
var slabPool sync.Pool

// nextSlabItemPooled takes the next Tensor of a slab from slabPool.
func nextSlabItemPooled() *Tensor {
	s, _ := slabPool.Get().(*tensorSlab)
	if s == nil {
		s = newSlab()
	}
	t := &s.items[s.next]
	s.next++
	if s.next < slabSize {
		slabPool.Put(s)
	}
	return t
}

// releaseSlot is gdt_release_slot seen from Go: Go's atomics work on C memory, and Close
// needs no cgo call to reach it.
var releaseSlot = (*uintptr)(unsafe.Pointer(&C.gdt_release_slot))

// releaseLater puts a closed tensor's handle in the release slot and releases the one it
// held, if any, now.
func releaseLater(h uintptr) {
	if old := atomic.SwapUintptr(releaseSlot, h); old != 0 {
		C.gdt_release_counted(C.uintptr_t(old))
	}
}

// releaseSmallNow releases a small tensor's handle with a fast call, for Close in a build
// with the fast path (only there: elsewhere fastcall is a cgo call, and the slot cheaper).
func releaseSmallNow(h uintptr) {
	x := C.gdt_fast_args{a: C.uintptr_t(h)}
	fastcall(unsafe.Pointer(C.gdt_fast_release), unsafe.Pointer(&x))
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
// slot is released by that call, not here.) It returns the error of the release it
// performed, nil when it succeeded or when the slot was empty. A release fails only
// for a handle that was already released outside this binding (through the C ABI, by
// another owner): the binding itself releases each handle it owns exactly once. The
// releases made elsewhere (by the next op, by a Close that found the slot full or
// closed a small tensor, by Scope.Close or a slab finalizer) have no caller to return an
// error to; they are counted instead, in the C counter gdt_release_errors (shim.h), as
// this one is.
func ReleasePending() error {
	if h := takeSlot(); h != 0 {
		return resErr("ReleasePending", C.gdt_release_counted_res(h))
	}
	return nil
}

// releaseErrors counts the deferred releases that failed (a double release would be one);
// for the tests.
func releaseErrors() uint64 { return uint64(atomic.LoadUint64((*uint64)(&C.gdt_release_errors))) }

// liveHandlesUnflushed is dt_live_handle_count without emptying the slot first, for tests
// of the slot itself.
func liveHandlesUnflushed() int { return int(C.dt_live_handle_count()) }

// atomicSlot returns the handle waiting in the release slot (0: empty), for the tests.
func atomicSlot() uintptr { return atomic.LoadUintptr(releaseSlot) }

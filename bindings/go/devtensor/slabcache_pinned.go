//go:build (amd64 || arm64) && go1.19 && !go1.23 && !race && !msan && !asan && !devtensor_nofastcall

package devtensor

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// The slab a P hands Tensors out of, one per P: taking a Tensor pins the goroutine to
// its P (runtime.procPin, what sync.Pool does inside) and bumps the slab's cursor, with
// no other atomic. sync.Pool's Get and Put pin twice and cost about 25 ns per Tensor on
// a 2-vCPU Xeon VM; this takes a few. The builds and P ids it does not serve take the
// pool (nextSlabItemPooled). The tags are the fast path's (fastcall_on.go): runtime
// internals pulled with go:linkname, and plain accesses that the race detector could
// not order (the slab cursor is only touched by goroutines pinned to one P, one at a
// time, as sync.Pool's private item is).
//
// The GC must still free a slab whose Tensors are all forgotten, so that its finalizer
// releases their handles: a slab leaves the cache when it is full, and at every GC the
// sweeper (a finalizer that re-arms itself) empties the cache, as the GC empties
// sync.Pools. A forgotten Tensor is thus released one or two collections after it
// becomes unreachable, as with the pool.

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// slabCacheSize bounds the P ids served (GOMAXPROCS of 256 and more take the pool).
const slabCacheSize = 256

type slabCacheEntry struct {
	slab unsafe.Pointer // *tensorSlab; atomic loads and stores (the sweeper clears it)
	_    [56]byte       // one cache line per P: no false sharing between Ps
}

var slabCache [slabCacheSize]slabCacheEntry

func nextSlabItem() *Tensor {
	pid := procPin()
	if pid >= slabCacheSize {
		procUnpin()
		return nextSlabItemPooled()
	}
	e := &slabCache[pid]
	if s := (*tensorSlab)(atomic.LoadPointer(&e.slab)); s != nil {
		t := &s.items[s.next]
		if s.next++; s.next == slabSize {
			atomic.StorePointer(&e.slab, nil) // full: the GC may take it once its Tensors die
		}
		procUnpin()
		return t
	}
	procUnpin()
	// No slab: make one unpinned (the allocation and SetFinalizer may take runtime
	// locks and start a GC), then offer the rest of it to whichever P runs us now.
	s := newSlab()
	s.next = 1
	pid = procPin()
	if pid < slabCacheSize {
		atomic.StorePointer(&slabCache[pid].slab, unsafe.Pointer(s))
	} // a slab another goroutine put there meanwhile is dropped: the GC takes it
	procUnpin()
	return &s.items[0]
}

// slabCacheSweeper's finalizer empties the cache after every GC and arms a new one.
// 16 bytes: out of the tiny allocator, whose shared blocks can keep a finalizer from
// ever running (finalizer_test.go).
type slabCacheSweeper struct{ _ [2]uintptr }

func armSlabCacheSweeper() {
	runtime.SetFinalizer(new(slabCacheSweeper), func(*slabCacheSweeper) {
		emptySlabCache()
		armSlabCacheSweeper()
	})
}

// emptySlabCache drops every P's slab; a goroutine taking a Tensor from one right now
// still gets it (it holds the slab), and the P's next Tensor starts a new slab.
func emptySlabCache() {
	for i := range slabCache {
		if atomic.LoadPointer(&slabCache[i].slab) != nil {
			atomic.StorePointer(&slabCache[i].slab, nil)
		}
	}
}

func init() { armSlabCacheSweeper() }

// slabCacheInUse counts the Ps holding a slab, for the tests.
func slabCacheInUse() int {
	n := 0
	for i := range slabCache {
		if atomic.LoadPointer(&slabCache[i].slab) != nil {
			n++
		}
	}
	return n
}

package devtensor

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Tensors taken at once by many goroutines, on as many Ps as GOMAXPROCS allows and
// after GOMAXPROCS changes, are distinct slab items, each with its own handle, and every
// handle is released once they are closed.
func TestSlabItemsAreDistinctAcrossGoroutines(t *testing.T) {
	noLeaks(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 8, 1, 3} {
		runtime.GOMAXPROCS(procs)
		const goroutines, each = 16, 200 // 3200 Tensors: 50 slabs' worth
		got := make([][]*Tensor, goroutines)
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					x, err := Full([]int64{2}, float64(g*each+i), Float32, CPU(0))
					if err != nil {
						t.Error(err)
						return
					}
					got[g] = append(got[g], x)
				}
			}(g)
		}
		wg.Wait()
		seen := map[*Tensor]bool{}
		handles := map[uintptr]bool{}
		for g := range got {
			for i, x := range got[g] {
				if seen[x] || handles[x.h] {
					t.Fatalf("GOMAXPROCS %d: goroutine %d's tensor %d was handed out twice (%p, handle %#x)", procs, g, i, x, x.h)
				}
				seen[x], handles[x.h] = true, true
				if v := must(ToSlice[float32](x)); v[0] != float32(g*each+i) || v[1] != v[0] {
					t.Fatalf("GOMAXPROCS %d: goroutine %d's tensor %d holds %v", procs, g, i, v)
				}
			}
		}
		for g := range got {
			for _, x := range got[g] {
				x.Close()
			}
		}
	}
}

// Where the build has the per-P cache (slabcache_pinned.go), a collection empties it, so
// that a slab whose Tensors were all forgotten can be collected and its finalizer release
// them; TestFinalizerSafetyNet checks the release itself.
func TestCollectionEmptiesTheSlabCache(t *testing.T) {
	if slabCacheInUse() < 0 {
		t.Skip("this build takes slabs from a sync.Pool (slabcache_pooled.go)")
	}
	x := must(Zeros([]int64{1}, Float32, CPU(0)))
	defer x.Close()
	if slabCacheInUse() == 0 {
		t.Fatal("a new Tensor left no slab in the cache")
	}
	for i := 0; i < 100 && slabCacheInUse() != 0; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond) // the sweeper runs on the finalizer goroutine
	}
	if n := slabCacheInUse(); n != 0 {
		t.Fatalf("%d Ps still hold a slab after 100 collections", n)
	}
	y := must(Zeros([]int64{1}, Float32, CPU(0))) // a fresh slab for this P
	defer y.Close()
	if slabCacheInUse() == 0 {
		t.Fatal("no slab in the cache after the sweep")
	}
}

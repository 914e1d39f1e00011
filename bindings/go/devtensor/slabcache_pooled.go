//go:build !((amd64 || arm64) && go1.19 && !go1.23 && !race && !msan && !asan && !devtensor_nofastcall)

package devtensor

// nextSlabItem takes the next Tensor of a slab from slabPool: this build does not pin
// goroutines to their P (slabcache_pinned.go says when it does).
func nextSlabItem() *Tensor { return nextSlabItemPooled() }

// slabCacheInUse: -1, this build has no per-P cache (for the tests).
func slabCacheInUse() int { return -1 }

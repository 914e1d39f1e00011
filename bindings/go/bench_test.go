package devtensor

import "testing"

// BenchmarkAdd4 measures one tiny op (a 4-element float32 add, then releasing the
// result) through the Go binding ("Go") and as a loop of dt_add + dt_tensor_release
// inside a single cgo call ("C"), so Go - C is the binding's overhead per op.
// "GoNoWrapper" makes two cgo calls (add, release) without the *Tensor allocation and
// finalizer, as Go did before the release slot; "GoOneCall" makes the one cgo call that
// Go makes now (release the previous result, add, size the result) with nothing around
// it, so Go - GoOneCall is the Go wrapper's own cost and GoOneCall - C the cgo call's.
func BenchmarkAdd4(b *testing.B) {
	x := must(Ones([]int64{4}, Float32, CPU))
	defer x.Close()
	y := must(Ones([]int64{4}, Float32, CPU))
	defer y.Close()
	b.Run("Go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			z, err := x.Add(y)
			if err != nil {
				b.Fatal(err)
			}
			z.Close()
		}
	})
	b.Run("GoNoWrapper", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := rawAdd(x, y); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GoOneCall", func(b *testing.B) {
		var prev uintptr
		for i := 0; i < b.N; i++ {
			h, err := rawAddReleasing(x, y, prev)
			if err != nil {
				b.Fatal(err)
			}
			prev = h
		}
		releaseRaw(prev)
	})
	b.Run("CgoNoop", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cgoNoop(i)
		}
	})
	b.Run("C", func(b *testing.B) {
		if err := benchCAdd(x, y, b.N); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkAddInPlace4 is BenchmarkAdd4 for an op that is one cgo call and makes no
// tensor: x.AddInPlace(y) on float32[4] through the binding ("Go") and dt_add_ looped
// inside one cgo call ("C"). Go - C is the overhead of a one-call op (the cgo transition,
// the handle checks, the error check).
func BenchmarkAddInPlace4(b *testing.B) {
	x := must(Zeros([]int64{4}, Float32, CPU))
	defer x.Close()
	y := must(Zeros([]int64{4}, Float32, CPU)) // adding zeros: x stays finite
	defer y.Close()
	b.Run("Go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := x.AddInPlace(y); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("C", func(b *testing.B) {
		if err := benchCAddInPlace(x, y, b.N); err != nil {
			b.Fatal(err)
		}
	})
}

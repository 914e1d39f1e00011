package devtensor

import "testing"

// BenchmarkAdd4 measures one tiny op (a 4-element float32 add, then releasing the
// result) through the Go binding ("Go") and as a loop of dt_add + dt_tensor_release
// inside a single cgo call ("C"), so Go - C is the binding's overhead per op.
// "GoNoWrapper" makes the same two cgo calls as Go (add, release) without the *Tensor
// allocation and finalizer, splitting the overhead into cgo transitions vs wrapper.
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

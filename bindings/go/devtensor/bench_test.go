package devtensor

import (
	"sort"
	"testing"
	"time"
)

// BenchmarkAdd4 measures one tiny op (a 4-element float32 add, then releasing the
// result) through the Go binding ("Go") and as a loop of dt_add + dt_tensor_release
// inside a single cgo call ("C"), so Go - C is the binding's overhead per op.
// "GoOneCall" makes the one cgo call that Go makes (release the previous result, add)
// with nothing around it, so Go - GoOneCall is the Go wrapper's own cost and
// GoOneCall - C the cgo call's; "CgoNoop" is an empty cgo call. The sub-benchmarks run
// one after the other, so on a noisy machine their difference drifts: see
// BenchmarkAdd4Overhead for the figure to report.
func BenchmarkAdd4(b *testing.B) {
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	defer x.Close()
	y := must(Ones([]int64{4}, Float32, CPU(0)))
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

// BenchmarkAdd4Overhead reports the binding's overhead per tiny op directly: it
// alternates chunks of 1000 x.Add(y) + Close through Go with 1000 dt_add +
// dt_tensor_release looped in one cgo call, and reports (Go time - C time) / ops as
// overhead-ns/op, with each side's mean. Sequential sub-benchmarks (BenchmarkAdd4) see
// the speed of a shared VM drift between them; here both sides sample the same
// stretches of time. Means, not medians: the collector's work (the slabs and their
// finalizers) lands in a few chunks, and it is part of the cost.
func BenchmarkAdd4Overhead(b *testing.B) {
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	defer x.Close()
	y := must(Ones([]int64{4}, Float32, CPU(0)))
	defer y.Close()
	const chunk = 1000
	var goTime, cTime time.Duration
	ops := 0
	for ; ops < b.N; ops += chunk {
		t0 := time.Now()
		for j := 0; j < chunk; j++ {
			z, err := x.Add(y)
			if err != nil {
				b.Fatal(err)
			}
			z.Close()
		}
		t1 := time.Now()
		if err := benchCAdd(x, y, chunk); err != nil {
			b.Fatal(err)
		}
		goTime += t1.Sub(t0)
		cTime += time.Since(t1)
	}
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(ops) }
	b.ReportMetric(perOp(goTime), "go-ns/op")
	b.ReportMetric(perOp(cTime), "c-ns/op")
	b.ReportMetric(perOp(goTime-cTime), "overhead-ns/op")
}

// BenchmarkAddInPlace4 is BenchmarkAdd4 for an op that is one cgo call and makes no
// tensor: x.AddInPlace(y) on float32[4] through the binding ("Go") and dt_add_ looped
// inside one cgo call ("C"). Go - C is the overhead of a one-call op (the cgo transition,
// the handle checks, the error check).
func BenchmarkAddInPlace4(b *testing.B) {
	x := must(Zeros([]int64{4}, Float32, CPU(0)))
	defer x.Close()
	y := must(Zeros([]int64{4}, Float32, CPU(0))) // adding zeros: x stays finite
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

// BenchmarkAdd4Floor shows where the floor of BenchmarkAdd4Overhead lies, in the same
// stretches of time: it interleaves chunks of 1000 of each of
//
//	c:       dt_add + dt_tensor_release looped in one cgo call (the C cost, as above)
//	noop:    an empty cgo call (the transition alone)
//	fastnoop: an empty call through the fast path (fastcall.go; a cgo call in builds
//	         without it)
//	onecall: the one cgo call that Add makes (release the previous result, add), with
//	         no Go Tensor, no Close, no release slot, no finalizer
//	go:      x.Add(y) + Close through the binding
//
// and reports per op: onecall-c (the floor: what any binding that makes one cgo call per
// op pays over C), go-c (BenchmarkAdd4Overhead's figure) and go-onecall (what the Go side
// adds for its safety properties: a Tensor from a slab with a finalizer, the safety net;
// the atomic swap of Close, goroutine-safe and idempotent; the release slot, Close
// without a cgo call), each as the mean over all chunks (the collector's work included)
// and as the median of the per-chunk differences ("-med": robust to a shared VM's other
// load, which preempts a few chunks; the collector's work left out). Where the build has
// the fast path, x.Add(y) takes it (x and y are small CPU tensors) and the onecall
// figures show what it saves: go-c below onecall-c.
func BenchmarkAdd4Floor(b *testing.B) {
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	defer x.Close()
	y := must(Ones([]int64{4}, Float32, CPU(0)))
	defer y.Close()
	const chunk = 1000
	var tc, tnoop, tfast, tone, tgo time.Duration
	var dOne, dGo, dGoOne, dNoop, dFast []float64
	var prev uintptr
	ops := 0
	for ; ops < b.N; ops += chunk {
		t0 := time.Now()
		if err := benchCAdd(x, y, chunk); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		for j := 0; j < chunk; j++ {
			cgoNoop(j)
		}
		tf := time.Now()
		for j := 0; j < chunk; j++ {
			fastNoop()
		}
		t2 := time.Now()
		for j := 0; j < chunk; j++ {
			h, err := rawAddReleasing(x, y, prev)
			if err != nil {
				b.Fatal(err)
			}
			prev = h
		}
		t3 := time.Now()
		for j := 0; j < chunk; j++ {
			z, err := x.Add(y)
			if err != nil {
				b.Fatal(err)
			}
			z.Close()
		}
		t4 := time.Now()
		c, noop, fast, one, g := t1.Sub(t0), tf.Sub(t1), t2.Sub(tf), t3.Sub(t2), t4.Sub(t3)
		tfast += fast
		dFast = append(dFast, float64(fast.Nanoseconds())/chunk)
		tc += c
		tnoop += noop
		tone += one
		tgo += g
		dNoop = append(dNoop, float64(noop.Nanoseconds())/chunk)
		dOne = append(dOne, float64((one-c).Nanoseconds())/chunk)
		dGo = append(dGo, float64((g-c).Nanoseconds())/chunk)
		dGoOne = append(dGoOne, float64((g-one).Nanoseconds())/chunk)
	}
	releaseRaw(prev)
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(ops) }
	median := func(v []float64) float64 {
		sort.Float64s(v)
		return v[len(v)/2]
	}
	b.ReportMetric(perOp(tc), "c-ns/op")
	b.ReportMetric(perOp(tnoop), "noop-ns/op")
	b.ReportMetric(perOp(tfast), "fastnoop-ns/op")
	b.ReportMetric(perOp(tone-tc), "onecall-c-ns/op")
	b.ReportMetric(perOp(tgo-tc), "go-c-ns/op")
	b.ReportMetric(perOp(tgo-tone), "go-onecall-ns/op")
	b.ReportMetric(median(dNoop), "noop-med-ns/op")
	b.ReportMetric(median(dFast), "fastnoop-med-ns/op")
	b.ReportMetric(median(dOne), "onecall-c-med-ns/op")
	b.ReportMetric(median(dGo), "go-c-med-ns/op")
	b.ReportMetric(median(dGoOne), "go-onecall-med-ns/op")
}

// BenchmarkSmallRoundTrip is a tiny job from start to end: a float32[4] from a Go slice,
// one op, its shape, the result back in Go, both closed. "fast": on CPU(0), where the
// fast path takes every step (FromSlice, AddScalar and ToSlice one fast call each, Shape
// none); "cgo": the same on DefaultDevice (set to cpu:0) with the shape records cleared,
// so that every step is a cgo call, as in builds without the fast path.
func BenchmarkSmallRoundTrip(b *testing.B) {
	old := must(GetDefaultDevice())
	defer SetDefaultDevice(old)
	if err := SetDefaultDevice(CPU(0)); err != nil {
		b.Fatal(err)
	}
	data := []float32{1, 2, 3, 4}
	for _, c := range []struct {
		name   string
		device Device
	}{{"fast", CPU(0)}, {"cgo", DefaultDevice}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				x, err := FromSlice(data, nil, c.device)
				if err != nil {
					b.Fatal(err)
				}
				if c.name == "cgo" {
					x.small = 0
				}
				y, err := x.AddScalar(1)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := y.Shape(); err != nil {
					b.Fatal(err)
				}
				v, err := ToSlice[float32](y)
				if err != nil || v[3] != 5 {
					b.Fatal(err, v)
				}
				x.Close()
				y.Close()
			}
		})
	}
}

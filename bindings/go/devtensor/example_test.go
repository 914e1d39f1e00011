package devtensor_test

import (
	"errors"
	"fmt"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

// Must helpers belong in examples and tests only; the package never panics.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ExampleParseDevice() {
	d, err := devtensor.ParseDevice("cuda:1")
	fmt.Println(d, err, d == devtensor.CUDA(1))
	_, err = devtensor.ParseDevice("gpu")
	fmt.Println(errors.Is(err, devtensor.ErrInvalidArgument))
	// Output:
	// cuda:1 <nil> true
	// true
}

func ExampleTryGPU() {
	// cuda:0 when a GPU is there, else cpu:0: code written once runs on both.
	d := must(devtensor.TryGPU(0))
	t := must(devtensor.Ones([]int64{2}, devtensor.Float32, d))
	defer t.Close()
	fmt.Println(must(t.Device()) == d)
	// Output: true
}

func ExampleFromSlice() {
	t := must(devtensor.FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, devtensor.CPU))
	defer t.Close()
	fmt.Println(t)
	fmt.Println(must(t.Shape()), must(t.DType()))
	fmt.Println(must(devtensor.ToSlice[float32](t)))
	// Output:
	// tensor([[1., 2.],
	//         [3., 4.]])
	// [2 2] float32
	// [1 2 3 4]
}

func ExampleTensor_To() {
	// The tests run with DEVTENSOR_CPU_DEVICES=2, so cpu:1 exists.
	a := must(devtensor.FromSlice([]int64{1, 2, 3}, nil, devtensor.CPU))
	defer a.Close()
	b := must(a.To(devtensor.CPUN(1))) // a new tensor; a stays where it is
	defer b.Close()
	fmt.Println(must(a.Device()), must(b.Device()))
	fmt.Println(must(devtensor.ToSlice[int64](b)))
	// Output:
	// cpu:0 cpu:1
	// [1 2 3]
}

func ExampleTensor_Add() {
	a := must(devtensor.Ones([]int64{2}, devtensor.Float32, devtensor.CPUN(0)))
	defer a.Close()
	b := must(devtensor.Ones([]int64{2}, devtensor.Float32, devtensor.CPUN(1)))
	defer b.Close()
	_, err := a.Add(b)
	fmt.Println(errors.Is(err, devtensor.ErrDeviceMismatch))
	var e *devtensor.Error
	if errors.As(err, &e) {
		fmt.Println(e.Msg)
	}
	// Output:
	// true
	// add: expected device cpu:0 but got device cpu:1 (all operands must be on one device)
}

func ExampleScope() {
	s := devtensor.NewScope()
	defer s.Close() // closes everything made through s
	x := must(s.Track(devtensor.Arange(0, 4, 1, devtensor.Float32, devtensor.CPU)))
	y := must(s.Track(x.MulScalar(2)))
	z := must(s.Track(y.Sum(nil, false)))
	fmt.Println(must(z.Item()), s.Len())
	// Output: 12 3
}

func ExampleWithStream() {
	// On a GPU the ops inside run on s's queue, beside the default stream's work; on the
	// CPU (one in-order queue) the same code runs unchanged.
	dev := devtensor.CPU
	s := must(devtensor.NewStream(dev))
	defer s.Close()
	start, end := must(devtensor.NewEvent(dev)), must(devtensor.NewEvent(dev))
	defer start.Close()
	defer end.Close()
	a := must(devtensor.Ones([]int64{2}, devtensor.Float32, dev))
	defer a.Close()
	var b *devtensor.Tensor
	err := devtensor.WithStream(s, func() (err error) {
		if err = start.Record(nil); err != nil { // nil: the current stream, s
			return err
		}
		if b, err = a.Add(a); err != nil {
			return err
		}
		return end.Record(nil)
	})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ms := must(start.ElapsedMs(end)) // waits for the work between the marks
	fmt.Println(must(devtensor.ToSlice[float32](b)), ms >= 0)
	// Output: [2 2] true
}

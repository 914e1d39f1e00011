package devtensor_test

import (
	"fmt"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

func ExampleTensor_Conv1d() {
	x := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3, 4}, []int64{1, 1, 4}, devtensor.CPU(0)))
	defer x.Close()
	w := devtensor.Must(devtensor.Ones([]int64{1, 1, 2}, devtensor.Float32, devtensor.CPU(0)))
	defer w.Close()
	for _, opts := range []devtensor.Conv1dOptions{
		{},           // sums of neighbours: 1+2, 2+3, 3+4
		{Stride: 2},  // every second window
		{Padding: 1}, // over [0, 1, 2, 3, 4, 0]
	} {
		y := devtensor.Must(x.Conv1d(w, nil, opts))
		fmt.Println(devtensor.Must(devtensor.ToSlice[float32](y)), devtensor.Must(y.Shape()))
		y.Close()
	}
	// Output:
	// [3 5 7] [1 1 3]
	// [3 7] [1 1 2]
	// [1 3 5 7 4] [1 1 5]
}

func ExampleConv1d() {
	conv := devtensor.Must(devtensor.Conv1d(4, 6, 3, devtensor.Conv1dOptions{Stride: 2, Padding: 1, Groups: 2}))
	defer conv.Close()
	params := devtensor.Must(conv.Parameters())
	defer params.Close()
	for _, p := range params {
		fmt.Println(p.Name, devtensor.Must(p.Tensor.Shape()))
	}
	x := devtensor.Must(devtensor.Randn([]int64{2, 4, 8}, devtensor.Float32, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(conv.Forward(x))
	defer y.Close()
	fmt.Println(devtensor.Must(y.Shape()))
	// Output:
	// weight [6 2 3]
	// bias [6]
	// [2 6 4]
}

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

func ExampleTensor_ConvTranspose2d() {
	// Each input element stamps the kernel, scaled, at its position times the stride.
	x := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3, 4}, []int64{1, 1, 2, 2}, devtensor.CPU(0)))
	defer x.Close()
	w := devtensor.Must(devtensor.Ones([]int64{1, 1, 2, 2}, devtensor.Float32, devtensor.CPU(0)))
	defer w.Close()
	for _, opts := range []devtensor.ConvTranspose2dOptions{
		{},                        // overlapping stamps add: 3x3
		{Stride: [2]int64{2, 2}},  // one 2x2 block per element: 4x4
		{Padding: [2]int64{1, 1}}, // the 3x3 result less a row and a column on each side
	} {
		y := devtensor.Must(x.ConvTranspose2d(w, nil, opts))
		fmt.Println(devtensor.Must(devtensor.ToSlice[float32](y)), devtensor.Must(y.Shape()))
		y.Close()
	}
	// Output:
	// [1 3 2 4 10 6 3 7 4] [1 1 3 3]
	// [1 1 2 2 1 1 2 2 3 3 4 4 3 3 4 4] [1 1 4 4]
	// [10] [1 1 1 1]
}

func ExampleConvTranspose2d() {
	// A decoder's upsampling step: stride 2 with output_padding 1 doubles 5x7 to 10x14,
	// undoing the size change of a Conv2d(kernel 3, stride 2, padding 1).
	up := devtensor.Must(devtensor.ConvTranspose2d(8, 4, [2]int64{3, 3}, devtensor.ConvTranspose2dOptions{
		Stride: [2]int64{2, 2}, Padding: [2]int64{1, 1}, OutputPadding: [2]int64{1, 1}}))
	defer up.Close()
	params := devtensor.Must(up.Parameters())
	defer params.Close()
	for _, p := range params {
		fmt.Println(p.Name, devtensor.Must(p.Tensor.Shape()))
	}
	x := devtensor.Must(devtensor.Randn([]int64{2, 8, 5, 7}, devtensor.Float32, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(up.Forward(x))
	defer y.Close()
	fmt.Println(devtensor.Must(y.Shape()))
	// Output:
	// weight [8 4 3 3]
	// bias [4]
	// [2 4 10 14]
}

func ExampleMaxPool2dOptions_ceilMode() {
	// 1..9 in a 3x3 plane, 2x2 windows 2 apart: rounding the output size up keeps the
	// windows hanging over the right and bottom edges (only their elements inside count).
	x := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, []int64{1, 1, 3, 3}, devtensor.CPU(0)))
	defer x.Close()
	floor := devtensor.Must(x.MaxPool2d([2]int64{2, 2}, devtensor.MaxPool2dOptions{}))
	defer floor.Close()
	ceil := devtensor.Must(x.MaxPool2d([2]int64{2, 2}, devtensor.MaxPool2dOptions{CeilMode: true}))
	defer ceil.Close()
	mean := devtensor.Must(x.AvgPool2d([2]int64{2, 2}, devtensor.AvgPool2dOptions{CeilMode: true}))
	defer mean.Close()
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](floor)))
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](ceil)))
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](mean)))
	// Output:
	// [5]
	// [5 6 8 9]
	// [3 4.5 7.5 9]
}

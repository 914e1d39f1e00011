package devtensor_test

import (
	"fmt"
	"math"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

func ExampleBCEWithLogitsLoss() {
	// Logits [0, ln 3] (probabilities 1/2 and 3/4) against 0/1 labels [1, 0]: the losses
	// are -ln(1/2) = 0.6931 and -ln(1 - 3/4) = 1.3863. PosWeight 2 doubles the positive
	// term, the first.
	logits := devtensor.Must(devtensor.FromSlice([]float32{0, float32(math.Log(3))}, []int64{2}, devtensor.CPU(0)))
	defer logits.Close()
	labels := devtensor.Must(devtensor.FromSlice([]int64{1, 0}, []int64{2}, devtensor.CPU(0)))
	defer labels.Close()
	posWeight := devtensor.Must(devtensor.FromSlice([]float32{2}, []int64{1}, devtensor.CPU(0)))
	defer posWeight.Close()
	for _, opts := range []devtensor.BCEWithLogitsLossOptions{
		{Reduction: devtensor.ReductionNone},
		{},                     // the mean, PyTorch's default
		{PosWeight: posWeight}, // (2 * 0.6931 + 1.3863) / 2
	} {
		loss := devtensor.Must(devtensor.BCEWithLogitsLoss(opts))
		y := devtensor.Must(loss.Forward(logits, labels))
		fmt.Printf("%.4f\n", devtensor.Must(devtensor.ToSlice[float32](y)))
		y.Close()
		loss.Close()
	}
	// Output:
	// [0.6931 1.3863]
	// [1.0397]
	// [1.3863]
}

func ExampleClipGradNorm() {
	// A gradient [3, 4] has the 2-norm 5; clipped to 1 it becomes [3, 4] / 5.
	p := devtensor.Must(devtensor.Zeros([]int64{2}, devtensor.Float32, devtensor.CPU(0)))
	defer p.Close()
	devtensor.MustOK(p.SetRequiresGrad(true))
	c := devtensor.Must(devtensor.FromSlice([]float32{3, 4}, []int64{2}, devtensor.CPU(0)))
	defer c.Close()
	pc := devtensor.Must(p.Mul(c))
	defer pc.Close()
	loss := devtensor.Must(pc.Sum()) // d loss / dp = c
	defer loss.Close()
	devtensor.MustOK(loss.Backward(nil))

	norm := devtensor.Must(devtensor.ClipGradNorm([]*devtensor.Tensor{p}, 1, 2, false))
	defer norm.Close()
	g := devtensor.Must(p.Grad())
	defer g.Close()
	fmt.Printf("norm %.4f, gradient %.4f\n", devtensor.Must(norm.Item()), devtensor.Must(devtensor.ToSlice[float32](g)))
	// Output: norm 5.0000, gradient [0.6000 0.8000]
}

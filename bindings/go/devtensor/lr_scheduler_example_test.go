package devtensor_test

import (
	"fmt"
	"math"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

// StepLR halves the learning rate every two epochs of a training loop: the scheduler
// steps after the optimizer, as in PyTorch.
func ExampleNewStepLR() {
	dev := devtensor.CPU(0)
	w := devtensor.Must(devtensor.Zeros([]int64{2}, devtensor.Float64, dev))
	defer w.Close()
	devtensor.MustOK(w.SetRequiresGrad(true))
	target := devtensor.Must(devtensor.FromSlice([]float64{3, -1}, []int64{2}, dev))
	defer target.Close()
	opt := devtensor.Must(devtensor.SGD([]*devtensor.Tensor{w}, 0.1))
	defer opt.Close()
	sched := devtensor.Must(devtensor.NewStepLR(opt, 2, 0.5))
	defer sched.Close()
	for epoch := 0; epoch < 5; epoch++ {
		fmt.Printf("epoch %d: lr %.4g\n", epoch, devtensor.Must(opt.LR()))
		s := devtensor.NewScope()
		devtensor.MustOK(opt.ZeroGrad())
		d := devtensor.Must(s.Track(w.Sub(target)))
		loss := devtensor.Must(s.Track(devtensor.Must(s.Track(d.Mul(d))).Sum()))
		devtensor.MustOK(loss.Backward(nil))
		devtensor.MustOK(opt.Step())
		devtensor.MustOK(sched.Step())
		devtensor.MustOK(s.Close())
	}
	fmt.Println(devtensor.Must(sched.Kind()), "at epoch", devtensor.Must(sched.LastEpoch()))
	// Output:
	// epoch 0: lr 0.1
	// epoch 1: lr 0.1
	// epoch 2: lr 0.05
	// epoch 3: lr 0.05
	// epoch 4: lr 0.025
	// StepLR at epoch 5
}

// A linear warm-up over 3 epochs, then a cosine decay over 4 (PyTorch's
// SequentialLR(opt, [LinearLR(opt, 0.1, 1, 3), CosineAnnealingLR(opt, 4)], [3])).
func ExampleNewSequentialLR() {
	w := devtensor.Must(devtensor.Zeros([]int64{1}, devtensor.Float64, devtensor.CPU(0)))
	defer w.Close()
	devtensor.MustOK(w.SetRequiresGrad(true))
	opt := devtensor.Must(devtensor.SGD([]*devtensor.Tensor{w}, 0.1))
	defer opt.Close()
	warmUp := devtensor.Must(devtensor.NewLinearLR(opt, 0.1, 1, 3))
	decay := devtensor.Must(devtensor.NewCosineAnnealingLR(opt, 4, 0))
	sched := devtensor.Must(devtensor.NewSequentialLR(opt, []*devtensor.LRScheduler{warmUp, decay}, []int64{3}))
	defer sched.Close()
	// The SequentialLR holds its own references to the two.
	devtensor.MustOK(warmUp.Close())
	devtensor.MustOK(decay.Close())
	for epoch := 0; epoch < 8; epoch++ {
		fmt.Printf("%.4f ", devtensor.Must(sched.LastLR()))
		devtensor.MustOK(sched.Step()) // after opt.Step() in training
	}
	fmt.Println()
	// Output:
	// 0.0100 0.0400 0.0700 0.1000 0.0854 0.0500 0.0146 0.0000
}

// ReduceLROnPlateau divides the rate by 10 once the validation loss has not improved
// for more than `patience` epochs.
func ExampleNewReduceLROnPlateau() {
	w := devtensor.Must(devtensor.Zeros([]int64{1}, devtensor.Float64, devtensor.CPU(0)))
	defer w.Close()
	devtensor.MustOK(w.SetRequiresGrad(true))
	opt := devtensor.Must(devtensor.SGD([]*devtensor.Tensor{w}, 0.1))
	defer opt.Close()
	sched := devtensor.Must(devtensor.NewReduceLROnPlateau(opt, devtensor.PlateauPatience(1)))
	defer sched.Close()
	for _, valLoss := range []float64{1.0, 0.9, 0.9, 0.9, 0.8, 0.8} {
		devtensor.MustOK(sched.StepMetric(valLoss))
		fmt.Printf("loss %.1f: lr %.3g\n", valLoss, devtensor.Must(opt.LR()))
	}
	// Output:
	// loss 1.0: lr 0.1
	// loss 0.9: lr 0.1
	// loss 0.9: lr 0.1
	// loss 0.9: lr 0.01
	// loss 0.8: lr 0.01
	// loss 0.8: lr 0.01
}

// Hugging Face's get_linear_schedule_with_warmup(opt, 3, 10) is a LambdaLR: a linear
// warm-up over 3 epochs, then a linear decay to 0 at epoch 10.
func ExampleNewLambdaLR() {
	w := devtensor.Must(devtensor.Zeros([]int64{1}, devtensor.Float64, devtensor.CPU(0)))
	defer w.Close()
	devtensor.MustOK(w.SetRequiresGrad(true))
	opt := devtensor.Must(devtensor.SGD([]*devtensor.Tensor{w}, 0.1))
	defer opt.Close()
	const warmup, total = 3, 10
	sched := devtensor.Must(devtensor.NewLambdaLR(opt, func(epoch int64) float64 {
		if epoch < warmup {
			return float64(epoch) / warmup
		}
		return math.Max(0, float64(total-epoch)/(total-warmup))
	}))
	defer sched.Close()
	for epoch := 0; epoch < 11; epoch++ {
		fmt.Printf("%.4f ", devtensor.Must(opt.LR()))
		devtensor.MustOK(sched.Step()) // after opt.Step() in training
	}
	fmt.Println()
	// Output:
	// 0.0000 0.0333 0.0667 0.1000 0.0857 0.0714 0.0571 0.0429 0.0286 0.0143 0.0000
}

package devtensor_test

import (
	"fmt"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

// RMSprop fits w to a target by minimising sum((w - target)^2); its state dict then
// holds PyTorch's names: the settings (param_groups), then the state.
func ExampleRMSprop() {
	dev := devtensor.CPU(0)
	w := devtensor.Must(devtensor.Zeros([]int64{2}, devtensor.Float64, dev))
	defer w.Close()
	devtensor.MustOK(w.SetRequiresGrad(true))
	target := devtensor.Must(devtensor.FromSlice([]float64{3, -1}, []int64{2}, dev))
	defer target.Close()
	opt := devtensor.Must(devtensor.RMSprop([]*devtensor.Tensor{w}, 0.05)) // alpha 0.99, eps 1e-8
	defer opt.Close()
	for step := 0; step < 200; step++ {
		s := devtensor.NewScope()
		devtensor.MustOK(opt.ZeroGrad())
		d := devtensor.Must(s.Track(w.Sub(target)))
		loss := devtensor.Must(s.Track(devtensor.Must(s.Track(d.Mul(d))).Sum()))
		devtensor.MustOK(loss.Backward(nil))
		devtensor.MustOK(opt.Step())
		devtensor.MustOK(s.Close())
	}
	v := devtensor.Must(devtensor.ToSlice[float64](w))
	fmt.Printf("w: [%.3f %.3f]\n", v[0], v[1])
	sd := devtensor.Must(opt.StateDict())
	defer sd.Close()
	fmt.Println(devtensor.Must(sd.Names()))
	// Output:
	// w: [3.000 -1.000]
	// [lr alpha eps weight_decay momentum centered maximize state.0.step state.0.square_avg]
}

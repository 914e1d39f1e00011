// Command realistic is issue 20's yardstick: the best device, a tensor moved from cpu:0
// to cpu:1, the device mismatch caught with errors.Is, a 2-layer MLP trained with Adam,
// and a safetensors save/load. Run with DEVTENSOR_CPU_DEVICES=2 (for cpu:1).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	dt "github.com/devtensor/devtensor/bindings/go/devtensor"
)

func mlp(dev dt.Device) *dt.Module { // Sequential owns the layers: one Close for all
	return dt.Must(dt.Sequential(dt.Must(dt.Linear(2, 16, dt.LinearOptions{Device: dev})),
		dt.Must(dt.ReLU()), dt.Must(dt.Linear(16, 2, dt.LinearOptions{Device: dev}))))
}

func main() {
	dev := dt.Must(dt.TryGPU(0)) // cuda:0 if there is one, else cpu:0
	fmt.Println("device:", dev)
	a := dt.Must(dt.FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, dt.CPU(0)))
	defer a.Close()
	b := dt.Must(a.To(dt.CPU(1)))
	defer b.Close()
	if _, err := a.Add(b); errors.Is(err, dt.ErrDeviceMismatch) {
		fmt.Println("caught:", err)
	}

	dt.MustOK(dt.ManualSeed(0))
	model := mlp(dev)
	defer model.Close()
	params := dt.Must(model.Parameters())
	defer params.Close()
	opt := dt.Must(dt.Adam(params, 0.05))
	defer opt.Close()
	lossFn := dt.Must(dt.CrossEntropyLoss(dt.CrossEntropyLossOptions{}))
	defer lossFn.Close()
	x := dt.Must(dt.FromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, []int64{4, 2}, dev))
	defer x.Close()
	y := dt.Must(dt.FromSlice([]int64{0, 1, 1, 0}, []int64{4}, dev))
	defer y.Close()
	for step := 1; step <= 200; step++ {
		s := dt.NewScope() // closes the step's tensors
		dt.MustOK(opt.ZeroGrad())
		loss := dt.Must(s.Track(lossFn.Forward(dt.Must(s.Track(model.Forward(x))), y)))
		dt.MustOK(loss.Backward(nil))
		dt.MustOK(opt.Step())
		if step%50 == 0 {
			fmt.Printf("step %d  loss %.4f\n", step, dt.Must(loss.Item()))
		}
		dt.MustOK(s.Close())
	}

	path := filepath.Join(os.TempDir(), "realistic.safetensors")
	defer os.Remove(path)
	dt.MustOK(model.Save(path))
	restored := mlp(dev)
	defer restored.Close()
	dt.MustOK(restored.Load(path))
	s := dt.NewScope()
	defer s.Close()
	pred := dt.Must(s.Track(dt.Must(s.Track(restored.Forward(x))).Argmax(dt.Dims(1))))
	fmt.Println("restored model predicts", dt.Must(dt.ToSlice[int64](pred)))
}

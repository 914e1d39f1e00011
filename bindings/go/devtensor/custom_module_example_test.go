package devtensor_test

import (
	"errors"
	"fmt"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

// A module of one's own, as a subclass of torch.nn.Module: a residual block
// x + scale * fc(x), with a Linear child and a parameter of its own. The forward reaches
// them through self.
func ExampleNewModule() {
	fc := devtensor.Must(devtensor.Linear(2, 2, devtensor.LinearOptions{NoBias: true, DType: devtensor.Float32}))
	scale := devtensor.Must(devtensor.FromSlice([]float32{10}, []int64{1}, devtensor.CPU(0)))
	defer scale.Close() // NewModule copies its value; fc is taken over
	block := devtensor.Must(devtensor.NewModule("Residual", devtensor.ModuleSpec{
		Children:   devtensor.NamedModules{{Name: "fc", Module: fc}},
		Parameters: devtensor.NamedTensors{{Name: "scale", Tensor: scale}},
	}, func(self *devtensor.Module, inputs []*devtensor.Tensor) (*devtensor.Tensor, error) {
		x := inputs[0]
		fc, err := self.Child("fc")
		if err != nil {
			return nil, err
		}
		defer fc.Close()
		s, err := self.GetParameter("scale")
		if err != nil {
			return nil, err
		}
		defer s.Close()
		h, err := fc.Forward(x)
		if err != nil {
			return nil, err
		}
		defer h.Close()
		hs, err := h.Mul(s)
		if err != nil {
			return nil, err
		}
		defer hs.Close()
		return hs.Add(x) // the module takes the result over
	}))
	defer block.Close()

	// fc.weight = [[1, 0], [0, 2]], written through the module's own tensor.
	w := devtensor.Must(block.GetParameter("fc.weight"))
	devtensor.MustOK(devtensor.CopyFromSlice(w, []float32{1, 0, 0, 2}))
	w.Close()

	x := devtensor.Must(devtensor.FromSlice([]float32{1, 2}, []int64{1, 2}, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(block.Forward(x)) // [1, 2] + 10 * [1, 4]
	defer y.Close()
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](y)))

	sd := devtensor.Must(block.StateDict())
	defer sd.Close()
	fmt.Println(devtensor.Must(sd.Names()))

	// A wrong input fails in fc; the error keeps fc's code and names the block.
	bad := devtensor.Must(devtensor.Ones([]int64{1, 3}, devtensor.Float32, devtensor.CPU(0)))
	defer bad.Close()
	_, err := block.Forward(bad)
	fmt.Println(errors.Is(err, devtensor.ErrShapeMismatch))
	// Output:
	// [11 42]
	// [scale fc.weight]
	// true
}

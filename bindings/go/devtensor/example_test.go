package devtensor_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

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
	d := devtensor.Must(devtensor.TryGPU(0))
	t := devtensor.Must(devtensor.Ones([]int64{2}, devtensor.Float32, d))
	defer t.Close()
	fmt.Println(devtensor.Must(t.Device()) == d)
	// Output: true
}

func ExampleFromSlice() {
	t := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, devtensor.CPU(0)))
	defer t.Close()
	fmt.Println(t)
	fmt.Println(devtensor.Must(t.Shape()), devtensor.Must(t.DType()))
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](t)))
	// Output:
	// tensor([[1., 2.],
	//         [3., 4.]])
	// [2 2] float32
	// [1 2 3 4]
}

func ExampleGELUTanh() {
	// torch.nn.GELU(approximate="tanh"), GPT-2's activation, beside the exact GELU.
	x := devtensor.Must(devtensor.FromSlice([]float32{-1, 0, 1, 2}, []int64{4}, devtensor.CPU(0)))
	defer x.Close()
	for _, mk := range []func() (*devtensor.Module, error){devtensor.GELUTanh, devtensor.GELU} {
		m := devtensor.Must(mk())
		y := devtensor.Must(m.Forward(x))
		fmt.Printf("%s %.5f\n", devtensor.Must(m.Kind()), devtensor.Must(devtensor.ToSlice[float32](y)))
		y.Close()
		m.Close()
	}
	// Output:
	// GELU [-0.15881 0.00000 0.84119 1.95460]
	// GELU [-0.15866 0.00000 0.84134 1.95450]
}

func ExampleSiLU() {
	// torch.nn.SiLU, x / (1 + e^-x), and torch.nn.LeakyReLU(0.1).
	x := devtensor.Must(devtensor.FromSlice([]float32{-2, 0, 1, 3}, []int64{4}, devtensor.CPU(0)))
	defer x.Close()
	silu := devtensor.Must(devtensor.SiLU())
	defer silu.Close()
	leaky := devtensor.Must(devtensor.LeakyReLU(0.1))
	defer leaky.Close()
	for _, m := range []*devtensor.Module{silu, leaky} {
		y := devtensor.Must(m.Forward(x))
		fmt.Printf("%s %.5f\n", devtensor.Must(m.Kind()), devtensor.Must(devtensor.ToSlice[float32](y)))
		y.Close()
	}
	// Output:
	// SiLU [-0.23841 0.00000 0.73106 2.85772]
	// LeakyReLU [-0.20000 0.00000 1.00000 3.00000]
}

func ExampleTensor_LeakyReLU() {
	x := devtensor.Must(devtensor.FromSlice([]float64{-2, 0, 3}, []int64{3}, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(x.LeakyReLU(0.1))
	defer y.Close()
	fmt.Println(devtensor.Must(devtensor.ToSlice[float64](y)))
	ints := devtensor.Must(devtensor.FromSlice([]int32{-2, 3}, []int64{2}, devtensor.CPU(0)))
	defer ints.Close()
	_, err := ints.LeakyReLU(0.1) // floating tensors only
	fmt.Println(errors.Is(err, devtensor.ErrDTypeMismatch))
	// Output:
	// [-0.2 0 3]
	// true
}

func ExampleTensor_Pad() {
	x := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3}, []int64{3}, devtensor.CPU(0)))
	defer x.Close()
	for _, c := range []struct {
		pad   []int64
		mode  devtensor.PadMode
		value float64
	}{
		{[]int64{1, 2}, devtensor.PadConstant, 9},
		{[]int64{2, 0}, devtensor.PadReflect, 0},
		{[]int64{1, 2}, devtensor.PadReplicate, 0},
		{[]int64{1, 1}, devtensor.PadCircular, 0},
		{[]int64{-1, 0}, devtensor.PadConstant, 0}, // a negative pad crops
	} {
		y := devtensor.Must(x.Pad(c.pad, c.mode, c.value))
		fmt.Println(c.mode, c.pad, devtensor.Must(devtensor.ToSlice[float32](y)))
		y.Close()
	}
	// The pairs go from the last dim backwards: (1, 0) for dim 1, then (0, 1) for dim 0.
	m := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, devtensor.CPU(0)))
	defer m.Close()
	p := devtensor.Must(m.Pad([]int64{1, 0, 0, 1}, devtensor.PadConstant, 0))
	defer p.Close()
	fmt.Println(p)
	_, err := x.Pad([]int64{3, 0}, devtensor.PadReflect, 0) // reflect: each pad below the size
	fmt.Println(errors.Is(err, devtensor.ErrInvalidArgument))
	// Output:
	// constant [1 2] [9 1 2 3 9 9]
	// reflect [2 0] [3 2 1 2 3]
	// replicate [1 2] [1 1 2 3 3 3]
	// circular [1 1] [3 1 2 3 1]
	// constant [-1 0] [2 3]
	// tensor([[0., 1., 2.],
	//         [0., 3., 4.],
	//         [0., 0., 0.]])
	// true
}

func ExampleTensor_Interpolate() {
	// [[0, 3], [6, 9]] as a batch of one 1-channel image, [1, 1, 2, 2].
	x := devtensor.Must(devtensor.FromSlice([]float32{0, 3, 6, 9}, []int64{1, 1, 2, 2}, devtensor.CPU(0)))
	defer x.Close()
	for _, opts := range []devtensor.InterpolateOptions{
		{ScaleFactor: []float64{2}}, // nearest, the zero Mode
		{Size: []int64{2, 4}, Mode: devtensor.InterpolateBilinear, AlignCorners: true},
		{Size: []int64{2, 4}, Mode: devtensor.InterpolateBilinear},
	} {
		y := devtensor.Must(x.Interpolate(opts))
		fmt.Printf("%s %v %.4g\n", opts.Mode, devtensor.Must(y.Shape()), devtensor.Must(devtensor.ToSlice[float32](y)))
		y.Close()
	}
	// [0, 1, 2, 3, 4] by 1.5: output i reads input floor(i / 1.5).
	r := devtensor.Must(devtensor.FromSlice([]float32{0, 1, 2, 3, 4}, []int64{1, 1, 5}, devtensor.CPU(0)))
	defer r.Close()
	y := devtensor.Must(r.Interpolate(devtensor.InterpolateOptions{ScaleFactor: []float64{1.5}}))
	defer y.Close()
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](y)))
	_, err := x.Interpolate(devtensor.InterpolateOptions{Size: []int64{4}, ScaleFactor: []float64{2}}) // one of the two
	fmt.Println(errors.Is(err, devtensor.ErrInvalidArgument))
	// Output:
	// nearest [1 1 4 4] [0 0 3 3 0 0 3 3 6 6 9 9 6 6 9 9]
	// bilinear [1 1 2 4] [0 1 2 3 6 7 8 9]
	// bilinear [1 1 2 4] [0 0.75 2.25 3 6 6.75 8.25 9]
	// [0 0 1 2 2 3 4]
	// true
}

func ExampleUpsample() {
	up := devtensor.Must(devtensor.Upsample(devtensor.InterpolateOptions{
		Size: []int64{2, 4}, Mode: devtensor.InterpolateBilinear, AlignCorners: true}))
	defer up.Close()
	x := devtensor.Must(devtensor.FromSlice([]float32{0, 3, 6, 9}, []int64{1, 1, 2, 2}, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(up.Forward(x))
	defer y.Close()
	fmt.Printf("%s %.4g\n", devtensor.Must(up.Kind()), devtensor.Must(devtensor.ToSlice[float32](y)))
	// bilinear takes a 4-d input; the error names the module.
	l := devtensor.Must(devtensor.FromSlice([]float32{0, 4}, []int64{1, 1, 2}, devtensor.CPU(0)))
	defer l.Close()
	_, err := up.Forward(l)
	fmt.Println(errors.Is(err, devtensor.ErrShapeMismatch))
	// Output:
	// Upsample [0 1 2 3 6 7 8 9]
	// true
}

func ExampleTensor_To() {
	// The tests run with DEVTENSOR_CPU_DEVICES=2, so cpu:1 exists.
	a := devtensor.Must(devtensor.FromSlice([]int64{1, 2, 3}, nil, devtensor.CPU(0)))
	defer a.Close()
	b := devtensor.Must(a.To(devtensor.CPU(1))) // a new tensor; a stays where it is
	defer b.Close()
	fmt.Println(devtensor.Must(a.Device()), devtensor.Must(b.Device()))
	fmt.Println(devtensor.Must(devtensor.ToSlice[int64](b)))
	// Output:
	// cpu:0 cpu:1
	// [1 2 3]
}

func ExampleTensor_Add() {
	a := devtensor.Must(devtensor.Ones([]int64{2}, devtensor.Float32, devtensor.CPU(0)))
	defer a.Close()
	b := devtensor.Must(devtensor.Ones([]int64{2}, devtensor.Float32, devtensor.CPU(1)))
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
	x := devtensor.Must(s.Track(devtensor.Arange(0, 4, 1, devtensor.Float32, devtensor.CPU(0))))
	y := devtensor.Must(s.Track(x.MulScalar(2)))
	z := devtensor.Must(s.Track(y.Sum()))
	fmt.Println(devtensor.Must(z.Item()), s.Len())
	// Output: 12 3
}

func ExampleWithStream() {
	// On a GPU the ops inside run on s's queue, beside the default stream's work; on the
	// CPU (one in-order queue) the same code runs unchanged.
	dev := devtensor.CPU(0)
	s := devtensor.Must(devtensor.NewStream(dev))
	defer s.Close()
	start, end := devtensor.Must(devtensor.NewEvent(dev)), devtensor.Must(devtensor.NewEvent(dev))
	defer start.Close()
	defer end.Close()
	a := devtensor.Must(devtensor.Ones([]int64{2}, devtensor.Float32, dev))
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
	ms := devtensor.Must(start.ElapsedMs(end)) // waits for the work between the marks
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](b)), ms >= 0)
	// Output: [2 2] true
}

// Training: a 2-layer MLP learns XOR with Adam. Sequential owns its children, and
// Parameters' result goes to the optimizer as it is.
func ExampleAdam() {
	dev := devtensor.CPU(0)
	devtensor.MustOK(devtensor.ManualSeed(0))
	model := devtensor.Must(devtensor.Sequential(
		devtensor.Must(devtensor.Linear(2, 8, devtensor.LinearOptions{Device: dev})),
		devtensor.Must(devtensor.Tanh()),
		devtensor.Must(devtensor.Linear(8, 2, devtensor.LinearOptions{Device: dev})),
	))
	defer model.Close() // closes the three layers too
	params := devtensor.Must(model.Parameters())
	defer params.Close()
	opt := devtensor.Must(devtensor.Adam(params, 0.05))
	defer opt.Close()
	lossFn := devtensor.Must(devtensor.CrossEntropyLoss(devtensor.CrossEntropyLossOptions{}))
	defer lossFn.Close()
	x := devtensor.Must(devtensor.FromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, []int64{4, 2}, dev))
	defer x.Close()
	y := devtensor.Must(devtensor.FromSlice([]int64{0, 1, 1, 0}, []int64{4}, dev))
	defer y.Close()
	var first, last float64
	for step := 0; step < 300; step++ {
		s := devtensor.NewScope()
		devtensor.MustOK(opt.ZeroGrad())
		loss := devtensor.Must(s.Track(lossFn.Forward(devtensor.Must(s.Track(model.Forward(x))), y)))
		devtensor.MustOK(loss.Backward(nil))
		devtensor.MustOK(opt.Step())
		last = devtensor.Must(loss.Item())
		if step == 0 {
			first = last
		}
		devtensor.MustOK(s.Close())
	}
	logits := devtensor.Must(model.Forward(x))
	defer logits.Close()
	pred := devtensor.Must(logits.Argmax(devtensor.Dims(1)))
	defer pred.Close()
	fmt.Println("loss fell:", last < first/10)
	fmt.Println("predictions:", devtensor.Must(devtensor.ToSlice[int64](pred)))
	// Output:
	// loss fell: true
	// predictions: [0 1 1 0]
}

// Save and load: the state dict goes to a safetensors file and into a second model of
// the same shape, which then computes the same outputs.
func ExampleModule_Save() {
	dir, err := os.MkdirTemp("", "devtensor-example")
	devtensor.MustOK(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	devtensor.MustOK(devtensor.ManualSeed(1))
	a := devtensor.Must(devtensor.Linear(3, 2, devtensor.LinearOptions{}))
	defer a.Close()
	devtensor.MustOK(a.Save(path))
	devtensor.MustOK(devtensor.ManualSeed(2)) // b starts from other weights
	b := devtensor.Must(devtensor.Linear(3, 2, devtensor.LinearOptions{}))
	defer b.Close()
	devtensor.MustOK(b.Load(path))

	x := devtensor.Must(devtensor.Ones([]int64{1, 3}, devtensor.Float32, devtensor.CPU(0)))
	defer x.Close()
	ya, yb := devtensor.Must(a.Forward(x)), devtensor.Must(b.Forward(x))
	defer ya.Close()
	defer yb.Close()
	eq := devtensor.Must(ya.Eq(yb))
	defer eq.Close()
	fmt.Println(devtensor.Must(devtensor.ToSlice[bool](eq)))
	for _, p := range devtensor.Must(b.Parameters()) {
		fmt.Println(p.Name, devtensor.Must(p.Tensor.Shape()))
		p.Tensor.Close()
	}
	// A file that does not fit leaves the module unchanged.
	c := devtensor.Must(devtensor.Linear(4, 2, devtensor.LinearOptions{}))
	defer c.Close()
	fmt.Println(errors.Is(c.Load(path), devtensor.ErrFormat))
	// Output:
	// [true true]
	// weight [2 3]
	// bias [2]
	// true
}

// errors.Is on a device mismatch: a module on cpu:1 and an input on cpu:0. Moving the
// input (or the module) fixes it; the library never copies silently.
func ExampleModule_Forward_deviceMismatch() {
	lin := devtensor.Must(devtensor.Linear(2, 1, devtensor.LinearOptions{Device: devtensor.CPU(1)}))
	defer lin.Close()
	x := devtensor.Must(devtensor.Ones([]int64{1, 2}, devtensor.Float32, devtensor.CPU(0)))
	defer x.Close()
	_, err := lin.Forward(x)
	switch {
	case errors.Is(err, devtensor.ErrDeviceMismatch):
		x1 := devtensor.Must(x.To(devtensor.Must(lin.Device())))
		defer x1.Close()
		y := devtensor.Must(lin.Forward(x1))
		defer y.Close()
		fmt.Println("mismatch; on", devtensor.Must(y.Device()), "after moving x")
	case err != nil:
		fmt.Println("another error:", err)
	default:
		fmt.Println("no error")
	}
	// Output: mismatch; on cpu:1 after moving x
}

// DataParallel over cpu:0 and cpu:1 (the tests run with DEVTENSOR_CPU_DEVICES set, so
// both exist): each device runs a replica on its half of the batch, and the outputs are
// gathered on cpu:0, equal to the plain module's.
func ExampleDataParallel() {
	devtensor.MustOK(devtensor.ManualSeed(3))
	lin := devtensor.Must(devtensor.Linear(3, 2, devtensor.LinearOptions{Device: devtensor.CPU(0)}))
	defer lin.Close()
	dp := devtensor.Must(devtensor.DataParallel(lin, []devtensor.Device{devtensor.CPU(0), devtensor.CPU(1)}, devtensor.DefaultDevice))
	defer dp.Close()
	x := devtensor.Must(devtensor.Randn([]int64{4, 3}, devtensor.Float32, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(dp.Forward(x))
	defer y.Close()
	want := devtensor.Must(lin.Forward(x))
	defer want.Close()
	diff := devtensor.Must(y.Sub(want))
	defer diff.Close()
	absDiff := devtensor.Must(diff.Abs())
	defer absDiff.Close()
	maxDiff := devtensor.Must(absDiff.Max())
	defer maxDiff.Close()
	fmt.Println(devtensor.Must(y.Shape()), devtensor.Must(y.Device()), devtensor.Must(maxDiff.Item()) < 1e-6)
	// Output: [4 2] cpu:0 true
}

// Gradient accumulation with DistributedDataParallel (on a group of one process here):
// the micro-batches under NoSync add up their gradients locally, and the last pass,
// outside it, averages the whole sum over the group, one all-reduce per step.
func ExampleModule_NoSync() {
	dir, err := os.MkdirTemp("", "devtensor-example")
	devtensor.MustOK(err)
	defer os.RemoveAll(dir)
	pg := devtensor.Must(devtensor.NewProcessGroup("gloo", "file://"+filepath.Join(dir, "store"), 0, 1, 0))
	defer pg.Close()
	lin := devtensor.Must(devtensor.Linear(3, 2, devtensor.LinearOptions{Device: devtensor.CPU(0)}))
	defer lin.Close()
	ddp := devtensor.Must(devtensor.DistributedDataParallel(lin, pg, devtensor.DDPOptions{}))
	defer ddp.Close()
	backward := func(rows int64) error { // sum(ddp(x)) over a batch of ones
		x := devtensor.Must(devtensor.Ones([]int64{rows, 3}, devtensor.Float32, devtensor.CPU(0)))
		defer x.Close()
		y := devtensor.Must(ddp.Forward(x))
		defer y.Close()
		loss := devtensor.Must(y.Sum())
		defer loss.Close()
		return loss.Backward(nil)
	}
	for _, rows := range []int64{2, 3} { // two micro-batches, no communication
		devtensor.MustOK(ddp.NoSync(func() error { return backward(rows) }))
	}
	devtensor.MustOK(backward(4)) // the last one all-reduces the accumulated gradient
	params := devtensor.Must(lin.Parameters())
	defer params.Close()
	grad := devtensor.Must(params[1].Tensor.Grad()) // the bias's: one per row
	defer grad.Close()
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](grad)))
	// Output: [9 9]
}

// A state dict (PyTorch's state_dict): weights set by name, a safetensors file, and a
// second model loaded from it that computes the same output.
func ExampleStateDict() {
	dir, err := os.MkdirTemp("", "devtensor-example")
	devtensor.MustOK(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "linear.safetensors")

	w := devtensor.Must(devtensor.FromSlice([]float32{2, -1}, []int64{1, 2}, devtensor.CPU(0)))
	defer w.Close()
	b := devtensor.Must(devtensor.FromSlice([]float32{0.5}, []int64{1}, devtensor.CPU(0)))
	defer b.Close()
	sd := devtensor.Must(devtensor.NewStateDict(devtensor.Named{Name: "weight", Tensor: w}, devtensor.Named{Name: "bias", Tensor: b}))
	defer sd.Close()
	a := devtensor.Must(devtensor.Linear(2, 1, devtensor.LinearOptions{}))
	defer a.Close()
	devtensor.MustOK(a.LoadStateDict(sd)) // strict: every key, the right shapes

	// The module's own state dict, shared with it, to a file and into a second Linear.
	own := devtensor.Must(a.StateDict())
	defer own.Close()
	fmt.Println(devtensor.Must(own.Names()))
	devtensor.MustOK(own.Save(path))
	loaded := devtensor.Must(devtensor.LoadSafetensors(path, devtensor.DefaultDevice))
	defer loaded.Close()
	c := devtensor.Must(devtensor.Linear(2, 1, devtensor.LinearOptions{}))
	defer c.Close()
	devtensor.MustOK(c.LoadStateDict(loaded))

	x := devtensor.Must(devtensor.FromSlice([]float32{3, 4}, []int64{1, 2}, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(c.Forward(x)) // 2*3 - 1*4 + 0.5
	defer y.Close()
	fmt.Println(devtensor.Must(devtensor.ToSlice[float32](y)))

	// A wrong shape is the C API's invalid argument, naming the key.
	bad := devtensor.Must(devtensor.NewStateDict(devtensor.Named{Name: "weight", Tensor: b}, devtensor.Named{Name: "bias", Tensor: b}))
	defer bad.Close()
	fmt.Println(errors.Is(c.LoadStateDict(bad), devtensor.ErrInvalidArgument))
	// Output:
	// [weight bias]
	// [2.5]
	// true
}

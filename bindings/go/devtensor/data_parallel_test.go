package devtensor

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// dpRun runs mod on x, takes loss = sum(out * c), backpropagates, and returns the
// output, the input's gradient and the parameters' gradients (in params' order), then
// clears every gradient for the next run.
func dpRun(t *testing.T, mod *Module, params []Named, x, c *Tensor) (out, gx []float32, gp [][]float32, dev Device) {
	t.Helper()
	y := must(mod.Forward(x))
	defer y.Close()
	dev = must(y.Device())
	prod := must(y.Mul(c))
	defer prod.Close()
	loss := must(prod.Sum())
	defer loss.Close()
	if err := loss.Backward(nil); err != nil {
		t.Fatal(err)
	}
	grad := func(p *Tensor) []float32 {
		g := must(p.Grad())
		if g == nil {
			t.Fatal("no gradient")
		}
		defer g.Close()
		if err := p.ClearGrad(); err != nil {
			t.Fatal(err)
		}
		return must(ToSlice[float32](g))
	}
	out, gx = must(ToSlice[float32](y)), grad(x)
	for _, p := range params {
		gp = append(gp, grad(p.Tensor))
	}
	return out, gx, gp, dev
}

func dpClose(t *testing.T, want, got []float32, what string) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(want[i]-got[i])) > 1e-5 {
			t.Fatalf("%s[%d]: DataParallel %v, plain %v", what, i, got[i], want[i])
		}
	}
}

// DataParallel over cpu:0..3 gives the plain module's outputs and gradients, for an even
// batch (8 rows: 2 per device), uneven ones (5 rows: torch.chunk's 2 + 2 + 1; 7 rows:
// 2 + 2 + 2 + 1) and a single row.
func TestDataParallelMatchesModule(t *testing.T) {
	noLeaks(t)
	if err := ManualSeed(7); err != nil {
		t.Fatal(err)
	}
	l1 := must(Linear(5, 4, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer l1.Close()
	act := must(Tanh())
	defer act.Close()
	l2 := must(Linear(4, 3, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer l2.Close()
	model := must(Sequential(l1, act, l2))
	defer model.Close()
	dp := must(DataParallel(model, []Device{CPU(0), CPU(1), CPU(2), CPU(3)}, DefaultDevice))
	defer dp.Close()
	params := must(model.Parameters())
	dpParams := must(dp.Parameters())
	for i := range params {
		defer params[i].Tensor.Close()
		defer dpParams[i].Tensor.Close()
		if dpParams[i].Name != "module."+params[i].Name {
			t.Errorf("DataParallel parameter %d is %q, want module.%s", i, dpParams[i].Name, params[i].Name)
		}
	}
	for _, rows := range []int64{8, 5, 7, 1} {
		x := must(Randn([]int64{rows, 5}, Float32, CPU(0)))
		c := must(Randn([]int64{rows, 3}, Float32, CPU(0)))
		if err := x.SetRequiresGrad(true); err != nil {
			t.Fatal(err)
		}
		out, gx, gp, _ := dpRun(t, model, params, x, c)
		dout, dgx, dgp, dev := dpRun(t, dp, params, x, c)
		if dev != CPU(0) {
			t.Errorf("rows=%d: output on %v, want cpu:0 (device_ids[0])", rows, dev)
		}
		dpClose(t, out, dout, "output")
		dpClose(t, gx, dgx, "input grad")
		for i := range gp {
			dpClose(t, gp[i], dgp[i], params[i].Name+" grad")
		}
		closeAll(t, x, c)
	}

	// An explicit output device.
	dp1 := must(DataParallel(model, []Device{CPU(0), CPU(1)}, CPU(1)))
	defer dp1.Close()
	x := must(Ones([]int64{3, 5}, Float32, CPU(0)))
	defer x.Close()
	y := must(dp1.Forward(x))
	defer y.Close()
	if d := must(y.Device()); d != CPU(1) {
		t.Errorf("output on %v, want cpu:1", d)
	}
}

// The module must be on device_ids[0] when Forward runs.
func TestDataParallelWrongDevice(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(5, 3, LinearOptions{DType: Float32, Device: CPU(1)}))
	defer lin.Close()
	dp := must(DataParallel(lin, []Device{CPU(0), CPU(1)}, DefaultDevice))
	defer dp.Close()
	x := must(Ones([]int64{4, 5}, Float32, CPU(0)))
	defer x.Close()
	_, err := dp.Forward(x)
	e := wantCode(t, err, ErrDeviceMismatch)
	const want = "module must have its parameters and buffers on device cpu:0 (device_ids[0]) but found one of them on device: cpu:1"
	if !strings.Contains(e.Msg, want) {
		t.Errorf("message %q does not contain %q", e.Msg, want)
	}
}

// Construction errors, and nil device IDs meaning every device of the module's type.
func TestDataParallelErrors(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(5, 3, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer lin.Close()

	_, err := DataParallel(lin, []Device{CPU(0), CPU(5)}, DefaultDevice)
	if e := wantCode(t, err, ErrInvalidDevice); !strings.Contains(e.Msg, "device_ids[1]") || e.Op != "DataParallel" {
		t.Errorf("invalid ordinal: %+v", e)
	}
	_, err = DataParallel(lin, []Device{CPU(0), CPU(0)}, DefaultDevice)
	wantCode(t, err, ErrInvalidArgument)

	dp := must(DataParallel(lin, nil, DefaultDevice)) // cpu:0..3
	defer dp.Close()
	_, err = DataParallel(dp, []Device{CPU(0)}, DefaultDevice)
	wantCode(t, err, ErrInvalidArgument) // nesting
	x := must(Ones([]int64{2, 5}, Float32, CPU(0)))
	defer x.Close()
	y := must(dp.Forward(x))
	defer y.Close()
	if s := must(y.Shape()); len(s) != 2 || s[0] != 2 || s[1] != 3 {
		t.Errorf("output shape %v", s)
	}

	// The DataParallel holds its own reference to the module.
	lin2 := must(Linear(5, 3, LinearOptions{DType: Float32, Device: CPU(0)}))
	dp2 := must(DataParallel(lin2, []Device{CPU(0), CPU(1)}, DefaultDevice))
	defer dp2.Close()
	if err := lin2.Close(); err != nil {
		t.Fatal(err)
	}
	y2 := must(dp2.Forward(x))
	y2.Close()
	if _, err := DataParallel(lin2, nil, DefaultDevice); !errors.Is(err, ErrClosed) {
		t.Errorf("DataParallel of a closed module: %v", err)
	}
}

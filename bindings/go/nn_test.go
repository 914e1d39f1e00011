package devtensor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tiny classifier learns a separable problem: the loss must fall, gradients must be
// there, and everything is released.
func TestTrainingLowersTheLoss(t *testing.T) {
	noLeaks(t)
	if err := ManualSeed(3); err != nil {
		t.Fatal(err)
	}
	l1 := must(Linear(2, 8, true, Float32, CPU))
	defer l1.Close()
	act := must(ReLU())
	defer act.Close()
	l2 := must(Linear(8, 2, true, Float32, CPU))
	defer l2.Close()
	model := must(Sequential(l1, act, l2))
	defer model.Close()
	loss := must(CrossEntropyLoss(nil, ReductionMean, -100, 0))
	defer loss.Close()
	x := must(FromSlice([]float32{-1, -1, -1, 1, 1, -1, 1, 1}, []int64{4, 2}, CPU))
	defer x.Close()
	y := must(FromSlice([]int64{0, 1, 1, 0}, []int64{4}, CPU))
	defer y.Close()
	params := must(model.Parameters())
	names := []string{}
	ts := []*Tensor{}
	for _, p := range params {
		names = append(names, p.Name)
		ts = append(ts, p.Tensor)
		defer p.Tensor.Close()
	}
	if got := strings.Join(names, ","); got != "0.weight,0.bias,2.weight,2.bias" {
		t.Fatalf("parameter names %q", got)
	}
	opt := must(Adam(ts, 0.05, 0.9, 0.999, 1e-8, 0, false))
	defer opt.Close()
	var first, last float64
	for step := 0; step < 200; step++ {
		if err := opt.ZeroGrad(); err != nil {
			t.Fatal(err)
		}
		logits := must(model.Forward(x))
		l := must(loss.Forward(logits, y))
		if step == 0 {
			name := must(l.GradFnName())
			if name == "" {
				t.Fatalf("the loss has no grad_fn")
			}
		}
		if err := l.Backward(nil); err != nil {
			t.Fatal(err)
		}
		v := must(l.Item())
		if step == 0 {
			first = v
		}
		last = v
		if err := opt.Step(); err != nil {
			t.Fatal(err)
		}
		logits.Close()
		l.Close()
	}
	if !(last < 0.1*first) {
		t.Fatalf("loss %.4f -> %.4f: not learning", first, last)
	}
	g := must(ts[0].Grad())
	if g == nil {
		t.Fatal("no gradient on the first weight")
	}
	g.Close()
}

// Module.To moves in place: a parameter taken before the move follows it; the input on
// another device is a DeviceMismatch naming both devices.
func TestModuleToInPlaceAndMismatch(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(3, 2, true, Float32, CPU))
	defer lin.Close()
	params := must(lin.Parameters())
	w := params[0].Tensor
	defer w.Close()
	defer params[1].Tensor.Close()
	if err := lin.To(CPUN(1)); err != nil {
		t.Fatal(err)
	}
	if d := must(w.Device()); d != CPUN(1) {
		t.Fatalf("the weight handle is on %v after Module.To(cpu:1)", d)
	}
	x := must(Ones([]int64{4, 3}, Float32, CPU))
	defer x.Close()
	_, err := lin.Forward(x)
	if !errors.Is(err, ErrDeviceMismatch) || !strings.Contains(err.Error(), "module parameters are on cpu:1 but the input is on cpu:0") {
		t.Fatalf("got %v", err)
	}
	if err := lin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lin.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := lin.Forward(x); !errors.Is(err, ErrClosed) {
		t.Fatalf("Forward after Close: %v", err)
	}
}

func TestModuleSaveLoadRoundTrip(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "lin.safetensors")
	a := must(Linear(4, 3, true, Float64, CPU))
	defer a.Close()
	b := must(Linear(4, 3, true, Float64, CPU))
	defer b.Close()
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := b.Load(path); err != nil {
		t.Fatal(err)
	}
	pa, pb := must(a.Parameters()), must(b.Parameters())
	for i := range pa {
		va, vb := must(ToSlice[float64](pa[i].Tensor)), must(ToSlice[float64](pb[i].Tensor))
		for j := range va {
			if va[j] != vb[j] {
				t.Fatalf("%s[%d]: %v != %v", pa[i].Name, j, va[j], vb[j])
			}
		}
		pa[i].Tensor.Close()
		pb[i].Tensor.Close()
	}
	os.WriteFile(path, []byte("not a safetensors file"), 0o644)
	if err := b.Load(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("loading a bad file: %v", err)
	}
}

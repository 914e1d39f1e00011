package devtensor

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Compile checks of the module-tree signatures.
var (
	_ func(*Module) (string, error)          = (*Module).Kind
	_ func(*Module) (NamedModules, error)    = (*Module).Children
	_ func(*Module, string) (*Module, error) = (*Module).Child
	_ func(NamedModules) error               = NamedModules.Close
)

// net is Sequential(Linear(2, 3), ReLU(), Sequential(Linear(3, 2), BatchNorm1d(2))).
func testNet(t *testing.T) *Module {
	t.Helper()
	inner := must(Sequential(must(Linear(3, 2, LinearOptions{})), must(BatchNorm1d(2, BatchNormOptions{}))))
	return must(Sequential(must(Linear(2, 3, LinearOptions{})), must(ReLU()), inner))
}

func TestModuleChildren(t *testing.T) {
	noLeaks(t)
	net := testNet(t)
	defer net.Close()
	if k := must(net.Kind()); k != "Sequential" {
		t.Fatalf("kind %q", k)
	}
	cs := must(net.Children())
	defer cs.Close()
	var names, kinds []string
	for _, c := range cs {
		names = append(names, c.Name)
		kinds = append(kinds, must(c.Module.Kind()))
	}
	if !reflect.DeepEqual(names, []string{"0", "1", "2"}) || !reflect.DeepEqual(kinds, []string{"Linear", "ReLU", "Sequential"}) {
		t.Fatalf("children %v, kinds %v", names, kinds)
	}
	leaf := must(cs[0].Module.Children())
	if len(leaf) != 0 {
		t.Fatalf("a Linear has children: %v", leaf)
	}

	// Child("0") is the parent's Linear: the same parameter tensors.
	lin := must(net.Child("0"))
	defer lin.Close()
	mine := must(lin.Parameters())
	defer mine.Close()
	parents := must(net.Parameters())
	defer parents.Close()
	if parents[0].Name != "0.weight" || !must(mine[0].Tensor.SharesStorage(parents[0].Tensor)) {
		t.Fatalf("child 0's weight is not the parent's 0.weight: %v / %v", mine, parents)
	}

	// A nested path; a buffer written through the child is the parent's.
	bn := must(net.Child("2.1"))
	defer bn.Close()
	if k := must(bn.Kind()); k != "BatchNorm1d" {
		t.Fatalf("2.1 is %q", k)
	}
	x := must(FromSlice([]float32{0, 10, 2, 14}, []int64{2, 2}, CPU(0)))
	defer x.Close()
	must(bn.Forward(x)).Close() // training mode: updates running_mean to 0.1 * batch mean
	sd := must(net.StateDict())
	defer sd.Close()
	rm := must(sd.Get("2.1.running_mean"))
	defer rm.Close()
	if got := must(ToSlice[float32](rm)); !near32(got, []float32{0.1, 1.2}, 1e-6) {
		t.Fatalf("the parent's 2.1.running_mean after a step through the child: %v", got)
	}

	// Moving the child moves that part of the parent only.
	MustOK(bn.To(CPU(1)))
	if d := must(bn.Device()); d != CPU(1) {
		t.Fatalf("child device %v", d)
	}
	if d := must(net.Device()); d != CPU(0) {
		t.Fatalf("the parent's first parameter moved: %v", d)
	}
	if d := must(rm.Device()); d != CPU(1) {
		t.Fatalf("the parent's buffer did not follow the child's move: %v", d)
	}

	// A path that leads nowhere names the missing part and the children there are.
	_, err := net.Child("2.5")
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), `"5"`) || !strings.Contains(err.Error(), "0, 1") {
		t.Fatalf("missing child: %v", err)
	}
	if _, err := net.Child("0.weight"); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "Linear has no children") {
		t.Fatalf("a parameter is no child: %v", err)
	}
	if _, err := net.Child("0\x00"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a NUL byte: %v", err)
	}
}

func near32(got, want []float32, tol float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if d := got[i] - want[i]; d > tol || d < -tol {
			return false
		}
	}
	return true
}

// A child handle stays valid after the parent is closed, and closing it leaves the
// parent whole.
func TestModuleChildLifetime(t *testing.T) {
	noLeaks(t)
	net := testNet(t)
	c := must(net.Child("2"))
	cs := must(c.Children())
	if len(cs) != 2 {
		t.Fatalf("children of 2: %v", cs)
	}
	MustOK(cs.Close())
	MustOK(cs.Close()) // idempotent
	MustOK(net.Close())
	if k := must(c.Kind()); k != "Sequential" {
		t.Fatalf("kind after the parent's close: %q", k)
	}
	ps := must(c.Parameters())
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	ps.Close()
	if !reflect.DeepEqual(names, []string{"0.weight", "0.bias", "1.weight", "1.bias"}) {
		t.Fatalf("parameters of the child: %v", names)
	}
	MustOK(c.Close())

	var nilModule *Module
	if _, err := nilModule.Kind(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil module: %v", err)
	}
	if _, err := c.Children(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed module: %v", err)
	}
	if _, err := c.Child("0"); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed module: %v", err)
	}
}

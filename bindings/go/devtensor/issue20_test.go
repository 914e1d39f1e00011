package devtensor

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Compile checks of the names and signatures of issue 20: initialisms in one case, CPU(i)
// beside CUDA(i), option structs and functional options instead of bare bools,
// optimizers over Parameters' result, Must helpers.
var (
	_ func(*Tensor) (*Tensor, error)                                      = (*Tensor).ReLU
	_ func(*Tensor) (*Tensor, error)                                      = (*Tensor).GELU
	_ func(*Tensor) (*Tensor, error)                                      = (*Tensor).SiLU
	_ func() (*Module, error)                                             = ReLU
	_ func() (*Module, error)                                             = GELU
	_ func(int) Device                                                    = CPU
	_ func(int) Device                                                    = CUDA
	_ func(*Tensor, Device, DType, ToOptions) (*Tensor, error)            = (*Tensor).ToDeviceDType
	_ func(int64, int64, LinearOptions) (*Module, error)                  = Linear
	_ func(*Module, *ProcessGroup, DDPOptions) (*Module, error)           = DistributedDataParallel
	_ func(*Tensor, ...ReduceOption) (*Tensor, error)                     = (*Tensor).Sum
	_ func(NamedTensors, float64, ...OptimizerOption) (*Optimizer, error) = SGD[NamedTensors]
	_ func([]Named, float64, ...OptimizerOption) (*Optimizer, error)      = Adam[[]Named]
	_ func([]*Tensor, float64, ...OptimizerOption) (*Optimizer, error)    = AdamW[[]*Tensor]
	_ func(*Module) (NamedTensors, error)                                 = (*Module).Parameters
	_ func(int, error) int                                                = Must[int]
	_ func(error)                                                         = MustOK
)

func TestCPUDevice(t *testing.T) {
	if CPU(1) != (Device{DeviceCPU, 1}) || CPU(0).String() != "cpu:0" || CPU(3).String() != "cpu:3" {
		t.Fatalf("CPU(1) = %v, CPU(0) = %v", CPU(1), CPU(0))
	}
	if d, err := ParseDevice("cpu:2"); err != nil || d != CPU(2) {
		t.Fatalf("ParseDevice(cpu:2) = %v, %v", d, err)
	}
}

// The renamed op methods compute what they did: ReLU, GELU and SiLU at a few points.
func TestInitialismOps(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float32{-1, 0, 2}, nil, CPU(0))))
	check := func(name string, y *Tensor, want []float32) {
		t.Helper()
		got := must(ToSlice[float32](y))
		for i := range want {
			if d := got[i] - want[i]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("%s = %v, want %v", name, got, want)
			}
		}
	}
	check("ReLU", must(s.Track(x.ReLU())), []float32{0, 0, 2})
	check("GELU", must(s.Track(x.GELU())), []float32{-0.158655, 0, 1.954500})
	check("SiLU", must(s.Track(x.SiLU())), []float32{-0.268941, 0, 1.761594})
}

// Reductions: no option reduces everything; Dims picks dims; KeepDim keeps them as size 1.
func TestReduceOptions(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	a := must(s.Track(FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(0))))
	for _, c := range []struct {
		name  string
		y     *Tensor
		shape []int64
		want  []float32
	}{
		{"Sum()", must(s.Track(a.Sum())), []int64{}, []float32{21}},
		{"Sum(Dims(1))", must(s.Track(a.Sum(Dims(1)))), []int64{2}, []float32{6, 15}},
		{"Sum(Dims(0), KeepDim())", must(s.Track(a.Sum(Dims(0), KeepDim()))), []int64{1, 3}, []float32{5, 7, 9}},
		{"Sum(Dims(0), Dims(1))", must(s.Track(a.Sum(Dims(0), Dims(1)))), []int64{}, []float32{21}},
		{"Max(Dims(-1), KeepDim())", must(s.Track(a.Max(Dims(-1), KeepDim()))), []int64{2, 1}, []float32{3, 6}},
		{"Mean(nil option)", must(s.Track(a.Mean(nil))), []int64{}, []float32{3.5}},
	} {
		if got := must(c.y.Shape()); len(got) != len(c.shape) || (len(got) > 0 && got[0] != c.shape[0]) {
			t.Errorf("%s: shape %v, want %v", c.name, got, c.shape)
		}
		got := must(ToSlice[float32](c.y))
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%s = %v, want %v", c.name, got, c.want)
			}
		}
	}
	am := must(s.Track(a.Argmax(Dims(1), KeepDim())))
	if got := must(ToSlice[int64](am)); len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Errorf("Argmax(Dims(1), KeepDim()) = %v", got)
	}
}

// ToOptions: the zero value aliases when nothing changes, Copy copies, and NonBlocking
// is accepted (synchronous on the CPU).
func TestToOptions(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	a := must(s.Track(FromSlice([]float32{1, 2}, nil, CPU(0))))
	same := must(s.Track(a.ToDeviceDType(DefaultDevice, DefaultDType, ToOptions{})))
	copied := must(s.Track(a.ToDeviceDType(DefaultDevice, DefaultDType, ToOptions{Copy: true})))
	moved := must(s.Track(a.ToDeviceDType(CPU(1), Float64, ToOptions{NonBlocking: true})))
	if !must(a.SharesStorage(same)) || must(a.SharesStorage(copied)) {
		t.Fatal("ToOptions{} must alias and ToOptions{Copy: true} copy")
	}
	if must(moved.Device()) != CPU(1) || must(moved.DType()) != Float64 {
		t.Fatalf("moved: %v %v", must(moved.Device()), must(moved.DType()))
	}
}

// LinearOptions: the zero value is PyTorch's defaults (a bias, the default dtype and
// device); NoBias, DType and Device do what they say.
func TestLinearOptions(t *testing.T) {
	noLeaks(t)
	def := must(Linear(3, 2, LinearOptions{}))
	defer def.Close()
	ps := must(def.Parameters())
	defer ps.Close()
	if len(ps) != 2 || ps[1].Name != "bias" || must(ps[0].Tensor.DType()) != Float32 || must(ps[0].Tensor.Device()) != CPU(0) {
		t.Fatalf("Linear(3, 2, LinearOptions{}): %d parameters", len(ps))
	}
	nb := must(Linear(3, 2, LinearOptions{NoBias: true, DType: Float64, Device: CPU(2)}))
	defer nb.Close()
	nps := must(nb.Parameters())
	defer nps.Close()
	if len(nps) != 1 || nps[0].Name != "weight" || must(nps[0].Tensor.DType()) != Float64 || must(nps[0].Tensor.Device()) != CPU(2) {
		t.Fatalf("NoBias/Float64/cpu:2: %d parameters", len(nps))
	}
	if ts := nps.Tensors(); len(ts) != 1 || ts[0] != nps[0].Tensor {
		t.Fatal("NamedTensors.Tensors")
	}
}

// trainSteps builds the same 2-layer MLP (seed 5), makes an optimizer with mk over its
// Parameters' result, takes 3 steps and returns the final parameters' values.
func trainSteps(t *testing.T, mk func(NamedTensors) (*Optimizer, error)) [][]float32 {
	t.Helper()
	if err := ManualSeed(5); err != nil {
		t.Fatal(err)
	}
	model := must(Sequential(must(Linear(2, 4, LinearOptions{})), must(Tanh()), must(Linear(4, 2, LinearOptions{}))))
	defer model.Close()
	params := must(model.Parameters())
	defer params.Close()
	opt := must(mk(params))
	defer opt.Close()
	lossFn := must(CrossEntropyLoss(CrossEntropyLossOptions{}))
	defer lossFn.Close()
	s := NewScope()
	defer s.Close()
	x := must(s.Track(FromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, []int64{4, 2}, CPU(0))))
	y := must(s.Track(FromSlice([]int64{0, 1, 1, 0}, []int64{4}, CPU(0))))
	for i := 0; i < 3; i++ {
		MustOK(opt.ZeroGrad())
		loss := must(s.Track(lossFn.Forward(must(s.Track(model.Forward(x))), y)))
		MustOK(loss.Backward(nil))
		MustOK(opt.Step())
	}
	var out [][]float32
	for _, p := range params {
		out = append(out, must(ToSlice[float32](p.Tensor)))
	}
	return out
}

func sameValues(t *testing.T, what string, a, b [][]float32) {
	t.Helper()
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("%s: parameter %d[%d] %v != %v", what, i, j, a[i][j], b[i][j])
			}
		}
	}
}

// Optimizers take Parameters' result as it is, a []Named or a []*Tensor, with the same
// result; the options default to PyTorch's; an option of another optimizer is an error.
func TestOptimizersTakeParameters(t *testing.T) {
	noLeaks(t)
	named := trainSteps(t, func(p NamedTensors) (*Optimizer, error) { return Adam(p, 0.1) })
	plain := trainSteps(t, func(p NamedTensors) (*Optimizer, error) { return Adam([]Named(p), 0.1) })
	tensors := trainSteps(t, func(p NamedTensors) (*Optimizer, error) {
		return Adam(p.Tensors(), 0.1, Betas(0.9, 0.999), Eps(1e-8), WeightDecay(0))
	})
	sameValues(t, "Adam over NamedTensors vs []Named", named, plain)
	sameValues(t, "Adam over NamedTensors vs []*Tensor with the defaults spelled out", named, tensors)
	w1 := trainSteps(t, func(p NamedTensors) (*Optimizer, error) { return AdamW(p, 0.1) })
	w2 := trainSteps(t, func(p NamedTensors) (*Optimizer, error) { return AdamW(p.Tensors(), 0.1, WeightDecay(0.01)) })
	sameValues(t, "AdamW's default weight decay is 0.01", w1, w2)
	s1 := trainSteps(t, func(p NamedTensors) (*Optimizer, error) { return SGD(p, 0.1, Momentum(0.9), Nesterov()) })
	s2 := trainSteps(t, func(p NamedTensors) (*Optimizer, error) {
		return SGD(p.Tensors(), 0.1, Momentum(0.9), Dampening(0), WeightDecay(0), Nesterov())
	})
	sameValues(t, "SGD", s1, s2)

	lin := must(Linear(2, 2, LinearOptions{}))
	defer lin.Close()
	ps := must(lin.Parameters())
	defer ps.Close()
	for name, mk := range map[string]func() (*Optimizer, error){
		"SGD with Betas":                func() (*Optimizer, error) { return SGD(ps, 0.1, Betas(0.9, 0.99)) },
		"SGD with Eps":                  func() (*Optimizer, error) { return SGD(ps, 0.1, Eps(1e-6)) },
		"Adam with Momentum":            func() (*Optimizer, error) { return Adam(ps, 0.1, Momentum(0.9)) },
		"AdamW with Nesterov":           func() (*Optimizer, error) { return AdamW(ps, 0.1, Nesterov()) },
		"SGD Nesterov without momentum": func() (*Optimizer, error) { return SGD(ps, 0.1, Nesterov()) },
	} {
		if o, err := mk(); !errors.Is(err, ErrInvalidArgument) {
			o.Close()
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}

// Sequential takes ownership of its children: the caller drops them without closing,
// the Sequential still runs them (after a GC), and closing it releases every handle.
func TestSequentialOwnsChildren(t *testing.T) {
	noLeaks(t)
	x := must(Ones([]int64{1, 3}, Float32, CPU(0)))
	defer x.Close()
	var seq *Module
	func() {
		l1 := must(Linear(3, 4, LinearOptions{}))
		act := must(ReLU())
		l2 := must(Linear(4, 2, LinearOptions{}))
		seq = must(Sequential(l1, act, l2, act)) // a child twice is fine
	}() // the caller's variables are gone: no Close
	runtime.GC()
	runtime.GC()
	y := must(seq.Forward(x))
	if got := must(y.Shape()); len(got) != 2 || got[1] != 2 {
		t.Fatalf("shape %v", got)
	}
	y.Close()
	ps := must(seq.Parameters())
	if len(ps) != 4 || ps[0].Name != "0.weight" || ps[3].Name != "2.bias" {
		t.Fatalf("parameters %v", ps)
	}
	ps.Close()
	if err := seq.Close(); err != nil {
		t.Fatal(err)
	}
	if releaseErrors() != 0 {
		t.Fatalf("%d release errors", releaseErrors())
	}

	// A child kept by the caller is usable until the Sequential is closed, and closed
	// with it; a caller that closes a child anyway releases nothing twice.
	l1 := must(Linear(3, 2, LinearOptions{}))
	l2 := must(Linear(2, 2, LinearOptions{}))
	seq2 := must(Sequential(l1, l2))
	y1 := must(l1.Forward(x))
	y1.Close()
	if err := l2.Close(); err != nil { // not needed, and harmless
		t.Fatal(err)
	}
	y2 := must(seq2.Forward(x)) // seq2 holds its own reference to l2
	y2.Close()
	if err := seq2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l1.Forward(x); !errors.Is(err, ErrClosed) {
		t.Fatalf("a child after its Sequential's Close: %v, want ErrClosed", err)
	}

	// On error nothing is taken: the caller still owns the modules.
	l3 := must(Linear(2, 2, LinearOptions{}))
	closed := must(ReLU())
	closed.Close()
	if _, err := Sequential(l3, closed); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sequential with a closed module: %v", err)
	}
	y3 := must(l3.Forward(y2Input(t)))
	y3.Close()
	if err := l3.Close(); err != nil {
		t.Fatal(err)
	}
}

func y2Input(t *testing.T) *Tensor {
	t.Helper()
	x := must(Ones([]int64{1, 2}, Float32, CPU(0)))
	t.Cleanup(func() { x.Close() })
	return x
}

// Must returns the value or panics with the error itself; MustOK panics on an error.
func TestMust(t *testing.T) {
	if Must(7, nil) != 7 {
		t.Fatal("Must(7, nil)")
	}
	MustOK(nil)
	catch := func(f func()) (r interface{}) {
		defer func() { r = recover() }()
		f()
		return nil
	}
	_, perr := ParseDevice("gpu")
	r := catch(func() { Must(ParseDevice("gpu")) })
	if err, ok := r.(error); !ok || !errors.Is(err, ErrInvalidArgument) || err != perr && err.Error() != perr.Error() {
		t.Fatalf("Must panicked with %v", r)
	}
	r = catch(func() { MustOK(&Error{Code: ErrClosed, Op: "x"}) })
	if err, ok := r.(error); !ok || !errors.Is(err, ErrClosed) {
		t.Fatalf("MustOK panicked with %v", r)
	}
}

// The module lock: Forward runs concurrently with itself; Train, To, Load and Close wait
// for the Forwards in progress, and the Forwards coming later wait for them.
func TestModuleLockExcludesMutators(t *testing.T) {
	noLeaks(t)
	lin := must(Linear(2, 2, LinearOptions{}))
	defer lin.Close()
	x := must(Ones([]int64{1, 2}, Float32, CPU(0)))
	defer x.Close()

	lin.mu.RLock()            // stands for a Forward in progress
	y := must(lin.Forward(x)) // another Forward does not wait for it
	y.Close()
	for name, f := range map[string]func() error{
		"Train": lin.Train,
		"Eval":  lin.Eval,
		"To":    func() error { return lin.To(CPU(0)) },
	} {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			t.Fatalf("%s returned (%v) during a Forward", name, err)
		case <-time.After(50 * time.Millisecond):
		}
		lin.mu.RUnlock()
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lin.mu.RLock()
	}
	lin.mu.RUnlock()

	lin.mu.Lock() // stands for a To or Load in progress
	done := make(chan error, 1)
	go func() {
		y, err := lin.Forward(x)
		y.Close()
		done <- err
	}()
	select {
	case <-done:
		t.Fatal("Forward ran during an exclusive call")
	case <-time.After(50 * time.Millisecond):
	}
	lin.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Under -race: goroutines run Forward in a loop while one goroutine calls Train, Eval,
// To (away and back), Load and Save on the same Module. Every Forward either gives the
// serial result or fails with ErrDeviceMismatch (the module was on cpu:1 then), and a
// Close at the end waits for them.
func TestModuleForwardConcurrentWithMutators(t *testing.T) {
	noLeaks(t)
	if err := ManualSeed(11); err != nil {
		t.Fatal(err)
	}
	model := must(Sequential(must(Linear(4, 8, LinearOptions{})), must(Tanh()), must(Linear(8, 3, LinearOptions{}))))
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := model.Save(path); err != nil {
		t.Fatal(err)
	}
	x := must(Randn([]int64{5, 4}, Float32, CPU(0)))
	defer x.Close()
	y0 := must(model.Forward(x))
	want := must(ToSlice[float32](y0))
	y0.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mismatches, ok int64
	var mu sync.Mutex
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				y, err := model.Forward(x)
				if errors.Is(err, ErrDeviceMismatch) {
					mu.Lock()
					mismatches++
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				got, err := ToSlice[float32](y)
				y.Close()
				if err != nil {
					t.Error(err)
					return
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("Forward during mutators: %v, want %v", got, want)
						return
					}
				}
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 20; i++ {
		for _, err := range []error{model.Train(), model.Eval(), model.To(CPU(1)), model.To(CPU(0)), model.Load(path), model.Save(path)} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if err := model.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Forward(x); !errors.Is(err, ErrClosed) {
		t.Fatalf("Forward after Close: %v", err)
	}
	t.Logf("%d forwards, %d device mismatches", ok, mismatches)
	_ = os.Remove(path)
}

// Issue 20's yardstick: examples/realistic (the best device, cpu:0 -> cpu:1, the device
// mismatch caught, a 2-layer MLP trained with Adam, a safetensors save/load) is at most
// 1.5x the lines of its Rust twin, bindings/rust/examples/realistic.rs. go vet ./...
// compiles it and run_tests.sh runs both.
func TestRealisticProgramLength(t *testing.T) {
	count := func(path string) int {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(src), "\n")
	}
	goLines := count(filepath.Join("examples", "realistic", "main.go"))
	rustLines := count(filepath.Join("..", "..", "rust", "examples", "realistic.rs"))
	if 2*goLines > 3*rustLines {
		t.Fatalf("examples/realistic/main.go has %d lines, more than 1.5 x the Rust twin's %d", goLines, rustLines)
	}
	t.Logf("examples/realistic/main.go: %d lines; bindings/rust/examples/realistic.rs: %d (%.2fx)", goLines, rustLines,
		float64(goLines)/float64(rustLines))
}

// readmeBlock returns the fenced block after the line "<!-- consumer: tag -->" in the
// README at path, as tests/packaging/run reads it (the lines between the next line
// starting with ``` and the one after it).
func readmeBlock(t *testing.T, path, tag string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	for i, l := range lines {
		if strings.TrimSuffix(l, "\n") != "<!-- consumer: "+tag+" -->" {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "```") {
				for k := j + 1; k < len(lines); k++ {
					if strings.HasPrefix(lines[k], "```") {
						return strings.Join(lines[j+1:k], "")
					}
				}
			}
		}
	}
	t.Fatalf("%s: no fenced block after <!-- consumer: %s -->", path, tag)
	return ""
}

// The README shows examples/realistic as it is, so that the two cannot drift;
// tests/packaging/run builds and runs the README's copy out of tree.
func TestREADMEShowsRealisticProgram(t *testing.T) {
	inTree, err := os.ReadFile(filepath.Join("examples", "realistic", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if shown := readmeBlock(t, filepath.Join("..", "README.md"), "realistic/main.go"); shown != string(inTree) {
		t.Fatalf("the block after <!-- consumer: realistic/main.go --> in bindings/go/README.md is not "+
			"examples/realistic/main.go; copy the file into the README.\nREADME:\n%s\nfile:\n%s", shown, inTree)
	}
}

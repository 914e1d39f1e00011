package devtensor

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The state-dict API (dt_state_dict_*, dt_safetensors_save/load, dt_module_state_dict,
// dt_module_load_state_dict): round trips through a file with hand-written values, a
// second Linear loaded from the first computing the same output, the errors the C API
// gives, ownership (Close, the finalizer) and the Module's lock.

// knownLinear is Linear(2, 2) with weight [[1, 2], [3, 4]] and bias [0.5, -0.5].
func knownLinear(t *testing.T) *Module {
	t.Helper()
	lin := must(Linear(2, 2, LinearOptions{}))
	w := must(FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, CPU(0)))
	defer w.Close()
	b := must(FromSlice([]float32{0.5, -0.5}, []int64{2}, CPU(0)))
	defer b.Close()
	sd := must(NewStateDict(Named{"weight", w}, Named{"bias", b}))
	defer sd.Close()
	if err := lin.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	return lin
}

func forwardValues(t *testing.T, m *Module, x *Tensor) []float32 {
	t.Helper()
	y := must(m.Forward(x))
	defer y.Close()
	return must(ToSlice[float32](y))
}

func TestStateDictRoundTripThroughAFile(t *testing.T) {
	noLeaks(t)
	path := filepath.Join(t.TempDir(), "sd.safetensors")
	s := NewScope()
	defer s.Close()
	w := must(s.Track(FromSlice([]float32{1.5, -2, 0.25, 8, 0, -0.125}, []int64{2, 3}, CPU(0))))
	step := must(s.Track(FromSlice([]int64{7}, []int64{}, CPU(0))))
	mask := must(s.Track(FromSlice([]bool{true, false, true}, []int64{3}, CPU(0))))
	dbl := must(s.Track(FromSlice([]float64{0.1, 1e300}, []int64{2, 1}, CPU(0))))
	m := must(s.Track(FromSlice([]int32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(0))))
	tr := must(s.Track(m.Transpose(0, 1))) // written row-major as it reads: 1 4 2 5 3 6

	sd := must(NewStateDict(Named{"layer.weight", w}, Named{"step", step}, Named{"mask", mask}))
	defer sd.Close()
	for _, n := range []Named{{"a.double", dbl}, {"transposed", tr}} {
		if err := sd.Set(n.Name, n.Tensor); err != nil {
			t.Fatal(err)
		}
	}
	if err := sd.Save(path); err != nil {
		t.Fatal(err)
	}
	back := must(LoadSafetensors(path, DefaultDevice))
	defer back.Close()
	wantNames := []string{"layer.weight", "step", "mask", "a.double", "transposed"}
	if got := must(back.Names()); !reflect.DeepEqual(got, wantNames) || back.Len() != 5 {
		t.Fatalf("names %v (Len %d), want %v", got, back.Len(), wantNames)
	}
	get := func(name string) *Tensor { return must(s.Track(back.Get(name))) }
	if v, sh := must(ToSlice[float32](get("layer.weight"))), must(get("layer.weight").Shape()); !reflect.DeepEqual(v, []float32{1.5, -2, 0.25, 8, 0, -0.125}) || !reflect.DeepEqual(sh, []int64{2, 3}) {
		t.Errorf("layer.weight: %v %v", v, sh)
	}
	if v, sh := must(ToSlice[int64](get("step"))), must(get("step").Shape()); !reflect.DeepEqual(v, []int64{7}) || len(sh) != 0 {
		t.Errorf("step: %v %v", v, sh)
	}
	if v := must(ToSlice[bool](get("mask"))); !reflect.DeepEqual(v, []bool{true, false, true}) {
		t.Errorf("mask: %v", v)
	}
	if v := must(ToSlice[float64](get("a.double"))); !reflect.DeepEqual(v, []float64{0.1, 1e300}) {
		t.Errorf("a.double: %v", v)
	}
	if v, sh := must(ToSlice[int32](get("transposed"))), must(get("transposed").Shape()); !reflect.DeepEqual(v, []int32{1, 4, 2, 5, 3, 6}) || !reflect.DeepEqual(sh, []int64{3, 2}) {
		t.Errorf("transposed: %v %v", v, sh)
	}
	// At and Entries give the same pairs in order.
	e := must(back.At(4))
	if e.Name != "transposed" || !reflect.DeepEqual(must(e.Tensor.Shape()), []int64{3, 2}) {
		t.Errorf("At(4) = %s %v", e.Name, must(e.Tensor.Shape()))
	}
	e.Tensor.Close()
	entries := must(back.Entries())
	defer entries.Close()
	for i, n := range entries {
		if n.Name != wantNames[i] {
			t.Errorf("Entries()[%d] = %s, want %s", i, n.Name, wantNames[i])
		}
	}
	// The file: 8 bytes of length, the JSON header, then 6*4 + 8 + 3 + 2*8 + 6*4 bytes.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header := int(binary.LittleEndian.Uint64(raw[:8]))
	if len(raw) != 8+header+24+8+3+16+24 {
		t.Errorf("file of %d bytes, header %d", len(raw), header)
	}
	// Onto another device: the tests have four logical CPU devices.
	on1 := must(LoadSafetensors(path, CPU(1)))
	defer on1.Close()
	if d := must(must(s.Track(on1.Get("mask"))).Device()); d != CPU(1) {
		t.Errorf("loaded onto %v, want cpu:1", d)
	}
}

func TestSecondLinearLoadedFromTheFirstComputesTheSameOutput(t *testing.T) {
	noLeaks(t)
	path := filepath.Join(t.TempDir(), "linear.safetensors")
	a := knownLinear(t)
	defer a.Close()
	x := must(FromSlice([]float32{1, 1, 2, -1}, []int64{2, 2}, CPU(0)))
	defer x.Close()
	// Row [1, 1]: [1+2+0.5, 3+4-0.5]; row [2, -1]: [2-2+0.5, 6-4-0.5].
	want := []float32{3.5, 6.5, 0.5, 1.5}
	if got := forwardValues(t, a, x); !reflect.DeepEqual(got, want) {
		t.Fatalf("a: %v, want %v", got, want)
	}
	sdA := must(a.StateDict())
	defer sdA.Close()
	if got := must(sdA.Names()); !reflect.DeepEqual(got, []string{"weight", "bias"}) {
		t.Fatalf("names %v", got)
	}
	if err := sdA.Save(path); err != nil {
		t.Fatal(err)
	}

	// Through the file.
	b := must(Linear(2, 2, LinearOptions{}))
	defer b.Close()
	if got := forwardValues(t, b, x); reflect.DeepEqual(got, want) {
		t.Fatal("b computes a's output before loading")
	}
	loaded := must(LoadSafetensors(path, DefaultDevice))
	defer loaded.Close()
	if err := b.LoadStateDict(loaded); err != nil {
		t.Fatal(err)
	}
	if got := forwardValues(t, b, x); !reflect.DeepEqual(got, want) {
		t.Fatalf("b: %v, want %v", got, want)
	}
	// Directly, and the file is the one Module.Load reads.
	c := must(Linear(2, 2, LinearOptions{}))
	defer c.Close()
	if err := c.LoadStateDict(sdA); err != nil {
		t.Fatal(err)
	}
	d := must(Linear(2, 2, LinearOptions{}))
	defer d.Close()
	if err := d.Load(path); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*Module{"c": c, "d": d} {
		if got := forwardValues(t, m, x); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	// LoadStateDict copies: c's weight is its own. A float64 state dict converts.
	pc, pa := must(c.Parameters()), must(a.Parameters())
	defer pc.Close()
	defer pa.Close()
	if sameHandle(pc[0].Tensor, pa[0].Tensor) {
		t.Error("LoadStateDict shared a's weight")
	}
	w64 := must(pa[0].Tensor.ToDType(Float64))
	defer w64.Close()
	b64 := must(pa[1].Tensor.ToDType(Float64))
	defer b64.Close()
	sd64 := must(NewStateDict(Named{"weight", w64}, Named{"bias", b64}))
	defer sd64.Close()
	e := must(Linear(2, 2, LinearOptions{}))
	defer e.Close()
	if err := e.LoadStateDict(sd64); err != nil {
		t.Fatal(err)
	}
	if got := forwardValues(t, e, x); !reflect.DeepEqual(got, want) {
		t.Errorf("from float64: %v, want %v", got, want)
	}
}

// A module's state dict shares its tensors: an optimizer step shows through it, and a Set
// on the dict leaves the module alone.
func TestModuleStateDictIsShared(t *testing.T) {
	noLeaks(t)
	model := must(Sequential(knownLinear(t), must(ReLU()), must(Linear(2, 1, LinearOptions{NoBias: true}))))
	defer model.Close()
	sd := must(model.StateDict())
	defer sd.Close()
	if got := must(sd.Names()); !reflect.DeepEqual(got, []string{"0.weight", "0.bias", "2.weight"}) {
		t.Fatalf("names %v", got)
	}
	params := must(model.Parameters())
	defer params.Close()
	opt := must(SGD(params.Tensors()[:1], 1)) // lr 1; d sum(w) / dw = 1
	defer opt.Close()
	sum := must(params[0].Tensor.Sum())
	defer sum.Close()
	if err := sum.Backward(nil); err != nil {
		t.Fatal(err)
	}
	if err := opt.Step(); err != nil {
		t.Fatal(err)
	}
	w := must(sd.Get("0.weight"))
	defer w.Close()
	if got := must(ToSlice[float32](w)); !reflect.DeepEqual(got, []float32{0, 1, 2, 3}) {
		t.Errorf("0.weight after a step: %v, want [0 1 2 3]", got)
	}
	if err := sd.Set("extra", w); err != nil {
		t.Fatal(err)
	}
	again := must(model.StateDict())
	defer again.Close()
	if sd.Len() != 4 || again.Len() != 3 {
		t.Errorf("Len %d and %d, want 4 and 3", sd.Len(), again.Len())
	}
	// Set of an existing name keeps its place.
	if err := sd.Set("0.bias", w); err != nil {
		t.Fatal(err)
	}
	if got := must(sd.Names()); !reflect.DeepEqual(got, []string{"0.weight", "0.bias", "2.weight", "extra"}) {
		t.Errorf("names after replacing 0.bias: %v", got)
	}
}

// LoadStateDict's errors are the C API's (ErrInvalidArgument naming the key), and leave
// the module unchanged.
func TestLoadStateDictErrors(t *testing.T) {
	noLeaks(t)
	lin := knownLinear(t)
	defer lin.Close()
	x := must(FromSlice([]float32{1, 1}, []int64{1, 2}, CPU(0)))
	defer x.Close()
	unchanged := func(what string) {
		t.Helper()
		if got := forwardValues(t, lin, x); !reflect.DeepEqual(got, []float32{3.5, 6.5}) {
			t.Fatalf("after %s the module computes %v, want [3.5 6.5]", what, got)
		}
	}
	bias := must(FromSlice([]float32{9, 9}, []int64{2}, CPU(0)))
	defer bias.Close()
	wrongW := must(Zeros([]int64{3, 2}, Float32, CPU(0)))
	defer wrongW.Close()

	wrong := must(NewStateDict(Named{"weight", wrongW}, Named{"bias", bias}))
	defer wrong.Close()
	e := wantCode(t, lin.LoadStateDict(wrong), ErrInvalidArgument)
	if !strings.Contains(e.Msg, "weight") || e.Op != "Module.LoadStateDict" {
		t.Errorf("wrong shape: %v", e)
	}
	unchanged("a wrong shape") // all or nothing: the bias was not loaded either

	missing := must(NewStateDict(Named{"bias", bias}))
	defer missing.Close()
	if e := wantCode(t, lin.LoadStateDict(missing), ErrInvalidArgument); !strings.Contains(e.Msg, "weight") {
		t.Errorf("missing key: %v", e)
	}
	unchanged("a missing key")

	extra := must(lin.StateDict())
	defer extra.Close()
	if err := extra.Set("running_mean", bias); err != nil {
		t.Fatal(err)
	}
	if e := wantCode(t, lin.LoadStateDict(extra), ErrInvalidArgument); !strings.Contains(e.Msg, "running_mean") {
		t.Errorf("unexpected key: %v", e)
	}
	unchanged("an unexpected key")

	// The same wrong shape through a file and Module.Load is ErrFormat.
	path := filepath.Join(t.TempDir(), "wrong.safetensors")
	if err := wrong.Save(path); err != nil {
		t.Fatal(err)
	}
	wantCode(t, lin.Load(path), ErrFormat)
	unchanged("Load of a wrong shape")

	// nil and closed arguments.
	wantCode(t, lin.LoadStateDict(nil), ErrInvalidArgument)
	closed := must(NewStateDict())
	closed.Close()
	wantCode(t, lin.LoadStateDict(closed), ErrClosed)
	var nilModule *Module
	wantCode(t, nilModule.LoadStateDict(extra), ErrInvalidArgument)
	_, err := nilModule.StateDict()
	wantCode(t, err, ErrInvalidArgument)
}

func TestStateDictErrors(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	one := must(Ones([]int64{2}, Float32, CPU(0)))
	defer one.Close()
	sd := must(NewStateDict(Named{"t", one}))
	defer sd.Close()

	// Files: Io naming the path, Format, the reserved name, an empty path, a bad device.
	nowhere := filepath.Join(dir, "no-such-dir", "x.safetensors")
	_, err := LoadSafetensors(nowhere, DefaultDevice)
	if e := wantCode(t, err, ErrIO); !strings.Contains(e.Msg, "no-such-dir") {
		t.Errorf("load of a missing file: %v", e)
	}
	wantCode(t, sd.Save(nowhere), ErrIO)
	garbage := filepath.Join(dir, "garbage.safetensors")
	if err := os.WriteFile(garbage, []byte("this is not a safetensors file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSafetensors(garbage, DefaultDevice)
	wantCode(t, err, ErrFormat)
	wantCode(t, sd.Save(""), ErrInvalidArgument)
	meta := must(NewStateDict(Named{"__metadata__", one}))
	defer meta.Close()
	wantCode(t, meta.Save(filepath.Join(dir, "meta.safetensors")), ErrInvalidArgument)
	good := filepath.Join(dir, "good.safetensors")
	if err := sd.Save(good); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSafetensors(good, CPU(99))
	wantCode(t, err, ErrInvalidDevice)
	_, err = LoadSafetensors(good+"\x00.txt", DefaultDevice)
	wantCode(t, err, ErrInvalidArgument)

	// Names and indices.
	_, err = sd.Get("missing")
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "missing") {
		t.Errorf("Get of a missing name: %v", e)
	}
	_, err = sd.Get("t\x00")
	wantCode(t, err, ErrInvalidArgument)
	wantCode(t, sd.Set("a\x00b", one), ErrInvalidArgument)
	wantCode(t, sd.Set("bad\xffutf8", one), ErrInvalidArgument)
	wantCode(t, sd.Set("nil", nil), ErrInvalidArgument)
	_, err = sd.At(1)
	wantCode(t, err, ErrInvalidArgument)
	_, err = sd.At(-1)
	wantCode(t, err, ErrInvalidArgument)
	closedT := must(Ones([]int64{1}, Float32, CPU(0)))
	closedT.Close()
	wantCode(t, sd.Set("closed", closedT), ErrClosed)
	_, err = NewStateDict(Named{"ok", one}, Named{"closed", closedT})
	wantCode(t, err, ErrClosed)
	if sd.Len() != 1 {
		t.Errorf("Len %d after failed Sets, want 1", sd.Len())
	}

	// A closed or nil StateDict.
	c := must(NewStateDict(Named{"t", one}))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if c.Len() != 0 {
		t.Errorf("Len of a closed StateDict: %d", c.Len())
	}
	_, err = c.Get("t")
	wantCode(t, err, ErrClosed)
	_, err = c.Names()
	wantCode(t, err, ErrClosed)
	_, err = c.Entries()
	wantCode(t, err, ErrClosed)
	wantCode(t, c.Set("u", one), ErrClosed)
	wantCode(t, c.Save(good), ErrClosed)
	var nilSD *StateDict
	if nilSD.Len() != 0 || nilSD.Close() != nil {
		t.Error("nil StateDict: Len or Close")
	}
	_, err = nilSD.At(0)
	wantCode(t, err, ErrInvalidArgument)
}

// An empty state dict saves and loads; Close from several goroutines releases once; a
// forgotten StateDict is released by its finalizer.
func TestStateDictOwnership(t *testing.T) {
	noLeaks(t)
	path := filepath.Join(t.TempDir(), "empty.safetensors")
	empty := must(NewStateDict())
	if err := empty.Save(path); err != nil {
		t.Fatal(err)
	}
	empty.Close()
	back := must(LoadSafetensors(path, DefaultDevice))
	if back.Len() != 0 || len(must(back.Names())) != 0 {
		t.Errorf("empty file loaded %d entries", back.Len())
	}
	// Four Closes at once: one releases (a second release would fail and return its
	// error), and noLeaks sees the handle gone.
	live := LiveHandles()
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- back.Close() }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Close: %v", err)
		}
	}
	if n := LiveHandles(); n != live-1 {
		t.Errorf("%d live handles after the Closes, want %d", n, live-1)
	}

	before := LiveHandles()
	func() {
		lin := must(Linear(2, 2, LinearOptions{}))
		defer lin.Close()
		for i := 0; i < 10; i++ {
			must(lin.StateDict()) // forgotten
		}
	}()
	for i := 0; i < 50 && LiveHandles() != before; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := LiveHandles(); n != before {
		t.Errorf("%d live handles after the finalizers, want %d", n, before)
	}
}

// Under -race: goroutines run Forward while one goroutine calls LoadStateDict (from two
// state dicts holding the same values) and StateDict on the same Module: LoadStateDict is
// exclusive, so every Forward gives the serial result; the dicts are read concurrently.
func TestLoadStateDictConcurrentWithForward(t *testing.T) {
	noLeaks(t)
	if err := ManualSeed(12); err != nil {
		t.Fatal(err)
	}
	model := must(Sequential(must(Linear(4, 8, LinearOptions{})), must(Tanh()), must(Linear(8, 3, LinearOptions{}))))
	defer model.Close()
	x := must(Randn([]int64{5, 4}, Float32, CPU(0)))
	defer x.Close()
	want := forwardValues(t, model, x)
	shared := must(model.StateDict())
	defer shared.Close()
	entries := must(shared.Entries())
	copies := make(NamedTensors, len(entries))
	for i, e := range entries {
		copies[i] = Named{e.Name, must(e.Tensor.ToDType(Float64))} // a copy, converted back on load
	}
	entries.Close()
	defer copies.Close()
	fromCopies := must(NewStateDict(copies...))
	defer fromCopies.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
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
				if err != nil {
					t.Error(err)
					return
				}
				got, err := ToSlice[float32](y)
				y.Close()
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("Forward during LoadStateDict: %v %v, want %v", got, err, want)
					return
				}
				if n := len(must(fromCopies.Names())); n != 4 {
					t.Errorf("%d names", n)
					return
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		sd := must(model.StateDict())
		for _, err := range []error{model.LoadStateDict(fromCopies), model.LoadStateDict(sd), sd.Close()} {
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
	if _, err := model.StateDict(); !errors.Is(err, ErrClosed) {
		t.Fatalf("StateDict after Close: %v", err)
	}
}

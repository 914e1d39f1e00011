package devtensor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ddpMLP is Sequential(Linear(8, 6), ReLU, Linear(6, 3)) from seed `seed`, with its
// layers (closed by the test's cleanup).
func ddpMLP(t *testing.T, seed uint64) (model, first *Module) {
	t.Helper()
	if err := ManualSeed(seed); err != nil {
		t.Fatal(err)
	}
	l1 := must(Linear(8, 6, LinearOptions{DType: Float32, Device: CPU(0)}))
	act := must(ReLU())
	l2 := must(Linear(6, 3, LinearOptions{DType: Float32, Device: CPU(0)}))
	model = must(Sequential(l1, act, l2))
	t.Cleanup(func() { l1.Close(); act.Close(); l2.Close(); model.Close() })
	return model, l1
}

// gradsOf returns the gradients of m's parameters, as float32 slices (nil: no gradient).
func gradsOf(t *testing.T, m *Module) [][]float32 {
	t.Helper()
	var out [][]float32
	for _, p := range must(m.Parameters()) {
		g := must(p.Tensor.Grad())
		if g == nil {
			out = append(out, nil)
		} else {
			out = append(out, readF32(t, g))
			closeAll(t, g)
		}
		closeAll(t, p.Tensor)
	}
	return out
}

// A group of one process (file:// rendezvous): DistributedDataParallel's construction
// errors, its names, forward and gradients (an average over one rank is the gradient
// itself), find_unused_parameters, and its references to the module and the group.
func TestDistributedDataParallelOneRank(t *testing.T) {
	noLeaks(t)
	pg := must(NewProcessGroup("gloo", "file://"+filepath.Join(t.TempDir(), "store"), 0, 1, 30*time.Second))
	defer pg.Close()
	model, _ := ddpMLP(t, 3)
	plain, _ := ddpMLP(t, 3) // the same weights, not wrapped

	// Argument errors, found before any peer is involved.
	_, err := DistributedDataParallel(nil, pg, DDPOptions{})
	if e := wantCode(t, err, ErrInvalidArgument); e.Op != "DistributedDataParallel" {
		t.Errorf("nil module: %v", e)
	}
	_, err = DistributedDataParallel(model, nil, DDPOptions{})
	wantCode(t, err, ErrInvalidArgument)
	_, err = DistributedDataParallel(model, pg, DDPOptions{BucketCapBytes: -1})
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "bucket_cap_bytes -1 is negative") {
		t.Errorf("negative bucket cap: %v", e)
	}

	ddp := must(DistributedDataParallel(model, pg, DDPOptions{BucketCapBytes: 64})) // tiny buckets: one or two parameters each
	defer ddp.Close()
	// A parameter belongs to at most one DistributedDataParallel.
	_, err = DistributedDataParallel(model, pg, DDPOptions{})
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "already belongs to another DistributedDataParallel") {
		t.Errorf("wrapping twice: %v", e)
	}
	// Its parameters are the module's, under PyTorch's names.
	inner, outer := must(model.Parameters()), must(ddp.Parameters())
	if len(outer) != len(inner) {
		t.Fatalf("%d parameters, want %d", len(outer), len(inner))
	}
	for i := range inner {
		if outer[i].Name != "module."+inner[i].Name {
			t.Errorf("parameter %d is %q, want module.%s", i, outer[i].Name, inner[i].Name)
		}
		if !must(outer[i].Tensor.SharesStorage(inner[i].Tensor)) {
			t.Errorf("parameter %q is not the module's tensor", outer[i].Name)
		}
		closeAll(t, inner[i].Tensor, outer[i].Tensor)
	}

	// Forward is the module's; backward's averaged gradients over one rank are the
	// plain gradients, even after the caller closed its references to module and group.
	x := must(Randn([]int64{5, 8}, Float32, CPU(0)))
	defer closeAll(t, x)
	for _, m := range []*Module{plain, ddp} {
		out := must(m.Forward(x))
		loss := must(out.Sum())
		if err := loss.Backward(nil); err != nil {
			t.Fatalf("Backward: %v", err)
		}
		closeAll(t, out, loss)
	}
	want, got := gradsOf(t, plain), gradsOf(t, model)
	for i := range want {
		if got[i] == nil {
			t.Fatalf("parameter %d has no gradient after the DistributedDataParallel's backward", i)
		}
		wantSlice(t, fmt.Sprintf("gradient %d", i), got[i], want[i])
	}

	// find_unused_parameters: a loss that leaves the second layer out.
	for _, find := range []bool{false, true} {
		m, first := ddpMLP(t, 4)
		d := must(DistributedDataParallel(m, pg, DDPOptions{FindUnusedParameters: find}))
		h := must(first.Forward(x))
		loss := must(h.Sum())
		err := loss.Backward(nil)
		closeAll(t, h, loss)
		if !find {
			if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "parameter '2.weight' received no gradient") {
				t.Errorf("unused parameter without find_unused_parameters: %v", e)
			}
		} else {
			if err != nil {
				t.Fatalf("Backward with find_unused_parameters: %v", err)
			}
			g := gradsOf(t, m)
			for i, v := range g[2] { // 2.weight: counted as 0
				if v != 0 {
					t.Fatalf("unused 2.weight's gradient[%d] is %v, want 0", i, v)
				}
			}
			if g[0] == nil {
				t.Fatalf("0.weight has no gradient")
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		// Closed, it lets go of the parameters: they can be wrapped again.
		d = must(DistributedDataParallel(m, pg, DDPOptions{FindUnusedParameters: find}))
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// The DistributedDataParallel holds its own references to the module and the group.
	m2, _ := ddpMLP(t, 5)
	pg2 := must(NewProcessGroup("gloo", "file://"+filepath.Join(t.TempDir(), "store2"), 0, 1, 30*time.Second))
	d2 := must(DistributedDataParallel(m2, pg2, DDPOptions{}))
	if err := m2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pg2.Close(); err != nil {
		t.Fatal(err)
	}
	out := must(d2.Forward(x))
	loss := must(out.Sum())
	if err := loss.Backward(nil); err != nil { // all-reduces over pg2, still open
		t.Fatalf("Backward after closing the module and the group: %v", err)
	}
	closeAll(t, out, loss)
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed arguments are the binding's errors.
	_, err = DistributedDataParallel(m2, pg, DDPOptions{})
	wantCode(t, err, ErrClosed)
	_, err = DistributedDataParallel(plain, pg2, DDPOptions{})
	wantCode(t, err, ErrClosed)
	if CUDAIsAvailable() {
		cm, _ := ddpMLP(t, 6)
		if err := cm.To(CUDA(0)); err != nil {
			t.Fatal(err)
		}
		_, err = DistributedDataParallel(cm, pg, DDPOptions{})
		wantCode(t, err, ErrDeviceMismatch)
	}
}

// nearSlice fails the test unless got and want have the same length and every element
// differs by at most tol.
func nearSlice(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements %v, want %d: %v", what, len(got), got, len(want), want)
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= tol) {
			t.Fatalf("%s: element %d is %v, want %v within %g (got %v, want %v)", what, i, got[i], want[i], tol, got, want)
		}
	}
}

// linearSumGrads is the gradient of sum(x @ W^T + b) over the batches xs (each [rows,
// in], row-major) for a Linear(in, out), computed by hand: dW[i][j] is the sum of
// column j over every row of every batch, the same for every output i, and db[i] the
// number of rows.
func linearSumGrads(in, out int, xs ...[]float32) (dW, db []float32) {
	col := make([]float32, in)
	rows := 0
	for _, x := range xs {
		for k, v := range x {
			col[k%in] += v
		}
		rows += len(x) / in
	}
	for i := 0; i < out; i++ {
		dW = append(dW, col...)
		db = append(db, float32(rows))
	}
	return dW, db
}

// Module.SetNoSync and Module.NoSync (dt_distributed_data_parallel_no_sync) on a group
// of one process: the argument errors; gradient accumulation (a pass under NoSync
// accumulates the local gradient, the next pass outside it adds its own, compared with
// the gradient computed by hand); NoSync returns fn's error and turns synchronisation
// back on after an error or a panic, which a parameter without a gradient shows (an
// error only in a synchronised pass).
func TestDistributedDataParallelNoSyncOneRank(t *testing.T) {
	noLeaks(t)
	pg := must(NewProcessGroup("gloo", "file://"+filepath.Join(t.TempDir(), "store"), 0, 1, 30*time.Second))
	defer pg.Close()

	// Only a DistributedDataParallel takes it.
	lin := must(Linear(3, 2, LinearOptions{DType: Float32, Device: CPU(0)}))
	defer lin.Close()
	err := lin.SetNoSync(true)
	if e := wantCode(t, err, ErrInvalidArgument); e.Op != "Module.SetNoSync" || !strings.Contains(e.Msg, "not a DistributedDataParallel") {
		t.Errorf("SetNoSync on a Linear: %v", e)
	}
	ran := false
	err = lin.NoSync(func() error { ran = true; return nil })
	if e := wantCode(t, err, ErrInvalidArgument); e.Op != "Module.NoSync" || !strings.Contains(e.Msg, "not a DistributedDataParallel") {
		t.Errorf("NoSync on a Linear: %v", e)
	}
	if ran {
		t.Errorf("NoSync ran fn although it could not turn synchronisation off")
	}
	wantCode(t, (*Module)(nil).SetNoSync(false), ErrInvalidArgument)

	// Accumulation: loss = sum(Linear(x)), one pass under NoSync on x1, one outside on x2.
	ddp := must(DistributedDataParallel(lin, pg, DDPOptions{}))
	x1v := []float32{1, 2, 3, 4, 5, 6}                       // [2, 3]
	x2v := []float32{0.5, -1, 2, 3, 0.25, -2, 1.5, 1, -0.75} // [3, 3]
	x1 := must(FromSlice(x1v, []int64{2, 3}, CPU(0)))
	x2 := must(FromSlice(x2v, []int64{3, 3}, CPU(0)))
	defer closeAll(t, x1, x2)
	backward := func(m *Module, x *Tensor) error {
		out := must(m.Forward(x))
		loss := must(out.Sum())
		defer closeAll(t, out, loss)
		return loss.Backward(nil)
	}
	if err := ddp.NoSync(func() error { return backward(ddp, x1) }); err != nil {
		t.Fatalf("a backward under NoSync: %v", err)
	}
	g := gradsOf(t, lin) // weight, bias
	dW, db := linearSumGrads(3, 2, x1v)
	nearSlice(t, "weight's gradient after the pass under NoSync", g[0], dW, 1e-6)
	nearSlice(t, "bias's gradient after the pass under NoSync", g[1], db, 1e-6)
	// fn's error is NoSync's, and a pass after it works.
	boom := errors.New("boom")
	if err := ddp.NoSync(func() error { return boom }); err != boom {
		t.Fatalf("NoSync returned %v, want fn's error", err)
	}
	if err := backward(ddp, x2); err != nil {
		t.Fatalf("the synchronised backward: %v", err)
	}
	g = gradsOf(t, lin)
	dW, db = linearSumGrads(3, 2, x1v, x2v)
	nearSlice(t, "weight's gradient after both passes", g[0], dW, 1e-6)
	nearSlice(t, "bias's gradient after both passes", g[1], db, 1e-6)

	// Whether synchronisation is on: a pass that leaves a parameter without a gradient
	// fails (find_unused_parameters off) only when it is.
	model, first := ddpMLP(t, 7)
	d := must(DistributedDataParallel(model, pg, DDPOptions{}))
	defer d.Close()
	x := must(Randn([]int64{4, 8}, Float32, CPU(0)))
	defer closeAll(t, x)
	wantSynced := func(what string) {
		t.Helper()
		err := backward(first, x)
		if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Msg, "received no gradient") {
			t.Errorf("%s: a pass without 2.weight's gradient: %v", what, e)
		}
	}
	wantSynced("at first")
	if err := d.SetNoSync(true); err != nil {
		t.Fatal(err)
	}
	if err := backward(first, x); err != nil {
		t.Fatalf("an unused parameter under SetNoSync(true): %v", err)
	}
	if err := d.SetNoSync(false); err != nil {
		t.Fatal(err)
	}
	wantSynced("after SetNoSync(false)")
	err = d.NoSync(func() error {
		if err := backward(first, x); err != nil {
			t.Errorf("an unused parameter under NoSync: %v", err)
		}
		return boom
	})
	if err != boom {
		t.Fatalf("NoSync returned %v, want fn's error", err)
	}
	wantSynced("after NoSync's fn failed")
	func() {
		defer func() {
			if r := recover(); r != "fn panics" {
				t.Errorf("recovered %v, want fn's panic", r)
			}
		}()
		_ = d.NoSync(func() error { panic("fn panics") })
		t.Errorf("NoSync returned although fn panicked")
	}()
	wantSynced("after NoSync's fn panicked")

	// Closed: the binding's error, and fn does not run.
	if err := ddp.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, ddp.SetNoSync(true), ErrClosed)
	err = ddp.NoSync(func() error { ran = true; return nil })
	wantCode(t, err, ErrClosed)
	if ran {
		t.Errorf("NoSync on a closed module ran fn")
	}
}

// runBounded runs cmd and returns its combined output; a command still running after
// `limit` gets SIGTERM (which the launcher forwards to its ranks), then SIGKILL.
func runBounded(t *testing.T, cmd *exec.Cmd, limit time.Duration) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(limit):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		t.Fatalf("%s was still running after %v: stopped; output:\n%s", cmd.Path, limit, out.String())
	}
	return "", nil
}

var stepLine = regexp.MustCompile(`^(\[rank (\d+)\] )?step (\d+) loss (\S+)$`)

// stepLosses parses the "step S loss L" lines of train_digits_ddp's output (rank 0's
// only under the launcher, which prefixes "[rank R] "); steps must be 0, 1, 2, ...
func stepLosses(t *testing.T, what, text string) []float64 {
	t.Helper()
	var losses []float64
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		m := stepLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if m[2] != "" && m[2] != "0" {
			t.Fatalf("%s: rank %s printed a loss (only rank 0 should): %q", what, m[2], sc.Text())
		}
		s, _ := strconv.Atoi(m[3])
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil || s != len(losses) {
			t.Fatalf("%s: unexpected line %q (step %d expected); output:\n%s", what, sc.Text(), len(losses), text)
		}
		losses = append(losses, v)
	}
	return losses
}

// The done-means check of DistributedDataParallel from Go: examples/train_digits_ddp,
// built here, trains the digits MLP for 50 steps once in one process on the whole batch
// and once as two ranks under `devtensor run` each on half of it; every step's loss (the
// global batch's mean) must agree within 1e-5, the loss must fall, and the ranks' final
// parameters must be equal.
func TestDistributedDataParallelDigitsTwoRanks(t *testing.T) {
	const steps, tol = 50, 1e-5
	cli := launcherPath(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("SKIP: the go tool is not on PATH (needed to build examples/train_digits_ddp)")
	}
	csv, err := filepath.Abs(filepath.Join("..", "..", "..", "data", "digits.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "train_digits_ddp")
	// The environment passes through (PKG_CONFIG_PATH, or CGO_CFLAGS/CGO_LDFLAGS, and
	// GOCACHE), and the build tag too, so the example finds the library as this test did.
	build := exec.Command(gobin, "build", "-tags="+cgoBuildTags, "-o", bin, "./examples/train_digits_ddp")
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := runBounded(t, build, 5*time.Minute); err != nil {
		t.Fatalf("go build ./examples/train_digits_ddp: %v\n%s", err, out)
	}
	// The reference: one process, no RANK (an outer job's would make it join a group).
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RANK=") {
			env = append(env, kv)
		}
	}
	plainCmd := exec.Command(bin, csv, strconv.Itoa(steps))
	plainCmd.Env = env
	plainOut, err := runBounded(t, plainCmd, 3*time.Minute)
	if err != nil {
		t.Fatalf("train_digits_ddp in one process: %v; output:\n%s", err, plainOut)
	}
	ddpCmd := exec.Command(cli, "run", "--nproc-per-node", "2", "--", bin, csv, strconv.Itoa(steps))
	ddpOut, err := runBounded(t, ddpCmd, 3*time.Minute)
	if err != nil {
		t.Fatalf("%s run --nproc-per-node 2 -- train_digits_ddp: %v; output:\n%s", cli, err, ddpOut)
	}
	if !strings.Contains(ddpOut, "[rank 0] params equal on every rank") {
		t.Fatalf("the two ranks did not report equal parameters; output:\n%s", ddpOut)
	}
	plain, ddp := stepLosses(t, "one process", plainOut), stepLosses(t, "two ranks", ddpOut)
	if len(plain) != steps || len(ddp) != steps {
		t.Fatalf("%d and %d steps printed, want %d; outputs:\n%s\n%s", len(plain), len(ddp), steps, plainOut, ddpOut)
	}
	worst, worstStep := 0.0, 0
	for s := range plain {
		d := math.Abs(plain[s] - ddp[s])
		if d > worst {
			worst, worstStep = d, s
		}
		if !(d <= tol) {
			t.Errorf("step %d: loss %.9f over two ranks, %.9f in one process (difference %.3g > %g)", s, ddp[s], plain[s], d, tol)
		}
	}
	// Falling: the last 10 steps' mean under half the first step's loss (2.33 -> ~0.3).
	last := 0.0
	for _, v := range plain[steps-10:] {
		last += v / 10
	}
	if !(last < plain[0]/2) {
		t.Errorf("the loss did not fall: %.4f at step 0, %.4f over the last 10 steps", plain[0], last)
	}
	t.Logf("%d steps: the largest difference between two ranks and one process is %.3g (step %d); loss %.4f -> %.4f (mean of the last 10)",
		steps, worst, worstStep, plain[0], last)
}

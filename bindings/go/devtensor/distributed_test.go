package devtensor

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// distChildEnv marks a test process that TestProcessGroupTwoRanks started under the
// launcher: with it (and RANK, which the launcher sets) the test is one rank of the
// group; without it the test starts the launcher, even where RANK is set by an outer job.
const distChildEnv = "DEVTENSOR_GO_TEST_DIST_RANK"

// launcherPath returns the devtensor CLI (`devtensor run`): $DEVTENSOR_CLI (run_tests.sh
// sets it to the install's bin/devtensor; the test fails when it names no file), else the
// release build tree's tools/devtensor; skips the test when neither exists.
func launcherPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DEVTENSOR_CLI"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("DEVTENSOR_CLI names no devtensor CLI: %v", err)
		}
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "build", "release", "tools", "devtensor"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("SKIP: the two-rank check needs the devtensor CLI (`devtensor run`), which is not at %s "+
			"and DEVTENSOR_CLI is not set (run_tests.sh PREFIX sets it to PREFIX/bin/devtensor)", p)
	}
	return p
}

// TestProcessGroupTwoRanks runs the collectives over two processes. Started by `go test`,
// it starts this test binary again under `devtensor run --nproc-per-node 2`, running this
// test alone, and fails unless the launcher exits 0 (every rank passed) and both ranks
// reported their checks. Inside the launcher (distChildEnv and RANK set) it is one rank:
// it joins with ProcessGroupFromEnv and checks each collective against values computed
// here from both ranks' known inputs.
func TestProcessGroupTwoRanks(t *testing.T) {
	if os.Getenv(distChildEnv) != "" {
		if os.Getenv("RANK") == "" {
			t.Fatalf("started as a rank (%s is set) but RANK is not: the launcher did not set it", distChildEnv)
		}
		twoRanksRankSide(t)
		return
	}
	cli := launcherPath(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "run", "--nproc-per-node", "2", "--", self,
		"-test.run", "^TestProcessGroupTwoRanks$", "-test.count", "1", "-test.v", "-test.timeout", "2m")
	cmd.Env = append(os.Environ(), distChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cli, err)
	}
	// Each rank stops itself after 2 minutes (-test.timeout), and the launcher stops
	// every rank as soon as one fails; this is the last resort: SIGTERM, which the
	// launcher forwards to the ranks, then SIGKILL.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case waitErr = <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			waitErr = <-done
		}
		t.Errorf("the launcher was still running after 3 minutes: stopped")
	}
	text := out.String()
	if waitErr != nil {
		t.Fatalf("%s run --nproc-per-node 2 failed (%v); output:\n%s", cli, waitErr, text)
	}
	for r := 0; r < 2; r++ {
		if !strings.Contains(text, fmt.Sprintf("[rank %d] --- PASS: TestProcessGroupTwoRanks", r)) ||
			!strings.Contains(text, fmt.Sprintf("rank %d of 2: all checks passed", r)) {
			t.Fatalf("rank %d did not report passing; output:\n%s", r, text)
		}
	}
	t.Logf("output of the two ranks:\n%s", text)
}

// readF32 and readI64 copy a tensor's elements out, failing the test on error.
func readF32(t *testing.T, x *Tensor) []float32 {
	t.Helper()
	v, err := ToSlice[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readI64(t *testing.T, x *Tensor) []int64 {
	t.Helper()
	v, err := ToSlice[int64](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantSlice[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements %v, want %d: %v", what, len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d is %v, want %v (got %v, want %v)", what, i, got[i], want[i], got, want)
		}
	}
}

// Each rank's inputs, a function of the rank alone, so that every rank can compute what
// the collectives give from both ranks' inputs.
func sumInput(r int) []float32 {
	return []float32{float32(r + 1), float32(2 * (r + 1)), -3, float32(r) * 0.5}
}
func maxInput(r int) []int64 {
	return []int64{int64(r), int64(-r), int64(5*r - 3), 1<<60 + int64(r)} // beyond float64's exact integers
}
func bcastInput(r int) []float32 {
	return []float32{float32(7*r + 1), float32(7*r + 2), float32(7*r + 3)}
}
func gatherInput(r int) []float32 {
	return []float32{float32(3 * r), float32(3*r + 1), float32(3*r + 2)}
}
func scatterInput(r int) []float32 { // 2 ranks x 3 elements
	v := make([]float32, 6)
	for i := range v {
		v[i] = float32((r + 1) * (i + 1))
	}
	return v
}
func p2pInput(r int) []float32 {
	return []float32{float32(10*r + 10), float32(10*r + 20), float32(10*r + 30)}
}

// twoRanksRankSide is one rank of TestProcessGroupTwoRanks, inside the launcher.
func twoRanksRankSide(t *testing.T) {
	noLeaks(t)
	const world = 2
	pg, err := ProcessGroupFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	rank := must(pg.Rank())
	if env, _ := strconv.Atoi(os.Getenv("RANK")); rank != env {
		t.Fatalf("Rank() is %d but RANK is %q", rank, os.Getenv("RANK"))
	}
	if n := must(pg.Size()); n != world {
		t.Fatalf("Size() is %d, want %d", n, world)
	}
	if b := must(pg.Backend()); b != "gloo" {
		t.Fatalf("Backend() is %q, want \"gloo\"", b)
	}
	peer := 1 - rank

	// all_reduce: sum and avg of float32, max of int64.
	for _, op := range []ReduceOp{ReduceSum, ReduceAvg} {
		x := must(FromSlice(sumInput(rank), []int64{4}, CPU(0)))
		if err := pg.AllReduce(x, op); err != nil {
			t.Fatalf("AllReduce %v: %v", op, err)
		}
		want := make([]float32, 4)
		for i := range want {
			want[i] = sumInput(0)[i] + sumInput(1)[i]
			if op == ReduceAvg {
				want[i] /= world
			}
		}
		wantSlice(t, "AllReduce "+op.String(), readF32(t, x), want)
		closeAll(t, x)
	}
	y := must(FromSlice(maxInput(rank), []int64{2, 2}, CPU(0)))
	if err := pg.AllReduce(y, ReduceMax); err != nil {
		t.Fatalf("AllReduce MAX: %v", err)
	}
	wantMax := make([]int64, 4)
	for i := range wantMax {
		wantMax[i] = maxInput(0)[i]
		if v := maxInput(1)[i]; v > wantMax[i] {
			wantMax[i] = v
		}
	}
	wantSlice(t, "AllReduce MAX int64", readI64(t, y), wantMax)
	closeAll(t, y)

	// broadcast from rank 1.
	b := must(FromSlice(bcastInput(rank), []int64{3}, CPU(0)))
	if err := pg.Broadcast(b, 1); err != nil {
		t.Fatalf("Broadcast: %v", err)
	}
	wantSlice(t, "Broadcast from rank 1", readF32(t, b), bcastInput(1))
	closeAll(t, b)

	// all_gather into [world, 3].
	gin := must(FromSlice(gatherInput(rank), []int64{3}, CPU(0)))
	gout := must(Zeros([]int64{world, 3}, Float32, CPU(0)))
	if err := pg.AllGather(gin, gout); err != nil {
		t.Fatalf("AllGather: %v", err)
	}
	wantSlice(t, "AllGather", readF32(t, gout), append(gatherInput(0), gatherInput(1)...))
	closeAll(t, gin, gout)

	// reduce_scatter: rank r gets part r of the sum of both inputs.
	sin := must(FromSlice(scatterInput(rank), []int64{6}, CPU(0)))
	sout := must(Zeros([]int64{3}, Float32, CPU(0)))
	if err := pg.ReduceScatter(sin, sout, ReduceSum); err != nil {
		t.Fatalf("ReduceScatter: %v", err)
	}
	wantRS := make([]float32, 3)
	for i := range wantRS {
		wantRS[i] = scatterInput(0)[3*rank+i] + scatterInput(1)[3*rank+i]
	}
	wantSlice(t, "ReduceScatter SUM", readF32(t, sout), wantRS)
	closeAll(t, sin, sout)

	if err := pg.Barrier(); err != nil {
		t.Fatalf("Barrier: %v", err)
	}

	// send/recv both ways: rank 0 sends first, rank 1 receives first.
	mine := must(FromSlice(p2pInput(rank), []int64{3}, CPU(0)))
	got := must(Zeros([]int64{3}, Float32, CPU(0)))
	if rank == 0 {
		if err := pg.Send(mine, peer, 7); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if err := pg.Recv(got, peer, 8); err != nil {
			t.Fatalf("Recv: %v", err)
		}
	} else {
		if err := pg.Recv(got, peer, 7); err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if err := pg.Send(mine, peer, 8); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	wantSlice(t, fmt.Sprintf("Recv from rank %d", peer), readF32(t, got), p2pInput(peer))
	closeAll(t, mine, got)

	// Argument errors are found before any peer is involved, and leave the group usable.
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	wantCode(t, pg.AllReduce(x, ReduceOp(9)), ErrInvalidArgument)
	wantCode(t, pg.Send(x, rank, 0), ErrInvalidArgument)
	closeAll(t, x)
	if err := pg.Barrier(); err != nil {
		t.Fatalf("Barrier after argument errors: %v", err)
	}
	if err := pg.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantCode(t, pg.Barrier(), ErrClosed)
	t.Logf("rank %d of %d: all checks passed", rank, world)
}

// A group of one process (file:// rendezvous in a temporary directory): the errors the
// library reports before any peer is involved, and the binding's own.
func TestProcessGroupErrors(t *testing.T) {
	noLeaks(t)
	store := "file://" + filepath.Join(t.TempDir(), "store")

	// Backends: "nccl" without a usable GPU is ErrNotSupported, saying why; an unknown
	// name is an argument error.
	if !CUDAIsAvailable() {
		_, err := NewProcessGroup("nccl", store, 0, 1, time.Second)
		e := wantCode(t, err, ErrNotSupported)
		if !strings.Contains(e.Msg, `"nccl" cannot be used`) || e.Op != "NewProcessGroup" {
			t.Errorf("nccl: %v", e)
		}
	}
	_, err := NewProcessGroup("mpi", store, 0, 1, time.Second)
	wantCode(t, err, ErrInvalidArgument)
	_, err = NewProcessGroup("gloo", store, 0, 1, -time.Second)
	wantCode(t, err, ErrInvalidArgument)
	_, err = NewProcessGroup("gloo", store, 1, 1, time.Second) // rank not below world size
	wantCode(t, err, ErrInvalidArgument)
	_, err = NewProcessGroup("gl\x00oo", store, 0, 1, time.Second)
	wantCode(t, err, ErrInvalidArgument)
	_, err = NewProcessGroup("gloo", store, 0, math.MaxInt32+1, time.Second)
	wantCode(t, err, ErrInvalidArgument)

	pg, err := NewProcessGroup("gloo", store, 0, 1, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if r, n, b := must(pg.Rank()), must(pg.Size()), must(pg.Backend()); r != 0 || n != 1 || b != "gloo" {
		t.Fatalf("rank %d, size %d, backend %q; want 0, 1, gloo", r, n, b)
	}

	x := must(FromSlice([]float32{1, 2, 3, 4}, []int64{4}, CPU(0)))
	i32 := must(FromSlice([]int32{1, 2, 3, 4}, []int64{4}, CPU(0)))
	defer closeAll(t, x, i32)
	// A reduction over one rank is the identity; avg of an integer dtype is refused.
	for _, op := range []ReduceOp{ReduceSum, ReduceAvg, ReduceMin, ReduceMax, ReduceProduct} {
		if err := pg.AllReduce(x, op); err != nil {
			t.Fatalf("AllReduce %v: %v", op, err)
		}
	}
	wantSlice(t, "AllReduce over one rank", readF32(t, x), []float32{1, 2, 3, 4})
	e := wantCode(t, pg.AllReduce(x, ReduceOp(9)), ErrInvalidArgument)
	if !strings.Contains(e.Msg, "op 9") || e.Op != "ProcessGroup.AllReduce" {
		t.Errorf("bad op: %v", e)
	}
	wantCode(t, pg.AllReduce(i32, ReduceAvg), ErrDTypeMismatch)
	wantCode(t, pg.ReduceScatter(i32, i32, ReduceAvg), ErrDTypeMismatch)
	wantCode(t, pg.ReduceScatter(x, x, ReduceOp(-1)), ErrInvalidArgument)
	wantCode(t, pg.Broadcast(x, 1), ErrInvalidArgument)               // not a rank
	wantCode(t, pg.Broadcast(x, math.MaxInt32+1), ErrInvalidArgument) // not an int32
	wantCode(t, pg.Send(x, 0, 0), ErrInvalidArgument)                 // this rank
	wantCode(t, pg.Recv(x, 0, 0), ErrInvalidArgument)
	wantCode(t, pg.AllGather(x, i32), ErrDTypeMismatch)
	big := must(Zeros([]int64{5}, Float32, CPU(0)))
	wantCode(t, pg.AllGather(x, big), ErrShapeMismatch)
	closeAll(t, big)
	if CUDAIsAvailable() {
		g := must(x.To(CUDA(0)))
		wantCode(t, pg.AllReduce(g, ReduceSum), ErrDeviceMismatch)
		closeAll(t, g)
	}
	// Nil and closed tensors are the binding's errors.
	wantCode(t, pg.AllReduce(nil, ReduceSum), ErrInvalidArgument)
	closed := must(Zeros([]int64{4}, Float32, CPU(0)))
	closeAll(t, closed)
	wantCode(t, pg.AllGather(x, closed), ErrClosed)
	if err := pg.Barrier(); err != nil {
		t.Fatalf("Barrier: %v", err)
	}

	// Close: idempotent; use afterwards is ErrClosed; a nil group is an argument error.
	if err := pg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = pg.Rank()
	wantCode(t, err, ErrClosed)
	wantCode(t, pg.AllReduce(x, ReduceSum), ErrClosed)
	var nilPG *ProcessGroup
	if err := nilPG.Close(); err != nil {
		t.Errorf("Close of a nil ProcessGroup: %v", err)
	}
	wantCode(t, nilPG.Barrier(), ErrInvalidArgument)

	if ReduceAvg.String() != "AVG" || ReduceOp(9).String() != "ReduceOp(9)" {
		t.Errorf("ReduceOp.String: %q %q", ReduceAvg.String(), ReduceOp(9).String())
	}
	if ErrDistributed.Error() == "unknown status" || int32(ErrDistributed) != 15 {
		t.Errorf("ErrDistributed is %d, %q", int32(ErrDistributed), ErrDistributed.Error())
	}
}

// A ProcessGroup that is never closed is released by its finalizer.
func TestProcessGroupFinalizer(t *testing.T) {
	start := LiveHandles()
	store := "file://" + filepath.Join(t.TempDir(), "store")
	func() {
		if _, err := NewProcessGroup("", store, 0, 1, 10*time.Second); err != nil { // leaked on purpose
			t.Fatal(err)
		}
	}()
	for i := 0; i < 100 && LiveHandles() != start; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if n := LiveHandles(); n != start {
		t.Fatalf("the finalizer did not release a leaked process group: %d live, want %d", n, start)
	}
}

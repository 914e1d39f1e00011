// train_digits_ddp: the digits MLP (64-128-10, cross-entropy, SGD with momentum) trained
// with DistributedDataParallel over the processes of a `devtensor run` job; the Go
// version of tests/dist/ddp_digits.c's train mode, step for step.
//
// Without RANK in the environment it trains in one process, with no process group, on
// the whole batch (the reference). Under `devtensor run` every rank joins the env://
// group, takes its equal share of each global batch (ranks in order, contiguous rows)
// and trains through a DistributedDataParallel; rank r starts from seed r, so only the
// DistributedDataParallel's broadcast from rank 0 makes the ranks agree. Rank 0 (or the
// single process) prints "step S loss L" per step, L being the mean loss over the global
// batch (the ranks' losses averaged with an all-reduce on a float64 copy), then, with a
// group, "params equal on every rank" once the ranks' final parameters have been
// compared bit for bit. The losses of the two ways agree within float32 rounding.
//
//	go run ./examples/train_digits_ddp [path/to/digits.csv.gz] [steps]
//	devtensor run --nproc-per-node 2 -- train_digits_ddp [path/to/digits.csv.gz] [steps]
//
// (build it first for the second: go build -o /tmp/train_digits_ddp ./examples/train_digits_ddp)
package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	dt "github.com/devtensor/devtensor/bindings/go/devtensor"
)

const (
	rows        = 1797
	pixels      = 64
	classes     = 10
	hidden      = 128
	globalBatch = 64
)

var rank, world = 0, 1

func main() {
	path := "../../../data/digits.csv.gz"
	steps := 100
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if len(os.Args) > 2 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "train_digits_ddp: steps %q is not a count\n", os.Args[2])
			os.Exit(2)
		}
		steps = n
	}
	if err := run(path, steps); err != nil {
		fmt.Fprintf(os.Stderr, "train_digits_ddp: rank %d: %v\n", rank, err)
		os.Exit(1)
	}
}

// load reads the rows in file order: pixels / 16 and the labels.
func load(path string) ([]float32, []int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil, err
	}
	x := make([]float32, 0, rows*pixels)
	y := make([]int64, 0, rows)
	s := bufio.NewScanner(z)
	for s.Scan() && len(y) < rows {
		fields := strings.Split(strings.TrimSpace(s.Text()), ",")
		if len(fields) != pixels+1 {
			return nil, nil, fmt.Errorf("%s: a row has %d fields", path, len(fields))
		}
		for i, v := range fields {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, nil, err
			}
			if i < pixels {
				x = append(x, float32(n)/16)
			} else {
				y = append(y, int64(n))
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, nil, err
	}
	if len(y) != rows {
		return nil, nil, fmt.Errorf("%s: %d rows, want %d", path, len(y), rows)
	}
	return x, y, nil
}

// mlp is Sequential(Linear(64, 128), ReLU, Linear(128, 10)) made after ManualSeed(seed).
func mlp(seed uint64) (*dt.Module, error) {
	if err := dt.ManualSeed(seed); err != nil {
		return nil, err
	}
	l1, err := dt.Linear(pixels, hidden, dt.LinearOptions{DType: dt.Float32, Device: dt.CPU(0)})
	if err != nil {
		return nil, err
	}
	defer l1.Close()
	act, err := dt.ReLU()
	if err != nil {
		return nil, err
	}
	defer act.Close()
	l2, err := dt.Linear(hidden, classes, dt.LinearOptions{DType: dt.Float32, Device: dt.CPU(0)})
	if err != nil {
		return nil, err
	}
	defer l2.Close()
	return dt.Sequential(l1, act, l2) // takes its own references
}

func parameters(model *dt.Module) ([]*dt.Tensor, error) {
	named, err := model.Parameters()
	if err != nil {
		return nil, err
	}
	params := make([]*dt.Tensor, len(named))
	for i, p := range named {
		params[i] = p.Tensor
	}
	return params, nil
}

func closeAll(ts []*dt.Tensor) {
	for _, t := range ts {
		t.Close()
	}
}

func run(path string, steps int) error {
	x, y, err := load(path)
	if err != nil {
		return err
	}
	var pg *dt.ProcessGroup
	if _, ok := os.LookupEnv("RANK"); ok {
		if pg, err = dt.ProcessGroupFromEnv(); err != nil {
			return err
		}
		defer pg.Close()
		if rank, err = pg.Rank(); err != nil {
			return err
		}
		if world, err = pg.Size(); err != nil {
			return err
		}
	}
	if globalBatch%world != 0 {
		return fmt.Errorf("the global batch %d does not split over %d ranks", globalBatch, world)
	}
	model, err := mlp(uint64(rank))
	if err != nil {
		return err
	}
	defer model.Close()
	runner := model
	if pg != nil {
		if runner, err = dt.DistributedDataParallel(model, pg, dt.DDPOptions{}); err != nil {
			return err
		}
		defer runner.Close()
	}
	params, err := parameters(model)
	if err != nil {
		return err
	}
	defer closeAll(params)
	opt, err := dt.SGD(params, 0.1, dt.Momentum(0.9))
	if err != nil {
		return err
	}
	defer opt.Close()
	lossFn, err := dt.CrossEntropyLoss(dt.CrossEntropyLossOptions{})
	if err != nil {
		return err
	}
	defer lossFn.Close()

	share := globalBatch / world
	for s := 0; s < steps; s++ {
		// rows of this step's global batch, wrapping around the data; this rank's share
		first := (s*globalBatch)%(rows-globalBatch) + rank*share
		v, err := step(runner, lossFn, opt, pg, x[first*pixels:(first+share)*pixels], y[first:first+share])
		if err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
		if rank == 0 {
			fmt.Printf("step %d loss %.9f\n", s, v)
		}
	}
	if pg != nil {
		equal, err := paramsEqualEverywhere(pg, params)
		if err != nil {
			return err
		}
		if !equal {
			return fmt.Errorf("the ranks' parameters differ after training")
		}
		if rank == 0 {
			fmt.Println("params equal on every rank")
		}
	}
	return nil
}

// step trains on one share and returns the global batch's mean loss.
func step(runner, lossFn *dt.Module, opt *dt.Optimizer, pg *dt.ProcessGroup, xs []float32, ys []int64) (float64, error) {
	sc := dt.NewScope()
	defer sc.Close()
	n := int64(len(ys))
	xb, err := sc.Track(dt.FromSlice(xs, []int64{n, pixels}, dt.CPU(0)))
	if err != nil {
		return 0, err
	}
	yb, err := sc.Track(dt.FromSlice(ys, []int64{n}, dt.CPU(0)))
	if err != nil {
		return 0, err
	}
	if err := opt.ZeroGrad(); err != nil {
		return 0, err
	}
	logits, err := sc.Track(runner.Forward(xb))
	if err != nil {
		return 0, err
	}
	loss, err := sc.Track(lossFn.Forward(logits, yb))
	if err != nil {
		return 0, err
	}
	if err := loss.Backward(nil); err != nil { // with a group: gradients averaged over the ranks
		return 0, err
	}
	if err := opt.Step(); err != nil {
		return 0, err
	}
	if pg == nil {
		return loss.Item()
	}
	mean, err := sc.Track(loss.ToDeviceDType(dt.CPU(0), dt.Float64, dt.ToOptions{Copy: true}))
	if err != nil {
		return 0, err
	}
	if err := pg.AllReduce(mean, dt.ReduceAvg); err != nil {
		return 0, err
	}
	return mean.Item()
}

// paramsEqualEverywhere all-gathers every parameter and reports whether every rank's is
// bit for bit rank 0's.
func paramsEqualEverywhere(pg *dt.ProcessGroup, params []*dt.Tensor) (bool, error) {
	equal := true
	for _, p := range params {
		numel, err := p.Numel()
		if err != nil {
			return false, err
		}
		all, err := dt.Empty([]int64{int64(world), int64(numel)}, dt.Float32, dt.CPU(0))
		if err != nil {
			return false, err
		}
		err = pg.AllGather(p, all)
		var v []float32
		if err == nil {
			v, err = dt.ToSlice[float32](all)
		}
		all.Close()
		if err != nil {
			return false, err
		}
		for r := 1; r < world; r++ {
			for i := 0; i < numel; i++ { // bit patterns, as C's memcmp
				if math.Float32bits(v[r*numel+i]) != math.Float32bits(v[i]) {
					equal = false
				}
			}
		}
	}
	return equal, nil
}

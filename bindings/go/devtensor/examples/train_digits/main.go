// train_digits: the digits demo in Go — an MLP (64-128-10) trained with Adam on the UCI
// handwritten digits (data/digits.csv.gz) on the best device, printing the loss per
// epoch and the test accuracy. The same split and seeds as the C demo.
//
//	go run ./examples/train_digits [path/to/digits.csv.gz] [epochs]
package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"strconv"
	"strings"

	dt "github.com/devtensor/devtensor/bindings/go/devtensor"
)

const (
	rows    = 1797
	pixels  = 64
	classes = 10
	train   = 1437
	batch   = 64
)

func main() {
	path := "../../../data/digits.csv.gz"
	epochs := 30
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if len(os.Args) > 2 {
		epochs, _ = strconv.Atoi(os.Args[2])
	}
	acc, err := run(path, epochs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "train_digits:", err)
		os.Exit(1)
	}
	if acc < 0.95 {
		fmt.Fprintln(os.Stderr, "train_digits: the accuracy is below 95%")
		os.Exit(2)
	}
}

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
	for s.Scan() {
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
	if len(y) != rows {
		return nil, nil, fmt.Errorf("%s: %d rows, want %d", path, len(y), rows)
	}
	return x, y, s.Err()
}

// shuffle is the C demo's seeded LCG shuffle, so both demos split the data alike.
func shuffle(idx []int64, state *uint64) {
	for i := range idx {
		idx[i] = int64(i)
	}
	for i := len(idx) - 1; i > 0; i-- {
		*state = *state*6364136223846793005 + 1442695040888963407
		j := int((*state >> 33) % uint64(i+1))
		idx[i], idx[j] = idx[j], idx[i]
	}
}

func run(path string, epochs int) (float64, error) {
	px, labels, err := load(path)
	if err != nil {
		return 0, err
	}
	rng := uint64(20261122)
	order := make([]int64, rows)
	shuffle(order, &rng)
	xs := make([]float32, 0, rows*pixels)
	ys := make([]int64, 0, rows)
	for _, o := range order {
		xs = append(xs, px[o*pixels:(o+1)*pixels]...)
		ys = append(ys, labels[o])
	}
	device, err := dt.TryGPU(0)
	if err != nil {
		return 0, err
	}
	fmt.Println("device:", device)
	s := dt.NewScope()
	defer s.Close()
	xTrain, err := s.Track(dt.FromSlice(xs[:train*pixels], []int64{train, pixels}, device))
	if err != nil {
		return 0, err
	}
	yTrain, err := s.Track(dt.FromSlice(ys[:train], []int64{train}, device))
	if err != nil {
		return 0, err
	}
	xTest, err := s.Track(dt.FromSlice(xs[train*pixels:], []int64{rows - train, pixels}, device))
	if err != nil {
		return 0, err
	}
	yTest, err := s.Track(dt.FromSlice(ys[train:], []int64{rows - train}, device))
	if err != nil {
		return 0, err
	}
	if err := dt.ManualSeed(0); err != nil {
		return 0, err
	}
	l1, err := dt.Linear(pixels, 128, dt.LinearOptions{DType: dt.Float32, Device: device})
	if err != nil {
		return 0, err
	}
	defer l1.Close()
	act, err := dt.ReLU()
	if err != nil {
		return 0, err
	}
	defer act.Close()
	l2, err := dt.Linear(128, classes, dt.LinearOptions{DType: dt.Float32, Device: device})
	if err != nil {
		return 0, err
	}
	defer l2.Close()
	model, err := dt.Sequential(l1, act, l2)
	if err != nil {
		return 0, err
	}
	defer model.Close()
	lossFn, err := dt.CrossEntropyLoss(dt.CrossEntropyLossOptions{})
	if err != nil {
		return 0, err
	}
	defer lossFn.Close()
	params, err := model.Parameters()
	if err != nil {
		return 0, err
	}
	defer params.Close()
	opt, err := dt.Adam(params, 1e-3) // Parameters' result as it is
	if err != nil {
		return 0, err
	}
	defer opt.Close()

	perm := make([]int64, train)
	for epoch := 1; epoch <= epochs; epoch++ {
		shuffle(perm, &rng)
		total, batches, err := epochLoss(model, lossFn, opt, xTrain, yTrain, perm, device)
		if err != nil {
			return 0, err
		}
		fmt.Printf("epoch %2d  loss %.4f\n", epoch, total/float64(batches))
	}
	if err := model.Eval(); err != nil {
		return 0, err
	}
	if err := dt.SetGradEnabled(false); err != nil {
		return 0, err
	}
	logits, err := s.Track(model.Forward(xTest))
	if err != nil {
		return 0, err
	}
	pred, err := s.Track(logits.Argmax(dt.Dims(1)))
	if err != nil {
		return 0, err
	}
	hit, err := s.Track(pred.Eq(yTest))
	if err != nil {
		return 0, err
	}
	hits, err := s.Track(hit.Sum())
	if err != nil {
		return 0, err
	}
	correct, err := hits.Item()
	if err != nil {
		return 0, err
	}
	acc := correct / float64(rows-train)
	fmt.Printf("test accuracy: %.2f%% (%d of %d)\n", 100*acc, int(correct), rows-train)
	return acc, nil
}

// epochLoss runs one epoch of minibatch steps over a shuffled copy of the training set.
func epochLoss(model, lossFn *dt.Module, opt *dt.Optimizer, x, y *dt.Tensor, perm []int64, device dt.Device) (float64, int, error) {
	s := dt.NewScope() // everything this epoch makes is closed at its end
	defer s.Close()
	index, err := s.Track(dt.FromSlice(perm, []int64{int64(len(perm))}, device))
	if err != nil {
		return 0, 0, err
	}
	xe, err := s.Track(x.IndexSelect(0, index))
	if err != nil {
		return 0, 0, err
	}
	ye, err := s.Track(y.IndexSelect(0, index))
	if err != nil {
		return 0, 0, err
	}
	total, batches := 0.0, 0
	for start := int64(0); start < train; start += batch {
		n := int64(batch)
		if train-start < n {
			n = train - start
		}
		step := func() (float64, error) {
			bs := dt.NewScope()
			defer bs.Close()
			xb, err := bs.Track(xe.Narrow(0, start, n))
			if err != nil {
				return 0, err
			}
			yb, err := bs.Track(ye.Narrow(0, start, n))
			if err != nil {
				return 0, err
			}
			if err := opt.ZeroGrad(); err != nil {
				return 0, err
			}
			logits, err := bs.Track(model.Forward(xb))
			if err != nil {
				return 0, err
			}
			loss, err := bs.Track(lossFn.Forward(logits, yb))
			if err != nil {
				return 0, err
			}
			if err := loss.Backward(nil); err != nil {
				return 0, err
			}
			if err := opt.Step(); err != nil {
				return 0, err
			}
			return loss.Item()
		}
		v, err := step()
		if err != nil {
			return 0, 0, err
		}
		total += v
		batches++
	}
	return total, batches, nil
}

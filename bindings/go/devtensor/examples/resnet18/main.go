// resnet18: torchvision's ResNet-18 from PyTorch's state_dict, built from the
// functional ops (Conv2d, BatchNorm in evaluation form, ReLU, MaxPool2d,
// AdaptiveAvgPool2d, Matmul), run on the best device, its logits compared with PyTorch's.
//
//	go run ./examples/resnet18 MODEL CHECK [limit]
//
// tools/export_models.py DIR writes MODEL (DIR/resnet18.safetensors, the state_dict by
// PyTorch's key names) and CHECK (DIR/resnet18_check.safetensors: "input" [N, 3, 224,
// 224] and PyTorch's "logits" [N, 1000]). Prints the device, the forward time and the
// largest difference relative to the largest logit; exits 1 on an error, 2 when the
// difference is over the limit (1e-4).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	dt "github.com/devtensor/devtensor/bindings/go/devtensor"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: resnet18 MODEL.safetensors CHECK.safetensors [max-relative-difference]")
		os.Exit(1)
	}
	limit := 1e-4
	if len(os.Args) > 3 {
		var err error
		if limit, err = strconv.ParseFloat(os.Args[3], 64); err != nil {
			fmt.Fprintln(os.Stderr, "resnet18:", err)
			os.Exit(1)
		}
	}
	rel, err := run(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "resnet18:", err)
		os.Exit(1)
	}
	if rel > limit {
		fmt.Fprintf(os.Stderr, "resnet18: the logits differ from PyTorch's by more than %g\n", limit)
		os.Exit(2)
	}
}

// resnet18 computes the network from the state_dict's tensors. Its methods treat every
// error as fatal (dt.Must panics; run recovers the error) and keep what they make in a
// Scope, which run closes after the forward pass.
type resnet18 struct {
	weights *dt.StateDict
	s       *dt.Scope
}

// keep tracks a new tensor in the Scope.
func (r *resnet18) keep(t *dt.Tensor, err error) *dt.Tensor { return dt.Must(r.s.Track(t, err)) }

// get is the state_dict's tensor name.
func (r *resnet18) get(name string) *dt.Tensor { return r.keep(r.weights.Get(name)) }

// convBN is a convolution without bias, then BatchNorm2d in eval mode (the running
// statistics are only read).
func (r *resnet18) convBN(x *dt.Tensor, conv, bn string, stride, padding int64) *dt.Tensor {
	opts := dt.Conv2dOptions{Stride: [2]int64{stride, stride}, Padding: [2]int64{padding, padding}}
	y := r.keep(x.Conv2d(r.get(conv+".weight"), nil, opts))
	return r.keep(y.BatchNorm(r.get(bn+".running_mean"), r.get(bn+".running_var"),
		r.get(bn+".weight"), r.get(bn+".bias"), dt.BatchNormOptions{}))
}

// basicBlock is layer<layer>.<block>: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)),
// the shortcut through downsample (conv1x1 - bn) where the stride or width changes.
func (r *resnet18) basicBlock(x *dt.Tensor, layer, block int) *dt.Tensor {
	p := fmt.Sprintf("layer%d.%d.", layer, block)
	stride := int64(1)
	if layer > 1 && block == 0 {
		stride = 2
	}
	out := r.keep(r.convBN(x, p+"conv1", p+"bn1", stride, 1).ReLU())
	out = r.convBN(out, p+"conv2", p+"bn2", 1, 1)
	shortcut := x
	if stride == 2 {
		shortcut = r.convBN(x, p+"downsample.0", p+"downsample.1", stride, 0)
	}
	return r.keep(r.keep(out.Add(shortcut)).ReLU())
}

func (r *resnet18) forward(x *dt.Tensor) *dt.Tensor {
	x = r.keep(r.convBN(x, "conv1", "bn1", 2, 3).ReLU())
	x = r.keep(x.MaxPool2d([2]int64{3, 3}, dt.MaxPool2dOptions{Stride: [2]int64{2, 2}, Padding: [2]int64{1, 1}}))
	for layer := 1; layer <= 4; layer++ {
		for block := 0; block < 2; block++ {
			x = r.basicBlock(x, layer, block)
		}
	}
	x = r.keep(r.keep(x.AdaptiveAvgPool2d([2]int64{1, 1})).Flatten(1, -1))
	// fc: x @ weight^T + bias
	wt := r.keep(r.get("fc.weight").Transpose(0, 1))
	return r.keep(r.keep(x.Matmul(wt)).Add(r.get("fc.bias")))
}

// run returns the largest |logits - PyTorch's| relative to the largest |PyTorch's|.
func run(modelPath, checkPath string) (rel float64, err error) {
	defer func() { // the error a dt.Must panicked with
		if p := recover(); p != nil {
			var ok bool
			if err, ok = p.(error); !ok {
				panic(p)
			}
		}
	}()
	device := dt.Must(dt.TryGPU(0))
	fmt.Println("device:", device)
	model := dt.Must(dt.LoadSafetensors(modelPath, device))
	defer model.Close()
	check := dt.Must(dt.LoadSafetensors(checkPath, device))
	defer check.Close()
	s := dt.NewScope()
	defer s.Close()
	net := &resnet18{weights: model, s: s}
	input, want := net.keep(check.Get("input")), net.keep(check.Get("logits"))

	start := time.Now()
	logits := net.forward(input)
	dt.MustOK(device.Synchronize())
	fmt.Printf("forward: %.1f ms\n", float64(time.Since(start).Microseconds())/1e3)

	worst := dt.Must(net.keep(net.keep(net.keep(logits.Sub(want)).Abs()).Max()).Item())
	largest := dt.Must(net.keep(net.keep(want.Abs()).Max()).Item())
	rel = worst / largest
	fmt.Printf("logits: largest %.4g, largest difference from PyTorch %.3g (relative %.3g)\n", largest, worst, rel)
	return rel, nil
}

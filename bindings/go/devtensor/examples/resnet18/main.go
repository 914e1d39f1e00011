// resnet18: torchvision's ResNet-18 built as PyTorch defines it, from modules with
// torchvision's names (dt.NewModule for each BasicBlock and for the network, whose Go
// forward functions reach their children through self), loaded with the state_dict
// PyTorch saved (every key must match), run in eval mode on the best device, its logits
// compared with PyTorch's.
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

// ---- the forward functions (a panic of dt.Must becomes the forward's error, its code kept)

// call runs self's child name on x; the intermediate tensors go into s.
func call(s *dt.Scope, self *dt.Module, name string, x *dt.Tensor) *dt.Tensor {
	c := dt.Must(self.Child(name))
	defer c.Close()
	return dt.Must(s.Track(c.Forward(x)))
}

// basicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut), the shortcut x itself or
// downsample(x) where the block has one.
func basicBlock(downsample bool) dt.ForwardFunc {
	return func(self *dt.Module, in []*dt.Tensor) (*dt.Tensor, error) {
		s := dt.NewScope()
		defer s.Close()
		x := in[0]
		y := dt.Must(s.Track(call(s, self, "bn1", call(s, self, "conv1", x)).ReLU()))
		y = call(s, self, "bn2", call(s, self, "conv2", y))
		shortcut := x
		if downsample {
			shortcut = call(s, self, "downsample", x)
		}
		return dt.Must(s.Track(y.Add(shortcut))).ReLU() // the module takes the result over
	}
}

// resNet: the stem, the four layers, pooling, flatten and fc.
func resNet(self *dt.Module, in []*dt.Tensor) (*dt.Tensor, error) {
	s := dt.NewScope()
	defer s.Close()
	x := in[0]
	for _, name := range []string{"conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool"} {
		x = call(s, self, name, x)
	}
	fc := dt.Must(self.Child("fc"))
	defer fc.Close()
	return fc.Forward(dt.Must(s.Track(x.Flatten(1, -1))))
}

// ---- building the tree (NewModule and Sequential take their children over)

func named(name string, m *dt.Module) dt.NamedModule { return dt.NamedModule{Name: name, Module: m} }

func conv(in, out, k, stride, padding int64, d dt.Device) *dt.Module {
	return dt.Must(dt.Conv2d(in, out, [2]int64{k, k}, dt.Conv2dOptions{Stride: [2]int64{stride, stride},
		Padding: [2]int64{padding, padding}, NoBias: true, DType: dt.Float32, Device: d}))
}

func bn(c int64, d dt.Device) *dt.Module {
	return dt.Must(dt.BatchNorm2d(c, dt.BatchNormOptions{DType: dt.Float32, Device: d}))
}

func block(in, out, stride int64, d dt.Device) *dt.Module {
	children := dt.NamedModules{named("conv1", conv(in, out, 3, stride, 1, d)), named("bn1", bn(out, d)),
		named("conv2", conv(out, out, 3, 1, 1, d)), named("bn2", bn(out, d))}
	down := stride != 1 || in != out
	if down {
		children = append(children, named("downsample", dt.Must(dt.Sequential(conv(in, out, 1, stride, 0, d), bn(out, d)))))
	}
	return dt.Must(dt.NewModule("BasicBlock", dt.ModuleSpec{Children: children}, basicBlock(down)))
}

func resnet18(d dt.Device) *dt.Module {
	children := dt.NamedModules{named("conv1", conv(3, 64, 7, 2, 3, d)), named("bn1", bn(64, d)),
		named("relu", dt.Must(dt.ReLU())), named("maxpool", dt.Must(dt.MaxPool2d([2]int64{3, 3},
			dt.MaxPool2dOptions{Stride: [2]int64{2, 2}, Padding: [2]int64{1, 1}})))}
	width := int64(64)
	for layer := 0; layer < 4; layer++ {
		out, stride := int64(64)<<layer, int64(2)
		if layer == 0 {
			stride = 1
		}
		children = append(children, named(fmt.Sprintf("layer%d", layer+1),
			dt.Must(dt.Sequential(block(width, out, stride, d), block(out, out, 1, d)))))
		width = out
	}
	children = append(children, named("avgpool", dt.Must(dt.AdaptiveAvgPool2d([2]int64{1, 1}))),
		named("fc", dt.Must(dt.Linear(512, 1000, dt.LinearOptions{DType: dt.Float32, Device: d}))))
	return dt.Must(dt.NewModule("ResNet", dt.ModuleSpec{Children: children}, resNet))
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
	net := resnet18(device)
	defer net.Close()
	dt.MustOK(net.Load(modelPath)) // strict: every key of PyTorch's state_dict, and no other
	dt.MustOK(net.Eval())
	params := dt.Must(net.Parameters())
	fmt.Printf("model: %d parameter tensors, every key of PyTorch's state_dict loaded\n", len(params))
	dt.MustOK(params.Close())
	check := dt.Must(dt.LoadSafetensors(checkPath, device))
	defer check.Close()
	s := dt.NewScope()
	defer s.Close()
	input, want := dt.Must(s.Track(check.Get("input"))), dt.Must(s.Track(check.Get("logits")))

	start := time.Now()
	logits := dt.Must(s.Track(net.Forward(input)))
	dt.MustOK(device.Synchronize())
	fmt.Printf("forward: %.1f ms\n", float64(time.Since(start).Microseconds())/1e3)

	diff := dt.Must(s.Track(dt.Must(s.Track(logits.Sub(want))).Abs()))
	worst := dt.Must(dt.Must(s.Track(diff.Max())).Item())
	largest := dt.Must(dt.Must(s.Track(dt.Must(s.Track(want.Abs())).Max())).Item())
	rel = worst / largest
	fmt.Printf("logits: largest %.4g, largest difference from PyTorch %.3g (relative %.3g)\n", largest, worst, rel)
	return rel, nil
}

// transformer: a 2-layer torch.nn.TransformerEncoder (with a final LayerNorm) made from
// the package's modules, PyTorch's state_dict loaded into it by key
// ("layers.0.self_attn.in_proj_weight", ..., "norm.weight"), run in eval mode on the
// best device with a key padding mask, its output compared with PyTorch's.
//
//	go run ./examples/transformer MODEL CHECK [limit]
//
// tools/export_models.py DIR writes MODEL (DIR/transformer.safetensors: d_model 64,
// nhead 4, dim_feedforward 256, gelu, batch_first) and CHECK
// (DIR/transformer_check.safetensors: "input" [3, 16, 64], "key_padding_mask" [3, 16],
// true at padding, and PyTorch's "logits"). Prints the device, the forward time and the
// largest difference relative to the largest output; exits 1 on an error, 2 when the
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
		fmt.Fprintln(os.Stderr, "usage: transformer MODEL.safetensors CHECK.safetensors [max-relative-difference]")
		os.Exit(1)
	}
	limit := 1e-4
	if len(os.Args) > 3 {
		var err error
		if limit, err = strconv.ParseFloat(os.Args[3], 64); err != nil {
			fmt.Fprintln(os.Stderr, "transformer:", err)
			os.Exit(1)
		}
	}
	rel, err := run(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "transformer:", err)
		os.Exit(1)
	}
	if rel > limit {
		fmt.Fprintf(os.Stderr, "transformer: the output differs from PyTorch's by more than %g\n", limit)
		os.Exit(2)
	}
}

// encoder is TransformerEncoder(TransformerEncoderLayer(64, 4, 256, 0.1, "gelu",
// batch_first=True), num_layers=2, norm=LayerNorm(64)) on device.
func encoder(device dt.Device) (*dt.Module, error) {
	opts := dt.TransformerEncoderLayerOptions{DimFeedforward: 256, Activation: dt.ActivationGELU,
		BatchFirst: true, Device: device}
	var parts []*dt.Module
	for i := 0; i < 2; i++ {
		layer, err := dt.TransformerEncoderLayer(64, 4, opts)
		if err != nil {
			return nil, err
		}
		defer layer.Close() // harmless once the encoder holds it
		parts = append(parts, layer)
	}
	norm, err := dt.LayerNorm([]int64{64}, dt.LayerNormOptions{Device: device})
	if err != nil {
		return nil, err
	}
	defer norm.Close()
	return dt.TransformerEncoder(parts, norm)
}

// run returns the largest |output - PyTorch's| relative to the largest |PyTorch's|.
func run(modelPath, checkPath string) (float64, error) {
	device, err := dt.TryGPU(0)
	if err != nil {
		return 0, err
	}
	fmt.Println("device:", device)
	model, err := encoder(device)
	if err != nil {
		return 0, err
	}
	defer model.Close()
	if err := model.Load(modelPath); err != nil { // by PyTorch's key names
		return 0, err
	}
	if err := model.Eval(); err != nil { // no dropout
		return 0, err
	}
	check, err := dt.LoadSafetensors(checkPath, device)
	if err != nil {
		return 0, err
	}
	defer check.Close()
	s := dt.NewScope()
	defer s.Close()
	var t [3]*dt.Tensor // input, key_padding_mask, logits
	for i, name := range []string{"input", "key_padding_mask", "logits"} {
		if t[i], err = s.Track(check.Get(name)); err != nil {
			return 0, err
		}
	}

	start := time.Now()
	// forward(src, mask=None, src_key_padding_mask)
	out, err := s.Track(model.ForwardOptional(t[0], nil, t[1]))
	if err != nil {
		return 0, err
	}
	if err := device.Synchronize(); err != nil {
		return 0, err
	}
	fmt.Printf("forward: %.1f ms\n", float64(time.Since(start).Microseconds())/1e3)
	return relativeDifference(s, out, t[2])
}

// relativeDifference prints the largest |got - want| and the largest |want| and returns
// their ratio.
func relativeDifference(s *dt.Scope, got, want *dt.Tensor) (float64, error) {
	diff, err := s.Track(got.Sub(want))
	if err != nil {
		return 0, err
	}
	var m [2]float64 // max |got - want|, max |want|
	for i, x := range []*dt.Tensor{diff, want} {
		a, err := s.Track(x.Abs())
		if err != nil {
			return 0, err
		}
		mx, err := s.Track(a.Max())
		if err != nil {
			return 0, err
		}
		if m[i], err = mx.Item(); err != nil {
			return 0, err
		}
	}
	rel := m[0] / m[1]
	fmt.Printf("logits: largest %.4g, largest difference from PyTorch %.3g (relative %.3g)\n", m[1], m[0], rel)
	return rel, nil
}

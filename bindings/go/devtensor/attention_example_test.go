package devtensor_test

import (
	"fmt"
	"math"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

func ExampleTensor_ScaledDotProductAttention() {
	cpu := devtensor.CPU(0)
	q := devtensor.Must(devtensor.FromSlice([]float32{9, -1, 2, 2}, []int64{2, 2}, cpu)) // [L, E]
	defer q.Close()
	k := devtensor.Must(devtensor.Zeros([]int64{3, 2}, devtensor.Float32, cpu)) // equal keys
	defer k.Close()
	v := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{3, 2}, cpu))
	defer v.Close()
	show := func(y *devtensor.Tensor) {
		defer y.Close()
		fmt.Printf("%.1f\n", devtensor.Must(devtensor.ToSlice[float32](y)))
	}
	// Equal scores: equal weights, the mean of the value rows for each query.
	show(devtensor.Must(q.ScaledDotProductAttention(k, v, nil, false)))
	// SDPA's bool mask is TRUE where the query MAY attend: keys 0 and 1 only.
	allow := devtensor.Must(devtensor.FromSlice([]bool{true, true, false}, []int64{3}, cpu))
	defer allow.Close()
	show(devtensor.Must(q.ScaledDotProductAttention(k, v, allow, false)))
	// Causal: query 0 sees key 0 only, query 1 keys 0 and 1.
	show(devtensor.Must(q.ScaledDotProductAttention(k, v, nil, true)))
	// Output:
	// [3.0 4.0 3.0 4.0]
	// [2.0 3.0 2.0 3.0]
	// [1.0 2.0 2.0 3.0]
}

func ExampleMultiheadAttention() {
	cpu := devtensor.CPU(0)
	mha := devtensor.Must(devtensor.MultiheadAttention(2, 1, devtensor.MultiheadAttentionOptions{}))
	defer mha.Close()
	params := devtensor.Must(mha.Parameters())
	for _, p := range params {
		fmt.Println(p.Name, devtensor.Must(p.Tensor.Shape()))
	}
	params.Close()

	// Identity projections, out_proj.bias [10, 20], loaded by PyTorch's keys.
	eye := devtensor.Must(devtensor.FromSlice([]float32{1, 0, 0, 1}, []int64{2, 2}, cpu))
	defer eye.Close()
	in := devtensor.Must(devtensor.Cat([]*devtensor.Tensor{eye, eye, eye}, 0))
	defer in.Close()
	inBias := devtensor.Must(devtensor.Zeros([]int64{6}, devtensor.Float32, cpu))
	defer inBias.Close()
	outBias := devtensor.Must(devtensor.FromSlice([]float32{10, 20}, []int64{2}, cpu))
	defer outBias.Close()
	sd := devtensor.Must(devtensor.NewStateDict(devtensor.Named{Name: "in_proj_weight", Tensor: in},
		devtensor.Named{Name: "in_proj_bias", Tensor: inBias}, devtensor.Named{Name: "out_proj.weight", Tensor: eye},
		devtensor.Named{Name: "out_proj.bias", Tensor: outBias}))
	defer sd.Close()
	devtensor.MustOK(mha.LoadStateDict(sd))

	q := devtensor.Must(devtensor.FromSlice([]float32{7, -3}, []int64{1, 1, 2}, cpu)) // [L, N, E]
	defer q.Close()
	k := devtensor.Must(devtensor.Zeros([]int64{3, 1, 2}, devtensor.Float32, cpu)) // equal keys
	defer k.Close()
	v := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{3, 1, 2}, cpu))
	defer v.Close()
	// The module's bool masks are TRUE where attention is NOT allowed: key 2 is padding.
	pad := devtensor.Must(devtensor.FromSlice([]bool{false, false, true}, []int64{1, 3}, cpu))
	defer pad.Close()
	for _, y := range []*devtensor.Tensor{
		devtensor.Must(mha.ForwardOptional(q, k, v)),      // the mean of the values + bias
		devtensor.Must(mha.ForwardOptional(q, k, v, pad)), // the mean of values 0 and 1 + bias
	} {
		fmt.Println(devtensor.Must(devtensor.ToSlice[float32](y)))
		y.Close()
	}
	// Output:
	// in_proj_weight [6 2]
	// in_proj_bias [6]
	// out_proj.weight [2 2]
	// out_proj.bias [2]
	// [13 24]
	// [12 23]
}

func ExampleModule_AttentionWithWeights() {
	cpu := devtensor.CPU(0)
	// MultiheadAttention(2, 2, bias=False): two heads of width 1, here with identity
	// projections, so head h scores query[h] * key[h] (the scale is 1/sqrt(1)) and mixes
	// value column h.
	mha := devtensor.Must(devtensor.MultiheadAttention(2, 2, devtensor.MultiheadAttentionOptions{NoBias: true}))
	defer mha.Close()
	eye := devtensor.Must(devtensor.FromSlice([]float32{1, 0, 0, 1}, []int64{2, 2}, cpu))
	defer eye.Close()
	in := devtensor.Must(devtensor.Cat([]*devtensor.Tensor{eye, eye, eye}, 0))
	defer in.Close()
	sd := devtensor.Must(devtensor.NewStateDict(devtensor.Named{Name: "in_proj_weight", Tensor: in},
		devtensor.Named{Name: "out_proj.weight", Tensor: eye}))
	defer sd.Close()
	devtensor.MustOK(mha.LoadStateDict(sd))

	q := devtensor.Must(devtensor.FromSlice([]float32{1, 0}, []int64{1, 1, 2}, cpu)) // [L, N, E]
	defer q.Close()
	// Head 0 scores 0 and ln 3: weights 1/4 and 3/4. Head 1 scores 0 and 0: 1/2 and 1/2.
	k := devtensor.Must(devtensor.FromSlice([]float32{0, 0, float32(math.Log(3)), 0}, []int64{2, 1, 2}, cpu))
	defer k.Close()
	v := devtensor.Must(devtensor.FromSlice([]float32{4, 2, 8, 6}, []int64{2, 1, 2}, cpu))
	defer v.Close()
	for _, average := range []bool{true, false} {
		// average: PyTorch's average_attn_weights, the mean over the heads [N, L, S];
		// else one set of weights per head, [N, numHeads, L, S].
		out, weights, err := mha.AttentionWithWeights(q, k, v, nil, nil, average)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("out %.2f, weights %v %.3f\n", devtensor.Must(devtensor.ToSlice[float32](out)),
			devtensor.Must(weights.Shape()), devtensor.Must(devtensor.ToSlice[float32](weights)))
		out.Close()
		weights.Close()
	}
	// Output:
	// out [7.00 4.00], weights [1 1 2] [0.375 0.625]
	// out [7.00 4.00], weights [1 2 1 2] [0.250 0.750 0.500 0.500]
}

func ExampleTransformerEncoder() {
	// PyTorch's TransformerEncoder(TransformerEncoderLayer(16, 4, 32, batch_first=True),
	// 2, norm=LayerNorm(16)): each layer a module of its own.
	opts := devtensor.TransformerEncoderLayerOptions{DimFeedforward: 32, BatchFirst: true, Activation: devtensor.ActivationGELU}
	layers := []*devtensor.Module{
		devtensor.Must(devtensor.TransformerEncoderLayer(16, 4, opts)),
		devtensor.Must(devtensor.TransformerEncoderLayer(16, 4, opts)),
	}
	norm := devtensor.Must(devtensor.LayerNorm([]int64{16}, devtensor.LayerNormOptions{}))
	enc := devtensor.Must(devtensor.TransformerEncoder(layers, norm)) // takes the layers and norm over
	defer enc.Close()
	devtensor.MustOK(enc.Eval()) // no dropout
	sd := devtensor.Must(enc.StateDict())
	defer sd.Close()
	names := devtensor.Must(sd.Names())
	fmt.Println(len(names), names[0], names[len(names)-1])

	// Two sequences of 3 tokens; the second one's last token is padding (true = NOT attended).
	x := devtensor.Must(devtensor.Randn([]int64{2, 3, 16}, devtensor.Float32, devtensor.CPU(0)))
	defer x.Close()
	pad := devtensor.Must(devtensor.FromSlice([]bool{false, false, false, false, false, true}, []int64{2, 3}, devtensor.CPU(0)))
	defer pad.Close()
	y := devtensor.Must(enc.ForwardOptional(x, nil, pad)) // (src, mask, src_key_padding_mask)
	defer y.Close()
	fmt.Println(devtensor.Must(y.Shape()))
	// Output:
	// 26 layers.0.self_attn.in_proj_weight norm.bias
	// [2 3 16]
}

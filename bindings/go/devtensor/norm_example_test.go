package devtensor_test

import (
	"fmt"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

func ExampleBatchNorm2d() {
	bn := devtensor.Must(devtensor.BatchNorm2d(1, devtensor.BatchNormOptions{}))
	defer bn.Close()
	// One channel holding 0 and 2 (two images of 1x1): mean 1, variance 1.
	x := devtensor.Must(devtensor.FromSlice([]float32{0, 2}, []int64{2, 1, 1, 1}, devtensor.CPU(0)))
	defer x.Close()
	y := devtensor.Must(bn.Forward(x)) // training mode: the batch's statistics
	defer y.Close()
	fmt.Printf("%.3f\n", devtensor.Must(devtensor.ToSlice[float32](y)))
	buffers := devtensor.Must(bn.Buffers())
	defer buffers.Close()
	for _, b := range buffers { // updated in place: 0.9 * 0 + 0.1 * 1, 0.9 * 1 + 0.1 * 2 (unbiased)
		fmt.Println(b.Name, b.Tensor)
	}
	// Output:
	// [-1.000 1.000]
	// running_mean tensor([0.1000])
	// running_var tensor([1.1000])
	// num_batches_tracked tensor(1)
}

func ExampleBatchNormOptions() {
	// PyTorch's BatchNorm1d(4, momentum=None, affine=False): the running statistics
	// are the plain average over the batches seen.
	cumulative := devtensor.Must(devtensor.BatchNorm1d(4, devtensor.BatchNormOptions{Cumulative: true, NoAffine: true}))
	defer cumulative.Close()
	// BatchNorm1d(4, momentum=0.01): a momentum other than the default is a pointer.
	m := 0.01
	slow := devtensor.Must(devtensor.BatchNorm1d(4, devtensor.BatchNormOptions{Momentum: &m}))
	defer slow.Close()
	for _, m := range []*devtensor.Module{cumulative, slow} {
		params := devtensor.Must(m.Parameters())
		fmt.Println(len(params))
		params.Close()
	}
	// Output:
	// 0
	// 2
}

func ExampleTensor_LayerNorm() {
	x := devtensor.Must(devtensor.FromSlice([]float32{1, 2, 3}, []int64{1, 3}, devtensor.CPU(0)))
	defer x.Close()
	// mean 2, variance 2/3: (x - 2) / sqrt(2/3 + 1e-5)
	y := devtensor.Must(x.LayerNorm([]int64{3}, nil, nil, devtensor.LayerNormOptions{}))
	defer y.Close()
	fmt.Printf("%.4f\n", devtensor.Must(devtensor.ToSlice[float32](y)))
	// Output: [-1.2247 0.0000 1.2247]
}

func ExampleEmbedding() {
	pad := int64(0) // row 0 is padding: zeroed, and it gets no gradient
	emb := devtensor.Must(devtensor.Embedding(10, 3, devtensor.EmbeddingOptions{PaddingIdx: &pad}))
	defer emb.Close()
	ids := devtensor.Must(devtensor.FromSlice([]int64{0, 4, 0, 7, 9, 1}, []int64{2, 3}, devtensor.CPU(0)))
	defer ids.Close()
	vectors := devtensor.Must(emb.Forward(ids))
	defer vectors.Close()
	row := devtensor.Must(vectors.Narrow(1, 0, 1))
	defer row.Close()
	fmt.Println(devtensor.Must(vectors.Shape()), devtensor.Must(devtensor.ToSlice[float32](row))[:3])
	// Output: [2 3 3] [0 0 0]
}

func ExampleModule_Children() {
	net := devtensor.Must(devtensor.Sequential(
		devtensor.Must(devtensor.Conv2d(1, 4, [2]int64{3, 3}, devtensor.Conv2dOptions{})),
		devtensor.Must(devtensor.BatchNorm2d(4, devtensor.BatchNormOptions{})),
		devtensor.Must(devtensor.ReLU()),
	))
	defer net.Close()
	children := devtensor.Must(net.Children())
	defer children.Close()
	for _, c := range children {
		fmt.Println(c.Name, devtensor.Must(c.Module.Kind()))
	}
	// net[1], the parent's own BatchNorm2d (not a copy): eval mode through it is the parent's.
	bn := devtensor.Must(net.Child("1"))
	defer bn.Close()
	devtensor.MustOK(bn.Eval())
	_, err := net.Child("3")
	fmt.Println(err)
	// Output:
	// 0 Conv2d
	// 1 BatchNorm2d
	// 2 ReLU
	// devtensor: Module.Child: dt_module_child: no child "3" on the path "3" (Sequential's children: 0, 1, 2) (invalid argument)
}

package devtensor_test

import (
	"fmt"

	"github.com/devtensor/devtensor/bindings/go/devtensor"
)

func ExampleModule_RNNForward() {
	// torch.nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
	lstm := devtensor.Must(devtensor.LSTM(3, 4, devtensor.RNNOptions{NumLayers: 2, BatchFirst: true, Bidirectional: true}))
	defer lstm.Close()
	x := devtensor.Must(devtensor.Randn([]int64{2, 5, 3}, devtensor.Float32, devtensor.CPU(0))) // [N, L, input_size]
	defer x.Close()
	out, hN, cN, err := lstm.RNNForward(x, nil, nil) // nil h0, c0: zeros
	if err != nil {
		panic(err)
	}
	defer out.Close()
	defer hN.Close()
	defer cN.Close()
	fmt.Println(devtensor.Must(out.Shape()), devtensor.Must(hN.Shape()), devtensor.Must(cN.Shape()))

	// A GRU has no cell state: cN is nil.
	gru := devtensor.Must(devtensor.GRU(3, 4, devtensor.RNNOptions{BatchFirst: true}))
	defer gru.Close()
	out2, hN2, cN2, err := gru.RNNForward(x, nil, nil)
	if err != nil {
		panic(err)
	}
	defer out2.Close()
	defer hN2.Close()
	fmt.Println(devtensor.Must(out2.Shape()), devtensor.Must(hN2.Shape()), cN2 == nil)
	// Output:
	// [2 5 8] [4 2 4] [4 2 4]
	// [2 5 4] [1 2 4] true
}

func ExampleRNN() {
	rnn := devtensor.Must(devtensor.RNN(2, 3, "relu", devtensor.RNNOptions{NoBias: true}))
	defer rnn.Close()
	params := devtensor.Must(rnn.Parameters())
	defer params.Close()
	for _, p := range params {
		fmt.Println(p.Name, devtensor.Must(p.Tensor.Shape()))
	}
	// Output:
	// weight_ih_l0 [3 2]
	// weight_hh_l0 [3 3]
}

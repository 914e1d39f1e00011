package devtensor

// #include <stdlib.h>
// #include "rnn_shim.h"
import "C"

import (
	"runtime"
	"strings"
	"unsafe"
)

// RNNOptions are the optional arguments of LSTM, GRU and RNN; the zero value is
// PyTorch's defaults: one layer, biases (bias=True), inputs [L, N, inputSize]
// (batch_first=False), no dropout, one direction (bidirectional=False), the default
// dtype (SetDefaultDType) and device (SetDefaultDevice).
type RNNOptions struct {
	NumLayers     int64   // stacked layers, each taking the previous one's output (positive); 0: 1
	NoBias        bool    // no "bias_ih_l<k>" and "bias_hh_l<k>" (bias=False)
	BatchFirst    bool    // input and output [N, L, *] instead of [L, N, *] (batch_first=True); the states keep [layers * D, N, H]
	Dropout       float64 // in [0, 1]: dropout on every layer's output but the last, in training mode; 0: none
	Bidirectional bool    // a backward direction too, parameters suffixed "_reverse" (bidirectional=True): D = 2
	DType         DType   // the parameters' dtype (floating); DefaultDType: the process default
	Device        Device  // where they live; the zero Device: the process default
}

func (o *RNNOptions) numLayers() C.int64_t {
	if o.NumLayers == 0 {
		return 1
	}
	return C.int64_t(o.NumLayers)
}

// LSTM is torch.nn.LSTM(inputSize, hiddenSize) (dt_lstm_new) with num_layers, bias,
// batch_first, dropout, bidirectional, dtype and device from opts (proj_size 0). Its
// parameters, per layer k and direction (the backward one suffixed "_reverse"), have
// PyTorch's names, so its state_dict loads unchanged: "weight_ih_l<k>" [4 * hiddenSize,
// in] (in: inputSize for layer 0, else D * hiddenSize, D = 2 with Bidirectional, else
// 1), "weight_hh_l<k>" [4 * hiddenSize, hiddenSize], and unless NoBias "bias_ih_l<k>"
// and "bias_hh_l<k>" [4 * hiddenSize], all uniform in ±1/sqrt(hiddenSize), the gates in
// PyTorch's order (input, forget, cell, output).
//
// Forward(input) runs it from zero states, Forward(input, h0, c0) from given ones
// (ForwardOptional(input, nil, nil): zeros too), and gives the output only; RNNForward
// gives the last states as well. input [L, N, inputSize] ([N, L, inputSize] with
// BatchFirst; unbatched [L, inputSize]); h0 and c0 [NumLayers * D, N, hiddenSize]
// (unbatched [NumLayers * D, hiddenSize]; both, or neither); the output [L, N, D *
// hiddenSize] in the input's layout, each direction's hidden states side by side.
// Dropout acts in training mode (a new module's; Module.Eval for inference). Padded
// batches of unequal lengths (PyTorch's PackedSequence) are not supported: run them one
// length at a time. The caller owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (inputSize, hiddenSize or NumLayers not positive or too
// large, Dropout outside [0, 1]), ErrDTypeMismatch (a dtype that is not floating),
// ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory, ErrVersion (see
// CheckVersion). Forward: ErrShapeMismatch naming the module and the shapes (an input
// of other than 2 or 3 dims, a last dim other than input_size, an empty sequence, a
// state of the wrong shape), ErrDTypeMismatch (an input or state of another dtype than
// the parameters), ErrDeviceMismatch, ErrInvalidArgument (h0 without c0 or the reverse).
func LSTM(inputSize, hiddenSize int64, opts RNNOptions) (*Module, error) {
	return lstmOrGRU("LSTM", C.GDT_RNN_LSTM, inputSize, hiddenSize, opts)
}

// GRU is torch.nn.GRU(inputSize, hiddenSize) (dt_gru_new): as LSTM with 3 gates in
// PyTorch's order (reset, update, new; weights [3 * hiddenSize, ...], biases [3 *
// hiddenSize]) and no cell state: Forward takes (input) or (input, h0), and RNNForward
// gives a nil cN. The caller owns the Module and must Close it.
//
// Errors: as LSTM's; Forward with a c0: ErrInvalidArgument (too many inputs).
func GRU(inputSize, hiddenSize int64, opts RNNOptions) (*Module, error) {
	return lstmOrGRU("GRU", C.GDT_RNN_GRU, inputSize, hiddenSize, opts)
}

func lstmOrGRU(op string, cell C.int, inputSize, hiddenSize int64, opts RNNOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule(op, C.gdt_lstm_gru_new(cell, C.int64_t(inputSize), C.int64_t(hiddenSize), opts.numLayers(),
		biasArg(opts.NoBias), cBool(opts.BatchFirst), C.double(opts.Dropout), cBool(opts.Bidirectional),
		C.dt_dtype(opts.DType), opts.Device.c()))
}

// RNN is torch.nn.RNN(inputSize, hiddenSize, nonlinearity=nonlinearity) (dt_rnn_new):
// h' = nonlinearity(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh), nonlinearity "tanh" (PyTorch's
// default; "" means it too) or "relu"; otherwise as GRU with one gate (weights
// [hiddenSize, ...], biases [hiddenSize]) under the same names. The caller owns the
// Module and must Close it.
//
// Errors: as LSTM's, and ErrInvalidArgument for another nonlinearity (the message names
// it).
func RNN(inputSize, hiddenSize int64, nonlinearity string, opts RNNOptions) (*Module, error) {
	const op = "RNN"
	if versionErr != nil {
		return nil, versionErr
	}
	if nonlinearity == "" {
		nonlinearity = "tanh"
	}
	if strings.IndexByte(nonlinearity, 0) >= 0 {
		return nil, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: "nonlinearity must be \"tanh\" or \"relu\", got a string holding a NUL byte"}
	}
	cs := C.CString(nonlinearity)
	defer C.free(unsafe.Pointer(cs))
	return takeModule(op, C.gdt_rnn_new(C.int64_t(inputSize), C.int64_t(hiddenSize), opts.numLayers(), cs,
		biasArg(opts.NoBias), cBool(opts.BatchFirst), C.double(opts.Dropout), cBool(opts.Bidirectional),
		C.dt_dtype(opts.DType), opts.Device.c()))
}

// RNNForward runs m, an LSTM, GRU or RNN, as PyTorch's forward returning (output, h_n)
// or, for an LSTM, (output, (h_n, c_n)) (dt_rnn_forward): output is what
// Forward(input, h0, c0) gives, [L, N, D * hiddenSize] in the input's layout; hN
// [NumLayers * D, N, hiddenSize] (unbatched [NumLayers * D, hiddenSize]) the last hidden
// state of each layer and direction, in the order layer 0 forward, layer 0 backward,
// layer 1 forward, ... (the backward direction's last state is the one at time 0,
// whatever BatchFirst says); cN the same of an LSTM's cell state, and nil for a GRU or
// RNN. h0 and c0 may be nil, zeros (an LSTM takes both or neither; c0 is an LSTM's
// alone). All three results are part of the autograd graph. The caller owns them and
// must Close them; on error all are nil.
//
// Errors: ErrInvalidArgument (a nil m or input; m a module of another kind, the message
// naming it: "m is a Linear module, not an RNN, LSTM or GRU"; a c0 for a GRU or RNN; h0
// without c0 or the reverse for an LSTM), ErrClosed (a closed m or tensor), and the
// errors of LSTM's Forward: ErrShapeMismatch naming the module and the shapes (a last
// dim other than input_size, a state of the wrong shape), ErrDTypeMismatch,
// ErrDeviceMismatch, ErrOutOfMemory.
func (m *Module) RNNForward(input, h0, c0 *Tensor) (output, hN, cN *Tensor, err error) {
	const op = "Module.RNNForward"
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return nil, nil, nil, err
	}
	defer unlock()
	ih, err := input.handle(op)
	if err != nil {
		return nil, nil, nil, err
	}
	hh, err := optionalTensor(op, h0)
	if err != nil {
		return nil, nil, nil, err
	}
	ch, err := optionalTensor(op, c0)
	if err != nil {
		return nil, nil, nil, err
	}
	r := C.gdt_rnn_forward(h, ih, hh, ch)
	runtime.KeepAlive(m)
	runtime.KeepAlive(input)
	runtime.KeepAlive(h0)
	runtime.KeepAlive(c0)
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, nil, nil, err
	}
	output, hN = newTensor(r.t[0]), newTensor(r.t[1])
	if r.t[2] != 0 {
		cN = newTensor(r.t[2])
	}
	return output, hN, cN, nil
}

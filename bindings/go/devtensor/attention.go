package devtensor

// #include "attention_shim.h"
import "C"

import (
	"fmt"
	"runtime"
)

// PyTorch's defaults of TransformerEncoderLayer.
const (
	defaultDimFeedforward = 2048
	defaultEncoderDropout = 0.1
)

// ForwardOptional runs the module on inputs of which some may be nil, nil being PyTorch's
// None (passed to dt_module_forward as NULL): the attention modules' optional arguments.
// MultiheadAttention takes (query, key, value, keyPaddingMask, attnMask), 1 to 5 of them
// (a nil key: the query, self-attention; a nil value: the key); TransformerEncoderLayer
// and TransformerEncoder take (src, mask, srcKeyPaddingMask), 1 to 3. Trailing inputs
// may be left out or given as nil. Their bool masks are true where attention is NOT
// allowed (as PyTorch's; Tensor.ScaledDotProductAttention's bool mask is the opposite),
// float masks are added to the scores. Forward is the same call with every input
// required: it refuses a nil input before calling the library, which catches a forgotten
// tensor; ForwardOptional lets the library decide, so a nil is ErrInvalidArgument for a
// module without optional inputs (and for the first input of any module).
//
// Errors: as Forward; ErrInvalidArgument (a nil m, a nil input that is not optional, too
// many or too few inputs), ErrClosed (a closed m or input).
func (m *Module) ForwardOptional(inputs ...*Tensor) (*Tensor, error) {
	const op = "Module.ForwardOptional"
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	hs := make([]C.uintptr_t, len(inputs))
	for i, t := range inputs {
		if hs[i], err = optionalTensor(op, t); err != nil {
			return nil, err
		}
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	r := C.gdt_forward(h, p, C.size_t(len(hs)))
	runtime.KeepAlive(m)
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(hs)
	return takeTensor(op, r)
}

// ScaledDotProductAttention is torch.nn.functional.scaled_dot_product_attention(t, key,
// value, attnMask, is_causal=isCausal) (dt_scaled_dot_product_attention), t being the
// query: softmax(t keyᵀ / sqrt(E) + mask) value over the last two dims, batched (and
// broadcast) over the others: query [..., L, E], key [..., S, E], value [..., S, Ev]
// give [..., L, Ev].
//
// attnMask (nil: none), broadcast to [..., L, S]: bool, TRUE where the query MAY attend
// to the key (PyTorch's rule for this function, the OPPOSITE of MultiheadAttention's
// masks, where true forbids), or float, of the query's dtype, added to the scores (0
// allows, -Inf forbids). isCausal lets query i attend to keys 0..i only (then attnMask
// must be nil). A query that may attend to no key gives NaN, as PyTorch's.
// Differentiable (matmul, softmax).
//
// Errors: ErrInvalidArgument (a nil t, key or value; both attnMask and isCausal),
// ErrClosed, ErrShapeMismatch (sizes that do not fit, a mask that does not broadcast),
// ErrDTypeMismatch (not floating, a float mask of another dtype), ErrDeviceMismatch,
// ErrOutOfMemory.
func (t *Tensor) ScaledDotProductAttention(key, value, attnMask *Tensor, isCausal bool) (*Tensor, error) {
	const op = "Tensor.ScaledDotProductAttention"
	qh, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	kh, err := key.handle(op)
	if err != nil {
		return nil, err
	}
	vh, err := value.handle(op)
	if err != nil {
		return nil, err
	}
	mh, err := optionalTensor(op, attnMask)
	if err != nil {
		return nil, err
	}
	r := C.gdt_scaled_dot_product_attention(qh, kh, vh, mh, cBool(isCausal))
	runtime.KeepAlive(t)
	runtime.KeepAlive(key)
	runtime.KeepAlive(value)
	runtime.KeepAlive(attnMask)
	return takeTensor(op, r)
}

// MultiheadAttentionOptions are MultiheadAttention's optional arguments; the zero value
// is PyTorch's defaults: no dropout (0.0), biases (bias=True), inputs [L, N, E]
// (batch_first=False), the default dtype (SetDefaultDType) and device (SetDefaultDevice).
type MultiheadAttentionOptions struct {
	Dropout    float64 // the probability of zeroing an attention weight in training mode, in [0, 1]; 0: none
	NoBias     bool    // no "in_proj_bias" and "out_proj.bias" (bias=False)
	BatchFirst bool    // inputs [N, L, E] instead of [L, N, E] (batch_first=True)
	DType      DType   // the parameters' dtype (floating); DefaultDType: the process default
	Device     Device  // where they live; the zero Device: the process default
}

// MultiheadAttention is torch.nn.MultiheadAttention(embedDim, numHeads)
// (dt_multihead_attention_new) with dropout, bias, batch_first, dtype and device from
// opts (kdim = vdim = embedDim): parameters "in_proj_weight" [3 * embedDim, embedDim]
// (xavier-uniform) and "in_proj_bias" [3 * embedDim] (zeros), and the child "out_proj",
// a Linear ("out_proj.weight", "out_proj.bias", the bias zeros): PyTorch's keys, so its
// state_dict loads unchanged. Each head attends over embedDim / numHeads of the
// dimensions.
//
// Forward(query) is self-attention. ForwardOptional(query, key, value, keyPaddingMask,
// attnMask) takes PyTorch's optional arguments, nil for None: query [L, N, E] ([N, L, E]
// with BatchFirst; unbatched [L, E]), key and value [S, N, E] (nil key: the query; nil
// value: the key), keyPaddingMask [N, S] and attnMask [L, S] or [N * numHeads, L, S];
// bool masks are TRUE where attention is NOT allowed (as PyTorch's), float masks are
// added to the scores. The result is the attention output [L, N, E] only
// (need_weights=False); Module.AttentionWithWeights gives PyTorch's attention weights
// too. Dropout acts on the attention weights in training mode (a new module's;
// Module.Eval for inference). The caller owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (embedDim not a positive multiple of numHeads, Dropout
// outside [0, 1]), ErrDTypeMismatch (a dtype that is not floating), ErrInvalidDevice,
// ErrDeviceUnavailable, ErrOutOfMemory, ErrVersion (see CheckVersion). Forward:
// ErrShapeMismatch naming the module and the shapes (a query, key or value of another
// width than embedDim, a mask of the wrong shape), ErrDTypeMismatch (a float mask of
// another dtype), ErrDeviceMismatch, ErrInvalidArgument (more than 5 inputs).
func MultiheadAttention(embedDim, numHeads int64, opts MultiheadAttentionOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule("MultiheadAttention", C.gdt_multihead_attention_new(C.int64_t(embedDim), C.int64_t(numHeads),
		C.double(opts.Dropout), cBool(!opts.NoBias), cBool(opts.BatchFirst), C.dt_dtype(opts.DType), opts.Device.c()))
}

// AttentionWithWeights runs m, a MultiheadAttention, as PyTorch's forward with
// need_weights=True (dt_multihead_attention_forward): out is the attention output, what
// ForwardOptional(query, key, value, keyPaddingMask, attnMask) gives, and weights the
// attention weights, softmax(q kᵀ / sqrt(embedDim / numHeads) + mask) of the projected
// query q and key k of each head, after dropout in training mode (as PyTorch returns
// them). With averageAttnWeights (PyTorch's default, average_attn_weights=True) weights
// is their mean over the heads, [N, L, S] (unbatched [L, S]); without, one set per head,
// [N, numHeads, L, S] (unbatched [numHeads, L, S]); the batch comes first whatever
// BatchFirst says. Without dropout each row of weights (over S) sums to 1, with 0 where
// a mask forbids attention.
//
// key, value, keyPaddingMask and attnMask may be nil, PyTorch's None, as in
// ForwardOptional: a nil key is the query (self-attention), a nil value the key; query
// [L, N, E] ([N, L, E] with BatchFirst; unbatched [L, E]), key and value [S, N, E],
// keyPaddingMask [N, S], attnMask [L, S] or [N * numHeads, L, S]; bool masks are TRUE
// where attention is NOT allowed (as PyTorch's), float masks are added to the scores.
// Both results are part of the autograd graph. The caller owns both and must Close them;
// on error both are nil.
//
// Errors: ErrInvalidArgument (a nil m or query; m a module that is not a
// MultiheadAttention, the message naming its kind: "m is a Linear module, not a
// MultiheadAttention"), ErrClosed (a closed m or input), and the errors of
// MultiheadAttention's Forward: ErrShapeMismatch naming the module and the shapes (a
// query, key or value of another width than embedDim, a mask of the wrong shape),
// ErrDTypeMismatch (a float mask of another dtype), ErrDeviceMismatch, ErrOutOfMemory.
func (m *Module) AttentionWithWeights(query, key, value, keyPaddingMask, attnMask *Tensor,
	averageAttnWeights bool) (out, weights *Tensor, err error) {
	const op = "Module.AttentionWithWeights"
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	qh, err := query.handle(op)
	if err != nil {
		return nil, nil, err
	}
	var hs [4]C.uintptr_t // key, value, keyPaddingMask, attnMask: 0 for nil
	for i, t := range [4]*Tensor{key, value, keyPaddingMask, attnMask} {
		if hs[i], err = optionalTensor(op, t); err != nil {
			return nil, nil, err
		}
	}
	r := C.gdt_multihead_attention_forward(h, qh, hs[0], hs[1], hs[2], hs[3], cBool(averageAttnWeights))
	runtime.KeepAlive(m)
	runtime.KeepAlive(query)
	runtime.KeepAlive(key)
	runtime.KeepAlive(value)
	runtime.KeepAlive(keyPaddingMask)
	runtime.KeepAlive(attnMask)
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, nil, err
	}
	return newTensor(r.out), newTensor(r.weights), nil
}

// Activation is the activation of a TransformerEncoderLayer's feed-forward block,
// PyTorch's activation="relu" or "gelu".
type Activation int32

// The activations of TransformerEncoderLayerOptions.
const (
	ActivationReLU Activation = iota // "relu", max(x, 0): PyTorch's default (the zero value)
	ActivationGELU                   // "gelu", the exact erf form
)

// String returns PyTorch's name of a: "relu" or "gelu" (another value: "Activation(n)").
func (a Activation) String() string {
	switch a {
	case ActivationReLU:
		return "relu"
	case ActivationGELU:
		return "gelu"
	}
	return fmt.Sprintf("Activation(%d)", int32(a))
}

// TransformerEncoderLayerOptions are TransformerEncoderLayer's optional arguments; the
// zero value is PyTorch's defaults: dim_feedforward 2048, dropout 0.1, ReLU,
// layer_norm_eps 1e-5, inputs [S, N, E] (batch_first=False), post-norm
// (norm_first=False), the default dtype and device.
//
// Dropout is a pointer so that its zero value can mean PyTorch's 0.1 while 0 (no
// dropout) can still be asked for: p := 0.0; opts.Dropout = &p.
type TransformerEncoderLayerOptions struct {
	DimFeedforward int64      // the width of the feed-forward block (positive); 0: 2048
	Dropout        *float64   // in [0, 1], of the attention weights and the dropout modules in training mode; nil: 0.1
	Activation     Activation // of the feed-forward block; the zero value: ActivationReLU
	LayerNormEps   float64    // norm1's and norm2's eps (positive); 0: 1e-5
	BatchFirst     bool       // inputs [N, S, E] instead of [S, N, E] (batch_first=True)
	NormFirst      bool       // the layer norms before attention and feed-forward (pre-norm, norm_first=True)
	DType          DType      // the parameters' dtype (floating); DefaultDType: the process default
	Device         Device     // where they live; the zero Device: the process default
}

// TransformerEncoderLayer is torch.nn.TransformerEncoderLayer(dModel, nhead)
// (dt_transformer_encoder_layer_new) with dim_feedforward, dropout, activation,
// layer_norm_eps, batch_first, norm_first, dtype and device from opts: PyTorch's
// children and keys, "self_attn" (a MultiheadAttention), "linear1", "dropout",
// "linear2", "norm1", "norm2", "dropout1", "dropout2".
//
// Forward(src) runs it without masks; ForwardOptional(src, srcMask, srcKeyPaddingMask)
// takes PyTorch's optional masks, nil for None, as MultiheadAttention's (bool: TRUE where
// attention is NOT allowed): src [S, N, dModel] ([N, S, dModel] with BatchFirst), srcMask
// [S, S], srcKeyPaddingMask [N, S]. Post-norm (the default): x = norm1(x + sa(x)), then
// norm2(x + ff(x)); with NormFirst: x = x + sa(norm1(x)), then x + ff(norm2(x)). Dropout
// acts in training mode (a new module's; Module.Eval for inference). The caller owns the
// Module and must Close it.
//
// Errors: ErrInvalidArgument (dModel not a positive multiple of nhead, DimFeedforward
// negative, Dropout outside [0, 1], LayerNormEps negative, an unknown Activation),
// ErrDTypeMismatch, ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory, ErrVersion.
// Forward: as MultiheadAttention's, the message naming the attention module.
func TransformerEncoderLayer(dModel, nhead int64, opts TransformerEncoderLayerOptions) (*Module, error) {
	const op = "TransformerEncoderLayer"
	if versionErr != nil {
		return nil, versionErr
	}
	if opts.Activation != ActivationReLU && opts.Activation != ActivationGELU {
		return nil, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: fmt.Sprintf("activation must be ActivationReLU or ActivationGELU, got %v", opts.Activation)}
	}
	ff := opts.DimFeedforward
	if ff == 0 {
		ff = defaultDimFeedforward
	}
	p := defaultEncoderDropout
	if opts.Dropout != nil {
		p = *opts.Dropout
	}
	gelu := C.int(0)
	if opts.Activation == ActivationGELU {
		gelu = 1
	}
	return takeModule(op, C.gdt_transformer_encoder_layer_new(C.int64_t(dModel), C.int64_t(nhead), C.int64_t(ff),
		C.double(p), gelu, C.double(normEps(opts.LayerNormEps)), cBool(opts.BatchFirst), cBool(opts.NormFirst),
		C.dt_dtype(opts.DType), opts.Device.c()))
}

// TransformerEncoder is torch.nn.TransformerEncoder (dt_transformer_encoder_new): the
// layers (each a distinct TransformerEncoderLayer) run in order, then norm (nil for none;
// usually a LayerNorm), with PyTorch's keys "layers.<i>.…" and "norm.…". Forward(src) and
// ForwardOptional(src, mask, srcKeyPaddingMask) are the layers' and pass the masks to
// every layer.
//
// PyTorch's TransformerEncoder(encoder_layer, num_layers) deep-copies one layer; here
// each layer is a module of its own, made numLayers times (so each starts from its own
// random initialisation, unless a state dict is loaded).
//
// As Sequential, it takes ownership of the modules passed: closing the encoder closes
// them, so the caller does not Close them (doing so anyway is harmless: the encoder
// holds references of its own). They are its children, the same modules (not copies):
// the caller may keep using them until the encoder is closed. On error nothing is taken:
// the caller still owns the modules. The caller owns the result and must Close it.
//
// Errors: ErrInvalidArgument (no layers, a nil layer, a module that is not a
// TransformerEncoderLayer, one layer given twice), ErrClosed (a closed layer or norm),
// ErrOutOfMemory, ErrVersion.
func TransformerEncoder(layers []*Module, norm *Module) (*Module, error) {
	const op = "TransformerEncoder"
	if versionErr != nil {
		return nil, versionErr
	}
	hs := make([]C.uintptr_t, len(layers))
	for i, l := range layers {
		h, err := l.handle(op)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	var nh C.uintptr_t
	if norm != nil {
		var err error
		if nh, err = norm.handle(op); err != nil {
			return nil, err
		}
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	r := C.gdt_transformer_encoder_new(p, C.size_t(len(hs)), nh)
	runtime.KeepAlive(layers)
	runtime.KeepAlive(norm)
	runtime.KeepAlive(hs)
	enc, err := takeModule(op, r)
	if err != nil {
		return nil, err
	}
	enc.children = append([]*Module(nil), layers...)
	if norm != nil {
		enc.children = append(enc.children, norm)
	}
	return enc, nil
}

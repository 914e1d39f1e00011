package devtensor

// #include "norm_shim.h"
import "C"

import (
	"fmt"
	"runtime"
)

// PyTorch's defaults of the normalisation layers.
const (
	defaultNormEps      = 1e-5
	defaultBNMomentum   = 0.1
	cumulativeMomentum  = -1.0 // dt_batch_norm*_new: a negative momentum is PyTorch's None
	noPaddingIdx        = C.DT_PADDING_IDX_NONE
	moduleOnlyFieldsMsg = "are the modules' options (the functional form takes the tensors' dtype and device)"
)

func normEps(eps float64) float64 {
	if eps == 0 {
		return defaultNormEps
	}
	return eps
}

func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// optionalTensor is the handle of t, or 0 for a nil t (an argument the C call takes as
// NULL).
func optionalTensor(op string, t *Tensor) (C.uintptr_t, error) {
	if t == nil {
		return 0, nil
	}
	return t.handle(op)
}

// BatchNormOptions are the optional arguments of BatchNorm1d, BatchNorm2d and
// Tensor.BatchNorm; the zero value is PyTorch's defaults: eps 1e-5, momentum 0.1, a
// weight and a bias (affine=True), running statistics (track_running_stats=True), the
// default dtype (SetDefaultDType) and the default device (SetDefaultDevice), and for the
// functional form evaluation (training=False).
//
// Momentum is a pointer so that its zero value can mean PyTorch's 0.1 while any value,
// 0 included, can still be asked for: m := 0.01; opts.Momentum = &m. PyTorch's
// momentum=None (the running statistics are the cumulative average over every batch
// seen, by num_batches_tracked) is Cumulative.
type BatchNormOptions struct {
	Eps                 float64  // added to the variance (positive); 0: 1e-5
	Momentum            *float64 // the running statistics' update factor, in [0, 1]; nil: 0.1
	Cumulative          bool     // modules only: PyTorch's momentum=None, the cumulative moving average (Momentum must be nil)
	NoAffine            bool     // modules only: no "weight" and "bias" (affine=False)
	NoTrackRunningStats bool     // modules only: no running statistics (track_running_stats=False): batch statistics in eval mode too
	Training            bool     // Tensor.BatchNorm only: batch statistics, updating the running ones in place (training=True)
	DType               DType    // modules only: the dtype of the parameters and running statistics (floating); DefaultDType: the process default
	Device              Device   // modules only: where they live; the zero Device: the process default
}

func (o *BatchNormOptions) momentum(op string) (float64, error) {
	switch {
	case o.Cumulative && o.Momentum != nil:
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "Cumulative (momentum=None) with a Momentum"}
	case o.Cumulative:
		return cumulativeMomentum, nil
	case o.Momentum == nil:
		return defaultBNMomentum, nil
	case !(*o.Momentum >= 0 && *o.Momentum <= 1):
		// The C API reads a negative momentum as None: refuse it here, Cumulative says so.
		return 0, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: fmt.Sprintf("momentum must be in [0, 1] (Cumulative for PyTorch's None), got %v", *o.Momentum)}
	}
	return *o.Momentum, nil
}

func batchNormModule(op string, twoD C.int, numFeatures int64, o BatchNormOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	if o.Training {
		return nil, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: "Training is the functional form's option; a module's mode is Module.Train / Module.Eval"}
	}
	m, err := o.momentum(op)
	if err != nil {
		return nil, err
	}
	return takeModule(op, C.gdt_batch_norm_new(twoD, C.int64_t(numFeatures), C.double(normEps(o.Eps)), C.double(m),
		cBool(!o.NoAffine), cBool(!o.NoTrackRunningStats), C.dt_dtype(o.DType), o.Device.c()))
}

// BatchNorm1d is torch.nn.BatchNorm1d(numFeatures) (dt_batch_norm1d_new) with eps,
// momentum, affine, track_running_stats, dtype and device from opts: parameters "weight"
// (ones) and "bias" (zeros) [numFeatures] unless NoAffine, buffers "running_mean"
// (zeros), "running_var" (ones) [numFeatures] and "num_batches_tracked" (int64, 0-d)
// unless NoTrackRunningStats — PyTorch's names, so its state_dict loads unchanged.
// Forward takes [N, C] or [N, C, L]: in training mode (Module.Train, the default) it
// normalises with the batch's statistics and updates the buffers in place
// (num_batches_tracked += 1; the running variance is the unbiased one); in eval mode
// (Module.Eval) it uses the running statistics. Tensors taken from Buffers see the
// updates. The caller owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (numFeatures or Eps not positive, Momentum outside [0, 1],
// Cumulative with a Momentum, Training set), ErrDTypeMismatch (a dtype that is not
// floating), ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory, ErrVersion (see
// CheckVersion). Forward: ErrShapeMismatch naming the module and the input's size (a
// wrong rank, a wrong channel count, a single value per channel in training mode),
// ErrDTypeMismatch, ErrDeviceMismatch.
func BatchNorm1d(numFeatures int64, opts BatchNormOptions) (*Module, error) {
	return batchNormModule("BatchNorm1d", 0, numFeatures, opts)
}

// BatchNorm2d is torch.nn.BatchNorm2d(numFeatures) (dt_batch_norm2d_new): as BatchNorm1d,
// for inputs [N, C, H, W], each channel normalised over N, H and W. The caller owns the
// Module and must Close it.
//
// Errors: as BatchNorm1d.
func BatchNorm2d(numFeatures int64, opts BatchNormOptions) (*Module, error) {
	return batchNormModule("BatchNorm2d", 1, numFeatures, opts)
}

// BatchNorm is torch.nn.functional.batch_norm(t, runningMean, runningVar, weight, bias,
// training, momentum, eps) (dt_batch_norm): t [N, C, ...] normalised per channel c to (x
// - mean_c) / sqrt(var_c + eps) * weight_c + bias_c. weight, bias, runningMean and
// runningVar are [C] tensors of t's dtype on its device, or nil (both running ones or
// neither). With opts.Training the statistics are the batch's (over every dim but 1,
// the variance biased), and runningMean and runningVar, when given, are updated IN PLACE,
// as PyTorch does: running = (1 - momentum) * running + momentum * batch, with the
// unbiased batch variance. Without it (evaluation) they are the statistics used, and
// required. Eps and Momentum from opts (the module-only fields must be zero).
// Differentiable in t, weight and bias (NativeBatchNormBackward0).
//
// Errors: ErrInvalidArgument (a nil t, one running tensor without the other, evaluation
// without them, Eps not positive, a module-only option set), ErrClosed,
// ErrShapeMismatch (fewer than 2 dims, a [C] tensor of another size, one value per
// channel when training), ErrDTypeMismatch (not floating, dtypes differ),
// ErrDeviceMismatch, ErrOutOfMemory.
func (t *Tensor) BatchNorm(runningMean, runningVar, weight, bias *Tensor, opts BatchNormOptions) (*Tensor, error) {
	const op = "Tensor.BatchNorm"
	if opts.Cumulative || opts.NoAffine || opts.NoTrackRunningStats || opts.DType != DefaultDType || opts.Device != (Device{}) {
		return nil, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: "Cumulative, NoAffine, NoTrackRunningStats, DType and Device " + moduleOnlyFieldsMsg}
	}
	m, err := opts.momentum(op)
	if err != nil {
		return nil, err
	}
	ih, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	var hs [4]C.uintptr_t
	for i, x := range []*Tensor{runningMean, runningVar, weight, bias} {
		if hs[i], err = optionalTensor(op, x); err != nil {
			return nil, err
		}
	}
	r := C.gdt_batch_norm(ih, hs[0], hs[1], hs[2], hs[3], cBool(opts.Training), C.double(m), C.double(normEps(opts.Eps)))
	runtime.KeepAlive(t)
	runtime.KeepAlive(runningMean)
	runtime.KeepAlive(runningVar)
	runtime.KeepAlive(weight)
	runtime.KeepAlive(bias)
	return takeTensor(op, r)
}

// LayerNormOptions are the optional arguments of LayerNorm and Tensor.LayerNorm; the
// zero value is PyTorch's defaults: eps 1e-5, a weight and a bias
// (elementwise_affine=True, bias=True), the default dtype and device.
type LayerNormOptions struct {
	Eps                 float64 // added to the variance (positive); 0: 1e-5
	NoElementwiseAffine bool    // LayerNorm only: no "weight" and no "bias" (elementwise_affine=False)
	NoBias              bool    // LayerNorm only: a "weight" but no "bias" (bias=False)
	DType               DType   // LayerNorm only: the parameters' dtype (floating); DefaultDType: the process default
	Device              Device  // LayerNorm only: where they live; the zero Device: the process default
}

// LayerNorm is torch.nn.LayerNorm(normalizedShape) (dt_layer_norm_new) with eps,
// elementwise_affine, bias, dtype and device from opts: parameters "weight" (ones) and
// "bias" (zeros) of shape normalizedShape. Forward normalises each input over its last
// len(normalizedShape) dims, which must be normalizedShape, as Tensor.LayerNorm; it is
// the same in training and eval mode. The caller owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (an empty or non-positive normalizedShape, Eps not
// positive), ErrDTypeMismatch, ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory,
// ErrVersion (see CheckVersion). Forward: ErrShapeMismatch naming the module and the
// shapes, ErrDTypeMismatch, ErrDeviceMismatch.
func LayerNorm(normalizedShape []int64, opts LayerNormOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	p, n := shapeArg(normalizedShape)
	r := C.gdt_layer_norm_new(p, n, C.double(normEps(opts.Eps)), cBool(!opts.NoElementwiseAffine), cBool(!opts.NoBias),
		C.dt_dtype(opts.DType), opts.Device.c())
	runtime.KeepAlive(normalizedShape)
	return takeModule("LayerNorm", r)
}

// LayerNorm is torch.nn.functional.layer_norm(t, normalizedShape, weight, bias, eps)
// (dt_layer_norm): t normalised over its last len(normalizedShape) dims, which must be
// normalizedShape (mean 0, biased variance 1), then times weight plus bias (each nil or
// of shape normalizedShape). Eps from opts (the other fields must be zero).
// Differentiable (NativeLayerNormBackward0).
//
// Errors: ErrInvalidArgument (a nil t, Eps not positive, a LayerNorm-only option set),
// ErrClosed, ErrShapeMismatch (the last dims are not normalizedShape, weight or bias of
// another shape), ErrDTypeMismatch (not floating, dtypes differ), ErrDeviceMismatch,
// ErrOutOfMemory.
func (t *Tensor) LayerNorm(normalizedShape []int64, weight, bias *Tensor, opts LayerNormOptions) (*Tensor, error) {
	const op = "Tensor.LayerNorm"
	if opts.NoElementwiseAffine || opts.NoBias || opts.DType != DefaultDType || opts.Device != (Device{}) {
		return nil, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: "NoElementwiseAffine, NoBias, DType and Device are LayerNorm's (the module's) options; pass nil weight or bias instead"}
	}
	ih, wh, bh, err := inputHandles(op, t, weight, bias, true)
	if err != nil {
		return nil, err
	}
	p, n := shapeArg(normalizedShape)
	r := C.gdt_layer_norm(ih, p, n, wh, bh, C.double(normEps(opts.Eps)))
	runtime.KeepAlive(t)
	runtime.KeepAlive(weight)
	runtime.KeepAlive(bias)
	runtime.KeepAlive(normalizedShape)
	return takeTensor(op, r)
}

// GroupNormOptions are the optional arguments of GroupNorm and Tensor.GroupNorm; the
// zero value is PyTorch's defaults: eps 1e-5, a weight and a bias (affine=True), the
// default dtype and device.
type GroupNormOptions struct {
	Eps      float64 // added to the variance (positive); 0: 1e-5
	NoAffine bool    // GroupNorm only: no "weight" and "bias" (affine=False)
	DType    DType   // GroupNorm only: the parameters' dtype (floating); DefaultDType: the process default
	Device   Device  // GroupNorm only: where they live; the zero Device: the process default
}

// GroupNorm is torch.nn.GroupNorm(numGroups, numChannels) (dt_group_norm_new) with eps,
// affine, dtype and device from opts: parameters "weight" (ones) and "bias" (zeros)
// [numChannels]. Forward takes [N, C, ...] with C = numChannels, as Tensor.GroupNorm;
// it is the same in training and eval mode. The caller owns the Module and must Close
// it.
//
// Errors: ErrInvalidArgument (numChannels not a positive multiple of numGroups, Eps not
// positive), ErrDTypeMismatch, ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory,
// ErrVersion (see CheckVersion). Forward: ErrShapeMismatch naming the module and the
// input's size, ErrDTypeMismatch, ErrDeviceMismatch.
func GroupNorm(numGroups, numChannels int64, opts GroupNormOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule("GroupNorm", C.gdt_group_norm_new(C.int64_t(numGroups), C.int64_t(numChannels),
		C.double(normEps(opts.Eps)), cBool(!opts.NoAffine), C.dt_dtype(opts.DType), opts.Device.c()))
}

// GroupNorm is torch.nn.functional.group_norm(t, numGroups, weight, bias, eps)
// (dt_group_norm): t [N, C, ...] with its C channels split into numGroups groups, each
// normalised over its channels and every dim after 1, then times weight plus bias (each
// nil or [C]). Eps from opts (the other fields must be zero). Differentiable
// (NativeGroupNormBackward0).
//
// Errors: ErrInvalidArgument (a nil t, Eps not positive, a GroupNorm-only option set),
// ErrClosed, ErrShapeMismatch (fewer than 2 dims, C not a multiple of numGroups, weight
// or bias not [C]), ErrDTypeMismatch, ErrDeviceMismatch, ErrOutOfMemory.
func (t *Tensor) GroupNorm(numGroups int64, weight, bias *Tensor, opts GroupNormOptions) (*Tensor, error) {
	const op = "Tensor.GroupNorm"
	if opts.NoAffine || opts.DType != DefaultDType || opts.Device != (Device{}) {
		return nil, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: "NoAffine, DType and Device are GroupNorm's (the module's) options; pass nil weight and bias instead"}
	}
	ih, wh, bh, err := inputHandles(op, t, weight, bias, true)
	if err != nil {
		return nil, err
	}
	r := C.gdt_group_norm(ih, C.int64_t(numGroups), wh, bh, C.double(normEps(opts.Eps)))
	runtime.KeepAlive(t)
	runtime.KeepAlive(weight)
	runtime.KeepAlive(bias)
	return takeTensor(op, r)
}

// EmbeddingOptions are the optional arguments of Embedding and Tensor.Embedding; the
// zero value is PyTorch's defaults: no padding index (padding_idx=None), the default
// dtype and device. PaddingIdx is a pointer because row 0 is a common padding row:
// pad := int64(0); opts.PaddingIdx = &pad.
type EmbeddingOptions struct {
	PaddingIdx *int64 // the row that gets no gradient (Embedding: zeroed at first; negative counts from the end); nil: none
	DType      DType  // Embedding only: the weight's dtype (floating); DefaultDType: the process default
	Device     Device // Embedding only: where it lives; the zero Device: the process default
}

func (o *EmbeddingOptions) paddingIdx() C.int64_t {
	if o.PaddingIdx == nil {
		return noPaddingIdx
	}
	return C.int64_t(*o.PaddingIdx)
}

// Embedding is torch.nn.Embedding(numEmbeddings, embeddingDim) (dt_embedding_new) with
// padding_idx, dtype and device from opts: parameter "weight" [numEmbeddings,
// embeddingDim] drawn from N(0, 1) (the device's Philox generator, ManualSeed), its row
// PaddingIdx zeroed (a negative PaddingIdx counts from the end: -1 is the last row).
// Forward takes integer indices (int64 or int32) of any shape and gives their rows, of
// shape indices' shape + [embeddingDim], as Tensor.Embedding; the padding row gets no
// gradient. The caller owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (sizes not positive, PaddingIdx outside [-numEmbeddings,
// numEmbeddings)), ErrDTypeMismatch, ErrInvalidDevice, ErrDeviceUnavailable,
// ErrOutOfMemory, ErrVersion (see CheckVersion). Forward: as Tensor.Embedding, the
// message naming the module.
func Embedding(numEmbeddings, embeddingDim int64, opts EmbeddingOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule("Embedding", C.gdt_embedding_new(C.int64_t(numEmbeddings), C.int64_t(embeddingDim),
		opts.paddingIdx(), C.dt_dtype(opts.DType), opts.Device.c()))
}

// Embedding is torch.nn.functional.embedding(t, weight, padding_idx) (dt_embedding): the
// rows of weight [numEmbeddings, dim] that the integer indices t (int64 or int32, any
// shape) name, of shape t's shape + [dim]. opts.PaddingIdx (in [0, numEmbeddings), or
// nil) names a row that gets no gradient; DType and Device must be zero.
// Differentiable in weight (EmbeddingBackward0).
//
// Errors: ErrInvalidArgument (a nil t or weight, an index outside [0, numEmbeddings)
// naming it, PaddingIdx outside, DType or Device set), ErrClosed, ErrShapeMismatch
// (weight not 2-d), ErrDTypeMismatch (indices not int64 or int32), ErrDeviceMismatch,
// ErrOutOfMemory.
func (t *Tensor) Embedding(weight *Tensor, opts EmbeddingOptions) (*Tensor, error) {
	const op = "Tensor.Embedding"
	if opts.DType != DefaultDType || opts.Device != (Device{}) {
		return nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: "DType and Device " + moduleOnlyFieldsMsg}
	}
	ih, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	wh, err := weight.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_embedding(ih, wh, opts.paddingIdx())
	runtime.KeepAlive(t)
	runtime.KeepAlive(weight)
	return takeTensor(op, r)
}

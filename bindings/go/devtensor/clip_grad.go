package devtensor

// #include "nn_shim.h"
import "C"

import "runtime"

// tensorHandles returns the handles of ts (Go memory holding integers only, for one C
// call) and a pointer to the first, nil when ts is empty.
func tensorHandles(op string, ts []*Tensor) ([]C.uintptr_t, *C.uintptr_t, error) {
	hs := make([]C.uintptr_t, len(ts))
	for i, t := range ts {
		var err error
		if hs[i], err = t.handle(op); err != nil {
			return nil, nil, err
		}
	}
	if len(hs) == 0 {
		return hs, nil, nil
	}
	return hs, &hs[0], nil
}

// ClipGradNorm is torch.nn.utils.clip_grad_norm_(params, maxNorm, normType,
// errorIfNonfinite) (dt_clip_grad_norm_): it takes the normType norm of the gradients
// of all of params together (as if concatenated into one vector) and, when it exceeds
// maxNorm, scales every gradient IN PLACE by maxNorm / (norm + 1e-6). normType 2 is the
// Euclidean norm (PyTorch's default); math.Inf(1) is the infinity norm, the largest
// magnitude of any element. params are as an optimizer's (a []*Tensor, or
// Module.Parameters' result as it is); parameters without a gradient are skipped (with
// none at all the norm is 0).
//
// It returns the total norm (before clipping) as a new 0-d Tensor, which the caller
// closes, on the first gradient's device and in its dtype (half and bfloat16 accumulate
// in float32). Without errorIfNonfinite nothing waits for the device, so a training step
// stays asynchronous (and can be captured into a Graph), and a NaN or infinite norm
// scales the gradients by NaN, as PyTorch's default does; with errorIfNonfinite such a
// norm is ErrInvalidArgument and no gradient is changed.
//
// Errors: ErrInvalidArgument (a negative or NaN maxNorm, a normType that is not
// positive, a non-finite norm with errorIfNonfinite, a nil Tensor), ErrClosed (a closed
// Tensor), ErrInvalidHandle, ErrOutOfMemory, ErrVersion.
func ClipGradNorm[P Params](params P, maxNorm, normType float64, errorIfNonfinite bool) (*Tensor, error) {
	const op = "ClipGradNorm"
	if versionErr != nil {
		return nil, versionErr
	}
	ts := paramTensors(params)
	hs, p, err := tensorHandles(op, ts)
	if err != nil {
		return nil, err
	}
	r := C.gdt_clip_grad_norm(p, C.size_t(len(hs)), C.double(maxNorm), C.double(normType), cBool(errorIfNonfinite))
	runtime.KeepAlive(ts)
	runtime.KeepAlive(hs)
	return takeTensor(op, r)
}

// ClipGradValue is torch.nn.utils.clip_grad_value_(params, clipValue)
// (dt_clip_grad_value_): it clamps every gradient of params IN PLACE to [-clipValue,
// clipValue]; parameters without a gradient are skipped. params are as ClipGradNorm's.
// Errors: ErrInvalidArgument (a negative or NaN clipValue, a nil Tensor), ErrClosed (a
// closed Tensor), ErrInvalidHandle, ErrVersion.
func ClipGradValue[P Params](params P, clipValue float64) error {
	const op = "ClipGradValue"
	if versionErr != nil {
		return versionErr
	}
	ts := paramTensors(params)
	hs, p, err := tensorHandles(op, ts)
	if err != nil {
		return err
	}
	r := C.gdt_clip_grad_value(p, C.size_t(len(hs)), C.double(clipValue))
	runtime.KeepAlive(ts)
	runtime.KeepAlive(hs)
	return resErr(op, r)
}

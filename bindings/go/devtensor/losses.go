package devtensor

// #include "nn_shim.h"
import "C"

import "runtime"

// The pointwise losses: L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss and
// KLDivLoss, as torch.nn's. Each returns a Module whose Forward takes (input, target)
// of the same shape (PyTorch broadcasts some of them with a warning; devtensor refuses:
// ErrShapeMismatch, the message naming both shapes). The input is floating; the target
// may be of any dtype and is converted to the input's (so 0/1 labels may be int64); both
// may require grad, and Backward follows PyTorch's formulas. Forward's other errors:
// ErrDTypeMismatch (an integer input), ErrDeviceMismatch (input, target or weights on
// different devices).

// L1Loss returns a new torch.nn.L1Loss(reduction) module, |input - target| elementwise
// then reduced by r (ReductionMean, the zero value, is PyTorch's default), with no
// parameters (dt_l1_loss_new). Forward takes (input, target) of the same shape. The
// caller owns the Module and must Close it. Errors: ErrInvalidArgument (an unknown
// Reduction, or ReductionBatchMean, which only KLDivLoss takes), ErrOutOfMemory,
// ErrVersion (see CheckVersion).
func L1Loss(r Reduction) (*Module, error) {
	return simpleModule("L1Loss", C.GDT_M_L1, int64(r.c()), 0, 0)
}

// SmoothL1Loss returns a new torch.nn.SmoothL1Loss(reduction, beta) module
// (dt_smooth_l1_loss_new): with d = input - target, 0.5 d^2 / beta where |d| < beta,
// else |d| - 0.5 beta, reduced by r. PyTorch's default beta is 1; beta 0 is L1Loss.
// Forward takes (input, target) of the same shape. The caller owns the Module and must
// Close it. Errors: ErrInvalidArgument (beta negative, NaN or infinite; a Reduction as
// L1Loss's), ErrOutOfMemory, ErrVersion.
func SmoothL1Loss(r Reduction, beta float64) (*Module, error) {
	return simpleModule("SmoothL1Loss", C.GDT_M_SMOOTH_L1, int64(r.c()), 0, beta)
}

// HuberLoss returns a new torch.nn.HuberLoss(reduction, delta) module
// (dt_huber_loss_new): with d = input - target, 0.5 d^2 where |d| < delta, else
// delta (|d| - 0.5 delta), reduced by r (SmoothL1Loss(r, beta) times beta, for beta =
// delta). PyTorch's default delta is 1. Forward takes (input, target) of the same shape.
// The caller owns the Module and must Close it. Errors: ErrInvalidArgument (delta not
// positive, NaN or infinite; a Reduction as L1Loss's), ErrOutOfMemory, ErrVersion.
func HuberLoss(r Reduction, delta float64) (*Module, error) {
	return simpleModule("HuberLoss", C.GDT_M_HUBER, int64(r.c()), 0, delta)
}

// BCELossOptions are torch.nn.BCELoss's keyword arguments; the zero value is PyTorch's
// defaults (no weight, reduction "mean").
type BCELossOptions struct {
	Weight    *Tensor   // floating, broadcastable to the input's shape, rescales each element's loss; copied into the "weight" buffer; nil: none
	Reduction Reduction // the zero value ReductionMean: PyTorch's default
}

// BCELoss returns a new torch.nn.BCELoss module (dt_bce_loss_new): the binary cross
// entropy -weight (target log(input) + (1 - target) log(1 - input)) of input
// probabilities, each log clamped at -100 as PyTorch's (so an input of 0 or 1 gives a
// finite loss). Forward takes (probabilities, targets) of the same shape and fails with
// ErrInvalidArgument when an input element lies outside [0, 1] or is NaN. Prefer
// BCEWithLogitsLoss on logits: it is exact where sigmoid would round to 0 or 1.
//
// opts.Weight is copied into the loss's "weight" buffer, so the caller still owns (and
// closes) it; Module.To moves the buffer with the module. The caller owns the result and
// must Close it. Errors: ErrInvalidArgument (an unknown Reduction, or
// ReductionBatchMean), ErrDTypeMismatch (a Weight that is not floating), ErrClosed (a
// closed Weight), ErrOutOfMemory, ErrVersion.
func BCELoss(opts BCELossOptions) (*Module, error) {
	const op = "BCELoss"
	if versionErr != nil {
		return nil, versionErr
	}
	w, err := optionalTensor(op, opts.Weight)
	if err != nil {
		return nil, err
	}
	r := C.gdt_bce(w, opts.Reduction.c())
	runtime.KeepAlive(opts.Weight)
	return takeModule(op, r)
}

// BCEWithLogitsLossOptions are torch.nn.BCEWithLogitsLoss's keyword arguments; the zero
// value is PyTorch's defaults (no weight, no pos_weight, reduction "mean").
type BCEWithLogitsLossOptions struct {
	Weight    *Tensor   // as BCELossOptions.Weight; copied into the "weight" buffer; nil: none
	PosWeight *Tensor   // weighs the positive term: floating, broadcastable to the input's shape, typically one weight per class (the last dim), > 1 raising recall; copied into the "pos_weight" buffer; nil: none
	Reduction Reduction // the zero value ReductionMean: PyTorch's default
}

// BCEWithLogitsLoss returns a new torch.nn.BCEWithLogitsLoss module
// (dt_bce_with_logits_loss_new): sigmoid and binary cross entropy in one numerically
// stable formula, -weight (posWeight target log sigmoid(input) + (1 - target)
// log(1 - sigmoid(input))). Forward takes (logits, targets) of the same shape.
//
// opts.Weight and opts.PosWeight are copied into the buffers "weight" and "pos_weight"
// (only those given, as PyTorch's state_dict), so the caller still owns (and closes)
// them. The caller owns the result and must Close it. Errors: as BCELoss's, for either
// tensor.
func BCEWithLogitsLoss(opts BCEWithLogitsLossOptions) (*Module, error) {
	const op = "BCEWithLogitsLoss"
	if versionErr != nil {
		return nil, versionErr
	}
	w, err := optionalTensor(op, opts.Weight)
	if err != nil {
		return nil, err
	}
	pw, err := optionalTensor(op, opts.PosWeight)
	if err != nil {
		return nil, err
	}
	r := C.gdt_bce_with_logits(w, pw, opts.Reduction.c())
	runtime.KeepAlive(opts.Weight)
	runtime.KeepAlive(opts.PosWeight)
	return takeModule(op, r)
}

// KLDivLoss returns a new torch.nn.KLDivLoss(reduction, log_target) module
// (dt_kl_div_loss_new). Forward takes (input, target) of the same shape, the input
// holding log-probabilities and the target probabilities (logTarget false: target
// (log target - input) elementwise, 0 where the target is 0) or log-probabilities
// (logTarget true: exp(target) (target - input)). r may also be ReductionBatchMean, the
// mathematical KL divergence per sample (the sum divided by the batch size, the input's
// first dim), which PyTorch recommends; ReductionMean divides by every element, as
// PyTorch's "mean". The caller owns the Module and must Close it. Errors:
// ErrInvalidArgument (an unknown Reduction), ErrOutOfMemory, ErrVersion.
func KLDivLoss(r Reduction, logTarget bool) (*Module, error) {
	return simpleModule("KLDivLoss", C.GDT_M_KL_DIV, int64(r.c()), int64(cBool(logTarget)), 0)
}

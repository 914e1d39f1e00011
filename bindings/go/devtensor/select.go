package devtensor

// #include "shim.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// The ops that keep some elements and replace the others (MaskedFill, Clamp, Triu,
// Tril), padding (Pad), reordering and tiling (Flip, Roll, Repeat), resizing
// (Interpolate), the spread reductions (Var, Std) and the truth-value ops (IsNaN,
// IsInf, IsFinite, LogicalNot, LogicalAnd, LogicalOr, LogicalXor, Any, All: bool
// results, not differentiable). Each result is a new tensor, the caller's to Close,
// recorded by autograd as PyTorch's op is.

// MaskedFill returns t with value wherever the bool mask is true, as torch.masked_fill
// (out of place; mask broadcasts with t, and the result has their broadcast shape). The
// value converts to t's dtype as a cast would (2.5 into int64 is 2); a value an integer
// dtype cannot hold (300 into int8) is ErrInvalidArgument, as in PyTorch. Errors:
// ErrDTypeMismatch for a mask that is not bool, ErrShapeMismatch for shapes that do not
// broadcast, ErrDeviceMismatch, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a
// closed or nil tensor.
func (t *Tensor) MaskedFill(mask *Tensor, value float64) (*Tensor, error) {
	const op = "Tensor.MaskedFill"
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	m, err := mask.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_masked_fill(a, m, C.double(value))
	runtime.KeepAlive(t)
	runtime.KeepAlive(mask)
	return takeTensor(op, r)
}

func (t *Tensor) clamp(op string, hasLo bool, lo float64, hasHi bool, hi float64) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_clamp(a, cBool(hasLo), C.double(lo), cBool(hasHi), C.double(hi))
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// Clamp returns every element of t limited to [min, max], as torch.clamp: NaN stays
// NaN, and when min > max every element is max. Integral bounds keep an integer dtype,
// fractional ones make it the default float dtype (comparing with both bounds as given),
// as in PyTorch. The gradient passes where min <= x <= max. Errors: ErrInvalidArgument
// for an integral bound an integer result dtype cannot hold (int8 clamped to 200),
// ErrDTypeMismatch, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Clamp(min, max float64) (*Tensor, error) {
	return t.clamp("Tensor.Clamp", true, min, true, max)
}

// ClampMin returns every element of t raised to at least min, as torch.clamp(t,
// min=min). Errors: as Clamp.
func (t *Tensor) ClampMin(min float64) (*Tensor, error) {
	return t.clamp("Tensor.ClampMin", true, min, false, 0)
}

// ClampMax returns every element of t lowered to at most max, as torch.clamp(t,
// max=max). Errors: as Clamp.
func (t *Tensor) ClampMax(max float64) (*Tensor, error) {
	return t.clamp("Tensor.ClampMax", false, 0, true, max)
}

// PadMode is how Tensor.Pad fills the new elements, torch.nn.functional.pad's mode=
// "constant", "reflect", "replicate" or "circular".
type PadMode int32

// The modes of Tensor.Pad.
const (
	PadConstant  PadMode = iota // "constant": the value given (PyTorch's default; the zero value)
	PadReflect                  // "reflect": mirrored about the edge element, not repeating it
	PadReplicate                // "replicate": the edge element repeated
	PadCircular                 // "circular": wrapped around, the other end's elements
)

// String returns PyTorch's name of m: "constant", "reflect", "replicate" or "circular"
// (another value: "PadMode(n)").
func (m PadMode) String() string {
	switch m {
	case PadConstant:
		return "constant"
	case PadReflect:
		return "reflect"
	case PadReplicate:
		return "replicate"
	case PadCircular:
		return "circular"
	}
	return fmt.Sprintf("PadMode(%d)", int32(m))
}

func (m PadMode) c() C.int {
	switch m {
	case PadReflect:
		return C.GDT_PAD_REFLECT
	case PadReplicate:
		return C.GDT_PAD_REPLICATE
	case PadCircular:
		return C.GDT_PAD_CIRCULAR
	}
	return C.GDT_PAD_CONSTANT
}

// Pad returns a padded copy of t, as torch.nn.functional.pad(t, pad, mode, value)
// (dt_pad). pad holds pairs (before, after) starting from the LAST dim and going
// backwards, as PyTorch's: {1, 2} pads the last dim by 1 before and 2 after, {1, 2, 3,
// 4} also the dim before it by 3 and 4; len(pad) is even and at most 2 * t's number of
// dims (nil or empty: a copy). A negative value removes that many elements instead
// (crops). The modes:
//
//   - PadConstant: the new elements are value, converted to t's dtype as MaskedFill's;
//   - PadReflect: mirrored about the edge element, not repeating it ([1, 2, 3] padded by
//     {2, 0}: [3, 2, 1, 2, 3]); each pad below the dim's size;
//   - PadReplicate: the edge element repeated ([1, 2, 3] by {1, 2}: [1, 1, 2, 3, 3, 3]);
//     the dim not empty;
//   - PadCircular: wrapped around, the other end's elements ([1, 2, 3] by {1, 1}: [3, 1,
//     2, 3, 1]); each pad at most the dim's size.
//
// The modes other than PadConstant pad any dims of a tensor of any rank (PyTorch's, the
// last 1 to 3 dims of a 1-d to 3-d input, batched or not; where both accept, the
// results are equal) and take no value: pass 0 (a nonzero value is refused, as in
// PyTorch). Any dtype. Differentiable: the gradient of PadConstant's result is the
// matching slice of the incoming one (grad_fn ConstantPadNdBackward0), the other modes'
// add up the gradients of every copy of an element. The modes other than PadConstant
// build their index lists on the host and copy them to t's device, which a graph
// capture on a device refuses.
//
// The caller owns the result and must Close it. pad is only read during the call.
//
// Errors: ErrInvalidArgument (len(pad) odd or over 2 * t's number of dims, a mode that
// is none of the four, a pad its mode does not allow or that leaves a negative size,
// the message naming the dim and the sizes, a value t's integer dtype cannot hold, a
// nonzero value for a mode other than PadConstant), ErrOutOfMemory; ErrClosed or
// ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Pad(pad []int64, mode PadMode, value float64) (*Tensor, error) {
	const op = "Tensor.Pad"
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	if mode < PadConstant || mode > PadCircular {
		return nil, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: fmt.Sprintf("mode must be PadConstant, PadReflect, PadReplicate or PadCircular, got %v", mode)}
	}
	p, n := shapeArg(pad)
	r := C.gdt_pad(a, p, n, mode.c(), C.double(value))
	runtime.KeepAlive(t)
	runtime.KeepAlive(pad)
	return takeTensor(op, r)
}

func (t *Tensor) reorder(op string, code C.int, a, b []int64) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	pa, na := shapeArg(a)
	pb, nb := shapeArg(b)
	r := C.gdt_reorder(code, h, pa, na, pb, nb)
	runtime.KeepAlive(t)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return takeTensor(op, r)
}

// Flip returns a copy of t with the order of its elements reversed along each of dims,
// as torch.flip(t, dims) (dt_flip): [[0, 1, 2], [3, 4, 5]] flipped along 0 and 1 is [[5,
// 4, 3], [2, 1, 0]]. A negative dim counts from the end. No dims: an unchanged copy; a
// 0-d tensor is its own flip. Any dtype. Differentiable: the gradient is the incoming
// one flipped back (grad_fn FlipBackward0). The caller owns the result and must Close
// it; dims is only read during the call. Errors: ErrInvalidArgument for a dim out of
// range or repeated, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a closed or nil
// t.
func (t *Tensor) Flip(dims ...int64) (*Tensor, error) {
	return t.reorder("Tensor.Flip", C.GDT_R_FLIP, dims, nil)
}

// Roll returns a copy of t with its elements shifted along dims[i] by shifts[i], as
// torch.roll(t, shifts, dims) (dt_roll): those that leave at one end come back at the
// other. A shift may be any int64, taken modulo the dim's size; a negative one moves
// towards the start. With no dims (nil or empty) t is rolled as if flattened, by the one
// shift shifts must then hold ([[0, 1, 2], [3, 4, 5]] rolled by {1}: [[5, 0, 1], [2, 3,
// 4]]); else len(shifts) == len(dims), one shift per dim, and a dim may repeat, its
// shifts adding up (the same by {1, -1} along {0, 1}: [[4, 5, 3], [1, 2, 0]]). A
// negative dim counts from the end. Any dtype. Differentiable: the gradient is the
// incoming one rolled back (grad_fn RollBackward0). The caller owns the result and must
// Close it; shifts and dims are only read during the call. Errors: ErrInvalidArgument
// for no shift, len(shifts) != len(dims) (with no dims: more than one shift), a dim out
// of range, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Roll(shifts, dims []int64) (*Tensor, error) {
	return t.reorder("Tensor.Roll", C.GDT_R_ROLL, shifts, dims)
}

// Repeat returns t tiled repeats[i] times along dim i, as PyTorch's t.repeat(*repeats)
// (Tensor.repeat; dt_repeat). The copies follow one another, not interleaved: [1, 2]
// repeated 2 times is [1, 2, 1, 2] (torch.repeat_interleave's [1, 1, 2, 2] is not
// this). len(repeats) is at least t's number of dims; when it is larger, t gains leading
// dims of size 1 first (a [2, 3] t repeated (2, 1, 2) is [2, 2, 6]). A repeat of 0 gives
// an empty dim. Any dtype. Differentiable: an element's gradient is the sum of its
// copies' (grad_fn RepeatBackward0). The caller owns the result and must Close it;
// repeats is only read during the call. Errors: ErrInvalidArgument for fewer repeats
// than t's dims or more than 16 (DT_MAX_DIMS), a negative repeat, a result of more than
// 2^63-1 elements, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Repeat(repeats ...int64) (*Tensor, error) {
	return t.reorder("Tensor.Repeat", C.GDT_R_REPEAT, repeats, nil)
}

// InterpolateMode is how Tensor.Interpolate and Upsample compute the new elements,
// torch.nn.functional.interpolate's mode= "nearest", "linear", "bilinear" or
// "trilinear". (PyTorch's "bicubic", "area" and "nearest-exact" are not in the library.)
type InterpolateMode int32

// The modes of Tensor.Interpolate and Upsample.
const (
	InterpolateNearest   InterpolateMode = iota // "nearest" (PyTorch's default; the zero value): any of the 3 ranks
	InterpolateLinear                           // "linear": a 3-d input [N, C, W]
	InterpolateBilinear                         // "bilinear": a 4-d input [N, C, H, W]
	InterpolateTrilinear                        // "trilinear": a 5-d input [N, C, D, H, W]
)

// String returns PyTorch's name of m: "nearest", "linear", "bilinear" or "trilinear"
// (another value: "InterpolateMode(n)").
func (m InterpolateMode) String() string {
	switch m {
	case InterpolateNearest:
		return "nearest"
	case InterpolateLinear:
		return "linear"
	case InterpolateBilinear:
		return "bilinear"
	case InterpolateTrilinear:
		return "trilinear"
	}
	return fmt.Sprintf("InterpolateMode(%d)", int32(m))
}

func (m InterpolateMode) c() C.int {
	switch m {
	case InterpolateLinear:
		return C.GDT_INTERP_LINEAR
	case InterpolateBilinear:
		return C.GDT_INTERP_BILINEAR
	case InterpolateTrilinear:
		return C.GDT_INTERP_TRILINEAR
	}
	return C.GDT_INTERP_NEAREST
}

// InterpolateOptions are the arguments of Tensor.Interpolate and Upsample, those of
// torch.nn.functional.interpolate and torch.nn.Upsample: exactly one of Size and
// ScaleFactor (nil or empty: not given; both or neither: ErrInvalidArgument, from the
// library), each with one value for every spatial dim or a single value for all of them.
// The zero Mode is InterpolateNearest and the zero AlignCorners PyTorch's default
// (align_corners=None, which is False).
type InterpolateOptions struct {
	Size        []int64   // the output's spatial sizes (PyTorch's size=)
	ScaleFactor []float64 // scale_factor=: each output size is floor(input size * factor)
	Mode        InterpolateMode
	// AlignCorners is PyTorch's align_corners=True, linear modes only: the corner
	// elements of input and output map onto each other, output i reading input
	// i * (in - 1) / (out - 1). False maps the pixel centres: output i reads input
	// (i + 0.5) * scale - 0.5, clamped at both ends, with scale = in / out (1 / factor
	// when ScaleFactor is given).
	AlignCorners bool
}

// args checks the mode (Pad's rule: a value outside the enum is refused here, the
// message naming it) and returns Size and ScaleFactor as C pointers into the slices (nil
// where not given; []int64 and []float64 hold no Go pointers) with n, the number of values
// of the one given (of Size when both are: the library refuses both).
func (o *InterpolateOptions) args(op string) (size *C.int64_t, scale *C.double, n C.size_t, err error) {
	if o.Mode < InterpolateNearest || o.Mode > InterpolateTrilinear {
		return nil, nil, 0, &Error{Code: ErrInvalidArgument, Op: op,
			Msg: fmt.Sprintf("mode must be InterpolateNearest, InterpolateLinear, InterpolateBilinear or InterpolateTrilinear, got %v", o.Mode)}
	}
	size, n = shapeArg(o.Size)
	if len(o.ScaleFactor) > 0 {
		scale = (*C.double)(unsafe.Pointer(&o.ScaleFactor[0]))
		if n == 0 {
			n = C.size_t(len(o.ScaleFactor))
		}
	}
	return size, scale, n, nil
}

// Interpolate returns t resized, as torch.nn.functional.interpolate(t, size,
// scale_factor, mode, align_corners) (dt_interpolate): t is [N, C, *spatial] with 1 to 3
// spatial dims (floating), and the result [N, C, *opts.Size], or each spatial size
// multiplied by opts.ScaleFactor and rounded down. The modes:
//
//   - InterpolateNearest (any of the three ranks): output i reads input floor(i * scale),
//     scale = in / out, or 1 / factor with ScaleFactor, as PyTorch's ([0, 1, 2, 3, 4] with
//     ScaleFactor {1.5}: [0, 0, 1, 2, 2, 3, 4]); AlignCorners is refused;
//   - InterpolateLinear (3-d t), InterpolateBilinear (4-d), InterpolateTrilinear (5-d):
//     between the two nearest inputs in each spatial dim, the positions as
//     InterpolateOptions.AlignCorners says ([0, 4] to size 4: [0, 1, 3, 4]; with
//     AlignCorners, [0, 3] to size 4: [0, 1, 2, 3]).
//
// Differentiable, with PyTorch's grad_fn names ("UpsampleNearest2DBackward1",
// "UpsampleBilinear2DBackward1", ...). The index lists and weights are made on the host
// and copied to t's device, which a graph capture on a device refuses. Upsample is the
// module.
//
// The caller owns the result and must Close it. opts' slices are only read during the
// call.
//
// Errors: ErrInvalidArgument (both or neither of Size and ScaleFactor, a number of values
// neither 1 nor the number of spatial dims, a size or factor giving an empty output,
// AlignCorners with InterpolateNearest, a mode that is none of the four),
// ErrShapeMismatch (a rank the mode does not take, the message naming it),
// ErrDTypeMismatch (not floating), ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a
// closed or nil t.
func (t *Tensor) Interpolate(opts InterpolateOptions) (*Tensor, error) {
	const op = "Tensor.Interpolate"
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	size, scale, n, err := opts.args(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_interpolate(a, size, scale, n, opts.Mode.c(), cBool(opts.AlignCorners))
	runtime.KeepAlive(t)
	runtime.KeepAlive(opts.Size)
	runtime.KeepAlive(opts.ScaleFactor)
	return takeTensor(op, r)
}

func (t *Tensor) triangle(op string, upper bool, diagonal int64) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_triangle(cBool(upper), a, C.int64_t(diagonal))
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// Triu returns the elements of t's last two dims on and above the diagonal (0: the main
// one, 1: the one above, -1: the one below), zeros elsewhere, as torch.triu; batched
// over leading dims. Errors: ErrInvalidArgument for fewer than 2 dims, ErrOutOfMemory;
// ErrClosed for a closed t.
func (t *Tensor) Triu(diagonal int64) (*Tensor, error) {
	return t.triangle("Tensor.Triu", true, diagonal)
}

// Tril returns the elements of t's last two dims on and below the diagonal, zeros
// elsewhere, as torch.tril (a causal mask is ones.Tril(0)). Errors: as Triu.
func (t *Tensor) Tril(diagonal int64) (*Tensor, error) {
	return t.triangle("Tensor.Tril", false, diagonal)
}

// Correction sets the divisor of Var and Std to n - c, n being the count of elements each
// result reduces: 1 (the default, as PyTorch's) gives the unbiased estimate, 0 the
// population one. The other reductions refuse it (ErrInvalidArgument).
func Correction(c float64) ReduceOption {
	return func(rc *reduceConfig) { rc.correction, rc.hasCorrection = c, true }
}

func (t *Tensor) varStd(op string, takeSqrt bool, opts []ReduceOption) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	c := reduceConfig{correction: 1}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	p, n := shapeArg(c.dims)
	r := C.gdt_var_std(cBool(takeSqrt), a, p, n, C.double(c.correction), cBool(c.keepdim))
	runtime.KeepAlive(t)
	runtime.KeepAlive(c.dims)
	return takeTensor(op, r)
}

// Var returns the variance of a floating t over Dims(...) (every dim by default), as
// torch.var: the sum of squared deviations from the mean divided by n - 1, or by n -
// c with Correction(c); KeepDim() keeps the reduced dims as size 1. n - c <= 0 divides
// by 0 (inf, or NaN), as in PyTorch. Errors: ErrDTypeMismatch for an integer or bool
// t, ErrInvalidArgument for a dim out of range or repeated or a correction that is not
// finite, ErrOutOfMemory; ErrClosed for a closed t.
func (t *Tensor) Var(opts ...ReduceOption) (*Tensor, error) {
	return t.varStd("Tensor.Var", false, opts)
}

// Std returns the standard deviation, the square root of Var with the same options, as
// torch.std. Errors: as Var.
func (t *Tensor) Std(opts ...ReduceOption) (*Tensor, error) {
	return t.varStd("Tensor.Std", true, opts)
}

// plainReduce runs a reduction that takes Dims and KeepDim but no Correction (LogSumExp,
// VectorNorm, Any, All): call makes the C call from t's handle, the dims and keepdim.
func (t *Tensor) plainReduce(op string, opts []ReduceOption,
	call func(a C.uintptr_t, dims *C.int64_t, n C.size_t, keep C.int32_t) C.gdt_tres) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	c, err := plainReduceOptions(op, opts)
	if err != nil {
		return nil, err
	}
	p, n := shapeArg(c.dims)
	r := call(a, p, n, cBool(c.keepdim))
	runtime.KeepAlive(t)
	runtime.KeepAlive(c.dims)
	return takeTensor(op, r)
}

func (t *Tensor) logSumExpNorm(op string, norm bool, ord float64, opts []ReduceOption) (*Tensor, error) {
	return t.plainReduce(op, opts, func(a C.uintptr_t, dims *C.int64_t, n C.size_t, keep C.int32_t) C.gdt_tres {
		return C.gdt_logsumexp_norm(cBool(norm), a, C.double(ord), dims, n, keep)
	})
}

// LogSumExp returns log(sum(exp(t))) over Dims(...) (every dim by default), as
// torch.logsumexp (dt_logsumexp); KeepDim() keeps the reduced dims as size 1. The
// largest value of each reduction is subtracted first and added back, so large values
// do not overflow (LogSumExp of [1000, 1000] is 1000 + ln 2); a reduction whose largest
// value is infinite gives that infinity, one over no element -Inf, NaN propagates.
// Integer and bool tensors are taken as the default dtype (GetDefaultDType), as PyTorch's.
// Differentiable: the gradient is the incoming one times exp(t - result), the softmax
// over the reduced dims (grad_fn LogsumexpBackward0). The caller owns the result and
// must Close it. Errors: ErrInvalidArgument for a dim out of range or repeated, or a
// Correction option, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a closed or nil
// t.
func (t *Tensor) LogSumExp(opts ...ReduceOption) (*Tensor, error) {
	return t.logSumExpNorm("Tensor.LogSumExp", false, 0, opts)
}

// VectorNorm returns the ord-norm of a floating t over Dims(...) (every dim by default),
// as torch.linalg.vector_norm (dt_vector_norm); KeepDim() keeps the reduced dims as size
// 1. ord 2 is sqrt(sum(|t|^2)) (PyTorch's default), 1 sum(|t|), math.Inf(1) max(|t|),
// math.Inf(-1) min(|t|), 0 the count of nonzero elements, any other ord
// (sum(|t|^ord))^(1/ord). On the CPU float32, float16 and bfloat16 compute in float64 (so
// squares of 1e20 do not overflow), on a GPU the 16-bit ones in float32, as PyTorch's. A
// reduction over no element is 0, except with ord ±Inf, which has no identity
// (ErrInvalidArgument, as PyTorch). Differentiable with PyTorch's formulas (grad_fn
// LinalgVectorNormBackward0), including their choices where the norm is not
// differentiable: a zero gradient where the norm is 0, ties of the inf-norms share the
// gradient evenly, and ord 0 passes no gradient. The caller owns the result and must
// Close it. Errors: ErrDTypeMismatch for an integer or bool t, ErrInvalidArgument for a
// NaN ord, a dim out of range or repeated, ord ±Inf over no element, or a Correction
// option, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a closed or nil t.
func (t *Tensor) VectorNorm(ord float64, opts ...ReduceOption) (*Tensor, error) {
	return t.logSumExpNorm("Tensor.VectorNorm", true, ord, opts)
}

func (t *Tensor) logicalUnary(op string, code C.int) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_logical_unary(code, a)
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// IsNaN returns a new bool tensor of t's shape, true where the element is NaN, as
// torch.isnan (dt_isnan). Integer and bool tensors are never NaN. Not differentiable (a
// bool result). The caller owns the result and must Close it. Errors: ErrOutOfMemory;
// ErrClosed or ErrInvalidArgument for a closed or nil t.
func (t *Tensor) IsNaN() (*Tensor, error) {
	return t.logicalUnary("Tensor.IsNaN", C.GDT_LOGIC_ISNAN)
}

// IsInf returns a new bool tensor of t's shape, true where the element is +Inf or -Inf,
// as torch.isinf (dt_isinf). Integer and bool tensors are never infinite. Not
// differentiable. The caller owns the result and must Close it. Errors: as IsNaN.
func (t *Tensor) IsInf() (*Tensor, error) {
	return t.logicalUnary("Tensor.IsInf", C.GDT_LOGIC_ISINF)
}

// IsFinite returns a new bool tensor of t's shape, true where the element is neither NaN
// nor infinite, as torch.isfinite (dt_isfinite): every element of an integer or bool
// tensor. Not differentiable. The caller owns the result and must Close it. Errors: as
// IsNaN.
func (t *Tensor) IsFinite() (*Tensor, error) {
	return t.logicalUnary("Tensor.IsFinite", C.GDT_LOGIC_ISFINITE)
}

// LogicalNot returns a new bool tensor of t's shape, true where the element is zero, as
// torch.logical_not (dt_logical_not): t of any dtype is taken as truth values, nonzero
// (NaN included) true. Not differentiable. The caller owns the result and must Close
// it. Errors: as IsNaN.
func (t *Tensor) LogicalNot() (*Tensor, error) {
	return t.logicalUnary("Tensor.LogicalNot", C.GDT_LOGIC_NOT)
}

func (t *Tensor) logicalBinary(op string, code C.int, o *Tensor) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	b, err := o.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_logical_binary(code, a, b)
	runtime.KeepAlive(t)
	runtime.KeepAlive(o)
	return takeTensor(op, r)
}

// LogicalAnd returns a new bool tensor, true where both t and o are, as
// torch.logical_and (dt_logical_and). The operands, of any dtypes (the two may differ),
// are taken as truth values, nonzero (NaN included) true, and broadcast together as
// PyTorch's: the result has their broadcast shape. Not differentiable. The caller owns
// the result and must Close it. Errors: ErrShapeMismatch for shapes that do not
// broadcast, ErrDeviceMismatch, ErrOutOfMemory; ErrClosed or ErrInvalidArgument for a
// closed or nil tensor.
func (t *Tensor) LogicalAnd(o *Tensor) (*Tensor, error) {
	return t.logicalBinary("Tensor.LogicalAnd", C.GDT_LOGIC_AND, o)
}

// Nonzero returns the Int64 [count, ndim] indices of t's nonzero elements (NaN is
// nonzero; any dtype), one row per element in row-major order, as torch.nonzero
// (dt_nonzero), on t's device. It waits for t's device (the count is read back). Not
// differentiable. The caller owns the result and must Close it. Errors: ErrOutOfMemory;
// ErrClosed or ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Nonzero() (*Tensor, error) {
	return t.logicalUnary("Tensor.Nonzero", C.GDT_LOGIC_NONZERO)
}

// MaskedSelect returns a new 1-d tensor of t's elements where the Bool mask is true, t
// and mask broadcast together, in row-major order, as torch.masked_select
// (dt_masked_select). It waits for the device (the count is read back). Differentiable in
// t (MaskedSelectBackward0). The caller owns the result and must Close it. Errors:
// ErrDTypeMismatch (mask not Bool), ErrShapeMismatch (shapes that do not broadcast),
// ErrDeviceMismatch; ErrClosed or ErrInvalidArgument for a closed or nil t or mask.
func (t *Tensor) MaskedSelect(mask *Tensor) (*Tensor, error) {
	return t.logicalBinary("Tensor.MaskedSelect", C.GDT_LOGIC_MASKED_SELECT, mask)
}

// LogicalOr returns a new bool tensor, true where t or o (or both) is, as
// torch.logical_or (dt_logical_or), with LogicalAnd's truth values and broadcasting.
// Not differentiable. The caller owns the result and must Close it. Errors: as
// LogicalAnd.
func (t *Tensor) LogicalOr(o *Tensor) (*Tensor, error) {
	return t.logicalBinary("Tensor.LogicalOr", C.GDT_LOGIC_OR, o)
}

// LogicalXor returns a new bool tensor, true where exactly one of t and o is, as
// torch.logical_xor (dt_logical_xor), with LogicalAnd's truth values and broadcasting.
// Not differentiable. The caller owns the result and must Close it. Errors: as
// LogicalAnd.
func (t *Tensor) LogicalXor(o *Tensor) (*Tensor, error) {
	return t.logicalBinary("Tensor.LogicalXor", C.GDT_LOGIC_XOR, o)
}

func (t *Tensor) anyAll(op string, all bool, opts []ReduceOption) (*Tensor, error) {
	return t.plainReduce(op, opts, func(a C.uintptr_t, dims *C.int64_t, n C.size_t, keep C.int32_t) C.gdt_tres {
		return C.gdt_any_all(cBool(all), a, dims, n, keep)
	})
}

// Any returns whether any element of t is nonzero (NaN is) over Dims(...) (every dim by
// default: a 0-d result), as torch.any (dt_any); KeepDim() keeps the reduced dims as
// size 1. The result is a new bool tensor for every dtype of t (PyTorch 1.13 returns
// uint8 for a uint8 t); a reduction over no element is false. Not differentiable. The
// caller owns the result and must Close it. Errors: ErrInvalidArgument for a dim out of
// range or repeated, or a Correction option, ErrOutOfMemory; ErrClosed or
// ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Any(opts ...ReduceOption) (*Tensor, error) {
	return t.anyAll("Tensor.Any", false, opts)
}

// All returns whether every element of t is nonzero (NaN is) over Dims(...) (every dim
// by default: a 0-d result), as torch.all (dt_all); KeepDim() keeps the reduced dims as
// size 1. The result is a new bool tensor for every dtype of t; a reduction over no
// element is true. Not differentiable. The caller owns the result and must Close it.
// Errors: as Any.
func (t *Tensor) All(opts ...ReduceOption) (*Tensor, error) {
	return t.anyAll("Tensor.All", true, opts)
}

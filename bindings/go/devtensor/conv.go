package devtensor

// #include "nn_shim.h"
import "C"

import "runtime"

// Conv2dOptions are the optional arguments of Conv2d and Tensor.Conv2d; the zero value
// is PyTorch's defaults: stride (1, 1), padding (0, 0), dilation (1, 1), one group, a
// bias, the default dtype (SetDefaultDType) and the default device (SetDefaultDevice).
// Pairs are (height, width); a zero pair means the default, a pair with one zero is
// passed on (and refused with ErrInvalidArgument where 0 is not allowed).
type Conv2dOptions struct {
	Stride      [2]int64 // the windows' step; {0, 0}: (1, 1)
	Padding     [2]int64 // zeros added on each side; {0, 0}: none
	PaddingSame bool     // PyTorch's padding="same" (stride must be 1; Padding must be zero)
	Dilation    [2]int64 // the spacing of the kernel's elements; {0, 0}: (1, 1)
	Groups      int64    // channel groups; 0: 1
	NoBias      bool     // Conv2d only: no bias (PyTorch's bias=False)
	DType       DType    // Conv2d only: the weights' dtype (floating); DefaultDType: the process default
	Device      Device   // Conv2d only: where the weights live; the zero Device: the process default
}

func (o *Conv2dOptions) geometry(op string) (s, p, d [2]int64, groups int64, err error) {
	s, p, d, groups = o.Stride, o.Padding, o.Dilation, o.Groups
	if s == [2]int64{} {
		s = [2]int64{1, 1}
	}
	if d == [2]int64{} {
		d = [2]int64{1, 1}
	}
	if groups == 0 {
		groups = 1
	}
	if o.PaddingSame {
		if p != [2]int64{} {
			return s, p, d, groups, &Error{Code: ErrInvalidArgument, Op: op, Msg: "PaddingSame with a nonzero Padding"}
		}
		p = [2]int64{C.DT_PADDING_SAME, 0}
	}
	return s, p, d, groups, nil
}

// Conv2d is torch.nn.Conv2d(in, out, kernel) (dt_conv2d_new) with stride, padding,
// dilation, groups, bias, dtype and device from opts: parameters "weight" [out, in /
// groups, kernel[0], kernel[1]] and "bias" [out] (PyTorch's names and shapes, so its
// state_dict loads unchanged), initialised as PyTorch does. Forward takes [N, in, H, W]
// or [in, H, W] and gives [N, out, OH, OW] (or 3-d), OH = (H + 2*padding - dilation *
// (kernel - 1) - 1) / stride + 1. The caller owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (sizes not positive, channels not divisible by Groups,
// PaddingSame with a stride or with a Padding), ErrDTypeMismatch (a dtype that is not
// floating), ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory, ErrVersion (see
// CheckVersion). Forward: ErrShapeMismatch naming the module and the shapes (wrong
// channel count, a kernel larger than the padded input), ErrDTypeMismatch,
// ErrDeviceMismatch.
func Conv2d(in, out int64, kernel [2]int64, opts Conv2dOptions) (*Module, error) {
	const op = "Conv2d"
	if versionErr != nil {
		return nil, versionErr
	}
	s, p, d, g, err := opts.geometry(op)
	if err != nil {
		return nil, err
	}
	return takeModule(op, C.gdt_conv2d_new(C.int64_t(in), C.int64_t(out), C.int64_t(kernel[0]), C.int64_t(kernel[1]),
		C.int64_t(s[0]), C.int64_t(s[1]), C.int64_t(p[0]), C.int64_t(p[1]), C.int64_t(d[0]), C.int64_t(d[1]),
		C.int64_t(g), biasArg(opts.NoBias), C.dt_dtype(opts.DType), opts.Device.c()))
}

// Conv2d is torch.nn.functional.conv2d(t, weight, bias) (dt_conv2d): t [N, C, H, W] or
// [C, H, W], weight [OC, C / groups, kH, kW], bias [OC] or nil; stride, padding,
// dilation and groups from opts (its NoBias, DType and Device must be zero: the bias is
// the argument, the dtype and device the tensors'). Differentiable in t, weight and bias.
//
// Errors: ErrInvalidArgument (a nil t or weight, sizes not positive, groups not dividing
// the channels, NoBias/DType/Device set in opts), ErrClosed, ErrShapeMismatch (channels,
// a weight that is not 4-d, the bias size, a kernel larger than the padded input: the
// message gives the shapes), ErrDTypeMismatch (dtypes differ or are not floating),
// ErrDeviceMismatch, ErrOutOfMemory.
func (t *Tensor) Conv2d(weight, bias *Tensor, opts Conv2dOptions) (*Tensor, error) {
	const op = "Tensor.Conv2d"
	if err := moduleOnlyOptions(op, "Conv2d", opts.NoBias, opts.DType, opts.Device); err != nil {
		return nil, err
	}
	s, p, d, g, err := opts.geometry(op)
	if err != nil {
		return nil, err
	}
	ih, wh, bh, err := inputHandles(op, t, weight, bias, false)
	if err != nil {
		return nil, err
	}
	r := C.gdt_conv2d(ih, wh, bh, C.int64_t(s[0]), C.int64_t(s[1]), C.int64_t(p[0]), C.int64_t(p[1]),
		C.int64_t(d[0]), C.int64_t(d[1]), C.int64_t(g))
	runtime.KeepAlive(t)
	runtime.KeepAlive(weight)
	runtime.KeepAlive(bias)
	return takeTensor(op, r)
}

// Conv1dOptions are the optional arguments of Conv1d and Tensor.Conv1d; the zero value
// is PyTorch's defaults: stride 1, padding 0, dilation 1, one group, a bias, the default
// dtype (SetDefaultDType) and the default device (SetDefaultDevice). A zero Stride,
// Dilation or Groups means the default; a negative one is passed on (and refused with
// ErrInvalidArgument).
type Conv1dOptions struct {
	Stride      int64  // the windows' step; 0: 1
	Padding     int64  // zeros added at both ends; 0: none
	PaddingSame bool   // PyTorch's padding="same" (stride must be 1; Padding must be zero)
	Dilation    int64  // the spacing of the kernel's elements; 0: 1
	Groups      int64  // channel groups; 0: 1
	NoBias      bool   // Conv1d only: no bias (PyTorch's bias=False)
	DType       DType  // Conv1d only: the weights' dtype (floating); DefaultDType: the process default
	Device      Device // Conv1d only: where the weights live; the zero Device: the process default
}

func (o *Conv1dOptions) geometry(op string) (s, p, d, groups int64, err error) {
	s, p, d, groups = o.Stride, o.Padding, o.Dilation, o.Groups
	if s == 0 {
		s = 1
	}
	if d == 0 {
		d = 1
	}
	if groups == 0 {
		groups = 1
	}
	if o.PaddingSame {
		if p != 0 {
			return s, p, d, groups, &Error{Code: ErrInvalidArgument, Op: op, Msg: "PaddingSame with a nonzero Padding"}
		}
		p = C.DT_PADDING_SAME
	}
	return s, p, d, groups, nil
}

// Conv1d is torch.nn.Conv1d(in, out, kernel) (dt_conv1d_new) with stride, padding,
// dilation, groups, bias, dtype and device from opts: parameters "weight" [out, in /
// groups, kernel] and "bias" [out] (PyTorch's names and shapes, so its state_dict loads
// unchanged), initialised as PyTorch does. Forward takes [N, in, L] or [in, L] and gives
// [N, out, OL] (or 2-d), OL = (L + 2*padding - dilation * (kernel - 1) - 1) / stride +
// 1, as Tensor.Conv1d. The caller owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (sizes not positive, channels not divisible by Groups,
// PaddingSame with a stride or with a Padding), ErrDTypeMismatch (a dtype that is not
// floating), ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory, ErrVersion (see
// CheckVersion). Forward: ErrShapeMismatch naming the module and the shapes (wrong
// channel count, a kernel larger than the padded input), ErrDTypeMismatch,
// ErrDeviceMismatch.
func Conv1d(in, out, kernel int64, opts Conv1dOptions) (*Module, error) {
	const op = "Conv1d"
	if versionErr != nil {
		return nil, versionErr
	}
	s, p, d, g, err := opts.geometry(op)
	if err != nil {
		return nil, err
	}
	return takeModule(op, C.gdt_conv1d_new(C.int64_t(in), C.int64_t(out), C.int64_t(kernel), C.int64_t(s),
		C.int64_t(p), C.int64_t(d), C.int64_t(g), biasArg(opts.NoBias), C.dt_dtype(opts.DType), opts.Device.c()))
}

// Conv1d is torch.nn.functional.conv1d(t, weight, bias) (dt_conv1d): t [N, C, L] or [C,
// L], weight [OC, C / groups, K], bias [OC] or nil; stride, padding, dilation and groups
// from opts (its NoBias, DType and Device must be zero: the bias is the argument, the
// dtype and device the tensors'). The output is [N, OC, OL], OL = (L + 2*padding -
// dilation * (K - 1) - 1) / stride + 1. Runs as a 2-d convolution over a height of 1;
// differentiable in t, weight and bias.
//
// Errors: ErrInvalidArgument (a nil t or weight, sizes not positive, groups not dividing
// the channels, NoBias/DType/Device set in opts), ErrClosed, ErrShapeMismatch (channels,
// a weight that is not 3-d, t not 2-d or 3-d, the bias size, a kernel larger than the
// padded input: the message gives the shapes), ErrDTypeMismatch (dtypes differ or are
// not floating), ErrDeviceMismatch, ErrOutOfMemory.
func (t *Tensor) Conv1d(weight, bias *Tensor, opts Conv1dOptions) (*Tensor, error) {
	const op = "Tensor.Conv1d"
	if err := moduleOnlyOptions(op, "Conv1d", opts.NoBias, opts.DType, opts.Device); err != nil {
		return nil, err
	}
	s, p, d, g, err := opts.geometry(op)
	if err != nil {
		return nil, err
	}
	ih, wh, bh, err := inputHandles(op, t, weight, bias, false)
	if err != nil {
		return nil, err
	}
	r := C.gdt_conv1d(ih, wh, bh, C.int64_t(s), C.int64_t(p), C.int64_t(d), C.int64_t(g))
	runtime.KeepAlive(t)
	runtime.KeepAlive(weight)
	runtime.KeepAlive(bias)
	return takeTensor(op, r)
}

// ConvTranspose2dOptions are the optional arguments of ConvTranspose2d and
// Tensor.ConvTranspose2d; the zero value is PyTorch's defaults: stride (1, 1), padding
// (0, 0), output_padding (0, 0), one group, dilation (1, 1), a bias, the default dtype
// (SetDefaultDType) and the default device (SetDefaultDevice). Pairs are (height,
// width); a zero Stride or Dilation pair means the default. There is no "same" padding
// (nor in PyTorch).
type ConvTranspose2dOptions struct {
	Stride        [2]int64 // the step between the input's positions in the output; {0, 0}: (1, 1)
	Padding       [2]int64 // rows and columns taken off each side of the full output; {0, 0}: none
	OutputPadding [2]int64 // rows and columns added at the bottom and right (each below the stride or the dilation)
	Groups        int64    // channel groups; 0: 1
	Dilation      [2]int64 // the spacing of the kernel's elements; {0, 0}: (1, 1)
	NoBias        bool     // ConvTranspose2d only: no bias (PyTorch's bias=False)
	DType         DType    // ConvTranspose2d only: the weights' dtype (floating); DefaultDType: the process default
	Device        Device   // ConvTranspose2d only: where the weights live; the zero Device: the process default
}

func (o *ConvTranspose2dOptions) geometry() (s, p, op, d [2]int64, groups int64) {
	s, p, op, d, groups = o.Stride, o.Padding, o.OutputPadding, o.Dilation, o.Groups
	if s == [2]int64{} {
		s = [2]int64{1, 1}
	}
	if d == [2]int64{} {
		d = [2]int64{1, 1}
	}
	if groups == 0 {
		groups = 1
	}
	return s, p, op, d, groups
}

// ConvTranspose2d is torch.nn.ConvTranspose2d(in, out, kernel) (dt_conv_transpose2d_new)
// with stride, padding, output_padding, groups, dilation, bias, dtype and device from
// opts: parameters "weight" [in, out / groups, kernel[0], kernel[1]] (in_channels
// first, as PyTorch's) and "bias" [out], initialised as PyTorch does, so its state_dict
// loads unchanged. Forward takes [N, in, H, W] or [in, H, W] and gives [N, out, OH, OW]
// (or 3-d), OH = (H - 1) * stride - 2 * padding + dilation * (kernel - 1) +
// output_padding + 1: the size a Conv2d of the same geometry maps back to H. The caller
// owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (sizes not positive, negative padding, an OutputPadding
// not below the stride or the dilation, channels not divisible by Groups),
// ErrDTypeMismatch (a dtype that is not floating), ErrInvalidDevice,
// ErrDeviceUnavailable, ErrOutOfMemory, ErrVersion (see CheckVersion). Forward:
// ErrShapeMismatch naming the module and the shapes, ErrDTypeMismatch,
// ErrDeviceMismatch.
func ConvTranspose2d(in, out int64, kernel [2]int64, opts ConvTranspose2dOptions) (*Module, error) {
	const op = "ConvTranspose2d"
	if versionErr != nil {
		return nil, versionErr
	}
	s, p, o, d, g := opts.geometry()
	return takeModule(op, C.gdt_conv_transpose2d_new(C.int64_t(in), C.int64_t(out), C.int64_t(kernel[0]),
		C.int64_t(kernel[1]), C.int64_t(s[0]), C.int64_t(s[1]), C.int64_t(p[0]), C.int64_t(p[1]), C.int64_t(o[0]),
		C.int64_t(o[1]), C.int64_t(g), biasArg(opts.NoBias), C.int64_t(d[0]), C.int64_t(d[1]), C.dt_dtype(opts.DType), opts.Device.c()))
}

// ConvTranspose2d is torch.nn.functional.conv_transpose2d(t, weight, bias)
// (dt_conv_transpose2d), the gradient of Conv2d with respect to its input (sometimes
// called a deconvolution): t [N, C, H, W] or [C, H, W], weight [C, OC / groups, kH, kW]
// (in_channels first), bias [OC] or nil; stride, padding, output_padding, groups and
// dilation from opts (its NoBias, DType and Device must be zero: the bias is the
// argument, the dtype and device the tensors'). Differentiable in t, weight and bias.
//
// Errors: ErrInvalidArgument (a nil t or weight, sizes not positive, negative padding,
// an OutputPadding not below the stride or the dilation, groups not dividing the
// channels, NoBias/DType/Device set in opts), ErrClosed, ErrShapeMismatch (channels, a
// weight that is not 4-d, the bias size: the message gives the shapes),
// ErrDTypeMismatch (dtypes differ or are not floating), ErrDeviceMismatch,
// ErrOutOfMemory.
func (t *Tensor) ConvTranspose2d(weight, bias *Tensor, opts ConvTranspose2dOptions) (*Tensor, error) {
	const op = "Tensor.ConvTranspose2d"
	if err := moduleOnlyOptions(op, "ConvTranspose2d", opts.NoBias, opts.DType, opts.Device); err != nil {
		return nil, err
	}
	s, p, o, d, g := opts.geometry()
	ih, wh, bh, err := inputHandles(op, t, weight, bias, false)
	if err != nil {
		return nil, err
	}
	r := C.gdt_conv_transpose2d(ih, wh, bh, C.int64_t(s[0]), C.int64_t(s[1]), C.int64_t(p[0]), C.int64_t(p[1]),
		C.int64_t(o[0]), C.int64_t(o[1]), C.int64_t(g), C.int64_t(d[0]), C.int64_t(d[1]))
	runtime.KeepAlive(t)
	runtime.KeepAlive(weight)
	runtime.KeepAlive(bias)
	return takeTensor(op, r)
}

// MaxPool2dOptions are the optional arguments of MaxPool2d and Tensor.MaxPool2d; the
// zero value is PyTorch's defaults: stride the kernel size, padding (0, 0), dilation
// (1, 1), output size rounded down. Pairs are (height, width).
type MaxPool2dOptions struct {
	Stride   [2]int64 // the windows' step; {0, 0}: the kernel size
	Padding  [2]int64 // -inf added on each side (at most half the kernel); {0, 0}: none
	Dilation [2]int64 // the spacing of a window's elements; {0, 0}: (1, 1)
	// CeilMode is PyTorch's ceil_mode=True: the output size rounds up, so the last
	// windows may hang over the bottom/right edge (only their elements inside count); a
	// last window that would start past the input and its left padding is dropped.
	CeilMode bool
}

// AvgPool2dOptions are the optional arguments of AvgPool2d and Tensor.AvgPool2d; the
// zero value is PyTorch's defaults: stride the kernel size, padding (0, 0), the zero
// padding counted in the mean (count_include_pad=True), output size rounded down.
type AvgPool2dOptions struct {
	Stride     [2]int64 // the windows' step; {0, 0}: the kernel size
	Padding    [2]int64 // zeros added on each side (at most half the kernel); {0, 0}: none
	ExcludePad bool     // average only the elements inside the input (count_include_pad=False)
	// CeilMode is PyTorch's ceil_mode=True, as MaxPool2dOptions.CeilMode; the part of a
	// window hanging over the padded input never counts in its mean.
	CeilMode bool
}

type pool2dArgs struct {
	max       C.int
	kernel    [2]int64
	hasStride C.int
	s, p, d   [2]int64
	incPad    C.int32_t
	ceil      C.int32_t
}

func maxArgs(kernel [2]int64, o MaxPool2dOptions) pool2dArgs {
	a := pool2dArgs{max: 1, kernel: kernel, s: o.Stride, p: o.Padding, d: o.Dilation, ceil: cBool(o.CeilMode)}
	if o.Stride != [2]int64{} {
		a.hasStride = 1
	}
	if a.d == [2]int64{} {
		a.d = [2]int64{1, 1}
	}
	return a
}

func avgArgs(kernel [2]int64, o AvgPool2dOptions) pool2dArgs {
	a := pool2dArgs{kernel: kernel, s: o.Stride, p: o.Padding, d: [2]int64{1, 1}, incPad: 1, ceil: cBool(o.CeilMode)}
	if o.Stride != [2]int64{} {
		a.hasStride = 1
	}
	if o.ExcludePad {
		a.incPad = 0
	}
	return a
}

func pool2dModule(op string, a pool2dArgs) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule(op, C.gdt_pool2d_new(a.max, C.int64_t(a.kernel[0]), C.int64_t(a.kernel[1]), a.hasStride,
		C.int64_t(a.s[0]), C.int64_t(a.s[1]), C.int64_t(a.p[0]), C.int64_t(a.p[1]), C.int64_t(a.d[0]),
		C.int64_t(a.d[1]), a.incPad, a.ceil))
}

func (t *Tensor) pool2d(op string, a pool2dArgs) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_pool2d(a.max, h, C.int64_t(a.kernel[0]), C.int64_t(a.kernel[1]), a.hasStride,
		C.int64_t(a.s[0]), C.int64_t(a.s[1]), C.int64_t(a.p[0]), C.int64_t(a.p[1]), C.int64_t(a.d[0]),
		C.int64_t(a.d[1]), a.incPad, a.ceil)
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// MaxPool2d is torch.nn.MaxPool2d(kernel) (dt_max_pool2d_new) with stride, padding,
// dilation and ceil mode from opts, with no parameters; Forward as Tensor.MaxPool2d. The caller owns
// the Module and must Close it.
//
// Errors: ErrInvalidArgument (sizes not positive, negative padding), ErrOutOfMemory,
// ErrVersion (see CheckVersion). Forward: as Tensor.MaxPool2d, the message naming the
// module.
func MaxPool2d(kernel [2]int64, opts MaxPool2dOptions) (*Module, error) {
	return pool2dModule("MaxPool2d", maxArgs(kernel, opts))
}

// AvgPool2d is torch.nn.AvgPool2d(kernel) (dt_avg_pool2d_new) with stride, padding,
// count_include_pad and ceil mode from opts, with no parameters; Forward as Tensor.AvgPool2d. The
// caller owns the Module and must Close it.
//
// Errors: as MaxPool2d.
func AvgPool2d(kernel [2]int64, opts AvgPool2dOptions) (*Module, error) {
	return pool2dModule("AvgPool2d", avgArgs(kernel, opts))
}

// AdaptiveAvgPool2d is torch.nn.AdaptiveAvgPool2d(size) (dt_adaptive_avg_pool2d_new),
// with no parameters; Forward as Tensor.AdaptiveAvgPool2d. The caller owns the Module
// and must Close it.
//
// Errors: ErrInvalidArgument (sizes not positive), ErrOutOfMemory, ErrVersion (see
// CheckVersion). Forward: as Tensor.AdaptiveAvgPool2d, the message naming the module.
func AdaptiveAvgPool2d(size [2]int64) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule("AdaptiveAvgPool2d", C.gdt_adaptive_avg_pool2d_new(C.int64_t(size[0]), C.int64_t(size[1])))
}

// MaxPool2d is torch.nn.functional.max_pool2d(t, kernel) (dt_max_pool2d): the largest
// value of each kernel window of t [N, C, H, W] or [C, H, W] (floating), with stride,
// padding (-inf), dilation and ceil mode from opts. Output size (H + 2*padding -
// dilation * (kernel - 1) - 1) / stride + 1, rounded down (up with CeilMode). The
// gradient goes to each window's largest element; a window that a dilation steps over
// (no tap inside t) gives -inf and no gradient, as in PyTorch.
//
// Errors: ErrInvalidArgument (a nil t, sizes not positive, padding over half the
// kernel), ErrClosed, ErrShapeMismatch (t not 3-d or 4-d, a kernel larger than the
// padded input), ErrDTypeMismatch (not floating), ErrOutOfMemory.
func (t *Tensor) MaxPool2d(kernel [2]int64, opts MaxPool2dOptions) (*Tensor, error) {
	return t.pool2d("Tensor.MaxPool2d", maxArgs(kernel, opts))
}

// AvgPool2d is torch.nn.functional.avg_pool2d(t, kernel) (dt_avg_pool2d): the mean of
// each kernel window of t [N, C, H, W] or [C, H, W] (floating), with stride, padding
// (zeros), count_include_pad and ceil mode from opts. Differentiable.
//
// Errors: as Tensor.MaxPool2d.
func (t *Tensor) AvgPool2d(kernel [2]int64, opts AvgPool2dOptions) (*Tensor, error) {
	return t.pool2d("Tensor.AvgPool2d", avgArgs(kernel, opts))
}

// AdaptiveAvgPool2d is torch.nn.functional.adaptive_avg_pool2d(t, size)
// (dt_adaptive_avg_pool2d): t [N, C, H, W] or [C, H, W] (floating) to [N, C, size[0],
// size[1]]; output (i, j) averages rows floor(i*H/OH) .. ceil((i+1)*H/OH) - 1 and the
// columns alike. Differentiable.
//
// Errors: ErrInvalidArgument (a nil t, sizes not positive), ErrClosed,
// ErrShapeMismatch (t not 3-d or 4-d, zero height or width), ErrDTypeMismatch (not
// floating), ErrOutOfMemory.
func (t *Tensor) AdaptiveAvgPool2d(size [2]int64) (*Tensor, error) {
	const op = "Tensor.AdaptiveAvgPool2d"
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_adaptive_avg_pool2d(h, C.int64_t(size[0]), C.int64_t(size[1]))
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// moduleOnlyOptions refuses, in a functional convolution, the options that only the
// module (named module) takes: the functional form's bias is its argument, and its dtype
// and device are the tensors'.
func moduleOnlyOptions(op, module string, noBias bool, dtype DType, device Device) error {
	if noBias || dtype != DefaultDType || device != (Device{}) {
		return &Error{Code: ErrInvalidArgument, Op: op,
			Msg: "NoBias, DType and Device are " + module + "'s (the module's) options; pass bias nil instead"}
	}
	return nil
}

// inputHandles returns the handles of an op's input t, its weight and its bias (0 for a
// nil bias, and for a nil weight when weightOptional), or the error of the first that
// is missing or closed.
func inputHandles(op string, t, weight, bias *Tensor, weightOptional bool) (ih, wh, bh C.uintptr_t, err error) {
	if ih, err = t.handle(op); err != nil {
		return 0, 0, 0, err
	}
	if weight != nil || !weightOptional {
		if wh, err = weight.handle(op); err != nil {
			return 0, 0, 0, err
		}
	}
	if bh, err = optionalTensor(op, bias); err != nil {
		return 0, 0, 0, err
	}
	return ih, wh, bh, nil
}

// biasArg is a module constructor's bias flag (PyTorch's bias=True unless noBias).
func biasArg(noBias bool) C.int32_t {
	if noBias {
		return 0
	}
	return 1
}

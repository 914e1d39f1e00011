package devtensor

// #include "shim.h"
import "C"

import "runtime"

// Binary ops broadcast as PyTorch does and promote dtypes by PyTorch's rules. Both
// operands must be on one device, else the error is ErrDeviceMismatch with a message
// naming both devices. The result is a NEW Tensor.

func (t *Tensor) binary(op string, code C.int, o *Tensor) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	b, err := o.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_binary(code, a, b)
	runtime.KeepAlive(t)
	runtime.KeepAlive(o)
	return takeTensor(op, r)
}

func (t *Tensor) scalar(op string, code C.int, v float64) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_scalar(code, a, C.double(v))
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

func (t *Tensor) inplace(op string, code C.int, o *Tensor) error {
	a, err := t.handle(op)
	if err != nil {
		return err
	}
	b, err := o.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_inplace(code, a, b)
	runtime.KeepAlive(t)
	runtime.KeepAlive(o)
	return resErr(op, r)
}

func (t *Tensor) inplaceScalar(op string, code C.int, v float64) error {
	a, err := t.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_inplace_scalar(code, a, C.double(v))
	runtime.KeepAlive(t)
	return resErr(op, r)
}

func (t *Tensor) unary(op string, code C.int) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_unary(code, a)
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

func (t *Tensor) Add(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Add", C.GDT_ADD, o) }
func (t *Tensor) Sub(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Sub", C.GDT_SUB, o) }
func (t *Tensor) Mul(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Mul", C.GDT_MUL, o) }
func (t *Tensor) Div(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Div", C.GDT_DIV, o) }
func (t *Tensor) Pow(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Pow", C.GDT_POW, o) }
func (t *Tensor) Maximum(o *Tensor) (*Tensor, error) {
	return t.binary("Tensor.Maximum", C.GDT_MAXIMUM, o)
}
func (t *Tensor) Minimum(o *Tensor) (*Tensor, error) {
	return t.binary("Tensor.Minimum", C.GDT_MINIMUM, o)
}
func (t *Tensor) Eq(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Eq", C.GDT_EQ, o) }
func (t *Tensor) Ne(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Ne", C.GDT_NE, o) }
func (t *Tensor) Lt(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Lt", C.GDT_LT, o) }
func (t *Tensor) Le(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Le", C.GDT_LE, o) }
func (t *Tensor) Gt(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Gt", C.GDT_GT, o) }
func (t *Tensor) Ge(o *Tensor) (*Tensor, error) { return t.binary("Tensor.Ge", C.GDT_GE, o) }

// Matmul is torch.matmul (dot, matrix product, batched with broadcasting).
func (t *Tensor) Matmul(o *Tensor) (*Tensor, error) {
	return t.binary("Tensor.Matmul", C.GDT_MATMUL, o)
}

func (t *Tensor) AddScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.AddScalar", C.GDT_ADD, v)
}
func (t *Tensor) SubScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.SubScalar", C.GDT_SUB, v)
}
func (t *Tensor) MulScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.MulScalar", C.GDT_MUL, v)
}
func (t *Tensor) DivScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.DivScalar", C.GDT_DIV, v)
}
func (t *Tensor) PowScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.PowScalar", C.GDT_POW, v)
}
func (t *Tensor) MaximumScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.MaximumScalar", C.GDT_MAXIMUM, v)
}
func (t *Tensor) MinimumScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.MinimumScalar", C.GDT_MINIMUM, v)
}
func (t *Tensor) EqScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.EqScalar", C.GDT_EQ, v)
}
func (t *Tensor) NeScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.NeScalar", C.GDT_NE, v)
}
func (t *Tensor) LtScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.LtScalar", C.GDT_LT, v)
}
func (t *Tensor) LeScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.LeScalar", C.GDT_LE, v)
}
func (t *Tensor) GtScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.GtScalar", C.GDT_GT, v)
}
func (t *Tensor) GeScalar(v float64) (*Tensor, error) {
	return t.scalar("Tensor.GeScalar", C.GDT_GE, v)
}

// In-place ops write into t (PyTorch's add_ etc.).
func (t *Tensor) AddInPlace(o *Tensor) error { return t.inplace("Tensor.AddInPlace", C.GDT_ADD, o) }
func (t *Tensor) SubInPlace(o *Tensor) error { return t.inplace("Tensor.SubInPlace", C.GDT_SUB, o) }
func (t *Tensor) MulInPlace(o *Tensor) error { return t.inplace("Tensor.MulInPlace", C.GDT_MUL, o) }
func (t *Tensor) DivInPlace(o *Tensor) error { return t.inplace("Tensor.DivInPlace", C.GDT_DIV, o) }
func (t *Tensor) PowInPlace(o *Tensor) error { return t.inplace("Tensor.PowInPlace", C.GDT_POW, o) }
func (t *Tensor) MaximumInPlace(o *Tensor) error {
	return t.inplace("Tensor.MaximumInPlace", C.GDT_MAXIMUM, o)
}
func (t *Tensor) MinimumInPlace(o *Tensor) error {
	return t.inplace("Tensor.MinimumInPlace", C.GDT_MINIMUM, o)
}
func (t *Tensor) AddScalarInPlace(v float64) error {
	return t.inplaceScalar("Tensor.AddScalarInPlace", C.GDT_ADD, v)
}
func (t *Tensor) SubScalarInPlace(v float64) error {
	return t.inplaceScalar("Tensor.SubScalarInPlace", C.GDT_SUB, v)
}
func (t *Tensor) MulScalarInPlace(v float64) error {
	return t.inplaceScalar("Tensor.MulScalarInPlace", C.GDT_MUL, v)
}
func (t *Tensor) DivScalarInPlace(v float64) error {
	return t.inplaceScalar("Tensor.DivScalarInPlace", C.GDT_DIV, v)
}

// Where returns cond ? a : b elementwise (cond is a bool tensor).
func Where(cond, a, b *Tensor) (*Tensor, error) {
	const op = "Where"
	ch, err := cond.handle(op)
	if err != nil {
		return nil, err
	}
	ah, err := a.handle(op)
	if err != nil {
		return nil, err
	}
	bh, err := b.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_where(ch, ah, bh)
	runtime.KeepAlive(cond)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return takeTensor(op, r)
}

// Unary ops, with PyTorch's dtype rules.
func (t *Tensor) Neg() (*Tensor, error)     { return t.unary("Tensor.Neg", C.GDT_NEG) }
func (t *Tensor) Abs() (*Tensor, error)     { return t.unary("Tensor.Abs", C.GDT_ABS) }
func (t *Tensor) Exp() (*Tensor, error)     { return t.unary("Tensor.Exp", C.GDT_EXP) }
func (t *Tensor) Log() (*Tensor, error)     { return t.unary("Tensor.Log", C.GDT_LOG) }
func (t *Tensor) Sqrt() (*Tensor, error)    { return t.unary("Tensor.Sqrt", C.GDT_SQRT) }
func (t *Tensor) Rsqrt() (*Tensor, error)   { return t.unary("Tensor.Rsqrt", C.GDT_RSQRT) }
func (t *Tensor) Sin() (*Tensor, error)     { return t.unary("Tensor.Sin", C.GDT_SIN) }
func (t *Tensor) Cos() (*Tensor, error)     { return t.unary("Tensor.Cos", C.GDT_COS) }
func (t *Tensor) Relu() (*Tensor, error)    { return t.unary("Tensor.Relu", C.GDT_RELU) }
func (t *Tensor) Sigmoid() (*Tensor, error) { return t.unary("Tensor.Sigmoid", C.GDT_SIGMOID) }
func (t *Tensor) Tanh() (*Tensor, error)    { return t.unary("Tensor.Tanh", C.GDT_TANH) }
func (t *Tensor) Gelu() (*Tensor, error)    { return t.unary("Tensor.Gelu", C.GDT_GELU) }
func (t *Tensor) Silu() (*Tensor, error)    { return t.unary("Tensor.Silu", C.GDT_SILU) }

// Contiguous returns t itself (another reference) if contiguous, else a contiguous copy.
func (t *Tensor) Contiguous() (*Tensor, error) { return t.unary("Tensor.Contiguous", C.GDT_CONTIGUOUS) }

// ---------------------------------------------------------------- reductions

func (t *Tensor) reduce(op string, code C.int, dims []int64, keepdim bool) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	p, n := shapeArg(dims)
	var k C.int32_t
	if keepdim {
		k = 1
	}
	r := C.gdt_reduce(code, a, p, n, k)
	runtime.KeepAlive(t)
	runtime.KeepAlive(dims)
	return takeTensor(op, r)
}

// Sum over dims (none: all); integer and bool inputs sum to int64.
func (t *Tensor) Sum(dims []int64, keepdim bool) (*Tensor, error) {
	return t.reduce("Tensor.Sum", C.GDT_SUM, dims, keepdim)
}

// Mean over dims (none: all) of a floating tensor.
func (t *Tensor) Mean(dims []int64, keepdim bool) (*Tensor, error) {
	return t.reduce("Tensor.Mean", C.GDT_MEAN, dims, keepdim)
}

// Max is torch.amax over dims (none: all).
func (t *Tensor) Max(dims []int64, keepdim bool) (*Tensor, error) {
	return t.reduce("Tensor.Max", C.GDT_MAX, dims, keepdim)
}

// Min is torch.amin over dims (none: all).
func (t *Tensor) Min(dims []int64, keepdim bool) (*Tensor, error) {
	return t.reduce("Tensor.Min", C.GDT_MIN, dims, keepdim)
}

// Argmax along at most one dimension (none: the flattened tensor).
func (t *Tensor) Argmax(dims []int64, keepdim bool) (*Tensor, error) {
	return t.reduce("Tensor.Argmax", C.GDT_ARGMAX, dims, keepdim)
}

// Argmin along at most one dimension (none: the flattened tensor).
func (t *Tensor) Argmin(dims []int64, keepdim bool) (*Tensor, error) {
	return t.reduce("Tensor.Argmin", C.GDT_ARGMIN, dims, keepdim)
}

// Softmax along dim, of a floating tensor.
func (t *Tensor) Softmax(dim int64) (*Tensor, error) {
	a, err := t.handle("Tensor.Softmax")
	if err != nil {
		return nil, err
	}
	r := C.gdt_softmax(0, a, C.int64_t(dim))
	runtime.KeepAlive(t)
	return takeTensor("Tensor.Softmax", r)
}

// LogSoftmax along dim, of a floating tensor.
func (t *Tensor) LogSoftmax(dim int64) (*Tensor, error) {
	a, err := t.handle("Tensor.LogSoftmax")
	if err != nil {
		return nil, err
	}
	r := C.gdt_softmax(1, a, C.int64_t(dim))
	runtime.KeepAlive(t)
	return takeTensor("Tensor.LogSoftmax", r)
}

// ---------------------------------------------------------------- views
// A view shares t's storage: writes through one are seen by the other.

func (t *Tensor) shapeView(op string, code C.int, s []int64) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	p, n := shapeArg(s)
	r := C.gdt_shapeview(code, a, p, n)
	runtime.KeepAlive(t)
	runtime.KeepAlive(s)
	return takeTensor(op, r)
}

func (t *Tensor) dimView(op string, code C.int, x, y, z int64) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_dimview(code, a, C.int64_t(x), C.int64_t(y), C.int64_t(z))
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// Reshape to shape (one entry may be -1): a view when the strides allow, else a copy.
func (t *Tensor) Reshape(shape ...int64) (*Tensor, error) {
	return t.shapeView("Tensor.Reshape", C.GDT_V_RESHAPE, shape)
}

// View is Reshape that must be a view (ErrShapeMismatch otherwise).
func (t *Tensor) View(shape ...int64) (*Tensor, error) {
	return t.shapeView("Tensor.View", C.GDT_V_VIEW, shape)
}

// Permute reorders the dimensions.
func (t *Tensor) Permute(dims ...int64) (*Tensor, error) {
	return t.shapeView("Tensor.Permute", C.GDT_V_PERMUTE, dims)
}

// Squeeze removes the listed size-1 dimensions (none listed: every size-1 dimension).
func (t *Tensor) Squeeze(dims ...int64) (*Tensor, error) {
	return t.shapeView("Tensor.Squeeze", C.GDT_V_SQUEEZE, dims)
}

// Expand broadcasts to shape (-1 keeps a size).
func (t *Tensor) Expand(shape ...int64) (*Tensor, error) {
	return t.shapeView("Tensor.Expand", C.GDT_V_EXPAND, shape)
}

// Transpose swaps two dimensions.
func (t *Tensor) Transpose(dim0, dim1 int64) (*Tensor, error) {
	return t.dimView("Tensor.Transpose", C.GDT_V_TRANSPOSE, dim0, dim1, 0)
}

// Narrow returns elements start..start+length-1 along dim.
func (t *Tensor) Narrow(dim, start, length int64) (*Tensor, error) {
	return t.dimView("Tensor.Narrow", C.GDT_V_NARROW, dim, start, length)
}

// Unsqueeze inserts a size-1 dimension at dim.
func (t *Tensor) Unsqueeze(dim int64) (*Tensor, error) {
	return t.dimView("Tensor.Unsqueeze", C.GDT_V_UNSQUEEZE, dim, 0, 0)
}

// Flatten flattens dims startDim..endDim into one.
func (t *Tensor) Flatten(startDim, endDim int64) (*Tensor, error) {
	return t.dimView("Tensor.Flatten", C.GDT_V_FLATTEN, startDim, endDim, 0)
}

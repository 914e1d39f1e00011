package devtensor

// #include "fastcall.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Tensor owns one reference to a devtensor tensor (dt_tensor*). Close it when done
// (defer t.Close()); a finalizer releases a forgotten one, but only as a safety net —
// GPU memory should not wait for the garbage collector (lifetime.go: one finalizer per
// 64 Tensors, released once all 64 are unreachable). Using a Tensor after Close
// returns ErrClosed.
//
// Distinct Tensors may be used from different goroutines concurrently, and one Tensor
// may be read concurrently. Close may be called from several goroutines at once (one of
// them releases the reference, the others do nothing), but an op must not race with a
// Close of one of its Tensors (it may fail with ErrClosed or ErrInvalidHandle, or read
// the tensor as it is freed).
// A Tensor must not be copied by value (y := *x would be a second owner of its one
// reference); go vet reports a copy ("copies lock"). Share the *Tensor, or take another
// reference with To(the same device).
type Tensor struct {
	_ noCopy  // go vet: a Tensor must not be copied (lifetime.go)
	h uintptr // the dt_tensor* (C memory), 0 once closed; read with atomic.LoadUintptr
	// small is the shape record of a small CPU tensor outside autograd, which the fast
	// path may take (fastcall.go), 0 otherwise; read with atomic.LoadUint64.
	small uint64
}

// Close releases the Tensor's reference. Closing twice (or a nil Tensor) is a no-op, and
// so is a Close that races another Close of the same Tensor: the handle is swapped out
// atomically, and exactly one Close releases it. The error is always nil (the signature
// is io.Closer's). A small CPU tensor of the fast path (fastcall.go) is released at once,
// by a fast call on the system stack; any other waits in the release slot, without a cgo
// call, until the next cgo call that can allocate (an op, a constructor, To, Forward,
// Backward, Step, ...), which releases it before allocating, or the next such Close
// (which releases the older one), or anything that reports or frees memory. At most one closed tensor waits like this;
// ReleasePending releases it now and returns the error of that release. A release
// that fails elsewhere has no caller to report to: it is counted in the C counter
// gdt_release_errors (shim.h; the package's tests check it stays put). It can fail only
// when the handle was released outside this binding (through the C ABI directly), since
// the binding releases each reference it owns exactly once. See lifetime.go.
func (t *Tensor) Close() error {
	if t == nil || atomic.LoadUintptr(&t.h) == 0 { // no locked swap on a closed Tensor
		return nil
	}
	if h := atomic.SwapUintptr(&t.h, 0); h != 0 { // 0: a concurrent Close got it first
		if fastcallOn && atomic.LoadUint64(&t.small) != 0 {
			releaseSmallNow(h)
		} else {
			releaseLater(h)
		}
	}
	return nil
}

// handle returns the C handle or an error for a nil or closed Tensor.
func (t *Tensor) handle(op string) (C.uintptr_t, error) {
	if t == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil tensor"}
	}
	h := atomic.LoadUintptr(&t.h)
	if h == 0 {
		return 0, closedErr(op)
	}
	return C.uintptr_t(h), nil
}

func takeTensor(op string, r C.gdt_tres) (*Tensor, error) {
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	return newTensor(r.t), nil
}

// sameHandle reports whether a and b hold the same C handle (aliasing).
func sameHandle(a, b *Tensor) bool {
	if a == nil || b == nil {
		return false
	}
	h := atomic.LoadUintptr(&a.h)
	return h != 0 && h == atomic.LoadUintptr(&b.h)
}

func shapeArg(shape []int64) (*C.int64_t, C.size_t) {
	if len(shape) == 0 {
		return nil, 0
	}
	return (*C.int64_t)(unsafe.Pointer(&shape[0])), C.size_t(len(shape))
}

// ---------------------------------------------------------------- constructors

func construct(op string, kind C.int, shape []int64, dtype DType, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	if rec := fastShape(shape, device); rec != 0 && kind != C.GDT_C_RAND && kind != C.GDT_C_RANDN {
		return fastMake(op, C.gdt_fast_make_args{kind: C.int32_t(kind)}, shape, dtype, device, rec)
	}
	p, n := shapeArg(shape)
	r := C.gdt_construct(kind, p, n, C.dt_dtype(dtype), device.c())
	runtime.KeepAlive(shape)
	t, err := takeTensor(op, r)
	return markSmallIfCPU(t, shape, device), err
}

// Empty returns a tensor with uninitialised contents. dtype and device may be
// DefaultDType and DefaultDevice.
func Empty(shape []int64, dtype DType, device Device) (*Tensor, error) {
	return construct("Empty", C.GDT_C_EMPTY, shape, dtype, device)
}

// Zeros returns a tensor of zeros.
func Zeros(shape []int64, dtype DType, device Device) (*Tensor, error) {
	return construct("Zeros", C.GDT_C_ZEROS, shape, dtype, device)
}

// Ones returns a tensor of ones.
func Ones(shape []int64, dtype DType, device Device) (*Tensor, error) {
	return construct("Ones", C.GDT_C_ONES, shape, dtype, device)
}

// Rand returns uniform values in [0, 1) (Philox; the same on every device for a seed).
func Rand(shape []int64, dtype DType, device Device) (*Tensor, error) {
	return construct("Rand", C.GDT_C_RAND, shape, dtype, device)
}

// Randn returns standard normal values.
func Randn(shape []int64, dtype DType, device Device) (*Tensor, error) {
	return construct("Randn", C.GDT_C_RANDN, shape, dtype, device)
}

// Randint returns integers drawn uniformly from [low, high), as torch.randint
// (dt_tensor_randint): element i is low + floor(u*(high-low)) for the u that a Float64
// Rand of the same shape gives element i, so the values are the same on every device for
// a seed. dtype DefaultDType is Int64. Errors: as Rand, plus ErrInvalidArgument for low >=
// high, a range wider than 2^53 or a bound dtype cannot hold.
func Randint(low, high int64, shape []int64, dtype DType, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	p, n := shapeArg(shape)
	r := C.gdt_randint(C.int64_t(low), C.int64_t(high), p, n, C.dt_dtype(dtype), device.c())
	runtime.KeepAlive(shape)
	return takeTensor("Randint", r)
}

// Randperm returns a random permutation of 0 .. n-1, as torch.randperm
// (dt_tensor_randperm): the stable argsort of n Float64 Rand values. dtype DefaultDType
// is Int64. Errors: as Rand, plus ErrInvalidArgument for n < 0, Bool, or a dtype that
// cannot hold n-1 exactly.
func Randperm(n int64, dtype DType, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeTensor("Randperm", C.gdt_randperm(C.int64_t(n), C.dt_dtype(dtype), device.c()))
}

// Full returns a tensor whose every element is value.
func Full(shape []int64, value float64, dtype DType, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	if rec := fastShape(shape, device); rec != 0 {
		return fastMake("Full", C.gdt_fast_make_args{kind: C.GDT_FAST_MAKE_FULL, v: C.double(value)},
			shape, dtype, device, rec)
	}
	p, n := shapeArg(shape)
	r := C.gdt_full(p, n, C.double(value), C.dt_dtype(dtype), device.c())
	runtime.KeepAlive(shape)
	t, err := takeTensor("Full", r)
	return markSmallIfCPU(t, shape, device), err
}

// Arange returns [start, start+step, ...) below end, as torch.arange.
func Arange(start, end, step float64, dtype DType, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeTensor("Arange", C.gdt_arange(C.double(start), C.double(end), C.double(step),
		C.dt_dtype(dtype), device.c()))
}

// Linspace returns steps values from start to end, evenly spaced, both ends included,
// as torch.linspace (dt_tensor_linspace); integer dtypes truncate toward zero. dtype
// DefaultDType is the default dtype. Errors: ErrInvalidArgument for steps < 0,
// ErrDTypeMismatch for Bool, the device errors of Empty.
func Linspace(start, end float64, steps int64, dtype DType, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeTensor("Linspace", C.gdt_linspace(C.double(start), C.double(end), C.int64_t(steps),
		C.dt_dtype(dtype), device.c()))
}

// Eye returns the n x m matrix with ones on the diagonal and zeros elsewhere, as
// torch.eye(n, m) (dt_tensor_eye); any dtype. Errors: ErrInvalidArgument for a negative
// n or m, the device errors of Empty.
func Eye(n, m int64, dtype DType, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeTensor("Eye", C.gdt_eye(C.int64_t(n), C.int64_t(m), C.dt_dtype(dtype), device.c()))
}

// FromSlice returns a new tensor holding a COPY of data, with the given shape (nil
// means the 1-d shape [len(data)]; an empty non-nil shape is a 0-d tensor). The dtype
// follows T (float32 -> Float32, ...). C keeps no pointer to data after the call.
func FromSlice[T Element](data []T, shape []int64, device Device) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	if shape == nil {
		shape = []int64{int64(len(data))}
	}
	var z T
	var dp unsafe.Pointer
	if len(data) > 0 {
		dp = unsafe.Pointer(&data[0])
	}
	nbytes := C.size_t(uintptr(len(data)) * unsafe.Sizeof(z))
	if rec := fastShape(shape, device); rec != 0 {
		t, err := fastMake("FromSlice", C.gdt_fast_make_args{kind: C.GDT_FAST_MAKE_FROM_DATA, data: dp, nbytes: nbytes},
			shape, DTypeOf[T](), device, rec)
		runtime.KeepAlive(data)
		return t, err
	}
	p, n := shapeArg(shape)
	r := C.gdt_from_data(dp, nbytes, p, n, C.dt_dtype(DTypeOf[T]()), device.c())
	runtime.KeepAlive(data)
	runtime.KeepAlive(shape)
	t, err := takeTensor("FromSlice", r)
	return markSmallIfCPU(t, shape, device), err
}

// ToSlice copies the elements of t, in row-major order, into a new Go slice. T must
// match t's dtype (ErrDTypeMismatch otherwise; convert with ToDType first). Works for
// any layout and device.
func ToSlice[T Element](t *Tensor) ([]T, error) {
	const op = "ToSlice"
	if rec := smallOf(t); fastcallOn && rec != 0 {
		return fastToSlice[T](op, t, rec)
	}
	dt, err := t.DType()
	if err != nil {
		return nil, err
	}
	if want := DTypeOf[T](); dt != want {
		return nil, sliceDTypeErr(op, dt, want)
	}
	n, err := t.Numel()
	if err != nil {
		return nil, err
	}
	out := make([]T, n)
	var z T
	var dp unsafe.Pointer
	if n > 0 {
		dp = unsafe.Pointer(&out[0])
	}
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_copy_to_host(h, dp, C.size_t(uintptr(n)*unsafe.Sizeof(z)))
	runtime.KeepAlive(t)
	if err := resErr(op, r); err != nil {
		return nil, err
	}
	return out, nil
}

// sliceDTypeErr is ToSlice's and CopyFromSlice's error for a Go element type that is not
// the tensor's dtype.
func sliceDTypeErr(op string, dt, want DType) error {
	return &Error{Code: ErrDTypeMismatch, Op: op,
		Msg: fmt.Sprintf("tensor has dtype %v, the Go slice element type needs %v", dt, want)}
}

// CopyFromSlice copies data (row-major, T matching t's dtype) into t, in place.
func CopyFromSlice[T Element](t *Tensor, data []T) error {
	const op = "CopyFromSlice"
	h, err := t.handle(op)
	if err != nil {
		return err
	}
	var z T
	var dp unsafe.Pointer
	if len(data) > 0 {
		dp = unsafe.Pointer(&data[0])
	}
	dt, err := t.DType()
	if err != nil {
		return err
	}
	if want := DTypeOf[T](); dt != want {
		return sliceDTypeErr(op, dt, want)
	}
	r := C.gdt_copy_from_host(h, dp, C.size_t(uintptr(len(data))*unsafe.Sizeof(z)))
	runtime.KeepAlive(t)
	runtime.KeepAlive(data)
	return resErr(op, r)
}

// CopyFrom writes src's values into t, in place (PyTorch's t.copy_(src), dt_copy_): src
// broadcasts to t's shape, converts to t's dtype and may be on any device; t keeps its
// memory, so its views and a Graph that reads it see the new values. It fails with
// ErrShapeMismatch when src does not broadcast to t's shape, and with ErrNotSupported in
// grad mode when either tensor requires grad (the copy is not recorded by autograd: copy
// inside NoGrad). On failure t is unchanged.
func (t *Tensor) CopyFrom(src *Tensor) error {
	const op = "Tensor.CopyFrom"
	h, err := t.handle(op)
	if err != nil {
		return err
	}
	sh, err := src.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_copy_(h, sh)
	runtime.KeepAlive(t)
	runtime.KeepAlive(src)
	return resErr(op, r)
}

// ---------------------------------------------------------------- new_* constructors
// (EmptyLike, ZerosLike, ... keep t's shape too: more_ops.go)

func (t *Tensor) newAs(op string, kind C.int, shape []int64, value float64) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	p, n := shapeArg(shape)
	r := C.gdt_new_as(kind, h, p, n, C.double(value))
	runtime.KeepAlive(t)
	runtime.KeepAlive(shape)
	return takeTensor(op, r)
}

// NewEmpty returns an uninitialised tensor of shape with t's dtype and device, as
// PyTorch's Tensor.new_empty. See dt_tensor_new_empty.
func (t *Tensor) NewEmpty(shape []int64) (*Tensor, error) {
	return t.newAs("Tensor.NewEmpty", C.GDT_N_EMPTY, shape, 0)
}

// NewZeros returns zeros of shape with t's dtype and device (Tensor.new_zeros).
func (t *Tensor) NewZeros(shape []int64) (*Tensor, error) {
	return t.newAs("Tensor.NewZeros", C.GDT_N_ZEROS, shape, 0)
}

// NewOnes returns ones of shape with t's dtype and device (Tensor.new_ones).
func (t *Tensor) NewOnes(shape []int64) (*Tensor, error) {
	return t.newAs("Tensor.NewOnes", C.GDT_N_ONES, shape, 0)
}

// NewFull returns a tensor of shape, every element value (cast to t's dtype), on t's
// device (Tensor.new_full).
func (t *Tensor) NewFull(shape []int64, value float64) (*Tensor, error) {
	return t.newAs("Tensor.NewFull", C.GDT_N_FULL, shape, value)
}

// ---------------------------------------------------------------- pinned memory

// EmptyPinned returns an uninitialised cpu:0 tensor in page-locked ("pinned") host
// memory, which copies to and from a GPU can use asynchronously (ToDeviceDType's
// nonBlocking). Pinned memory comes from the CUDA driver: without a usable CUDA backend
// it fails with ErrDeviceUnavailable, naming the reason. See dt_tensor_empty_pinned.
func EmptyPinned(shape []int64, dtype DType) (*Tensor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	p, n := shapeArg(shape)
	r := C.gdt_empty_pinned(p, n, C.dt_dtype(dtype))
	runtime.KeepAlive(shape)
	return takeTensor("EmptyPinned", r)
}

// PinMemory returns t's values in pinned memory, as PyTorch's Tensor.pin_memory: another
// reference to t itself when it is already pinned (close both), else a contiguous copy.
// t must be a CPU tensor (ErrNotSupported otherwise); without a usable CUDA backend it
// fails with ErrDeviceUnavailable. See dt_tensor_pin_memory.
func (t *Tensor) PinMemory() (*Tensor, error) {
	h, err := t.handle("Tensor.PinMemory")
	if err != nil {
		return nil, err
	}
	r := C.gdt_pin_memory(h)
	runtime.KeepAlive(t)
	return takeTensor("Tensor.PinMemory", r)
}

// IsPinned reports whether t's memory is pinned host memory (always false without
// CUDA). See dt_tensor_is_pinned.
func (t *Tensor) IsPinned() (bool, error) {
	const op = "Tensor.IsPinned"
	h, err := t.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_is_pinned(h, &v)
	runtime.KeepAlive(t)
	return v != 0, resErr(op, r)
}

// ---------------------------------------------------------------- queries

// Shape returns the dimensions.
func (t *Tensor) Shape() ([]int64, error) {
	const op = "Tensor.Shape"
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	if rec := smallOf(t); fastcallOn && rec != 0 {
		nd, dims := recordDims(rec)
		return append([]int64{}, dims[:nd]...), nil
	}
	return t.libraryShape(op, h)
}

// libraryShape asks the library for the shape of t, whose handle is h (Shape without the
// shape record).
func (t *Tensor) libraryShape(op string, h C.uintptr_t) ([]int64, error) {
	var buf [C.DT_MAX_DIMS]C.int64_t
	var nd C.size_t
	r := C.gdt_ndim(h, &nd)
	if err := resErr(op, r); err != nil {
		runtime.KeepAlive(t)
		return nil, err
	}
	r = C.gdt_shape(h, &buf[0], C.size_t(len(buf)))
	runtime.KeepAlive(t)
	if err := resErr(op, r); err != nil {
		return nil, err
	}
	out := make([]int64, int(nd))
	for i := range out {
		out[i] = int64(buf[i])
	}
	return out, nil
}

// Strides returns the strides, in elements.
func (t *Tensor) Strides() ([]int64, error) {
	const op = "Tensor.Strides"
	n, err := t.Dim()
	if err != nil {
		return nil, err
	}
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	var buf [C.DT_MAX_DIMS]C.int64_t
	r := C.gdt_strides(h, &buf[0], C.size_t(len(buf)))
	runtime.KeepAlive(t)
	if err := resErr(op, r); err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(buf[i])
	}
	return out, nil
}

// Dim returns the number of dimensions.
func (t *Tensor) Dim() (int, error) {
	const op = "Tensor.Dim"
	h, err := t.handle(op)
	if err != nil {
		return 0, err
	}
	if rec := smallOf(t); fastcallOn && rec != 0 {
		nd, _ := recordDims(rec)
		return nd, nil
	}
	var nd C.size_t
	r := C.gdt_ndim(h, &nd)
	runtime.KeepAlive(t)
	return int(nd), resErr(op, r)
}

// DType returns the element type.
func (t *Tensor) DType() (DType, error) {
	const op = "Tensor.DType"
	h, err := t.handle(op)
	if err != nil {
		return 0, err
	}
	var d C.dt_dtype
	r := C.gdt_dtype(h, &d)
	runtime.KeepAlive(t)
	return DType(d), resErr(op, r)
}

// Device returns the device the tensor's memory is on.
func (t *Tensor) Device() (Device, error) {
	const op = "Tensor.Device"
	h, err := t.handle(op)
	if err != nil {
		return Device{}, err
	}
	var d C.dt_device
	r := C.gdt_device(h, &d)
	runtime.KeepAlive(t)
	if err := resErr(op, r); err != nil {
		return Device{}, err
	}
	return goDevice(d), nil
}

// Numel returns the number of elements (1 for a 0-d tensor).
func (t *Tensor) Numel() (int, error) {
	const op = "Tensor.Numel"
	h, err := t.handle(op)
	if err != nil {
		return 0, err
	}
	if rec := smallOf(t); fastcallOn && rec != 0 {
		return recordNumel(rec), nil
	}
	var n C.size_t
	r := C.gdt_numel(h, &n)
	runtime.KeepAlive(t)
	return int(n), resErr(op, r)
}

// IsContiguous reports whether the elements are contiguous in row-major order.
func (t *Tensor) IsContiguous() (bool, error) {
	const op = "Tensor.IsContiguous"
	h, err := t.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_is_contiguous(h, &v)
	runtime.KeepAlive(t)
	return v != 0, resErr(op, r)
}

// SharesStorage reports whether t and o share storage (one is a view of the other, or
// they are the same tensor).
func (t *Tensor) SharesStorage(o *Tensor) (bool, error) {
	const op = "Tensor.SharesStorage"
	h, err := t.handle(op)
	if err != nil {
		return false, err
	}
	oh, err := o.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_shares_storage(h, oh, &v)
	runtime.KeepAlive(t)
	runtime.KeepAlive(o)
	return v != 0, resErr(op, r)
}

// Item returns the value of a one-element tensor.
func (t *Tensor) Item() (float64, error) {
	const op = "Tensor.Item"
	h, err := t.handle(op)
	if err != nil {
		return 0, err
	}
	if fastcallOn && smallOf(t) != 0 {
		x := C.gdt_fast_read_args{a: h}
		fastcall(unsafe.Pointer(C.gdt_fast_item), unsafe.Pointer(&x))
		runtime.KeepAlive(t)
		return float64(x.v), resErr(op, x.r)
	}
	var v C.double
	r := C.gdt_item(h, &v)
	runtime.KeepAlive(t)
	return float64(v), resErr(op, r)
}

// String returns PyTorch's printed form, e.g. "tensor([1., 2.])" or
// "tensor([1., 2.], device='cuda:0')". A closed tensor prints as "tensor(<closed>)".
func (t *Tensor) String() string {
	h, err := t.handle("Tensor.String")
	if err != nil {
		return "tensor(<closed>)"
	}
	r := C.gdt_string(C.GDT_S_TENSOR, C.dt_device{}, h, nil)
	runtime.KeepAlive(t)
	s, err := takeString("Tensor.String", r)
	if err != nil {
		return fmt.Sprintf("tensor(<%v>)", err)
	}
	return s
}

// ---------------------------------------------------------------- moving

const (
	toNonBlocking = C.DT_TO_NON_BLOCKING
	toCopy        = C.DT_TO_COPY
)

func (t *Tensor) to(op string, d Device, dt DType, flags C.uint32_t) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_to(h, d.c(), C.dt_dtype(dt), flags)
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// To returns t on device as a NEW Tensor, leaving t alone (PyTorch's Tensor.to). When
// the device does not change, the result is another reference to t itself (close both).
func (t *Tensor) To(device Device) (*Tensor, error) {
	return t.to("Tensor.To", device, DefaultDType, 0)
}

// ToDType returns t converted to dtype (aliasing t when it already has it).
func (t *Tensor) ToDType(dtype DType) (*Tensor, error) {
	return t.to("Tensor.ToDType", DefaultDevice, dtype, 0)
}

// ToOptions are the flags of ToDeviceDType (DT_TO_*); the zero value is PyTorch's
// defaults (copy=False, non_blocking=False).
type ToOptions struct {
	Copy        bool // always return a fresh copy, never another reference to t
	NonBlocking bool // allow an asynchronous device copy (GPU, pinned memory)
}

// ToDeviceDType converts device and dtype at once (DefaultDevice / DefaultDType: leave
// that one unchanged), as PyTorch's Tensor.to(device, dtype, non_blocking, copy):
// ToOptions{Copy: true} forces a fresh copy, ToOptions{NonBlocking: true} allows an
// asynchronous device copy. The result is a NEW Tensor; close it and t.
func (t *Tensor) ToDeviceDType(device Device, dtype DType, opts ToOptions) (*Tensor, error) {
	var f C.uint32_t
	if opts.Copy {
		f |= toCopy
	}
	if opts.NonBlocking {
		f |= toNonBlocking
	}
	return t.to("Tensor.ToDeviceDType", device, dtype, f)
}

// Clone returns a fresh copy of t on the same device.
func (t *Tensor) Clone() (*Tensor, error) {
	return t.to("Tensor.Clone", DefaultDevice, DefaultDType, toCopy)
}

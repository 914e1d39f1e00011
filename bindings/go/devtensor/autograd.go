package devtensor

// #include "nn_shim.h"
import "C"

import (
	"runtime"
	"sync/atomic"
)

// SetRequiresGrad marks t, a leaf of a floating dtype, as requiring grad (or not): ops
// on it are then recorded so Backward can compute its gradient.
func (t *Tensor) SetRequiresGrad(on bool) error {
	h, err := t.handle("Tensor.SetRequiresGrad")
	if err != nil {
		return err
	}
	flag := C.int32_t(0)
	if on {
		flag = 1
	}
	if on {
		atomic.StoreUint64(&t.small, 0) // autograd's tensors take the cgo call (fastcall.go)
	}
	r := C.gdt_set_requires_grad(h, flag)
	runtime.KeepAlive(t)
	return resErr("Tensor.SetRequiresGrad", r)
}

// RequiresGrad reports whether autograd tracks t: a leaf marked with SetRequiresGrad, or
// the result of an op recorded on one. See dt_tensor_requires_grad.
func (t *Tensor) RequiresGrad() (bool, error) {
	const op = "Tensor.RequiresGrad"
	h, err := t.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_requires_grad(h, &v)
	runtime.KeepAlive(t)
	return v != 0, resErr(op, r)
}

// IsLeaf reports whether t has no grad_fn: made by the user (a constructor, FromSlice,
// Detach, or an op not recorded: under NoGrad, or on tensors that do not require grad),
// not recorded by an op. See dt_tensor_is_leaf.
func (t *Tensor) IsLeaf() (bool, error) {
	const op = "Tensor.IsLeaf"
	h, err := t.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_is_leaf(h, &v)
	runtime.KeepAlive(t)
	return v != 0, resErr(op, r)
}

// Backward computes the gradient of t with respect to every leaf in its graph and adds
// it to their Grad. grad is t's gradient (nil for a one-element t, meaning 1).
func (t *Tensor) Backward(grad *Tensor) error {
	h, err := t.handle("Tensor.Backward")
	if err != nil {
		return err
	}
	var g C.uintptr_t
	if grad != nil {
		if g, err = grad.handle("Tensor.Backward"); err != nil {
			return err
		}
	}
	r := C.gdt_backward(h, g)
	runtime.KeepAlive(t)
	runtime.KeepAlive(grad)
	return resErr("Tensor.Backward", r)
}

// Grad returns t's accumulated gradient (a new Tensor to Close), or nil when there is
// none yet.
func (t *Tensor) Grad() (*Tensor, error) {
	h, err := t.handle("Tensor.Grad")
	if err != nil {
		return nil, err
	}
	r := C.gdt_grad(h)
	runtime.KeepAlive(t)
	if err := mkerr("Tensor.Grad", r.st, r.msg); err != nil {
		return nil, err
	}
	if r.t == 0 {
		return nil, nil
	}
	return newTensor(r.t), nil
}

// ClearGrad drops t's accumulated gradient (t.grad = None).
func (t *Tensor) ClearGrad() error {
	h, err := t.handle("Tensor.ClearGrad")
	if err != nil {
		return err
	}
	r := C.gdt_clear_grad(h)
	runtime.KeepAlive(t)
	return resErr("Tensor.ClearGrad", r)
}

// GradFnName is PyTorch's name of the backward function that made t ("MulBackward0"),
// or "" for a leaf.
func (t *Tensor) GradFnName() (string, error) {
	h, err := t.handle("Tensor.GradFnName")
	if err != nil {
		return "", err
	}
	r := C.gdt_grad_fn_name(h)
	runtime.KeepAlive(t)
	return takeString("Tensor.GradFnName", r)
}

// Detach returns a new Tensor sharing t's memory, outside any graph.
func (t *Tensor) Detach() (*Tensor, error) {
	h, err := t.handle("Tensor.Detach")
	if err != nil {
		return nil, err
	}
	r := C.gdt_detach(h)
	runtime.KeepAlive(t)
	return takeTensor("Tensor.Detach", r)
}

// SetGradEnabled turns grad mode on (the initial state) or off for the whole process:
// for every OS thread that has no setting of its own, which is every goroutine outside
// NoGrad. Use NoGrad to stop recording in one goroutine only (an inference goroutine
// beside a training one). See dt_set_grad_enabled.
func SetGradEnabled(on bool) error {
	flag := C.int32_t(0)
	if on {
		flag = 1
	}
	return resErr("SetGradEnabled", C.gdt_set_grad_enabled(flag))
}

// GradEnabled reports whether ops run by the calling goroutine are recorded: false inside
// NoGrad, else the process-wide setting (SetGradEnabled). See dt_grad_enabled.
func GradEnabled() (bool, error) {
	var v C.int32_t
	err := resErr("GradEnabled", C.gdt_grad_enabled(&v))
	return v != 0, err
}

// NoGrad runs f with grad mode off for the calling goroutine only, as PyTorch's
// torch.no_grad(): the ops f runs are not recorded, while other goroutines keep
// recording (as SetGradEnabled says). Grad mode belongs to an OS thread
// (dt_set_thread_grad_mode) and a goroutine may move between threads from one cgo call
// to the next, so NoGrad locks the goroutine to its thread (runtime.LockOSThread) while
// f runs, turns that thread's mode off, and afterwards sets the thread's previous mode
// back and unlocks it, also when f panics (the panic then goes on). Goroutines that f
// starts run on other threads and record as usual; f must not call
// runtime.UnlockOSThread without a matching LockOSThread (NoGrad reports that as
// ErrInvalidArgument when it notices the goroutine has left the thread). NoGrad calls
// may nest. The result is f's error, or NoGrad's own when f returned nil.
func NoGrad(f func() error) (err error) {
	const op = "NoGrad"
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // deferred first, so it runs after the restore
	var prev C.int32_t
	if err := resErr(op, C.gdt_no_grad_enter(&prev)); err != nil {
		return err
	}
	defer func() {
		if e := resErr(op, C.gdt_no_grad_leave(prev)); e != nil && err == nil {
			err = e
		}
	}()
	return f()
}

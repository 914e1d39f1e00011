package devtensor

// #include "nn_shim.h"
import "C"

import "runtime"

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
	r := C.gdt_set_requires_grad(h, flag)
	runtime.KeepAlive(t)
	return resErr("Tensor.SetRequiresGrad", r)
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

// SetGradEnabled turns grad mode on or off for the whole process (not per goroutine:
// goroutines move between threads).
func SetGradEnabled(on bool) error {
	flag := C.int32_t(0)
	if on {
		flag = 1
	}
	return resErr("SetGradEnabled", C.gdt_set_grad_enabled(flag))
}

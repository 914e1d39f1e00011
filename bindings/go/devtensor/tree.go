package devtensor

// #include "norm_shim.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// NamedModule is a child module with its name, as PyTorch's named_children() gives them:
// a Sequential's children are "0", "1", ...; the name is the middle part of the child's
// state_dict keys ("0.weight" is parameter "weight" of child "0").
type NamedModule struct {
	Name   string
	Module *Module
}

// NamedModules is what Module.Children returns: each Module a reference of its own that
// the caller closes (Close closes them all).
type NamedModules []NamedModule

// Close closes every module of ns and returns the first error (nil when every Close
// succeeded). Closing twice is harmless (Module.Close is idempotent).
func (ns NamedModules) Close() error {
	var first error
	for _, n := range ns {
		if err := n.Module.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Kind returns the module's kind, PyTorch's class name: "Linear", "Sequential",
// "BatchNorm2d", "ReLU", ... (dt_module_kind).
//
// Errors: ErrInvalidArgument (a nil m), ErrClosed, ErrInvalidHandle, ErrOutOfMemory.
func (m *Module) Kind() (string, error) {
	const op = "Module.Kind"
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return "", err
	}
	defer unlock()
	r := C.gdt_module_kind(h)
	runtime.KeepAlive(m)
	return takeString(op, r)
}

// Children returns the module's direct children in order with their names, as PyTorch's
// named_children() (dt_module_child_count, dt_module_child_at); a module that holds none
// (a Linear) gives an empty list. Each child is the SAME module as the parent's part, not
// a copy: a NEW reference to it, so its parameters are the parent's, and moving,
// loading, training or putting it in eval mode through it changes the parent. It stays
// valid after the parent is closed. The caller owns the returned modules and must Close
// them (NamedModules.Close); closing a child never closes the parent's part.
//
// A child's *Module has a lock of its own (see Module): a call through the child does
// not wait for a call through the parent, which the C library makes safe (a Forward
// that overlaps a To may fail with ErrDeviceMismatch, one that overlaps a Load may see
// some old values and some new).
//
// Errors: ErrInvalidArgument (a nil m), ErrClosed, ErrInvalidHandle, ErrOutOfMemory;
// nothing is returned then (the children already taken are closed).
func (m *Module) Children() (NamedModules, error) {
	const op = "Module.Children"
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cnt := C.gdt_module_child_count(h)
	if err := mkerr(op, cnt.st, cnt.msg); err != nil {
		return nil, err
	}
	out := make(NamedModules, 0, int(cnt.n))
	for i := 0; i < int(cnt.n); i++ {
		r := C.gdt_module_child_at(h, C.size_t(i))
		if err := mkerr(op, r.st, r.msg); err != nil {
			out.Close()
			return nil, err
		}
		name := C.GoString(r.name)
		C.free(unsafe.Pointer(r.name))
		out = append(out, NamedModule{Name: name, Module: wrapModule(r.h)})
	}
	runtime.KeepAlive(m)
	return out, nil
}

// Child returns the descendant at a dotted path (dt_module_child): "2" is net[2] in
// PyTorch, "features.0" net.features[0], "2.1" net[2][1]. As for Children, it is a NEW
// reference to the SAME module (not a copy) that the caller owns and must Close; writes,
// moves and loads through it change the parent, and it stays valid after the parent is
// closed.
//
// Errors: ErrInvalidArgument (a nil m; no such child: the message names the missing part
// and the children there are, e.g. `no child "5" on the path "2.5" (Sequential's
// children: 0, 1)`; a path holding a NUL byte), ErrClosed, ErrInvalidHandle,
// ErrOutOfMemory.
func (m *Module) Child(path string) (*Module, error) {
	const op = "Module.Child"
	r, err := atPath(m, op, path, func(h C.uintptr_t, cs *C.char) C.gdt_hres { return C.gdt_module_child(h, cs) })
	if err != nil {
		return nil, err
	}
	return takeModule(op, r)
}

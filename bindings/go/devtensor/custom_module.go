package devtensor

// #include "custom_module_shim.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// ForwardFunc is the forward of a module made by NewModule, as the forward method of a
// torch.nn.Module subclass: it computes the output from inputs with the package's ops and
// the module's parts, reached through self (self.Child("conv1"),
// self.GetParameter("scale"), self.GetBuffer("steps")).
//
// self and inputs are valid for the call only: each is a reference of its own, taken
// for the call and let go when the function returns (using one afterwards gives
// ErrClosed). The function need not close them (closing one is harmless). self is the
// module being run, which is not always the *Module NewModule returned: DataParallel
// runs replicas whose tensors live on other devices, so reach the parts through self,
// not through Modules or Tensors kept from outside. Inputs past ModuleSpec.MinInputs
// may be nil (ForwardOptional's nil, PyTorch's None); the others never are.
//
// On success it returns a NEW Tensor, which the module takes over: its reference goes to
// Forward's caller and the returned *Tensor is closed (a tensor the function keeps for
// later must be returned as another reference: t.To of its own device). It may return
// one of inputs, which is then its caller's. A nil Tensor with a nil error makes
// Forward fail (ErrInvalidArgument, "returned DT_OK but no output").
//
// An error makes Forward fail with the error's Code when it carries one of the library's
// (the error of a devtensor call, wrapped or not: errors.As finds the Code), else with
// ErrInvalidArgument; in both cases the message names the module's kind and quotes
// err.Error() (for an *Error returned as it is, its message alone). A panic is recovered and reported in the same way, as "the forward
// function panicked: " and the panic's value (an error value, as Must panics with,
// keeps its Code).
//
// It may run on several goroutines at once (DataParallel's replicas, or Forwards from
// several goroutines), on threads the library started, and re-entrantly (a module made
// by NewModule inside another): it must be safe for concurrent use. It runs on the
// goroutine (and OS thread) that called Forward, or on one of DataParallel's threads, so
// it must not call runtime.Goexit (t.Fatal in a test): report an error instead. It must
// not move or close the module it runs (self.To fails inside a forward, and Close,
// Train, Eval, Load and LoadStateDict on the *Module whose Forward is running wait for
// that Forward: a deadlock), nor keep self or inputs past the call.
type ForwardFunc func(self *Module, inputs []*Tensor) (*Tensor, error)

// ModuleSpec is what NewModule makes a module of: its named children, its own
// parameters and buffers, and the number of inputs its forward takes. Names are PyTorch's
// attribute names: not empty, without '.' or a NUL byte, and unique across the three
// lists; they are the parts of the state_dict keys ("conv1.weight", "scale").
type ModuleSpec struct {
	// Children are the submodules, in order (PyTorch's named_children()). NewModule
	// takes them over, as Sequential does: closing the module closes them, so the caller
	// does not Close them (doing so anyway is harmless, the module holding references of
	// its own); on error nothing is taken. The same module may appear twice, sharing its
	// parameters, as in PyTorch.
	Children NamedModules
	// Parameters are the module's own parameters (nn.Parameter): NewModule copies each
	// tensor's values into a new parameter of the same shape, dtype and device, which
	// requires grad. Floating dtypes only. The caller still owns (and closes) the
	// tensors given; Module.GetParameter returns the module's own.
	Parameters NamedTensors
	// Buffers are the module's own buffers (register_buffer): copies of the tensors'
	// values, of any dtype, not requiring grad. The caller still owns the tensors given.
	Buffers NamedTensors
	// MinInputs and MaxInputs bound the number of inputs Forward takes (MaxInputs at
	// most 16); both 0 means exactly 1 (MinInputs 0 with a MaxInputs allows a call with
	// none).
	MinInputs, MaxInputs int
}

// moduleForward is the Go function of a module made by NewModule, reached from C
// through a cgo.Handle (custom_module_export.go). The module and every replica
// DataParallel makes of it share it.
type moduleForward struct {
	fn ForwardFunc
}

// liveModuleForwards counts the Go functions the C library may still call: made by
// NewModule, let go by gdtModuleForwardFree (the tests check it returns to where it was).
var liveModuleForwards int64

// NewModule makes a module whose forward is a Go function (dt_module_new), as a subclass
// of torch.nn.Module in PyTorch: a ResNet block with its residual sum, a model with a
// custom head. Its Kind is kind, PyTorch's class name ("BasicBlock"), which error
// messages name. It is in training mode; otherwise it is a module as any other: its
// state dict holds its own parameters and buffers under their names ("scale") and its
// children's under theirs ("conv1.weight", "bn1.running_mean"), so a state dict PyTorch saved
// loads into a tree built of such modules; To moves it, Train and Eval reach its
// children, it may sit in a Sequential, an optimizer takes its Parameters, and
// DataParallel and DistributedDataParallel wrap it. See ForwardFunc for what forward may
// do.
//
// forward is held until the module and every DataParallel replica of it are gone. The
// caller owns the Module and must Close it; Children are taken over (see ModuleSpec).
//
// Errors: ErrInvalidArgument (an empty kind, a nil forward, a name that is empty, holds
// a '.' or a NUL byte or is used twice, a negative input count, MinInputs over
// MaxInputs, MaxInputs over 16, a nil Module or Tensor in a list), ErrDTypeMismatch (a
// parameter that is not floating), ErrClosed (a closed child or tensor),
// ErrOutOfMemory, ErrVersion. Nothing is taken or kept then.
func NewModule(kind string, spec ModuleSpec, forward ForwardFunc) (*Module, error) {
	const op = "NewModule"
	if versionErr != nil {
		return nil, versionErr
	}
	if forward == nil {
		return nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: "forward is nil"}
	}
	if spec.MinInputs < 0 || spec.MaxInputs < 0 {
		return nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: fmt.Sprintf(
			"MinInputs %d and MaxInputs %d must not be negative", spec.MinInputs, spec.MaxInputs)}
	}
	var names cStrings
	defer names.free()
	ckind, err := cString(op, "kind", kind)
	if err != nil {
		return nil, err
	}
	names = append(names, ckind)
	cnames, children, err := names.modules(op, spec.Children)
	if err != nil {
		return nil, err
	}
	pnames, params, err := names.tensors(op, "parameter", spec.Parameters)
	if err != nil {
		return nil, err
	}
	bnames, buffers, err := names.tensors(op, "buffer", spec.Buffers)
	if err != nil {
		return nil, err
	}
	f := &moduleForward{fn: forward}
	key := cgo.NewHandle(f)
	atomic.AddInt64(&liveModuleForwards, 1)
	r := C.gdt_module_new(ckind, C.size_t(len(children)), first(cnames), first(children),
		C.size_t(len(params)), first(pnames), first(params),
		C.size_t(len(buffers)), first(bnames), first(buffers),
		C.size_t(spec.MinInputs), C.size_t(spec.MaxInputs), C.uintptr_t(key))
	runtime.KeepAlive(spec.Children)
	runtime.KeepAlive(spec.Parameters)
	runtime.KeepAlive(spec.Buffers)
	runtime.KeepAlive(cnames)
	runtime.KeepAlive(pnames)
	runtime.KeepAlive(bnames)
	runtime.KeepAlive(children)
	runtime.KeepAlive(params)
	runtime.KeepAlive(buffers)
	m, err := takeModule(op, r)
	if err != nil {
		key.Delete() // the library frees it only once a module holds it
		atomic.AddInt64(&liveModuleForwards, -1)
		return nil, err
	}
	for _, c := range spec.Children {
		m.children = append(m.children, c.Module)
	}
	return m, nil
}

// first returns &s[0], or nil for an empty s (C's NULL for an empty list).
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// cStrings are the C strings one call needs, freed together after it.
type cStrings []*C.char

func (cs *cStrings) free() {
	for _, s := range *cs {
		C.free(unsafe.Pointer(s))
	}
	*cs = nil
}

// name adds a C copy of s (refused when it holds a NUL byte) to cs and returns it.
func (cs *cStrings) name(op, what, s string) (*C.char, error) {
	c, err := cString(op, what, s)
	if err != nil {
		return nil, err
	}
	*cs = append(*cs, c)
	return c, nil
}

// modules returns the names (C strings kept in cs) and handles of ms.
func (cs *cStrings) modules(op string, ms NamedModules) ([]*C.char, []C.uintptr_t, error) {
	names := make([]*C.char, len(ms))
	hs := make([]C.uintptr_t, len(ms))
	for i, nm := range ms {
		var err error
		if names[i], err = cs.name(op, "child name", nm.Name); err != nil {
			return nil, nil, err
		}
		if hs[i], err = nm.Module.handle(op); err != nil {
			err.(*Error).Msg += fmt.Sprintf(" (child %q)", nm.Name)
			return nil, nil, err
		}
	}
	return names, hs, nil
}

// tensors returns the names (C strings kept in cs) and handles of ts.
func (cs *cStrings) tensors(op, what string, ts NamedTensors) ([]*C.char, []C.uintptr_t, error) {
	names := make([]*C.char, len(ts))
	hs := make([]C.uintptr_t, len(ts))
	for i, nt := range ts {
		var err error
		if names[i], err = cs.name(op, what+" name", nt.Name); err != nil {
			return nil, nil, err
		}
		if hs[i], err = nt.Tensor.handle(op); err != nil {
			err.(*Error).Msg += fmt.Sprintf(" (%s %q)", what, nt.Name)
			return nil, nil, err
		}
	}
	return names, hs, nil
}

// GetParameter returns the parameter at a dotted path, as PyTorch's
// get_parameter("layer1.0.bn1.weight") (dt_module_get_parameter): a NEW reference to the
// module's own tensor, not a copy, so writes through it (CopyFrom, an optimizer's step)
// change the module, and it follows To. The caller owns it and must Close it. It is a
// reader, as Forward: a ForwardFunc reaches its module's parameters this way.
//
// Errors: ErrInvalidArgument (a nil m; no such child or parameter: the message names
// what is missing and, for a tensor, the ones there are, e.g. `no parameter "bn1.scale"
// (the BatchNorm2d there has parameters weight, bias)`; a path holding a NUL byte), ErrClosed,
// ErrInvalidHandle, ErrOutOfMemory.
func (m *Module) GetParameter(path string) (*Tensor, error) {
	return m.getTensor("Module.GetParameter", path, 0)
}

// GetBuffer returns the buffer at a dotted path ("bn1.running_mean"), as PyTorch's
// get_buffer (dt_module_get_buffer): a NEW reference to the module's own tensor, as
// GetParameter. Errors: as GetParameter's.
func (m *Module) GetBuffer(path string) (*Tensor, error) {
	return m.getTensor("Module.GetBuffer", path, 1)
}

func (m *Module) getTensor(op, path string, buffers C.int) (*Tensor, error) {
	r, err := atPath(m, op, path, func(h C.uintptr_t, cs *C.char) C.gdt_tres {
		return C.gdt_module_get_tensor(h, cs, buffers)
	})
	if err != nil {
		return nil, err
	}
	return takeTensor(op, r)
}

// atPath runs call on m's handle (m held as a reader) and path as a C string, for the
// lookups by dotted path (Child, GetParameter, GetBuffer).
func atPath[R any](m *Module, op, path string, call func(h C.uintptr_t, cs *C.char) R) (r R, err error) {
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return r, err
	}
	defer unlock()
	cs, err := cString(op, "path", path)
	if err != nil {
		return r, err
	}
	defer C.free(unsafe.Pointer(cs))
	r = call(h, cs)
	runtime.KeepAlive(m)
	return r, nil
}

// run calls the function for one forward: hs holds self's reference and the inputs'
// (0 for none), which the Go wrappers own for the call; when it has returned, run writes
// back in hs what the C trampoline must release (0 where the user closed a wrapper or
// returned it). It returns the status, the output's reference, and the message of a
// failure.
func (f *moduleForward) run(hs []C.uintptr_t) (st int32, out C.uintptr_t, msg string) {
	self := &Module{h: uintptr(hs[0])} // no finalizer: its reference is taken back below
	inputs := make([]*Tensor, len(hs)-1)
	for i := range inputs {
		if h := hs[i+1]; h != 0 {
			inputs[i] = newTensor(h)
		}
	}
	y, err := f.call(self, inputs)
	if err == nil && y != nil {
		// Taken before the inputs are: the function may have returned one of them.
		if h := atomic.SwapUintptr(&y.h, 0); h != 0 {
			out = C.uintptr_t(h)
		} else {
			err = errors.New("the forward function returned a closed Tensor")
		}
	}
	self.mu.Lock() // waits for a call on self that the function left running
	hs[0] = C.uintptr_t(atomic.SwapUintptr(&self.h, 0))
	self.mu.Unlock()
	for i, t := range inputs {
		if t != nil {
			hs[i+1] = C.uintptr_t(atomic.SwapUintptr(&t.h, 0))
		}
	}
	if err != nil {
		return forwardStatus(err), 0, forwardMessage(err)
	}
	return C.DT_OK, out, ""
}

// forwardMessage is the text a failed forward hands the library: the library's own
// message for an *Error returned as it is (its Op and Code would repeat what the
// library's error says: "BasicBlock.forward: Conv2d(...): ..."), else err.Error().
func forwardMessage(err error) string {
	if e, ok := err.(*Error); ok && e.Msg != "" {
		return e.Msg
	}
	return err.Error()
}

// call runs the user's function, turning a panic into an error.
func (f *moduleForward) call(self *Module, inputs []*Tensor) (y *Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			y = nil
			if e, ok := r.(error); ok {
				err = &panicError{msg: "the forward function panicked: " + e.Error(), err: e}
			} else {
				err = &panicError{msg: fmt.Sprint("the forward function panicked: ", r)}
			}
		}
	}()
	return f.fn(self, inputs)
}

// panicError is a recovered panic of a forward function: its text, and the panic's value
// when it was an error (whose Code it keeps).
type panicError struct {
	msg string
	err error
}

func (e *panicError) Error() string { return e.msg }
func (e *panicError) Unwrap() error { return e.err }

// forwardStatus is the status a failed forward returns: the error's Code when it is one
// of the C library's, else DT_ERR_INVALID_ARGUMENT.
func forwardStatus(err error) int32 {
	var c Code
	if errors.As(err, &c) && c >= ErrInvalidArgument && c <= ErrDistributed {
		return int32(c)
	}
	return int32(ErrInvalidArgument)
}

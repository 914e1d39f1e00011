package devtensor

// #include "state_dict_shim.h"
import "C"

import (
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// StateDict owns one reference to a devtensor state dict (dt_state_dict*): an ordered
// map from names to tensors, as PyTorch's state_dict. Names are unique and keep the
// order in which they were first set; the map holds references to its tensors (shared,
// not copied). Module.StateDict gives a module's parameters and buffers by their PyTorch
// names ("0.weight"), Module.LoadStateDict copies one into a module, and Save /
// LoadSafetensors write and read safetensors files, the format of PyTorch's
// safetensors.torch.save_file(model.state_dict(), path).
//
// Close it when done; a finalizer releases a forgotten one, only as a safety net. Closing
// it releases the map's references to its tensors, not the Tensors the caller took out
// of it (Get, At, Entries), which the caller closes. A StateDict may be used from several
// goroutines at once (the C library makes each call see it before or after a concurrent
// Set, never in between). Close may be called from several goroutines at once (exactly
// one releases), but must not race other use of the StateDict. A StateDict must not be
// copied by value (go vet reports a copy): share the *StateDict.
type StateDict struct {
	_ noCopy  // go vet: a StateDict must not be copied (lifetime.go)
	h uintptr // the dt_state_dict* (C memory), 0 once closed; read with atomic.LoadUintptr
	// Padding to 16 bytes keeps a StateDict out of the runtime's tiny allocator: a
	// forgotten 8-byte one sharing a 16-byte block with a live neighbour is never
	// finalized (seen as a flaky TestStateDictOwnership).
	_ [1]uintptr
}

func wrapStateDict(h C.uintptr_t) *StateDict {
	sd := &StateDict{h: uintptr(h)}
	runtime.SetFinalizer(sd, func(sd *StateDict) {
		if h := atomic.SwapUintptr(&sd.h, 0); h != 0 {
			C.gdt_state_dict_release_quiet(C.uintptr_t(h))
		}
	})
	return sd
}

func takeStateDict(op string, r C.gdt_hres) (*StateDict, error) {
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	return wrapStateDict(r.h), nil
}

// cString is C.CString(s) (the caller frees it), or ErrInvalidArgument when s holds a NUL
// byte, where C would cut it short (another name, another path).
func cString(op, what, s string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: what + " " + strconv.Quote(s) + " holds a NUL byte"}
	}
	return C.CString(s), nil
}

func (sd *StateDict) handle(op string) (C.uintptr_t, error) {
	if sd == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil state dict"}
	}
	h := atomic.LoadUintptr(&sd.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed state dict"}
	}
	return C.uintptr_t(h), nil
}

// NewStateDict returns a new state dict holding entries, in order (dt_state_dict_new,
// then Set for each; a name given twice keeps its first position and its last tensor).
// Parameters' result can be passed as it is: NewStateDict(params...). The state dict
// takes references of its own: the caller still closes the entries' Tensors, and owns
// the StateDict and must Close it. Errors: ErrInvalidArgument (a nil or closed Tensor,
// a name holding a NUL byte, the message naming it), ErrOutOfMemory, ErrVersion; on
// error nothing is left to close.
func NewStateDict(entries ...Named) (*StateDict, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	sd, err := takeStateDict("NewStateDict", C.gdt_state_dict_new())
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := sd.set("NewStateDict", e.Name, e.Tensor); err != nil {
			_ = sd.Close()
			return nil, err
		}
	}
	return sd, nil
}

// LoadSafetensors reads the safetensors file at path (written by StateDict.Save,
// Module.Save or PyTorch's safetensors) into a new state dict whose tensors are on
// device (DefaultDevice, the zero Device: the process default device), in the file's
// order (dt_safetensors_load). The whole file is checked before any tensor is made. On
// a CPU device the tensors share a private mapping of the file (writing to them never
// changes the file); on another device the data is copied there. The caller owns the
// StateDict and must Close it. Errors: ErrIO (no such file, not a regular file; the
// message has the path), ErrFormat (the file breaks the format; the message says what
// is wrong), ErrNotSupported (a dtype devtensor lacks), ErrInvalidArgument (an empty
// path, or one holding a NUL byte), ErrInvalidDevice, ErrDeviceUnavailable,
// ErrOutOfMemory, ErrVersion.
func LoadSafetensors(path string, device Device) (*StateDict, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	cs, err := cString("LoadSafetensors", "path", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cs))
	return takeStateDict("LoadSafetensors", C.gdt_safetensors_load(cs, device.c()))
}

// Close releases the StateDict's reference (and, with the last reference, the map's
// references to its tensors) and returns the error of that release (nil when it
// succeeded). Closing twice (or a nil StateDict) is a no-op returning nil, and so is a
// Close that races another Close of the same StateDict: exactly one releases. Using the
// StateDict afterwards returns ErrClosed.
func (sd *StateDict) Close() error {
	if sd == nil {
		return nil
	}
	h := atomic.SwapUintptr(&sd.h, 0)
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(sd, nil)
	return resErr("StateDict.Close", C.gdt_state_dict_release(C.uintptr_t(h)))
}

// Len returns the number of entries (dt_state_dict_count); 0 for a nil or closed
// StateDict.
func (sd *StateDict) Len() int {
	h, err := sd.handle("StateDict.Len")
	if err != nil {
		return 0
	}
	r := C.gdt_state_dict_count(h)
	runtime.KeepAlive(sd)
	if mkerr("StateDict.Len", r.st, r.msg) != nil {
		return 0
	}
	return int(r.n)
}

// entry reads entry i's name and, when withTensor, a new reference to its tensor.
func (sd *StateDict) entry(op string, h C.uintptr_t, i int, withTensor bool) (Named, error) {
	wt := C.int(0)
	if withTensor {
		wt = 1
	}
	r := C.gdt_state_dict_entry(h, C.size_t(i), wt)
	runtime.KeepAlive(sd)
	if err := mkerr(op, r.st, r.msg); err != nil {
		return Named{}, err
	}
	name := C.GoString(r.name)
	C.free(unsafe.Pointer(r.name))
	n := Named{Name: name}
	if withTensor {
		n.Tensor = newTensor(r.t)
	}
	return n, nil
}

// Names returns the names in order. Errors: ErrClosed, ErrInvalidArgument (a nil
// StateDict), ErrOutOfMemory.
func (sd *StateDict) Names() ([]string, error) {
	const op = "StateDict.Names"
	h, err := sd.handle(op)
	if err != nil {
		return nil, err
	}
	n := sd.Len()
	names := make([]string, 0, n)
	for i := 0; i < n; i++ {
		e, err := sd.entry(op, h, i, false)
		if err != nil {
			return nil, err
		}
		names = append(names, e.Name)
	}
	return names, nil
}

// At returns entry i (0 <= i < Len) with its name (dt_state_dict_name,
// dt_state_dict_get): the Tensor is a new reference to the tensor the map holds (the
// same data, not a copy), which the caller closes. Entries are never removed, so an
// index below a Len seen earlier stays valid. Errors: ErrInvalidArgument (i out of
// range, a nil StateDict), ErrClosed, ErrOutOfMemory.
func (sd *StateDict) At(i int) (Named, error) {
	const op = "StateDict.At"
	h, err := sd.handle(op)
	if err != nil {
		return Named{}, err
	}
	if i < 0 {
		return Named{}, &Error{Code: ErrInvalidArgument, Op: op, Msg: "negative index"}
	}
	return sd.entry(op, h, i, true)
}

// Entries returns every entry in order, as Module.Parameters does: tensors shared with
// the map, each a reference of its own that the caller closes (NamedTensors.Close closes
// them all). Errors: as At; on error nothing is left to close.
func (sd *StateDict) Entries() (NamedTensors, error) {
	const op = "StateDict.Entries"
	h, err := sd.handle(op)
	if err != nil {
		return nil, err
	}
	n := sd.Len()
	out := make(NamedTensors, 0, n)
	for i := 0; i < n; i++ {
		e, err := sd.entry(op, h, i, true)
		if err != nil {
			_ = out.Close()
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Get returns the tensor named name (dt_state_dict_find): a new reference to the tensor
// the map holds (the same data, not a copy), which the caller closes. Errors:
// ErrInvalidArgument when no entry has that name (the message names it; a name holding
// a NUL byte has none) or sd is nil, ErrClosed.
func (sd *StateDict) Get(name string) (*Tensor, error) {
	const op = "StateDict.Get"
	h, err := sd.handle(op)
	if err != nil {
		return nil, err
	}
	cs, err := cString(op, "state dict name", name)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cs))
	r := C.gdt_state_dict_find(h, cs)
	runtime.KeepAlive(sd)
	return takeTensor(op, r)
}

// Set maps name to t (dt_state_dict_set): the map takes a reference of its own (the
// caller still closes t). A new name is appended; an existing name keeps its position
// and now maps to t. Errors: ErrInvalidArgument (a nil StateDict or Tensor, a name
// holding a NUL byte, a name that is not valid UTF-8), ErrClosed (sd or t closed),
// ErrOutOfMemory.
func (sd *StateDict) Set(name string, t *Tensor) error { return sd.set("StateDict.Set", name, t) }

func (sd *StateDict) set(op, name string, t *Tensor) error {
	h, err := sd.handle(op)
	if err != nil {
		return err
	}
	th, err := t.handle(op)
	if err != nil {
		return err
	}
	cs, err := cString(op, "state dict name", name)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cs))
	r := C.gdt_state_dict_set(h, cs, th)
	runtime.KeepAlive(sd)
	runtime.KeepAlive(t)
	return resErr(op, r)
}

// Save writes the map to path as a safetensors file (dt_safetensors_save): the tensors
// in order, each as contiguous little-endian bytes whatever its device and strides. The
// file is written under a temporary name and renamed onto path, so a failed Save leaves
// no partial file. Errors: ErrIO (the file cannot be created or written; the message has
// the path and the system's reason), ErrInvalidArgument (an empty path or one holding a
// NUL byte, an entry named "__metadata__", which the format reserves), ErrClosed,
// ErrOutOfMemory, and the errors of copying a device tensor to the host.
func (sd *StateDict) Save(path string) error {
	const op = "StateDict.Save"
	h, err := sd.handle(op)
	if err != nil {
		return err
	}
	cs, err := cString(op, "path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cs))
	r := C.gdt_safetensors_save(h, cs)
	runtime.KeepAlive(sd)
	return resErr(op, r)
}

// StateDict returns the module's state dict (dt_module_state_dict), as PyTorch's
// model.state_dict(): its parameters then its buffers, by their PyTorch names
// ("0.weight"), SHARED with the module (the tensors are the module's own: they see later
// training steps and moves). It runs beside Forward and the other readers (the Module's
// read lock). The caller owns the StateDict and must Close it. Errors: ErrClosed for a
// closed m, ErrInvalidArgument for a nil one, ErrOutOfMemory.
func (m *Module) StateDict() (*StateDict, error) {
	const op = "Module.StateDict"
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r := C.gdt_module_state_dict(h)
	runtime.KeepAlive(m)
	return takeStateDict(op, r)
}

// LoadStateDict copies every tensor of sd into the module's parameter or buffer of the
// same name (dt_module_load_state_dict), converting dtype and device, as PyTorch's
// load_state_dict(sd, strict=True): all or nothing. The values are written in place, so
// Tensors taken from Parameters (and an optimizer over them) see them. It is exclusive,
// as Load: it waits for the calls in progress on m, and later ones wait for it. Errors:
// ErrInvalidArgument for a missing or unexpected key or a wrong shape (the message names
// the key; the module is unchanged then) or a nil m or sd, ErrClosed (m or sd closed),
// ErrOutOfMemory.
func (m *Module) LoadStateDict(sd *StateDict) error {
	const op = "Module.LoadStateDict"
	sh, err := sd.handle(op)
	if err != nil {
		return err
	}
	h, unlock, err := m.acquire(op, true)
	if err != nil {
		return err
	}
	defer unlock()
	r := C.gdt_module_load_state_dict(h, sh)
	runtime.KeepAlive(m)
	runtime.KeepAlive(sd)
	return resErr(op, r)
}

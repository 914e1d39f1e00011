package devtensor

// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Code is a devtensor status code (dt_status). A Code is itself an error, so the
// exported sentinels below can be matched with errors.Is against any error this package
// returns.
type Code int32

// Status codes, with the values of the C header (stable across releases), plus
// ErrClosed, which is the Go binding's own.
const (
	ErrInvalidArgument   Code = C.DT_ERR_INVALID_ARGUMENT
	ErrInvalidHandle     Code = C.DT_ERR_INVALID_HANDLE
	ErrInvalidDevice     Code = C.DT_ERR_INVALID_DEVICE
	ErrDeviceUnavailable Code = C.DT_ERR_DEVICE_UNAVAILABLE
	ErrDeviceMismatch    Code = C.DT_ERR_DEVICE_MISMATCH
	ErrShapeMismatch     Code = C.DT_ERR_SHAPE_MISMATCH
	ErrDTypeMismatch     Code = C.DT_ERR_DTYPE_MISMATCH
	ErrOutOfMemory       Code = C.DT_ERR_OUT_OF_MEMORY
	ErrDeviceLost        Code = C.DT_ERR_DEVICE_LOST
	ErrBackend           Code = C.DT_ERR_BACKEND
	ErrNotSupported      Code = C.DT_ERR_NOT_SUPPORTED
	ErrIO                Code = C.DT_ERR_IO
	ErrFormat            Code = C.DT_ERR_FORMAT
	ErrInternal          Code = C.DT_ERR_INTERNAL
	ErrDistributed       Code = C.DT_ERR_DISTRIBUTED // a process group failed; it is unusable (ProcessGroup)

	// ErrClosed: the Tensor (or Scope, Stream, Event, Graph, ProcessGroup) was used after
	// Close. Not a C status code.
	ErrClosed Code = 1000
	// ErrVersion: the loaded libdevtensor is older than the header this package was
	// built against, or of another major version. Not a C status code.
	ErrVersion Code = 1001
)

// Error returns the short English name of the code ("device mismatch").
func (c Code) Error() string {
	switch c {
	case ErrClosed:
		return "tensor is closed"
	case ErrVersion:
		return "incompatible libdevtensor version"
	}
	return C.GoString(C.dt_status_string(C.dt_status(c)))
}

// Error is what every failing function of this package returns: the status code, the
// Go operation that failed, and the library's message, fetched on the thread that
// failed in the same cgo call.
type Error struct {
	Code Code   // the status code; errors.Is(err, ErrDeviceMismatch) compares it
	Op   string // the Go operation, e.g. "Tensor.Add"
	Msg  string // the library's detail, e.g. "add: expected device cpu:0 but got device cpu:1"
}

// Error formats the error as "devtensor: Op: Msg (code name)", or
// "devtensor: Op: code name" when there is no message.
func (e *Error) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("devtensor: %s: %s", e.Op, e.Code.Error())
	}
	return fmt.Sprintf("devtensor: %s: %s (%s)", e.Op, e.Msg, e.Code.Error())
}

// Unwrap returns the Code, so errors.Is and errors.As see it.
func (e *Error) Unwrap() error { return e.Code }

// mkerr turns a status and a malloc'd message (freed here) into an *Error, or nil.
func mkerr(op string, st C.dt_status, msg *C.char) error {
	if st == C.DT_OK {
		if msg != nil {
			C.free(unsafe.Pointer(msg))
		}
		return nil
	}
	m := ""
	if msg != nil {
		m = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return &Error{Code: Code(st), Op: op, Msg: m}
}

func resErr(op string, r C.gdt_res) error { return mkerr(op, r.st, r.msg) }

func closedErr(op string) error {
	return &Error{Code: ErrClosed, Op: op, Msg: "use of a closed tensor"}
}

// LiveHandles returns the number of live handles of every kind in the process
// (dt_live_handle_count). A test that ends with the count it started with leaked none.
func LiveHandles() int {
	_ = ReleasePending() // a failure is counted in gdt_release_errors
	return int(C.dt_live_handle_count())
}

// HeaderVersion is the DT_VERSION_NUMBER of the header this package was built against.
const HeaderVersion = uint32(C.DT_VERSION_NUMBER)

var versionErr = checkVersion()

func checkVersion() error {
	lib := uint32(C.dt_version())
	if lib/1000000 != HeaderVersion/1000000 || lib < HeaderVersion {
		return &Error{Code: ErrVersion, Op: "CheckVersion", Msg: fmt.Sprintf(
			"libdevtensor %s (%d) is not compatible with the header %d.%d.%d this package was built with",
			C.GoString(C.dt_version_string()), lib,
			C.DT_VERSION_MAJOR, C.DT_VERSION_MINOR, C.DT_VERSION_PATCH)}
	}
	return nil
}

// CheckVersion reports whether the libdevtensor loaded at run time can serve this
// package: same major version, and not older than the header it was built against.
// Constructors fail with this error (ErrVersion) when it is not nil.
func CheckVersion() error { return versionErr }

// Version returns the loaded library's version string, e.g. "0.1.0".
func Version() string { return C.GoString(C.dt_version_string()) }

// BuildInfo describes the loaded library's build (dt_build_info).
func BuildInfo() (string, error) {
	r := C.gdt_string(C.GDT_S_BUILD_INFO, C.dt_device{}, 0, nil)
	return takeString("BuildInfo", r)
}

func takeString(op string, r C.gdt_sres) (string, error) {
	if err := mkerr(op, r.st, r.msg); err != nil {
		return "", err
	}
	s := C.GoString(r.s)
	C.free(unsafe.Pointer(r.s))
	return s, nil
}

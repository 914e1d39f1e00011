package devtensor

// #include "shim.h"
import "C"

import "fmt"

// DType is an element type (dt_dtype).
type DType int32

// The element types, with the values of the C header (DT_FLOAT32 ...), and
// DefaultDType, a sentinel that is never the dtype of a tensor.
const (
	DefaultDType DType = C.DT_DTYPE_DEFAULT // process default (constructors) / unchanged (To)
	Float32      DType = C.DT_FLOAT32       // torch.float32; Go float32
	Float64      DType = C.DT_FLOAT64       // torch.float64; Go float64
	Float16      DType = C.DT_FLOAT16       // torch.float16 (IEEE half); no Go type, convert with ToDType
	BFloat16     DType = C.DT_BFLOAT16      // torch.bfloat16; no Go type, convert with ToDType
	Int8         DType = C.DT_INT8          // torch.int8; Go int8
	Int16        DType = C.DT_INT16         // torch.int16; Go int16
	Int32        DType = C.DT_INT32         // torch.int32; Go int32
	Int64        DType = C.DT_INT64         // torch.int64; Go int64
	Uint8        DType = C.DT_UINT8         // torch.uint8; Go uint8
	Bool         DType = C.DT_BOOL          // torch.bool, one byte per element (0 or 1); Go bool
)

// String returns PyTorch's name of the dtype ("float32", "bfloat16", "bool").
func (d DType) String() string {
	if d == DefaultDType {
		return "default"
	}
	if n := C.dt_dtype_name(C.dt_dtype(d)); n != nil {
		return C.GoString(n)
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Size returns the size in bytes of one element.
func (d DType) Size() (int, error) {
	var n C.size_t
	st := C.dt_dtype_size(C.dt_dtype(d), &n)
	if st != C.DT_OK {
		// dt_dtype_size fails only for an unknown dtype; build the message here rather
		// than reading the thread-local one in a second cgo call.
		return 0, &Error{Code: Code(st), Op: "DType.Size", Msg: fmt.Sprintf("unknown dtype %d", int32(d))}
	}
	return int(n), nil
}

// Element is the set of Go types that map to a devtensor dtype, for FromSlice and
// ToSlice. (float16 and bfloat16 have no Go type; convert with Tensor.ToDType.)
type Element interface {
	float32 | float64 | int8 | int16 | int32 | int64 | uint8 | bool
}

// DTypeOf returns the dtype of the Go element type T.
func DTypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case bool:
		return Bool
	}
	return DefaultDType
}

package devtensor

// #include "stream_shim.h"
import "C"

import (
	"runtime"
	"sync/atomic"
)

// Streams and events, as torch.cuda.Stream and torch.cuda.Event (include/devtensor.h,
// "streams and events"). A stream is a queue of work on one device; work on different
// streams may run at the same time and is ordered only through events. Every device has
// a default stream, the one devtensor uses unless told otherwise.
//
// Each OS thread has a current stream per device, initially the default: ops, copies and
// allocations for a tensor on that device are queued on it (it never chooses the device,
// which still comes from the tensors). A goroutine may move between OS threads from one
// cgo call to the next, so this package sets it only inside WithStream, which locks the
// goroutine to its thread while the stream is set. Outside WithStream every goroutine
// works on the default streams.
//
// The CPU (and any device without streams of its own) has one in-order queue on which
// every call has finished when it returns: all its streams are that queue, an event
// completes when it is recorded, and elapsed times come from the host clock. Code written
// for a GPU runs unchanged on the CPU.

// Stream owns one reference to a devtensor stream (dt_stream*). Close it when done; a
// finalizer releases a forgotten one, only as a safety net. The stream itself lives on
// while tensors allocated on it, or a thread's current stream (WithStream), refer to it;
// work queued on it finishes. A Stream may be used from several goroutines at once
// (streams are thread-safe in the C library). Close may be called from several
// goroutines at once (exactly one releases), but must not race other use of the Stream.
// A Stream must not be copied by value (go vet reports a copy): share the *Stream.
type Stream struct {
	_ noCopy  // go vet: a Stream must not be copied (lifetime.go)
	h uintptr // the dt_stream* (C memory), 0 once closed; read with atomic.LoadUintptr
	// Padding to 16 bytes keeps a Stream out of the runtime's tiny allocator: a
	// forgotten 8-byte one sharing a 16-byte block with a live neighbour is never
	// finalized (TestFinalizersRunBesideLiveObjects; StateDict has the same padding).
	_ [1]uintptr
}

// Event owns one reference to a devtensor event (dt_event*): a marker in a stream's work
// that other streams and the host can wait for, and that times the work between two
// marks. Close it when done; a finalizer is only a safety net. Ownership, Close and
// copying: as Stream.
type Event struct {
	_ noCopy  // go vet: an Event must not be copied (lifetime.go)
	h uintptr // the dt_event* (C memory), 0 once closed; read with atomic.LoadUintptr
	// Padding to 16 bytes keeps an Event out of the runtime's tiny allocator: a
	// forgotten 8-byte one sharing a 16-byte block with a live neighbour is never
	// finalized (TestFinalizersRunBesideLiveObjects; StateDict has the same padding).
	_ [1]uintptr
}

func wrapStream(h C.uintptr_t) *Stream {
	s := &Stream{h: uintptr(h)}
	runtime.SetFinalizer(s, func(s *Stream) {
		if h := atomic.SwapUintptr(&s.h, 0); h != 0 {
			C.gdt_stream_release_quiet(C.uintptr_t(h))
		}
	})
	return s
}

func takeStream(op string, r C.gdt_hres) (*Stream, error) {
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	return wrapStream(r.h), nil
}

func (s *Stream) handle(op string) (C.uintptr_t, error) {
	if s == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil stream"}
	}
	h := atomic.LoadUintptr(&s.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed stream"}
	}
	return C.uintptr_t(h), nil
}

// NewStream returns a new stream on dev (the process default device for DefaultDevice).
// On a GPU it is a hardware queue of its own that does not wait for the default stream;
// on the CPU it is the device's one queue. Errors: ErrInvalidDevice,
// ErrDeviceUnavailable, ErrOutOfMemory, ErrBackend. See dt_stream_create.
func NewStream(dev Device) (*Stream, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeStream("NewStream", C.gdt_stream_create(dev.c(), 0))
}

// DefaultStream returns a new reference to dev's default stream (IsDefault is true):
// passed to WithStream it sets the thread back to the default. Errors: as NewStream. See
// dt_stream_default.
func DefaultStream(dev Device) (*Stream, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeStream("DefaultStream", C.gdt_stream_create(dev.c(), 1))
}

// Close releases the Stream's reference and returns the error of that release (nil when
// it succeeded). Closing twice (or a nil Stream) is a no-op returning nil, and so is a
// Close that races another Close of the same Stream: the handle is swapped out
// atomically, so exactly one Close releases it (and returns its error). Using the Stream
// afterwards returns ErrClosed.
func (s *Stream) Close() error {
	if s == nil {
		return nil
	}
	h := atomic.SwapUintptr(&s.h, 0)
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(s, nil)
	return resErr("Stream.Close", C.gdt_stream_release(C.uintptr_t(h)))
}

// Device returns the stream's device. See dt_stream_device.
func (s *Stream) Device() (Device, error) {
	const op = "Stream.Device"
	h, err := s.handle(op)
	if err != nil {
		return Device{}, err
	}
	var d C.dt_device
	r := C.gdt_stream_device(h, &d)
	runtime.KeepAlive(s)
	if err := resErr(op, r); err != nil {
		return Device{}, err
	}
	return goDevice(d), nil
}

// IsDefault reports whether s is its device's default stream. See dt_stream_is_default.
func (s *Stream) IsDefault() (bool, error) {
	const op = "Stream.IsDefault"
	h, err := s.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_stream_is_default(h, &v)
	runtime.KeepAlive(s)
	return v != 0, resErr(op, r)
}

// Synchronize waits until the work queued on s has finished (at once on the CPU).
// Errors: ErrClosed, ErrInvalidHandle, ErrDeviceLost (a kernel on it failed), ErrBackend.
// See dt_stream_synchronize.
func (s *Stream) Synchronize() error {
	const op = "Stream.Synchronize"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_stream_synchronize(h)
	runtime.KeepAlive(s)
	return resErr(op, r)
}

// Query reports whether the work queued on s has finished, without waiting (always true
// on the CPU). Errors: as Synchronize. See dt_stream_query.
func (s *Stream) Query() (bool, error) {
	const op = "Stream.Query"
	h, err := s.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_stream_query(h, &v)
	runtime.KeepAlive(s)
	return v != 0, resErr(op, r)
}

// WaitEvent makes the work queued on s after this call wait until e's recorded work has
// finished; the caller does not wait. e may be of another device. An event never
// recorded is no wait. Errors: as Synchronize. See dt_stream_wait_event.
func (s *Stream) WaitEvent(e *Event) error {
	const op = "Stream.WaitEvent"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	eh, err := e.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_stream_wait_event(h, eh)
	runtime.KeepAlive(s)
	runtime.KeepAlive(e)
	return resErr(op, r)
}

// WaitStream makes the work queued on s after this call wait for the work queued on
// other so far (an event recorded on other, waited for by s); the caller does not wait.
// Errors: as WaitEvent. See dt_stream_wait_stream.
func (s *Stream) WaitStream(other *Stream) error {
	const op = "Stream.WaitStream"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	oh, err := other.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_stream_wait_stream(h, oh)
	runtime.KeepAlive(s)
	runtime.KeepAlive(other)
	return resErr(op, r)
}

// NativeHandle returns the backend's own handle of s, for mixing libraries on one queue:
// a cudaStream_t for a CUDA stream (the default stream's too), 0 for a device without
// streams (the CPU). It is borrowed: valid while s (or another reference to the stream)
// lives; never destroy it. See dt_stream_native_handle.
func (s *Stream) NativeHandle() (uintptr, error) {
	const op = "Stream.NativeHandle"
	h, err := s.handle(op)
	if err != nil {
		return 0, err
	}
	var p C.uintptr_t
	r := C.gdt_stream_native_handle(h, &p)
	runtime.KeepAlive(s)
	if err := resErr(op, r); err != nil {
		return 0, err
	}
	return uintptr(p), nil
}

// WithStream runs fn with s as the current stream of s's device, as PyTorch's
// torch.cuda.stream(s) context: the ops, copies and allocations fn makes for tensors on
// that device are queued on s (tensors on other devices keep their current streams).
// The current stream belongs to an OS thread (dt_set_thread_stream) and a goroutine may
// move between threads from one cgo call to the next, so WithStream locks the goroutine
// to its thread (runtime.LockOSThread) while fn runs, sets that thread's stream, and
// afterwards sets the previous stream back (releasing WithStream's reference to it) and
// unlocks the thread, also when fn fails or panics (the panic then goes on). Goroutines
// that fn starts run on other threads, on the default streams. fn must not call
// runtime.UnlockOSThread without a matching LockOSThread: the restore would then happen
// on whichever thread the goroutine had moved to, and the locked thread would keep s.
// WithStream calls nest; WithStream(DefaultStream(dev), fn) runs fn on the default
// stream. Memory allocated inside fn belongs to s (its free is queued there): another
// stream using it must be made known with Tensor.RecordStream. The result is fn's
// error, or WithStream's own when fn returned nil. fn is not run when s cannot be set
// (ErrClosed, ErrInvalidArgument for a nil s, ErrInvalidHandle, ErrOutOfMemory).
func WithStream(s *Stream, fn func() error) (err error) {
	const op = "WithStream"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // deferred first, so it runs after the restore
	var prev C.uintptr_t
	r := C.gdt_stream_enter(h, &prev)
	runtime.KeepAlive(s)
	if err := resErr(op, r); err != nil {
		return err
	}
	defer func() {
		if e := resErr(op, C.gdt_stream_leave(prev)); e != nil && err == nil {
			err = e
		}
	}()
	return fn()
}

// ThreadStream returns a new reference to the calling OS thread's current stream for
// dev. It is only meaningful inside WithStream, whose goroutine stays on one thread:
// there it is the stream WithStream set for its device (the default stream for other
// devices). Outside WithStream the goroutine may be on any thread, and every thread the
// package leaves behind is on the default streams, so it returns dev's default stream.
// Close the result. Errors: ErrInvalidDevice, ErrDeviceUnavailable, ErrOutOfMemory. See
// dt_thread_stream.
func ThreadStream(dev Device) (*Stream, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeStream("ThreadStream", C.gdt_thread_stream(dev.c()))
}

// ---------------------------------------------------------------- events

func (e *Event) handle(op string) (C.uintptr_t, error) {
	if e == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil event"}
	}
	h := atomic.LoadUintptr(&e.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed event"}
	}
	return C.uintptr_t(h), nil
}

// NewEvent returns a new event on dev, never recorded, that times what it marks.
// Errors: as NewStream. See dt_event_create.
func NewEvent(dev Device) (*Event, error) {
	const op = "NewEvent"
	if versionErr != nil {
		return nil, versionErr
	}
	r := C.gdt_event_create(dev.c())
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	e := &Event{h: uintptr(r.h)}
	runtime.SetFinalizer(e, func(e *Event) {
		if h := atomic.SwapUintptr(&e.h, 0); h != 0 {
			C.gdt_event_release_quiet(C.uintptr_t(h))
		}
	})
	return e, nil
}

// Close releases the Event's reference and returns the error of that release; as
// Stream.Close (idempotent, safe from several goroutines at once). Waits already queued
// on the event stay valid.
func (e *Event) Close() error {
	if e == nil {
		return nil
	}
	h := atomic.SwapUintptr(&e.h, 0)
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(e, nil)
	return resErr("Event.Close", C.gdt_event_release(C.uintptr_t(h)))
}

// Device returns the event's device. See dt_event_device.
func (e *Event) Device() (Device, error) {
	const op = "Event.Device"
	h, err := e.handle(op)
	if err != nil {
		return Device{}, err
	}
	var d C.dt_device
	r := C.gdt_event_device(h, &d)
	runtime.KeepAlive(e)
	if err := resErr(op, r); err != nil {
		return Device{}, err
	}
	return goDevice(d), nil
}

// Record marks the end of the work queued on s so far; recording again moves the mark.
// A nil s means the calling thread's current stream of e's device: the stream of the
// enclosing WithStream, else the default stream. On the CPU the event completes when it
// is recorded. Errors: ErrClosed, ErrInvalidHandle, ErrDeviceMismatch (s on another
// device than e), ErrDeviceLost, ErrBackend. See dt_event_record.
func (e *Event) Record(s *Stream) error {
	const op = "Event.Record"
	h, err := e.handle(op)
	if err != nil {
		return err
	}
	var sh C.uintptr_t
	if s != nil {
		if sh, err = s.handle(op); err != nil {
			return err
		}
	}
	r := C.gdt_event_record(h, sh)
	runtime.KeepAlive(e)
	runtime.KeepAlive(s)
	return resErr(op, r)
}

// Synchronize waits until the recorded work has finished (at once for an event never
// recorded). Errors: ErrClosed, ErrInvalidHandle, ErrDeviceLost, ErrBackend. See
// dt_event_synchronize.
func (e *Event) Synchronize() error {
	const op = "Event.Synchronize"
	h, err := e.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_event_synchronize(h)
	runtime.KeepAlive(e)
	return resErr(op, r)
}

// Query reports whether the recorded work has finished (true for an event never
// recorded), without waiting. Errors: as Synchronize. See dt_event_query.
func (e *Event) Query() (bool, error) {
	const op = "Event.Query"
	h, err := e.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_event_query(h, &v)
	runtime.KeepAlive(e)
	return v != 0, resErr(op, r)
}

// ElapsedMs returns the milliseconds from e's mark to end's, both recorded on one
// device, after waiting for their work to finish: on a GPU from the device's clock
// (about 0.5 us resolution), on the CPU from the host's steady clock. Errors:
// ErrInvalidArgument (an event never recorded, events of different devices, a nil end),
// ErrClosed, ErrInvalidHandle, ErrDeviceLost, ErrBackend. See dt_event_elapsed_ms.
func (e *Event) ElapsedMs(end *Event) (float32, error) {
	const op = "Event.ElapsedMs"
	h, err := e.handle(op)
	if err != nil {
		return 0, err
	}
	eh, err := end.handle(op)
	if err != nil {
		return 0, err
	}
	var ms C.float
	r := C.gdt_event_elapsed_ms(h, eh, &ms)
	runtime.KeepAlive(e)
	runtime.KeepAlive(end)
	if err := resErr(op, r); err != nil {
		return 0, err
	}
	return float32(ms), nil
}

// RecordStream tells the allocator that t's memory is used by work queued on s, a stream
// of t's device other than the one it was allocated on: when t's memory is freed, the
// free waits for the work queued on s until then (as torch's Tensor.record_stream).
// Nothing to do, and no error, on devices without streams (the CPU). Errors: ErrClosed,
// ErrInvalidHandle, ErrDeviceMismatch (s on another device), ErrOutOfMemory. See
// dt_tensor_record_stream.
func (t *Tensor) RecordStream(s *Stream) error {
	const op = "Tensor.RecordStream"
	h, err := t.handle(op)
	if err != nil {
		return err
	}
	sh, err := s.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_tensor_record_stream(h, sh)
	runtime.KeepAlive(t)
	runtime.KeepAlive(s)
	return resErr(op, r)
}

package devtensor

// #include "graph_shim.h"
import "C"

import (
	"runtime"
	"sync/atomic"
)

// Graphs, as torch.cuda.CUDAGraph on every device (include/devtensor.h, "graphs"): while
// a stream captures, the work queued on it (ops, copies, a module's Forward, Backward,
// an SGD Step) is RECORDED into a graph instead of running; Graph.Replay runs that work
// again, in the same order and on the same memory, without the per-call checks, autograd
// bookkeeping and allocations of eager calls.
//
// Graphs work on STATIC TENSORS. A graph keeps every tensor its work touches, so their
// memory stays valid for replays (closing a Tensor's Go handle does not free it while
// the graph lives). Inputs are the tensors the captured work reads: copy new values into
// them (CopyFromSlice, or any in-place op) between replays. Outputs are the tensors it
// writes (a loss, the gradients Backward sets, the parameters a Step updates): read them
// after a replay. Right after capture, outputs hold no meaningful values: capture
// computes nothing.
//
// What cannot be captured fails with ErrNotSupported before doing anything, and the
// capture goes on: reading values on the host (Item, ToSlice, String, saving, DLPack
// export), writing host memory into a tensor (CopyFromSlice), copies between the host and
// a GPU, synchronising or querying the capturing stream or device, events and waits on
// it, random numbers, collectives and DataParallel, an Adam or AdamW step, and an SGD
// momentum step before its buffers exist (step once eagerly first: PyTorch's warm-up).

// Graph owns one reference to a devtensor graph (dt_graph*): a recorded sequence of work
// on one device, made by CaptureGraph. Close it when done (the graph frees the memory
// only it still holds); a finalizer releases a forgotten one, only as a safety net.
// Replays of one Graph from several goroutines run one at a time (the C library orders
// them). Close may be called from several goroutines at once (exactly one releases), but
// must not race other use of the Graph. A Graph must not be copied by value (go vet
// reports a copy): share the *Graph.
type Graph struct {
	_ noCopy  // go vet: a Graph must not be copied (lifetime.go)
	h uintptr // the dt_graph* (C memory), 0 once closed; read with atomic.LoadUintptr
	// Padding to 16 bytes keeps a Graph out of the runtime's tiny allocator: a forgotten
	// 8-byte one sharing a 16-byte block with a live neighbour is never finalized
	// (TestFinalizersRunBesideLiveObjects; StateDict has the same padding).
	_ [1]uintptr
}

func wrapGraph(h C.uintptr_t) *Graph {
	g := &Graph{h: uintptr(h)}
	runtime.SetFinalizer(g, func(g *Graph) {
		if h := atomic.SwapUintptr(&g.h, 0); h != 0 {
			C.gdt_graph_release_quiet(C.uintptr_t(h))
		}
	})
	return g
}

func (g *Graph) handle(op string) (C.uintptr_t, error) {
	if g == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil graph"}
	}
	h := atomic.LoadUintptr(&g.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed graph"}
	}
	return C.uintptr_t(h), nil
}

// CaptureGraph records the work fn queues on s's device into a new Graph, as PyTorch's
// torch.cuda.graph(g, stream=s) context: fn runs once, and the ops, copies, forwards,
// backwards and SGD steps it makes for tensors on that device are recorded, not run
// (tensors on other devices are computed at once, as usual). s must be a stream of its
// own (NewStream), not a default stream and not capturing already.
//
// The capture belongs to an OS thread (dt_graph_capture_begin makes s the thread's
// current stream for its device, and dt_graph_capture_end must be called on that
// thread), so CaptureGraph locks the goroutine to its thread (runtime.LockOSThread)
// while fn runs, and afterwards ends the capture on that thread, which sets the
// thread's previous stream back, and unlocks it: also when fn fails or panics (the
// graph is then released and the panic goes on). Goroutines that fn starts run on other
// threads: their work is not recorded. fn must not call runtime.UnlockOSThread without
// a matching LockOSThread (the end would then run on another thread and fail, leaving
// the capture on). The capture holds a reference of its own to s until the end
// (dt_graph_capture_begin), so fn closing s does not stop the end. A call fn makes that cannot be captured fails with
// ErrNotSupported and the capture goes on: fn may handle the error and carry on.
//
// The result is the graph, or fn's error when fn failed (the graph is then released),
// or the end's own error when fn returned nil (ErrOutOfMemory; the capture then goes
// on). fn is not run when the capture cannot begin: ErrClosed, ErrInvalidArgument (a nil
// s, a default stream, a stream already capturing, the thread already capturing on that
// device), ErrInvalidHandle, ErrOutOfMemory. See dt_graph_capture_begin and
// dt_graph_capture_end.
func CaptureGraph(s *Stream, fn func() error) (*Graph, error) {
	const op = "CaptureGraph"
	h, err := s.handle(op)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // deferred first, so it runs after the end
	r := C.gdt_graph_capture_begin(h)
	runtime.KeepAlive(s)
	if err := resErr(op, r); err != nil {
		return nil, err
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		// fn panicked (or called runtime.Goexit): end the capture on this thread and
		// drop its graph; the panic goes on.
		r := C.gdt_graph_capture_end(h)
		if mkerr(op, r.st, r.msg) == nil {
			C.gdt_graph_release_quiet(r.h)
		}
	}()
	fnErr := fn()
	returned = true
	end := C.gdt_graph_capture_end(h)
	if err := mkerr(op, end.st, end.msg); err != nil {
		if fnErr != nil {
			return nil, fnErr
		}
		return nil, err
	}
	if fnErr != nil {
		C.gdt_graph_release_quiet(end.h)
		return nil, fnErr
	}
	return wrapGraph(end.h), nil
}

// IsCapturing reports whether s is capturing (inside CaptureGraph). See
// dt_stream_is_capturing.
func (s *Stream) IsCapturing() (bool, error) {
	const op = "Stream.IsCapturing"
	h, err := s.handle(op)
	if err != nil {
		return false, err
	}
	var v C.int32_t
	r := C.gdt_stream_is_capturing(h, &v)
	runtime.KeepAlive(s)
	return v != 0, resErr(op, r)
}

// Replay runs the graph's work again, on the same memory: the inputs' current values in,
// the outputs overwritten. On the CPU the work has finished when Replay returns; on a
// GPU it is queued on the calling thread's current stream for the graph's device (the
// default stream, or WithStream's), after its earlier work: wait with Stream.Synchronize
// or an Event before reading the outputs on another stream. Errors:
// ErrClosed, ErrInvalidArgument (a module whose parameters the graph uses was moved
// since capture: capture again; an index or class target out of range at replay),
// ErrInvalidHandle, ErrNotSupported (a replay inside a capture), and any error of the
// recorded work (ErrOutOfMemory, ErrDeviceLost, ErrBackend), after which the steps
// before the failing one have run. See dt_graph_replay.
func (g *Graph) Replay() error {
	const op = "Graph.Replay"
	h, err := g.handle(op)
	if err != nil {
		return err
	}
	r := C.gdt_graph_replay(h)
	runtime.KeepAlive(g)
	return resErr(op, r)
}

// NumSteps returns the number of recorded steps (kernels and copies); 0 for a graph of
// no work, whose replay does nothing. See dt_graph_num_steps.
func (g *Graph) NumSteps() (int, error) {
	const op = "Graph.NumSteps"
	h, err := g.handle(op)
	if err != nil {
		return 0, err
	}
	var n C.size_t
	r := C.gdt_graph_num_steps(h, &n)
	runtime.KeepAlive(g)
	if err := resErr(op, r); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device returns the device the graph's work runs on: the capturing stream's. See
// dt_graph_device.
func (g *Graph) Device() (Device, error) {
	const op = "Graph.Device"
	h, err := g.handle(op)
	if err != nil {
		return Device{}, err
	}
	var d C.dt_device
	r := C.gdt_graph_device(h, &d)
	runtime.KeepAlive(g)
	if err := resErr(op, r); err != nil {
		return Device{}, err
	}
	return goDevice(d), nil
}

// Close releases the Graph's reference and returns the error of that release (nil when
// it succeeded); the last reference frees the graph and the memory only it still holds.
// As Stream.Close: closing twice (or a nil Graph) is a no-op returning nil, a Close that
// races another Close of the same Graph is too (exactly one releases), and using the
// Graph afterwards returns ErrClosed. See dt_graph_release.
func (g *Graph) Close() error {
	if g == nil {
		return nil
	}
	h := atomic.SwapUintptr(&g.h, 0)
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(g, nil)
	return resErr("Graph.Close", C.gdt_graph_release(C.uintptr_t(h)))
}

// Package devtensor is the Go binding of devtensor, an embeddable tensor runtime: it
// allocates tensors, moves them between the CPU and GPUs, and runs tensor operations
// through devtensor's C ABI (include/devtensor.h).
//
// Every fallible function returns (T, error). Errors are *Error values whose Code can
// be matched with errors.Is:
//
//	c, err := a.Add(b)
//	if errors.Is(err, devtensor.ErrDeviceMismatch) { ... }
//
// Each call into C and the fetch of its thread-local error message happen inside one
// cgo call, so the message is the right one even when the goroutine moves to another
// OS thread. Tensors hold C memory (possibly GPU memory): Close them (defer t.Close(),
// or a Scope); a finalizer is only a safety net. Close may be called from several
// goroutines at once (exactly one releases). A Tensor, Module, Optimizer, StateDict,
// Scope, Stream, Event, Graph or ProcessGroup must not be copied by value: go vet reports
// a copy.
//
// State dicts (StateDict, as PyTorch's state_dict): Module.StateDict gives a module's
// parameters and buffers by their PyTorch names, Module.LoadStateDict copies one into a
// module, and StateDict.Save / LoadSafetensors write and read safetensors files.
//
// Custom modules (NewModule, as a subclass of torch.nn.Module): named children, own
// parameters and buffers, and a Go ForwardFunc that reaches them through its self
// argument (Child, GetParameter, GetBuffer); the library calls it back, from several
// goroutines or threads at once under DataParallel.
//
// Grad mode: SetGradEnabled is process-wide; NoGrad turns recording off for the calling
// goroutine only, locking it to its OS thread while it runs (grad mode is per thread).
//
// Streams and events (Stream, Event, as torch.cuda.Stream and Event): WithStream runs a
// function with a stream as its device's current one, locking the goroutine to its OS
// thread while it runs (the current stream is per thread); outside it every goroutine
// works on the default streams.
//
// Graphs (Graph, as torch.cuda.CUDAGraph, on every device): CaptureGraph records the work
// a function queues on a stream of its own, locking the goroutine to its OS thread while
// it runs (a capture is per thread); Graph.Replay runs that work again on the same
// static tensors.
//
// Process groups (ProcessGroup, as torch.distributed): ProcessGroupFromEnv joins the group
// of a job started by `devtensor run --nproc-per-node N -- program`; AllReduce, Broadcast,
// AllGather, ReduceScatter, Barrier, Send and Recv run over Gloo on CPU tensors, each
// blocking its goroutine until the peers have taken part.
//
// Build: the package finds libdevtensor with pkg-config (PKG_CONFIG_PATH); with the
// build tag devtensor_nopkgconfig it links -ldevtensor and takes paths from
// CGO_CFLAGS / CGO_LDFLAGS.
package devtensor

package devtensor

// #include "distributed_shim.h"
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// Process groups and collectives, as torch.distributed (include/devtensor.h,
// "distributed"): world-size processes (ranks 0 .. size-1, on one machine or several)
// that run collectives together over Gloo, for tensors in host memory.
//
// A job is started as torchrun starts one: `devtensor run --nproc-per-node N -- program
// args` starts N copies of program with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
// set, and each copy joins with ProcessGroupFromEnv. Collectives are blocking, must be
// called by every rank of the group in the same order (Send and Recv by the two ranks
// named), and run one at a time per group (calls from several goroutines are
// serialised). A call blocks its goroutine, inside one cgo call, until the peers have
// taken part (or the group's timeout has passed): the Go scheduler gives the blocked call
// a thread of its own and runs the other goroutines meanwhile.
//
// Failures: a peer that exits, or does not join or answer within the timeout, makes the
// call fail on every other rank with ErrDistributed (naming the rank that exited when
// devtensor can tell); the group is then unusable (every later call fails at once with
// ErrDistributed): Close it and, if the job goes on, make a new one.

// ReduceOp is the reduction of AllReduce and ReduceScatter (DT_REDUCE_*). ReduceAvg (sum,
// then divide by the world size) needs a floating dtype. For bool tensors ReduceSum and
// ReduceMax are "or", ReduceProduct and ReduceMin "and".
type ReduceOp int32

// Reductions, with the values of the C header.
const (
	ReduceSum     ReduceOp = C.DT_REDUCE_SUM
	ReduceAvg     ReduceOp = C.DT_REDUCE_AVG
	ReduceMin     ReduceOp = C.DT_REDUCE_MIN
	ReduceMax     ReduceOp = C.DT_REDUCE_MAX
	ReduceProduct ReduceOp = C.DT_REDUCE_PRODUCT
)

// String returns the reduction's name as torch.distributed.ReduceOp spells it ("SUM",
// "AVG", "MIN", "MAX", "PRODUCT"), or "ReduceOp(N)" for a value that is none of them.
func (op ReduceOp) String() string {
	switch op {
	case ReduceSum:
		return "SUM"
	case ReduceAvg:
		return "AVG"
	case ReduceMin:
		return "MIN"
	case ReduceMax:
		return "MAX"
	case ReduceProduct:
		return "PRODUCT"
	}
	return fmt.Sprintf("ReduceOp(%d)", int32(op))
}

// ProcessGroup owns one reference to a devtensor process group (dt_process_group*): this
// process's membership of a group of ranks that run collectives together. Close it when
// done: the last reference closes the group's connections (peers still in a collective
// with this rank then fail). A finalizer releases a forgotten one, only as a safety net.
// A ProcessGroup may be used from several goroutines at once (its collectives are
// serialised by the library). Close may be called from several goroutines at once
// (exactly one releases), but must not race other use of the ProcessGroup. A
// ProcessGroup must not be copied by value (go vet reports a copy): share the
// *ProcessGroup.
type ProcessGroup struct {
	_ noCopy  // go vet: a ProcessGroup must not be copied (lifetime.go)
	h uintptr // the dt_process_group* (C memory), 0 once closed; read with atomic.LoadUintptr
	// Padding to 16 bytes keeps a ProcessGroup out of the runtime's tiny allocator: a
	// forgotten 8-byte one sharing a 16-byte block with a live neighbour is never
	// finalized (TestFinalizersRunBesideLiveObjects; StateDict has the same padding).
	_ [1]uintptr
}

func (pg *ProcessGroup) handle(op string) (C.uintptr_t, error) {
	if pg == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil process group"}
	}
	h := atomic.LoadUintptr(&pg.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed process group"}
	}
	return C.uintptr_t(h), nil
}

// handles returns the group's handle and those of the tensors a collective takes
// (tensors: at most 2), or the error of the first that is missing or closed.
func (pg *ProcessGroup) handles(op string, tensors ...*Tensor) (h C.uintptr_t, th [2]C.uintptr_t, err error) {
	if h, err = pg.handle(op); err != nil {
		return 0, th, err
	}
	for i, t := range tensors {
		if th[i], err = t.handle(op); err != nil {
			return 0, th, err
		}
	}
	return h, th, nil
}

// query returns the int32 that get writes for the group (its rank or size).
func (pg *ProcessGroup) query(op string, get func(h C.uintptr_t, v *C.int32_t) C.gdt_res) (int, error) {
	h, err := pg.handle(op)
	if err != nil {
		return 0, err
	}
	var v C.int32_t
	r := get(h, &v)
	runtime.KeepAlive(pg)
	if err := resErr(op, r); err != nil {
		return 0, err
	}
	return int(v), nil
}

// int32Arg converts an int argument to int32, or fails with ErrInvalidArgument.
func int32Arg(op, name string, v int) (C.int32_t, error) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: fmt.Sprintf("%s %d does not fit in an int32", name, v)}
	}
	return C.int32_t(v), nil
}

// cStringOrNil returns s as a C string (free it with C.free), or nil for "".
func cStringOrNil(op, name, s string) (*C.char, error) {
	if s == "" {
		return nil, nil
	}
	if strings.IndexByte(s, 0) >= 0 {
		return nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: fmt.Sprintf("%s %q contains a NUL byte", name, s)}
	}
	return C.CString(s), nil
}

// NewProcessGroup joins a NEW process group and returns when every rank has joined and
// connected (dt_process_group_new).
//
//   - backend: "gloo" (CPU tensors), "nccl" (CUDA tensors; ErrNotSupported, saying why,
//     where CUDA or NCCL cannot be used), or "" for both, chosen by each tensor's device
//     in this build.
//   - initMethod: torch.distributed's rendezvous spellings: "env://" (or ""), rank 0's
//     address and port from MASTER_ADDR / MASTER_PORT; "tcp://host:port"; "file:///path"
//     (a file every rank can open; the last rank to close its group deletes it, a run
//     that crashed leaves it behind). For env:// and tcp://, every group of the process
//     made with the same init method shares rank 0's store: keep the first group open
//     while you make more.
//   - rank, worldSize: this process's rank and the number of ranks; -1 (any negative
//     value) reads RANK / WORLD_SIZE.
//   - timeout: how long any one step (joining, a collective) may wait for peers; 0 means
//     torch's default, 30 minutes. A positive timeout under a millisecond counts as one.
//
// Errors: ErrInvalidArgument (a bad init method or backend; missing or malformed RANK,
// WORLD_SIZE, MASTER_ADDR or MASTER_PORT; rank not below worldSize; ranks started with
// different world sizes; a negative timeout), ErrNotSupported, ErrIO (the file of file://
// cannot be opened), ErrDistributed (the port is taken, rank 0 unreachable, ranks that did
// not join in time: named), ErrOutOfMemory.
func NewProcessGroup(backend, initMethod string, rank, worldSize int, timeout time.Duration) (*ProcessGroup, error) {
	const op = "NewProcessGroup"
	if versionErr != nil {
		return nil, versionErr
	}
	r32, err := int32Arg(op, "rank", rank)
	if err != nil {
		return nil, err
	}
	w32, err := int32Arg(op, "worldSize", worldSize)
	if err != nil {
		return nil, err
	}
	ms := timeout.Milliseconds()
	if timeout > 0 && timeout%time.Millisecond != 0 {
		ms++ // round up: a positive timeout never becomes 0, which means the default
	}
	cb, err := cStringOrNil(op, "backend", backend)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cb)) // free(NULL) is a no-op
	ci, err := cStringOrNil(op, "initMethod", initMethod)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(ci))
	r := C.gdt_process_group_new(cb, ci, r32, w32, C.int64_t(ms))
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	pg := &ProcessGroup{h: uintptr(r.h)}
	runtime.SetFinalizer(pg, func(pg *ProcessGroup) {
		if h := atomic.SwapUintptr(&pg.h, 0); h != 0 {
			C.gdt_process_group_release_quiet(C.uintptr_t(h))
		}
	})
	return pg, nil
}

// ProcessGroupFromEnv joins a new "gloo" group by the env:// convention, with the rank
// and world size from RANK and WORLD_SIZE and the default timeout (30 minutes): what
// each copy of a program started by `devtensor run` (or torchrun) calls. Errors: as
// NewProcessGroup.
func ProcessGroupFromEnv() (*ProcessGroup, error) {
	return NewProcessGroup("gloo", "env://", -1, -1, 0)
}

// Close releases the ProcessGroup's reference and returns the error of that release (nil
// when it succeeded); as Stream.Close: closing twice (or a nil ProcessGroup) is a no-op
// returning nil, and so is a Close that races another Close of the same ProcessGroup
// (exactly one releases). Using the ProcessGroup afterwards returns ErrClosed.
func (pg *ProcessGroup) Close() error {
	if pg == nil {
		return nil
	}
	h := atomic.SwapUintptr(&pg.h, 0)
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(pg, nil)
	return resErr("ProcessGroup.Close", C.gdt_process_group_release(C.uintptr_t(h)))
}

// Rank returns this process's rank in the group. See dt_process_group_rank.
func (pg *ProcessGroup) Rank() (int, error) {
	return pg.query("ProcessGroup.Rank", func(h C.uintptr_t, v *C.int32_t) C.gdt_res { return C.gdt_process_group_rank(h, v) })
}

// Size returns the number of ranks in the group. See dt_process_group_size.
func (pg *ProcessGroup) Size() (int, error) {
	return pg.query("ProcessGroup.Size", func(h C.uintptr_t, v *C.int32_t) C.gdt_res { return C.gdt_process_group_size(h, v) })
}

// Backend returns the name of the group's backend ("gloo"). See dt_process_group_backend.
func (pg *ProcessGroup) Backend() (string, error) {
	const op = "ProcessGroup.Backend"
	h, err := pg.handle(op)
	if err != nil {
		return "", err
	}
	r := C.gdt_process_group_backend(h)
	runtime.KeepAlive(pg)
	return takeString(op, r)
}

// AllReduce makes every rank's t, in place, the reduction op of all ranks' t, element by
// element (torch.distributed.all_reduce). t must have the same shape and dtype on every
// rank, be on the CPU for "gloo", and not be read-only; any layout. Errors:
// ErrInvalidArgument (an unknown op, a read-only t), ErrClosed, ErrInvalidHandle,
// ErrDeviceMismatch, ErrDTypeMismatch (ReduceAvg of a non-floating dtype),
// ErrDistributed, ErrOutOfMemory. See dt_all_reduce_.
func (pg *ProcessGroup) AllReduce(t *Tensor, op ReduceOp) error {
	const name = "ProcessGroup.AllReduce"
	h, th, err := pg.handles(name, t)
	if err != nil {
		return err
	}
	r := C.gdt_all_reduce(h, th[0], C.int32_t(op))
	runtime.KeepAlive(pg)
	runtime.KeepAlive(t)
	return resErr(name, r)
}

// Broadcast makes every rank's t, in place, root's t (torch.distributed.broadcast).
// Errors: as AllReduce (root not a rank of the group is ErrInvalidArgument). See
// dt_broadcast_.
func (pg *ProcessGroup) Broadcast(t *Tensor, root int) error {
	const name = "ProcessGroup.Broadcast"
	h, th, err := pg.handles(name, t)
	if err != nil {
		return err
	}
	root32, err := int32Arg(name, "root", root)
	if err != nil {
		return err
	}
	r := C.gdt_broadcast(h, th[0], root32)
	runtime.KeepAlive(pg)
	runtime.KeepAlive(t)
	return resErr(name, r)
}

// AllGather writes every rank's in, in rank order, into out on every rank
// (torch.distributed.all_gather_into_tensor): out has size times in's element count
// elements of in's dtype, in any shape (e.g. [size, ...in's shape]). Errors: as
// AllReduce, plus ErrShapeMismatch (out's element count) and ErrDTypeMismatch (the
// dtypes differ). See dt_all_gather.
func (pg *ProcessGroup) AllGather(in, out *Tensor) error {
	const name = "ProcessGroup.AllGather"
	h, th, err := pg.handles(name, in, out)
	if err != nil {
		return err
	}
	r := C.gdt_all_gather(h, th[0], th[1])
	runtime.KeepAlive(pg)
	runtime.KeepAlive(in)
	runtime.KeepAlive(out)
	return resErr(name, r)
}

// ReduceScatter reduces in (size times out's element count elements) over the ranks with
// op and writes the r-th of its size equal parts into rank r's out
// (torch.distributed.reduce_scatter_tensor). Errors: as AllGather, plus ErrDTypeMismatch
// for ReduceAvg of a non-floating dtype. See dt_reduce_scatter.
func (pg *ProcessGroup) ReduceScatter(in, out *Tensor, op ReduceOp) error {
	const name = "ProcessGroup.ReduceScatter"
	h, th, err := pg.handles(name, in, out)
	if err != nil {
		return err
	}
	r := C.gdt_reduce_scatter(h, th[0], th[1], C.int32_t(op))
	runtime.KeepAlive(pg)
	runtime.KeepAlive(in)
	runtime.KeepAlive(out)
	return resErr(name, r)
}

// Barrier returns when every rank of the group has called it. Errors: ErrClosed,
// ErrInvalidHandle, ErrDistributed. See dt_barrier.
func (pg *ProcessGroup) Barrier() error {
	const name = "ProcessGroup.Barrier"
	h, err := pg.handle(name)
	if err != nil {
		return err
	}
	r := C.gdt_barrier(h)
	runtime.KeepAlive(pg)
	return resErr(name, r)
}

// Send sends t's elements to rank dst, which must call Recv with this rank, the same tag
// (>= 0) and as many bytes; it returns once the data has left (the receiver may not have
// it yet). Errors: ErrInvalidArgument (dst not a rank or this rank, a negative tag),
// ErrClosed, ErrInvalidHandle, ErrDeviceMismatch, ErrDistributed. See dt_send.
func (pg *ProcessGroup) Send(t *Tensor, dst, tag int) error {
	return pg.sendRecv("ProcessGroup.Send", false, t, dst, tag)
}

// Recv receives into t what rank src sent with this tag (see Send). Errors: as Send. See
// dt_recv.
func (pg *ProcessGroup) Recv(t *Tensor, src, tag int) error {
	return pg.sendRecv("ProcessGroup.Recv", true, t, src, tag)
}

func (pg *ProcessGroup) sendRecv(name string, recv bool, t *Tensor, peer, tag int) error {
	h, th, err := pg.handles(name, t)
	if err != nil {
		return err
	}
	which := "dst"
	if recv {
		which = "src"
	}
	p32, err := int32Arg(name, which, peer)
	if err != nil {
		return err
	}
	tag32, err := int32Arg(name, "tag", tag)
	if err != nil {
		return err
	}
	var r C.gdt_res
	if recv {
		r = C.gdt_recv(h, th[0], p32, tag32)
	} else {
		r = C.gdt_send(h, th[0], p32, tag32)
	}
	runtime.KeepAlive(pg)
	runtime.KeepAlive(t)
	return resErr(name, r)
}

// DDPOptions are DistributedDataParallel's optional arguments; the zero value is
// PyTorch's defaults.
type DDPOptions struct {
	BucketCapBytes       int64 // bytes of gradients per all-reduce bucket; 0: 25 MiB (bucket_cap_mb=25)
	FindUnusedParameters bool  // a parameter without a gradient in a pass counts as zero
}

// DistributedDataParallel wraps m for data-parallel training over pg's processes, as
// torch.nn.parallel.DistributedDataParallel(m, process_group=pg, bucket_cap_mb=...,
// find_unused_parameters=...) (dt_distributed_data_parallel_new): every rank runs its own
// copy of m on its own part of each batch, and Backward averages the gradients over the
// group, so that after Optimizer.Step every rank holds the same parameters. It returns a
// NEW Module; m itself stays usable (and is what an optimizer is built over: the result's
// parameters are m's tensors).
//
// Construction is a collective: every rank of pg must call it. It checks that every rank
// wraps the same parameters and buffers (count, dtype, shape; a mismatch is an error on
// every rank naming the first one that differs) and broadcasts them from rank 0, so
// every rank starts from rank 0's values whatever its own initialisation was.
//
// Forward is m's forward. The result's parameters and buffers are m's, named "module." +
// their names (as PyTorch's state_dict). During Tensor.Backward, gradients are
// all-reduced (averaged) in buckets of about opts.BucketCapBytes bytes (0 means 25 MiB,
// torch's default), in reverse order of registration, each bucket as soon as its
// gradients are computed, on a library thread of its own while backward goes on; the
// gradients receive the averages when Backward returns (all or nothing). Every rank must
// run the same backward passes. opts.FindUnusedParameters: a parameter that gets no gradient
// in a pass counts as zero; without it such a pass fails with ErrInvalidArgument naming
// the parameter. Parameters that do not require grad are neither reduced nor checked. A
// parameter belongs to at most one DistributedDataParallel.
//
// Ownership: the result holds its own references to m and to pg, so the caller still
// closes m and pg, in any order (pg's connections stay open until the result is closed
// too). Threading: as any Module; its collectives block the calling goroutine inside one
// cgo call (see ProcessGroup).
//
// Errors: ErrInvalidArgument (nil m or pg, a parameter of m already wrapped, a negative
// BucketCapBytes, ranks with different parameter counts), ErrClosed (m or pg closed),
// ErrInvalidHandle, ErrDeviceMismatch (a parameter or buffer not on the CPU for "gloo"),
// ErrShapeMismatch (a parameter or buffer of another shape or dtype on some rank),
// ErrDistributed, ErrOutOfMemory.
func DistributedDataParallel(m *Module, pg *ProcessGroup, opts DDPOptions) (*Module, error) {
	const op = "DistributedDataParallel"
	if versionErr != nil {
		return nil, versionErr
	}
	mh, err := m.handle(op)
	if err != nil {
		return nil, err
	}
	gh, err := pg.handle(op)
	if err != nil {
		return nil, err
	}
	var find C.int32_t
	if opts.FindUnusedParameters {
		find = 1
	}
	r := C.gdt_distributed_data_parallel(mh, gh, C.int64_t(opts.BucketCapBytes), find)
	runtime.KeepAlive(m)
	runtime.KeepAlive(pg)
	return takeModule(op, r)
}

// SetNoSync turns m's gradient synchronisation off (noSync true) or back on (false), as
// torch's `with ddp.no_sync():` (dt_distributed_data_parallel_no_sync), for gradient
// accumulation over micro-batches at one all-reduce per optimizer step; m must be a
// module that DistributedDataParallel made. A Tensor.Backward that starts while it is
// off accumulates this rank's own gradients into .grad and communicates nothing (so
// ranks may run different numbers of such passes, and an unused parameter is not an
// error then). The next pass that starts with it on averages over the group each
// parameter's whole gradient, what the local passes accumulated plus its own, and .grad
// becomes that average on every rank; as torch's, that pass must run on every rank. The
// setting applies to whole passes: changing it while a backward of m runs takes effect
// at the next one. NoSync is the scoped form.
//
// Threading: any goroutine, concurrently with m's other calls (it does not wait for a
// Forward in progress); the setting belongs to m, not to the calling goroutine.
//
// Errors: ErrInvalidArgument (a nil m, or m not a DistributedDataParallel), ErrClosed,
// ErrInvalidHandle. See dt_distributed_data_parallel_no_sync.
func (m *Module) SetNoSync(noSync bool) error { return m.setNoSync("Module.SetNoSync", noSync) }

func (m *Module) setNoSync(op string, noSync bool) error {
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return err
	}
	defer unlock()
	var v C.int32_t
	if noSync {
		v = 1
	}
	r := C.gdt_distributed_data_parallel_no_sync(h, v)
	runtime.KeepAlive(m)
	return resErr(op, r)
}

// NoSync is the Go form of torch's `with ddp.no_sync():`: it turns m's gradient
// synchronisation off (SetNoSync(true)), runs fn, and turns it back on
// (SetNoSync(false)) however fn ends, with an error or a panic (which NoSync lets go on).
// The backward passes fn runs accumulate local gradients only; the next one after NoSync
// returns averages the whole accumulated gradient over the group (see SetNoSync):
//
//	for _, mb := range microBatches[:len(microBatches)-1] {
//		if err := ddp.NoSync(func() error { return step(mb) }); err != nil { ... }
//	}
//	step(microBatches[len(microBatches)-1]) // all-reduces once
//
// It returns fn's error when fn fails, else the error of turning synchronisation off
// (fn does not run then) or back on. Errors: as SetNoSync, under Op "Module.NoSync".
func (m *Module) NoSync(fn func() error) (err error) {
	const op = "Module.NoSync"
	if err := m.setNoSync(op, true); err != nil {
		return err
	}
	defer func() {
		if onErr := m.setNoSync(op, false); err == nil {
			err = onErr
		}
	}()
	return fn()
}

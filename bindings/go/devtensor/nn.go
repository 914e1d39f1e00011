package devtensor

// #include "nn_shim.h"
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Reduction of a loss, as PyTorch's reduction="mean" | "none" | "sum" (and KLDivLoss's
// "batchmean"). The zero value is ReductionMean, PyTorch's default, so a zero
// CrossEntropyLossOptions or NLLLossOptions means what torch.nn.CrossEntropyLoss() does.
// (The Go values are not the C header's DT_REDUCTION_* numbers; the package translates
// them.)
type Reduction int32

// The reductions of a loss, for MSELoss, CrossEntropyLoss, NLLLoss and the pointwise
// losses (L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss).
const (
	ReductionMean Reduction = iota // the mean of the losses, a 0-d tensor (the zero value, PyTorch's default)
	ReductionNone                  // one loss per element (or per sample), not reduced
	ReductionSum                   // the sum of the losses, a 0-d tensor
	// ReductionBatchMean is KLDivLoss's reduction="batchmean": the sum divided by the
	// input's first dim (the sum itself for a 0-d input), the mathematical KL divergence
	// per sample. Only KLDivLoss takes it; every other loss refuses it with
	// ErrInvalidArgument (the library's message says so).
	ReductionBatchMean
)

// c returns the C header's DT_REDUCTION_* value; an unknown Reduction gets -1, which
// the library refuses (ErrInvalidArgument, "unknown reduction").
func (r Reduction) c() C.int32_t {
	switch r {
	case ReductionMean:
		return C.DT_REDUCTION_MEAN
	case ReductionNone:
		return C.DT_REDUCTION_NONE
	case ReductionSum:
		return C.DT_REDUCTION_SUM
	case ReductionBatchMean:
		return C.DT_REDUCTION_BATCHMEAN
	}
	return -1
}

// Module owns one reference to a devtensor module (a layer, container or loss). Close it
// when done; a finalizer is only a safety net.
//
// Goroutines: a Module is safe for concurrent use. Forward, Save, Device, Parameters,
// Buffers, StateDict and SetNoSync may run from several goroutines at once; To, Load,
// LoadStateDict, Train, Eval and Close are exclusive: each waits for the calls in progress on the same Module to return, and the
// calls that come later wait for it (a sync.RWMutex), so a Forward never sees a module
// half moved or half loaded. Close may be called from several goroutines at once
// (exactly one releases); a call after Close fails with ErrClosed. The lock is the Go
// Module's own: a DataParallel or DistributedDataParallel wrapper has its own lock, and
// acting on the wrapped module directly while the wrapper runs is only as safe as the C
// library makes it (include/devtensor.h: safe, but a Forward may then see some tensors
// moved or loaded and some not). A Module must not be copied by value (go vet reports a
// copy): share the *Module.
type Module struct {
	_        noCopy       // go vet: a Module must not be copied (lifetime.go)
	mu       sync.RWMutex // Forward and readers: RLock; To, Load, LoadStateDict, Train, Eval, Close: Lock
	h        uintptr      // the dt_module* (C memory), 0 once closed; read with atomic.LoadUintptr
	children []*Module    // a Sequential's children, whose references it took over; closed by Close
}

func wrapModule(h C.uintptr_t) *Module {
	m := &Module{h: uintptr(h)}
	runtime.SetFinalizer(m, func(m *Module) {
		if h := atomic.SwapUintptr(&m.h, 0); h != 0 {
			C.gdt_module_release_quiet(C.uintptr_t(h))
		}
	})
	return m
}

func takeModule(op string, r C.gdt_hres) (*Module, error) {
	if err := mkerr(op, r.st, r.msg); err != nil {
		return nil, err
	}
	return wrapModule(r.h), nil
}

func (m *Module) handle(op string) (C.uintptr_t, error) {
	if m == nil {
		return 0, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil module"}
	}
	h := atomic.LoadUintptr(&m.h)
	if h == 0 {
		return 0, &Error{Code: ErrClosed, Op: op, Msg: "use of a closed module"}
	}
	return C.uintptr_t(h), nil
}

// acquire takes m's lock (shared, or exclusive for the calls that change the module) and
// returns its handle and the unlock; on error nothing is held.
func (m *Module) acquire(op string, exclusive bool) (C.uintptr_t, func(), error) {
	if m == nil {
		return 0, nil, &Error{Code: ErrInvalidArgument, Op: op, Msg: "nil module"}
	}
	unlock := m.mu.RUnlock
	if exclusive {
		m.mu.Lock()
		unlock = m.mu.Unlock
	} else {
		m.mu.RLock()
	}
	h, err := m.handle(op)
	if err != nil {
		unlock()
		return 0, nil, err
	}
	return h, unlock, nil
}

// Close releases the module and returns the error of that release (nil when it
// succeeded); a Sequential then closes the modules it was made of. Close waits for the
// calls in progress on m to return. Closing twice is a no-op returning nil, and so is a
// Close that races another Close of the same Module: exactly one Close releases the
// handle (and returns its error).
func (m *Module) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	h := atomic.SwapUintptr(&m.h, 0)
	children := m.children
	m.children = nil
	m.mu.Unlock()
	if h == 0 {
		return nil
	}
	runtime.SetFinalizer(m, nil)
	err := resErr("Module.Close", C.gdt_module_release(C.uintptr_t(h)))
	for _, c := range children {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// LinearOptions are Linear's optional arguments; the zero value is PyTorch's defaults: a
// bias, the default dtype (SetDefaultDType) and the default device (SetDefaultDevice).
type LinearOptions struct {
	NoBias bool   // no bias (PyTorch's bias=False)
	DType  DType  // the weights' dtype (floating); DefaultDType: the process default
	Device Device // where the weights live; the zero Device (DefaultDevice): the process default
}

// Linear is torch.nn.Linear(in, out) (y = x @ weight^T + bias) with the weights' bias,
// dtype and device from opts, initialised as PyTorch does from the device's Philox
// generator. The caller owns the Module and must Close it.
func Linear(in, out int64, opts LinearOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule("Linear", C.gdt_linear(C.int64_t(in), C.int64_t(out), biasArg(opts.NoBias), C.dt_dtype(opts.DType), opts.Device.c()))
}

func simpleModule(op string, kind C.int, a, b int64, p float64) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	return takeModule(op, C.gdt_simple_module(kind, C.int64_t(a), C.int64_t(b), C.double(p)))
}

// ReLU returns a new torch.nn.ReLU module, max(x, 0) elementwise, with no parameters
// (dt_relu_new). The caller owns the Module and must Close it. It fails only with
// ErrVersion (see CheckVersion) or ErrOutOfMemory.
func ReLU() (*Module, error) { return simpleModule("ReLU", C.GDT_M_RELU, 0, 0, 0) }

// Sigmoid returns a new torch.nn.Sigmoid module, 1/(1+exp(-x)) elementwise, with no
// parameters (dt_sigmoid_new). The caller owns the Module and must Close it. Errors: as
// ReLU.
func Sigmoid() (*Module, error) { return simpleModule("Sigmoid", C.GDT_M_SIGMOID, 0, 0, 0) }

// Tanh returns a new torch.nn.Tanh module, tanh(x) elementwise, with no parameters
// (dt_tanh_new). The caller owns the Module and must Close it. Errors: as ReLU.
func Tanh() (*Module, error) { return simpleModule("Tanh", C.GDT_M_TANH, 0, 0, 0) }

// GELU returns a new torch.nn.GELU module (the exact erf form, PyTorch's default) with
// no parameters (dt_gelu_new); its Forward takes floating inputs only. The caller owns
// the Module and must Close it. Errors: as ReLU.
func GELU() (*Module, error) { return simpleModule("GELU", C.GDT_M_GELU, 0, 0, 0) }

// GELUTanh returns a new torch.nn.GELU(approximate="tanh") module, GPT-2's "gelu_new",
// x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) elementwise, with no parameters
// (dt_gelu_tanh_new); its Forward is Tensor.GELUTanh and takes floating inputs only
// (others: ErrDTypeMismatch). Its Kind is "GELU", PyTorch's class name for both forms.
// The caller owns the Module and must Close it. Errors: as ReLU.
func GELUTanh() (*Module, error) { return simpleModule("GELUTanh", C.GDT_M_GELU_TANH, 0, 0, 0) }

// SiLU returns a new torch.nn.SiLU module, x * sigmoid(x) = x / (1 + exp(-x))
// elementwise (swish), with no parameters (dt_silu_new); its Forward is Tensor.SiLU and
// takes floating inputs only (others: ErrDTypeMismatch). Its Kind is "SiLU". The caller
// owns the Module and must Close it. Errors: as ReLU.
func SiLU() (*Module, error) { return simpleModule("SiLU", C.GDT_M_SILU, 0, 0, 0) }

// LeakyReLU returns a new torch.nn.LeakyReLU(negativeSlope) module, x where x > 0, else
// x * negativeSlope, elementwise (PyTorch's default slope is 0.01), with no parameters
// (dt_leaky_relu_new); its Forward is Tensor.LeakyReLU and takes floating inputs only
// (others: ErrDTypeMismatch). Its Kind is "LeakyReLU". The caller owns the Module and
// must Close it. Errors: ErrInvalidArgument for a slope that is not finite (NaN, ±Inf),
// ErrOutOfMemory, ErrVersion.
func LeakyReLU(negativeSlope float64) (*Module, error) {
	return simpleModule("LeakyReLU", C.GDT_M_LEAKY_RELU, 0, 0, negativeSlope)
}

// Upsample returns a new torch.nn.Upsample(size, scale_factor, mode, align_corners)
// module, with no parameters (dt_upsample_new); its Forward is Tensor.Interpolate with
// opts (copied: the slices may change afterwards) and its Kind "Upsample". The caller
// owns the Module and must Close it.
//
// Errors: ErrInvalidArgument (both or neither of opts.Size and opts.ScaleFactor, more
// than 3 values, a size or factor that is not positive, AlignCorners with
// InterpolateNearest, a mode that is none of the four), ErrOutOfMemory, ErrVersion (see
// CheckVersion). Forward: as Tensor.Interpolate, the message naming the module
// (`Upsample(size=(2, 4), mode='bilinear', align_corners=True)`).
func Upsample(opts InterpolateOptions) (*Module, error) {
	const op = "Upsample"
	if versionErr != nil {
		return nil, versionErr
	}
	size, scale, n, err := opts.args(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_upsample_new(size, scale, n, opts.Mode.c(), cBool(opts.AlignCorners))
	runtime.KeepAlive(opts.Size)
	runtime.KeepAlive(opts.ScaleFactor)
	return takeModule(op, r)
}

// Softmax returns a new torch.nn.Softmax(dim) module, a numerically stable softmax
// along dim (dt_softmax_new). The caller owns the Module and must Close it. Errors: as
// ReLU (a dim out of range fails at Forward).
func Softmax(dim int64) (*Module, error) { return simpleModule("Softmax", C.GDT_M_SOFTMAX, dim, 0, 0) }

// LogSoftmax returns a new torch.nn.LogSoftmax(dim) module, a numerically stable
// log-softmax along dim (dt_log_softmax_new). The caller owns the Module and must Close
// it. Errors: as Softmax.
func LogSoftmax(dim int64) (*Module, error) {
	return simpleModule("LogSoftmax", C.GDT_M_LOG_SOFTMAX, dim, 0, 0)
}

// Flatten(startDim, endDim), as torch.nn.Flatten.
func Flatten(startDim, endDim int64) (*Module, error) {
	return simpleModule("Flatten", C.GDT_M_FLATTEN, startDim, endDim, 0)
}

// Dropout(p): active in training mode only.
func Dropout(p float64) (*Module, error) { return simpleModule("Dropout", C.GDT_M_DROPOUT, 0, 0, p) }

// MSELoss with a reduction (ReductionMean, the zero value, is PyTorch's default);
// Forward takes (input, target).
func MSELoss(r Reduction) (*Module, error) {
	return simpleModule("MSELoss", C.GDT_M_MSE, int64(r.c()), 0, 0)
}

// defaultIgnoreIndex is PyTorch's ignore_index=-100, what a nil IgnoreIndex means.
const defaultIgnoreIndex = -100

// CrossEntropyLossOptions are torch.nn.CrossEntropyLoss's keyword arguments; the zero
// value is PyTorch's defaults (no class weights, reduction "mean", ignore_index -100,
// label_smoothing 0). IgnoreIndex is a pointer because 0 is a class index of its own:
// ignore := int64(0); opts.IgnoreIndex = &ignore.
type CrossEntropyLossOptions struct {
	Weight         *Tensor   // one weight per class ([C]), copied into the loss's "weight" buffer; nil: none
	Reduction      Reduction // the zero value ReductionMean: PyTorch's default
	IgnoreIndex    *int64    // targets equal to it are skipped; nil: -100, PyTorch's default
	LabelSmoothing float64   // in [0, 1]; 0: none
}

// CrossEntropyLoss returns a new torch.nn.CrossEntropyLoss module (log-softmax then the
// negative log-likelihood, dt_cross_entropy_loss_new) with the options' arguments
// (CrossEntropyLossOptions{}: PyTorch's defaults). Forward takes (logits [N, C], class
// indices [N] as int64), or per position as PyTorch (logits [N, C, d1, ...], indices [N,
// d1, ...]; reduction None gives [N, d1, ...]). The Weight is copied into the loss's buffer, so the caller
// still owns (and closes) it; Module.To moves the buffer with the module. The caller owns
// the result and must Close it. Errors: ErrInvalidArgument (an unknown Reduction,
// LabelSmoothing outside [0, 1], a Weight that is not 1-d), ErrClosed (a closed Weight).
func CrossEntropyLoss(opts CrossEntropyLossOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	w, err := optionalTensor("CrossEntropyLoss", opts.Weight)
	if err != nil {
		return nil, err
	}
	res := C.gdt_cross_entropy(w, opts.Reduction.c(), ignoreIndex(opts.IgnoreIndex), C.double(opts.LabelSmoothing))
	runtime.KeepAlive(opts.Weight)
	return takeModule("CrossEntropyLoss", res)
}

// NLLLossOptions are torch.nn.NLLLoss's keyword arguments; the zero value is PyTorch's
// defaults (no class weights, reduction "mean", ignore_index -100). IgnoreIndex is a
// pointer as in CrossEntropyLossOptions.
type NLLLossOptions struct {
	Weight      *Tensor   // one weight per class ([C]), copied into the loss's "weight" buffer; nil: none
	Reduction   Reduction // the zero value ReductionMean: PyTorch's default
	IgnoreIndex *int64    // targets equal to it are skipped; nil: -100, PyTorch's default
}

// NLLLoss returns a new torch.nn.NLLLoss module (dt_nll_loss_new) with the options'
// arguments (NLLLossOptions{}: PyTorch's defaults). Forward takes (log-probabilities
// [N, C], class indices [N] as int64), or [N, C, d1, ...] with [N, d1, ...]. The Weight is copied, as in CrossEntropyLoss. The
// caller owns the result and must Close it. Errors: ErrInvalidArgument (an unknown
// Reduction, a Weight that is not 1-d), ErrClosed (a closed Weight).
func NLLLoss(opts NLLLossOptions) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	w, err := optionalTensor("NLLLoss", opts.Weight)
	if err != nil {
		return nil, err
	}
	res := C.gdt_nll(w, opts.Reduction.c(), ignoreIndex(opts.IgnoreIndex))
	runtime.KeepAlive(opts.Weight)
	return takeModule("NLLLoss", res)
}

// ignoreIndex returns *p, or PyTorch's default -100 for nil.
func ignoreIndex(p *int64) C.int64_t {
	if p == nil {
		return defaultIgnoreIndex
	}
	return C.int64_t(*p)
}

// Sequential chains modules, as torch.nn.Sequential; child i is named "i" in parameter
// names. It takes ownership of the modules passed: closing the Sequential closes them,
// so the caller does not Close them (doing so anyway is harmless: the Sequential holds
// references of its own). The caller may keep using them until the Sequential is closed
// (their parameters are the Sequential's). On error nothing is taken: the caller still
// owns the modules. The caller owns the result and must Close it.
func Sequential(modules ...*Module) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	hs := make([]C.uintptr_t, len(modules))
	for i, m := range modules {
		h, err := m.handle("Sequential")
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	r := C.gdt_sequential(p, C.size_t(len(hs)))
	runtime.KeepAlive(modules)
	runtime.KeepAlive(hs)
	seq, err := takeModule("Sequential", r)
	if err != nil {
		return nil, err
	}
	seq.children = append([]*Module(nil), modules...)
	return seq, nil
}

// DataParallel wraps m as torch.nn.DataParallel(m, deviceIDs, outputDevice): Forward
// splits every input along dim 0 into torch.chunk's pieces (ceil(N/n) rows each, the
// last one smaller; fewer than n rows use fewer devices), runs a replica of m on each
// device at once (one thread per device) and gathers the outputs along dim 0 on
// outputDevice (0-d outputs, such as losses, become one value per piece). Backward sums
// the replicas' gradients into m's parameters. deviceIDs are distinct devices; nil or
// empty means every device of the type m is on. outputDevice DefaultDevice means
// deviceIDs[0].
//
// m serves deviceIDs[0] and must have its parameters and buffers there when Forward
// runs, otherwise Forward fails with ErrDeviceMismatch ("... on device cpu:0
// (device_ids[0]) but found one of them on device: cpu:1"). Errors at construction:
// ErrInvalidDevice for an ordinal that does not exist (the message names
// device_ids[i]), ErrInvalidArgument for a device listed twice or m itself a
// DataParallel, ErrDeviceUnavailable, ErrClosed for a closed m.
//
// The result's parameters are m's, named "module." + their names; To, Train and Eval
// act on m. It holds its own reference to m: the caller still closes m. Threading: as
// any Module.
func DataParallel(m *Module, deviceIDs []Device, outputDevice Device) (*Module, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	h, err := m.handle("DataParallel")
	if err != nil {
		return nil, err
	}
	ids := make([]C.dt_device, len(deviceIDs))
	for i, d := range deviceIDs {
		ids[i] = d.c()
	}
	var p *C.dt_device
	if len(ids) > 0 {
		p = &ids[0]
	}
	r := C.gdt_data_parallel(h, p, C.size_t(len(ids)), outputDevice.c())
	runtime.KeepAlive(m)
	runtime.KeepAlive(ids)
	return takeModule("DataParallel", r)
}

// Forward runs the module on its inputs (one, or input and target for a loss).
func (m *Module) Forward(inputs ...*Tensor) (*Tensor, error) {
	h, unlock, err := m.acquire("Module.Forward", false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	hs := make([]C.uintptr_t, len(inputs))
	for i, t := range inputs {
		if hs[i], err = t.handle("Module.Forward"); err != nil {
			return nil, err
		}
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	r := C.gdt_forward(h, p, C.size_t(len(hs)))
	runtime.KeepAlive(m)
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(hs)
	return takeTensor("Module.Forward", r)
}

// To moves every parameter and buffer to device in place: Tensors already taken from the
// module follow the move.
func (m *Module) To(device Device) error {
	h, unlock, err := m.acquire("Module.To", true)
	if err != nil {
		return err
	}
	defer unlock()
	r := C.gdt_module_to(h, device.c())
	runtime.KeepAlive(m)
	return resErr("Module.To", r)
}

// Device returns the device of the module's first parameter or buffer (cpu:0 when it
// has none). See dt_module_device.
func (m *Module) Device() (Device, error) {
	const op = "Module.Device"
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return Device{}, err
	}
	defer unlock()
	var d C.dt_device
	r := C.gdt_module_device(h, &d)
	runtime.KeepAlive(m)
	if err := resErr(op, r); err != nil {
		return Device{}, err
	}
	return goDevice(d), nil
}

// Train puts the module and its children in training mode, as torch's Module.train()
// (dt_module_train): Dropout is active in training mode only. Errors: ErrClosed for a
// closed m, ErrInvalidArgument for a nil one, ErrInvalidHandle.
func (m *Module) Train() error { return m.mode("Module.Train", 1) }

// Eval puts the module and its children in evaluation mode, as torch's Module.eval()
// (dt_module_eval): Dropout is then the identity. Errors: as Train.
func (m *Module) Eval() error { return m.mode("Module.Eval", 0) }

func (m *Module) mode(op string, train C.int) error {
	h, unlock, err := m.acquire(op, true)
	if err != nil {
		return err
	}
	defer unlock()
	r := C.gdt_module_mode(h, train)
	runtime.KeepAlive(m)
	return resErr(op, r)
}

// Named is a parameter or buffer with its state_dict name.
type Named struct {
	Name   string
	Tensor *Tensor
}

func (m *Module) named(op string, buffers C.int) (NamedTensors, error) {
	h, unlock, err := m.acquire(op, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cnt := C.gdt_named_count(h, buffers)
	if err := mkerr(op, cnt.st, cnt.msg); err != nil {
		return nil, err
	}
	out := make(NamedTensors, 0, int(cnt.n))
	for i := 0; i < int(cnt.n); i++ {
		r := C.gdt_named(h, C.size_t(i), buffers)
		if err := mkerr(op, r.st, r.msg); err != nil {
			for _, n := range out {
				n.Tensor.Close()
			}
			return nil, err
		}
		name := C.GoString(r.name)
		C.free(unsafe.Pointer(r.name))
		out = append(out, Named{Name: name, Tensor: newTensor(r.t)})
	}
	runtime.KeepAlive(m)
	return out, nil
}

// NamedTensors is what Parameters and Buffers return: tensors with their state_dict
// names, each a reference of its own that the caller closes (Close closes them all). An
// optimizer takes it as it is: Adam(params, lr).
type NamedTensors []Named

// Close closes every tensor of ns (Tensor.Close: idempotent, always nil) and returns nil.
func (ns NamedTensors) Close() error {
	for _, n := range ns {
		n.Tensor.Close()
	}
	return nil
}

// Tensors returns ns's tensors in order, without their names (the same *Tensors: closing
// ns closes them).
func (ns NamedTensors) Tensors() []*Tensor {
	ts := make([]*Tensor, len(ns))
	for i, n := range ns {
		ts[i] = n.Tensor
	}
	return ts
}

// Parameters returns the module's parameters (new Tensors sharing the module's data;
// close them when done, e.g. with NamedTensors.Close), each once, as PyTorch's
// named_parameters(): a module placed twice lists its parameters under its first name.
func (m *Module) Parameters() (NamedTensors, error) { return m.named("Module.Parameters", 0) }

// Buffers returns the module's buffers (a loss's class weights), as Parameters.
func (m *Module) Buffers() (NamedTensors, error) { return m.named("Module.Buffers", 1) }

// Save writes the module's state dict as a safetensors file.
func (m *Module) Save(path string) error { return m.file("Module.Save", path, false) }

// Load reads a safetensors file into the module; a bad file leaves it unchanged.
func (m *Module) Load(path string) error { return m.file("Module.Load", path, true) }

func (m *Module) file(op, path string, load bool) error {
	h, unlock, err := m.acquire(op, load) // Load is exclusive, Save a reader
	if err != nil {
		return err
	}
	defer unlock()
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	var r C.gdt_res
	if load {
		r = C.gdt_module_load(h, cs)
	} else {
		r = C.gdt_module_save(h, cs)
	}
	runtime.KeepAlive(m)
	return resErr(op, r)
}

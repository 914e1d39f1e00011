package devtensor

// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// DeviceType uses DLPack's codes, as the C ABI does.
type DeviceType int32

// The device types (DT_DEVICE_*), with DLPack's codes.
const (
	DeviceDefault DeviceType = C.DT_DEVICE_DEFAULT // process default / "unchanged"
	DeviceCPU     DeviceType = C.DT_DEVICE_CPU     // the host CPU (kDLCPU); see DEVTENSOR_CPU_DEVICES
	DeviceCUDA    DeviceType = C.DT_DEVICE_CUDA    // an NVIDIA GPU through the CUDA plugin (kDLCUDA)
)

// Device is a value: {DeviceCUDA, 1} is cuda:1. Parse text once with ParseDevice and
// pass Devices around.
type Device struct {
	Type  DeviceType
	Index int32
}

// DefaultDevice is the sentinel meaning the process default device in constructors and
// "unchanged" in To.
var DefaultDevice = Device{DeviceDefault, 0}

// CUDA returns cuda:i (whether or not it exists; see DeviceCount).
func CUDA(i int) Device { return Device{DeviceCUDA, int32(i)} }

// CPU returns the logical CPU device cpu:i (whether or not it exists: there is one, cpu:0,
// unless DEVTENSOR_CPU_DEVICES says more; see DeviceCount). CPU(0) is the host CPU.
func CPU(i int) Device { return Device{DeviceCPU, int32(i)} }

func (d Device) c() C.dt_device {
	return C.dt_device{_type: C.int32_t(d.Type), index: C.int32_t(d.Index)}
}
func goDevice(d C.dt_device) Device { return Device{DeviceType(d._type), int32(d.index)} }

// ParseDevice parses "cpu", "cpu:N", "cuda", "cuda:N" ("cuda" is cuda:0). It does not
// check that the device exists.
func ParseDevice(s string) (Device, error) {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	var out C.dt_device
	if err := resErr("ParseDevice", C.gdt_device_parse(cs, &out)); err != nil {
		return Device{}, err
	}
	return goDevice(out), nil
}

// String formats the device as "cpu:0" or "cuda:1" ("default" for the sentinel).
func (d Device) String() string {
	if d.Type == DeviceDefault {
		return "default"
	}
	s, err := takeString("Device.String", C.gdt_string(C.GDT_S_DEVICE_FORMAT, d.c(), 0, nil))
	if err != nil {
		return fmt.Sprintf("device(%d:%d)", d.Type, d.Index)
	}
	return s
}

// DeviceCount returns the number of devices of a type (CPU: 1, or DEVTENSOR_CPU_DEVICES).
func DeviceCount(t DeviceType) (int, error) {
	var n C.size_t
	if err := resErr("DeviceCount", C.gdt_device_count(C.int32_t(t), &n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// CUDAState says why CUDA is or is not usable (DT_CUDA_* codes).
type CUDAState int32

// The states CUDAStatus reports, with the values of the C header's DT_CUDA_* codes.
const (
	CUDAAvailable      CUDAState = C.DT_CUDA_AVAILABLE       // at least one CUDA device can be used
	CUDANotBuilt       CUDAState = C.DT_CUDA_NOT_BUILT       // this build of devtensor has no CUDA backend
	CUDAPluginMissing  CUDAState = C.DT_CUDA_PLUGIN_MISSING  // libdevtensor-cuda.so could not be loaded
	CUDAPluginMismatch CUDAState = C.DT_CUDA_PLUGIN_MISMATCH // the plugin is from another devtensor version
	CUDANoDriver       CUDAState = C.DT_CUDA_NO_DRIVER       // no NVIDIA driver is installed, or it failed to load
	CUDADriverTooOld   CUDAState = C.DT_CUDA_DRIVER_TOO_OLD  // the driver is older than the CUDA runtime needs
	CUDANoDevice       CUDAState = C.DT_CUDA_NO_DEVICE       // the driver sees no device
	CUDAAllHidden      CUDAState = C.DT_CUDA_ALL_HIDDEN      // CUDA_VISIBLE_DEVICES hides every device
)

// String returns a short name for the state: "available", "not built", "plugin
// missing", "plugin mismatch", "no driver", "driver too old", "no device", "all hidden";
// a value this package does not know prints as "CUDAState(N)". CUDAStatus gives the
// sentence that explains it.
func (s CUDAState) String() string {
	switch s {
	case CUDAAvailable:
		return "available"
	case CUDANotBuilt:
		return "not built"
	case CUDAPluginMissing:
		return "plugin missing"
	case CUDAPluginMismatch:
		return "plugin mismatch"
	case CUDANoDriver:
		return "no driver"
	case CUDADriverTooOld:
		return "driver too old"
	case CUDANoDevice:
		return "no device"
	case CUDAAllHidden:
		return "all hidden"
	}
	return fmt.Sprintf("CUDAState(%d)", int32(s))
}

// CUDAIsAvailable reports whether at least one CUDA device can be used.
func CUDAIsAvailable() bool { return C.dt_cuda_is_available() != 0 }

// CUDAStatus returns why CUDA is or is not usable, with a sentence explaining it.
func CUDAStatus() (CUDAState, string, error) {
	var st C.int32_t
	s, err := takeString("CUDAStatus", C.gdt_string(C.GDT_S_CUDA_STATUS, C.dt_device{}, 0, &st))
	if err != nil {
		return 0, "", err
	}
	return CUDAState(st), s, nil
}

// Name returns the device's name (CPU model or GPU name).
func (d Device) Name() (string, error) {
	return takeString("Device.Name", C.gdt_string(C.GDT_S_DEVICE_NAME, d.c(), 0, nil))
}

// Memory returns free and total memory in bytes.
func (d Device) Memory() (free, total uint64, err error) {
	_ = ReleasePending() // a failure is counted in gdt_release_errors
	var f, t C.uint64_t
	if err := resErr("Device.Memory", C.gdt_device_memory(d.c(), &f, &t)); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// DeviceProperties describes a device.
type DeviceProperties struct {
	Device                 Device
	Name                   string
	TotalMemory            uint64
	FreeMemory             uint64
	ComputeCapabilityMajor int
	ComputeCapabilityMinor int
	MultiprocessorCount    int
	PhysicalIndex          int
	UUID                   string
	PCIBusID               string
}

// Properties returns the device's properties.
func (d Device) Properties() (DeviceProperties, error) {
	var p C.dt_device_props
	if err := resErr("Device.Properties", C.gdt_device_properties(d.c(), &p)); err != nil {
		return DeviceProperties{}, err
	}
	return DeviceProperties{
		Device:                 goDevice(p.device),
		Name:                   C.GoString(&p.name[0]),
		TotalMemory:            uint64(p.total_memory),
		FreeMemory:             uint64(p.free_memory),
		ComputeCapabilityMajor: int(p.compute_capability_major),
		ComputeCapabilityMinor: int(p.compute_capability_minor),
		MultiprocessorCount:    int(p.multiprocessor_count),
		PhysicalIndex:          int(p.physical_index),
		UUID:                   C.GoString(&p.uuid[0]),
		PCIBusID:               C.GoString(&p.pci_bus_id[0]),
	}, nil
}

// Synchronize waits for all work queued on the device.
func (d Device) Synchronize() error {
	_ = ReleasePending() // a failure is counted in gdt_release_errors
	return resErr("Device.Synchronize", C.gdt_synchronize(d.c()))
}

// TryGPU returns cuda:i if that GPU exists, else cpu:0.
func TryGPU(i int) (Device, error) {
	var out C.dt_device
	if err := resErr("TryGPU", C.gdt_try_gpu(C.int32_t(i), &out)); err != nil {
		return Device{}, err
	}
	return goDevice(out), nil
}

func devList(op string, byFree C.int) ([]Device, error) {
	var buf [64]C.dt_device
	var n C.size_t
	if err := resErr(op, C.gdt_devlist(byFree, &buf[0], C.size_t(len(buf)), &n)); err != nil {
		return nil, err
	}
	if int(n) > len(buf) {
		big := make([]C.dt_device, int(n))
		if err := resErr(op, C.gdt_devlist(byFree, &big[0], C.size_t(len(big)), &n)); err != nil {
			return nil, err
		}
		out := make([]Device, 0, len(big))
		for i := 0; i < int(n) && i < len(big); i++ {
			out = append(out, goDevice(big[i]))
		}
		return out, nil
	}
	out := make([]Device, int(n))
	for i := range out {
		out[i] = goDevice(buf[i])
	}
	return out, nil
}

// AllGPUs returns every usable GPU, or [cpu:0] when there is none.
func AllGPUs() ([]Device, error) { return devList("AllGPUs", 0) }

// DevicesByFreeMemory returns every usable GPU, most free memory first, or [cpu:0].
func DevicesByFreeMemory() ([]Device, error) { return devList("DevicesByFreeMemory", 1) }

// ManualSeed seeds the random generator of every device.
func ManualSeed(seed uint64) error { return resErr("ManualSeed", C.gdt_manual_seed(C.uint64_t(seed))) }

// SetDefaultDevice sets the process-wide default device (used with DefaultDevice).
func SetDefaultDevice(d Device) error {
	return resErr("SetDefaultDevice", C.gdt_set_default_device(d.c()))
}

// GetDefaultDevice returns the process-wide default device.
func GetDefaultDevice() (Device, error) {
	var out C.dt_device
	if err := resErr("GetDefaultDevice", C.gdt_default_device(&out)); err != nil {
		return Device{}, err
	}
	return goDevice(out), nil
}

// ManualSeed seeds one device's random generator.
func (d Device) ManualSeed(seed uint64) error {
	return resErr("Device.ManualSeed", C.gdt_device_manual_seed(d.c(), C.uint64_t(seed)))
}

// MemoryStats are a device allocator's statistics.
type MemoryStats struct {
	AllocatedBytes        uint64 // bytes in live tensor storage
	ReservedBytes         uint64 // bytes held by the allocator (live + cached)
	PeakAllocatedBytes    uint64
	AllocationCount       uint64 // storage allocations served since start
	SystemAllocationCount uint64 // allocations that went to the OS / driver
}

// MemoryStats returns the device allocator's statistics.
func (d Device) MemoryStats() (MemoryStats, error) {
	_ = ReleasePending() // a failure is counted in gdt_release_errors
	var s C.dt_mem_stats
	if err := resErr("Device.MemoryStats", C.gdt_memory_stats(d.c(), &s)); err != nil {
		return MemoryStats{}, err
	}
	return MemoryStats{uint64(s.allocated_bytes), uint64(s.reserved_bytes),
		uint64(s.peak_allocated_bytes), uint64(s.allocation_count),
		uint64(s.system_allocation_count)}, nil
}

// EmptyCache returns the device allocator's cached, unused blocks to the system.
func (d Device) EmptyCache() error {
	_ = ReleasePending() // a failure is counted in gdt_release_errors
	return resErr("Device.EmptyCache", C.gdt_empty_cache(d.c()))
}

// SetAllowTF32 sets whether float32 matrix products on CUDA may use TensorFloat-32
// tensor cores (faster, about 10 bits of mantissa), as
// torch.backends.cuda.matmul.allow_tf32. Off by default, as in PyTorch; process-wide;
// the CPU ignores it. See dt_set_allow_tf32.
func SetAllowTF32(allow bool) error {
	flag := C.int32_t(0)
	if allow {
		flag = 1
	}
	return resErr("SetAllowTF32", C.gdt_set_allow_tf32(flag))
}

// AllowTF32 reports whether TF32 is allowed (SetAllowTF32). See dt_allow_tf32.
func AllowTF32() (bool, error) {
	var v C.int32_t
	err := resErr("AllowTF32", C.gdt_allow_tf32(&v))
	return v != 0, err
}

// SetDefaultDType sets the process-wide default (floating) dtype.
func SetDefaultDType(t DType) error {
	return resErr("SetDefaultDType", C.gdt_set_default_dtype(C.dt_dtype(t)))
}

// GetDefaultDType returns the process-wide default dtype.
func GetDefaultDType() (DType, error) {
	var t C.dt_dtype
	err := resErr("GetDefaultDType", C.gdt_default_dtype(&t))
	return DType(t), err
}

// SetNumThreads sets the number of CPU threads large operations use.
func SetNumThreads(n int) error { return resErr("SetNumThreads", C.gdt_set_num_threads(C.int32_t(n))) }

// NumThreads returns the number of CPU threads large operations use.
func NumThreads() (int, error) {
	var n C.int32_t
	err := resErr("NumThreads", C.gdt_num_threads(&n))
	return int(n), err
}

#!/usr/bin/env python3
"""Zero-copy DLPack exchange between devtensor and PyTorch / NumPy, through ctypes.

  test_dlpack_torch.py /path/to/libdevtensor.so [--cuda]

Checks, on the CPU (and on cuda:0 with --cuda, where both sides have a GPU):
  - PyTorch -> devtensor: the imported tensor has PyTorch's data pointer, shape and
    strides (a transposed tensor too), writes on either side are seen on the other, and
    every dtype both have arrives as the same dtype;
  - devtensor -> PyTorch: torch.utils.dlpack.from_dlpack over dt_tensor_to_dlpack has
    devtensor's data pointer, writes are shared both ways, and the tensor outlives the
    devtensor handle;
  - NumPy -> devtensor: ndarray.__dlpack__ imports with NumPy's pointer, writes shared;
  - with --cuda and CuPy installed, both directions with CuPy arrays on cuda:0 through the
    DLPack protocol (__dlpack__ / cupy.from_dlpack), with 0.x capsules and 1.x versioned
    ones where CuPy speaks DLPack 1.x.
Uses Debian's python3-torch and python3-numpy. Exit status 0 when every check passed,
1 on a failed check, 77 (ctest's skip) when torch or numpy is missing.
"""
import ctypes
import sys

try:
    import numpy as np
    import torch
    import torch.utils.dlpack
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e}")
    sys.exit(77)

DT_OK = 0
DT_CPU, DT_CUDA = 1, 2  # DT_DEVICE_CPU, DT_DEVICE_CUDA (DLPack's own codes)
DT_FLOAT32 = 1
# dt_dtype codes (include/devtensor.h) by torch dtype
DT_DTYPES = {torch.float32: 1, torch.float64: 2, torch.float16: 3, torch.bfloat16: 4, torch.int8: 5,
             torch.int16: 6, torch.int32: 7, torch.int64: 8, torch.uint8: 9, torch.bool: 10}


class DtDevice(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int32), ("index", ctypes.c_int32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


lib = ctypes.CDLL(sys.argv[1])
lib.dt_last_error_message.restype = ctypes.c_char_p
lib.dt_tensor_from_dlpack.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
lib.dt_tensor_to_dlpack.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
lib.dt_tensor_data_ptr.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
lib.dt_tensor_release.argtypes = [ctypes.c_void_p]
lib.dt_tensor_shape.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t]
lib.dt_tensor_strides.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t]
lib.dt_tensor_ndim.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
lib.dt_tensor_dtype.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)]
lib.dt_tensor_device.argtypes = [ctypes.c_void_p, ctypes.POINTER(DtDevice)]
lib.dt_add_scalar_.argtypes = [ctypes.c_void_p, ctypes.c_double]
lib.dt_tensor_copy_to_host.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
lib.dt_tensor_arange.argtypes = [ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_int32, DtDevice,
                                 ctypes.POINTER(ctypes.c_void_p)]
lib.dt_live_handle_count.restype = ctypes.c_size_t

capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
capsule_get.restype = ctypes.c_void_p
capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
capsule_is_valid.restype = ctypes.c_int
capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
lib.dt_tensor_from_dlpack_versioned.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
lib.dt_tensor_to_dlpack_versioned.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def ok(status, what):
    if status != DT_OK:
        raise RuntimeError(f"{what}: status {status}: {lib.dt_last_error_message().decode()}")


def import_capsule(cap):
    """dt_tensor_from_dlpack over a 'dltensor' capsule (or dt_tensor_from_dlpack_versioned
    over a DLPack 1.x 'dltensor_versioned' one), consumed as the protocol says."""
    t = ctypes.c_void_p()
    if capsule_is_valid(cap, b"dltensor_versioned"):
        managed = capsule_get(cap, b"dltensor_versioned")
        ok(lib.dt_tensor_from_dlpack_versioned(managed, ctypes.byref(t)), "dt_tensor_from_dlpack_versioned")
        capsule_set_name(cap, b"used_dltensor_versioned")  # ours now: the capsule must not delete it
        return t
    managed = capsule_get(cap, b"dltensor")
    ok(lib.dt_tensor_from_dlpack(managed, ctypes.byref(t)), "dt_tensor_from_dlpack")
    capsule_set_name(cap, b"used_dltensor")
    return t


class DtExport:
    """A devtensor tensor as a DLPack protocol producer (__dlpack__, __dlpack_device__), so
    consumers such as cupy.from_dlpack take it: a 'dltensor_versioned' capsule when the
    consumer asks for DLPack 1.x and versioned is True, a 'dltensor' capsule otherwise.
    dt_tensor_to_dlpack finishes devtensor's pending work, so any consumer stream is safe."""

    def __init__(self, t, device, versioned):
        self.t, self.device, self.versioned = t, device, versioned
        self.kinds = []  # the capsule names handed out

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        m = ctypes.c_void_p()
        if self.versioned and max_version is not None and max_version[0] >= 1:
            ok(lib.dt_tensor_to_dlpack_versioned(self.t, ctypes.byref(m)), "dt_tensor_to_dlpack_versioned")
            self.kinds.append("dltensor_versioned")
            return capsule_new(m, b"dltensor_versioned", None)
        ok(lib.dt_tensor_to_dlpack(self.t, ctypes.byref(m)), "dt_tensor_to_dlpack")
        self.kinds.append("dltensor")
        return capsule_new(m, b"dltensor", None)

    def __dlpack_device__(self):
        return self.device


def dt_layout(t):
    n = ctypes.c_size_t()
    ok(lib.dt_tensor_ndim(t, ctypes.byref(n)), "ndim")
    shape = (ctypes.c_int64 * max(n.value, 1))()
    strides = (ctypes.c_int64 * max(n.value, 1))()
    ok(lib.dt_tensor_shape(t, shape, n.value), "shape")
    ok(lib.dt_tensor_strides(t, strides, n.value), "strides")
    return tuple(shape[:n.value]), tuple(strides[:n.value])


def dt_ptr(t):
    p = ctypes.c_void_p()
    ok(lib.dt_tensor_data_ptr(t, ctypes.byref(p)), "data_ptr")
    return p.value or 0


def dt_values(t, like):
    out = torch.empty_like(like, device="cpu").contiguous()
    ok(lib.dt_tensor_copy_to_host(t, out.data_ptr(), out.numel() * out.element_size()), "copy_to_host")
    return out


def torch_to_devtensor(device):
    x = torch.arange(12, dtype=torch.float32, device=device).reshape(3, 4)
    if device == "cuda":
        torch.cuda.synchronize()  # devtensor's stream does not wait for torch's: finish first
    for name, src in (("contiguous", x), ("transposed", x.t())):
        t = import_capsule(torch.utils.dlpack.to_dlpack(src))
        shape, strides = dt_layout(t)
        check(shape == tuple(src.shape) and strides == tuple(src.stride()),
              f"{device} torch->devtensor {name}: shape {shape} strides {strides} as torch's")
        if device == "cpu":
            check(dt_ptr(t) == src.data_ptr(), f"{device} torch->devtensor {name}: same data pointer")
        ok(lib.dt_add_scalar_(t, 100.0), "add_")
        if device == "cuda":
            torch.cuda.synchronize()
        check(float(src[0, 0]) >= 100.0, f"{device} torch->devtensor {name}: devtensor's write seen by torch")
        src.add_(1)
        if device == "cuda":
            torch.cuda.synchronize()
        check(torch.equal(dt_values(t, src), src.cpu().contiguous()),
              f"{device} torch->devtensor {name}: torch's write seen by devtensor")
        lib.dt_tensor_release(t)
    for dtype, code in DT_DTYPES.items():
        src = torch.ones(5, dtype=dtype, device=device)
        try:
            cap = torch.utils.dlpack.to_dlpack(src)
        except RuntimeError as e:  # torch 1.13 exports no bool ("Bool type is not supported")
            print(f"skip  {device} torch->devtensor {dtype}: torch {torch.__version__} cannot export it: {e}")
            continue
        t = import_capsule(cap)
        got = ctypes.c_int32()
        ok(lib.dt_tensor_dtype(t, ctypes.byref(got)), "dtype")
        check(got.value == code, f"{device} torch->devtensor {dtype}: arrives as dt_dtype {got.value} (want {code})")
        lib.dt_tensor_release(t)


def devtensor_to_torch(device):
    dev = DtDevice(DT_CPU if device == "cpu" else DT_CUDA, 0)
    t = ctypes.c_void_p()
    ok(lib.dt_tensor_arange(0.0, 6.0, 1.0, DT_FLOAT32, dev, ctypes.byref(t)), "arange")
    m = ctypes.c_void_p()
    ok(lib.dt_tensor_to_dlpack(t, ctypes.byref(m)), "dt_tensor_to_dlpack")
    y = torch.utils.dlpack.from_dlpack(capsule_new(m, b"dltensor", None))
    if device == "cpu":
        check(y.data_ptr() == dt_ptr(t), f"{device} devtensor->torch: same data pointer")
    check(y.device.type == device, f"{device} devtensor->torch: on {y.device}")
    check(torch.equal(y.cpu(), torch.arange(6, dtype=torch.float32)), f"{device} devtensor->torch: values")
    y.mul_(2)
    if device == "cuda":
        torch.cuda.synchronize()
    check(torch.equal(dt_values(t, y), torch.arange(6, dtype=torch.float32) * 2),
          f"{device} devtensor->torch: torch's write seen by devtensor")
    lib.dt_tensor_release(t)
    check(torch.equal(y.cpu(), torch.arange(6, dtype=torch.float32) * 2),
          f"{device} devtensor->torch: the torch tensor outlives the devtensor handle")
    del y


def numpy_to_devtensor():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    if not hasattr(a, "__dlpack__"):
        print("skip  numpy->devtensor: this NumPy has no __dlpack__")
        return
    t = import_capsule(a.__dlpack__())
    check(dt_ptr(t) == a.ctypes.data, "numpy->devtensor: same data pointer")
    check(dt_layout(t) == ((2, 3), (3, 1)), "numpy->devtensor: shape and strides")
    ok(lib.dt_add_scalar_(t, 0.5), "add_")
    check(a[1, 2] == 5.5, "numpy->devtensor: devtensor's write seen by NumPy")
    lib.dt_tensor_release(t)


def cupy_round_trip():
    """CuPy <-> devtensor on cuda:0, where CuPy is installed (with --cuda), through the
    DLPack protocol both ways, with DLPack 0.x capsules and, where CuPy speaks it, 1.x."""
    try:
        import cupy
    except ImportError:
        print("skip  cupy: not installed here")
        return
    print(f"cupy {cupy.__version__}")
    sync = cupy.cuda.Device(0).synchronize  # the whole device: devtensor's stream too
    kinds = [("dltensor", {})]
    try:
        cupy.arange(1).__dlpack__(max_version=(1, 0))
        kinds.append(("dltensor_versioned", {"max_version": (1, 0)}))
    except TypeError:
        print(f"skip  cupy {cupy.__version__}: __dlpack__ takes no max_version (DLPack 1.x)")
    for kind, kwargs in kinds:
        a = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
        sync()  # devtensor's stream does not wait for CuPy's: finish first
        cap = a.__dlpack__(**kwargs)
        check(capsule_is_valid(cap, kind.encode()) == 1, f"cuda cupy->devtensor {kind}: CuPy made a '{kind}' capsule")
        t = import_capsule(cap)
        check(dt_layout(t) == ((3, 4), (4, 1)), f"cuda cupy->devtensor {kind}: shape and strides")
        ok(lib.dt_add_scalar_(t, 100.0), "add_")
        sync()
        check(float(a[0, 0]) == 100.0, f"cuda cupy->devtensor {kind}: devtensor's write seen by CuPy")
        a += 1
        sync()
        check(torch.equal(dt_values(t, torch.empty(3, 4)), torch.from_numpy(cupy.asnumpy(a))),
              f"cuda cupy->devtensor {kind}: CuPy's write seen by devtensor")
        lib.dt_tensor_release(t)
        check(float(a[2, 3]) == 112.0, f"cuda cupy->devtensor {kind}: the CuPy array outlives the handle")
    for versioned in (False, True):
        t = ctypes.c_void_p()
        ok(lib.dt_tensor_arange(0.0, 6.0, 1.0, DT_FLOAT32, DtDevice(DT_CUDA, 0), ctypes.byref(t)), "arange")
        producer = DtExport(t, (DT_CUDA, 0), versioned)
        y = cupy.from_dlpack(producer)
        kind = producer.kinds[-1] if producer.kinds else "none"
        check(kind in ("dltensor", "dltensor_versioned"), f"cuda devtensor->cupy: CuPy took a '{kind}' capsule")
        if versioned and kind == "dltensor":
            print(f"note  cupy {cupy.__version__}: from_dlpack asked for no DLPack 1.x capsule")
        check(cupy.asnumpy(y).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], f"cuda devtensor->cupy {kind}: values")
        y *= 2
        sync()
        check(dt_values(t, torch.empty(6)).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0],
              f"cuda devtensor->cupy {kind}: CuPy's write seen by devtensor")
        lib.dt_tensor_release(t)
        check(cupy.asnumpy(y).tolist()[5] == 10.0, f"cuda devtensor->cupy {kind}: the CuPy array outlives the handle")
        del y


def main():
    live = lib.dt_live_handle_count()
    devices = ["cpu"] + (["cuda"] if "--cuda" in sys.argv else [])
    for d in devices:
        torch_to_devtensor(d)
        devtensor_to_torch(d)
    numpy_to_devtensor()
    if "--cuda" in sys.argv:
        cupy_round_trip()
    check(lib.dt_live_handle_count() == live, "no devtensor handle left behind")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

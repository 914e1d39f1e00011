#!/usr/bin/env python3
"""Generates tests/reference/cases.json: PyTorch reference cases for devtensor's ops.

Regenerate (needs torch and numpy; on the dev machines Debian's interpreter has them):

    /usr/bin/python3 tests/reference/gen_reference.py

The output is deterministic: every case draws its data from a numpy generator seeded
with a CRC32 of the case id, so regenerating with the same PyTorch version rewrites the
file byte for byte. tests/test_reference_ops.cpp runs every case on every device.

Case format (one JSON object per case, in "cases"):

  id        unique name, [A-Za-z0-9_] only (used as the gtest instance name)
  op        the C function under test: "dt_add", "dt_sum", "dt_tensor_to", ...
  inputs    list of tensors. Each: {"dtype", "shape" (the base tensor's shape),
            "data" (its row-major values), "views" (steps applied in order to the base
            to make it non-contiguous: ["transpose", d0, d1], ["permute", [dims]],
            ["narrow", dim, start, length], ["expand", [shape]])}.
            Values are JSON numbers; "nan", "inf", "-inf" strings; bools 0/1;
            float16/bfloat16 data are floats exactly representable in that dtype.
  params    op parameters: "scalar", "dims", "keepdim", "dim", "dim0", "dim1", "shape",
            "start", "length", "chunks", "split_size", "start_dim", "end_dim", "dtype".
            dt_index_select/dt_gather take their index as inputs[1];
            dt_where takes (cond, a, b); dt_cat/dt_stack take every input.
  expected  {"dtype", "shape", "values", ["strides"] (views: elements), ["same_handle"]}
            for in-place ops (op ends with "_"), the new value of inputs[0] (the view
            after its view steps). dt_chunk/dt_split: "expected_list", a list of those.
  atol_scale  sqrt(n) for ops that accumulate n terms (reductions, matmul, softmax).
  error     true when PyTorch raises; the C call must fail and leave its outputs (and,
            for in-place ops, self) untouched. "expect_status" names the dt_status code
            when it is unambiguous; "torch_error" keeps PyTorch's message.
  note      why a case is special (e.g. float16 computed in float32 because the
            PyTorch CPU build lacks the Half kernel, as PyTorch on CUDA computes it).

Semantics follow PyTorch: scalar arguments that are integral behave like Python ints,
others like Python floats; reductions are torch.sum/mean/amax/amin/argmax/argmin; dt_gelu
is the exact erf form; the default dtype is float32.
"""
import json
import math
import os
import re
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float32)
torch.set_num_threads(1)

# The op lists come from the op table (src/core/op_table.h): a row added there gets its
# cases here with no edit, as long as PyTorch has a function of the same name.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import op_table  # noqa: E402

TABLE_UNARY, TABLE_BINARY, TABLE_REDUCE = op_table.load()


# Table rows whose PyTorch function has another name or takes an option.
TORCH_OVERRIDES = {"gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}


def torch_fn(name):
    """PyTorch's function of this name: torch.<name>, else torch.nn.functional.<name>."""
    fn = TORCH_OVERRIDES.get(name) or getattr(torch, name, None) or getattr(F, name, None)
    if fn is None:
        raise SystemExit("PyTorch has no function %r for the op table's row; add an override" % name)
    return fn

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
}
NAMES = {v: k for k, v in DTYPES.items()}
ALL = list(DTYPES)
FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]

CASES = []
IDS = set()


# ----------------------------------------------------------------------------- helpers

def sanitize(s):
    s = re.sub(r"[^A-Za-z0-9]+", "_", s).strip("_")
    return s


def enc(v, dtype):
    """A Python value for JSON from a tensor element of dtype."""
    if dtype == torch.bool:
        return 1 if bool(v) else 0
    if dtype.is_floating_point:
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == 0.0 and math.copysign(1.0, v) < 0:
            return -0.0
        return v
    return int(v)


def short_f32(v):
    """The shortest decimal that reads back (double, then rounded to float) as the same
    float32: keeps the file small. Checked, so the round trip is exact."""
    if not math.isfinite(v):
        return v
    s = float(repr(np.float32(v)))
    assert np.float32(s) == np.float32(v) and math.copysign(1, s) == math.copysign(1, v)
    return s


def values_of(t):
    flat = t.detach().contiguous().reshape(-1)
    if t.dtype in (torch.float16, torch.bfloat16):
        flat = flat.to(torch.float64)
    if t.dtype == torch.float32:
        return [enc(short_f32(v), t.dtype) for v in flat.tolist()]
    return [enc(v, t.dtype) for v in flat.tolist()]


def rng_for(case_id):
    return np.random.default_rng(zlib.crc32(case_id.encode()))


class In:
    """An input: base data of a dtype and shape, then view steps."""

    def __init__(self, dtype, shape, data=None, views=(), domain="normal", rng=None):
        self.dtype = dtype
        self.shape = list(shape)
        self.views = [list(v) for v in views]
        self.domain = domain
        self.data = data  # flat list or None (generated lazily with the case's rng)

    def realise(self, rng):
        if self.data is None:
            n = int(np.prod(self.shape)) if self.shape else 1
            self.data = gen_values(rng, self.dtype, n, self.domain)
        base = make_tensor(self.data, self.dtype, self.shape)
        # canonical (exactly representable) data
        self.data = values_of(base)

    def tensor(self):
        t = make_tensor(self.data, self.dtype, self.shape)
        for v in self.views:
            t = apply_view(t, v)
        return t

    def spec(self):
        return {"dtype": self.dtype, "shape": self.shape, "data": self.data,
                "views": self.views}


def dec(v):
    if isinstance(v, str):
        return float(v)
    return v


def make_tensor(data, dtype, shape):
    td = DTYPES[dtype]
    vals = [dec(v) for v in data]
    if td.is_floating_point:
        t = torch.tensor(vals, dtype=torch.float64).to(td)
    elif td == torch.bool:
        t = torch.tensor([bool(v) for v in vals], dtype=torch.bool)
    else:
        t = torch.tensor([int(v) for v in vals], dtype=torch.int64).to(td)
    return t.reshape(shape)


def apply_view(t, v):
    kind = v[0]
    if kind == "transpose":
        return t.transpose(v[1], v[2])
    if kind == "permute":
        return t.permute(*v[1])
    if kind == "narrow":
        return t.narrow(v[1], v[2], v[3])
    if kind == "expand":
        return t.expand(*v[1])
    raise ValueError(kind)


def gen_values(rng, dtype, n, domain):
    if dtype == "bool":
        return [int(x) for x in rng.integers(0, 2, n)]
    if dtype in INTS:
        if domain == "positive":
            lo, hi = 1, 9
        elif domain == "pow_exp":
            lo, hi = 0, 4
        elif domain == "pow_base":
            lo, hi = -3, 3
        elif domain == "index":
            raise ValueError("index data must be explicit")
        elif domain == "divisor":  # nonzero: an integer division by 0 is an error
            vals = [v for v in range(-6, 13) if v != 0 and (dtype != "uint8" or v > 0)]
            if dtype != "uint8":
                vals = [v for v in vals if v <= 6]
            return [int(x) for x in rng.choice(vals, n)]
        else:
            lo, hi = -6, 6
        if dtype == "uint8":
            lo = max(lo, 0)
            hi = max(hi, 12) if domain == "normal" else hi
        return [int(x) for x in rng.integers(lo, hi + 1, n)]
    # floating
    if domain == "positive":
        x = rng.uniform(0.1, 4.0, n)
    elif domain == "pow_exp":
        x = rng.uniform(-2.5, 2.5, n)
        x[::3] = np.round(x[::3])  # some integral exponents (negative bases stay real)
    elif domain == "pow_base":
        x = rng.uniform(-3.0, 3.0, n)
    elif domain == "special":
        base = [0.0, -0.0, 1.0, -1.5, float("nan"), float("inf"), float("-inf"), 2.25, -3.0, 0.5]
        x = np.array([base[i % len(base)] for i in range(n)])
    elif domain == "dyadic":  # short JSON for the big (multi-threaded) cases
        x = np.round(rng.normal(0.0, 1.5, n) * 8.0) / 8.0
    elif domain == "large":
        x = rng.normal(0.0, 1.0, n) * 30.0 + 1000.0
    else:
        x = rng.normal(0.0, 1.5, n)
    x = np.round(x, 4) if domain not in ("special", "dyadic") else x
    return [float(v) for v in x]


def scalar_py(s):
    """PyTorch mapping of a double scalar: integral -> Python int, else Python float."""
    if isinstance(s, float) and math.isfinite(s) and s == int(s):
        return int(s)
    return s


def half_fallback(fn, args):
    """Runs fn; if the PyTorch CPU build has no Half kernel, computes in float32 and
    rounds the float32 result to float16 (as PyTorch's CUDA and newer CPU kernels do)."""
    try:
        return fn(*args), None
    except (RuntimeError, NotImplementedError) as e:
        if "for 'Half'" not in str(e):
            raise
    up = [a.float() if isinstance(a, torch.Tensor) and a.dtype == torch.float16 else a
          for a in args]
    r = fn(*up)

    def down(x):
        return x.to(torch.float16) if x.dtype == torch.float32 else x
    if isinstance(r, (list, tuple)):
        r = type(r)(down(x) for x in r)
    else:
        r = down(r)
    return r, "float16 computed in float32 and rounded (PyTorch CPU build has no Half kernel)"


def classify(e):
    m = str(e)
    if "must match the size of tensor" in m or "doesn't match the broadcast shape" in m:
        return "DT_ERR_SHAPE_MISMATCH"
    if "can't be cast to the desired output type" in m:
        return "DT_ERR_DTYPE_MISMATCH"
    if "Dimension out of range" in m or "appears multiple times" in m:
        return "DT_ERR_INVALID_ARGUMENT"
    if "index out of range" in m or "out of bounds" in m:
        return "DT_ERR_INVALID_ARGUMENT"
    if ("with a bool tensor is not supported" in m or "on a bool tensor is not supported" in m
            or "with two bool tensors is not supported" in m):
        return "DT_ERR_DTYPE_MISMATCH"
    if "could not infer output dtype" in m:
        return "DT_ERR_DTYPE_MISMATCH"
    if "to have non-zero size" in m or "input.numel() == 0" in m:
        return "DT_ERR_SHAPE_MISMATCH"  # max/min/argmax/argmin of an empty extent
    if ("not implemented for '" in m or "Boolean inputs not supported" in m
            or "expected scalar type" in m or "Found dtype" in m
            or "expected condition to be a boolean" in m or "Expected dtype int32 or int64" in m):
        return "DT_ERR_DTYPE_MISMATCH"
    if ("shapes cannot be multiplied" in m or "Sizes of tensors must match" in m
            or "stack expects each tensor to be equal size" in m or "The expanded size" in m
            or "is invalid for input of size" in m or "view size is not compatible" in m):
        return "DT_ERR_SHAPE_MISMATCH"
    if "pad should be at most half" in m or "pad should be smaller than or equal to half" in m:
        return "DT_ERR_INVALID_ARGUMENT"
    if "Kernel size can't be greater than actual input size" in m:
        return "DT_ERR_SHAPE_MISMATCH"
    if "expected input with shape [*" in m or "to be divisible by num_groups" in m:
        return "DT_ERR_SHAPE_MISMATCH"  # layer_norm / group_norm shapes
    if "ZeroDivisionError" in m:
        return "DT_ERR_INVALID_ARGUMENT"  # integer fmod / remainder / floor_divide by 0
    if "selected index k out of range" in m:
        return "DT_ERR_INVALID_ARGUMENT"  # topk's k
    if "chunk expects `chunks` to be greater than 0" in m:
        return "DT_ERR_INVALID_ARGUMENT"
    return None


def expected_of(t, strides=False):
    d = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "values": values_of(t)}
    if strides:
        d["strides"] = list(t.stride())
    return d


def case(cid, op, inputs, fn, params=None, strides=False, atol_from=None, inplace=False,
         multi=False, note=None, same_handle=None, list_strides=True):
    """Adds a case. fn(*tensors) returns the torch result (tensor, or list when multi)."""
    if op.endswith("_") and cid.startswith(op):
        cid = op[:-1] + "_inplace" + cid[len(op):]  # keep in-place ids apart
    cid = sanitize(cid)
    base = cid
    k = 2
    while cid in IDS:
        cid = f"{base}_{k}"
        k += 1
    IDS.add(cid)
    rng = rng_for(cid)
    for i in inputs:
        i.realise(rng)
    c = {"id": cid, "op": op, "inputs": [i.spec() for i in inputs], "params": params or {}}
    ts = [i.tensor() for i in inputs]
    try:
        # in-place fns return self after the update (the view after its view steps)
        r, fnote = half_fallback(fn, ts)
        note = note or fnote
        if multi:
            c["expected_list"] = [expected_of(x, strides=list_strides) for x in r]
        else:
            c["expected"] = expected_of(r, strides)
            if same_handle is not None:
                c["expected"]["same_handle"] = same_handle
        if atol_from is not None:
            n = atol_from(ts, r)
            if n > 1:
                c["atol_scale"] = math.sqrt(n)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        c["error"] = True
        c["torch_error"] = str(e).split("\n")[0][:160]
        code = classify(e)
        if code:
            c["expect_status"] = code
    if note:
        c["note"] = note
    CASES.append(c)
    return c


def red_n(ts, r):
    a = ts[0]
    return a.numel() // max(r.numel(), 1) if a.numel() else 0


# ----------------------------------------------------------------------------- unary

UNARY = {"dt_" + u.c_name: torch_fn(u.c_name) for u in op_table.public_unary(TABLE_UNARY)}


def gen_unary():
    for op, fn in UNARY.items():
        for dt in ALL:
            case(f"{op}_{dt}_2x3", op, [In(dt, [2, 3])], fn)
            case(f"{op}_{dt}_0d", op, [In(dt, [])], fn)
        for dt in FLOATS:
            case(f"{op}_{dt}_special", op, [In(dt, [10], domain="special")], fn)
            case(f"{op}_{dt}_transposed", op, [In(dt, [3, 4], views=[["transpose", 0, 1]])], fn)
        dt = "float32"
        case(f"{op}_{dt}_narrow_expand", op,
             [In(dt, [4, 1], views=[["narrow", 0, 1, 3], ["expand", [3, 5]]])], fn)
        case(f"{op}_{dt}_permute3d", op, [In(dt, [2, 3, 4], views=[["permute", [2, 0, 1]]])], fn)
        case(f"{op}_{dt}_empty0", op, [In(dt, [0])], fn)
        case(f"{op}_{dt}_empty2x0x3", op, [In(dt, [2, 0, 3])], fn)
        case(f"{op}_{dt}_large", op, [In(dt, [97])], fn)
        if op in ("dt_exp", "dt_gelu", "dt_gelu_tanh", "dt_tanh"):
            # more elements than the CPU backend's grain for costly ops: runs threaded
            case(f"{op}_{dt}_threaded_transposed", op,
                 [In(dt, [64, 72], domain="dyadic", views=[["transpose", 0, 1]])], fn)
        case(f"{op}_int32_transposed", op, [In("int32", [3, 4], views=[["transpose", 0, 1]])], fn)
        case(f"{op}_int64_empty", op, [In("int64", [0, 2])], fn)
        case(f"{op}_uint8_positive", op, [In("uint8", [6], domain="positive")], fn)
    # rounding on ties and near them, in float32 and float64
    ties = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 4503599627370497.0, -0.0]
    for op in ["dt_floor", "dt_ceil", "dt_round", "dt_trunc", "dt_frac", "dt_sign"]:
        for dt in ["float32", "float64", "float16"]:
            case(f"{op}_{dt}_ties", op, [In(dt, [10], data=ties)], UNARY[op])
    # the inverse functions at and past the ends of their domains
    ends = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, "inf", "-inf", "nan"]
    for op in ["dt_asin", "dt_acos", "dt_atanh", "dt_acosh", "dt_log1p", "dt_log2", "dt_log10", "dt_reciprocal"]:
        case(f"{op}_float64_domain_ends", op, [In("float64", [10], data=ends)], UNARY[op])
    case("dt_sign_int8_extremes", "dt_sign", [In("int8", [4], data=[-128, 127, 0, -1])], UNARY["dt_sign"])
    case("dt_sign_bool", "dt_sign", [In("bool", [4], data=[0, 1, 1, 0])], UNARY["dt_sign"])


# ----------------------------------------------------------------------------- binary

BINARY = {"dt_" + b.c_name: torch_fn(b.c_name) for b in TABLE_BINARY if b.rule != "Compare"}
CMP = {"dt_" + b.c_name: torch_fn(b.c_name) for b in TABLE_BINARY if b.rule == "Compare"}


INT_DIV = {"dt_fmod", "dt_remainder", "dt_floor_divide"}


def bdom(op, which):
    if op == "dt_pow":
        return "pow_base" if which == 0 else "pow_exp"
    if op.rstrip("_") in INT_DIV and which == 1:
        return "divisor"
    return "normal"


def gen_binary():
    for op, fn in BINARY.items():
        # every dtype, same dtype on both sides
        for dt in ALL:
            case(f"{op}_{dt}_{dt}_2x3", op, [In(dt, [2, 3], domain=bdom(op, 0)),
                                            In(dt, [2, 3], domain=bdom(op, 1))], fn)
        # broadcasting, 0-d, empty, non-contiguous
        for dt in ["float32", "int32", "float64"]:
            d0, d1 = bdom(op, 0), bdom(op, 1)
            shapes = [([3, 1], [4], "bcast_3x1_4"), ([2, 3, 4], [3, 1], "bcast_2x3x4_3x1"),
                      ([], [5], "bcast_0d_5"), ([5], [], "bcast_5_0d"), ([], [], "0d_0d"),
                      ([0], [1], "empty0_1"), ([2, 0, 3], [3], "empty2x0x3_3"),
                      ([2, 0, 3], [1, 0, 1], "empty_bcast"), ([1, 4], [3, 1], "bcast_1x4_3x1")]
            for sa, sb, nm in shapes:
                case(f"{op}_{dt}_{nm}", op, [In(dt, sa, domain=d0), In(dt, sb, domain=d1)], fn)
            case(f"{op}_{dt}_transposed", op,
                 [In(dt, [4, 3], domain=d0, views=[["transpose", 0, 1]]), In(dt, [3, 4], domain=d1)], fn)
            case(f"{op}_{dt}_both_noncontig", op,
                 [In(dt, [3, 6], domain=d0, views=[["narrow", 1, 2, 3]]),
                  In(dt, [3, 1, 2], domain=d1, views=[["expand", [3, 3, 2]], ["permute", [0, 2, 1]], ["narrow", 1, 1, 1]])], fn)
            case(f"{op}_{dt}_expanded", op,
                 [In(dt, [1, 3], domain=d0, views=[["expand", [4, 3]]]), In(dt, [4, 3], domain=d1)], fn)
        case(f"{op}_float32_shape_mismatch", op, [In("float32", [2, 3]), In("float32", [4])], fn)
        case(f"{op}_float32_shape_mismatch_3d", op, [In("float32", [2, 3, 4]), In("float32", [2, 4, 4])], fn)
        case(f"{op}_float32_large", op, [In("float32", [129], domain=bdom(op, 0)),
                                         In("float32", [129], domain=bdom(op, 1))], fn)
        for dt in FLOATS:
            case(f"{op}_{dt}_special", op, [In(dt, [10], domain="special"),
                                           In(dt, [10], data=[1.0, 0.0, -0.0, float("nan"), 2.0, float("inf"), 1.0, 0.5, float("-inf"), -2.0])], fn)
    # type promotion: every ordered pair of dtypes, 1-d with 1-d and 1-d with 0-d
    for op in ["dt_add", "dt_mul", "dt_div", "dt_sub", "dt_maximum"]:
        fn = BINARY[op]
        for da in ALL:
            for db in ALL:
                if da == db:
                    continue
                case(f"{op}_promote_{da}_{db}", op, [In(da, [4]), In(db, [4])], fn)
                if op in ("dt_add", "dt_mul"):
                    case(f"{op}_promote_{da}_0d_{db}", op, [In(da, [3]), In(db, [])], fn)
    fn = torch.pow
    for da, db in [("int32", "float16"), ("float32", "int64"), ("int8", "uint8"), ("bool", "int32"),
                   ("float16", "float32"), ("bfloat16", "float16"), ("int64", "float64")]:
        case(f"dt_pow_promote_{da}_{db}", "dt_pow",
             [In(da, [4], domain="pow_base"), In(db, [4], domain="pow_exp")], fn)
    # specific semantics
    case("dt_div_int32_by_zero", "dt_div", [In("int32", [4], data=[1, -1, 0, 5]), In("int32", [4], data=[0, 0, 0, 2])], torch.div)
    case("dt_div_int64_int64_truediv", "dt_div", [In("int64", [4], data=[7, -7, 1, 9]), In("int64", [4], data=[2, 2, 3, -4])], torch.div)
    case("dt_add_int8_overflow_wraps", "dt_add", [In("int8", [3], data=[100, -100, 127]), In("int8", [3], data=[100, -100, 1])], torch.add)
    case("dt_mul_uint8_overflow_wraps", "dt_mul", [In("uint8", [3], data=[16, 200, 255]), In("uint8", [3], data=[16, 2, 255])], torch.mul)
    case("dt_sub_uint8_underflow_wraps", "dt_sub", [In("uint8", [3], data=[0, 1, 5]), In("uint8", [3], data=[1, 5, 5])], torch.sub)
    case("dt_add_bool_bool_is_or", "dt_add", [In("bool", [4], data=[0, 1, 0, 1]), In("bool", [4], data=[0, 0, 1, 1])], torch.add)
    case("dt_pow_int8_overflow_wraps", "dt_pow", [In("int8", [4], data=[3, 2, -2, 5]), In("int8", [4], data=[5, 7, 7, 3])], torch.pow)
    case("dt_pow_int64_negative_exponent", "dt_pow", [In("int64", [5], data=[2, 1, -1, -1, 0]), In("int64", [5], data=[-1, -3, -3, -2, 2])], torch.pow)
    case("dt_pow_float32_zero_zero", "dt_pow", [In("float32", [3], data=[0.0, -2.0, 0.0]), In("float32", [3], data=[0.0, 0.5, -1.0])], torch.pow)
    case("dt_maximum_float32_nan", "dt_maximum", [In("float32", [3], data=["nan", 1.0, 2.0]), In("float32", [3], data=[1.0, "nan", 3.0])], torch.maximum)
    case("dt_minimum_float32_nan", "dt_minimum", [In("float32", [3], data=["nan", 1.0, 2.0]), In("float32", [3], data=[1.0, "nan", 3.0])], torch.minimum)
    case("dt_sub_bool_bool", "dt_sub", [In("bool", [3]), In("bool", [3])], torch.sub)
    # the integer-division family: signs, exact quotients, division by zero, INT_MIN / -1
    num = [7, -7, 7, -7, 6, -6, 0, 5]
    den = [2, 2, -2, -2, 3, -3, 4, 1]
    for op in sorted(INT_DIV):
        fn = BINARY[op]
        for dt in ["int8", "int32", "int64", "float32", "float64"]:
            case(f"{op}_{dt}_signs", op, [In(dt, [8], data=num), In(dt, [8], data=den)], fn)
        case(f"{op}_int32_by_zero", op, [In("int32", [3], data=[1, 2, 3]), In("int32", [3], data=[1, 0, 2])], fn)
        case(f"{op}_uint8_by_zero_bcast", op, [In("uint8", [2, 2]), In("uint8", [], data=[0])], fn)
        case(f"{op}_int8_min_by_minus1", op, [In("int8", [3], data=[-128, 127, 5]), In("int8", [3], data=[-1, -1, -1])], fn)
        # (int64's -2^63 by -1 traps inside PyTorch 1.13 itself: test_pytorch_parity.cpp has it)
        case(f"{op}_float32_by_zero", op, [In("float32", [4], data=[1.0, -1.0, 0.0, "nan"]), In("float32", [4], data=[0.0, 0.0, 0.0, 0.0])], fn)
        case(f"{op}_float64_large_quotient", op, [In("float64", [4], data=[1e300, -1e17, 0.3, 1e-300]),
                                                  In("float64", [4], data=[3.0, 0.1, 0.1, -7.0])], fn)
        case(f"{op}_bool_bool", op, [In("bool", [3]), In("bool", [3])], fn)
        case(f"{op}_int32_bool", op, [In("int32", [3], data=[5, -5, 4]), In("bool", [3], data=[1, 1, 1])], fn)
        case(f"{op}_promote_int16_float32", op, [In("int16", [4]), In("float32", [4], domain="divisor")], fn)
    case("dt_atan2_quadrants", "dt_atan2",
         [In("float32", [8], data=[0.0, -0.0, 0.0, -0.0, 1.0, -1.0, "inf", "nan"]),
          In("float32", [8], data=[1.0, 1.0, -1.0, -1.0, 0.0, 0.0, "-inf", 1.0])], torch.atan2)
    case("dt_atan2_bool_int", "dt_atan2", [In("bool", [4]), In("int8", [4])], torch.atan2)

    # comparisons
    for op, fn in CMP.items():
        for dt in ALL:
            case(f"{op}_{dt}_{dt}", op, [In(dt, [2, 4]), In(dt, [2, 4])], fn)
        case(f"{op}_float32_special", op, [In("float32", [10], domain="special"),
                                            In("float32", [10], data=[0.0, 0.0, 1.0, "nan", "nan", "inf", "-inf", 2.25, -3.0, 1.0])], fn)
        for da, db in [("int32", "float32"), ("uint8", "int8"), ("bool", "int64"), ("float16", "bfloat16"), ("int64", "float64"), ("float16", "float32")]:
            case(f"{op}_mixed_{da}_{db}", op, [In(da, [6]), In(db, [6])], fn)
        case(f"{op}_float32_bcast", op, [In("float32", [3, 1]), In("float32", [4])], fn)
        case(f"{op}_int32_0d_noncontig", op, [In("int32", [4, 3], views=[["transpose", 0, 1]]), In("int32", [])], fn)
        case(f"{op}_float32_empty", op, [In("float32", [2, 0]), In("float32", [1])], fn)
        case(f"{op}_shape_mismatch", op, [In("float32", [3]), In("float32", [4])], fn)
        # equal values to exercise eq/le/ge on ties
        case(f"{op}_int16_ties", op, [In("int16", [5], data=[1, 2, 3, -4, 0]), In("int16", [5], data=[1, 3, 2, -4, 0])], fn)

    # where
    for dt in ALL:
        case(f"dt_where_{dt}", "dt_where", [In("bool", [2, 3]), In(dt, [2, 3]), In(dt, [2, 3])], torch.where)
    case("dt_where_bcast", "dt_where", [In("bool", [3, 1]), In("float32", [4]), In("float32", [])], torch.where)
    case("dt_where_bcast3", "dt_where", [In("bool", [2, 1, 4]), In("float32", [3, 1]), In("float32", [1, 4])], torch.where)
    case("dt_where_noncontig", "dt_where", [In("bool", [4, 3], views=[["transpose", 0, 1]]),
                                           In("float64", [3, 8], views=[["narrow", 1, 2, 4]]),
                                           In("float64", [1, 4], views=[["expand", [3, 4]]])], torch.where)
    for da, db in [("int64", "float16"), ("int32", "float32"), ("uint8", "int8"), ("bool", "int32"), ("float32", "float64")]:
        case(f"dt_where_promote_{da}_{db}", "dt_where", [In("bool", [5]), In(da, [5]), In(db, [5])], torch.where)
    case("dt_where_empty", "dt_where", [In("bool", [0]), In("float32", [0]), In("float32", [1])], torch.where)
    case("dt_where_0d", "dt_where", [In("bool", []), In("int32", []), In("int32", [])], torch.where)
    case("dt_where_float_cond", "dt_where", [In("float32", [3]), In("float32", [3]), In("float32", [3])], torch.where)
    case("dt_where_shape_mismatch", "dt_where", [In("bool", [3]), In("float32", [4]), In("float32", [3])], torch.where)


# ----------------------------------------------------------------------------- scalar ops

def scalar_minmax(fn, a, s):
    rt = torch.result_type(a, s)
    return fn(a.to(rt), torch.tensor(s, dtype=rt))


SCALAR_OVERRIDES = {
    # torch.maximum takes no Python scalar: promote as the Python scalar would
    # (torch.result_type), then compare in that dtype
    "maximum": lambda a, s: scalar_minmax(torch.maximum, a, s),
    "minimum": lambda a, s: scalar_minmax(torch.minimum, a, s),
    # torch.atan2 takes no Python scalar: a 0-d tensor promotes as the number would
    "atan2": lambda a, s: torch.atan2(a, torch.tensor(s)),
}
SCALAR = {"dt_%s_scalar" % b.c_name: SCALAR_OVERRIDES.get(b.c_name) or torch_fn(b.c_name) for b in TABLE_BINARY}


def scalar_case(cid, op, inp, s, fn, **kw):
    sp = scalar_py(s)
    return case(cid, op, [inp], lambda a: fn(a, sp), params={"scalar": enc(s, torch.float64)}, **kw)


def fmt_s(s):
    return str(s).replace("-", "m").replace(".", "p")


def gen_scalar():
    for op, fn in SCALAR.items():
        if op == "dt_pow_scalar":
            scalars = [2.0, 0.5, 3.0, -1.0, 0.0]
        elif op.startswith("dt_div"):
            scalars = [2.0, 2.5, -4.0]
        else:
            scalars = [2.0, 2.5, -3.0]
        for dt in ALL:
            for s in scalars:
                if dt == "uint8" and s < 0 and ("maximum" in op or "minimum" in op or "div" in op or "pow" in op):
                    continue
                dom = "pow_base" if op == "dt_pow_scalar" else "normal"
                scalar_case(f"{op}_{dt}_s{fmt_s(s)}", op, In(dt, [2, 3], domain=dom), s, fn)
        scalar_case(f"{op}_float32_0d", op, In("float32", []), 1.5, fn)
        scalar_case(f"{op}_int32_0d", op, In("int32", []), 2.0, fn)
        scalar_case(f"{op}_float32_empty", op, In("float32", [2, 0, 3]), 2.0, fn)
        scalar_case(f"{op}_float32_noncontig", op, In("float32", [3, 4], views=[["transpose", 0, 1]]), 0.75, fn)
        scalar_case(f"{op}_int64_noncontig", op, In("int64", [1, 4], views=[["expand", [3, 4]]]), 3.0, fn)
        scalar_case(f"{op}_float32_special", op, In("float32", [10], domain="special"), 2.0, fn)
        scalar_case(f"{op}_float32_nan_scalar", op, In("float32", [3]), float("nan"), fn)
        scalar_case(f"{op}_float16_large_scalar", op, In("float16", [4], data=[1.0, 2.0, -3.0, 0.5]), 1e6, fn) if not op.startswith("dt_pow") else None
        scalar_case(f"{op}_bfloat16_frac", op, In("bfloat16", [4]), 0.1, fn)
    scalar_case("dt_div_scalar_int32_by_zero", "dt_div_scalar", In("int32", [3], data=[1, 0, -2]), 0.0, torch.div)
    scalar_case("dt_div_scalar_float32_by_zero", "dt_div_scalar", In("float32", [3], data=[1.0, 0.0, -2.0]), 0.0, torch.div)
    scalar_case("dt_add_scalar_uint8_negative_wraps", "dt_add_scalar", In("uint8", [3], data=[0, 2, 255]), -1.0, torch.add)
    scalar_case("dt_mul_scalar_int8_overflow", "dt_mul_scalar", In("int8", [3], data=[100, -100, 3]), 2.0, torch.mul)
    scalar_case("dt_pow_scalar_int32_neg_exp", "dt_pow_scalar", In("int32", [3], data=[2, 1, -1]), -2.0, torch.pow)
    scalar_case("dt_pow_scalar_float32_frac_neg_base", "dt_pow_scalar", In("float32", [3], data=[-2.0, 4.0, 0.0]), 0.5, torch.pow)
    scalar_case("dt_pow_scalar_int8_overflow", "dt_pow_scalar", In("int8", [3], data=[3, 2, -2]), 5.0, torch.pow)
    scalar_case("dt_eq_scalar_int32_frac", "dt_eq_scalar", In("int32", [3], data=[2, 3, -2]), 2.5, torch.eq)
    scalar_case("dt_lt_scalar_int8_frac", "dt_lt_scalar", In("int8", [3], data=[2, 3, -2]), 2.5, torch.lt)
    scalar_case("dt_eq_scalar_float32_large_int", "dt_eq_scalar", In("float64", [2], data=[9007199254740992.0, 1.0]), 9007199254740992.0, torch.eq)


# ----------------------------------------------------------------------------- in place

INPLACE = {"dt_%s_" % b.c_name: b.c_name + "_" for b in TABLE_BINARY if op_table.has_inplace(b)}


def minmax_inplace(method, self_t, other):
    """PyTorch has no Tensor.maximum_/minimum_: apply its in-place rules to torch.maximum
    (the broadcast shape must be self's, the result type must cast to self's dtype)."""
    fn = torch.maximum if method == "maximum_" else torch.minimum
    shape = torch.broadcast_shapes(self_t.shape, other.shape)
    if tuple(shape) != tuple(self_t.shape):
        raise RuntimeError(f"output with shape {list(self_t.shape)} doesn't match the broadcast shape {list(shape)}")
    rt = torch.result_type(self_t, other)
    if not torch.can_cast(rt, self_t.dtype):
        raise RuntimeError(f"result type {rt} can't be cast to the desired output type {self_t.dtype}")
    self_t.copy_(fn(self_t.to(rt), other.to(rt)))
    return self_t


def ip(method):
    def f(self_t, other):
        if method in ("maximum_", "minimum_"):
            return minmax_inplace(method, self_t, other)
        getattr(self_t, method)(other)
        return self_t
    return f


def ips(method, s):
    sp = scalar_py(s)

    def f(self_t):
        if method in ("maximum_", "minimum_"):
            rt = torch.result_type(self_t, sp)
            return minmax_inplace(method, self_t, torch.tensor(sp, dtype=rt))
        getattr(self_t, method)(torch.tensor(sp) if method == "atan2_" else sp)
        return self_t
    return f


def gen_inplace():
    for op, m in INPLACE.items():
        dom0 = "pow_base" if m == "pow_" else "normal"
        dom1 = "pow_exp" if m == "pow_" else bdom(op, 1)
        for dt in ALL:
            case(f"{op}_{dt}_{dt}", op, [In(dt, [2, 3], domain=dom0), In(dt, [2, 3], domain=dom1)], ip(m), inplace=True)
        case(f"{op}_float32_bcast", op, [In("float32", [2, 3], domain=dom0), In("float32", [3], domain=dom1)], ip(m), inplace=True)
        case(f"{op}_float32_bcast_0d", op, [In("float32", [2, 3], domain=dom0), In("float32", [], domain=dom1)], ip(m), inplace=True)
        case(f"{op}_float32_self_transposed", op, [In("float32", [3, 4], domain=dom0, views=[["transpose", 0, 1]]), In("float32", [4, 3], domain=dom1)], ip(m), inplace=True)
        case(f"{op}_float64_self_narrowed", op, [In("float64", [4, 5], domain=dom0, views=[["narrow", 1, 1, 3]]), In("float64", [4, 1], domain=dom1, views=[["expand", [4, 3]]])], ip(m), inplace=True)
        case(f"{op}_float32_empty", op, [In("float32", [2, 0]), In("float32", [1])], ip(m), inplace=True)
        case(f"{op}_float32_0d", op, [In("float32", [], domain=dom0), In("float32", [], domain=dom1)], ip(m), inplace=True)
        # promotion into self's dtype (allowed: same or lower category) and refused
        for ds, do in [("float32", "int32"), ("float32", "float64"), ("float16", "float32"),
                       ("int32", "int64"), ("int16", "bool"), ("int32", "float32"),
                       ("int64", "float16"), ("bool", "int32"), ("uint8", "int8"), ("bfloat16", "float16")]:
            case(f"{op}_promote_{ds}_{do}", op, [In(ds, [4], domain=dom0), In(do, [4], domain=dom1)], ip(m), inplace=True)
        case(f"{op}_self_shape_too_small", op, [In("float32", [3]), In("float32", [2, 3])], ip(m), inplace=True)
        case(f"{op}_shape_mismatch", op, [In("float32", [3]), In("float32", [4])], ip(m), inplace=True)
    for op_base, m in INPLACE.items():
        op = op_base + "scalar_"
        dom = "pow_base" if m == "pow_" else "normal"
        for dt in ALL:
            for s in ([2.0, 0.5] if m == "pow_" else [2.0, 2.5]):
                case(f"{op}_{dt}_s{fmt_s(s)}", op, [In(dt, [2, 3], domain=dom)], ips(m, s), params={"scalar": enc(s, torch.float64)}, inplace=True)
        case(f"{op}_float32_transposed", op, [In("float32", [3, 4], domain=dom, views=[["transpose", 0, 1]])], ips(m, 3.0), params={"scalar": 3.0}, inplace=True)
        case(f"{op}_float32_0d", op, [In("float32", [], domain=dom)], ips(m, -1.5), params={"scalar": -1.5}, inplace=True)
        case(f"{op}_int64_empty", op, [In("int64", [0, 3])], ips(m, 2.0), params={"scalar": 2.0}, inplace=True)


# ----------------------------------------------------------------------------- reductions

def torch_red(name, dims, keepdim):
    def f(a):
        if name in ("dt_argmax", "dt_argmin"):
            fn = torch.argmax if name == "dt_argmax" else torch.argmin
            if len(dims) == 0:
                return fn(a, dim=None, keepdim=bool(keepdim))
            return fn(a, dim=dims[0], keepdim=bool(keepdim))
        fn = {"dt_max": torch.amax, "dt_min": torch.amin}.get(name) or torch_fn(name[len("dt_"):])
        if len(dims) == 0:
            if name in ("dt_max", "dt_min"):
                return fn(a, dim=list(range(a.dim())), keepdim=bool(keepdim)) if a.dim() else fn(a, dim=[], keepdim=bool(keepdim))
            return fn(a, dim=list(range(a.dim())), keepdim=bool(keepdim)) if a.dim() else fn(a)
        return fn(a, dim=dims, keepdim=bool(keepdim))
    return f


REDS = ["dt_" + r.c_name for r in TABLE_REDUCE]


def red_case(cid, op, inp, dims, keepdim, **kw):
    return case(cid, op, [inp], torch_red(op, dims, keepdim),
                params={"dims": dims, "keepdim": keepdim}, atol_from=red_n, **kw)


def gen_reductions():
    for op in REDS:
        single = op in ("dt_argmax", "dt_argmin")
        for dt in ALL:
            red_case(f"{op}_{dt}_all", op, In(dt, [3, 4]), [], 0)
            red_case(f"{op}_{dt}_dim1", op, In(dt, [3, 4]), [1], 0)
            red_case(f"{op}_{dt}_0d", op, In(dt, []), [], 0)
        for dt in ["float32", "int32", "float64", "bfloat16", "float16"]:
            red_case(f"{op}_{dt}_dim0_keep", op, In(dt, [2, 3, 4]), [0], 1)
            red_case(f"{op}_{dt}_dimm1", op, In(dt, [2, 3, 4]), [-1], 0)
            if not single:
                red_case(f"{op}_{dt}_dims0_2", op, In(dt, [2, 3, 4]), [0, 2], 0)
                red_case(f"{op}_{dt}_dims2_0_keep", op, In(dt, [2, 3, 4]), [2, 0], 1)
                red_case(f"{op}_{dt}_all_keep", op, In(dt, [2, 3, 4]), [], 1)
            else:
                red_case(f"{op}_{dt}_all_keep", op, In(dt, [2, 3, 4]), [], 1)
            red_case(f"{op}_{dt}_transposed_dim0", op, In(dt, [4, 5], views=[["transpose", 0, 1]]), [0], 0)
            red_case(f"{op}_{dt}_permuted_all", op, In(dt, [2, 3, 4], views=[["permute", [1, 2, 0]]]), [], 0)
            red_case(f"{op}_{dt}_expanded_dim1", op, In(dt, [3, 1], views=[["expand", [3, 5]]]), [1], 0)
            red_case(f"{op}_{dt}_narrowed_dim1", op, In(dt, [3, 7], views=[["narrow", 1, 2, 4]]), [1], 1)
        dt = "float32"
        red_case(f"{op}_{dt}_0d_dim0", op, In(dt, []), [0], 0)
        red_case(f"{op}_{dt}_0d_dimm1_keep", op, In(dt, []), [-1], 1)
        red_case(f"{op}_{dt}_empty_all", op, In(dt, [0]), [], 0)
        red_case(f"{op}_{dt}_empty_2x0x3_dim1", op, In(dt, [2, 0, 3]), [1], 0)
        red_case(f"{op}_{dt}_empty_2x0x3_dim0", op, In(dt, [2, 0, 3]), [0], 0)
        red_case(f"{op}_{dt}_empty_2x0x3_dim2_keep", op, In(dt, [2, 0, 3]), [2], 1)
        red_case(f"{op}_{dt}_large_all", op, In(dt, [64, 33]), [], 0)
        red_case(f"{op}_{dt}_large_dim0", op, In(dt, [257, 3]), [0], 0)
        red_case(f"{op}_float64_large_dim1", op, In("float64", [3, 1000]), [1], 0)
        red_case(f"{op}_{dt}_special", op, In(dt, [2, 5], domain="special"), [1], 0)
        red_case(f"{op}_{dt}_dim_out_of_range", op, In(dt, [2, 3]), [2], 0)
        red_case(f"{op}_int32_ties", op, In("int32", [2, 4], data=[3, 1, 3, 1, -2, -2, 5, 5]), [1], 0)
        red_case(f"{op}_int64_ties_all", op, In("int64", [2, 3], data=[0, 7, 7, -1, 7, -1]), [], 0)
        if not single:
            red_case(f"{op}_{dt}_dim_repeated", op, In(dt, [2, 3]), [0, 0], 0)
            red_case(f"{op}_{dt}_dim_repeated_neg", op, In(dt, [2, 3]), [1, -1], 0)
        red_case(f"{op}_float32_nan", op, In(dt, [2, 3], data=[1.0, "nan", 3.0, -1.0, 5.0, 2.0]), [1], 0)
        red_case(f"{op}_float32_inf", op, In(dt, [2, 3], data=["inf", 1.0, 3.0, "-inf", "-inf", 2.0]), [1], 0)
    red_case("dt_sum_float16_accumulates", "dt_sum", In("float16", [300], data=[1.0] * 300), [], 0)
    red_case("dt_sum_uint8_to_int64", "dt_sum", In("uint8", [300], data=[255] * 300), [], 0)
    red_case("dt_sum_bool_to_int64", "dt_sum", In("bool", [5, 3]), [0], 0)
    red_case("dt_mean_bfloat16_large", "dt_mean", In("bfloat16", [512]), [], 0)


# ----------------------------------------------------------------------------- softmax

def gen_softmax():
    for op, fn in [("dt_softmax", torch.softmax), ("dt_log_softmax", torch.log_softmax)]:
        for dt in ALL:
            case(f"{op}_{dt}_dimm1", op, [In(dt, [3, 5])], lambda a, fn=fn: fn(a, -1), params={"dim": -1}, atol_from=lambda ts, r: 5)
        for dt in FLOATS:
            case(f"{op}_{dt}_dim0", op, [In(dt, [3, 5])], lambda a, fn=fn: fn(a, 0), params={"dim": 0}, atol_from=lambda ts, r: 3)
            case(f"{op}_{dt}_large_values", op, [In(dt, [2, 6], domain="large")], lambda a, fn=fn: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 6)
            case(f"{op}_{dt}_transposed", op, [In(dt, [5, 3], views=[["transpose", 0, 1]])], lambda a, fn=fn: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 5)
        dt = "float32"
        case(f"{op}_{dt}_3d_dim1", op, [In(dt, [2, 4, 3])], lambda a, fn=fn: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 4)
        case(f"{op}_{dt}_expanded", op, [In(dt, [1, 4], views=[["expand", [3, 4]]])], lambda a, fn=fn: fn(a, 0), params={"dim": 0}, atol_from=lambda ts, r: 3)
        case(f"{op}_{dt}_0d", op, [In(dt, [])], lambda a, fn=fn: fn(a, 0), params={"dim": 0})
        case(f"{op}_{dt}_empty", op, [In(dt, [0])], lambda a, fn=fn: fn(a, 0), params={"dim": 0})
        case(f"{op}_{dt}_empty_2x0", op, [In(dt, [2, 0])], lambda a, fn=fn: fn(a, 0), params={"dim": 0})
        case(f"{op}_{dt}_neg_inf", op, [In(dt, [2, 3], data=["-inf", 1.0, 2.0, "-inf", 0.0, "-inf"])], lambda a, fn=fn: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 3)
        case(f"{op}_{dt}_all_neg_inf_row", op, [In(dt, [2, 2], data=["-inf", "-inf", 0.0, 1.0])], lambda a, fn=fn: fn(a, 1), params={"dim": 1})
        case(f"{op}_{dt}_nan", op, [In(dt, [2, 3], data=["nan", 1.0, 2.0, 0.0, 1.0, 2.0])], lambda a, fn=fn: fn(a, 1), params={"dim": 1})
        case(f"{op}_{dt}_long_row", op, [In(dt, [2, 300])], lambda a, fn=fn: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 300)
        case(f"{op}_{dt}_dim_out_of_range", op, [In(dt, [2, 3])], lambda a, fn=fn: fn(a, 2), params={"dim": 2})
        case(f"{op}_{dt}_threaded_rows", op, [In(dt, [80, 64], domain="dyadic")], lambda a, fn=fn: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 64)


def gen_cumsum():
    op, fn = "dt_cumsum", torch.cumsum
    for dt in ALL:
        case(f"{op}_{dt}_dim1", op, [In(dt, [3, 5])], lambda a: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 5)
        case(f"{op}_{dt}_dimm2", op, [In(dt, [3, 5])], lambda a: fn(a, -2), params={"dim": -2}, atol_from=lambda ts, r: 3)
    for dt in FLOATS:
        case(f"{op}_{dt}_special", op, [In(dt, [10], domain="special")], lambda a: fn(a, 0), params={"dim": 0})
        case(f"{op}_{dt}_transposed", op, [In(dt, [5, 3], views=[["transpose", 0, 1]])], lambda a: fn(a, 1),
             params={"dim": 1}, atol_from=lambda ts, r: 5)
    dt = "float32"
    case(f"{op}_{dt}_3d_dim1", op, [In(dt, [2, 4, 3])], lambda a: fn(a, 1), params={"dim": 1}, atol_from=lambda ts, r: 4)
    case(f"{op}_{dt}_expanded", op, [In(dt, [1, 4], views=[["expand", [3, 4]]])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_{dt}_0d", op, [In(dt, [])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_{dt}_0d_dimm1", op, [In(dt, [])], lambda a: fn(a, -1), params={"dim": -1})
    case(f"{op}_{dt}_empty", op, [In(dt, [0])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_{dt}_empty_2x0", op, [In(dt, [2, 0])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_{dt}_long_row", op, [In(dt, [2, 300], domain="dyadic")], lambda a: fn(a, 1), params={"dim": 1})
    # more elements than the CPU's grain: lines split over threads (int32: short JSON)
    case(f"{op}_int32_threaded_lines", op, [In("int32", [64, 300])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_{dt}_dim_out_of_range", op, [In(dt, [2, 3])], lambda a: fn(a, 2), params={"dim": 2})
    # float32 sums in float64 on the CPU, as PyTorch's: 1 + 1e8 - 1e8 keeps the 1
    case(f"{op}_{dt}_cancellation", op, [In(dt, [4], data=[1.0, 1e8, -1e8, 1.0])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_int8_to_int64", op, [In("int8", [4], data=[100, 100, 100, -128])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_int64_wraps", op, [In("int64", [3], data=[9223372036854775807, 1, 1])], lambda a: fn(a, 0), params={"dim": 0})
    case(f"{op}_bool", op, [In("bool", [2, 4])], lambda a: fn(a, 1), params={"dim": 1})


# ----------------------------------------------------------------------------- sort

def sort_fn(dim, descending):
    def f(a):
        return list(torch.sort(a, dim=dim, descending=descending, stable=True))
    return f


def argsort_fn(dim, descending):
    return lambda a: torch.sort(a, dim=dim, descending=descending, stable=True)[1]


def topk_fn(k, dim, largest):
    """torch.topk (what it raises, and its values); the indices of equal values come in
    order of position, devtensor's documented rule (PyTorch leaves it open), taken from
    torch's stable sort, whose values must equal topk's."""
    def f(a):
        v, i = torch.topk(a, k, dim=dim, largest=largest)
        if a.dim() == 0:
            return [v, i]
        sv, si = torch.sort(a, dim=dim, descending=largest, stable=True)
        sv, si = sv.narrow(dim, 0, k), si.narrow(dim, 0, k)
        assert bool(((v == sv) | (v.isnan() & sv.isnan())).all()), "topk values differ from the sort's"
        return [sv, si]
    return f


def gen_sort():
    F32 = "float32"

    def srt(cid, inp, dim, desc):
        case(cid, "dt_sort", [inp], sort_fn(dim, desc), params={"dim": dim, "descending": int(desc)},
             multi=True, list_strides=False)

    def top(cid, inp, k, dim, largest=True):
        case(cid, "dt_topk", [inp], topk_fn(k, dim, largest), params={"k": k, "dim": dim, "largest": int(largest)},
             multi=True, list_strides=False)

    def arg(cid, inp, dim, desc):
        case(cid, "dt_argsort", [inp], argsort_fn(dim, desc), params={"dim": dim, "descending": int(desc)})

    for dt in ALL:
        srt(f"dt_sort_{dt}_3x7", In(dt, [3, 7]), -1, False)
        srt(f"dt_sort_{dt}_3x7_desc", In(dt, [3, 7]), 1, True)
        srt(f"dt_sort_{dt}_5x4_dim0", In(dt, [5, 4]), 0, False)
        top(f"dt_topk_{dt}_4x6_k3", In(dt, [4, 6]), 3, 1)
        top(f"dt_topk_{dt}_4x6_k2_smallest_dim0", In(dt, [4, 6]), 2, 0, largest=False)
        arg(f"dt_argsort_{dt}_2x9_desc", In(dt, [2, 9]), -1, True)
    for dt in FLOATS:  # NaN (the largest), infinities, -0.0 tied with 0.0
        srt(f"dt_sort_{dt}_special", In(dt, [13], domain="special"), 0, False)
        srt(f"dt_sort_{dt}_special_desc", In(dt, [13], domain="special"), 0, True)
        top(f"dt_topk_{dt}_special_k4", In(dt, [13], domain="special"), 4, 0)
        top(f"dt_topk_{dt}_special_k5_smallest", In(dt, [13], domain="special"), 5, 0, largest=False)
    # extremes of the integer dtypes: the keys' sign flip
    srt("dt_sort_int64_extremes", In("int64", [6], data=[9223372036854775807, -1, 0, -9223372036854775808, 1, -2]), 0, False)
    srt("dt_sort_int64_extremes_desc", In("int64", [6], data=[9223372036854775807, -1, 0, -9223372036854775808, 1, -2]), 0, True)
    srt("dt_sort_int8_extremes", In("int8", [5], data=[127, -128, 0, -1, 1]), 0, False)
    srt("dt_sort_uint8_extremes", In("uint8", [5], data=[255, 0, 128, 127, 1]), 0, True)
    srt("dt_sort_int32_extremes", In("int32", [4], data=[2147483647, -2147483648, 0, -1]), 0, False)
    # many ties: the order among equal values is the stable one, both ways
    srt("dt_sort_float32_ties_long", In(F32, [2, 500], domain="dyadic"), 1, False)
    srt("dt_sort_float32_ties_long_desc", In(F32, [2, 500], domain="dyadic"), 1, True)
    top("dt_topk_int16_ties", In("int16", [3, 40]), 7, 1)
    top("dt_topk_int16_ties_smallest", In("int16", [3, 40]), 7, 1, largest=False)
    # a few of a long row (k * 16 <= n): the CPU's selection, over several 256-key blocks,
    # with ties across blocks (dyadic values, small integers), NaN and the infinities
    top("dt_topk_float32_select_ties_k5", In(F32, [3, 1000], domain="dyadic"), 5, 1)
    top("dt_topk_float32_select_ties_k9_smallest", In(F32, [3, 1000], domain="dyadic"), 9, 1, largest=False)
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        top(f"dt_topk_{dt}_select_special_k3", In(dt, [2, 700], domain="special"), 3, 1)
        top(f"dt_topk_{dt}_select_special_k3_smallest", In(dt, [2, 700], domain="special"), 3, 1, largest=False)
    # float32 rows whose length leaves a tail after the 8-wide vector key loop, -0.0 among them
    top("dt_topk_float32_select_tail_k4_smallest", In(F32, [3, 203], domain="special"), 4, 1, largest=False)
    top("dt_topk_int16_select_ties_k20", In("int16", [2, 600]), 20, 1)
    top("dt_topk_int16_select_ties_k20_smallest", In("int16", [2, 600]), 20, 1, largest=False)
    top("dt_topk_uint8_select_k10", In("uint8", [1, 2000]), 10, 1)
    top("dt_topk_int64_select_dim0_k4_smallest", In("int64", [333, 2]), 4, 0, largest=False)
    # rows split over threads (int32: short JSON)
    srt("dt_sort_int32_threaded_rows", In("int32", [64, 300]), 1, False)
    # views, other dims
    srt("dt_sort_float32_transposed", In(F32, [4, 5], views=[["transpose", 0, 1]]), 1, False)
    srt("dt_sort_float64_3d_dim1", In("float64", [2, 5, 3]), 1, True)
    srt("dt_sort_float32_expanded", In(F32, [1, 6], views=[["expand", [3, 6]]]), 1, False)
    srt("dt_sort_float32_narrowed_dim0", In(F32, [6, 4], views=[["narrow", 0, 1, 4]]), 0, True)
    top("dt_topk_float32_3d_dim0", In(F32, [5, 2, 3]), 2, 0)
    top("dt_topk_float32_transposed_dimm2", In(F32, [3, 6], views=[["transpose", 0, 1]]), 4, -2)
    top("dt_topk_float32_k_full", In(F32, [2, 5]), 5, 1)
    top("dt_topk_float32_k0", In(F32, [2, 5]), 0, 1)
    arg("dt_argsort_float32_dim0", In(F32, [4, 3]), 0, False)
    arg("dt_argsort_bool", In("bool", [10]), 0, False)
    # 0-d and empty
    srt("dt_sort_float32_0d", In(F32, []), 0, False)
    srt("dt_sort_float32_0d_dimm1", In(F32, []), -1, True)
    top("dt_topk_float32_0d_k1", In(F32, []), 1, 0)
    top("dt_topk_float32_0d_k0", In(F32, []), 0, -1)
    arg("dt_argsort_int64_0d", In("int64", []), 0, False)
    srt("dt_sort_float32_empty_row", In(F32, [2, 0]), 1, False)
    srt("dt_sort_float32_empty_other", In(F32, [0, 3]), 1, True)
    top("dt_topk_float32_empty_k0", In(F32, [2, 0]), 0, 1)
    # errors
    srt("dt_sort_float32_dim_out_of_range", In(F32, [2, 3]), 2, False)
    srt("dt_sort_float32_0d_dim1", In(F32, []), 1, False)
    top("dt_topk_float32_k_too_large", In(F32, [2, 3]), 4, 1)
    top("dt_topk_float32_k_negative", In(F32, [2, 3]), -1, 1)
    top("dt_topk_float32_0d_k2", In(F32, []), 2, 0)
    top("dt_topk_float32_dim_out_of_range", In(F32, [2, 3]), 1, -3)
    arg("dt_argsort_float32_dim_out_of_range", In(F32, [3]), 1, False)


# ----------------------------------------------------------------------------- matmul

def gen_matmul():
    op = "dt_matmul"
    k_of = lambda ts, r: ts[0].shape[-1] if ts[0].dim() > 0 else 1  # noqa: E731
    for dt in ALL:
        case(f"{op}_{dt}_2x3_3x4", op, [In(dt, [2, 3]), In(dt, [3, 4])], torch.matmul, atol_from=k_of)
        case(f"{op}_{dt}_dot", op, [In(dt, [5]), In(dt, [5])], torch.matmul, atol_from=k_of)
    shapes = [([4], [4], "1d_1d"), ([3, 4], [4], "2d_1d"), ([4], [4, 2], "1d_2d"),
              ([2, 3, 4], [2, 4, 5], "batched"), ([2, 1, 3, 4], [3, 4, 2], "bcast_batch"),
              ([2, 3, 4], [4], "3d_1d"), ([4], [2, 4, 3], "1d_3d"), ([2, 3, 4], [4, 5], "3d_2d"),
              ([3, 4], [2, 4, 5], "2d_3d"), ([3, 0], [0, 4], "k0"), ([0, 3], [3, 4], "m0"),
              ([2, 0, 3], [3, 2], "batch_m0"), ([0], [0], "dot_empty"), ([1, 1], [1, 1], "1x1"),
              ([17, 33], [33, 9], "odd"), ([64, 96], [96, 48], "bigger")]
    for dt in ["float32", "float64", "int64", "bfloat16", "float16"]:
        for sa, sb, nm in shapes:
            if dt != "float32" and nm in ("bigger",):
                continue
            case(f"{op}_{dt}_{nm}", op, [In(dt, sa), In(dt, sb)], torch.matmul, atol_from=k_of)
        case(f"{op}_{dt}_a_transposed", op, [In(dt, [4, 3], views=[["transpose", 0, 1]]), In(dt, [4, 5])], torch.matmul, atol_from=k_of)
        case(f"{op}_{dt}_b_transposed", op, [In(dt, [3, 4]), In(dt, [5, 4], views=[["transpose", 0, 1]])], torch.matmul, atol_from=k_of)
        case(f"{op}_{dt}_narrowed", op, [In(dt, [3, 9], views=[["narrow", 1, 2, 4]]), In(dt, [6, 5], views=[["narrow", 0, 1, 4]])], torch.matmul, atol_from=k_of)
        case(f"{op}_{dt}_expanded_batch", op, [In(dt, [1, 3, 4], views=[["expand", [2, 3, 4]]]), In(dt, [2, 4, 2], views=[["permute", [0, 1, 2]]])], torch.matmul, atol_from=k_of)
        case(f"{op}_{dt}_permuted_batch", op, [In(dt, [3, 2, 4], views=[["permute", [1, 0, 2]]]), In(dt, [2, 5, 4], views=[["transpose", 1, 2]])], torch.matmul, atol_from=k_of)
    case(f"{op}_0d_error", op, [In("float32", []), In("float32", [3])], torch.matmul)
    case(f"{op}_k_mismatch", op, [In("float32", [2, 3]), In("float32", [4, 2])], torch.matmul)
    case(f"{op}_batch_mismatch", op, [In("float32", [2, 2, 3]), In("float32", [3, 3, 2])], torch.matmul)
    case(f"{op}_dtype_mismatch_f32_f64", op, [In("float32", [2, 3]), In("float64", [3, 2])], torch.matmul)
    case(f"{op}_dtype_mismatch_i32_f32", op, [In("int32", [2, 3]), In("float32", [3, 2])], torch.matmul)
    case(f"{op}_float32_special", op, [In("float32", [2, 2], data=["nan", 1.0, 1.0, "inf"]), In("float32", [2, 2], data=[1.0, 0.0, 2.0, 1.0])], torch.matmul)


# ----------------------------------------------------------------------------- casts

def cast_values(src, dst):
    """Values of src valid to cast to dst (no out-of-range float->int conversions)."""
    if src == "bool":
        return [0, 1, 1, 0, 1]
    if src in INTS:
        lo = {"int8": -128, "int16": -32768, "int32": -2**31, "int64": -2**53, "uint8": 0}[src]
        hi = {"int8": 127, "int16": 32767, "int32": 2**31 - 1, "int64": 2**53, "uint8": 255}[src]
        vals = [0, 1, -1, 7, -100, 100, 127, -128, 255]
        if dst in ("int8", "int16", "int32", "int64", "uint8"):
            # stay in the destination's range (wrapping casts have their own cases),
            # except negative -> uint8, which is modular in C++ and PyTorch alike
            dlo = {"int8": -128, "int16": -32768, "int32": -2**31, "int64": -2**63, "uint8": -128}[dst]
            dhi = {"int8": 127, "int16": 32767, "int32": 2**31 - 1, "int64": 2**63 - 1, "uint8": 255}[dst]
            vals = [v for v in vals if dlo <= v <= dhi]
        if dst in ("float16", "bfloat16", "float32", "float64") and src in ("int32", "int64", "int16"):
            vals += [2049, 30001] + ([16777217, -2**31 + 1] if src != "int16" else [])
        return [v for v in vals if lo <= v <= hi]
    # floating source
    vals = [0.0, -0.0, 1.0, -2.75, 3.5, 0.3, 100.9, -127.9, 126.6, 0.999, -0.999, 1.0 / 3.0]
    if dst == "uint8":
        vals = [0.0, 1.0, 3.5, 0.3, 100.9, 254.9, 0.999, 1.0 / 3.0]
    elif dst == "bool":
        vals += ["nan", "inf", "-inf", 1e-30]
    elif dst in FLOATS:
        vals += ["nan", "inf", "-inf", 65504.0, 1.00390625, 1.0009765625, 3.0e-5, 1e-8]
        if dst == "float16" and src in ("float32", "float64", "bfloat16"):
            vals += [70000.0, -1e5]
    elif dst in ("int16", "int32", "int64"):
        vals += [30000.5, -30000.5]
        if dst != "int16" and src in ("float32", "float64"):
            vals += [1e9 + 0.5, -2e9]
    return vals


def gen_casts():
    op = "dt_tensor_to"
    for src in ALL:
        for dst in ALL:
            vals = cast_values(src, dst)
            case(f"{op}_{src}_to_{dst}", op, [In(src, [len(vals)], data=vals)],
                 lambda a, dst=dst: a.to(DTYPES[dst]), params={"dtype": dst},
                 same_handle=(src == dst))
    for src, dst in [("float32", "int32"), ("int64", "float16"), ("float64", "bfloat16"), ("bool", "float32"), ("uint8", "int64")]:
        case(f"{op}_{src}_to_{dst}_transposed", op, [In(src, [3, 4], domain="positive", views=[["transpose", 0, 1]])],
             lambda a, dst=dst: a.to(DTYPES[dst]), params={"dtype": dst})
        case(f"{op}_{src}_to_{dst}_expanded", op, [In(src, [1, 3], domain="positive", views=[["expand", [2, 3]]])],
             lambda a, dst=dst: a.to(DTYPES[dst]), params={"dtype": dst})
        case(f"{op}_{src}_to_{dst}_empty", op, [In(src, [2, 0, 3])], lambda a, dst=dst: a.to(DTYPES[dst]), params={"dtype": dst})
        case(f"{op}_{src}_to_{dst}_0d", op, [In(src, [], domain="positive")], lambda a, dst=dst: a.to(DTYPES[dst]), params={"dtype": dst})
    # wrapping integer casts (modular, as two's complement)
    for src, dst, vals in [("int32", "int8", [300, -300, 128, 255]), ("int64", "uint8", [-1, 256, 511, -256]),
                           ("int16", "uint8", [1000, -1000, 0, 255]), ("int64", "int16", [70000, -70000, 32768, 5])]:
        case(f"{op}_{src}_to_{dst}_wraps", op, [In(src, [len(vals)], data=vals)], lambda a, dst=dst: a.to(DTYPES[dst]), params={"dtype": dst})
    # float -> float rounding (round to nearest even)
    case(f"{op}_float64_to_float32_rounding", op, [In("float64", [4], data=[0.1, 1.0 + 2**-24, 1.0 + 3 * 2**-24, 3.4e38 * 1.0000001])],
         lambda a: a.to(torch.float32), params={"dtype": "float32"})
    case(f"{op}_float32_to_bfloat16_ties", op, [In("float32", [4], data=[1.00390625, 1.01171875, -1.00390625, 3.0e38])],
         lambda a: a.to(torch.bfloat16), params={"dtype": "bfloat16"})
    case(f"{op}_float32_to_float16_subnormal", op, [In("float32", [4], data=[6.0e-8, 1.0e-5, -3.0e-6, 65519.0])],
         lambda a: a.to(torch.float16), params={"dtype": "float16"})


# ----------------------------------------------------------------------------- views

def gen_views():
    def v(cid, op, inp, fn, params):
        case(cid, op, [inp], fn, params=params, strides=True)

    for dt in ["float32", "int64", "bool", "float16"]:
        v(f"dt_transpose_{dt}_2x3x4_0_2", "dt_transpose", In(dt, [2, 3, 4]), lambda a: a.transpose(0, 2), {"dim0": 0, "dim1": 2})
        v(f"dt_permute_{dt}_2x3x4", "dt_permute", In(dt, [2, 3, 4]), lambda a: a.permute(1, 2, 0), {"dims": [1, 2, 0]})
        v(f"dt_reshape_{dt}_2x3x4_to_4x6", "dt_reshape", In(dt, [2, 3, 4]), lambda a: a.reshape(4, 6), {"shape": [4, 6]})
        v(f"dt_narrow_{dt}_dim1", "dt_narrow", In(dt, [2, 5, 3]), lambda a: a.narrow(1, 1, 3), {"dim": 1, "start": 1, "length": 3})
        v(f"dt_expand_{dt}_3x1", "dt_expand", In(dt, [3, 1]), lambda a: a.expand(2, 3, 4), {"shape": [2, 3, 4]})
    F32 = "float32"
    # transpose
    v("dt_transpose_negative_dims", "dt_transpose", In(F32, [2, 3, 4]), lambda a: a.transpose(-1, -3), {"dim0": -1, "dim1": -3})
    v("dt_transpose_same_dim", "dt_transpose", In(F32, [2, 3]), lambda a: a.transpose(1, 1), {"dim0": 1, "dim1": 1})
    v("dt_transpose_of_narrowed", "dt_transpose", In(F32, [4, 6], views=[["narrow", 1, 1, 4]]), lambda a: a.transpose(0, 1), {"dim0": 0, "dim1": 1})
    v("dt_transpose_0d", "dt_transpose", In(F32, []), lambda a: a.transpose(0, -1), {"dim0": 0, "dim1": -1})
    v("dt_transpose_empty", "dt_transpose", In(F32, [2, 0, 3]), lambda a: a.transpose(0, 2), {"dim0": 0, "dim1": 2})
    v("dt_transpose_out_of_range", "dt_transpose", In(F32, [2, 3]), lambda a: a.transpose(0, 2), {"dim0": 0, "dim1": 2})
    # permute
    v("dt_permute_negative", "dt_permute", In(F32, [2, 3, 4]), lambda a: a.permute(-1, 0, 1), {"dims": [-1, 0, 1]})
    v("dt_permute_of_transposed", "dt_permute", In(F32, [2, 3, 4], views=[["transpose", 0, 1]]), lambda a: a.permute(2, 0, 1), {"dims": [2, 0, 1]})
    v("dt_permute_0d", "dt_permute", In(F32, []), lambda a: torch.permute(a, ()), {"dims": []})
    v("dt_permute_not_permutation", "dt_permute", In(F32, [2, 3, 4]), lambda a: a.permute(0, 0, 1), {"dims": [0, 0, 1]})
    v("dt_permute_wrong_count", "dt_permute", In(F32, [2, 3, 4]), lambda a: a.permute(0, 1), {"dims": [0, 1]})
    # reshape / view / flatten
    v("dt_reshape_infer", "dt_reshape", In(F32, [2, 3, 4]), lambda a: a.reshape(-1, 4), {"shape": [-1, 4]})
    v("dt_reshape_transposed_copies", "dt_reshape", In(F32, [3, 4], views=[["transpose", 0, 1]]), lambda a: a.reshape(12), {"shape": [12]})
    v("dt_reshape_transposed_view_ok", "dt_reshape", In(F32, [3, 4, 2], views=[["transpose", 0, 1]]), lambda a: a.reshape(4, 3, 1, 2), {"shape": [4, 3, 1, 2]})
    v("dt_reshape_expanded", "dt_reshape", In(F32, [1, 3], views=[["expand", [2, 3]]]), lambda a: a.reshape(3, 2), {"shape": [3, 2]})
    v("dt_reshape_0d_to_1", "dt_reshape", In(F32, []), lambda a: a.reshape(1), {"shape": [1]})
    v("dt_reshape_1x1_to_0d", "dt_reshape", In(F32, [1, 1]), lambda a: a.reshape([]), {"shape": []})
    v("dt_reshape_empty", "dt_reshape", In(F32, [2, 0, 3]), lambda a: a.reshape(0, 6), {"shape": [0, 6]})
    v("dt_reshape_empty_infer", "dt_reshape", In(F32, [2, 0, 3]), lambda a: a.reshape(-1, 3), {"shape": [-1, 3]})
    v("dt_reshape_bad_numel", "dt_reshape", In(F32, [2, 3]), lambda a: a.reshape(4, 2), {"shape": [4, 2]})
    v("dt_reshape_two_infer", "dt_reshape", In(F32, [2, 3]), lambda a: a.reshape(-1, -1), {"shape": [-1, -1]})
    v("dt_view_contig", "dt_view", In(F32, [2, 3, 4]), lambda a: a.view(6, 4), {"shape": [6, 4]})
    v("dt_view_narrowed_ok", "dt_view", In(F32, [4, 6], views=[["narrow", 0, 1, 2]]), lambda a: a.view(2, 2, 3), {"shape": [2, 2, 3]})
    v("dt_view_transposed_fails", "dt_view", In(F32, [3, 4], views=[["transpose", 0, 1]]), lambda a: a.view(12), {"shape": [12]})
    v("dt_view_transposed_split_ok", "dt_view", In(F32, [3, 4], views=[["transpose", 0, 1]]), lambda a: a.view(2, 2, 3), {"shape": [2, 2, 3]})
    v("dt_flatten_all", "dt_flatten", In(F32, [2, 3, 4]), lambda a: a.flatten(0, -1), {"start_dim": 0, "end_dim": -1})
    v("dt_flatten_middle", "dt_flatten", In(F32, [2, 3, 4, 2]), lambda a: a.flatten(1, 2), {"start_dim": 1, "end_dim": 2})
    v("dt_flatten_transposed", "dt_flatten", In(F32, [3, 4], views=[["transpose", 0, 1]]), lambda a: a.flatten(0, 1), {"start_dim": 0, "end_dim": 1})
    v("dt_flatten_0d", "dt_flatten", In(F32, []), lambda a: a.flatten(0, -1), {"start_dim": 0, "end_dim": -1})
    # narrow
    v("dt_narrow_negative_start", "dt_narrow", In(F32, [6, 2]), lambda a: a.narrow(0, -4, 2), {"dim": 0, "start": -4, "length": 2})
    v("dt_narrow_zero_length", "dt_narrow", In(F32, [6, 2]), lambda a: a.narrow(0, 3, 0), {"dim": 0, "start": 3, "length": 0})
    v("dt_narrow_at_end", "dt_narrow", In(F32, [6, 2]), lambda a: a.narrow(0, 6, 0), {"dim": 0, "start": 6, "length": 0})
    v("dt_narrow_of_transposed", "dt_narrow", In(F32, [4, 5], views=[["transpose", 0, 1]]), lambda a: a.narrow(1, 1, 2), {"dim": 1, "start": 1, "length": 2})
    v("dt_narrow_too_long", "dt_narrow", In(F32, [6, 2]), lambda a: a.narrow(0, 4, 3), {"dim": 0, "start": 4, "length": 3})
    v("dt_narrow_bad_dim", "dt_narrow", In(F32, [6, 2]), lambda a: a.narrow(2, 0, 1), {"dim": 2, "start": 0, "length": 1})
    # squeeze / unsqueeze
    v("dt_squeeze_all", "dt_squeeze", In(F32, [1, 3, 1, 2]), lambda a: a.squeeze(), {"dims": []})
    v("dt_squeeze_dim0", "dt_squeeze", In(F32, [1, 3, 1, 2]), lambda a: a.squeeze(0), {"dims": [0]})
    v("dt_squeeze_non1_kept", "dt_squeeze", In(F32, [1, 3, 1, 2]), lambda a: a.squeeze(1), {"dims": [1]})
    v("dt_squeeze_neg", "dt_squeeze", In(F32, [1, 3, 1, 2]), lambda a: a.squeeze(-2), {"dims": [-2]})
    v("dt_squeeze_to_0d", "dt_squeeze", In(F32, [1, 1]), lambda a: a.squeeze(), {"dims": []})
    v("dt_squeeze_0d", "dt_squeeze", In(F32, []), lambda a: a.squeeze(), {"dims": []})
    v("dt_squeeze_empty", "dt_squeeze", In(F32, [1, 0, 1]), lambda a: a.squeeze(), {"dims": []})
    v("dt_squeeze_out_of_range", "dt_squeeze", In(F32, [1, 3]), lambda a: a.squeeze(2), {"dims": [2]})
    v("dt_unsqueeze_front", "dt_unsqueeze", In(F32, [3, 2]), lambda a: a.unsqueeze(0), {"dim": 0})
    v("dt_unsqueeze_end", "dt_unsqueeze", In(F32, [3, 2]), lambda a: a.unsqueeze(2), {"dim": 2})
    v("dt_unsqueeze_neg", "dt_unsqueeze", In(F32, [3, 2]), lambda a: a.unsqueeze(-1), {"dim": -1})
    v("dt_unsqueeze_neg_front", "dt_unsqueeze", In(F32, [3, 2]), lambda a: a.unsqueeze(-3), {"dim": -3})
    v("dt_unsqueeze_0d", "dt_unsqueeze", In(F32, []), lambda a: a.unsqueeze(0), {"dim": 0})
    v("dt_unsqueeze_transposed_mid", "dt_unsqueeze", In(F32, [3, 2], views=[["transpose", 0, 1]]), lambda a: a.unsqueeze(1), {"dim": 1})
    v("dt_unsqueeze_out_of_range", "dt_unsqueeze", In(F32, [3, 2]), lambda a: a.unsqueeze(3), {"dim": 3})
    # expand
    v("dt_expand_keep_minus1", "dt_expand", In(F32, [3, 1]), lambda a: a.expand(-1, 4), {"shape": [-1, 4]})
    v("dt_expand_0d", "dt_expand", In(F32, []), lambda a: a.expand(3, 2), {"shape": [3, 2]})
    v("dt_expand_to_empty", "dt_expand", In(F32, [1, 3]), lambda a: a.expand(0, 3), {"shape": [0, 3]})
    v("dt_expand_same", "dt_expand", In(F32, [2, 3]), lambda a: a.expand(2, 3), {"shape": [2, 3]})
    v("dt_expand_of_transposed", "dt_expand", In(F32, [1, 3], views=[["transpose", 0, 1]]), lambda a: a.expand(2, 3, 4), {"shape": [2, 3, 4]})
    v("dt_expand_incompatible", "dt_expand", In(F32, [3, 2]), lambda a: a.expand(3, 4), {"shape": [3, 4]})
    v("dt_expand_fewer_dims", "dt_expand", In(F32, [2, 3]), lambda a: a.expand(3), {"shape": [3]})
    # contiguous
    v("dt_contiguous_transposed", "dt_contiguous", In(F32, [3, 4], views=[["transpose", 0, 1]]), lambda a: a.contiguous(), {})
    v("dt_contiguous_expanded", "dt_contiguous", In("int32", [1, 4], views=[["expand", [3, 4]]]), lambda a: a.contiguous(), {})
    v("dt_contiguous_already", "dt_contiguous", In("float64", [3, 4]), lambda a: a.contiguous(), {})
    v("dt_contiguous_permuted_bf16", "dt_contiguous", In("bfloat16", [2, 3, 4], views=[["permute", [2, 0, 1]]]), lambda a: a.contiguous(), {})


# ----------------------------------------------------------------------------- joining

def gen_join():
    cat = lambda dim: (lambda *ts: torch.cat(list(ts), dim))  # noqa: E731
    stack = lambda dim: (lambda *ts: torch.stack(list(ts), dim))  # noqa: E731
    for dt in ALL:
        case(f"dt_cat_{dt}_dim0", "dt_cat", [In(dt, [2, 3]), In(dt, [1, 3]), In(dt, [3, 3])], cat(0), params={"dim": 0})
        case(f"dt_stack_{dt}_dim0", "dt_stack", [In(dt, [2, 3]), In(dt, [2, 3])], stack(0), params={"dim": 0})
    F32 = "float32"
    case("dt_cat_dim1", "dt_cat", [In(F32, [2, 3]), In(F32, [2, 1])], cat(1), params={"dim": 1})
    case("dt_cat_dim_neg", "dt_cat", [In(F32, [2, 3, 2]), In(F32, [2, 3, 1])], cat(-1), params={"dim": -1})
    case("dt_cat_single", "dt_cat", [In(F32, [2, 3])], cat(0), params={"dim": 0})
    case("dt_cat_noncontig", "dt_cat", [In(F32, [3, 2], views=[["transpose", 0, 1]]), In(F32, [2, 1], views=[["expand", [2, 4]]]), In(F32, [2, 7], views=[["narrow", 1, 3, 2]])], cat(1), params={"dim": 1})
    case("dt_cat_with_empty", "dt_cat", [In(F32, [2, 3]), In(F32, [2, 0]), In(F32, [2, 1])], cat(1), params={"dim": 1})
    case("dt_cat_all_empty", "dt_cat", [In(F32, [0, 3]), In(F32, [0, 3])], cat(0), params={"dim": 0})
    case("dt_cat_promote_int8_uint8", "dt_cat", [In("int8", [2]), In("uint8", [3])], cat(0), params={"dim": 0})
    case("dt_cat_promote_int32_float16", "dt_cat", [In("int32", [2]), In("float16", [3])], cat(0), params={"dim": 0})
    case("dt_cat_promote_bool_int64_float32", "dt_cat", [In("bool", [2]), In("int64", [1]), In("float32", [2])], cat(0), params={"dim": 0})
    case("dt_cat_promote_bf16_f16", "dt_cat", [In("bfloat16", [2]), In("float16", [2])], cat(0), params={"dim": 0})
    case("dt_cat_shape_mismatch", "dt_cat", [In(F32, [2, 3]), In(F32, [2, 4])], cat(0), params={"dim": 0})
    case("dt_cat_ndim_mismatch", "dt_cat", [In(F32, [2, 3]), In(F32, [3])], cat(0), params={"dim": 0})
    case("dt_cat_0d", "dt_cat", [In(F32, []), In(F32, [])], cat(0), params={"dim": 0})
    case("dt_cat_dim_out_of_range", "dt_cat", [In(F32, [2, 3]), In(F32, [2, 3])], cat(2), params={"dim": 2})
    case("dt_stack_dim1", "dt_stack", [In(F32, [2, 3]), In(F32, [2, 3]), In(F32, [2, 3])], stack(1), params={"dim": 1})
    case("dt_stack_dim_last", "dt_stack", [In(F32, [2, 3]), In(F32, [2, 3])], stack(2), params={"dim": 2})
    case("dt_stack_dim_neg", "dt_stack", [In(F32, [2, 3]), In(F32, [2, 3])], stack(-1), params={"dim": -1})
    case("dt_stack_0d", "dt_stack", [In(F32, []), In(F32, []), In(F32, [])], stack(0), params={"dim": 0})
    case("dt_stack_empty", "dt_stack", [In(F32, [0, 2]), In(F32, [0, 2])], stack(1), params={"dim": 1})
    case("dt_stack_noncontig", "dt_stack", [In(F32, [3, 2], views=[["transpose", 0, 1]]), In(F32, [1, 3], views=[["expand", [2, 3]]])], stack(0), params={"dim": 0})
    case("dt_stack_promote_int16_float64", "dt_stack", [In("int16", [3]), In("float64", [3])], stack(0), params={"dim": 0})
    case("dt_stack_shape_mismatch", "dt_stack", [In(F32, [2, 3]), In(F32, [3, 2])], stack(0), params={"dim": 0})
    case("dt_stack_dim_out_of_range", "dt_stack", [In(F32, [2, 3]), In(F32, [2, 3])], stack(3), params={"dim": 3})

    # chunk / split
    def ch(cid, inp, chunks, dim):
        case(cid, "dt_chunk", [inp], lambda a: list(torch.chunk(a, chunks, dim)), params={"chunks": chunks, "dim": dim}, multi=True)

    def sp(cid, inp, size, dim):
        case(cid, "dt_split", [inp], lambda a: list(torch.split(a, size, dim)), params={"split_size": size, "dim": dim}, multi=True)
    ch("dt_chunk_5_by_3", In(F32, [5]), 3, 0)
    ch("dt_chunk_6_by_4", In(F32, [6]), 4, 0)
    ch("dt_chunk_6_by_3", In("int32", [6]), 3, 0)
    ch("dt_chunk_more_than_size", In(F32, [2, 3]), 5, 1)
    ch("dt_chunk_one", In(F32, [2, 3]), 1, 0)
    ch("dt_chunk_2d_dim0", In("float64", [7, 2]), 3, 0)
    ch("dt_chunk_2d_dim_neg", In(F32, [2, 7]), 2, -1)
    ch("dt_chunk_transposed", In(F32, [5, 4], views=[["transpose", 0, 1]]), 2, 1)
    ch("dt_chunk_expanded", In("bool", [1, 4], views=[["expand", [3, 4]]]), 2, 0)
    ch("dt_chunk_empty_other_dim", In(F32, [4, 0]), 2, 0)
    ch("dt_chunk_empty_dim", In(F32, [2, 0]), 3, 1)
    ch("dt_chunk_bad_dim", In(F32, [2, 3]), 2, 2)
    ch("dt_chunk_zero_chunks", In(F32, [2, 3]), 0, 0)
    sp("dt_split_5_by_2", In(F32, [5]), 2, 0)
    sp("dt_split_exact", In("int64", [6]), 3, 0)
    sp("dt_split_larger_than_size", In(F32, [2, 3]), 10, 1)
    sp("dt_split_2d_dim1", In("float16", [2, 7]), 3, 1)
    sp("dt_split_transposed", In(F32, [5, 3], views=[["transpose", 0, 1]]), 2, 1)
    sp("dt_split_narrowed", In(F32, [4, 9], views=[["narrow", 1, 2, 5]]), 2, -1)
    sp("dt_split_empty_dim_zero", In(F32, [2, 0]), 0, 1)
    sp("dt_split_empty_dim", In(F32, [2, 0]), 2, 1)
    sp("dt_split_bad_dim", In(F32, [2, 3]), 1, -3)

    # index_select / gather
    def isel(cid, inp, dim, idx, dtype="int64"):
        case(cid, "dt_index_select", [inp, In(dtype, [len(idx)], data=idx)],
             lambda a, i: torch.index_select(a, dim, i), params={"dim": dim})
    for dt in ALL:
        isel(f"dt_index_select_{dt}_dim0", In(dt, [4, 3]), 0, [3, 0, 0, 2])
    isel("dt_index_select_dim1", In(F32, [2, 5]), 1, [4, 1])
    isel("dt_index_select_dim_neg", In(F32, [2, 3, 4]), -1, [0, 3, 3])
    isel("dt_index_select_int32_index", In(F32, [4, 3]), 0, [1, 3], dtype="int32")
    isel("dt_index_select_transposed", In(F32, [3, 4], views=[["transpose", 0, 1]]), 0, [2, 1])
    isel("dt_index_select_expanded", In("int16", [1, 4], views=[["expand", [3, 4]]]), 1, [3, 0, 1])
    isel("dt_index_select_empty_index", In(F32, [4, 3]), 0, [])
    isel("dt_index_select_empty_other", In(F32, [4, 0]), 0, [1, 2])
    isel("dt_index_select_0d", In(F32, []), 0, [0])
    isel("dt_index_select_out_of_range", In(F32, [4, 3]), 0, [4])
    isel("dt_index_select_negative_index", In(F32, [4, 3]), 0, [-1])
    isel("dt_index_select_bad_dim", In(F32, [4, 3]), 2, [0])
    case("dt_index_select_noncontig_index", "dt_index_select",
         [In(F32, [5, 2]), In("int64", [1], data=[3], views=[["expand", [3]]])],
         lambda a, i: torch.index_select(a, 0, i), params={"dim": 0})
    case("dt_index_select_narrowed_index", "dt_index_select",
         [In(F32, [5, 2]), In("int32", [5], data=[0, 4, 1, 2, 3], views=[["narrow", 0, 1, 3]])],
         lambda a, i: torch.index_select(a, 0, i), params={"dim": 0})
    case("dt_index_select_float_index", "dt_index_select", [In(F32, [4, 3]), In(F32, [1], data=[1.0])],
         lambda a, i: torch.index_select(a, 0, i), params={"dim": 0})

    def gat(cid, inp, dim, ishape, idx, views=()):
        case(cid, "dt_gather", [inp, In("int64", ishape, data=idx, views=views)],
             lambda a, i: torch.gather(a, dim, i), params={"dim": dim})
    for dt in ALL:
        gat(f"dt_gather_{dt}_dim0", In(dt, [3, 2]), 0, [2, 2], [2, 0, 1, 1])
    gat("dt_gather_dim1", In(F32, [2, 4]), 1, [2, 3], [3, 0, 0, 1, 2, 3])
    gat("dt_gather_dim_neg_3d", In(F32, [2, 3, 4]), -1, [2, 3, 1], [0, 1, 2, 3, 0, 1])
    gat("dt_gather_smaller_index", In(F32, [4, 5]), 0, [2, 3], [3, 2, 1, 0, 0, 0])
    gat("dt_gather_transposed_input", In(F32, [4, 3], views=[["transpose", 0, 1]]), 1, [3, 2], [0, 3, 1, 1, 2, 0])
    gat("dt_gather_transposed_index", In(F32, [3, 3]), 0, [3, 3], [0, 1, 2, 2, 1, 0, 1, 1, 1], views=[["transpose", 0, 1]])
    gat("dt_gather_expanded_index", In(F32, [3, 4]), 1, [3, 1], [3, 0, 2], views=[["expand", [3, 4]]])
    gat("dt_gather_empty_index", In(F32, [3, 4]), 1, [3, 0], [])
    gat("dt_gather_0d", In(F32, []), 0, [], [0])
    gat("dt_gather_out_of_range", In(F32, [3, 2]), 0, [1, 2], [3, 0])
    gat("dt_gather_ndim_mismatch", In(F32, [3, 2]), 0, [2], [0, 1])
    gat("dt_gather_bad_dim", In(F32, [3, 2]), 2, [1, 2], [0, 0])

    # index_add / scatter_add (torch.index_add, torch.scatter_add): repeated indices add up
    def iadd(cid, inp, dim, idx, src, dtype="int64"):
        case(cid, "dt_index_add", [inp, In(dtype, [len(idx)], data=idx), src],
             lambda a, i, s: torch.index_add(a, dim, i, s), params={"dim": dim})
    for dt in ALL:
        iadd(f"dt_index_add_{dt}_dim0", In(dt, [4, 3]), 0, [3, 0, 0, 2], In(dt, [4, 3]))
    iadd("dt_index_add_dim1", In(F32, [2, 5]), 1, [4, 1, 4], In(F32, [2, 3]))
    iadd("dt_index_add_dim_neg_3d", In(F32, [2, 3, 4]), -1, [0, 3, 3], In(F32, [2, 3, 3]))
    iadd("dt_index_add_int32_index", In(F32, [4, 3]), 0, [1, 3], In(F32, [2, 3]), dtype="int32")
    iadd("dt_index_add_transposed", In(F32, [3, 4], views=[["transpose", 0, 1]]), 0, [2, 1],
         In(F32, [3, 2], views=[["transpose", 0, 1]]))
    iadd("dt_index_add_expanded_source", In("int16", [3, 4]), 1, [3, 0, 3], In("int16", [3, 1], views=[["expand", [3, 3]]]))
    iadd("dt_index_add_empty_index", In(F32, [4, 3]), 0, [], In(F32, [0, 3]))
    iadd("dt_index_add_0d", In(F32, []), 0, [0], In(F32, []))
    iadd("dt_index_add_out_of_range", In(F32, [4, 3]), 0, [4], In(F32, [1, 3]))
    iadd("dt_index_add_negative_index", In(F32, [4, 3]), 0, [-1], In(F32, [1, 3]))
    iadd("dt_index_add_bad_dim", In(F32, [4, 3]), 2, [0], In(F32, [1, 3]))
    iadd("dt_index_add_source_shape", In(F32, [4, 3]), 0, [0, 1], In(F32, [2, 2]))
    iadd("dt_index_add_source_dtype", In(F32, [4, 3]), 0, [0, 1], In("float64", [2, 3]))

    def sadd(cid, inp, dim, ishape, idx, src, views=()):
        case(cid, "dt_scatter_add", [inp, In("int64", ishape, data=idx, views=views), src],
             lambda a, i, s: torch.scatter_add(a, dim, i, s), params={"dim": dim})
    for dt in ALL:
        sadd(f"dt_scatter_add_{dt}_dim0", In(dt, [3, 2]), 0, [3, 2], [2, 0, 1, 1, 2, 1], In(dt, [3, 2]))
    sadd("dt_scatter_add_dim1", In(F32, [2, 4]), 1, [2, 3], [3, 0, 0, 1, 2, 3], In(F32, [2, 3]))
    sadd("dt_scatter_add_dim_neg_3d", In(F32, [2, 3, 4]), -1, [2, 3, 2], [0, 1, 2, 3, 0, 0, 1, 1, 2, 2, 3, 3],
         In(F32, [2, 3, 2]))
    sadd("dt_scatter_add_smaller_index", In(F32, [4, 5]), 0, [2, 3], [3, 2, 1, 0, 0, 0], In(F32, [3, 4]))
    sadd("dt_scatter_add_transposed_self", In(F32, [4, 3], views=[["transpose", 0, 1]]), 1, [3, 2],
         [0, 3, 1, 1, 2, 0], In(F32, [3, 2]))
    sadd("dt_scatter_add_expanded_index", In(F32, [3, 4]), 1, [3, 1], [3, 0, 2], In(F32, [3, 4]),
         views=[["expand", [3, 4]]])
    sadd("dt_scatter_add_empty_index", In(F32, [3, 4]), 1, [3, 0], [], In(F32, [3, 0]))
    sadd("dt_scatter_add_out_of_range", In(F32, [3, 2]), 0, [1, 2], [3, 0], In(F32, [1, 2]))
    sadd("dt_scatter_add_index_larger_than_src", In(F32, [3, 2]), 0, [2, 2], [0, 1, 0, 1], In(F32, [1, 2]))
    sadd("dt_scatter_add_ndim_mismatch", In(F32, [3, 2]), 0, [2], [0, 1], In(F32, [2]))
    sadd("dt_scatter_add_bad_dim", In(F32, [3, 2]), 2, [1, 2], [0, 0], In(F32, [1, 2]))


# ----------------------------------------------------------------------------- conv2d

# (id, input shape, weight shape, bias, stride, padding, dilation, groups, input views)
CONV2D = [
    ("basic", [2, 3, 7, 6], [4, 3, 3, 3], True, [1, 1], [0, 0], [1, 1], 1, []),
    ("stride_pad", [1, 2, 9, 8], [5, 2, 3, 2], True, [2, 3], [1, 2], [1, 1], 1, []),
    ("dilation", [2, 2, 10, 9], [3, 2, 3, 3], True, [1, 1], [2, 1], [2, 1], 1, []),
    ("groups", [2, 6, 5, 5], [4, 3, 3, 3], True, [1, 1], [0, 0], [1, 1], 2, []),
    ("depthwise_no_bias", [1, 4, 6, 7], [4, 1, 3, 3], False, [1, 1], [1, 1], [1, 1], 4, []),
    ("same_even_kernel", [1, 3, 6, 5], [2, 3, 4, 2], True, [1, 1], "same", [1, 2], 1, []),
    ("unbatched", [3, 5, 5], [2, 3, 3, 3], True, [1, 1], [1, 1], [1, 1], 1, []),
    ("pointwise", [2, 8, 4, 4], [6, 8, 1, 1], True, [1, 1], [0, 0], [1, 1], 1, []),
    ("transposed_input", [2, 3, 7, 6], [2, 3, 2, 3], True, [1, 2], [1, 0], [1, 1], 1, [["transpose", 2, 3]]),
    ("kernel_fills_input", [1, 2, 3, 3], [4, 2, 3, 3], True, [1, 1], [0, 0], [1, 1], 1, []),
    ("odd_strided", [3, 5, 13, 11], [7, 5, 3, 3], True, [2, 2], [1, 1], [1, 1], 1, []),
]


def conv2d_fn(stride, padding, dilation, groups):
    def fn(x, w, b=None):
        return F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    return fn


def gen_conv2d():
    op = "dt_conv2d"
    for name, xs, ws, bias, stride, padding, dilation, groups, views in CONV2D:
        k = ws[1] * ws[2] * ws[3]  # products summed per output
        for dt in ["float32", "float64"]:
            ins = [In(dt, xs, views=views), In(dt, ws)] + ([In(dt, [ws[0]])] if bias else [])
            params = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
            case(f"{op}_{dt}_{name}", op, ins, conv2d_fn(stride, padding, dilation, groups), params=params,
                 atol_from=lambda ts, r, k=k: k)

# (id, input shape, weight shape, bias, stride, padding, dilation, groups)
CONV1D = [
    ("basic", [2, 3, 9], [4, 3, 3], True, 1, 0, 1, 1),
    ("odd_strided_padded", [3, 4, 13], [5, 4, 4], True, 3, 2, 1, 1),
    ("dilated_groups", [2, 6, 11], [4, 3, 3], False, 1, 1, 2, 2),
    ("same", [1, 2, 7], [3, 2, 4], True, 1, "same", 1, 1),
    ("unbatched", [3, 8], [2, 3, 5], True, 2, 1, 1, 1),
    ("kernel_too_large", [1, 2, 3], [2, 2, 5], True, 1, 0, 1, 1),
]


def gen_conv1d():
    op = "dt_conv1d"
    for name, xs, ws, bias, stride, padding, dilation, groups in CONV1D:
        for dt in ["float32", "float64"]:
            ins = [In(dt, xs), In(dt, ws)] + ([In(dt, [ws[0]])] if bias else [])
            case(f"{op}_{dt}_{name}", op, ins,
                 lambda x, w, b=None, s=stride, p=padding, d=dilation, g=groups: F.conv1d(x, w, b, s, p, d, g),
                 params={"stride": stride, "padding": padding, "dilation": dilation, "groups": groups},
                 atol_from=lambda ts, r, k=ws[1] * ws[2]: k)


# (id, input shape, weight shape [C, OC / groups, kH, kW], bias, stride, padding,
# output_padding, dilation, groups, input views)
CONV_TRANSPOSE2D = [
    ("basic", [2, 3, 4, 5], [3, 4, 3, 3], True, [1, 1], [0, 0], [0, 0], [1, 1], 1, []),
    ("stride2_pad1_outpad1", [1, 4, 5, 4], [4, 2, 3, 3], True, [2, 2], [1, 1], [1, 1], [1, 1], 1, []),
    ("odd_strides_pads", [2, 2, 3, 6], [2, 3, 4, 2], False, [3, 2], [2, 0], [2, 1], [1, 1], 1, []),
    ("dilation_outpad_over_padding", [1, 2, 4, 4], [2, 3, 2, 3], True, [1, 2], [0, 1], [1, 1], [2, 2], 1, []),
    ("groups", [2, 6, 3, 4], [6, 2, 3, 3], True, [2, 1], [1, 1], [1, 0], [1, 1], 3, []),
    ("depthwise", [1, 4, 5, 5], [4, 1, 3, 3], False, [2, 2], [1, 1], [0, 0], [1, 1], 4, []),
    ("unbatched", [3, 4, 3], [3, 2, 2, 2], True, [2, 2], [0, 0], [0, 1], [1, 1], 1, []),
    ("transposed_input", [2, 3, 5, 4], [3, 2, 3, 2], True, [1, 2], [1, 0], [0, 1], [1, 1], 1, [["transpose", 2, 3]]),
    ("pointwise", [2, 5, 3, 3], [5, 4, 1, 1], True, [1, 1], [0, 0], [0, 0], [1, 1], 1, []),
    ("output_too_small", [1, 2, 1, 1], [2, 2, 2, 2], True, [1, 1], [2, 2], [0, 0], [1, 1], 1, []),
]


def gen_conv_transpose2d():
    op = "dt_conv_transpose2d"
    for name, xs, ws, bias, stride, padding, outpad, dilation, groups, views in CONV_TRANSPOSE2D:
        k = ws[0] * ws[2] * ws[3]  # at most in_channels x kernel products summed per output
        for dt in ["float32", "float64"]:
            ins = [In(dt, xs, views=views), In(dt, ws)] + ([In(dt, [ws[1] * groups])] if bias else [])
            case(f"{op}_{dt}_{name}", op, ins,
                 lambda x, w, b=None, s=stride, p=padding, o=outpad, g=groups, d=dilation:
                     F.conv_transpose2d(x, w, b, s, p, o, g, d),
                 params={"stride": stride, "padding": padding, "output_padding": outpad, "dilation": dilation,
                         "groups": groups},
                 atol_from=lambda ts, r, k=k: k)


# (id, input shape, kernel, stride, padding, dilation / count_include_pad)
MAX_POOL2D = [
    ("2x2", [2, 3, 6, 7], [2, 2], [2, 2], [0, 0], [1, 1]),
    ("3x3_s2_p1", [1, 2, 9, 8], [3, 3], [2, 2], [1, 1], [1, 1]),
    ("overlap_dilated", [2, 2, 9, 10], [3, 2], [1, 2], [1, 1], [2, 1]),
    ("unbatched", [3, 5, 5], [2, 3], [1, 1], [0, 1], [1, 1]),
    # padding over kernel_size / 2 is refused even where the dilated window would cover it
    ("dilated_pad_over_half", [1, 1, 8, 8], [2, 2], [1, 1], [2, 2], [3, 3]),
]
# ceil_mode=True: (id, input shape, kernel, stride, padding, dilation)
MAX_POOL2D_CEIL = [
    ("ceil_3x3_s2", [1, 2, 6, 7], [3, 3], [2, 2], [0, 0], [1, 1]),
    ("ceil_3x3_s2_p1", [2, 1, 8, 5], [3, 3], [2, 2], [1, 1], [1, 1]),
    ("ceil_2x2_s2_odd", [1, 3, 5, 7], [2, 2], [2, 2], [0, 0], [1, 1]),
    ("ceil_dilated", [1, 1, 9, 8], [2, 3], [3, 2], [1, 1], [2, 1]),
    ("ceil_last_window_dropped", [1, 1, 5, 5], [2, 2], [3, 3], [1, 1], [1, 1]),
]
# ceil_mode=True: (id, input shape, kernel, stride, padding, count_include_pad)
AVG_POOL2D_CEIL = [
    ("ceil_3x3_s2_incl", [1, 2, 6, 7], [3, 3], [2, 2], [0, 0], 1),
    ("ceil_3x3_s2_p1_incl", [2, 1, 8, 5], [3, 3], [2, 2], [1, 1], 1),
    ("ceil_3x3_s2_p1_excl", [2, 1, 8, 5], [3, 3], [2, 2], [1, 1], 0),
    ("ceil_2x3_odd_incl", [1, 2, 5, 7], [2, 3], [2, 2], [1, 1], 1),
    ("ceil_last_window_dropped", [1, 1, 5, 5], [2, 2], [3, 3], [1, 1], 1),
]
AVG_POOL2D = [
    ("2x2", [2, 3, 6, 7], [2, 2], [2, 2], [0, 0], 1),
    ("3x3_s2_p1_incl", [1, 2, 9, 8], [3, 3], [2, 2], [1, 1], 1),
    ("3x3_s2_p1_excl", [1, 2, 9, 8], [3, 3], [2, 2], [1, 1], 0),
    ("unbatched", [3, 5, 5], [2, 3], [1, 2], [1, 1], 0),
]
ADAPTIVE = [("to_1x1", [2, 3, 7, 5], [1, 1]), ("uneven", [1, 2, 7, 9], [3, 4]), ("upsample", [1, 2, 3, 2], [5, 3]),
            ("unbatched", [2, 6, 6], [2, 3])]


def gen_pool2d():
    for dt in ["float32", "float64"]:
        for name, xs, k, st, p, d in MAX_POOL2D:
            case(f"dt_max_pool2d_{dt}_{name}", "dt_max_pool2d", [In(dt, xs)],
                 lambda x, k=k, st=st, p=p, d=d: F.max_pool2d(x, k, st, p, d),
                 params={"kernel_size": k, "stride": st, "padding": p, "dilation": d})
        for name, xs, k, st, p, incl in AVG_POOL2D:
            case(f"dt_avg_pool2d_{dt}_{name}", "dt_avg_pool2d", [In(dt, xs)],
                 lambda x, k=k, st=st, p=p, incl=incl: F.avg_pool2d(x, k, st, p, count_include_pad=bool(incl)),
                 params={"kernel_size": k, "stride": st, "padding": p, "count_include_pad": incl},
                 atol_from=lambda ts, r, k=k: k[0] * k[1])
        for name, xs, k, st, p, d in MAX_POOL2D_CEIL:
            case(f"dt_max_pool2d_{dt}_{name}", "dt_max_pool2d", [In(dt, xs)],
                 lambda x, k=k, st=st, p=p, d=d: F.max_pool2d(x, k, st, p, d, ceil_mode=True),
                 params={"kernel_size": k, "stride": st, "padding": p, "dilation": d, "ceil_mode": 1})
        for name, xs, k, st, p, incl in AVG_POOL2D_CEIL:
            case(f"dt_avg_pool2d_{dt}_{name}", "dt_avg_pool2d", [In(dt, xs)],
                 lambda x, k=k, st=st, p=p, incl=incl: F.avg_pool2d(x, k, st, p, ceil_mode=True,
                                                                    count_include_pad=bool(incl)),
                 params={"kernel_size": k, "stride": st, "padding": p, "count_include_pad": incl, "ceil_mode": 1},
                 atol_from=lambda ts, r, k=k: k[0] * k[1])
        for name, xs, size in ADAPTIVE:
            case(f"dt_adaptive_avg_pool2d_{dt}_{name}", "dt_adaptive_avg_pool2d", [In(dt, xs)],
                 lambda x, size=size: F.adaptive_avg_pool2d(x, size), params={"output_size": size},
                 atol_from=lambda ts, r: 9)


# ----------------------------------------------------------------------------- normalisation
# (id, input shape, training, has (the optional tensors given), momentum, views)
BATCH_NORM = [
    ("train_2d_affine", [4, 3, 5, 6], 1, ["running_mean", "running_var", "weight", "bias"], 0.1, []),
    ("train_no_running", [5, 4], 1, ["weight", "bias"], 0.1, []),
    ("train_3d_plain", [3, 2, 7], 1, [], 0.1, []),
    ("eval_2d", [2, 3, 4, 5], 0, ["running_mean", "running_var", "weight", "bias"], 0.1, []),
    ("eval_no_affine", [6, 5], 0, ["running_mean", "running_var"], 0.1, []),
    ("train_transposed", [3, 4, 5, 2], 1, ["weight", "bias"], 0.1, [["transpose", 2, 3]]),
]
LAYER_NORM = [
    ("last_dim", [4, 7], [7], ["weight", "bias"]),
    ("last_two", [2, 3, 4, 5], [4, 5], ["weight", "bias"]),
    ("no_affine", [3, 6], [6], []),
    ("weight_only", [2, 5, 3], [3], ["weight"]),
    ("wrong_shape", [2, 5, 3], [5], ["weight", "bias"]),
]
GROUP_NORM = [
    ("4d", [2, 6, 3, 4], 3, ["weight", "bias"]),
    ("one_group", [3, 4, 5], 1, ["weight", "bias"]),
    ("per_channel", [2, 4, 3, 3], 4, []),
    ("2d_input", [5, 6], 2, ["weight", "bias"]),
    ("not_divisible", [2, 6, 3], 4, []),
]


def norm_inputs(dt, xs, has, channels_shape, views=()):
    ins = [In(dt, xs, views=views)]
    for name in ["running_mean", "running_var", "weight", "bias"]:
        if name in has:
            ins.append(In(dt, channels_shape, domain="positive" if name in ("running_var", "weight") else "normal"))
    return ins


def norm_args(ts, has):
    d = dict(zip([n for n in ["running_mean", "running_var", "weight", "bias"] if n in has], ts[1:]))
    return d


def gen_norm():
    for dt in ["float32", "float64"]:
        for name, xs, training, has, momentum, views in BATCH_NORM:
            def fn(*ts, has=has, training=training, momentum=momentum):
                a = norm_args(ts, has)
                return F.batch_norm(ts[0], a.get("running_mean"), a.get("running_var"), a.get("weight"), a.get("bias"),
                                    bool(training), momentum, 1e-5)
            case(f"dt_batch_norm_{dt}_{name}", "dt_batch_norm", norm_inputs(dt, xs, has, [xs[1]], views), fn,
                 params={"has": has, "training": training, "momentum": momentum, "eps": 1e-5},
                 atol_from=lambda ts, r: 16)
        for name, xs, shape, has in LAYER_NORM:
            def fn(*ts, has=has, shape=shape):
                a = norm_args(ts, has)
                return F.layer_norm(ts[0], shape, a.get("weight"), a.get("bias"), 1e-5)
            case(f"dt_layer_norm_{dt}_{name}", "dt_layer_norm", norm_inputs(dt, xs, has, shape), fn,
                 params={"has": has, "normalized_shape": shape, "eps": 1e-5}, atol_from=lambda ts, r: 16)
        for name, xs, groups, has in GROUP_NORM:
            def fn(*ts, has=has, groups=groups):
                a = norm_args(ts, has)
                return F.group_norm(ts[0], groups, a.get("weight"), a.get("bias"), 1e-5)
            case(f"dt_group_norm_{dt}_{name}", "dt_group_norm", norm_inputs(dt, xs, has, [xs[1]]), fn,
                 params={"has": has, "num_groups": groups, "eps": 1e-5}, atol_from=lambda ts, r: 16)
        # embedding: inputs weight, indices (F.embedding takes indices first)
        for name, ws, idx_shape, idx, pad in [("rows", [5, 3], [4], [0, 3, 3, 4], None),
                                              ("2d_indices_pad", [6, 4], [2, 3], [1, 0, 5, 2, 2, 0], 0),
                                              ("int32", [4, 2], [3], [3, 1, 2], None),
                                              ("out_of_range", [4, 2], [2], [1, 4], None)]:
            it = "int32" if name == "int32" else "int64"
            case(f"dt_embedding_{dt}_{name}", "dt_embedding", [In(dt, ws), In(it, idx_shape, data=idx)],
                 lambda w, i, pad=pad: F.embedding(i, w, padding_idx=pad), params={"padding_idx": pad})


def sdpa(q, k, v, mask=None, causal=False):
    """The math of torch.nn.functional.scaled_dot_product_attention (torch 2.x; 1.13 has
    no public one): softmax(q k^T / sqrt(E) + mask) v, a bool mask True where allowed."""
    s = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return torch.softmax(s, -1) @ v


def gen_attention():
    op = "dt_scaled_dot_product_attention"
    for dt in ["float32", "float64"]:
        qs, ks, vs = [2, 3, 4, 5], [2, 3, 6, 5], [2, 3, 6, 7]
        case(f"{op}_{dt}_plain", op, [In(dt, qs), In(dt, ks), In(dt, vs)], lambda q, k, v: sdpa(q, k, v),
             params={"is_causal": 0}, atol_from=lambda ts, r: 16)
        case(f"{op}_{dt}_causal", op, [In(dt, [3, 5, 4]), In(dt, [3, 5, 4]), In(dt, [3, 5, 2])],
             lambda q, k, v: sdpa(q, k, v, causal=True), params={"is_causal": 1}, atol_from=lambda ts, r: 16)
        allowed = [1, 0, 1, 1, 0, 1] * 4
        case(f"{op}_{dt}_bool_mask_broadcast", op,
             [In(dt, qs), In(dt, ks), In(dt, vs), In("bool", [4, 6], data=allowed)],
             lambda q, k, v, m: sdpa(q, k, v, m), params={"is_causal": 0}, atol_from=lambda ts, r: 16)
        case(f"{op}_{dt}_float_mask", op, [In(dt, [4, 3]), In(dt, [5, 3]), In(dt, [5, 3]), In(dt, [4, 5])],
             lambda q, k, v, m: sdpa(q, k, v, m), params={"is_causal": 0}, atol_from=lambda ts, r: 16)
        case(f"{op}_{dt}_key_width_differs", op, [In(dt, [2, 4, 5]), In(dt, [2, 6, 4]), In(dt, [2, 6, 3])],
             lambda q, k, v: sdpa(q, k, v), params={"is_causal": 0})


# ----------------------------------------------------------------------------- select

def refuse(message):
    """A case that must fail in devtensor where PyTorch 1.13 is lenient (torch 2.x refuses)."""
    def f(*_):
        raise RuntimeError(message)
    return f


def gen_clamp():
    op = "dt_clamp"

    def cl(lo, hi):
        return lambda a: torch.clamp(a, min=lo, max=hi)

    def cc(cid, inp, lo, hi, **kw):
        return case(cid, op, [inp], cl(lo, hi), params={"min": enc(lo, torch.float64) if lo is not None else None,
                                                      "max": enc(hi, torch.float64) if hi is not None else None}, **kw)
    for dt in FLOATS:
        cc(f"{op}_{dt}_both", In(dt, [3, 4]), -0.5, 0.7)
    for dt in INTS:
        cc(f"{op}_{dt}_both_integral", In(dt, [3, 4]), 1, 3)
    cc(f"{op}_int32_float_bound_promotes", In("int32", [5]), 1.5, None)
    cc(f"{op}_bool", In("bool", [4]), 0, None)
    cc(f"{op}_float32_min_only", In("float32", [2, 5]), 0.1, None)
    cc(f"{op}_float32_max_only", In("float32", [2, 5]), None, -0.2)
    cc(f"{op}_float32_min_above_max", In("float32", [6]), 1.0, -1.0)
    cc(f"{op}_float32_special", In("float32", [2, 5], domain="special"), -1.0, 1.0)
    cc(f"{op}_float32_transposed", In("float32", [3, 4], views=[["transpose", 0, 1]]), -0.3, 0.3)
    cc(f"{op}_float32_expanded", In("float32", [3, 1], views=[["expand", [3, 4]]]), -0.3, 0.3)
    cc(f"{op}_float32_0d", In("float32", []), 0.0, 0.5)
    cc(f"{op}_float32_empty", In("float32", [0, 3]), 0.0, 1.0)
    case(f"{op}_no_bound", op, [In("float32", [3])], lambda a: torch.clamp(a), params={"min": None, "max": None})


def gen_masked_fill():
    op = "dt_masked_fill"

    def mf(v):
        return lambda a, m: a.masked_fill(m, v)
    for dt in ALL:
        case(f"{op}_{dt}", op, [In(dt, [3, 4]), In("bool", [3, 4])], mf(1.0), params={"value": 1.0})
    case(f"{op}_float32_mask_row_bcast", op, [In("float32", [3, 4]), In("bool", [3, 1])], mf(-7.5), params={"value": -7.5})
    case(f"{op}_float32_mask_widens", op, [In("float32", [4]), In("bool", [2, 4])], mf(2.0), params={"value": 2.0})
    case(f"{op}_float32_ninf", op, [In("float32", [2, 3]), In("bool", [2, 3])], mf(float("-inf")),
         params={"value": "-inf"})
    case(f"{op}_float64_nan", op, [In("float64", [5]), In("bool", [5])], mf(float("nan")), params={"value": "nan"})
    case(f"{op}_int64_fraction_truncates", op, [In("int64", [5]), In("bool", [5])], mf(2.5), params={"value": 2.5})
    case(f"{op}_float32_transposed", op, [In("float32", [4, 3], views=[["transpose", 0, 1]]), In("bool", [3, 4])],
         mf(0.0), params={"value": 0.0})
    case(f"{op}_float32_0d", op, [In("float32", []), In("bool", [], data=[1])], mf(3.0), params={"value": 3.0})
    case(f"{op}_float32_empty", op, [In("float32", [0, 2]), In("bool", [2])], mf(3.0), params={"value": 3.0})
    case(f"{op}_shape_mismatch", op, [In("float32", [3, 4]), In("bool", [3])], mf(1.0), params={"value": 1.0})
    c = case(f"{op}_float_mask", op, [In("float32", [3]), In("float32", [3])],
             refuse("masked_fill: expected a bool mask (torch 2.x refuses the rest; 1.13 misreads a float mask)"),
             params={"value": 1.0})
    c["expect_status"] = "DT_ERR_DTYPE_MISMATCH"


def gen_triangle():
    for op, fn in [("dt_triu", torch.triu), ("dt_tril", torch.tril)]:
        def tc(cid, inp, diagonal):
            return case(cid, op, [inp], lambda a, d=diagonal: fn(a, d), params={"diagonal": diagonal})
        for d in [0, 1, -1, 2, -2, 10, -10]:
            tc(f"{op}_float32_4x5_d{d}".replace("-", "m"), In("float32", [4, 5]), d)
        for dt in ALL:
            tc(f"{op}_{dt}_batched", In(dt, [2, 3, 4]), 0)
        tc(f"{op}_float32_5x3_d1", In("float32", [5, 3]), 1)
        tc(f"{op}_float32_transposed", In("float32", [4, 3], views=[["transpose", 0, 1]]), 0)
        tc(f"{op}_float64_expanded_batch", In("float64", [1, 3, 3], views=[["expand", [2, 3, 3]]]), -1)
        tc(f"{op}_float32_empty_rows", In("float32", [0, 3]), 0)
        tc(f"{op}_float32_empty_cols", In("float32", [2, 3, 0]), 1)
        tc(f"{op}_float32_1d", In("float32", [4]), 0)
        tc(f"{op}_float32_0d", In("float32", []), 0)


def gen_pad():
    op = "dt_pad"

    def pc(cid, inp, pad, mode="constant", value=0.0, status=None):
        # PyTorch 1.13 has no integer reflection or replication: their values through float64
        fn = (lambda a: F.pad(a, pad, mode=mode, value=value)) if mode == "constant" else \
             (lambda a: F.pad(a.double(), pad, mode=mode).to(a.dtype))
        jvalue = value if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
        c = case(cid, op, [inp], fn, params={"pad": pad, "mode": mode, "value": jvalue})
        if status:
            c["expect_status"] = status
        return c
    for dt in ALL:
        pc(f"{op}_{dt}_constant", In(dt, [2, 3]), [1, 2], value=1.0)
    pc(f"{op}_float32_constant_two_dims", In("float32", [2, 3, 4]), [1, 1, 2, 0], value=-1.5)
    pc(f"{op}_float32_constant_three_dims", In("float32", [2, 3, 2]), [0, 1, 1, 0, 2, 1])
    pc(f"{op}_float32_constant_crop", In("float32", [3, 5]), [-1, 2, 1, -2])
    pc(f"{op}_float32_constant_crop_past_the_dim", In("float32", [2, 2]), [3, -5], status="DT_ERR_INVALID_ARGUMENT")
    pc(f"{op}_float32_constant_nan", In("float32", [4]), [1, 1], value=float("nan"))
    pc(f"{op}_float32_constant_transposed", In("float32", [3, 4], views=[["transpose", 0, 1]]), [2, 1, 0, 3])
    pc(f"{op}_float32_constant_expanded", In("float32", [3, 1], views=[["expand", [3, 4]]]), [1, 0])
    pc(f"{op}_float32_constant_empty", In("float32", [0, 3]), [1, 1, 2, 0])
    pc(f"{op}_float32_no_padding", In("float32", [2, 3]), [])
    pc(f"{op}_float32_0d_no_padding", In("float32", []), [])
    pc(f"{op}_int64_constant_big", In("int64", [3]), [2, 1], value=-9007199254740992.0)
    for dt in ["float32", "float64", "int32"]:
        pc(f"{op}_{dt}_reflect_1d", In(dt, [1, 2, 5]), [2, 1], "reflect")
        pc(f"{op}_{dt}_replicate_1d", In(dt, [1, 2, 4]), [3, 1], "replicate")
        pc(f"{op}_{dt}_circular_1d", In(dt, [1, 2, 4]), [2, 3], "circular")
    pc(f"{op}_float32_reflect_2d", In("float32", [2, 3, 4, 5]), [1, 2, 3, 1], "reflect")
    pc(f"{op}_float32_replicate_2d", In("float32", [1, 1, 3, 3]), [1, 1, 2, 2], "replicate")
    pc(f"{op}_float32_circular_2d", In("float32", [1, 2, 3, 4]), [1, 2, 3, 0], "circular")
    pc(f"{op}_float32_reflect_3d_transposed", In("float32", [1, 4, 3, 3], views=[["transpose", 2, 3]]),
       [1, 1, 2, 1, 0, 2], "reflect")
    pc(f"{op}_float32_reflect_crop", In("float32", [1, 1, 6]), [-2, 3], "reflect")
    pc(f"{op}_float32_replicate_unbatched", In("float32", [2, 4]), [2, 2], "replicate")
    # errors
    pc(f"{op}_float32_odd_length", In("float32", [2, 3]), [1, 2, 3], status="DT_ERR_INVALID_ARGUMENT")
    pc(f"{op}_float32_too_many_dims", In("float32", [3]), [1, 1, 1, 1], status="DT_ERR_INVALID_ARGUMENT")
    pc(f"{op}_float32_negative_size", In("float32", [3]), [-3, -1], status="DT_ERR_INVALID_ARGUMENT")
    pc(f"{op}_float32_reflect_too_wide", In("float32", [1, 2, 3]), [3, 0], "reflect", status="DT_ERR_INVALID_ARGUMENT")
    pc(f"{op}_float32_circular_too_wide", In("float32", [1, 2, 3]), [0, 4], "circular",
       status="DT_ERR_INVALID_ARGUMENT")


def gen_interpolate():
    op = "dt_interpolate"

    def ic(cid, inp, size=None, scale=None, mode="nearest", align=None, status=None):
        kw = {"mode": mode}
        if align is not None:
            kw["align_corners"] = bool(align)
        if size is not None:
            kw["size"] = size
        if scale is not None:
            kw["scale_factor"] = scale
        values = size if size is not None else scale
        # half and bfloat16: PyTorch's float32 result rounded once (1.13's own bfloat16
        # kernel computes its weights and sums in bfloat16, 3% off; devtensor mixes in float)
        def fn(a):
            if a.dtype in (torch.float16, torch.bfloat16) and mode != "nearest":
                return F.interpolate(a.float(), **kw).to(a.dtype)
            return F.interpolate(a, **kw)
        c = case(cid, op, [inp], fn,
                 params={"size": None if size is None else (values if isinstance(values, list) else [values]),
                         "scale_factor": None if scale is None else (values if isinstance(values, list) else [values]),
                         "mode": mode, "align_corners": int(bool(align))})
        if status:
            c["expect_status"] = status
    for dt in FLOATS:
        ic(f"{op}_{dt}_nearest_2d", In(dt, [1, 2, 3, 4]), size=[5, 7])
        ic(f"{op}_{dt}_bilinear", In(dt, [2, 1, 3, 4]), size=[5, 7], mode="bilinear")
    ic(f"{op}_float32_nearest_1d_scale", In("float32", [1, 2, 5]), scale=1.5)
    ic(f"{op}_float32_nearest_1d_size", In("float32", [1, 2, 5]), size=7)
    ic(f"{op}_float32_nearest_1d_double", In("float32", [1, 1, 4]), scale=2.0)
    ic(f"{op}_float32_nearest_2d_down", In("float32", [1, 2, 7, 9]), size=[3, 4])
    ic(f"{op}_float32_nearest_2d_scales", In("float32", [2, 1, 3, 5]), scale=[2.0, 0.6])
    ic(f"{op}_float32_nearest_3d", In("float32", [1, 1, 2, 3, 4]), scale=2.0)
    for align in [0, 1]:
        ic(f"{op}_float32_linear_align{align}", In("float32", [2, 3, 5]), size=8, mode="linear", align=align)
        ic(f"{op}_float64_bilinear_align{align}", In("float64", [1, 2, 4, 3]), size=[7, 5], mode="bilinear", align=align)
        ic(f"{op}_float64_bilinear_down_align{align}", In("float64", [1, 1, 9, 7]), size=[4, 3], mode="bilinear",
           align=align)
        ic(f"{op}_float64_trilinear_align{align}", In("float64", [1, 1, 2, 3, 4]), scale=[1.5, 2.0, 0.75],
           mode="trilinear", align=align)
    ic(f"{op}_float32_bilinear_scale_frac", In("float32", [1, 1, 5, 5]), scale=1.7, mode="bilinear")
    ic(f"{op}_float32_bilinear_to_one", In("float32", [1, 1, 4, 4]), size=[1, 1], mode="bilinear", align=1)
    ic(f"{op}_float32_bilinear_transposed", In("float32", [1, 2, 5, 4], views=[["transpose", 2, 3]]), size=[6, 8],
       mode="bilinear")
    ic(f"{op}_float32_nearest_same_size", In("float32", [1, 1, 3, 3]), size=[3, 3])
    # errors
    ic(f"{op}_float32_bilinear_on_3d", In("float32", [1, 2, 5]), size=7, mode="bilinear",
       status="DT_ERR_SHAPE_MISMATCH")
    ic(f"{op}_float32_empty_output", In("float32", [1, 2, 5]), scale=0.1, status="DT_ERR_INVALID_ARGUMENT")
    ic(f"{op}_float32_nearest_align", In("float32", [1, 2, 5]), size=3, align=1, status="DT_ERR_INVALID_ARGUMENT")
    ic(f"{op}_float32_2d_input", In("float32", [2, 5]), size=3, status="DT_ERR_SHAPE_MISMATCH")
    ic(f"{op}_float32_two_sizes_for_1d", In("float32", [1, 2, 5]), size=[3, 4], status="DT_ERR_INVALID_ARGUMENT")
    case(f"{op}_int64", op, [In("int64", [1, 1, 4])], refuse("interpolate: integer input (torch 1.13 refuses it too)"),
         params={"size": [6], "scale_factor": None, "mode": "nearest", "align_corners": 0})["expect_status"] = \
        "DT_ERR_DTYPE_MISMATCH"


def gen_leaky_relu():
    op = "dt_leaky_relu"

    def lr(cid, inp, slope, status=None):
        c = case(cid, op, [inp], lambda a: F.leaky_relu(a, slope), params={"negative_slope": slope})
        if status:
            c["expect_status"] = status
    for dt in FLOATS:
        lr(f"{op}_{dt}", In(dt, [3, 4]), 0.01)
        lr(f"{op}_{dt}_special", In(dt, [10], domain="special"), 0.2)
    lr(f"{op}_float32_negative_slope", In("float32", [2, 5]), -0.5)
    lr(f"{op}_float32_slope_above_one", In("float32", [2, 5]), 3.0)
    lr(f"{op}_float32_transposed", In("float32", [3, 4], views=[["transpose", 0, 1]]), 0.1)
    lr(f"{op}_float32_0d", In("float32", []), 0.1)
    lr(f"{op}_float32_empty", In("float32", [0, 3]), 0.1)
    lr(f"{op}_int32", In("int32", [4]), 0.1, status="DT_ERR_DTYPE_MISMATCH")


def gen_var_std():
    for op, fn in [("dt_var", torch.var), ("dt_std", torch.std)]:
        def vc(cid, inp, dims, correction, keepdim):
            f = lambda a: fn(a, dim=dims if dims else None, correction=correction, keepdim=bool(keepdim))
            return case(cid, op, [inp], f, params={"dims": dims, "correction": correction, "keepdim": keepdim},
                        atol_from=red_n)
        for dt in FLOATS:
            vc(f"{op}_{dt}_all", In(dt, [3, 4]), [], 1, 0)
            vc(f"{op}_{dt}_dim1", In(dt, [3, 4]), [1], 1, 0)
        vc(f"{op}_float32_dims0_2_keep", In("float32", [2, 3, 4]), [0, 2], 1, 1)
        vc(f"{op}_float64_dimm1_population", In("float64", [2, 3, 4]), [-1], 0, 0)
        vc(f"{op}_float64_correction2", In("float64", [3, 5]), [0], 2, 1)
        vc(f"{op}_float32_single_element_nan", In("float32", [4, 1]), [1], 1, 0)
        vc(f"{op}_float32_correction_exceeds_n", In("float32", [2, 2]), [1], 3, 0)
        vc(f"{op}_float32_transposed", In("float32", [4, 3], views=[["transpose", 0, 1]]), [1], 1, 0)
        vc(f"{op}_float32_expanded", In("float32", [3, 1], views=[["expand", [3, 4]]]), [1], 1, 0)
        vc(f"{op}_float32_0d", In("float32", []), [], 0, 0)
        vc(f"{op}_float32_empty", In("float32", [0]), [], 1, 0)
        vc(f"{op}_float32_large", In("float32", [257, 3]), [0], 1, 0)
        vc(f"{op}_float32_offset_mean", In("float32", [64], data=[1000.0 + 0.125 * i for i in range(64)]), [], 1, 0)
        vc(f"{op}_float32_dim_out_of_range", In("float32", [2, 3]), [2], 1, 0)
        c = vc(f"{op}_int64", In("int64", [5]), [], 1, 0)
        c["expect_status"] = "DT_ERR_DTYPE_MISMATCH"


def gen_logsumexp_norm():
    op = "dt_logsumexp"

    def lse(dims, keepdim):
        def f(a):
            # torch.logsumexp needs dims: "all" is every dim (dim 0 of a 0-d tensor)
            d = dims if dims else (list(range(a.dim())) if a.dim() else 0)
            return torch.logsumexp(a, dim=d, keepdim=bool(keepdim))
        return f

    def lc(cid, inp, dims, keepdim):
        return case(cid, op, [inp], lse(dims, keepdim), params={"dims": dims, "keepdim": keepdim}, atol_from=red_n)
    for dt in FLOATS:
        lc(f"{op}_{dt}_all", In(dt, [3, 4]), [], 0)
        lc(f"{op}_{dt}_dim1", In(dt, [3, 4]), [1], 0)
    lc(f"{op}_float32_dims0_2_keep", In("float32", [2, 3, 4]), [0, 2], 1)
    lc(f"{op}_float64_dimm1", In("float64", [2, 3, 4]), [-1], 0)
    lc(f"{op}_float32_transposed", In("float32", [4, 3], views=[["transpose", 0, 1]]), [1], 0)
    lc(f"{op}_float32_expanded", In("float32", [3, 1], views=[["expand", [3, 4]]]), [1], 1)
    lc(f"{op}_float32_large_values", In("float32", [2, 3], data=[1000.0, 1001.0, 999.0, -1000.0, -1001.0, -999.0]),
       [1], 0)
    lc(f"{op}_float32_infinities", In("float32", [4, 2], data=["-inf", "-inf", "inf", 1.0, "-inf", 2.0, "inf", "inf"]),
       [1], 0)
    lc(f"{op}_float32_nan", In("float32", [2, 2], data=["nan", 1.0, 2.0, 3.0]), [1], 0)
    lc(f"{op}_float32_empty_dim1", In("float32", [2, 0]), [1], 0)
    lc(f"{op}_float32_empty_rows", In("float32", [0, 3]), [1], 0)
    lc(f"{op}_float32_0d", In("float32", []), [], 0)
    lc(f"{op}_float32_large", In("float32", [257, 3]), [0], 0)
    lc(f"{op}_int64_to_float", In("int64", [2, 3], data=[1, 2, 3, 40, 50, 60]), [1], 0)
    lc(f"{op}_bool_to_float", In("bool", [5]), [], 0)
    lc(f"{op}_float32_dim_out_of_range", In("float32", [2, 3]), [2], 0)
    lc(f"{op}_float32_dim_repeated", In("float32", [2, 3]), [1, -1], 0)

    op = "dt_vector_norm"

    def nc(cid, inp, ord_, dims, keepdim):
        f = lambda a: torch.linalg.vector_norm(a, ord=ord_, dim=dims if dims else None, keepdim=bool(keepdim))
        o = ord_ if math.isfinite(ord_) else ("inf" if ord_ > 0 else "-inf")
        return case(cid, op, [inp], f, params={"ord": o, "dims": dims, "keepdim": keepdim}, atol_from=red_n)
    zeros_in = [0.5, 0.0, -2.0, 1.5, 0.0, 0.0, 0.0, 0.0, 3.0, -4.0, 0.25, 1.0]
    for name, o in [("2", 2.0), ("1", 1.0), ("inf", math.inf), ("minf", -math.inf), ("0", 0.0), ("3", 3.0),
                    ("0_5", 0.5), ("m1", -1.0), ("1_5", 1.5)]:
        nc(f"{op}_ord{name}_float64_dim1", In("float64", [3, 4], data=zeros_in), o, [1], 0)
        nc(f"{op}_ord{name}_float32_all", In("float32", [3, 4]), o, [], 0)
    for dt in FLOATS:
        nc(f"{op}_{dt}_dim0_keep", In(dt, [3, 4]), 2.0, [0], 1)
    nc(f"{op}_float32_dims0_2", In("float32", [2, 3, 4]), 2.0, [0, 2], 0)
    nc(f"{op}_float32_transposed", In("float32", [4, 3], views=[["transpose", 0, 1]]), 2.0, [1], 0)
    nc(f"{op}_float32_huge_values", In("float32", [3], data=[3e20, -4e20, 1e19]), 2.0, [], 0)
    nc(f"{op}_float32_empty_ord2", In("float32", [2, 0]), 2.0, [1], 0)
    nc(f"{op}_float32_empty_ordinf", In("float32", [2, 0]), math.inf, [1], 0)["expect_status"] = "DT_ERR_INVALID_ARGUMENT"
    nc(f"{op}_float32_0d", In("float32", [], data=[-3.0]), 2.0, [], 0)
    nc(f"{op}_float32_nan", In("float32", [2, 2], data=["nan", 1.0, 2.0, 3.0]), 2.0, [1], 0)
    nc(f"{op}_int64", In("int64", [3]), 2.0, [], 0)["expect_status"] = "DT_ERR_DTYPE_MISMATCH"
    nc(f"{op}_float32_dim_out_of_range", In("float32", [2, 3]), 2.0, [-3], 0)


def gen_logical():
    special = ["nan", "inf", "-inf", 0.0, -0.0, 1.5, -2.0, 3.0e38]
    for op, fn in [("dt_isnan", torch.isnan), ("dt_isinf", torch.isinf), ("dt_isfinite", torch.isfinite)]:
        for dt in ALL:
            case(f"{op}_{dt}", op, [In(dt, [3, 4])], fn)
        case(f"{op}_float32_special", op, [In("float32", [8], data=special)], fn)
        case(f"{op}_float64_special", op, [In("float64", [2, 4], data=special)], fn)
        case(f"{op}_float16_special", op, [In("float16", [4], data=["nan", "inf", 1.0, 65504.0])], fn)
        case(f"{op}_float32_transposed", op, [In("float32", [3, 4], views=[["transpose", 0, 1]])], fn)
        case(f"{op}_float32_empty", op, [In("float32", [0, 3])], fn)
        case(f"{op}_float32_0d", op, [In("float32", [], data=["nan"])], fn)
    for dt in ALL:
        case(f"dt_logical_not_{dt}", "dt_logical_not", [In(dt, [3, 4])], torch.logical_not)
    case("dt_logical_not_float32_special", "dt_logical_not", [In("float32", [8], data=special)], torch.logical_not)
    for op, fn in [("dt_logical_and", torch.logical_and), ("dt_logical_or", torch.logical_or),
                   ("dt_logical_xor", torch.logical_xor)]:
        for dt in ALL:
            case(f"{op}_{dt}", op, [In(dt, [3, 4]), In(dt, [3, 4])], fn)
        case(f"{op}_mixed_float32_bool", op, [In("float32", [2, 4], data=special), In("bool", [4])], fn)
        case(f"{op}_mixed_int64_float64_broadcast", op, [In("int64", [3, 1], data=[0, 1, -2]),
                                                         In("float64", [4], data=[0.0, "nan", 0.5, -0.0])], fn)
        case(f"{op}_float32_transposed", op, [In("float32", [3, 4], views=[["transpose", 0, 1]]), In("float32", [4, 3])],
             fn)
        case(f"{op}_float32_empty", op, [In("float32", [0, 3]), In("float32", [3])], fn)
        case(f"{op}_float32_mismatch", op, [In("float32", [2, 3]), In("float32", [4])], fn)
    for op, fn in [("dt_any", torch.any), ("dt_all", torch.all)]:
        def ac(cid, inp, dims, keepdim, fn=fn, op=op):
            def f(a):
                # torch 1.13 reduces one dim at a time; a uint8 input gives uint8 (devtensor: bool)
                if not dims:
                    r = fn(a)
                    if keepdim:
                        r = r.reshape([1] * a.dim())
                else:
                    for d in dims:
                        if not -a.dim() <= d < a.dim():
                            return fn(a, dim=d)  # torch's own out-of-range error
                    r = a
                    for d in sorted((d % a.dim() for d in dims), reverse=True):
                        r = fn(r, dim=d, keepdim=bool(keepdim))
                return r.bool()
            return case(cid, op, [inp], f, params={"dims": dims, "keepdim": keepdim})
        for dt in ALL:
            ac(f"{op}_{dt}_all", In(dt, [3, 4]), [], 0)
            ac(f"{op}_{dt}_dim1", In(dt, [3, 4]), [1], 0)
        ac(f"{op}_bool_mostly_true_dim0", In("bool", [3, 4], data=[1] * 11 + [0]), [0], 0)
        ac(f"{op}_bool_mostly_false_dim1_keep", In("bool", [3, 4], data=[0] * 11 + [1]), [1], 1)
        ac(f"{op}_float32_nan_zeros", In("float32", [2, 3], data=["nan", 0.0, 0.0, -0.0, 0.0, 0.0]), [1], 0)
        ac(f"{op}_float32_dims0_2", In("float32", [2, 3, 4], data=[float(i % 5) for i in range(24)]), [0, 2], 0)
        ac(f"{op}_int32_all_keep", In("int32", [2, 3], data=[1, 2, 3, 4, 5, 0]), [], 1)
        ac(f"{op}_float32_empty_all", In("float32", [0, 3]), [], 0)
        ac(f"{op}_float32_empty_dim0", In("float32", [0, 3]), [0], 0)
        ac(f"{op}_float32_empty_dim1", In("float32", [0, 3]), [1], 1)
        ac(f"{op}_float32_0d", In("float32", [], data=[0.0]), [], 0)
        ac(f"{op}_float32_transposed", In("float32", [3, 4], views=[["transpose", 0, 1]]), [1], 0)
        ac(f"{op}_float32_dim_out_of_range", In("float32", [2, 3]), [2], 0)


def gen_reorder():
    def fc(cid, inp, dims):
        return case(cid, "dt_flip", [inp], lambda a: torch.flip(a, dims), params={"dims": dims})
    for dt in ALL:
        fc(f"dt_flip_{dt}_dim1", In(dt, [3, 4]), [1])
    fc("dt_flip_float32_dims0_2", In("float32", [2, 3, 4]), [0, 2])
    fc("dt_flip_float32_all_neg", In("float32", [2, 3]), [-1, 0])
    fc("dt_flip_float32_none", In("float32", [2, 3]), [])
    fc("dt_flip_float32_0d", In("float32", []), [0])
    fc("dt_flip_float32_transposed", In("float32", [3, 4], views=[["transpose", 0, 1]]), [0])
    fc("dt_flip_float32_expanded", In("float32", [3, 1], views=[["expand", [3, 4]]]), [0, 1])
    fc("dt_flip_float32_empty", In("float32", [0, 3]), [0, 1])
    fc("dt_flip_float32_dim_repeated", In("float32", [2, 3]), [1, -1])
    fc("dt_flip_float32_dim_out_of_range", In("float32", [2, 3]), [2])

    def rc(cid, inp, shifts, dims):
        return case(cid, "dt_roll", [inp], lambda a: torch.roll(a, shifts, dims), params={"shifts": shifts, "dims": dims})
    for dt in ALL:
        rc(f"dt_roll_{dt}_dim1", In(dt, [3, 4]), [1], [1])
    rc("dt_roll_float32_flat", In("float32", [3, 4]), [5], [])
    rc("dt_roll_float32_flat_negative", In("float32", [3, 4]), [-13], [])
    rc("dt_roll_float32_two_dims", In("float32", [2, 3, 4]), [1, -2], [0, 2])
    rc("dt_roll_float32_same_dim_twice", In("float32", [5]), [2, 4], [0, 0])
    rc("dt_roll_float32_shift_past_size", In("float32", [2, 3]), [7], [1])
    # (-2^62: PyTorch computes (size - shift) % size, which INT64_MIN would overflow; that
    # one is checked by hand in test_autograd.cpp)
    rc("dt_roll_float32_huge_shift", In("float32", [2, 3]), [-4611686018427387904], [1])
    rc("dt_roll_float32_transposed", In("float32", [3, 4], views=[["transpose", 0, 1]]), [1], [0])
    rc("dt_roll_float32_empty", In("float32", [0, 3]), [1], [0])
    rc("dt_roll_float32_0d_flat", In("float32", []), [3], [])
    rc("dt_roll_float32_misaligned", In("float32", [2, 3]), [1], [0, 1])["expect_status"] = "DT_ERR_INVALID_ARGUMENT"
    rc("dt_roll_float32_dim_out_of_range", In("float32", [2, 3]), [1], [-3])

    def pc(cid, inp, reps):
        return case(cid, "dt_repeat", [inp], lambda a: a.repeat(*reps), params={"repeats": reps})
    for dt in ALL:
        pc(f"dt_repeat_{dt}_2x3", In(dt, [2, 3]), [2, 3])
    pc("dt_repeat_float32_new_dims", In("float32", [2, 3]), [2, 1, 2])
    pc("dt_repeat_float32_ones", In("float32", [2, 3]), [1, 1])
    pc("dt_repeat_float32_zero", In("float32", [2, 3]), [0, 2])
    pc("dt_repeat_float32_0d", In("float32", []), [4])
    pc("dt_repeat_float32_empty", In("float32", [0, 2]), [3, 2])
    pc("dt_repeat_float32_transposed", In("float32", [3, 2], views=[["transpose", 0, 1]]), [2, 2])
    pc("dt_repeat_float32_expanded", In("float32", [2, 1], views=[["expand", [2, 3]]]), [1, 2])
    pc("dt_repeat_float32_too_few", In("float32", [2, 3]), [2])["expect_status"] = "DT_ERR_INVALID_ARGUMENT"
    pc("dt_repeat_float32_negative", In("float32", [2, 3]), [-1, 2])["expect_status"] = "DT_ERR_INVALID_ARGUMENT"

def gen_structured():
    """linspace, eye and one_hot. The factories take their device from the case's one
    input, a 0-d tensor that is otherwise unused."""
    anchor = lambda: In("float32", [], data=[0.0])

    def lc(cid, start, end, steps, dtype):
        def f(_):
            if dtype == "int64" and steps > 4:
                # torch 1.13's vectorised int64 kernel truncates the step inside each chunk of 4
                # (74 where its scalar formula and every other integer dtype give 75): int32's, widened
                return torch.linspace(start, end, steps, dtype=torch.int32).to(torch.int64)
            return torch.linspace(start, end, steps, dtype=DTYPES[dtype])
        return case(cid, "dt_tensor_linspace", [anchor()], f,
                    params={"start": start, "end": end, "steps": steps, "dtype": dtype})
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        lc(f"dt_tensor_linspace_{dt}_0_1_5", 0.0, 1.0, 5, dt)
        lc(f"dt_tensor_linspace_{dt}_neg_37", -3.25, 7.5, 37, dt)
    for n in [2, 3, 7, 8, 9, 16, 17, 100, 1001]:  # odd and even counts; across vector widths
        lc(f"dt_tensor_linspace_float32_{n}", -1.7, 2.9, n, "float32")
    lc("dt_tensor_linspace_float64_1001", 1e-3, 1e3, 1001, "float64")
    lc("dt_tensor_linspace_float32_descending", 5.0, -5.0, 11, "float32")
    lc("dt_tensor_linspace_float32_one_step", 2.5, 9.0, 1, "float32")
    lc("dt_tensor_linspace_float32_no_step", 2.5, 9.0, 0, "float32")
    lc("dt_tensor_linspace_float32_equal_ends", 3.0, 3.0, 4, "float32")
    for dt in ["int64", "int32", "int16", "int8", "uint8"]:
        lc(f"dt_tensor_linspace_{dt}_0_10_4", 0, 10, 4, dt)
        lc(f"dt_tensor_linspace_{dt}_fractional_bounds", 1.7, 100.9, 9, dt)
    lc("dt_tensor_linspace_int64_negative", -7, 10, 4, "int64")
    lc("dt_tensor_linspace_uint8_descending", 10, 0, 4, "uint8")
    lc("dt_tensor_linspace_bool", 0.0, 1.0, 3, "bool")
    lc("dt_tensor_linspace_negative_steps", 0.0, 1.0, -1, "float32")

    def ec(cid, n, m, dtype):
        def f(_):
            if dtype == "bfloat16":  # torch 1.13's CPU eye has no bfloat16: the float32 one, cast
                return torch.eye(n, m).to(torch.bfloat16)
            return torch.eye(n, m, dtype=DTYPES[dtype])
        return case(cid, "dt_tensor_eye", [anchor()], f, params={"n": n, "m": m, "dtype": dtype})
    for dt in ALL:
        ec(f"dt_tensor_eye_{dt}_3x4", 3, 4, dt)
    ec("dt_tensor_eye_float32_5x2", 5, 2, "float32")
    ec("dt_tensor_eye_float32_1x1", 1, 1, "float32")
    ec("dt_tensor_eye_float32_0x3", 0, 3, "float32")
    ec("dt_tensor_eye_float32_4x0", 4, 0, "float32")
    ec("dt_tensor_eye_float32_negative_n", -1, 3, "float32")
    ec("dt_tensor_eye_float32_negative_m", 2, -3, "float32")

    def oc(cid, inp, num_classes):
        return case(cid, "dt_one_hot", [inp], lambda x: torch.nn.functional.one_hot(x, num_classes),
                    params={"num_classes": num_classes})
    oc("dt_one_hot_1d", In("int64", [5], data=[0, 3, 1, 3, 2]), 4)
    oc("dt_one_hot_1d_inferred", In("int64", [5], data=[0, 3, 1, 3, 2]), -1)
    oc("dt_one_hot_2d_wide", In("int64", [2, 3], data=[9, 0, 4, 4, 1, 7]), 12)
    oc("dt_one_hot_0d", In("int64", [], data=[1]), 3)
    oc("dt_one_hot_transposed", In("int64", [2, 3], data=[0, 1, 2, 2, 1, 0], views=[["transpose", 0, 1]]), 3)
    oc("dt_one_hot_empty", In("int64", [0, 2]), 3)
    oc("dt_one_hot_empty_inferred", In("int64", [0]), -1)
    oc("dt_one_hot_negative_index", In("int64", [2], data=[0, -1]), 3)
    oc("dt_one_hot_index_too_large", In("int64", [2], data=[0, 2]), 2)
    oc("dt_one_hot_zero_classes", In("int64", [2], data=[0, 1]), 0)
    oc("dt_one_hot_num_classes_below_minus_one", In("int64", [2], data=[0, 1]), -2)
    c = oc("dt_one_hot_int32", In("int32", [2], data=[0, 1]), 3)
    c["expect_status"] = "DT_ERR_DTYPE_MISMATCH"

    def nz(cid, inp):
        return case(cid, "dt_nonzero", [inp], torch.nonzero)
    for dt in ALL:
        nz(f"dt_nonzero_{dt}", In(dt, [3, 4], data=[0, 1, 0, 2, 0, 0, 3, 0, 1, 1, 0, 0] if dt != "bool" else
                                  [0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0]))
    nz("dt_nonzero_float32_special", In("float32", [2, 4], data=["nan", 0.0, -0.0, "inf", 1e-45, 0.0, "-inf", 0.0]))
    nz("dt_nonzero_float64_3d", In("float64", [2, 3, 4], data=[float(i % 3 == 0) for i in range(24)]))
    nz("dt_nonzero_float32_transposed", In("float32", [3, 4], data=[float(i % 2) for i in range(12)],
                                           views=[["transpose", 0, 1]]))
    nz("dt_nonzero_float32_all_zero", In("float32", [2, 3], data=[0.0] * 6))
    nz("dt_nonzero_float32_empty", In("float32", [0, 3]))
    nz("dt_nonzero_float32_0d", In("float32", [], data=[2.0]))
    nz("dt_nonzero_float32_0d_zero", In("float32", [], data=[0.0]))
    nz("dt_nonzero_int64_1d", In("int64", [7], data=[5, 0, 0, -1, 0, 9, 0]))
    nz("dt_nonzero_float32_5d", In("float32", [2, 1, 3, 1, 2], data=[float(i % 4 != 1) for i in range(12)]))

    def ms(cid, inp, mask):
        return case(cid, "dt_masked_select", [inp, mask], torch.masked_select)
    for dt in ALL:
        ms(f"dt_masked_select_{dt}", In(dt, [3, 4]), In("bool", [3, 4], data=[1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]))
    ms("dt_masked_select_mask_broadcast", In("float32", [3, 4]), In("bool", [4], data=[1, 0, 1, 1]))
    ms("dt_masked_select_input_broadcast", In("float32", [4]), In("bool", [2, 4], data=[1, 0, 1, 1, 0, 0, 1, 0]))
    ms("dt_masked_select_both_broadcast", In("float64", [3, 1]), In("bool", [1, 4], data=[0, 1, 1, 0]))
    ms("dt_masked_select_transposed", In("float32", [4, 3], views=[["transpose", 0, 1]]),
       In("bool", [3, 4], data=[0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0]))
    ms("dt_masked_select_none", In("float32", [2, 3]), In("bool", [2, 3], data=[0] * 6))
    ms("dt_masked_select_all", In("int32", [2, 3]), In("bool", [], data=[1]))
    ms("dt_masked_select_empty", In("float32", [0, 3]), In("bool", [3], data=[1, 0, 1]))
    ms("dt_masked_select_0d", In("float32", [], data=[2.5]), In("bool", [], data=[1]))
    ms("dt_masked_select_shape_mismatch", In("float32", [2, 3]), In("bool", [4], data=[1, 0, 1, 0]))
    c = ms("dt_masked_select_uint8_mask", In("float32", [2, 3]), In("uint8", [2, 3], data=[1, 0, 1, 0, 1, 0]))
    c.pop("expected", None)  # torch 1.13 still takes a uint8 mask (deprecated); devtensor asks for bool
    c["error"] = True
    c["expect_status"] = "DT_ERR_DTYPE_MISMATCH"
    c["note"] = "torch 1.13 accepts a uint8 mask with a deprecation warning; devtensor asks for bool"
    ms("dt_masked_select_float_mask", In("float32", [2, 3]), In("float32", [2, 3]))["expect_status"] = \
        "DT_ERR_DTYPE_MISMATCH"

    def uq(cid, inp):
        return case(cid, "dt_unique", [inp],
                    lambda x: list(torch.unique(x, sorted=True, return_inverse=True, return_counts=True)), multi=True)
    for dt in ALL:
        uq(f"dt_unique_{dt}", In(dt, [3, 5], data=[3, 1, 0, 1, 2, 3, 3, 0, 1, 4, 2, 2, 0, 1, 1] if dt != "bool" else
                                 [1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0]))
    uq("dt_unique_float32_random", In("float32", [40]))  # all distinct
    uq("dt_unique_float64_inf", In("float64", [6], data=["inf", -1.5, "-inf", -1.5, "inf", 2.0]))
    uq("dt_unique_float32_transposed", In("float32", [3, 4], data=[float(i % 4) for i in range(12)],
                                          views=[["transpose", 0, 1]]))
    uq("dt_unique_int64_one_value", In("int64", [2, 2], data=[7, 7, 7, 7]))
    uq("dt_unique_float32_0d", In("float32", [], data=[2.5]))
    uq("dt_unique_float32_empty", In("float32", [0, 4]))
    uq("dt_unique_int64_extremes", In("int64", [5], data=[2**62, -2**62, 0, 2**62, -1]))

    def bc(cid, inputs, minlength=0):
        def f(x, w=None):
            return torch.bincount(x, weights=w, minlength=minlength)
        return case(cid, "dt_bincount", inputs, f, params={"minlength": minlength})
    for dt in ["int64", "int32", "int16", "int8", "uint8"]:
        bc(f"dt_bincount_{dt}", [In(dt, [9], data=[0, 2, 2, 5, 1, 0, 2, 7, 3])])
    bc("dt_bincount_minlength_longer", [In("int64", [3], data=[0, 2, 2])], 6)
    bc("dt_bincount_minlength_shorter", [In("int64", [3], data=[0, 4, 2])], 2)
    bc("dt_bincount_empty", [In("int64", [0])])
    bc("dt_bincount_empty_minlength", [In("int64", [0])], 3)
    bc("dt_bincount_weights_float32", [In("int64", [6], data=[1, 3, 1, 0, 3, 3]), In("float32", [6])])
    bc("dt_bincount_weights_float64", [In("int32", [6], data=[1, 3, 1, 0, 3, 3]), In("float64", [6])], 5)
    bc("dt_bincount_weights_int64", [In("int64", [4], data=[2, 2, 0, 1]), In("int64", [4], data=[3, -1, 4, 10])])
    bc("dt_bincount_weights_narrowed", [In("int64", [6], data=[0, 1, 0, 2, 2, 2]),
                                        In("float32", [12], views=[["narrow", 0, 3, 6]])])
    bc("dt_bincount_negative", [In("int64", [3], data=[1, -1, 2])])
    bc("dt_bincount_2d", [In("int64", [2, 2], data=[1, 0, 2, 1])])
    bc("dt_bincount_float", [In("float32", [3], data=[1.0, 0.0, 2.0])])
    bc("dt_bincount_bool", [In("bool", [3], data=[1, 0, 1])])
    bc("dt_bincount_negative_minlength", [In("int64", [2], data=[1, 0])], -1)
    bc("dt_bincount_weights_wrong_length", [In("int64", [3], data=[1, 0, 2]), In("float32", [2])])

    F = torch.nn.functional

    def nm(cid, inp, ord=2.0, dim=1, eps=1e-12):
        return case(cid, "dt_normalize", [inp], lambda x: F.normalize(x, p=float(ord), dim=dim, eps=eps),
                    params={"ord": ord, "dim": dim, "eps": eps})
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        nm(f"dt_normalize_{dt}", In(dt, [3, 4]))
    nm("dt_normalize_ord1_dim0", In("float32", [3, 4]), 1.0, 0)
    nm("dt_normalize_inf_last", In("float64", [2, 3, 4]), "inf", -1)
    nm("dt_normalize_zero_row", In("float32", [2, 3], data=[0.0, 0.0, 0.0, 1.0, -2.0, 2.0]), 2.0, 1)
    nm("dt_normalize_big_eps", In("float64", [2, 2]), 2.0, 1, 10.0)
    nm("dt_normalize_transposed", In("float32", [4, 3], views=[["transpose", 0, 1]]), 3.0, 1)
    nm("dt_normalize_1d", In("float32", [5]), 2.0, 0)
    nm("dt_normalize_dim_out_of_range", In("float32", [2, 3]), 2.0, 2)
    nm("dt_normalize_int", In("int64", [2, 3], data=[1, 2, 3, 4, 5, 6]), 2.0, 1)["expect_status"] = \
        "DT_ERR_DTYPE_MISMATCH"

    def cs(cid, a, b, dim=1, eps=1e-8):
        return case(cid, "dt_cosine_similarity", [a, b], lambda x, y: F.cosine_similarity(x, y, dim=dim, eps=eps),
                    params={"dim": dim, "eps": eps})
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        cs(f"dt_cosine_similarity_{dt}", In(dt, [3, 5]), In(dt, [3, 5]))
    cs("dt_cosine_similarity_broadcast", In("float32", [4, 1, 6]), In("float32", [3, 6]), -1)
    cs("dt_cosine_similarity_dim0", In("float64", [5, 2]), In("float64", [5, 2]), 0)
    cs("dt_cosine_similarity_zero_vector", In("float64", [2, 3], data=[0.0, 0.0, 0.0, 1.0, 2.0, 3.0]),
       In("float64", [2, 3]))
    cs("dt_cosine_similarity_transposed", In("float32", [4, 3], views=[["transpose", 0, 1]]), In("float32", [3, 4]))
    cs("dt_cosine_similarity_mixed", In("float32", [2, 3]), In("float64", [2, 3]))
    cs("dt_cosine_similarity_shape_mismatch", In("float32", [2, 3]), In("float32", [4]))
    cs("dt_cosine_similarity_dim_out_of_range", In("float32", [2, 3]), In("float32", [2, 3]), 2)
    cs("dt_cosine_similarity_int", In("int64", [2, 2], data=[1, 2, 3, 4]),
       In("int64", [2, 2], data=[1, 0, 0, 1]))["expect_status"] = "DT_ERR_DTYPE_MISMATCH"

    def pd(cid, a, b, ord=2.0, eps=1e-6, keepdim=0):
        return case(cid, "dt_pairwise_distance", [a, b],
                    lambda x, y: F.pairwise_distance(x, y, p=float(ord), eps=eps, keepdim=bool(keepdim)),
                    params={"ord": ord, "eps": eps, "keepdim": keepdim})
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        pd(f"dt_pairwise_distance_{dt}", In(dt, [4, 6]), In(dt, [4, 6]))
    pd("dt_pairwise_distance_ord1_keepdim", In("float32", [3, 5]), In("float32", [3, 5]), 1.0, 1e-6, 1)
    pd("dt_pairwise_distance_inf", In("float64", [3, 5]), In("float64", [5]), "inf")
    pd("dt_pairwise_distance_ord3_3d", In("float64", [2, 3, 4]), In("float64", [2, 3, 4]), 3.0, 0.0)
    pd("dt_pairwise_distance_1d", In("float32", [7]), In("float32", [7]))
    pd("dt_pairwise_distance_identical", In("float64", [2, 3], data=[1, 2, 3, 4, 5, 6]),
       In("float64", [2, 3], data=[1, 2, 3, 4, 5, 6]))
    pd("dt_pairwise_distance_shape_mismatch", In("float32", [2, 3]), In("float32", [2, 4]))


def main():
    gen_clamp()
    gen_masked_fill()
    gen_triangle()
    gen_var_std()
    gen_logsumexp_norm()
    gen_reorder()
    gen_logical()
    gen_structured()
    gen_pad()
    gen_leaky_relu()
    gen_interpolate()
    gen_conv2d()
    gen_conv1d()
    gen_conv_transpose2d()
    gen_pool2d()
    gen_norm()
    gen_attention()
    gen_unary()
    gen_binary()
    gen_scalar()
    gen_inplace()
    gen_reductions()
    gen_softmax()
    gen_cumsum()
    gen_sort()
    gen_matmul()
    gen_casts()
    gen_views()
    gen_join()
    out = {
        "generator": "tests/reference/gen_reference.py",
        "torch_version": torch.__version__,
        "count": len(CASES),
        "cases": CASES,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
    text = json.dumps(out, separators=(",", ":"), allow_nan=False)
    # one case per line keeps diffs of a regeneration readable
    text = text.replace(',{"id":', ',\n{"id":')
    with open(path, "w") as f:
        f.write(text + "\n")
    by_op = {}
    for c in CASES:
        by_op[c["op"]] = by_op.get(c["op"], 0) + 1
    print(f"wrote {len(CASES)} cases ({len(text) / 1e6:.2f} MB) to {path}", file=sys.stderr)
    for k in sorted(by_op):
        print(f"  {k}: {by_op[k]}", file=sys.stderr)


if __name__ == "__main__":
    main()

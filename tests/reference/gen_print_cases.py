#!/usr/bin/python3
"""Generates tests/reference/print_cases.json: PyTorch's repr() of many tensors.

Run with a Python that has torch (Debian's: /usr/bin/python3 tests/reference/gen_print_cases.py).
Each case stores the contiguous base tensor as raw bytes ("hex", native little-endian),
its "shape" and "dtype", optional "ops" applied to it to get the printed tensor
(["transpose", d0, d1], ["permute", [dims]], ["narrow", dim, start, length],
["mul_scalar", s], ["to_dtype", name]), "requires_grad" when the base is a leaf that
requires grad (so the ops are recorded and the result prints grad_fn=<...> or
requires_grad=True), an optional "default_dtype" in force while printing, an optional
"device" the tensor is shown on, and the "expected" string. tests/test_print.cpp replays
them through the C ABI.
"""
import json
import math
import os
import sys

import torch
import torch._tensor_str as ts

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
}
NAMES = {v: k for k, v in DTYPES.items()}

cases = []


def apply_ops(t, ops):
    for op in ops:
        if op[0] == "transpose":
            t = t.transpose(op[1], op[2])
        elif op[0] == "permute":
            t = t.permute(*op[1])
        elif op[0] == "narrow":
            t = t.narrow(op[1], op[2], op[3])
        elif op[0] == "mul_scalar":
            t = t * op[1]
        elif op[0] == "to_dtype":
            t = t.to(DTYPES[op[1]])
        else:
            raise ValueError(op)
    return t


def repr_on_device(t, device):
    """repr(t) as PyTorch prints it for a tensor on `device` (built from PyTorch's own
    pieces, since this machine has no such device): the device suffix comes first."""
    indent = len("tensor(")
    suffixes = ["device='%s'" % device]
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype != torch.get_default_dtype():
            suffixes.append("dtype=" + str(t.dtype))
        body = "[]"
    else:
        if t.dtype not in (torch.get_default_dtype(), torch.int64, torch.bool):
            suffixes.append("dtype=" + str(t.dtype))
        body = ts._tensor_str(t, indent)
    if t.grad_fn is not None:
        suffixes.append("grad_fn=<%s>" % type(t.grad_fn).__name__)
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return ts._add_suffixes("tensor(" + body, suffixes, indent, False)


def add(name, base, ops=(), default_dtype=None, device=None, requires_grad=False):
    base = base.contiguous().detach().requires_grad_(requires_grad)
    ops = [list(o) for o in ops]
    old = torch.get_default_dtype()
    if default_dtype is not None:
        torch.set_default_dtype(DTYPES[default_dtype])
    try:
        t = apply_ops(base, ops)
        expected = repr(t) if device is None else repr_on_device(t, device)
        assert device is not None or expected == str(t)
    finally:
        torch.set_default_dtype(old)
    raw = base.detach().reshape(-1).view(torch.uint8).numpy().tobytes() if base.numel() else b""
    case = {"name": name, "dtype": NAMES[base.dtype], "shape": list(base.shape),
            "hex": raw.hex(), "expected": expected}
    if ops:
        case["ops"] = ops
    if default_dtype is not None:
        case["default_dtype"] = default_dtype
    if requires_grad:
        case["requires_grad"] = True
    if device is not None:
        case["device"] = device
    cases.append(case)


def T(data, dtype="float32"):
    return torch.tensor(data, dtype=DTYPES[dtype])


nan, inf = math.nan, math.inf
torch.manual_seed(1234)

# ---- 0-d
for name, v, dt in [
    ("scalar_int_mode", 3.0, "float32"), ("scalar_frac", 3.14159265, "float32"),
    ("scalar_neg", -2.5, "float32"), ("scalar_zero", 0.0, "float32"),
    ("scalar_negzero", -0.0, "float32"), ("scalar_nan", nan, "float32"),
    ("scalar_inf", inf, "float32"), ("scalar_neginf", -inf, "float64"),
    ("scalar_small", 1e-5, "float32"), ("scalar_big", 1.5e10, "float32"),
    ("scalar_f64", 0.1, "float64"), ("scalar_f16", 0.1, "float16"),
    ("scalar_bf16", 3.3, "bfloat16"), ("scalar_i64", 7, "int64"),
    ("scalar_i32", -7, "int32"), ("scalar_i8", -128, "int8"), ("scalar_u8", 255, "uint8"),
    ("scalar_i16", 1234, "int16"), ("scalar_true", True, "bool"),
    ("scalar_false", False, "bool"), ("scalar_1e8", 1e8, "float64"),
    ("scalar_big_int", 123456789.0, "float64"),
]:
    add(name, T(v, dt))

# ---- 1-d, every dtype
add("f32_ints", T([1.0, 2.0, 3.0]))
add("f32_frac", T([1.5, 2.25, -3.125]))
add("f32_neg", T([-1.0, 2.0, -30.0]))
add("f32_mixed", T([0.1, 100.0, -7.25, 0.0]))
add("f32_1e-4_edge", T([1e-4, 0.5]))
add("f32_just_below_1e-4", T([9.9e-5, 0.5]))
add("f32_ratio_1000", T([0.1, 100.0]))
add("f32_ratio_over_1000", T([0.1, 100.5]))
add("f64_frac", T([0.1, 0.2, 0.3], "float64"))
add("f16_frac", T([0.1, 0.2, -65504.0, 1.0], "float16"))
add("f16_ints", T([1.0, 2.0, 2048.0], "float16"))
add("bf16_frac", T([0.1, 3.3, -1e30], "bfloat16"))
add("bf16_ints", T([1.0, -256.0, 4.0], "bfloat16"))
add("i8", T([-128, 0, 127], "int8"))
add("i16", T([-32768, 5, 32767], "int16"))
add("i32", T([1, -22, 333], "int32"))
add("i64", T([1, 22, 333], "int64"))
add("i64_extremes", T([-(2**63), 0, 2**63 - 1], "int64"))
add("u8", T([0, 7, 255], "uint8"))
add("bool_1d", T([True, False, True], "bool"))
add("bool_all_true", T([True, True], "bool"))
add("single_elem", T([42.0]))

# ---- integer mode and scientific mode
add("int_mode_1e7", T([1e7, 1.0, 2.0], "float64"))
add("int_mode_1e8", T([1e8, 100000.0], "float64"))
add("int_mode_over_1e8", T([1.0e9, 2e8], "float64"))
add("int_mode_ratio_sci", T([1.0, 10000.0]))
add("int_mode_ratio_1000", T([1.0, 1000.0]))
add("sci_small", T([1e-5, 1.0]))
add("sci_big", T([1e10, 1.0]))
add("sci_mix", T([1e-5, 1e10, -3.5, 0.0], "float64"))
add("sci_tiny", T([1e-30, 2e-30]))
add("sci_huge_f64", T([1e300, -1e-300], "float64"))
add("sci_neg_exp3", T([1.5e-200, 1.0], "float64"))
add("all_zero", T([0.0, 0.0, -0.0]))
add("all_nan", T([nan, nan]))
add("nan_inf_zero", T([0.0, nan, inf, -inf]))
add("nan_int_mode", T([nan, 1.0, 2.0]))
add("nan_frac", T([nan, 1.5, -inf]))
add("nan_sci", T([nan, 1e-7, inf, 1.0]))
add("negzero_frac", T([-0.0, 0.5]))
add("f32_denormal", T([1e-45, 1.0]))
add("large_fixed", T([123456.789, 0.5], "float64"))
add("rounding_ties", T([0.03125, 0.15625, 2.5e-4], "float64"))

# ---- long rows wrapping at 80 columns, and the suffix going to a new line
add("wrap_f32_arange", torch.arange(30, dtype=torch.float32))
add("wrap_i64_arange", torch.arange(100))
add("wrap_f64_randn", torch.randn(50, dtype=torch.float64))
add("wrap_f32_randn", torch.randn(40))
add("wrap_sci", torch.randn(25) * 1e6)
add("wrap_bool", torch.rand(60) > 0.5)
for n in range(1, 31):
    add("suffix_i32_%d" % n, torch.arange(n, dtype=torch.int32))
for n in (10, 11, 12, 13, 20, 21, 22, 23):
    add("suffix_f64_%d" % n, torch.arange(n, dtype=torch.float64) * 1.5)
    add("suffix_f16_%d" % n, torch.arange(n, dtype=torch.float16) - 3)

# ---- 2-d, 3-d, 4-d
add("f32_2d", torch.arange(12, dtype=torch.float32).reshape(3, 4))
add("f32_2d_randn", torch.randn(4, 5))
add("i64_2d", torch.arange(-6, 6).reshape(3, 4))
add("u8_2d", torch.randint(0, 256, (3, 3), dtype=torch.uint8))
add("bool_2d", (torch.randn(3, 4) > 0))
add("f64_2d_nan", T([[nan, 1.0], [2.0, inf]], "float64"))
add("f32_2d_wrap", torch.randn(3, 20))
add("i16_2d_wrap", torch.randint(-1000, 1000, (2, 40), dtype=torch.int16))
add("f32_2d_sci", T([[1e-8, 1.0], [3.0, 4e5]]))
add("f32_3d", torch.arange(24, dtype=torch.float32).reshape(2, 3, 4))
add("i8_3d", torch.arange(-12, 12, dtype=torch.int8).reshape(2, 3, 4))
add("bf16_3d", torch.randn(2, 2, 3).to(torch.bfloat16))
add("f16_3d", torch.randn(2, 3, 2).to(torch.float16))
add("f32_4d", torch.arange(24, dtype=torch.float32).reshape(2, 2, 2, 3))
add("f32_3d_wrap", torch.randn(2, 2, 15))
add("f32_2d_single_col", torch.arange(4, dtype=torch.float32).reshape(4, 1))
add("f32_1x1x1", T([[[5.0]]]))

# ---- empty tensors
add("empty_f32", torch.empty(0))
add("empty_f64", torch.empty(0, dtype=torch.float64))
add("empty_i64", torch.empty(0, dtype=torch.int64))
add("empty_bool", torch.empty(0, dtype=torch.bool))
add("empty_2x0", torch.empty(2, 0))
add("empty_0x3_i32", torch.empty(0, 3, dtype=torch.int32))
add("empty_2x0x3_bool", torch.empty(2, 0, 3, dtype=torch.bool))
add("empty_0x0_i64", torch.empty(0, 0, dtype=torch.int64))

# ---- summarised (more than 1000 elements)
add("sum_f32_1d", torch.arange(2000, dtype=torch.float32))
add("sum_i64_1001", torch.arange(1001))
add("sum_i64_1000_not", torch.arange(1000))
add("sum_f32_randn", torch.randn(1001))
add("sum_f64_2d", torch.arange(1200, dtype=torch.float64).reshape(40, 30))
add("sum_f32_2d_narrow_rows", torch.randn(2000, 2))
add("sum_f32_2d_wide_rows", torch.randn(3, 1000))
add("sum_i32_3d", torch.arange(1200, dtype=torch.int32).reshape(8, 10, 15))
add("sum_bool_2d", torch.randn(40, 40) > 0)
mid = torch.ones(2000)
mid[1000] = 1e-9  # hidden by the summary: does not force scientific mode
add("sum_hidden_middle", mid)
mid_i = torch.arange(1500, dtype=torch.int64)
mid_i[700] = -(10**15)  # hidden: does not widen the columns
add("sum_hidden_middle_int", mid_i)
add("sum_f16", torch.randn(1200).to(torch.float16))
add("sum_bf16_2d", torch.randn(50, 30).to(torch.bfloat16))
add("sum_u8_4d", torch.randint(0, 256, (5, 6, 7, 8), dtype=torch.uint8))
add("sum_f32_sci", torch.randn(1500) * 1e-6)
add("sum_nothing_elided", torch.arange(1296, dtype=torch.float32).reshape(6, 6, 6, 6) / 8)
add("sum_rows_of_7", torch.arange(1400).reshape(200, 7))
add("sum_cols_of_200", torch.randn(7, 200, dtype=torch.float64))
add("sum_rows_of_6", torch.arange(1200, dtype=torch.int16).reshape(200, 6))
add("sum_nan_inf", torch.tensor([math.nan, 1.0, math.inf] + [2.0] * 1000 + [-math.inf, 0.5]))

# ---- non-contiguous views
add("t_f32_2d", torch.arange(12, dtype=torch.float32).reshape(3, 4), [("transpose", 0, 1)])
add("t_i64_2d", torch.arange(6).reshape(2, 3), [("transpose", 0, 1)])
add("t_f64_3d", torch.randn(2, 3, 4, dtype=torch.float64), [("transpose", 0, 2)])
add("perm_i32_3d", torch.arange(24, dtype=torch.int32).reshape(2, 3, 4), [("permute", [2, 0, 1])])
add("narrow_f32", torch.arange(20, dtype=torch.float32).reshape(4, 5), [("narrow", 1, 1, 3)])
add("narrow_offset_1d", torch.arange(10, dtype=torch.float32) / 4, [("narrow", 0, 3, 5)])
add("t_sum_f32", torch.arange(1200, dtype=torch.float32).reshape(40, 30) * 1.25, [("transpose", 0, 1)])
add("t_narrow_bf16", torch.randn(6, 5).to(torch.bfloat16), [("transpose", 0, 1), ("narrow", 1, 2, 3)])
add("t_bool", torch.randn(3, 5) > 0, [("transpose", 0, 1)])

# ---- a different default dtype (PyTorch omits dtype= for the current default)
add("def64_f64", T([1.5, 2.0], "float64"), default_dtype="float64")
add("def64_f32", T([1.5, 2.0], "float32"), default_dtype="float64")
add("def64_i64", T([1, 2], "int64"), default_dtype="float64")
add("def64_empty_f32", torch.empty(0), default_dtype="float64")
add("def64_empty_f64", torch.empty(0, dtype=torch.float64), default_dtype="float64")
add("def16_f16", T([0.5, 2.0], "float16"), default_dtype="float16")
add("def16_f32", T([0.5, 2.0], "float32"), default_dtype="float16")

# ---- other devices (PyTorch prints device= for any non-CPU device; devtensor also for
# logical CPU devices other than cpu:0, a choice of its own)
add("cuda_f32", T([1.0, 2.0]), device="cuda:0")
add("cuda_i32", T([1, 2], "int32"), device="cuda:0")
add("cuda_empty", torch.empty(2, 0, dtype=torch.float16), device="cuda:0")
add("cuda_scalar", T(3.5, "float64"), device="cuda:0")
add("cuda_wrap", torch.randn(40, dtype=torch.float64), device="cuda:0")
add("cuda_2d_sum", torch.randn(40, 40), device="cuda:0")
add("cpu1_f32", T([1.0, 2.0]), device="cpu:1")
add("cpu1_u8", T([1, 2], "uint8"), device="cpu:1")

# ---- autograd: PyTorch prints requires_grad=True for a leaf that requires grad and
# grad_fn=<Name> for a result autograd recorded, after the device and dtype suffixes
add("grad_leaf", T([1.0, 2.0, 3.0]), requires_grad=True)
add("grad_leaf_f64", T([1.5, -2.0], "float64"), requires_grad=True)
add("grad_leaf_scalar", T(0.5), requires_grad=True)
add("grad_mul", T([1.0, 2.0, 3.0]), [("mul_scalar", 2.0)], requires_grad=True)
add("grad_transpose", torch.arange(6, dtype=torch.float32).reshape(2, 3), [("transpose", 0, 1)], requires_grad=True)
add("grad_narrow", torch.arange(5, dtype=torch.float32), [("narrow", 0, 1, 3)], requires_grad=True)
add("grad_to_f64", T([1.0, 2.0]), [("to_dtype", "float64")], requires_grad=True)
add("grad_wrap_newline", torch.arange(40, dtype=torch.float32), [("mul_scalar", 1.5)], requires_grad=True)
add("grad_wrap_leaf", torch.arange(40, dtype=torch.float64), requires_grad=True)
add("grad_empty", torch.empty(2, 0), requires_grad=True)
add("grad_cuda_leaf", T([1.0, 2.0]), device="cuda:0", requires_grad=True)
add("grad_cuda_mul", T([1.0, 2.0], "float64"), [("mul_scalar", 3.0)], device="cuda:0", requires_grad=True)
add("grad_cpu1_leaf", T([4.0]), device="cpu:1", requires_grad=True)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "print_cases.json")
with open(out, "w") as f:
    json.dump({"generator": "tests/reference/gen_print_cases.py", "torch": torch.__version__,
               "cases": cases}, f, indent=1)
    f.write("\n")
print("wrote %d cases to %s" % (len(cases), out), file=sys.stderr)

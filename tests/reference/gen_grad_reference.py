#!/usr/bin/env python3
"""Generates tests/reference/grad_cases.json: PyTorch autograd references for devtensor.

Regenerate (Debian's interpreter has torch and numpy):

    /usr/bin/python3 tests/reference/gen_grad_reference.py

Deterministic: each case's data come from a numpy generator seeded with a CRC32 of its id.
tests/test_autograd.cpp runs every case on every device.

Each case applies one op of the C API (same "op"/"params"/"inputs" format as
gen_reference.py's cases; inputs marked "requires_grad" are leaves, made on the CPU and
then moved and viewed) and reduces its result(s) to a scalar with fixed random weights:
loss = sum_k sum(out_k * weights[k]). Recorded:

  grads     per input: its gradient {"dtype","shape","values"}, or null
  grad_fn   PyTorch's name of the result's backward function (torch 1.13), when devtensor
            promises the same name
  params.reuse  the op gets its one input twice (a graph that uses a leaf twice)
  fd        true when a central finite difference of the loss must also agree (float64
            inputs away from kinks and ties)
"""
import json
import os
import sys
import zlib

import numpy as np
import torch

# The unary ops come from the op table (src/core/op_table.h), as in gen_reference.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import op_table  # noqa: E402

torch.set_default_dtype(torch.float32)

CASES = []
IDS = set()
NAMES = {torch.float32: "float32", torch.float64: "float64"}


def rng_for(cid):
    return np.random.default_rng(zlib.crc32(cid.encode()))


def enc_tensor(t):
    t = t.detach()
    return {"dtype": NAMES[t.dtype], "shape": list(t.shape),
            "values": [float(v) for v in t.reshape(-1).tolist()]}


def make_input(rng, shape, dtype=torch.float64, low=-2.0, high=2.0, values=None, views=(), grad=True):
    if values is None:
        data = rng.uniform(low, high, size=shape)
    else:
        data = np.array(values, dtype=np.float64).reshape(shape)
    base = torch.tensor(data, dtype=dtype)
    spec = {"dtype": NAMES[dtype], "shape": list(shape),
            "data": [float(v) for v in base.reshape(-1).tolist()],
            "views": [list(v) for v in views], "requires_grad": grad}
    return spec, base


def apply_views(t, views):
    for v in views:
        if v[0] == "transpose":
            t = t.transpose(v[1], v[2])
        elif v[0] == "permute":
            t = t.permute(*v[1])
        elif v[0] == "narrow":
            t = t.narrow(v[1], v[2], v[3])
        elif v[0] == "expand":
            t = t.expand(*v[1])
    return t


def add(cid, op, fn, inputs, params=None, grad_fn=True, fd=True, int_inputs=()):
    """inputs: list of (spec, base) from make_input; fn(list of viewed tensors) -> tensor or list."""
    assert cid not in IDS, cid
    IDS.add(cid)
    rng = rng_for(cid + "/w")
    leaves, viewed = [], []
    for spec, base in inputs:
        leaf = base.clone().requires_grad_(spec["requires_grad"])
        leaves.append(leaf)
        viewed.append(apply_views(leaf, spec["views"]))
    outs = fn(viewed)
    out_list = outs if isinstance(outs, (list, tuple)) else [outs]
    weights, loss = [], 0
    for o in out_list:
        w = torch.tensor(rng.uniform(-1, 1, size=tuple(o.shape)), dtype=o.dtype)
        weights.append({"dtype": NAMES[o.dtype], "shape": list(o.shape),
                        "data": [float(v) for v in w.reshape(-1).tolist()], "views": []})
        loss = loss + (o * w).sum()
    loss.backward()
    case = {"id": cid, "op": op, "params": params or {},
            "inputs": [spec for spec, _ in inputs], "weights": weights,
            "grads": [enc_tensor(l.grad) if l.grad is not None else None for l in leaves],
            "fd": bool(fd) and all(spec["dtype"] == "float64" for spec, _ in inputs if spec["requires_grad"])}
    if grad_fn and out_list[0].grad_fn is not None:
        case["grad_fn"] = type(out_list[0].grad_fn).__name__
    CASES.append(case)


def R(cid):
    return rng_for(cid)


# ----------------------------------------------------------------------------- elementwise

BIN = {"dt_add": torch.add, "dt_sub": torch.sub, "dt_mul": torch.mul, "dt_div": torch.div,
       "dt_maximum": torch.maximum, "dt_minimum": torch.minimum}
for op, f in BIN.items():
    for sa, sb, tag in [((2, 3), (2, 3), "same"), ((2, 3), (3,), "bcast_row"), ((4, 1), (1, 3), "outer"),
                        ((2, 3), (), "scalar_tensor")]:
        cid = f"{op}_{tag}"
        r = R(cid)
        lo = 0.5 if op == "dt_div" else -2.0
        add(cid, op, lambda v, f=f: f(v[0], v[1]), [make_input(r, sa), make_input(r, sb, low=lo)])
# maximum / minimum ties split the gradient in half
for op, f in [("dt_maximum", torch.maximum), ("dt_minimum", torch.minimum)]:
    cid = f"{op}_ties"
    r = R(cid)
    add(cid, op, lambda v, f=f: f(v[0], v[1]),
        [make_input(r, (4,), values=[1, 2, 3, 4]), make_input(r, (4,), values=[1, 5, 3, 0])], fd=False)
cid = "dt_pow_tensor"
r = R(cid)
add(cid, "dt_pow", lambda v: torch.pow(v[0], v[1]),
    [make_input(r, (2, 3), low=0.5, high=2.0), make_input(r, (2, 3), low=-1.5, high=2.0)])
# an exponent of 0 makes the base's gradient 0, also at a base of 0 (not 0 * 0^-1 = NaN)
cid = "dt_pow_tensor_zero_exponent"
r = R(cid)
add(cid, "dt_pow", lambda v: torch.pow(v[0], v[1]),
    [make_input(r, (4,), values=[0.0, 2.0, 0.0, 1.5]), make_input(r, (4,), values=[0.0, 0.0, 2.0, 1.0])], fd=False)
cid = "dt_mul_float32"
r = R(cid)
add(cid, "dt_mul", lambda v: v[0] * v[1], [make_input(r, (3, 2), dtype=torch.float32),
                                          make_input(r, (3, 2), dtype=torch.float32)])
cid = "dt_add_mixed_float32_float64"
r = R(cid)
add(cid, "dt_add", lambda v: v[0] + v[1], [make_input(r, (3,), dtype=torch.float32), make_input(r, (3,))])

SCALAR = {"dt_add_scalar": lambda t, s: t + s, "dt_sub_scalar": lambda t, s: t - s,
          "dt_mul_scalar": lambda t, s: t * s, "dt_div_scalar": lambda t, s: t / s,
          "dt_pow_scalar": lambda t, s: torch.pow(t, s)}
for op, f in SCALAR.items():
    s = 2.5 if op != "dt_pow_scalar" else 3.0
    cid = f"{op}"
    r = R(cid)
    lo = 0.5 if op == "dt_pow_scalar" else -2.0
    add(cid, op, lambda v, f=f, s=s: f(v[0], s), [make_input(r, (2, 3), low=lo)], params={"scalar": s})

UN_OVERRIDES = {"gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh")}
UN = {"dt_" + u.c_name: UN_OVERRIDES.get(u.c_name) or getattr(torch, u.c_name, None) or
      getattr(torch.nn.functional, u.c_name) for u in op_table.public_unary(op_table.load()[0])}
POSITIVE = {"dt_log", "dt_sqrt", "dt_rsqrt", "dt_log2", "dt_log10"}
# inputs inside each function's domain and away from poles (tan at pi/2)
RANGES = {"dt_log1p": (-0.7, 2.0), "dt_asin": (-0.9, 0.9), "dt_acos": (-0.9, 0.9), "dt_atanh": (-0.9, 0.9),
          "dt_acosh": (1.2, 3.0), "dt_tan": (-1.2, 1.2), "dt_reciprocal": (0.3, 2.0)}
for op, f in UN.items():
    cid = f"{op}"
    r = R(cid)
    lo, hi = RANGES.get(op, (0.3 if op in POSITIVE else -2.0, 2.0))
    add(cid, op, lambda v, f=f: f(v[0]), [make_input(r, (3, 4), low=lo, high=hi)])

# fmod and remainder: the divisor's gradient is -g * the rounded quotient; atan2's both
for op, f in [("dt_fmod", torch.fmod), ("dt_remainder", torch.remainder), ("dt_atan2", torch.atan2)]:
    for sa, sb, tag in [((2, 3), (2, 3), "same"), ((2, 3), (3,), "bcast_row")]:
        cid = f"{op}_{tag}"
        r = R(cid)
        add(cid, op, lambda v, f=f: f(v[0], v[1]), [make_input(r, sa, low=-3.0, high=3.0), make_input(r, sb, low=0.4)])
    cid = f"{op}_scalar"
    r = R(cid)
    s = -0.7
    fs = (lambda v, f=f, s=s: f(v[0], torch.tensor(s, dtype=torch.float64))) if op == "dt_atan2" else \
         (lambda v, f=f, s=s: f(v[0], s))
    add(cid, op + "_scalar", fs, [make_input(r, (2, 3), low=-3.0, high=3.0)], params={"scalar": s},
        grad_fn=op != "dt_atan2")

cid = "dt_where"
r = R(cid)
cond_spec = {"dtype": "bool", "shape": [2, 3], "data": [1, 0, 1, 0, 0, 1], "views": [], "requires_grad": False}
cond = torch.tensor([[True, False, True], [False, False, True]])
add(cid, "dt_where", lambda v: torch.where(v[0], v[1], v[2]),
    [(cond_spec, cond), make_input(r, (2, 3)), make_input(r, (3,))])

# ----------------------------------------------------------------------------- reductions

for op, f in [("dt_sum", torch.sum), ("dt_mean", torch.mean)]:
    for dims, keep in [([], 0), ([1], 0), ([0, 2], 1), ([-1], 1)]:
        cid = f"{op}_dims{'_'.join(str(d) for d in dims) or 'all'}_keep{keep}".replace("-", "m")
        r = R(cid)
        fn = (lambda v, f=f: f(v[0])) if not dims else (lambda v, f=f, d=dims, k=keep: f(v[0], dim=d, keepdim=bool(k)))
        add(cid, op, fn, [make_input(r, (2, 3, 4))], params={"dims": dims, "keepdim": keep})
for op, f in [("dt_max", torch.amax), ("dt_min", torch.amin)]:
    cid = f"{op}_dim1"
    r = R(cid)
    add(cid, op, lambda v, f=f: f(v[0], dim=1), [make_input(r, (3, 4))], params={"dims": [1], "keepdim": 0})
    cid = f"{op}_all_ties"
    r = R(cid)
    vals = [1, 3, 3, 0, -2, 3] if op == "dt_max" else [1, -2, 3, 0, -2, 3]
    add(cid, op, lambda v, f=f: f(v[0]), [make_input(r, (2, 3), values=vals)], params={"dims": [], "keepdim": 0},
        fd=False)

for dim, shape in [(1, (3, 5)), (0, (3, 5)), (-1, (2, 3, 4))]:
    cid = f"dt_cumsum_dim{dim}_{'x'.join(map(str, shape))}".replace("-", "m")
    r = R(cid)
    add(cid, "dt_cumsum", lambda v, d=dim: torch.cumsum(v[0], d), [make_input(r, shape)], params={"dim": dim})

# sort and topk: the values' gradient scattered back to the positions (distinct values,
# so the order and the finite differences are well defined; plain torch.sort, whose
# grad_fn SortBackward0 is the name users see: its stable overload, devtensor's order, is
# SortBackward1 with the same gradient)
for cid, op, shape, params, f in [
        ("dt_sort_dim1_3x5", "dt_sort", (3, 5), {"dim": 1, "descending": 0},
         lambda v: torch.sort(v[0], dim=1)[0]),
        ("dt_sort_dim0_desc_4x3", "dt_sort", (4, 3), {"dim": 0, "descending": 1},
         lambda v: torch.sort(v[0], dim=0, descending=True)[0]),
        ("dt_topk_k2_dim1_3x5", "dt_topk", (3, 5), {"k": 2, "dim": 1, "largest": 1},
         lambda v: torch.topk(v[0], 2, 1)[0]),
        ("dt_topk_k3_smallest_dim0_4x3", "dt_topk", (4, 3), {"k": 3, "dim": 0, "largest": 0},
         lambda v: torch.topk(v[0], 3, 0, largest=False)[0])]:
    add(cid, op, f, [make_input(R(cid), shape)], params=params)

for op, log in [("dt_softmax", False), ("dt_log_softmax", True)]:
    for dim in [1, 0, -1]:
        cid = f"{op}_dim{dim}".replace("-", "m")
        r = R(cid)
        f = torch.log_softmax if log else torch.softmax
        add(cid, op, lambda v, f=f, d=dim: f(v[0], d), [make_input(r, (3, 5))], params={"dim": dim})

# ----------------------------------------------------------------------------- matmul

for sa, sb in [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (2, 4, 5)),
               ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((2, 3, 4), (4,))]:
    cid = "dt_matmul_" + "x".join(map(str, sa)) + "_" + "x".join(map(str, sb))
    r = R(cid)
    add(cid, "dt_matmul", lambda v: torch.matmul(v[0], v[1]), [make_input(r, sa), make_input(r, sb)],
        grad_fn=len(sa) == 2 and len(sb) == 2)  # other shapes: torch names its internal decomposition
cid = "dt_matmul_transposed"
r = R(cid)
add(cid, "dt_matmul", lambda v: torch.matmul(v[0], v[1]),
    [make_input(r, (4, 3), views=[["transpose", 0, 1]]), make_input(r, (2, 4), views=[["transpose", 0, 1]])])

# ----------------------------------------------------------------------------- conv2d

# (id, input shape, weight shape, bias, stride, padding, dilation, groups): float64, with
# finite differences.
for name, xs, ws, bias, stride, padding, dilation, groups in [
        ("basic", (2, 3, 5, 4), (4, 3, 3, 3), True, 1, 0, 1, 1),
        ("stride_pad", (1, 2, 7, 6), (3, 2, 3, 2), True, (2, 3), (1, 2), 1, 1),
        ("dilation", (1, 2, 7, 6), (2, 2, 3, 2), False, 1, (2, 1), (2, 1), 1),
        ("groups", (2, 4, 4, 5), (6, 2, 2, 3), True, 1, 1, 1, 2),
        ("same", (1, 3, 5, 4), (2, 3, 4, 3), True, 1, "same", 1, 1),
        ("unbatched", (3, 4, 4), (2, 3, 3, 3), True, 1, 1, 1, 1)]:
    cid = f"dt_conv2d_{name}"
    r = R(cid)
    pair = lambda v: list(v) if isinstance(v, tuple) else [v, v]  # noqa: E731
    params = {"stride": pair(stride), "padding": padding if padding == "same" else pair(padding),
              "dilation": pair(dilation), "groups": groups}
    inputs = [make_input(r, xs), make_input(r, ws)] + ([make_input(r, (ws[0],))] if bias else [])
    add(cid, "dt_conv2d",
        lambda v, s=stride, p=padding, d=dilation, g=groups: torch.nn.functional.conv2d(
            v[0], v[1], v[2] if len(v) > 2 else None, stride=s, padding=p, dilation=d, groups=g),
        inputs, params=params, grad_fn=False)

for name, xs, ws, bias, stride, padding, dilation, groups in [
        ("basic", (2, 3, 7), (4, 3, 3), True, 1, 0, 1, 1),
        ("strided_dilated_groups", (1, 4, 11), (2, 2, 3), True, 2, 1, 2, 2),
        ("same_unbatched", (3, 6), (2, 3, 4), False, 1, "same", 1, 1)]:
    cid = f"dt_conv1d_{name}"
    r = R(cid)
    inputs = [make_input(r, xs), make_input(r, ws)] + ([make_input(r, (ws[0],))] if bias else [])
    add(cid, "dt_conv1d",
        lambda v, s=stride, p=padding, d=dilation, g=groups: torch.nn.functional.conv1d(
            v[0], v[1], v[2] if len(v) > 2 else None, stride=s, padding=p, dilation=d, groups=g),
        inputs, params={"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}, grad_fn=False)

# (id, input shape, weight shape, bias, stride, padding, output_padding, dilation, groups)
for name, xs, ws, bias, stride, padding, outpad, dilation, groups in [
        ("basic", (2, 3, 3, 4), (3, 2, 3, 3), True, (1, 1), (0, 0), (0, 0), (1, 1), 1),
        ("stride_pad_outpad", (1, 2, 4, 3), (2, 3, 3, 2), True, (2, 3), (1, 0), (1, 2), (1, 1), 1),
        ("dilation_outpad_over_padding", (1, 2, 3, 3), (2, 2, 2, 3), False, (1, 2), (0, 1), (1, 1), (2, 2), 1),
        ("groups", (2, 4, 3, 3), (4, 3, 2, 2), True, (2, 1), (1, 0), (0, 0), (1, 1), 2),
        ("unbatched", (3, 3, 2), (3, 2, 2, 2), True, (2, 2), (0, 0), (1, 0), (1, 1), 1)]:
    cid = f"dt_conv_transpose2d_{name}"
    r = R(cid)
    inputs = [make_input(r, xs), make_input(r, ws)] + ([make_input(r, (ws[1] * groups,))] if bias else [])
    add(cid, "dt_conv_transpose2d",
        lambda v, s=stride, p=padding, o=outpad, d=dilation, g=groups: torch.nn.functional.conv_transpose2d(
            v[0], v[1], v[2] if len(v) > 2 else None, s, p, o, g, d),
        inputs, params={"stride": list(stride), "padding": list(padding), "output_padding": list(outpad),
                        "dilation": list(dilation), "groups": groups}, grad_fn=False)

# ----------------------------------------------------------------------------- pooling

F = torch.nn.functional
for name, xs, k, st, p, d in [("max_3x3_s2_p1", (1, 2, 7, 6), (3, 3), (2, 2), (1, 1), (1, 1)),
                              ("max_overlap_dilated", (2, 1, 7, 8), (3, 2), (1, 2), (1, 1), (2, 1))]:
    cid = f"dt_max_pool2d_{name}"
    add(cid, "dt_max_pool2d", lambda v, k=k, st=st, p=p, d=d: F.max_pool2d(v[0], k, st, p, d),
        [make_input(R(cid), xs)], params={"kernel_size": list(k), "stride": list(st), "padding": list(p),
                                          "dilation": list(d)}, grad_fn=False)
for name, xs, k, st, p, d in [("max_ceil_3x3_s2_p1", (1, 2, 6, 5), (3, 3), (2, 2), (1, 1), (1, 1)),
                              ("max_ceil_2x2_s2_odd", (2, 1, 5, 7), (2, 2), (2, 2), (0, 0), (1, 1))]:
    cid = f"dt_max_pool2d_{name}"
    add(cid, "dt_max_pool2d", lambda v, k=k, st=st, p=p, d=d: F.max_pool2d(v[0], k, st, p, d, ceil_mode=True),
        [make_input(R(cid), xs)], params={"kernel_size": list(k), "stride": list(st), "padding": list(p),
                                          "dilation": list(d), "ceil_mode": 1}, grad_fn=False)
for name, xs, k, st, p, incl in [("avg_ceil_3x3_s2_p1_incl", (1, 2, 6, 5), (3, 3), (2, 2), (1, 1), 1),
                                 ("avg_ceil_2x3_excl", (2, 1, 5, 7), (2, 3), (2, 2), (1, 1), 0)]:
    cid = f"dt_avg_pool2d_{name}"
    add(cid, "dt_avg_pool2d", lambda v, k=k, st=st, p=p, incl=incl: F.avg_pool2d(v[0], k, st, p, ceil_mode=True,
                                                                              count_include_pad=bool(incl)),
        [make_input(R(cid), xs)], params={"kernel_size": list(k), "stride": list(st), "padding": list(p),
                                          "count_include_pad": incl, "ceil_mode": 1}, grad_fn=False)
for name, xs, k, st, p, incl in [("avg_3x3_s2_p1_incl", (1, 2, 7, 6), (3, 3), (2, 2), (1, 1), 1),
                                 ("avg_2x3_excl", (2, 1, 5, 7), (2, 3), (1, 2), (1, 1), 0)]:
    cid = f"dt_avg_pool2d_{name}"
    add(cid, "dt_avg_pool2d", lambda v, k=k, st=st, p=p, incl=incl: F.avg_pool2d(v[0], k, st, p,
                                                                              count_include_pad=bool(incl)),
        [make_input(R(cid), xs)], params={"kernel_size": list(k), "stride": list(st), "padding": list(p),
                                          "count_include_pad": incl}, grad_fn=False)
for name, xs, size in [("uneven", (1, 2, 7, 5), (3, 2)), ("to_1x1", (2, 3, 4, 4), (1, 1))]:
    cid = f"dt_adaptive_avg_pool2d_{name}"
    add(cid, "dt_adaptive_avg_pool2d", lambda v, size=size: F.adaptive_avg_pool2d(v[0], size),
        [make_input(R(cid), xs)], params={"output_size": list(size)}, grad_fn=False)

# ----------------------------------------------------------------------------- views and joins

r = R("views")
add("dt_reshape", "dt_reshape", lambda v: v[0].reshape(4, 3), [make_input(r, (2, 6))], params={"shape": [4, 3]})
add("dt_reshape_noncontig", "dt_reshape", lambda v: v[0].reshape(6), [make_input(r, (3, 2), views=[["transpose", 0, 1]])],
    params={"shape": [6]}, grad_fn=False)
add("dt_view", "dt_view", lambda v: v[0].view(3, 2, 2), [make_input(r, (2, 6))], params={"shape": [3, 2, 2]})
add("dt_transpose", "dt_transpose", lambda v: v[0].transpose(0, 2), [make_input(r, (2, 3, 4))],
    params={"dim0": 0, "dim1": 2})
add("dt_permute", "dt_permute", lambda v: v[0].permute(2, 0, 1), [make_input(r, (2, 3, 4))], params={"dims": [2, 0, 1]})
add("dt_narrow", "dt_narrow", lambda v: v[0].narrow(1, 1, 2), [make_input(r, (3, 4))],
    params={"dim": 1, "start": 1, "length": 2})
add("dt_squeeze", "dt_squeeze", lambda v: v[0].squeeze(1), [make_input(r, (3, 1, 2))], params={"dims": [1]})
add("dt_squeeze_all", "dt_squeeze", lambda v: v[0].squeeze(), [make_input(r, (1, 3, 1))], params={"dims": []})
add("dt_unsqueeze", "dt_unsqueeze", lambda v: v[0].unsqueeze(1), [make_input(r, (3, 2))], params={"dim": 1})
add("dt_expand", "dt_expand", lambda v: v[0].expand(2, 3, 4), [make_input(r, (3, 1))], params={"shape": [2, 3, 4]})
add("dt_flatten", "dt_flatten", lambda v: v[0].flatten(1, 2), [make_input(r, (2, 3, 4))],
    params={"start_dim": 1, "end_dim": 2})
add("dt_contiguous", "dt_contiguous", lambda v: v[0].contiguous(), [make_input(r, (3, 2), views=[["transpose", 0, 1]])])
add("dt_tensor_to_float32", "dt_tensor_to", lambda v: v[0].to(torch.float32), [make_input(r, (2, 3))],
    params={"dtype": "float32"}, fd=False)
add("dt_cat", "dt_cat", lambda v: torch.cat(v, 1), [make_input(r, (2, 3)), make_input(r, (2, 1)), make_input(r, (2, 2))],
    params={"dim": 1})
add("dt_stack", "dt_stack", lambda v: torch.stack(v, 1), [make_input(r, (2, 3)), make_input(r, (2, 3))],
    params={"dim": 1})
add("dt_chunk", "dt_chunk", lambda v: list(torch.chunk(v[0], 3, 1)), [make_input(r, (2, 5))],
    params={"chunks": 3, "dim": 1}, grad_fn=False)
add("dt_split", "dt_split", lambda v: list(torch.split(v[0], 2, 0)), [make_input(r, (5, 2))],
    params={"split_size": 2, "dim": 0}, grad_fn=False)
idx_spec = {"dtype": "int64", "shape": [4], "data": [2, 0, 2, 1], "views": [], "requires_grad": False}
add("dt_index_select", "dt_index_select", lambda v: torch.index_select(v[0], 1, v[1]),
    [make_input(r, (2, 3)), (idx_spec, torch.tensor([2, 0, 2, 1]))], params={"dim": 1})
gidx = [[0, 2, 2], [1, 1, 0]]
gidx_spec = {"dtype": "int64", "shape": [2, 3], "data": sum(gidx, []), "views": [], "requires_grad": False}
add("dt_gather", "dt_gather", lambda v: torch.gather(v[0], 1, v[1]),
    [make_input(r, (2, 4)), (gidx_spec, torch.tensor(gidx))], params={"dim": 1})
gidx2 = [[0, 2]]
gidx2_spec = {"dtype": "int64", "shape": [1, 2], "data": [0, 2], "views": [], "requires_grad": False}
add("dt_gather_smaller_index", "dt_gather", lambda v: torch.gather(v[0], 1, v[1]),
    [make_input(r, (2, 4)), (gidx2_spec, torch.tensor(gidx2))], params={"dim": 1})
iadd_idx = [2, 0, 2]
iadd_spec = {"dtype": "int64", "shape": [3], "data": iadd_idx, "views": [], "requires_grad": False}
add("dt_index_add", "dt_index_add", lambda v: torch.index_add(v[0], 1, v[1], v[2]),
    [make_input(r, (3, 4)), (iadd_spec, torch.tensor(iadd_idx)), make_input(r, (3, 3))], params={"dim": 1})
add("dt_scatter_add", "dt_scatter_add", lambda v: torch.scatter_add(v[0], 1, v[1], v[2]),
    [make_input(r, (2, 4)), (gidx_spec, torch.tensor(gidx)), make_input(r, (2, 3))], params={"dim": 1})
# (src larger than index: torch 1.13's ScatterAddBackward0 returns index's shape and fails;
# tests/test_autograd.cpp checks devtensor's zero-padded gradient by hand.)
# ----------------------------------------------------------------------------- normalisation
# float64 with finite differences; weight and bias are leaves too. Batch norm in training
# (batch statistics; the running tensors are not leaves) and in eval (the running ones).
NORM_NAMES = ["running_mean", "running_var", "weight", "bias"]


def norm_case(cid, op, xs, cshape, has, fn, params, views=()):
    r = R(cid)
    inputs = [make_input(r, xs, views=views)]
    for name in NORM_NAMES:
        if name in has:
            running = name.startswith("running")
            low = 0.5 if name in ("running_var", "weight") else -1.0
            inputs.append(make_input(r, cshape, low=low, high=2.0, grad=not running))

    def call(v):
        a = dict(zip([n for n in NORM_NAMES if n in has], v[1:]))
        # F.batch_norm writes the running tensors: give it copies so that reruns agree
        a = {k: (t.detach().clone() if k.startswith("running") else t) for k, t in a.items()}
        return fn(v[0], a)
    add(cid, op, call, inputs, params=dict(params, has=has, eps=1e-5))


norm_case("dt_batch_norm_train", "dt_batch_norm", (4, 3, 3, 2), (3,), ["running_mean", "running_var", "weight", "bias"],
          lambda x, a: F.batch_norm(x, a["running_mean"], a["running_var"], a["weight"], a["bias"], True, 0.1, 1e-5),
          {"training": 1, "momentum": 0.1})
norm_case("dt_batch_norm_train_2d_input", "dt_batch_norm", (5, 4), (4,), ["weight", "bias"],
          lambda x, a: F.batch_norm(x, None, None, a["weight"], a["bias"], True, 0.1, 1e-5),
          {"training": 1, "momentum": 0.1})
norm_case("dt_batch_norm_train_no_affine_transposed", "dt_batch_norm", (3, 2, 4, 3), (2,), [],
          lambda x, a: F.batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
          {"training": 1, "momentum": 0.1}, views=[["transpose", 2, 3]])
norm_case("dt_batch_norm_eval", "dt_batch_norm", (3, 3, 2, 2), (3,), ["running_mean", "running_var", "weight", "bias"],
          lambda x, a: F.batch_norm(x, a["running_mean"], a["running_var"], a["weight"], a["bias"], False, 0.1, 1e-5),
          {"training": 0, "momentum": 0.1})
norm_case("dt_layer_norm", "dt_layer_norm", (3, 4, 5), (4, 5), ["weight", "bias"],
          lambda x, a: F.layer_norm(x, (4, 5), a["weight"], a["bias"], 1e-5), {"normalized_shape": [4, 5]})
norm_case("dt_layer_norm_no_affine", "dt_layer_norm", (4, 6), (6,), [],
          lambda x, a: F.layer_norm(x, (6,), None, None, 1e-5), {"normalized_shape": [6]})
norm_case("dt_group_norm", "dt_group_norm", (2, 6, 3, 2), (6,), ["weight", "bias"],
          lambda x, a: F.group_norm(x, 3, a["weight"], a["bias"], 1e-5), {"num_groups": 3})
norm_case("dt_group_norm_3d_no_affine", "dt_group_norm", (3, 4, 5), (4,), [],
          lambda x, a: F.group_norm(x, 2, None, None, 1e-5), {"num_groups": 2})
emb_idx = [[1, 0, 4], [4, 2, 0]]
emb_spec = {"dtype": "int64", "shape": [2, 3], "data": sum(emb_idx, []), "views": [], "requires_grad": False}
add("dt_embedding", "dt_embedding", lambda v: F.embedding(v[1], v[0]),
    [make_input(R("dt_embedding"), (5, 3)), (emb_spec, torch.tensor(emb_idx))], params={"padding_idx": None})
add("dt_embedding_padding_idx", "dt_embedding", lambda v: F.embedding(v[1], v[0], padding_idx=0),
    [make_input(R("dt_embedding_padding_idx"), (5, 3)), (emb_spec, torch.tensor(emb_idx))], params={"padding_idx": 0},
    fd=False)  # by definition the padding row's gradient is 0, not its finite difference

# scaled dot-product attention: the math of torch 2.x's F.scaled_dot_product_attention
def sdpa(q, k, v, mask=None, causal=False):
    s = (q / (q.shape[-1] ** 0.5)) @ k.transpose(-2, -1)
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return torch.softmax(s, -1) @ v


r = R("sdpa")
add("dt_scaled_dot_product_attention", "dt_scaled_dot_product_attention", lambda v: sdpa(v[0], v[1], v[2]),
    [make_input(r, (2, 3, 4)), make_input(r, (2, 5, 4)), make_input(r, (2, 5, 3))], params={"is_causal": 0},
    grad_fn=False)
add("dt_scaled_dot_product_attention_causal", "dt_scaled_dot_product_attention",
    lambda v: sdpa(v[0], v[1], v[2], causal=True),
    [make_input(r, (2, 4, 3)), make_input(r, (2, 4, 3)), make_input(r, (2, 4, 2))], params={"is_causal": 1},
    grad_fn=False)
sdpa_mask = {"dtype": "float64", "shape": [3, 5], "data": [float(x) for x in r.uniform(-1, 1, 15)], "views": [],
             "requires_grad": False}
add("dt_scaled_dot_product_attention_float_mask", "dt_scaled_dot_product_attention",
    lambda v: sdpa(v[0], v[1], v[2], v[3]),
    [make_input(r, (2, 3, 4)), make_input(r, (2, 5, 4)), make_input(r, (2, 5, 3)),
     (sdpa_mask, torch.tensor(sdpa_mask["data"], dtype=torch.float64).reshape(3, 5))], params={"is_causal": 0},
    grad_fn=False)

# ----------------------------------------------------------------------------- select, var, std

rc = R("clamp")
add("dt_clamp_both", "dt_clamp", lambda v: torch.clamp(v[0], -0.75, 0.8),
    [make_input(rc, (3, 4), values=[-1.9, -1.2, -0.5, -0.1, 0.2, 0.6, 1.1, 1.7, -0.3, 0.4, 1.3, -1.4])],
    params={"min": -0.75, "max": 0.8})
add("dt_clamp_min_only", "dt_clamp", lambda v: torch.clamp(v[0], min=0.1),
    [make_input(rc, (5,), values=[-1.0, -0.2, 0.3, 0.9, 1.5])], params={"min": 0.1, "max": None})
# At a bound the gradient passes (min <= x <= max), as PyTorch's ClampBackward1.
add("dt_clamp_at_bounds", "dt_clamp", lambda v: torch.clamp(v[0], -0.5, 0.5),
    [make_input(rc, (4,), values=[-0.5, 0.5, 0.0, 2.0])], params={"min": -0.5, "max": 0.5}, fd=False)
# pad: constant with a crop (ConstantPadNdBackward0); reflect, replicate and circular,
# where an element's gradient sums over its copies
rp = R("pad")
add("dt_pad_constant_crop", "dt_pad", lambda v: torch.nn.functional.pad(v[0], (1, -1, -1, 2), value=0.5),
    [make_input(rp, (3, 4))], params={"pad": [1, -1, -1, 2], "mode": "constant", "value": 0.5})
for mode in ["reflect", "replicate", "circular"]:
    add(f"dt_pad_{mode}", "dt_pad", lambda v, mode=mode: torch.nn.functional.pad(v[0], (2, 1, 1, 2), mode=mode),
        [make_input(rp, (1, 2, 3, 4))], params={"pad": [2, 1, 1, 2], "mode": mode, "value": 0.0}, grad_fn=False)
ri = R("interpolate")
for mode, shape, size, align in [("nearest", (1, 2, 3, 4), [5, 7], 0), ("linear", (2, 1, 5), [8], 0),
                                 ("bilinear", (1, 2, 3, 4), [5, 3], 0), ("bilinear", (1, 1, 4, 3), [6, 5], 1),
                                 ("trilinear", (1, 1, 2, 3, 2), [3, 4, 4], 0)]:
    kw = {"size": size, "mode": mode}
    if mode != "nearest":
        kw["align_corners"] = bool(align)
    add(f"dt_interpolate_{mode}_align{align}", "dt_interpolate",
        lambda v, kw=kw: torch.nn.functional.interpolate(v[0], **kw), [make_input(ri, shape)],
        params={"size": size, "scale_factor": None, "mode": mode, "align_corners": align})
rl = R("leaky_relu")
add("dt_leaky_relu", "dt_leaky_relu", lambda v: torch.nn.functional.leaky_relu(v[0], 0.2),
    [make_input(rl, (3, 4))], params={"negative_slope": 0.2})
add("dt_leaky_relu_at_zero", "dt_leaky_relu", lambda v: torch.nn.functional.leaky_relu(v[0], -0.3),
    [make_input(rl, (4,), values=[-1.0, 0.0, 0.5, 2.0])], params={"negative_slope": -0.3}, fd=False)
mask_spec = {"dtype": "bool", "shape": [3, 1], "data": [1, 0, 1], "views": [], "requires_grad": False}
add("dt_masked_fill", "dt_masked_fill", lambda v: v[0].masked_fill(v[1], -3.0),
    [make_input(R("masked_fill"), (3, 4)), (mask_spec, torch.tensor([[True], [False], [True]]))],
    params={"value": -3.0})
for op, f in [("dt_triu", torch.triu), ("dt_tril", torch.tril)]:
    for d in [0, 1, -1]:
        cid = f"{op}_d{d}".replace("-", "m")
        add(cid, op, lambda v, f=f, d=d: f(v[0], d), [make_input(R(cid), (2, 3, 4))], params={"diagonal": d})
for op, f in [("dt_var", torch.var), ("dt_std", torch.std)]:
    for dims, corr, keep in [([], 1, 0), ([1], 1, 0), ([0, 2], 0, 1), ([-1], 2, 0)]:
        cid = f"{op}_dims{'_'.join(str(d) for d in dims) or 'all'}_c{corr}_keep{keep}".replace("-", "m")
        add(cid, op, lambda v, f=f, d=dims, c=corr, k=keep: f(v[0], dim=d or None, correction=c, keepdim=bool(k)),
            [make_input(R(cid), (2, 3, 4))], params={"dims": dims, "correction": corr, "keepdim": keep})
    cid = f"{op}_float32"
    add(cid, op, lambda v, f=f: f(v[0], dim=[1], correction=1), [make_input(R(cid), (3, 5), dtype=torch.float32)],
        params={"dims": [1], "correction": 1, "keepdim": 0})

# logsumexp (the softmax over the reduced dims) and linalg.vector_norm by order, with
# PyTorch's formulas also where the norm is not differentiable (a zero vector, zeros
# with ord < 1, ties of the inf-norms): there finite differences do not apply.
for dims, keep in [([], 0), ([1], 0), ([0, 2], 1), ([-1], 1)]:
    cid = f"dt_logsumexp_dims{'_'.join(str(d) for d in dims) or 'all'}_keep{keep}".replace("-", "m")
    add(cid, "dt_logsumexp", lambda v, d=dims, k=keep: torch.logsumexp(v[0], dim=d or [0, 1, 2], keepdim=bool(k)),
        [make_input(R(cid), (2, 3, 4))], params={"dims": dims, "keepdim": keep})
add("dt_logsumexp_float32", "dt_logsumexp", lambda v: torch.logsumexp(v[0], dim=1),
    [make_input(R("dt_logsumexp_float32"), (3, 5), dtype=torch.float32)], params={"dims": [1], "keepdim": 0})
add("dt_logsumexp_large_values", "dt_logsumexp", lambda v: torch.logsumexp(v[0], dim=1),
    [make_input(R("lse_large"), (2, 3), values=[700.0, 701.0, 699.5, -700.0, -702.0, -699.0])],
    params={"dims": [1], "keepdim": 0})
for name, o in [("2", 2.0), ("1", 1.0), ("3", 3.0), ("0_5", 0.5), ("m1", -1.0), ("1_5", 1.5), ("inf", "inf"),
                ("minf", "-inf")]:
    ordv = float(o)
    cid = f"dt_vector_norm_ord{name}"
    add(cid, "dt_vector_norm", lambda v, o=ordv: torch.linalg.vector_norm(v[0], ord=o, dim=1),
        [make_input(R(cid), (3, 4), low=0.3, high=2.0)], params={"ord": o, "dims": [1], "keepdim": 0})
    # zeros: a whole zero row and single zeros, and ties of the largest and smallest |x|
    cid = f"dt_vector_norm_ord{name}_zeros_ties"
    add(cid, "dt_vector_norm", lambda v, o=ordv: torch.linalg.vector_norm(v[0], ord=o, dim=[0], keepdim=True),
        [make_input(R(cid), (4, 3), values=[0.0, 1.0, -2.0, 0.0, -1.0, 2.0, 0.0, 0.5, -0.5, 0.0, 0.0, 2.0])],
        params={"ord": o, "dims": [0], "keepdim": 1}, fd=False)
add("dt_vector_norm_ord0", "dt_vector_norm", lambda v: torch.linalg.vector_norm(v[0], ord=0),
    [make_input(R("dt_vector_norm_ord0"), (3, 4))], params={"ord": 0.0, "dims": [], "keepdim": 0}, fd=False)
add("dt_vector_norm_all_float32", "dt_vector_norm", lambda v: torch.linalg.vector_norm(v[0]),
    [make_input(R("norm_all_f32"), (2, 3, 4), dtype=torch.float32)], params={"ord": 2.0, "dims": [], "keepdim": 0})

# flip and roll are permutations; repeat adds its copies' gradients
add("dt_flip", "dt_flip", lambda v: torch.flip(v[0], [0, 2]), [make_input(R("dt_flip"), (2, 3, 4))],
    params={"dims": [0, 2]})
add("dt_roll", "dt_roll", lambda v: torch.roll(v[0], [1, -2], [0, 2]), [make_input(R("dt_roll"), (2, 3, 4))],
    params={"shifts": [1, -2], "dims": [0, 2]})
add("dt_roll_flat", "dt_roll", lambda v: torch.roll(v[0], 5), [make_input(R("dt_roll_flat"), (3, 4))],
    params={"shifts": [5], "dims": []})
add("dt_repeat", "dt_repeat", lambda v: v[0].repeat(2, 1, 3), [make_input(R("dt_repeat"), (2, 3))],
    params={"repeats": [2, 1, 3]})
add("dt_repeat_transposed", "dt_repeat", lambda v: v[0].repeat(3, 2),
    [make_input(R("dt_repeat_t"), (3, 2), views=[["transpose", 0, 1]])], params={"repeats": [3, 2]})

# normalize, cosine_similarity, pairwise_distance (F's, PyTorch 1.13's formulas)
Fn = torch.nn.functional
add("dt_normalize", "dt_normalize", lambda v: Fn.normalize(v[0], p=2.0, dim=1),
    [make_input(R("dt_normalize"), (3, 4))], params={"ord": 2.0, "dim": 1, "eps": 1e-12})
add("dt_normalize_ord3_dim0", "dt_normalize", lambda v: Fn.normalize(v[0], p=3.0, dim=0),
    [make_input(R("dt_normalize_3"), (3, 4))], params={"ord": 3.0, "dim": 0, "eps": 1e-12})
add("dt_cosine_similarity", "dt_cosine_similarity", lambda v: Fn.cosine_similarity(v[0], v[1], dim=1),
    [make_input(R("dt_cosine_a"), (3, 5)), make_input(R("dt_cosine_b"), (3, 5))], params={"dim": 1, "eps": 1e-8})
add("dt_cosine_similarity_broadcast", "dt_cosine_similarity", lambda v: Fn.cosine_similarity(v[0], v[1], dim=-1),
    [make_input(R("dt_cosine_ba"), (2, 1, 4)), make_input(R("dt_cosine_bb"), (3, 4))], params={"dim": -1, "eps": 1e-8})
add("dt_pairwise_distance", "dt_pairwise_distance", lambda v: Fn.pairwise_distance(v[0], v[1]),
    [make_input(R("dt_pdist_a"), (3, 5)), make_input(R("dt_pdist_b"), (3, 5))],
    params={"ord": 2.0, "eps": 1e-6, "keepdim": 0})
add("dt_pairwise_distance_ord1_keepdim", "dt_pairwise_distance",
    lambda v: Fn.pairwise_distance(v[0], v[1], p=1.0, keepdim=True),
    [make_input(R("dt_pdist1_a"), (2, 4)), make_input(R("dt_pdist1_b"), (4,))],
    params={"ord": 1.0, "eps": 1e-6, "keepdim": 1})

# masked_select: the gradient goes back to the selected positions, summed over broadcast dims
sel_mask = {"dtype": "bool", "shape": [3, 1], "data": [1, 0, 1], "views": [], "requires_grad": False}
add("dt_masked_select_broadcast_mask", "dt_masked_select", lambda v: torch.masked_select(v[0], v[1]),
    [make_input(R("dt_masked_select_bm"), (3, 4)), (sel_mask, torch.tensor([[True], [False], [True]]))])
wide = [bool(b) for b in np.random.default_rng(7).integers(0, 2, size=24)]
wide_mask = {"dtype": "bool", "shape": [2, 3, 4], "data": [int(b) for b in wide], "views": [], "requires_grad": False}
add("dt_masked_select_broadcast_input", "dt_masked_select", lambda v: torch.masked_select(v[0], v[1]),
    [make_input(R("dt_masked_select_bi"), (3, 1), views=[]),
     (wide_mask, torch.tensor(wide).reshape(2, 3, 4))])
# (torch 1.13's backward scatters into zeros_like(input, preserve_format) of the broadcast
# transposed input in memory order, which misplaces gradients, e.g. element 9's goes to 2 and
# 2's to 9: .contiguous() first gives the true gradient, which a hand check confirms)
add("dt_masked_select_transposed", "dt_masked_select", lambda v: torch.masked_select(v[0].contiguous(), v[1]),
    [make_input(R("dt_masked_select_t"), (4, 3), views=[["transpose", 0, 1]]),
     (wide_mask, torch.tensor(wide).reshape(2, 3, 4))])

# a graph that reuses an input: gradients from both uses add up
add("reuse_mul_self", "dt_mul", lambda v: v[0] * v[0], [make_input(r, (3,))], params={"reuse": True})

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad_cases.json")
with open(out, "w") as fh:
    json.dump({"generator": "tests/reference/gen_grad_reference.py", "torch": torch.__version__,
               "cases": CASES}, fh, indent=None, separators=(",", ":"))
    fh.write("\n")
print(f"{len(CASES)} cases -> {out}")

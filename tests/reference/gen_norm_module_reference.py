#!/usr/bin/env python3
"""Generates tests/reference/norm_module_cases.json: PyTorch references for devtensor's
normalisation and embedding modules (BatchNorm1d/2d, LayerNorm, GroupNorm, Embedding).

Regenerate (Debian's interpreter has torch and numpy):

    /usr/bin/python3 tests/reference/gen_norm_module_reference.py

Deterministic (numpy generators with fixed seeds). tests/test_norm.cpp reads it. Each case:

  id, module (PyTorch's class name), args (the constructor's arguments, PyTorch's names;
  momentum null is None), dtype,
  state     the module's whole state_dict (parameters randomised away from their
            initial values, buffers as PyTorch keeps them) as {name: {dtype, shape, data}},
            which the test loads with dt_module_load_state_dict, so the names must match
  steps     [{train (mode), input {dtype, shape, data, views}, weights (loss = sum(out *
            weights)), output {shape, values}, input_grad (values, or null for indices),
            grads {parameter: values}}]: the gradients accumulate over the steps, as they
            do without zero_grad
  final     the state_dict after the steps {name: values}: running statistics updated by
            each training step, num_batches_tracked counted
"""
import json
import os

import numpy as np
import torch
import torch.nn as nn

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64"}
CASES = []


def spec(t, views=()):
    t = t.detach()
    return {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data": [v for v in t.reshape(-1).tolist()],
            "views": [list(v) for v in views]}


def values(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def add(cid, module_cls, args, dtype, inputs, seed, index_input=False):
    """inputs: list of (train, shape or index data, views) per step."""
    g = np.random.default_rng(seed)
    torch_dtype = {"float32": torch.float32, "float64": torch.float64}[dtype]
    kw = dict(args)
    m = module_cls(**kw).to(torch_dtype)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(torch.tensor(g.uniform(0.5, 1.5, size=tuple(p.shape)), dtype=torch_dtype))
        for name, b in m.named_buffers():
            if name == "running_mean":
                b.copy_(torch.tensor(g.uniform(-0.5, 0.5, size=tuple(b.shape)), dtype=torch_dtype))
            elif name == "running_var":
                b.copy_(torch.tensor(g.uniform(0.5, 2.0, size=tuple(b.shape)), dtype=torch_dtype))
            elif name == "num_batches_tracked":
                b.fill_(3)
        if getattr(m, "padding_idx", None) is not None:
            m.weight[m.padding_idx].fill_(0.0)
    state = {k: spec(v) for k, v in m.state_dict().items()}
    steps = []
    for train, shape_or_idx, views in inputs:
        m.train(train)
        if index_input:
            x = torch.tensor(shape_or_idx, dtype=torch.int64)
            xv = x
        else:
            x = torch.tensor(np.round(g.normal(0.3, 1.5, size=tuple(shape_or_idx)), 4), dtype=torch_dtype,
                             requires_grad=True)
            xv = x
            for v in views:
                xv = xv.transpose(v[1], v[2])
        out = m(xv)
        w = torch.tensor(g.uniform(-1, 1, size=tuple(out.shape)), dtype=torch_dtype)
        (out * w).sum().backward()
        steps.append({"train": bool(train), "input": spec(x, views), "weights": spec(w),
                      "output": {"shape": list(out.shape), "values": values(out)},
                      "input_grad": None if index_input else values(x.grad),
                      "grads": {n: values(p.grad) for n, p in m.named_parameters() if p.grad is not None}})
    final = {k: values(v) for k, v in m.state_dict().items()}
    args_json = {k: (list(v) if isinstance(v, tuple) else v) for k, v in args.items()}
    CASES.append({"id": cid, "module": module_cls.__name__, "args": args_json, "dtype": dtype, "state": state,
                  "steps": steps, "final": final})


for dt in ["float32", "float64"]:
    add(f"batch_norm2d_{dt}", nn.BatchNorm2d, {"num_features": 3}, dt,
        [(True, (4, 3, 5, 3), []), (True, (2, 3, 3, 4), [["transpose", 2, 3]]), (False, (3, 3, 2, 2), [])], 1)
    add(f"batch_norm2d_momentum_none_{dt}", nn.BatchNorm2d, {"num_features": 2, "momentum": None, "eps": 1e-3}, dt,
        [(True, (3, 2, 2, 3), []), (True, (2, 2, 3, 3), []), (False, (1, 2, 2, 2), [])], 2)
    add(f"batch_norm1d_3d_{dt}", nn.BatchNorm1d, {"num_features": 4, "momentum": 0.3}, dt,
        [(True, (5, 4, 3), []), (False, (2, 4, 6), [])], 3)
    add(f"batch_norm1d_untracked_no_affine_{dt}", nn.BatchNorm1d,
        {"num_features": 5, "affine": False, "track_running_stats": False}, dt,
        [(True, (6, 5), []), (False, (4, 5), [])], 4)
    add(f"layer_norm_{dt}", nn.LayerNorm, {"normalized_shape": (3, 4)}, dt,
        [(True, (2, 5, 3, 4), []), (False, (3, 4), [])], 5)
    add(f"layer_norm_no_affine_{dt}", nn.LayerNorm, {"normalized_shape": (6,), "elementwise_affine": False,
                                                     "eps": 1e-4}, dt, [(True, (4, 6), [])], 6)
    add(f"group_norm_{dt}", nn.GroupNorm, {"num_groups": 2, "num_channels": 6}, dt,
        [(True, (3, 6, 4, 3), []), (True, (2, 6, 5), [])], 7)
    add(f"embedding_padding_{dt}", nn.Embedding, {"num_embeddings": 7, "embedding_dim": 3, "padding_idx": 2}, dt,
        [(True, [[1, 2, 6], [2, 0, 1]], []), (True, [5, 2, 2, 4], [])], 8, index_input=True)
    add(f"embedding_negative_padding_{dt}", nn.Embedding,
        {"num_embeddings": 5, "embedding_dim": 4, "padding_idx": -1}, dt,
        [(True, [[4, 0], [3, 4]], [])], 9, index_input=True)

out = os.path.join(HERE, "norm_module_cases.json")
with open(out, "w") as fh:
    json.dump({"generator": "tests/reference/gen_norm_module_reference.py", "torch": torch.__version__,
               "cases": CASES}, fh, separators=(",", ":"))
    fh.write("\n")
print(f"{len(CASES)} module cases -> {out}")

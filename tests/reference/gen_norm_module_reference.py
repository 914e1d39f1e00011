#!/usr/bin/env python3
"""Generates tests/reference/norm_module_cases.json: PyTorch references for devtensor's
normalisation, embedding and attention modules (BatchNorm1d/2d, LayerNorm, GroupNorm,
Embedding, MultiheadAttention, TransformerEncoderLayer, TransformerEncoder).

Regenerate (Debian's interpreter has torch and numpy):

    /usr/bin/python3 tests/reference/gen_norm_module_reference.py

Deterministic (numpy generators with fixed seeds). tests/test_norm.cpp reads it. Each case:

  id, module (PyTorch's class name), args (the constructor's arguments, PyTorch's names;
  momentum null is None), dtype,
  state     the module's whole state_dict (parameters randomised away from their
            initial values, buffers as PyTorch keeps them) as {name: {dtype, shape, data}},
            which the test loads with dt_module_load_state_dict, so the names must match
  steps     [{train (mode), inputs [{dtype, shape, data, views} or null for None],
            weights (loss = sum(out * weights)), output {shape, values}, input_grads
            [values, or null for indices, masks and None], grads {parameter: values}}]:
            the gradients accumulate over the steps, as they do without zero_grad
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


def add(cid, module_cls, args, dtype, inputs, seed, index_input=False, make=None):
    """inputs: per step (train, shape or index data, views), or (train, [extra inputs]) with
    make(g, dtype) -> module for attention modules: extra inputs are ("x", shape) for a
    float input that gets a gradient, ("bool", values, shape) for a mask, None for None."""
    g = np.random.default_rng(seed)
    torch_dtype = {"float32": torch.float32, "float64": torch.float64}[dtype]
    kw = dict(args)
    m = (make() if make else module_cls(**kw)).to(torch_dtype)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(torch.tensor(g.uniform(0.5, 1.5, size=tuple(p.shape)), dtype=torch_dtype)
                    if "weight" in name and p.dim() == 1 else
                    torch.tensor(g.uniform(-0.6, 0.6, size=tuple(p.shape)), dtype=torch_dtype)
                    if make else torch.tensor(g.uniform(0.5, 1.5, size=tuple(p.shape)), dtype=torch_dtype))
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
    for step in inputs:
        train = step[0]
        m.train(train)
        specs, grads_of, args_in = [], [], []
        if make:
            for item in step[1]:
                if item is None:
                    specs.append(None)
                    args_in.append(None)
                    grads_of.append(None)
                elif item[0] == "x":
                    x = torch.tensor(np.round(g.normal(0.0, 1.0, size=tuple(item[1])), 4), dtype=torch_dtype,
                                     requires_grad=True)
                    specs.append(spec(x))
                    args_in.append(x)
                    grads_of.append(x)
                else:  # ("bool", values, shape)
                    mk = torch.tensor(item[1], dtype=torch.bool).reshape(item[2])
                    specs.append({"dtype": "bool", "shape": list(item[2]), "data": [int(v) for v in item[1]],
                                  "views": []})
                    args_in.append(mk)
                    grads_of.append(None)
            if isinstance(m, nn.MultiheadAttention):  # None key / value: the query (devtensor's self-attention)
                a = args_in + [None] * (5 - len(args_in))
                q = a[0]
                k = a[1] if a[1] is not None else q
                v = a[2] if a[2] is not None else k
                want = step[2] if len(step) > 2 else None  # {"average": ...}: the weights too
                out, attn = m(q, k, v, key_padding_mask=a[3], attn_mask=a[4], need_weights=True,
                              average_attn_weights=bool(want and want["average"]))
            else:
                out = m(*args_in)
        else:
            shape_or_idx, views = step[1], step[2]
            if index_input:
                x = torch.tensor(shape_or_idx, dtype=torch.int64)
                xv = x
                grads_of.append(None)
            else:
                x = torch.tensor(np.round(g.normal(0.3, 1.5, size=tuple(shape_or_idx)), 4), dtype=torch_dtype,
                                 requires_grad=True)
                xv = x
                for v in views:
                    xv = xv.transpose(v[1], v[2])
                grads_of.append(x)
            specs.append(spec(x, views))
            out = m(xv)
        w = torch.tensor(g.uniform(-1, 1, size=tuple(out.shape)), dtype=torch_dtype)
        loss = (out * w).sum()
        attn_spec = None
        if make and isinstance(m, nn.MultiheadAttention) and len(step) > 2:
            aw = torch.tensor(g.uniform(-1, 1, size=tuple(attn.shape)), dtype=torch_dtype)
            loss = loss + (attn * aw).sum()
            attn_spec = {"average": step[2]["average"], "weights": spec(aw),
                         "output": {"shape": list(attn.shape), "values": values(attn)}}
        loss.backward()
        steps.append({"train": bool(train), "inputs": specs, "weights": spec(w), "attn_weights": attn_spec,
                      "output": {"shape": list(out.shape), "values": values(out)},
                      "input_grads": [None if x is None else values(x.grad) for x in grads_of],
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

# Attention: dropout 0 so that training steps are deterministic; masks bool (True = not
# allowed) as nn.MultiheadAttention takes them. Key padding masks leave each query a key.
L, S, N, E = 4, 5, 2, 8
KPM = ("bool", [0, 0, 0, 1, 1, 0, 0, 0, 0, 1], (N, S))
CAUSAL = ("bool", [int(j > i) for i in range(L) for j in range(L)], (L, L))
for dt in ["float32", "float64"]:
    mha = {"embed_dim": E, "num_heads": 2}
    add(f"mha_self_{dt}", nn.MultiheadAttention, mha, dt,
        [(True, [("x", (L, N, E))]), (False, [("x", (L, N, E)), None, None, None, CAUSAL])], 10,
        make=lambda: nn.MultiheadAttention(E, 2))
    add(f"mha_cross_batch_first_{dt}", nn.MultiheadAttention, dict(mha, batch_first=True), dt,
        [(True, [("x", (N, L, E)), ("x", (N, S, E)), ("x", (N, S, E)), KPM])], 11,
        make=lambda: nn.MultiheadAttention(E, 2, batch_first=True))
    add(f"mha_unbatched_no_bias_{dt}", nn.MultiheadAttention, dict(mha, num_heads=4, bias=False), dt,
        [(True, [("x", (L, E)), ("x", (S, E)), ("x", (S, E))])], 12,
        make=lambda: nn.MultiheadAttention(E, 4, bias=False))
    # need_weights=True (dt_multihead_attention_forward): averaged and per head, the loss
    # summing both outputs so that the weights' gradient is checked too
    add(f"mha_weights_cross_masked_{dt}", nn.MultiheadAttention, mha, dt,
        [(True, [("x", (L, N, E)), ("x", (S, N, E)), ("x", (S, N, E)), KPM], {"average": True}),
         (False, [("x", (L, N, E)), ("x", (S, N, E)), ("x", (S, N, E)), None,
                  ("bool", [int(j > i + 1) for i in range(L) for j in range(S)], (L, S))], {"average": False})], 17,
        make=lambda: nn.MultiheadAttention(E, 2))
    add(f"mha_weights_unbatched_per_head_batch_first_{dt}", nn.MultiheadAttention,
        dict(mha, num_heads=4, batch_first=True), dt,
        [(True, [("x", (L, E)), ("x", (S, E)), ("x", (S, E))], {"average": False}),
         (True, [("x", (L, E))], {"average": True})], 18,
        make=lambda: nn.MultiheadAttention(E, 4, batch_first=True))
    enc = {"d_model": E, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0}
    add(f"encoder_layer_{dt}", nn.TransformerEncoderLayer, enc, dt,
        [(True, [("x", (L, N, E)), CAUSAL]), (False, [("x", (L, N, E)), None, KPM[:1] + ([0, 0, 1, 1, 0, 0, 0, 1], (N, L))])],
        13, make=lambda: nn.TransformerEncoderLayer(E, 2, 16, 0.0))
    add(f"encoder_layer_gelu_norm_first_batch_first_{dt}", nn.TransformerEncoderLayer,
        dict(enc, activation="gelu", norm_first=True, batch_first=True, layer_norm_eps=1e-4), dt,
        [(True, [("x", (N, L, E))])], 14,
        make=lambda: nn.TransformerEncoderLayer(E, 2, 16, 0.0, "gelu", 1e-4, True, True))
    add(f"encoder_2_layers_{dt}", nn.TransformerEncoder, {"num_layers": 2, "layer": enc}, dt,
        [(True, [("x", (L, N, E)), CAUSAL]), (False, [("x", (L, N, E))])], 15,
        make=lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(E, 2, 16, 0.0), 2,
                                           enable_nested_tensor=False))

out = os.path.join(HERE, "norm_module_cases.json")
with open(out, "w") as fh:
    json.dump({"generator": "tests/reference/gen_norm_module_reference.py", "torch": torch.__version__,
               "cases": CASES}, fh, separators=(",", ":"))
    fh.write("\n")
print(f"{len(CASES)} module cases -> {out}")

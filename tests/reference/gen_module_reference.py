#!/usr/bin/env python3
"""Generates tests/reference/module_cases.json: PyTorch references for devtensor's modules.

Regenerate (Debian's interpreter has torch and numpy):

    /usr/bin/python3 tests/reference/gen_module_reference.py

Deterministic (numpy generators with fixed seeds). tests/test_modules.cpp reads it.

  losses    {"id", "loss": "cross_entropy" | "nll" | "mse" (also K-dimensional: input
            [N, C, d1, ...], target [N, d1, ...]), "reduction": 0 none | 1 mean
            | 2 sum, "ignore_index", "label_smoothing", "weight" (list or null), "input"
            {"shape", "data"}, "target" {"shape", "data", "dtype"} (class indices as
            int64; for cross entropy, class probabilities as float64 or float32 of the
            input's shape; MSE's float64), "expected" (list of
            loss values, row-major), "input_grad" (gradient of sum(loss) w.r.t. input),
            "grad_fn" (the name of the loss's backward function)}
  training  {"id", "optimizer": "sgd" | "adam" | "adamw", "options", "layers" (the
            Linear sizes of Linear-ReLU-...-Linear), "weights" (a safetensors file under
            tests/reference/safetensors/ with the initial state_dict, which the test loads
            with dt_module_load), "x", "y", "losses" (cross-entropy per step, before the
            step)}
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float32)
torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_safetensors import serialize  # noqa: E402  (the repo's own writer of the format)


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


LOSSES = []


def class_loss(loss, w, rname, ignore, smooth, x):
    """The PyTorch loss over class indices and its input: logits x, or their log-softmax for NLL."""
    if loss == "cross_entropy":
        return nn.CrossEntropyLoss(weight=w, reduction=rname, ignore_index=ignore, label_smoothing=smooth), x
    return nn.NLLLoss(weight=w, reduction=rname, ignore_index=ignore), torch.log_softmax(x, 1)


def add_loss_case(cid, loss, reduction, ignore, smooth, w, m, inp, x, target, tspec):
    """Runs loss module m on (inp, target), backward from sum(loss), and records the case."""
    out = m(inp, target)
    out.sum().backward()
    LOSSES.append({"id": cid, "loss": loss, "reduction": reduction, "ignore_index": ignore,
                   "label_smoothing": smooth, "weight": flat(w) if w is not None else None,
                   "input": {"shape": list(x.shape), "data": flat(x)}, "log_softmax_input": loss == "nll",
                   "target": tspec, "expected": flat(out), "input_grad": flat(x.grad),
                   "grad_fn": type(out.grad_fn).__name__})


rng = np.random.default_rng(7)
N, C = 6, 4
for loss in ["cross_entropy", "nll", "mse"]:
    for reduction, rname in [(0, "none"), (1, "mean"), (2, "sum")]:
        for weighted in ([False, True] if loss != "mse" else [False]):
            for ignore, smooth in ([(-100, 0.0), (2, 0.0), (-100, 0.2), (1, 0.1)] if loss == "cross_entropy"
                                   else [(-100, 0.0), (2, 0.0)] if loss == "nll" else [(-100, 0.0)]):
                cid = f"{loss}_{rname}_{'w' if weighted else 'nw'}_ign{ignore}_ls{smooth}".replace("-", "m").replace(".", "p")
                x = torch.tensor(rng.uniform(-2, 2, size=(N, C)), dtype=torch.float64, requires_grad=True)
                w = torch.tensor(rng.uniform(0.2, 2, size=(C,)), dtype=torch.float64) if weighted else None
                if loss == "mse":
                    target = torch.tensor(rng.uniform(-1, 1, size=(N, C)), dtype=torch.float64)
                    m = nn.MSELoss(reduction=rname)
                    tspec = {"shape": [N, C], "data": flat(target), "dtype": "float64"}
                    inp = x
                else:
                    target = torch.tensor(rng.integers(0, C, size=(N,)), dtype=torch.int64)
                    target[0] = 2  # so ignore_index 2 really skips a sample
                    tspec = {"shape": [N], "data": [int(v) for v in target.tolist()], "dtype": "int64"}
                    m, inp = class_loss(loss, w, rname, ignore, smooth, x)
                add_loss_case(cid, loss, reduction, ignore, smooth, w, m, inp, x, target, tspec)

# PyTorch's K-dimensional form: input [N, C, d1, ...] with target [N, d1, ...] (a class per
# position, as in segmentation); its own generator, so the cases above keep their values.
krng = np.random.default_rng(13)
for shape in [(2, 4, 3), (2, 4, 2, 3), (1, 4, 2, 1, 2)]:
    for reduction, rname in [(0, "none"), (1, "mean"), (2, "sum")]:
        for loss, weighted, ignore, smooth in [("cross_entropy", False, -100, 0.0), ("cross_entropy", True, 2, 0.0),
                                               ("cross_entropy", True, -100, 0.2), ("cross_entropy", False, 1, 0.1),
                                               ("nll", False, -100, 0.0), ("nll", True, 2, 0.0)]:
            dims = "x".join(str(v) for v in shape)
            cid = f"{loss}_{dims}_{rname}_{'w' if weighted else 'nw'}_ign{ignore}_ls{smooth}".replace("-", "m").replace(".", "p")
            C = shape[1]
            x = torch.tensor(krng.uniform(-2, 2, size=shape), dtype=torch.float64, requires_grad=True)
            w = torch.tensor(krng.uniform(0.2, 2, size=(C,)), dtype=torch.float64) if weighted else None
            tshape = (shape[0],) + shape[2:]
            target = torch.tensor(krng.integers(0, C, size=tshape), dtype=torch.int64)
            target.view(-1)[0] = 2  # so ignore_index 2 really skips a position
            tspec = {"shape": list(tshape), "data": [int(v) for v in target.reshape(-1).tolist()], "dtype": "int64"}
            m, inp = class_loss(loss, w, rname, ignore, smooth, x)
            add_loss_case(cid, loss, reduction, ignore, smooth, w, m, inp, x, target, tspec)

# Class probabilities as the target (PyTorch's soft targets: a floating target of the
# input's shape), over [N, C], [C] and K-dimensional inputs; one float32 target (converted
# to the input's dtype). Their own generator, so the cases above keep their values.
prng = np.random.default_rng(17)
for shape, tdtype in [((6, 4), torch.float64), ((4,), torch.float64), ((2, 4, 3), torch.float64),
                      ((3, 5), torch.float32)]:
    for reduction, rname in [(0, "none"), (1, "mean"), (2, "sum")]:
        for weighted, smooth in [(False, 0.0), (True, 0.0), (True, 0.2), (False, 0.1)]:
            dims = "x".join(str(v) for v in shape)
            tname = "float32" if tdtype == torch.float32 else "float64"
            cid = f"cross_entropy_probs_{dims}_{tname}_{rname}_{'w' if weighted else 'nw'}_ls{smooth}".replace(".", "p")
            C = shape[1] if len(shape) > 1 else shape[0]
            x = torch.tensor(prng.uniform(-2, 2, size=shape), dtype=torch.float64, requires_grad=True)
            w = torch.tensor(prng.uniform(0.2, 2, size=(C,)), dtype=torch.float64) if weighted else None
            class_dim = 1 if len(shape) > 1 else 0
            target = torch.softmax(torch.tensor(prng.uniform(-2, 2, size=shape), dtype=torch.float64), class_dim)
            target = target.to(tdtype)
            tspec = {"shape": list(shape), "data": flat(target), "dtype": tname}
            m = nn.CrossEntropyLoss(weight=w, reduction=rname, label_smoothing=smooth)
            add_loss_case(cid, "cross_entropy", reduction, -100, smooth, w, m, x, x, target, tspec)

TRAINING = []
for opt_name, options in [("sgd", {"lr": 0.1, "momentum": 0.9, "dampening": 0.0, "weight_decay": 1e-4, "nesterov": 1}),
                          ("adam", {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}),
                          ("adamw", {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01})]:
    torch.manual_seed(3)
    layers = [8, 16, 3]
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    weights = "safetensors/mlp_init.safetensors"  # torch.manual_seed(3): the same for every run
    with open(os.path.join(HERE, weights), "wb") as fh:
        fh.write(serialize(list(model.state_dict().items())))
    g = np.random.default_rng(11)
    x = torch.tensor(g.uniform(-1, 1, size=(32, 8)), dtype=torch.float32)
    y = torch.tensor(g.integers(0, 3, size=(32,)), dtype=torch.int64)
    if opt_name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=options["lr"], momentum=options["momentum"],
                              dampening=options["dampening"], weight_decay=options["weight_decay"],
                              nesterov=bool(options["nesterov"]))
    elif opt_name == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=options["lr"], betas=(options["beta1"], options["beta2"]),
                               eps=options["eps"], weight_decay=options["weight_decay"])
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=options["lr"], betas=(options["beta1"], options["beta2"]),
                                eps=options["eps"], weight_decay=options["weight_decay"])
    lossf = nn.CrossEntropyLoss()
    losses = []
    for step in range(100):
        opt.zero_grad()
        loss = lossf(model(x), y)
        losses.append(float(loss))
        loss.backward()
        opt.step()
    TRAINING.append({"id": f"mlp_{opt_name}", "optimizer": opt_name, "options": options, "layers": layers,
                     "weights": weights, "x": {"shape": [32, 8], "data": flat(x)},
                     "y": [int(v) for v in y.tolist()], "losses": losses})

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module_cases.json")
with open(out, "w") as fh:
    json.dump({"generator": "tests/reference/gen_module_reference.py", "torch": torch.__version__,
               "losses": LOSSES, "training": TRAINING}, fh, separators=(",", ":"))
    fh.write("\n")
print(f"{len(LOSSES)} loss cases, {len(TRAINING)} training runs -> {out}")

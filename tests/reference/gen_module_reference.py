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
  training  {"id", "optimizer": "sgd" | "adam" | "adamw" | "rmsprop" | "adagrad", "options", "layers" (the
            Linear sizes of Linear-ReLU-...-Linear), "weights" (a safetensors file under
            tests/reference/safetensors/ with the initial state_dict, which the test loads
            with dt_module_load), "x", "y", "losses" (cross-entropy per step, before the
            step)}
  pointwise_losses  {"id", "loss": "l1" | "smooth_l1" | "huber" | "bce" | "bce_with_logits" |
            "kl_div", "reduction" (3: batchmean), "dtype", "beta", "delta", "log_target",
            "weight" / "pos_weight" ({"shape", "data"} or null), "input", "target",
            "target_requires_grad", "grad_output", "expected", "input_grad", "target_grad",
            "grad_fn"}
  clip_grad {"id", "norm_type" (a number or "inf"), "max_norm" (clip_value for "value"),
            "grads", "total_norm" (norm cases only), "clipped"}
  resume    {"id", "optimizer", "lr", "weights", "x", "y", "losses", "grad_norms",
            "state_keys"}: 20 steps, the rate cut tenfold at step 10, gradients clipped
  recurrent {"id", "kind": "lstm" | "gru" | "rnn_tanh" | "rnn_relu", the constructor's
            arguments, "dtype", "params" (name, shape, data, grad in PyTorch's order),
            "input", "h0", "c0", "output", "h_n", "c_n", "grad_output", "grad_h_n",
            "grad_c_n", "input_grad", "h0_grad", "c0_grad"}
  optim_steps {"id", "optimizer": "rmsprop" | "adagrad" | "sgd" | "adam" | "adamw",
            "options" (dt_rmsprop_new's / dt_adagrad_new's / dt_sgd_new's / dt_adam_new's
            arguments), "set" (settings changed right after construction, as
            dt_optimizer_set_option: amsgrad, maximize), "changes" ({"step", "set"}: settings
            changed before that step, as a momentum or betas schedule does through
            param_groups), "dtype", "initial" (the parameters), "grads" (per step, per
            parameter: the gradient, or null for none), "after" (the parameters after each
            step), "state" (optimizer.state_dict()'s entries: key, shape, data), "param_groups"
            (param_groups[0]'s numbers and flags, betas as beta1 and beta2)}
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


def make_optimizer(kind, params, o, extra=None):
    """torch.optim.RMSprop / Adagrad / SGD / Adam / AdamW from the options the C test passes to dt_rmsprop_new /
    dt_adagrad_new / dt_sgd_new / dt_adam_new, and the settings it then sets (extra: amsgrad, maximize)."""
    extra = {k: bool(v) for k, v in (extra or {}).items()}
    if kind == "sgd":
        return torch.optim.SGD(params, lr=o["lr"], momentum=o["momentum"], dampening=o["dampening"],
                               weight_decay=o["weight_decay"], nesterov=bool(o["nesterov"]), **extra)
    if kind in ("adam", "adamw"):
        cls = torch.optim.Adam if kind == "adam" else torch.optim.AdamW
        return cls(params, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"], weight_decay=o["weight_decay"],
                   **extra)
    if kind == "rmsprop":
        return torch.optim.RMSprop(params, lr=o["lr"], alpha=o["alpha"], eps=o["eps"],
                                   weight_decay=o["weight_decay"], momentum=o["momentum"],
                                   centered=bool(o["centered"]), **extra)
    return torch.optim.Adagrad(params, lr=o["lr"], lr_decay=o["lr_decay"], weight_decay=o["weight_decay"],
                               initial_accumulator_value=o["initial_accumulator_value"], eps=o["eps"], **extra)


def set_param_group(opt, settings):
    """dt_optimizer_set_option's names onto torch's param_groups[0] (beta1/beta2 are torch's betas)."""
    group = opt.param_groups[0]
    for name, value in settings.items():
        if name in ("beta1", "beta2"):
            b = list(group["betas"])
            b[0 if name == "beta1" else 1] = value
            group["betas"] = tuple(b)
        elif name in ("nesterov", "centered", "amsgrad", "maximize"):
            group[name] = bool(value)
        else:
            group[name] = value


TRAINING = []
for opt_name, options in [("sgd", {"lr": 0.1, "momentum": 0.9, "dampening": 0.0, "weight_decay": 1e-4, "nesterov": 1}),
                          ("adam", {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}),
                          ("adamw", {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01}),
                          # (RMSprop at lr 0.005 drives this loss to 0.009, where float32 rounding alone
                          # moves PyTorch's own curve by 2e-4: a 1e-7 nudge of one weight does the same.
                          # At 0.002 the curve is well conditioned: such a nudge moves it 3.5e-7.)
                          ("rmsprop", {"lr": 0.002, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.5,
                                       "centered": 1}),
                          ("adagrad", {"lr": 0.05, "lr_decay": 0.001, "weight_decay": 0.0,
                                       "initial_accumulator_value": 0.1, "eps": 1e-10})]:
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
    elif opt_name == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=options["lr"], betas=(options["beta1"], options["beta2"]),
                                eps=options["eps"], weight_decay=options["weight_decay"])
    else:
        opt = make_optimizer(opt_name, model.parameters(), options)
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

# The pointwise losses (L1, SmoothL1, Huber, BCE, BCEWithLogits, KLDiv): values, and the
# gradients of input and (where it requires grad) target for a random output gradient.
# Inputs include the edges PyTorch's formulas treat apart: differences exactly at 0 and
# at +-beta / +-delta, probabilities exactly 0 and 1 (BCE's logs clamped at -100),
# logits of magnitude 800 (BCEWithLogits' stable form), zero targets (KLDiv's xlogy).
# Their own generator, so the cases above keep their values.
POINTWISE = []
wrng = np.random.default_rng(23)


def pointwise_case(cid, loss, reduction, x, t, dtype=torch.float64, target_grad=False, **opts):
    rname = {0: "none", 1: "mean", 2: "sum", 3: "batchmean"}[reduction]
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    tt = torch.tensor(t, dtype=dtype, requires_grad=target_grad)
    weight = opts.get("weight")
    pos_weight = opts.get("pos_weight")
    w = torch.tensor(weight, dtype=dtype) if weight is not None else None
    pw = torch.tensor(pos_weight, dtype=dtype) if pos_weight is not None else None
    if loss == "l1":
        m = nn.L1Loss(reduction=rname)
    elif loss == "smooth_l1":
        m = nn.SmoothL1Loss(reduction=rname, beta=opts["beta"])
    elif loss == "huber":
        m = nn.HuberLoss(reduction=rname, delta=opts["delta"])
    elif loss == "bce":
        m = nn.BCELoss(weight=w, reduction=rname)
    elif loss == "bce_with_logits":
        m = nn.BCEWithLogitsLoss(weight=w, reduction=rname, pos_weight=pw)
    else:
        m = nn.KLDivLoss(reduction=rname, log_target=bool(opts["log_target"]))
    out = m(xt, tt)
    gout = torch.tensor(wrng.uniform(0.5, 1.5, size=tuple(out.shape)), dtype=dtype)
    out.backward(gout)
    spec = lambda a: None if a is None else {"shape": list(a.shape), "data": flat(a)}  # noqa: E731
    POINTWISE.append({"id": cid, "loss": loss, "reduction": reduction, "dtype": str(dtype).replace("torch.", ""),
                      "beta": opts.get("beta", 1.0), "delta": opts.get("delta", 1.0),
                      "log_target": int(opts.get("log_target", 0)), "weight": spec(w), "pos_weight": spec(pw),
                      "input": spec(xt), "target": spec(tt), "target_requires_grad": target_grad,
                      "grad_output": spec(gout), "expected": flat(out), "input_grad": flat(xt.grad),
                      "target_grad": flat(tt.grad) if target_grad else None,
                      "grad_fn": type(out.grad_fn).__name__})


def uniform(lo, hi, shape):
    return wrng.uniform(lo, hi, size=shape).tolist()


for reduction in [0, 1, 2]:
    r = {0: "none", 1: "mean", 2: "sum"}[reduction]
    # Regression losses: differences at 0, at +-0.5 and +-1 (the kinks of beta 0.5 / 1).
    x = np.array(uniform(-2, 2, (4, 3)))
    t = np.array(uniform(-2, 2, (4, 3)))
    t[0, 0] = x[0, 0]
    t[0, 1], t[0, 2] = x[0, 1] - 0.5, x[0, 2] + 0.5
    t[1, 0], t[1, 1] = x[1, 0] - 1.0, x[1, 1] + 1.0
    x, t = x.tolist(), t.tolist()
    pointwise_case(f"l1_{r}", "l1", reduction, x, t, target_grad=True)
    for beta in [1.0, 0.5, 0.0]:
        pointwise_case(f"smooth_l1_b{beta}_{r}".replace(".", "p"), "smooth_l1", reduction, x, t, beta=beta,
                       target_grad=(beta == 0.5))
    for delta in [1.0, 0.5, 2.5]:
        pointwise_case(f"huber_d{delta}_{r}".replace(".", "p"), "huber", reduction, x, t, delta=delta,
                       target_grad=(delta == 0.5))
    # BCE: probabilities with 0 and 1 in them; soft and hard targets; weights of the
    # input's shape, of the last dim, broadcast over rows.
    p = np.array(uniform(0.02, 0.98, (4, 3)))
    p[0, 0], p[0, 1] = 0.0, 1.0
    y = np.array(uniform(0, 1, (4, 3)))
    y[1] = [0.0, 1.0, 1.0]
    p, y = p.tolist(), y.tolist()
    pointwise_case(f"bce_{r}", "bce", reduction, p, y)
    # The target's gradient, -logit(input), is infinite at 0 and 1: away from them.
    pointwise_case(f"bce_target_grad_{r}", "bce", reduction, uniform(0.02, 0.98, (4, 3)), y, target_grad=True)
    pointwise_case(f"bce_w3_{r}", "bce", reduction, p, y, weight=uniform(0.2, 2, (3,)))
    pointwise_case(f"bce_w41_{r}", "bce", reduction, p, y, weight=uniform(0.2, 2, (4, 1)))
    logits = np.array(uniform(-4, 4, (4, 3)))
    logits[0, 0], logits[0, 1], logits[0, 2] = 800.0, -800.0, 0.0
    logits = logits.tolist()
    pointwise_case(f"bce_logits_{r}", "bce_with_logits", reduction, logits, y, target_grad=True)
    pointwise_case(f"bce_logits_w_{r}", "bce_with_logits", reduction, logits, y, weight=uniform(0.2, 2, (4, 3)))
    pointwise_case(f"bce_logits_pw_{r}", "bce_with_logits", reduction, logits, y, pos_weight=uniform(0.5, 3, (3,)),
                   target_grad=True)
    pointwise_case(f"bce_logits_w_pw_{r}", "bce_with_logits", reduction, logits, y, weight=uniform(0.2, 2, (1, 3)),
                   pos_weight=uniform(0.5, 3, (3,)))
for reduction in [0, 1, 2, 3]:
    r = {0: "none", 1: "mean", 2: "sum", 3: "batchmean"}[reduction]
    logp = torch.log_softmax(torch.tensor(uniform(-2, 2, (3, 5)), dtype=torch.float64), 1)
    q = torch.softmax(torch.tensor(uniform(-2, 2, (3, 5)), dtype=torch.float64), 1)
    q[0, 1] = 0.0  # xlogy(0, 0) = 0
    pointwise_case(f"kl_div_{r}", "kl_div", reduction, logp.tolist(), q.tolist(), log_target=0)
    pointwise_case(f"kl_div_log_target_{r}", "kl_div", reduction, logp.tolist(), torch.log_softmax(
        torch.tensor(uniform(-2, 2, (3, 5)), dtype=torch.float64), 1).tolist(), log_target=1, target_grad=True)
# float32, a 3-d shape, a 0-d pair and an empty pair.
x3, t3 = uniform(-2, 2, (2, 3, 4)), uniform(-2, 2, (2, 3, 4))
pointwise_case("smooth_l1_float32_3d_mean", "smooth_l1", 1, x3, t3, dtype=torch.float32, beta=0.7)
pointwise_case("huber_float32_3d_sum", "huber", 2, x3, t3, dtype=torch.float32, delta=0.7)
pointwise_case("bce_logits_float32_3d_mean", "bce_with_logits", 1, x3, uniform(0, 1, (2, 3, 4)), dtype=torch.float32,
               pos_weight=uniform(0.5, 2, (4,)))
pointwise_case("bce_float32_3d_none", "bce", 0, uniform(0.05, 0.95, (2, 3, 4)), uniform(0, 1, (2, 3, 4)),
               dtype=torch.float32)
pointwise_case("l1_0d_mean", "l1", 1, 0.25, -1.5)
pointwise_case("kl_div_0d_batchmean", "kl_div", 3, -0.5, 0.25, log_target=0)
pointwise_case("l1_empty_sum", "l1", 2, np.zeros((0, 3)).tolist(), np.zeros((0, 3)).tolist())

# torch.nn.utils.clip_grad_norm_ / clip_grad_value_ over gradients of several shapes:
# the total norm and the clipped gradients, for norms 2, 1, 3 and inf, clipping or not.
CLIP = []
crng = np.random.default_rng(29)
for cid, norm_type, max_norm in [("l2_clips", 2.0, 1.0), ("l2_keeps", 2.0, 100.0), ("l1_clips", 1.0, 2.0),
                                 ("l3_clips", 3.0, 0.5), ("inf_clips", float("inf"), 0.25), ("value", None, 0.3)]:
    shapes = [(3, 4), (4,), (2, 2, 2)]
    grads = [torch.tensor(crng.uniform(-1, 1, size=s), dtype=torch.float64) for s in shapes]
    ps = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in shapes]
    for p, g in zip(ps, grads):
        p.grad = g.clone()
    rec = {"id": cid, "norm_type": "inf" if norm_type == float("inf") else norm_type, "max_norm": max_norm,
           "grads": [{"shape": list(g.shape), "data": flat(g)} for g in grads]}
    if norm_type is None:
        torch.nn.utils.clip_grad_value_(ps, max_norm)
    else:
        rec["total_norm"] = float(torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type))
    rec["clipped"] = [flat(p.grad) for p in ps]
    CLIP.append(rec)

# A schedule and a checkpoint: the MLP above trained 20 steps with the learning rate
# dropped tenfold after step 10 (StepLR's effect) and gradients clipped to norm 0.5;
# devtensor runs the first 10 steps, saves the optimizer's state, and resumes with a new
# optimizer loaded from it, and must follow PyTorch's uninterrupted curve.
RESUME = []
for opt_name in ["sgd", "adamw"]:
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))  # the mlp_init weights again
    g = np.random.default_rng(31)
    x = torch.tensor(g.uniform(-1, 1, size=(32, 8)), dtype=torch.float32)
    y = torch.tensor(g.integers(0, 3, size=(32,)), dtype=torch.int64)
    if opt_name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
    lossf = nn.CrossEntropyLoss()
    losses, norms = [], []
    for step in range(20):
        if step == 10:
            for group in opt.param_groups:
                group["lr"] *= 0.1
        opt.zero_grad()
        loss = lossf(model(x), y)
        losses.append(float(loss))
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)))
        opt.step()
    RESUME.append({"id": f"resume_{opt_name}", "optimizer": opt_name, "lr": opt.param_groups[0]["lr"] * 10,
                   "weights": "safetensors/mlp_init.safetensors", "x": {"shape": [32, 8], "data": flat(x)},
                   "y": [int(v) for v in y.tolist()], "losses": losses, "grad_norms": norms,
                   "state_keys": sorted(f"state.{i}.{k}" for i, st in opt.state_dict()["state"].items() for k in st)})

# RNN (tanh, relu), LSTM and GRU: multi-layer, bidirectional, batch_first, unbatched,
# without bias, with and without initial states. Recorded: the parameters by state_dict
# name, the output and last states, and the gradients of input, states and every
# parameter for loss = sum(output * g) + sum(h_n * gh) (+ sum(c_n * gc)).
RECURRENT = []
rrng = np.random.default_rng(37)
for cid, kind, in_size, hidden, layers, bias, batch_first, bidir, shape, states, dtype in [
        ("lstm_1layer", "lstm", 3, 4, 1, True, False, False, (5, 2, 3), False, torch.float64),
        ("lstm_2layer_bidir_batch_first_states", "lstm", 3, 4, 2, True, True, True, (2, 5, 3), True, torch.float64),
        ("lstm_nobias_unbatched_states", "lstm", 3, 2, 1, False, False, False, (6, 3), True, torch.float64),
        ("lstm_float32_2layer", "lstm", 4, 5, 2, True, False, False, (4, 3, 4), True, torch.float32),
        ("gru_2layer_states", "gru", 3, 4, 2, True, False, False, (5, 2, 3), True, torch.float64),
        ("gru_bidir_unbatched", "gru", 2, 3, 1, True, False, True, (4, 2), False, torch.float64),
        ("gru_nobias_batch_first", "gru", 3, 4, 1, False, True, False, (2, 3, 3), True, torch.float64),
        ("rnn_tanh_2layer_bidir", "rnn_tanh", 3, 4, 2, True, False, True, (5, 2, 3), True, torch.float64),
        ("rnn_relu_batch_first", "rnn_relu", 3, 4, 1, True, True, False, (2, 6, 3), True, torch.float64)]:
    torch.manual_seed(41)
    if kind == "lstm":
        m = nn.LSTM(in_size, hidden, layers, bias=bias, batch_first=batch_first, bidirectional=bidir)
    elif kind == "gru":
        m = nn.GRU(in_size, hidden, layers, bias=bias, batch_first=batch_first, bidirectional=bidir)
    else:
        m = nn.RNN(in_size, hidden, layers, nonlinearity=kind[4:], bias=bias, batch_first=batch_first,
                   bidirectional=bidir)
    m = m.to(dtype)
    D = 2 if bidir else 1
    batched = len(shape) == 3
    N = (shape[0] if batch_first else shape[1]) if batched else None
    sshape = (layers * D, N, hidden) if batched else (layers * D, hidden)
    x = torch.tensor(rrng.uniform(-1, 1, size=shape), dtype=dtype, requires_grad=True)
    h0 = torch.tensor(rrng.uniform(-1, 1, size=sshape), dtype=dtype, requires_grad=True) if states else None
    c0 = (torch.tensor(rrng.uniform(-1, 1, size=sshape), dtype=dtype, requires_grad=True)
          if states and kind == "lstm" else None)
    if kind == "lstm":
        out, (hn, cn) = m(x, (h0, c0)) if states else m(x)
    else:
        out, hn = m(x, h0) if states else m(x)
        cn = None
    gout = torch.tensor(rrng.uniform(-1, 1, size=tuple(out.shape)), dtype=dtype)
    gh = torch.tensor(rrng.uniform(-1, 1, size=tuple(hn.shape)), dtype=dtype)
    loss = (out * gout).sum() + (hn * gh).sum()
    gc = None
    if cn is not None:
        gc = torch.tensor(rrng.uniform(-1, 1, size=tuple(cn.shape)), dtype=dtype)
        loss = loss + (cn * gc).sum()
    loss.backward()
    spec = lambda a: None if a is None else {"shape": list(a.shape), "data": flat(a)}  # noqa: E731
    RECURRENT.append({
        "id": cid, "kind": kind, "input_size": in_size, "hidden_size": hidden, "num_layers": layers, "bias": int(bias),
        "batch_first": int(batch_first), "bidirectional": int(bidir), "dtype": str(dtype).replace("torch.", ""),
        "params": [{"name": n, "shape": list(p.shape), "data": flat(p), "grad": flat(p.grad)}
                   for n, p in m.named_parameters()],
        "input": spec(x), "h0": spec(h0), "c0": spec(c0), "output": spec(out), "h_n": spec(hn), "c_n": spec(cn),
        "grad_output": spec(gout), "grad_h_n": spec(gh), "grad_c_n": spec(gc), "input_grad": flat(x.grad),
        "h0_grad": flat(h0.grad) if h0 is not None else None, "c0_grad": flat(c0.grad) if c0 is not None else None})

# RMSprop and Adagrad step by step: parameters of three shapes (one 0-d) get a given
# gradient each step (the second none at step 3, so it skips a step and its step count
# lags), and the parameters after every step and the final optimizer.state_dict() are
# recorded. Gradients include zeros (Adagrad's and RMSprop's sqrt(0) + eps). Their own
# generator, so the cases above keep their values.
OPTIM_STEPS = []
orng = np.random.default_rng(41)
for case in [
        ("rmsprop_default", "rmsprop", torch.float64,
         {"lr": 0.01, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.0, "centered": 0}),
        ("rmsprop_momentum", "rmsprop", torch.float64,
         {"lr": 0.02, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.0, "momentum": 0.8, "centered": 0}),
        ("rmsprop_centered_decay", "rmsprop", torch.float64,
         {"lr": 0.005, "alpha": 0.95, "eps": 1e-8, "weight_decay": 0.1, "momentum": 0.9, "centered": 1}),
        ("rmsprop_centered_f32", "rmsprop", torch.float32,
         {"lr": 0.01, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.0, "centered": 1}),
        ("adagrad_default", "adagrad", torch.float64,
         {"lr": 0.01, "lr_decay": 0.0, "weight_decay": 0.0, "initial_accumulator_value": 0.0, "eps": 1e-10}),
        ("adagrad_decay", "adagrad", torch.float64,
         {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.05, "initial_accumulator_value": 0.2, "eps": 1e-6}),
        ("adagrad_f32", "adagrad", torch.float32,
         {"lr": 0.05, "lr_decay": 0.01, "weight_decay": 0.0, "initial_accumulator_value": 0.5, "eps": 1e-10}),
        # settings beyond the constructors' (dt_optimizer_set_option), appended so that the cases above keep
        # their random draws
        ("adam_amsgrad", "adam", torch.float64,
         {"lr": 0.01, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.0}, {"amsgrad": 1}, {}),
        ("adam_amsgrad_decay_maximize", "adam", torch.float64,
         {"lr": 0.02, "beta1": 0.8, "beta2": 0.9, "eps": 1e-6, "weight_decay": 0.1}, {"amsgrad": 1, "maximize": 1}, {}),
        ("adamw_amsgrad_f32", "adamw", torch.float32,
         {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.05}, {"amsgrad": 1}, {}),
        ("adamw_maximize", "adamw", torch.float64,
         {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.05}, {"maximize": 1}, {}),
        ("sgd_nesterov_maximize", "sgd", torch.float64,
         {"lr": 0.1, "momentum": 0.9, "dampening": 0.0, "weight_decay": 0.01, "nesterov": 1}, {"maximize": 1}, {}),
        ("sgd_plain_maximize_f32", "sgd", torch.float32,
         {"lr": 0.05, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": 0}, {"maximize": 1}, {}),
        ("rmsprop_centered_maximize", "rmsprop", torch.float64,
         {"lr": 0.01, "alpha": 0.9, "eps": 1e-8, "weight_decay": 0.01, "momentum": 0.5, "centered": 1},
         {"maximize": 1}, {}),
        ("adagrad_maximize", "adagrad", torch.float64,
         {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.0, "initial_accumulator_value": 0.1, "eps": 1e-10},
         {"maximize": 1}, {}),
        # schedules of settings between steps, as OneCycleLR cycles momentum / betas
        ("adam_betas_schedule", "adam", torch.float64,
         {"lr": 0.01, "beta1": 0.95, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}, {},
         {2: {"beta1": 0.9, "lr": 0.005}, 4: {"beta1": 0.85, "beta2": 0.99, "eps": 1e-6}}),
        ("sgd_momentum_schedule", "sgd", torch.float64,
         {"lr": 0.1, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": 0}, {},
         {2: {"momentum": 0.9, "weight_decay": 0.01}, 4: {"momentum": 0.8, "dampening": 0.1, "lr": 0.05}}),
        ("rmsprop_momentum_schedule", "rmsprop", torch.float64,
         {"lr": 0.01, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.9, "centered": 0}, {},
         {3: {"momentum": 0.5, "alpha": 0.9}})]:
    cid, kind, dtype, o = case[:4]
    extra, changes = (case[4], case[5]) if len(case) > 4 else ({}, {})
    shapes = [(3, 4), (5,), ()]
    ps = [torch.tensor(orng.uniform(-1, 1, size=s), dtype=dtype, requires_grad=True) for s in shapes]
    initial = [{"shape": list(p.shape), "data": flat(p)} for p in ps]
    opt = make_optimizer(kind, ps, o, extra)
    grads, after = [], []
    for step in range(6):
        if step in changes:
            set_param_group(opt, changes[step])
        gs = []
        for i, p in enumerate(ps):
            if i == 1 and step == 3:
                p.grad = None
                gs.append(None)
                continue
            g = orng.uniform(-1, 1, size=p.shape)
            if step == 1:
                g = g * (orng.uniform(0, 1, size=p.shape) < 0.5)  # some exact zeros
            p.grad = torch.tensor(g, dtype=dtype)
            gs.append(flat(p.grad))
        opt.step()
        grads.append(gs)
        after.append([flat(p) for p in ps])
    sd = opt.state_dict()
    # (torch 1.13 keeps RMSprop's step as a Python int, Adagrad's as a 0-d tensor)
    state = [{"key": f"state.{i}.{k}", "shape": list(torch.as_tensor(v).shape), "data": flat(torch.as_tensor(v))}
             for i, st in sd["state"].items() for k, v in st.items()
             if v is not None]  # (SGD without momentum keeps momentum_buffer None; devtensor keeps nothing)
    # param_groups[0]'s numbers and flags under devtensor's names (betas as beta1, beta2)
    group = {}
    for k, v in sd["param_groups"][0].items():
        if k == "betas":
            group["beta1"], group["beta2"] = float(v[0]), float(v[1])
        elif isinstance(v, bool):
            group[k] = int(v)
        elif isinstance(v, (int, float)):
            group[k] = float(v)
    OPTIM_STEPS.append({"id": cid, "optimizer": kind, "options": o, "set": extra,
                        "changes": [{"step": k, "set": v} for k, v in sorted(changes.items())],
                        "dtype": str(dtype).replace("torch.", ""), "initial": initial, "grads": grads, "after": after,
                        "state": state, "param_groups": group})

for case in POINTWISE + CLIP + RESUME + RECURRENT + OPTIM_STEPS:  # strict JSON: no NaN or infinity may slip in
    json.dumps(case, allow_nan=False)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module_cases.json")
with open(out, "w") as fh:
    json.dump({"generator": "tests/reference/gen_module_reference.py", "torch": torch.__version__,
               "losses": LOSSES, "training": TRAINING, "pointwise_losses": POINTWISE, "clip_grad": CLIP,
               "resume": RESUME, "recurrent": RECURRENT, "optim_steps": OPTIM_STEPS}, fh, separators=(",", ":"))
    fh.write("\n")
print(f"{len(LOSSES)} loss cases, {len(TRAINING)} training runs, {len(POINTWISE)} pointwise loss cases, "
      f"{len(CLIP)} clipping cases, {len(RESUME)} resumed runs, {len(RECURRENT)} recurrent cases, {len(OPTIM_STEPS)} optimizer step cases -> {out}")

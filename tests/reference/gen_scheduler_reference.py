#!/usr/bin/env python3
"""Generates tests/reference/scheduler_cases.json: PyTorch's learning-rate schedules for
devtensor's schedulers (tests/test_lr_scheduler.cpp reads it).

Regenerate (Debian's interpreter has torch):

    /usr/bin/python3 tests/reference/gen_scheduler_reference.py

Each case runs a script against real torch.optim.lr_scheduler objects:

  {"id", "optimizer": {"kind": "sgd" | "adam" | "adagrad", "lr", "momentum" (sgd)},
   "schedulers": [{"kind": PyTorch's class name, "args": {constructor arguments by
                   PyTorch's names; lr_lambda: a name in LAMBDAS}, SequentialLR and ChainedScheduler: "children"
                   (indices of schedulers made before it), SequentialLR: "milestones"}, ...]  (made in this order),
   "actions": [{"step": k} | {"metric": v, "sched": k} | {"set_lr": v}, ...],
   "expected": one record after construction and one after each action:
               {"lr": the optimizer's rate, "momentum": its momentum or beta1 (null when
                it has none), "last_lr": [each scheduler's get_last_lr()[0], null for
                ReduceLROnPlateau before its first step], "last_epoch": [each's; a ChainedScheduler,
                which has none in PyTorch, counts its own steps]}}
"""
import json
import math
import os
import warnings

import torch
from torch.optim import lr_scheduler as S

warnings.filterwarnings("ignore")


def make_optimizer(spec):
    p = torch.nn.Parameter(torch.zeros(2))
    kind = spec["kind"]
    if kind == "sgd":
        return torch.optim.SGD([p], lr=spec["lr"], momentum=spec.get("momentum", 0.0))
    if kind == "adam":
        return torch.optim.Adam([p], lr=spec["lr"])
    if kind == "adagrad":
        return torch.optim.Adagrad([p], lr=spec["lr"])
    raise ValueError(kind)


# The functions of LambdaLR and MultiplicativeLR, by the names the cases give
# (tests/test_lr_scheduler.cpp has the same ones, written in C++).
LAMBDAS = {
    # Hugging Face's get_linear_schedule_with_warmup(num_warmup_steps=3, num_training_steps=10)
    "hf_linear_warmup_3_10": lambda e: e / 3 if e < 3 else max(0.0, (10 - e) / 7),
    # a warm-up over 4 epochs, then an inverse square root (the Transformer's shape)
    "inverse_sqrt_4": lambda e: (e + 1) / 4 if e < 4 else 2 / math.sqrt(e + 1),
    "times_0_9": lambda e: 0.9,
    "halve_every_third": lambda e: 0.5 if e % 3 == 0 else 1.0,
}


def make_scheduler(opt, spec, made):
    kind, args = spec["kind"], dict(spec.get("args", {}))
    if "lr_lambda" in args:
        args["lr_lambda"] = LAMBDAS[args["lr_lambda"]]
    if kind == "SequentialLR":
        return S.SequentialLR(opt, [made[i] for i in spec["children"]], spec["milestones"])
    if kind == "ChainedScheduler":
        return S.ChainedScheduler([made[i] for i in spec["children"]])
    return getattr(S, kind)(opt, **args)


def momentum_of(opt):
    g = opt.param_groups[0]
    if "betas" in g:
        return g["betas"][0]
    return g.get("momentum")


def record(opt, scheds, steps_taken):
    last = []
    for s in scheds:
        lr = getattr(s, "_last_lr", None)
        last.append(None if lr is None else float(lr[0]))
    return {"lr": float(opt.param_groups[0]["lr"]), "momentum": momentum_of(opt), "last_lr": last,
            "last_epoch": [int(getattr(s, "last_epoch", n)) for s, n in zip(scheds, steps_taken)]}


def run(case):
    opt = make_optimizer(case["optimizer"])
    scheds = []
    for spec in case["schedulers"]:
        scheds.append(make_scheduler(opt, spec, scheds))
    steps_taken = [0] * len(scheds)
    expected = [record(opt, scheds, steps_taken)]
    for a in case["actions"]:
        if "step" in a:
            opt.step()  # no gradients: nothing moves, but PyTorch sees the usual order
            scheds[a["step"]].step()
            steps_taken[a["step"]] += 1
        elif "metric" in a:
            scheds[a["sched"]].step(a["metric"])
        elif "set_lr" in a:
            opt.param_groups[0]["lr"] = a["set_lr"]
        else:
            raise ValueError(a)
        expected.append(record(opt, scheds, steps_taken))
    case["expected"] = expected
    return case


def steps(n, k=0):
    return [{"step": k}] * n


def cases():
    sgd = {"kind": "sgd", "lr": 0.1}
    out = [
        {"id": "step_lr", "optimizer": sgd, "schedulers": [{"kind": "StepLR", "args": {"step_size": 3, "gamma": 0.5}}],
         "actions": steps(10)},
        {"id": "multi_step_lr_repeated_milestone", "optimizer": sgd,
         "schedulers": [{"kind": "MultiStepLR", "args": {"milestones": [8, 2, 5, 5], "gamma": 0.3}}],
         "actions": steps(10)},
        {"id": "exponential_lr", "optimizer": sgd, "schedulers": [{"kind": "ExponentialLR", "args": {"gamma": 0.9}}],
         "actions": steps(8)},
        {"id": "linear_lr_warmup", "optimizer": sgd,
         "schedulers": [{"kind": "LinearLR", "args": {"start_factor": 0.25, "end_factor": 1.0, "total_iters": 4}}],
         "actions": steps(8)},
        {"id": "linear_lr_decay", "optimizer": {"kind": "adam", "lr": 0.003},
         "schedulers": [{"kind": "LinearLR", "args": {"start_factor": 1.0, "end_factor": 0.1, "total_iters": 5}}],
         "actions": steps(7)},
        {"id": "cosine_annealing_past_t_max", "optimizer": sgd,
         "schedulers": [{"kind": "CosineAnnealingLR", "args": {"T_max": 5, "eta_min": 0.001}}],
         "actions": steps(16)},
        {"id": "cosine_annealing_to_zero", "optimizer": sgd,
         "schedulers": [{"kind": "CosineAnnealingLR", "args": {"T_max": 4}}],
         "actions": steps(9)},
        {"id": "cosine_warm_restarts_t_mult_2", "optimizer": sgd,
         "schedulers": [{"kind": "CosineAnnealingWarmRestarts", "args": {"T_0": 3, "T_mult": 2, "eta_min": 0.01}}],
         "actions": steps(16)},
        {"id": "cosine_warm_restarts_t_mult_1", "optimizer": sgd,
         "schedulers": [{"kind": "CosineAnnealingWarmRestarts", "args": {"T_0": 4}}],
         "actions": steps(9)},
        {"id": "one_cycle_sgd_cos", "optimizer": {"kind": "sgd", "lr": 0.1, "momentum": 0.9},
         "schedulers": [{"kind": "OneCycleLR", "args": {"max_lr": 0.5, "total_steps": 20}}],
         "actions": steps(20)},
        {"id": "one_cycle_adam_linear_three_phase", "optimizer": {"kind": "adam", "lr": 0.001},
         "schedulers": [{"kind": "OneCycleLR", "args": {"max_lr": 0.01, "total_steps": 12, "pct_start": 0.25,
                                                         "anneal_strategy": "linear", "three_phase": True,
                                                         "base_momentum": 0.8, "max_momentum": 0.9,
                                                         "div_factor": 10.0, "final_div_factor": 100.0}}],
         "actions": steps(12)},
        {"id": "one_cycle_adagrad_no_momentum", "optimizer": {"kind": "adagrad", "lr": 0.01},
         "schedulers": [{"kind": "OneCycleLR", "args": {"max_lr": 0.2, "total_steps": 8, "cycle_momentum": False}}],
         "actions": steps(8)},
        {"id": "plateau_min_rel_cooldown", "optimizer": sgd,
         "schedulers": [{"kind": "ReduceLROnPlateau", "args": {"mode": "min", "factor": 0.5, "patience": 2,
                                                                "cooldown": 1, "min_lr": 0.01}}],
         "actions": [{"metric": v, "sched": 0} for v in
                     [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.94, 0.8, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9, 0.91, 0.92]]},
        {"id": "plateau_max_abs", "optimizer": {"kind": "adam", "lr": 0.01},
         "schedulers": [{"kind": "ReduceLROnPlateau", "args": {"mode": "max", "factor": 0.1, "patience": 1,
                                                                "threshold": 0.05, "threshold_mode": "abs"}}],
         "actions": [{"metric": v, "sched": 0} for v in [0.5, 0.52, 0.6, 0.61, 0.64, 0.7, 0.7, 0.71, 0.72]]},
        {"id": "sequential_warmup_then_cosine", "optimizer": sgd,
         "schedulers": [{"kind": "LinearLR", "args": {"start_factor": 0.1, "end_factor": 1.0, "total_iters": 3}},
                        {"kind": "CosineAnnealingLR", "args": {"T_max": 6, "eta_min": 0.0}},
                        {"kind": "SequentialLR", "children": [0, 1], "milestones": [3]}],
         "actions": steps(12, 2)},
        {"id": "sequential_three", "optimizer": sgd,
         "schedulers": [{"kind": "ExponentialLR", "args": {"gamma": 0.5}},
                        {"kind": "StepLR", "args": {"step_size": 2, "gamma": 0.1}},
                        {"kind": "CosineAnnealingWarmRestarts", "args": {"T_0": 2}},
                        {"kind": "SequentialLR", "children": [0, 1, 2], "milestones": [2, 5]}],
         "actions": steps(10, 3)},
        {"id": "sequential_multistep_milestone_at_restart", "optimizer": sgd,
         "schedulers": [{"kind": "ExponentialLR", "args": {"gamma": 0.8}},
                        {"kind": "MultiStepLR", "args": {"milestones": [0, 2], "gamma": 0.5}},
                        {"kind": "SequentialLR", "children": [0, 1], "milestones": [3]}],
         "actions": steps(7, 2)},
        {"id": "stacked_step_and_exponential", "optimizer": sgd,
         "schedulers": [{"kind": "StepLR", "args": {"step_size": 2, "gamma": 0.5}},
                        {"kind": "ExponentialLR", "args": {"gamma": 0.9}}],
         "actions": [{"step": k} for _ in range(6) for k in (0, 1)]},
        {"id": "lambda_lr_hf_linear_warmup_rate_set_by_hand", "optimizer": sgd,
         "schedulers": [{"kind": "LambdaLR", "args": {"lr_lambda": "hf_linear_warmup_3_10"}}],
         "actions": steps(5) + [{"set_lr": 0.5}] + steps(7)},
        {"id": "lambda_lr_inverse_sqrt_adam", "optimizer": {"kind": "adam", "lr": 0.001},
         "schedulers": [{"kind": "LambdaLR", "args": {"lr_lambda": "inverse_sqrt_4"}}],
         "actions": steps(9)},
        {"id": "multiplicative_lr_rate_set_by_hand", "optimizer": sgd,
         "schedulers": [{"kind": "MultiplicativeLR", "args": {"lr_lambda": "halve_every_third"}}],
         "actions": steps(4) + [{"set_lr": 0.05}] + steps(5)},
        {"id": "sequential_lambda_warmup_then_multiplicative", "optimizer": sgd,
         "schedulers": [{"kind": "LambdaLR", "args": {"lr_lambda": "inverse_sqrt_4"}},
                        {"kind": "MultiplicativeLR", "args": {"lr_lambda": "times_0_9"}},
                        {"kind": "SequentialLR", "children": [0, 1], "milestones": [4]}],
         "actions": steps(9, 2)},
        {"id": "constant_lr_defaults", "optimizer": sgd, "schedulers": [{"kind": "ConstantLR"}],
         "actions": steps(8)},
        {"id": "constant_lr_rate_set_by_hand", "optimizer": {"kind": "adam", "lr": 0.002},
         "schedulers": [{"kind": "ConstantLR", "args": {"factor": 0.5, "total_iters": 4}}],
         "actions": steps(2) + [{"set_lr": 0.3}] + steps(4)},
        {"id": "polynomial_lr_defaults", "optimizer": sgd, "schedulers": [{"kind": "PolynomialLR"}],
         "actions": steps(8)},
        {"id": "polynomial_lr_power_2", "optimizer": {"kind": "adagrad", "lr": 0.05},
         "schedulers": [{"kind": "PolynomialLR", "args": {"total_iters": 7, "power": 2.0}}],
         "actions": steps(9)},
        {"id": "polynomial_lr_power_half_rate_set_by_hand", "optimizer": sgd,
         "schedulers": [{"kind": "PolynomialLR", "args": {"total_iters": 6, "power": 0.5}}],
         "actions": steps(3) + [{"set_lr": 0.02}] + steps(5)},
        {"id": "sequential_constant_warmup_then_polynomial", "optimizer": sgd,
         "schedulers": [{"kind": "ConstantLR", "args": {"factor": 0.1, "total_iters": 3}},
                        {"kind": "PolynomialLR", "args": {"total_iters": 5, "power": 1.5}},
                        {"kind": "SequentialLR", "children": [0, 1], "milestones": [3]}],
         "actions": steps(10, 2)},
        {"id": "stacked_constant_and_exponential", "optimizer": sgd,
         "schedulers": [{"kind": "ConstantLR", "args": {"factor": 0.1, "total_iters": 2}},
                        {"kind": "ExponentialLR", "args": {"gamma": 0.9}}],
         "actions": [{"step": k} for _ in range(4) for k in (0, 1)]},
        {"id": "cyclic_lr_triangular_momentum", "optimizer": {"kind": "sgd", "lr": 0.1, "momentum": 0.9},
         "schedulers": [{"kind": "CyclicLR", "args": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3}}],
         "actions": steps(14)},
        {"id": "cyclic_lr_triangular2_uneven", "optimizer": {"kind": "sgd", "lr": 0.1, "momentum": 0.5},
         "schedulers": [{"kind": "CyclicLR", "args": {"base_lr": 0.001, "max_lr": 0.05, "step_size_up": 2,
                                                       "step_size_down": 5, "mode": "triangular2",
                                                       "base_momentum": 0.7, "max_momentum": 0.95}}],
         "actions": steps(22)},
        {"id": "cyclic_lr_exp_range_no_momentum", "optimizer": {"kind": "adagrad", "lr": 0.3},
         "schedulers": [{"kind": "CyclicLR", "args": {"base_lr": 0.02, "max_lr": 0.2, "step_size_up": 4,
                                                       "mode": "exp_range", "gamma": 0.9,
                                                       "cycle_momentum": False}}],
         "actions": steps(18)},
        {"id": "cyclic_lr_max_below_base", "optimizer": {"kind": "sgd", "lr": 0.1, "momentum": 0.9},
         "schedulers": [{"kind": "CyclicLR", "args": {"base_lr": 0.1, "max_lr": 0.02, "step_size_up": 2,
                                                       "step_size_down": 1}}],
         "actions": steps(7)},
        {"id": "sequential_exponential_then_cyclic", "optimizer": {"kind": "sgd", "lr": 0.1, "momentum": 0.9},
         "schedulers": [{"kind": "ExponentialLR", "args": {"gamma": 0.5}},
                        {"kind": "CyclicLR", "args": {"base_lr": 0.01, "max_lr": 0.04, "step_size_up": 2}},
                        {"kind": "SequentialLR", "children": [0, 1], "milestones": [3]}],
         "actions": steps(9, 2)},
        {"id": "chained_constant_then_exponential", "optimizer": sgd,
         "schedulers": [{"kind": "ConstantLR", "args": {"factor": 0.1, "total_iters": 2}},
                        {"kind": "ExponentialLR", "args": {"gamma": 0.9}},
                        {"kind": "ChainedScheduler", "children": [0, 1]}],
         "actions": steps(6, 2)},
        {"id": "chained_step_cosine_rate_set_by_hand", "optimizer": {"kind": "adam", "lr": 0.01},
         "schedulers": [{"kind": "StepLR", "args": {"step_size": 3, "gamma": 0.5}},
                        {"kind": "CosineAnnealingLR", "args": {"T_max": 5, "eta_min": 0.001}},
                        {"kind": "ChainedScheduler", "children": [0, 1]}],
         "actions": steps(4, 2) + [{"set_lr": 0.02}] + steps(5, 2)},
        {"id": "chained_cyclic_and_multiplicative", "optimizer": {"kind": "sgd", "lr": 0.1, "momentum": 0.9},
         "schedulers": [{"kind": "CyclicLR", "args": {"base_lr": 0.01, "max_lr": 0.05, "step_size_up": 2}},
                        {"kind": "MultiplicativeLR", "args": {"lr_lambda": "times_0_9"}},
                        {"kind": "ChainedScheduler", "children": [0, 1]}],
         "actions": steps(7, 2)},
        {"id": "rate_set_by_hand_mid_schedule", "optimizer": sgd,
         "schedulers": [{"kind": "StepLR", "args": {"step_size": 3, "gamma": 0.5}}],
         "actions": steps(4) + [{"set_lr": 0.04}] + steps(5)},
    ]
    return [run(c) for c in out]


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scheduler_cases.json")
    data = {"generator": "tests/reference/gen_scheduler_reference.py", "torch": torch.__version__, "cases": cases()}
    with open(path, "w") as f:
        json.dump(data, f, indent=1, allow_nan=False)
        f.write("\n")
    print(f"wrote {path}: {len(data['cases'])} cases")


if __name__ == "__main__":
    main()

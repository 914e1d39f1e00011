#!/usr/bin/env python3
"""PyTorch peer of bench/gpu/devtensor_gpu_bench.cpp: the same cases, shapes and dtypes.

Each case is timed as devtensor_gpu_bench times it, a Google Benchmark repetition: a loop
of `iterations` calls, sized so that it lasts at least --min-time seconds, with
torch.cuda.synchronize() after every `batch` calls (the same batch per case as the C++
program) and after the last call, all inside one time.perf_counter_ns() span; the real
(wall) time per call is that span / iterations. Both programs pay the same number of
synchronisations, and every timed span ends with one. Each case first runs `batch` calls
and a sync, untimed (warm-up: CUDA context, cuBLAS handles and heuristics, the caching
allocator). --repetitions such loops are run. The output mimics Google Benchmark's JSON
(one "iteration" entry per repetition, real_time in ns per call), so bench/gpu/run reads
both programs the same way and applies one statistic.

Inputs are torch.rand (uniform [0, 1)) with a fixed torch.manual_seed; they need not match
devtensor's values, only their shapes and dtypes. Everything runs under torch.no_grad().
TF32 (torch.backends.cuda.matmul.allow_tf32) is off except in tf32_4096, and is restored
afterwards.

  --device cuda|cpu  cuda (default) needs a CUDA build of PyTorch and a GPU; without one
                     the script prints why and exits 3. cpu is a dry run of the code
                     paths on the CPU (pinned buffers become ordinary ones, and the
                     "h2d" .to() calls return their input: its numbers mean nothing).
  --small            shrunken sizes (1 MiB / 4 MiB copies, 1Mi-element add, 256 GEMMs,
                     512x512 softmax), for smoke tests; never for reported numbers.
  --cases a,b        a subset of the cases.
  --format json|console
"""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gbench_like import repetitions  # noqa: E402

CASES = ["h2d_pageable_64M", "h2d_pinned_64M", "d2h_pinned_64M", "h2d_pinned_1G", "d2d_1G",
         "add_256M", "sgemm_4096", "tf32_4096", "bf16_4096", "softmax_8192x8192",
         "add_4_launch", "mlp_fwd_784_256_10", "mlp_fwd_784_256_10_graph"]

# Calls between synchronisations, as in devtensor_gpu_bench.cpp.
BATCH = {"h2d_pageable_64M": 1, "h2d_pinned_64M": 4, "d2h_pinned_64M": 4, "h2d_pinned_1G": 1,
         "d2d_1G": 4, "add_256M": 4, "sgemm_4096": 4, "tf32_4096": 16, "bf16_4096": 16,
         "softmax_8192x8192": 16, "add_4_launch": 256, "mlp_fwd_784_256_10": 64,
         "mlp_fwd_784_256_10_graph": 64}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--small", action="store_true", help="shrunken sizes, for smoke tests")
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--format", choices=["json", "console"], default="console")
    args = p.parse_args()
    names = [c for c in args.cases.split(",") if c]
    bad = [c for c in names if c not in CASES]
    if bad:
        p.error(f"unknown case(s) {', '.join(bad)}; known: {', '.join(CASES)}")

    try:
        import torch
    except ImportError as e:
        print(f"pytorch_gpu_bench: PyTorch not available with {sys.executable}: {e}", file=sys.stderr)
        return 3
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        why = ("this PyTorch is built without CUDA" if torch.version.cuda is None
               else f"torch.cuda.is_available() is False (CUDA {torch.version.cuda}; "
                    f"no usable GPU or driver)")
        print(f"pytorch_gpu_bench: CUDA not available: {why}", file=sys.stderr)
        return 3
    dev = torch.device("cuda:0" if cuda else "cpu")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default since 1.12; explicit

    # Sizes in float32 elements (see devtensor_gpu_bench.cpp); --small shrinks them.
    n64m = (1 << 18) if args.small else (16 << 20)    # 64 MiB (1 MiB with --small)
    n1g = (1 << 20) if args.small else (256 << 20)    # 1 GiB (4 MiB with --small)
    gemm = 256 if args.small else 4096
    smx = 512 if args.small else 8192
    f32 = torch.float32

    def rand(shape, dtype=f32, device=dev):
        return torch.rand(shape, dtype=f32, device=device).to(dtype)

    def pinned(t):
        return t.pin_memory() if cuda else t

    def case(name):
        """(function of no arguments doing one call, work, unit, cleanup or None).
        work is bytes or FLOP per call for the throughput counter."""
        torch.manual_seed(100 + CASES.index(name))
        if name == "h2d_pageable_64M":
            src = rand([n64m], device="cpu")
            return (lambda: src.to(dev)), n64m * 4, "bytes", None
        if name in ("h2d_pinned_64M", "h2d_pinned_1G"):
            n = n64m if name == "h2d_pinned_64M" else n1g
            src = pinned(rand([n], device="cpu"))
            return (lambda: src.to(dev, non_blocking=True)), n * 4, "bytes", None
        if name == "d2h_pinned_64M":
            src = rand([n64m])
            dst = pinned(torch.empty([n64m], dtype=f32))
            return (lambda: dst.copy_(src, non_blocking=True)), n64m * 4, "bytes", None
        if name == "d2d_1G":
            src = rand([n1g])
            return (lambda: src.to(dev, copy=True)), 2 * n1g * 4, "bytes", None
        if name == "add_256M":
            a, b = rand([n1g]), rand([n1g])
            return (lambda: torch.add(a, b)), 3 * n1g * 4, "bytes", None
        if name in ("sgemm_4096", "tf32_4096", "bf16_4096"):
            dtype = torch.bfloat16 if name == "bf16_4096" else f32
            a, b = rand([gemm, gemm], dtype), rand([gemm, gemm], dtype)
            cleanup = None
            if name == "tf32_4096":
                torch.backends.cuda.matmul.allow_tf32 = True

                def cleanup():
                    torch.backends.cuda.matmul.allow_tf32 = False
            return (lambda: torch.matmul(a, b)), 2.0 * gemm ** 3, "flops", cleanup
        if name == "softmax_8192x8192":
            x = rand([smx, smx])
            return (lambda: torch.softmax(x, -1)), 2 * smx * smx * 4, "bytes", None
        if name == "add_4_launch":
            a, b = rand([4]), rand([4])
            return (lambda: torch.add(a, b)), 1, "calls", None
        if name == "mlp_fwd_784_256_10":
            # What a PyTorch user writes: modules (Linear runs one addmm with the bias).
            model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                        torch.nn.Linear(256, 10)).to(dev)
            x = rand([64, 784])
            return (lambda: model(x)), 2.0 * 64 * (784 * 256 + 256 * 10), "flops", None
        if name == "mlp_fwd_784_256_10_graph":
            # torch.cuda.graphs' recipe: warm up on a side stream, capture one forward,
            # replay it per call (on the CPU dry run: the eager forward).
            model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                        torch.nn.Linear(256, 10)).to(dev)
            x = rand([64, 784])
            fn = lambda: model(x)  # noqa: E731
            if cuda:
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        model(x)
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    model(x)
                fn = graph.replay
            return fn, 2.0 * 64 * (784 * 256 + 256 * 10), "flops", None
        raise SystemExit(f"pytorch_gpu_bench: unknown case {name!r}")

    def time_loop(fn, iters, batch):
        t0 = time.perf_counter_ns()
        for i in range(1, iters + 1):
            fn()
            if i % batch == 0 or i == iters:
                sync()
        return time.perf_counter_ns() - t0

    records = []
    with torch.no_grad():
        for name in names:
            fn, work, unit, cleanup = case(name)
            batch = BATCH[name]
            try:
                for _ in range(batch):  # warm-up, untimed
                    fn()
                sync()
                key = {"bytes": "bytes_per_second", "flops": "FLOPS", "calls": "items_per_second"}[unit]
                recs = repetitions(name, lambda iters: time_loop(fn, iters, batch), args.min_time,
                                   args.repetitions, lambda per: {key: work / (per * 1e-9)},
                                   console=args.format == "console")
                for rec in recs:
                    rec["batch"] = batch
                records += recs
            finally:
                if cleanup:
                    cleanup()
            del fn
            if cuda:
                torch.cuda.empty_cache()

    if args.format == "json":
        ctx = {"program": "pytorch_gpu_bench", "torch_version": torch.__version__,
               "torch_cuda": torch.version.cuda, "python": platform.python_version(),
               "device": str(dev), "small": args.small,
               "gpu": torch.cuda.get_device_name(0) if cuda else "",
               "allow_tf32_default": torch.backends.cuda.matmul.allow_tf32}
        json.dump({"context": ctx, "benchmarks": records}, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

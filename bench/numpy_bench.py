#!/usr/bin/python3
"""NumPy peer of bench/devtensor_bench.cpp: the same cases, shapes and inputs.

Run with Debian's /usr/bin/python3 (python3-numpy; NumPy's BLAS is OpenBLAS through
libblas.so.3). Each case is timed like a Google Benchmark repetition: a loop of
`iterations` calls, sized so that it lasts at least --min-time seconds, gives the real
(wall) time per call; --repetitions such loops are run. The output mimics Google
Benchmark's JSON (one "iteration" entry per repetition, real_time in ns per call), so
bench/compare reads all three programs the same way and applies one statistic.

  --threads N   sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS before NumPy is imported
                (NumPy's elementwise ops and reductions are single-threaded anyway).
  --cases a,b   a subset of the cases.
  --format json|console
"""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbench_like import repetitions  # noqa: E402

CASES = ["add_4", "add_16M", "sum_16M", "softmax_4096x1024", "sgemm_1024", "sgemm_2048"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--format", choices=["json", "console"], default="console")
    args = p.parse_args()

    if args.threads > 0:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    import numpy as np  # after the thread variables: OpenBLAS reads them at load time

    M32 = np.uint64(0xFFFFFFFF)

    def make_input(shape, seed):
        """Uniform in [-1, 1): the fixed LCG of devtensor_bench.cpp, vectorised by doubling
        (x[i + f] = A_f x[i] + C_f), so the three programs get bit-identical inputs."""
        n = 1
        for d in shape:
            n *= d
        a, c = 1664525, 1013904223
        x0 = (seed * 2654435761 + 12345) & 0xFFFFFFFF
        x = np.empty(n, np.uint64)
        x[0] = (a * x0 + c) & 0xFFFFFFFF
        filled, A, C = 1, a, c  # the map applied `filled` times: x -> A x + C (mod 2^32)
        while filled < n:
            k = min(filled, n - filled)
            x[filled:filled + k] = (x[:k] * np.uint64(A) + np.uint64(C)) & M32
            filled += k
            A, C = (A * A) & 0xFFFFFFFF, (A * C + C) & 0xFFFFFFFF
        v = (x >> np.uint64(8)).astype(np.float32) * np.float32(2.0 / 16777216.0) - np.float32(1.0)
        return np.ascontiguousarray(v.reshape(shape))

    def softmax(x):
        m = x.max(axis=-1, keepdims=True)
        e = np.exp(x - m)
        e /= e.sum(axis=-1, keepdims=True)
        return e

    n16 = 16 << 20

    def case(name):
        """(function of no arguments doing one call, flops or None)"""
        if name == "add_4":
            a, b = make_input([4], 1), make_input([4], 2)
            return (lambda: np.add(a, b)), None
        if name == "add_16M":
            a, b = make_input([n16], 1), make_input([n16], 2)
            return (lambda: np.add(a, b)), None
        if name == "sum_16M":
            a = make_input([n16], 3)
            return (lambda: np.sum(a)), None
        if name == "softmax_4096x1024":
            a = make_input([4096, 1024], 4)
            return (lambda: softmax(a)), None
        if name.startswith("sgemm_"):
            n = int(name.split("_")[1])
            a, b = make_input([n, n], 5), make_input([n, n], 6)
            return (lambda: np.matmul(a, b)), 2.0 * n * n * n
        raise SystemExit(f"numpy_bench: unknown case {name!r}")

    def time_loop(fn, iters):
        rng = range(iters)
        t0 = time.perf_counter_ns()
        for _ in rng:
            fn()
        return time.perf_counter_ns() - t0

    records = []
    for name in [c for c in args.cases.split(",") if c]:
        fn, flops = case(name)
        fn()  # warm-up, as the other programs do
        records += repetitions(name, lambda iters: time_loop(fn, iters), args.min_time, args.repetitions,
                               (lambda per: {"GFLOPS": flops / per}) if flops else None,
                               console=args.format == "console")

    if args.format == "json":
        ctx = {"program": "numpy_bench", "numpy_version": np.__version__,
               "python": platform.python_version(), "threads": args.threads,
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "")}
        json.dump({"context": ctx, "benchmarks": records}, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()

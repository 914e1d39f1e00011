"""Google Benchmark's repetitions, for the Python peers (numpy_bench.py, pytorch_bench.py,
gpu/pytorch_gpu_bench.py): the loop of calls is sized as Google Benchmark sizes it, and
each repetition becomes one record of its JSON format, so bench/compare and bench/gpu/run
read every program the same way. Standard library only."""


def repetitions(name, time_loop, min_time, count, extra=None, console=False, width=20):
    """Times `count` repetitions of case `name`. time_loop(iters) runs iters calls and
    returns the wall nanoseconds they took. The first loop is grown until it lasts
    min_time seconds (at most 10x per step while under a tenth of it) and is itself the
    first repetition. extra(per_call_ns) -> dict of counters to add to each record.
    Returns the records (real_time in ns per call)."""
    iters = 1
    while True:
        ns = time_loop(iters)
        if ns >= min_time * 1e9 or iters >= 1_000_000_000:
            break
        mult = min_time * 1e9 * 1.4 / max(ns, 1)
        if ns < min_time * 1e8:  # under a tenth of min_time: grow at most 10x
            mult = min(mult, 10.0)
        iters = max(iters + 1, int(mult * iters))
    records = []
    for rep in range(count):
        ns = ns if rep == 0 else time_loop(iters)
        per = ns / iters
        rec = {"name": f"{name}/real_time", "run_name": f"{name}/real_time", "run_type": "iteration",
               "repetitions": count, "repetition_index": rep, "iterations": iters,
               "real_time": per, "time_unit": "ns"}
        counters = extra(per) if extra else {}
        rec.update(counters)
        records.append(rec)
        if console:
            shown = "".join(f"  {k}={v:.4g}" for k, v in counters.items())
            print(f"{name:<{width}} rep {rep}: {per / 1e3:12.3f} us  ({iters} iterations){shown}", flush=True)
    return records

#!/usr/bin/env python3
"""PyTorch's side of bench/dist: torch.distributed (gloo) timed exactly as
all_reduce_bw.c and ddp_step.c time devtensor.

    torch_dist_bench.py all_reduce WORLD [ROUNDS]   prints "size_bytes seconds_per_call"
    torch_dist_bench.py ddp_step WORLD [ROUNDS]     prints "ddp_step seconds_per_step"

Same sizes, iteration counts, warm-ups, barriers, slowest-rank rounds and medians as the
C programs. bench/dist/run gives both sides the same threads per rank (OMP_NUM_THREADS
and DEVTENSOR_NUM_THREADS).
"""
import datetime
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def slowest(seconds):
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def all_reduce(rank, world, rounds):
    size = 4096
    while size <= 64 << 20:
        t = torch.ones(size // 4, dtype=torch.float32)
        iters = min(200, max(5, (64 << 20) // size))
        for _ in range(3):
            dist.all_reduce(t)
        per_call = []
        for _ in range(rounds):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            per_call.append(slowest((time.perf_counter() - t0) / iters))
        if rank == 0:
            print(f"{size} {statistics.median(per_call):.9g}", flush=True)
        size *= 4


def ddp_step(rank, world, rounds):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(12345 + rank)
    x = torch.rand(64, 784, generator=g)
    y = torch.tensor([(i * 7 + rank) % 10 for i in range(64)])
    per_step = []
    for r in range(-1, rounds):
        steps = 10 if r < 0 else 50
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()
            opt.step()
        mine = (time.perf_counter() - t0) / steps
        if r >= 0:
            per_step.append(slowest(mine))
    if rank == 0:
        print(f"ddp_step {statistics.median(per_step):.9g}", flush=True)


def worker(rank, world, store, what, rounds):
    # PyTorch's gloo takes its address from the hostname unless told an interface; all
    # ranks are on this machine, so loopback is the one that is always reachable (as
    # devtensor's own gloo engine does). The timeout turns a stuck rendezvous into an error.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    (all_reduce if what == "all_reduce" else ddp_step)(rank, world, rounds)
    dist.destroy_process_group()


def main():
    what, world = sys.argv[1], int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    # A file rendezvous: no port to race for with other tests running beside this one.
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(worker, args=(world, os.path.join(d, "store"), what, rounds), nprocs=world, join=True)


if __name__ == "__main__":
    main()

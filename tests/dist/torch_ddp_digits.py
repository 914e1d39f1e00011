#!/usr/bin/env python3
"""PyTorch's side of the DDP comparison (tests/dist/test_ddp.py): the digits MLP of
ddp_digits.c trained by torch.nn.parallel.DistributedDataParallel on the gloo backend.

    torch_ddp_digits.py DIGITS_CSV_GZ STEPS GLOBAL_BATCH INIT.safetensors WORLD [ACCUM]

Starts WORLD processes of itself (a file rendezvous in a temporary folder); each loads the initial weights from
INIT.safetensors (written by devtensor; read here by hand, as Debian has no
python3-safetensors), takes the same contiguous share of each global batch as
ddp_digits.c, and trains with SGD(lr=0.1, momentum=0.9). Rank 0 prints
"step S loss L", L the loss averaged over the ranks, as ddp_digits.c does. ACCUM > 1:
gradient accumulation as ddp_digits.c does it, the first ACCUM - 1 micro-batches'
backward inside `with ddp.no_sync():`.
"""
import datetime
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile

import torch
import torch.distributed as dist

ROWS, PIXELS, CLASSES = 1797, 64, 10


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32", meta
        a, b = meta["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32).reshape(meta["shape"])
    return out


def load_digits(path):
    rows = [list(map(int, line.split(","))) for line in gzip.open(path, "rt") if line.strip()]
    assert len(rows) == ROWS
    x = torch.tensor([r[:PIXELS] for r in rows], dtype=torch.float32) / 16.0
    y = torch.tensor([r[PIXELS] for r in rows], dtype=torch.int64)
    return x, y


def run(rank, world, store, csv, steps, batch, init, accum):
    # PyTorch's gloo takes its address from the hostname unless told an interface; all
    # ranks are on this machine, so loopback is the one that is always reachable (as
    # devtensor's own gloo engine does). The timeout turns a stuck rendezvous into an error.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    torch.set_num_threads(1)
    x, y = load_digits(csv)
    model = torch.nn.Sequential(torch.nn.Linear(PIXELS, 128), torch.nn.ReLU(), torch.nn.Linear(128, CLASSES))
    model.load_state_dict(read_safetensors(init))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    share = batch // world
    micro = share // accum
    for step in range(steps):
        opt.zero_grad()
        total = 0.0
        for m in range(accum):
            first = (step * batch) % (ROWS - batch) + rank * share + m * micro
            xb, yb = x[first:first + micro], y[first:first + micro]
            if m < accum - 1:
                with ddp.no_sync():
                    loss = loss_fn(ddp(xb), yb) / accum
                    loss.backward()
            else:
                loss = loss_fn(ddp(xb), yb)
                if accum > 1:
                    loss = loss / accum
                loss.backward()
            total += loss.item()
        opt.step()
        mean = torch.tensor(total, dtype=torch.float64)
        dist.all_reduce(mean)
        if rank == 0:
            print(f"step {step} loss {mean.item() / world:.9f}", flush=True)
    # Every rank has finished its last (blocking) all-reduce. Leave without the
    # interpreter's teardown of torch and gloo: CI saw a rank that had printed every step
    # sit until the test's timeout at exit, twice in three runs under load.
    sys.stdout.flush()
    os._exit(0)


def main():
    if "TORCH_DDP_RANK" in os.environ:  # one rank, started by main() below
        csv, steps, batch, init, world, accum, store = sys.argv[1:8]
        rank = int(os.environ["TORCH_DDP_RANK"])
        run(rank, int(world), store, csv, int(steps), int(batch), init, int(accum))
        return
    csv, steps, batch, init, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    accum = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    # Plain processes (not torch.multiprocessing) and a file rendezvous: no port to race
    # for with other tests running beside this one, and nothing to join but exit codes.
    with tempfile.TemporaryDirectory() as d:
        store = os.path.join(d, "store")
        ranks = [subprocess.Popen([sys.executable, os.path.abspath(__file__)] + sys.argv[1:6] + [str(accum), store],
                                  env=dict(os.environ, TORCH_DDP_RANK=str(r)),
                                  stdout=None if r == 0 else subprocess.DEVNULL)
                 for r in range(world)]
        codes = [p.wait() for p in ranks]
    if any(codes):
        sys.exit(f"torch_ddp_digits.py: rank exit codes {codes}")


if __name__ == "__main__":
    main()

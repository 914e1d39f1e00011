"""PyTorch's side of bench/sort: the cases of sort_bench.c (torch.sort(stable=True), as
dt_sort; torch.topk) on as many threads as argv[1], median of 7 after 2 warm-ups."""
import statistics
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]))


def bench(name, rows, n, k):
    a = torch.randn(rows, n)
    ts = []
    for _ in range(9):
        start = time.perf_counter()
        if k:
            torch.topk(a, k, 1)
        else:
            torch.sort(a, dim=1, stable=True)
        ts.append(time.perf_counter() - start)
    print(f"{name} pytorch {statistics.median(ts[2:]) * 1e3:.3f} ms")


bench("sort_1x1M", 1, 1 << 20, 0)
bench("sort_256x4096", 256, 4096, 0)
bench("topk5_64x50257", 64, 50257, 5)
bench("topk1000_8x65536", 8, 65536, 1000)

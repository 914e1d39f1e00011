#!/usr/bin/env python3
"""PyTorch's side of devtensor_bench's resnet18_fwd_issue: the host's time to queue one
eval forward of torchvision's ResNet-18 ([8, 3, 224, 224] float32 on cuda:0, TF32 off as
bench/pytorch_bench.py), the GPU idle at its start, and the whole forward's time; medians
of 50 after 10 warm-up forwards. Prints 'torch resnet18 issue: X ms, forward: Y ms'."""
import statistics
import time

import torch
import torchvision

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda", 0)
net = torchvision.models.resnet18().to(dev).eval()
x = torch.rand(8, 3, 224, 224, device=dev) * 2 - 1
issue, whole = [], []
with torch.no_grad():
    for i in range(60):
        torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        net(x)
        t1 = time.perf_counter()
        torch.cuda.synchronize(dev)
        t2 = time.perf_counter()
        if i >= 10:
            issue.append(t1 - t0)
            whole.append(t2 - t0)
print(f"torch resnet18 issue: {statistics.median(issue) * 1e3:.3f} ms, forward: {statistics.median(whole) * 1e3:.3f} ms")

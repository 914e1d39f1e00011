#!/usr/bin/python3
"""PyTorch (Python) peer of bench/devtensor_bench.cpp and bench/libtorch_bench.cpp: their model cases.

The same cases, names, shapes and inputs as the C++ programs: the models are built after
torch.manual_seed(0) with the same layers in the same order, the inputs come from the same
fixed LCG (make_input, bit-identical to theirs), the labels are (i * 7 + 3) % classes, and
a training step is opt.zero_grad(); F.cross_entropy(model(x), y) (mean); loss.backward();
opt.step() with torch.optim.SGD(lr=0.01). The loss is never read inside the timed loop.
Runs on torch 1.13 (Debian's /usr/bin/python3) and on torch 2.x with CUDA.

  train_mlp_784_256_10     Linear(784,256)-ReLU-Linear(256,10) at batch 64
  train_linear16_256       16 x (Linear(256,256)+ReLU) at batch 128, 256 classes
  train_lenet5             LeNet-5 at batch 64 on [64, 1, 28, 28]
  resnet18_fwd             ResNet-18 (torchvision's layout, written out here as in
                           libtorch_bench.cpp), eval mode, forward under torch.no_grad(),
                           on [8, 3, 224, 224]
  transformer_layer_train  TransformerEncoderLayer(512, 8, dim_feedforward=2048,
                           dropout=0.0, batch_first=True) on [8, 256, 512], flatten(0, 1),
                           Linear(512, 16) head over the 2048 tokens, 16 classes
  lstm_train               LSTM(256, 256, num_layers=2, batch_first=True) on [16, 64, 256],
                           its output flatten(0, 1), Linear(256, 16) head over the 1024
                           steps, 16 classes
  sdpa_8x8x1024x64         scaled dot-product attention forward (no mask, not causal) of
                           float32 [8, 8, 1024, 64] query/key/value under torch.no_grad():
                           F.scaled_dot_product_attention where it exists (torch >= 2.0),
                           else softmax((q / sqrt(64)) @ k^T, -1) @ v
  sgd_step_203k, adam_step_203k, rmsprop_step_203k, adagrad_step_203k
                           one optimizer step alone over tensors of Linear(784,256)'s and
                           Linear(256,10)'s parameter shapes (203,530 floats) with fixed
                           gradients: SGD(lr=0.01, momentum=0.9), Adam(lr=1e-3),
                           RMSprop(lr=1e-2), Adagrad(lr=1e-2), torch.optim's defaults
                           otherwise (its for-loop update on the CPU in torch 1.13)

Each case is timed like a Google Benchmark repetition: a loop of `iterations` calls, sized
so that it lasts at least --min-time seconds, gives the real (wall) time per call
(time.perf_counter_ns); --repetitions such loops are run. Before the timing: one untimed
call, and on CUDA 3 more and a torch.cuda.synchronize(). On CUDA the timed loop also
synchronises after every 16th call and after the last one, inside the timed span: the
policy of devtensor_bench.cpp and libtorch_bench.cpp. The output mimics Google Benchmark's
JSON (one "iteration" entry per repetition, real_time in ns per call), as numpy_bench.py's,
so bench/compare reads every program the same way.

  --device cpu|cuda|cuda:N  where models, inputs and labels live (default cpu); cuda
                without a usable GPU: the reason on stderr and exit status 3.
  --threads N   sets OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS before torch
                is imported, then torch.set_num_threads(N); 0 (default): torch's default.
  --cases a,b   a subset of the cases.

On CUDA, TF32 is off for cuDNN's convolutions too (torch.backends.cudnn.allow_tf32 =
False; PyTorch's default is on), as for matrix products (PyTorch's default): every side of
bench/compare then does float32 arithmetic, as devtensor does unless dt_set_allow_tf32.
  --format json|console
"""
import argparse
import json
import math
import os
import platform
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbench_like import repetitions  # noqa: E402

CASES = ["train_mlp_784_256_10", "train_linear16_256", "train_lenet5", "resnet18_fwd",
         "transformer_layer_train", "sdpa_8x8x1024x64", "lstm_train", "sgd_step_203k", "adam_step_203k",
         "rmsprop_step_203k", "adagrad_step_203k"]
SYNC_EVERY = 16  # on CUDA: calls between synchronisations in the timed loop
CUDA_WARMUP = 3  # on CUDA: untimed calls (after the first) before the timing


def parse_device(text):
    if text in ("cpu", "cpu:0"):  # cpu:0 is devtensor_bench's spelling
        return "cpu"
    if text == "cuda" or (text.startswith("cuda:") and text[5:].isdigit()):
        return text
    raise argparse.ArgumentTypeError(f"invalid device {text!r} (cpu, cuda or cuda:N)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", type=parse_device, default="cpu")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--format", choices=["json", "console"], default="console")
    args = p.parse_args()
    names = [c for c in args.cases.split(",") if c]
    bad = [c for c in names if c not in CASES]
    if bad:
        p.error(f"unknown case(s) {', '.join(bad)}; known: {', '.join(CASES)}")

    if args.threads > 0:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    try:
        import torch  # after the thread variables: OpenMP and OpenBLAS read them at load time
    except ImportError as e:
        print(f"pytorch_bench: PyTorch not available with {sys.executable}: {e}", file=sys.stderr)
        return 3
    import torch.nn as nn
    import torch.nn.functional as F

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    cuda = args.device.startswith("cuda")
    if cuda:
        if not torch.cuda.is_available():
            why = ("this PyTorch is built without CUDA" if torch.version.cuda is None
                   else f"torch.cuda.is_available() is False (CUDA {torch.version.cuda}; "
                        f"no usable GPU or driver)")
            print(f"pytorch_bench: --device {args.device}: CUDA not available: {why}", file=sys.stderr)
            return 3
        index = int(args.device[5:]) if ":" in args.device else torch.cuda.current_device()
        if index >= torch.cuda.device_count():
            print(f"pytorch_bench: --device {args.device}: only {torch.cuda.device_count()} "
                  f"CUDA device(s)", file=sys.stderr)
            return 3
        dev = torch.device("cuda", index)
        torch.cuda.set_device(dev)
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 arithmetic, as devtensor's default
        torch.backends.cudnn.allow_tf32 = False
    else:
        dev = torch.device("cpu")

    def sync():
        torch.cuda.synchronize(dev)

    M32 = 0xFFFFFFFF

    def mul32(x, a):
        """x * a mod 2^32 for an int64 tensor x in [0, 2^32) and an int a in [0, 2^32),
        in 16-bit halves of a so that no product overflows int64."""
        return (x * (a & 0xFFFF) + ((x * (a >> 16)) & 0xFFFF) * 65536) & M32

    def make_input(shape, seed):
        """Uniform in [-1, 1): the fixed LCG of devtensor_bench.cpp, vectorised by doubling
        (x[i + f] = A_f x[i] + C_f) as numpy_bench.py does, so every program gets
        bit-identical inputs. Made on the CPU, then moved to the device."""
        n = 1
        for d in shape:
            n *= d
        a, c = 1664525, 1013904223
        x0 = (seed * 2654435761 + 12345) & M32
        x = torch.empty(n, dtype=torch.int64)
        x[0] = (a * x0 + c) & M32
        filled, A, C = 1, a, c  # the map applied `filled` times: x -> A x + C (mod 2^32)
        while filled < n:
            k = min(filled, n - filled)
            x[filled:filled + k] = (mul32(x[:k], A) + C) & M32
            filled += k
            A, C = (A * A) & M32, (A * C + C) & M32
        v = (x >> 8).to(torch.float32) * (2.0 / 16777216.0) - 1.0
        return v.reshape(shape).contiguous().to(dev)

    def labels_of(n, classes):
        return torch.tensor([(i * 7 + 3) % classes for i in range(n)], dtype=torch.int64).to(dev)

    def train_step(model, x, y):
        """One SGD training step of model on (x, y), as a function of no arguments."""
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        return step

    def no_grad(fn):
        def call():
            with torch.no_grad():
                return fn()
        return call

    class BasicBlock(nn.Module):
        """ResNet's basic block, the layout (and parameter order) of libtorch_bench.cpp's."""

        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down_conv = self.down_bn = None
            if stride != 1 or cin != cout:
                self.down_conv = nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
                self.down_bn = nn.BatchNorm2d(cout)

        def forward(self, x):
            y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
            shortcut = self.down_bn(self.down_conv(x)) if self.down_conv is not None else x
            return torch.relu(y + shortcut)

    has_sdpa = hasattr(F, "scaled_dot_product_attention")

    def case(name):
        """(function of no arguments doing one call, flops per call)"""
        torch.manual_seed(0)
        if name in ("train_mlp_784_256_10", "train_linear16_256"):
            widths, batch = ([784, 256, 10], 64) if name == "train_mlp_784_256_10" else ([256] * 17, 128)
            layers = []
            for i in range(len(widths) - 1):
                layers.append(nn.Linear(widths[i], widths[i + 1]))
                if i + 2 < len(widths) or len(widths) > 3:  # as libtorch_bench's BM_train
                    layers.append(nn.ReLU())
            model = nn.Sequential(*layers).to(dev)
            x = make_input([batch, widths[0]], 7)
            flops = sum(6.0 * batch * widths[i] * widths[i + 1] for i in range(len(widths) - 1))
            return train_step(model, x, labels_of(batch, widths[-1])), flops
        if name == "train_lenet5":
            model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                  nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                                  nn.Linear(84, 10)).to(dev)
            x = make_input([64, 1, 28, 28], 8)
            macs = 6.0 * 24 * 24 * 25 + 16.0 * 8 * 8 * 150 + 256.0 * 120 + 120.0 * 84 + 84.0 * 10
            return train_step(model, x, labels_of(64, 10)), 6.0 * 64 * macs
        if name == "transformer_layer_train":
            try:
                layer = nn.TransformerEncoderLayer(512, 8, dim_feedforward=2048, dropout=0.0,
                                                   batch_first=True)
                shape = [8, 256, 512]
            except TypeError:  # no batch_first (torch < 1.9): sequence first, the same math
                torch.manual_seed(0)
                layer = nn.TransformerEncoderLayer(512, 8, dim_feedforward=2048, dropout=0.0)
                shape = [256, 8, 512]
            head = nn.Linear(512, 16)
            model = nn.Sequential(layer, nn.Flatten(0, 1), head).to(dev)
            x = make_input(shape, 9)
            macs = 8.0 * 256 * (4.0 * 512 * 512 + 2.0 * 512 * 2048 + 2.0 * 256 * 512)
            return train_step(model, x, labels_of(8 * 256, 16)), 6.0 * macs
        if name == "lstm_train":
            class LstmOutput(nn.Module):  # nn.LSTM gives (output, (h_n, c_n)): keep the output
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(256, 256, num_layers=2, batch_first=True)

                def forward(self, x):
                    return self.lstm(x)[0]
            model = nn.Sequential(LstmOutput(), nn.Flatten(0, 1), nn.Linear(256, 16)).to(dev)
            x = make_input([16, 64, 256], 14)
            macs = 16.0 * 64 * (2 * 4.0 * 256 * 512 + 256 * 16)
            return train_step(model, x, labels_of(16 * 64, 16)), 6.0 * macs
        if name.endswith("_step_203k"):
            shapes = [[256, 784], [256], [10, 256], [10]]
            params = [make_input(sh, 20 + i).requires_grad_() for i, sh in enumerate(shapes)]
            for i, (p, sh) in enumerate(zip(params, shapes)):
                p.grad = make_input(sh, 30 + i)
            kind = name[:-len("_step_203k")]
            opt = {"sgd": lambda: torch.optim.SGD(params, lr=0.01, momentum=0.9),
                   "adam": lambda: torch.optim.Adam(params, lr=1e-3),
                   "rmsprop": lambda: torch.optim.RMSprop(params, lr=1e-2),
                   "adagrad": lambda: torch.optim.Adagrad(params, lr=1e-2)}[kind]()
            return opt.step, 0.0
        if name == "resnet18_fwd":
            layers = [nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64),
                      nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1)]
            width = 64
            for out in (64, 128, 256, 512):
                layers += [BasicBlock(width, out, 1 if out == 64 else 2), BasicBlock(out, out, 1)]
                width = out
            layers += [nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(512, 1000)]
            net = nn.Sequential(*layers).to(dev).eval()
            x = make_input([8, 3, 224, 224], 10)
            return no_grad(lambda: net(x)), 2.0 * 8 * 1.814e9
        if name == "sdpa_8x8x1024x64":
            q, k, v = (make_input([8, 8, 1024, 64], s) for s in (11, 12, 13))
            if has_sdpa:
                fn = lambda: F.scaled_dot_product_attention(q, k, v)  # noqa: E731
            else:
                # q is scaled before the product (as SDPA's math path does): a power of two,
                # so the scores are bit-identical to (q @ k^T) / 8, at 1/16 of the pass.
                scale = 1.0 / math.sqrt(64)
                fn = lambda: torch.softmax((q * scale) @ k.transpose(-2, -1), -1) @ v  # noqa: E731
            return no_grad(fn), 4.0 * 64 * 1024 * 1024 * 64
        raise SystemExit(f"pytorch_bench: unknown case {name!r}")

    def time_loop(fn, iters):
        """Wall nanoseconds for iters calls of fn (on CUDA with the synchronisations)."""
        if not cuda:
            rng = range(iters)
            t0 = time.perf_counter_ns()
            for _ in rng:
                fn()
            return time.perf_counter_ns() - t0
        t0 = time.perf_counter_ns()
        for i in range(1, iters + 1):
            fn()
            if i % SYNC_EVERY == 0 or i == iters:
                sync()
        return time.perf_counter_ns() - t0

    records = []
    for name in names:
        fn, flops = case(name)
        fn()  # warm-up, untimed, as the other programs do
        if cuda:
            for _ in range(CUDA_WARMUP):
                fn()
            sync()
        records += repetitions(name, lambda iters: time_loop(fn, iters), args.min_time, args.repetitions,
                               (lambda per: {"GFLOPS": flops / per}) if flops else None,
                               console=args.format == "console", width=24)
        del fn
        if cuda:
            torch.cuda.empty_cache()

    if args.format == "json":
        ctx = {"program": "pytorch_bench", "torch_version": torch.__version__,
               "torch_cuda": torch.version.cuda or "", "python": platform.python_version(),
               "device": str(dev), "device_name": device_name(torch, dev),
               "threads": args.threads, "torch_threads": torch.get_num_threads(),
               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", ""),
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", ""),
               "sdpa": "F.scaled_dot_product_attention" if has_sdpa else "softmax((q / 8) @ k^T) @ v"}
        if cuda:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:  # both off (set above): the same float32 arithmetic as devtensor's default
                    ctx["matmul_allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
                    ctx["cudnn_allow_tf32"] = bool(torch.backends.cudnn.allow_tf32)
                except (AttributeError, RuntimeError):
                    pass
        json.dump({"context": ctx, "benchmarks": records}, sys.stdout, indent=1)
        print()
    return 0


def device_name(torch, dev):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


if __name__ == "__main__":
    sys.exit(main())

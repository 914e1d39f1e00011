#!/usr/bin/env python3
"""Exports the reference models the examples run (issue 19) as safetensors files:

    /usr/bin/python3 tools/export_models.py OUT_DIR [resnet18 ...]

For each model: OUT_DIR/<model>.safetensors holds the model's state_dict exactly as
PyTorch names it (parameters and buffers, num_batches_tracked included), and
OUT_DIR/<model>_check.safetensors holds "input" and PyTorch's "logits" for it (eval
mode), which the C, Rust and Go programs compare their own forward pass with.

  resnet18   torchvision.models.resnet18(), random initialisation (torch.manual_seed(0)),
             its BatchNorm running statistics set to random values (as after training,
             so eval mode differs from train mode), input [2, 3, 224, 224] ~ N(0, 1).

  transformer  torch.nn.TransformerEncoder: 2 TransformerEncoderLayers (d_model 64, nhead
             4, dim_feedforward 256, gelu, batch_first) and a final LayerNorm, random
             initialisation (torch.manual_seed(0)); "input" [3, 16, 64] ~ N(0, 1), a
             boolean "key_padding_mask" [3, 16] (true: padding; the sequences are 16, 11
             and 5 long), and PyTorch's output as "logits" (eval mode).

Deterministic: the same PyTorch gives the same files. The files are written at test
time (46 MB for resnet18), never committed. Needs Debian's python3-torch and
python3-torchvision (script/bootstrap installs both).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from gen_safetensors import serialize  # noqa: E402  (the repo's own writer of the format)

torch.set_num_threads(max(1, os.cpu_count() or 1))


def write(path, tensors):
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(serialize([(k, v.detach().contiguous()) for k, v in tensors]))
    os.replace(tmp, path)  # a half-written file never has the final name


def resnet18():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    x = torch.randn(2, 3, 224, 224)
    with torch.no_grad():
        logits = model(x)
    return model, [("input", x), ("logits", logits)]


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 256, 0.1, "gelu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(64), enable_nested_tensor=False)
    model.eval()
    x = torch.randn(3, 16, 64)
    lengths = torch.tensor([16, 11, 5])
    padding = torch.arange(16)[None, :] >= lengths[:, None]
    with torch.no_grad():
        out = model(x, src_key_padding_mask=padding)
    return model, [("input", x), ("key_padding_mask", padding), ("logits", out)]


MODELS = {"resnet18": resnet18, "transformer": transformer}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or list(MODELS):
        model, check = MODELS[name]()
        write(os.path.join(out, f"{name}.safetensors"), list(model.state_dict().items()))
        write(os.path.join(out, f"{name}_check.safetensors"), check)
        print(f"{name}: {sum(p.numel() for p in model.state_dict().values())} values -> {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the safetensors reference file tests/test_safetensors.cpp loads, and checks
files devtensor wrote.

    /usr/bin/python3 tests/reference/gen_safetensors.py            # regenerate
    /usr/bin/python3 tests/reference/gen_safetensors.py --check F  # verify a file

Regenerating writes, under tests/reference/safetensors/:

  reference.safetensors  tensors of every dtype made by PyTorch (values chosen to hit
                         edge cases: int64 extremes, float16 subnormals and the largest
                         finite value, bfloat16 1e38, NaN/inf, a 0-d tensor, an empty
                         tensor, a non-ASCII name, a 3-byte U8 tensor that leaves the
                         next float32 tensor misaligned), serialised exactly as the
                         reference implementation (huggingface/safetensors) does:
                         8-byte little-endian header length, compact JSON header padded
                         with spaces to a multiple of 8 bytes, tensors back to back.
  reference.json         the same tensors as {"name", "dtype", "shape", "hex" (their
                         little-endian bytes), "values" (as Python numbers; NaN/inf as
                         strings)}, in file order.

The Debian package python3-safetensors does not exist, so the format is written here by
hand with struct + json. Since devtensor saves tensors in insertion order with the same
JSON layout, saving reference.json's tensors with dt_safetensors_save must give this file
byte for byte (the C++ test checks that).

--check F parses F with an independent hand-written reader (header length, JSON, every
rule of the format: known dtypes, byte counts, offsets tiling the buffer, padding), then
decodes every tensor with torch.frombuffer and compares it, bit for bit, with
reference.json. It exits 0 when F holds exactly the reference tensors in order.
"""
import json
import math
import os
import struct
import sys

try:
    import torch
except ImportError:  # the C++ test reports exit status 77 as "skipped: no torch"
    sys.stderr.write("gen_safetensors.py needs torch\n")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "safetensors")

CODES = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}
DTYPES = {v: k for k, v in CODES.items()}
SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
         "U8": 1, "BOOL": 1}


def reference_tensors():
    inf, nan = float("inf"), float("nan")
    return [
        ("f64", torch.tensor([[1.0 / 3.0, -2.5e-300], [1e300, -0.0]], dtype=torch.float64)),
        ("f32", (torch.arange(6, dtype=torch.float32) * 0.5 - 1.0).reshape(2, 3)),
        ("f16", torch.tensor([1.5, -2.0, 65504.0, 2.0 ** -24, inf, -inf], dtype=torch.float16)),
        ("bf16", torch.tensor([[1.0, -3.5], [1e38, 2.0 ** -133]], dtype=torch.bfloat16)),
        ("i64", torch.tensor([-(2 ** 63), 2 ** 63 - 1, 0, -1], dtype=torch.int64)),
        ("i32", torch.tensor([[-(2 ** 31), 2 ** 31 - 1], [7, -7]], dtype=torch.int32)),
        ("i16", torch.tensor([-32768, 32767, 12345], dtype=torch.int16)),
        ("i8", torch.tensor([-128, 127, 0, -1, 5], dtype=torch.int8)),
        ("u8", torch.tensor([0, 255, 128], dtype=torch.uint8)),
        ("bool", torch.tensor([True, False, True, True], dtype=torch.bool)),
        ("scalar", torch.tensor(3.25, dtype=torch.float32)),
        ("empty", torch.zeros(0, 3, dtype=torch.float32)),
        ("f32.nan", torch.tensor([nan, 1.0], dtype=torch.float32)),
        ("emb.\u00e9t\u00e9", torch.tensor([2.0, 4.0], dtype=torch.float32)),
        ("odd", torch.tensor([1, 2, 3], dtype=torch.uint8)),
        ("after_odd", torch.tensor([0.25, -8.0], dtype=torch.float32)),  # offset % 4 != 0
    ]


def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    if t.dtype == torch.bool:
        return t.to(torch.uint8).numpy().tobytes()
    return t.numpy().tobytes()


def json_value(x):
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return x


def serialize(tensors):
    header, blobs, at = {}, [], 0
    for name, t in tensors:
        b = tensor_bytes(t)
        header[name] = {"dtype": CODES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def parse(data):
    """An independent reader: returns [(name, code, shape, bytes)] in offset order."""
    assert len(data) >= 8, "file shorter than 8 bytes"
    (n,) = struct.unpack("<Q", data[:8])
    assert n <= 100_000_000 and 8 + n <= len(data), "bad header length %d" % n
    assert n % 8 == 0, "header length %d is not padded to a multiple of 8" % n
    raw = data[8:8 + n]
    assert raw.rstrip(b" ") == raw.rstrip(), "header padding is not spaces"

    def no_dups(pairs):
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), "duplicate key"
        return dict(pairs)

    header = json.loads(raw.decode("utf-8"), object_pairs_hook=no_dups)
    assert isinstance(header, dict)
    buf = data[8 + n:]
    entries = []
    for name, e in header.items():
        if name == "__metadata__":
            assert all(isinstance(v, str) for v in e.values())
            continue
        assert set(e) == {"dtype", "shape", "data_offsets"}, name
        code, shape, (b, end) = e["dtype"], e["shape"], e["data_offsets"]
        assert code in SIZES, code
        assert all(isinstance(d, int) and d >= 0 for d in shape)
        numel = 1
        for d in shape:
            numel *= d
        assert end - b == numel * SIZES[code], "%s: byte count" % name
        entries.append((b, end, name, code, shape))
    entries.sort(key=lambda x: (x[0], x[1]))
    at = 0
    for b, end, name, _, _ in entries:
        assert b == at, "%s: offsets do not tile the buffer (%d != %d)" % (name, b, at)
        at = end
    assert at == len(buf), "bytes after the last tensor"
    return [(name, code, shape, buf[b:end]) for b, end, name, code, shape in entries]


def decode(code, shape, b):
    dtype = DTYPES[code]
    if len(b) == 0:
        return torch.zeros(shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.frombuffer(bytearray(b), dtype=torch.uint8).to(torch.bool).reshape(shape)
    return torch.frombuffer(bytearray(b), dtype=dtype).reshape(shape)


def check(path):
    with open(path, "rb") as f:
        got = parse(f.read())
    want = reference_tensors()
    assert [g[0] for g in got] == [w[0] for w in want], "names/order: %s" % [g[0] for g in got]
    for (name, code, shape, b), (_, t) in zip(got, want):
        assert code == CODES[t.dtype] and shape == list(t.shape), name
        d = decode(code, shape, b)
        assert tensor_bytes(d) == tensor_bytes(t), "%s: bytes differ" % name
    print("ok: %s holds the %d reference tensors" % (path, len(got)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
        return
    os.makedirs(OUT_DIR, exist_ok=True)
    tensors = reference_tensors()
    data = serialize(tensors)
    parse(data)  # the writer and the reader agree
    with open(os.path.join(OUT_DIR, "reference.safetensors"), "wb") as f:
        f.write(data)
    cases = [{"name": name, "dtype": CODES[t.dtype], "shape": list(t.shape),
              "hex": tensor_bytes(t).hex(),
              "values": [json_value(v) for v in t.reshape(-1).tolist()]}
             for name, t in tensors]
    with open(os.path.join(OUT_DIR, "reference.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tests/reference/gen_safetensors.py",
                   "torch": torch.__version__, "tensors": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    check(os.path.join(OUT_DIR, "reference.safetensors"))


if __name__ == "__main__":
    main()

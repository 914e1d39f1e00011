"""The op table of src/core/op_table.h, read from Python.

script/gen-op-bindings writes the Go and Rust methods from it, and the PyTorch reference
generators (tests/reference/gen_reference.py, gen_grad_reference.py) take their op lists
from it, so a row added to the header reaches all of them. The header keeps one row per
line: X(field, field, ..., "doc").
"""
import os
import re
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "src", "core", "op_table.h")

Unary = namedtuple("Unary", "name code c_name rule cost visibility backward grad doc")
Binary = namedtuple("Binary", "name code c_name rule backward grad_a grad_b scalar_backward grad_scalar doc")
Reduce = namedtuple("Reduce", "name code c_name rule doc")
Kernel = namedtuple("Kernel", "name code c_name doc")


def _split_args(text):
    """Splits 'a, f(b, c), "d, e"' at the top-level commas."""
    args, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if quoted:
            cur += ch
            if ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    args.append(cur.strip())
    return args


def _rows(text, macro):
    body = text[text.index("#define %s(X)" % macro):]
    rows = []
    for line in body.split("\n")[1:]:
        m = re.match(r"\s*X\((.*)\)\s*\\?\s*$", line)
        if not m:
            break
        rows.append(_split_args(m.group(1)))
    return rows


def _unquote(s):
    assert s.startswith('"') and s.endswith('"'), s
    return s[1:-1]


def load(path=HEADER):
    with open(path) as f:
        text = f.read()
    unary = [Unary(*(r[:-1] + [_unquote(r[-1])])) for r in _rows(text, "DT_UNARY_OPS")]
    binary = [Binary(*(r[:-1] + [_unquote(r[-1])])) for r in _rows(text, "DT_BINARY_OPS")]
    reduce = [Reduce(*(r[:-1] + [_unquote(r[-1])])) for r in _rows(text, "DT_REDUCE_OPS")]
    kernel = [Kernel(*(r[:-1] + [_unquote(r[-1])])) for r in _rows(text, "DT_KERNEL_OPS")]
    for kind, rows in (("unary", unary), ("binary", binary), ("reduce", reduce), ("kernel", kernel)):
        assert rows, "no %s rows in %s" % (kind, path)
    codes = [int(r.code) for r in unary + binary + reduce + kernel]
    assert len(codes) == len(set(codes)), "op codes must be unique"
    return unary, binary, reduce


def public_unary(unary):
    return [u for u in unary if u.visibility == "Public"]


def has_inplace(b):
    """Binary ops with in-place forms (dt_<op>_, dt_<op>_scalar_): all but comparisons."""
    return b.rule != "Compare"


def camel(c_name):
    """Go's exported name: argmax -> Argmax, log_softmax -> LogSoftmax."""
    return "".join(p[:1].upper() + p[1:] for p in c_name.split("_"))


if __name__ == "__main__":
    u, b, r = load()
    print("%d unary (%d public), %d binary, %d reductions" % (len(u), len(public_unary(u)), len(b), len(r)))

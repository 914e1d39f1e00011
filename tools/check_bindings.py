#!/usr/bin/env python3
"""tools/check_bindings.py: every public function of include/devtensor.h must be called by
the Go binding (bindings/go/devtensor) and by the safe Rust crate (bindings/rust/devtensor/src), or
be listed in bindings/unbound.txt with the reason it is not. Fails (exit 1) on a
function neither binding nor the list accounts for, and on a list line that is stale
(the function is bound now, or no longer exists). script/test runs it.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def header_functions():
    text = open(os.path.join(ROOT, "include", "devtensor.h")).read()
    return sorted(set(re.findall(r"DT_API\s+[\w\s\*]*?\b(dt_\w+)\s*\(", text)))


def sources(folder, exts, skip):
    out = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
        rel = os.path.relpath(dirpath, ROOT)
        if any(rel.startswith(s) for s in skip):
            continue
        for f in files:
            if f.endswith(exts) and not f.endswith("_test.go"):
                text = open(os.path.join(dirpath, f)).read()
                # A Rust file's unit tests (its #[cfg(test)] module, at the end) bind nothing.
                if f.endswith(".rs") and "#[cfg(test)]" in text:
                    text = text[:text.index("#[cfg(test)]")]
                out.append(text)
    return "\n".join(out)


def called(text):
    return set(re.findall(r"\b(dt_\w+)\b", text))


def main():
    fns = header_functions()
    bound = {
        "go": called(sources("bindings/go", (".go", ".h"), ["bindings/go/devtensor/internal", "bindings/go/devtensor/examples"])),
        "rust": called(sources("bindings/rust/devtensor/src", (".rs",), [])),
    }
    listed = {}
    path = os.path.join(ROOT, "bindings", "unbound.txt")
    for n, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or parts[0] not in bound:
            sys.exit("%s:%d: expected '<go|rust> <function> <reason>'" % (path, n))
        listed[(parts[0], parts[1])] = n
    problems = []
    for lang, names in bound.items():
        for fn in fns:
            if fn not in names and (lang, fn) not in listed:
                problems.append("%s: %s has no binding (bind it, or list it in bindings/unbound.txt with why)" % (lang, fn))
    for (lang, fn), n in sorted(listed.items(), key=lambda kv: kv[1]):
        if fn not in fns:
            problems.append("bindings/unbound.txt:%d: %s is not in include/devtensor.h" % (n, fn))
        elif fn in bound[lang]:
            problems.append("bindings/unbound.txt:%d: %s is bound in %s now; drop the line" % (n, fn, lang))
    for p in problems:
        print(p)
    print("%d public functions; Go binds %d, Rust %d; %d listed as unbound" % (
        len(fns), len([f for f in fns if f in bound["go"]]), len([f for f in fns if f in bound["rust"]]), len(listed)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

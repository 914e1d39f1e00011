#!/usr/bin/env bash
# bindings/go/bench_rounds.sh [ROUNDS] [PREFIX]: the per-op overhead benchmarks of the Go
# binding, run ROUNDS times (default 8) in fresh processes, with the median, min and max
# of each figure over the rounds. One round is one `go test -bench` process running
# BenchmarkAdd4Overhead (the figure to report: (Go - C) / ops with Go and C chunks
# interleaved), BenchmarkAdd4 and BenchmarkAddInPlace4 for 2 s each; a shared VM's speed
# drifts between processes, which the spread shows. PREFIX as in run_tests.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
rounds=${1:-8}
prefix=${2:-${DEVTENSOR_PREFIX:-}}
if [[ -n $prefix ]]; then
  prefix=$(cd "$prefix" && pwd)
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
fi
cd devtensor # the package
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
bin=$(mktemp -d)/devtensor.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" .
out=$(mktemp)
trap 'rm -rf "$(dirname "$bin")" "$out"' EXIT
go version
grep -m1 "model name" /proc/cpuinfo || true
for ((r = 1; r <= rounds; r++)); do
  "$bin" -test.run '^$' -test.bench 'Add4|AddInPlace4' -test.benchtime 2s | grep '^Benchmark' | tee -a "$out"
done
python3 - "$out" <<'PY'
import re, statistics, sys
from collections import defaultdict
vals = defaultdict(list)
for line in open(sys.argv[1]):
    name = re.sub(r"-\d+$", "", line.split()[0])
    vals[name].append(float(line.split()[2]))          # ns/op
    for v, unit in re.findall(r"([\d.]+) ([a-z-]+/op)", line):
        if unit != "ns/op" and unit not in ("B/op", "allocs/op"):
            vals[f"{name} {unit}"].append(float(v))
print(f"\nover {len(vals['BenchmarkAdd4/Go'])} rounds: median [min .. max]")
for k in sorted(vals):
    x = vals[k]
    print(f"  {k:45s} {statistics.median(x):7.1f} [{min(x):.1f} .. {max(x):.1f}]")
PY

#!/usr/bin/env bash
# bindings/go/run_tests.sh [PREFIX]: vet and test the Go binding (the module in
# bindings/go/devtensor: the package, its examples and internal/dlpacktest) against an installed
# devtensor (cmake --install build/release --prefix PREFIX). PREFIX defaults to
# $DEVTENSOR_PREFIX; without either, PKG_CONFIG_PATH must already find devtensor.pc.
# Runs: go vet; go test -race with GODEBUG=cgocheck=2 (pkg-config build); go test with
# the devtensor_nopkgconfig tag (CGO_CFLAGS/CGO_LDFLAGS build); the examples devices,
# realistic, train_digits and, on PyTorch's models (see model_files), resnet18 and
# transformer. No module proxy.
# The two-process tests start programs under `devtensor run`: TestProcessGroupTwoRanks
# the test binary itself, TestDistributedDataParallelDigitsTwoRanks examples/train_digits_ddp
# (built with `go build`, run once plainly and once over two ranks, the losses compared).
# DEVTENSOR_CLI, if not set already, is PREFIX/bin/devtensor (without a prefix the tests
# look in build/release/tools and skip, saying so, when it is absent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
prefix=${1:-${DEVTENSOR_PREFIX:-}}
if [[ -n $prefix ]]; then
  prefix=$(cd "$prefix" && pwd)
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  if [[ -z ${DEVTENSOR_CLI:-} && -x $prefix/bin/devtensor ]]; then
    export DEVTENSOR_CLI=$prefix/bin/devtensor
  fi
fi
root=$(cd ../.. && pwd)

# model_files: sets $models to a directory holding the files tools/export_models.py
# writes (resnet18, transformer): $DEVTENSOR_MODELS, or build/release/models (ctest's
# models.export fixture writes it), when complete; else a temporary directory it writes
# them into now (removed on exit); else empty, printing SKIP and why.
model_files() {
  local m
  models=${DEVTENSOR_MODELS:-$root/build/release/models}
  for m in resnet18 resnet18_check transformer transformer_check; do
    [[ -f $models/$m.safetensors ]] && continue
    if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
      echo "SKIP: no $models/$m.safetensors, and /usr/bin/python3 lacks torch or torchvision to write it (script/bootstrap)"
      models=
      return 0
    fi
    echo "no $models/$m.safetensors: tools/export_models.py writes the models into a temporary directory"
    models=$(mktemp -d)
    trap 'rm -rf "$models"' EXIT
    /usr/bin/python3 "$root/tools/export_models.py" "$models"
    return 0
  done
}

cd devtensor # the module: github.com/devtensor/devtensor/bindings/go/devtensor
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
command -v go >/dev/null || { echo "go not found (apt-get install -y golang-go)"; exit 1; }
go version
echo "+ script/gen-op-bindings --check (ops_table.go/.h match src/core/op_table.h)"
../../../script/gen-op-bindings --check
echo "+ go vet ./..."
go vet ./...
echo "+ GODEBUG=cgocheck=2 go test -race -count=1 ./... (every call a cgo call: the race detector turns the fast path off, fastcall.go)"
GODEBUG=cgocheck=2 go test -race -count=1 ./...
if [[ -n $prefix ]]; then
  echo "+ go test -tags devtensor_nopkgconfig (CGO_CFLAGS/CGO_LDFLAGS from $prefix; with the fast path for small CPU tensors)"
  env -u PKG_CONFIG_PATH CGO_CFLAGS="-I$prefix/include" \
    CGO_LDFLAGS="-L$prefix/lib -Wl,-rpath,$prefix/lib" \
    go test -count=1 -tags devtensor_nopkgconfig ./...
fi
echo "+ go run ./examples/devices && go run ./examples/realistic && go run ./examples/train_digits (must reach 95%)"
DEVTENSOR_CPU_DEVICES=2 go run ./examples/devices
DEVTENSOR_CPU_DEVICES=2 go run ./examples/realistic
go run ./examples/train_digits
# The PyTorch models of issue 19 (examples/resnet18 and examples/transformer, each
# compared with PyTorch's output within 1e-4): see model_files.
echo "+ go run ./examples/resnet18 && go run ./examples/transformer (PyTorch's models)"
model_files
if [[ -n $models ]]; then
  for m in resnet18 transformer; do
    go run "./examples/$m" "$models/$m.safetensors" "$models/${m}_check.safetensors"
  done
fi

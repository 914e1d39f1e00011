#!/usr/bin/env bash
# bindings/go/run_tests.sh [PREFIX]: vet and test the Go binding (the module in
# bindings/go/devtensor: the package, its examples and internal/dlpacktest) against an installed
# devtensor (cmake --install build/release --prefix PREFIX). PREFIX defaults to
# $DEVTENSOR_PREFIX; without either, PKG_CONFIG_PATH must already find devtensor.pc.
# Runs: go vet; go test -race with GODEBUG=cgocheck=2 (pkg-config build); go test with
# the devtensor_nopkgconfig tag (CGO_CFLAGS/CGO_LDFLAGS build). No module proxy.
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
cd devtensor # the module: github.com/devtensor/devtensor/bindings/go/devtensor
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
command -v go >/dev/null || { echo "go not found (apt-get install -y golang-go)"; exit 1; }
go version
echo "+ script/gen-op-bindings --check (ops_table.go/.h match src/core/op_table.h)"
../../../script/gen-op-bindings --check
echo "+ go vet ./..."
go vet ./...
echo "+ GODEBUG=cgocheck=2 go test -race -count=1 ./..."
GODEBUG=cgocheck=2 go test -race -count=1 ./...
if [[ -n $prefix ]]; then
  echo "+ go test -tags devtensor_nopkgconfig (CGO_CFLAGS/CGO_LDFLAGS from $prefix)"
  env -u PKG_CONFIG_PATH CGO_CFLAGS="-I$prefix/include" \
    CGO_LDFLAGS="-L$prefix/lib -Wl,-rpath,$prefix/lib" \
    go test -count=1 -tags devtensor_nopkgconfig ./...
fi
echo "+ go run ./examples/devices && go run ./examples/realistic && go run ./examples/train_digits (must reach 95%)"
DEVTENSOR_CPU_DEVICES=2 go run ./examples/devices
DEVTENSOR_CPU_DEVICES=2 go run ./examples/realistic
go run ./examples/train_digits

#!/usr/bin/env bash
# bindings/rust/run_tests.sh [PREFIX]: build and test the Rust bindings against an
# installed devtensor (cmake --install build/release --prefix PREFIX). PREFIX defaults to
# $DEVTENSOR_PREFIX; without either, PKG_CONFIG_PATH (or DEVTENSOR_LIB_DIR) must already
# find the library. No crate registry is used: every cargo command runs --offline.
# Runs: the bindgen check (committed bindings == what bindgen makes of the header now,
# when bindgen is installed); cargo test (unit tests, tests/, doctests, bindgen's layout
# tests; devtensor/tests/distributed.rs runs its rank side in two processes under
# `devtensor run`, DEVTENSOR_CLI, which defaults to PREFIX/bin/devtensor, and
# devtensor/tests/ddp.rs runs the train_digits_ddp example, which cargo test builds,
# once plainly and once over two ranks, comparing the losses); the
# parameter-read-while-moving test again under valgrind; cargo run --example
# devices, --example realistic and --example train_digits; --example resnet18 and
# --example transformer on PyTorch's models (see model_files); the check that Cargo.lock
# names only workspace crates. CARGO_TARGET_DIR defaults to build/rust-target in the repository.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$here"
prefix=${1:-${DEVTENSOR_PREFIX:-}}
if [[ -n $prefix ]]; then
  prefix=$(cd "$prefix" && pwd)
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  # The launcher of devtensor/tests/distributed.rs (`devtensor run`), unless set already.
  if [[ -z ${DEVTENSOR_CLI:-} && -x $prefix/bin/devtensor ]]; then
    export DEVTENSOR_CLI=$prefix/bin/devtensor
  fi
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/build/rust-target}
export CARGO_NET_OFFLINE=true
jobs=${CARGO_BUILD_JOBS:-2}
command -v cargo >/dev/null || { echo "cargo not found (https://rustup.rs, or apt-get install -y cargo)"; exit 1; }
cargo --version

# The committed src/bindings.rs must be what bindgen makes of include/devtensor.h now.
# Skipped (with the reason) when bindgen is absent or is another version than the one
# that generated the committed file (versions format differently).
bindgen_check() {
  local committed=devtensor-sys/src/bindings.rs tmp want have
  if ! command -v bindgen >/dev/null; then
    echo "SKIP bindgen check: bindgen is not installed (apt-get install -y bindgen)"
    return 0
  fi
  want=$(sed -n '1s/.*rust-bindgen \([0-9.]*\).*/\1/p' "$committed")
  have=$(bindgen --version | awk '{print $2}')
  if [[ $want != "$have" ]]; then
    echo "SKIP bindgen check: $committed was made by bindgen $want, this is bindgen $have"
    return 0
  fi
  tmp=$(mktemp --suffix=.rs)
  "$root/script/gen-bindings" "$tmp"
  if ! diff -u "$committed" "$tmp"; then
    rm -f "$tmp"
    echo "FAIL: $committed is stale; run script/gen-bindings and commit it"
    return 1
  fi
  rm -f "$tmp"
  echo "bindgen check: $committed matches include/devtensor.h (bindgen $have)"
}

# Cargo.lock may name only the workspace's crates, and none may come from a registry.
lock_check() {
  local names
  names=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.lock | sort | tr '\n' ' ')
  if [[ $names != "devtensor devtensor-sys " ]] || grep -q '^source = ' Cargo.lock; then
    echo "FAIL: Cargo.lock names crates from outside the workspace: $names"
    return 1
  fi
  echo "Cargo.lock: only workspace crates ($names)"
}

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

echo "+ script/gen-op-bindings --check (ops_table.rs matches src/core/op_table.h)"
"$root/script/gen-op-bindings" --check
echo "+ bindgen check"
bindgen_check
echo "+ cargo test --offline --locked"
cargo test --offline --locked -j "$jobs"
# Safe Rust reading a parameter while another thread moves the module: under valgrind a
# read of freed memory is an error even where it does not crash (issue 16.10).
echo "+ valgrind: parameter_read_on_other_threads_while_the_module_moves"
if command -v valgrind >/dev/null; then
  bin=$(cargo test --offline --locked -j "$jobs" --test four_cpu_devices --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*four_cpu_devices-[0-9a-f]*\)).*/\1/p' | tail -n1)
  [[ -x $bin ]] || { echo "FAIL: no four_cpu_devices test binary found"; exit 1; }
  valgrind --error-exitcode=1 --fair-sched=yes --leak-check=no "$bin" \
    parameter_read_on_other_threads_while_the_module_moves --exact --test-threads=1
else
  echo "SKIP: valgrind is not installed"
fi
echo "+ cargo run --offline --example devices (DEVTENSOR_CPU_DEVICES=2)"
DEVTENSOR_CPU_DEVICES=2 cargo run --offline --locked -j "$jobs" -q --example devices
echo "+ cargo run --offline --example realistic (DEVTENSOR_CPU_DEVICES=2; issue 20's yardstick)"
DEVTENSOR_CPU_DEVICES=2 cargo run --offline --locked -j "$jobs" -q --example realistic
echo "+ cargo run --offline --example train_digits (must reach 95%)"
cargo run --offline --locked -j "$jobs" -q --release --example train_digits
# The PyTorch models of issue 19 (examples resnet18 and transformer, each compared with
# PyTorch's output within 1e-4): the files ctest's models.export fixture wrote
# ($DEVTENSOR_MODELS, default build/release/models), else written now into a temporary
# directory by tools/export_models.py, else skipped saying why.
echo "+ cargo run --offline --release --example resnet18 / transformer (PyTorch's models)"
model_files
if [[ -n $models ]]; then
  for m in resnet18 transformer; do
    cargo run --offline --locked -j "$jobs" -q --release --example "$m" -- \
      "$models/$m.safetensors" "$models/${m}_check.safetensors"
  done
fi
echo "+ Cargo.lock check"
lock_check

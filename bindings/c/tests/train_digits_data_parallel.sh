#!/usr/bin/env bash
# The digits demo trained through DataParallel over two logical CPU devices must reach the
# same test accuracy as the plain one-device run (issue 8): the gathered logits and the
# summed gradients equal the plain ones up to float rounding, so the two curves agree.
#   train_digits_data_parallel.sh path/to/example_train_digits
set -euo pipefail
demo=$1
export DEVTENSOR_CPU_DEVICES=2
plain=$("$demo" "" 30 cpu:0)
parallel=$("$demo" "" 30 cpu:0,cpu:1)
accuracy() { sed -n 's/^test accuracy: \([0-9.]*\)%.*/\1/p' <<<"$1"; }
a=$(accuracy "$plain")
b=$(accuracy "$parallel")
echo "plain (cpu:0): $a%   DataParallel (cpu:0,cpu:1): $b%"
grep -q "DataParallel over cpu:0,cpu:1" <<<"$parallel" || { echo "the second run did not use DataParallel"; exit 1; }
[[ -n $a && -n $b ]] || { echo "no accuracy printed"; exit 1; }
# Equal within one test image of 360 (float rounding may flip a borderline one).
awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 100 / 360 + 1e-9 && b >= 95) }' ||
  { echo "DataParallel's accuracy differs from the plain run's"; exit 1; }

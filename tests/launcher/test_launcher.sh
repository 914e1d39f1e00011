#!/usr/bin/env bash
# Tests of `devtensor run` (tools/launcher.c), the torchrun-like launcher.
#
#   test_launcher.sh /path/to/devtensor
#
# Each check prints "ok - ..." or "FAIL - ..." with what it saw; the script exits 1 when
# one failed. Every launcher run has a generous time limit (`timeout`) so that a hang is
# reported as a failure instead of blocking ctest, and waits poll instead of sleeping a
# fixed time, so that a loaded machine only makes it slower.
set -euo pipefail

if [[ $# -ne 1 || ! -x "$1" ]]; then
  echo "usage: $0 /path/to/devtensor" >&2
  exit 2
fi
CLI=$1
LIMIT=120 # seconds any one launcher run may take before it counts as hung

WORK=$(mktemp -d "${TMPDIR:-/tmp}/dt-launcher-test.XXXXXX")
MARKER="dt-launcher-marker-$$-$RANDOM$RANDOM"
cleanup() {
  pkill -KILL -f "^$MARKER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

failures=0
ok() { echo "ok - $1"; }
fail() {
  echo "FAIL - $1" >&2
  if [[ -f $WORK/out ]]; then sed 's/^/    stdout: /' "$WORK/out" | head -20 >&2; fi
  if [[ -f $WORK/err ]]; then sed 's/^/    stderr: /' "$WORK/err" | head -20 >&2; fi
  failures=$((failures + 1))
}

# launch ARGS...: runs `devtensor run ARGS...` with stdout in $WORK/out, stderr in
# $WORK/err and the exit status in $rc.
launch() {
  rc=0
  timeout -k 10 "$LIMIT" "$CLI" run "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    echo "    (the launcher hung: killed after ${LIMIT}s)" >&2
  fi
}

# wait_for COUNT: waits (up to 60 s) until COUNT processes whose command line starts
# with $MARKER exist.
wait_for() {
  local i n
  for ((i = 0; i < 600; ++i)); do
    n=$(pgrep -c -f "^$MARKER" || true)
    [[ $n -ge $1 ]] && return 0
    sleep 0.1
  done
  return 1
}

survivors() { pgrep -a -f "^$MARKER" || true; }

# A rank's command: `exec -a` names the process $MARKER, so pgrep finds exactly the
# ranks' sleeps (the launcher's own command line has the marker, but not at the start).
SLEEPER='exec -a "$0" sleep 60'

# ------------------------------------------------------------------ 1. environment
launch --nproc-per-node 3 -- sh -c \
  'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT"'
t="1. three ranks get RANK, LOCAL_RANK, WORLD_SIZE, ... and one free port"
if [[ $rc -ne 0 ]]; then
  fail "$t: exit status $rc, expected 0"
elif [[ $(wc -l <"$WORK/out") -ne 3 ]]; then
  fail "$t: expected exactly 3 lines of output"
else
  port=$(sed -n 's/^\[rank 0\] .* //p' "$WORK/out")
  bad=""
  if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
    bad="MASTER_PORT '$port' is not a port number"
  fi
  for r in 0 1 2; do
    want="[rank $r] $r $r 3 3 0 127.0.0.1 $port"
    if ! grep -qxF -- "$want" "$WORK/out"; then bad="$bad; no line '$want'"; fi
  done
  if [[ -n $bad ]]; then fail "$t: ${bad#; }"; else ok "$t (port $port)"; fi
fi

# ------------------------------------------------------------ 2. second node of two
launch --nnodes 2 --node-rank 1 --nproc-per-node 2 --master-port 29999 -- sh -c \
  'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT"'
t="2. node 1 of 2 with 2 ranks each: RANKs 2 and 3 of 4, MASTER_PORT 29999"
if [[ $rc -ne 0 ]]; then
  fail "$t: exit status $rc, expected 0"
elif [[ $(wc -l <"$WORK/out") -ne 2 ]] ||
  ! grep -qxF "[rank 2] 2 0 4 2 1 127.0.0.1 29999" "$WORK/out" ||
  ! grep -qxF "[rank 3] 3 1 4 2 1 127.0.0.1 29999" "$WORK/out"; then
  fail "$t: expected the lines '[rank 2] 2 0 4 2 1 127.0.0.1 29999' and '[rank 3] 3 1 4 2 1 127.0.0.1 29999'"
else
  ok "$t"
fi

# ------------------------------------------------------------- 3. stderr is stderr
launch --nproc-per-node 2 -- sh -c 'echo "to-stderr $RANK" >&2; echo "to-stdout $RANK"'
t="3. a rank's stderr lines go to stderr, prefixed"
if [[ $rc -ne 0 ]]; then
  fail "$t: exit status $rc, expected 0"
elif ! grep -qxF "[rank 0] to-stderr 0" "$WORK/err" || ! grep -qxF "[rank 1] to-stderr 1" "$WORK/err"; then
  fail "$t: stderr lacks '[rank 0] to-stderr 0' or '[rank 1] to-stderr 1'"
elif grep -q "to-stderr" "$WORK/out"; then
  fail "$t: a stderr line reached stdout"
elif ! grep -qxF "[rank 0] to-stdout 0" "$WORK/out" || ! grep -qxF "[rank 1] to-stdout 1" "$WORK/out" ||
  grep -q "to-stdout" "$WORK/err"; then
  fail "$t: the stdout lines are not (only) on stdout"
else
  ok "$t"
fi

# ---------------------------------------------- 3b. partial last line, --no-prefix
launch --nproc-per-node 2 --no-prefix -- sh -c 'printf "a line\nno newline $RANK"'
t="3b. --no-prefix; a final partial line is written with a newline"
if [[ $rc -ne 0 ]]; then
  fail "$t: exit status $rc, expected 0"
elif [[ $(grep -cxF "a line" "$WORK/out") -ne 2 ]] || ! grep -qxF "no newline 0" "$WORK/out" ||
  ! grep -qxF "no newline 1" "$WORK/out" || [[ $(wc -l <"$WORK/out") -ne 4 ]]; then
  fail "$t: expected 'a line' twice, 'no newline 0' and 'no newline 1', unprefixed, 4 lines"
else
  ok "$t"
fi

# ------------------------------------------------------ 3c. lines never interleave
cat >"$WORK/burst.sh" <<'EOF'
x=$(printf '%*s' 3000 '' | tr ' ' x)
i=0
while [ $i -lt 500 ]; do
  echo "line-$RANK-$i $x"
  i=$((i + 1))
done
EOF
launch --nproc-per-node 4 -- sh "$WORK/burst.sh"
t="3c. 4 ranks writing 3 KB lines at once: every line whole and of one rank"
if [[ $rc -ne 0 ]]; then
  fail "$t: exit status $rc, expected 0"
elif [[ $(wc -l <"$WORK/out") -ne 2000 ]]; then
  fail "$t: expected 2000 lines, got $(wc -l <"$WORK/out")"
elif bad=$(awk '
    { r = substr($2, 1, 1) }
    !(NF == 4 && $0 == $1 " " $2 " " $3 " " $4 && $1 == "[rank" && $2 ~ /^[0-3]\]$/ &&
      $3 ~ ("^line-" r "-[0-9]+$") && length($4) == 3000 && $4 ~ /^x+$/) {
      if (!n++) first = NR ": " substr($0, 1, 100)
    }
    END { if (n) print n " mixed lines, e.g. line " first }' "$WORK/out") && [[ -n $bad ]]; then
  rm -f "$WORK/out"
  fail "$t: $bad"
else
  ok "$t"
fi

# ------------------------------------------------------------ 4. a failing rank
start=$(date +%s)
launch --nproc-per-node 3 -- bash -c 'if [ "$RANK" = 1 ]; then exit 3; fi; '"$SLEEPER" "$MARKER"
elapsed=$(($(date +%s) - start))
t="4. rank 1 exits 3: the others are stopped, exit non-zero within 10 s"
left=$(survivors)
if [[ $rc -eq 0 || $rc -eq 124 || $rc -eq 137 ]]; then
  fail "$t: exit status $rc, expected a failure"
elif ((elapsed > 10)); then
  fail "$t: took ${elapsed}s"
elif ! grep -q "rank 1 .*status 3" "$WORK/err"; then
  fail "$t: stderr does not name rank 1 and status 3"
elif ! grep -qx "devtensor run: failed: rank 1 exited with status 3" "$WORK/err"; then
  fail "$t: no final line 'devtensor run: failed: rank 1 exited with status 3'"
elif grep -Eq "rank (0|2) .*(exited|killed)" "$WORK/err"; then
  fail "$t: a rank stopped by the launcher was reported as failing"
elif [[ -n $left ]]; then
  fail "$t: ranks survived: $left"
else
  ok "$t (${elapsed}s, exit $rc)"
fi

# ------------------------------------------------------ 5. a rank killed by a signal
launch --nproc-per-node 2 -- bash -c 'if [ "$RANK" = 0 ]; then kill -9 $$; fi; '"$SLEEPER" "$MARKER"
t="5. rank 0 killed by SIGKILL: exit non-zero, the signal named"
left=$(survivors)
if [[ $rc -eq 0 || $rc -eq 124 || $rc -eq 137 ]]; then
  fail "$t: exit status $rc, expected a failure"
elif ! grep -Eq "rank 0 .*killed by signal .*\(9\)" "$WORK/err"; then
  fail "$t: stderr does not say that rank 0 was killed by signal 9"
elif ! grep -Eq "^devtensor run: failed: rank 0 was killed by signal" "$WORK/err"; then
  fail "$t: no final line 'devtensor run: failed: rank 0 was killed by signal ...'"
elif [[ -n $left ]]; then
  fail "$t: ranks survived: $left"
else
  ok "$t"
fi

# ---------------------------------------------------- 6. SIGTERM to the launcher
rc=0
"$CLI" run --nproc-per-node 2 -- bash -c "$SLEEPER" "$MARKER" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
t="6. SIGTERM to the launcher: the ranks are terminated, exit 143"
if ! wait_for 2; then
  kill -KILL "$launcher" 2>/dev/null || true
  wait "$launcher" 2>/dev/null || true
  fail "$t: the two ranks did not start within 60 s"
else
  # The ranks sleep 60 s and die of SIGTERM at once; give the launcher 30 s.
  kill -TERM "$launcher"
  for ((i = 0; i < 300; ++i)); do
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$launcher" 2>/dev/null; then
    kill -KILL "$launcher" 2>/dev/null || true
    wait "$launcher" 2>/dev/null || true
    fail "$t: the launcher was still running 30 s after SIGTERM"
  else
    wait "$launcher" || rc=$?
    left=$(survivors)
    if [[ $rc -ne 143 ]]; then
      fail "$t: exit status $rc, expected 143"
    elif [[ -n $left ]]; then
      fail "$t: ranks survived: $left"
    elif grep -Eq "rank [01] .*(exited|killed)" "$WORK/err"; then
      fail "$t: ranks stopped by the launcher were reported as failing"
    else
      ok "$t"
    fi
  fi
fi

# ---------------------------------------------------------------- 7. usage errors
usage_case() {
  local what=$1
  shift
  launch "$@"
  if [[ $rc -ne 2 ]]; then
    fail "7. usage error ($what): exit status $rc, expected 2"
  elif ! head -1 "$WORK/err" | grep -q "^devtensor run: " || ! grep -q "^usage: " "$WORK/err"; then
    fail "7. usage error ($what): expected a reason and the usage on stderr"
  else
    ok "7. usage error ($what): $(head -1 "$WORK/err")"
  fi
}
usage_case "no program"
usage_case "nothing after --" --nproc-per-node 2 --
usage_case "--nproc-per-node 0" --nproc-per-node 0 -- true
usage_case "--node-rank 2 --nnodes 2" --node-rank 2 --nnodes 2 -- true
usage_case "unknown option" --no-such-option -- true
usage_case "missing value" --nproc-per-node
usage_case "--master-port 70000" --master-port 70000 -- true

# ----------------------------------------------------- 8. a program that is missing
missing="$WORK/no-such-program-$MARKER"
launch --nproc-per-node 2 -- "$missing" --flag
t="8. a program that does not exist: exit non-zero, the program named"
if [[ $rc -eq 0 || $rc -eq 124 || $rc -eq 137 ]]; then
  fail "$t: exit status $rc, expected a failure"
elif ! grep -qF "cannot run $missing" "$WORK/err"; then
  fail "$t: stderr does not say 'cannot run $missing'"
else
  ok "$t (exit $rc)"
fi

if ((failures > 0)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all checks passed"

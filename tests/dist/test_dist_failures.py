#!/usr/bin/env python3
"""Process groups when ranks fail, and the three rendezvous methods.

    test_dist_failures.py DIST_WORKER DEVTENSOR_CLI

Starts dist_worker (tests/dist/dist_worker.c) as several local processes with the
env:// variables set, as `devtensor run` would, and checks what every rank reports:
  - a rank killed mid-training: the others fail with DT_ERR_DISTRIBUTED well within the
    timeout, naming that rank; a later call fails at once saying the group is unusable;
  - rank 0 (which serves the store) killed: the others name rank 0;
  - a rank that never starts: the others fail after the timeout naming it;
  - ranks started with different world sizes: a clear error, no hang;
  - tcp:// and file:// rendezvous work, and file:// deletes its file at the end;
  - the launcher, when a rank is killed, exits non-zero naming it.
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

WORKER, CLI = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(ranks, world, args, port=None, extra_env=None):
    port = port or free_port()
    procs = {}
    for r in ranks:
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(world), LOCAL_RANK=str(r),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        env.update(extra_env or {})
        procs[r] = subprocess.Popen([WORKER] + args, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
    return procs


def finish(procs, limit_s):
    out = {}
    deadline = time.monotonic() + limit_s
    for r, p in procs.items():
        try:
            o, e = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
            e += "\n<killed by the test: hung>"
        out[r] = (p.returncode, o, e)
    return out


def killed_rank(victim, world, timeout_ms):
    t0 = time.monotonic()
    procs = start(range(world), world, ["train", "env://", "100000", str(victim), "20", str(timeout_ms)])
    res = finish(procs, timeout_ms / 1000 + 30)
    elapsed = time.monotonic() - t0
    check(res[victim][0] == -9, f"rank {victim} died of SIGKILL (status {res[victim][0]})")
    for r in range(world):
        if r == victim:
            continue
        code, _, err = res[r]
        check(code == 3, f"rank {r} returned the error (exit {code}; stderr: {err.strip()[:400]})")
        check("distributed error" in err and f"rank {victim} exited" in err,
              f"rank {r} names rank {victim}: {err.strip()[:400]}")
        check("unusable after an earlier failure" in err, f"rank {r}: a later call says the group is unusable")
    check(elapsed < timeout_ms / 1000, f"the survivors gave up in {elapsed:.1f} s, within the {timeout_ms} ms timeout")


# 1. A rank killed mid-training (3 ranks; the victim is not the store's server).
killed_rank(1, 3, 20000)
# 2. Rank 0, which serves the store, killed.
killed_rank(0, 2, 20000)

# 3. A rank that never starts: world size 3, ranks 0 and 1 only, 2 s timeout.
t0 = time.monotonic()
res = finish(start([0, 1], 3, ["join", "env://", "2000", "-1"]), 30)
elapsed = time.monotonic() - t0
for r in (0, 1):
    code, _, err = res[r]
    # Rank 0 gives up at its deadline and takes its store along; a rank that was still
    # waiting then reports what it saw last.
    check(code == 3 and ("rank 2 of 3 did not join within 2000 ms" in err or
                         "rank 2 of 3 had not joined when rank 0's store went away" in err),
          f"rank {r} names the missing rank 2 (exit {code}: {err.strip()[:300]})")
check(elapsed < 15, f"the missing rank was reported after {elapsed:.1f} s")

# 4. Ranks started with different world sizes.
port = free_port()
procs = start([0], 2, ["join", "env://", "5000", "2"], port=port)
procs.update(start([1], 3, ["join", "env://", "5000", "3"], port=port))
res = finish(procs, 30)
check(any("every rank must be started with the same world size" in res[r][2] for r in (0, 1)),
      "different world sizes are reported: " + " | ".join(res[r][2].strip()[:200] for r in (0, 1)))
check(all(res[r][0] == 3 for r in (0, 1)), "both ranks fail")

# 5. tcp:// with the address in the text.
port = free_port()
res = finish(start([0, 1], 2, ["join", f"tcp://127.0.0.1:{port}", "10000", "2"]), 30)
check(all(res[r][0] == 0 and f"rank {r}: joined" in res[r][1] for r in (0, 1)),
      "tcp:// joins: " + str({r: res[r][2].strip()[:200] for r in res}))

# 6. file://: two ranks train through a store file, which is gone afterwards.
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "store")
    res = finish(start([0, 1], 2, ["train", "file://" + path, "10", "-1", "-1", "10000"]), 60)
    check(all(res[r][0] == 0 for r in (0, 1)), "file:// trains: " + str({r: res[r][2].strip()[:200] for r in res}))
    check(not os.path.exists(path), "the last rank deleted the store file")

# 7. Bad init methods fail at once with the reason.
res = finish(start([0], 1, ["join", "udp://x", "1000", "1"]), 30)
check(res[0][0] == 3 and "is not one of env://, tcp://host:port, file:///path" in res[0][2],
      "an unknown init method is refused: " + res[0][2].strip()[:200])
res = finish(start([0], 1, ["join", "env://", "1000", "1"], extra_env={"MASTER_PORT": "http"}), 30)
check(res[0][0] == 3 and "MASTER_PORT is \"http\"" in res[0][2], "a malformed MASTER_PORT is named: " + res[0][2].strip()[:200])

# 8. Under the launcher: a rank killed mid-training makes it exit non-zero, naming the rank.
t0 = time.monotonic()
p = subprocess.run([CLI, "run", "--nproc-per-node", "3", "--", WORKER, "train", "env://", "100000", "2", "20", "20000"],
                   capture_output=True, text=True, timeout=120)
check(p.returncode != 0 and "rank 2" in p.stderr and "signal" in p.stderr,
      f"the launcher names rank 2 (exit {p.returncode}): " + p.stderr.strip()[-400:])
check(time.monotonic() - t0 < 20, f"the launcher finished in {time.monotonic() - t0:.1f} s")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)

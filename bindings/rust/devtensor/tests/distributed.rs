//! Collectives over two processes, started by the launcher as a user would start them.
//!
//! `collectives_over_two_ranks` (the one that does the work under `cargo test`) starts this
//! test binary again under `devtensor run --nproc-per-node 2`, running `rank_side` alone
//! (`--exact`), and fails unless the launcher exits 0 (it stops every rank as soon as one
//! fails) and both ranks report their checks. `rank_side` is one rank of that job: with
//! `RANK_ENV` set by the parent (and `RANK` by the launcher) it joins with
//! `ProcessGroup::from_env` and checks each collective against values computed here from
//! both ranks' known inputs; anywhere else it does nothing. So `cargo test` runs the
//! two-rank check exactly once.
//!
//! The launcher is `$DEVTENSOR_CLI` (run_tests.sh sets it to the install's
//! `bin/devtensor`; a path that names no file fails the test), else the release build
//! tree's `tools/devtensor`; without either the test prints why it skips and passes.
use devtensor::{live_handle_count, DType, Device, ErrorCode, ProcessGroup, ReduceOp, Tensor};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set (to "1") in the environment of the ranks the parent test starts; `RANK` alone is not
/// enough, since an outer job (torchrun, another `devtensor run`) may have set it.
const RANK_ENV: &str = "DEVTENSOR_RUST_TEST_DIST_RANK";
const WORLD: i32 = 2;

fn launcher() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DEVTENSOR_CLI") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "DEVTENSOR_CLI={} names no devtensor CLI",
            p.display()
        );
        return Some(p);
    }
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build/release/tools/devtensor");
    if p.is_file() {
        Some(p)
    } else {
        println!(
            "SKIP: the two-rank check needs the devtensor CLI (`devtensor run`), which is not at {} \
             and DEVTENSOR_CLI is not set (run_tests.sh PREFIX sets it to PREFIX/bin/devtensor)",
            p.display()
        );
        None
    }
}

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32; // libc's, which std links
}
const SIGTERM: i32 = 15;

#[test]
fn collectives_over_two_ranks() {
    if std::env::var_os(RANK_ENV).is_some() {
        return; // a rank runs rank_side only
    }
    let cli = match launcher() {
        Some(p) => p,
        None => return,
    };
    let me = std::env::current_exe().unwrap();
    let mut child = Command::new(&cli)
        .args(["run", "--nproc-per-node", "2", "--"])
        .arg(&me)
        .args(["rank_side", "--exact", "--nocapture", "--test-threads=1"])
        .env(RANK_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", cli.display()));
    // Read both pipes on threads of their own, so that neither fills up and blocks the ranks.
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    // The launcher stops every rank as soon as one fails; a job still running after 3
    // minutes is stuck: SIGTERM (which the launcher forwards to the ranks), then SIGKILL.
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut stuck = false;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline && !stuck {
            stuck = true;
            // SAFETY: a plain syscall on our own child's pid.
            unsafe { kill(child.id() as i32, SIGTERM) };
        }
        if Instant::now() > deadline + Duration::from_secs(30) {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = format!(
        "{}{}",
        out_reader.join().unwrap(),
        err_reader.join().unwrap()
    );
    assert!(
        !stuck,
        "the launcher was still running after 3 minutes: stopped; output:\n{text}"
    );
    assert!(
        status.success(),
        "{} run --nproc-per-node 2 failed ({status}); output:\n{text}",
        cli.display()
    );
    for r in 0..WORLD {
        // The harness prints "test rank_side ... " before the test's own output.
        let prefix = format!("[rank {r}] ");
        let said = |what: &str| {
            text.lines()
                .any(|l| l.starts_with(&prefix) && l.contains(what))
        };
        assert!(
            said(&format!("rank {r} of 2: all checks passed")) && said("test result: ok. 1 passed"),
            "rank {r} did not report passing; output:\n{text}"
        );
    }
    println!("output of the two ranks:\n{text}");
}

// Each rank's inputs, a function of the rank alone, so that every rank can compute what
// the collectives give from both ranks' inputs.
fn sum_input(r: i32) -> Vec<f32> {
    vec![(r + 1) as f32, (2 * (r + 1)) as f32, -3.0, r as f32 * 0.5]
}
fn max_input(r: i32) -> Vec<i64> {
    let r = r as i64;
    vec![r, -r, 5 * r - 3, (1 << 60) + r] // beyond f64's exact integers
}
fn bcast_input(r: i32) -> Vec<f32> {
    (1..=3).map(|i| (7 * r + i) as f32).collect()
}
fn gather_input(r: i32) -> Vec<f32> {
    (0..3).map(|i| (3 * r + i) as f32).collect()
}
fn scatter_input(r: i32) -> Vec<f32> {
    (0..6).map(|i| ((r + 1) * (i + 1)) as f32).collect() // 2 ranks x 3 elements
}
fn p2p_input(r: i32) -> Vec<f32> {
    (1..=3).map(|i| (10 * r + 10 * i) as f32).collect()
}

/// One rank of `collectives_over_two_ranks`; nothing outside the launcher.
#[test]
fn rank_side() {
    if std::env::var_os(RANK_ENV).is_none() {
        return; // started by cargo test, not by collectives_over_two_ranks
    }
    let env_rank: i32 = std::env::var("RANK")
        .expect("started as a rank but RANK is not set: the launcher did not set it")
        .parse()
        .expect("RANK is not an integer");
    let before = live_handle_count();
    let pg = ProcessGroup::from_env().unwrap();
    let rank = pg.rank();
    assert_eq!(rank, env_rank, "rank() against RANK");
    assert_eq!(pg.size(), WORLD);
    assert_eq!(pg.backend(), "gloo");
    let peer = 1 - rank;
    let cpu = Device::CPU;

    // all_reduce: sum and avg of float32, max of int64.
    for op in [ReduceOp::Sum, ReduceOp::Avg] {
        let x = Tensor::from_slice(&sum_input(rank), &[4], cpu).unwrap();
        pg.all_reduce_(&x, op).unwrap();
        let want: Vec<f32> = (0..4)
            .map(|i| {
                let s = sum_input(0)[i] + sum_input(1)[i];
                if op == ReduceOp::Avg {
                    s / WORLD as f32
                } else {
                    s
                }
            })
            .collect();
        assert_eq!(x.to_vec::<f32>().unwrap(), want, "all_reduce_ {op:?}");
    }
    let y = Tensor::from_slice(&max_input(rank), &[2, 2], cpu).unwrap();
    pg.all_reduce_(&y, ReduceOp::Max).unwrap();
    let want: Vec<i64> = (0..4)
        .map(|i| max_input(0)[i].max(max_input(1)[i]))
        .collect();
    assert_eq!(y.to_vec::<i64>().unwrap(), want, "all_reduce_ Max of int64");

    // broadcast from rank 1.
    let b = Tensor::from_slice(&bcast_input(rank), &[3], cpu).unwrap();
    pg.broadcast_(&b, 1).unwrap();
    assert_eq!(
        b.to_vec::<f32>().unwrap(),
        bcast_input(1),
        "broadcast_ from rank 1"
    );

    // all_gather into [2, 3].
    let gin = Tensor::from_slice(&gather_input(rank), &[3], cpu).unwrap();
    let gout = Tensor::zeros(&[WORLD as i64, 3], DType::Float32, cpu).unwrap();
    pg.all_gather(&gin, &gout).unwrap();
    let want: Vec<f32> = gather_input(0).into_iter().chain(gather_input(1)).collect();
    assert_eq!(gout.to_vec::<f32>().unwrap(), want, "all_gather");

    // reduce_scatter: rank r gets part r of the sum of both inputs.
    let sin = Tensor::from_slice(&scatter_input(rank), &[6], cpu).unwrap();
    let sout = Tensor::zeros(&[3], DType::Float32, cpu).unwrap();
    pg.reduce_scatter(&sin, &sout, ReduceOp::Sum).unwrap();
    let r = rank as usize;
    let want: Vec<f32> = (0..3)
        .map(|i| scatter_input(0)[3 * r + i] + scatter_input(1)[3 * r + i])
        .collect();
    assert_eq!(sout.to_vec::<f32>().unwrap(), want, "reduce_scatter Sum");

    pg.barrier().unwrap();

    // send/recv both ways: rank 0 sends first, rank 1 receives first.
    let mine = Tensor::from_slice(&p2p_input(rank), &[3], cpu).unwrap();
    let got = Tensor::zeros(&[3], DType::Float32, cpu).unwrap();
    if rank == 0 {
        pg.send(&mine, peer, 7).unwrap();
        pg.recv(&got, peer, 8).unwrap();
    } else {
        pg.recv(&got, peer, 7).unwrap();
        pg.send(&mine, peer, 8).unwrap();
    }
    assert_eq!(
        got.to_vec::<f32>().unwrap(),
        p2p_input(peer),
        "recv from rank {peer}"
    );

    // Send + Sync: a clone of the group used from another thread.
    let pg2 = pg.clone();
    std::thread::scope(|s| s.spawn(|| pg2.barrier().unwrap()).join().unwrap());
    drop(pg2);

    // Argument errors are found before any peer is involved, and leave the group usable.
    let x = Tensor::ones(&[4], DType::Float32, cpu).unwrap();
    let i = Tensor::ones(&[4], DType::Int32, cpu).unwrap();
    assert_eq!(
        pg.all_reduce_(&i, ReduceOp::Avg).unwrap_err().code,
        ErrorCode::DtypeMismatch
    );
    assert_eq!(
        pg.send(&x, rank, 0).unwrap_err().code,
        ErrorCode::InvalidArgument
    );
    pg.barrier().unwrap();

    drop((x, i, mine, got, sin, sout, gin, gout, b, y));
    drop(pg);
    assert_eq!(live_handle_count(), before, "the rank leaked handles");
    println!("rank {rank} of {WORLD}: all checks passed");
}

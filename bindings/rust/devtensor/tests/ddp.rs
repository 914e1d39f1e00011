//! DistributedDataParallel (`Module::distributed_data_parallel`).
//!
//! * `one_rank`: on a group of one process (file:// rendezvous), the construction errors,
//!   the names, forward and gradients (an average over one rank is the gradient itself),
//!   `find_unused_parameters`, and the references the result holds.
//! * `no_sync_one_rank`: `Module::set_no_sync` and `Module::no_sync` on a group of one
//!   process: a module that is not a DistributedDataParallel is refused; a pass under
//!   `no_sync` accumulates the local gradient and the next pass outside it adds its own
//!   (compared with the gradient computed by hand); `no_sync` returns the closure's error
//!   and turns synchronisation back on after an error or a panic, which a parameter
//!   without a gradient shows (an error only in a synchronised pass).
//!
//!   The two count handles, which are process-wide: they run one at a time
//!   (`common::leak_checked`).
//! * `digits_over_two_ranks_match_one_process`: the done-means check from Rust. The
//!   example `train_digits_ddp` (built by `cargo test`, which builds every example, into
//!   the target directory's `examples/`) trains the digits MLP for 50 steps once in one
//!   process on the whole batch and once as two ranks under `devtensor run
//!   --nproc-per-node 2`, each on half of it; every step's loss (the global batch's mean)
//!   must agree within 1e-5, the loss must fall, and the ranks' final parameters must be
//!   equal. Run alone (`cargo test --test ddp`), cargo does not build the example: the
//!   test then fails, saying so (`cargo build --example train_digits_ddp` first).
//!
//! The launcher is `$DEVTENSOR_CLI` (run_tests.sh sets it to the install's
//! `bin/devtensor`; a path that names no file fails the test), else the release build
//! tree's `tools/devtensor`; without either the two-rank test prints why it skips and
//! passes.
use devtensor::nn::{Module, Sequential};
use devtensor::{DType, Device, ErrorCode, ProcessGroup, Tensor};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

fn one_rank_group(name: &str) -> ProcessGroup {
    let store = std::env::temp_dir().join(format!("devtensor-ddp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&store);
    let init = format!("file://{}", store.display());
    ProcessGroup::new(Some("gloo"), Some(&init), Some(0), Some(1), Some(Duration::from_secs(30))).unwrap()
}

/// Sequential(Linear(8, 6), ReLU, Linear(6, 3)) from seed `seed`, and its first layer.
fn mlp(seed: u64) -> (Module, Module) {
    devtensor::manual_seed(seed).unwrap();
    let first = Module::linear(8, 6, true, DType::Float32, Device::CPU).unwrap();
    let model = Sequential::new()
        .add(first.share())
        .add(Module::relu().unwrap())
        .add(Module::linear(6, 3, true, DType::Float32, Device::CPU).unwrap())
        .build()
        .unwrap();
    (model, first)
}

/// The gradients of `m`'s parameters (None: no gradient).
fn grads(m: &Module) -> Vec<Option<Vec<f32>>> {
    m.parameters()
        .unwrap()
        .iter()
        .map(|p| p.grad().unwrap().map(|g| g.to_vec::<f32>().unwrap()))
        .collect()
}

#[test]
fn one_rank() {
    common::leak_checked(|| {
        let pg = one_rank_group("a");
        let (model, _) = mlp(3);
        let (plain, _) = mlp(3); // the same weights, not wrapped

        let e = Module::distributed_data_parallel(&model, &pg, Some(0), false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "Some(0): {e}");

        let ddp = Module::distributed_data_parallel(&model, &pg, Some(64), false).unwrap(); // tiny buckets
        // A parameter belongs to at most one DistributedDataParallel.
        let e = Module::distributed_data_parallel(&model, &pg, None, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("already belongs to another DistributedDataParallel"), "{e}");
        // Its parameters are the module's, under PyTorch's names.
        let (inner, outer) = (model.named_parameters().unwrap(), ddp.named_parameters().unwrap());
        assert_eq!(inner.len(), outer.len());
        for ((n, t), (m, u)) in inner.iter().zip(&outer) {
            assert_eq!(*m, format!("module.{n}"));
            assert!(u.shares_storage(t), "parameter {m} is not the module's tensor");
        }

        // Forward is the module's; the averaged gradients over one rank are the plain ones.
        let x = Tensor::randn(&[5, 8], DType::Float32, Device::CPU).unwrap();
        for m in [&plain, &ddp] {
            m.forward(&x).unwrap().sum(&[], false).unwrap().backward().unwrap();
        }
        let (want, got) = (grads(&plain), grads(&model));
        assert!(got.iter().all(Option::is_some), "a parameter has no gradient");
        assert_eq!(got, want, "gradients through the DistributedDataParallel");
        drop(ddp);

        // find_unused_parameters: a loss that leaves the second layer out.
        for find in [false, true] {
            let (m, first) = mlp(4);
            let d = Module::distributed_data_parallel(&m, &pg, None, find).unwrap();
            let r = first.forward(&x).unwrap().sum(&[], false).unwrap().backward();
            if !find {
                let e = r.unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidArgument);
                assert!(e.message.contains("parameter '2.weight' received no gradient"), "{e}");
            } else {
                r.unwrap();
                let g = grads(&m);
                assert!(g[0].is_some(), "0.weight has no gradient");
                assert!(g[2].as_ref().unwrap().iter().all(|&v| v == 0.0), "unused 2.weight: {:?}", g[2]);
            }
            drop(d);
            // Dropped, it lets go of the parameters: they can be wrapped again.
            drop(Module::distributed_data_parallel(&m, &pg, None, find).unwrap());
        }

        // The result holds its own references to the module and the group.
        let (m2, _) = mlp(5);
        let pg2 = one_rank_group("b");
        let d2 = Module::distributed_data_parallel(&m2, &pg2, None, false).unwrap();
        drop((m2, pg2));
        d2.forward(&x).unwrap().sum(&[], false).unwrap().backward().unwrap(); // all-reduces over pg2
        assert!(d2.parameters().unwrap()[0].grad().unwrap().is_some());
        drop(d2);

        let dev = Device::cuda_if_available();
        if dev != Device::CPU {
            let (mut cm, _) = mlp(6);
            cm.to(dev).unwrap();
            let e = Module::distributed_data_parallel(&cm, &pg, None, false).unwrap_err();
            assert_eq!(e.code, ErrorCode::DeviceMismatch, "{e}");
        }
    });
}

/// The gradient of `sum(x @ W^T + b)` over the batches `xs` (each `[rows, inp]`,
/// row-major) for a `Linear(inp, out)`, computed by hand: `dW[i][j]` is the sum of column
/// `j` over every row of every batch, the same for every output `i`, and `db[i]` the
/// number of rows.
fn linear_sum_grads(inp: usize, out: usize, xs: &[&[f32]]) -> (Vec<f32>, Vec<f32>) {
    let mut col = vec![0.0f32; inp];
    let mut rows = 0;
    for x in xs {
        for (k, v) in x.iter().enumerate() {
            col[k % inp] += v;
        }
        rows += x.len() / inp;
    }
    (col.repeat(out), vec![rows as f32; out])
}

fn assert_near(what: &str, got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?}, want {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "{what}: element {i} is {g}, want {w} within {tol} (got {got:?}, want {want:?})");
    }
}

/// An error of the test's own, for a closure that fails.
fn closure_error() -> devtensor::Error {
    devtensor::Error {
        code: ErrorCode::Io,
        message: "the closure failed".into(),
    }
}

#[test]
fn no_sync_one_rank() {
    common::leak_checked(|| {
        let pg = one_rank_group("no-sync");

        // Only a DistributedDataParallel takes it.
        let lin = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
        let e = lin.set_no_sync(true).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("not a DistributedDataParallel"), "{e}");
        let mut ran = false;
        let e = lin
            .no_sync(|| {
                ran = true;
                Ok(())
            })
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("not a DistributedDataParallel"), "{e}");
        assert!(!ran, "no_sync ran the closure although it could not turn synchronisation off");

        // Accumulation: loss = sum(Linear(x)), one pass under no_sync on x1, one outside on x2.
        let ddp = Module::distributed_data_parallel(&lin, &pg, None, false).unwrap();
        let x1v = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // [2, 3]
        let x2v = [0.5f32, -1.0, 2.0, 3.0, 0.25, -2.0, 1.5, 1.0, -0.75]; // [3, 3]
        let x1 = Tensor::from_slice(&x1v, &[2, 3], Device::CPU).unwrap();
        let x2 = Tensor::from_slice(&x2v, &[3, 3], Device::CPU).unwrap();
        let backward = |m: &Module, x: &Tensor| m.forward(x)?.sum(&[], false)?.backward();
        ddp.no_sync(|| backward(&ddp, &x1)).unwrap();
        let g = grads(&lin); // weight, bias
        let (dw, db) = linear_sum_grads(3, 2, &[&x1v]);
        assert_near("weight's gradient after the pass under no_sync", g[0].as_ref().unwrap(), &dw, 1e-6);
        assert_near("bias's gradient after the pass under no_sync", g[1].as_ref().unwrap(), &db, 1e-6);
        // The closure's error is no_sync's, and a pass after it works.
        let e = ddp
            .no_sync(|| -> devtensor::Result<()> { Err(closure_error()) })
            .unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (ErrorCode::Io, "the closure failed"));
        backward(&ddp, &x2).unwrap();
        let g = grads(&lin);
        let (dw, db) = linear_sum_grads(3, 2, &[&x1v, &x2v]);
        assert_near("weight's gradient after both passes", g[0].as_ref().unwrap(), &dw, 1e-6);
        assert_near("bias's gradient after both passes", g[1].as_ref().unwrap(), &db, 1e-6);
        // no_sync returns the closure's value.
        assert_eq!(ddp.no_sync(|| Ok(42)).unwrap(), 42);

        // Whether synchronisation is on: a pass that leaves a parameter without a gradient
        // fails (find_unused_parameters off) only when it is.
        let (model, first) = mlp(7);
        let d = Module::distributed_data_parallel(&model, &pg, None, false).unwrap();
        let x = Tensor::randn(&[4, 8], DType::Float32, Device::CPU).unwrap();
        let assert_synced = |what: &str| {
            let e = backward(&first, &x).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{what}: {e}");
            assert!(e.message.contains("received no gradient"), "{what}: {e}");
        };
        assert_synced("at first");
        d.set_no_sync(true).unwrap();
        backward(&first, &x).expect("an unused parameter with set_no_sync(true)");
        d.set_no_sync(false).unwrap();
        assert_synced("after set_no_sync(false)");
        let e = d
            .no_sync(|| {
                backward(&first, &x).expect("an unused parameter under no_sync");
                Err::<(), _>(closure_error())
            })
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::Io, "{e}");
        assert_synced("after no_sync's closure failed");
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = d.no_sync(|| -> devtensor::Result<()> { panic!("the closure panics") });
        }));
        let payload = panicked.expect_err("no_sync returned although the closure panicked");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the closure panics"));
        assert_synced("after no_sync's closure panicked");
    });
}

fn launcher() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DEVTENSOR_CLI") {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "DEVTENSOR_CLI={} names no devtensor CLI", p.display());
        return Some(p);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build/release/tools/devtensor");
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

/// Runs `cmd` (stdin closed), returning its success and its stdout and stderr; a command
/// still running after 3 minutes gets SIGTERM (which the launcher forwards), then SIGKILL.
fn run_bounded(mut cmd: Command, what: &str) -> (bool, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    // Both pipes on threads of their own, so that neither fills up and blocks the child.
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
    let text = format!("{}{}", out_reader.join().unwrap(), err_reader.join().unwrap());
    assert!(!stuck, "{what} was still running after 3 minutes: stopped; output:\n{text}");
    (status.success(), text)
}

/// The `step S loss L` lines of train_digits_ddp's output (only rank 0's under the
/// launcher, which prefixes `[rank R] `); the steps must be 0, 1, 2, ...
fn step_losses(what: &str, text: &str) -> Vec<f64> {
    let mut losses = Vec::new();
    for line in text.lines() {
        let (rank, rest) = match line.strip_prefix("[rank ") {
            Some(r) => match r.split_once("] ") {
                Some((n, rest)) => (Some(n), rest),
                None => continue,
            },
            None => (None, line),
        };
        let rest = match rest.strip_prefix("step ") {
            Some(r) => r,
            None => continue,
        };
        assert!(matches!(rank, None | Some("0")), "{what}: a rank other than 0 printed a loss: {line:?}");
        let (s, v) = rest
            .split_once(" loss ")
            .unwrap_or_else(|| panic!("{what}: unexpected line {line:?}"));
        let s: usize = s.parse().unwrap_or_else(|_| panic!("{what}: unexpected line {line:?}"));
        let v: f64 = v.parse().unwrap_or_else(|_| panic!("{what}: unexpected line {line:?}"));
        assert_eq!(s, losses.len(), "{what}: step {s} out of order; output:\n{text}");
        losses.push(v);
    }
    losses
}

/// The example's binary: `<target>/<profile>/examples/train_digits_ddp`, next to this
/// test's `<target>/<profile>/deps/`.
fn example_binary() -> PathBuf {
    let me = std::env::current_exe().unwrap();
    let profile_dir: &Path = me.parent().and_then(Path::parent).expect("the test binary's directory");
    let bin = profile_dir.join("examples").join("train_digits_ddp");
    assert!(
        bin.is_file(),
        "{} is missing: `cargo test` builds it (every example) before running the tests; \
         run alone, build it first: cargo build --offline --example train_digits_ddp",
        bin.display()
    );
    bin
}

#[test]
fn digits_over_two_ranks_match_one_process() {
    const STEPS: usize = 50;
    const TOL: f64 = 1e-5;
    let cli = match launcher() {
        Some(p) => p,
        None => return,
    };
    let bin = example_binary();
    let csv = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../data/digits.csv.gz");
    let steps = STEPS.to_string();

    // The reference: one process, no RANK (an outer job's would make it join a group).
    let mut plain_cmd = Command::new(&bin);
    plain_cmd.args([csv, &steps]).env_remove("RANK");
    let (ok, plain_out) = run_bounded(plain_cmd, "train_digits_ddp in one process");
    assert!(ok, "train_digits_ddp in one process failed; output:\n{plain_out}");

    let mut ddp_cmd = Command::new(&cli);
    ddp_cmd.args(["run", "--nproc-per-node", "2", "--"]).arg(&bin).args([csv, &steps]);
    let (ok, ddp_out) = run_bounded(ddp_cmd, "devtensor run -- train_digits_ddp");
    assert!(ok, "{} run --nproc-per-node 2 -- train_digits_ddp failed; output:\n{ddp_out}", cli.display());
    assert!(
        ddp_out.lines().any(|l| l == "[rank 0] params equal on every rank"),
        "the two ranks did not report equal parameters; output:\n{ddp_out}"
    );

    let (plain, ddp) = (step_losses("one process", &plain_out), step_losses("two ranks", &ddp_out));
    assert_eq!(plain.len(), STEPS, "one process printed {} steps; output:\n{plain_out}", plain.len());
    assert_eq!(ddp.len(), STEPS, "two ranks printed {} steps; output:\n{ddp_out}", ddp.len());
    let (mut worst, mut worst_step) = (0.0f64, 0);
    for (s, (a, b)) in plain.iter().zip(&ddp).enumerate() {
        let d = (a - b).abs();
        assert!(d <= TOL, "step {s}: loss {b:.9} over two ranks, {a:.9} in one process (difference {d:.3e} > {TOL})");
        if d > worst {
            worst = d;
            worst_step = s;
        }
    }
    // Falling: the last 10 steps' mean under half the first step's loss (2.33 -> ~0.3).
    let last = plain[STEPS - 10..].iter().sum::<f64>() / 10.0;
    assert!(last < plain[0] / 2.0, "the loss did not fall: {:.4} at step 0, {last:.4} over the last 10 steps", plain[0]);
    println!(
        "{STEPS} steps: the largest difference between two ranks and one process is {worst:.3e} (step {worst_step}); \
         loss {:.4} -> {last:.4} (mean of the last 10)",
        plain[0]
    );
}

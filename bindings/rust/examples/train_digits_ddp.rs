//! The digits MLP (64-128-10, cross-entropy, SGD with momentum) trained with
//! DistributedDataParallel over the processes of a `devtensor run` job: the Rust version
//! of tests/dist/ddp_digits.c's train mode, step for step.
//!
//! Without `RANK` in the environment it trains in one process, with no process group, on
//! the whole batch (the reference). Under `devtensor run` every rank joins the env://
//! group, takes its equal share of each global batch (ranks in order, contiguous rows)
//! and trains through a DistributedDataParallel; rank r starts from seed r, so only the
//! DistributedDataParallel's broadcast from rank 0 makes the ranks agree. Rank 0 (or the
//! single process) prints `step S loss L` per step, L being the mean loss over the global
//! batch (the ranks' losses averaged with an all-reduce on a float64 copy), then, with a
//! group, `params equal on every rank` once the ranks' final parameters have been
//! compared bit for bit. The losses of the two ways agree within float32 rounding. The
//! file is decompressed by the `gzip` program (the workspace uses no outside crate).
//!
//!     cargo run --offline --example train_digits_ddp [-- path/to/digits.csv.gz [steps]]
//!     devtensor run --nproc-per-node 2 -- target/debug/examples/train_digits_ddp [path [steps]]
use devtensor::nn::{CrossEntropyLoss, Module, Sequential, Sgd};
use devtensor::{DType, Device, ProcessGroup, ReduceOp, Tensor};
use std::process::{exit, Command};

const ROWS: usize = 1797;
const PIXELS: usize = 64;
const CLASSES: i64 = 10;
const HIDDEN: i64 = 128;
const GLOBAL_BATCH: usize = 64;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The rows in file order: pixels / 16 and the labels.
fn load(path: &str) -> Result<(Vec<f32>, Vec<i64>), String> {
    let out = Command::new("gzip")
        .args(["-dc", path])
        .output()
        .map_err(|e| format!("running gzip: {e}"))?;
    if !out.status.success() {
        return Err(format!("gzip -dc {path}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8(out.stdout).map_err(|e| e.to_string())?;
    let (mut x, mut y) = (Vec::with_capacity(ROWS * PIXELS), Vec::with_capacity(ROWS));
    for line in text.lines().filter(|l| !l.trim().is_empty()).take(ROWS) {
        let v: Vec<i64> = line
            .trim()
            .split(',')
            .map(|f| f.parse::<i64>().map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        if v.len() != PIXELS + 1 {
            return Err(format!("{path}: a row has {} fields", v.len()));
        }
        x.extend(v[..PIXELS].iter().map(|&p| p as f32 / 16.0));
        y.push(v[PIXELS]);
    }
    if y.len() != ROWS {
        return Err(format!("{path}: {} rows, want {ROWS}", y.len()));
    }
    Ok((x, y))
}

/// Sequential(Linear(64, 128), ReLU, Linear(128, 10)) made after manual_seed(seed).
fn mlp(seed: u64) -> devtensor::Result<Module> {
    devtensor::manual_seed(seed)?;
    Sequential::new()
        .add(Module::linear(PIXELS as i64, HIDDEN, true, DType::Float32, Device::CPU)?)
        .add(Module::relu()?)
        .add(Module::linear(HIDDEN, CLASSES, true, DType::Float32, Device::CPU)?)
        .build()
}

/// Whether every rank's parameters are bit for bit rank 0's (all-gathered and compared).
fn params_equal_everywhere(pg: &ProcessGroup, params: &[Tensor]) -> devtensor::Result<bool> {
    let world = pg.size() as usize;
    let mut equal = true;
    for p in params {
        let n = p.numel();
        let all = Tensor::empty(&[world as i64, n as i64], DType::Float32, Device::CPU)?;
        pg.all_gather(p, &all)?;
        let v = all.to_vec::<f32>()?;
        for r in 1..world {
            // bit patterns, as C's memcmp
            if v[..n].iter().zip(&v[r * n..(r + 1) * n]).any(|(a, b)| a.to_bits() != b.to_bits()) {
                equal = false;
            }
        }
    }
    Ok(equal)
}

fn run(path: &str, steps: usize, rank: &mut usize) -> BoxResult<()> {
    let (x, y) = load(path)?;
    let pg = match std::env::var_os("RANK") {
        Some(_) => Some(ProcessGroup::from_env()?),
        None => None,
    };
    let (r, world) = pg.as_ref().map_or((0, 1), |g| (g.rank() as usize, g.size() as usize));
    *rank = r;
    if GLOBAL_BATCH % world != 0 {
        return Err(format!("the global batch {GLOBAL_BATCH} does not split over {world} ranks").into());
    }
    let model = mlp(r as u64)?;
    let ddp = match &pg {
        Some(g) => Some(Module::distributed_data_parallel(&model, g, None, false)?),
        None => None,
    };
    let runner = ddp.as_ref().unwrap_or(&model);
    let params = model.parameters()?;
    let mut opt = Sgd::new(&params, 0.1).momentum(0.9).build()?;
    let loss_fn = CrossEntropyLoss::new().build()?;
    let share = GLOBAL_BATCH / world;
    for step in 0..steps {
        // rows of this step's global batch, wrapping around the data; this rank's share
        let first = (step * GLOBAL_BATCH) % (ROWS - GLOBAL_BATCH) + r * share;
        let xs = &x[first * PIXELS..(first + share) * PIXELS];
        let xb = Tensor::from_slice(xs, &[share as i64, PIXELS as i64], Device::CPU)?;
        let yb = Tensor::from_slice(&y[first..first + share], &[share as i64], Device::CPU)?;
        opt.zero_grad()?;
        let loss = loss_fn.loss(&runner.forward(&xb)?, &yb)?;
        loss.backward()?; // with a group: gradients averaged over the ranks
        opt.step()?;
        let v = match &pg {
            Some(g) => {
                // a float64 copy (another dtype: never an alias of the loss)
                let mean = loss.to_device_dtype(Device::CPU, DType::Float64)?;
                g.all_reduce_(&mean, ReduceOp::Avg)?;
                mean.item()?
            }
            None => loss.item()?,
        };
        if r == 0 {
            println!("step {step} loss {v:.9}");
        }
    }
    if let Some(g) = &pg {
        if !params_equal_everywhere(g, &params)? {
            return Err("the ranks' parameters differ after training".into());
        }
        if r == 0 {
            println!("params equal on every rank");
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let default = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../data/digits.csv.gz");
    let path = args.get(1).map(String::as_str).unwrap_or(default);
    let steps = match args.get(2).map(|s| s.parse::<usize>()) {
        None => 100,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            eprintln!("train_digits_ddp: steps {:?} is not a count", args[2]);
            exit(2);
        }
    };
    let mut rank = 0;
    if let Err(e) = run(path, steps, &mut rank) {
        eprintln!("train_digits_ddp: rank {rank}: {e}");
        exit(1);
    }
}

//! The digits demo in Rust: an MLP (64-128-10) trained with Adam on the UCI handwritten
//! digits (`data/digits.csv.gz`) on the best device, printing the loss per epoch and
//! the test accuracy. The same split and seeds as the C and Go demos, so the same curve.
//! The file is decompressed by the `gzip` program (the workspace uses no outside crate).
//!
//!     cargo run --offline --example train_digits [-- path/to/digits.csv.gz [epochs]]
use devtensor::nn::{Adam, CrossEntropyLoss, Module, Sequential};
use devtensor::{DType, Device, Tensor};
use std::process::{exit, Command};

const ROWS: usize = 1797;
const PIXELS: usize = 64;
const CLASSES: i64 = 10;
const TRAIN: usize = 1437;
const BATCH: i64 = 64;

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
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
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

/// The C demo's seeded LCG shuffle, so every demo splits the data alike.
fn shuffle(idx: &mut [i64], state: &mut u64) {
    for (i, v) in idx.iter_mut().enumerate() {
        *v = i as i64;
    }
    for i in (1..idx.len()).rev() {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let j = ((*state >> 33) % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
}

fn run(path: &str, epochs: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let (px, labels) = load(path)?;
    let mut rng = 20261122u64;
    let mut order = vec![0i64; ROWS];
    shuffle(&mut order, &mut rng);
    let mut xs = Vec::with_capacity(ROWS * PIXELS);
    let mut ys = Vec::with_capacity(ROWS);
    for &o in &order {
        let o = o as usize;
        xs.extend_from_slice(&px[o * PIXELS..(o + 1) * PIXELS]);
        ys.push(labels[o]);
    }
    let device = Device::try_gpu(0);
    println!("device: {device}");
    let x_train = Tensor::from_slice(&xs[..TRAIN * PIXELS], &[TRAIN as i64, PIXELS as i64], device)?;
    let y_train = Tensor::from_slice(&ys[..TRAIN], &[TRAIN as i64], device)?;
    let x_test = Tensor::from_slice(&xs[TRAIN * PIXELS..], &[(ROWS - TRAIN) as i64, PIXELS as i64], device)?;
    let y_test = Tensor::from_slice(&ys[TRAIN..], &[(ROWS - TRAIN) as i64], device)?;

    devtensor::manual_seed(0)?;
    let mut model = Sequential::new()
        .add(Module::linear(PIXELS as i64, 128, true, DType::Float32, device)?)
        .add(Module::relu()?)
        .add(Module::linear(128, CLASSES, true, DType::Float32, device)?)
        .build()?;
    let loss_fn = CrossEntropyLoss::new().build()?; // PyTorch's defaults
    let mut opt = Adam::new(&model.parameters()?, 1e-3).build()?; // betas (0.9, 0.999), eps 1e-8

    let mut perm = vec![0i64; TRAIN];
    for epoch in 1..=epochs {
        shuffle(&mut perm, &mut rng);
        let index = Tensor::from_slice(&perm, &[TRAIN as i64], device)?;
        let (xe, ye) = (x_train.index_select(0, &index)?, y_train.index_select(0, &index)?);
        let (mut total, mut batches) = (0.0, 0);
        let mut start = 0i64;
        while start < TRAIN as i64 {
            let n = BATCH.min(TRAIN as i64 - start);
            let (xb, yb) = (xe.narrow(0, start, n)?, ye.narrow(0, start, n)?);
            opt.zero_grad()?;
            let loss = loss_fn.loss(&model.forward(&xb)?, &yb)?;
            loss.backward()?;
            opt.step()?;
            total += loss.item()?;
            batches += 1;
            start += BATCH;
        }
        println!("epoch {epoch:2}  loss {:.4}", total / batches as f64);
    }
    model.eval()?;
    devtensor::set_grad_enabled(false)?;
    let pred = model.forward(&x_test)?.argmax(&[1], false)?;
    let correct = pred.eq(&y_test)?.sum(&[], false)?.item()?;
    let acc = correct / (ROWS - TRAIN) as f64;
    println!("test accuracy: {:.2}% ({} of {})", 100.0 * acc, correct as i64, ROWS - TRAIN);
    Ok(acc)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let default = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../data/digits.csv.gz");
    let path = args.get(1).map(String::as_str).unwrap_or(default);
    let epochs = args.get(2).and_then(|e| e.parse().ok()).unwrap_or(30);
    match run(path, epochs) {
        Ok(acc) if acc >= 0.95 => {}
        Ok(_) => {
            eprintln!("train_digits: the accuracy is below 95%");
            exit(2);
        }
        Err(e) => {
            eprintln!("train_digits: {e}");
            exit(1);
        }
    }
}

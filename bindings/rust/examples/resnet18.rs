//! torchvision's ResNet-18 built as PyTorch defines it, from modules with torchvision's
//! names (`Module::custom` for each BasicBlock and for the network, whose closures reach
//! their children through the module they run on), loaded with the state_dict PyTorch
//! saved (every key must match), run in eval mode on the best device, its logits
//! compared with PyTorch's.
//!
//!     cargo run --offline --release --example resnet18 -- MODEL CHECK [limit]
//!
//! `tools/export_models.py DIR` writes MODEL (`DIR/resnet18.safetensors`, the state_dict
//! by PyTorch's key names) and CHECK (`DIR/resnet18_check.safetensors`: "input" [N, 3,
//! 224, 224] and PyTorch's "logits" [N, 1000]). Prints the device, the forward time and
//! the largest difference relative to the largest logit; exits 1 on an error, 2 when the
//! difference is over the limit (1e-4).
use devtensor::nn::{BatchNorm2d, Conv2d, MaxPool2d, Module, ModuleSpec, Sequential};
use devtensor::{DType, Device, StateDict, Tensor};
use std::process::exit;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The tensor `name` of a safetensors file; a missing one is an error naming it.
fn find(sd: &StateDict, name: &str) -> Res<Tensor> {
    Ok(sd
        .get(name)?
        .ok_or_else(|| format!("{name}: not in the file"))?)
}

/// Conv2d without bias (torchvision's), float32 on `d`.
fn conv(cin: i64, cout: i64, k: i64, stride: i64, padding: i64, d: Device) -> devtensor::Result<Module> {
    Conv2d::new(cin, cout, (k, k))
        .stride((stride, stride))
        .padding((padding, padding))
        .bias(false)
        .dtype(DType::Float32)
        .device(d)
        .build()
}

fn bn(c: i64, d: Device) -> devtensor::Result<Module> {
    BatchNorm2d::new(c).dtype(DType::Float32).device(d).build()
}

/// A BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut), the shortcut x itself
/// or downsample(x) (Sequential(conv 1x1, bn)) where the stride or width changes.
fn basic_block(cin: i64, cout: i64, stride: i64, d: Device) -> devtensor::Result<Module> {
    let (conv1, bn1) = (conv(cin, cout, 3, stride, 1, d)?, bn(cout, d)?);
    let (conv2, bn2) = (conv(cout, cout, 3, 1, 1, d)?, bn(cout, d)?);
    let down = stride != 1 || cin != cout;
    let downsample = if down {
        Some(Sequential::new().add(conv(cin, cout, 1, stride, 0, d)?).add(bn(cout, d)?).build()?)
    } else {
        None
    };
    let mut children = vec![("conv1", &conv1), ("bn1", &bn1), ("conv2", &conv2), ("bn2", &bn2)];
    if let Some(ds) = &downsample {
        children.push(("downsample", ds));
    }
    let spec = ModuleSpec { children: &children, ..ModuleSpec::default() };
    Module::custom("BasicBlock", &spec, move |m, x| {
        let run = |name: &str, x: &Tensor| m.child(name)?.forward(x);
        let y = run("bn1", &run("conv1", &x[0])?)?.relu()?;
        let y = run("bn2", &run("conv2", &y)?)?;
        let shortcut = if down { run("downsample", &x[0])? } else { x[0].clone() };
        (&y + &shortcut)?.relu()
    })
}

/// The network: the stem, the four layers, pooling, flatten and fc.
fn resnet18(d: Device) -> devtensor::Result<Module> {
    let stem = (conv(3, 64, 7, 2, 3, d)?, bn(64, d)?, Module::relu()?);
    let maxpool = MaxPool2d::new((3, 3)).stride((2, 2)).padding((1, 1)).build()?;
    let mut layers = Vec::new();
    let mut width = 64;
    for layer in 0..4 {
        let (out, stride) = (64 << layer, if layer == 0 { 1 } else { 2 });
        layers.push(Sequential::new().add(basic_block(width, out, stride, d)?).add(basic_block(out, out, 1, d)?).build()?);
        width = out;
    }
    let avgpool = Module::adaptive_avg_pool2d((1, 1))?;
    let fc = Module::linear(512, 1000, true, DType::Float32, d)?;
    let children = [
        ("conv1", &stem.0),
        ("bn1", &stem.1),
        ("relu", &stem.2),
        ("maxpool", &maxpool),
        ("layer1", &layers[0]),
        ("layer2", &layers[1]),
        ("layer3", &layers[2]),
        ("layer4", &layers[3]),
        ("avgpool", &avgpool),
        ("fc", &fc),
    ];
    let spec = ModuleSpec { children: &children, ..ModuleSpec::default() };
    Module::custom("ResNet", &spec, |m, x| {
        let mut y = x[0].clone();
        for name in ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool"] {
            y = m.child(name)?.forward(&y)?;
        }
        m.child("fc")?.forward(&y.flatten(1, -1)?)
    })
}

/// Prints the largest |got - want| and the largest |want|; returns their ratio.
fn relative_difference(got: &Tensor, want: &Tensor) -> Res<f64> {
    let worst = (got - want)?.abs()?.max(&[], false)?.item()?;
    let largest = want.abs()?.max(&[], false)?.item()?;
    let rel = if largest > 0.0 {
        worst / largest
    } else {
        worst
    };
    println!("logits: largest {largest:.4}, largest difference from PyTorch {worst:.3e} (relative {rel:.3e})");
    Ok(rel)
}

fn run(model: &str, check: &str, limit: f64) -> Res<bool> {
    let device = Device::try_gpu(0);
    println!("device: {device}");
    let mut net = resnet18(device)?;
    net.load(model)?; // strict: every key of PyTorch's state_dict, and no other
    net.eval()?;
    println!(
        "model: {} parameter tensors, every key of PyTorch's state_dict loaded",
        net.parameters()?.len()
    );
    let check = StateDict::load_to(check, device)?;
    let (input, want) = (find(&check, "input")?, find(&check, "logits")?);

    let t = Instant::now();
    let logits = net.forward(&input)?;
    device.synchronize()?;
    println!("forward: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);

    Ok(relative_difference(&logits, &want)? <= limit)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: resnet18 MODEL.safetensors CHECK.safetensors [max-relative-difference]");
        exit(1);
    }
    let limit = args
        .get(3)
        .map_or(Ok(1e-4), |s| s.parse())
        .unwrap_or_else(|e| {
            eprintln!("resnet18: limit {:?}: {e}", args[3]);
            exit(1)
        });
    match run(&args[1], &args[2], limit) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("resnet18: the logits differ from PyTorch's by more than {limit:e}");
            exit(2)
        }
        Err(e) => {
            eprintln!("resnet18: {e}");
            exit(1)
        }
    }
}

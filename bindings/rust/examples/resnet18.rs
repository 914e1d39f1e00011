//! torchvision's ResNet-18 from PyTorch's state_dict, built from the crate's functional
//! ops (conv2d, batch_norm in eval form, relu, max_pool2d, adaptive_avg_pool2d, matmul),
//! run on the best device, its logits compared with PyTorch's.
//!
//!     cargo run --offline --release --example resnet18 -- MODEL CHECK [limit]
//!
//! `tools/export_models.py DIR` writes MODEL (`DIR/resnet18.safetensors`, the state_dict
//! by PyTorch's key names) and CHECK (`DIR/resnet18_check.safetensors`: "input" [N, 3,
//! 224, 224] and PyTorch's "logits" [N, 1000]). Prints the device, the forward time and
//! the largest difference relative to the largest logit; exits 1 on an error, 2 when the
//! difference is over the limit (1e-4).
use devtensor::nn::{Conv2dOptions, MaxPool2dOptions, RunningStats};
use devtensor::{Device, StateDict, Tensor};
use std::process::exit;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The tensor `name` of a safetensors file; a missing one is an error naming it.
fn find(sd: &StateDict, name: &str) -> Res<Tensor> {
    Ok(sd
        .get(name)?
        .ok_or_else(|| format!("{name}: not in the file"))?)
}

/// The network: its weights are PyTorch's state_dict, looked up by key.
struct ResNet18 {
    sd: StateDict,
}

impl ResNet18 {
    fn get(&self, name: &str) -> Res<Tensor> {
        find(&self.sd, name)
    }

    /// conv (no bias) then BatchNorm2d in eval mode (the running statistics only read).
    fn conv_bn(&self, x: &Tensor, conv: &str, bn: &str, stride: i64, padding: i64) -> Res<Tensor> {
        let options = Conv2dOptions {
            stride: (stride, stride),
            padding: (padding, padding).into(),
            ..Conv2dOptions::default()
        };
        let y = x.conv2d(&self.get(&format!("{conv}.weight"))?, None, &options)?;
        let stats = RunningStats {
            mean: self.get(&format!("{bn}.running_mean"))?,
            var: self.get(&format!("{bn}.running_var"))?,
        };
        let (w, b) = (
            self.get(&format!("{bn}.weight"))?,
            self.get(&format!("{bn}.bias"))?,
        );
        Ok(y.batch_norm(&stats, Some(&w), Some(&b), 1e-5)?)
    }

    /// `layer{layer}.{block}`: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), the
    /// shortcut through downsample (conv1x1 - bn) where the stride or width changes.
    fn basic_block(&self, x: &Tensor, layer: usize, block: usize) -> Res<Tensor> {
        let key = |name: &str| format!("layer{layer}.{block}.{name}");
        let stride = if layer > 1 && block == 0 { 2 } else { 1 };
        let out = self
            .conv_bn(x, &key("conv1"), &key("bn1"), stride, 1)?
            .relu()?;
        let out = self.conv_bn(&out, &key("conv2"), &key("bn2"), 1, 1)?;
        let shortcut = if stride == 2 {
            self.conv_bn(x, &key("downsample.0"), &key("downsample.1"), stride, 0)?
        } else {
            x.clone()
        };
        Ok((&out + &shortcut)?.relu()?)
    }

    fn forward(&self, x: &Tensor) -> Res<Tensor> {
        let x = self.conv_bn(x, "conv1", "bn1", 2, 3)?.relu()?;
        let pool = MaxPool2dOptions {
            stride: Some((2, 2)),
            padding: (1, 1),
            ..MaxPool2dOptions::default()
        };
        let mut x = x.max_pool2d((3, 3), &pool)?;
        for layer in 1..=4 {
            for block in 0..2 {
                x = self.basic_block(&x, layer, block)?;
            }
        }
        let x = x.adaptive_avg_pool2d((1, 1))?.flatten(1, -1)?;
        // fc: x @ weight^T + bias
        Ok((&x.matmul(&self.get("fc.weight")?.transpose(0, 1)?)? + &self.get("fc.bias")?)?)
    }
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
    let net = ResNet18 {
        sd: StateDict::load_to(model, device)?,
    };
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

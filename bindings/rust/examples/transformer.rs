//! A 2-layer `torch.nn.TransformerEncoder` (with a final LayerNorm) made from the crate's
//! modules, PyTorch's state_dict loaded into it by key ("layers.0.self_attn.in_proj_weight",
//! ..., "norm.weight"), run in eval mode on the best device with a key padding mask, its
//! output compared with PyTorch's.
//!
//!     cargo run --offline --release --example transformer -- MODEL CHECK [limit]
//!
//! `tools/export_models.py DIR` writes MODEL (`DIR/transformer.safetensors`: d_model 64,
//! nhead 4, dim_feedforward 256, gelu, batch_first) and CHECK
//! (`DIR/transformer_check.safetensors`: "input" [3, 16, 64], "key_padding_mask" [3, 16],
//! true at padding, and PyTorch's "logits"). Prints the device, the forward time and the
//! largest difference relative to the largest output; exits 1 on an error, 2 when the
//! difference is over the limit (1e-4).
use devtensor::nn::{Activation, LayerNorm, TransformerEncoder, TransformerEncoderLayer};
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
    // TransformerEncoder(TransformerEncoderLayer(64, 4, 256, 0.1, "gelu", batch_first=True),
    //                    num_layers=2, norm=LayerNorm(64))
    let layer = TransformerEncoderLayer::new(64, 4)
        .dim_feedforward(256)
        .activation(Activation::Gelu)
        .batch_first(true)
        .device(device);
    let layers = (0..2)
        .map(|_| layer.build())
        .collect::<devtensor::Result<Vec<_>>>()?;
    let norm = LayerNorm::new(&[64]).device(device).build()?;
    let mut encoder = TransformerEncoder::new(layers, Some(norm)).build()?;
    encoder.load(model)?; // by PyTorch's key names
    encoder.eval()?; // no dropout

    let check = StateDict::load_to(check, device)?;
    let (input, padding) = (find(&check, "input")?, find(&check, "key_padding_mask")?);
    let t = Instant::now();
    // forward(src, mask=None, src_key_padding_mask)
    let out = encoder.forward_with(&[Some(&input), None, Some(&padding)])?;
    device.synchronize()?;
    println!("forward: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    Ok(relative_difference(&out, &find(&check, "logits")?)? <= limit)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!(
            "usage: transformer MODEL.safetensors CHECK.safetensors [max-relative-difference]"
        );
        exit(1);
    }
    let limit = args
        .get(3)
        .map_or(Ok(1e-4), |s| s.parse())
        .unwrap_or_else(|e| {
            eprintln!("transformer: limit {:?}: {e}", args[3]);
            exit(1)
        });
    match run(&args[1], &args[2], limit) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("transformer: the output differs from PyTorch's by more than {limit:e}");
            exit(2)
        }
        Err(e) => {
            eprintln!("transformer: {e}");
            exit(1)
        }
    }
}

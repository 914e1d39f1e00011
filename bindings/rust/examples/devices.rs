//! Devices: list them, pick the best, move tensors, print them, and show the
//! device-mismatch error. Run with `DEVTENSOR_CPU_DEVICES=2` to see two CPU devices.
//!
//!     cargo run --offline --example devices
use devtensor::{DType, Device, DeviceKind, ErrorCode, Tensor};

fn main() -> devtensor::Result<()> {
    devtensor::check_version()?;
    println!("devtensor {}", devtensor::version());

    let (cuda_ok, why) = Device::cuda_status()?;
    println!(
        "CUDA: {}",
        if cuda_ok {
            "available".to_string()
        } else {
            format!("unavailable ({why})")
        }
    );
    let cpus = Device::count(DeviceKind::Cpu)?;
    let gpus = Device::count(DeviceKind::Cuda)?;
    println!("{cpus} CPU device(s), {gpus} CUDA device(s)");
    let mut all: Vec<Device> = (0..cpus as u32).map(Device::Cpu).collect();
    all.extend((0..gpus as u32).map(Device::Cuda));
    for d in &all {
        let p = d.properties()?;
        println!(
            "  {d}: {} — {:.1} of {:.1} GiB free",
            p.name,
            p.free_memory as f64 / (1u64 << 30) as f64,
            p.total_memory as f64 / (1u64 << 30) as f64
        );
    }

    let best = Device::by_free_memory()?[0];
    println!(
        "best device: {best} (cuda_if_available: {}, try_gpu(1): {}, all_gpus: {:?})",
        Device::cuda_if_available(),
        Device::try_gpu(1),
        Device::all_gpus()?
    );

    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU)?;
    let b = a.to(best)?; // a new tensor on `best`; `a` stays on the CPU
    let c = (&(&b * 2.0)? + &b)?;
    println!("a = {a}");
    println!("b = a.to({best}) = {b}");
    println!("b * 2 + b = {c}   {c:?}");
    println!("as f64: {}", c.to_dtype(DType::Float64)?);
    let m = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, best)?.reshape(&[2, 3])?;
    println!("m = {m}\nm.T @ m = {}", m.transpose(0, 1)?.matmul(&m)?);

    // Operands must share a device.
    let other = if best.is_cuda() {
        Device::CPU
    } else if cpus > 1 {
        Device::Cpu(1)
    } else {
        Device::Cuda(0)
    };
    match other_tensor(other).and_then(|o| &a + &o) {
        Err(e) if e.code == ErrorCode::DeviceMismatch => {
            println!("a + (tensor on {other}): error: {e}")
        }
        Err(e) => println!("a + (tensor on {other}): error: {e}"),
        Ok(t) => println!("unexpected success: {t}"),
    }
    Ok(())
}

fn other_tensor(d: Device) -> devtensor::Result<Tensor> {
    Tensor::ones(&[3], DType::Float32, d)
}

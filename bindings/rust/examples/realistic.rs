//! Issue 20's yardstick, the Rust twin of bindings/go/devtensor/examples/realistic: the
//! best device, a tensor moved from cpu:0 to cpu:1, the device mismatch caught, a 2-layer
//! MLP trained with Adam, and a safetensors save/load. Run with DEVTENSOR_CPU_DEVICES=2.
use devtensor::nn::{Adam, CrossEntropyLoss, Module, Sequential};
use devtensor::{DType, Device, ErrorCode, Result, Tensor};

fn mlp(dev: Device) -> Result<Module> {
    Sequential::new()
        .add(Module::linear(2, 16, true, DType::Float32, dev)?)
        .add(Module::relu()?)
        .add(Module::linear(16, 2, true, DType::Float32, dev)?)
        .build()
}

fn main() -> Result<()> {
    let dev = Device::try_gpu(0); // cuda:0 if there is one, else cpu:0
    println!("device: {dev}");
    let a = Tensor::from_slice(&[1f32, 2., 3., 4.], &[2, 2], Device::Cpu(0))?;
    let b = a.to(Device::Cpu(1))?;
    if let Err(e) = &a + &b {
        if e.code == ErrorCode::DeviceMismatch {
            println!("caught: {e}");
        }
    }

    devtensor::manual_seed(0)?;
    let model = mlp(dev)?;
    let mut opt = Adam::new(&model.parameters()?, 0.05).build()?;
    let loss_fn = CrossEntropyLoss::new().build()?;
    let x = Tensor::from_slice(&[0f32, 0., 0., 1., 1., 0., 1., 1.], &[4, 2], dev)?;
    let y = Tensor::from_slice(&[0i64, 1, 1, 0], &[4], dev)?;
    for step in 1..=200 {
        opt.zero_grad()?;
        let loss = loss_fn.loss(&model.forward(&x)?, &y)?;
        loss.backward()?;
        opt.step()?;
        if step % 50 == 0 {
            println!("step {step}  loss {:.4}", loss.item()?);
        }
    }

    let path = std::env::temp_dir().join("realistic_rs.safetensors");
    model.save(&path)?;
    let mut restored = mlp(dev)?;
    restored.load(&path)?;
    std::fs::remove_file(&path).ok();
    let pred = restored.forward(&x)?.argmax(&[1], false)?;
    println!("restored model predicts {:?}", pred.to_vec::<i64>()?);
    Ok(())
}

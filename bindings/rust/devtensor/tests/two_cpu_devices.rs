//! Behaviours that need two logical CPU devices. `DEVTENSOR_CPU_DEVICES` is read once, at
//! the library's first use, so this test binary sets it before any call and runs its
//! tests one at a time (the live-handle count is process-wide).
use devtensor::nn::Module;
use devtensor::{live_handle_count, DType, Device, DeviceKind, ErrorCode, Tensor};
use std::sync::{Mutex, Once};

static ENV: Once = Once::new();
static SERIAL: Mutex<()> = Mutex::new(());

fn with_two_cpus(f: impl FnOnce()) {
    ENV.call_once(|| std::env::set_var("DEVTENSOR_CPU_DEVICES", "2"));
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = live_handle_count();
    f();
    assert_eq!(live_handle_count(), before, "the test leaked handles");
}

#[test]
fn two_cpu_devices_exist() {
    with_two_cpus(|| {
        assert_eq!(Device::count(DeviceKind::Cpu).unwrap(), 2);
        assert!(!Device::Cpu(1).name().unwrap().is_empty());
        assert_eq!(
            Device::Cpu(2).name().unwrap_err().code,
            ErrorCode::InvalidDevice
        );
    });
}

#[test]
fn mixing_devices_is_a_device_mismatch() {
    with_two_cpus(|| {
        let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::Cpu(0)).unwrap();
        let b = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::Cpu(1)).unwrap();
        let e = (&a + &b).unwrap_err();
        assert_eq!(e.code, ErrorCode::DeviceMismatch);
        assert!(
            e.message
                .contains("expected device cpu:0 but got device cpu:1"),
            "message: {}",
            e.message
        );
        assert!(e
            .to_string()
            .contains("expected device cpu:0 but got device cpu:1"));
        // The message is this thread's, fetched right after the call: another thread's
        // failure in between does not change it.
        std::thread::spawn(|| {
            let _ = "gpu".parse::<Device>();
        })
        .join()
        .unwrap();
        assert_eq!(a.matmul(&b).unwrap_err().code, ErrorCode::DeviceMismatch);
        // Moving one operand fixes it; `to` gives a new tensor and leaves b on cpu:1.
        let b0 = b.to(Device::Cpu(0)).unwrap();
        assert_eq!(b.device(), Device::Cpu(1));
        assert_eq!(b0.device(), Device::Cpu(0));
        assert_eq!(
            (&a + &b0).unwrap().to_vec::<f32>().unwrap(),
            vec![2.0, 4.0, 6.0]
        );
        assert_eq!(b.to_string(), "tensor([1., 2., 3.], device='cpu:1')");
    });
}

#[test]
fn module_to_moves_in_place() {
    with_two_cpus(|| {
        let lin = Module::linear(3, 2, true, DType::Float32, Device::Cpu(0)).unwrap();
        let w = lin.parameters().unwrap().remove(0);
        let before = w.to_vec::<f32>().unwrap();
        let x1 = Tensor::ones(&[1, 3], DType::Float32, Device::Cpu(1)).unwrap();
        let e = lin.forward(&x1).unwrap_err();
        assert_eq!(e.code, ErrorCode::DeviceMismatch, "{e}");
        lin.to(Device::Cpu(1)).unwrap();
        // The handle we held follows the move.
        assert_eq!(w.device(), Device::Cpu(1));
        assert_eq!(w.to_vec::<f32>().unwrap(), before);
        assert_eq!(lin.device().unwrap(), Device::Cpu(1));
        assert_eq!(lin.forward(&x1).unwrap().shape(), vec![1, 2]);
    });
}

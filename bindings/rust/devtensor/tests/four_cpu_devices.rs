//! Behaviours that need several logical CPU devices (four here): device mismatches,
//! moving modules, and DataParallel over cpu:0..3. `DEVTENSOR_CPU_DEVICES` is read once, at the
//! library's first use, so this test binary sets it before any call and runs its tests
//! one at a time (the live-handle count is process-wide).
use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
use devtensor::{live_handle_count, DType, Device, DeviceKind, ErrorCode, Tensor};
use std::sync::{Mutex, Once};

static ENV: Once = Once::new();
static SERIAL: Mutex<()> = Mutex::new(());

fn with_four_cpus(f: impl FnOnce()) {
    // SAFETY: every test of this binary enters here, and `Once` holds the others back until
    // the variable is set; none reads the environment before.
    ENV.call_once(|| unsafe { std::env::set_var("DEVTENSOR_CPU_DEVICES", "4") });
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = live_handle_count();
    f();
    assert_eq!(live_handle_count(), before, "the test leaked handles");
}

#[test]
fn four_cpu_devices_exist() {
    with_four_cpus(|| {
        assert_eq!(Device::count(DeviceKind::Cpu).unwrap(), 4);
        assert!(!Device::Cpu(3).name().unwrap().is_empty());
        assert_eq!(
            Device::Cpu(4).name().unwrap_err().code,
            ErrorCode::InvalidDevice
        );
    });
}

#[test]
fn mixing_devices_is_a_device_mismatch() {
    with_four_cpus(|| {
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
    with_four_cpus(|| {
        let mut lin = Module::linear(3, 2, true, DType::Float32, Device::Cpu(0)).unwrap();
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

/// Issue 16.10: `Tensor` is `Send + Sync`, so safe code may read a parameter on other
/// threads while the module moves (`Module::to` replaces the parameter's memory). The
/// readers must see the same values on either device, never freed memory:
/// `run_tests.sh` runs this test under valgrind too, where such a read is an error even
/// when it does not crash.
#[test]
fn parameter_read_on_other_threads_while_the_module_moves() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    with_four_cpus(|| {
        let mut lin = Module::linear(24, 16, true, DType::Float32, Device::Cpu(0)).unwrap();
        let w = lin.parameters().unwrap().remove(0);
        let before = w.to_vec::<f32>().unwrap();
        let done = AtomicBool::new(false);
        let reads = AtomicUsize::new(0);
        let moves = std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        assert_eq!(w.to_vec::<f32>().unwrap(), before);
                        assert!(matches!(w.device(), Device::Cpu(0) | Device::Cpu(1)));
                        let twice = (&w + &w).unwrap();
                        assert_eq!(twice.to_vec::<f32>().unwrap()[0], 2.0 * before[0]);
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            // At least 300 moves, and until the readers have read 600 times (threads start
            // slowly under valgrind), for at most a minute.
            let start = std::time::Instant::now();
            let mut i = 0;
            while (i < 300 || reads.load(Ordering::Relaxed) < 600) && start.elapsed().as_secs() < 60 {
                lin.to(Device::Cpu(i % 2)).unwrap();
                i += 1;
            }
            done.store(true, Ordering::Relaxed);
            i
        });
        assert!(reads.load(Ordering::Relaxed) >= 600, "the readers did not get to run");
        println!("{moves} moves, {} reads", reads.load(Ordering::Relaxed));
        assert_eq!(w.to_vec::<f32>().unwrap(), before);
    });
}

/// What one forward and backward gives: the output, then the gradients of every
/// parameter of `params_of` (in order) and of the input.
struct Step {
    out: Vec<f32>,
    param_grads: Vec<Vec<f32>>,
    input_grad: Vec<f32>,
}

/// A fixed `[rows, 5]` input that requires grad (no random numbers: both runs see it).
fn input(rows: i64) -> Tensor {
    let xs: Vec<f32> = (0..rows * 5)
        .map(|i| (0.7 * i as f64 + 0.2).sin() as f32)
        .collect();
    let x = Tensor::from_vec(xs, &[rows, 5], Device::Cpu(0)).unwrap();
    x.set_requires_grad(true).unwrap();
    x
}

/// Reads every gradient after `loss.backward()` on `out`, then clears the parameters'.
fn finish(out: &Tensor, loss: &Tensor, x: &Tensor, params_of: &Module) -> Step {
    loss.backward().unwrap();
    let params = params_of.parameters().unwrap();
    let param_grads = params
        .iter()
        .map(|p| {
            let g = p.grad().unwrap().expect("a parameter without a gradient");
            assert_eq!(g.device(), p.device());
            g.to_vec::<f32>().unwrap()
        })
        .collect();
    for p in &params {
        p.clear_grad().unwrap();
    }
    Step {
        out: out.to_vec::<f32>().unwrap(),
        param_grads,
        input_grad: x.grad().unwrap().unwrap().to_vec::<f32>().unwrap(),
    }
}

/// loss = sum(m(x) * c) for a fixed c.
fn weighted_sum_step(m: &Module, params_of: &Module, rows: i64) -> Step {
    let x = input(rows);
    let cs: Vec<f32> = (0..rows * 3).map(|i| (1 + i % 5) as f32).collect();
    let c = Tensor::from_vec(cs, &[rows, 3], Device::Cpu(0)).unwrap();
    let out = m.forward(&x).unwrap();
    assert_eq!(out.shape(), vec![rows, 3]);
    assert_eq!(out.device(), Device::Cpu(0));
    let loss = (&out * &c).unwrap().sum(&[], false).unwrap();
    finish(&out, &loss, &x, params_of)
}

fn assert_close(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5, "{what}[{i}]: {g} vs {w}");
    }
}

fn assert_same(rows: i64, split: &Step, plain: &Step) {
    assert_close(&format!("{rows} rows: output"), &split.out, &plain.out);
    assert_eq!(split.param_grads.len(), plain.param_grads.len());
    for (k, (g, w)) in split.param_grads.iter().zip(&plain.param_grads).enumerate() {
        assert_close(&format!("{rows} rows: parameter {k} grad"), g, w);
    }
    assert_close(
        &format!("{rows} rows: input grad"),
        &split.input_grad,
        &plain.input_grad,
    );
}

#[test]
fn data_parallel_matches_the_plain_module() {
    with_four_cpus(|| {
        devtensor::manual_seed(7).unwrap();
        let lin = Module::linear(5, 3, true, DType::Float32, Device::Cpu(0)).unwrap();
        let dp = Module::data_parallel(&lin, &[Device::Cpu(0), Device::Cpu(1), Device::Cpu(2), Device::Cpu(3)], None).unwrap();
        // The DataParallel's parameters are the module's, under PyTorch's names.
        let names: Vec<String> = dp
            .named_parameters()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["module.weight", "module.bias"]);
        assert!(dp.parameters().unwrap()[0].shares_storage(&lin.parameters().unwrap()[0]));
        // Even (8 rows: 2 per device), uneven (torch.chunk: 5 = 2 + 2 + 1, 7 = 2 + 2 + 2 + 1)
        // and a 1-row batch (cpu:0 alone).
        for rows in [8, 5, 7, 1] {
            let plain = weighted_sum_step(&lin, &lin, rows);
            let split = weighted_sum_step(&dp, &lin, rows);
            assert_same(rows, &split, &plain);
        }
        // An optimizer step on the module is seen by the next forward (replicas remade).
        let mut opt =
            Optimizer::sgd(&lin.parameters().unwrap(), 0.1, 0.0, 0.0, 0.0, false).unwrap();
        let x = input(5);
        lin.forward(&x)
            .unwrap()
            .sum(&[], false)
            .unwrap()
            .backward()
            .unwrap();
        opt.step().unwrap();
        opt.zero_grad().unwrap();
        let plain = weighted_sum_step(&lin, &lin, 5);
        let split = weighted_sum_step(&dp, &lin, 5);
        assert_same(5, &split, &plain);
        // `&[]` is every CPU device; `output_device` gathers elsewhere.
        let all = Module::data_parallel(&lin, &[], Some(Device::Cpu(1))).unwrap();
        let y = all.forward(&input(4)).unwrap();
        assert_eq!(y.device(), Device::Cpu(1));
        assert_close(
            "all devices, on cpu:1",
            &y.to_vec::<f32>().unwrap(),
            &plain.out[..12],
        );
        // The DataParallel keeps its own reference: it works after the module is dropped.
        drop(lin);
        assert_eq!(dp.forward(&input(3)).unwrap().shape(), vec![3, 3]);
    });
}

#[test]
fn data_parallel_sequential_with_cross_entropy() {
    with_four_cpus(|| {
        devtensor::manual_seed(11).unwrap();
        let model = Sequential::new()
            .add(Module::linear(5, 4, true, DType::Float32, Device::Cpu(0)).unwrap())
            .add(Module::tanh().unwrap())
            .add(Module::linear(4, 3, true, DType::Float32, Device::Cpu(0)).unwrap())
            .build()
            .unwrap();
        let dp = Module::data_parallel(&model, &[Device::Cpu(0), Device::Cpu(1), Device::Cpu(2), Device::Cpu(3)], None).unwrap();
        let loss_fn = Module::cross_entropy_loss(None, Reduction::Mean, -100, 0.0).unwrap();
        for rows in [8i64, 5, 7, 1] {
            let run = |m: &Module| {
                let x = input(rows);
                let labels: Vec<i64> = (0..rows).map(|i| i % 3).collect();
                let y = Tensor::from_vec(labels, &[rows], Device::Cpu(0)).unwrap();
                let out = m.forward(&x).unwrap();
                let loss = loss_fn.loss(&out, &y).unwrap();
                finish(&out, &loss, &x, &model)
            };
            let plain = run(&model);
            let split = run(&dp);
            assert_eq!(plain.param_grads.len(), 4);
            assert_same(rows, &split, &plain);
        }
    });
}

#[test]
fn data_parallel_module_not_on_device_ids_0() {
    with_four_cpus(|| {
        let lin = Module::linear(5, 3, true, DType::Float32, Device::Cpu(1)).unwrap();
        // Construction succeeds; the parameters' device is checked when forward runs.
        let mut dp = Module::data_parallel(&lin, &[Device::Cpu(0), Device::Cpu(1)], None).unwrap();
        let x = Tensor::zeros(&[2, 5], DType::Float32, Device::Cpu(0)).unwrap();
        let e = dp.forward(&x).unwrap_err();
        assert_eq!(e.code, ErrorCode::DeviceMismatch, "{e}");
        assert!(
            e.message.contains("device_ids[0]"),
            "message: {}",
            e.message
        );
        assert!(
            e.message.contains(
                "module must have its parameters and buffers on device cpu:0 (device_ids[0]) \
                 but found one of them on device: cpu:1"
            ),
            "message: {}",
            e.message
        );
        // `to` on the DataParallel moves the module, which fixes it.
        dp.to(Device::Cpu(0)).unwrap();
        assert_eq!(lin.device().unwrap(), Device::Cpu(0));
        assert_eq!(dp.forward(&x).unwrap().shape(), vec![2, 3]);
    });
}

#[test]
fn data_parallel_invalid_device_lists() {
    with_four_cpus(|| {
        let lin = Module::linear(5, 3, true, DType::Float32, Device::Cpu(0)).unwrap();
        let e = Module::data_parallel(&lin, &[Device::Cpu(0), Device::Cpu(5)], None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidDevice, "{e}");
        assert!(
            e.message.contains("device_ids[1]"),
            "message: {}",
            e.message
        );
        let e = Module::data_parallel(&lin, &[Device::Cpu(1), Device::Cpu(1)], None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let dp = Module::data_parallel(&lin, &[Device::Cpu(0), Device::Cpu(1)], None).unwrap();
        let e = Module::data_parallel(&dp, &[Device::Cpu(0), Device::Cpu(1)], None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    });
}

#[test]
fn like_and_new_constructors_keep_the_device() {
    with_four_cpus(|| {
        let a = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3], Device::Cpu(2)).unwrap();
        for t in [
            a.empty_like().unwrap(),
            a.rand_like().unwrap(),
            a.randn_like().unwrap(),
            a.new_empty(&[2, 2]).unwrap(),
            a.new_zeros(&[2, 2]).unwrap(),
            a.new_ones(&[1]).unwrap(),
            a.new_full(&[2], 7.0).unwrap(),
        ] {
            assert_eq!(
                (t.device(), t.dtype()),
                (Device::Cpu(2), DType::Float64),
                "{t:?}"
            );
        }
        assert_eq!(
            a.new_full(&[2], 7.0).unwrap().to_vec::<f64>().unwrap(),
            vec![7.0, 7.0]
        );
        // Each logical CPU device has its own allocator statistics.
        let before = Device::Cpu(3).memory_stats().unwrap();
        let t = Tensor::zeros(&[256], DType::Float32, Device::Cpu(3)).unwrap();
        let during = Device::Cpu(3).memory_stats().unwrap();
        assert!(
            during.allocation_count > before.allocation_count,
            "{before:?} -> {during:?}"
        );
        drop(t);
        Device::Cpu(3).empty_cache().unwrap();
    });
}

#[test]
fn streams_and_events_keep_to_their_device() {
    use devtensor::{thread_stream, with_stream, Event, Stream};
    with_four_cpus(|| {
        let s1 = Stream::new(Device::Cpu(1)).unwrap();
        assert_eq!(s1.device(), Device::Cpu(1));
        let e0 = Event::new(Device::Cpu(0)).unwrap();
        let e1 = Event::new(Device::Cpu(1)).unwrap();
        // An event is recorded on a stream of its own device only.
        let err = e0.record(Some(&s1)).unwrap_err();
        assert_eq!(err.code, ErrorCode::DeviceMismatch, "{err}");
        e1.record(Some(&s1)).unwrap();
        e0.record(None).unwrap();
        // Events of two devices have no elapsed time; waiting across devices is allowed.
        let err = e0.elapsed_ms(&e1).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{err}");
        Stream::default_for(Device::Cpu(0))
            .unwrap()
            .wait_event(&e1)
            .unwrap();
        // record_stream takes a stream of the tensor's device.
        let x = Tensor::ones(&[2], DType::Float32, Device::Cpu(0)).unwrap();
        assert_eq!(
            x.record_stream(&s1).unwrap_err().code,
            ErrorCode::DeviceMismatch
        );
        // with_stream changes its stream's device only; ops there use that device's
        // tensors as ever.
        let y = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::Cpu(1)).unwrap();
        let (z, cpu0_default, cpu1_default) = with_stream(&s1, || {
            (
                (&y + &y).unwrap(),
                thread_stream(Device::Cpu(0)).unwrap().is_default(),
                thread_stream(Device::Cpu(1)).unwrap().is_default(),
            )
        })
        .unwrap();
        assert!(cpu0_default, "with_stream on cpu:1 changed cpu:0's stream");
        assert!(
            !cpu1_default,
            "with_stream on cpu:1 did not set cpu:1's stream"
        );
        assert_eq!(z.device(), Device::Cpu(1));
        assert_eq!(z.to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
        assert!(thread_stream(Device::Cpu(1)).unwrap().is_default());
    });
}

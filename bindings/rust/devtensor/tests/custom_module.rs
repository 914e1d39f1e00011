//! `Module::custom` (dt_module_new: a module whose forward is a Rust closure, as a
//! subclass of PyTorch's nn.Module), `get_parameter` and `get_buffer`, checked against
//! the same computations made by hand. DataParallel needs two logical CPU devices, and
//! `DEVTENSOR_CPU_DEVICES` is read once, at the library's first use, so every test of
//! this binary sets it first (through `run`), and runs alone (the live-handle count is
//! process-wide).
mod common;

use common::{assert_near, leak_checked};
use devtensor::nn::{BatchNorm2d, Conv2d, Module, ModuleSpec, Sequential};
use devtensor::{DType, Device, Error, ErrorCode, Result, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};

static ENV: Once = Once::new();

fn run(f: impl FnOnce()) {
    // SAFETY: every test of this binary enters here, and `Once` holds the others back
    // until the variable is set; none reads the environment before.
    ENV.call_once(|| unsafe { std::env::set_var("DEVTENSOR_CPU_DEVICES", "2") });
    leak_checked(f);
}

/// Counts its drops: captured by a closure, it tells when the closure was dropped.
struct DropCount(Arc<AtomicUsize>);
impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to(Device::CPU).unwrap().contiguous().unwrap().to_vec::<f32>().unwrap()
}

/// torchvision's BasicBlock with a learnable residual scale and a step counter:
/// y = relu(bn2(conv2(relu(bn1(conv1(x))))) * scale + x).
struct Block {
    conv1: Module,
    bn1: Module,
    conv2: Module,
    bn2: Module,
    block: Module,
}

fn block_forward(m: &Module, x: &[Tensor]) -> Result<Tensor> {
    let h = m.child("conv1")?.forward(&x[0])?;
    let h = m.child("bn1")?.forward(&h)?.relu()?;
    let h = m.child("conv2")?.forward(&h)?;
    let h = m.child("bn2")?.forward(&h)?;
    h.mul(&m.get_parameter("scale")?)?.add(&x[0])?.relu()
}

fn basic_block() -> Block {
    let conv = || Conv2d::new(3, 3, (3, 3)).padding((1, 1)).bias(false).build().unwrap();
    let (conv1, conv2) = (conv(), conv());
    let (bn1, bn2) = (BatchNorm2d::new(3).build().unwrap(), BatchNorm2d::new(3).build().unwrap());
    let scale = Tensor::from_slice(&[0.5f32], &[1], Device::CPU).unwrap();
    let steps = Tensor::from_slice(&[7i64], &[], Device::CPU).unwrap();
    let spec = ModuleSpec {
        children: &[("conv1", &conv1), ("bn1", &bn1), ("conv2", &conv2), ("bn2", &bn2)],
        parameters: &[("scale", &scale)],
        buffers: &[("steps", &steps)],
        ..ModuleSpec::default()
    };
    let block = Module::custom("BasicBlock", &spec, block_forward).unwrap();
    Block { conv1, bn1, conv2, bn2, block }
}

/// The same block's forward with the child modules called by hand.
fn by_hand(b: &Block, x: &Tensor, scale: f64) -> Tensor {
    let h = b.bn1.forward(&b.conv1.forward(x).unwrap()).unwrap().relu().unwrap();
    let h = b.bn2.forward(&b.conv2.forward(&h).unwrap()).unwrap();
    h.mul_scalar(scale).unwrap().add(x).unwrap().relu().unwrap()
}

fn names(named: Vec<(String, Tensor)>) -> Vec<String> {
    named.into_iter().map(|(n, _)| n).collect()
}

#[test]
fn basic_block_names_its_state_as_pytorch() {
    run(|| {
        let b = basic_block();
        assert_eq!(b.block.kind().unwrap(), "BasicBlock");
        let params = names(b.block.named_parameters().unwrap());
        assert_eq!(
            params,
            ["scale", "conv1.weight", "bn1.weight", "bn1.bias", "conv2.weight", "bn2.weight", "bn2.bias"]
        );
        let buffers = names(b.block.named_buffers().unwrap());
        assert_eq!(
            buffers,
            [
                "steps",
                "bn1.running_mean",
                "bn1.running_var",
                "bn1.num_batches_tracked",
                "bn2.running_mean",
                "bn2.running_var",
                "bn2.num_batches_tracked"
            ]
        );
        let sd = b.block.state_dict().unwrap();
        let mut want = params.clone();
        want.extend(buffers);
        assert_eq!(sd.names().unwrap(), want);
        // The children are the modules given (their parameters, not copies); the own
        // parameter and buffer are copies of the values given, the parameter requiring
        // grad and the buffer not.
        assert!(sd.get("conv1.weight").unwrap().unwrap().shares_storage(&b.conv1.parameters().unwrap()[0]));
        let children = b.block.children().unwrap();
        assert_eq!(
            children.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["conv1", "bn1", "conv2", "bn2"]
        );
        assert_eq!(children[1].1.kind().unwrap(), "BatchNorm2d");
        let scale = b.block.get_parameter("scale").unwrap();
        assert!(scale.requires_grad());
        assert_eq!((scale.shape(), scale.to_vec::<f32>().unwrap()), (vec![1], vec![0.5]));
        let steps = b.block.get_buffer("steps").unwrap();
        assert!(!steps.requires_grad());
        assert_eq!((steps.dtype(), steps.to_vec::<i64>().unwrap()), (DType::Int64, vec![7]));

        // A file saved from one block loads by those names into another.
        let path = std::env::temp_dir().join(format!("devtensor-custom-{}.safetensors", std::process::id()));
        // SAFETY: no other thread uses the tensor.
        unsafe { b.block.get_buffer("steps").unwrap().copy_from_slice(&[9i64]).unwrap() };
        b.block.save(&path).unwrap();
        let mut other = basic_block();
        other.block.load(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(other.block.get_buffer("steps").unwrap().to_vec::<i64>().unwrap(), [9]);
        assert_eq!(
            f32s(&other.conv2.parameters().unwrap()[0]),
            f32s(&b.block.get_parameter("conv2.weight").unwrap())
        );
    });
}

#[test]
fn basic_block_forward_is_the_ops_by_hand_and_backward_reaches_every_parameter() {
    run(|| {
        devtensor::manual_seed(3).unwrap();
        let b = basic_block();
        let x = Tensor::randn(&[2, 3, 5, 4], DType::Float32, Device::CPU).unwrap();
        let y = b.block.forward(&x).unwrap();
        assert_eq!(y.shape(), vec![2, 3, 5, 4]);
        // Training mode: the batch norms normalise with the batch's statistics, so the
        // same ops again give the same values (and update the running statistics again).
        let want = by_hand(&b, &x, 0.5);
        assert_near("block(x)", &f32s(&y), &f32s(&want), 1e-5);

        // The block's forward trained its children: running_mean = 0.1 * the batch mean
        // of conv1(x) per channel (computed here with the functional conv), and one
        // more batch from the call by hand.
        let w1 = b.conv1.parameters().unwrap()[0].clone();
        let h1 = x
            .conv2d(&w1, None, &devtensor::nn::Conv2dOptions { padding: (1, 1).into(), ..Default::default() })
            .unwrap();
        let mean1 = f32s(&h1.mean(&[0, 2, 3], false).unwrap());
        let rm: Vec<f32> = mean1.iter().map(|m| 0.1 * m + 0.9 * 0.1 * m).collect();
        assert_near("bn1.running_mean", &f32s(&b.block.get_buffer("bn1.running_mean").unwrap()), &rm, 1e-5);
        assert_eq!(b.block.get_buffer("bn1.num_batches_tracked").unwrap().to_vec::<i64>().unwrap(), [2]);
        // The own buffer is the module's: forward did not touch it.
        assert_eq!(b.block.get_buffer("steps").unwrap().to_vec::<i64>().unwrap(), [7]);

        // Backward: every parameter of the children and the block's own gets a gradient.
        y.sum_all().unwrap().backward().unwrap();
        for (name, p) in b.block.named_parameters().unwrap() {
            let g = p.grad().unwrap().unwrap_or_else(|| panic!("{name} has no gradient"));
            assert_eq!(g.shape(), p.shape(), "{name}");
        }
        // d/dscale sum(relu(h * scale + x)) = sum over the positive outputs of h, h being
        // bn2's output (the same batch statistics again).
        let h = {
            let h = b.bn1.forward(&b.conv1.forward(&x).unwrap()).unwrap().relu().unwrap();
            b.bn2.forward(&b.conv2.forward(&h).unwrap()).unwrap()
        };
        let pre = f32s(&h.mul_scalar(0.5).unwrap().add(&x).unwrap());
        let hv = f32s(&h);
        let dscale: f64 = pre.iter().zip(&hv).filter(|(p, _)| **p > 0.0).map(|(_, h)| *h as f64).sum();
        let g = b.block.get_parameter("scale").unwrap().grad().unwrap().unwrap();
        assert_near("d/dscale", &f32s(&g), &[dscale], 1e-3);
    });
}

#[test]
fn basic_block_in_a_sequential_and_eval_reaching_the_children() {
    run(|| {
        devtensor::manual_seed(4).unwrap();
        let b = basic_block();
        let mut seq = Sequential::new()
            .add(b.block.share())
            .add(Module::flatten(1, -1).unwrap())
            .build()
            .unwrap();
        assert_eq!(names(seq.named_parameters().unwrap())[..2], ["0.scale", "0.conv1.weight"]);
        let x = Tensor::randn(&[2, 3, 4, 4], DType::Float32, Device::CPU).unwrap();
        // Training mode through the Sequential: the block's batch norms count the batch.
        let y = seq.forward(&x).unwrap();
        assert_eq!(y.shape(), vec![2, 48]);
        assert_eq!(seq.get_buffer("0.bn2.num_batches_tracked").unwrap().to_vec::<i64>().unwrap(), [1]);
        // eval() on the Sequential reaches the batch norms inside the custom module: they
        // use their running statistics and leave them alone.
        seq.eval().unwrap();
        let rm = f32s(&b.bn1.get_buffer("running_mean").unwrap());
        let y = seq.forward(&x).unwrap();
        assert_eq!(b.bn1.get_buffer("num_batches_tracked").unwrap().to_vec::<i64>().unwrap(), [1]);
        assert_eq!(f32s(&b.bn1.get_buffer("running_mean").unwrap()), rm);
        // By hand in eval mode: (h - running_mean) / sqrt(running_var + eps) * w + b.
        let bn_eval = |bn: &Module, h: &Tensor| -> Tensor {
            let c = |name: &str| bn.get_buffer(name).unwrap().reshape(&[1, 3, 1, 1]).unwrap();
            let p = |name: &str| bn.get_parameter(name).unwrap().reshape(&[1, 3, 1, 1]).unwrap();
            let d = c("running_var").add_scalar(1e-5).unwrap().sqrt().unwrap();
            h.sub(&c("running_mean")).unwrap().div(&d).unwrap().mul(&p("weight")).unwrap().add(&p("bias")).unwrap()
        };
        let h = bn_eval(&b.bn1, &b.conv1.forward(&x).unwrap()).relu().unwrap();
        let h = bn_eval(&b.bn2, &b.conv2.forward(&h).unwrap());
        let want = h.mul_scalar(0.5).unwrap().add(&x).unwrap().relu().unwrap();
        assert_near("eval block(x)", &f32s(&y), &f32s(&want.flatten(1, -1).unwrap()), 1e-5);
        // train() back: the batch norms count batches again.
        seq.train().unwrap();
        seq.forward(&x).unwrap();
        assert_eq!(b.bn1.get_buffer("num_batches_tracked").unwrap().to_vec::<i64>().unwrap(), [2]);
    });
}

#[test]
fn get_parameter_and_get_buffer_are_the_modules_own_tensors() {
    run(|| {
        let b = basic_block();
        let w = b.block.get_parameter("bn1.weight").unwrap();
        assert!(w.shares_storage(&b.bn1.parameters().unwrap()[0]));
        // A write through it shows in the state dict and in the child.
        // SAFETY: no other thread uses the tensor.
        unsafe { w.copy_from_slice(&[2.0f32, 3.0, 4.0]).unwrap() };
        let sd = b.block.state_dict().unwrap();
        assert_eq!(f32s(&sd.get("bn1.weight").unwrap().unwrap()), [2.0, 3.0, 4.0]);
        assert_eq!(f32s(&b.bn1.named_parameters().unwrap()[0].1), [2.0, 3.0, 4.0]);
        let rm = b.block.get_buffer("bn2.running_mean").unwrap();
        assert!(rm.shares_storage(&sd.get("bn2.running_mean").unwrap().unwrap()));

        // What is missing is named, with what there is.
        let e = b.block.get_buffer("bn1.running_meen").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("running_meen"), "{}", e.message);
        assert!(e.message.contains("running_mean, running_var, num_batches_tracked"), "{}", e.message);
        let e = b.block.get_buffer("bn3.running_mean").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("no child \"bn3\""), "{}", e.message);
        assert!(e.message.contains("BasicBlock"), "{}", e.message);
        // A buffer is not a parameter.
        let e = b.block.get_parameter("steps").unwrap_err();
        assert!(e.message.contains("no parameter \"steps\""), "{}", e.message);
        assert!(e.message.contains("parameters scale"), "{}", e.message);
        let e = b.block.get_buffer("conv1.x").unwrap_err();
        assert!(e.message.contains("no buffers"), "{}", e.message);
        assert_eq!(b.block.get_parameter("a\0b").unwrap_err().code, ErrorCode::InvalidArgument);
    });
}

#[test]
fn a_closures_error_fails_forward_with_its_code_and_message() {
    run(|| {
        let m = Module::custom("Picky", &ModuleSpec::default(), |_, x| {
            if x[0].shape()[0] % 2 == 1 {
                return Err(Error { code: ErrorCode::NotSupported, message: "no odd batches".into() });
            }
            x[0].mul_scalar(2.0)
        })
        .unwrap();
        let ok = m.forward(&Tensor::ones(&[2], DType::Float32, Device::CPU).unwrap()).unwrap();
        assert_eq!(ok.to_vec::<f32>().unwrap(), [2.0, 2.0]);
        let e = m.forward(&Tensor::ones(&[3], DType::Float32, Device::CPU).unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotSupported);
        assert!(e.message.contains("Picky"), "{}", e.message);
        assert!(e.message.contains("no odd batches"), "{}", e.message);

        // A child's failure keeps its code, and its message is quoted.
        let lin = Module::linear(4, 2, true, DType::Float32, Device::CPU).unwrap();
        let spec = ModuleSpec { children: &[("lin", &lin)], ..ModuleSpec::default() };
        let m = Module::custom("Head", &spec, |m, x| m.child("lin")?.forward(&x[0])).unwrap();
        let bad = Tensor::ones(&[2, 3], DType::Float32, Device::CPU).unwrap();
        let direct = lin.forward(&bad).unwrap_err();
        let e = m.forward(&bad).unwrap_err();
        assert_eq!((e.code, direct.code), (ErrorCode::ShapeMismatch, ErrorCode::ShapeMismatch));
        assert!(e.message.contains("Head"), "{}", e.message);
        assert!(e.message.contains(&direct.message), "{} / {}", e.message, direct.message);

        // The binding's own code (no status) and a code that is no failure are internal
        // errors; the message is kept.
        for code in [ErrorCode::Version, ErrorCode::Unknown(0)] {
            let m = Module::custom("Odd", &ModuleSpec::default(), move |_, _| {
                Err(Error { code, message: "odd code".into() })
            })
            .unwrap();
            let e = m.forward(&bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::Internal, "{code:?}");
            assert!(e.message.contains("odd code"), "{}", e.message);
        }
        // A NUL byte in the message does not cut it short.
        let m = Module::custom("Nul", &ModuleSpec::default(), |_, _| {
            Err(Error { code: ErrorCode::InvalidArgument, message: "a\0b".into() })
        })
        .unwrap();
        assert!(m.forward(&bad).unwrap_err().message.contains("a\\0b"));
    });
}

#[test]
fn a_panic_is_caught_and_reported_with_its_text() {
    run(|| {
        let m = Module::custom("Panicky", &ModuleSpec::default(), |_, x| {
            if x[0].numel() == 3 {
                panic!("boom {}", 42);
            }
            Ok(x[0].clone())
        })
        .unwrap();
        let e = m.forward(&Tensor::ones(&[3], DType::Float32, Device::CPU).unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("Panicky"), "{}", e.message);
        assert!(e.message.contains("(the forward closure panicked: boom 42)"), "{}", e.message);
        // The module still works after it; returning an input hands back that tensor.
        let x = Tensor::ones(&[2], DType::Float32, Device::CPU).unwrap();
        let y = m.forward(&x).unwrap();
        assert!(y.shares_storage(&x));
        // A panic with a value that is not a string.
        let m = Module::custom("Panicky", &ModuleSpec::default(), |_, _| std::panic::panic_any(7u8)).unwrap();
        let e = m.forward(&x).unwrap_err();
        assert!(e.message.contains("(the forward closure panicked: a value that is not a string)"), "{}", e.message);
    });
}

#[test]
fn bad_specs_fail_and_drop_the_closure() {
    run(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let lin = Module::linear(2, 2, true, DType::Float32, Device::CPU).unwrap();
        let w = Tensor::ones(&[2], DType::Float32, Device::CPU).unwrap();
        let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();
        let try_make = |kind: &str, spec: &ModuleSpec| -> Error {
            let flag = DropCount(drops.clone());
            Module::custom(kind, spec, move |_, x| {
                let _ = &flag;
                Ok(x[0].clone())
            })
            .unwrap_err()
        };
        let cases: [(&str, ModuleSpec, ErrorCode, &str); 10] = [
            ("", ModuleSpec::default(), ErrorCode::InvalidArgument, "kind is empty"),
            (
                "K",
                ModuleSpec { parameters: &[("a.b", &w)], ..ModuleSpec::default() },
                ErrorCode::InvalidArgument,
                "\"a.b\"",
            ),
            (
                "K",
                ModuleSpec { buffers: &[("", &w)], ..ModuleSpec::default() },
                ErrorCode::InvalidArgument,
                "not allowed",
            ),
            (
                "K",
                ModuleSpec { children: &[("x", &lin)], buffers: &[("x", &w)], ..ModuleSpec::default() },
                ErrorCode::InvalidArgument,
                "\"x\" names both a child and a buffer",
            ),
            (
                "K",
                ModuleSpec { parameters: &[("w", &w), ("w", &w)], ..ModuleSpec::default() },
                ErrorCode::InvalidArgument,
                "names must be unique",
            ),
            (
                "K",
                ModuleSpec { parameters: &[("n", &ints)], ..ModuleSpec::default() },
                ErrorCode::DtypeMismatch,
                "parameter \"n\"",
            ),
            (
                "K",
                ModuleSpec { min_inputs: 3, max_inputs: 2, ..ModuleSpec::default() },
                ErrorCode::InvalidArgument,
                "min_inputs 3",
            ),
            ("K", ModuleSpec { max_inputs: 17, ..ModuleSpec::default() }, ErrorCode::InvalidArgument, "16"),
            ("K\0", ModuleSpec::default(), ErrorCode::InvalidArgument, "NUL"),
            (
                "K",
                ModuleSpec { children: &[("c\0", &lin)], ..ModuleSpec::default() },
                ErrorCode::InvalidArgument,
                "NUL",
            ),
        ];
        for (i, (kind, spec, code, text)) in cases.iter().enumerate() {
            let e = try_make(kind, spec);
            assert_eq!(e.code, *code, "case {i}: {}", e.message);
            assert!(e.message.contains(text), "case {i}: {}", e.message);
            assert_eq!(drops.load(Ordering::SeqCst), i + 1, "case {i}: the closure was not dropped");
        }
        // An int64 buffer is fine (integer state is a buffer).
        let ok = Module::custom(
            "K",
            &ModuleSpec { buffers: &[("n", &ints)], ..ModuleSpec::default() },
            |_, x| Ok(x[0].clone()),
        )
        .unwrap();
        assert_eq!(ok.get_buffer("n").unwrap().to_vec::<i64>().unwrap(), [1, 2]);
    });
}

#[test]
fn the_closure_is_dropped_with_the_last_handle() {
    run(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let flag = DropCount(drops.clone());
        let m = Module::custom("Kept", &ModuleSpec::default(), move |_, x| {
            let _ = &flag;
            x[0].add_scalar(1.0)
        })
        .unwrap();
        let second = m.share();
        let seq = Sequential::new().add(m.share()).build().unwrap();
        let x = Tensor::zeros(&[2], DType::Float32, Device::CPU).unwrap();
        assert_eq!(seq.forward(&x).unwrap().to_vec::<f32>().unwrap(), [1.0, 1.0]);
        let child = seq.child("0").unwrap();
        drop(m);
        drop(second);
        drop(seq);
        assert_eq!(drops.load(Ordering::SeqCst), 0, "dropped while a handle remains");
        assert_eq!(child.forward(&x).unwrap().to_vec::<f32>().unwrap(), [1.0, 1.0]);
        drop(child);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn several_inputs_nesting_threads_and_no_move_inside_forward() {
    run(|| {
        // Two to three inputs: a + b (+ c).
        let spec = ModuleSpec { min_inputs: 2, max_inputs: 3, ..ModuleSpec::default() };
        let sum = Module::custom("Sum", &spec, |_, x| {
            let mut acc = x[0].add(&x[1])?;
            if let Some(c) = x.get(2) {
                acc = acc.add(c)?;
            }
            Ok(acc)
        })
        .unwrap();
        let a = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
        let b = Tensor::from_slice(&[10.0f32, 20.0], &[2], Device::CPU).unwrap();
        assert_eq!(sum.forward_many(&[&a, &b]).unwrap().to_vec::<f32>().unwrap(), [11.0, 22.0]);
        assert_eq!(sum.forward_many(&[&a, &b, &a]).unwrap().to_vec::<f32>().unwrap(), [12.0, 24.0]);
        let e = sum.forward(&a).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("2 to 3"), "{}", e.message);
        assert_eq!(sum.forward_with(&[Some(&a), None]).unwrap_err().code, ErrorCode::InvalidArgument);

        // A custom module inside another: the inner forward runs inside the outer one.
        let inner = Module::custom("Double", &ModuleSpec::default(), |_, x| x[0].mul_scalar(2.0)).unwrap();
        let spec = ModuleSpec { children: &[("inner", &inner)], ..ModuleSpec::default() };
        let outer = Module::custom("Outer", &spec, |m, x| m.child("inner")?.forward(&x[0])?.add_scalar(1.0)).unwrap();
        assert_eq!(outer.forward(&a).unwrap().to_vec::<f32>().unwrap(), [3.0, 5.0]);

        // Moving a module inside forward fails; the error comes back quoted.
        let mover = Module::custom("Mover", &ModuleSpec::default(), |m, x| {
            m.share().to(Device::CPU)?;
            Ok(x[0].clone())
        })
        .unwrap();
        let e = mover.forward(&a).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("Mover") && e.message.contains("dt_module_to"), "{}", e.message);

        // From several threads at once, each call counted once.
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let lin = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
        let spec = ModuleSpec { children: &[("lin", &lin)], ..ModuleSpec::default() };
        let m = Arc::new(
            Module::custom("Counted", &spec, move |m, x| {
                c.fetch_add(1, Ordering::SeqCst);
                m.child("lin")?.forward(&x[0])?.tanh()
            })
            .unwrap(),
        );
        let x = Tensor::randn(&[4, 3], DType::Float32, Device::CPU).unwrap();
        let want = f32s(&lin.forward(&x).unwrap().tanh().unwrap());
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (m, x) = (Arc::clone(&m), x.clone());
                std::thread::spawn(move || (0..20).map(|_| f32s(&m.forward(&x).unwrap())).collect::<Vec<_>>())
            })
            .collect();
        for w in workers {
            for got in w.join().unwrap() {
                assert_near("threaded forward", &got, &want, 0.0);
            }
        }
        assert_eq!(calls.load(Ordering::SeqCst), 80);
    });
}

#[test]
fn data_parallel_over_two_cpu_devices_runs_the_closure_on_each_replica() {
    run(|| {
        devtensor::manual_seed(5).unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        let seen: Arc<Mutex<Vec<Device>>> = Arc::default();
        let b = basic_block();
        let (flag, s) = (DropCount(drops.clone()), seen.clone());
        // The same block, wrapped: it records where each call ran and checks that the
        // replica's own parameters are on the input's device.
        let spec = ModuleSpec { children: &[("block", &b.block)], ..ModuleSpec::default() };
        let mut wrap = Module::custom("Wrap", &spec, move |m, x| {
            let _ = &flag;
            let w = m.get_parameter("block.conv1.weight")?;
            if w.device() != x[0].device() {
                return Err(Error {
                    code: ErrorCode::DeviceMismatch,
                    message: format!("conv1.weight on {} but the input on {}", w.device(), x[0].device()),
                });
            }
            s.lock().unwrap().push(x[0].device());
            m.child("block")?.forward(&x[0])
        })
        .unwrap();
        // Eval mode: each replica's batch norms use the running statistics, so the split
        // batch gives the whole batch's values.
        wrap.eval().unwrap();
        let x = Tensor::randn(&[4, 3, 4, 4], DType::Float32, Device::Cpu(0)).unwrap();
        let plain = wrap.forward(&x).unwrap();
        seen.lock().unwrap().clear();
        let dp = Module::data_parallel(&wrap, &[Device::Cpu(0), Device::Cpu(1)], None).unwrap();
        assert_eq!(names(dp.named_parameters().unwrap())[0], "module.block.scale");
        let y = dp.forward(&x).unwrap();
        assert_eq!(y.device(), Device::Cpu(0));
        assert_near("DataParallel(block)(x)", &f32s(&y), &f32s(&plain), 1e-5);
        let mut where_ran = seen.lock().unwrap().clone();
        where_ran.sort_by_key(|d| d.to_string());
        assert_eq!(where_ran, [Device::Cpu(0), Device::Cpu(1)]);

        // Backward through the replicas sums into the block's own parameters: the same
        // gradients as the plain forward's.
        y.sum_all().unwrap().backward().unwrap();
        let dp_grads: Vec<Vec<f32>> = b
            .block
            .parameters()
            .unwrap()
            .iter()
            .map(|p| f32s(&p.grad().unwrap().expect("a gradient through DataParallel")))
            .collect();
        for p in b.block.parameters().unwrap() {
            p.clear_grad().unwrap();
        }
        plain.sum_all().unwrap().backward().unwrap();
        for ((name, p), dg) in b.block.named_parameters().unwrap().into_iter().zip(&dp_grads) {
            assert_near(&name, dg, &f32s(&p.grad().unwrap().unwrap()), 1e-4);
        }

        // A failure on one replica's thread comes back with the closure's code and text.
        let picky = Module::custom("OnlyCpu0", &ModuleSpec::default(), |_, x| {
            if x[0].device() != Device::Cpu(0) {
                return Err(Error { code: ErrorCode::NotSupported, message: format!("not on {}", x[0].device()) });
            }
            Ok(x[0].clone())
        })
        .unwrap();
        let dp_picky = Module::data_parallel(&picky, &[Device::Cpu(0), Device::Cpu(1)], None).unwrap();
        let e = dp_picky.forward(&x).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotSupported);
        assert!(e.message.contains("OnlyCpu0") && e.message.contains("not on cpu:1"), "{}", e.message);

        // The closure goes when the module and the DataParallel (with its replicas) are.
        drop(wrap);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop((y, plain)); // their graphs hold nothing of the closure, but go first anyway
        drop(dp);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn distributed_data_parallel_wraps_a_custom_module() {
    run(|| {
        let store = std::env::temp_dir().join(format!("devtensor-custom-ddp-{}", std::process::id()));
        let pg = devtensor::ProcessGroup::new(
            Some("gloo"),
            Some(&format!("file://{}", store.display())),
            Some(0),
            Some(1),
            Some(std::time::Duration::from_secs(30)),
        )
        .unwrap();
        let lin = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
        let gain = Tensor::from_slice(&[2.0f32], &[1], Device::CPU).unwrap();
        let spec = ModuleSpec { children: &[("lin", &lin)], parameters: &[("gain", &gain)], ..ModuleSpec::default() };
        let m = Module::custom("Gained", &spec, |m, x| m.child("lin")?.forward(&x[0])?.mul(&m.get_parameter("gain")?))
            .unwrap();
        let ddp = Module::distributed_data_parallel(&m, &pg, None, false).unwrap();
        assert_eq!(names(ddp.named_parameters().unwrap()), ["module.gain", "module.lin.weight", "module.lin.bias"]);
        let x = Tensor::ones(&[4, 3], DType::Float32, Device::CPU).unwrap();
        ddp.forward(&x).unwrap().sum_all().unwrap().backward().unwrap();
        // d/dbias sum(gain * (x W^T + b)) = gain * rows = 2 * 4 (averaged over one rank).
        let gb = lin.get_parameter("bias").unwrap().grad().unwrap().unwrap();
        assert_eq!(f32s(&gb), [8.0, 8.0]);
        assert!(m.get_parameter("gain").unwrap().grad().unwrap().is_some());
        drop((ddp, pg));
        let _ = std::fs::remove_file(&store);
    });
}

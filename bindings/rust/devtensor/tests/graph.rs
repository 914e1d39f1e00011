//! Graphs (dt_graph_*, Stream::capture, Graph): capture ops and a whole training step on a
//! CPU stream, replay them on static tensors with new values written in, and compare with
//! the eager results bit for bit; calls refused during capture; the errors of capture.
//! Each test runs alone (manual_seed and the handle count are process-wide) and checks
//! that it leaves no handle behind.
use devtensor::nn::{CrossEntropyLoss, Module, Optimizer, Sequential, Sgd};
use devtensor::{
    thread_stream, DType, Device, Element, ErrorCode, Graph, Stream, Tensor,
};

mod common;
use common::leak_checked;

/// Writes `data` into `t` in place: how a graph's static input gets new values.
fn write<T: Element>(t: &Tensor, data: &[T]) {
    // SAFETY: no other thread uses t meanwhile.
    unsafe { t.copy_from_slice(data) }.expect("copy_from_slice");
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec::<f32>()
        .unwrap()
        .into_iter()
        .map(f32::to_bits)
        .collect()
}

fn cpu_default() -> bool {
    thread_stream(Device::CPU).unwrap().is_default()
}

#[test]
fn capture_ops_then_replay_on_new_input_values() {
    leak_checked(|| {
        let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4], Device::CPU).unwrap();
        let s = Stream::new(Device::CPU).unwrap();
        assert!(!s.is_capturing().unwrap());
        let (g, (y, inside, current_is_s)) = s
            .capture(|| {
                let y = (&(&x * 2.0)? + &x)?; // y = x*2 + x
                let cur = thread_stream(Device::CPU)?;
                Ok((y, s.is_capturing()?, !cur.is_default()))
            })
            .unwrap();
        assert!(inside, "is_capturing was false inside the capture");
        assert!(
            current_is_s,
            "the capturing stream was not the thread's stream"
        );
        assert!(!s.is_capturing().unwrap(), "the capture did not end");
        assert!(cpu_default(), "the thread's stream was not restored");
        assert_eq!(g.device().unwrap(), Device::CPU);
        assert!(g.num_steps().unwrap() >= 2, "{g:?}");
        assert_eq!(y.shape(), vec![4]);

        g.replay().unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 6.0, 9.0, 12.0]);

        // New values in the static input; the replay writes the same output tensor.
        write(&x, &[10.0f32, -1.0, 0.5, 100.0]);
        g.replay().unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![30.0, -3.0, 1.5, 300.0]);
        // Replaying again on unchanged input gives the same values.
        g.replay().unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![30.0, -3.0, 1.5, 300.0]);

        // A clone is the same graph, replayable from other threads (Send + Sync).
        let g2 = g.clone();
        write(&x, &[1.0f32, 1.0, 1.0, 1.0]);
        std::thread::scope(|sc| {
            let h = sc.spawn(|| g2.replay());
            g.replay().unwrap();
            h.join().unwrap().unwrap();
        });
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0; 4]);

        // The graph keeps its memory after the caller's handles are gone.
        drop((x, s, g2));
        g.replay().unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0; 4]);
    });
}

/// Linear(8, 16), ReLU, Linear(16, 4); CrossEntropyLoss; SGD lr 0.1 momentum 0.9.
struct Mlp {
    net: Module,
    loss_fn: Module,
    opt: Optimizer,
}

impl Mlp {
    fn new(seed: u64) -> Mlp {
        devtensor::manual_seed(seed).unwrap();
        let net = Sequential::new()
            .add(Module::linear(8, 16, true, DType::Float32, Device::CPU).unwrap())
            .add(Module::relu().unwrap())
            .add(Module::linear(16, 4, true, DType::Float32, Device::CPU).unwrap())
            .build()
            .unwrap();
        let loss_fn = CrossEntropyLoss::new().build().unwrap();
        let opt = Sgd::new(&net.parameters().unwrap(), 0.1)
            .momentum(0.9)
            .build()
            .unwrap();
        Mlp { net, loss_fn, opt }
    }

    /// zero_grad, forward, loss, backward, step; returns the loss tensor.
    fn step(&mut self, x: &Tensor, y: &Tensor) -> devtensor::Result<Tensor> {
        self.opt.zero_grad()?;
        let logits = self.net.forward(x)?;
        let loss = self.loss_fn.loss(&logits, y)?;
        loss.backward()?;
        self.opt.step()?;
        Ok(loss)
    }

    fn param_bits(&self) -> Vec<Vec<u32>> {
        self.net.parameters().unwrap().iter().map(bits).collect()
    }
}

/// Batch `k`: 6 rows of 8 features and 6 class targets in 0..4, deterministic.
fn batch(k: usize) -> (Vec<f32>, Vec<i64>) {
    let x = (0..48)
        .map(|i| (((i * 7 + k * 13) % 23) as f32 - 11.0) / 7.0)
        .collect();
    let y = (0..6).map(|i| ((i * 3 + k) % 4) as i64).collect();
    (x, y)
}

fn batch_tensors(k: usize) -> (Tensor, Tensor) {
    let (x, y) = batch(k);
    (
        Tensor::from_slice(&x, &[6, 8], Device::CPU).unwrap(),
        Tensor::from_slice(&y, &[6], Device::CPU).unwrap(),
    )
}

#[test]
fn a_replayed_training_step_gives_the_bits_of_the_eager_step() {
    leak_checked(|| {
        let mut a = Mlp::new(7);
        let mut b = Mlp::new(7);
        assert_eq!(
            a.param_bits(),
            b.param_bits(),
            "the same seed built different models"
        );

        // Step 0 eagerly on both (warm-up: SGD's momentum buffers exist before capture).
        let (static_x, static_y) = batch_tensors(0);
        let (x0, y0) = batch_tensors(0);
        let la0 = a.step(&x0, &y0).unwrap();
        let lb0 = b.step(&static_x, &static_y).unwrap();
        assert_eq!(bits(&la0), bits(&lb0));
        assert_eq!(a.param_bits(), b.param_bits());

        // Capture one step of B on the static x and y.
        let s = Stream::new(Device::CPU).unwrap();
        let (g, static_loss) = s.capture(|| b.step(&static_x, &static_y)).unwrap();
        // Forward (2 products, a ReLU), the loss, its backward and 4 SGD steps: at least
        // 10 recorded steps however far the ops are fused (20 on the CPU today).
        assert!(g.num_steps().unwrap() >= 10, "{g:?}");
        assert_eq!(g.device().unwrap(), Device::CPU);
        // Capture computed nothing: B's parameters are still those after step 0.
        assert_eq!(a.param_bits(), b.param_bits(), "the capture ran the step");

        let mut losses = vec![la0.item().unwrap()];
        for k in 1..=3 {
            let (xe, ye) = batch_tensors(k);
            let la = a.step(&xe, &ye).unwrap();
            let (xv, yv) = batch(k);
            write(&static_x, &xv);
            write(&static_y, &yv);
            g.replay().unwrap();
            assert_eq!(bits(&la), bits(&static_loss), "loss of batch {k}");
            let (pa, pb) = (a.net.parameters().unwrap(), b.net.parameters().unwrap());
            assert_eq!(pa.len(), 4);
            for (i, (p, q)) in pa.iter().zip(&pb).enumerate() {
                assert_eq!(bits(p), bits(q), "batch {k}, parameter {i}");
                // The gradients backward set are outputs too.
                let (ga, gb) = (p.grad().unwrap().unwrap(), q.grad().unwrap().unwrap());
                assert_eq!(bits(&ga), bits(&gb), "batch {k}, gradient {i}");
            }
            losses.push(static_loss.item().unwrap());
        }
        // The losses changed from batch to batch, so the comparison compared something.
        assert!(losses.windows(2).all(|w| w[0] != w[1]), "losses {losses:?}");
        drop(g);
        // The model goes on training eagerly after the graph is gone.
        let (x4, y4) = batch_tensors(4);
        b.step(&x4, &y4).unwrap();
    });
}

#[test]
fn a_refused_call_inside_the_capture_leaves_the_capture_going() {
    leak_checked(|| {
        let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU).unwrap();
        let s = Stream::new(Device::CPU).unwrap();
        let (g, (z, refused)) = s
            .capture(|| {
                let y = (&x * 2.0)?; // recorded before the refused calls
                let refused = vec![
                    y.sum_all()?.item().unwrap_err(), // (a 1-element tensor)
                    y.to_vec::<f32>().unwrap_err(),
                    Tensor::randn(&[2], DType::Float32, Device::CPU).unwrap_err(),
                    s.synchronize().unwrap_err(),
                    // SAFETY: no other thread uses x.
                    unsafe { x.copy_from_slice(&[9.0f32, 9.0, 9.0]) }.unwrap_err(),
                ];
                let z = (&y + 1.0)?; // recorded after them
                Ok((z, refused))
            })
            .unwrap();
        for e in &refused {
            assert_eq!(e.code, ErrorCode::NotSupported, "{e}");
        }
        assert!(
            refused[0].message.contains("captured"),
            "{}",
            refused[0].message
        );
        assert!(!s.is_capturing().unwrap());
        g.replay().unwrap();
        assert_eq!(z.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0]);
        write(&x, &[0.0f32, -1.0, 10.0]);
        g.replay().unwrap();
        assert_eq!(z.to_vec::<f32>().unwrap(), vec![1.0, -1.0, 21.0]);

        // Propagated with `?`, the refusal is the capture's error, and the capture ended.
        let e = s.capture(|| x.sum_all()?.item()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotSupported, "{e}");
        assert!(!s.is_capturing().unwrap());
        assert!(cpu_default());

        // A replay inside a capture on the same device is refused too (no nesting).
        let (_g2, e) = s.capture(|| Ok(g.replay().unwrap_err())).unwrap();
        assert_eq!(e.code, ErrorCode::NotSupported, "{e}");
    });
}

#[test]
fn capture_errors_end_the_capture() {
    leak_checked(|| {
        // A default stream cannot capture; the closure does not run.
        let def = Stream::default_for(Device::CPU).unwrap();
        let mut ran = false;
        let e = def
            .capture(|| {
                ran = true;
                Ok(())
            })
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(!ran, "the closure ran after a failed begin");
        assert!(!def.is_capturing().unwrap());
        assert!(cpu_default());

        // The closure's error is the capture's, and the stream captures no more.
        let s = Stream::new(Device::CPU).unwrap();
        let x = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU).unwrap();
        let e = s
            .capture(|| {
                let _y = (&x + 1.0)?;
                x.reshape(&[5])
            })
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{e}");
        assert!(
            !s.is_capturing().unwrap(),
            "the capture goes on after the error"
        );
        assert!(cpu_default(), "the thread's stream was not restored");
        // Work after it runs eagerly again.
        assert_eq!((&x + 1.0).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 6]);

        // The same stream twice, and a second stream of the same device on this thread.
        let other = Stream::new(Device::CPU).unwrap();
        let (g, (same, second)) = s
            .capture(|| {
                let same = s.capture(|| Ok(())).unwrap_err();
                let second = other.capture(|| Ok(())).unwrap_err();
                Ok((same, second))
            })
            .unwrap();
        assert_eq!(same.code, ErrorCode::InvalidArgument, "{same}");
        assert_eq!(second.code, ErrorCode::InvalidArgument, "{second}");
        assert!(!s.is_capturing().unwrap() && !other.is_capturing().unwrap());
        assert_eq!(g.num_steps().unwrap(), 0);

        // A panic inside ends the capture too.
        let r =
            std::panic::catch_unwind(|| s.capture(|| -> devtensor::Result<()> { panic!("boom") }));
        assert!(r.is_err());
        assert!(
            !s.is_capturing().unwrap(),
            "the capture goes on after a panic"
        );
        assert!(cpu_default());
    });
}

#[test]
fn other_threads_run_eagerly_during_a_capture() {
    leak_checked(|| {
        let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
        let s = Stream::new(Device::CPU).unwrap();
        let (g, (y, other)): (Graph, _) = s
            .capture(|| {
                let y = (&x * 3.0)?;
                // Another thread's current stream is its default: its work runs now.
                let other = std::thread::scope(|sc| {
                    sc.spawn(|| (&x * 5.0).and_then(|t| t.to_vec::<f32>()))
                        .join()
                        .unwrap()
                })?;
                Ok((y, other))
            })
            .unwrap();
        assert_eq!(other, vec![5.0, 10.0]);
        g.replay().unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 6.0]);
    });
}

#[test]
fn copy_from_slice_checks_its_input_and_leaves_the_tensor_unchanged() {
    leak_checked(|| {
        let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU).unwrap();
        // SAFETY (each call): no other thread uses x.
        let e = unsafe { x.copy_from_slice(&[1i64, 2, 3]) }.unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{e}");
        let e = unsafe { x.copy_from_slice(&[1.0f32, 2.0]) }.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
        // In place through a strided view: the transpose of a 2x2 gets row-major values.
        let m = Tensor::from_slice(&[0.0f32; 4], &[2, 2], Device::CPU).unwrap();
        let mt = m.transpose(0, 1).unwrap();
        unsafe { mt.copy_from_slice(&[1.0f32, 2.0, 3.0, 4.0]) }.unwrap();
        assert_eq!(m.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 2.0, 4.0]);
    });
}

/// `copy_from` (dt_copy_) gives a static input the values of another tensor, broadcast
/// and cast; it refuses a tensor that requires grad in grad mode, and works in `no_grad`.
#[test]
fn copy_from_fills_a_static_input_and_respects_grad_mode() {
    leak_checked(|| {
        let x = Tensor::zeros(&[2, 2], DType::Float32, Device::CPU).unwrap();
        let s = Stream::new(Device::CPU).unwrap();
        let (g, y) = s.capture(|| &x * 10.0).unwrap();
        let row = Tensor::from_slice(&[1.0f64, -2.0], &[2], Device::CPU).unwrap();
        // SAFETY: no other thread uses x meanwhile.
        unsafe { x.copy_from(&row) }.unwrap();
        g.replay().unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![10.0, -20.0, 10.0, -20.0]);

        let w = Tensor::zeros(&[2], DType::Float32, Device::CPU).unwrap();
        w.set_requires_grad(true).unwrap();
        let src = Tensor::from_slice(&[3.0f32, 4.0], &[2], Device::CPU).unwrap();
        let err = unsafe { w.copy_from(&src) }.unwrap_err();
        assert_eq!(err.code, ErrorCode::NotSupported);
        assert!(err.message.contains("requires grad"), "{}", err.message);
        devtensor::no_grad(|| unsafe { w.copy_from(&src) }).unwrap().unwrap();
        assert_eq!(w.to_vec::<f32>().unwrap(), vec![3.0, 4.0]);
        let bad = Tensor::zeros(&[3], DType::Float32, Device::CPU).unwrap();
        assert_eq!(unsafe { x.copy_from(&bad) }.unwrap_err().code, ErrorCode::ShapeMismatch);
    });
}

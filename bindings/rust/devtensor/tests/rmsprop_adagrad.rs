//! RMSprop and Adagrad (dt_rmsprop_new, dt_adagrad_new, through nn::RmsProp, nn::Adagrad
//! and Optimizer::rmsprop / Optimizer::adagrad): steps compared with the update rules of
//! include/devtensor.h (torch.optim.RMSprop / Adagrad) worked out here in plain f64, the
//! state dict's keys in PyTorch's order, a checkpoint resuming exactly, the errors of bad
//! settings, and the refusal of a step inside a graph capture.
//! Each test runs alone and checks that it leaves no handle behind.
use devtensor::nn::{Adagrad, Optimizer, RmsProp};
use devtensor::{DType, Device, ErrorCode, Stream, Tensor};

mod common;
use common::assert_near;
use common::leak_checked;

/// A float64 leaf that requires grad.
fn leaf(data: &[f64]) -> Tensor {
    let t = Tensor::from_slice(data, &[data.len() as i64], Device::CPU).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

/// The loss sum(c * p²), so the gradient is 2 * c * p: it changes every step.
const C: [f64; 3] = [1.5, -0.5, 2.0];

fn grad_of(p: &[f64]) -> Vec<f64> {
    p.iter().zip(C).map(|(p, c)| 2.0 * c * p).collect()
}

/// zero_grad, backward of sum(c * p²), step.
fn step(opt: &mut Optimizer, p: &Tensor) {
    opt.zero_grad().unwrap();
    let c = Tensor::from_slice(&C, &[3], Device::CPU).unwrap();
    let loss = (&(p * p).unwrap() * &c).unwrap().sum_all().unwrap();
    loss.backward().unwrap();
    opt.step().unwrap();
}

const P0: [f64; 3] = [1.0, -2.0, 0.5];
// The settings every checkpoint starts with (PyTorch's param_groups), in order.
const RMSPROP_SETTINGS: [&str; 7] = ["lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"];
const ADAGRAD_SETTINGS: [&str; 6] = ["lr", "lr_decay", "weight_decay", "eps", "initial_accumulator_value", "maximize"];

/// RMSprop as the header (and torch.optim.RMSprop) states it, for one element.
#[derive(Clone, Copy, Default)]
struct RmsElem {
    p: f64,
    square_avg: f64,
    grad_avg: f64,
    buf: f64,
}

#[derive(Clone, Copy)]
struct RmsSettings {
    lr: f64,
    alpha: f64,
    eps: f64,
    weight_decay: f64,
    momentum: f64,
    centered: bool,
}

fn rms_step(e: &mut RmsElem, grad: f64, s: RmsSettings) {
    let g = grad + s.weight_decay * e.p;
    e.square_avg = s.alpha * e.square_avg + (1.0 - s.alpha) * g * g;
    let var = if s.centered {
        e.grad_avg = s.alpha * e.grad_avg + (1.0 - s.alpha) * g;
        e.square_avg - e.grad_avg * e.grad_avg
    } else {
        e.square_avg
    };
    let avg = var.sqrt() + s.eps;
    if s.momentum > 0.0 {
        e.buf = s.momentum * e.buf + g / avg;
        e.p -= s.lr * e.buf;
    } else {
        e.p -= s.lr * g / avg;
    }
}

/// `steps` steps of the reference on P0 with the gradient of sum(c * p²).
fn rms_reference(s: RmsSettings, steps: usize) -> Vec<RmsElem> {
    let mut e: Vec<RmsElem> = P0.iter().map(|&p| RmsElem { p, ..Default::default() }).collect();
    for _ in 0..steps {
        let ps: Vec<f64> = e.iter().map(|e| e.p).collect();
        for (e, g) in e.iter_mut().zip(grad_of(&ps)) {
            rms_step(e, g, s);
        }
    }
    e
}

fn rms_build(p: &Tensor, s: RmsSettings) -> Optimizer {
    RmsProp::new(std::slice::from_ref(p), s.lr)
        .alpha(s.alpha)
        .eps(s.eps)
        .weight_decay(s.weight_decay)
        .momentum(s.momentum)
        .centered(s.centered)
        .build()
        .unwrap()
}

#[test]
fn rmsprop_steps_follow_the_formulas() {
    leak_checked(|| {
        // First step with the defaults but lr 0.1: square_avg = (1 - 0.99) g² = 0.01 g², so
        // p -= 0.1 * g / (0.1 |g| + 1e-8), about 1 * sign(g) (g = 2 c p = [3, 2, 2]).
        let p = leaf(&P0);
        let mut opt = RmsProp::new(std::slice::from_ref(&p), 0.1).build().unwrap();
        step(&mut opt, &p);
        let g = [3.0f64, 2.0, 2.0];
        let want: Vec<f64> = (0..3)
            .map(|i| P0[i] - 0.1 * g[i] / ((0.01 * g[i] * g[i]).sqrt() + 1e-8))
            .collect();
        assert_near("RMSprop first step", &values(&p), &want, 1e-12);
        assert_near("RMSprop first step, rounded", &values(&p), &[0.0, -3.0, -0.5], 1e-6);
        let sd = opt.state_dict().unwrap();
        assert_near(
            "square_avg after one step",
            &values(&sd.get("state.0.square_avg").unwrap().unwrap()),
            &[0.09, 0.04, 0.04],
            1e-12,
        );

        // Plain, momentum, centered, both, with weight decay: four steps each against the
        // reference, the same rule positionally through Optimizer::rmsprop.
        let base = RmsSettings {
            lr: 0.01,
            alpha: 0.9,
            eps: 1e-8,
            weight_decay: 0.0,
            momentum: 0.0,
            centered: false,
        };
        let cases = [
            base,
            RmsSettings { momentum: 0.9, ..base },
            RmsSettings { centered: true, ..base },
            RmsSettings { momentum: 0.5, centered: true, weight_decay: 0.1, ..base },
        ];
        for (k, s) in cases.into_iter().enumerate() {
            let p = leaf(&P0);
            let mut opt = rms_build(&p, s);
            let q = leaf(&P0);
            let mut positional = Optimizer::rmsprop(
                std::slice::from_ref(&q),
                s.lr,
                s.alpha,
                s.eps,
                s.weight_decay,
                s.momentum,
                s.centered,
            )
            .unwrap();
            for n in 1..=4 {
                step(&mut opt, &p);
                step(&mut positional, &q);
                let want: Vec<f64> = rms_reference(s, n).iter().map(|e| e.p).collect();
                assert_near(&format!("RMSprop case {k}, step {n}"), &values(&p), &want, 1e-10);
                assert_eq!(values(&q), values(&p), "case {k}, step {n}: positional");
            }
        }

        // Centered with momentum, worked by hand a step further: g = [3, 2, 2] at P0.
        // Step 1: square_avg = 0.1 g², grad_avg = 0.1 g, variance = 0.1 g² - 0.01 g²
        // = 0.09 g², avg = 0.3 |g| (+ eps), buf = g / avg = sign(g) / 0.3, p -= 0.01 * buf.
        let s = RmsSettings { momentum: 0.5, centered: true, ..base };
        let p = leaf(&P0);
        let mut opt = rms_build(&p, s);
        step(&mut opt, &p);
        let p1: Vec<f64> = (0..3).map(|i| P0[i] - 0.01 * g[i] / (0.3 * g[i] + 1e-8)).collect();
        assert_near("centered step 1", &values(&p), &p1, 1e-12);
        assert_near("centered step 1, rounded", &values(&p), &[0.96667, -2.03333, 0.46667], 1e-5);
        // Step 2: g2 = 2 c p1; the averages go on from step 1's.
        step(&mut opt, &p);
        let want: Vec<f64> = (0..3)
            .map(|i| {
                let (g1, g2) = (g[i], 2.0 * C[i] * p1[i]);
                let sq = 0.9 * 0.1 * g1 * g1 + 0.1 * g2 * g2;
                let ga = 0.9 * 0.1 * g1 + 0.1 * g2;
                let avg = (sq - ga * ga).sqrt() + 1e-8;
                let buf = 0.5 * (g1 / ((0.09 * g1 * g1).sqrt() + 1e-8)) + g2 / avg;
                p1[i] - 0.01 * buf
            })
            .collect();
        assert_near("centered step 2", &values(&p), &want, 1e-9);
    });
}

/// Adagrad as the header (and torch.optim.Adagrad) states it, on P0.
fn adagrad_reference(
    lr: f64,
    lr_decay: f64,
    wd: f64,
    init: f64,
    eps: f64,
    steps: usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut p = P0.to_vec();
    let mut sum = vec![init; 3];
    for t in 1..=steps {
        let grad = grad_of(&p);
        let clr = lr / (1.0 + (t as f64 - 1.0) * lr_decay);
        for i in 0..3 {
            let g = grad[i] + wd * p[i];
            sum[i] += g * g;
            p[i] -= clr * g / (sum[i].sqrt() + eps);
        }
    }
    (p, sum)
}

#[test]
fn adagrad_steps_follow_the_formulas() {
    leak_checked(|| {
        // First step from a zero sum: sum = g², p -= lr * g / (|g| + eps), lr * sign(g).
        let p = leaf(&P0);
        let mut opt = Adagrad::new(std::slice::from_ref(&p), 0.1).build().unwrap();
        step(&mut opt, &p);
        let g = [3.0f64, 2.0, 2.0];
        let want: Vec<f64> = (0..3).map(|i| P0[i] - 0.1 * g[i] / (g[i].abs() + 1e-10)).collect();
        assert_near("Adagrad first step", &values(&p), &want, 1e-12);
        assert_near("Adagrad first step, rounded", &values(&p), &[0.9, -2.1, 0.4], 1e-9);
        // Second step: g2 = 2 c p1 = [2.7, 2.1, 1.6], sum = g1² + g2², the same lr.
        step(&mut opt, &p);
        let p1 = [0.9, -2.1, 0.4];
        let g2 = [2.7, 2.1, 1.6];
        let want: Vec<f64> = (0..3)
            .map(|i| p1[i] - 0.1 * g2[i] / ((g[i] * g[i] + g2[i] * g2[i]).sqrt() + 1e-10))
            .collect();
        assert_near("Adagrad second step", &values(&p), &want, 1e-9);

        // Every setting at once, four steps, through the builder and positionally.
        let (lr, lr_decay, wd, init, eps) = (0.05, 0.5, 0.1, 0.2, 1e-6);
        let p = leaf(&P0);
        let mut opt = Adagrad::new(std::slice::from_ref(&p), lr)
            .lr_decay(lr_decay)
            .weight_decay(wd)
            .initial_accumulator_value(init)
            .eps(eps)
            .build()
            .unwrap();
        let q = leaf(&P0);
        let mut positional =
            Optimizer::adagrad(std::slice::from_ref(&q), lr, lr_decay, wd, init, eps).unwrap();
        for n in 1..=4 {
            step(&mut opt, &p);
            step(&mut positional, &q);
            let (want, sum) = adagrad_reference(lr, lr_decay, wd, init, eps, n);
            assert_near(&format!("Adagrad step {n}"), &values(&p), &want, 1e-10);
            assert_eq!(values(&q), values(&p), "step {n}: positional");
            let sd = opt.state_dict().unwrap();
            let got = values(&sd.get("state.0.sum").unwrap().unwrap());
            assert_near(&format!("sum after step {n}"), &got, &sum, 1e-10);
            assert_eq!(sd.get("state.0.step").unwrap().unwrap().item().unwrap(), n as f64);
        }
    });
}

#[test]
fn state_dict_keys_in_pytorchs_order() {
    leak_checked(|| {
        let (a, b) = (leaf(&P0), leaf(&[0.25, -0.75]));
        let params = [a.clone(), b.clone()];
        // Both parameters get a gradient from sum(c * a²) + sum(b).
        let grads = || {
            let c = Tensor::from_slice(&C, &[3], Device::CPU).unwrap();
            let l = (&(&a * &a).unwrap() * &c).unwrap().sum_all().unwrap();
            (&l + &b.sum_all().unwrap()).unwrap().backward().unwrap();
        };

        // RMSprop: nothing before the first step; then step and square_avg, and
        // momentum_buffer / grad_avg only as the settings keep them.
        let mut plain = RmsProp::new(&params, 0.01).build().unwrap();
        assert_eq!(plain.state_dict().unwrap().names().unwrap(), RMSPROP_SETTINGS);
        grads();
        plain.step().unwrap();
        assert_eq!(
            plain.state_dict().unwrap().names().unwrap(),
            [&RMSPROP_SETTINGS[..], &["state.0.step", "state.0.square_avg", "state.1.step", "state.1.square_avg"]].concat()
        );
        let mut full = RmsProp::new(&params, 0.01).momentum(0.9).centered(true).build().unwrap();
        full.step().unwrap();
        let sd = full.state_dict().unwrap();
        assert_eq!(
            sd.names().unwrap(),
            [
                &RMSPROP_SETTINGS[..],
                &[
                    "state.0.step",
                    "state.0.square_avg",
                    "state.0.momentum_buffer",
                    "state.0.grad_avg",
                    "state.1.step",
                    "state.1.square_avg",
                    "state.1.momentum_buffer",
                    "state.1.grad_avg"
                ]
            ]
            .concat()
        );
        let step = sd.get("state.1.step").unwrap().unwrap();
        assert_eq!((step.shape(), step.item().unwrap()), (vec![], 1.0));
        assert_eq!(sd.get("state.1.grad_avg").unwrap().unwrap().shape(), vec![2]);
        let mut centered_only = RmsProp::new(&params, 0.01).centered(true).build().unwrap();
        centered_only.step().unwrap();
        assert_eq!(
            &centered_only.state_dict().unwrap().names().unwrap()[RMSPROP_SETTINGS.len()..][..3],
            ["state.0.step", "state.0.square_avg", "state.0.grad_avg"]
        );

        // Adagrad: the sums exist from construction, with step 0 and the initial value.
        let mut ada = Adagrad::new(&params, 0.01).initial_accumulator_value(0.5).build().unwrap();
        let names = [&ADAGRAD_SETTINGS[..], &["state.0.step", "state.0.sum", "state.1.step", "state.1.sum"]].concat();
        let sd = ada.state_dict().unwrap();
        assert_eq!(sd.names().unwrap(), names);
        assert_eq!(sd.get("state.0.step").unwrap().unwrap().item().unwrap(), 0.0);
        let sum1 = sd.get("state.1.sum").unwrap().unwrap();
        assert_eq!((sum1.dtype(), values(&sum1)), (DType::Float64, vec![0.5, 0.5]));
        // After a step: step 1 and sum = 0.5 + g² (b's gradient is 1).
        ada.step().unwrap();
        let after = ada.state_dict().unwrap();
        assert_eq!(after.names().unwrap(), names);
        assert_eq!(after.get("state.1.step").unwrap().unwrap().item().unwrap(), 1.0);
        assert_eq!(values(&after.get("state.1.sum").unwrap().unwrap()), vec![1.5, 1.5]);
        // The earlier dict holds copies: the step did not change it.
        assert_eq!(values(&sd.get("state.1.sum").unwrap().unwrap()), vec![0.5, 0.5]);
    });
}

#[test]
fn checkpoints_resume_exactly() {
    leak_checked(|| {
        let run = |make: &dyn Fn(&Tensor) -> Optimizer| {
            let p = leaf(&P0);
            let mut opt = make(&p);
            step(&mut opt, &p);
            step(&mut opt, &p);
            let sd = opt.state_dict().unwrap();
            // A fresh optimizer (another rate, to see it restored) on a copy of p.
            let q = leaf(&values(&p));
            let mut resumed = make(&q);
            resumed.set_lr(0.9).unwrap();
            resumed.load_state_dict(&sd).unwrap();
            assert_eq!(resumed.lr().unwrap(), opt.lr().unwrap());
            step(&mut opt, &p);
            step(&mut resumed, &q);
            assert_eq!(values(&q), values(&p));
        };
        run(&|p| {
            RmsProp::new(std::slice::from_ref(p), 0.01)
                .momentum(0.9)
                .centered(true)
                .build()
                .unwrap()
        });
        run(&|p| Adagrad::new(std::slice::from_ref(p), 0.1).lr_decay(0.1).build().unwrap());
        // Another optimizer's state is refused, naming the first key it does not know.
        let p = leaf(&P0);
        let mut rms = RmsProp::new(std::slice::from_ref(&p), 0.01).build().unwrap();
        let ada = Adagrad::new(std::slice::from_ref(&p), 0.01).build().unwrap();
        let e = rms.load_state_dict(&ada.state_dict().unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("unexpected key \"lr_decay\""), "{e}");
    });
}

#[test]
fn bad_settings_are_invalid_arguments_naming_the_setting() {
    leak_checked(|| {
        let p = leaf(&P0);
        let ps = std::slice::from_ref(&p);
        let expect = |r: devtensor::Result<Optimizer>, who: &str, what: &str| {
            let e = r.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{who} {what}: {e}");
            assert!(e.message.contains(who), "{who} {what}: {e}");
            assert!(e.message.contains(what), "{who} {what}: {e}");
        };
        expect(RmsProp::new(ps, -0.1).build(), "RMSprop", "learning rate");
        expect(RmsProp::new(ps, 0.01).alpha(-0.5).build(), "RMSprop", "alpha");
        expect(RmsProp::new(ps, 0.01).eps(f64::NAN).build(), "RMSprop", "eps");
        expect(RmsProp::new(ps, 0.01).momentum(-0.9).build(), "RMSprop", "momentum");
        expect(RmsProp::new(ps, 0.01).weight_decay(-1.0).build(), "RMSprop", "weight_decay");
        let nan_lr = Optimizer::rmsprop(ps, f64::NAN, 0.99, 1e-8, 0.0, 0.0, false);
        expect(nan_lr, "RMSprop", "learning rate");
        expect(Adagrad::new(ps, -0.1).build(), "Adagrad", "learning rate");
        expect(Adagrad::new(ps, 0.01).eps(f64::NAN).build(), "Adagrad", "eps");
        expect(Adagrad::new(ps, 0.01).lr_decay(-1.0).build(), "Adagrad", "lr_decay");
        expect(Adagrad::new(ps, 0.01).weight_decay(-1.0).build(), "Adagrad", "weight_decay");
        expect(
            Adagrad::new(ps, 0.01).initial_accumulator_value(-1.0).build(),
            "Adagrad",
            "initial_accumulator_value",
        );
        // Zero everywhere is allowed, as PyTorch's.
        RmsProp::new(ps, 0.0).alpha(0.0).eps(0.0).build().unwrap();
        Adagrad::new(ps, 0.0).eps(0.0).build().unwrap();
        // No parameters, a parameter listed twice, an integer parameter.
        let e = RmsProp::new(&[], 0.01).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = Adagrad::new(&[p.clone(), p.clone()], 0.01).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();
        let e = Adagrad::new(&[ints], 0.01).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{e}");
    });
}

#[test]
fn steps_cannot_be_captured() {
    leak_checked(|| {
        let p = leaf(&P0);
        let mut rms = RmsProp::new(std::slice::from_ref(&p), 0.01).build().unwrap();
        let mut ada = Adagrad::new(std::slice::from_ref(&p), 0.01).build().unwrap();
        let c = Tensor::from_slice(&C, &[3], Device::CPU).unwrap();
        (&(&p * &p).unwrap() * &c).unwrap().sum_all().unwrap().backward().unwrap();
        let s = Stream::new(Device::CPU).unwrap();
        let (_g, refused) = s
            .capture(|| Ok([rms.step().unwrap_err(), ada.step().unwrap_err()]))
            .unwrap();
        for e in &refused {
            assert_eq!(e.code, ErrorCode::NotSupported, "{e}");
        }
        assert_eq!(values(&p), P0.to_vec(), "a refused step changed the parameter");
        // Outside the capture both step as usual.
        rms.step().unwrap();
        ada.step().unwrap();
        assert_ne!(values(&p), P0.to_vec());
    });
}

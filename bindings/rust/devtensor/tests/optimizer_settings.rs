//! The optimizers' settings by PyTorch's param_groups names (dt_optimizer_option,
//! dt_optimizer_set_option): what they read back after construction (PyTorch's defaults
//! included), what set_option refuses (leaving everything as it was), and two settings'
//! effect on a step, worked out by hand: maximize (SGD) and amsgrad switched on between
//! steps (Adam). Each test runs alone and checks that it leaves no handle behind.
use devtensor::nn::{Adagrad, Adam, AdamW, Optimizer, RmsProp, Sgd};
use devtensor::{Device, ErrorCode, Tensor};

mod common;
use common::assert_near;
use common::leak_checked;

/// A 1-d float32 leaf that requires grad.
fn leaf32(data: &[f32]) -> Tensor {
    let t = Tensor::from_slice(data, &[data.len() as i64], Device::CPU).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

/// Makes p's gradient `c` by backward of sum(p * c).
fn set_grad(p: &Tensor, c: &[f32]) {
    let c = Tensor::from_slice(c, &[c.len() as i64], Device::CPU).unwrap();
    (p * &c).unwrap().sum_all().unwrap().backward().unwrap();
}

fn values(p: &Tensor) -> Vec<f64> {
    p.to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|&v| f64::from(v))
        .collect()
}

/// Asserts that opt's settings are `want`: exactly the values given (up to a relative
/// 1e-15; they are kept as doubles).
fn assert_options(what: &str, opt: &Optimizer, want: &[(&str, f64)]) {
    for &(name, w) in want {
        let got = opt
            .option(name)
            .unwrap_or_else(|e| panic!("{what}: option({name:?}): {e}"));
        assert!(
            (got - w).abs() <= 1e-15 * w.abs(),
            "{what}: option({name:?}) = {got}, want {w}"
        );
    }
}

#[test]
fn options_read_back_the_constructor_values_and_defaults() {
    leak_checked(|| {
        let p = leaf32(&[1.0, 2.0]);
        let ps = std::slice::from_ref(&p);

        let sgd = Sgd::new(ps, 0.1)
            .momentum(0.9)
            .dampening(0.25)
            .weight_decay(0.01)
            .build()
            .unwrap();
        assert_options(
            "SGD",
            &sgd,
            &[
                ("lr", 0.1),
                ("momentum", 0.9),
                ("dampening", 0.25),
                ("weight_decay", 0.01),
                ("nesterov", 0.0),
                ("maximize", 0.0),
            ],
        );
        let nesterov = Sgd::new(ps, 0.05)
            .momentum(0.8)
            .nesterov(true)
            .build()
            .unwrap();
        assert_options(
            "SGD with Nesterov",
            &nesterov,
            &[
                ("lr", 0.05),
                ("momentum", 0.8),
                ("dampening", 0.0),
                ("nesterov", 1.0),
                ("maximize", 0.0),
            ],
        );

        let adam = Adam::new(ps, 1e-3).build().unwrap();
        assert_options(
            "Adam",
            &adam,
            &[
                ("lr", 1e-3),
                ("beta1", 0.9),
                ("beta2", 0.999),
                ("eps", 1e-8),
                ("weight_decay", 0.0),
                ("amsgrad", 0.0),
                ("maximize", 0.0),
            ],
        );
        let adamw = AdamW::new(ps, 2e-3)
            .betas(0.8, 0.99)
            .eps(1e-6)
            .build()
            .unwrap();
        assert_options(
            "AdamW",
            &adamw,
            &[
                ("lr", 2e-3),
                ("beta1", 0.8),
                ("beta2", 0.99),
                ("eps", 1e-6),
                ("weight_decay", 0.01),
                ("amsgrad", 0.0),
                ("maximize", 0.0),
            ],
        );

        let rms = RmsProp::new(ps, 0.01)
            .alpha(0.9)
            .momentum(0.5)
            .centered(true)
            .build()
            .unwrap();
        assert_options(
            "RMSprop",
            &rms,
            &[
                ("lr", 0.01),
                ("alpha", 0.9),
                ("eps", 1e-8),
                ("weight_decay", 0.0),
                ("momentum", 0.5),
                ("centered", 1.0),
                ("maximize", 0.0),
            ],
        );

        let adagrad = Adagrad::new(ps, 0.01)
            .lr_decay(0.1)
            .initial_accumulator_value(0.5)
            .build()
            .unwrap();
        assert_options(
            "Adagrad",
            &adagrad,
            &[
                ("lr", 0.01),
                ("lr_decay", 0.1),
                ("weight_decay", 0.0),
                ("eps", 1e-10),
                ("initial_accumulator_value", 0.5),
                ("maximize", 0.0),
            ],
        );

        // set_option changes what option (and lr, for "lr") reads, through every handle;
        // set_lr what option("lr") reads.
        let mut adam = adam;
        adam.set_option("beta1", 0.85).unwrap();
        adam.set_option("lr", 0.02).unwrap();
        assert_options(
            "Adam after set_option",
            &adam,
            &[("beta1", 0.85), ("lr", 0.02), ("beta2", 0.999)],
        );
        assert_eq!(adam.lr().unwrap(), 0.02);
        assert_eq!(adam.share().option("beta1").unwrap(), 0.85);
        adam.set_lr(0.03).unwrap();
        assert_options("Adam after set_lr", &adam, &[("lr", 0.03)]);
    });
}

#[test]
fn refused_settings_change_nothing() {
    leak_checked(|| {
        let p = leaf32(&[1.0, 2.0]);
        let ps = std::slice::from_ref(&p);
        let mut adam = Adam::new(ps, 1e-3).build().unwrap();

        // A name Adam does not have ("betas" is torch's tuple: beta1 and beta2 here): the
        // message names it and lists Adam's settings.
        let settings = "lr, beta1, beta2, eps, weight_decay, amsgrad, maximize";
        let e = adam.option("betas").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(
            e.message.contains("betas") && e.message.contains(settings),
            "{e}"
        );
        let e = adam.set_option("momentum", 0.9).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(
            e.message.contains("momentum") && e.message.contains(settings),
            "{e}"
        );
        assert_eq!(
            adam.option("").unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        // An interior NUL would cut the name short in C ("lr"): an error, not a panic.
        let e = adam.option("lr\0junk").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = adam.set_option("lr\0junk", 1.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");

        // Values the constructor refuses, each leaving the setting as it was.
        for (name, v) in [
            ("beta1", 1.5),
            ("eps", -1.0),
            ("lr", f64::NAN),
            ("amsgrad", 0.5),
        ] {
            let e = adam.set_option(name, v).unwrap_err();
            assert_eq!(
                e.code,
                ErrorCode::InvalidArgument,
                "set_option({name:?}, {v}): {e}"
            );
        }
        assert_options(
            "Adam after refusals",
            &adam,
            &[
                ("beta1", 0.9),
                ("eps", 1e-8),
                ("lr", 1e-3),
                ("amsgrad", 0.0),
            ],
        );

        // Nesterov without momentum is refused (as the constructor refuses it), and the
        // setting stays 0.
        let mut sgd = Sgd::new(ps, 0.1).build().unwrap();
        let e = sgd.set_option("nesterov", 1.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(
            e.message
                .contains("Nesterov momentum requires a momentum and zero dampening"),
            "{e}"
        );
        assert_options(
            "SGD after refused nesterov",
            &sgd,
            &[("nesterov", 0.0), ("momentum", 0.0)],
        );
        // With a momentum it is taken; then momentum 0 or a dampening is refused.
        sgd.set_option("momentum", 0.9).unwrap();
        sgd.set_option("nesterov", 1.0).unwrap();
        assert_eq!(
            sgd.set_option("momentum", 0.0).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            sgd.set_option("dampening", 0.1).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        assert_options(
            "SGD with nesterov after refusals",
            &sgd,
            &[("nesterov", 1.0), ("momentum", 0.9), ("dampening", 0.0)],
        );

        // A flag of 2.
        let e = sgd.set_option("nesterov", 2.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(
            e.message.contains(r#""nesterov" is a flag: 0 or 1, got 2"#),
            "{e}"
        );
        assert_eq!(
            sgd.set_option("maximize", 2.0).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        assert_options(
            "SGD after refused flags",
            &sgd,
            &[("nesterov", 1.0), ("maximize", 0.0)],
        );
    });
}

#[test]
fn maximize_steps_up_the_gradient() {
    leak_checked(|| {
        // SGD (no momentum) with lr 0.1 on p = [1, 2] with gradient g = [0.5, -1]:
        // maximize goes to p + lr g = [1.05, 1.9].
        let p = leaf32(&[1.0, 2.0]);
        let mut opt = Sgd::new(std::slice::from_ref(&p), 0.1).build().unwrap();
        opt.set_option("maximize", 1.0).unwrap();
        assert_eq!(opt.option("maximize").unwrap(), 1.0);
        set_grad(&p, &[0.5, -1.0]);
        opt.step().unwrap();
        assert_near(
            "SGD step with maximize",
            &values(&p),
            &[1.0 + 0.1 * 0.5, 2.0 + 0.1 * -1.0],
            1e-6,
        );
        // maximize back to 0: the same gradient takes p back down, to [1, 2].
        opt.set_option("maximize", 0.0).unwrap();
        opt.zero_grad().unwrap();
        set_grad(&p, &[0.5, -1.0]);
        opt.step().unwrap();
        assert_near(
            "SGD step after maximize back to 0",
            &values(&p),
            &[1.0, 2.0],
            1e-6,
        );
    });
}

#[test]
fn amsgrad_switched_on_between_steps() {
    leak_checked(|| {
        // Adam (lr 0.1, betas 0.9 and 0.999, eps 1e-8) on a float32 parameter: step 1
        // with g = 1 as plain Adam, then amsgrad on (max_exp_avg_sq from zeros) and steps
        // 2 to 5 with g = 0. Expected, from m = b1 m + (1 - b1) g,
        // v = b2 v + (1 - b2) g², vmax = max(vmax, v) (with amsgrad),
        // p -= lr / (1 - b1^t) * m / (sqrt(vmax, or v) / sqrt(1 - b2^t) + eps).
        // Step 2 alone cannot tell amsgrad from Adam (max(0, v) = v); the later steps can,
        // v falling below the maximum kept (by 1.2e-4 in p after step 5).
        let (lr, b1, b2, eps) = (0.1f64, 0.9f64, 0.999f64, 1e-8f64);
        let p = leaf32(&[1.0]);
        let mut opt = Adam::new(std::slice::from_ref(&p), lr)
            .betas(b1, b2)
            .eps(eps)
            .build()
            .unwrap();
        let (mut want, mut plain) = (1.0f64, 1.0f64);
        let (mut m, mut v, mut vmax) = (0.0f64, 0.0f64, 0.0f64);
        let mut step = |opt: &mut Optimizer, t: i32, g: f32, amsgrad: bool| {
            opt.zero_grad().unwrap();
            set_grad(&p, &[g]);
            opt.step().unwrap();
            let g = f64::from(g);
            m = b1 * m + (1.0 - b1) * g;
            v = b2 * v + (1.0 - b2) * g * g;
            let (c1, c2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
            plain -= lr / c1 * m / (v.sqrt() / c2.sqrt() + eps);
            let d = if amsgrad {
                vmax = vmax.max(v);
                vmax
            } else {
                v
            };
            want -= lr / c1 * m / (d.sqrt() / c2.sqrt() + eps);
            assert_near(
                &format!("step {t} (amsgrad {amsgrad})"),
                &values(&p),
                &[want],
                1e-6,
            );
            (want, plain)
        };
        step(&mut opt, 1, 1.0, false);
        opt.set_option("amsgrad", 1.0).unwrap();
        assert_eq!(opt.option("amsgrad").unwrap(), 1.0);
        let (mut want, mut plain) = (0.0, 0.0);
        for t in 2..=5 {
            (want, plain) = step(&mut opt, t, 0.0, true);
        }
        assert!(
            (want - plain).abs() > 1e-4,
            "amsgrad {want} and plain Adam {plain} agree after step 5: the test shows nothing"
        );
        // The maximum is state now: a checkpoint holds it.
        let names = opt.state_dict().unwrap().names().unwrap();
        assert!(
            names.iter().any(|n| n == "state.0.max_exp_avg_sq"),
            "{names:?}"
        );
    });
}

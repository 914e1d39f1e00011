//! The pointwise losses (dt_l1_loss_new, dt_smooth_l1_loss_new, dt_huber_loss_new,
//! dt_bce_loss_new, dt_bce_with_logits_loss_new, dt_kl_div_loss_new), the optimizer's
//! learning rate and checkpoint state (dt_optimizer_lr, _set_lr, _state_dict,
//! _load_state_dict) and gradient clipping (dt_clip_grad_norm_, dt_clip_grad_value_):
//! values and gradients computed by hand (the arithmetic in the comments), and the errors.
//! Each test runs alone and checks that it leaves no handle behind.
use devtensor::nn::{
    clip_grad_norm_, clip_grad_value_, Adam, BceLoss, BceWithLogitsLoss, HuberLoss, KlDivLoss,
    L1Loss, Module, Optimizer, Reduction, Sgd, SmoothL1Loss,
};
use devtensor::{DType, Device, ErrorCode, StateDict, Tensor};
use std::f64::consts::LN_2;

mod common;
use common::assert_near;
use common::leak_checked;

fn f64s(data: &[f64], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

fn f32s(data: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

/// A float64 leaf that requires grad.
fn leaf(data: &[f64], shape: &[i64]) -> Tensor {
    let t = f64s(data, shape);
    t.set_requires_grad(true).unwrap();
    t
}

fn grad_of(t: &Tensor) -> Vec<f64> {
    t.grad()
        .unwrap()
        .expect("no gradient")
        .to_dtype(DType::Float64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

/// The loss `m` of (input, target), its value, and the input's gradient after backward.
fn value_and_grad(m: &Module, input: &Tensor, target: &Tensor) -> (f64, Vec<f64>) {
    input.clear_grad().unwrap();
    let l = m.loss(input, target).unwrap();
    assert_eq!(l.shape(), Vec::<i64>::new(), "a reduced loss is 0-d");
    l.backward().unwrap();
    (l.item().unwrap(), grad_of(input))
}

const TOL: f64 = 1e-12;

// The settings every optimizer checkpoint starts with (PyTorch's param_groups), in order.
const ADAM_SETTINGS: [&str; 7] = ["lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize"];
const SGD_SETTINGS: [&str; 6] = ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"];

#[test]
fn l1_loss_value_and_gradient() {
    leak_checked(|| {
        let x = leaf(&[1.0, -2.0, 3.0], &[3]);
        let t = f64s(&[0.0, 0.0, 0.0], &[3]);
        // mean |x - t| = (1 + 2 + 3) / 3 = 2; d/dx = sign(x - t) / 3.
        let l1 = L1Loss::new().build().unwrap();
        assert_eq!(l1.kind().unwrap(), "L1Loss");
        let (v, g) = value_and_grad(&l1, &x, &t);
        assert_eq!(v, 2.0);
        assert_near("L1 mean grad", &g, &[1.0 / 3.0, -1.0 / 3.0, 1.0 / 3.0], TOL);
        // sum: 6, gradient sign(x - t).
        let sum = L1Loss::new().reduction(Reduction::Sum).build().unwrap();
        let (v, g) = value_and_grad(&sum, &x, &t);
        assert_eq!(v, 6.0);
        assert_eq!(g, vec![1.0, -1.0, 1.0]);
        // none: the elements.
        let none = L1Loss::new().reduction(Reduction::None).build().unwrap();
        assert_eq!(values(&none.loss(&x, &t).unwrap()), vec![1.0, 2.0, 3.0]);
        // The target may require grad too: d/dt = -sign(x - t) / 3.
        let tg = leaf(&[0.0, 0.0, 0.0], &[3]);
        l1.loss(&x, &tg).unwrap().backward().unwrap();
        assert_near("L1 target grad", &grad_of(&tg), &[-1.0 / 3.0, 1.0 / 3.0, -1.0 / 3.0], TOL);
        // An integer target is converted to the input's dtype: |1 - 1| + |-2 - 0| + |3 - 5| = 4.
        let ti = Tensor::from_slice(&[1i64, 0, 5], &[3], Device::CPU).unwrap();
        assert_eq!(sum.loss(&x, &ti).unwrap().item().unwrap(), 4.0);
        // The positional constructor builds the same.
        let pos = Module::l1_loss(Reduction::Mean).unwrap();
        assert_eq!(pos.loss(&x, &t).unwrap().item().unwrap(), 2.0);
    });
}

#[test]
fn smooth_l1_and_huber_values_and_gradients() {
    leak_checked(|| {
        let x = leaf(&[0.5, 3.0, -2.5], &[3]);
        let t = f64s(&[0.0, 0.0, 0.0], &[3]);
        // SmoothL1, beta 1, d = [0.5, 3, -2.5]:
        //   |0.5| < 1: 0.5 * 0.25 / 1 = 0.125;  |3| >= 1: 3 - 0.5 = 2.5;  2.5 - 0.5 = 2
        //   mean = 4.625 / 3; d/dx = [d / beta, sign, sign] / 3 = [0.5, 1, -1] / 3.
        let s = SmoothL1Loss::new().build().unwrap();
        assert_eq!(s.kind().unwrap(), "SmoothL1Loss");
        let (v, g) = value_and_grad(&s, &x, &t);
        assert_near("SmoothL1 value", &[v], &[4.625 / 3.0], TOL);
        assert_near("SmoothL1 grad", &g, &[0.5 / 3.0, 1.0 / 3.0, -1.0 / 3.0], TOL);
        // beta 4, sum: all quadratic, 0.5 d² / 4 = [0.03125, 1.125, 0.78125], sum 1.9375;
        // d/dx = d / 4 = [0.125, 0.75, -0.625].
        let s4 = SmoothL1Loss::new().beta(4.0).reduction(Reduction::Sum).build().unwrap();
        let (v, g) = value_and_grad(&s4, &x, &t);
        assert_near("SmoothL1 beta 4", &[v], &[1.9375], TOL);
        assert_near("SmoothL1 beta 4 grad", &g, &[0.125, 0.75, -0.625], TOL);
        // beta 0 is the L1 loss: (0.5 + 3 + 2.5) / 3 = 2.
        let s0 = SmoothL1Loss::new().beta(0.0).build().unwrap();
        assert_near("SmoothL1 beta 0", &[s0.loss(&x, &t).unwrap().item().unwrap()], &[2.0], TOL);

        // Huber, delta 2, sum, d = [0.5, 3, -2.5]:
        //   |0.5| < 2: 0.5 * 0.25 = 0.125;  |3| >= 2: 2 * (3 - 1) = 4;  2 * (2.5 - 1) = 3
        //   sum = 7.125; d/dx = [d, delta sign, delta sign] = [0.5, 2, -2].
        let h = HuberLoss::new().delta(2.0).reduction(Reduction::Sum).build().unwrap();
        assert_eq!(h.kind().unwrap(), "HuberLoss");
        let (v, g) = value_and_grad(&h, &x, &t);
        assert_near("Huber delta 2", &[v], &[7.125], TOL);
        assert_near("Huber delta 2 grad", &g, &[0.5, 2.0, -2.0], TOL);
        // delta 1 (the default) equals SmoothL1 with beta 1 (Huber = delta * SmoothL1(beta = delta)).
        let h1 = HuberLoss::new().build().unwrap();
        assert_near("Huber delta 1", &[h1.loss(&x, &t).unwrap().item().unwrap()], &[4.625 / 3.0], TOL);
        // none keeps the shape.
        let hn = HuberLoss::new().delta(2.0).reduction(Reduction::None).build().unwrap();
        assert_near("Huber none", &values(&hn.loss(&x, &t).unwrap()), &[0.125, 4.0, 3.0], TOL);
    });
}

#[test]
fn bce_loss_value_gradient_and_weight() {
    leak_checked(|| {
        let x = leaf(&[0.5, 0.25, 0.8], &[3]);
        let t = f64s(&[1.0, 0.0, 1.0], &[3]);
        // Elements -(t ln x + (1 - t) ln(1 - x)):
        //   -ln 0.5 = 0.693147180559945, -ln 0.75 = 0.287682072451781, -ln 0.8 = 0.223143551314210
        //   mean = 1.203972804325936 / 3 = 0.401324268108645
        // d/dx = (x - t) / (x (1 - x)) / 3:
        //   -0.5 / 0.25 = -2, 0.25 / 0.1875 = 4/3, -0.2 / 0.16 = -1.25, each / 3.
        let bce = BceLoss::new().build().unwrap();
        assert_eq!(bce.kind().unwrap(), "BCELoss");
        assert!(bce.named_buffers().unwrap().is_empty());
        let (v, g) = value_and_grad(&bce, &x, &t);
        assert_near("BCE value", &[v], &[0.401324268108645], 1e-12);
        assert_near("BCE grad", &g, &[-2.0 / 3.0, 4.0 / 9.0, -1.25 / 3.0], 1e-12);
        // weight [1, 2, 3], sum: 0.693147 + 2 * 0.287682 + 3 * 0.223144 = 1.937941979406136;
        // gradient times the weight: [-2, 8/3, -3.75].
        let w = f64s(&[1.0, 2.0, 3.0], &[3]);
        let wbce = BceLoss::new().weight(&w).reduction(Reduction::Sum).build().unwrap();
        let bufs = wbce.named_buffers().unwrap();
        assert_eq!(bufs.len(), 1);
        assert_eq!(bufs[0].0, "weight");
        assert!(!bufs[0].1.shares_storage(&w), "the weight is copied");
        let (v, g) = value_and_grad(&wbce, &x, &t);
        assert_near("BCE weighted", &[v], &[1.937941979406136], 1e-12);
        assert_near("BCE weighted grad", &g, &[-2.0, 8.0 / 3.0, -3.75], 1e-12);
        // A weight that broadcasts: [1] times 2 is twice the unweighted sum.
        let w2 = BceLoss::new().weight(&f64s(&[2.0], &[1])).reduction(Reduction::Sum).build().unwrap();
        assert_near("BCE broadcast weight", &[w2.loss(&x, &t).unwrap().item().unwrap()], &[2.0 * 1.203972804325936], 1e-12);
        // log clamped at -100: input 0 with target 1 gives 100, not infinity.
        let clamped = BceLoss::new().build().unwrap();
        let l = clamped.loss(&f64s(&[0.0], &[1]), &f64s(&[1.0], &[1])).unwrap();
        assert_eq!(l.item().unwrap(), 100.0);
    });
}

#[test]
fn bce_with_logits_with_pos_weight() {
    leak_checked(|| {
        let x = leaf(&[0.0, 2.0, -1.0], &[3]);
        let t = f64s(&[1.0, 0.0, 1.0], &[3]);
        let pw = f64s(&[2.0, 5.0, 0.5], &[3]);
        // Elements -(pw t ln σ(x) + (1 - t) ln(1 - σ(x))):
        //   x 0, t 1:  2 * ln 2                        = 1.386294361119891
        //   x 2, t 0:  softplus(2) = ln(1 + e²)        = 2.126928011042971 (pw unused)
        //   x -1, t 1: 0.5 * softplus(1) = 0.5 * 1.313261687518223 = 0.656630843759111
        //   mean = 4.169853215921973 / 3 = 1.389951071973991
        // d/dx = pw t (σ(x) - 1) + (1 - t) σ(x), over 3:
        //   2 * (0.5 - 1) = -1;  σ(2) = 0.880797077977882;  0.5 * (σ(-1) - 1) = -0.365529289315002
        let m = BceWithLogitsLoss::new().pos_weight(&pw).build().unwrap();
        assert_eq!(m.kind().unwrap(), "BCEWithLogitsLoss");
        let names: Vec<String> = m.named_buffers().unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["pos_weight"]); // only the weights given, as PyTorch's state_dict
        let (v, g) = value_and_grad(&m, &x, &t);
        assert_near("BCEWithLogits value", &[v], &[1.389951071973991], 1e-12);
        assert_near(
            "BCEWithLogits grad",
            &g,
            &[-1.0 / 3.0, 0.880797077977882 / 3.0, -0.365529289315002 / 3.0],
            1e-12,
        );
        // Without pos_weight, and with integer labels: (ln 2 + 2.126928 + 1.313262) / 3.
        let plain = BceWithLogitsLoss::new().build().unwrap();
        let labels = Tensor::from_slice(&[1i64, 0, 1], &[3], Device::CPU).unwrap();
        let want = (2f64.ln() + 2.126928011042971 + 1.313261687518223) / 3.0;
        assert_near("BCEWithLogits plain", &[plain.loss(&x, &labels).unwrap().item().unwrap()], &[want], 1e-12);
        // Both weights: buffers "weight" then "pos_weight"; weight [1, 0, 1] drops element 1:
        // sum = 1.386294 + 0.656631.
        let both = BceWithLogitsLoss::new()
            .weight(&f64s(&[1.0, 0.0, 1.0], &[3]))
            .pos_weight(&pw)
            .reduction(Reduction::Sum)
            .build()
            .unwrap();
        let names: Vec<String> = both.named_buffers().unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["weight", "pos_weight"]);
        assert_near(
            "BCEWithLogits both",
            &[both.loss(&x, &t).unwrap().item().unwrap()],
            &[1.386294361119891 + 0.656630843759111],
            1e-12,
        );
        // pos_weight per class (the last dim) on a [2, 3] input broadcasts.
        let x2 = f64s(&[0.0, 2.0, -1.0, 0.0, 2.0, -1.0], &[2, 3]);
        let t2 = f64s(&[1.0, 0.0, 1.0, 1.0, 0.0, 1.0], &[2, 3]);
        let sum = BceWithLogitsLoss::new().pos_weight(&pw).reduction(Reduction::Sum).build().unwrap();
        assert_near("BCEWithLogits [2, 3]", &[sum.loss(&x2, &t2).unwrap().item().unwrap()], &[2.0 * 4.169853215921973], 1e-12);
        // Large logits stay exact: x = 200, t = 0 gives softplus(200) = 200, where
        // -ln(1 - σ(200)) = -ln 0 would be infinite (BCELoss clamps it to 100).
        let big = BceWithLogitsLoss::new().build().unwrap();
        let l = big.loss(&f64s(&[200.0], &[1]), &f64s(&[0.0], &[1])).unwrap().item().unwrap();
        assert_eq!(l, 200.0);
    });
}

#[test]
fn kl_div_batchmean_mean_and_log_target() {
    leak_checked(|| {
        // Two samples: q = [0.25, 0.75] and [0.5, 0.5]; p = [0.5, 0.5] and [1, 0].
        let logq = leaf(&[0.25f64.ln(), 0.75f64.ln(), 0.5f64.ln(), 0.5f64.ln()], &[2, 2]);
        let p = f64s(&[0.5, 0.5, 1.0, 0.0], &[2, 2]);
        // Elements p (ln p - ln q):
        //   0.5 ln(0.5 / 0.25) = 0.5 ln 2 = 0.346573590279973
        //   0.5 ln(0.5 / 0.75) = 0.5 ln(2/3) = -0.202732554054082
        //   1 * ln(1 / 0.5) = ln 2 = 0.693147180559945;  p = 0: 0
        //   sum = 0.836988216785836; batchmean / 2 = 0.418494108392918; mean / 4 = 0.209247054196459
        // d/d(log q) = -p / 2 (batchmean): [-0.25, -0.25, -0.5, 0].
        let kl = KlDivLoss::new().reduction(Reduction::BatchMean).build().unwrap();
        assert_eq!(kl.kind().unwrap(), "KLDivLoss");
        let (v, g) = value_and_grad(&kl, &logq, &p);
        assert_near("KLDiv batchmean", &[v], &[0.418494108392918], 1e-12);
        assert_near("KLDiv batchmean grad", &g, &[-0.25, -0.25, -0.5, 0.0], 1e-12);
        // PyTorch's default "mean" divides by the 4 elements; d = -p / 4.
        let mean = KlDivLoss::new().build().unwrap();
        let (v, g) = value_and_grad(&mean, &logq, &p);
        assert_near("KLDiv mean", &[v], &[0.209247054196459], 1e-12);
        assert_near("KLDiv mean grad", &g, &[-0.125, -0.125, -0.25, 0.0], 1e-12);
        let sum = KlDivLoss::new().reduction(Reduction::Sum).build().unwrap();
        assert_near("KLDiv sum", &[sum.loss(&logq, &p).unwrap().item().unwrap()], &[0.836988216785836], 1e-12);
        let none = KlDivLoss::new().reduction(Reduction::None).build().unwrap();
        let e = none.loss(&logq, &p).unwrap();
        assert_eq!(e.shape(), vec![2, 2]);
        assert_near(
            "KLDiv none",
            &values(&e),
            &[0.346573590279973, -0.202732554054082, LN_2, 0.0],
            1e-12,
        );
        // log_target: the target as ln p gives the same (p without zeros here:
        // [0.5, 0.5], [0.9, 0.1]); sum 0.346574 - 0.202733 + 0.9 ln 1.8 + 0.1 ln 0.2.
        let p2 = [0.5f64, 0.5, 0.9, 0.1];
        let probs = f64s(&p2, &[2, 2]);
        let logp = f64s(&p2.map(f64::ln), &[2, 2]);
        let want = 0.346573590279973 - 0.202732554054082 + 0.9 * 1.8f64.ln() + 0.1 * 0.2f64.ln();
        let a = kl.loss(&logq, &probs).unwrap().item().unwrap();
        let lt = KlDivLoss::new().reduction(Reduction::BatchMean).log_target(true).build().unwrap();
        let b = lt.loss(&logq, &logp).unwrap().item().unwrap();
        assert_near("KLDiv probabilities", &[a], &[want / 2.0], 1e-12);
        assert_near("KLDiv log_target", &[b], &[want / 2.0], 1e-12);
        // The positional constructor.
        let pos = Module::kl_div_loss(Reduction::BatchMean, false).unwrap();
        assert_near("KLDiv positional", &[pos.loss(&logq, &p).unwrap().item().unwrap()], &[0.418494108392918], 1e-12);
    });
}

#[test]
fn loss_errors() {
    leak_checked(|| {
        let x = f32s(&[1.0, 2.0, 3.0], &[3]);
        let t2 = f32s(&[1.0, 2.0], &[2]);
        // Shapes must be equal (PyTorch broadcasts some of these with a warning); the
        // message names both.
        for m in [
            L1Loss::new().build().unwrap(),
            SmoothL1Loss::new().build().unwrap(),
            HuberLoss::new().build().unwrap(),
            BceLoss::new().build().unwrap(),
            BceWithLogitsLoss::new().build().unwrap(),
            KlDivLoss::new().build().unwrap(),
        ] {
            let e = m.loss(&x, &t2).unwrap_err();
            assert_eq!(e.code, ErrorCode::ShapeMismatch, "{e}");
            assert!(e.message.contains("[3]") && e.message.contains("[2]"), "{e}");
        }
        let x23 = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU).unwrap();
        let t32 = Tensor::zeros(&[3, 2], DType::Float32, Device::CPU).unwrap();
        let e = L1Loss::new().build().unwrap().loss(&x23, &t32).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{e}");
        assert!(e.message.contains("[2, 3]") && e.message.contains("[3, 2]"), "{e}");
        // Settings out of range.
        let e = SmoothL1Loss::new().beta(-1.0).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("beta"), "{e}");
        let e = SmoothL1Loss::new().beta(f64::NAN).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = SmoothL1Loss::new().beta(f64::INFINITY).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = HuberLoss::new().delta(0.0).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("delta"), "{e}");
        let e = HuberLoss::new().delta(-2.0).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        // BatchMean is KLDivLoss's alone.
        let e = L1Loss::new().reduction(Reduction::BatchMean).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("BATCHMEAN"), "{e}");
        for e in [
            SmoothL1Loss::new().reduction(Reduction::BatchMean).build().unwrap_err(),
            HuberLoss::new().reduction(Reduction::BatchMean).build().unwrap_err(),
            BceLoss::new().reduction(Reduction::BatchMean).build().unwrap_err(),
            BceWithLogitsLoss::new().reduction(Reduction::BatchMean).build().unwrap_err(),
            Module::mse_loss(Reduction::BatchMean).unwrap_err(),
            Module::cross_entropy_loss(None, Reduction::BatchMean, -100, 0.0).unwrap_err(),
        ] {
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        }
        // BCELoss takes probabilities only.
        let e = BceLoss::new().build().unwrap().loss(&x, &x).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("between 0 and 1"), "{e}");
        let nan = f32s(&[f32::NAN], &[1]);
        let e = BceLoss::new().build().unwrap().loss(&nan, &f32s(&[1.0], &[1])).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        // An integer input; an integer weight.
        let xi = Tensor::from_slice(&[1i64, 2, 3], &[3], Device::CPU).unwrap();
        let e = L1Loss::new().build().unwrap().loss(&xi, &x).unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{e}");
        let e = BceLoss::new().weight(&xi).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{e}");
        let e = BceWithLogitsLoss::new().pos_weight(&xi).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{e}");
        // A weight that does not broadcast to the input fails at forward, naming both.
        let m = BceWithLogitsLoss::new().pos_weight(&f32s(&[1.0, 2.0], &[2])).build().unwrap();
        let e = m.loss(&x, &x).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{e}");
        assert!(e.message.contains("pos_weight") && e.message.contains("[2]") && e.message.contains("[3]"), "{e}");
        // A loss takes exactly (input, target).
        let e = L1Loss::new().build().unwrap().forward(&x).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    });
}

/// p = [1, 2] with the gradient [3, 4] (from sum(p * [3, 4])).
fn param_with_grad_3_4(p: &Tensor) {
    let c = Tensor::from_slice(&[3.0f32, 4.0], &[2], Device::CPU).unwrap();
    (p * &c).unwrap().sum_all().unwrap().backward().unwrap();
}

#[test]
fn set_lr_changes_the_next_step() {
    leak_checked(|| {
        let p = f32s(&[1.0, 2.0], &[2]);
        p.set_requires_grad(true).unwrap();
        let mut opt = Sgd::new(std::slice::from_ref(&p), 0.1).build().unwrap();
        assert_eq!(opt.lr().unwrap(), 0.1);
        opt.set_lr(0.5).unwrap();
        assert_eq!(opt.lr().unwrap(), 0.5);
        // SGD without momentum: p -= lr * g = [1, 2] - 0.5 * [3, 4] = [-0.5, 0].
        param_with_grad_3_4(&p);
        opt.step().unwrap();
        assert_eq!(p.to_vec::<f32>().unwrap(), vec![-0.5, 0.0]);
        // Again with lr 0.25: [-0.5, 0] - 0.25 * [3, 4] = [-1.25, -1].
        opt.set_lr(0.25).unwrap();
        opt.zero_grad().unwrap();
        param_with_grad_3_4(&p);
        opt.step().unwrap();
        assert_eq!(p.to_vec::<f32>().unwrap(), vec![-1.25, -1.0]);
        // 0 is allowed (a frozen step); negative and NaN are not, and leave the rate.
        opt.set_lr(0.0).unwrap();
        opt.step().unwrap();
        assert_eq!(p.to_vec::<f32>().unwrap(), vec![-1.25, -1.0]);
        let e = opt.set_lr(-0.1).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = opt.set_lr(f64::NAN).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert_eq!(opt.lr().unwrap(), 0.0);
        // A second handle sees the same rate.
        opt.set_lr(0.3).unwrap();
        assert_eq!(opt.share().lr().unwrap(), 0.3);
        // Adam: the first step moves each parameter by about lr (m̂ / sqrt(v̂) = ±1).
        let q = f32s(&[1.0, 2.0], &[2]);
        q.set_requires_grad(true).unwrap();
        let mut adam = Adam::new(std::slice::from_ref(&q), 1e-3).build().unwrap();
        adam.set_lr(0.01).unwrap();
        param_with_grad_3_4(&q);
        adam.step().unwrap();
        let got: Vec<f64> = q.to_vec::<f32>().unwrap().iter().map(|&v| v as f64).collect();
        assert_near("Adam after set_lr", &got, &[0.99, 1.99], 1e-6);
    });
}

/// `steps` Adam steps on (p1, p2) of loss sum(p1² * c1) + sum(p2³): a gradient that
/// changes every step, so the moments matter.
fn adam_steps(opt: &mut Optimizer, p1: &Tensor, p2: &Tensor, steps: usize) {
    let c1 = f32s(&[1.0, -2.0, 0.5], &[3]);
    for _ in 0..steps {
        opt.zero_grad().unwrap();
        let a = (&(p1 * p1).unwrap() * &c1).unwrap().sum_all().unwrap();
        let b = (&(p2 * p2).unwrap() * p2).unwrap().sum_all().unwrap();
        (&a + &b).unwrap().backward().unwrap();
        opt.step().unwrap();
    }
}

/// A float32 leaf holding a copy of `p`'s values.
fn copy_of(p: &Tensor) -> Tensor {
    let c = p.detach().unwrap().deep_copy().unwrap();
    c.set_requires_grad(true).unwrap();
    c
}

#[test]
fn adam_state_dict_round_trip() {
    leak_checked(|| {
        let p1 = f32s(&[1.0, 2.0, 3.0], &[3]);
        let p2 = f32s(&[0.5, -0.5, 1.0, -1.0], &[2, 2]);
        for p in [&p1, &p2] {
            p.set_requires_grad(true).unwrap();
        }
        let mut opt = Adam::new(&[p1.clone(), p2.clone()], 0.05).build().unwrap();
        // Before any step: only the settings (PyTorch's param_groups).
        assert_eq!(opt.state_dict().unwrap().names().unwrap(), ADAM_SETTINGS);
        adam_steps(&mut opt, &p1, &p2, 2);
        let sd = opt.state_dict().unwrap();
        assert_eq!(
            sd.names().unwrap(),
            [
                &ADAM_SETTINGS[..],
                &[
                    "state.0.step",
                    "state.0.exp_avg",
                    "state.0.exp_avg_sq",
                    "state.1.step",
                    "state.1.exp_avg",
                    "state.1.exp_avg_sq"
                ]
            ]
            .concat()
        );
        let lr = sd.get("lr").unwrap().unwrap();
        assert_eq!((lr.dtype(), lr.shape(), lr.item().unwrap()), (DType::Float64, vec![], 0.05));
        let step = sd.get("state.1.step").unwrap().unwrap();
        assert_eq!((step.dtype(), step.shape(), step.item().unwrap()), (DType::Float32, vec![], 2.0));
        assert_eq!(sd.get("state.1.exp_avg").unwrap().unwrap().shape(), vec![2, 2]);

        // Through a safetensors file, as a checkpoint would go.
        let path = std::env::temp_dir().join(format!("devtensor-rs-optim-{}.safetensors", std::process::id()));
        sd.save(&path).unwrap();
        let loaded = StateDict::load(&path).unwrap();
        std::fs::remove_file(&path).unwrap();

        // A new Adam (another rate, to see it restored) on copies of the parameters.
        let (q1, q2) = (copy_of(&p1), copy_of(&p2));
        let mut resumed = Adam::new(&[q1.clone(), q2.clone()], 0.9).build().unwrap();
        resumed.load_state_dict(&loaded).unwrap();
        assert_eq!(resumed.lr().unwrap(), 0.05);
        // A fresh Adam on copies too, without the state: its step differs.
        let (r1, r2) = (copy_of(&p1), copy_of(&p2));
        let mut fresh = Adam::new(&[r1.clone(), r2.clone()], 0.05).build().unwrap();

        adam_steps(&mut opt, &p1, &p2, 1);
        adam_steps(&mut resumed, &q1, &q2, 1);
        adam_steps(&mut fresh, &r1, &r2, 1);
        assert_eq!(p1.to_vec::<f32>().unwrap(), q1.to_vec::<f32>().unwrap());
        assert_eq!(p2.to_vec::<f32>().unwrap(), q2.to_vec::<f32>().unwrap());
        assert_ne!(p1.to_vec::<f32>().unwrap(), r1.to_vec::<f32>().unwrap(), "the state changed nothing");
        // The saved tensors are copies: the third step did not change them.
        assert_eq!(sd.get("state.1.step").unwrap().unwrap().item().unwrap(), 2.0);
        assert_eq!(opt.state_dict().unwrap().get("state.1.step").unwrap().unwrap().item().unwrap(), 3.0);
        // Both states agree after the same steps.
        let (a, b) = (opt.state_dict().unwrap(), resumed.state_dict().unwrap());
        for name in a.names().unwrap() {
            let (x, y) = (a.get(&name).unwrap().unwrap(), b.get(&name).unwrap().unwrap());
            assert_eq!(values(&x), values(&y), "{name}");
        }
        // "lr" is optional: without it the rate stays.
        let mut no_lr = StateDict::new().unwrap();
        for (name, t) in a.entries().unwrap() {
            if name != "lr" {
                no_lr.insert(&name, &t).unwrap();
            }
        }
        resumed.set_lr(0.125).unwrap();
        resumed.load_state_dict(&no_lr).unwrap();
        assert_eq!(resumed.lr().unwrap(), 0.125);
    });
}

#[test]
fn optimizer_load_state_dict_errors() {
    leak_checked(|| {
        let p = f32s(&[1.0, 2.0], &[2]);
        p.set_requires_grad(true).unwrap();
        let mut sgd = Sgd::new(std::slice::from_ref(&p), 0.1).momentum(0.9).build().unwrap();
        param_with_grad_3_4(&p);
        sgd.step().unwrap();
        let sgd_sd = sgd.state_dict().unwrap();
        assert_eq!(sgd_sd.names().unwrap(), [&SGD_SETTINGS[..], &["state.0.momentum_buffer"]].concat());
        // The momentum buffer after one step is the gradient.
        assert_eq!(sgd_sd.get("state.0.momentum_buffer").unwrap().unwrap().to_vec::<f32>().unwrap(), vec![3.0, 4.0]);

        // Another optimizer's state: the message names the first key Adam does not have.
        let mut adam = Adam::new(std::slice::from_ref(&p), 1e-3).build().unwrap();
        let e = adam.load_state_dict(&sgd_sd).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("unexpected key \"momentum\""), "{e}");
        // All or nothing: the rate of the rejected dict was not taken.
        assert_eq!(adam.lr().unwrap(), 1e-3);
        // A parameter index out of range, a wrong shape, a partial state.
        let mut bad = StateDict::new().unwrap();
        bad.insert("state.1.momentum_buffer", &f32s(&[0.0, 0.0], &[2])).unwrap();
        let e = sgd.load_state_dict(&bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("state.1.momentum_buffer"), "{e}");
        let mut bad = StateDict::new().unwrap();
        bad.insert("state.0.momentum_buffer", &f32s(&[0.0, 0.0, 0.0], &[3])).unwrap();
        let e = sgd.load_state_dict(&bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("[3]"), "{e}");
        let mut partial = StateDict::new().unwrap();
        partial.insert("state.0.exp_avg", &f32s(&[0.0, 0.0], &[2])).unwrap();
        let e = adam.load_state_dict(&partial).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("missing"), "{e}");
        // A negative learning rate.
        let mut neg = StateDict::new().unwrap();
        neg.insert("lr", &Tensor::scalar(-1.0f64, Device::CPU).unwrap()).unwrap();
        let e = sgd.load_state_dict(&neg).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert_eq!(sgd.lr().unwrap(), 0.1);
        // An empty dict resets the state (as before the first step): the next step of
        // SGD with momentum then starts its buffer from the gradient again.
        sgd.load_state_dict(&StateDict::new().unwrap()).unwrap();
        assert_eq!(sgd.state_dict().unwrap().names().unwrap(), SGD_SETTINGS);
    });
}

#[test]
fn clip_grad_norm_scales_the_gradients() {
    leak_checked(|| {
        let p = f32s(&[1.0, 2.0], &[2]);
        p.set_requires_grad(true).unwrap();
        param_with_grad_3_4(&p);
        // ||[3, 4]||₂ = 5 > 1: the gradient becomes [3, 4] * 1 / (5 + 1e-6) ≈ [0.6, 0.8].
        let norm = clip_grad_norm_(std::slice::from_ref(&p), 1.0, 2.0, false).unwrap();
        assert_eq!((norm.shape(), norm.dtype(), norm.device()), (vec![], DType::Float32, Device::CPU));
        assert!((norm.item().unwrap() - 5.0).abs() < 1e-6);
        assert_near("clipped", &grad_of(&p), &[0.6, 0.8], 1e-6);
        // Now 5 / (5 + 1e-6), within max_norm 2: the norm is reported and nothing changes
        // (the coefficient min(2 / (norm + 1e-6), 1) is 1).
        let before = grad_of(&p);
        let norm = clip_grad_norm_(std::slice::from_ref(&p), 2.0, 2.0, false).unwrap();
        assert!((norm.item().unwrap() - 1.0).abs() < 1e-6);
        assert_eq!(grad_of(&p), before);

        // Two parameters are one vector: grads [3] and [4] have the norm 5 together.
        let a = leaf(&[0.0], &[1]);
        let b = leaf(&[0.0], &[1]);
        (&(&a * 3.0).unwrap() + &(&b * 4.0).unwrap()).unwrap().sum_all().unwrap().backward().unwrap();
        let norm = clip_grad_norm_(&[a.clone(), b.clone()], 2.5, 2.0, false).unwrap();
        assert_eq!(norm.dtype(), DType::Float64); // the first gradient's dtype
        assert!((norm.item().unwrap() - 5.0).abs() < 1e-12);
        // scaled by 2.5 / (5 + 1e-6)
        let k = 2.5 / (5.0 + 1e-6);
        assert_near("a", &grad_of(&a), &[3.0 * k], 1e-12);
        assert_near("b", &grad_of(&b), &[4.0 * k], 1e-12);

        // Other norms on grads [-3, 4]: 1-norm 7, max norm (f64::INFINITY) 4, 3-norm (27 + 64)^(1/3).
        let g = leaf(&[0.0, 0.0], &[2]);
        let set = |g: &Tensor| {
            g.clear_grad().unwrap();
            (g * &f64s(&[-3.0, 4.0], &[2])).unwrap().sum_all().unwrap().backward().unwrap();
        };
        set(&g);
        let n1 = clip_grad_norm_(std::slice::from_ref(&g), f64::INFINITY, 1.0, false).unwrap();
        assert!((n1.item().unwrap() - 7.0).abs() < 1e-12);
        assert_eq!(grad_of(&g), vec![-3.0, 4.0], "max_norm infinity clips nothing");
        let ninf = clip_grad_norm_(std::slice::from_ref(&g), 2.0, f64::INFINITY, false).unwrap();
        assert!((ninf.item().unwrap() - 4.0).abs() < 1e-12);
        let k = 2.0 / (4.0 + 1e-6);
        assert_near("max norm", &grad_of(&g), &[-3.0 * k, 4.0 * k], 1e-12);
        set(&g);
        let n3 = clip_grad_norm_(std::slice::from_ref(&g), 100.0, 3.0, false).unwrap();
        assert!((n3.item().unwrap() - 91f64.powf(1.0 / 3.0)).abs() < 1e-12);

        // Parameters without a gradient are skipped; none at all: the norm is 0.
        let nograd = leaf(&[5.0], &[1]);
        let n = clip_grad_norm_(std::slice::from_ref(&nograd), 1.0, 2.0, false).unwrap();
        assert_eq!(n.item().unwrap(), 0.0);
        assert_eq!(clip_grad_norm_(&[], 1.0, 2.0, false).unwrap().item().unwrap(), 0.0);
        set(&g);
        let n = clip_grad_norm_(&[nograd.clone(), g.clone()], 10.0, 2.0, false).unwrap();
        assert!((n.item().unwrap() - 5.0).abs() < 1e-12);
        assert!(nograd.grad().unwrap().is_none());

        // Errors.
        let e = clip_grad_norm_(std::slice::from_ref(&g), -1.0, 2.0, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = clip_grad_norm_(std::slice::from_ref(&g), f64::NAN, 2.0, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = clip_grad_norm_(std::slice::from_ref(&g), 1.0, 0.0, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        // A non-finite norm with error_if_nonfinite: an error, and no gradient changes.
        let h = leaf(&[0.0, 0.0], &[2]);
        (&h * &f64s(&[f64::INFINITY, 1.0], &[2])).unwrap().sum_all().unwrap().backward().unwrap();
        let e = clip_grad_norm_(std::slice::from_ref(&h), 1.0, 2.0, true).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert_eq!(grad_of(&h), vec![f64::INFINITY, 1.0]);
        // error_if_nonfinite with a finite norm works as without.
        set(&g);
        let n = clip_grad_norm_(std::slice::from_ref(&g), 1.0, 2.0, true).unwrap();
        assert!((n.item().unwrap() - 5.0).abs() < 1e-12);
    });
}

#[test]
fn clip_grad_value_clamps_the_gradients() {
    leak_checked(|| {
        let p = leaf(&[0.0, 0.0, 0.0], &[3]);
        let q = leaf(&[0.0], &[1]);
        let nograd = leaf(&[0.0], &[1]);
        // grads [-3, 0.25, 2] and [-0.5]; clamped to [-1, 1].
        let a = (&p * &f64s(&[-3.0, 0.25, 2.0], &[3])).unwrap().sum_all().unwrap();
        let b = (&q * -0.5).unwrap().sum_all().unwrap();
        (&a + &b).unwrap().backward().unwrap();
        clip_grad_value_(&[p.clone(), q.clone(), nograd.clone()], 1.0).unwrap();
        assert_eq!(grad_of(&p), vec![-1.0, 0.25, 1.0]);
        assert_eq!(grad_of(&q), vec![-0.5]);
        assert!(nograd.grad().unwrap().is_none());
        // 0 zeroes them; an empty list is fine; negative and NaN are errors.
        clip_grad_value_(std::slice::from_ref(&p), 0.0).unwrap();
        assert_eq!(grad_of(&p), vec![0.0, 0.0, 0.0]);
        clip_grad_value_(&[], 1.0).unwrap();
        let e = clip_grad_value_(std::slice::from_ref(&p), -1.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = clip_grad_value_(std::slice::from_ref(&p), f64::NAN).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    });
}

#[test]
fn a_training_step_with_a_new_loss_clipping_and_a_schedule() {
    leak_checked(|| {
        devtensor::manual_seed(3).unwrap();
        let model = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
        let params = model.parameters().unwrap();
        let mut opt = Sgd::new(&params, 0.5).momentum(0.9).build().unwrap();
        let loss_fn = BceWithLogitsLoss::new().build().unwrap();
        let x = Tensor::randn(&[4, 3], DType::Float32, Device::CPU).unwrap();
        let y = Tensor::from_slice(&[1i64, 0, 0, 1, 1, 1, 0, 0], &[4, 2], Device::CPU).unwrap();
        let mut first = None;
        let mut last = 0.0;
        for epoch in 0..20 {
            opt.set_lr(0.5 * 0.9f64.powi(epoch)).unwrap();
            opt.zero_grad().unwrap();
            let loss = loss_fn.loss(&model.forward(&x).unwrap(), &y).unwrap();
            loss.backward().unwrap();
            let norm = clip_grad_norm_(&params, 1.0, 2.0, false).unwrap();
            assert!(norm.item().unwrap().is_finite());
            opt.step().unwrap();
            last = loss.item().unwrap();
            first.get_or_insert(last);
        }
        assert!(last < first.unwrap(), "{last} >= {first:?}");
    });
}

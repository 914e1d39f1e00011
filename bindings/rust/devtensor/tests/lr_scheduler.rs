//! The learning-rate schedulers (nn::LrScheduler, dt_lr_scheduler_*): each kind's rates
//! against values worked out by hand from torch.optim.lr_scheduler's formulas (PyTorch
//! 1.13 gives the same), OneCycleLR's momentum, ReduceLROnPlateau's patience, cooldown
//! and min_lr, SequentialLR's milestones, the errors (the wrong kind of step, settings
//! PyTorch refuses, a failed call leaving the optimizer as it was), a state dict into a
//! fresh scheduler, share and drop, a scheduler outliving its Optimizer value, and use
//! from other threads. Each test runs alone and checks that it leaves no handle behind.
use devtensor::nn::{
    Adagrad, Adam, AnnealStrategy, CyclicMode, CyclicOptions, LrScheduler, OneCycleOptions,
    Optimizer, PlateauMode, PlateauOptions, Sgd, ThresholdMode,
};
use devtensor::{Device, ErrorCode, Tensor};
use std::f64::consts::PI;

mod common;
use common::assert_near;
use common::leak_checked;

/// A 1-d float32 leaf that requires grad: the optimizers' one parameter.
fn param() -> Tensor {
    let t = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

fn sgd(lr: f64) -> Optimizer {
    Sgd::new(&[param()], lr).build().unwrap()
}

/// The optimizer's rate now, then after each of `n` steps; checks that the scheduler's
/// last_lr is the optimizer's rate each time.
fn rates(opt: &Optimizer, sched: &LrScheduler, n: usize) -> Vec<f64> {
    let mut out = vec![opt.lr().unwrap()];
    assert_eq!(sched.last_lr().unwrap(), out[0], "last_lr after construction");
    for k in 0..n {
        sched
            .step()
            .unwrap_or_else(|e| panic!("step {}: {e}", k + 1));
        let lr = opt.lr().unwrap();
        assert_eq!(sched.last_lr().unwrap(), lr, "last_lr after step {}", k + 1);
        out.push(lr);
    }
    out
}

/// The entry `key` of the scheduler's state dict, as a number.
fn state(sched: &LrScheduler, key: &str) -> f64 {
    sched
        .state_dict()
        .unwrap()
        .get(key)
        .unwrap()
        .unwrap_or_else(|| panic!("no {key:?} in the state dict"))
        .item()
        .unwrap()
}

#[test]
fn step_lr_multiplies_by_gamma_every_step_size_epochs() {
    leak_checked(|| {
        let opt = sgd(1.0);
        let sched = LrScheduler::step_lr(&opt, 2, 0.5).unwrap();
        assert_eq!(sched.kind().unwrap(), "StepLR");
        assert_eq!(sched.last_epoch().unwrap(), 0);
        assert_eq!(format!("{sched:?}"), "StepLR(last_epoch 0, last_lr 1)");
        // 1 at epochs 0 and 1, halved at 2 and at 4.
        assert_near("StepLR(2, 0.5)", &rates(&opt, &sched, 4), &[1.0, 1.0, 0.5, 0.5, 0.25], 1e-15);
        assert_eq!(sched.last_epoch().unwrap(), 4);
        assert_eq!(state(&sched, "step_size"), 2.0);
        assert_eq!(state(&sched, "gamma"), 0.5);
        assert_eq!(state(&sched, "base_lr"), 1.0);
    });
}

#[test]
fn multi_step_lr_multiplies_at_each_milestone_and_twice_at_one_listed_twice() {
    leak_checked(|| {
        let opt = sgd(1.0);
        // Out of order, and 3 twice (PyTorch's Counter): x0.1 at epoch 1, x0.01 at 3.
        let sched = LrScheduler::multi_step_lr(&opt, &[3, 1, 3], 0.1).unwrap();
        assert_eq!(sched.kind().unwrap(), "MultiStepLR");
        assert_near("MultiStepLR", &rates(&opt, &sched, 4), &[1.0, 0.1, 0.1, 0.001, 0.001], 1e-15);
        let ms = sched.state_dict().unwrap().get("milestones").unwrap().unwrap();
        let mut ms = ms.to_vec::<i64>().unwrap();
        ms.sort_unstable();
        assert_eq!(ms, [1, 3, 3]);
        drop(sched);
        // No milestones: the rate never changes.
        let opt = sgd(0.3);
        let sched = LrScheduler::multi_step_lr(&opt, &[], 0.1).unwrap();
        assert_eq!(rates(&opt, &sched, 3), [0.3; 4]);
    });
}

#[test]
fn exponential_lr_multiplies_every_epoch() {
    leak_checked(|| {
        let opt = sgd(0.8);
        let sched = LrScheduler::exponential_lr(&opt, 0.5).unwrap();
        assert_eq!(sched.kind().unwrap(), "ExponentialLR");
        assert_near("ExponentialLR(0.5)", &rates(&opt, &sched, 3), &[0.8, 0.4, 0.2, 0.1], 1e-15);
    });
}

#[test]
fn linear_lr_warms_up_from_start_factor_and_then_holds() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let sched = LrScheduler::linear_lr(&opt, 0.25, 1.0, 4).unwrap();
        assert_eq!(sched.kind().unwrap(), "LinearLR");
        // The factor goes 0.25, 0.4375, 0.625, 0.8125, 1 (steps of 0.75 / 4), then stays.
        assert_near(
            "LinearLR(0.25, 1, 4)",
            &rates(&opt, &sched, 5),
            &[0.025, 0.04375, 0.0625, 0.08125, 0.1, 0.1],
            1e-12,
        );
    });
}

#[test]
fn constant_lr_holds_the_factor_until_total_iters() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let sched = LrScheduler::constant_lr(&opt, 0.5, 3).unwrap();
        assert_eq!(sched.kind().unwrap(), "ConstantLR");
        assert_near(
            "ConstantLR(0.5, 3)",
            &rates(&opt, &sched, 4),
            &[0.05, 0.05, 0.05, 0.1, 0.1],
            1e-15,
        );
    });
}

#[test]
fn polynomial_lr_falls_to_zero_at_total_iters() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let sched = LrScheduler::polynomial_lr(&opt, 4, 2.0).unwrap();
        assert_eq!(sched.kind().unwrap(), "PolynomialLR");
        // 0.1 * (1 - e / 4)^2, then 0 from epoch 4 on.
        assert_near(
            "PolynomialLR(4, 2)",
            &rates(&opt, &sched, 5),
            &[0.1, 0.05625, 0.025, 0.00625, 0.0, 0.0],
            1e-12,
        );
    });
}

#[test]
fn cosine_annealing_lr_follows_the_cosine_and_rises_again_past_t_max() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let sched = LrScheduler::cosine_annealing_lr(&opt, 4, 0.0).unwrap();
        assert_eq!(sched.kind().unwrap(), "CosineAnnealingLR");
        let c = (PI / 4.0).cos();
        let want = [
            0.1,
            0.1 * (1.0 + c) / 2.0,
            0.05,
            0.1 * (1.0 - c) / 2.0,
            0.0,
            // past T_max: a cosine of period 2 T_max, back up to the initial rate
            0.1 * (1.0 - c) / 2.0,
            0.05,
            0.1 * (1.0 + c) / 2.0,
            0.1,
        ];
        assert_near("CosineAnnealingLR(4, 0)", &rates(&opt, &sched, 8), &want, 1e-12);
        // With eta_min: eta_min + (initial - eta_min) * (1 + cos(pi * e / 2)) / 2.
        drop(sched);
        let opt = sgd(1.0);
        let sched = LrScheduler::cosine_annealing_lr(&opt, 2, 0.2).unwrap();
        assert_near("CosineAnnealingLR(2, 0.2)", &rates(&opt, &sched, 2), &[1.0, 0.6, 0.2], 1e-12);
    });
}

#[test]
fn cosine_annealing_warm_restarts_restarts_with_growing_periods() {
    leak_checked(|| {
        let opt = sgd(1.0);
        // Periods 2, 4, 8: restarts at epochs 2 and 6.
        let sched = LrScheduler::cosine_annealing_warm_restarts(&opt, 2, 2, 0.0).unwrap();
        assert_eq!(sched.kind().unwrap(), "CosineAnnealingWarmRestarts");
        let c = (PI / 4.0).cos();
        let want = [1.0, 0.5, 1.0, (1.0 + c) / 2.0, 0.5, (1.0 - c) / 2.0, 1.0];
        assert_near("CosineAnnealingWarmRestarts(2, 2)", &rates(&opt, &sched, 6), &want, 1e-12);
        assert_eq!(state(&sched, "T_i"), 8.0);
        assert_eq!(state(&sched, "T_cur"), 0.0);
    });
}

#[test]
fn one_cycle_lr_cycles_the_rate_and_the_momentum_the_other_way() {
    leak_checked(|| {
        let opt = Sgd::new(&[param()], 0.1).momentum(0.9).build().unwrap();
        let sched = LrScheduler::one_cycle_lr(&opt, &OneCycleOptions::new(0.5, 20)).unwrap();
        assert_eq!(sched.kind().unwrap(), "OneCycleLR");
        // Construction: max_lr / div_factor = 0.5 / 25, and max_momentum.
        assert!((opt.lr().unwrap() - 0.02).abs() < 1e-12, "{}", opt.lr().unwrap());
        assert_eq!(opt.option("momentum").unwrap(), 0.95);
        // pct_start 0.3: the peak at step 0.3 * 20 - 1 = 5, the end at step 19; cosine
        // annealing, so step 1 is a fifth of the way: mid + (start - mid) * cos-ish.
        let cos_anneal = |start: f64, end: f64, pct: f64| end + (start - end) / 2.0 * (1.0 + (PI * pct).cos());
        let min_lr = 0.02 / 1e4;
        let mut lr = vec![opt.lr().unwrap()];
        let mut mom = vec![opt.option("momentum").unwrap()];
        for _ in 0..20 {
            sched.step().unwrap();
            lr.push(opt.lr().unwrap());
            mom.push(opt.option("momentum").unwrap());
        }
        assert_near("lr at step 1", &lr[1..2], &[cos_anneal(0.02, 0.5, 0.2)], 1e-12);
        assert_near("momentum at step 1", &mom[1..2], &[cos_anneal(0.95, 0.85, 0.2)], 1e-12);
        assert_near("lr at the peak", &lr[5..6], &[0.5], 1e-12);
        assert_near("momentum at the peak", &mom[5..6], &[0.85], 1e-12);
        // Half way down (step 12 of 5..19): the mean of the two ends.
        assert_near("lr at step 12", &lr[12..13], &[(0.5 + min_lr) / 2.0], 1e-12);
        assert_near("momentum at step 12", &mom[12..13], &[0.9], 1e-12);
        assert_near("lr at the end", &lr[19..20], &[min_lr], 1e-12);
        assert_near("momentum at the end", &mom[19..20], &[0.95], 1e-12);
        // 20 steps after construction are allowed (as PyTorch); the 21st is refused and
        // changes nothing.
        assert_eq!(sched.last_epoch().unwrap(), 20);
        let before = (opt.lr().unwrap(), opt.option("momentum").unwrap());
        let e = sched.step().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("total_steps"), "{e}");
        assert_eq!(sched.last_epoch().unwrap(), 20);
        assert_eq!((opt.lr().unwrap(), opt.option("momentum").unwrap()), before);
    });
}

#[test]
fn one_cycle_lr_linear_three_phase_and_other_optimizers() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let o = OneCycleOptions {
            pct_start: 0.4,
            anneal_strategy: AnnealStrategy::Linear,
            three_phase: true,
            cycle_momentum: false,
            ..OneCycleOptions::new(1.0, 10)
        };
        let sched = LrScheduler::one_cycle_lr(&opt, &o).unwrap();
        // Up from 0.04 to 1 by step 3 (0.4 * 10 - 1), back to 0.04 by step 6, down to
        // 0.04 / 1e4 by step 9: straight lines.
        let want = [0.04, 0.36, 0.68, 1.0, 0.68, 0.36, 0.04, 0.026668, 0.013336, 4e-6];
        assert_near("OneCycleLR linear three-phase", &rates(&opt, &sched, 9), &want, 1e-12);
        assert_eq!(opt.option("momentum").unwrap(), 0.0, "cycle_momentum false moved it");
        drop(sched);
        // Adam's momentum is beta1.
        let adam = Adam::new(&[param()], 1e-3).build().unwrap();
        let _s = LrScheduler::one_cycle_lr(&adam, &OneCycleOptions::new(0.01, 10)).unwrap();
        assert_eq!(adam.option("beta1").unwrap(), 0.95);
        // Adagrad has none: refused with cycle_momentum, accepted without.
        let adagrad = Adagrad::new(&[param()], 0.1).build().unwrap();
        let e = LrScheduler::one_cycle_lr(&adagrad, &OneCycleOptions::new(0.5, 10)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("cycle_momentum"), "{e}");
        assert_eq!(adagrad.lr().unwrap(), 0.1, "a refused scheduler changed the rate");
        let o = OneCycleOptions { cycle_momentum: false, ..OneCycleOptions::new(0.5, 10) };
        let s = LrScheduler::one_cycle_lr(&adagrad, &o).unwrap();
        assert!((s.last_lr().unwrap() - 0.02).abs() < 1e-12);
    });
}

#[test]
fn cyclic_lr_cycles_the_rate_and_the_momentum_the_other_way() {
    leak_checked(|| {
        // triangular2, 2 up and 1 down, on SGD with momentum: the rate 0.01 + 0.09 *
        // height, the height 0, 0.5, 1 in the first cycle and half that in the second;
        // the momentum 0.9 - 0.1 * height.
        let opt = Sgd::new(&[param()], 0.5).momentum(0.9).build().unwrap();
        let o = CyclicOptions {
            step_size_up: 2,
            step_size_down: 1,
            mode: CyclicMode::Triangular2,
            ..CyclicOptions::new(0.01, 0.1)
        };
        let sched = LrScheduler::cyclic_lr(&opt, &o).unwrap();
        assert_eq!(sched.kind().unwrap(), "CyclicLR");
        let mut momenta = vec![opt.option("momentum").unwrap()];
        let mut got = vec![opt.lr().unwrap()];
        for _ in 0..6 {
            sched.step().unwrap();
            got.push(opt.lr().unwrap());
            momenta.push(opt.option("momentum").unwrap());
        }
        assert_near("CyclicLR triangular2", &got, &[0.01, 0.055, 0.1, 0.01, 0.0325, 0.055, 0.01], 1e-12);
        assert_near("its momentum", &momenta, &[0.9, 0.85, 0.8, 0.9, 0.875, 0.85, 0.9], 1e-12);
        drop(sched);
        // Adagrad has no momentum: refused with cycle_momentum, exp_range accepted without.
        let adagrad = Adagrad::new(&[param()], 0.3).build().unwrap();
        let e = LrScheduler::cyclic_lr(&adagrad, &CyclicOptions::new(0.1, 0.2)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("Adagrad has neither"), "{e}");
        assert_eq!(adagrad.lr().unwrap(), 0.3, "a refused scheduler changed the rate");
        let o = CyclicOptions {
            step_size_up: 1,
            mode: CyclicMode::ExpRange,
            gamma: 0.5,
            cycle_momentum: false,
            ..CyclicOptions::new(0.1, 0.2)
        };
        let s = LrScheduler::cyclic_lr(&adagrad, &o).unwrap();
        // 0.1 + 0.1 * 0.5^e at the odd steps (the tops), 0.1 at the even ones.
        assert_near("CyclicLR exp_range", &rates(&adagrad, &s, 4), &[0.1, 0.15, 0.1, 0.1125, 0.1], 1e-12);
    });
}

#[test]
fn chained_scheduler_steps_all_and_puts_them_back_when_one_refuses() {
    leak_checked(|| {
        let opt = Sgd::new(&[param()], 0.1).momentum(0.9).build().unwrap();
        let decay = LrScheduler::exponential_lr(&opt, 0.5).unwrap();
        // max_lr 1, 4 steps, div_factor 10: it sets the rate outright each step and
        // refuses the step past the one after its last.
        let o = OneCycleOptions {
            pct_start: 0.5,
            anneal_strategy: AnnealStrategy::Linear,
            div_factor: 10.0,
            final_div_factor: 10.0,
            ..OneCycleOptions::new(1.0, 4)
        };
        let cycle = LrScheduler::one_cycle_lr(&opt, &o).unwrap();
        let chain = LrScheduler::chained_scheduler(&[&decay, &cycle]).unwrap();
        assert_eq!(chain.kind().unwrap(), "ChainedScheduler");
        for _ in 0..4 {
            chain.step().unwrap();
        }
        let state = |s: &LrScheduler| (s.last_lr().unwrap(), s.last_epoch().unwrap());
        let before = (opt.lr().unwrap(), opt.option("momentum").unwrap(), state(&decay), state(&cycle), state(&chain));
        assert_eq!(before.2 .1, 4);
        let e = chain.step().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("total_steps is 4"), "{e}");
        let after = (opt.lr().unwrap(), opt.option("momentum").unwrap(), state(&decay), state(&cycle), state(&chain));
        assert_eq!(after, before, "a refused chain step changed something");
        let e = LrScheduler::chained_scheduler(&[]).unwrap_err();
        assert!(e.message.contains("at least one"), "{e}");
        let e = LrScheduler::chained_scheduler(&[&decay, &chain]).unwrap_err();
        assert!(e.message.contains("is a ChainedScheduler"), "{e}");
    });
}

#[test]
fn reduce_lr_on_plateau_reduces_after_patience_bad_steps() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let o = PlateauOptions {
            patience: 0,
            threshold: 0.0,
            threshold_mode: ThresholdMode::Abs,
            ..PlateauOptions::default()
        };
        assert_eq!(o.factor, 0.1);
        let sched = LrScheduler::reduce_lr_on_plateau(&opt, &o).unwrap();
        assert_eq!(sched.kind().unwrap(), "ReduceLROnPlateau");
        assert_eq!(opt.lr().unwrap(), 0.1, "making it changed the rate");
        let mut got = Vec::new();
        // 1.0: better than nothing; 1.0 again: no improvement, patience 0, so x0.1;
        // 0.5: better; 0.5 again: x0.1.
        for m in [1.0, 1.0, 0.5, 0.5] {
            sched.step_metric(m).unwrap();
            got.push(opt.lr().unwrap());
            assert_eq!(sched.last_lr().unwrap(), *got.last().unwrap());
        }
        assert_near("ReduceLROnPlateau", &got, &[0.1, 0.01, 0.01, 0.001], 1e-15);
        assert_eq!(sched.last_epoch().unwrap(), 4);
        assert_eq!(state(&sched, "best"), 0.5);
        drop(sched);

        // The default relative threshold 1e-4: 0.99995 is no improvement on 1.0.
        let opt = sgd(0.1);
        let o = PlateauOptions { patience: 0, ..PlateauOptions::default() };
        let sched = LrScheduler::reduce_lr_on_plateau(&opt, &o).unwrap();
        sched.step_metric(1.0).unwrap();
        sched.step_metric(0.99995).unwrap();
        assert_near("rel threshold", &[opt.lr().unwrap()], &[0.01], 1e-15);
        drop(sched);

        // Mode max, patience 1, cooldown 1, factor 0.5, min_lr 0.2; a constant metric:
        // the first is an improvement; then two bad steps (more than patience) halve the
        // rate; the cooldown step is not counted; and so on, down to min_lr.
        let opt = sgd(1.0);
        let o = PlateauOptions {
            mode: PlateauMode::Max,
            factor: 0.5,
            patience: 1,
            cooldown: 1,
            min_lr: 0.2,
            ..PlateauOptions::default()
        };
        let sched = LrScheduler::reduce_lr_on_plateau(&opt, &o).unwrap();
        let mut got = Vec::new();
        for _ in 0..12 {
            sched.step_metric(1.0).unwrap();
            got.push(opt.lr().unwrap());
        }
        let want = [1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2, 0.2, 0.2, 0.2];
        assert_near("ReduceLROnPlateau max", &got, &want, 1e-15);
    });
}

#[test]
fn sequential_lr_switches_schedulers_at_the_milestones() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let warmup = LrScheduler::linear_lr(&opt, 0.1, 1.0, 3).unwrap();
        let cosine = LrScheduler::cosine_annealing_lr(&opt, 6, 0.0).unwrap();
        let sched = LrScheduler::sequential_lr(&opt, &[&warmup, &cosine], &[3]).unwrap();
        assert_eq!(sched.kind().unwrap(), "SequentialLR");
        // LinearLR's factor 0.1, 0.4, 0.7 for epochs 0..3, then the cosine from its epoch 0.
        let mut want = vec![0.01, 0.04, 0.07];
        want.extend((0..=6).map(|e| 0.1 * (1.0 + (PI * e as f64 / 6.0).cos()) / 2.0));
        assert_near("SequentialLR", &rates(&opt, &sched, 9), &want, 1e-12);
        assert_eq!(sched.last_epoch().unwrap(), 9);
        let sd = sched.state_dict().unwrap();
        assert_eq!(sd.get("milestones").unwrap().unwrap().to_vec::<i64>().unwrap(), [3]);
        assert!(sd.get("schedulers.0.start_factor").unwrap().is_some());
        assert_eq!(sd.get("schedulers.1.T_max").unwrap().unwrap().item().unwrap(), 6.0);
        // The schedulers are held by the SequentialLR: dropping ours changes nothing.
        drop((warmup, cosine));
        sched.step().unwrap();
        let e = 7.0;
        assert_near("after dropping the parts", &[opt.lr().unwrap()], &[0.1 * (1.0 + (PI * e / 6.0).cos()) / 2.0], 1e-12);
    });
}

#[test]
fn sequential_lr_refusals() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let a = LrScheduler::step_lr(&opt, 2, 0.5).unwrap();
        let b = LrScheduler::exponential_lr(&opt, 0.9).unwrap();
        let invalid = |r: devtensor::Result<LrScheduler>, what: &str, needle: &str| {
            let e = r.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{what}: {e}");
            assert!(e.message.contains(needle), "{what}: {e}");
        };
        // Not one milestone fewer than schedulers (refused before the library reads them).
        invalid(LrScheduler::sequential_lr(&opt, &[&a, &b], &[]), "no milestone", "one milestone fewer");
        invalid(LrScheduler::sequential_lr(&opt, &[&a, &b], &[2, 4]), "two milestones", "one milestone fewer");
        invalid(LrScheduler::sequential_lr(&opt, &[], &[]), "no scheduler", "at least one");
        invalid(LrScheduler::sequential_lr(&opt, &[&a, &b], &[0]), "milestone 0", "milestones");
        invalid(LrScheduler::sequential_lr(&opt, &[&a, &a], &[2]), "listed twice", "same scheduler");
        let plateau = LrScheduler::reduce_lr_on_plateau(&opt, &PlateauOptions::default()).unwrap();
        invalid(LrScheduler::sequential_lr(&opt, &[&a, &plateau], &[2]), "a plateau", "ReduceLROnPlateau");
        let other = sgd(0.1);
        let c = LrScheduler::step_lr(&other, 2, 0.5).unwrap();
        invalid(LrScheduler::sequential_lr(&opt, &[&a, &c], &[2]), "another optimizer", "another optimizer");
    });
}

#[test]
fn constructor_errors_name_the_setting_and_leave_the_optimizer_alone() {
    leak_checked(|| {
        let opt = Sgd::new(&[param()], 0.1).momentum(0.9).build().unwrap();
        let cases: Vec<(&str, devtensor::Result<LrScheduler>, &str)> = vec![
            ("StepLR step_size 0", LrScheduler::step_lr(&opt, 0, 0.5), "step_size"),
            ("StepLR gamma -1", LrScheduler::step_lr(&opt, 1, -1.0), "gamma"),
            ("MultiStepLR milestone -1", LrScheduler::multi_step_lr(&opt, &[-1], 0.5), "milestones"),
            ("ExponentialLR gamma NaN", LrScheduler::exponential_lr(&opt, f64::NAN), "gamma"),
            ("LinearLR start 0", LrScheduler::linear_lr(&opt, 0.0, 1.0, 4), "start_factor"),
            ("LinearLR end 2", LrScheduler::linear_lr(&opt, 0.5, 2.0, 4), "end_factor"),
            ("LinearLR total_iters 0", LrScheduler::linear_lr(&opt, 0.5, 1.0, 0), "total_iters"),
            ("ConstantLR factor 0", LrScheduler::constant_lr(&opt, 0.0, 4), "factor"),
            ("ConstantLR total_iters 0", LrScheduler::constant_lr(&opt, 0.5, 0), "total_iters"),
            ("PolynomialLR total_iters 0", LrScheduler::polynomial_lr(&opt, 0, 1.0), "total_iters"),
            ("PolynomialLR power -1", LrScheduler::polynomial_lr(&opt, 4, -1.0), "power"),
            ("CosineAnnealingLR T_max 0", LrScheduler::cosine_annealing_lr(&opt, 0, 0.0), "T_max"),
            ("CosineAnnealingLR eta_min -1", LrScheduler::cosine_annealing_lr(&opt, 4, -1.0), "eta_min"),
            ("WarmRestarts T_0 0", LrScheduler::cosine_annealing_warm_restarts(&opt, 0, 1, 0.0), "T_0"),
            ("WarmRestarts T_mult 0", LrScheduler::cosine_annealing_warm_restarts(&opt, 2, 0, 0.0), "T_mult"),
            (
                "OneCycleLR total_steps 0",
                LrScheduler::one_cycle_lr(&opt, &OneCycleOptions::new(0.5, 0)),
                "total_steps",
            ),
            (
                "OneCycleLR pct_start leaving a phase empty",
                LrScheduler::one_cycle_lr(&opt, &OneCycleOptions { pct_start: 0.05, ..OneCycleOptions::new(0.5, 20) }),
                "pct_start",
            ),
            (
                "OneCycleLR div_factor 0",
                LrScheduler::one_cycle_lr(&opt, &OneCycleOptions { div_factor: 0.0, ..OneCycleOptions::new(0.5, 20) }),
                "div_factor",
            ),
            (
                "CyclicLR step_size_up 0",
                LrScheduler::cyclic_lr(&opt, &CyclicOptions { step_size_up: 0, ..CyclicOptions::new(0.01, 0.1) }),
                "step_size_up",
            ),
            (
                "CyclicLR gamma NaN",
                LrScheduler::cyclic_lr(&opt, &CyclicOptions { gamma: f64::NAN, ..CyclicOptions::new(0.01, 0.1) }),
                "gamma",
            ),
            (
                "ReduceLROnPlateau factor 1",
                LrScheduler::reduce_lr_on_plateau(&opt, &PlateauOptions { factor: 1.0, ..PlateauOptions::default() }),
                "factor",
            ),
            (
                "ReduceLROnPlateau patience -1",
                LrScheduler::reduce_lr_on_plateau(&opt, &PlateauOptions { patience: -1, ..PlateauOptions::default() }),
                "patience",
            ),
        ];
        for (what, r, needle) in cases {
            let e = r.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{what}: {e}");
            assert!(e.message.contains(needle), "{what}: {e}");
        }
        // None of them touched the rate or the momentum (LinearLR and OneCycleLR would).
        assert_eq!(opt.lr().unwrap(), 0.1);
        assert_eq!(opt.option("momentum").unwrap(), 0.9);
    });
}

#[test]
fn step_and_step_metric_are_each_refused_by_the_other_kinds() {
    leak_checked(|| {
        let opt = sgd(1.0);
        let s = LrScheduler::step_lr(&opt, 1, 0.5).unwrap();
        s.step().unwrap();
        let e = s.step_metric(1.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("StepLR"), "{e}");
        assert_eq!((s.last_epoch().unwrap(), opt.lr().unwrap()), (1, 0.5), "a refused step changed something");
        drop(s);

        let p = LrScheduler::reduce_lr_on_plateau(&opt, &PlateauOptions::default()).unwrap();
        let e = p.step().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("metric"), "{e}");
        assert_eq!(p.last_epoch().unwrap(), 0);
        assert_eq!(opt.lr().unwrap(), 0.5);
    });
}

#[test]
fn stacked_schedulers_chain_as_in_pytorch() {
    leak_checked(|| {
        let opt = sgd(1.0);
        let a = LrScheduler::step_lr(&opt, 2, 0.5).unwrap();
        let b = LrScheduler::exponential_lr(&opt, 0.9).unwrap();
        let mut got = vec![opt.lr().unwrap()];
        for _ in 0..4 {
            a.step().unwrap();
            b.step().unwrap();
            got.push(opt.lr().unwrap());
        }
        // Each scales the current rate: x0.9 every epoch, x0.5 more at epochs 2 and 4.
        assert_near("StepLR + ExponentialLR", &got, &[1.0, 0.9, 0.405, 0.3645, 0.164025], 1e-12);
    });
}

#[test]
fn state_dict_round_trip_into_a_fresh_scheduler() {
    leak_checked(|| {
        let p = param();
        let mut opt = Sgd::new(std::slice::from_ref(&p), 1.0).build().unwrap();
        let sched = LrScheduler::cosine_annealing_warm_restarts(&opt, 3, 2, 0.0).unwrap();
        for _ in 0..5 {
            sched.step().unwrap();
        }
        let (opt_sd, sd) = (opt.state_dict().unwrap(), sched.state_dict().unwrap());
        for key in ["base_lr", "last_epoch", "last_lr", "T_0", "T_i", "T_mult", "eta_min", "T_cur"] {
            assert!(sd.get(key).unwrap().is_some(), "no {key:?} in {:?}", sd.names().unwrap());
        }
        // A fresh optimizer and a scheduler made with other settings: the state dict
        // brings back the settings as well as the position.
        let mut opt2 = Sgd::new(std::slice::from_ref(&p), 1.0).build().unwrap();
        let fresh = LrScheduler::cosine_annealing_warm_restarts(&opt2, 5, 1, 0.1).unwrap();
        opt2.load_state_dict(&opt_sd).unwrap();
        fresh.load_state_dict(&sd).unwrap();
        assert_eq!(fresh.last_epoch().unwrap(), sched.last_epoch().unwrap());
        assert_eq!(fresh.last_lr().unwrap(), sched.last_lr().unwrap());
        assert_eq!(opt2.lr().unwrap(), opt.lr().unwrap());
        for k in 0..7 {
            sched.step().unwrap();
            fresh.step().unwrap();
            assert_eq!(fresh.last_lr().unwrap(), sched.last_lr().unwrap(), "step {k} after loading");
            assert_eq!(opt2.lr().unwrap(), opt.lr().unwrap(), "step {k} after loading");
        }
        assert_eq!(fresh.last_epoch().unwrap(), 12);
        // Another kind's state dict: refused, naming the key, nothing changed.
        let step = LrScheduler::step_lr(&opt, 2, 0.5).unwrap();
        let e = fresh.load_state_dict(&step.state_dict().unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("step_size"), "{e}");
        assert_eq!(fresh.last_epoch().unwrap(), 12);
        // The optimizer is not touched by a scheduler's load (as PyTorch's).
        opt.set_lr(0.123).unwrap();
        sched.load_state_dict(&sd).unwrap();
        assert_eq!(opt.lr().unwrap(), 0.123);
        assert_eq!(sched.last_epoch().unwrap(), 5);
    });
}

#[test]
fn share_is_the_same_scheduler_and_drop_releases_it() {
    leak_checked(|| {
        let opt = sgd(1.0);
        let before = devtensor::live_handle_count();
        let a = LrScheduler::step_lr(&opt, 1, 0.5).unwrap();
        let b = a.share();
        b.step().unwrap();
        assert_eq!(a.last_epoch().unwrap(), 1, "the shared handle is another scheduler");
        drop(a);
        b.step().unwrap(); // still alive through the shared handle
        assert_eq!((b.last_epoch().unwrap(), opt.lr().unwrap()), (2, 0.25));
        drop(b);
        assert_eq!(devtensor::live_handle_count(), before, "the scheduler was not freed");
        // Through the raw crate: into_raw carries the reference out and back.
        let c = LrScheduler::exponential_lr(&opt, 0.5).unwrap();
        let raw = c.into_raw();
        let c = unsafe { LrScheduler::from_raw(raw) };
        assert_eq!(c.kind().unwrap(), "ExponentialLR");
    });
}

#[test]
fn a_scheduler_keeps_stepping_after_its_optimizer_value_is_dropped() {
    leak_checked(|| {
        let p = param();
        let opt = Sgd::new(std::slice::from_ref(&p), 1.0).build().unwrap();
        let sched = LrScheduler::step_lr(&opt, 1, 0.5).unwrap();
        drop(opt); // the scheduler holds the optimizer
        sched.step().unwrap();
        sched.step().unwrap();
        assert_eq!(sched.last_lr().unwrap(), 0.25);
        assert_eq!(sched.state_dict().unwrap().get("last_lr").unwrap().unwrap().item().unwrap(), 0.25);
        // leak_checked: dropping the scheduler frees the optimizer too.
    });
}

#[test]
fn schedulers_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<LrScheduler>();
    leak_checked(|| {
        let opt = sgd(1.0);
        let sched = LrScheduler::exponential_lr(&opt, 0.5).unwrap();
        // Steps from four threads at once: serialised by the library, none lost.
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| sched.step().unwrap());
            }
        });
        assert_eq!(sched.last_epoch().unwrap(), 4);
        assert_eq!(opt.lr().unwrap(), 0.0625);
        // And one moved to another thread.
        let moved = sched.share();
        let lr = std::thread::spawn(move || {
            moved.step().unwrap();
            moved.last_lr().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(lr, 0.03125);
    });
}

#[test]
fn lambda_lr_scales_the_initial_rate_by_the_closure() {
    leak_checked(|| {
        let mut opt = sgd(0.2);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let sched = LrScheduler::lambda_lr(&opt, move |e| {
            log.lock().unwrap().push(e);
            1.0 / (e + 1) as f64
        })
        .unwrap();
        assert_eq!(sched.kind().unwrap(), "LambdaLR");
        assert_near("rates", &rates(&opt, &sched, 3), &[0.2, 0.1, 0.2 / 3.0, 0.05], 1e-15);
        assert_eq!(*seen.lock().unwrap(), [0, 1, 2, 3]);
        // Not chained: a rate set by hand is overridden by the next step.
        opt.set_lr(5.0).unwrap();
        sched.step().unwrap();
        assert_near("rate after set_lr", &[opt.lr().unwrap()], &[0.04], 1e-15);
    });
}

#[test]
fn multiplicative_lr_multiplies_from_the_first_step() {
    leak_checked(|| {
        let opt = sgd(0.8);
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let n = calls.clone();
        let sched = LrScheduler::multiplicative_lr(&opt, move |_| {
            n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            0.5
        })
        .unwrap();
        assert_eq!(sched.kind().unwrap(), "MultiplicativeLR");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(rates(&opt, &sched, 3), [0.8, 0.4, 0.2, 0.1]);
        assert_eq!(state(&sched, "last_epoch"), 3.0);
    });
}

#[test]
fn the_closure_is_dropped_with_the_last_handle_or_a_failed_constructor() {
    leak_checked(|| {
        let opt = sgd(0.1);
        let token = std::sync::Arc::new(());
        let held = token.clone();
        let sched = LrScheduler::lambda_lr(&opt, move |_| {
            let _ = &held;
            1.0
        })
        .unwrap();
        let second = sched.share();
        drop(sched);
        assert_eq!(std::sync::Arc::strong_count(&token), 2, "a handle is still live");
        drop(second);
        assert_eq!(std::sync::Arc::strong_count(&token), 1, "the closure was not dropped");

        let held = token.clone();
        let err = LrScheduler::lambda_lr(&opt, move |_| {
            let _ = &held;
            f64::NAN
        })
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err.message.contains("returned nan at epoch 0"), "{}", err.message);
        assert_eq!(std::sync::Arc::strong_count(&token), 1, "the failed constructor kept the closure");
        assert_eq!(opt.lr().unwrap(), 0.1);
    });
}

#[test]
fn a_panic_or_a_negative_factor_fails_the_step_and_changes_nothing() {
    leak_checked(|| {
        let opt = sgd(1.0);
        let mode = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let m = mode.clone();
        let sched = LrScheduler::multiplicative_lr(&opt, move |e| {
            match m.load(std::sync::atomic::Ordering::SeqCst) {
                1 => panic!("no factor for epoch {e}"),
                2 => -1.0,
                _ => 0.5,
            }
        })
        .unwrap();
        sched.step().unwrap(); // epoch 1: 0.5
        for (k, want) in [
            (1, "returned NaN at epoch 2 (a factor must be a finite number) (the closure panicked: no factor for epoch 2)"),
            (2, "which makes the rate -0.5"),
        ] {
            mode.store(k, std::sync::atomic::Ordering::SeqCst);
            let err = sched.step().unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument);
            assert!(err.message.to_lowercase().contains(&want.to_lowercase()), "{}", err.message);
            assert_eq!((opt.lr().unwrap(), sched.last_epoch().unwrap()), (0.5, 1));
        }
        mode.store(0, std::sync::atomic::Ordering::SeqCst);
        sched.step().unwrap();
        assert_eq!((opt.lr().unwrap(), sched.last_epoch().unwrap()), (0.25, 2));
        // A chain that steps it says so too.
        let chain = LrScheduler::chained_scheduler(&[&sched]).unwrap();
        mode.store(1, std::sync::atomic::Ordering::SeqCst);
        let err = chain.step().unwrap_err();
        assert!(err.message.contains("(the closure panicked: no factor for epoch 3)"), "{}", err.message);
        assert_eq!((opt.lr().unwrap(), sched.last_epoch().unwrap()), (0.25, 2));
    });
}

#[test]
fn scheduler_calls_from_inside_the_closure_are_refused() {
    leak_checked(|| {
        let opt = sgd(0.1);
        // The closure reaches the scheduler through this slot (emptied at the end, or the
        // scheduler and its closure would hold each other forever).
        let slot: std::sync::Arc<std::sync::Mutex<Option<LrScheduler>>> = Default::default();
        let errors = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (s, errs) = (slot.clone(), errors.clone());
        let sched = LrScheduler::lambda_lr(&opt, move |_| {
            if let Some(me) = s.lock().unwrap().as_ref() {
                errs.lock().unwrap().push(me.last_lr().unwrap_err().code);
            }
            1.0
        })
        .unwrap();
        *slot.lock().unwrap() = Some(sched.share());
        sched.step().unwrap(); // no deadlock
        assert_eq!(*errors.lock().unwrap(), [ErrorCode::InvalidArgument]);
        *slot.lock().unwrap() = None;
    });
}

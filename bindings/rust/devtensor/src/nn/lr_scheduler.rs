//! Learning-rate schedulers, as `torch.optim.lr_scheduler` (PyTorch 1.13's formulas):
//! [`LrScheduler`] over a `dt_lr_scheduler` handle, with the option structs
//! [`OneCycleOptions`], [`CyclicOptions`] and [`PlateauOptions`] and their enums.

use super::lr_lambda::{explain_panic, forget_panic};
use super::Optimizer;
use crate::error::{check, Error, ErrorCode, Result};
use crate::{check_version, read_string, StateDict};
use devtensor_sys as ffi;
use std::ffi::CStr;
use std::fmt;
use std::ptr::NonNull;

/// How [`OneCycleLR`](LrScheduler::one_cycle_lr) moves between its rates, PyTorch's
/// `anneal_strategy="cos"` or `"linear"`.
///
/// ```
/// use devtensor::nn::AnnealStrategy;
/// assert_eq!(AnnealStrategy::default(), AnnealStrategy::Cos);
/// assert_eq!(AnnealStrategy::Linear.as_str(), "linear");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnnealStrategy {
    /// `"cos"` (PyTorch's default): half a cosine from one rate to the next.
    Cos,
    /// `"linear"`: a straight line.
    Linear,
}

impl Default for AnnealStrategy {
    /// [`AnnealStrategy::Cos`], PyTorch's `anneal_strategy="cos"`.
    fn default() -> AnnealStrategy {
        AnnealStrategy::Cos
    }
}

impl AnnealStrategy {
    /// PyTorch's name: `"cos"` or `"linear"`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnnealStrategy::Cos => "cos",
            AnnealStrategy::Linear => "linear",
        }
    }
    fn c_name(self) -> &'static CStr {
        match self {
            AnnealStrategy::Cos => c"cos",
            AnnealStrategy::Linear => c"linear",
        }
    }
}

/// How [`CyclicLR`](LrScheduler::cyclic_lr) scales the height of each cycle, PyTorch's
/// `mode="triangular"`, `"triangular2"` or `"exp_range"`.
///
/// ```
/// use devtensor::nn::CyclicMode;
/// assert_eq!(CyclicMode::default(), CyclicMode::Triangular);
/// assert_eq!(CyclicMode::ExpRange.as_str(), "exp_range");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CyclicMode {
    /// `"triangular"` (PyTorch's default): every cycle the same height.
    Triangular,
    /// `"triangular2"`: each cycle half as high as the one before.
    Triangular2,
    /// `"exp_range"`: the height times `gamma^step`.
    ExpRange,
}

impl Default for CyclicMode {
    /// [`CyclicMode::Triangular`], PyTorch's `mode="triangular"`.
    fn default() -> CyclicMode {
        CyclicMode::Triangular
    }
}

impl CyclicMode {
    /// PyTorch's name: `"triangular"`, `"triangular2"` or `"exp_range"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CyclicMode::Triangular => "triangular",
            CyclicMode::Triangular2 => "triangular2",
            CyclicMode::ExpRange => "exp_range",
        }
    }
    fn c_name(self) -> &'static CStr {
        match self {
            CyclicMode::Triangular => c"triangular",
            CyclicMode::Triangular2 => c"triangular2",
            CyclicMode::ExpRange => c"exp_range",
        }
    }
}

/// Whether [`ReduceLROnPlateau`](LrScheduler::reduce_lr_on_plateau) waits for the metric
/// to fall or to rise, PyTorch's `mode="min"` or `"max"`.
///
/// ```
/// use devtensor::nn::PlateauMode;
/// assert_eq!(PlateauMode::default(), PlateauMode::Min);
/// assert_eq!(PlateauMode::Max.as_str(), "max");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlateauMode {
    /// `"min"` (PyTorch's default): lower is better (a loss).
    Min,
    /// `"max"`: higher is better (an accuracy).
    Max,
}

impl Default for PlateauMode {
    /// [`PlateauMode::Min`], PyTorch's `mode="min"`.
    fn default() -> PlateauMode {
        PlateauMode::Min
    }
}

impl PlateauMode {
    /// PyTorch's name: `"min"` or `"max"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PlateauMode::Min => "min",
            PlateauMode::Max => "max",
        }
    }
    fn c_name(self) -> &'static CStr {
        match self {
            PlateauMode::Min => c"min",
            PlateauMode::Max => c"max",
        }
    }
}

/// How [`ReduceLROnPlateau`](LrScheduler::reduce_lr_on_plateau)'s `threshold` measures
/// an improvement, PyTorch's `threshold_mode="rel"` or `"abs"`.
///
/// ```
/// use devtensor::nn::ThresholdMode;
/// assert_eq!(ThresholdMode::default(), ThresholdMode::Rel);
/// assert_eq!(ThresholdMode::Abs.as_str(), "abs");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThresholdMode {
    /// `"rel"` (PyTorch's default): better than `best * (1 - threshold)` (mode min) or
    /// `best * (1 + threshold)` (mode max).
    Rel,
    /// `"abs"`: better than `best - threshold` (mode min) or `best + threshold` (mode
    /// max).
    Abs,
}

impl Default for ThresholdMode {
    /// [`ThresholdMode::Rel`], PyTorch's `threshold_mode="rel"`.
    fn default() -> ThresholdMode {
        ThresholdMode::Rel
    }
}

impl ThresholdMode {
    /// PyTorch's name: `"rel"` or `"abs"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ThresholdMode::Rel => "rel",
            ThresholdMode::Abs => "abs",
        }
    }
    fn c_name(self) -> &'static CStr {
        match self {
            ThresholdMode::Rel => c"rel",
            ThresholdMode::Abs => c"abs",
        }
    }
}

/// The settings of `torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr, total_steps)`,
/// for [`LrScheduler::one_cycle_lr`]. [`OneCycleOptions::new`] takes the two PyTorch
/// requires and gives PyTorch's defaults for the rest: `pct_start=0.3`,
/// `anneal_strategy="cos"`, `cycle_momentum=True`, `base_momentum=0.85`,
/// `max_momentum=0.95`, `div_factor=25`, `final_div_factor=1e4`, `three_phase=False`.
/// (PyTorch's `epochs` and `steps_per_epoch` are `total_steps = epochs *
/// steps_per_epoch`.)
///
/// ```
/// use devtensor::nn::{AnnealStrategy, OneCycleOptions};
/// let o = OneCycleOptions { anneal_strategy: AnnealStrategy::Linear, ..OneCycleOptions::new(0.5, 100) };
/// assert_eq!((o.max_lr, o.total_steps, o.pct_start), (0.5, 100, 0.3));
/// assert_eq!((o.div_factor, o.final_div_factor, o.three_phase), (25.0, 1e4, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneCycleOptions {
    /// The peak rate (finite, >= 0).
    pub max_lr: f64,
    /// The number of steps in the cycle (>= 1); the scheduler may be stepped this many
    /// times after construction, no more.
    pub total_steps: i64,
    /// The part of the cycle spent rising, in [0, 1] (default 0.3); each phase needs at
    /// least one step (`pct_start * total_steps > 1`, `pct_start < 1`).
    pub pct_start: f64,
    /// The shape of each phase (default [`AnnealStrategy::Cos`]).
    pub anneal_strategy: AnnealStrategy,
    /// Whether the momentum (SGD's `momentum`, Adam's `beta1`) moves inversely to the
    /// rate, between `max_momentum` and `base_momentum` (default `true`); the optimizer
    /// must have one then (Adagrad is refused).
    pub cycle_momentum: bool,
    /// The momentum at the peak rate (default 0.85).
    pub base_momentum: f64,
    /// The momentum at the start and the end (default 0.95).
    pub max_momentum: f64,
    /// The first rate is `max_lr / div_factor` (default 25).
    pub div_factor: f64,
    /// The last rate is `max_lr / div_factor / final_div_factor` (default 1e4).
    pub final_div_factor: f64,
    /// `true`: up to `max_lr`, back down to `max_lr / div_factor`, then down to the last
    /// rate; `false` (the default): up, then straight down to the last rate.
    pub three_phase: bool,
}

impl OneCycleOptions {
    /// A cycle peaking at `max_lr` over `total_steps` steps, with PyTorch's defaults for
    /// the rest (see the type).
    pub fn new(max_lr: f64, total_steps: i64) -> OneCycleOptions {
        OneCycleOptions {
            max_lr,
            total_steps,
            pct_start: 0.3,
            anneal_strategy: AnnealStrategy::Cos,
            cycle_momentum: true,
            base_momentum: 0.85,
            max_momentum: 0.95,
            div_factor: 25.0,
            final_div_factor: 1e4,
            three_phase: false,
        }
    }
}

/// The settings of `torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr, max_lr)`, for
/// [`LrScheduler::cyclic_lr`]. [`CyclicOptions::new`] takes the two PyTorch requires and
/// gives PyTorch's defaults for the rest: `step_size_up=2000`, `step_size_down=None`
/// (0 here), `mode="triangular"`, `gamma=1`, `cycle_momentum=True`,
/// `base_momentum=0.8`, `max_momentum=0.9`. PyTorch's custom `scale_fn` is not offered.
///
/// ```
/// use devtensor::nn::{CyclicMode, CyclicOptions};
/// let o = CyclicOptions { mode: CyclicMode::Triangular2, step_size_up: 500, ..CyclicOptions::new(0.001, 0.01) };
/// assert_eq!((o.base_lr, o.max_lr, o.step_size_up, o.step_size_down), (0.001, 0.01, 500, 0));
/// assert_eq!((o.gamma, o.cycle_momentum, o.base_momentum, o.max_momentum), (1.0, true, 0.8, 0.9));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CyclicOptions {
    /// The rate at the bottom of each cycle (finite, >= 0).
    pub base_lr: f64,
    /// The rate at the top of the first cycle (finite, >= 0).
    pub max_lr: f64,
    /// Steps from the bottom to the top (>= 1; default 2000).
    pub step_size_up: i64,
    /// Steps from the top back down (0, the default: as many as `step_size_up`).
    pub step_size_down: i64,
    /// How each cycle's height is scaled (default [`CyclicMode::Triangular`]).
    pub mode: CyclicMode,
    /// The per-step factor of [`CyclicMode::ExpRange`] (finite, >= 0; default 1).
    pub gamma: f64,
    /// Whether the momentum (SGD's `momentum`, Adam's `beta1`, as PyTorch 2; PyTorch
    /// 1.13 refuses Adam) moves inversely to the rate, between `max_momentum` and
    /// `base_momentum` (default `true`); the optimizer must have one then (Adagrad is
    /// refused).
    pub cycle_momentum: bool,
    /// The momentum at the top of a cycle (default 0.8).
    pub base_momentum: f64,
    /// The momentum at the bottom (default 0.9).
    pub max_momentum: f64,
}

impl CyclicOptions {
    /// A cycle between `base_lr` and `max_lr`, with PyTorch's defaults for the rest (see
    /// the type).
    pub fn new(base_lr: f64, max_lr: f64) -> CyclicOptions {
        CyclicOptions {
            base_lr,
            max_lr,
            step_size_up: 2000,
            step_size_down: 0,
            mode: CyclicMode::Triangular,
            gamma: 1.0,
            cycle_momentum: true,
            base_momentum: 0.8,
            max_momentum: 0.9,
        }
    }
}

/// The settings of `torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)`, for
/// [`LrScheduler::reduce_lr_on_plateau`]; [`Default`] is PyTorch's: `mode="min"`,
/// `factor=0.1`, `patience=10`, `threshold=1e-4`, `threshold_mode="rel"`, `cooldown=0`,
/// `min_lr=0`, `eps=1e-8`.
///
/// ```
/// use devtensor::nn::{PlateauMode, PlateauOptions, ThresholdMode};
/// let o = PlateauOptions { mode: PlateauMode::Max, patience: 2, ..PlateauOptions::default() };
/// assert_eq!((o.factor, o.threshold, o.threshold_mode), (0.1, 1e-4, ThresholdMode::Rel));
/// assert_eq!((o.cooldown, o.min_lr, o.eps), (0, 0.0, 1e-8));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlateauOptions {
    /// Whether a lower or a higher metric is better (default [`PlateauMode::Min`]).
    pub mode: PlateauMode,
    /// The rate is multiplied by it on a plateau, in [0, 1) (default 0.1).
    pub factor: f64,
    /// How many steps in a row without improvement are tolerated; the rate falls at the
    /// next (default 10, >= 0).
    pub patience: i64,
    /// The least change that counts as an improvement (default 1e-4, >= 0).
    pub threshold: f64,
    /// Whether `threshold` is relative or absolute (default [`ThresholdMode::Rel`]).
    pub threshold_mode: ThresholdMode,
    /// Steps after a reduction that are not counted (default 0, >= 0).
    pub cooldown: i64,
    /// The rate never falls below it (default 0, >= 0).
    pub min_lr: f64,
    /// A reduction smaller than this is skipped (default 1e-8, >= 0).
    pub eps: f64,
}

impl Default for PlateauOptions {
    fn default() -> PlateauOptions {
        PlateauOptions {
            mode: PlateauMode::Min,
            factor: 0.1,
            patience: 10,
            threshold: 1e-4,
            threshold_mode: ThresholdMode::Rel,
            cooldown: 0,
            min_lr: 0.0,
            eps: 1e-8,
        }
    }
}

/// A learning-rate scheduler bound to one [`Optimizer`] (`dt_lr_scheduler`), as the
/// classes of `torch.optim.lr_scheduler` (PyTorch 1.13's formulas): StepLR, MultiStepLR,
/// ExponentialLR, LinearLR, ConstantLR, PolynomialLR, CosineAnnealingLR,
/// CosineAnnealingWarmRestarts, OneCycleLR, CyclicLR, ReduceLROnPlateau, SequentialLR,
/// ChainedScheduler, LambdaLR and MultiplicativeLR, one constructor each.
///
/// It sets the optimizer's rate ([`Optimizer::lr`] reads it). Making one makes its first
/// step at once: the rate becomes the schedule's rate for epoch 0 (LinearLR's
/// `start_factor * lr`, ConstantLR's `factor * lr`, OneCycleLR's `max_lr / div_factor`,
/// CyclicLR's `base_lr`, LambdaLR's `f(0) * lr`; the others leave it as it is). Then call [`step`](LrScheduler::step) once per epoch (or per batch, as the
/// schedule is meant) after [`Optimizer::step`], as in PyTorch; ReduceLROnPlateau steps
/// with the metric it watches ([`step_metric`](LrScheduler::step_metric)) instead.
///
/// The rate each starts from (PyTorch's `base_lrs`, the optimizer's `"initial_lr"`) is
/// the optimizer's rate when its first scheduler is made; later schedulers of the same
/// optimizer start from that value too. Steps use PyTorch's chained formulas (each
/// scales the optimizer's current rate), so several schedulers stacked on one optimizer,
/// or a rate set by hand between steps, combine as they do in PyTorch.
///
/// The scheduler holds its own reference to the optimizer: it keeps working after the
/// [`Optimizer`] value it was made from is dropped. An `LrScheduler` owns one reference
/// to the scheduler: `share()` adds one (`dt_lr_scheduler_retain`; the result is the
/// SAME scheduler, stepping either steps both, not a copy), dropping releases it and
/// never panics; the last reference frees the scheduler and its hold on the optimizer.
///
/// A linear warm-up, then a cosine down to 0 (SequentialLR of LinearLR and
/// CosineAnnealingLR), stepped once per epoch:
///
/// ```
/// use devtensor::nn::{LrScheduler, Module, MseLoss, Sgd};
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let model = Module::linear(4, 1, true, DType::Float32, Device::CPU)?;
/// let mut opt = Sgd::new(&model.parameters()?, 0.1).momentum(0.9).build()?;
/// // 3 epochs rising from 0.1 * 0.1 to 0.1, then a cosine from 0.1 to 0 over 6 epochs.
/// let warmup = LrScheduler::linear_lr(&opt, 0.1, 1.0, 3)?;
/// let cosine = LrScheduler::cosine_annealing_lr(&opt, 6, 0.0)?;
/// let sched = LrScheduler::sequential_lr(&opt, &[&warmup, &cosine], &[3])?;
/// let loss_fn = MseLoss::new().build()?;
/// let x = Tensor::randn(&[8, 4], DType::Float32, Device::CPU)?;
/// let y = Tensor::zeros(&[8, 1], DType::Float32, Device::CPU)?;
/// let mut rates = Vec::new();
/// for _epoch in 0..9 {
///     rates.push(opt.lr()?); // the rate this epoch trains with
///     // for each batch of the epoch:
///     opt.zero_grad()?;
///     loss_fn.loss(&model.forward(&x)?, &y)?.backward()?;
///     opt.step()?;
///     // at the end of the epoch, after the optimizer's steps, as in PyTorch:
///     sched.step()?;
/// }
/// let want = [0.01, 0.04, 0.07, 0.1, 0.0933, 0.075, 0.05, 0.025, 0.0067];
/// for (got, want) in rates.iter().zip(want) {
///     assert!((got - want).abs() < 1e-4, "{rates:?}");
/// }
/// assert_eq!(sched.kind()?, "SequentialLR");
/// assert_eq!(sched.last_epoch()?, 9);
/// # Ok(()) }
/// ```
pub struct LrScheduler {
    ptr: NonNull<ffi::dt_lr_scheduler>,
}

// SAFETY: include/devtensor.h, "learning-rate schedulers": "Calls on one scheduler are
// serialised" (the library locks each scheduler), and every function is safe from any
// thread with atomic reference counts and handle checks; the optimizer's rate, which a
// step writes, is set through dt_optimizer_set_lr, itself safe from any thread. An
// LrScheduler is only a handle; every method takes `&self`, and a reference is released
// only in Drop, which needs ownership, so no thread can release a handle another thread
// is using.
unsafe impl Send for LrScheduler {}
unsafe impl Sync for LrScheduler {}

raw_handle!(
    LrScheduler,
    "devtensor::nn::LrScheduler",
    dt_lr_scheduler,
    dt_lr_scheduler_retain,
    dt_lr_scheduler_release,
    "devtensor::nn::LrScheduler::step_lr(&devtensor::nn::Sgd::new(&devtensor::nn::Module::linear(2, 2, true, devtensor::DType::Float32, devtensor::Device::CPU)?.parameters()?, 0.1).build()?, 2, 0.5)?"
);

pub(super) fn new_scheduler(
    call: impl FnOnce(*mut *mut ffi::dt_lr_scheduler) -> ffi::dt_status,
) -> Result<LrScheduler> {
    check_version()?;
    let mut out: *mut ffi::dt_lr_scheduler = std::ptr::null_mut();
    forget_panic();
    check(call(&mut out)).map_err(explain_panic)?;
    NonNull::new(out)
        .map(|ptr| LrScheduler { ptr })
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL scheduler",
            )
        })
}

/// A pointer for `n` elements of `v`: NULL for none (the header allows it then).
fn slice_ptr<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        std::ptr::null()
    } else {
        v.as_ptr()
    }
}

impl LrScheduler {
    /// `torch.optim.lr_scheduler.StepLR(optimizer, step_size, gamma)` (`dt_step_lr_new`;
    /// PyTorch's default `gamma` is 0.1): the rate is multiplied by `gamma` every
    /// `step_size` epochs (`step_size >= 1`, `gamma >= 0`).
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 1.0).build()?;
    /// let sched = LrScheduler::step_lr(&opt, 2, 0.5)?;
    /// let mut rates = vec![opt.lr()?];
    /// for _ in 0..4 {
    ///     sched.step()?;
    ///     rates.push(opt.lr()?);
    /// }
    /// assert_eq!(rates, [1.0, 1.0, 0.5, 0.5, 0.25]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (`step_size < 1`, a negative or NaN `gamma`: the
    /// message names it), [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then.
    pub fn step_lr(opt: &Optimizer, step_size: i64, gamma: f64) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe { ffi::dt_step_lr_new(opt.as_raw(), step_size, gamma, o) })
    }

    /// `torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, gamma)`
    /// (`dt_multi_step_lr_new`; PyTorch's default `gamma` is 0.1): the rate is multiplied
    /// by `gamma` at each epoch in `milestones` (any order; one listed twice multiplies
    /// twice, as PyTorch's `Counter`).
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 1.0).build()?;
    /// let sched = LrScheduler::multi_step_lr(&opt, &[1, 3], 0.5)?;
    /// let mut rates = vec![opt.lr()?];
    /// for _ in 0..4 {
    ///     sched.step()?;
    ///     rates.push(opt.lr()?);
    /// }
    /// assert_eq!(rates, [1.0, 0.5, 0.5, 0.25, 0.25]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a negative milestone, a negative or NaN `gamma`:
    /// the message names it), [`ErrorCode::InvalidHandle`]. The optimizer is unchanged
    /// then.
    pub fn multi_step_lr(opt: &Optimizer, milestones: &[i64], gamma: f64) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe {
            ffi::dt_multi_step_lr_new(opt.as_raw(), slice_ptr(milestones), milestones.len(), gamma, o)
        })
    }

    /// `torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma)`
    /// (`dt_exponential_lr_new`): the rate is multiplied by `gamma` (>= 0) every epoch.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.8).build()?;
    /// let sched = LrScheduler::exponential_lr(&opt, 0.5)?;
    /// sched.step()?;
    /// sched.step()?;
    /// assert_eq!(opt.lr()?, 0.2);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a negative or NaN `gamma`),
    /// [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then.
    pub fn exponential_lr(opt: &Optimizer, gamma: f64) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe { ffi::dt_exponential_lr_new(opt.as_raw(), gamma, o) })
    }

    /// `torch.optim.lr_scheduler.LinearLR(optimizer, start_factor, end_factor,
    /// total_iters)` (`dt_linear_lr_new`; PyTorch's defaults: `start_factor=1/3`,
    /// `end_factor=1.0`, `total_iters=5`), a warm-up: the rate goes linearly from
    /// `start_factor` times the initial rate (epoch 0, so construction sets it; in
    /// (0, 1]) to `end_factor` times it (epoch `total_iters` and after; in [0, 1];
    /// `total_iters >= 1`). PyTorch 1.13 takes a `start_factor` of 0 and divides by zero
    /// at the second step; later versions and this one refuse it.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::linear_lr(&opt, 0.5, 1.0, 2)?;
    /// assert_eq!(opt.lr()?, 0.05); // set at construction
    /// sched.step()?;
    /// assert!((opt.lr()? - 0.075).abs() < 1e-12);
    /// sched.step()?;
    /// assert!((opt.lr()? - 0.1).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a factor out of its range, `total_iters < 1`: the
    /// message names it), [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then.
    pub fn linear_lr(
        opt: &Optimizer,
        start_factor: f64,
        end_factor: f64,
        total_iters: i64,
    ) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe {
            ffi::dt_linear_lr_new(opt.as_raw(), start_factor, end_factor, total_iters, o)
        })
    }

    /// `torch.optim.lr_scheduler.ConstantLR(optimizer, factor, total_iters)`
    /// (`dt_constant_lr_new`; PyTorch's defaults: `factor=1/3`, `total_iters=5`), a
    /// warm-up at one lower rate: `factor` times the initial rate for epochs 0 to
    /// `total_iters - 1` (so construction sets it), then the initial rate. `factor` in
    /// (0, 1], `total_iters >= 1`: PyTorch 1.13 takes a `factor` of 0 and divides by zero
    /// at `total_iters`, and a `total_iters` of 0 that never gives the rate back; this
    /// one refuses both.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::constant_lr(&opt, 0.5, 2)?;
    /// assert_eq!(opt.lr()?, 0.05); // set at construction
    /// sched.step()?;
    /// assert_eq!(opt.lr()?, 0.05);
    /// sched.step()?; // epoch 2: the whole rate again
    /// assert!((opt.lr()? - 0.1).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (`factor` out of (0, 1], `total_iters < 1`: the
    /// message names it), [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then.
    pub fn constant_lr(opt: &Optimizer, factor: f64, total_iters: i64) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe { ffi::dt_constant_lr_new(opt.as_raw(), factor, total_iters, o) })
    }

    /// `torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters, power)`
    /// (`dt_polynomial_lr_new`; PyTorch's defaults: `total_iters=5`, `power=1.0`): at
    /// epoch `e` the rate is the initial rate times `(1 - min(e, total_iters) /
    /// total_iters)^power`, down to 0 at `total_iters` (`power` 0: left as it is).
    /// `total_iters >= 1` and a finite `power >= 0`: PyTorch 1.13 checks neither, and
    /// divides by zero or raises 0 to a negative power.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::polynomial_lr(&opt, 4, 1.0)?;
    /// sched.step()?;
    /// assert!((opt.lr()? - 0.075).abs() < 1e-12); // 0.1 * (1 - 1/4)
    /// for _ in 0..3 {
    ///     sched.step()?;
    /// }
    /// assert_eq!(opt.lr()?, 0.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (`total_iters < 1`, a negative or non-finite
    /// `power`: the message names it), [`ErrorCode::InvalidHandle`]. The optimizer is
    /// unchanged then.
    pub fn polynomial_lr(opt: &Optimizer, total_iters: i64, power: f64) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe { ffi::dt_polynomial_lr_new(opt.as_raw(), total_iters, power, o) })
    }

    /// `torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max, eta_min)`
    /// (`dt_cosine_annealing_lr_new`; PyTorch's default `eta_min` is 0): at epoch `e` the
    /// rate is `eta_min + (initial - eta_min) * (1 + cos(pi * e / t_max)) / 2`, by
    /// PyTorch's chained form (past `t_max` it rises again, a cosine of period
    /// `2 * t_max`; `t_max >= 1`, `eta_min >= 0`).
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::cosine_annealing_lr(&opt, 4, 0.0)?;
    /// sched.step()?;
    /// sched.step()?; // half way: cos(pi / 2) = 0
    /// assert!((opt.lr()? - 0.05).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (`t_max < 1`, a negative or NaN `eta_min`),
    /// [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then.
    pub fn cosine_annealing_lr(opt: &Optimizer, t_max: i64, eta_min: f64) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe { ffi::dt_cosine_annealing_lr_new(opt.as_raw(), t_max, eta_min, o) })
    }

    /// `torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0, T_mult,
    /// eta_min)` (`dt_cosine_annealing_warm_restarts_new`; PyTorch's defaults:
    /// `T_mult=1`, `eta_min=0`), SGDR: a cosine from the initial rate to `eta_min` over
    /// `t_0` epochs, then again from the top over `t_0 * t_mult`, `t_0 * t_mult^2`, ...
    /// epochs (`t_0 >= 1`, `t_mult >= 1`, `eta_min >= 0`). Its
    /// [`state_dict`](LrScheduler::state_dict) holds `T_cur` and `T_i`.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 1.0).build()?;
    /// let sched = LrScheduler::cosine_annealing_warm_restarts(&opt, 2, 1, 0.0)?;
    /// let mut rates = vec![opt.lr()?];
    /// for _ in 0..4 {
    ///     sched.step()?;
    ///     rates.push(opt.lr()?);
    /// }
    /// assert_eq!(rates, [1.0, 0.5, 1.0, 0.5, 1.0]); // a restart every 2 epochs
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (`t_0 < 1`, `t_mult < 1`, a negative or NaN
    /// `eta_min`), [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then.
    pub fn cosine_annealing_warm_restarts(
        opt: &Optimizer,
        t_0: i64,
        t_mult: i64,
        eta_min: f64,
    ) -> Result<LrScheduler> {
        new_scheduler(|o| unsafe {
            ffi::dt_cosine_annealing_warm_restarts_new(opt.as_raw(), t_0, t_mult, eta_min, o)
        })
    }

    /// `torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr, total_steps, ...)`
    /// (`dt_one_cycle_lr_new`; [`OneCycleOptions::new`] gives PyTorch's defaults), one
    /// step per batch: the rate rises from `max_lr / div_factor` (set at construction) to
    /// `max_lr` over the first `pct_start` of `total_steps`, then falls to `max_lr /
    /// div_factor / final_div_factor` (`three_phase`: back to `max_lr / div_factor`
    /// first, then down). With `cycle_momentum` the optimizer's momentum (SGD's
    /// `"momentum"`, Adam's `"beta1"`, see [`Optimizer::option`]) moves the other way,
    /// from `max_momentum` down to `base_momentum` and back. Stepping more than
    /// `total_steps` times fails, as PyTorch's `ValueError`.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, OneCycleOptions, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).momentum(0.9).build()?;
    /// let sched = LrScheduler::one_cycle_lr(&opt, &OneCycleOptions::new(0.5, 10))?;
    /// assert!((opt.lr()? - 0.5 / 25.0).abs() < 1e-12); // max_lr / div_factor
    /// assert_eq!(opt.option("momentum")?, 0.95); // max_momentum
    /// for _ in 0..2 {
    ///     sched.step()?; // pct_start 0.3 of 10 steps: the peak at step 2
    /// }
    /// assert!((opt.lr()? - 0.5).abs() < 1e-12);
    /// assert!((opt.option("momentum")? - 0.85).abs() < 1e-12); // base_momentum
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a setting out of range, a `pct_start` that leaves
    /// a phase without steps, `cycle_momentum` on an optimizer without a momentum, such as
    /// Adagrad: the message names it), [`ErrorCode::InvalidHandle`]. The optimizer is
    /// unchanged then.
    pub fn one_cycle_lr(opt: &Optimizer, options: &OneCycleOptions) -> Result<LrScheduler> {
        let o = options;
        new_scheduler(|out| unsafe {
            ffi::dt_one_cycle_lr_new(
                opt.as_raw(),
                o.max_lr,
                o.total_steps,
                o.pct_start,
                o.anneal_strategy.c_name().as_ptr(),
                o.cycle_momentum as i32,
                o.base_momentum,
                o.max_momentum,
                o.div_factor,
                o.final_div_factor,
                o.three_phase as i32,
                out,
            )
        })
    }

    /// `torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr, max_lr, ...)`
    /// (`dt_cyclic_lr_new`; [`CyclicOptions::new`] gives PyTorch's defaults), one step
    /// per batch: the rate goes from `base_lr` (set at construction, or the optimizer's
    /// initial rate when an earlier scheduler set one, as PyTorch) up to `max_lr` over
    /// `step_size_up` steps and back down over `step_size_down`, again and again, each
    /// cycle's height scaled by its [`CyclicMode`]. With `cycle_momentum` the optimizer's
    /// momentum (see [`Optimizer::option`]) moves the other way, from `max_momentum` down
    /// to `base_momentum` and back.
    ///
    /// ```
    /// use devtensor::nn::{CyclicOptions, LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).momentum(0.9).build()?;
    /// let o = CyclicOptions { step_size_up: 2, ..CyclicOptions::new(0.01, 0.05) };
    /// let sched = LrScheduler::cyclic_lr(&opt, &o)?;
    /// assert_eq!(opt.lr()?, 0.01); // base_lr
    /// sched.step()?;
    /// sched.step()?; // the top
    /// assert!((opt.lr()? - 0.05).abs() < 1e-12);
    /// assert!((opt.option("momentum")? - 0.8).abs() < 1e-12); // base_momentum
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a setting out of range, `cycle_momentum` on an
    /// optimizer without a momentum, such as Adagrad: the message names it),
    /// [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then. A
    /// [`step`](LrScheduler::step) whose rate would not be finite and `>= 0`
    /// ([`CyclicMode::ExpRange`] with `gamma > 1`, or `max_lr` below `base_lr`, can get
    /// there) fails with [`ErrorCode::InvalidArgument`] and changes nothing.
    pub fn cyclic_lr(opt: &Optimizer, options: &CyclicOptions) -> Result<LrScheduler> {
        let o = options;
        new_scheduler(|out| unsafe {
            ffi::dt_cyclic_lr_new(
                opt.as_raw(),
                o.base_lr,
                o.max_lr,
                o.step_size_up,
                o.step_size_down,
                o.mode.c_name().as_ptr(),
                o.gamma,
                o.cycle_momentum as i32,
                o.base_momentum,
                o.max_momentum,
                out,
            )
        })
    }

    /// `torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, ...)`
    /// (`dt_reduce_lr_on_plateau_new`; [`PlateauOptions::default`] is PyTorch's
    /// defaults): it steps with a metric ([`step_metric`](LrScheduler::step_metric)), not
    /// by epoch. After more than `patience` steps in a row without improvement (see
    /// [`ThresholdMode`]), the rate becomes `max(rate * factor, min_lr)` (when that
    /// changes it by more than `eps`), and the next `cooldown` steps are not counted.
    /// Making it leaves the rate as it is.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, PlateauOptions, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::reduce_lr_on_plateau(&opt, &PlateauOptions { patience: 1, ..PlateauOptions::default() })?;
    /// for val_loss in [1.0, 0.5, 0.5, 0.5] {
    ///     sched.step_metric(val_loss)?;
    /// }
    /// // 0.5 twice without improving on 0.5: more than `patience` bad steps
    /// assert!((opt.lr()? - 0.01).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (`factor` outside [0, 1), a negative `patience`,
    /// `threshold`, `cooldown`, `min_lr` or `eps`: the message names it),
    /// [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then.
    pub fn reduce_lr_on_plateau(opt: &Optimizer, options: &PlateauOptions) -> Result<LrScheduler> {
        let o = options;
        new_scheduler(|out| unsafe {
            ffi::dt_reduce_lr_on_plateau_new(
                opt.as_raw(),
                o.mode.c_name().as_ptr(),
                o.factor,
                o.patience,
                o.threshold,
                o.threshold_mode.c_name().as_ptr(),
                o.cooldown,
                o.min_lr,
                o.eps,
                out,
            )
        })
    }

    /// `torch.optim.lr_scheduler.SequentialLR(optimizer, schedulers, milestones)`
    /// (`dt_sequential_lr_new`): `schedulers[0]` until epoch `milestones[0]`, then
    /// `schedulers[1]` (restarted from its epoch 0, by its closed form) until
    /// `milestones[1]`, and so on; one milestone fewer than schedulers (increasing, each
    /// `>= 1`), and every scheduler of `opt`. As PyTorch's constructor, it sets the rate
    /// back to the initial one and starts `schedulers[0]` again. It holds its own
    /// references to the schedulers: step only the SequentialLR afterwards. The
    /// doc example of [`LrScheduler`] is a warm-up then a cosine.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: not one milestone fewer than schedulers (checked
    /// here, before the library is called), no scheduler, milestones not increasing or
    /// below 1, a scheduler of another optimizer, one listed twice, a ReduceLROnPlateau,
    /// SequentialLR or ChainedScheduler among them; [`ErrorCode::InvalidHandle`]. The
    /// optimizer is unchanged then.
    pub fn sequential_lr(
        opt: &Optimizer,
        schedulers: &[&LrScheduler],
        milestones: &[i64],
    ) -> Result<LrScheduler> {
        // The library reads schedulers.len() - 1 milestones: a shorter slice must not reach it.
        if !schedulers.is_empty() && milestones.len() + 1 != schedulers.len() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "SequentialLR: expects one milestone fewer than schedulers, got {} schedulers and {} milestones",
                    schedulers.len(),
                    milestones.len()
                ),
            ));
        }
        let h: Vec<*mut ffi::dt_lr_scheduler> = schedulers.iter().map(|s| s.as_raw()).collect();
        new_scheduler(|o| unsafe {
            ffi::dt_sequential_lr_new(opt.as_raw(), slice_ptr(&h), h.len(), slice_ptr(milestones), o)
        })
    }

    /// `torch.optim.lr_scheduler.ChainedScheduler(schedulers)` (`dt_chained_scheduler_new`):
    /// each [`step`](LrScheduler::step) steps every one of `schedulers`, in order, their
    /// rates combining by PyTorch's chained formulas. Making it steps nothing; its
    /// [`last_epoch`](LrScheduler::last_epoch) counts its own steps. A step is all or
    /// nothing: when one of them refuses, those stepped before it and the optimizer's rate
    /// and momentum are put back (a LambdaLR's closure already called is not undone). It
    /// holds its own references to the schedulers: step only the chain afterwards.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 1.0).build()?;
    /// // PyTorch's example: a tenth of the rate for two epochs, under a decay of 0.9.
    /// let constant = LrScheduler::constant_lr(&opt, 0.1, 2)?;
    /// let decay = LrScheduler::exponential_lr(&opt, 0.9)?;
    /// let chain = LrScheduler::chained_scheduler(&[&constant, &decay])?;
    /// assert!((opt.lr()? - 0.1).abs() < 1e-12);
    /// chain.step()?;
    /// assert!((opt.lr()? - 0.09).abs() < 1e-12);
    /// chain.step()?; // ConstantLR's end: back to the whole rate, decayed twice
    /// assert!((opt.lr()? - 0.81).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: no scheduler, schedulers of different optimizers,
    /// one listed twice, a ReduceLROnPlateau, SequentialLR or ChainedScheduler among
    /// them; [`ErrorCode::InvalidHandle`].
    pub fn chained_scheduler(schedulers: &[&LrScheduler]) -> Result<LrScheduler> {
        let h: Vec<*mut ffi::dt_lr_scheduler> = schedulers.iter().map(|s| s.as_raw()).collect();
        new_scheduler(|o| unsafe { ffi::dt_chained_scheduler_new(slice_ptr(&h), h.len(), o) })
    }

    /// One epoch (or batch) on, PyTorch's `scheduler.step()` (`dt_lr_scheduler_step`):
    /// the optimizer's rate is set for it. All or nothing: a failed step changes neither
    /// the optimizer nor the scheduler.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 1.0).build()?;
    /// let sched = LrScheduler::exponential_lr(&opt, 0.5)?;
    /// sched.step()?;
    /// assert_eq!((sched.last_epoch()?, sched.last_lr()?), (1, 0.5));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: a ReduceLROnPlateau (it steps with
    /// [`step_metric`](LrScheduler::step_metric)), a OneCycleLR stepped past its
    /// `total_steps`; [`ErrorCode::InvalidHandle`].
    pub fn step(&self) -> Result<()> {
        forget_panic();
        check(unsafe { ffi::dt_lr_scheduler_step(self.ptr.as_ptr()) }).map_err(explain_panic)
    }

    /// ReduceLROnPlateau's step with the metric it watches (a validation loss, say),
    /// PyTorch's `scheduler.step(metric)` (`dt_lr_scheduler_step_metric`). The example of
    /// [`reduce_lr_on_plateau`](LrScheduler::reduce_lr_on_plateau) uses it.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] for any other kind of scheduler (they step with
    /// [`step`](LrScheduler::step)), [`ErrorCode::InvalidHandle`].
    pub fn step_metric(&self, metric: f64) -> Result<()> {
        check(unsafe { ffi::dt_lr_scheduler_step_metric(self.ptr.as_ptr(), metric) })
    }

    /// The rate the scheduler last set, PyTorch's `get_last_lr()[0]`
    /// (`dt_lr_scheduler_last_lr`). The optimizer's own rate ([`Optimizer::lr`]) is the
    /// same unless something else set it since.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::linear_lr(&opt, 0.5, 1.0, 4)?;
    /// assert_eq!(sched.last_lr()?, 0.05);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`] (`dt_lr_scheduler_last_lr`).
    pub fn last_lr(&self) -> Result<f64> {
        let mut v = 0.0f64;
        check(unsafe { ffi::dt_lr_scheduler_last_lr(self.ptr.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// The epoch of the last step, PyTorch's `last_epoch` (`dt_lr_scheduler_last_epoch`):
    /// 0 right after construction, +1 per step.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::step_lr(&opt, 10, 0.1)?;
    /// assert_eq!(sched.last_epoch()?, 0);
    /// sched.step()?;
    /// assert_eq!(sched.last_epoch()?, 1);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`] (`dt_lr_scheduler_last_epoch`).
    pub fn last_epoch(&self) -> Result<i64> {
        let mut v = 0i64;
        check(unsafe { ffi::dt_lr_scheduler_last_epoch(self.ptr.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// The scheduler's kind, PyTorch's class name (`dt_lr_scheduler_kind`): `"StepLR"`,
    /// `"MultiStepLR"`, `"ExponentialLR"`, `"LinearLR"`, `"CosineAnnealingLR"`,
    /// `"CosineAnnealingWarmRestarts"`, `"OneCycleLR"`, `"ReduceLROnPlateau"` or
    /// `"SequentialLR"`.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, PlateauOptions, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// assert_eq!(LrScheduler::exponential_lr(&opt, 0.9)?.kind()?, "ExponentialLR");
    /// assert_eq!(LrScheduler::reduce_lr_on_plateau(&opt, &PlateauOptions::default())?.kind()?, "ReduceLROnPlateau");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`] (`dt_lr_scheduler_kind`).
    pub fn kind(&self) -> Result<String> {
        read_string(|b, c, n| unsafe { ffi::dt_lr_scheduler_kind(self.ptr.as_ptr(), b, c, n) })
    }

    /// The scheduler's settings and state as a new [`StateDict`], PyTorch's
    /// `scheduler.state_dict()` (`dt_lr_scheduler_state_dict`), for checkpoints (save it
    /// with [`StateDict::save`]): each number a 0-d `float64` tensor on the CPU under
    /// PyTorch's attribute name (`base_lr`, `last_epoch`, `last_lr`, then its own:
    /// `gamma`, `step_size`, `T_max`, `T_cur`, `best`, `num_bad_epochs`, ...; flags 0 or
    /// 1), MultiStepLR's and SequentialLR's `"milestones"` a 1-d `int64` tensor, and
    /// SequentialLR's schedulers' entries under `"schedulers.<k>."`. The tensors are
    /// copies. [`load_state_dict`](LrScheduler::load_state_dict) restores it.
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let sched = LrScheduler::step_lr(&opt, 3, 0.5)?;
    /// sched.step()?;
    /// let sd = sched.state_dict()?;
    /// assert_eq!(sd.get("last_epoch")?.unwrap().item()?, 1.0);
    /// assert_eq!(sd.get("step_size")?.unwrap().item()?, 3.0);
    /// assert_eq!(sd.get("gamma")?.unwrap().item()?, 0.5);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`], [`ErrorCode::OutOfMemory`]
    /// (`dt_lr_scheduler_state_dict`).
    pub fn state_dict(&self) -> Result<StateDict> {
        StateDict::from_out(|o| unsafe { ffi::dt_lr_scheduler_state_dict(self.ptr.as_ptr(), o) })
    }

    /// Restores a state from [`state_dict`](LrScheduler::state_dict) of a scheduler of
    /// the same kind, PyTorch's `scheduler.load_state_dict` (`dt_lr_scheduler_load_state_dict`);
    /// a key absent keeps its value. All or nothing: every key and value is checked, then
    /// the settings together as the constructor checks them. As PyTorch's, the optimizer
    /// is not touched: restore its rate with [`Optimizer::load_state_dict`].
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Sgd::new(&lin.parameters()?, 1.0).build()?;
    /// let sched = LrScheduler::step_lr(&opt, 2, 0.5)?;
    /// for _ in 0..3 {
    ///     sched.step()?;
    /// }
    /// let (opt_sd, sched_sd) = (opt.state_dict()?, sched.state_dict()?);
    /// // Resuming: a new optimizer and scheduler, then both states.
    /// let mut opt2 = Sgd::new(&lin.parameters()?, 1.0).build()?;
    /// let sched2 = LrScheduler::step_lr(&opt2, 2, 0.5)?;
    /// opt2.load_state_dict(&opt_sd)?;
    /// sched2.load_state_dict(&sched_sd)?;
    /// assert_eq!(sched2.last_epoch()?, 3);
    /// sched2.step()?;
    /// assert_eq!(opt2.lr()?, 0.25);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (an unknown key, such as another kind's; a value
    /// not one number; a fraction where a whole number belongs; a setting the constructor
    /// refuses: the message names the key), [`ErrorCode::InvalidHandle`]. The scheduler is
    /// unchanged then.
    pub fn load_state_dict(&self, sd: &StateDict) -> Result<()> {
        check(unsafe { ffi::dt_lr_scheduler_load_state_dict(self.ptr.as_ptr(), sd.as_raw()) })
    }
}

impl LrScheduler {
    /// A second handle to the SAME scheduler (`dt_lr_scheduler_retain`), not a copy: a
    /// step through either moves both, as `Optimizer::share`. (No `Clone`: it would read
    /// as a copy of the schedule.)
    pub fn share(&self) -> LrScheduler {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_lr_scheduler_retain(self.ptr.as_ptr()) };
        debug_assert_eq!(st, ffi::DT_OK);
        LrScheduler { ptr: self.ptr }
    }
}

impl Drop for LrScheduler {
    fn drop(&mut self) {
        // SAFETY: we own exactly one reference. Never panics.
        let _ = unsafe { ffi::dt_lr_scheduler_release(self.ptr.as_ptr()) };
    }
}

impl fmt::Debug for LrScheduler {
    /// `StepLR(last_epoch 3, last_lr 0.25)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind(), self.last_epoch(), self.last_lr()) {
            (Ok(k), Ok(e), Ok(lr)) => write!(f, "{k}(last_epoch {e}, last_lr {lr})"),
            _ => write!(f, "LrScheduler({:p})", self.ptr.as_ptr()),
        }
    }
}

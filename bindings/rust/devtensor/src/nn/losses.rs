//! The pointwise losses of `torch.nn`: [`L1Loss`], [`SmoothL1Loss`], [`HuberLoss`],
//! [`BceLoss`], [`BceWithLogitsLoss`] and [`KlDivLoss`], builders with PyTorch's defaults,
//! and the positional [`Module`] constructors they call (`Module::l1_loss`, ...).
//!
//! Each loss is a [`Module`] whose [`Module::loss`] takes `(input, target)` of the SAME
//! shape: where PyTorch broadcasts some of them with a warning, devtensor refuses with
//! [`ErrorCode::ShapeMismatch`] naming both shapes. The input is floating; the target may
//! be of any dtype and is converted to the input's (so 0/1 labels may be `int64`); both
//! may require grad, and backward follows PyTorch's formulas. The reductions are
//! [`Reduction::None`], [`Reduction::Mean`] (PyTorch's default) and [`Reduction::Sum`];
//! [`KlDivLoss`] also takes [`Reduction::BatchMean`], which every other loss refuses.
//!
//! [`ErrorCode::ShapeMismatch`]: crate::ErrorCode::ShapeMismatch
use super::norm::opt_ptr;
use super::{new_module, Module, Reduction};
use crate::error::Result;
use crate::Tensor;
use devtensor_sys as ffi;

impl Module {
    /// `L1Loss(reduction)`: `|input - target|`, reduced. [`L1Loss`] is the builder.
    ///
    /// ```
    /// use devtensor::nn::{Module, Reduction};
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let l1 = Module::l1_loss(Reduction::Sum)?;
    /// let x = Tensor::from_slice(&[1.0f32, -2.0], &[2], Device::CPU)?;
    /// let y = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
    /// assert_eq!(l1.loss(&x, &y)?.item()?, 3.0); // |1| + |-2|
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) for
    /// [`Reduction::BatchMean`] (`dt_l1_loss_new`).
    pub fn l1_loss(reduction: Reduction) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_l1_loss_new(reduction.raw(), o) })
    }
    /// `SmoothL1Loss(reduction, beta)`: with `d = input - target`, `0.5 d² / beta` where
    /// `|d| < beta`, else `|d| - 0.5 beta`. [`SmoothL1Loss`] is the builder.
    ///
    /// ```
    /// use devtensor::nn::{Module, Reduction};
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let loss_fn = Module::smooth_l1_loss(Reduction::Sum, 1.0)?;
    /// let x = Tensor::from_slice(&[0.5f32, 3.0], &[2], Device::CPU)?;
    /// let y = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
    /// assert_eq!(loss_fn.loss(&x, &y)?.item()?, 2.625); // 0.5 * 0.25 + (3 - 0.5)
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument): a negative,
    /// infinite or NaN `beta` (0 is allowed: it is the L1 loss), [`Reduction::BatchMean`]
    /// (`dt_smooth_l1_loss_new`).
    pub fn smooth_l1_loss(reduction: Reduction, beta: f64) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_smooth_l1_loss_new(reduction.raw(), beta, o) })
    }
    /// `HuberLoss(reduction, delta)`: with `d = input - target`, `0.5 d²` where
    /// `|d| < delta`, else `delta (|d| - 0.5 delta)`. [`HuberLoss`] is the builder.
    ///
    /// ```
    /// use devtensor::nn::{Module, Reduction};
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let loss_fn = Module::huber_loss(Reduction::Sum, 2.0)?;
    /// let x = Tensor::from_slice(&[0.5f32, 3.0], &[2], Device::CPU)?;
    /// let y = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
    /// assert_eq!(loss_fn.loss(&x, &y)?.item()?, 4.125); // 0.5 * 0.25 + 2 * (3 - 1)
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument): a `delta` that
    /// is not finite and > 0, [`Reduction::BatchMean`] (`dt_huber_loss_new`).
    pub fn huber_loss(reduction: Reduction, delta: f64) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_huber_loss_new(reduction.raw(), delta, o) })
    }
    /// `BCELoss(weight, reduction)`: `-weight (target log(input) + (1 - target) log(1 -
    /// input))` on probabilities, each log clamped at -100 as PyTorch's. `weight` (a
    /// floating tensor that broadcasts to the input's shape) is copied into the buffer
    /// `"weight"`. [`BceLoss`] is the builder.
    ///
    /// ```
    /// use devtensor::nn::{Module, Reduction};
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let bce = Module::bce_loss(None, Reduction::Mean)?;
    /// let p = Tensor::from_slice(&[0.5f32, 0.5], &[2], Device::CPU)?;
    /// let y = Tensor::from_slice(&[1.0f32, 0.0], &[2], Device::CPU)?;
    /// assert!((bce.loss(&p, &y)?.item()? - 2f64.ln()).abs() < 1e-6); // -ln 0.5 each
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DtypeMismatch`](crate::ErrorCode::DtypeMismatch) (a weight that is
    /// not floating), [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument)
    /// ([`Reduction::BatchMean`]) (`dt_bce_loss_new`). The loss itself fails with
    /// `InvalidArgument` when an input element lies outside [0, 1] or is NaN.
    pub fn bce_loss(weight: Option<&Tensor>, reduction: Reduction) -> Result<Module> {
        let w = opt_ptr(weight);
        new_module(|o| unsafe { ffi::dt_bce_loss_new(w, reduction.raw(), o) })
    }
    /// `BCEWithLogitsLoss(weight, reduction, pos_weight)`: sigmoid and binary cross
    /// entropy in one stable formula, `-weight (pos_weight target log σ(input) + (1 -
    /// target) log(1 - σ(input)))`. `weight` and `pos_weight` (floating tensors that
    /// broadcast to the input's shape; `pos_weight` typically one weight per class, the
    /// last dim) are copied into the buffers `"weight"` and `"pos_weight"` (only those
    /// given). [`BceWithLogitsLoss`] is the builder.
    ///
    /// ```
    /// use devtensor::nn::{Module, Reduction};
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let loss_fn = Module::bce_with_logits_loss(None, None, Reduction::Mean)?;
    /// let logits = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
    /// let y = Tensor::from_slice(&[1i64, 0], &[2], Device::CPU)?; // integer labels work
    /// assert!((loss_fn.loss(&logits, &y)?.item()? - 2f64.ln()).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Module::bce_loss`] (`dt_bce_with_logits_loss_new`).
    pub fn bce_with_logits_loss(
        weight: Option<&Tensor>,
        pos_weight: Option<&Tensor>,
        reduction: Reduction,
    ) -> Result<Module> {
        let (w, pw) = (opt_ptr(weight), opt_ptr(pos_weight));
        new_module(|o| unsafe { ffi::dt_bce_with_logits_loss_new(w, pw, reduction.raw(), o) })
    }
    /// `KLDivLoss(reduction, log_target)`: the input holds log-probabilities, the target
    /// probabilities (`log_target == false`: `target (log target - input)`, 0 where the
    /// target is 0) or log-probabilities (`true`: `exp(target) (target - input)`).
    /// [`Reduction::BatchMean`] gives the mathematical KL divergence per sample;
    /// [`Reduction::Mean`] divides by every element, as PyTorch's `"mean"`. [`KlDivLoss`]
    /// is the builder.
    ///
    /// ```
    /// use devtensor::nn::{Module, Reduction};
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let kl = Module::kl_div_loss(Reduction::BatchMean, false)?;
    /// let logq = Tensor::from_slice(&[0.5f32.ln(), 0.5f32.ln()], &[1, 2], Device::CPU)?;
    /// let p = Tensor::from_slice(&[1.0f32, 0.0], &[1, 2], Device::CPU)?;
    /// assert!((kl.loss(&logq, &p)?.item()? - 2f64.ln()).abs() < 1e-6); // KL(p || q) = ln 2
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::OutOfMemory`](crate::ErrorCode::OutOfMemory) only
    /// (`dt_kl_div_loss_new`).
    pub fn kl_div_loss(reduction: Reduction, log_target: bool) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_kl_div_loss_new(reduction.raw(), log_target as i32, o) })
    }
}

/// `torch.nn.L1Loss` with PyTorch's default `reduction="mean"`, changed by a setter:
/// `|input - target|`. [`build`](L1Loss::build) makes the loss [`Module`]
/// (`dt_l1_loss_new`).
///
/// ```
/// use devtensor::nn::{L1Loss, Reduction};
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0], &[3], Device::CPU)?;
/// let y = Tensor::from_slice(&[0.0f32, 0.0, 0.0], &[3], Device::CPU)?;
/// assert_eq!(L1Loss::new().build()?.loss(&x, &y)?.item()?, 2.0); // (1 + 2 + 3) / 3
/// let none = L1Loss::new().reduction(Reduction::None).build()?;
/// assert_eq!(none.loss(&x, &y)?.to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct L1Loss {
    reduction: Reduction,
}

impl L1Loss {
    /// PyTorch's default, `reduction="mean"`.
    pub fn new() -> L1Loss {
        L1Loss {
            reduction: Reduction::Mean,
        }
    }
    /// `reduction=` (default [`Reduction::Mean`]; not [`Reduction::BatchMean`]).
    pub fn reduction(mut self, reduction: Reduction) -> L1Loss {
        self.reduction = reduction;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// As [`Module::l1_loss`].
    pub fn build(&self) -> Result<Module> {
        Module::l1_loss(self.reduction)
    }
}

/// `torch.nn.SmoothL1Loss` with PyTorch's defaults, changed by setters:
/// `reduction="mean"`, `beta=1.0`. With `d = input - target`, each element's loss is
/// `0.5 d² / beta` where `|d| < beta`, else `|d| - 0.5 beta` (`beta` 0 is the L1 loss).
/// [`build`](SmoothL1Loss::build) makes the loss [`Module`] (`dt_smooth_l1_loss_new`).
///
/// ```
/// use devtensor::nn::SmoothL1Loss;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::from_slice(&[0.5f32, 3.0], &[2], Device::CPU)?;
/// let y = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
/// // (0.5 * 0.5² / 1 + (3 - 0.5)) / 2 = (0.125 + 2.5) / 2
/// assert_eq!(SmoothL1Loss::new().build()?.loss(&x, &y)?.item()?, 1.3125);
/// // beta 4: both quadratic, (0.5 * 0.25 / 4 + 0.5 * 9 / 4) / 2
/// assert_eq!(SmoothL1Loss::new().beta(4.0).build()?.loss(&x, &y)?.item()?, 0.578125);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SmoothL1Loss {
    reduction: Reduction,
    beta: f64,
}

impl Default for SmoothL1Loss {
    fn default() -> SmoothL1Loss {
        SmoothL1Loss::new()
    }
}

impl SmoothL1Loss {
    /// PyTorch's defaults (see the type).
    pub fn new() -> SmoothL1Loss {
        SmoothL1Loss {
            reduction: Reduction::Mean,
            beta: 1.0,
        }
    }
    /// `reduction=` (default [`Reduction::Mean`]; not [`Reduction::BatchMean`]).
    pub fn reduction(mut self, reduction: Reduction) -> SmoothL1Loss {
        self.reduction = reduction;
        self
    }
    /// `beta=`, finite and >= 0 (default 1.0): where the loss turns from quadratic to
    /// linear.
    pub fn beta(mut self, beta: f64) -> SmoothL1Loss {
        self.beta = beta;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// As [`Module::smooth_l1_loss`]: `InvalidArgument` for a negative or non-finite
    /// `beta`.
    pub fn build(&self) -> Result<Module> {
        Module::smooth_l1_loss(self.reduction, self.beta)
    }
}

/// `torch.nn.HuberLoss` with PyTorch's defaults, changed by setters: `reduction="mean"`,
/// `delta=1.0`. With `d = input - target`, each element's loss is `0.5 d²` where
/// `|d| < delta`, else `delta (|d| - 0.5 delta)` (SmoothL1Loss times `beta`, for
/// `beta = delta`). [`build`](HuberLoss::build) makes the loss [`Module`]
/// (`dt_huber_loss_new`).
///
/// ```
/// use devtensor::nn::HuberLoss;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::from_slice(&[0.5f32, 3.0], &[2], Device::CPU)?;
/// let y = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
/// // (0.5 * 0.5² + 1 * (3 - 0.5)) / 2
/// assert_eq!(HuberLoss::new().build()?.loss(&x, &y)?.item()?, 1.3125);
/// // delta 2: (0.125 + 2 * (3 - 1)) / 2
/// assert_eq!(HuberLoss::new().delta(2.0).build()?.loss(&x, &y)?.item()?, 2.0625);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HuberLoss {
    reduction: Reduction,
    delta: f64,
}

impl Default for HuberLoss {
    fn default() -> HuberLoss {
        HuberLoss::new()
    }
}

impl HuberLoss {
    /// PyTorch's defaults (see the type).
    pub fn new() -> HuberLoss {
        HuberLoss {
            reduction: Reduction::Mean,
            delta: 1.0,
        }
    }
    /// `reduction=` (default [`Reduction::Mean`]; not [`Reduction::BatchMean`]).
    pub fn reduction(mut self, reduction: Reduction) -> HuberLoss {
        self.reduction = reduction;
        self
    }
    /// `delta=`, finite and > 0 (default 1.0): where the loss turns from quadratic to
    /// linear.
    pub fn delta(mut self, delta: f64) -> HuberLoss {
        self.delta = delta;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// As [`Module::huber_loss`]: `InvalidArgument` for a `delta` that is not finite and
    /// > 0.
    pub fn build(&self) -> Result<Module> {
        Module::huber_loss(self.reduction, self.delta)
    }
}

/// `torch.nn.BCELoss` with PyTorch's defaults, changed by setters: `weight=None`,
/// `reduction="mean"`. The input holds probabilities (a sigmoid's output): each
/// element's loss is `-weight (target log(input) + (1 - target) log(1 - input))`, each
/// log clamped at -100 as PyTorch's. [`build`](BceLoss::build) makes the loss
/// [`Module`] (`dt_bce_loss_new`; the weight is copied into its buffer `"weight"`).
/// Prefer [`BceWithLogitsLoss`] on logits: it is exact where a sigmoid rounds to 0 or 1.
///
/// ```
/// use devtensor::nn::BceLoss;
/// use devtensor::{Device, ErrorCode, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let p = Tensor::from_slice(&[0.5f32, 0.5], &[2], Device::CPU)?;
/// let y = Tensor::from_slice(&[1.0f32, 0.0], &[2], Device::CPU)?;
/// let l = BceLoss::new().build()?.loss(&p, &y)?.item()?;
/// assert!((l - 2f64.ln()).abs() < 1e-6); // -ln 0.5 for each element
/// // A weight per element: (1 * ln 2 + 3 * ln 2) / 2.
/// let w = Tensor::from_slice(&[1.0f32, 3.0], &[2], Device::CPU)?;
/// let l = BceLoss::new().weight(&w).build()?.loss(&p, &y)?.item()?;
/// assert!((l - 2.0 * 2f64.ln()).abs() < 1e-6);
/// // Not probabilities:
/// let bad = Tensor::from_slice(&[1.5f32, 0.5], &[2], Device::CPU)?;
/// let e = BceLoss::new().build()?.loss(&bad, &y).unwrap_err();
/// assert_eq!(e.code, ErrorCode::InvalidArgument);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct BceLoss {
    weight: Option<Tensor>,
    reduction: Reduction,
}

impl BceLoss {
    /// PyTorch's defaults (see the type).
    pub fn new() -> BceLoss {
        BceLoss {
            weight: None,
            reduction: Reduction::Mean,
        }
    }
    /// A weight rescaling each element's loss (a floating tensor that broadcasts to the
    /// input's shape); copied at `build`.
    pub fn weight(mut self, weight: &Tensor) -> BceLoss {
        self.weight = Some(weight.clone());
        self
    }
    /// `reduction=` (default [`Reduction::Mean`]; not [`Reduction::BatchMean`]).
    pub fn reduction(mut self, reduction: Reduction) -> BceLoss {
        self.reduction = reduction;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// As [`Module::bce_loss`].
    pub fn build(&self) -> Result<Module> {
        Module::bce_loss(self.weight.as_ref(), self.reduction)
    }
}

/// `torch.nn.BCEWithLogitsLoss` with PyTorch's defaults, changed by setters:
/// `weight=None`, `reduction="mean"`, `pos_weight=None`. The input holds logits: each
/// element's loss is `-weight (pos_weight target log σ(input) + (1 - target) log(1 -
/// σ(input)))`, in one numerically stable formula. [`build`](BceWithLogitsLoss::build)
/// makes the loss [`Module`] (`dt_bce_with_logits_loss_new`; the weights given are
/// copied into its buffers `"weight"` and `"pos_weight"`).
///
/// ```
/// use devtensor::nn::BceWithLogitsLoss;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// // Two samples of two classes (labels per class), all logits 0: σ = 1/2.
/// let logits = Tensor::from_slice(&[0.0f32, 0.0, 0.0, 0.0], &[2, 2], Device::CPU)?;
/// let y = Tensor::from_slice(&[1.0f32, 0.0, 1.0, 1.0], &[2, 2], Device::CPU)?;
/// let l = BceWithLogitsLoss::new().build()?.loss(&logits, &y)?.item()?;
/// assert!((l - 2f64.ln()).abs() < 1e-6);
/// // pos_weight per class [3, 1]: the positives of class 0 count 3 times,
/// // (3 ln 2 + ln 2 + 3 ln 2 + ln 2) / 4 = 2 ln 2.
/// let pw = Tensor::from_slice(&[3.0f32, 1.0], &[2], Device::CPU)?;
/// let l = BceWithLogitsLoss::new().pos_weight(&pw).build()?.loss(&logits, &y)?.item()?;
/// assert!((l - 2.0 * 2f64.ln()).abs() < 1e-6);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct BceWithLogitsLoss {
    weight: Option<Tensor>,
    pos_weight: Option<Tensor>,
    reduction: Reduction,
}

impl BceWithLogitsLoss {
    /// PyTorch's defaults (see the type).
    pub fn new() -> BceWithLogitsLoss {
        BceWithLogitsLoss {
            weight: None,
            pos_weight: None,
            reduction: Reduction::Mean,
        }
    }
    /// A weight rescaling each element's loss (a floating tensor that broadcasts to the
    /// input's shape); copied at `build`.
    pub fn weight(mut self, weight: &Tensor) -> BceWithLogitsLoss {
        self.weight = Some(weight.clone());
        self
    }
    /// `pos_weight=`: a weight of the positive term (a floating tensor that broadcasts
    /// to the input's shape, typically one per class, the last dim; above 1 raises
    /// recall); copied at `build`.
    pub fn pos_weight(mut self, pos_weight: &Tensor) -> BceWithLogitsLoss {
        self.pos_weight = Some(pos_weight.clone());
        self
    }
    /// `reduction=` (default [`Reduction::Mean`]; not [`Reduction::BatchMean`]).
    pub fn reduction(mut self, reduction: Reduction) -> BceWithLogitsLoss {
        self.reduction = reduction;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// As [`Module::bce_with_logits_loss`].
    pub fn build(&self) -> Result<Module> {
        Module::bce_with_logits_loss(self.weight.as_ref(), self.pos_weight.as_ref(), self.reduction)
    }
}

/// `torch.nn.KLDivLoss` with PyTorch's defaults, changed by setters:
/// `reduction="mean"`, `log_target=False`. The input holds log-probabilities `log q`;
/// the target probabilities `p` (each element's loss `p (log p - log q)`, 0 where `p` is
/// 0) or, with `log_target(true)`, log-probabilities (`exp(t) (t - log q)`). Use
/// [`Reduction::BatchMean`] for the KL divergence per sample: PyTorch's default `"mean"`
/// divides by every element. [`build`](KlDivLoss::build) makes the loss [`Module`]
/// (`dt_kl_div_loss_new`).
///
/// ```
/// use devtensor::nn::{KlDivLoss, Reduction};
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// // Two samples, q = [1/2, 1/2] for both; p = [1, 0] and [1/2, 1/2].
/// let h = 0.5f32.ln();
/// let logq = Tensor::from_slice(&[h, h, h, h], &[2, 2], Device::CPU)?;
/// let p = Tensor::from_slice(&[1.0f32, 0.0, 0.5, 0.5], &[2, 2], Device::CPU)?;
/// // Elements: 1 (ln 1 - ln 1/2) = ln 2, 0, 0, 0: sum ln 2, over 2 samples.
/// let kl = KlDivLoss::new().reduction(Reduction::BatchMean).build()?;
/// assert!((kl.loss(&logq, &p)?.item()? - 2f64.ln() / 2.0).abs() < 1e-6);
/// // PyTorch's default "mean" divides by the 4 elements.
/// assert!((KlDivLoss::new().build()?.loss(&logq, &p)?.item()? - 2f64.ln() / 4.0).abs() < 1e-6);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct KlDivLoss {
    reduction: Reduction,
    log_target: bool,
}

impl KlDivLoss {
    /// PyTorch's defaults (see the type).
    pub fn new() -> KlDivLoss {
        KlDivLoss {
            reduction: Reduction::Mean,
            log_target: false,
        }
    }
    /// `reduction=` (default [`Reduction::Mean`]; [`Reduction::BatchMean`] is the KL
    /// divergence per sample).
    pub fn reduction(mut self, reduction: Reduction) -> KlDivLoss {
        self.reduction = reduction;
        self
    }
    /// `log_target=`: whether the target holds log-probabilities (default `false`:
    /// probabilities).
    pub fn log_target(mut self, log_target: bool) -> KlDivLoss {
        self.log_target = log_target;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// As [`Module::kl_div_loss`].
    pub fn build(&self) -> Result<Module> {
        Module::kl_div_loss(self.reduction, self.log_target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_have_pytorchs_defaults() {
        // torch.nn.L1Loss(reduction='mean'), SmoothL1Loss(reduction='mean', beta=1.0),
        // HuberLoss(reduction='mean', delta=1.0), BCELoss(weight=None, reduction='mean'),
        // BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None),
        // KLDivLoss(reduction='mean', log_target=False) (torch.nn docs).
        assert_eq!(L1Loss::new().reduction, Reduction::Mean);
        assert_eq!(L1Loss::default().reduction, Reduction::Mean);
        for s in [SmoothL1Loss::new(), SmoothL1Loss::default()] {
            assert_eq!((s.reduction, s.beta), (Reduction::Mean, 1.0));
        }
        for h in [HuberLoss::new(), HuberLoss::default()] {
            assert_eq!((h.reduction, h.delta), (Reduction::Mean, 1.0));
        }
        for b in [BceLoss::new(), BceLoss::default()] {
            assert!(b.weight.is_none());
            assert_eq!(b.reduction, Reduction::Mean);
        }
        for b in [BceWithLogitsLoss::new(), BceWithLogitsLoss::default()] {
            assert!(b.weight.is_none() && b.pos_weight.is_none());
            assert_eq!(b.reduction, Reduction::Mean);
        }
        for k in [KlDivLoss::new(), KlDivLoss::default()] {
            assert_eq!((k.reduction, k.log_target), (Reduction::Mean, false));
        }
        // Setters.
        let s = SmoothL1Loss::new().beta(0.5).reduction(Reduction::Sum);
        assert_eq!((s.reduction, s.beta), (Reduction::Sum, 0.5));
        let h = HuberLoss::new().delta(2.0).reduction(Reduction::None);
        assert_eq!((h.reduction, h.delta), (Reduction::None, 2.0));
        let k = KlDivLoss::new().reduction(Reduction::BatchMean).log_target(true);
        assert_eq!((k.reduction, k.log_target), (Reduction::BatchMean, true));
        assert_eq!(Reduction::BatchMean.raw(), ffi::DT_REDUCTION_BATCHMEAN);
        assert_eq!(ffi::DT_REDUCTION_BATCHMEAN, 3);
    }
}

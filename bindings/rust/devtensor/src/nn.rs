//! Modules, losses, optimizers and learning-rate schedulers, as `torch.nn` /
//! `torch.optim` / `torch.optim.lr_scheduler`, over `dt_module`, `dt_optimizer` and
//! `dt_lr_scheduler` handles ([`LrScheduler`]).
//!
//! ```
//! use devtensor::nn::{CrossEntropyLoss, Module, Sequential, Sgd};
//! use devtensor::{DType, Device, Tensor};
//!
//! # fn main() -> devtensor::Result<()> {
//! let dev = Device::cuda_if_available();
//! let mut model = Sequential::new()
//!     .add(Module::linear(4, 8, true, DType::Float32, Device::CPU)?)
//!     .add(Module::relu()?)
//!     .add(Module::linear(8, 3, true, DType::Float32, Device::CPU)?)
//!     .build()?;
//! model.to(dev)?;                                   // in place, like PyTorch
//! let loss_fn = CrossEntropyLoss::new().build()?;         // PyTorch's defaults
//! let mut opt = Sgd::new(&model.parameters()?, 0.1).momentum(0.9).build()?;
//! let x = Tensor::randn(&[5, 4], DType::Float32, dev)?;
//! let y = Tensor::from_slice(&[0i64, 1, 2, 0, 1], &[5], Device::CPU)?.to(dev)?;
//! let loss = loss_fn.loss(&model.forward(&x)?, &y)?;
//! opt.zero_grad()?;
//! loss.backward()?;
//! opt.step()?;
//! # Ok(()) }
//! ```
//!
//! THREADING. [`Module`] and [`Optimizer`] are `Send` (a model may move into a worker
//! thread) and `Sync`. The header (`include/devtensor.h`, "modules") says "a module may
//! run forward from several threads at once, and every module call is safe against every
//! other", so [`Module::forward`], [`Module::loss`] and the readers take `&self`, and
//! `Arc<Module>` shares one model between threads for inference. What changes the
//! module — [`Module::to`], [`Module::load`], [`Module::train`], [`Module::eval`] — takes
//! `&mut self`, as do [`Optimizer::step`], [`Optimizer::zero_grad`],
//! [`Optimizer::set_lr`] and [`Optimizer::load_state_dict`]; to change a
//! shared model, put it in an `Arc<RwLock<Module>>` (forward under `read()`, `to`
//! under `write()`). [`Module::share`] is the explicit way to get a second owning handle
//! to the *same* module (a retain; `Module` has no `Clone`, which would read as a copy).
//! Through two handles a move and a forward may overlap: the header allows it (the
//! forward sees each tensor before or after the move, and may fail with
//! `DeviceMismatch`), so it is no memory-safety question. Parameter *tensors* are
//! ordinary `Tensor`s: do not read them from another thread while the module moves or
//! the optimizer steps (a reader sees each element's old or new value).
//!
//! ```
//! use devtensor::nn::Module;
//! use devtensor::{DType, Device, Tensor};
//! use std::sync::Arc;
//!
//! # fn main() -> devtensor::Result<()> {
//! let model = Arc::new(Module::linear(4, 2, true, DType::Float32, Device::CPU)?);
//! let workers: Vec<_> = (0..2)
//!     .map(|_| {
//!         let model = Arc::clone(&model);
//!         std::thread::spawn(move || -> devtensor::Result<Vec<i64>> {
//!             let x = Tensor::ones(&[3, 4], DType::Float32, Device::CPU)?;
//!             Ok(model.forward(&x)?.shape())
//!         })
//!     })
//!     .collect();
//! for w in workers {
//!     assert_eq!(w.join().unwrap()?, vec![3, 2]);
//! }
//! # Ok(()) }
//! ```
use crate::error::{check, Error, ErrorCode, Result};
use crate::ops::interpolate_args;
use crate::{check_version, read_string, DType, Device, InterpolateMode, ProcessGroup, StateDict, Tensor};
use devtensor_sys as ffi;
use std::ffi::CString;
use std::path::Path;
use std::ptr::NonNull;

mod conv;
pub use conv::{
    AvgPool2d, AvgPool2dOptions, Conv1d, Conv1dOptions, Conv2d, Conv2dOptions, ConvTranspose2d,
    ConvTranspose2dOptions, MaxPool2d, MaxPool2dOptions, Padding, Padding1d,
};
mod norm;
pub use norm::{BatchNorm1d, BatchNorm2d, Embedding, GroupNorm, LayerNorm, RunningStats};
mod tree;
mod custom;
pub use custom::ModuleSpec;
mod attention;
pub use attention::{Activation, MultiheadAttention, TransformerEncoder, TransformerEncoderLayer};
mod losses;
pub use losses::{BceLoss, BceWithLogitsLoss, HuberLoss, KlDivLoss, L1Loss, SmoothL1Loss};
mod clip_grad;
pub use clip_grad::{clip_grad_norm_, clip_grad_value_};
mod recurrent;
pub use recurrent::{Gru, Lstm, Rnn, RnnNonlinearity};
mod lr_scheduler;
mod lr_lambda;
pub use lr_scheduler::{
    AnnealStrategy, CyclicMode, CyclicOptions, LrScheduler, OneCycleOptions, PlateauMode,
    PlateauOptions, ThresholdMode,
};

/// Loss reduction, as PyTorch's `reduction=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// One loss per sample.
    None,
    /// The mean (PyTorch's default).
    Mean,
    /// The sum.
    Sum,
    /// The sum divided by the input's first dimension (the sum itself for a 0-d input),
    /// PyTorch's `reduction="batchmean"`: the mathematical KL divergence per sample.
    /// Only [`KlDivLoss`] takes it; every other loss fails with
    /// [`ErrorCode::InvalidArgument`] when built with it.
    BatchMean,
}

impl Default for Reduction {
    /// [`Reduction::Mean`], PyTorch's `reduction="mean"`.
    fn default() -> Reduction {
        Reduction::Mean
    }
}

impl Reduction {
    fn raw(self) -> i32 {
        match self {
            Reduction::None => ffi::DT_REDUCTION_NONE,
            Reduction::Mean => ffi::DT_REDUCTION_MEAN,
            Reduction::Sum => ffi::DT_REDUCTION_SUM,
            Reduction::BatchMean => ffi::DT_REDUCTION_BATCHMEAN,
        }
    }
}

/// A layer, container or loss (`dt_module`). A `Module` owns one reference to the
/// handle; [`Module::share`] adds one (the same module, not a copy); dropping releases
/// and never panics. `Send + Sync`: see [`nn`](crate::nn)'s THREADING.
///
/// ```
/// use devtensor::nn::Module;
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let mut lin = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
/// lin.eval()?;
/// let y = std::thread::spawn(move || {
///     // The model moved into this thread.
///     lin.forward(&Tensor::zeros(&[1, 3], DType::Float32, Device::CPU)?)
/// })
/// .join()
/// .unwrap()?;
/// assert_eq!(y.shape(), vec![1, 2]);
/// # Ok(()) }
/// ```
pub struct Module {
    ptr: NonNull<ffi::dt_module>,
}

// SAFETY: include/devtensor.h, "modules": "a module may run forward from several threads
// at once, and every module call is safe against every other"; the top THREADING
// paragraph: every function is safe from any thread, reference counts and handle checks
// are atomic. A Module is only a handle: sending it to another thread (Send) and calling
// its `&self` methods from several threads at once (Sync) are uses the header allows. A
// reference is released only in Drop, which needs ownership, so no thread can release a
// handle another thread is inside a call with.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

raw_handle!(
    Module,
    "devtensor::nn::Module",
    dt_module,
    dt_module_retain,
    dt_module_release,
    "devtensor::nn::Module::relu()?"
);

fn new_module(call: impl FnOnce(*mut *mut ffi::dt_module) -> ffi::dt_status) -> Result<Module> {
    check_version()?;
    let mut out: *mut ffi::dt_module = std::ptr::null_mut();
    check(call(&mut out))?;
    NonNull::new(out)
        .map(|ptr| Module { ptr })
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL module",
            )
        })
}

pub(crate) fn path_arg(path: &Path) -> Result<CString> {
    let s = path.to_str().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("path {} is not UTF-8", path.display()),
        )
    })?;
    CString::new(s).map_err(|_| Error::new(ErrorCode::InvalidArgument, "path holds a NUL byte"))
}

/// `name` as a C string for `dt_optimizer_option` / `dt_optimizer_set_option`, or
/// [`ErrorCode::InvalidArgument`] when it holds a NUL byte (C would cut it short).
fn option_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("optimizer setting name {name:?} holds a NUL byte"),
        )
    })
}

impl Module {
    fn raw(&self) -> *mut ffi::dt_module {
        self.ptr.as_ptr()
    }

    /// `Linear(in, out, bias)` on `device`, initialised as PyTorch does.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
    /// let names: Vec<String> = lin.named_parameters()?.into_iter().map(|(n, _)| n).collect();
    /// assert_eq!(names, ["weight", "bias"]);
    /// assert_eq!(lin.parameters()?[0].shape(), vec![2, 3]); // [out, in]
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_linear_new`: an
    /// [`Error`] with the library's code and message.
    pub fn linear(
        in_features: i64,
        out_features: i64,
        bias: bool,
        dtype: DType,
        device: Device,
    ) -> Result<Module> {
        new_module(|o| unsafe {
            ffi::dt_linear_new(
                in_features,
                out_features,
                bias as i32,
                dtype.to_raw(),
                device.to_raw(),
                o,
            )
        })
    }
    /// `ReLU`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-1.0f32, 0.0, 2.0], &[1, 3], Device::CPU)?;
    /// assert_eq!(Module::relu()?.forward(&x)?.to_vec::<f32>()?, vec![0.0, 0.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_relu_new`: an
    /// [`Error`] with the library's code and message.
    pub fn relu() -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_relu_new(o) })
    }
    /// `Sigmoid`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-1.0f32, 0.0, 2.0], &[1, 3], Device::CPU)?;
    /// assert_eq!(Module::sigmoid()?.forward(&x)?.to_vec::<f32>()?[1], 0.5);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_sigmoid_new`: an
    /// [`Error`] with the library's code and message.
    pub fn sigmoid() -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_sigmoid_new(o) })
    }
    /// `Tanh`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-1.0f32, 0.0, 2.0], &[1, 3], Device::CPU)?;
    /// assert_eq!(Module::tanh()?.forward(&x)?.to_vec::<f32>()?[1], 0.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tanh_new`: an
    /// [`Error`] with the library's code and message.
    pub fn tanh() -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_tanh_new(o) })
    }
    /// `GELU`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-1.0f32, 0.0, 2.0], &[1, 3], Device::CPU)?;
    /// assert_eq!(Module::gelu()?.forward(&x)?.to_vec::<f32>()?[1], 0.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_gelu_new`: an
    /// [`Error`] with the library's code and message.
    pub fn gelu() -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_gelu_new(o) })
    }
    /// `GELU(approximate="tanh")`, GPT-2's `gelu_new`: `x / 2 * (1 + tanh(sqrt(2 / pi) *
    /// (x + 0.044715 x^3)))` elementwise, with no parameters; its forward is
    /// [`Tensor::gelu_tanh`] and takes floating inputs only (others: `DtypeMismatch`). Its
    /// [`kind`](Module::kind) is `"GELU"`, PyTorch's class name for both forms.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-1.0f32, 0.0, 1.0, 2.0], &[1, 4], Device::CPU)?;
    /// let gelu_tanh = Module::gelu_tanh()?;
    /// assert_eq!(gelu_tanh.kind()?, "GELU");
    /// let y = gelu_tanh.forward(&x)?.to_vec::<f32>()?;
    /// for (got, want) in y.iter().zip([-0.158808f32, 0.0, 0.841192, 1.954598]) {
    ///     assert!((got - want).abs() < 1e-5, "{y:?}");
    /// }
    /// // The exact form differs: GELU(1) = 0.841345.
    /// assert!((Module::gelu()?.forward(&x)?.to_vec::<f32>()?[2] - y[2]).abs() > 1e-4);
    /// let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU)?;
    /// assert_eq!(gelu_tanh.forward(&ints).unwrap_err().code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_gelu_tanh_new`: an
    /// [`Error`] with the library's code and message.
    pub fn gelu_tanh() -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_gelu_tanh_new(o) })
    }
    /// `SiLU`: `x * sigmoid(x) = x / (1 + e^-x)` elementwise (swish), with no
    /// parameters; its forward is [`Tensor::silu`] and takes floating inputs only
    /// (others: `DtypeMismatch`). Its [`kind`](Module::kind) is `"SiLU"`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-2.0f64, 0.0, 1.0, 3.0], &[1, 4], Device::CPU)?;
    /// let silu = Module::silu()?;
    /// assert_eq!(silu.kind()?, "SiLU");
    /// let y = silu.forward(&x)?.to_vec::<f64>()?;
    /// for (got, x) in y.iter().zip([-2.0f64, 0.0, 1.0, 3.0]) {
    ///     assert!((got - x / (1.0 + (-x).exp())).abs() < 1e-12, "{y:?}");
    /// }
    /// let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU)?;
    /// assert_eq!(silu.forward(&ints).unwrap_err().code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_silu_new`: an
    /// [`Error`] with the library's code and message.
    pub fn silu() -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_silu_new(o) })
    }
    /// `LeakyReLU(negative_slope)`: `x` where `x > 0`, else `x * negative_slope`,
    /// elementwise (PyTorch's default slope is `0.01`), with no parameters; its forward is
    /// [`Tensor::leaky_relu`] and takes floating inputs only (others: `DtypeMismatch`).
    /// Its [`kind`](Module::kind) is `"LeakyReLU"`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-2.0f64, 0.0, 3.0], &[1, 3], Device::CPU)?;
    /// let leaky = Module::leaky_relu(0.1)?;
    /// assert_eq!(leaky.kind()?, "LeakyReLU");
    /// assert_eq!(leaky.forward(&x)?.to_vec::<f64>()?, vec![-0.2, 0.0, 3.0]);
    /// assert_eq!(Module::leaky_relu(f64::NAN).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](ErrorCode::InvalidArgument) for a slope that is not finite
    /// (NaN, ±infinity); the other errors that `include/devtensor.h` lists for
    /// `dt_leaky_relu_new`: an [`Error`] with the library's code and message.
    pub fn leaky_relu(negative_slope: f64) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_leaky_relu_new(negative_slope, o) })
    }
    /// `Upsample(size, scale_factor, mode, align_corners)`, as `torch.nn.Upsample`, with
    /// no parameters; its forward is [`Tensor::interpolate`] with these arguments (copied)
    /// and its [`kind`](Module::kind) is `"Upsample"`. Exactly one of `size` and
    /// `scale_factor` is `Some`, with one value for every spatial dim or a single value for
    /// all of them.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, InterpolateMode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let up = Module::upsample(None, Some(&[2.0]), InterpolateMode::Nearest, false)?;
    /// assert_eq!(up.kind()?, "Upsample");
    /// let x = Tensor::from_slice(&[0.0f32, 3.0, 6.0, 9.0], &[1, 1, 2, 2], Device::CPU)?;
    /// let y = up.forward(&x)?;
    /// assert_eq!(y.shape(), [1, 1, 4, 4]);
    /// assert_eq!(y.to_vec::<f32>()?, [0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 3.0, 3.0, 6.0, 6.0, 9.0, 9.0, 6.0, 6.0, 9.0, 9.0]);
    /// // bilinear takes a 4-d input; forward's error names the module.
    /// let bil = Module::upsample(Some(&[2, 4]), None, InterpolateMode::Bilinear, true)?;
    /// let l = Tensor::from_slice(&[0.0f32, 4.0], &[1, 1, 2], Device::CPU)?;
    /// let err = bil.forward(&l).unwrap_err();
    /// assert_eq!(err.code, ErrorCode::ShapeMismatch);
    /// assert!(err.message.contains("Upsample(size=(2, 4), mode='bilinear', align_corners=True)"), "{err}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_upsample_new`:
    /// [`InvalidArgument`](ErrorCode::InvalidArgument) (both or neither of `size` and
    /// `scale_factor`, no value or more than 3, a size or factor that is not positive,
    /// `align_corners` with `Nearest`), `OutOfMemory`; its forward fails as
    /// [`Tensor::interpolate`] does, the message naming the module.
    pub fn upsample(
        size: Option<&[i64]>,
        scale_factor: Option<&[f64]>,
        mode: InterpolateMode,
        align_corners: bool,
    ) -> Result<Module> {
        let (s, f, n) = interpolate_args(size, scale_factor);
        new_module(|o| unsafe { ffi::dt_upsample_new(s, f, n, mode.c_name().as_ptr(), align_corners as i32, o) })
    }
    /// `Softmax(dim)`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[1, 4], DType::Float32, Device::CPU)?;
    /// assert_eq!(Module::softmax(1)?.forward(&t)?.to_vec::<f32>()?, vec![0.25; 4]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_softmax_new`: an
    /// [`Error`] with the library's code and message.
    pub fn softmax(dim: i64) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_softmax_new(dim, o) })
    }
    /// `LogSoftmax(dim)`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[1, 2], DType::Float64, Device::CPU)?;
    /// let l = Module::log_softmax(1)?.forward(&t)?.to_vec::<f64>()?;
    /// assert!((l[0] + std::f64::consts::LN_2).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_log_softmax_new`: an
    /// [`Error`] with the library's code and message.
    pub fn log_softmax(dim: i64) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_log_softmax_new(dim, o) })
    }
    /// `Dropout(p)`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-1.0f32, 0.0, 2.0], &[1, 3], Device::CPU)?;
    /// let mut d = Module::dropout(0.5)?;
    /// d.eval()?; // evaluation mode: the identity
    /// assert_eq!(d.forward(&x)?.to_vec::<f32>()?, x.to_vec::<f32>()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_dropout_new`: an
    /// [`Error`] with the library's code and message.
    pub fn dropout(p: f64) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_dropout_new(p, o) })
    }
    /// `Flatten(start_dim, end_dim)` (PyTorch's defaults: 1, -1).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3, 4], DType::Float32, Device::CPU)?;
    /// assert_eq!(Module::flatten(1, -1)?.forward(&t)?.shape(), vec![2, 12]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_flatten_new`: an
    /// [`Error`] with the library's code and message.
    pub fn flatten(start_dim: i64, end_dim: i64) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_flatten_new(start_dim, end_dim, o) })
    }
    /// `CrossEntropyLoss(weight, reduction, ignore_index, label_smoothing)`; the class
    /// weights are copied into the buffer `"weight"`. The loss takes logits `[N, C]` with
    /// class indices `[N]`, or PyTorch's per-position form `[N, C, d1, ...]` with
    /// `[N, d1, ...]`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // CrossEntropyLoss(reduction="sum"); nn::CrossEntropyLoss::new() has the defaults.
    /// let ce = Module::cross_entropy_loss(None, Reduction::Sum, -100, 0.0)?;
    /// let logits = Tensor::zeros(&[2, 4], DType::Float32, Device::CPU)?;
    /// let target = Tensor::from_slice(&[0i64, 3], &[2], Device::CPU)?;
    /// assert!((ce.loss(&logits, &target)?.item()? - 2.0 * 4f64.ln()).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_cross_entropy_loss_new`: an
    /// [`Error`] with the library's code and message.
    pub fn cross_entropy_loss(
        weight: Option<&Tensor>,
        reduction: Reduction,
        ignore_index: i64,
        label_smoothing: f64,
    ) -> Result<Module> {
        let w = weight.map_or(std::ptr::null(), |t| t.as_ptr() as *const ffi::dt_tensor);
        new_module(|o| unsafe {
            ffi::dt_cross_entropy_loss_new(w, reduction.raw(), ignore_index, label_smoothing, o)
        })
    }
    /// `NLLLoss(weight, reduction, ignore_index)`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let nll = Module::nll_loss(None, Reduction::Mean, -100)?;
    /// let logp = Tensor::from_slice(&[-1.0f32, -2.0], &[1, 2], Device::CPU)?;
    /// let target = Tensor::from_slice(&[1i64], &[1], Device::CPU)?;
    /// assert_eq!(nll.loss(&logp, &target)?.item()?, 2.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_nll_loss_new`: an
    /// [`Error`] with the library's code and message.
    pub fn nll_loss(
        weight: Option<&Tensor>,
        reduction: Reduction,
        ignore_index: i64,
    ) -> Result<Module> {
        let w = weight.map_or(std::ptr::null(), |t| t.as_ptr() as *const ffi::dt_tensor);
        new_module(|o| unsafe { ffi::dt_nll_loss_new(w, reduction.raw(), ignore_index, o) })
    }
    /// `MSELoss(reduction)`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let mse = Module::mse_loss(Reduction::Mean)?;
    /// let a = Tensor::from_slice(&[1.0f32, 3.0], &[2], Device::CPU)?;
    /// let b = Tensor::zeros(&[2], DType::Float32, Device::CPU)?;
    /// assert_eq!(mse.loss(&a, &b)?.item()?, 5.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_mse_loss_new`: an
    /// [`Error`] with the library's code and message.
    pub fn mse_loss(reduction: Reduction) -> Result<Module> {
        new_module(|o| unsafe { ffi::dt_mse_loss_new(reduction.raw(), o) })
    }
    /// `DataParallel(module, device_ids, output_device)`, as `torch.nn.DataParallel`
    /// (`dt_data_parallel_new`).
    ///
    /// `forward` splits every input along dim 0 into `torch.chunk`'s pieces (`ceil(N / n)`
    /// rows each, the last one smaller; a batch of fewer than `n` rows uses fewer
    /// devices), runs a replica of `module` on each `device_ids[k]` concurrently (one
    /// library thread per device) and gathers the outputs along dim 0 on
    /// `output_device` (0-d outputs, such as losses, become one value per piece).
    /// `backward` sums the replicas' gradients into `module`'s own parameters, so an
    /// [`Optimizer`] over `module.parameters()` trains it as usual.
    ///
    /// * `device_ids`: distinct devices (CPU, CUDA or a mix); `&[]` means every device of
    ///   the kind `module` is on. `module` itself serves `device_ids[0]`, where its
    ///   parameters and buffers must be whenever `forward` runs.
    /// * `output_device`: where outputs are gathered; `None` means `device_ids[0]`.
    ///
    /// The result is a `Module` like any other: its parameters and buffers are
    /// `module`'s, named `"module." + name` (as in PyTorch); [`Module::to`],
    /// [`Module::train`] and [`Module::eval`] act on `module`. Replicas are copied again
    /// only after `module`'s parameters, buffers or training mode changed through
    /// devtensor (an optimizer step, loading, `to`), not on every forward.
    ///
    /// Ownership: the DataParallel holds its own reference to `module`, so `module` may
    /// be dropped first; `module` stays usable on its own and shares its parameters
    /// with the DataParallel. Threading: as any `Module` (`Send + Sync`, see
    /// [`nn`](crate::nn)); the per-device threads are the library's and are joined
    /// before `forward` returns.
    ///
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// // Two logical CPU devices; the library reads this once, before its first call.
    /// // SAFETY: one thread, before any other reads the environment.
    /// unsafe { std::env::set_var("DEVTENSOR_CPU_DEVICES", "2") };
    /// let model = Module::linear(5, 3, true, DType::Float32, Device::Cpu(0))?;
    /// let dp = Module::data_parallel(&model, &[Device::Cpu(0), Device::Cpu(1)], None)?;
    /// let x = Tensor::randn(&[5, 5], DType::Float32, Device::Cpu(0))?;
    /// let y = dp.forward(&x)?;            // rows 0..3 on cpu:0, 3..5 on cpu:1
    /// assert_eq!((y.shape(), y.device()), (vec![5, 3], Device::Cpu(0)));
    /// y.sum(&[], false)?.backward()?;     // gradients land in model's parameters
    /// assert!(model.parameters()?[0].grad()?.is_some());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidDevice` for an ordinal that does not exist (the message names
    /// `device_ids[i]`), `InvalidArgument` for a device listed twice or a DataParallel as
    /// `module` (no nesting), `DeviceUnavailable` (e.g. CUDA without a GPU). A `module`
    /// that is not on `device_ids[0]` is reported by `forward`, not here: `DeviceMismatch`,
    /// `"module must have its parameters and buffers on device cpu:0 (device_ids[0]) but
    /// found one of them on device: cpu:1"`.
    pub fn data_parallel(
        module: &Module,
        device_ids: &[Device],
        output_device: Option<Device>,
    ) -> Result<Module> {
        let ids: Vec<ffi::dt_device> = device_ids.iter().map(|d| d.to_raw()).collect();
        // n = 0 takes NULL (every device of the module's kind).
        let ids_ptr = if ids.is_empty() {
            std::ptr::null()
        } else {
            ids.as_ptr()
        };
        let output = Device::raw_or_default(output_device);
        new_module(|o| unsafe {
            ffi::dt_data_parallel_new(module.raw(), ids_ptr, ids.len(), output, o)
        })
    }

    /// `DistributedDataParallel(module, process_group=pg, bucket_cap_mb=...,
    /// find_unused_parameters=...)`, as `torch.nn.parallel.DistributedDataParallel`
    /// (`dt_distributed_data_parallel_new`): a NEW module for data-parallel training over
    /// `pg`'s processes. Every rank runs its own copy of `module` on its own part of each
    /// batch, and `backward` averages the gradients over the group, so that after
    /// [`Optimizer::step`] every rank holds the same parameters. The optimizer is built
    /// over `module.parameters()` (the result's parameters are the same tensors).
    ///
    /// Construction is a collective: every rank of `pg` must call it. It checks that every
    /// rank wraps the same parameters and buffers (count, dtype, shape; a mismatch is an
    /// error on every rank naming the first one that differs) and broadcasts them from
    /// rank 0, so every rank starts from rank 0's values whatever its own initialisation.
    ///
    /// * `bucket_cap_bytes`: during [`Tensor::backward`] the gradients are all-reduced
    ///   (averaged) in buckets of about this many bytes, in reverse order of
    ///   registration, each bucket as soon as its gradients are computed, on a library
    ///   thread of its own while backward goes on; `.grad` receives the averages when
    ///   backward returns (all or nothing). `None` means 25 MiB (torch's default);
    ///   `Some(0)` is [`ErrorCode::InvalidArgument`] (the C API's 0 means the default).
    /// * `find_unused_parameters`: a parameter that gets no gradient in a pass counts as
    ///   zero; with `false`, such a pass fails with [`ErrorCode::InvalidArgument`] naming
    ///   the parameter.
    ///
    /// Every rank must run the same backward passes. Forward is `module`'s forward; the
    /// result's parameters and buffers are `module`'s, named `"module." + name` (as
    /// PyTorch's `state_dict`). Parameters that do not require grad are neither reduced
    /// nor checked. A parameter belongs to at most one `DistributedDataParallel` (until
    /// that one is dropped).
    ///
    /// Ownership: the result holds its own references to `module` and to `pg`, so both
    /// may be dropped first (`pg`'s connections stay open while the result lives).
    /// Threading: as any `Module` (`Send + Sync`, see [`nn`](crate::nn)).
    ///
    /// ```
    /// use devtensor::nn::{Module, Sequential};
    /// use devtensor::{DType, Device, ProcessGroup, Tensor};
    /// use std::time::Duration;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process here; under `devtensor run --nproc-per-node N` every copy
    /// // would join with ProcessGroup::from_env() and wrap its own model the same way.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-ddp-{}", std::process::id()));
    /// let pg = ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                            Some(0), Some(1), Some(Duration::from_secs(30)))?;
    /// let model = Sequential::new()
    ///     .add(Module::linear(4, 8, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .add(Module::linear(8, 2, true, DType::Float32, Device::CPU)?)
    ///     .build()?;
    /// let ddp = Module::distributed_data_parallel(&model, &pg, None, false)?;
    /// assert_eq!(ddp.named_parameters()?[0].0, "module.0.weight");
    /// let x = Tensor::randn(&[3, 4], DType::Float32, Device::CPU)?;
    /// ddp.forward(&x)?.sum(&[], false)?.backward()?;    // gradients averaged over the group
    /// assert!(model.parameters()?[0].grad()?.is_some());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a parameter of `module` already wrapped, `Some(0)`,
    /// ranks with different parameter counts), [`ErrorCode::InvalidHandle`],
    /// [`ErrorCode::DeviceMismatch`] (a parameter or buffer not on the CPU for `"gloo"`),
    /// [`ErrorCode::ShapeMismatch`] (a parameter or buffer of another shape or dtype on
    /// some rank), [`ErrorCode::Distributed`], [`ErrorCode::OutOfMemory`].
    pub fn distributed_data_parallel(
        module: &Module,
        pg: &ProcessGroup,
        bucket_cap_bytes: Option<usize>,
        find_unused_parameters: bool,
    ) -> Result<Module> {
        let cap = match bucket_cap_bytes {
            None => 0, // the library's default, 25 MiB
            Some(0) => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "a zero bucket_cap_bytes: pass None for the default (25 MiB)",
                ))
            }
            // A cap beyond i64 holds every gradient in one bucket, as i64::MAX does.
            Some(n) => i64::try_from(n).unwrap_or(i64::MAX),
        };
        // SAFETY: live module and group handles (borrowed for the call; the library takes
        // its own references) and a valid out-pointer.
        new_module(|o| unsafe {
            ffi::dt_distributed_data_parallel_new(
                module.raw(),
                pg.as_ptr(),
                cap,
                find_unused_parameters as i32,
                o,
            )
        })
    }

    /// Turns this `DistributedDataParallel`'s gradient synchronisation off (`true`) or
    /// back on (`false`), as torch's `with ddp.no_sync():`
    /// (`dt_distributed_data_parallel_no_sync`), for gradient accumulation over
    /// micro-batches at one all-reduce per optimizer step; [`Module::no_sync`] is the
    /// scoped form.
    ///
    /// A [`Tensor::backward`] that starts while it is off accumulates this rank's own
    /// gradients into `.grad` and communicates nothing (so ranks may run different numbers
    /// of such passes, and an unused parameter is not an error then). The next pass that
    /// starts with it on averages over the group each parameter's whole gradient, what the
    /// local passes accumulated plus its own, and `.grad` becomes that average on every
    /// rank; as torch's, that pass must run on every rank. The setting applies to whole
    /// passes: changing it while a backward of this module runs takes effect at the next
    /// one.
    ///
    /// Threading: `&self`, as the header allows it from any thread, alongside the
    /// module's other calls; the setting belongs to the module, not to the calling thread.
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device, ProcessGroup, Tensor};
    /// use std::time::Duration;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-set-no-sync-{}", std::process::id()));
    /// let pg = ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                            Some(0), Some(1), Some(Duration::from_secs(30)))?;
    /// let model = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
    /// let ddp = Module::distributed_data_parallel(&model, &pg, None, false)?;
    /// let x = Tensor::ones(&[2, 3], DType::Float32, Device::CPU)?;
    /// ddp.set_no_sync(true)?;
    /// ddp.forward(&x)?.sum(&[], false)?.backward()?;   // local: nothing communicated
    /// ddp.set_no_sync(false)?;
    /// ddp.forward(&x)?.sum(&[], false)?.backward()?;   // averages the accumulated gradient
    /// let bias_grad = model.parameters()?[1].grad()?.unwrap();
    /// assert_eq!(bias_grad.to_vec::<f32>()?, vec![4.0, 4.0]); // 2 rows, twice
    /// // Only a DistributedDataParallel has the setting.
    /// let e = model.set_no_sync(true).unwrap_err();
    /// assert!(e.message.contains("not a DistributedDataParallel"));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a module that
    /// [`Module::distributed_data_parallel`] did not make), [`ErrorCode::InvalidHandle`].
    pub fn set_no_sync(&self, no_sync: bool) -> Result<()> {
        // SAFETY: a live module handle; the library takes no reference.
        check(unsafe { ffi::dt_distributed_data_parallel_no_sync(self.raw(), no_sync as i32) })
    }

    /// Runs `f` with this `DistributedDataParallel`'s gradient synchronisation off, as
    /// torch's `with ddp.no_sync():`: [`Module::set_no_sync`]`(true)`, then `f`, then
    /// `set_no_sync(false)` however `f` ends, with an error or a panic (which goes on
    /// unwinding). The backward passes `f` runs accumulate local gradients only; the next
    /// one after `no_sync` returns averages the whole accumulated gradient over the group.
    /// Returns `f`'s result; when `f` succeeds, the error of turning synchronisation back
    /// on, if any.
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device, ProcessGroup, Tensor};
    /// use std::time::Duration;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-no-sync-{}", std::process::id()));
    /// let pg = ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                            Some(0), Some(1), Some(Duration::from_secs(30)))?;
    /// let model = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
    /// let ddp = Module::distributed_data_parallel(&model, &pg, None, false)?;
    /// let step = |rows: i64| -> devtensor::Result<()> {
    ///     let x = Tensor::ones(&[rows, 3], DType::Float32, Device::CPU)?;
    ///     ddp.forward(&x)?.sum(&[], false)?.backward()
    /// };
    /// for rows in [2, 3] {
    ///     ddp.no_sync(|| step(rows))?;   // micro-batches: local accumulation
    /// }
    /// step(4)?;                          // one all-reduce of the whole gradient
    /// let bias_grad = model.parameters()?[1].grad()?.unwrap();
    /// assert_eq!(bias_grad.to_vec::<f32>()?, vec![9.0, 9.0]); // one per row
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// `f`'s error; else as [`Module::set_no_sync`] (when synchronisation cannot be
    /// turned off, `f` does not run).
    pub fn no_sync<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        /// Turns synchronisation back on when `f` unwinds.
        struct SyncOnDrop<'a>(Option<&'a Module>);
        impl Drop for SyncOnDrop<'_> {
            fn drop(&mut self) {
                if let Some(m) = self.0.take() {
                    let _ = m.set_no_sync(false); // unwinding: nothing to report it to
                }
            }
        }
        self.set_no_sync(true)?;
        let mut guard = SyncOnDrop(Some(self));
        let r = f();
        guard.0 = None;
        let on = self.set_no_sync(false);
        r.and_then(|v| on.map(|()| v))
    }

    /// Runs the module on its inputs (one, or input and target for a loss).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let mse = Module::mse_loss(Reduction::Sum)?;
    /// let a = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert_eq!(mse.forward_many(&[&a, &a])?.item()?, 0.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_forward`: an
    /// [`Error`] with the library's code and message.
    pub fn forward_many(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let h: Vec<*const ffi::dt_tensor> = inputs.iter().map(|t| t.as_ptr() as *const _).collect();
        Tensor::from_out(|o| unsafe { ffi::dt_module_forward(self.raw(), h.as_ptr(), h.len(), o) })
    }
    /// Runs the module on inputs of which some may be absent, `None` being PyTorch's
    /// `None` (passed to `dt_module_forward` as NULL): the attention modules' optional
    /// arguments. [`MultiheadAttention`] takes `[query, key,
    /// value, key_padding_mask, attn_mask]` (1 to 5; `key` `None`: self-attention),
    /// [`TransformerEncoderLayer`] and
    /// [`TransformerEncoder`] `[src, mask,
    /// src_key_padding_mask]` (1 to 3); trailing inputs may be left out or given as
    /// `None`. Their bool masks are `true` where attention is NOT allowed. Other modules
    /// take no optional input: a `None` is `InvalidArgument` for them.
    ///
    /// ```
    /// use devtensor::nn::MultiheadAttention;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mha = MultiheadAttention::new(4, 2).build()?;
    /// let q = Tensor::randn(&[3, 1, 4], DType::Float32, Device::CPU)?; // [L, N, E]
    /// // Causal attention: true above the diagonal forbids the later positions.
    /// let causal = Tensor::from_slice(
    ///     &[false, true, true, false, false, true, false, false, false], &[3, 3], Device::CPU)?;
    /// let y = mha.forward_with(&[Some(&q), None, None, None, Some(&causal)])?;
    /// assert_eq!(y.shape(), vec![3, 1, 4]);
    /// // Self-attention: the key and value default to the query.
    /// let a = mha.forward_with(&[Some(&q), None, None])?;
    /// assert!(a.allclose(&mha.forward_many(&[&q, &q, &q])?)?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Module::forward`]; [`ErrorCode::InvalidArgument`] for a required input
    /// given as `None` (the first one, or any of a module without optional inputs), or
    /// too many inputs (`dt_module_forward`).
    pub fn forward_with(&self, inputs: &[Option<&Tensor>]) -> Result<Tensor> {
        let h: Vec<*const ffi::dt_tensor> = inputs
            .iter()
            .map(|t| t.map_or(std::ptr::null(), |t| t.as_ptr() as *const _))
            .collect();
        // SAFETY: a live module handle, and h.len() tensor handles (or NULLs) borrowed for
        // the call; a valid out-pointer.
        Tensor::from_out(|o| unsafe { ffi::dt_module_forward(self.raw(), h.as_ptr(), h.len(), o) })
    }
    /// Runs a layer or container on one input. A module on another device than the input
    /// is `DeviceMismatch` ("module parameters are on cuda:0 but the input is on cpu").
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(3, 2, false, DType::Float32, Device::CPU)?;
    /// let y = lin.forward(&Tensor::zeros(&[5, 3], DType::Float32, Device::CPU)?)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![0.0; 10]); // no bias: zeros in, zeros out
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a wrong number of inputs, a target class out of
    /// range), [`ErrorCode::DeviceMismatch`] (the module and its input on two devices),
    /// [`ErrorCode::ShapeMismatch`] (naming both shapes), [`ErrorCode::DtypeMismatch`],
    /// [`ErrorCode::OutOfMemory`] (`dt_module_forward`).
    pub fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.forward_many(&[input])
    }
    /// Runs a loss on `(input, target)`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let mse = Module::mse_loss(Reduction::Mean)?;
    /// let a = Tensor::from_slice(&[2.0f32], &[1], Device::CPU)?;
    /// let b = Tensor::from_slice(&[0.0f32], &[1], Device::CPU)?;
    /// assert_eq!(mse.loss(&a, &b)?.item()?, 4.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Module::forward`].
    pub fn loss(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        self.forward_many(&[input, target])
    }

    /// Moves every parameter, gradient and buffer to `device` IN PLACE (and returns
    /// nothing new: handles to parameters follow the move). All or nothing.
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mut lin = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
    /// let w = lin.parameters()?.remove(0);
    /// lin.to(Device::cuda_if_available())?;
    /// assert_eq!(w.device(), Device::cuda_if_available()); // the handle followed
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidDevice`], [`ErrorCode::DeviceUnavailable`],
    /// [`ErrorCode::OutOfMemory`]; nothing moved then.
    pub fn to(&mut self, device: Device) -> Result<()> {
        check(unsafe { ffi::dt_module_to(self.raw(), device.to_raw()) })
    }
    /// The device of the first parameter or buffer (`cpu:0` when there is none).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 2, true, DType::Float32, Device::CPU)?;
    /// assert_eq!(lin.device()?, Device::CPU);
    /// assert_eq!(Module::relu()?.device()?, Device::CPU); // no parameter
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_device`: an
    /// [`Error`] with the library's code and message.
    pub fn device(&self) -> Result<Device> {
        let mut d = Device::CPU.to_raw();
        check(unsafe { ffi::dt_module_device(self.raw(), &mut d) })?;
        Device::from_raw(d)
    }
    /// Training mode (dropout active), recursively.
    ///
    /// ```
    /// # fn main() -> devtensor::Result<()> {
    /// let mut drop = devtensor::nn::Module::dropout(0.5)?;
    /// drop.eval()?;   // dropout off: forward is the identity
    /// drop.train()?;  // on again
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`] only.
    pub fn train(&mut self) -> Result<()> {
        check(unsafe { ffi::dt_module_train(self.raw()) })
    }
    /// Evaluation mode, recursively (see [`Module::train`]).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let mut model = Module::dropout(0.9)?;
    /// model.eval()?;
    /// let x = Tensor::ones(&[8], DType::Float32, Device::CPU)?;
    /// assert_eq!(model.forward(&x)?.to_vec::<f32>()?, vec![1.0; 8]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`] only.
    pub fn eval(&mut self) -> Result<()> {
        check(unsafe { ffi::dt_module_eval(self.raw()) })
    }

    fn named(
        &self,
        count: unsafe extern "C" fn(*const ffi::dt_module, *mut usize) -> ffi::dt_status,
        get: unsafe extern "C" fn(
            *const ffi::dt_module,
            usize,
            *mut std::os::raw::c_char,
            usize,
            *mut usize,
            *mut *mut ffi::dt_tensor,
        ) -> ffi::dt_status,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut n = 0usize;
        check(unsafe { count(self.raw(), &mut n) })?;
        (0..n)
            .map(|i| {
                let name = read_string(|b, c, nd| unsafe {
                    get(self.raw(), i, b, c, nd, std::ptr::null_mut())
                })?;
                let t = Tensor::from_out(|o| unsafe {
                    get(
                        self.raw(),
                        i,
                        std::ptr::null_mut(),
                        0,
                        std::ptr::null_mut(),
                        o,
                    )
                })?;
                Ok((name, t))
            })
            .collect()
    }

    /// Parameters with their state_dict names (`"0.weight"`), shared with the module;
    /// each tensor once, as PyTorch's `named_parameters()` (a module placed twice lists
    /// its parameters under its first name).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let model = Sequential::new()
    ///     .add(Module::linear(2, 4, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .add(Module::linear(4, 1, false, DType::Float32, Device::CPU)?)
    ///     .build()?;
    /// let names: Vec<String> = model.named_parameters()?.into_iter().map(|(n, _)| n).collect();
    /// assert_eq!(names, ["0.weight", "0.bias", "2.weight"]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_parameter_count`: an
    /// [`Error`] with the library's code and message.
    pub fn named_parameters(&self) -> Result<Vec<(String, Tensor)>> {
        self.named(ffi::dt_module_parameter_count, ffi::dt_module_parameter)
    }
    /// The parameters (shared with the module).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let model = Sequential::new()
    ///     .add(Module::linear(2, 4, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .add(Module::linear(4, 1, false, DType::Float32, Device::CPU)?)
    ///     .build()?;
    /// let p = model.parameters()?;
    /// assert_eq!((p.len(), p[0].shape()), (3, vec![4, 2]));
    /// assert!(p.iter().all(|t| t.requires_grad()));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Module::named_parameters`].
    pub fn parameters(&self) -> Result<Vec<Tensor>> {
        Ok(self
            .named_parameters()?
            .into_iter()
            .map(|(_, t)| t)
            .collect())
    }
    /// Buffers with their state_dict names (a loss's `"weight"`).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let w = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let ce = Module::cross_entropy_loss(Some(&w), Reduction::Mean, -100, 0.0)?;
    /// assert_eq!(ce.named_buffers()?[0].0, "weight");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_buffer_count`: an
    /// [`Error`] with the library's code and message.
    pub fn named_buffers(&self) -> Result<Vec<(String, Tensor)>> {
        self.named(ffi::dt_module_buffer_count, ffi::dt_module_buffer)
    }

    /// Another owning handle to the SAME module (`dt_module_retain`), not a copy: the
    /// explicit way to share a module, e.g. to keep using a layer that a [`Sequential`]
    /// also holds. `&mut self` on one handle does not exclude calls through another,
    /// which the header allows (see [`nn`](crate::nn)'s THREADING). To share a model
    /// between threads, `Arc<Module>` works as well.
    ///
    /// ```
    /// use devtensor::nn::{Module, Sequential};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let first = Module::linear(2, 2, false, DType::Float32, Device::CPU)?;
    /// let model = Sequential::new().add(first.share()).add(Module::relu()?).build()?;
    /// // The same weight tensor through both handles.
    /// assert!(first.parameters()?[0].shares_storage(&model.parameters()?[0]));
    /// # Ok(()) }
    /// ```
    pub fn share(&self) -> Module {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_module_retain(self.raw()) };
        debug_assert_eq!(st, ffi::DT_OK);
        Module { ptr: self.ptr }
    }

    /// Saves the state dict as a safetensors file with PyTorch's key names.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let path = std::env::temp_dir().join(format!("devtensor-doc-save-{}.safetensors", std::process::id()));
    /// lin.save(&path)?; // keys "weight" and "bias", as torch writes them
    /// assert!(path.exists());
    /// std::fs::remove_file(&path).unwrap();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_save`: an
    /// [`Error`] with the library's code and message.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let p = path_arg(path.as_ref())?;
        check(unsafe { ffi::dt_module_save(self.raw(), p.as_ptr()) })
    }
    /// Loads a safetensors file (e.g. written by PyTorch) into the module, all or nothing.
    /// The values are written in place: parameter handles see them.
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let path = std::env::temp_dir().join(format!("devtensor-doc-load-{}.safetensors", std::process::id()));
    /// let a = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
    /// let mut b = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
    /// a.save(&path)?;
    /// b.load(&path)?;
    /// assert_eq!(a.parameters()?[0].to_vec::<f32>()?, b.parameters()?[0].to_vec::<f32>()?);
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Io`] (no such file), [`ErrorCode::Format`] (a bad file, a missing
    /// key or a wrong shape, named), [`ErrorCode::InvalidArgument`] (a path that is not
    /// UTF-8 or holds a NUL byte), [`ErrorCode::OutOfMemory`]; the module is unchanged
    /// then.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let p = path_arg(path.as_ref())?;
        check(unsafe { ffi::dt_module_load(self.raw(), p.as_ptr()) })
    }

    /// The module's state dict (`dt_module_state_dict`), as PyTorch's
    /// `model.state_dict()`: its parameters then its buffers, by their PyTorch names
    /// (`"0.weight"`), SHARED with the module (the tensors are the module's own, not
    /// copies: they see later training steps and moves). Save it with
    /// [`StateDict::save`], or copy it into another module with
    /// [`Module::load_state_dict`].
    ///
    /// ```
    /// use devtensor::nn::{Module, Sequential};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let model = Sequential::new()
    ///     .add(Module::linear(3, 4, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .add(Module::linear(4, 2, false, DType::Float32, Device::CPU)?)
    ///     .build()?;
    /// let sd = model.state_dict()?;
    /// assert_eq!(sd.names()?, ["0.weight", "0.bias", "2.weight"]);
    /// assert_eq!(sd.get("2.weight")?.unwrap().shape(), vec![2, 4]); // [out, in]
    /// assert!(sd.get("0.weight")?.unwrap().shares_storage(&model.parameters()?[0]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_state_dict`: an
    /// [`Error`] with the library's code and message.
    pub fn state_dict(&self) -> Result<StateDict> {
        StateDict::from_out(|o| unsafe { ffi::dt_module_state_dict(self.raw(), o) })
    }

    /// Copies every tensor of `sd` into the module's parameter or buffer of the same
    /// name (`dt_module_load_state_dict`), converting dtype and device, as PyTorch's
    /// `load_state_dict(sd, strict=True)`: all or nothing. The values are written in
    /// place, so parameter handles (and an optimizer over them) see them.
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mut lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let sd = StateDict::from_pairs([
    ///     ("weight", Tensor::from_slice(&[2.0f32, -1.0], &[1, 2], Device::CPU)?),
    ///     ("bias", Tensor::from_slice(&[0.5f32], &[1], Device::CPU)?),
    /// ])?;
    /// lin.load_state_dict(&sd)?;
    /// let x = Tensor::from_slice(&[3.0f32, 4.0], &[1, 2], Device::CPU)?;
    /// assert_eq!(lin.forward(&x)?.to_vec::<f32>()?, vec![2.5]); // 2*3 - 1*4 + 0.5
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] for a missing or unexpected key or a wrong shape
    /// (the message names the key), [`ErrorCode::OutOfMemory`]
    /// (`dt_module_load_state_dict`); the module is unchanged then.
    pub fn load_state_dict(&mut self, sd: &StateDict) -> Result<()> {
        check(unsafe { ffi::dt_module_load_state_dict(self.raw(), sd.as_raw()) })
    }
}


impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: we own one reference. Never panics.
        let _ = unsafe { ffi::dt_module_release(self.raw()) };
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut n = 0usize;
        unsafe { ffi::dt_module_parameter_count(self.raw(), &mut n) };
        match self.device() {
            Ok(d) => write!(f, "Module[{n} parameters, {d}]"),
            Err(_) => write!(f, "Module[{n} parameters]"),
        }
    }
}

/// Builds a `Sequential` container: child `i` is named `"i"`, as in PyTorch.
#[derive(Default)]
pub struct Sequential {
    children: Vec<Module>,
}

impl Sequential {
    /// An empty builder.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let model = Sequential::new()
    ///     .add(Module::linear(2, 4, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .add(Module::linear(4, 1, false, DType::Float32, Device::CPU)?)
    ///     .build()?;
    /// assert_eq!(model.parameters()?.len(), 3);
    /// # Ok(()) }
    /// ```
    pub fn new() -> Sequential {
        Sequential {
            children: Vec::new(),
        }
    }
    /// Appends a module (the container keeps its own reference).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let model = Sequential::new()
    ///     .add(Module::linear(2, 4, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .add(Module::linear(4, 1, false, DType::Float32, Device::CPU)?)
    ///     .build()?;
    /// assert_eq!(model.named_parameters()?[2].0, "2.weight"); // child 2
    /// # Ok(()) }
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn add(mut self, m: Module) -> Sequential {
        self.children.push(m);
        self
    }
    /// The container.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let model = Sequential::new()
    ///     .add(Module::linear(2, 4, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .add(Module::linear(4, 1, false, DType::Float32, Device::CPU)?)
    ///     .build()?;
    /// assert_eq!(model.forward(&Tensor::zeros(&[3, 2], DType::Float32, Device::CPU)?)?.shape(), vec![3, 1]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_sequential_new`: an
    /// [`Error`] with the library's code and message.
    pub fn build(self) -> Result<Module> {
        let h: Vec<*mut ffi::dt_module> = self.children.iter().map(|m| m.raw()).collect();
        new_module(|o| unsafe { ffi::dt_sequential_new(h.as_ptr(), h.len(), o) })
    }
}

/// An optimizer over a set of parameters (`dt_optimizer`): SGD, Adam, AdamW, RMSprop,
/// Adagrad. Owns one reference; dropping releases it and never panics. `Send + Sync`: it
/// may move to the thread that trains; [`Optimizer::step`], [`Optimizer::zero_grad`],
/// [`Optimizer::set_lr`] and [`Optimizer::load_state_dict`] take `&mut self`.
pub struct Optimizer {
    ptr: NonNull<ffi::dt_optimizer>,
}

// SAFETY: include/devtensor.h: every function is safe from any thread, reference counts
// and handle checks are atomic, and "steps of one optimizer run one at a time (a
// concurrent call waits)". An Optimizer is only a handle; its methods that act take
// `&mut self`, and a reference is released only in Drop, which needs ownership.
unsafe impl Send for Optimizer {}
unsafe impl Sync for Optimizer {}

raw_handle!(
    Optimizer,
    "devtensor::nn::Optimizer",
    dt_optimizer,
    dt_optimizer_retain,
    dt_optimizer_release,
    "devtensor::nn::Sgd::new(&devtensor::nn::Module::linear(2, 2, true, devtensor::DType::Float32, devtensor::Device::CPU)?.parameters()?, 0.1).build()?"
);

fn new_opt(call: impl FnOnce(*mut *mut ffi::dt_optimizer) -> ffi::dt_status) -> Result<Optimizer> {
    check_version()?;
    let mut out: *mut ffi::dt_optimizer = std::ptr::null_mut();
    check(call(&mut out))?;
    NonNull::new(out)
        .map(|ptr| Optimizer { ptr })
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL optimizer",
            )
        })
}

impl Optimizer {
    /// `torch.optim.SGD(params, lr, momentum, dampening, weight_decay, nesterov)`.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// // lr 0.1, momentum 0.9, dampening 0, weight decay 0, no Nesterov (nn::Sgd names them)
    /// let mut opt = Optimizer::sgd(&lin.parameters()?, 0.1, 0.9, 0.0, 0.0, false)?;
    /// let x = Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?;
    /// let before = lin.parameters()?[1].item()?;
    /// opt.zero_grad()?;
    /// lin.forward(&x)?.sum_all()?.backward()?; // d/d(bias) = 1
    /// opt.step()?;
    /// assert!((lin.parameters()?[1].item()? - (before - 0.1)).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_sgd_new`: an
    /// [`Error`] with the library's code and message.
    pub fn sgd(
        params: &[Tensor],
        lr: f64,
        momentum: f64,
        dampening: f64,
        weight_decay: f64,
        nesterov: bool,
    ) -> Result<Optimizer> {
        let h: Vec<*const ffi::dt_tensor> = params.iter().map(|t| t.as_ptr() as *const _).collect();
        new_opt(|o| unsafe {
            ffi::dt_sgd_new(
                h.as_ptr(),
                h.len(),
                lr,
                momentum,
                dampening,
                weight_decay,
                nesterov as i32,
                o,
            )
        })
    }
    /// `torch.optim.Adam` (`decoupled == false`) or `AdamW` (`true`).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// // lr 1e-3, betas, eps, weight decay 0, coupled (Adam; true is AdamW; nn::Adam names them)
    /// let mut opt = Optimizer::adam(&lin.parameters()?, 1e-3, (0.9, 0.999), 1e-8, 0.0, false)?;
    /// let x = Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?;
    /// let before = lin.parameters()?[1].item()?;
    /// opt.zero_grad()?;
    /// lin.forward(&x)?.sum_all()?.backward()?; // d/d(bias) = 1
    /// opt.step()?; // Adam's first step moves each parameter by about lr
    /// assert!((lin.parameters()?[1].item()? - (before - 1e-3)).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_adam_new`: an
    /// [`Error`] with the library's code and message.
    #[allow(clippy::too_many_arguments)]
    pub fn adam(
        params: &[Tensor],
        lr: f64,
        betas: (f64, f64),
        eps: f64,
        weight_decay: f64,
        decoupled: bool,
    ) -> Result<Optimizer> {
        let h: Vec<*const ffi::dt_tensor> = params.iter().map(|t| t.as_ptr() as *const _).collect();
        new_opt(|o| unsafe {
            ffi::dt_adam_new(
                h.as_ptr(),
                h.len(),
                lr,
                betas.0,
                betas.1,
                eps,
                weight_decay,
                decoupled as i32,
                o,
            )
        })
    }
    /// `torch.optim.RMSprop(params, lr, alpha, eps, weight_decay, momentum, centered)`:
    /// `square_avg = alpha * square_avg + (1 - alpha) * g²`; `centered` also keeps
    /// `grad_avg = alpha * grad_avg + (1 - alpha) * g` and uses the variance
    /// `square_avg - grad_avg²` instead; `avg = sqrt(that) + eps`; then `p -= lr * g / avg`,
    /// or with a momentum `buf = momentum * buf + g / avg` and `p -= lr * buf` (`g`: the
    /// gradient plus `weight_decay * p`). A step cannot be captured into a
    /// [`Graph`](crate::Graph) (its step count lives on the host).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// // lr 0.01, alpha 0.99, eps 1e-8, weight decay 0, no momentum, not centered
    /// // (PyTorch's defaults; nn::RmsProp names them)
    /// let mut opt = Optimizer::rmsprop(&lin.parameters()?, 0.01, 0.99, 1e-8, 0.0, 0.0, false)?;
    /// let x = Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?;
    /// let before = lin.parameters()?[1].item()?;
    /// opt.zero_grad()?;
    /// lin.forward(&x)?.sum_all()?.backward()?; // d/d(bias) = 1
    /// opt.step()?; // square_avg = 0.01 * 1², so the bias moves by 0.01 / sqrt(0.01) = 0.1
    /// assert!((lin.parameters()?[1].item()? - (before - 0.1)).abs() < 1e-5);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_rmsprop_new`: an
    /// [`Error`] with the library's code and message.
    #[allow(clippy::too_many_arguments)]
    pub fn rmsprop(
        params: &[Tensor],
        lr: f64,
        alpha: f64,
        eps: f64,
        weight_decay: f64,
        momentum: f64,
        centered: bool,
    ) -> Result<Optimizer> {
        let h: Vec<*const ffi::dt_tensor> = params.iter().map(|t| t.as_ptr() as *const _).collect();
        new_opt(|o| unsafe {
            ffi::dt_rmsprop_new(
                h.as_ptr(),
                h.len(),
                lr,
                alpha,
                eps,
                weight_decay,
                momentum,
                centered as i32,
                o,
            )
        })
    }
    /// `torch.optim.Adagrad(params, lr, lr_decay, weight_decay, initial_accumulator_value,
    /// eps)`: at a parameter's step `t` (from 1), `sum += g²` and
    /// `p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)` (`g`: the gradient plus
    /// `weight_decay * p`). Each parameter's `sum` is made here, filled with
    /// `initial_accumulator_value` on the parameter's device, so a
    /// [`state_dict`](Optimizer::state_dict) taken before the first step already holds it
    /// (with step 0), as PyTorch's. A step cannot be captured into a
    /// [`Graph`](crate::Graph) (its step count lives on the host).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// // lr 0.1, lr decay 0, weight decay 0, initial accumulator 0, eps 1e-10 (nn::Adagrad
    /// // names them)
    /// let mut opt = Optimizer::adagrad(&lin.parameters()?, 0.1, 0.0, 0.0, 0.0, 1e-10)?;
    /// let x = Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?;
    /// let before = lin.parameters()?[1].item()?;
    /// opt.zero_grad()?;
    /// lin.forward(&x)?.sum_all()?.backward()?; // d/d(bias) = 1
    /// opt.step()?; // sum = 1², so the first step moves the bias by lr * 1 / sqrt(1)
    /// assert!((lin.parameters()?[1].item()? - (before - 0.1)).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_adagrad_new`: an
    /// [`Error`] with the library's code and message.
    pub fn adagrad(
        params: &[Tensor],
        lr: f64,
        lr_decay: f64,
        weight_decay: f64,
        initial_accumulator_value: f64,
        eps: f64,
    ) -> Result<Optimizer> {
        let h: Vec<*const ffi::dt_tensor> = params.iter().map(|t| t.as_ptr() as *const _).collect();
        new_opt(|o| unsafe {
            ffi::dt_adagrad_new(
                h.as_ptr(),
                h.len(),
                lr,
                lr_decay,
                weight_decay,
                initial_accumulator_value,
                eps,
                o,
            )
        })
    }
    /// One update of every parameter that has a gradient.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Optimizer::sgd(&lin.parameters()?, 0.5, 0.0, 0.0, 0.0, false)?;
    /// let x = Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?;
    /// let before = lin.parameters()?[1].item()?;
    /// opt.zero_grad()?;
    /// lin.forward(&x)?.sum_all()?.backward()?; // d/d(bias) = 1
    /// opt.step()?;
    /// assert!((lin.parameters()?[1].item()? - (before - 0.5)).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_optimizer_step`: an
    /// [`Error`] with the library's code and message.
    pub fn step(&mut self) -> Result<()> {
        check(unsafe { ffi::dt_optimizer_step(self.ptr.as_ptr()) })
    }
    /// Drops every parameter's gradient (`zero_grad(set_to_none=True)`).
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Optimizer::sgd(&lin.parameters()?, 0.5, 0.0, 0.0, 0.0, false)?;
    /// lin.forward(&Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?)?.sum_all()?.backward()?;
    /// opt.zero_grad()?;
    /// assert!(lin.parameters()?[0].grad()?.is_none());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_optimizer_zero_grad`: an
    /// [`Error`] with the library's code and message.
    pub fn zero_grad(&mut self) -> Result<()> {
        check(unsafe { ffi::dt_optimizer_zero_grad(self.ptr.as_ptr()) })
    }
}

impl Optimizer {
    /// The learning rate the next [`step`](Optimizer::step) uses (`dt_optimizer_lr`), as
    /// reading `param_groups[0]["lr"]` in PyTorch.
    ///
    /// ```
    /// use devtensor::nn::{Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// assert_eq!(opt.lr()?, 0.1);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_optimizer_lr`
    /// ([`ErrorCode::InvalidHandle`] only, through the safe API).
    pub fn lr(&self) -> Result<f64> {
        let mut lr = 0.0f64;
        check(unsafe { ffi::dt_optimizer_lr(self.ptr.as_ptr(), &mut lr) })?;
        Ok(lr)
    }
    /// Sets the learning rate of the steps that follow (`dt_optimizer_set_lr`), as
    /// assigning `param_groups[...]["lr"]` in PyTorch: what a schedule (warm-up, step or
    /// cosine decay) calls between steps. The other settings and the state (momentum
    /// buffers, Adam's moments and step count) are kept. A step captured into a
    /// [`Graph`](crate::Graph) replays the rate it was captured with: capture again after
    /// changing it.
    ///
    /// ```
    /// use devtensor::nn::{Module, Sgd};
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// for epoch in 0..3 {
    ///     opt.set_lr(0.1 * 0.5f64.powi(epoch))?; // halve the rate every epoch
    ///     opt.zero_grad()?;
    ///     lin.forward(&Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?)?.sum_all()?.backward()?;
    ///     opt.step()?;
    /// }
    /// assert_eq!(opt.lr()?, 0.025);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] for a negative, infinite or NaN `lr` (the rate stays as it
    /// was), [`ErrorCode::InvalidHandle`].
    pub fn set_lr(&mut self, lr: f64) -> Result<()> {
        check(unsafe { ffi::dt_optimizer_set_lr(self.ptr.as_ptr(), lr) })
    }
    /// The optimizer's setting `name` (`dt_optimizer_option`), as reading
    /// `param_groups[0][name]` in PyTorch: the value it was built with (or PyTorch's
    /// default), or the last [`set_option`](Optimizer::set_option),
    /// [`set_lr`](Optimizer::set_lr) or [`load_state_dict`](Optimizer::load_state_dict).
    /// Names are PyTorch's, Adam's `betas` as `"beta1"` and `"beta2"`, flags as 0 or 1:
    ///
    /// | optimizer    | settings |
    /// |--------------|----------|
    /// | SGD          | `lr`, `momentum`, `dampening`, `weight_decay`, `nesterov`, `maximize` |
    /// | Adam, AdamW  | `lr`, `beta1`, `beta2`, `eps`, `weight_decay`, `amsgrad`, `maximize` |
    /// | RMSprop      | `lr`, `alpha`, `eps`, `weight_decay`, `momentum`, `centered`, `maximize` |
    /// | Adagrad      | `lr`, `lr_decay`, `weight_decay`, `eps`, `initial_accumulator_value`, `maximize` |
    ///
    /// `maximize` (every optimizer, default 0) steps up the gradient instead of down (the
    /// gradient is negated first, as torch's `maximize=True`); `amsgrad` (Adam and AdamW,
    /// default 0) divides by the running maximum of `exp_avg_sq`, kept as the state
    /// `"max_exp_avg_sq"`.
    ///
    /// ```
    /// use devtensor::nn::{Adam, Module};
    /// use devtensor::{DType, Device, ErrorCode};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Adam::new(&lin.parameters()?, 1e-3).betas(0.8, 0.99).build()?;
    /// assert_eq!(opt.option("beta1")?, 0.8);
    /// assert_eq!(opt.option("beta2")?, 0.99);
    /// assert_eq!(opt.option("amsgrad")?, 0.0); // PyTorch's default
    /// let e = opt.option("betas").unwrap_err(); // torch's tuple: beta1 and beta2 here
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// assert!(e.message.contains("lr, beta1, beta2, eps, weight_decay, amsgrad, maximize"), "{}", e.message);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: a name this optimizer does not have (the message
    /// lists those it has, e.g. `Adam has no setting "betas" (its settings: lr, beta1,
    /// beta2, eps, weight_decay, amsgrad, maximize)`), a name holding a NUL byte;
    /// [`ErrorCode::InvalidHandle`] (`dt_optimizer_option`).
    pub fn option(&self, name: &str) -> Result<f64> {
        let c = option_name(name)?;
        let mut v = 0.0f64;
        // SAFETY: a live handle, a NUL-terminated name, a local to write to.
        check(unsafe { ffi::dt_optimizer_option(self.ptr.as_ptr(), c.as_ptr(), &mut v) })?;
        Ok(v)
    }
    /// Sets the setting `name` (one of [`option`](Optimizer::option)'s names) for the
    /// steps that follow (`dt_optimizer_set_option`), as assigning
    /// `param_groups[0][name]` in PyTorch: what a schedule of momentum or betas, such as
    /// OneCycleLR's momentum cycling, does between steps. The value is checked as the
    /// constructor checks it, together with the other settings (`nesterov` needs a
    /// momentum and no dampening; a flag is 0 or 1); when it is refused nothing changes.
    /// The state is kept; state a new setting needs (amsgrad's `max_exp_avg_sq`, a
    /// momentum buffer, centered RMSprop's `grad_avg`) starts from zeros at the next
    /// [`step`](Optimizer::step), and a [`state_dict`](Optimizer::state_dict) holds it
    /// from then on; `initial_accumulator_value` only fills sums made later. A step
    /// captured into a [`Graph`](crate::Graph) replays the settings it was captured with:
    /// capture again after changing them.
    ///
    /// ```
    /// use devtensor::nn::{Module, Sgd};
    /// use devtensor::{DType, Device, ErrorCode, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Sgd::new(&lin.parameters()?, 0.1).momentum(0.95).build()?;
    /// for momentum in [0.95, 0.9, 0.85] {
    ///     opt.set_option("momentum", momentum)?; // a momentum schedule, as OneCycleLR's
    ///     opt.zero_grad()?;
    ///     lin.forward(&Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?)?.sum_all()?.backward()?;
    ///     opt.step()?;
    ///     assert_eq!(opt.option("momentum")?, momentum);
    /// }
    /// // Nesterov momentum needs a momentum and zero dampening: refused, nothing changes.
    /// opt.set_option("dampening", 0.1)?;
    /// let e = opt.set_option("nesterov", 1.0).unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// assert!(e.message.contains("Nesterov momentum requires a momentum and zero dampening"), "{}", e.message);
    /// assert_eq!(opt.option("nesterov")?, 0.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: an unknown name (the message lists the optimizer's
    /// settings), a value the constructor would refuse (with its message, e.g. `SGD:
    /// Nesterov momentum requires a momentum and zero dampening`), a flag not 0 or 1
    /// (`SGD: "nesterov" is a flag: 0 or 1, got 2`), a name holding a NUL byte;
    /// [`ErrorCode::InvalidHandle`] (`dt_optimizer_set_option`). The optimizer is
    /// unchanged then.
    pub fn set_option(&mut self, name: &str, value: f64) -> Result<()> {
        let c = option_name(name)?;
        // SAFETY: a live handle, a NUL-terminated name.
        check(unsafe { ffi::dt_optimizer_set_option(self.ptr.as_ptr(), c.as_ptr(), value) })
    }
    /// The optimizer's state as a new [`StateDict`] (`dt_optimizer_state_dict`), for
    /// checkpoints (save it with [`StateDict::save`]), under PyTorch's names for
    /// `optimizer.state_dict()`'s entries: every setting [`Optimizer::option`] reads, `"lr"`
    /// first, each a 0-d `float64` tensor (PyTorch's `param_groups`, so a schedule of
    /// momentum or betas resumes where it was), and, per parameter `i` (its position in the list the optimizer was made with) that has
    /// state, in PyTorch's order: `"state.<i>.momentum_buffer"` (SGD with momentum);
    /// `"state.<i>.step"` (a 0-d `float32` tensor on the CPU, as PyTorch's),
    /// `"state.<i>.exp_avg"` and `"state.<i>.exp_avg_sq"` (Adam, AdamW);
    /// `"state.<i>.step"`, `"state.<i>.square_avg"`, `"state.<i>.momentum_buffer"` (with a
    /// momentum) and `"state.<i>.grad_avg"` (centered) (RMSprop); `"state.<i>.step"` and
    /// `"state.<i>.sum"` (Adagrad, whose state exists from construction: before the first
    /// step it holds step 0 and the initial accumulator value). The tensors are copies:
    /// later steps do not change them. [`Optimizer::load_state_dict`] restores it.
    ///
    /// ```
    /// use devtensor::nn::{Module, Sgd};
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Sgd::new(&lin.parameters()?, 0.1).momentum(0.9).build()?;
    /// let settings = ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"];
    /// assert_eq!(opt.state_dict()?.names()?, settings); // no state before the first step
    /// lin.forward(&Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?)?.sum_all()?.backward()?;
    /// opt.step()?;
    /// let sd = opt.state_dict()?;
    /// assert_eq!(sd.names()?[6..], ["state.0.momentum_buffer", "state.1.momentum_buffer"]);
    /// assert_eq!(sd.get("momentum")?.unwrap().item()?, 0.9);
    /// assert_eq!(sd.get("lr")?.unwrap().item()?, 0.1);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`], [`ErrorCode::OutOfMemory`]
    /// (`dt_optimizer_state_dict`).
    pub fn state_dict(&self) -> Result<StateDict> {
        StateDict::from_out(|o| unsafe { ffi::dt_optimizer_state_dict(self.ptr.as_ptr(), o) })
    }
    /// Restores a state saved by [`Optimizer::state_dict`] from an optimizer of the same
    /// kind over parameters of the same shapes (`dt_optimizer_load_state_dict`), as
    /// PyTorch's `optimizer.load_state_dict`: the tensors are copied to each parameter's
    /// device and dtype, the settings restored (each optional: absent, as in checkpoints
    /// written before they were saved, the setting stays; they are checked together as
    /// [`Optimizer::set_option`] checks one), and parameters without an entry start with
    /// no state, as before their first step. All or nothing: every key, shape and value is checked before anything
    /// changes. State tensors that already exist are written in place, so a
    /// [`Graph`](crate::Graph) that captured a step goes on with the loaded state.
    ///
    /// ```
    /// use devtensor::nn::{Adam, Module};
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Adam::new(&lin.parameters()?, 1e-3).build()?;
    /// lin.forward(&Tensor::ones(&[1, 2], DType::Float32, Device::CPU)?)?.sum_all()?.backward()?;
    /// opt.step()?;
    /// let checkpoint = opt.state_dict()?;
    /// // Later, or in another process after StateDict::save / StateDict::load:
    /// let mut resumed = Adam::new(&lin.parameters()?, 1e-3).build()?;
    /// resumed.load_state_dict(&checkpoint)?;
    /// assert_eq!(resumed.state_dict()?.names()?, checkpoint.names()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a key this optimizer does not have, such as
    /// another kind of optimizer's; a parameter index out of range; a shape that is not
    /// the parameter's; a missing piece of a parameter's state; a negative or fractional
    /// step: the message names the key), [`ErrorCode::InvalidHandle`],
    /// [`ErrorCode::OutOfMemory`]. The optimizer is unchanged then.
    pub fn load_state_dict(&mut self, sd: &StateDict) -> Result<()> {
        check(unsafe { ffi::dt_optimizer_load_state_dict(self.ptr.as_ptr(), sd.as_raw()) })
    }
}

impl Optimizer {
    /// Another owning handle to the SAME optimizer (`dt_optimizer_retain`): the same
    /// state (momentum, moments, step count), not a copy.
    ///
    /// ```
    /// # use devtensor::nn::{Module, Optimizer, Reduction, Sequential};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let mut opt = Optimizer::sgd(&lin.parameters()?, 0.5, 0.0, 0.0, 0.0, false)?;
    /// let mut same = opt.share();
    /// same.zero_grad()?; // the same optimizer
    /// opt.step()?;
    /// # Ok(()) }
    /// ```
    pub fn share(&self) -> Optimizer {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_optimizer_retain(self.ptr.as_ptr()) };
        debug_assert_eq!(st, ffi::DT_OK);
        Optimizer { ptr: self.ptr }
    }
}

impl std::fmt::Debug for Optimizer {
    /// `Optimizer` (the handle's kind only: the C ABI tells no more).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Optimizer")
    }
}

impl Drop for Optimizer {
    fn drop(&mut self) {
        let _ = unsafe { ffi::dt_optimizer_release(self.ptr.as_ptr()) };
    }
}


// ------------------------------------------------------------------------ builders

/// `torch.nn.CrossEntropyLoss` with PyTorch's defaults, changed by setters:
/// `weight=None`, `reduction="mean"`, `ignore_index=-100`, `label_smoothing=0.0`.
/// [`build`](CrossEntropyLoss::build) makes the loss [`Module`]
/// (`dt_cross_entropy_loss_new`; the class weights are copied into its buffer
/// `"weight"`).
///
/// ```
/// use devtensor::nn::{CrossEntropyLoss, Reduction};
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let loss_fn = CrossEntropyLoss::new().label_smoothing(0.1).build()?;
/// let logits = Tensor::from_slice(&[2.0f32, 0.0, 0.0, 2.0], &[2, 2], Device::CPU)?;
/// let target = Tensor::from_slice(&[0i64, 1], &[2], Device::CPU)?;
/// let l = loss_fn.loss(&logits, &target)?.item()?;
/// assert!((l - 0.2269).abs() < 1e-4); // torch: 0.2269
/// let per_sample = CrossEntropyLoss::new().reduction(Reduction::None).build()?;
/// assert_eq!(per_sample.loss(&logits, &target)?.shape(), vec![2]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct CrossEntropyLoss {
    weight: Option<Tensor>,
    reduction: Reduction,
    ignore_index: i64,
    label_smoothing: f64,
}

impl Default for CrossEntropyLoss {
    fn default() -> CrossEntropyLoss {
        CrossEntropyLoss::new()
    }
}

impl CrossEntropyLoss {
    /// PyTorch's defaults (see the type).
    pub fn new() -> CrossEntropyLoss {
        CrossEntropyLoss {
            weight: None,
            reduction: Reduction::Mean,
            ignore_index: -100,
            label_smoothing: 0.0,
        }
    }
    /// A weight per class (a 1-d floating tensor of `C` values); copied at `build`.
    pub fn weight(mut self, weight: &Tensor) -> CrossEntropyLoss {
        self.weight = Some(weight.clone());
        self
    }
    /// `reduction=` (default [`Reduction::Mean`]).
    pub fn reduction(mut self, reduction: Reduction) -> CrossEntropyLoss {
        self.reduction = reduction;
        self
    }
    /// `ignore_index=`: targets of this class add nothing (default -100).
    pub fn ignore_index(mut self, ignore_index: i64) -> CrossEntropyLoss {
        self.ignore_index = ignore_index;
        self
    }
    /// `label_smoothing=`, in [0, 1] (default 0.0).
    pub fn label_smoothing(mut self, label_smoothing: f64) -> CrossEntropyLoss {
        self.label_smoothing = label_smoothing;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a label smoothing outside [0, 1]),
    /// [`ErrorCode::DtypeMismatch`] / [`ErrorCode::ShapeMismatch`] (a weight that is not
    /// a 1-d floating tensor), [`ErrorCode::OutOfMemory`].
    pub fn build(&self) -> Result<Module> {
        Module::cross_entropy_loss(
            self.weight.as_ref(),
            self.reduction,
            self.ignore_index,
            self.label_smoothing,
        )
    }
}

/// `torch.nn.NLLLoss` with PyTorch's defaults, changed by setters: `weight=None`,
/// `reduction="mean"`, `ignore_index=-100`. [`build`](NllLoss::build) makes the loss
/// [`Module`] (`dt_nll_loss_new`); its input is log-probabilities.
///
/// ```
/// use devtensor::nn::NllLoss;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let logp = Tensor::from_slice(&[-0.5f32, -1.0, -2.0, -0.25], &[2, 2], Device::CPU)?;
/// let target = Tensor::from_slice(&[0i64, 1], &[2], Device::CPU)?;
/// let l = NllLoss::new().build()?.loss(&logp, &target)?.item()?;
/// assert_eq!(l, 0.375); // -(-0.5 + -0.25) / 2
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct NllLoss {
    weight: Option<Tensor>,
    reduction: Reduction,
    ignore_index: i64,
}

impl Default for NllLoss {
    fn default() -> NllLoss {
        NllLoss::new()
    }
}

impl NllLoss {
    /// PyTorch's defaults (see the type).
    pub fn new() -> NllLoss {
        NllLoss {
            weight: None,
            reduction: Reduction::Mean,
            ignore_index: -100,
        }
    }
    /// A weight per class (a 1-d floating tensor of `C` values); copied at `build`.
    pub fn weight(mut self, weight: &Tensor) -> NllLoss {
        self.weight = Some(weight.clone());
        self
    }
    /// `reduction=` (default [`Reduction::Mean`]).
    pub fn reduction(mut self, reduction: Reduction) -> NllLoss {
        self.reduction = reduction;
        self
    }
    /// `ignore_index=` (default -100).
    pub fn ignore_index(mut self, ignore_index: i64) -> NllLoss {
        self.ignore_index = ignore_index;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// As [`CrossEntropyLoss::build`].
    pub fn build(&self) -> Result<Module> {
        Module::nll_loss(self.weight.as_ref(), self.reduction, self.ignore_index)
    }
}

/// `torch.nn.MSELoss` with PyTorch's default `reduction="mean"`, changed by a setter.
/// [`build`](MseLoss::build) makes the loss [`Module`] (`dt_mse_loss_new`).
///
/// ```
/// use devtensor::nn::{MseLoss, Reduction};
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
/// let y = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
/// assert_eq!(MseLoss::new().build()?.loss(&x, &y)?.item()?, 2.5);
/// assert_eq!(MseLoss::new().reduction(Reduction::Sum).build()?.loss(&x, &y)?.item()?, 5.0);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct MseLoss {
    reduction: Reduction,
}

impl MseLoss {
    /// PyTorch's default, `reduction="mean"`.
    pub fn new() -> MseLoss {
        MseLoss {
            reduction: Reduction::Mean,
        }
    }
    /// `reduction=` (default [`Reduction::Mean`]).
    pub fn reduction(mut self, reduction: Reduction) -> MseLoss {
        self.reduction = reduction;
        self
    }
    /// The loss module.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::OutOfMemory`] only.
    pub fn build(&self) -> Result<Module> {
        Module::mse_loss(self.reduction)
    }
}

/// `torch.optim.SGD(params, lr)` with PyTorch's defaults for the rest, changed by
/// setters: `momentum=0`, `dampening=0`, `weight_decay=0`, `nesterov=False`.
/// [`build`](Sgd::build) makes the [`Optimizer`] (`dt_sgd_new`).
///
/// ```
/// use devtensor::nn::{Module, Sgd};
/// use devtensor::{DType, Device};
///
/// # fn main() -> devtensor::Result<()> {
/// let model = Module::linear(4, 2, true, DType::Float32, Device::CPU)?;
/// let mut opt = Sgd::new(&model.parameters()?, 0.1).momentum(0.9).nesterov(true).build()?;
/// opt.step()?; // no gradients yet: nothing changes
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Sgd {
    params: Vec<Tensor>,
    lr: f64,
    momentum: f64,
    dampening: f64,
    weight_decay: f64,
    nesterov: bool,
}

impl Sgd {
    /// SGD over `params` (the optimizer holds its own references) with learning rate
    /// `lr`, and PyTorch's defaults for the rest.
    pub fn new(params: &[Tensor], lr: f64) -> Sgd {
        Sgd {
            params: params.to_vec(),
            lr,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
        }
    }
    /// `momentum=` (default 0).
    pub fn momentum(mut self, momentum: f64) -> Sgd {
        self.momentum = momentum;
        self
    }
    /// `dampening=` (default 0).
    pub fn dampening(mut self, dampening: f64) -> Sgd {
        self.dampening = dampening;
        self
    }
    /// `weight_decay=` (L2 penalty, default 0).
    pub fn weight_decay(mut self, weight_decay: f64) -> Sgd {
        self.weight_decay = weight_decay;
        self
    }
    /// `nesterov=` (default `false`; needs a momentum and zero dampening).
    pub fn nesterov(mut self, nesterov: bool) -> Sgd {
        self.nesterov = nesterov;
        self
    }
    /// The optimizer.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a negative lr, momentum or weight decay, nesterov
    /// without momentum or with dampening, a tensor listed twice),
    /// [`ErrorCode::DtypeMismatch`] (a parameter that is not floating),
    /// [`ErrorCode::InvalidHandle`].
    pub fn build(&self) -> Result<Optimizer> {
        Optimizer::sgd(
            &self.params,
            self.lr,
            self.momentum,
            self.dampening,
            self.weight_decay,
            self.nesterov,
        )
    }
}

/// `torch.optim.Adam(params, lr)` with PyTorch's defaults for the rest, changed by
/// setters: `betas=(0.9, 0.999)`, `eps=1e-8`, `weight_decay=0` (an L2 term added to the
/// gradient). [`build`](Adam::build) makes the [`Optimizer`] (`dt_adam_new`). For the
/// decoupled weight decay of AdamW, see [`AdamW`].
///
/// ```
/// use devtensor::nn::{Adam, Module};
/// use devtensor::{DType, Device};
///
/// # fn main() -> devtensor::Result<()> {
/// let model = Module::linear(4, 2, true, DType::Float32, Device::CPU)?;
/// let mut opt = Adam::new(&model.parameters()?, 1e-3).betas(0.8, 0.99).build()?;
/// opt.zero_grad()?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Adam {
    params: Vec<Tensor>,
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
}

impl Adam {
    /// Adam over `params` (the optimizer holds its own references) with learning rate
    /// `lr` (PyTorch's default is 1e-3), and PyTorch's defaults for the rest.
    pub fn new(params: &[Tensor], lr: f64) -> Adam {
        Adam {
            params: params.to_vec(),
            lr,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
        }
    }
    /// `betas=(beta1, beta2)`, each in [0, 1) (default (0.9, 0.999)).
    pub fn betas(mut self, beta1: f64, beta2: f64) -> Adam {
        self.betas = (beta1, beta2);
        self
    }
    /// `eps=` (default 1e-8).
    pub fn eps(mut self, eps: f64) -> Adam {
        self.eps = eps;
        self
    }
    /// `weight_decay=` (L2 penalty, default 0).
    pub fn weight_decay(mut self, weight_decay: f64) -> Adam {
        self.weight_decay = weight_decay;
        self
    }
    /// The optimizer.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a negative lr, eps or weight decay, a beta outside
    /// [0, 1), a tensor listed twice), [`ErrorCode::DtypeMismatch`] (a parameter that is
    /// not floating), [`ErrorCode::InvalidHandle`].
    pub fn build(&self) -> Result<Optimizer> {
        Optimizer::adam(
            &self.params,
            self.lr,
            self.betas,
            self.eps,
            self.weight_decay,
            false,
        )
    }
}

/// `torch.optim.AdamW(params, lr)` with PyTorch's defaults for the rest, changed by
/// setters: `betas=(0.9, 0.999)`, `eps=1e-8`, `weight_decay=0.01` (decoupled: the
/// parameters shrink by `lr * weight_decay` each step). [`build`](AdamW::build) makes
/// the [`Optimizer`] (`dt_adam_new` with `decoupled = 1`).
///
/// ```
/// use devtensor::nn::{AdamW, Module};
/// use devtensor::{DType, Device};
///
/// # fn main() -> devtensor::Result<()> {
/// let model = Module::linear(4, 2, true, DType::Float32, Device::CPU)?;
/// let _opt = AdamW::new(&model.parameters()?, 1e-3).weight_decay(0.1).build()?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct AdamW {
    params: Vec<Tensor>,
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
}

impl AdamW {
    /// AdamW over `params` (the optimizer holds its own references) with learning rate
    /// `lr` (PyTorch's default is 1e-3), and PyTorch's defaults for the rest.
    pub fn new(params: &[Tensor], lr: f64) -> AdamW {
        AdamW {
            params: params.to_vec(),
            lr,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 1e-2,
        }
    }
    /// `betas=(beta1, beta2)`, each in [0, 1) (default (0.9, 0.999)).
    pub fn betas(mut self, beta1: f64, beta2: f64) -> AdamW {
        self.betas = (beta1, beta2);
        self
    }
    /// `eps=` (default 1e-8).
    pub fn eps(mut self, eps: f64) -> AdamW {
        self.eps = eps;
        self
    }
    /// `weight_decay=` (decoupled, default 0.01).
    pub fn weight_decay(mut self, weight_decay: f64) -> AdamW {
        self.weight_decay = weight_decay;
        self
    }
    /// The optimizer.
    ///
    /// # Errors
    ///
    /// As [`Adam::build`].
    pub fn build(&self) -> Result<Optimizer> {
        Optimizer::adam(
            &self.params,
            self.lr,
            self.betas,
            self.eps,
            self.weight_decay,
            true,
        )
    }
}

/// `torch.optim.RMSprop(params, lr)` with PyTorch's defaults for the rest, changed by
/// setters: `alpha=0.99`, `eps=1e-8`, `weight_decay=0` (an L2 term added to the
/// gradient), `momentum=0`, `centered=False`. [`build`](RmsProp::build) makes the
/// [`Optimizer`] (`dt_rmsprop_new`; see [`Optimizer::rmsprop`] for the update).
///
/// ```
/// use devtensor::nn::{Module, RmsProp};
/// use devtensor::{DType, Device};
///
/// # fn main() -> devtensor::Result<()> {
/// let model = Module::linear(4, 2, true, DType::Float32, Device::CPU)?;
/// let mut opt = RmsProp::new(&model.parameters()?, 0.01).momentum(0.9).centered(true).build()?;
/// opt.step()?; // no gradients yet: nothing changes
/// // only the settings (PyTorch's param_groups), and no state before the first step
/// assert_eq!(opt.state_dict()?.names()?, ["lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RmsProp {
    params: Vec<Tensor>,
    lr: f64,
    alpha: f64,
    eps: f64,
    weight_decay: f64,
    momentum: f64,
    centered: bool,
}

impl RmsProp {
    /// RMSprop over `params` (the optimizer holds its own references) with learning rate
    /// `lr` (PyTorch's default is 0.01), and PyTorch's defaults for the rest.
    pub fn new(params: &[Tensor], lr: f64) -> RmsProp {
        RmsProp {
            params: params.to_vec(),
            lr,
            alpha: 0.99,
            eps: 1e-8,
            weight_decay: 0.0,
            momentum: 0.0,
            centered: false,
        }
    }
    /// `alpha=`, the smoothing constant of the squared-gradient average (default 0.99).
    pub fn alpha(mut self, alpha: f64) -> RmsProp {
        self.alpha = alpha;
        self
    }
    /// `eps=` (default 1e-8).
    pub fn eps(mut self, eps: f64) -> RmsProp {
        self.eps = eps;
        self
    }
    /// `weight_decay=` (L2 penalty, default 0).
    pub fn weight_decay(mut self, weight_decay: f64) -> RmsProp {
        self.weight_decay = weight_decay;
        self
    }
    /// `momentum=` (default 0; above 0 the state holds a `"momentum_buffer"`).
    pub fn momentum(mut self, momentum: f64) -> RmsProp {
        self.momentum = momentum;
        self
    }
    /// `centered=` (default `false`; `true` divides by the estimated variance of the
    /// gradient, and the state holds a `"grad_avg"`).
    pub fn centered(mut self, centered: bool) -> RmsProp {
        self.centered = centered;
        self
    }
    /// The optimizer.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a negative or NaN lr, alpha, eps, weight decay or
    /// momentum: the message names it; a tensor listed twice),
    /// [`ErrorCode::DtypeMismatch`] (a parameter that is not floating),
    /// [`ErrorCode::InvalidHandle`].
    pub fn build(&self) -> Result<Optimizer> {
        Optimizer::rmsprop(
            &self.params,
            self.lr,
            self.alpha,
            self.eps,
            self.weight_decay,
            self.momentum,
            self.centered,
        )
    }
}

/// `torch.optim.Adagrad(params, lr)` with PyTorch's defaults for the rest, changed by
/// setters: `lr_decay=0`, `weight_decay=0` (an L2 term added to the gradient),
/// `initial_accumulator_value=0`, `eps=1e-10`. [`build`](Adagrad::build) makes the
/// [`Optimizer`] (`dt_adagrad_new`; see [`Optimizer::adagrad`] for the update).
///
/// ```
/// use devtensor::nn::{Adagrad, Module};
/// use devtensor::{DType, Device};
///
/// # fn main() -> devtensor::Result<()> {
/// let model = Module::linear(4, 2, true, DType::Float32, Device::CPU)?;
/// let opt = Adagrad::new(&model.parameters()?, 0.01).initial_accumulator_value(0.1).build()?;
/// // The sums exist from the start, as PyTorch's: step 0, filled with the initial value.
/// let sd = opt.state_dict()?;
/// assert_eq!(sd.names()?[6..], ["state.0.step", "state.0.sum", "state.1.step", "state.1.sum"]); // after the settings
/// assert_eq!(sd.get("state.0.step")?.unwrap().item()?, 0.0);
/// assert!(sd.get("state.1.sum")?.unwrap().to_vec::<f32>()?.iter().all(|&v| v == 0.1));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Adagrad {
    params: Vec<Tensor>,
    lr: f64,
    lr_decay: f64,
    weight_decay: f64,
    initial_accumulator_value: f64,
    eps: f64,
}

impl Adagrad {
    /// Adagrad over `params` (the optimizer holds its own references) with learning rate
    /// `lr` (PyTorch's default is 0.01), and PyTorch's defaults for the rest.
    pub fn new(params: &[Tensor], lr: f64) -> Adagrad {
        Adagrad {
            params: params.to_vec(),
            lr,
            lr_decay: 0.0,
            weight_decay: 0.0,
            initial_accumulator_value: 0.0,
            eps: 1e-10,
        }
    }
    /// `lr_decay=` (default 0): step `t` uses `lr / (1 + (t - 1) * lr_decay)`.
    pub fn lr_decay(mut self, lr_decay: f64) -> Adagrad {
        self.lr_decay = lr_decay;
        self
    }
    /// `weight_decay=` (L2 penalty, default 0).
    pub fn weight_decay(mut self, weight_decay: f64) -> Adagrad {
        self.weight_decay = weight_decay;
        self
    }
    /// `initial_accumulator_value=`, what each `"sum"` starts from (default 0).
    pub fn initial_accumulator_value(mut self, initial_accumulator_value: f64) -> Adagrad {
        self.initial_accumulator_value = initial_accumulator_value;
        self
    }
    /// `eps=` (default 1e-10).
    pub fn eps(mut self, eps: f64) -> Adagrad {
        self.eps = eps;
        self
    }
    /// The optimizer.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a negative or NaN lr, lr decay, weight decay,
    /// initial accumulator value or eps: the message names it; a tensor listed twice),
    /// [`ErrorCode::DtypeMismatch`] (a parameter that is not floating),
    /// [`ErrorCode::InvalidHandle`], [`ErrorCode::OutOfMemory`] (the sums are made here).
    pub fn build(&self) -> Result<Optimizer> {
        Optimizer::adagrad(
            &self.params,
            self.lr,
            self.lr_decay,
            self.weight_decay,
            self.initial_accumulator_value,
            self.eps,
        )
    }
}

// -------------------------------------------------------- models of your own

/// A model of your own: anything with a forward pass over one tensor and (named)
/// parameters, as a subclass of PyTorch's `nn.Module`. [`Module`] implements it, so
/// does every closure `Fn(&Tensor) -> Result<Tensor>` (a layer without parameters), and
/// so does [`Layers`], a container that mixes both. Write a training loop once for
/// `impl Forward`, and a struct of [`Module`]s with your own `forward` fits it (to make
/// such a model a library [`Module`] instead, with state dict names, `save`/`load` and
/// [`Module::data_parallel`], see [`Module::custom`]):
///
/// ```
/// use devtensor::nn::{Forward, Module, MseLoss, Sgd};
/// use devtensor::{DType, Device, Result, Tensor};
///
/// /// y = l2(tanh(l1(x)) + x): a residual block, which Sequential cannot express.
/// struct Residual {
///     l1: Module,
///     l2: Module,
/// }
///
/// impl Forward for Residual {
///     fn forward(&self, x: &Tensor) -> Result<Tensor> {
///         let h = (self.l1.forward(x)?.tanh()? + x)?;
///         self.l2.forward(&h)
///     }
///     fn named_parameters(&self) -> Result<Vec<(String, Tensor)>> {
///         let mut p = devtensor::nn::prefixed("l1", self.l1.named_parameters()?);
///         p.extend(devtensor::nn::prefixed("l2", self.l2.named_parameters()?));
///         Ok(p)
///     }
/// }
///
/// fn train_step(model: &impl Forward, x: &Tensor, y: &Tensor) -> Result<f64> {
///     let mut opt = Sgd::new(&model.parameters()?, 0.01).build()?;
///     let loss = MseLoss::new().build()?.loss(&model.forward(x)?, y)?;
///     opt.zero_grad()?;
///     loss.backward()?;
///     opt.step()?;
///     loss.item()
/// }
///
/// # fn main() -> Result<()> {
/// let model = Residual {
///     l1: Module::linear(3, 3, true, DType::Float32, Device::CPU)?,
///     l2: Module::linear(3, 1, true, DType::Float32, Device::CPU)?,
/// };
/// assert_eq!(model.named_parameters()?[0].0, "l1.weight");
/// let x = Tensor::randn(&[4, 3], DType::Float32, Device::CPU)?;
/// let y = Tensor::zeros(&[4, 1], DType::Float32, Device::CPU)?;
/// train_step(&model, &x, &y)?;
/// # Ok(()) }
/// ```
pub trait Forward {
    /// Runs the model on one input.
    ///
    /// # Errors
    ///
    /// Whatever the model's own calls fail with (for a [`Module`], as
    /// [`Module::forward`]).
    fn forward(&self, input: &Tensor) -> Result<Tensor>;

    /// The parameters with their state-dict names (`"l1.weight"`); none by default.
    ///
    /// # Errors
    ///
    /// Whatever the model's own calls fail with (for a [`Module`], as
    /// [`Module::named_parameters`]).
    fn named_parameters(&self) -> Result<Vec<(String, Tensor)>> {
        Ok(Vec::new())
    }

    /// The parameters, from [`Forward::named_parameters`]: what an optimizer is built
    /// over.
    ///
    /// # Errors
    ///
    /// As [`Forward::named_parameters`].
    fn parameters(&self) -> Result<Vec<Tensor>> {
        Ok(self
            .named_parameters()?
            .into_iter()
            .map(|(_, t)| t)
            .collect())
    }
}

impl Forward for Module {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        Module::forward(self, input)
    }
    fn named_parameters(&self) -> Result<Vec<(String, Tensor)>> {
        Module::named_parameters(self)
    }
}

/// A closure is a layer without parameters: `|x: &Tensor| x.relu()`.
impl<F: Fn(&Tensor) -> Result<Tensor>> Forward for F {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self(input)
    }
}

/// `named` with `prefix + "."` before each name, as PyTorch names a child's parameters
/// (`"l1.weight"`): for [`Forward::named_parameters`] of a model made of parts.
///
/// ```
/// use devtensor::nn::{prefixed, Module};
/// use devtensor::{DType, Device};
///
/// # fn main() -> devtensor::Result<()> {
/// let lin = Module::linear(2, 2, true, DType::Float32, Device::CPU)?;
/// let names: Vec<String> = prefixed("encoder", lin.named_parameters()?)
///     .into_iter()
///     .map(|(n, _)| n)
///     .collect();
/// assert_eq!(names, ["encoder.weight", "encoder.bias"]);
/// # Ok(()) }
/// ```
pub fn prefixed(prefix: &str, named: Vec<(String, Tensor)>) -> Vec<(String, Tensor)> {
    named
        .into_iter()
        .map(|(n, t)| (format!("{prefix}.{n}"), t))
        .collect()
}

/// A sequence of [`Forward`] layers run in order, built in Rust: unlike [`Sequential`]
/// (a library module), it takes closures and models of your own too. Layer `i`'s
/// parameters are named `"i." + name`, as in `nn.Sequential`. `Send + Sync`, as its
/// layers must be.
///
/// ```
/// use devtensor::nn::{Forward, Layers, Module};
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let model = Layers::new()
///     .add(Module::linear(4, 8, true, DType::Float32, Device::CPU)?)
///     .add(|x: &Tensor| x.relu()? * 0.5)            // a closure layer
///     .add(Module::linear(8, 2, true, DType::Float32, Device::CPU)?);
/// let y = model.forward(&Tensor::ones(&[3, 4], DType::Float32, Device::CPU)?)?;
/// assert_eq!(y.shape(), vec![3, 2]);
/// assert_eq!(model.named_parameters()?[2].0, "2.weight");
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct Layers {
    layers: Vec<Box<dyn Forward + Send + Sync>>,
}

impl Layers {
    /// An empty sequence (its forward returns the input).
    ///
    /// ```
    /// # use devtensor::nn::{Forward, Layers, Module};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let id = Layers::new();
    /// let x = Tensor::ones(&[2], DType::Float32, Device::CPU)?;
    /// assert_eq!(id.forward(&x)?.to_vec::<f32>()?, vec![1.0, 1.0]);
    /// # Ok(()) }
    /// ```
    pub fn new() -> Layers {
        Layers { layers: Vec::new() }
    }
    /// Appends a layer.
    ///
    /// ```
    /// # use devtensor::nn::{Forward, Layers, Module};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let model = Layers::new().add(Module::relu()?).add(|x: &Tensor| x + 1i64);
    /// let x = Tensor::from_slice(&[-2.0f32, 3.0], &[2], Device::CPU)?;
    /// assert_eq!(model.forward(&x)?.to_vec::<f32>()?, vec![1.0, 4.0]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn add(mut self, layer: impl Forward + Send + Sync + 'static) -> Layers {
        self.layers.push(Box::new(layer));
        self
    }
    /// The number of layers.
    ///
    /// ```
    /// # use devtensor::nn::{Forward, Layers, Module};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!(Layers::new().add(Module::relu()?).len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        self.layers.len()
    }
    /// Whether there is no layer.
    ///
    /// ```
    /// # use devtensor::nn::{Forward, Layers, Module};
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert!(Layers::new().is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }
}

impl Forward for Layers {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        let mut x = input.clone();
        for layer in &self.layers {
            x = layer.forward(&x)?;
        }
        Ok(x)
    }
    fn named_parameters(&self) -> Result<Vec<(String, Tensor)>> {
        let mut out = Vec::new();
        for (i, layer) in self.layers.iter().enumerate() {
            out.extend(prefixed(&i.to_string(), layer.named_parameters()?));
        }
        Ok(out)
    }
}

impl std::fmt::Debug for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Layers[{} layers]", self.layers.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::leak_checked;

    #[test]
    fn sequential_names_to_in_place_and_training() {
        leak_checked(|| {
            crate::manual_seed(0).unwrap();
            let mut model = Sequential::new()
                .add(Module::linear(2, 8, true, DType::Float32, Device::CPU).unwrap())
                .add(Module::tanh().unwrap())
                .add(Module::linear(8, 2, true, DType::Float32, Device::CPU).unwrap())
                .build()
                .unwrap();
            let names: Vec<String> = model
                .named_parameters()
                .unwrap()
                .into_iter()
                .map(|(n, _)| n)
                .collect();
            assert_eq!(names, ["0.weight", "0.bias", "2.weight", "2.bias"]);
            let p0 = model.parameters().unwrap().remove(0);
            model.to(Device::CPU).unwrap();
            assert_eq!(model.device().unwrap(), Device::CPU);
            assert_eq!(p0.device(), Device::CPU);
            // XOR-like toy problem: the loss must fall.
            let x = Tensor::from_slice(&[0f32, 0., 0., 1., 1., 0., 1., 1.], &[4, 2], Device::CPU)
                .unwrap();
            let y = Tensor::from_slice(&[0i64, 1, 1, 0], &[4], Device::CPU).unwrap();
            let loss_fn = Module::cross_entropy_loss(None, Reduction::Mean, -100, 0.0).unwrap();
            let mut opt = Optimizer::adam(
                &model.parameters().unwrap(),
                0.05,
                (0.9, 0.999),
                1e-8,
                0.0,
                false,
            )
            .unwrap();
            let mut first = None;
            let mut last = 0.0;
            for _ in 0..200 {
                let loss = loss_fn.loss(&model.forward(&x).unwrap(), &y).unwrap();
                opt.zero_grad().unwrap();
                loss.backward().unwrap();
                opt.step().unwrap();
                last = loss.item().unwrap();
                first.get_or_insert(last);
            }
            assert!(last < first.unwrap() * 0.2, "loss {first:?} -> {last}");
            assert!(p0.grad().unwrap().is_some());
            let bad = Tensor::from_slice(&[0i64, 1, 7, 0], &[4], Device::CPU).unwrap();
            let e = loss_fn.loss(&model.forward(&x).unwrap(), &bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        });
    }

    #[test]
    fn module_and_optimizer_are_send_and_sync() {
        fn assert_send<T: Send>() {}
        fn assert_sync<T: Sync>() {}
        assert_send::<Module>();
        assert_sync::<Module>();
        assert_send::<Optimizer>();
        assert_sync::<Optimizer>();
        assert_send::<std::sync::Arc<Module>>();
    }

    #[test]
    fn model_and_optimizer_move_into_a_thread() {
        leak_checked(|| {
            crate::manual_seed(3).unwrap();
            let mut model = Module::linear(2, 1, true, DType::Float32, Device::CPU).unwrap();
            let mut opt = Optimizer::sgd(&model.parameters().unwrap(), 0.1, 0.0, 0.0, 0.0, false)
                .unwrap();
            let x = Tensor::from_slice(&[1f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
            let expected = model.forward(&x).unwrap().to_vec::<f32>().unwrap();
            // Both move into a worker, which runs forward, trains a step and hands them back.
            let worker = std::thread::spawn(move || {
                model.eval().unwrap();
                model.to(Device::CPU).unwrap();
                let y = model.forward(&x).unwrap();
                let got = y.to_vec::<f32>().unwrap();
                opt.zero_grad().unwrap();
                y.sum(&[], false).unwrap().backward().unwrap();
                opt.step().unwrap();
                (got, model, opt)
            });
            let (got, model, _opt) = worker.join().unwrap();
            assert_eq!(got, expected);
            // The step (lr 0.1 on d(sum y)/d(bias) = 2) moved the bias by -0.2.
            let bias = model.named_parameters().unwrap().remove(1).1;
            assert_eq!(model.named_parameters().unwrap()[1].0, "bias");
            let b = bias.to_vec::<f32>().unwrap()[0];
            let x2 = Tensor::from_slice(&[0f32, 0.0], &[1, 2], Device::CPU).unwrap();
            let y0 = model.forward(&x2).unwrap().item().unwrap() as f32;
            assert_eq!(y0, b); // forward of zeros is the bias
        });
    }

    #[test]
    fn arc_module_forward_from_several_threads() {
        leak_checked(|| {
            let model = std::sync::Arc::new(
                Sequential::new()
                    .add(Module::linear(4, 8, true, DType::Float32, Device::CPU).unwrap())
                    .add(Module::relu().unwrap())
                    .add(Module::linear(8, 2, true, DType::Float32, Device::CPU).unwrap())
                    .build()
                    .unwrap(),
            );
            let x = Tensor::randn(&[3, 4], DType::Float32, Device::CPU).unwrap();
            let want = model.forward(&x).unwrap().to_vec::<f32>().unwrap();
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let (m, x) = (std::sync::Arc::clone(&model), x.clone());
                    std::thread::spawn(move || {
                        (0..20)
                            .map(|_| m.forward(&x).unwrap().to_vec::<f32>().unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for h in handles {
                for got in h.join().unwrap() {
                    assert_eq!(got, want);
                }
            }
            // share(): a second handle to the same module, not a copy.
            let first = Module::linear(2, 2, false, DType::Float32, Device::CPU).unwrap();
            let seq = Sequential::new().add(first.share()).build().unwrap();
            let (w1, w2) = (&first.parameters().unwrap()[0], &seq.parameters().unwrap()[0]);
            assert!(w1.shares_storage(w2));
            let mut opt = Optimizer::sgd(&seq.parameters().unwrap(), 0.1, 0.0, 0.0, 0.0, false)
                .unwrap();
            let mut same = opt.share();
            same.zero_grad().unwrap();
            opt.step().unwrap();
        });
    }

    #[test]
    fn builders_have_pytorchs_defaults() {
        // torch.nn.CrossEntropyLoss(weight=None, ..., ignore_index=-100, reduction='mean',
        // label_smoothing=0.0); NLLLoss(weight=None, ignore_index=-100, reduction='mean');
        // MSELoss(reduction='mean') (torch.nn docs).
        let ce = CrossEntropyLoss::new();
        assert!(ce.weight.is_none());
        assert_eq!((ce.reduction, ce.ignore_index, ce.label_smoothing), (Reduction::Mean, -100, 0.0));
        let nll = NllLoss::default();
        assert!(nll.weight.is_none());
        assert_eq!((nll.reduction, nll.ignore_index), (Reduction::Mean, -100));
        assert_eq!(MseLoss::new().reduction, Reduction::Mean);
        assert_eq!(MseLoss::default().reduction, Reduction::Mean);
        assert_eq!(Reduction::default(), Reduction::Mean);
        // torch.optim.SGD(params, lr, momentum=0, dampening=0, weight_decay=0,
        // nesterov=False); Adam(params, lr, betas=(0.9, 0.999), eps=1e-08,
        // weight_decay=0); AdamW(params, lr, betas=(0.9, 0.999), eps=1e-08,
        // weight_decay=0.01) (torch.optim docs).
        let sgd = Sgd::new(&[], 0.5);
        assert_eq!(
            (sgd.lr, sgd.momentum, sgd.dampening, sgd.weight_decay, sgd.nesterov),
            (0.5, 0.0, 0.0, 0.0, false)
        );
        let adam = Adam::new(&[], 1e-3);
        assert_eq!((adam.lr, adam.betas, adam.eps, adam.weight_decay), (1e-3, (0.9, 0.999), 1e-8, 0.0));
        let adamw = AdamW::new(&[], 1e-3);
        assert_eq!((adamw.lr, adamw.betas, adamw.eps, adamw.weight_decay), (1e-3, (0.9, 0.999), 1e-8, 1e-2));
        // Setters.
        let s = Sgd::new(&[], 0.1).momentum(0.9).dampening(0.1).weight_decay(1e-4).nesterov(true);
        assert_eq!((s.momentum, s.dampening, s.weight_decay, s.nesterov), (0.9, 0.1, 1e-4, true));
        let a = AdamW::new(&[], 1e-3).betas(0.8, 0.9).eps(1e-6).weight_decay(0.0);
        assert_eq!((a.betas, a.eps, a.weight_decay), ((0.8, 0.9), 1e-6, 0.0));
        let c = CrossEntropyLoss::new().reduction(Reduction::Sum).ignore_index(3).label_smoothing(0.2);
        assert_eq!((c.reduction, c.ignore_index, c.label_smoothing), (Reduction::Sum, 3, 0.2));
    }

    /// Three steps of `make(params)` on a fixed linear layer: its parameters after them.
    fn train3(make: impl Fn(&[Tensor]) -> Result<Optimizer>) -> Vec<Vec<f32>> {
        // The same start for every call: a seeded layer.
        crate::manual_seed(11).unwrap();
        let model = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
        let mut opt = make(&model.parameters().unwrap()).unwrap();
        let x = Tensor::from_slice(&[1f32, -2.0, 0.5, 3.0, 1.0, -1.0], &[2, 3], Device::CPU).unwrap();
        for _ in 0..3 {
            opt.zero_grad().unwrap();
            let y = model.forward(&x).unwrap();
            (&y * &y).unwrap().sum(&[], false).unwrap().backward().unwrap();
            opt.step().unwrap();
        }
        model.parameters().unwrap().iter().map(|p| p.to_vec::<f32>().unwrap()).collect()
    }

    #[test]
    fn builders_build_what_the_positional_constructors_build() {
        leak_checked(|| {
            let a = train3(|p| Sgd::new(p, 0.01).momentum(0.9).weight_decay(1e-3).nesterov(true).build());
            let b = train3(|p| Optimizer::sgd(p, 0.01, 0.9, 0.0, 1e-3, true));
            assert_eq!(a, b);
            let c = train3(|p| Sgd::new(p, 0.01).build());
            assert_ne!(a, c);
            assert_eq!(c, train3(|p| Optimizer::sgd(p, 0.01, 0.0, 0.0, 0.0, false)));
            let d = train3(|p| Adam::new(p, 1e-2).build());
            assert_eq!(d, train3(|p| Optimizer::adam(p, 1e-2, (0.9, 0.999), 1e-8, 0.0, false)));
            let e = train3(|p| AdamW::new(p, 1e-2).build());
            assert_eq!(e, train3(|p| Optimizer::adam(p, 1e-2, (0.9, 0.999), 1e-8, 1e-2, true)));
            assert_ne!(d, e, "AdamW's default weight decay changed nothing");
            // Errors come from build.
            let err = Sgd::new(&[], 0.1).nesterov(true).build().unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{err}");
            let err = Adam::new(&[], 0.1).betas(1.0, 0.999).build().unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{err}");

            // Losses, with hand-computed values.
            let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
            let z = Tensor::zeros(&[2], DType::Float32, Device::CPU).unwrap();
            assert_eq!(MseLoss::new().build().unwrap().loss(&x, &z).unwrap().item().unwrap(), 2.5);
            let sum = MseLoss::new().reduction(Reduction::Sum).build().unwrap();
            assert_eq!(sum.loss(&x, &z).unwrap().item().unwrap(), 5.0);
            let logp = Tensor::from_slice(&[-0.5f32, -1.0, -2.0, -0.25], &[2, 2], Device::CPU).unwrap();
            let tgt = Tensor::from_slice(&[0i64, 1], &[2], Device::CPU).unwrap();
            let nll = NllLoss::new().build().unwrap();
            assert_eq!(nll.loss(&logp, &tgt).unwrap().item().unwrap(), 0.375);
            let ignore1 = NllLoss::new().ignore_index(1).build().unwrap();
            assert_eq!(ignore1.loss(&logp, &tgt).unwrap().item().unwrap(), 0.5);
            let w = Tensor::from_slice(&[1.0f32, 3.0], &[2], Device::CPU).unwrap();
            let weighted = NllLoss::new().weight(&w).reduction(Reduction::Sum).build().unwrap();
            assert_eq!(weighted.loss(&logp, &tgt).unwrap().item().unwrap(), 1.25); // 0.5 + 3 * 0.25
            // Cross entropy of logits [2, 0] / [0, 2] with targets 0 / 1: each sample
            // -log_softmax = ln(1 + e^-2) = 0.126928; with label smoothing 0.1 over 2
            // classes, 0.9 * 0.126928 + 0.1 * (0.126928 + 2.126928) / 2 = 0.226921.
            let logits = Tensor::from_slice(&[2.0f32, 0.0, 0.0, 2.0], &[2, 2], Device::CPU).unwrap();
            let ce = CrossEntropyLoss::new().build().unwrap();
            assert!((ce.loss(&logits, &tgt).unwrap().item().unwrap() - 0.126928).abs() < 1e-5);
            let smooth = CrossEntropyLoss::new().label_smoothing(0.1).build().unwrap();
            assert!((smooth.loss(&logits, &tgt).unwrap().item().unwrap() - 0.226921).abs() < 1e-5);
            let none = CrossEntropyLoss::new().reduction(Reduction::None).build().unwrap();
            assert_eq!(none.loss(&logits, &tgt).unwrap().shape(), vec![2]);
            let e = CrossEntropyLoss::new().label_smoothing(1.5).build().unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        });
    }

    #[test]
    fn module_and_optimizer_raw_handles() {
        leak_checked(|| {
            let lin = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
            let mut n = 0usize;
            assert_eq!(unsafe { ffi::dt_module_parameter_count(lin.as_raw(), &mut n) }, ffi::DT_OK);
            assert_eq!(n, 2);
            let p = lin.into_raw();
            let lin = unsafe { Module::from_raw(p) };
            assert_eq!(lin.named_parameters().unwrap().len(), 2);
            // A module made by sys, owned by a Module.
            let mut out: *mut ffi::dt_module = std::ptr::null_mut();
            assert_eq!(unsafe { ffi::dt_relu_new(&mut out) }, ffi::DT_OK);
            let relu = unsafe { Module::from_raw(out) };
            let x = Tensor::from_slice(&[-1.0f32, 2.0], &[2], Device::CPU).unwrap();
            assert_eq!(relu.forward(&x).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 2.0]);
            let opt = Sgd::new(&lin.parameters().unwrap(), 0.1).build().unwrap();
            assert_eq!(unsafe { ffi::dt_optimizer_zero_grad(opt.as_raw()) }, ffi::DT_OK);
            let mut opt2 = unsafe { Optimizer::from_raw(opt.into_raw()) };
            opt2.step().unwrap();
        });
    }

    #[test]
    fn models_of_your_own_through_forward() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Layers>();
        struct Mlp {
            l1: Module,
            l2: Module,
        }
        impl Forward for Mlp {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                self.l2.forward(&self.l1.forward(x)?.tanh()?)
            }
            fn named_parameters(&self) -> Result<Vec<(String, Tensor)>> {
                let mut p = prefixed("l1", self.l1.named_parameters()?);
                p.extend(prefixed("l2", self.l2.named_parameters()?));
                Ok(p)
            }
        }
        /// One generic loop for every kind of model: the loss after `steps` steps.
        fn train(model: &impl Forward, x: &Tensor, y: &Tensor, steps: usize) -> (f64, f64) {
            let mut opt = Adam::new(&model.parameters().unwrap(), 0.05).build().unwrap();
            let loss_fn = CrossEntropyLoss::new().build().unwrap();
            let mut losses = Vec::new();
            for _ in 0..steps {
                let loss = loss_fn.loss(&model.forward(x).unwrap(), y).unwrap();
                opt.zero_grad().unwrap();
                loss.backward().unwrap();
                opt.step().unwrap();
                losses.push(loss.item().unwrap());
            }
            (losses[0], *losses.last().unwrap())
        }
        leak_checked(|| {
            crate::manual_seed(1).unwrap();
            let x = Tensor::from_slice(&[0f32, 0., 0., 1., 1., 0., 1., 1.], &[4, 2], Device::CPU).unwrap();
            let y = Tensor::from_slice(&[0i64, 1, 1, 0], &[4], Device::CPU).unwrap();
            let mlp = Mlp {
                l1: Module::linear(2, 8, true, DType::Float32, Device::CPU).unwrap(),
                l2: Module::linear(8, 2, true, DType::Float32, Device::CPU).unwrap(),
            };
            let names: Vec<String> = mlp.named_parameters().unwrap().into_iter().map(|(n, _)| n).collect();
            assert_eq!(names, ["l1.weight", "l1.bias", "l2.weight", "l2.bias"]);
            let (first, last) = train(&mlp, &x, &y, 150);
            assert!(last < first * 0.2, "{first} -> {last}");
            // Layers: a library module, a closure and a model of your own, mixed.
            let layers = Layers::new()
                .add(Module::linear(2, 2, false, DType::Float32, Device::CPU).unwrap())
                .add(|t: &Tensor| t * 2.0)
                .add(mlp);
            assert_eq!(layers.len(), 3);
            let names: Vec<String> = layers.named_parameters().unwrap().into_iter().map(|(n, _)| n).collect();
            assert_eq!(names, ["0.weight", "2.l1.weight", "2.l1.bias", "2.l2.weight", "2.l2.bias"]);
            let (first, last) = train(&layers, &x, &y, 150);
            assert!(last < first, "{first} -> {last}");
            // The closure's work is part of the graph: y = 2 * x through Layers.
            let double = Layers::new().add(|t: &Tensor| t * 2i64);
            let v = Tensor::from_slice(&[1.0f32, -3.0], &[2], Device::CPU).unwrap();
            assert_eq!(double.forward(&v).unwrap().to_vec::<f32>().unwrap(), vec![2.0, -6.0]);
            assert!(double.parameters().unwrap().is_empty());
            assert_eq!(Layers::new().forward(&v).unwrap().to_vec::<f32>().unwrap(), vec![1.0, -3.0]);
            // An error inside a layer stops the pass and comes out as it is.
            let bad = Layers::new().add(|t: &Tensor| t.reshape(&[5]));
            assert_eq!(bad.forward(&v).unwrap_err().code, ErrorCode::ShapeMismatch);
            // A Module through the trait is the Module.
            let lin = Module::linear(2, 3, true, DType::Float32, Device::CPU).unwrap();
            let via_trait = Forward::forward(&lin, &v.reshape(&[1, 2]).unwrap()).unwrap();
            assert_eq!(via_trait.to_vec::<f32>().unwrap(), lin.forward(&v.reshape(&[1, 2]).unwrap()).unwrap().to_vec::<f32>().unwrap());
            assert_eq!(Forward::parameters(&lin).unwrap().len(), 2);
        });
    }

    /// `GELU(approximate="tanh")` against the formula computed here, in f64 and f32; the
    /// op's values; not the exact form; differentiable (1/2 at 0); floating inputs only.
    #[test]
    fn gelu_tanh_module_values_by_hand() {
        leak_checked(|| {
            let m = Module::gelu_tanh().unwrap();
            assert_eq!(m.kind().unwrap(), "GELU");
            assert!(m.parameters().unwrap().is_empty());
            let xs = [-3.0f64, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0];
            let want: Vec<f64> = xs
                .iter()
                .map(|x| {
                    let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
                    x / 2.0 * (1.0 + inner.tanh())
                })
                .collect();
            let x64 = Tensor::from_slice(&xs, &[2, 4], Device::CPU).unwrap();
            let y64 = m.forward(&x64).unwrap();
            assert_eq!((y64.dtype(), y64.shape()), (DType::Float64, vec![2, 4]));
            for (g, w) in y64.to_vec::<f64>().unwrap().iter().zip(&want) {
                assert!((g - w).abs() < 1e-10, "float64: {g} against {w}");
            }
            let x32 = x64.to_dtype(DType::Float32).unwrap();
            let y32 = m.forward(&x32).unwrap().to_vec::<f32>().unwrap();
            for (g, w) in y32.iter().zip(&want) {
                assert!((*g as f64 - w).abs() < 1e-6, "float32: {g} against {w}");
            }
            // The module is the op Tensor::gelu_tanh, and not the exact form: at 1 they
            // differ by 1.5e-4 (0.841192 against 0.841345).
            assert_eq!(x32.gelu_tanh().unwrap().to_vec::<f32>().unwrap(), y32);
            let exact = Module::gelu()
                .unwrap()
                .forward(&x32)
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            assert!(
                (exact[5] - y32[5]).abs() > 1e-4,
                "{exact:?} against {y32:?}"
            );
            // In a Sequential, differentiable: d/dx at 0 is 1/2.
            let lin = Module::linear(1, 1, false, DType::Float32, Device::CPU).unwrap();
            let w = lin.parameters().unwrap()[0].to_vec::<f32>().unwrap()[0];
            let seq = Sequential::new()
                .add(Module::gelu_tanh().unwrap())
                .add(lin)
                .build()
                .unwrap();
            let z = Tensor::zeros(&[1, 1], DType::Float32, Device::CPU).unwrap();
            z.set_requires_grad(true).unwrap();
            seq.forward(&z)
                .unwrap()
                .sum(&[], false)
                .unwrap()
                .backward()
                .unwrap();
            let g = z.grad().unwrap().unwrap().to_vec::<f32>().unwrap()[0];
            assert!(
                (g - w / 2.0).abs() < 1e-6,
                "gradient {g}, want weight / 2 = {}",
                w / 2.0
            );
            let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();
            assert_eq!(m.forward(&ints).unwrap_err().code, ErrorCode::DtypeMismatch);
        });
    }

    /// The `LeakyReLU` and `SiLU` modules: their kinds, no parameters, the values worked
    /// out here (`SiLU(x) = x / (1 + e^-x)`), the same as the tensor ops', the dtypes
    /// they refuse, `LeakyReLU`'s refused slope, and the gradient through both.
    #[test]
    fn leaky_relu_and_silu_modules_by_hand() {
        leak_checked(|| {
            let xs = [-2.0f64, -1.0, 0.0, 0.5, 1.0, 3.0];
            let x = Tensor::from_slice(&xs, &[2, 3], Device::CPU).unwrap();
            let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();

            let lr = Module::leaky_relu(0.1).unwrap();
            assert_eq!(lr.kind().unwrap(), "LeakyReLU");
            assert!(lr.parameters().unwrap().is_empty());
            let y = lr.forward(&x).unwrap();
            assert_eq!(y.shape(), vec![2, 3]);
            assert_eq!(y.to_vec::<f64>().unwrap(), vec![-0.2, -0.1, 0.0, 0.5, 1.0, 3.0]);
            assert_eq!(lr.forward(&ints).unwrap_err().code, ErrorCode::DtypeMismatch);
            assert_eq!(Module::leaky_relu(f64::NAN).unwrap_err().code, ErrorCode::InvalidArgument);
            assert_eq!(
                Module::leaky_relu(f64::NEG_INFINITY).unwrap_err().code,
                ErrorCode::InvalidArgument
            );

            let si = Module::silu().unwrap();
            assert_eq!(si.kind().unwrap(), "SiLU");
            assert!(si.parameters().unwrap().is_empty());
            let want: Vec<f64> = xs.iter().map(|x| x / (1.0 + (-x).exp())).collect();
            let got = si.forward(&x).unwrap().to_vec::<f64>().unwrap();
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-12, "float64: {g} against {w}");
            }
            assert_eq!(x.silu().unwrap().to_vec::<f64>().unwrap(), got);
            let y32 = si.forward(&x.to_dtype(DType::Float32).unwrap()).unwrap().to_vec::<f32>().unwrap();
            for (g, w) in y32.iter().zip(&want) {
                assert!((*g as f64 - w).abs() < 1e-6, "float32: {g} against {w}");
            }
            assert_eq!(si.forward(&ints).unwrap_err().code, ErrorCode::DtypeMismatch);

            // In a Sequential: LeakyReLU(0.1) then SiLU. At x = -1: y = SiLU(-0.1), dy/dx =
            // 0.1 * SiLU'(-0.1), SiLU'(z) = sigmoid(z) (1 + z (1 - sigmoid(z))).
            let seq = Sequential::new()
                .add(Module::leaky_relu(0.1).unwrap())
                .add(Module::silu().unwrap())
                .build()
                .unwrap();
            let z = Tensor::from_slice(&[-1.0f64], &[1], Device::CPU).unwrap();
            z.set_requires_grad(true).unwrap();
            let out = seq.forward(&z).unwrap();
            let v = out.to_vec::<f64>().unwrap()[0];
            assert!((v - -0.1 / (1.0 + 0.1f64.exp())).abs() < 1e-12, "{v}");
            out.sum(&[], false).unwrap().backward().unwrap();
            let sg = 1.0 / (1.0 + 0.1f64.exp());
            let g = z.grad().unwrap().unwrap().to_vec::<f64>().unwrap()[0];
            assert!((g - 0.1 * sg * (1.0 - 0.1 * (1.0 - sg))).abs() < 1e-12, "gradient {g}");
        });
    }

    /// The `Upsample` module: its kind, no parameters, its forward equal to
    /// [`Tensor::interpolate`] with the same arguments (the values worked out by hand in
    /// `ops`'s `interpolate_by_hand`), its arguments copied, the gradient through it, and
    /// its errors, those of forward naming the module.
    #[test]
    fn upsample_module_by_hand() {
        use crate::InterpolateMode::{Bilinear, Nearest};
        leak_checked(|| {
            let x = Tensor::from_slice(&[0.0f32, 3.0, 6.0, 9.0], &[1, 1, 2, 2], Device::CPU).unwrap();

            let mut size = vec![2i64, 4];
            let up = Module::upsample(Some(&size), None, Bilinear, true).unwrap();
            size[1] = 8; // the module copied its arguments
            assert_eq!(size, [2, 8]);
            assert_eq!(up.kind().unwrap(), "Upsample");
            assert!(up.parameters().unwrap().is_empty());
            let y = up.forward(&x).unwrap();
            assert_eq!(y.shape(), vec![1, 1, 2, 4]);
            let got = y.to_vec::<f32>().unwrap();
            for (g, w) in got.iter().zip([0.0f32, 1.0, 2.0, 3.0, 6.0, 7.0, 8.0, 9.0]) {
                assert!((g - w).abs() < 1e-6, "{got:?}");
            }
            let functional = x.interpolate(Some(&[2, 4]), None, Bilinear, true).unwrap();
            assert_eq!(got, functional.to_vec::<f32>().unwrap());

            let nearest = Module::upsample(None, Some(&[2.0]), Nearest, false).unwrap();
            let got = nearest.forward(&x).unwrap().to_vec::<f32>().unwrap();
            assert_eq!(got, vec![0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 3.0, 3.0, 6.0, 6.0, 9.0, 9.0, 6.0, 6.0, 9.0, 9.0]);
            let functional = x.interpolate(None, Some(&[2.0]), Nearest, false).unwrap();
            assert_eq!(got, functional.to_vec::<f32>().unwrap());

            // The gradient of the sum through the module: 2 for each input element.
            let g = Tensor::from_slice(&[0.0f64, 3.0, 6.0, 9.0], &[1, 1, 2, 2], Device::CPU).unwrap();
            g.set_requires_grad(true).unwrap();
            up.forward(&g).unwrap().sum(&[], false).unwrap().backward().unwrap();
            for got in g.grad().unwrap().unwrap().to_vec::<f64>().unwrap() {
                assert!((got - 2.0).abs() < 1e-12, "gradient {got}");
            }

            // Forward's errors name the module.
            let l = Tensor::from_slice(&[0.0f32, 4.0], &[1, 1, 2], Device::CPU).unwrap();
            let e = up.forward(&l).unwrap_err();
            assert_eq!(e.code, ErrorCode::ShapeMismatch);
            assert!(
                e.message.contains("Upsample(size=(2, 4), mode='bilinear', align_corners=True)"),
                "{e}"
            );
            let ints = Tensor::from_slice(&[0i64, 3, 6, 9], &[1, 1, 2, 2], Device::CPU).unwrap();
            assert_eq!(up.forward(&ints).unwrap_err().code, ErrorCode::DtypeMismatch);

            // The constructor's.
            let code = |size: Option<&[i64]>, scale: Option<&[f64]>, mode: crate::InterpolateMode, ac: bool| {
                Module::upsample(size, scale, mode, ac).unwrap_err().code
            };
            assert_eq!(code(Some(&[4]), Some(&[2.0]), Nearest, false), ErrorCode::InvalidArgument); // both
            assert_eq!(code(None, None, Bilinear, false), ErrorCode::InvalidArgument); // neither
            assert_eq!(code(Some(&[1, 2, 3, 4]), None, Nearest, false), ErrorCode::InvalidArgument); // over 3
            assert_eq!(code(Some(&[-1]), None, Nearest, false), ErrorCode::InvalidArgument);
            assert_eq!(code(None, Some(&[f64::NAN]), Nearest, false), ErrorCode::InvalidArgument);
            assert_eq!(code(None, Some(&[2.0]), Nearest, true), ErrorCode::InvalidArgument); // align corners

            // PyTorch's modes that the library does not have, through the raw call.
            let mut out: *mut ffi::dt_module = std::ptr::null_mut();
            let st = unsafe { ffi::dt_upsample_new(std::ptr::null(), [2.0f64].as_ptr(), 1, c"bicubic".as_ptr(), 0, &mut out) };
            assert!(out.is_null());
            assert_eq!(check(st).unwrap_err().code, ErrorCode::NotSupported);
        });
    }

    #[test]
    fn save_and_load() {
        leak_checked(|| {
            let dir = std::env::temp_dir().join(format!("devtensor-rust-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("lin.safetensors");
            let a = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
            let mut b = Module::linear(3, 2, true, DType::Float32, Device::CPU).unwrap();
            a.save(&path).unwrap();
            b.load(&path).unwrap();
            let wa = a.parameters().unwrap()[0].to_vec::<f32>().unwrap();
            let wb = b.parameters().unwrap()[0].to_vec::<f32>().unwrap();
            assert_eq!(wa, wb);
            let e = b.load(dir.join("missing.safetensors")).unwrap_err();
            assert_eq!(e.code, ErrorCode::Io, "{e}");
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }
}

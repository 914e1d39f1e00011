//! Normalisation and embedding: the modules' builders ([`BatchNorm1d`], [`BatchNorm2d`],
//! [`LayerNorm`], [`GroupNorm`], [`Embedding`]), with PyTorch's defaults and PyTorch's
//! parameter and buffer names (`"weight"`, `"bias"`, `"running_mean"`, `"running_var"`,
//! `"num_batches_tracked"`), and the functional forms as [`Tensor`] methods
//! ([`Tensor::batch_norm`], [`Tensor::batch_norm_training`], [`Tensor::layer_norm`],
//! [`Tensor::group_norm`], [`Tensor::embedding`]).
//!
//! Why the functional training form returns the running statistics instead of updating
//! them in place: see [`RunningStats`].

use super::{new_module, Module};
use crate::error::{Error, ErrorCode, Result};
use crate::{DType, Device, Tensor};
use devtensor_sys as ffi;

/// PyTorch's `eps` of every normalisation layer.
const DEFAULT_EPS: f64 = 1e-5;
/// PyTorch's `momentum` of the batch norms.
const DEFAULT_MOMENTUM: f64 = 0.1;
/// `padding_idx` for none (`DT_PADDING_IDX_NONE`, `INT64_MIN`, which bindgen does not
/// carry over from the header).
const PADDING_IDX_NONE: i64 = i64::MIN;

/// The options the two batch norms share.
#[derive(Clone, Debug, PartialEq)]
struct BatchNormConfig {
    num_features: i64,
    eps: f64,
    momentum: Option<f64>,
    affine: bool,
    track_running_stats: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl BatchNormConfig {
    fn new(num_features: i64) -> BatchNormConfig {
        BatchNormConfig {
            num_features,
            eps: DEFAULT_EPS,
            momentum: Some(DEFAULT_MOMENTUM),
            affine: true,
            track_running_stats: true,
            dtype: None,
            device: None,
        }
    }

    fn build(
        &self,
        kind: &str,
        new: unsafe extern "C" fn(
            i64,
            f64,
            f64,
            i32,
            i32,
            ffi::dt_dtype,
            ffi::dt_device,
            *mut *mut ffi::dt_module,
        ) -> ffi::dt_status,
    ) -> Result<Module> {
        // The C API reads a negative momentum as None: a Some must not become one.
        let momentum = match self.momentum {
            None => -1.0,
            Some(m) if (0.0..=1.0).contains(&m) => m,
            Some(m) => return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "{kind}: momentum must be in [0, 1] (None for the cumulative average), got {m}"
                ),
            )),
        };
        let (dtype, device) = (DType::raw_or_default(self.dtype), Device::raw_or_default(self.device));
        new_module(|o| unsafe {
            new(
                self.num_features,
                self.eps,
                momentum,
                self.affine as i32,
                self.track_running_stats as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// The setters of the batch norms' builders (the same for both).
macro_rules! batch_norm_setters {
    ($t:ident) => {
        impl $t {
            /// `eps=`, added to the variance (default `1e-5`).
            pub fn eps(mut self, eps: f64) -> $t {
                self.0.eps = eps;
                self
            }
            /// `momentum=`: the running statistics' update factor in `[0, 1]` (default
            /// `Some(0.1)`), or `None` for PyTorch's `momentum=None`, the cumulative
            /// moving average (by `num_batches_tracked`). Takes `0.01` or `None`.
            pub fn momentum(mut self, momentum: impl Into<Option<f64>>) -> $t {
                self.0.momentum = momentum.into();
                self
            }
            /// `affine=`: the parameters `"weight"` and `"bias"` (default `true`).
            pub fn affine(mut self, affine: bool) -> $t {
                self.0.affine = affine;
                self
            }
            /// `track_running_stats=`: the buffers `"running_mean"`, `"running_var"` and
            /// `"num_batches_tracked"` (default `true`); without them evaluation uses the
            /// batch's statistics too.
            pub fn track_running_stats(mut self, track: bool) -> $t {
                self.0.track_running_stats = track;
                self
            }
            /// The dtype of the parameters and running statistics, floating (default: the
            /// process default, [`set_default_dtype`](crate::set_default_dtype)).
            pub fn dtype(mut self, dtype: DType) -> $t {
                self.0.dtype = Some(dtype);
                self
            }
            /// Where they live (default: the process default device).
            pub fn device(mut self, device: Device) -> $t {
                self.0.device = Some(device);
                self
            }
        }
    };
}

/// `torch.nn.BatchNorm1d(num_features)` with PyTorch's defaults, changed by setters (eps
/// `1e-5`, momentum `Some(0.1)`, affine, tracking running statistics, the process default
/// dtype and device). [`build`](BatchNorm1d::build) makes the [`Module`]
/// (`dt_batch_norm1d_new`): parameters `"weight"` (ones) and `"bias"` (zeros)
/// `[num_features]`, buffers `"running_mean"` (zeros), `"running_var"` (ones)
/// `[num_features]` and `"num_batches_tracked"` (int64, 0-d): PyTorch's names, so its
/// state_dict loads unchanged. Its forward takes `[N, C]` or `[N, C, L]`; in training
/// mode (a new module's) it normalises with the batch's statistics and updates the
/// buffers in place (see [`RunningStats`] on reading them meanwhile), in eval mode it
/// uses the running ones.
///
/// ```
/// use devtensor::nn::BatchNorm1d;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let mut bn = BatchNorm1d::new(1).build()?;
/// // One feature holding 0 and 2: mean 1, biased variance 1, unbiased 2.
/// let x = Tensor::from_slice(&[0.0f32, 2.0], &[2, 1], Device::CPU)?;
/// let y = bn.forward(&x)?.to_vec::<f32>()?;
/// assert!((y[0] + 1.0).abs() < 1e-4 && (y[1] - 1.0).abs() < 1e-4);
/// let b = bn.named_buffers()?;
/// assert_eq!(b[0].0, "running_mean");
/// assert!((b[0].1.to_vec::<f32>()?[0] - 0.1).abs() < 1e-6); // 0.9 * 0 + 0.1 * 1
/// assert!((b[1].1.to_vec::<f32>()?[0] - 1.1).abs() < 1e-6); // 0.9 * 1 + 0.1 * 2
/// assert_eq!(b[2].1.to_vec::<i64>()?, vec![1]); // num_batches_tracked
/// bn.eval()?; // now the running statistics: (0 - 0.1) / sqrt(1.1 + 1e-5)
/// assert!((bn.forward(&x)?.to_vec::<f32>()?[0] + 0.0953).abs() < 1e-4);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BatchNorm1d(BatchNormConfig);

batch_norm_setters!(BatchNorm1d);

impl BatchNorm1d {
    /// `BatchNorm1d(num_features)` with PyTorch's defaults (see the type).
    pub fn new(num_features: i64) -> BatchNorm1d {
        BatchNorm1d(BatchNormConfig::new(num_features))
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::BatchNorm1d;
    /// use devtensor::ErrorCode;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let bn = BatchNorm1d::new(3).momentum(None).affine(false).build()?;
    /// assert!(bn.parameters()?.is_empty());
    /// assert_eq!(bn.named_buffers()?.len(), 3);
    /// let e = BatchNorm1d::new(3).momentum(-0.5).build().unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a momentum outside `[0, 1]`; and the errors that
    /// `include/devtensor.h` lists for `dt_batch_norm1d_new`: `num_features` or `eps` not
    /// positive), `DtypeMismatch` (a dtype that is not floating), `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails with `ShapeMismatch` naming
    /// the module and the input's size (a wrong rank, a wrong channel count, one value per
    /// channel in training mode), `DtypeMismatch`, `DeviceMismatch`.
    pub fn build(&self) -> Result<Module> {
        self.0.build("BatchNorm1d", ffi::dt_batch_norm1d_new)
    }
}

/// `torch.nn.BatchNorm2d(num_features)`: as [`BatchNorm1d`] (the same defaults, setters,
/// parameters and buffers), for inputs `[N, C, H, W]`, each channel normalised over `N`,
/// `H` and `W`; [`build`](BatchNorm2d::build) makes the [`Module`]
/// (`dt_batch_norm2d_new`).
///
/// ```
/// use devtensor::nn::BatchNorm2d;
/// use devtensor::{DType, Device, ErrorCode, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let bn = BatchNorm2d::new(16).eps(1e-3).momentum(0.01).build()?;
/// let names: Vec<String> = bn.state_dict()?.names()?;
/// assert_eq!(names, ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]);
/// let x = Tensor::randn(&[4, 16, 5, 5], DType::Float32, Device::CPU)?;
/// assert_eq!(bn.forward(&x)?.shape(), vec![4, 16, 5, 5]);
/// let three = Tensor::randn(&[4, 3, 5, 5], DType::Float32, Device::CPU)?;
/// let e = bn.forward(&three).unwrap_err();
/// assert_eq!(e.code, ErrorCode::ShapeMismatch);
/// assert!(e.message.contains("BatchNorm2d"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BatchNorm2d(BatchNormConfig);

batch_norm_setters!(BatchNorm2d);

impl BatchNorm2d {
    /// `BatchNorm2d(num_features)` with PyTorch's defaults (see [`BatchNorm1d`]).
    pub fn new(num_features: i64) -> BatchNorm2d {
        BatchNorm2d(BatchNormConfig::new(num_features))
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::BatchNorm2d;
    /// use devtensor::{DType, ErrorCode};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let bn = BatchNorm2d::new(2).dtype(DType::Float64).track_running_stats(false).build()?;
    /// assert_eq!(bn.parameters()?[0].dtype(), DType::Float64);
    /// assert!(bn.named_buffers()?.is_empty());
    /// let e = BatchNorm2d::new(0).build().unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`BatchNorm1d::build`] (`dt_batch_norm2d_new`); its forward wants a 4-d input.
    pub fn build(&self) -> Result<Module> {
        self.0.build("BatchNorm2d", ffi::dt_batch_norm2d_new)
    }
}

/// `torch.nn.LayerNorm(normalized_shape)` with PyTorch's defaults, changed by setters (eps
/// `1e-5`, `elementwise_affine=True`, `bias=True`, the process default dtype and device).
/// [`build`](LayerNorm::build) makes the [`Module`] (`dt_layer_norm_new`): parameters
/// `"weight"` (ones) and `"bias"` (zeros) of shape `normalized_shape`; its forward is
/// [`Tensor::layer_norm`] over the input's last dims, which must be `normalized_shape`
/// (the same in training and eval mode).
///
/// ```
/// use devtensor::nn::LayerNorm;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let ln = LayerNorm::new(&[3]).build()?;
/// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[1, 3], Device::CPU)?;
/// // mean 2, biased variance 2/3: (x - 2) / sqrt(2/3 + 1e-5)
/// let y = ln.forward(&x)?.to_vec::<f32>()?;
/// assert!((y[0] + 1.2247).abs() < 1e-4 && y[1].abs() < 1e-6 && (y[2] - 1.2247).abs() < 1e-4);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LayerNorm {
    normalized_shape: Vec<i64>,
    eps: f64,
    elementwise_affine: bool,
    bias: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl LayerNorm {
    /// `LayerNorm(normalized_shape)` with PyTorch's defaults (see the type).
    pub fn new(normalized_shape: &[i64]) -> LayerNorm {
        LayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            eps: DEFAULT_EPS,
            elementwise_affine: true,
            bias: true,
            dtype: None,
            device: None,
        }
    }
    /// `eps=` (default `1e-5`).
    pub fn eps(mut self, eps: f64) -> LayerNorm {
        self.eps = eps;
        self
    }
    /// `elementwise_affine=`: the parameters `"weight"` and `"bias"` (default `true`).
    pub fn elementwise_affine(mut self, elementwise_affine: bool) -> LayerNorm {
        self.elementwise_affine = elementwise_affine;
        self
    }
    /// `bias=`: the parameter `"bias"` beside `"weight"` (default `true`).
    pub fn bias(mut self, bias: bool) -> LayerNorm {
        self.bias = bias;
        self
    }
    /// The parameters' dtype, floating (default: the process default).
    pub fn dtype(mut self, dtype: DType) -> LayerNorm {
        self.dtype = Some(dtype);
        self
    }
    /// Where the parameters live (default: the process default device).
    pub fn device(mut self, device: Device) -> LayerNorm {
        self.device = Some(device);
        self
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::LayerNorm;
    /// use devtensor::ErrorCode;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let ln = LayerNorm::new(&[2, 3]).bias(false).build()?;
    /// let p = ln.named_parameters()?;
    /// assert_eq!((p.len(), p[0].0.as_str(), p[0].1.shape()), (1, "weight", vec![2, 3]));
    /// assert_eq!(LayerNorm::new(&[]).build().unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_layer_norm_new`:
    /// [`ErrorCode::InvalidArgument`] (an empty or non-positive `normalized_shape`, `eps`
    /// not positive), `DtypeMismatch`, `InvalidDevice`, `DeviceUnavailable`,
    /// `OutOfMemory`. Its forward fails with `ShapeMismatch` naming the module and the
    /// shapes, `DtypeMismatch`, `DeviceMismatch`.
    pub fn build(&self) -> Result<Module> {
        let (dtype, device) = (DType::raw_or_default(self.dtype), Device::raw_or_default(self.device));
        new_module(|o| unsafe {
            ffi::dt_layer_norm_new(
                self.normalized_shape.as_ptr(),
                self.normalized_shape.len(),
                self.eps,
                self.elementwise_affine as i32,
                self.bias as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// `torch.nn.GroupNorm(num_groups, num_channels)` with PyTorch's defaults, changed by
/// setters (eps `1e-5`, affine, the process default dtype and device).
/// [`build`](GroupNorm::build) makes the [`Module`] (`dt_group_norm_new`): parameters
/// `"weight"` (ones) and `"bias"` (zeros) `[num_channels]`; its forward is
/// [`Tensor::group_norm`] on `[N, num_channels, ...]` (the same in training and eval
/// mode).
///
/// ```
/// use devtensor::nn::GroupNorm;
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let gn = GroupNorm::new(2, 4).build()?;
/// let p = gn.named_parameters()?;
/// assert_eq!((p[0].0.as_str(), p[0].1.shape()), ("weight", vec![4]));
/// assert_eq!((p[1].0.as_str(), p[1].1.shape()), ("bias", vec![4]));
/// let x = Tensor::randn(&[2, 4, 3], DType::Float32, Device::CPU)?;
/// assert_eq!(gn.forward(&x)?.shape(), vec![2, 4, 3]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GroupNorm {
    num_groups: i64,
    num_channels: i64,
    eps: f64,
    affine: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl GroupNorm {
    /// `GroupNorm(num_groups, num_channels)` with PyTorch's defaults (see the type).
    pub fn new(num_groups: i64, num_channels: i64) -> GroupNorm {
        GroupNorm {
            num_groups,
            num_channels,
            eps: DEFAULT_EPS,
            affine: true,
            dtype: None,
            device: None,
        }
    }
    /// `eps=` (default `1e-5`).
    pub fn eps(mut self, eps: f64) -> GroupNorm {
        self.eps = eps;
        self
    }
    /// `affine=`: the parameters `"weight"` and `"bias"` (default `true`).
    pub fn affine(mut self, affine: bool) -> GroupNorm {
        self.affine = affine;
        self
    }
    /// The parameters' dtype, floating (default: the process default).
    pub fn dtype(mut self, dtype: DType) -> GroupNorm {
        self.dtype = Some(dtype);
        self
    }
    /// Where the parameters live (default: the process default device).
    pub fn device(mut self, device: Device) -> GroupNorm {
        self.device = Some(device);
        self
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::GroupNorm;
    /// use devtensor::ErrorCode;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// assert!(GroupNorm::new(1, 3).affine(false).build()?.parameters()?.is_empty());
    /// let e = GroupNorm::new(3, 4).build().unwrap_err(); // 4 channels in 3 groups
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_group_norm_new`:
    /// [`ErrorCode::InvalidArgument`] (`num_channels` not a positive multiple of
    /// `num_groups`, `eps` not positive), `DtypeMismatch`, `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails with `ShapeMismatch` naming
    /// the module and the input's size, `DtypeMismatch`, `DeviceMismatch`.
    pub fn build(&self) -> Result<Module> {
        let (dtype, device) = (DType::raw_or_default(self.dtype), Device::raw_or_default(self.device));
        new_module(|o| unsafe {
            ffi::dt_group_norm_new(
                self.num_groups,
                self.num_channels,
                self.eps,
                self.affine as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// `torch.nn.Embedding(num_embeddings, embedding_dim)` with PyTorch's defaults, changed
/// by setters (no padding index, the process default dtype and device).
/// [`build`](Embedding::build) makes the [`Module`] (`dt_embedding_new`): parameter
/// `"weight"` `[num_embeddings, embedding_dim]` drawn from N(0, 1) (the device's Philox
/// generator, [`manual_seed`](crate::manual_seed)), its padding row zeroed. Its forward
/// is [`Tensor::embedding`] of integer indices; the padding row gets no gradient.
///
/// ```
/// use devtensor::nn::Embedding;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let emb = Embedding::new(10, 3).padding_idx(0).build()?;
/// let w = emb.parameters()?.remove(0);
/// assert_eq!(w.shape(), vec![10, 3]);
/// assert_eq!(w.narrow(0, 0, 1)?.to_vec::<f32>()?, vec![0.0; 3]); // the padding row
/// let ids = Tensor::from_slice(&[4i64, 0, 7, 9], &[2, 2], Device::CPU)?;
/// let v = emb.forward(&ids)?;
/// assert_eq!(v.shape(), vec![2, 2, 3]);
/// assert_eq!(v.narrow(1, 0, 1)?.narrow(0, 0, 1)?.to_vec::<f32>()?, w.narrow(0, 4, 1)?.to_vec::<f32>()?);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Embedding {
    num_embeddings: i64,
    embedding_dim: i64,
    padding_idx: Option<i64>,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl Embedding {
    /// `Embedding(num_embeddings, embedding_dim)` with PyTorch's defaults (see the type).
    pub fn new(num_embeddings: i64, embedding_dim: i64) -> Embedding {
        Embedding {
            num_embeddings,
            embedding_dim,
            padding_idx: None,
            dtype: None,
            device: None,
        }
    }
    /// `padding_idx=`: the row that starts at zero and gets no gradient, negative
    /// counting from the end (`-1` is the last row); `None` (the default) for none.
    /// Takes `0` or `None`.
    pub fn padding_idx(mut self, padding_idx: impl Into<Option<i64>>) -> Embedding {
        self.padding_idx = padding_idx.into();
        self
    }
    /// The weight's dtype, floating (default: the process default).
    pub fn dtype(mut self, dtype: DType) -> Embedding {
        self.dtype = Some(dtype);
        self
    }
    /// Where the weight lives (default: the process default device).
    pub fn device(mut self, device: Device) -> Embedding {
        self.device = Some(device);
        self
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::Embedding;
    /// use devtensor::{DType, ErrorCode};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let emb = Embedding::new(4, 2).padding_idx(-1).dtype(DType::Float64).build()?;
    /// let w = emb.parameters()?[0].to_vec::<f64>()?;
    /// assert_eq!(&w[6..], &[0.0, 0.0]); // -1: the last row
    /// let e = Embedding::new(4, 2).padding_idx(4).build().unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_embedding_new`:
    /// [`ErrorCode::InvalidArgument`] (sizes not positive, `padding_idx` outside
    /// `[-num_embeddings, num_embeddings)`), `DtypeMismatch`, `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails as [`Tensor::embedding`]
    /// does, the message naming the module.
    pub fn build(&self) -> Result<Module> {
        let (dtype, device) = (DType::raw_or_default(self.dtype), Device::raw_or_default(self.device));
        new_module(|o| unsafe {
            ffi::dt_embedding_new(
                self.num_embeddings,
                self.embedding_dim,
                self.padding_idx.unwrap_or(PADDING_IDX_NONE),
                dtype,
                device,
                o,
            )
        })
    }
}

/// A batch norm's running statistics, `running_mean` and `running_var` (`[C]` each, of
/// the input's dtype, on its device), for [`Tensor::batch_norm`] and
/// [`Tensor::batch_norm_training`]. [`RunningStats::new`] starts them as PyTorch does.
///
/// IN PLACE OR NOT. `torch.nn.functional.batch_norm(..., training=True)` updates
/// `running_mean` and `running_var` IN PLACE, and so does `dt_batch_norm`. The safe crate
/// writes into no tensor the caller holds (the crate's README, "Not bound, and why"): a
/// [`Tensor`] is `Send + Sync` and its clones share one handle, so not even a `&mut
/// Tensor` would keep another clone from being read on another thread during the write.
/// So [`Tensor::batch_norm_training`] is out of place: it hands `dt_batch_norm` fresh
/// copies of the statistics it is given, which nothing else can reach, and returns them
/// updated, leaving the caller's tensors as they were (copying two `[C]` vectors is the
/// whole cost); [`Tensor::batch_norm`] (evaluation) writes nothing. The in-place C call
/// stays reachable through [`sys`](crate::sys) on [`Tensor::as_raw`] handles, at the
/// caller's own risk.
///
/// The modules are another matter: [`BatchNorm1d`] and [`BatchNorm2d`] update their own
/// buffers in place in training mode, as PyTorch's do, just as an optimizer step writes
/// parameters. Tensors taken from [`Module::named_buffers`] or [`Module::state_dict`]
/// share those buffers and see the updates; as for parameters during a step, do not read
/// them on another thread while a training-mode forward runs (the header: such a reader
/// sees each element's old or new value).
///
/// ```
/// use devtensor::nn::RunningStats;
/// use devtensor::{DType, Device};
///
/// # fn main() -> devtensor::Result<()> {
/// let s = RunningStats::new(2, DType::Float32, Device::CPU)?;
/// assert_eq!(s.mean.to_vec::<f32>()?, vec![0.0, 0.0]);
/// assert_eq!(s.var.to_vec::<f32>()?, vec![1.0, 1.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RunningStats {
    /// `running_mean`, `[C]`.
    pub mean: Tensor,
    /// `running_var`, `[C]`.
    pub var: Tensor,
}

impl RunningStats {
    /// Zeros for the mean and ones for the variance, `[num_features]`: a fresh
    /// `BatchNorm`'s buffers.
    ///
    /// # Errors
    ///
    /// As [`Tensor::zeros`].
    pub fn new(num_features: i64, dtype: DType, device: Device) -> Result<RunningStats> {
        Ok(RunningStats {
            mean: Tensor::zeros(&[num_features], dtype, device)?,
            var: Tensor::ones(&[num_features], dtype, device)?,
        })
    }
}

pub(super) fn opt_ptr(t: Option<&Tensor>) -> *const ffi::dt_tensor {
    t.map_or(std::ptr::null(), |t| t.as_ptr() as *const ffi::dt_tensor)
}

impl Tensor {
    /// `torch.nn.functional.batch_norm(self, running.mean, running.var, weight, bias,
    /// training=False, eps=eps)` (`dt_batch_norm`), evaluation: `self` `[N, C, ...]`
    /// normalised per channel `c` to `(x - mean_c) / sqrt(var_c + eps) * weight_c +
    /// bias_c` with the given running statistics, which are only read. `weight` and
    /// `bias`: `[C]` or `None`. PyTorch's `eps` is `1e-5`. Differentiable in `self`,
    /// `weight` and `bias` (`NativeBatchNormBackward0`).
    ///
    /// ```
    /// use devtensor::nn::RunningStats;
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[3.0f32, 5.0], &[2, 1], Device::CPU)?;
    /// let stats = RunningStats {
    ///     mean: Tensor::from_slice(&[1.0f32], &[1], Device::CPU)?,
    ///     var: Tensor::from_slice(&[4.0f32], &[1], Device::CPU)?,
    /// };
    /// let w = Tensor::from_slice(&[10.0f32], &[1], Device::CPU)?;
    /// let y = x.batch_norm(&stats, Some(&w), None, 1e-5)?.to_vec::<f32>()?;
    /// // (3 - 1) / 2 * 10 and (5 - 1) / 2 * 10
    /// assert!((y[0] - 10.0).abs() < 1e-3 && (y[1] - 20.0).abs() < 1e-3);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_batch_norm`:
    /// [`ErrorCode::InvalidArgument`] (`eps` not positive), `ShapeMismatch` (fewer than 2
    /// dims, a `[C]` tensor of another size), `DtypeMismatch` (not floating, dtypes
    /// differ), `DeviceMismatch`, `OutOfMemory`.
    pub fn batch_norm(
        &self,
        running: &RunningStats,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_batch_norm(
                self.as_ptr(),
                running.mean.as_ptr(),
                running.var.as_ptr(),
                opt_ptr(weight),
                opt_ptr(bias),
                0,
                0.0,
                eps,
                o,
            )
        })
    }

    /// `torch.nn.functional.batch_norm(self, running_mean, running_var, weight, bias,
    /// training=True, momentum, eps)` (`dt_batch_norm`), OUT OF PLACE: `self` `[N, C,
    /// ...]` normalised per channel with the batch's statistics (over every dim but 1, the
    /// variance biased), times `weight` plus `bias` (`[C]` or `None`). With `running`
    /// given, also returns the updated statistics as NEW tensors, `(1 - momentum) *
    /// running + momentum * batch` (the batch variance unbiased), as PyTorch would have
    /// written into `running_mean` and `running_var`; `running` itself is left as it was
    /// (see [`RunningStats`] for why). The second value is `Some`
    /// exactly when `running` is. PyTorch's defaults: `momentum` `0.1`, `eps` `1e-5`.
    /// Differentiable in `self`, `weight` and `bias` (`NativeBatchNormBackward0`).
    ///
    /// ```
    /// use devtensor::nn::RunningStats;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// // One channel holding 0 and 2: mean 1, biased variance 1, unbiased 2.
    /// let x = Tensor::from_slice(&[0.0f32, 2.0], &[2, 1], Device::CPU)?;
    /// let stats = RunningStats::new(1, DType::Float32, Device::CPU)?;
    /// let (y, new) = x.batch_norm_training(Some(&stats), None, None, 0.1, 1e-5)?;
    /// let y = y.to_vec::<f32>()?;
    /// assert!((y[0] + 1.0).abs() < 1e-4 && (y[1] - 1.0).abs() < 1e-4);
    /// let new = new.unwrap();
    /// assert!((new.mean.to_vec::<f32>()?[0] - 0.1).abs() < 1e-6); // 0.9 * 0 + 0.1 * 1
    /// assert!((new.var.to_vec::<f32>()?[0] - 1.1).abs() < 1e-6); // 0.9 * 1 + 0.1 * 2
    /// assert_eq!(stats.mean.to_vec::<f32>()?, vec![0.0]); // unchanged
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_batch_norm`:
    /// [`ErrorCode::InvalidArgument`] (`eps` not positive), `ShapeMismatch` (fewer than 2
    /// dims, a `[C]` tensor of another size, one value per channel), `DtypeMismatch` (not
    /// floating, dtypes differ), `DeviceMismatch`, `OutOfMemory`.
    pub fn batch_norm_training(
        &self,
        running: Option<&RunningStats>,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Option<RunningStats>)> {
        // Copies that no other handle reaches: the C call may write them in place.
        let fresh = match running {
            Some(r) => Some(RunningStats {
                mean: r.mean.deep_copy()?,
                var: r.var.deep_copy()?,
            }),
            None => None,
        };
        let (rm, rv) = fresh
            .as_ref()
            .map_or((std::ptr::null_mut(), std::ptr::null_mut()), |r| {
                (r.mean.as_ptr(), r.var.as_ptr())
            });
        let y = Tensor::from_out(|o| unsafe {
            ffi::dt_batch_norm(
                self.as_ptr(),
                rm,
                rv,
                opt_ptr(weight),
                opt_ptr(bias),
                1,
                momentum,
                eps,
                o,
            )
        })?;
        Ok((y, fresh))
    }

    /// `torch.nn.functional.layer_norm(self, normalized_shape, weight, bias, eps)`
    /// (`dt_layer_norm`): `self` normalised over its last dims, which must be
    /// `normalized_shape` (mean 0, biased variance 1), times `weight` plus `bias` (each
    /// of shape `normalized_shape`, or `None`). PyTorch's `eps` is `1e-5`.
    /// Differentiable (`NativeLayerNormBackward0`).
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU)?;
    /// let y = x.layer_norm(&[3], None, None, 1e-5)?.to_vec::<f32>()?;
    /// // mean 2, biased variance 2/3: -1 / sqrt(2/3 + 1e-5) = -1.2247
    /// assert!((y[0] + 1.2247).abs() < 1e-4 && y[1].abs() < 1e-6 && (y[2] - 1.2247).abs() < 1e-4);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_layer_norm`:
    /// [`ErrorCode::InvalidArgument`] (`eps` not positive), `ShapeMismatch` (the last dims
    /// are not `normalized_shape`, `weight` or `bias` of another shape), `DtypeMismatch`,
    /// `DeviceMismatch`, `OutOfMemory`.
    pub fn layer_norm(
        &self,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_layer_norm(
                self.as_ptr(),
                normalized_shape.as_ptr(),
                normalized_shape.len(),
                opt_ptr(weight),
                opt_ptr(bias),
                eps,
                o,
            )
        })
    }

    /// `torch.nn.functional.group_norm(self, num_groups, weight, bias, eps)`
    /// (`dt_group_norm`): `self` `[N, C, ...]` with its `C` channels split into
    /// `num_groups` groups, each normalised over its channels and every dim after 1, times
    /// `weight` plus `bias` (`[C]` or `None`). PyTorch's `eps` is `1e-5`. Differentiable
    /// (`NativeGroupNormBackward0`).
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// // Groups {1, 3} (mean 2, variance 1) and {10, 14} (mean 12, variance 4).
    /// let x = Tensor::from_slice(&[1.0f32, 3.0, 10.0, 14.0], &[1, 4], Device::CPU)?;
    /// let y = x.group_norm(2, None, None, 1e-5)?.to_vec::<f32>()?;
    /// let want = [-1.0f32, 1.0, -1.0, 1.0];
    /// assert!(y.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-4));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_group_norm`:
    /// [`ErrorCode::InvalidArgument`] (`eps` not positive), `ShapeMismatch` (fewer than 2
    /// dims, `C` not a multiple of `num_groups`, `weight` or `bias` not `[C]`),
    /// `DtypeMismatch`, `DeviceMismatch`, `OutOfMemory`.
    pub fn group_norm(
        &self,
        num_groups: i64,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_group_norm(
                self.as_ptr(),
                num_groups,
                opt_ptr(weight),
                opt_ptr(bias),
                eps,
                o,
            )
        })
    }

    /// `torch.nn.functional.embedding(self, weight, padding_idx)` (`dt_embedding`): the
    /// rows of `weight` `[num_embeddings, dim]` that the integer indices `self` (int64 or
    /// int32, any shape) name, of shape `self.shape()` + `[dim]`. `padding_idx` (in `[0,
    /// num_embeddings)`, or `None`) names a row that gets no gradient. Differentiable in
    /// `weight` (`EmbeddingBackward0`).
    ///
    /// ```
    /// use devtensor::{Device, ErrorCode, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let w = Tensor::from_slice(&[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2], Device::CPU)?;
    /// let ids = Tensor::from_slice(&[2i64, 0], &[2], Device::CPU)?;
    /// assert_eq!(ids.embedding(&w, None)?.to_vec::<f32>()?, vec![4.0, 5.0, 0.0, 1.0]);
    /// let floats = Tensor::from_slice(&[2.0f32], &[1], Device::CPU)?;
    /// assert_eq!(floats.embedding(&w, None).unwrap_err().code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_embedding`:
    /// [`ErrorCode::InvalidArgument`] (an index outside `[0, num_embeddings)`, naming it;
    /// `padding_idx` outside), `ShapeMismatch` (`weight` not 2-d), `DtypeMismatch`
    /// (indices not int64 or int32), `DeviceMismatch`, `OutOfMemory`.
    pub fn embedding(&self, weight: &Tensor, padding_idx: Option<i64>) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_embedding(
                self.as_ptr(),
                weight.as_ptr(),
                padding_idx.unwrap_or(PADDING_IDX_NONE),
                o,
            )
        })
    }
}

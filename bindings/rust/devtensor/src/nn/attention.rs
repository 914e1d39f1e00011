//! Attention: the modules' builders ([`MultiheadAttention`], [`TransformerEncoderLayer`],
//! [`TransformerEncoder`]) with PyTorch's defaults and state_dict keys, and the
//! functional [`Tensor::scaled_dot_product_attention`].
//!
//! OPTIONAL INPUTS. These modules take PyTorch's optional forward arguments, which
//! [`Module::forward_with`] passes, `None` being PyTorch's `None`:
//!
//! - `MultiheadAttention`: `[query, key, value, key_padding_mask, attn_mask]`, 1 to 5 of
//!   them (`key` `None`: the query, self-attention; `value` `None`: the key);
//! - `TransformerEncoderLayer` and `TransformerEncoder`: `[src, mask,
//!   src_key_padding_mask]`, 1 to 3.
//!
//! [`Module::forward`] with the query (or `src`) alone is self-attention without masks.
//! [`Module::multihead_attention_forward`] runs a `MultiheadAttention` as PyTorch's
//! `need_weights=True` and returns the attention weights beside the output.
//!
//! MASK POLARITY, as in PyTorch. The modules' bool masks (`key_padding_mask`,
//! `attn_mask`, `mask`, `src_key_padding_mask`) are `true` where attention is NOT
//! allowed (a padded key, a future position). [`Tensor::scaled_dot_product_attention`]'s
//! bool mask is the opposite: `true` where attention IS allowed. Float masks are added to
//! the scores in both (`0.0` allows, `f32::NEG_INFINITY` forbids).

use super::norm::opt_ptr;
use super::{new_module, Module};
use crate::error::Result;
use crate::{DType, Device, Tensor};
use devtensor_sys as ffi;
use std::ffi::CStr;

/// PyTorch's `dropout` of `TransformerEncoderLayer`.
const DEFAULT_ENCODER_DROPOUT: f64 = 0.1;
/// PyTorch's `dim_feedforward` of `TransformerEncoderLayer`.
const DEFAULT_DIM_FEEDFORWARD: i64 = 2048;
/// PyTorch's `layer_norm_eps` of `TransformerEncoderLayer`.
const DEFAULT_LAYER_NORM_EPS: f64 = 1e-5;

/// `torch.nn.MultiheadAttention(embed_dim, num_heads)` with PyTorch's defaults, changed by
/// setters (dropout `0.0`, a bias, `batch_first=False`, the process default dtype and
/// device; `kdim = vdim = embed_dim`). [`build`](MultiheadAttention::build) makes the
/// [`Module`] (`dt_multihead_attention_new`): parameters `"in_proj_weight"` `[3 *
/// embed_dim, embed_dim]` (xavier-uniform), `"in_proj_bias"` `[3 * embed_dim]` (zeros)
/// and the child `"out_proj"`, a `Linear` (`"out_proj.weight"`, `"out_proj.bias"`, the
/// bias zeros): PyTorch's keys, so its state_dict loads unchanged.
///
/// Its forward ([`Module::forward_with`]) takes `[query, key, value, key_padding_mask,
/// attn_mask]`, 1 to 5 of them: query `[L, N, E]` (`[N, L, E]` with `batch_first`;
/// unbatched `[L, E]`), key and value `[S, N, E]` (`None`: the query, self-attention),
/// `key_padding_mask` `[N, S]` and `attn_mask` `[L, S]` or `[N * num_heads, L, S]`, bool
/// masks `true` where attention is NOT allowed (as PyTorch's, and the opposite of
/// [`Tensor::scaled_dot_product_attention`]'s), float masks added. It gives the output
/// `[L, N, E]` only (`need_weights=False`); [`Module::multihead_attention_forward`] gives
/// PyTorch's attention weights too. Dropout applies to the attention weights in training
/// mode (a new module's).
///
/// ```
/// use devtensor::nn::MultiheadAttention;
/// use devtensor::{Device, StateDict, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let mut mha = MultiheadAttention::new(2, 1).build()?;
/// // Identity projections, out_proj.bias [10, 20]: the output is the attention's + bias.
/// let eye = Tensor::from_slice(&[1.0f32, 0.0, 0.0, 1.0], &[2, 2], Device::CPU)?;
/// let sd = StateDict::from_pairs([
///     ("in_proj_weight", Tensor::cat(&[&eye, &eye, &eye], 0)?),
///     ("in_proj_bias", Tensor::from_slice(&[0.0f32; 6], &[6], Device::CPU)?),
///     ("out_proj.weight", eye.clone()),
///     ("out_proj.bias", Tensor::from_slice(&[10.0f32, 20.0], &[2], Device::CPU)?),
/// ])?;
/// mha.load_state_dict(&sd)?;
/// let q = Tensor::from_slice(&[7.0f32, -3.0], &[1, 1, 2], Device::CPU)?; // [L, N, E]
/// let k = Tensor::from_slice(&[0.0f32; 6], &[3, 1, 2], Device::CPU)?; // equal keys
/// let v = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 1, 2], Device::CPU)?;
/// // Equal keys: equal weights, the mean of the values (3, 4), plus the bias.
/// let y = mha.forward_with(&[Some(&q), Some(&k), Some(&v)])?.to_vec::<f32>()?;
/// assert!((y[0] - 13.0).abs() < 1e-5 && (y[1] - 24.0).abs() < 1e-5);
/// // key_padding_mask: true = padding, not attended. The mean of values 0 and 1: (2, 3).
/// let pad = Tensor::from_slice(&[false, false, true], &[1, 3], Device::CPU)?;
/// let y = mha.forward_with(&[Some(&q), Some(&k), Some(&v), Some(&pad)])?.to_vec::<f32>()?;
/// assert!((y[0] - 12.0).abs() < 1e-5 && (y[1] - 23.0).abs() < 1e-5);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MultiheadAttention {
    embed_dim: i64,
    num_heads: i64,
    dropout: f64,
    bias: bool,
    batch_first: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl MultiheadAttention {
    /// `MultiheadAttention(embed_dim, num_heads)` with PyTorch's defaults (see the type).
    /// Each head attends over `embed_dim / num_heads` of the dimensions.
    pub fn new(embed_dim: i64, num_heads: i64) -> MultiheadAttention {
        MultiheadAttention {
            embed_dim,
            num_heads,
            dropout: 0.0,
            bias: true,
            batch_first: false,
            dtype: None,
            device: None,
        }
    }
    /// `dropout=`: the probability of zeroing an attention weight in training mode, in
    /// `[0, 1]` (default `0.0`).
    pub fn dropout(mut self, dropout: f64) -> MultiheadAttention {
        self.dropout = dropout;
        self
    }
    /// `bias=`: `"in_proj_bias"` and `"out_proj.bias"` (default `true`).
    pub fn bias(mut self, bias: bool) -> MultiheadAttention {
        self.bias = bias;
        self
    }
    /// `batch_first=`: inputs `[N, L, E]` instead of `[L, N, E]` (default `false`).
    pub fn batch_first(mut self, batch_first: bool) -> MultiheadAttention {
        self.batch_first = batch_first;
        self
    }
    /// The parameters' dtype, floating (default: the process default,
    /// [`set_default_dtype`](crate::set_default_dtype)).
    pub fn dtype(mut self, dtype: DType) -> MultiheadAttention {
        self.dtype = Some(dtype);
        self
    }
    /// Where the parameters live (default: the process default device).
    pub fn device(mut self, device: Device) -> MultiheadAttention {
        self.device = Some(device);
        self
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::MultiheadAttention;
    /// use devtensor::{DType, Device, ErrorCode, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mha = MultiheadAttention::new(8, 2).batch_first(true).build()?;
    /// let names = mha.state_dict()?.names()?;
    /// assert_eq!(names, ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]);
    /// let x = Tensor::randn(&[4, 5, 8], DType::Float32, Device::CPU)?; // [N, L, E]
    /// assert_eq!(mha.forward(&x)?.shape(), vec![4, 5, 8]); // self-attention
    /// let e = MultiheadAttention::new(8, 3).build().unwrap_err(); // 8 is no multiple of 3
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_multihead_attention_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (`embed_dim` not
    /// a positive multiple of `num_heads`, `dropout` outside `[0, 1]`), `DtypeMismatch` (a
    /// dtype that is not floating), `InvalidDevice`, `DeviceUnavailable`, `OutOfMemory`.
    /// Its forward fails with `ShapeMismatch` naming the module and the shapes (a query,
    /// key or value of another width than `embed_dim`, masks of the wrong shape),
    /// `DtypeMismatch` (a float mask of another dtype), `DeviceMismatch`,
    /// `InvalidArgument` (no query, more than 5 inputs).
    pub fn build(&self) -> Result<Module> {
        let (dtype, device) = (DType::raw_or_default(self.dtype), Device::raw_or_default(self.device));
        new_module(|o| unsafe {
            ffi::dt_multihead_attention_new(
                self.embed_dim,
                self.num_heads,
                self.dropout,
                self.bias as i32,
                self.batch_first as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

impl Module {
    /// `MultiheadAttention`'s forward with `need_weights=True`
    /// (`dt_multihead_attention_forward`), `self` being the [`MultiheadAttention`]
    /// module: PyTorch's `attn_output, attn_output_weights = mha(query, key, value,
    /// key_padding_mask=key_padding_mask, need_weights=True, attn_mask=attn_mask,
    /// average_attn_weights=average_attn_weights)`. The first result is the attention
    /// output, what [`Module::forward_with`]`(&[Some(query), key, value,
    /// key_padding_mask, attn_mask])` gives; the second the attention weights,
    /// `softmax(q kᵀ / sqrt(embed_dim / num_heads) + mask)` of each head's projected query
    /// `q` and key `k`, after dropout in training mode (as PyTorch returns them).
    ///
    /// With `average_attn_weights` (PyTorch's default, `true`) the weights are their mean
    /// over the heads, `[N, L, S]` (unbatched `[L, S]`); without, one set per head, `[N,
    /// num_heads, L, S]` (unbatched `[num_heads, L, S]`); the batch comes first whatever
    /// `batch_first` says. Without dropout each row (over `S`) sums to 1, with 0 where a
    /// mask forbids attention.
    ///
    /// The inputs are [`MultiheadAttention`]'s: `query` `[L, N, E]` (`[N, L, E]` with
    /// `batch_first`; unbatched `[L, E]`), `key` and `value` `[S, N, E]` (`key` `None`:
    /// the query, self-attention; `value` `None`: the key), `key_padding_mask` `[N, S]`
    /// and `attn_mask` `[L, S]` or `[N * num_heads, L, S]` (`None`: none), bool masks
    /// `true` where attention is NOT allowed, float masks added to the scores. Both
    /// results are part of the autograd graph.
    ///
    /// ```
    /// use devtensor::nn::MultiheadAttention;
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// // Two heads of width 1 with identity projections (bias=False): head h scores
    /// // query[h] * key[h] (the scale is 1/sqrt(1)) and mixes value column h.
    /// let mut mha = MultiheadAttention::new(2, 2).bias(false).build()?;
    /// let eye = Tensor::from_slice(&[1.0f32, 0.0, 0.0, 1.0], &[2, 2], Device::CPU)?;
    /// mha.load_state_dict(&StateDict::from_pairs([
    ///     ("in_proj_weight", Tensor::cat(&[&eye, &eye, &eye], 0)?),
    ///     ("out_proj.weight", eye.clone()),
    /// ])?)?;
    /// let q = Tensor::from_slice(&[1.0f32, 0.0], &[1, 1, 2], Device::CPU)?; // [L, N, E]
    /// // Head 0 scores 0 and ln 3: weights 1/4, 3/4; head 1 scores 0 and 0: 1/2, 1/2.
    /// let k = Tensor::from_slice(&[0.0f32, 0.0, 3f32.ln(), 0.0], &[2, 1, 2], Device::CPU)?;
    /// let v = Tensor::from_slice(&[4.0f32, 2.0, 8.0, 6.0], &[2, 1, 2], Device::CPU)?;
    /// let close = |a: Vec<f32>, b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5);
    ///
    /// let (out, weights) = mha.multihead_attention_forward(&q, Some(&k), Some(&v), None, None, true)?;
    /// // Head 0: 4 / 4 + 8 * 3 / 4 = 7; head 1: (2 + 6) / 2 = 4.
    /// assert!(close(out.to_vec::<f32>()?, &[7.0, 4.0]));
    /// // Averaged over the heads, [N, L, S].
    /// assert_eq!(weights.shape(), vec![1, 1, 2]);
    /// assert!(close(weights.to_vec::<f32>()?, &[0.375, 0.625]));
    /// // Per head, [N, num_heads, L, S].
    /// let (_, per_head) = mha.multihead_attention_forward(&q, Some(&k), Some(&v), None, None, false)?;
    /// assert_eq!(per_head.shape(), vec![1, 2, 1, 2]);
    /// assert!(close(per_head.to_vec::<f32>()?, &[0.25, 0.75, 0.5, 0.5]));
    /// // key_padding_mask: true = padding. Key 1 hidden: every weight on key 0.
    /// let pad = Tensor::from_slice(&[false, true], &[1, 2], Device::CPU)?;
    /// let (out, weights) = mha.multihead_attention_forward(&q, Some(&k), Some(&v), Some(&pad), None, true)?;
    /// assert!(close(out.to_vec::<f32>()?, &[4.0, 2.0]) && close(weights.to_vec::<f32>()?, &[1.0, 0.0]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_multihead_attention_forward`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) for a module that
    /// is not a `MultiheadAttention`, the message naming its kind (`"m is a Linear module,
    /// not a MultiheadAttention"`), and the errors of [`MultiheadAttention`]'s forward:
    /// `ShapeMismatch` naming the module and the shapes (a query, key or value of another
    /// width than `embed_dim`, masks of the wrong shape), `DtypeMismatch` (a float mask of
    /// another dtype), `DeviceMismatch`, `OutOfMemory`.
    pub fn multihead_attention_forward(
        &self,
        query: &Tensor,
        key: Option<&Tensor>,
        value: Option<&Tensor>,
        key_padding_mask: Option<&Tensor>,
        attn_mask: Option<&Tensor>,
        average_attn_weights: bool,
    ) -> Result<(Tensor, Tensor)> {
        // SAFETY: a live module handle and tensor handles (or NULLs) borrowed for the
        // call; two distinct valid out-pointers.
        Tensor::pair_from_out(|o, w| unsafe {
            ffi::dt_multihead_attention_forward(
                self.raw(),
                query.as_ptr(),
                opt_ptr(key),
                opt_ptr(value),
                opt_ptr(key_padding_mask),
                opt_ptr(attn_mask),
                average_attn_weights as i32,
                o,
                w,
            )
        })
    }
}

/// The activation of a [`TransformerEncoderLayer`]'s feed-forward block, PyTorch's
/// `activation="relu"` or `"gelu"`.
///
/// ```
/// use devtensor::nn::Activation;
/// assert_eq!(Activation::default(), Activation::Relu);
/// assert_eq!(Activation::Gelu.as_str(), "gelu");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `"relu"`, max(x, 0) (PyTorch's default).
    Relu,
    /// `"gelu"`, the exact erf form.
    Gelu,
}

impl Default for Activation {
    /// [`Activation::Relu`], PyTorch's `activation="relu"`.
    fn default() -> Activation {
        Activation::Relu
    }
}

impl Activation {
    /// PyTorch's name: `"relu"` or `"gelu"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::Gelu => "gelu",
        }
    }
    fn c_name(self) -> &'static CStr {
        match self {
            Activation::Relu => c"relu",
            Activation::Gelu => c"gelu",
        }
    }
}

/// `torch.nn.TransformerEncoderLayer(d_model, nhead)` with PyTorch's defaults, changed by
/// setters (`dim_feedforward` 2048, dropout `0.1`, [`Activation::Relu`],
/// `layer_norm_eps` `1e-5`, `batch_first=False`, `norm_first=False`, the process default
/// dtype and device). [`build`](TransformerEncoderLayer::build) makes the [`Module`]
/// (`dt_transformer_encoder_layer_new`) with PyTorch's children and keys: `self_attn` (a
/// [`MultiheadAttention`]), `linear1`, `dropout`, `linear2`, `norm1`, `norm2`,
/// `dropout1`, `dropout2`.
///
/// Its forward ([`Module::forward_with`]) takes `[src, src_mask, src_key_padding_mask]`,
/// 1 to 3 of them, masks as [`MultiheadAttention`]'s (bool `true`: NOT attended): `src`
/// `[S, N, d_model]` (`[N, S, d_model]` with `batch_first`), `src_mask` `[S, S]`,
/// `src_key_padding_mask` `[N, S]`. Post-norm (the default): `x = norm1(x + sa(x))`, then
/// `norm2(x + ff(x))`; with `norm_first`: `x = x + sa(norm1(x))`, then `x +
/// ff(norm2(x))`. Dropout is active in training mode (a new module's): call
/// [`Module::eval`] for inference.
///
/// ```
/// use devtensor::nn::TransformerEncoderLayer;
/// use devtensor::{Device, StateDict, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let mut layer = TransformerEncoderLayer::new(3, 1).dim_feedforward(4).build()?;
/// layer.eval()?;
/// // Zero every Linear: attention and feed-forward add nothing, so the layer is
/// // norm2(norm1(x)), and a LayerNorm of [1, 2, 3] is -1.2247, 0, 1.2247.
/// let zeroed: Vec<(String, Tensor)> = layer
///     .state_dict()?
///     .entries()?
///     .into_iter()
///     .map(|(n, t)| Ok((n.clone(), if n.starts_with("norm") { t } else { t.zeros_like()? })))
///     .collect::<devtensor::Result<_>>()?;
/// layer.load_state_dict(&StateDict::from_pairs(zeroed)?)?;
/// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[1, 1, 3], Device::CPU)?; // [S, N, E]
/// let y = layer.forward(&x)?.to_vec::<f32>()?;
/// assert!((y[0] + 1.2247).abs() < 1e-3 && y[1].abs() < 1e-5 && (y[2] - 1.2247).abs() < 1e-3);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TransformerEncoderLayer {
    d_model: i64,
    nhead: i64,
    dim_feedforward: i64,
    dropout: f64,
    activation: Activation,
    layer_norm_eps: f64,
    batch_first: bool,
    norm_first: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl TransformerEncoderLayer {
    /// `TransformerEncoderLayer(d_model, nhead)` with PyTorch's defaults (see the type).
    pub fn new(d_model: i64, nhead: i64) -> TransformerEncoderLayer {
        TransformerEncoderLayer {
            d_model,
            nhead,
            dim_feedforward: DEFAULT_DIM_FEEDFORWARD,
            dropout: DEFAULT_ENCODER_DROPOUT,
            activation: Activation::Relu,
            layer_norm_eps: DEFAULT_LAYER_NORM_EPS,
            batch_first: false,
            norm_first: false,
            dtype: None,
            device: None,
        }
    }
    /// `dim_feedforward=`: the width of the feed-forward block (default `2048`).
    pub fn dim_feedforward(mut self, dim_feedforward: i64) -> TransformerEncoderLayer {
        self.dim_feedforward = dim_feedforward;
        self
    }
    /// `dropout=`, in `[0, 1]` (default `0.1`): the attention weights', and the dropout
    /// modules' (`dropout`, `dropout1`, `dropout2`), in training mode.
    pub fn dropout(mut self, dropout: f64) -> TransformerEncoderLayer {
        self.dropout = dropout;
        self
    }
    /// `activation=` of the feed-forward block (default [`Activation::Relu`]).
    pub fn activation(mut self, activation: Activation) -> TransformerEncoderLayer {
        self.activation = activation;
        self
    }
    /// `layer_norm_eps=` of `norm1` and `norm2`, positive (default `1e-5`).
    pub fn layer_norm_eps(mut self, eps: f64) -> TransformerEncoderLayer {
        self.layer_norm_eps = eps;
        self
    }
    /// `batch_first=`: inputs `[N, S, d_model]` instead of `[S, N, d_model]` (default
    /// `false`).
    pub fn batch_first(mut self, batch_first: bool) -> TransformerEncoderLayer {
        self.batch_first = batch_first;
        self
    }
    /// `norm_first=`: the layer norms before attention and feed-forward (pre-norm)
    /// instead of after (default `false`).
    pub fn norm_first(mut self, norm_first: bool) -> TransformerEncoderLayer {
        self.norm_first = norm_first;
        self
    }
    /// The parameters' dtype, floating (default: the process default).
    pub fn dtype(mut self, dtype: DType) -> TransformerEncoderLayer {
        self.dtype = Some(dtype);
        self
    }
    /// Where the parameters live (default: the process default device).
    pub fn device(mut self, device: Device) -> TransformerEncoderLayer {
        self.device = Some(device);
        self
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::{Activation, TransformerEncoderLayer};
    /// use devtensor::ErrorCode;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let layer = TransformerEncoderLayer::new(8, 2)
    ///     .dim_feedforward(16)
    ///     .activation(Activation::Gelu)
    ///     .build()?;
    /// let names = layer.state_dict()?.names()?;
    /// assert_eq!(names[0], "self_attn.in_proj_weight");
    /// assert_eq!(names[4], "linear1.weight");
    /// assert_eq!(names.last().unwrap(), "norm2.bias");
    /// assert_eq!(layer.child("linear1")?.parameters()?[0].shape(), vec![16, 8]);
    /// let e = TransformerEncoderLayer::new(8, 3).build().unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_transformer_encoder_layer_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (`d_model` not a
    /// positive multiple of `nhead`, `dim_feedforward` not positive, `dropout` outside
    /// `[0, 1]`, `layer_norm_eps` not positive), `DtypeMismatch`, `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails as
    /// [`MultiheadAttention`]'s, the message naming the attention module.
    pub fn build(&self) -> Result<Module> {
        let (dtype, device) = (DType::raw_or_default(self.dtype), Device::raw_or_default(self.device));
        new_module(|o| unsafe {
            ffi::dt_transformer_encoder_layer_new(
                self.d_model,
                self.nhead,
                self.dim_feedforward,
                self.dropout,
                self.activation.c_name().as_ptr(),
                self.layer_norm_eps,
                self.batch_first as i32,
                self.norm_first as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// `torch.nn.TransformerEncoder`: [`TransformerEncoderLayer`] modules run in order, then
/// an optional final `norm` (usually a [`LayerNorm`](super::LayerNorm)).
/// [`build`](TransformerEncoder::build) makes the [`Module`] (`dt_transformer_encoder_new`)
/// with PyTorch's keys: `"layers.<i>.…"` and `"norm.…"`. Its forward
/// ([`Module::forward_with`]) takes `[src, mask, src_key_padding_mask]` as the layer's and
/// passes them to every layer.
///
/// PyTorch's `TransformerEncoder(encoder_layer, num_layers)` deep-copies one layer; here
/// each layer is a module of its own, built `num_layers` times (so each starts from its
/// own random initialisation, unless a state_dict is loaded). The encoder keeps its own
/// references to the layers and the norm: they are its children, the same modules (not
/// copies), and may be dropped after [`build`](TransformerEncoder::build).
///
/// ```
/// use devtensor::nn::{LayerNorm, TransformerEncoder, TransformerEncoderLayer};
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let layer = TransformerEncoderLayer::new(8, 2).dim_feedforward(16).batch_first(true);
/// let layers = (0..2).map(|_| layer.build()).collect::<devtensor::Result<Vec<_>>>()?;
/// let mut enc = TransformerEncoder::new(layers, Some(LayerNorm::new(&[8]).build()?)).build()?;
/// enc.eval()?;
/// let names = enc.state_dict()?.names()?;
/// assert_eq!(names[0], "layers.0.self_attn.in_proj_weight");
/// assert!(names.contains(&"layers.1.norm2.bias".to_string()));
/// assert_eq!(&names[names.len() - 2..], ["norm.weight", "norm.bias"]);
/// // A batch of 2 sequences of 3; the second one's last position is padding.
/// let x = Tensor::randn(&[2, 3, 8], DType::Float32, Device::CPU)?;
/// let pad = Tensor::from_slice(&[false, false, false, false, false, true], &[2, 3], Device::CPU)?;
/// assert_eq!(enc.forward_with(&[Some(&x), None, Some(&pad)])?.shape(), vec![2, 3, 8]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TransformerEncoder {
    layers: Vec<Module>,
    norm: Option<Module>,
}

impl TransformerEncoder {
    /// The encoder of `layers` (each a distinct `TransformerEncoderLayer`) and the final
    /// `norm` (`None` for none), as PyTorch's `TransformerEncoder(..., norm=norm)`.
    pub fn new(
        layers: impl IntoIterator<Item = Module>,
        norm: Option<Module>,
    ) -> TransformerEncoder {
        TransformerEncoder {
            layers: layers.into_iter().collect(),
            norm,
        }
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::{Module, TransformerEncoder, TransformerEncoderLayer};
    /// use devtensor::ErrorCode;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let one = TransformerEncoderLayer::new(4, 1).dim_feedforward(8).build()?;
    /// let enc = TransformerEncoder::new([one.share()], None).build()?;
    /// assert_eq!(enc.kind()?, "TransformerEncoder");
    /// // The encoder's layer is the module passed in, not a copy.
    /// assert!(enc.child("layers.0")?.parameters()?[0].shares_storage(&one.parameters()?[0]));
    /// // The same layer twice, or a module that is not a TransformerEncoderLayer:
    /// let e = TransformerEncoder::new([one.share(), one.share()], None).build().unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// let e = TransformerEncoder::new([Module::relu()?], None).build().unwrap_err();
    /// assert!(e.message.contains("not a TransformerEncoderLayer"), "{}", e.message);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_transformer_encoder_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (no layers, a
    /// module that is not a `TransformerEncoderLayer`, one layer given twice),
    /// `OutOfMemory`. Its forward fails as [`MultiheadAttention`]'s.
    pub fn build(self) -> Result<Module> {
        let h: Vec<*mut ffi::dt_module> = self.layers.iter().map(|m| m.raw()).collect();
        let norm = self.norm.as_ref().map_or(std::ptr::null_mut(), |m| m.raw());
        // SAFETY: live handles borrowed for the call (the library takes its own
        // references), a valid array of h.len() of them, and a valid out-pointer.
        new_module(|o| unsafe { ffi::dt_transformer_encoder_new(h.as_ptr(), h.len(), norm, o) })
    }
}

impl Tensor {
    /// `torch.nn.functional.scaled_dot_product_attention(self, key, value, attn_mask,
    /// is_causal=is_causal)` (`dt_scaled_dot_product_attention`), `self` the query:
    /// `softmax(query keyᵀ / sqrt(E) + mask) value` over the last two dims, batched (and
    /// broadcast) over the others: query `[..., L, E]`, key `[..., S, E]`, value `[...,
    /// S, Ev]` give `[..., L, Ev]`.
    ///
    /// `attn_mask`, broadcast to `[..., L, S]`: bool, `true` where the query MAY attend
    /// to the key (PyTorch's rule for this function, the OPPOSITE of
    /// [`MultiheadAttention`]'s masks, where `true` forbids), or float, of the query's
    /// dtype, added to the scores. `is_causal` lets query `i` attend to keys `0..=i`
    /// only (then no `attn_mask`). A query that may attend to no key gives NaN, as
    /// PyTorch's. Differentiable (matmul, softmax).
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let q = Tensor::from_slice(&[0.0f32, 0.0, 5.0, -1.0], &[2, 2], Device::CPU)?; // [L, E]
    /// let k = Tensor::from_slice(&[0.0f32; 6], &[3, 2], Device::CPU)?; // equal keys
    /// let v = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2], Device::CPU)?;
    /// // Equal scores: equal weights, the mean of the value rows, (3, 4), for each query.
    /// let y = q.scaled_dot_product_attention(&k, &v, None, false)?.to_vec::<f32>()?;
    /// assert!(y.iter().zip([3.0, 4.0, 3.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-5));
    /// // A bool mask: true = attend. Keys 0 and 1 only: (1 + 3) / 2, (2 + 4) / 2.
    /// let m = Tensor::from_slice(&[true, true, false], &[1, 3], Device::CPU)?;
    /// let y = q.scaled_dot_product_attention(&k, &v, Some(&m), false)?.to_vec::<f32>()?;
    /// assert!(y.iter().zip([2.0, 3.0, 2.0, 3.0]).all(|(a, b)| (a - b).abs() < 1e-5));
    /// // Causal: query 0 sees key 0 only, query 1 keys 0 and 1.
    /// let y = q.scaled_dot_product_attention(&k, &v, None, true)?.to_vec::<f32>()?;
    /// assert!(y.iter().zip([1.0, 2.0, 2.0, 3.0]).all(|(a, b)| (a - b).abs() < 1e-5));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for
    /// `dt_scaled_dot_product_attention`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (both a mask and
    /// `is_causal`), `ShapeMismatch` (sizes that do not fit, a mask that does not
    /// broadcast), `DtypeMismatch` (a float mask of another dtype, not floating),
    /// `DeviceMismatch`, `OutOfMemory`.
    pub fn scaled_dot_product_attention(
        &self,
        key: &Tensor,
        value: &Tensor,
        attn_mask: Option<&Tensor>,
        is_causal: bool,
    ) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_scaled_dot_product_attention(
                self.as_ptr(),
                key.as_ptr(),
                value.as_ptr(),
                opt_ptr(attn_mask),
                is_causal as i32,
                o,
            )
        })
    }
}

//! Recurrent layers: the builders [`Rnn`], [`Lstm`] and [`Gru`] (`torch.nn.RNN`, `LSTM`,
//! `GRU`) with PyTorch's defaults, gate order, initialisation and parameter names, and
//! [`Module::rnn_forward`], PyTorch's whole result `(output, h_n)` or `(output, (h_n,
//! c_n))`. [`Rnn`]'s docs give the shapes, the same for the three kinds.

use super::norm::opt_ptr;
use super::{new_module, Module};
use crate::error::{check, Error, ErrorCode, Result};
use crate::{DType, Device, Tensor};
use devtensor_sys as ffi;
use std::ffi::CStr;

/// The nonlinearity of an [`Rnn`]'s cell, PyTorch's `nonlinearity="tanh"` or `"relu"`.
///
/// ```
/// use devtensor::nn::RnnNonlinearity;
/// assert_eq!(RnnNonlinearity::default(), RnnNonlinearity::Tanh);
/// assert_eq!(RnnNonlinearity::Relu.as_str(), "relu");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RnnNonlinearity {
    /// `"tanh"` (PyTorch's default).
    Tanh,
    /// `"relu"`, max(x, 0).
    Relu,
}

impl Default for RnnNonlinearity {
    /// [`RnnNonlinearity::Tanh`], PyTorch's `nonlinearity="tanh"`.
    fn default() -> RnnNonlinearity {
        RnnNonlinearity::Tanh
    }
}

impl RnnNonlinearity {
    /// PyTorch's name: `"tanh"` or `"relu"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RnnNonlinearity::Tanh => "tanh",
            RnnNonlinearity::Relu => "relu",
        }
    }
    fn c_name(self) -> &'static CStr {
        match self {
            RnnNonlinearity::Tanh => c"tanh",
            RnnNonlinearity::Relu => c"relu",
        }
    }
}

/// The options the three recurrent builders share, with PyTorch's defaults.
#[derive(Clone, Debug, PartialEq)]
struct RecurrentConfig {
    input_size: i64,
    hidden_size: i64,
    num_layers: i64,
    bias: bool,
    batch_first: bool,
    dropout: f64,
    bidirectional: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl RecurrentConfig {
    fn new(input_size: i64, hidden_size: i64) -> RecurrentConfig {
        RecurrentConfig {
            input_size,
            hidden_size,
            num_layers: 1,
            bias: true,
            batch_first: false,
            dropout: 0.0,
            bidirectional: false,
            dtype: None,
            device: None,
        }
    }

    /// The module from `dt_lstm_new` or `dt_gru_new` (the same arguments).
    fn build(
        &self,
        new: unsafe extern "C" fn(
            i64,
            i64,
            i64,
            i32,
            i32,
            f64,
            i32,
            ffi::dt_dtype,
            ffi::dt_device,
            *mut *mut ffi::dt_module,
        ) -> ffi::dt_status,
    ) -> Result<Module> {
        let (dtype, device) = (DType::raw_or_default(self.dtype), Device::raw_or_default(self.device));
        // SAFETY: plain values and a valid out-pointer.
        new_module(|o| unsafe {
            new(
                self.input_size,
                self.hidden_size,
                self.num_layers,
                self.bias as i32,
                self.batch_first as i32,
                self.dropout,
                self.bidirectional as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// The setters of the recurrent builders (the same for the three).
macro_rules! recurrent_setters {
    ($t:ident) => {
        impl $t {
            /// `num_layers=`: recurrent layers stacked, each reading the previous one's
            /// output (default `1`).
            pub fn num_layers(mut self, num_layers: i64) -> $t {
                self.0.num_layers = num_layers;
                self
            }
            /// `bias=`: the parameters `"bias_ih_l<k>"` and `"bias_hh_l<k>"` (default
            /// `true`).
            pub fn bias(mut self, bias: bool) -> $t {
                self.0.bias = bias;
                self
            }
            /// `batch_first=`: input and output `[N, L, features]` instead of `[L, N,
            /// features]` (default `false`). The states `h0`, `c0`, `h_n` and `c_n` keep
            /// the batch in the middle either way, as in PyTorch.
            pub fn batch_first(mut self, batch_first: bool) -> $t {
                self.0.batch_first = batch_first;
                self
            }
            /// `dropout=`: the probability, in `[0, 1]`, of zeroing an element of each
            /// layer's output but the last, in training mode (default `0.0`).
            pub fn dropout(mut self, dropout: f64) -> $t {
                self.0.dropout = dropout;
                self
            }
            /// `bidirectional=`: a second direction per layer reading the sequence from
            /// its end, its parameters suffixed `"_reverse"` and its hidden states beside
            /// the forward direction's in the output (default `false`).
            pub fn bidirectional(mut self, bidirectional: bool) -> $t {
                self.0.bidirectional = bidirectional;
                self
            }
            /// The parameters' dtype, floating (default: the process default,
            /// [`set_default_dtype`](crate::set_default_dtype)).
            pub fn dtype(mut self, dtype: DType) -> $t {
                self.0.dtype = Some(dtype);
                self
            }
            /// Where the parameters live (default: the process default device).
            pub fn device(mut self, device: Device) -> $t {
                self.0.device = Some(device);
                self
            }
        }
    };
}

/// `torch.nn.RNN(input_size, hidden_size)` with PyTorch's defaults, changed by setters
/// (`num_layers` 1, [`RnnNonlinearity::Tanh`], a bias, `batch_first=False`, dropout
/// `0.0`, not bidirectional, the process default dtype and device): the Elman cell `h' =
/// nonlinearity(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)`. [`build`](Rnn::build) makes the
/// [`Module`] (`dt_rnn_new`, kind `"RNN"`) with PyTorch's parameters, per layer `k` and
/// direction: `"weight_ih_l<k>"` `[hidden_size, in]` (`in`: `input_size` for layer 0,
/// else `D * hidden_size`), `"weight_hh_l<k>"` `[hidden_size, hidden_size]`, and with the
/// bias `"bias_ih_l<k>"`, `"bias_hh_l<k>"` `[hidden_size]`, all uniform in `±1 /
/// sqrt(hidden_size)`; the backward direction's names end in `"_reverse"`. So PyTorch's
/// state_dict loads unchanged.
///
/// The shapes, as PyTorch's, for the three kinds: the input is `[L, N, input_size]` (`[N,
/// L, input_size]` with `batch_first`; unbatched `[L, input_size]`), `L` the sequence
/// length and `N` the batch; the initial states `h0` (and [`Lstm`]'s `c0`) are
/// `[num_layers * D, N, hidden_size]` (unbatched `[num_layers * D, hidden_size]`; the
/// batch in the middle even with `batch_first`), `D` being 2 when bidirectional, else 1,
/// and zeros when not given. The output is `[L, N, D * hidden_size]` in the input's
/// layout, each direction's hidden states side by side (forward first).
/// [`Module::forward`] takes the input alone, [`Module::forward_with`] `[input, h0]`
/// (`[input, h0, c0]` for an LSTM), and both give the output only;
/// [`Module::rnn_forward`] gives the last states too. Dropout applies between layers in
/// training mode (a new module's): call [`Module::eval`] for inference. Padded batches of
/// sequences of unequal lengths (PyTorch's `PackedSequence`) are not supported: run them
/// one length at a time.
///
/// ```
/// use devtensor::nn::{Rnn, RnnNonlinearity};
/// use devtensor::{DType, Device, StateDict, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let mut rnn = Rnn::new(1, 1)
///     .nonlinearity(RnnNonlinearity::Relu)
///     .bias(false)
///     .dtype(DType::Float64)
///     .build()?;
/// // h' = relu(2 x + 0.5 h)
/// rnn.load_state_dict(&StateDict::from_pairs([
///     ("weight_ih_l0", Tensor::from_slice(&[2.0f64], &[1, 1], Device::CPU)?),
///     ("weight_hh_l0", Tensor::from_slice(&[0.5f64], &[1, 1], Device::CPU)?),
/// ])?)?;
/// let x = Tensor::from_slice(&[1.0f64, -1.0, 3.0], &[3, 1], Device::CPU)?; // unbatched [L, 1]
/// // relu(2) = 2, relu(-2 + 1) = 0, relu(6 + 0) = 6
/// assert_eq!(rnn.forward(&x)?.to_vec::<f64>()?, vec![2.0, 0.0, 6.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Rnn(RecurrentConfig, RnnNonlinearity);

recurrent_setters!(Rnn);

impl Rnn {
    /// `RNN(input_size, hidden_size)` with PyTorch's defaults (see the type).
    pub fn new(input_size: i64, hidden_size: i64) -> Rnn {
        Rnn(RecurrentConfig::new(input_size, hidden_size), RnnNonlinearity::Tanh)
    }
    /// `nonlinearity=` of the cell (default [`RnnNonlinearity::Tanh`]).
    pub fn nonlinearity(mut self, nonlinearity: RnnNonlinearity) -> Rnn {
        self.1 = nonlinearity;
        self
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::Rnn;
    /// use devtensor::{DType, Device, ErrorCode, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let rnn = Rnn::new(3, 5).num_layers(2).build()?;
    /// assert_eq!(rnn.kind()?, "RNN");
    /// let names: Vec<String> = rnn.named_parameters()?.into_iter().map(|(n, _)| n).collect();
    /// assert_eq!(names[..4], ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]);
    /// assert_eq!(names[4], "weight_ih_l1");
    /// let x = Tensor::randn(&[7, 2, 3], DType::Float32, Device::CPU)?; // [L, N, input_size]
    /// assert_eq!(rnn.forward(&x)?.shape(), vec![7, 2, 5]);
    /// let e = Rnn::new(3, 0).build().unwrap_err(); // hidden_size not positive
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_rnn_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (`input_size`,
    /// `hidden_size` or `num_layers` not positive or too large, `dropout` outside `[0,
    /// 1]`), `DtypeMismatch` (a dtype that is not floating), `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails with `ShapeMismatch` naming
    /// the module and the shapes (an input of other than 2 or 3 dims, a last dim other
    /// than `input_size`, an empty sequence, a state of the wrong shape), `DtypeMismatch`
    /// (an input or state of another dtype than the parameters), `DeviceMismatch`.
    pub fn build(&self) -> Result<Module> {
        let c = &self.0;
        let (dtype, device) = (DType::raw_or_default(c.dtype), Device::raw_or_default(c.device));
        // SAFETY: plain values, a NUL-terminated static string and a valid out-pointer.
        new_module(|o| unsafe {
            ffi::dt_rnn_new(
                c.input_size,
                c.hidden_size,
                c.num_layers,
                self.1.c_name().as_ptr(),
                c.bias as i32,
                c.batch_first as i32,
                c.dropout,
                c.bidirectional as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// `torch.nn.LSTM(input_size, hidden_size)` with PyTorch's defaults, changed by setters
/// (`num_layers` 1, a bias, `batch_first=False`, dropout `0.0`, not bidirectional, the
/// process default dtype and device; PyTorch's `proj_size` is not supported).
/// [`build`](Lstm::build) makes the [`Module`] (`dt_lstm_new`, kind `"LSTM"`) with
/// PyTorch's parameters, as [`Rnn`]'s but 4 gates high (`"weight_ih_l<k>"` `[4 *
/// hidden_size, in]`, `"weight_hh_l<k>"` `[4 * hidden_size, hidden_size]`, the biases `[4
/// * hidden_size]`), the gates in PyTorch's order: input `i`, forget `f`, cell `g`,
/// output `o`: `c' = f c + i g`, `h' = o tanh(c')`. Its forward takes `[input, h0, c0]`
/// (the states both or neither); [`Module::rnn_forward`] gives `(output, h_n, c_n)`.
///
/// ```
/// use devtensor::nn::Lstm;
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let lstm = Lstm::new(10, 20).num_layers(2).batch_first(true).build()?;
/// let x = Tensor::randn(&[3, 5, 10], DType::Float32, Device::CPU)?; // [N, L, input_size]
/// let h0 = Tensor::randn(&[2, 3, 20], DType::Float32, Device::CPU)?; // [layers, N, hidden]
/// let c0 = Tensor::randn(&[2, 3, 20], DType::Float32, Device::CPU)?;
/// let y = lstm.forward_with(&[Some(&x), Some(&h0), Some(&c0)])?;
/// assert_eq!(y.shape(), vec![3, 5, 20]); // [N, L, hidden_size]
/// assert_eq!(lstm.parameters()?[0].shape(), vec![80, 10]); // weight_ih_l0: 4 gates
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Lstm(RecurrentConfig);

recurrent_setters!(Lstm);

impl Lstm {
    /// `LSTM(input_size, hidden_size)` with PyTorch's defaults (see the type).
    pub fn new(input_size: i64, hidden_size: i64) -> Lstm {
        Lstm(RecurrentConfig::new(input_size, hidden_size))
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::Lstm;
    /// use devtensor::{DType, ErrorCode};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lstm = Lstm::new(4, 3).bidirectional(true).dtype(DType::Float64).build()?;
    /// assert_eq!(lstm.kind()?, "LSTM");
    /// let names = lstm.state_dict()?.names()?;
    /// assert_eq!(names[4..], ["weight_ih_l0_reverse", "weight_hh_l0_reverse",
    ///                         "bias_ih_l0_reverse", "bias_hh_l0_reverse"]);
    /// assert_eq!(lstm.parameters()?[1].dtype(), DType::Float64);
    /// let e = Lstm::new(4, 3).dropout(1.5).build().unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// let e = Lstm::new(4, 3).dtype(DType::Int64).build().unwrap_err();
    /// assert_eq!(e.code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_lstm_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (`input_size`,
    /// `hidden_size` or `num_layers` not positive or too large, `dropout` outside `[0,
    /// 1]`), `DtypeMismatch` (a dtype that is not floating), `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails as [`Rnn::build`] says, and
    /// with `InvalidArgument` for `h0` without `c0` or the reverse.
    pub fn build(&self) -> Result<Module> {
        self.0.build(ffi::dt_lstm_new)
    }
}

/// `torch.nn.GRU(input_size, hidden_size)` with PyTorch's defaults, changed by setters
/// (as [`Lstm`]'s). [`build`](Gru::build) makes the [`Module`] (`dt_gru_new`, kind
/// `"GRU"`) with PyTorch's parameters, as [`Rnn`]'s but 3 gates high (`[3 * hidden_size,
/// ...]`), in PyTorch's order: reset `r`, update `z`, new `n`: `r = σ(x W_irᵀ + b_ir + h
/// W_hrᵀ + b_hr)`, `z` likewise, `n = tanh(x W_inᵀ + b_in + r (h W_hnᵀ + b_hn))`, `h' = (1
/// - z) n + z h`. No cell state: its forward takes `[input, h0]`.
///
/// ```
/// use devtensor::nn::Gru;
/// use devtensor::{DType, Device, StateDict, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let mut gru = Gru::new(2, 1).dtype(DType::Float64).build()?;
/// // Every parameter zero: r = z = 1/2 and n = 0, so each step halves the state.
/// let zeroed = gru
///     .named_parameters()?
///     .into_iter()
///     .map(|(n, t)| Ok((n, t.zeros_like()?)))
///     .collect::<devtensor::Result<Vec<_>>>()?;
/// gru.load_state_dict(&StateDict::from_pairs(zeroed)?)?;
/// let x = Tensor::randn(&[3, 2], DType::Float64, Device::CPU)?; // unbatched [L, input_size]
/// let h0 = Tensor::from_slice(&[8.0f64], &[1, 1], Device::CPU)?; // [num_layers, hidden]
/// let y = gru.forward_with(&[Some(&x), Some(&h0)])?;
/// assert_eq!(y.to_vec::<f64>()?, vec![4.0, 2.0, 1.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Gru(RecurrentConfig);

recurrent_setters!(Gru);

impl Gru {
    /// `GRU(input_size, hidden_size)` with PyTorch's defaults (see the type).
    pub fn new(input_size: i64, hidden_size: i64) -> Gru {
        Gru(RecurrentConfig::new(input_size, hidden_size))
    }
    /// The module.
    ///
    /// ```
    /// use devtensor::nn::Gru;
    /// use devtensor::{DType, Device, ErrorCode, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let gru = Gru::new(4, 6).bias(false).build()?;
    /// assert_eq!(gru.kind()?, "GRU");
    /// let names = gru.state_dict()?.names()?;
    /// assert_eq!(names, ["weight_ih_l0", "weight_hh_l0"]);
    /// assert_eq!(gru.parameters()?[1].shape(), vec![18, 6]); // 3 gates
    /// let x = Tensor::randn(&[5, 3], DType::Float32, Device::CPU)?; // input_size 3, not 4
    /// let e = gru.forward(&x).unwrap_err();
    /// assert_eq!(e.code, ErrorCode::ShapeMismatch);
    /// assert!(e.message.contains("input_size"), "{}", e.message);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_gru_new`: as
    /// [`Lstm::build`]'s. Its forward fails as [`Rnn::build`] says.
    pub fn build(&self) -> Result<Module> {
        self.0.build(ffi::dt_gru_new)
    }
}

impl Module {
    /// The whole result of an [`Rnn`], [`Lstm`] or [`Gru`] module `self`
    /// (`dt_rnn_forward`), PyTorch's `output, h_n = rnn(input, h0)` or `output, (h_n,
    /// c_n) = lstm(input, (h0, c0))`: `(output, h_n, c_n)`, `c_n` being `Some` exactly
    /// for an LSTM ([`Module::kind`] `"LSTM"`). `output` is what [`Module::forward_with`]
    /// gives, `[L, N, D * hidden_size]` in the input's layout; `h_n` the last hidden
    /// state of each layer and direction, `[num_layers * D, N, hidden_size]` (unbatched
    /// `[num_layers * D, hidden_size]`; the batch in the middle even with
    /// `batch_first`), rows layer 0 forward, layer 0 backward, layer 1 forward, ...; the
    /// backward direction's last state is the one after reading the whole sequence from
    /// its end (the output's first row's second half). `c_n` is the same of the LSTM's
    /// cell state.
    ///
    /// `h0` and `c0` have `h_n`'s shape; `None` is zeros. An LSTM takes both or neither;
    /// `c0` is LSTM's alone. All results are part of the autograd graph.
    ///
    /// ```
    /// use devtensor::nn::Lstm;
    /// use devtensor::{DType, Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mut lstm = Lstm::new(1, 1).dtype(DType::Float64).build()?;
    /// // Every parameter zero: the gates i = f = o = 1/2 and g = 0, so each step
    /// // halves the cell state (c' = c / 2) and h' = tanh(c') / 2.
    /// let zeroed = lstm
    ///     .named_parameters()?
    ///     .into_iter()
    ///     .map(|(n, t)| Ok((n, t.zeros_like()?)))
    ///     .collect::<devtensor::Result<Vec<_>>>()?;
    /// lstm.load_state_dict(&StateDict::from_pairs(zeroed)?)?;
    /// let x = Tensor::zeros(&[2, 1, 1], DType::Float64, Device::CPU)?; // [L, N, input_size]
    /// let h0 = Tensor::zeros(&[1, 1, 1], DType::Float64, Device::CPU)?; // [layers, N, hidden]
    /// let c0 = Tensor::from_slice(&[4.0f64], &[1, 1, 1], Device::CPU)?;
    /// let (out, h_n, c_n) = lstm.rnn_forward(&x, Some(&h0), Some(&c0))?;
    /// let (h1, h2) = (2f64.tanh() / 2.0, 1f64.tanh() / 2.0); // c1 = 2, c2 = 1
    /// let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    /// let out = out.to_vec::<f64>()?; // [L, N, hidden_size]
    /// assert!(close(out[0], h1) && close(out[1], h2));
    /// assert_eq!(h_n.shape(), vec![1, 1, 1]);
    /// assert!(close(h_n.item()?, h2)); // the output's last row
    /// assert!(close(c_n.unwrap().item()?, 1.0));
    ///
    /// // A GRU or an RNN has no cell state.
    /// let gru = devtensor::nn::Gru::new(1, 1).build()?;
    /// let x = Tensor::zeros(&[2, 1], DType::Float32, Device::CPU)?; // unbatched
    /// let (_, h_n, c_n) = gru.rnn_forward(&x, None, None)?;
    /// assert_eq!(h_n.shape(), vec![1, 1]);
    /// assert!(c_n.is_none());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_rnn_forward`:
    /// [`ErrorCode::InvalidArgument`] for a module of another kind, the message naming it
    /// (`"m is a Linear module, not an RNN, LSTM or GRU"`), `c0` given to a GRU or an
    /// RNN, an LSTM given `h0` without `c0` or the reverse; and the errors of their
    /// forward: `ShapeMismatch` naming the module and the shapes (an input of other than
    /// 2 or 3 dims, a last dim other than `input_size`, an empty sequence, a state of the
    /// wrong shape), `DtypeMismatch` (an input or state of another dtype than the
    /// parameters), `DeviceMismatch`, `InvalidHandle`, `OutOfMemory`.
    pub fn rnn_forward(
        &self,
        input: &Tensor,
        h0: Option<&Tensor>,
        c0: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        // c_n is asked for an LSTM only: the library refuses it for the other kinds.
        let lstm = self.kind()? == "LSTM";
        let mut output: *mut ffi::dt_tensor = std::ptr::null_mut();
        let mut h_n: *mut ffi::dt_tensor = std::ptr::null_mut();
        let mut c_n: *mut ffi::dt_tensor = std::ptr::null_mut();
        let c_n_out: *mut *mut ffi::dt_tensor = if lstm { &mut c_n } else { std::ptr::null_mut() };
        // SAFETY: a live module handle and tensor handles (or NULLs) borrowed for the
        // call; distinct valid out-pointers (c_n's NULL when not wanted). The results are
        // NEW references, written only on success.
        check(unsafe {
            ffi::dt_rnn_forward(
                self.raw(),
                input.as_ptr(),
                opt_ptr(h0),
                opt_ptr(c0),
                &mut output,
                &mut h_n,
                c_n_out,
            )
        })?;
        let (output, h_n, c_n) = (
            Tensor::from_owned_ptr(output),
            Tensor::from_owned_ptr(h_n),
            Tensor::from_owned_ptr(c_n),
        );
        match (output, h_n) {
            (Some(output), Some(h_n)) if c_n.is_some() == lstm => Ok((output, h_n, c_n)),
            _ => Err(Error::new(
                ErrorCode::Internal,
                "dt_rnn_forward returned success and a NULL tensor",
            )),
        }
    }
}

//! Convolution and 2-d pooling: the modules' builders ([`Conv1d`], [`Conv2d`],
//! [`ConvTranspose2d`], [`MaxPool2d`], [`AvgPool2d`], [`Module::adaptive_avg_pool2d`]) and
//! the functional forms as [`Tensor`] methods ([`Tensor::conv1d`], [`Tensor::conv2d`],
//! [`Tensor::conv_transpose2d`], [`Tensor::max_pool2d`], [`Tensor::avg_pool2d`],
//! [`Tensor::adaptive_avg_pool2d`]). Pairs are `(height, width)`. The pools take
//! PyTorch's `ceil_mode` ([`MaxPool2dOptions::ceil_mode`], [`MaxPool2d::ceil_mode`], and
//! the same for the average pool): output sizes round down by default, up with it.

use super::{new_module, Module};
use crate::error::Result;
use crate::{DType, Device, Tensor};
use devtensor_sys as ffi;

/// The setters every convolution builder has: `groups=`, all of the geometry at once,
/// `bias=`, and the weights' dtype and device.
macro_rules! conv_common_setters {
    ($t:ident, $options:ident, $geometry:literal) => {
        impl $t {
            /// `groups=` (default 1).
            pub fn groups(mut self, groups: i64) -> $t {
                self.options.groups = groups;
                self
            }
            #[doc = concat!("All of the geometry at once (", $geometry, ").")]
            pub fn options(mut self, options: $options) -> $t {
                self.options = options;
                self
            }
            /// `bias=` (default `true`).
            pub fn bias(mut self, bias: bool) -> $t {
                self.bias = bias;
                self
            }
            /// The weights' dtype, floating (default: the process default,
            /// [`set_default_dtype`](crate::set_default_dtype)).
            pub fn dtype(mut self, dtype: DType) -> $t {
                self.dtype = Some(dtype);
                self
            }
            /// Where the weights live (default: the process default device).
            pub fn device(mut self, device: Device) -> $t {
                self.device = Some(device);
                self
            }
        }
    };
}
conv_common_setters!(Conv2d, Conv2dOptions, "stride, padding, dilation, groups");
conv_common_setters!(ConvTranspose2d, ConvTranspose2dOptions, "stride, padding, output_padding, groups, dilation");
conv_common_setters!(Conv1d, Conv1dOptions, "stride, padding, dilation, groups");

fn pair(p: (i64, i64)) -> [i64; 2] {
    [p.0, p.1]
}

/// A convolution's padding: explicit zeros on each side, or PyTorch's `padding="same"`
/// (the output has the input's height and width; the stride must be 1; an odd total is
/// split with the extra one at the end). A `(h, w)` pair converts to
/// [`Padding::Explicit`], so `.padding((1, 1))` works.
///
/// ```
/// use devtensor::nn::Padding;
/// assert_eq!(Padding::from((1, 2)), Padding::Explicit(1, 2));
/// assert_eq!(Padding::default(), Padding::Explicit(0, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// `padding=(h, w)`: zeros added above and below, left and right.
    Explicit(i64, i64),
    /// `padding="same"` (`DT_PADDING_SAME`).
    Same,
}

impl Default for Padding {
    fn default() -> Padding {
        Padding::Explicit(0, 0)
    }
}

impl From<(i64, i64)> for Padding {
    fn from(p: (i64, i64)) -> Padding {
        Padding::Explicit(p.0, p.1)
    }
}

impl Padding {
    fn to_raw(self) -> [i64; 2] {
        match self {
            Padding::Explicit(h, w) => [h, w],
            Padding::Same => [ffi::DT_PADDING_SAME as i64, 0],
        }
    }
}

/// The geometry of a 2-d convolution, as `torch.nn.functional.conv2d`'s keyword
/// arguments; [`Default`] is PyTorch's: stride `(1, 1)`, padding `(0, 0)`, dilation
/// `(1, 1)`, one group. [`Tensor::conv2d`] takes it; [`Conv2d`] holds one.
///
/// ```
/// use devtensor::nn::{Conv2dOptions, Padding};
/// let o = Conv2dOptions { padding: Padding::Same, ..Conv2dOptions::default() };
/// assert_eq!((o.stride, o.dilation, o.groups), ((1, 1), (1, 1), 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dOptions {
    /// The windows' step, `(sh, sw)`.
    pub stride: (i64, i64),
    /// Zero padding or `"same"`.
    pub padding: Padding,
    /// The spacing of the kernel's elements.
    pub dilation: (i64, i64),
    /// Channel groups (both channel counts divisible by it).
    pub groups: i64,
}

impl Default for Conv2dOptions {
    fn default() -> Conv2dOptions {
        Conv2dOptions {
            stride: (1, 1),
            padding: Padding::default(),
            dilation: (1, 1),
            groups: 1,
        }
    }
}

/// `torch.nn.Conv2d(in_channels, out_channels, kernel_size)` with PyTorch's defaults,
/// changed by setters (stride `(1, 1)`, padding `(0, 0)`, dilation `(1, 1)`, one group,
/// a bias, the process default dtype and device). [`build`](Conv2d::build) makes the
/// [`Module`] (`dt_conv2d_new`): parameters `"weight"` `[out, in / groups, kh, kw]` and
/// `"bias"` `[out]` (PyTorch's names and shapes), initialised as PyTorch does. Its
/// forward takes `[N, in, H, W]` or `[in, H, W]` and gives `[N, out, OH, OW]`, `OH = (H +
/// 2 * padding - dilation * (kh - 1) - 1) / stride + 1`.
///
/// ```
/// use devtensor::nn::{Conv2d, Padding};
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let conv = Conv2d::new(4, 6, (3, 3)).stride((2, 2)).padding((1, 1)).groups(2).build()?;
/// let names: Vec<String> = conv.named_parameters()?.into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["weight", "bias"]);
/// assert_eq!(conv.parameters()?[0].shape(), vec![6, 2, 3, 3]);
/// let x = Tensor::randn(&[2, 4, 7, 8], DType::Float32, Device::CPU)?;
/// assert_eq!(conv.forward(&x)?.shape(), vec![2, 6, 4, 4]);
/// let same = Conv2d::new(1, 1, (3, 3)).padding(Padding::Same).bias(false).build()?;
/// assert_eq!(same.parameters()?.len(), 1);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Conv2d {
    in_channels: i64,
    out_channels: i64,
    kernel_size: (i64, i64),
    options: Conv2dOptions,
    bias: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl Conv2d {
    /// `Conv2d(in_channels, out_channels, kernel_size)` with PyTorch's defaults (see the
    /// type).
    pub fn new(in_channels: i64, out_channels: i64, kernel_size: (i64, i64)) -> Conv2d {
        Conv2d {
            in_channels,
            out_channels,
            kernel_size,
            options: Conv2dOptions::default(),
            bias: true,
            dtype: None,
            device: None,
        }
    }
    /// `stride=` (default `(1, 1)`).
    pub fn stride(mut self, stride: (i64, i64)) -> Conv2d {
        self.options.stride = stride;
        self
    }
    /// `padding=`: a `(h, w)` pair or [`Padding::Same`] (default `(0, 0)`).
    pub fn padding(mut self, padding: impl Into<Padding>) -> Conv2d {
        self.options.padding = padding.into();
        self
    }
    /// `dilation=` (default `(1, 1)`).
    pub fn dilation(mut self, dilation: (i64, i64)) -> Conv2d {
        self.options.dilation = dilation;
        self
    }
    /// The module.
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_conv2d_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive, channels not divisible by the groups, `"same"` with a stride),
    /// `DtypeMismatch` (a dtype that is not floating), `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails with `ShapeMismatch`
    /// naming the module and the shapes (a wrong channel count, a kernel larger than the
    /// padded input), `DtypeMismatch`, `DeviceMismatch`.
    pub fn build(&self) -> Result<Module> {
        let k = pair(self.kernel_size);
        let s = pair(self.options.stride);
        let p = self.options.padding.to_raw();
        let d = pair(self.options.dilation);
        let dtype = DType::raw_or_default(self.dtype);
        let device = Device::raw_or_default(self.device);
        new_module(|o| unsafe {
            ffi::dt_conv2d_new(
                self.in_channels,
                self.out_channels,
                k.as_ptr(),
                s.as_ptr(),
                p.as_ptr(),
                d.as_ptr(),
                self.options.groups,
                self.bias as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// The geometry of a 2-d transposed convolution, as
/// `torch.nn.functional.conv_transpose2d`'s keyword arguments in PyTorch's order;
/// [`Default`] is PyTorch's: stride `(1, 1)`, padding `(0, 0)`, output_padding `(0, 0)`,
/// one group, dilation `(1, 1)`. [`Tensor::conv_transpose2d`] takes it;
/// [`ConvTranspose2d`] holds one. There is no `"same"` padding (nor in PyTorch).
///
/// ```
/// use devtensor::nn::ConvTranspose2dOptions;
/// let o = ConvTranspose2dOptions { stride: (2, 2), output_padding: (1, 1), ..ConvTranspose2dOptions::default() };
/// assert_eq!((o.padding, o.groups, o.dilation), ((0, 0), 1, (1, 1)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvTranspose2dOptions {
    /// The step between the input's positions in the output, `(sh, sw)`.
    pub stride: (i64, i64),
    /// Rows and columns taken off each side of the full output (in PyTorch's words,
    /// `dilation * (kernel_size - 1) - padding` zeros added to both sides of the input).
    pub padding: (i64, i64),
    /// Rows and columns added at the bottom and right of the output (to choose among the
    /// input sizes a strided `conv2d` maps to one size); each smaller than the stride or
    /// the dilation.
    pub output_padding: (i64, i64),
    /// Channel groups (both channel counts divisible by it).
    pub groups: i64,
    /// The spacing of the kernel's elements.
    pub dilation: (i64, i64),
}

impl Default for ConvTranspose2dOptions {
    fn default() -> ConvTranspose2dOptions {
        ConvTranspose2dOptions {
            stride: (1, 1),
            padding: (0, 0),
            output_padding: (0, 0),
            groups: 1,
            dilation: (1, 1),
        }
    }
}

/// `torch.nn.ConvTranspose2d(in_channels, out_channels, kernel_size)` with PyTorch's
/// defaults, changed by setters (stride `(1, 1)`, padding `(0, 0)`, output_padding `(0,
/// 0)`, one group, a bias, dilation `(1, 1)`, the process default dtype and device).
/// [`build`](ConvTranspose2d::build) makes the [`Module`] (`dt_conv_transpose2d_new`):
/// parameters `"weight"` `[in, out / groups, kh, kw]` (in_channels first, as PyTorch's)
/// and `"bias"` `[out]`, initialised as PyTorch does. Its forward takes `[N, in, H, W]` or
/// `[in, H, W]` and gives `[N, out, OH, OW]`, `OH = (H - 1) * stride - 2 * padding +
/// dilation * (kh - 1) + output_padding + 1`, a size that a [`Conv2d`] of the same
/// geometry maps back to `H`.
///
/// ```
/// use devtensor::nn::ConvTranspose2d;
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let up = ConvTranspose2d::new(4, 6, (3, 3)).stride((2, 2)).padding((1, 1)).output_padding((1, 1)).groups(2).build()?;
/// let names: Vec<String> = up.named_parameters()?.into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["weight", "bias"]);
/// assert_eq!(up.parameters()?[0].shape(), vec![4, 3, 3, 3]);
/// let x = Tensor::randn(&[2, 4, 5, 7], DType::Float32, Device::CPU)?;
/// assert_eq!(up.forward(&x)?.shape(), vec![2, 6, 10, 14]); // twice the size
/// let plain = ConvTranspose2d::new(1, 1, (2, 2)).bias(false).build()?;
/// assert_eq!(plain.parameters()?.len(), 1);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct ConvTranspose2d {
    in_channels: i64,
    out_channels: i64,
    kernel_size: (i64, i64),
    options: ConvTranspose2dOptions,
    bias: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl ConvTranspose2d {
    /// `ConvTranspose2d(in_channels, out_channels, kernel_size)` with PyTorch's defaults
    /// (see the type).
    pub fn new(in_channels: i64, out_channels: i64, kernel_size: (i64, i64)) -> ConvTranspose2d {
        ConvTranspose2d {
            in_channels,
            out_channels,
            kernel_size,
            options: ConvTranspose2dOptions::default(),
            bias: true,
            dtype: None,
            device: None,
        }
    }
    /// `stride=` (default `(1, 1)`).
    pub fn stride(mut self, stride: (i64, i64)) -> ConvTranspose2d {
        self.options.stride = stride;
        self
    }
    /// `padding=` (default `(0, 0)`).
    pub fn padding(mut self, padding: (i64, i64)) -> ConvTranspose2d {
        self.options.padding = padding;
        self
    }
    /// `output_padding=` (default `(0, 0)`; each smaller than the stride or the
    /// dilation).
    pub fn output_padding(mut self, output_padding: (i64, i64)) -> ConvTranspose2d {
        self.options.output_padding = output_padding;
        self
    }
    /// `dilation=` (default `(1, 1)`).
    pub fn dilation(mut self, dilation: (i64, i64)) -> ConvTranspose2d {
        self.options.dilation = dilation;
        self
    }
    /// The module.
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_conv_transpose2d_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive, negative padding, an output_padding not smaller than the stride or the
    /// dilation, channels not divisible by the groups), `DtypeMismatch` (a dtype that is
    /// not floating), `InvalidDevice`, `DeviceUnavailable`, `OutOfMemory`. Its forward
    /// fails with `ShapeMismatch` naming the module and the shapes (a wrong channel
    /// count), `DtypeMismatch`, `DeviceMismatch`.
    pub fn build(&self) -> Result<Module> {
        let k = pair(self.kernel_size);
        let s = pair(self.options.stride);
        let p = pair(self.options.padding);
        let op = pair(self.options.output_padding);
        let d = pair(self.options.dilation);
        let dtype = DType::raw_or_default(self.dtype);
        let device = Device::raw_or_default(self.device);
        new_module(|o| unsafe {
            ffi::dt_conv_transpose2d_new(
                self.in_channels,
                self.out_channels,
                k.as_ptr(),
                s.as_ptr(),
                p.as_ptr(),
                op.as_ptr(),
                self.options.groups,
                self.bias as i32,
                d.as_ptr(),
                dtype,
                device,
                o,
            )
        })
    }
}

/// A 1-d convolution's padding: explicit zeros on each side, or PyTorch's
/// `padding="same"` (the output has the input's length; the stride must be 1; an odd
/// total is split with the extra one at the end). An `i64` converts to
/// [`Padding1d::Explicit`], so `.padding(1)` works.
///
/// ```
/// use devtensor::nn::Padding1d;
/// assert_eq!(Padding1d::from(2), Padding1d::Explicit(2));
/// assert_eq!(Padding1d::default(), Padding1d::Explicit(0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding1d {
    /// `padding=n`: zeros added at both ends.
    Explicit(i64),
    /// `padding="same"` (`DT_PADDING_SAME`).
    Same,
}

impl Default for Padding1d {
    fn default() -> Padding1d {
        Padding1d::Explicit(0)
    }
}

impl From<i64> for Padding1d {
    fn from(p: i64) -> Padding1d {
        Padding1d::Explicit(p)
    }
}

impl Padding1d {
    fn to_raw(self) -> i64 {
        match self {
            Padding1d::Explicit(n) => n,
            Padding1d::Same => ffi::DT_PADDING_SAME as i64,
        }
    }
}

/// The geometry of a 1-d convolution, as `torch.nn.functional.conv1d`'s keyword
/// arguments; [`Default`] is PyTorch's: stride 1, padding 0, dilation 1, one group.
/// [`Tensor::conv1d`] takes it; [`Conv1d`] holds one.
///
/// ```
/// use devtensor::nn::{Conv1dOptions, Padding1d};
/// let o = Conv1dOptions { padding: Padding1d::Same, ..Conv1dOptions::default() };
/// assert_eq!((o.stride, o.dilation, o.groups), (1, 1, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv1dOptions {
    /// The windows' step.
    pub stride: i64,
    /// Zero padding or `"same"`.
    pub padding: Padding1d,
    /// The spacing of the kernel's elements.
    pub dilation: i64,
    /// Channel groups (both channel counts divisible by it).
    pub groups: i64,
}

impl Default for Conv1dOptions {
    fn default() -> Conv1dOptions {
        Conv1dOptions {
            stride: 1,
            padding: Padding1d::default(),
            dilation: 1,
            groups: 1,
        }
    }
}

/// `torch.nn.Conv1d(in_channels, out_channels, kernel_size)` with PyTorch's defaults,
/// changed by setters (stride 1, padding 0, dilation 1, one group, a bias, the process
/// default dtype and device). [`build`](Conv1d::build) makes the [`Module`]
/// (`dt_conv1d_new`): parameters `"weight"` `[out, in / groups, k]` and `"bias"` `[out]`
/// (PyTorch's names and shapes, so its state_dict loads unchanged), initialised as
/// PyTorch does. Its forward takes `[N, in, L]` or `[in, L]` and gives `[N, out, OL]`,
/// `OL = (L + 2 * padding - dilation * (k - 1) - 1) / stride + 1`.
///
/// ```
/// use devtensor::nn::{Conv1d, Padding1d};
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let conv = Conv1d::new(4, 6, 3).stride(2).padding(1).groups(2).build()?;
/// let names: Vec<String> = conv.named_parameters()?.into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["weight", "bias"]);
/// assert_eq!(conv.parameters()?[0].shape(), vec![6, 2, 3]);
/// let x = Tensor::randn(&[2, 4, 8], DType::Float32, Device::CPU)?;
/// assert_eq!(conv.forward(&x)?.shape(), vec![2, 6, 4]);
/// let same = Conv1d::new(1, 1, 3).padding(Padding1d::Same).bias(false).build()?;
/// assert_eq!(same.parameters()?.len(), 1);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Conv1d {
    in_channels: i64,
    out_channels: i64,
    kernel_size: i64,
    options: Conv1dOptions,
    bias: bool,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl Conv1d {
    /// `Conv1d(in_channels, out_channels, kernel_size)` with PyTorch's defaults (see the
    /// type).
    pub fn new(in_channels: i64, out_channels: i64, kernel_size: i64) -> Conv1d {
        Conv1d {
            in_channels,
            out_channels,
            kernel_size,
            options: Conv1dOptions::default(),
            bias: true,
            dtype: None,
            device: None,
        }
    }
    /// `stride=` (default 1).
    pub fn stride(mut self, stride: i64) -> Conv1d {
        self.options.stride = stride;
        self
    }
    /// `padding=`: a count or [`Padding1d::Same`] (default 0).
    pub fn padding(mut self, padding: impl Into<Padding1d>) -> Conv1d {
        self.options.padding = padding.into();
        self
    }
    /// `dilation=` (default 1).
    pub fn dilation(mut self, dilation: i64) -> Conv1d {
        self.options.dilation = dilation;
        self
    }
    /// The module.
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_conv1d_new` (as
    /// `dt_conv2d_new`'s): [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument)
    /// (sizes not positive, channels not divisible by the groups, `"same"` with a
    /// stride), `DtypeMismatch` (a dtype that is not floating), `InvalidDevice`,
    /// `DeviceUnavailable`, `OutOfMemory`. Its forward fails with `ShapeMismatch`
    /// naming the module and the shapes (a wrong channel count, a kernel larger than the
    /// padded input), `DtypeMismatch`, `DeviceMismatch`.
    pub fn build(&self) -> Result<Module> {
        let dtype = DType::raw_or_default(self.dtype);
        let device = Device::raw_or_default(self.device);
        new_module(|o| unsafe {
            ffi::dt_conv1d_new(
                self.in_channels,
                self.out_channels,
                self.kernel_size,
                self.options.stride,
                self.options.padding.to_raw(),
                self.options.dilation,
                self.options.groups,
                self.bias as i32,
                dtype,
                device,
                o,
            )
        })
    }
}

/// The arguments of `torch.nn.functional.max_pool2d` after the kernel size;
/// [`Default`] is PyTorch's: stride the kernel size (`None`), padding `(0, 0)`,
/// dilation `(1, 1)`, `ceil_mode=False`.
///
/// ```
/// use devtensor::nn::MaxPool2dOptions;
/// let o = MaxPool2dOptions { stride: Some((1, 1)), ..MaxPool2dOptions::default() };
/// assert_eq!((o.dilation, o.ceil_mode), ((1, 1), false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxPool2dOptions {
    /// The windows' step; `None`: the kernel size.
    pub stride: Option<(i64, i64)>,
    /// `-inf` added on each side (at most half the kernel).
    pub padding: (i64, i64),
    /// The spacing of a window's elements.
    pub dilation: (i64, i64),
    /// `ceil_mode=`: output sizes rounded up instead of down, so that windows may hang
    /// over the bottom and right edges (only their elements inside count), except that a
    /// last window starting past the input and its left padding is dropped (PyTorch's
    /// rule).
    pub ceil_mode: bool,
}

impl Default for MaxPool2dOptions {
    fn default() -> MaxPool2dOptions {
        MaxPool2dOptions {
            stride: None,
            padding: (0, 0),
            dilation: (1, 1),
            ceil_mode: false,
        }
    }
}

/// The arguments of `torch.nn.functional.avg_pool2d` after the kernel size;
/// [`Default`] is PyTorch's: stride the kernel size (`None`), padding `(0, 0)`, the
/// zero padding counted in the mean (`count_include_pad=True`), `ceil_mode=False`.
///
/// ```
/// use devtensor::nn::AvgPool2dOptions;
/// let o = AvgPool2dOptions::default();
/// assert!(o.count_include_pad && !o.ceil_mode);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvgPool2dOptions {
    /// The windows' step; `None`: the kernel size.
    pub stride: Option<(i64, i64)>,
    /// Zeros added on each side (at most half the kernel).
    pub padding: (i64, i64),
    /// `ceil_mode=`: as [`MaxPool2dOptions::ceil_mode`]; the part of a window hanging
    /// over the padded input never counts in its mean.
    pub ceil_mode: bool,
    /// Whether the padding counts in the mean.
    pub count_include_pad: bool,
}

impl Default for AvgPool2dOptions {
    fn default() -> AvgPool2dOptions {
        AvgPool2dOptions {
            stride: None,
            padding: (0, 0),
            ceil_mode: false,
            count_include_pad: true,
        }
    }
}

/// `torch.nn.MaxPool2d(kernel_size)` with PyTorch's defaults ([`MaxPool2dOptions`]),
/// changed by setters; [`build`](MaxPool2d::build) makes the [`Module`]
/// (`dt_max_pool2d_new`, no parameters; forward as [`Tensor::max_pool2d`]).
///
/// ```
/// use devtensor::nn::MaxPool2d;
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::arange(0.0, 16.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 4, 4])?;
/// let pool = MaxPool2d::new((2, 2)).build()?;
/// assert_eq!(pool.forward(&x)?.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
/// // stride 3 leaves row and column 3 out, unless ceil_mode takes them in.
/// let ceil = MaxPool2d::new((2, 2)).stride((3, 3)).ceil_mode(true).build()?;
/// assert_eq!(ceil.forward(&x)?.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct MaxPool2d {
    kernel_size: (i64, i64),
    options: MaxPool2dOptions,
}

impl MaxPool2d {
    /// `MaxPool2d(kernel_size)` with PyTorch's defaults.
    pub fn new(kernel_size: (i64, i64)) -> MaxPool2d {
        MaxPool2d {
            kernel_size,
            options: MaxPool2dOptions::default(),
        }
    }
    /// `stride=` (default: the kernel size).
    pub fn stride(mut self, stride: (i64, i64)) -> MaxPool2d {
        self.options.stride = Some(stride);
        self
    }
    /// `padding=` (default `(0, 0)`).
    pub fn padding(mut self, padding: (i64, i64)) -> MaxPool2d {
        self.options.padding = padding;
        self
    }
    /// `dilation=` (default `(1, 1)`).
    pub fn dilation(mut self, dilation: (i64, i64)) -> MaxPool2d {
        self.options.dilation = dilation;
        self
    }
    /// `ceil_mode=` (default `false`; see [`MaxPool2dOptions::ceil_mode`]).
    pub fn ceil_mode(mut self, ceil_mode: bool) -> MaxPool2d {
        self.options.ceil_mode = ceil_mode;
        self
    }
    /// The module.
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_max_pool2d_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive, negative padding), `OutOfMemory`; its forward fails as
    /// [`Tensor::max_pool2d`] does, the message naming the module.
    pub fn build(&self) -> Result<Module> {
        let k = pair(self.kernel_size);
        let s = self.options.stride.map(pair);
        let p = pair(self.options.padding);
        let d = pair(self.options.dilation);
        new_module(|o| unsafe {
            ffi::dt_max_pool2d_new(
                k.as_ptr(),
                s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                p.as_ptr(),
                d.as_ptr(),
                self.options.ceil_mode as i32,
                o,
            )
        })
    }
}

/// `torch.nn.AvgPool2d(kernel_size)` with PyTorch's defaults ([`AvgPool2dOptions`]),
/// changed by setters; [`build`](AvgPool2d::build) makes the [`Module`]
/// (`dt_avg_pool2d_new`, no parameters; forward as [`Tensor::avg_pool2d`]).
///
/// ```
/// use devtensor::nn::AvgPool2d;
/// use devtensor::{DType, Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::arange(0.0, 16.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 4, 4])?;
/// let pool = AvgPool2d::new((2, 2)).build()?;
/// assert_eq!(pool.forward(&x)?.to_vec::<f32>()?, vec![2.5, 4.5, 10.5, 12.5]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct AvgPool2d {
    kernel_size: (i64, i64),
    options: AvgPool2dOptions,
}

impl AvgPool2d {
    /// `AvgPool2d(kernel_size)` with PyTorch's defaults.
    pub fn new(kernel_size: (i64, i64)) -> AvgPool2d {
        AvgPool2d {
            kernel_size,
            options: AvgPool2dOptions::default(),
        }
    }
    /// `stride=` (default: the kernel size).
    pub fn stride(mut self, stride: (i64, i64)) -> AvgPool2d {
        self.options.stride = Some(stride);
        self
    }
    /// `padding=` (default `(0, 0)`).
    pub fn padding(mut self, padding: (i64, i64)) -> AvgPool2d {
        self.options.padding = padding;
        self
    }
    /// `ceil_mode=` (default `false`; see [`AvgPool2dOptions::ceil_mode`]).
    pub fn ceil_mode(mut self, ceil_mode: bool) -> AvgPool2d {
        self.options.ceil_mode = ceil_mode;
        self
    }
    /// `count_include_pad=` (default `true`).
    pub fn count_include_pad(mut self, count_include_pad: bool) -> AvgPool2d {
        self.options.count_include_pad = count_include_pad;
        self
    }
    /// The module.
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_avg_pool2d_new`: as
    /// [`MaxPool2d::build`]; its forward fails as [`Tensor::avg_pool2d`] does, the
    /// message naming the module.
    pub fn build(&self) -> Result<Module> {
        let k = pair(self.kernel_size);
        let s = self.options.stride.map(pair);
        let p = pair(self.options.padding);
        new_module(|o| unsafe {
            ffi::dt_avg_pool2d_new(
                k.as_ptr(),
                s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                p.as_ptr(),
                self.options.ceil_mode as i32,
                self.options.count_include_pad as i32,
                o,
            )
        })
    }
}

impl Module {
    /// `torch.nn.AdaptiveAvgPool2d(output_size)` (`dt_adaptive_avg_pool2d_new`), no
    /// parameters; forward as [`Tensor::adaptive_avg_pool2d`].
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::arange(0.0, 16.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 4, 4])?;
    /// let pool = Module::adaptive_avg_pool2d((1, 1))?;
    /// assert_eq!(pool.forward(&x)?.to_vec::<f32>()?, vec![7.5]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_adaptive_avg_pool2d_new`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive), `OutOfMemory`; its forward fails as [`Tensor::adaptive_avg_pool2d`]
    /// does, the message naming the module.
    pub fn adaptive_avg_pool2d(output_size: (i64, i64)) -> Result<Module> {
        let sz = pair(output_size);
        new_module(|o| unsafe { ffi::dt_adaptive_avg_pool2d_new(sz.as_ptr(), o) })
    }
}

impl Tensor {
    /// `torch.nn.functional.conv2d(self, weight, bias, **options)` (`dt_conv2d`):
    /// `self` `[N, C, H, W]` or `[C, H, W]`, `weight` `[OC, C / groups, kh, kw]`, `bias`
    /// `[OC]` or `None`. Differentiable in `self`, `weight` and `bias`.
    ///
    /// ```
    /// use devtensor::nn::Conv2dOptions;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[1, 1, 3, 3], Device::CPU)?;
    /// let w = Tensor::ones(&[1, 1, 2, 2], DType::Float32, Device::CPU)?;
    /// let y = x.conv2d(&w, None, &Conv2dOptions::default())?;
    /// assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    /// assert_eq!(y.to_vec::<f32>()?, vec![12.0, 16.0, 24.0, 28.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_conv2d`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive, groups not dividing the channels), `ShapeMismatch` (channels, a weight
    /// that is not 4-d, the bias size, a kernel larger than the padded input: the
    /// message gives the shapes), `DtypeMismatch` (dtypes differ or are not floating),
    /// `DeviceMismatch`, `OutOfMemory`.
    pub fn conv2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        options: &Conv2dOptions,
    ) -> Result<Tensor> {
        let s = pair(options.stride);
        let p = options.padding.to_raw();
        let d = pair(options.dilation);
        let b = bias.map_or(std::ptr::null(), |b| b.as_ptr() as *const ffi::dt_tensor);
        Tensor::from_out(|o| unsafe {
            ffi::dt_conv2d(
                self.as_ptr(),
                weight.as_ptr(),
                b,
                s.as_ptr(),
                p.as_ptr(),
                d.as_ptr(),
                options.groups,
                o,
            )
        })
    }

    /// `torch.nn.functional.conv_transpose2d(self, weight, bias, **options)`
    /// (`dt_conv_transpose2d`), the gradient of [`Tensor::conv2d`] with respect to its
    /// input: each input element adds `weight` scaled by it into the output, `stride`
    /// apart. `self` `[N, C, H, W]` or `[C, H, W]`, `weight` `[C, OC / groups, kh, kw]`
    /// (in_channels first), `bias` `[OC]` or `None`; the output is `[N, OC, OH, OW]`, `OH =
    /// (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1`.
    /// Differentiable in `self`, `weight` and `bias`.
    ///
    /// ```
    /// use devtensor::nn::ConvTranspose2dOptions;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 2, 2], Device::CPU)?;
    /// let w = Tensor::ones(&[1, 1, 2, 2], DType::Float32, Device::CPU)?;
    /// // Each input element spreads over a 2x2 block; overlapping blocks add up.
    /// let y = x.conv_transpose2d(&w, None, &ConvTranspose2dOptions::default())?;
    /// assert_eq!(y.shape(), vec![1, 1, 3, 3]);
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0, 10.0, 6.0, 3.0, 7.0, 4.0]);
    /// // Stride 2: the blocks no longer overlap.
    /// let s2 = ConvTranspose2dOptions { stride: (2, 2), ..ConvTranspose2dOptions::default() };
    /// let y = x.conv_transpose2d(&w, None, &s2)?;
    /// assert_eq!(y.shape(), vec![1, 1, 4, 4]);
    /// assert_eq!(&y.to_vec::<f32>()?[..8], &[1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_conv_transpose2d`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive, negative padding or output_padding, an output_padding not smaller than
    /// the stride or the dilation, groups not dividing the channels), `ShapeMismatch`
    /// (channels, a weight that is not 4-d, the bias size, an output size below 1: the
    /// message gives the shapes), `DtypeMismatch` (dtypes differ or are not floating),
    /// `DeviceMismatch`, `OutOfMemory`.
    pub fn conv_transpose2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        options: &ConvTranspose2dOptions,
    ) -> Result<Tensor> {
        let s = pair(options.stride);
        let p = pair(options.padding);
        let op = pair(options.output_padding);
        let d = pair(options.dilation);
        let b = bias.map_or(std::ptr::null(), |b| b.as_ptr() as *const ffi::dt_tensor);
        Tensor::from_out(|o| unsafe {
            ffi::dt_conv_transpose2d(
                self.as_ptr(),
                weight.as_ptr(),
                b,
                s.as_ptr(),
                p.as_ptr(),
                op.as_ptr(),
                options.groups,
                d.as_ptr(),
                o,
            )
        })
    }

    /// `torch.nn.functional.conv1d(self, weight, bias, **options)` (`dt_conv1d`):
    /// `self` `[N, C, L]` or `[C, L]`, `weight` `[OC, C / groups, k]`, `bias` `[OC]` or
    /// `None`; the output is `[N, OC, OL]`, `OL = (L + 2 * padding - dilation * (k - 1) -
    /// 1) / stride + 1`. Runs as a 2-d convolution over a height of 1; differentiable in
    /// `self`, `weight` and `bias`.
    ///
    /// ```
    /// use devtensor::nn::{Conv1dOptions, Padding1d};
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 4], Device::CPU)?;
    /// let w = Tensor::ones(&[1, 1, 2], DType::Float32, Device::CPU)?;
    /// let y = x.conv1d(&w, None, &Conv1dOptions::default())?;
    /// assert_eq!(y.shape(), vec![1, 1, 3]);
    /// assert_eq!(y.to_vec::<f32>()?, vec![3.0, 5.0, 7.0]);
    /// let strided = Conv1dOptions { stride: 2, ..Conv1dOptions::default() };
    /// assert_eq!(x.conv1d(&w, None, &strided)?.to_vec::<f32>()?, vec![3.0, 7.0]);
    /// let padded = Conv1dOptions { padding: Padding1d::Explicit(1), ..Conv1dOptions::default() };
    /// assert_eq!(x.conv1d(&w, None, &padded)?.to_vec::<f32>()?, vec![1.0, 3.0, 5.0, 7.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_conv1d` (as `dt_conv2d`'s):
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive, groups not dividing the channels), `ShapeMismatch` (channels, a weight
    /// that is not 3-d, an input that is not 2-d or 3-d, the bias size, a kernel larger
    /// than the padded input: the message gives the shapes), `DtypeMismatch` (dtypes
    /// differ or are not floating), `DeviceMismatch`, `OutOfMemory`.
    pub fn conv1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        options: &Conv1dOptions,
    ) -> Result<Tensor> {
        let b = bias.map_or(std::ptr::null(), |b| b.as_ptr() as *const ffi::dt_tensor);
        Tensor::from_out(|o| unsafe {
            ffi::dt_conv1d(
                self.as_ptr(),
                weight.as_ptr(),
                b,
                options.stride,
                options.padding.to_raw(),
                options.dilation,
                options.groups,
                o,
            )
        })
    }

    /// `torch.nn.functional.max_pool2d(self, kernel_size, **options)`
    /// (`dt_max_pool2d`): the largest value of each window of `self` `[N, C, H, W]` or
    /// `[C, H, W]` (floating). The gradient goes to each window's largest element; a
    /// window that a dilation steps over (no tap inside `self`) gives -inf and no
    /// gradient, as in PyTorch.
    ///
    /// ```
    /// use devtensor::nn::MaxPool2dOptions;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::arange(0.0, 16.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 4, 4])?;
    /// let y = x.max_pool2d((2, 2), &MaxPool2dOptions::default())?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
    /// // 3x3 [[1, 2, 3], [4, 5, 6], [7, 8, 9]]: one whole window, or with ceil_mode
    /// // also the windows hanging over the right and bottom edges.
    /// let x = Tensor::arange(1.0, 10.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 3, 3])?;
    /// assert_eq!(x.max_pool2d((2, 2), &MaxPool2dOptions::default())?.to_vec::<f32>()?, vec![5.0]);
    /// let ceil = MaxPool2dOptions { ceil_mode: true, ..MaxPool2dOptions::default() };
    /// assert_eq!(x.max_pool2d((2, 2), &ceil)?.to_vec::<f32>()?, vec![5.0, 6.0, 8.0, 9.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_max_pool2d`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive, padding over half the kernel), `ShapeMismatch` (not 3-d or 4-d, a
    /// kernel larger than the padded input), `DtypeMismatch` (not floating),
    /// `OutOfMemory`.
    pub fn max_pool2d(
        &self,
        kernel_size: (i64, i64),
        options: &MaxPool2dOptions,
    ) -> Result<Tensor> {
        let k = pair(kernel_size);
        let s = options.stride.map(pair);
        let p = pair(options.padding);
        let d = pair(options.dilation);
        Tensor::from_out(|o| unsafe {
            ffi::dt_max_pool2d(
                self.as_ptr(),
                k.as_ptr(),
                s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                p.as_ptr(),
                d.as_ptr(),
                options.ceil_mode as i32,
                o,
            )
        })
    }

    /// `torch.nn.functional.avg_pool2d(self, kernel_size, **options)`
    /// (`dt_avg_pool2d`): the mean of each window of `self` `[N, C, H, W]` or `[C, H,
    /// W]` (floating). Differentiable.
    ///
    /// ```
    /// use devtensor::nn::AvgPool2dOptions;
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::arange(0.0, 16.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 4, 4])?;
    /// let y = x.avg_pool2d((2, 2), &AvgPool2dOptions::default())?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![2.5, 4.5, 10.5, 12.5]);
    /// // ceil_mode on 3x3 [[1, 2, 3], [4, 5, 6], [7, 8, 9]]: the windows hanging over the
    /// // edge average only their elements inside, (3 + 6) / 2, (7 + 8) / 2 and 9.
    /// let x = Tensor::arange(1.0, 10.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 3, 3])?;
    /// let ceil = AvgPool2dOptions { ceil_mode: true, ..AvgPool2dOptions::default() };
    /// assert_eq!(x.avg_pool2d((2, 2), &ceil)?.to_vec::<f32>()?, vec![3.0, 4.5, 7.5, 9.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_avg_pool2d`: as
    /// [`Tensor::max_pool2d`].
    pub fn avg_pool2d(
        &self,
        kernel_size: (i64, i64),
        options: &AvgPool2dOptions,
    ) -> Result<Tensor> {
        let k = pair(kernel_size);
        let s = options.stride.map(pair);
        let p = pair(options.padding);
        Tensor::from_out(|o| unsafe {
            ffi::dt_avg_pool2d(
                self.as_ptr(),
                k.as_ptr(),
                s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                p.as_ptr(),
                options.ceil_mode as i32,
                options.count_include_pad as i32,
                o,
            )
        })
    }

    /// `torch.nn.functional.adaptive_avg_pool2d(self, output_size)`
    /// (`dt_adaptive_avg_pool2d`): `self` `[N, C, H, W]` or `[C, H, W]` (floating) to
    /// `[N, C, oh, ow]`; output `(i, j)` averages rows `floor(i * H / oh) ..
    /// ceil((i + 1) * H / oh) - 1` and the columns alike. Differentiable.
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::arange(0.0, 16.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[1, 1, 4, 4])?;
    /// assert_eq!(x.adaptive_avg_pool2d((1, 1))?.to_vec::<f32>()?, vec![7.5]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_adaptive_avg_pool2d`:
    /// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (sizes not
    /// positive), `ShapeMismatch` (not 3-d or 4-d, zero height or width),
    /// `DtypeMismatch` (not floating).
    pub fn adaptive_avg_pool2d(&self, output_size: (i64, i64)) -> Result<Tensor> {
        let sz = pair(output_size);
        Tensor::from_out(|o| unsafe { ffi::dt_adaptive_avg_pool2d(self.as_ptr(), sz.as_ptr(), o) })
    }
}

//! Views and operations on `Tensor`, each one C call. Every result is a NEW tensor (a
//! view for the view functions); operands must share a device (else `DeviceMismatch`).
//! The elementwise ops and reductions of the op table (`add`, `add_scalar`, `exp`,
//! `sum`, ...) come from `ops_table.rs`, generated from `src/core/op_table.h`:
//!
//! ```
//! use devtensor::{Device, Tensor};
//! let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
//! assert_eq!(t.sum(&[1], false).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
//! assert_eq!(t.sum(&[], false).unwrap().item().unwrap(), 10.0);
//! assert_eq!(t.add_scalar(1.0).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 3.0, 4.0, 5.0]);
//! ```
//!
//! The operators (`+ - * /`, unary `-`) are documented on [`Tensor`].
use crate::error::{check, Error, ErrorCode, Result};
use crate::Tensor;
use devtensor_sys as ffi;
use std::ffi::CStr;
use std::ops::{Add, Div, Mul, Neg, Sub};

macro_rules! binary {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        #[doc = concat!("The errors that `include/devtensor.h` lists for `", stringify!($f), "`: ",
                        "[`DeviceMismatch`](crate::ErrorCode::DeviceMismatch) (operands on two devices), ",
                        "[`ShapeMismatch`](crate::ErrorCode::ShapeMismatch) (shapes that do not broadcast), ",
                        "[`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) (a dtype the op refuses), ",
                        "[`OutOfMemory`](crate::ErrorCode::OutOfMemory).")]
        pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), other.as_ptr(), o) })
        }
    )*};
}
macro_rules! scalar {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        #[doc = concat!("The errors that `include/devtensor.h` lists for `", stringify!($f), "`: ",
                        "[`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) (a dtype the op refuses), ",
                        "[`OutOfMemory`](crate::ErrorCode::OutOfMemory).")]
        pub fn $name(&self, other: f64) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), other, o) })
        }
    )*};
}
macro_rules! unary {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        #[doc = concat!("The errors that `include/devtensor.h` lists for `", stringify!($f), "`: ",
                        "[`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) (a dtype the op refuses), ",
                        "[`OutOfMemory`](crate::ErrorCode::OutOfMemory).")]
        pub fn $name(&self) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), o) })
        }
    )*};
}
macro_rules! reduce {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        #[doc = concat!("The errors that `include/devtensor.h` lists for `", stringify!($f), "`: ",
                        "[`InvalidArgument`](crate::ErrorCode::InvalidArgument) (a dimension out of range or repeated), ",
                        "[`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) (a dtype the op refuses), ",
                        "[`ShapeMismatch`](crate::ErrorCode::ShapeMismatch) (max, min, argmax, argmin of an empty extent), ",
                        "[`OutOfMemory`](crate::ErrorCode::OutOfMemory).")]
        pub fn $name(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), dims.as_ptr(), dims.len(), keepdim as i32, o) })
        }
    )*};
}

// The op table's methods, made by the macros above.
#[path = "ops_table.rs"]
mod ops_table;

// The C calls of the truth-value ops (isnan ... all), one type per shape of call.
type TruthUnaryFn =
    unsafe extern "C" fn(*const ffi::dt_tensor, *mut *mut ffi::dt_tensor) -> ffi::dt_status;
type TruthBinaryFn = unsafe extern "C" fn(
    *const ffi::dt_tensor,
    *const ffi::dt_tensor,
    *mut *mut ffi::dt_tensor,
) -> ffi::dt_status;
type TruthReduceFn = unsafe extern "C" fn(
    *const ffi::dt_tensor,
    *const i64,
    usize,
    i32,
    *mut *mut ffi::dt_tensor,
) -> ffi::dt_status;

fn handles(tensors: &[&Tensor]) -> Vec<*const ffi::dt_tensor> {
    tensors
        .iter()
        .map(|t| t.as_ptr() as *const ffi::dt_tensor)
        .collect()
}

impl Tensor {
    // ------------------------------------------------------------------- views

    /// The same elements with another shape (one `-1` is inferred); a view when the
    /// strides allow (exactly when PyTorch's is), else a copy.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?;
    /// assert_eq!(t.reshape(&[2, -1])?.shape(), vec![2, 3]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_reshape`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_reshape(self.as_ptr(), shape.as_ptr(), shape.len(), o)
        })
    }
    /// As [`Tensor::reshape`] but always a view (`ShapeMismatch` when it cannot be).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?;
    /// let v = t.view(&[3, 2])?;
    /// assert!(v.shares_storage(&t));
    /// assert_eq!(v.transpose(0, 1)?.view(&[6]).unwrap_err().code, ErrorCode::ShapeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_view`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn view(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_view(self.as_ptr(), shape.as_ptr(), shape.len(), o) })
    }
    /// Swaps two dimensions (a view).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?;
    /// let m = t.reshape(&[2, 3])?.transpose(0, 1)?;
    /// assert_eq!(m.contiguous()?.to_vec::<f32>()?, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_transpose`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_transpose(self.as_ptr(), dim0, dim1, o) })
    }
    /// Reorders the dimensions (a view).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3, 4], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.permute(&[2, 0, 1])?.shape(), vec![4, 2, 3]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_permute`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_permute(self.as_ptr(), dims.as_ptr(), dims.len(), o)
        })
    }
    /// `length` elements of `dim` from `start` (a view).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?;
    /// assert_eq!(t.narrow(0, 1, 3)?.to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_narrow`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_narrow(self.as_ptr(), dim, start, length, o) })
    }
    /// Drops the listed size-1 dimensions (every size-1 dimension when `dims` is empty).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[1, 2, 1], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.squeeze(&[])?.shape(), vec![2]);
    /// assert_eq!(t.squeeze(&[0])?.shape(), vec![2, 1]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_squeeze`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn squeeze(&self, dims: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_squeeze(self.as_ptr(), dims.as_ptr(), dims.len(), o)
        })
    }
    /// Inserts a size-1 dimension at `dim`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?;
    /// assert_eq!(t.unsqueeze(0)?.shape(), vec![1, 6]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_unsqueeze`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_unsqueeze(self.as_ptr(), dim, o) })
    }
    /// Broadcasts to `shape` (a view with zero strides; `-1` keeps a size).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.0f32, 2.0], &[1, 2], Device::CPU)?;
    /// let e = t.expand(&[3, -1])?;
    /// assert_eq!((e.shape(), e.strides()), (vec![3, 2], vec![0, 1]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_expand`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn expand(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_expand(self.as_ptr(), shape.as_ptr(), shape.len(), o)
        })
    }
    /// A row-major contiguous tensor: `self` again when already contiguous, else a copy.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?;
    /// let tr = t.reshape(&[2, 3])?.transpose(0, 1)?;
    /// assert!(!tr.is_contiguous() && tr.contiguous()?.is_contiguous());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_contiguous`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn contiguous(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_contiguous(self.as_ptr(), o) })
    }
    /// Flattens dimensions `start_dim..=end_dim` into one.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3, 4], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.flatten(1, -1)?.shape(), vec![2, 12]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_flatten`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_flatten(self.as_ptr(), start_dim, end_dim, o) })
    }

    // ------------------------------------------------------------ elementwise
    // (the op table's add, add_scalar, neg, ...: ops_table.rs, generated by
    // script/gen-op-bindings from src/core/op_table.h)

    binary! {
        /// Matrix product, as `torch.matmul` (dot, matrix, batched).
        matmul => dt_matmul;
    }

    /// `cond ? a : b` elementwise (`self` is the bool condition).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let cond = Tensor::from_slice(&[true, false], &[2], Device::CPU)?;
    /// let a = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let b = Tensor::from_slice(&[10.0f32, 20.0], &[2], Device::CPU)?;
    /// assert_eq!(cond.where_(&a, &b)?.to_vec::<f32>()?, vec![1.0, 20.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_where`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn where_(&self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_where(self.as_ptr(), a.as_ptr(), b.as_ptr(), o) })
    }

    /// `value` wherever the bool `mask` is true, `self` elsewhere, as
    /// `torch.masked_fill` (out of place; `mask` broadcasts with `self`). The value
    /// converts to `self`'s dtype as a cast would (a value an integer dtype cannot hold,
    /// 300 into int8, is an invalid-argument error, as in PyTorch); differentiable in `self`.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let scores = Tensor::from_slice(&[0.5f32, 1.0, 2.0, 3.0], &[2, 2], Device::CPU)?;
    /// let hide = Tensor::from_slice(&[false, true], &[2], Device::CPU)?; // per column
    /// let masked = scores.masked_fill(&hide, f64::NEG_INFINITY)?;
    /// assert_eq!(masked.to_vec::<f32>()?, [0.5, f32::NEG_INFINITY, 2.0, f32::NEG_INFINITY]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) for a mask that is not bool,
    /// [`ShapeMismatch`](crate::ErrorCode::ShapeMismatch) for shapes that do not
    /// broadcast, [`DeviceMismatch`](crate::ErrorCode::DeviceMismatch),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn masked_fill(&self, mask: &Tensor, value: f64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_masked_fill(self.as_ptr(), mask.as_ptr(), value, o) })
    }

    /// Every element limited to `[min, max]`, as `torch.clamp`; `None` leaves that side
    /// open (at least one bound is needed). Integral bounds keep an integer dtype, a
    /// fractional one makes it the default float dtype, as in PyTorch. Differentiable:
    /// the gradient passes where `min <= x <= max`.
    ///
    /// ```
    /// # use devtensor::{Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[-2.0f32, 0.25, 3.0], &[3], Device::CPU)?;
    /// assert_eq!(t.clamp(Some(-1.0), Some(1.0))?.to_vec::<f32>()?, [-1.0, 0.25, 1.0]);
    /// assert_eq!(t.clamp(Some(0.0), None)?.to_vec::<f32>()?, [0.0, 0.25, 3.0]);
    /// assert_eq!(t.clamp(None, None).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) when both bounds are
    /// `None`, [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn clamp(&self, min: Option<f64>, max: Option<f64>) -> Result<Tensor> {
        let lo = min.as_ref().map_or(std::ptr::null(), |v| v as *const f64);
        let hi = max.as_ref().map_or(std::ptr::null(), |v| v as *const f64);
        Tensor::from_out(|o| unsafe { ffi::dt_clamp(self.as_ptr(), lo, hi, o) })
    }

    /// `self` where `self > 0`, else `self * negative_slope`, elementwise, as
    /// `torch.nn.functional.leaky_relu(self, negative_slope)` (PyTorch's default slope is
    /// `0.01`); floating tensors only. Differentiable: the gradient is 1 where `self > 0`,
    /// else `negative_slope` (at 0 the slope, as PyTorch's), `grad_fn`
    /// `"LeakyReluBackward0"`. [`Module::leaky_relu`](crate::nn::Module::leaky_relu) is
    /// the module.
    ///
    /// ```
    /// # use devtensor::{Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[-2.0f64, 0.0, 3.0], &[3], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// let y = x.leaky_relu(0.1)?;
    /// assert_eq!(y.to_vec::<f64>()?, [-0.2, 0.0, 3.0]);
    /// y.sum(&[], false)?.backward()?;
    /// assert_eq!(x.grad()?.unwrap().to_vec::<f64>()?, [0.1, 0.1, 1.0]); // the slope at 0
    /// let ints = Tensor::from_slice(&[-2i32, 3], &[2], Device::CPU)?;
    /// assert_eq!(ints.leaky_relu(0.1).unwrap_err().code, ErrorCode::DtypeMismatch);
    /// assert_eq!(x.leaky_relu(f64::NAN).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for a slope that is not
    /// finite (NaN, ±infinity), [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) for
    /// an integer or bool tensor, [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn leaky_relu(&self, negative_slope: f64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_leaky_relu(self.as_ptr(), negative_slope, o) })
    }

    /// A padded copy, as `torch.nn.functional.pad(self, pad, mode, value)`. `pad` holds
    /// pairs `(before, after)` starting from the LAST dim and going backwards, as
    /// PyTorch's: `[1, 2]` pads the last dim by 1 before and 2 after, `[1, 2, 3, 4]` also
    /// the dim before it by 3 and 4; its length is even and at most twice the number of
    /// dims (empty: a copy). A negative value removes that many elements instead (crops).
    /// The modes ([`PadMode`]):
    ///
    /// - [`Constant`](PadMode::Constant): the new elements are `value`, converted to
    ///   `self`'s dtype as [`masked_fill`](Tensor::masked_fill)'s;
    /// - [`Reflect`](PadMode::Reflect): mirrored about the edge element, not repeating it
    ///   (`[1, 2, 3]` padded by `[2, 0]`: `[3, 2, 1, 2, 3]`); each pad below the dim's size;
    /// - [`Replicate`](PadMode::Replicate): the edge element repeated; the dim not empty;
    /// - [`Circular`](PadMode::Circular): wrapped around, the other end's elements; each
    ///   pad at most the dim's size.
    ///
    /// The modes other than `Constant` pad any dims of a tensor of any rank (PyTorch's,
    /// the last 1 to 3 dims of a 1-d to 3-d input, batched or not; where both accept, the
    /// results are equal) and take no value: pass `0.0` (a nonzero one is refused, as in
    /// PyTorch). Any dtype. Differentiable: `Constant`'s `grad_fn` is
    /// `"ConstantPadNdBackward0"`; the other modes' gradients add up those of every copy
    /// of an element. The modes other than `Constant` build their index lists on the
    /// host and copy them to the tensor's device, which a graph capture on a device
    /// refuses.
    ///
    /// ```
    /// # use devtensor::{Device, ErrorCode, PadMode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU)?;
    /// assert_eq!(x.pad(&[1, 2], PadMode::Constant, 9.0)?.to_vec::<f32>()?, [9.0, 1.0, 2.0, 3.0, 9.0, 9.0]);
    /// assert_eq!(x.pad(&[2, 0], PadMode::Reflect, 0.0)?.to_vec::<f32>()?, [3.0, 2.0, 1.0, 2.0, 3.0]);
    /// assert_eq!(x.pad(&[1, 2], PadMode::Replicate, 0.0)?.to_vec::<f32>()?, [1.0, 1.0, 2.0, 3.0, 3.0, 3.0]);
    /// assert_eq!(x.pad(&[1, 1], PadMode::Circular, 0.0)?.to_vec::<f32>()?, [3.0, 1.0, 2.0, 3.0, 1.0]);
    /// assert_eq!(x.pad(&[-1, 0], PadMode::Constant, 0.0)?.to_vec::<f32>()?, [2.0, 3.0]); // a crop
    /// // Two dims of [[1, 2], [3, 4]]: (1, 0) for the last, then (0, 1) for the first.
    /// let m = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU)?;
    /// let p = m.pad(&[1, 0, 0, 1], PadMode::Constant, 0.0)?;
    /// assert_eq!(p.shape(), [3, 3]);
    /// assert_eq!(p.to_vec::<f32>()?, [0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0, 0.0, 0.0]);
    /// // reflect: each pad below the size.
    /// assert_eq!(x.pad(&[3, 0], PadMode::Reflect, 0.0).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) (an odd number of values
    /// or more than twice the number of dims, a pad its mode does not allow or that
    /// leaves a negative size, the message naming the dim and the sizes, a value an
    /// integer dtype cannot hold, a nonzero value for a mode other than `Constant`),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn pad(&self, pad: &[i64], mode: PadMode, value: f64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_pad(self.as_ptr(), pad.as_ptr(), pad.len(), mode.c_name().as_ptr(), value, o)
        })
    }

    /// `self` resized, as `torch.nn.functional.interpolate(self, size, scale_factor, mode,
    /// align_corners)`: `self` is `[N, C, *spatial]` with 1 to 3 spatial dims (floating),
    /// and the result `[N, C, *size]`, or each spatial size multiplied by its
    /// `scale_factor` and rounded down. Exactly one of `size` and `scale_factor` is
    /// `Some`, with one value for every spatial dim or a single value for all of them. The
    /// modes ([`InterpolateMode`]):
    ///
    /// - [`Nearest`](InterpolateMode::Nearest) (any of the three ranks): output `i` reads
    ///   input `floor(i * scale)`, `scale = in / out`, or `1 / factor` with `scale_factor`,
    ///   as PyTorch's (`[0, 1, 2, 3, 4]` by 1.5: `[0, 0, 1, 2, 2, 3, 4]`); `align_corners`
    ///   is refused;
    /// - [`Linear`](InterpolateMode::Linear) (3-d `self`), [`Bilinear`](InterpolateMode::Bilinear)
    ///   (4-d), [`Trilinear`](InterpolateMode::Trilinear) (5-d): between the two nearest
    ///   inputs in each spatial dim. `align_corners` (PyTorch's `align_corners=True`) maps
    ///   the corner elements onto each other, output `i` reading input
    ///   `i * (in - 1) / (out - 1)`; without it (PyTorch's default) output `i` reads input
    ///   `(i + 0.5) * scale - 0.5`, clamped at both ends (`[0, 4]` to 4: `[0, 1, 3, 4]`).
    ///
    /// Differentiable, with PyTorch's `grad_fn` names (`"UpsampleNearest2DBackward1"`,
    /// `"UpsampleBilinear2DBackward1"`, ...). The index lists and weights are made on the
    /// host and copied to the tensor's device, which a graph capture on a device refuses.
    /// [`Module::upsample`](crate::nn::Module::upsample) is the module.
    ///
    /// ```
    /// # use devtensor::{Device, ErrorCode, InterpolateMode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // [[0, 3], [6, 9]] as a batch of one 1-channel image.
    /// let x = Tensor::from_slice(&[0.0f32, 3.0, 6.0, 9.0], &[1, 1, 2, 2], Device::CPU)?;
    /// let y = x.interpolate(None, Some(&[2.0]), InterpolateMode::Nearest, false)?;
    /// assert_eq!(y.shape(), [1, 1, 4, 4]);
    /// assert_eq!(y.to_vec::<f32>()?, [0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 3.0, 3.0, 6.0, 6.0, 9.0, 9.0, 6.0, 6.0, 9.0, 9.0]);
    /// // bilinear with align_corners to (2, 4): the columns read 0, 1/3, 2/3 and 1.
    /// let y = x.interpolate(Some(&[2, 4]), None, InterpolateMode::Bilinear, true)?;
    /// for (got, want) in y.to_vec::<f32>()?.iter().zip([0.0, 1.0, 2.0, 3.0, 6.0, 7.0, 8.0, 9.0]) {
    ///     assert!((got - want).abs() < 1e-6, "{got} against {want}");
    /// }
    /// // linear without align_corners: [0, 4] to 4.
    /// let l = Tensor::from_slice(&[0.0f32, 4.0], &[1, 1, 2], Device::CPU)?;
    /// let y = l.interpolate(Some(&[4]), None, InterpolateMode::Linear, false)?;
    /// assert_eq!(y.to_vec::<f32>()?, [0.0, 1.0, 3.0, 4.0]);
    /// // Exactly one of size and scale_factor.
    /// let both = x.interpolate(Some(&[4]), Some(&[2.0]), InterpolateMode::Nearest, false);
    /// assert_eq!(both.unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) (both or neither of `size`
    /// and `scale_factor`, a number of values neither 1 nor the number of spatial dims, a
    /// size or factor giving an empty output, `align_corners` with `Nearest`),
    /// [`ShapeMismatch`](crate::ErrorCode::ShapeMismatch) (a rank the mode does not take,
    /// the message naming it), [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) (not
    /// floating), [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn interpolate(
        &self,
        size: Option<&[i64]>,
        scale_factor: Option<&[f64]>,
        mode: InterpolateMode,
        align_corners: bool,
    ) -> Result<Tensor> {
        let (s, f, n) = interpolate_args(size, scale_factor);
        Tensor::from_out(|o| unsafe {
            ffi::dt_interpolate(self.as_ptr(), s, f, n, mode.c_name().as_ptr(), align_corners as i32, o)
        })
    }

    /// The elements of the last two dims on and above the `diagonal` (0: the main one,
    /// 1: the one above, -1: the one below), zeros elsewhere, as `torch.triu`.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU)?;
    /// assert_eq!(t.triu(0)?.to_vec::<f32>()?, [1.0, 2.0, 0.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for fewer than 2 dims,
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_triu(self.as_ptr(), diagonal, o) })
    }

    /// The elements of the last two dims on and below the `diagonal`, zeros elsewhere,
    /// as `torch.tril` (a causal mask is `ones.tril(0)`).
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU)?;
    /// assert_eq!(t.tril(0)?.to_vec::<f32>()?, [1.0, 0.0, 3.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for fewer than 2 dims,
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_tril(self.as_ptr(), diagonal, o) })
    }

    /// The variance over `dims` (all when empty) of a floating tensor, dividing by
    /// `n - correction` (1.0: unbiased, PyTorch's default; 0.0: the population
    /// variance), as `torch.var`. Differentiable.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2], Device::CPU)?;
    /// assert_eq!(t.var(&[], 1.0, false)?.item()?, 5.0 / 3.0);
    /// assert_eq!(t.var(&[1], 0.0, false)?.to_vec::<f64>()?, [0.25, 0.25]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) for an integer or bool tensor,
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for a dimension out of
    /// range or repeated, or a correction that is not finite,
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn var(&self, dims: &[i64], correction: f64, keepdim: bool) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_var(self.as_ptr(), dims.as_ptr(), dims.len(), correction, keepdim as i32, o)
        })
    }

    /// The standard deviation: the square root of [`var`](Tensor::var), as `torch.std`.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.0f64, 3.0], &[2], Device::CPU)?;
    /// assert_eq!(t.std(&[], 0.0, false)?.item()?, 1.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`var`](Tensor::var).
    pub fn std(&self, dims: &[i64], correction: f64, keepdim: bool) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_std(self.as_ptr(), dims.as_ptr(), dims.len(), correction, keepdim as i32, o)
        })
    }

    /// `log(sum(exp(self)))` over `dims` (all when empty), as `torch.logsumexp`;
    /// `keepdim` keeps the reduced dims as size 1. The largest value of each reduction is
    /// subtracted first and added back, so large values do not overflow; a reduction whose
    /// largest value is infinite gives that infinity, one over no element `-inf` (log 0),
    /// NaN propagates. Integer and bool tensors are taken as the default dtype
    /// ([`default_dtype`](crate::default_dtype)), as PyTorch's. Differentiable: the
    /// gradient is the incoming one times `exp(self - result)`, the softmax over the
    /// reduced dims (grad_fn `LogsumexpBackward0`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // [[0, ln 3], [1000, 1000]]: ln 4, and 1000 + ln 2 where exp(1000) alone overflows.
    /// let t = Tensor::from_slice(&[0.0f64, 3f64.ln(), 1000.0, 1000.0], &[2, 2], Device::CPU)?;
    /// let r = t.logsumexp(&[1], false)?.to_vec::<f64>()?;
    /// assert!((r[0] - 4f64.ln()).abs() < 1e-12 && (r[1] - (1000.0 + 2f64.ln())).abs() < 1e-9);
    /// assert_eq!(t.logsumexp(&[1], true)?.shape(), [2, 1]);
    /// // Integers are taken as the default dtype.
    /// let i = Tensor::from_slice(&[1i64, 1], &[2], Device::CPU)?.logsumexp(&[], false)?;
    /// assert_eq!(i.dtype(), DType::Float32);
    /// assert!((i.item()? - (1.0 + 2f64.ln())).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for a dimension out of range
    /// or repeated, [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn logsumexp(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_logsumexp(self.as_ptr(), dims.as_ptr(), dims.len(), keepdim as i32, o)
        })
    }

    /// The `ord`-norm of a floating tensor over `dims` (all when empty), as
    /// `torch.linalg.vector_norm`; `keepdim` keeps the reduced dims as size 1. `ord` 2.0
    /// is `sqrt(sum(|x|^2))` (PyTorch's default), 1.0 `sum(|x|)`, `f64::INFINITY`
    /// `max(|x|)`, `f64::NEG_INFINITY` `min(|x|)`, 0.0 the count of nonzero elements, any
    /// other `ord` `(sum(|x|^ord))^(1/ord)`. On the CPU float32, float16 and bfloat16
    /// compute in float64 (so squares of 1e20 do not overflow), on a GPU the 16-bit ones
    /// in float32, as PyTorch's. A reduction over no element is 0, except with `ord` ±inf,
    /// which has no identity (an error, as PyTorch). Differentiable with PyTorch's
    /// formulas (grad_fn `LinalgVectorNormBackward0`), including their choices where the
    /// norm is not differentiable: a zero gradient where the norm is 0, ties of the
    /// inf-norms share the gradient evenly, and `ord` 0 passes no gradient.
    ///
    /// ```
    /// # use devtensor::{Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[3.0f32, -4.0, 0.0, 0.0], &[2, 2], Device::CPU)?;
    /// assert_eq!(t.vector_norm(2.0, &[1], false)?.to_vec::<f32>()?, [5.0, 0.0]);
    /// assert_eq!(t.vector_norm(1.0, &[1], false)?.to_vec::<f32>()?, [7.0, 0.0]);
    /// assert_eq!(t.vector_norm(f64::INFINITY, &[1], false)?.to_vec::<f32>()?, [4.0, 0.0]);
    /// assert_eq!(t.vector_norm(0.0, &[1], false)?.to_vec::<f32>()?, [2.0, 0.0]);
    /// assert_eq!(t.vector_norm(2.0, &[], false)?.item()?, 5.0);
    /// let i = Tensor::from_slice(&[3i64, 4], &[2], Device::CPU)?;
    /// assert_eq!(i.vector_norm(2.0, &[], false).unwrap_err().code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) for an integer or bool tensor,
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for a NaN `ord`, a dimension
    /// out of range or repeated, or `ord` ±inf over no element,
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn vector_norm(&self, ord: f64, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_vector_norm(self.as_ptr(), ord, dims.as_ptr(), dims.len(), keepdim as i32, o)
        })
    }

    // ------------------------------------------------------------ truth values
    // (NEW bool tensors, not differentiable: the private helpers below make each call)

    /// One of the one-operand truth-value ops: `dt_isnan`, `dt_isinf`, `dt_isfinite`,
    /// `dt_logical_not`.
    fn truth_unary(&self, f: TruthUnaryFn) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { f(self.as_ptr(), o) })
    }

    /// One of the two-operand truth-value ops: `dt_logical_and`, `dt_logical_or`,
    /// `dt_logical_xor`.
    fn truth_binary(&self, other: &Tensor, f: TruthBinaryFn) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { f(self.as_ptr(), other.as_ptr(), o) })
    }

    /// `dt_any` or `dt_all` over `dims`.
    fn truth_reduce(&self, dims: &[i64], keepdim: bool, f: TruthReduceFn) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            f(self.as_ptr(), dims.as_ptr(), dims.len(), keepdim as i32, o)
        })
    }

    /// A NEW bool tensor of `self`'s shape, true where the element is NaN, as
    /// `torch.isnan`. Integer and bool tensors are never NaN. Not differentiable (a bool
    /// result).
    ///
    /// ```
    /// # use devtensor::{DType, Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let (inf, nan) = (f32::INFINITY, f32::NAN);
    /// let x = Tensor::from_slice(&[nan, inf, -inf, 1.5], &[4], Device::CPU)?;
    /// assert_eq!(x.isnan()?.to_vec::<bool>()?, [true, false, false, false]);
    /// assert_eq!(x.isinf()?.to_vec::<bool>()?, [false, true, true, false]);
    /// assert_eq!(x.isfinite()?.to_vec::<bool>()?, [false, false, false, true]);
    /// assert_eq!(x.isnan()?.dtype(), DType::Bool);
    /// // Integers are never NaN or infinite.
    /// let i = Tensor::from_slice(&[0i64, 3], &[2], Device::CPU)?;
    /// assert_eq!(i.isfinite()?.to_vec::<bool>()?, [true, true]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidHandle`](crate::ErrorCode::InvalidHandle),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn isnan(&self) -> Result<Tensor> {
        self.truth_unary(ffi::dt_isnan)
    }

    /// A NEW bool tensor of `self`'s shape, true where the element is `+inf` or `-inf`, as
    /// `torch.isinf`. Integer and bool tensors are never infinite. Not differentiable.
    /// See [`Tensor::isnan`] for an example.
    ///
    /// # Errors
    ///
    /// As [`Tensor::isnan`].
    pub fn isinf(&self) -> Result<Tensor> {
        self.truth_unary(ffi::dt_isinf)
    }

    /// A NEW bool tensor of `self`'s shape, true where the element is neither NaN nor
    /// infinite, as `torch.isfinite`: every element of an integer or bool tensor. Not
    /// differentiable. See [`Tensor::isnan`] for an example.
    ///
    /// # Errors
    ///
    /// As [`Tensor::isnan`].
    pub fn isfinite(&self) -> Result<Tensor> {
        self.truth_unary(ffi::dt_isfinite)
    }

    /// A NEW bool tensor of `self`'s shape, true where the element is zero, as
    /// `torch.logical_not`: a tensor of any dtype is taken as truth values, nonzero (NaN
    /// included) true. Not differentiable.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[f32::NAN, 0.0, -0.0, 1.5], &[4], Device::CPU)?;
    /// assert_eq!(x.logical_not()?.to_vec::<bool>()?, [false, true, true, false]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Tensor::isnan`].
    pub fn logical_not(&self) -> Result<Tensor> {
        self.truth_unary(ffi::dt_logical_not)
    }

    /// A NEW bool tensor, true where both `self` and `other` are, as `torch.logical_and`.
    /// The operands, of any dtypes (the two may differ), are taken as truth values,
    /// nonzero (NaN included) true, and broadcast together: the result has their
    /// broadcast shape. Not differentiable.
    ///
    /// ```
    /// # use devtensor::{Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::from_slice(&[1i64, 0, 2, 0], &[4], Device::CPU)?;
    /// let b = Tensor::from_slice(&[true, true, false, false], &[4], Device::CPU)?;
    /// assert_eq!(a.logical_and(&b)?.to_vec::<bool>()?, [true, false, false, false]);
    /// assert_eq!(a.logical_or(&b)?.to_vec::<bool>()?, [true, true, true, false]);
    /// assert_eq!(a.logical_xor(&b)?.to_vec::<bool>()?, [false, true, true, false]);
    /// // [3, 1] with [4]: [3, 4].
    /// let col = Tensor::from_slice(&[0.0f32, 1.0, 2.0], &[3, 1], Device::CPU)?;
    /// assert_eq!(col.logical_or(&a)?.shape(), [3, 4]);
    /// let c = Tensor::from_slice(&[1i64, 2, 3], &[3], Device::CPU)?;
    /// assert_eq!(a.logical_and(&c).unwrap_err().code, ErrorCode::ShapeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ShapeMismatch`](crate::ErrorCode::ShapeMismatch) for shapes that do not
    /// broadcast, [`DeviceMismatch`](crate::ErrorCode::DeviceMismatch) (operands on two
    /// devices), [`InvalidHandle`](crate::ErrorCode::InvalidHandle),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn logical_and(&self, other: &Tensor) -> Result<Tensor> {
        self.truth_binary(other, ffi::dt_logical_and)
    }

    /// A NEW bool tensor, true where `self` or `other` (or both) is, as
    /// `torch.logical_or`, with [`Tensor::logical_and`]'s truth values and broadcasting.
    /// Not differentiable.
    ///
    /// # Errors
    ///
    /// As [`Tensor::logical_and`].
    pub fn logical_or(&self, other: &Tensor) -> Result<Tensor> {
        self.truth_binary(other, ffi::dt_logical_or)
    }

    /// A NEW bool tensor, true where exactly one of `self` and `other` is, as
    /// `torch.logical_xor`, with [`Tensor::logical_and`]'s truth values and broadcasting.
    /// Not differentiable.
    ///
    /// # Errors
    ///
    /// As [`Tensor::logical_and`].
    pub fn logical_xor(&self, other: &Tensor) -> Result<Tensor> {
        self.truth_binary(other, ffi::dt_logical_xor)
    }

    /// Whether any element is nonzero (NaN is) over `dims` (all when empty: a 0-d
    /// result), as `torch.any`; `keepdim` keeps the reduced dims as size 1. A NEW bool
    /// tensor for every dtype of `self` (PyTorch 1.13 returns uint8 for a uint8 tensor); a
    /// reduction over no element is false. Not differentiable.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[0.0f32, 0.0, 0.0, 1.0], &[2, 2], Device::CPU)?;
    /// assert_eq!(x.any(&[], false)?.to_vec::<bool>()?, [true]);
    /// assert_eq!(x.all(&[], false)?.to_vec::<bool>()?, [false]);
    /// assert_eq!(x.any(&[1], false)?.to_vec::<bool>()?, [false, true]);
    /// assert_eq!(x.all(&[1], true)?.shape(), [2, 1]);
    /// // Over no element: false / true.
    /// let e = Tensor::zeros(&[0, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(e.any(&[], false)?.to_vec::<bool>()?, [false]);
    /// assert_eq!(e.all(&[], false)?.to_vec::<bool>()?, [true]);
    /// assert_eq!(x.any(&[2], false).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for a dimension out of range
    /// or repeated, [`InvalidHandle`](crate::ErrorCode::InvalidHandle),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn any(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        self.truth_reduce(dims, keepdim, ffi::dt_any)
    }

    /// Whether every element is nonzero (NaN is) over `dims` (all when empty: a 0-d
    /// result), as `torch.all`; `keepdim` keeps the reduced dims as size 1. A NEW bool
    /// tensor for every dtype of `self`; a reduction over no element is true. Not
    /// differentiable. See [`Tensor::any`] for an example.
    ///
    /// # Errors
    ///
    /// As [`Tensor::any`].
    pub fn all(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        self.truth_reduce(dims, keepdim, ffi::dt_all)
    }

    // ------------------------------------------------------------- reductions
    // (sum, mean, max, min, argmax, argmin: ops_table.rs)

    /// The sum of every element: a 0-d tensor, as `torch.sum(t)` (`dt_sum` over no
    /// dims). Integers and bool sum to int64; recorded by autograd.
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.5f32, 2.0, -0.5], &[3], Device::CPU)?;
    /// let s = t.sum_all()?;
    /// assert_eq!((s.shape(), s.item()?), (vec![], 3.0));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::OutOfMemory`], [`ErrorCode::InvalidHandle`].
    pub fn sum_all(&self) -> Result<Tensor> {
        self.sum(&[], false)
    }

    /// Elementwise "close enough", as `torch.isclose(self, other, rtol, atol,
    /// equal_nan)`: a bool tensor of the broadcast shape, true where `self == other`
    /// (infinities of one sign included) or `|self - other|` is finite and `<= atol +
    /// rtol * |other|`, and, with `equal_nan`, where both are NaN. The C ABI has no such function: it
    /// is made of `eq`, `sub`, `abs`, `le` and `where_`, outside autograd.
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::from_slice(&[1.0f64, 2.0, f64::NAN], &[3], Device::CPU)?;
    /// let b = Tensor::from_slice(&[1.0f64 + 1e-9, 2.1, f64::NAN], &[3], Device::CPU)?;
    /// assert_eq!(a.isclose(&b, 1e-5, 1e-8, false)?.to_vec::<bool>()?, vec![true, false, false]);
    /// assert_eq!(a.isclose(&b, 0.1, 0.0, true)?.to_vec::<bool>()?, vec![true, true, true]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a negative `rtol` or `atol`),
    /// [`ErrorCode::DeviceMismatch`], [`ErrorCode::ShapeMismatch`] (shapes that do not
    /// broadcast), [`ErrorCode::DtypeMismatch`] (bool tensors, which have no
    /// difference), [`ErrorCode::OutOfMemory`].
    pub fn isclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
        if !(rtol >= 0.0 && atol >= 0.0) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("isclose: rtol ({rtol}) and atol ({atol}) must be non-negative"),
            ));
        }
        crate::no_grad(|| -> Result<Tensor> {
            let eq = self.eq(other)?;
            let diff = Tensor::sub(self, other)?.abs()?;
            let tol = other.abs()?.mul_scalar(rtol)?.add_scalar(atol)?;
            // As torch: the difference must be finite too (inf - -inf is not near).
            let finite = Tensor::sub(&diff, &diff)?.eq_scalar(0.0)?;
            let near = finite.where_(&diff.le(&tol)?, &finite)?; // finite and within
            let mut close = eq.where_(&eq, &near)?; // eq or near
            if equal_nan {
                let (nan_a, nan_b) = (self.ne(self)?, other.ne(other)?);
                let both = nan_a.where_(&nan_b, &nan_a)?; // nan_a and nan_b
                close = both.where_(&both, &close)?;
            }
            Ok(close)
        })?
    }

    /// Whether every element is close to `other`'s, as `torch.allclose(self, other)`
    /// with its defaults (`rtol=1e-05, atol=1e-08, equal_nan=False`); see
    /// [`Tensor::allclose_with`] and [`Tensor::isclose`]. Shapes broadcast.
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert!(a.allclose(&(&a + 1e-6)?)?);
    /// assert!(!a.allclose(&(&a + 1e-3)?)?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Tensor::isclose`].
    pub fn allclose(&self, other: &Tensor) -> Result<bool> {
        self.allclose_with(other, 1e-5, 1e-8, false)
    }

    /// Whether every element is close to `other`'s, as `torch.allclose(self, other,
    /// rtol, atol, equal_nan)` (every element of [`Tensor::isclose`] true; an empty
    /// tensor is close).
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::from_slice(&[100.0f32, f32::NAN], &[2], Device::CPU)?;
    /// let b = Tensor::from_slice(&[101.0f32, f32::NAN], &[2], Device::CPU)?;
    /// assert!(a.allclose_with(&b, 0.01, 0.0, true)?);
    /// assert!(!a.allclose_with(&b, 0.01, 0.0, false)?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Tensor::isclose`].
    pub fn allclose_with(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
        let close = self.isclose(other, rtol, atol, equal_nan)?;
        let n = close.numel();
        Ok(close.sum_all()?.item()? as usize == n)
    }

    /// Softmax along `dim`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
    /// assert_eq!(t.softmax(0)?.to_vec::<f32>()?, vec![0.5, 0.5]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_softmax`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn softmax(&self, dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_softmax(self.as_ptr(), dim, o) })
    }
    /// The running sums along `dim` (`torch.cumsum`); integer and bool tensors sum in
    /// `i64`. Differentiable.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2], Device::CPU)?;
    /// assert_eq!(t.cumsum(1)?.to_vec::<i64>()?, vec![1, 3, 3, 7]);
    /// assert_eq!(t.cumsum(0)?.to_vec::<i64>()?, vec![1, 2, 4, 6]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_cumsum`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn cumsum(&self, dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_cumsum(self.as_ptr(), dim, o) })
    }
    /// The elements sorted along `dim` and their positions along `dim` (`i64`), as
    /// `torch.sort(stable=True)`: ascending, or descending when `descending`; equal
    /// elements keep their order, NaN sorts as the largest value. Differentiable through
    /// the values.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[3.0f32, 1.0, 2.0, 1.0], &[4], Device::CPU)?;
    /// let (values, indices) = t.sort(0, false)?;
    /// assert_eq!(values.to_vec::<f32>()?, vec![1.0, 1.0, 2.0, 3.0]);
    /// assert_eq!(indices.to_vec::<i64>()?, vec![1, 3, 2, 0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_sort`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn sort(&self, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
        Tensor::pair_from_out(|v, i| unsafe {
            ffi::dt_sort(self.as_ptr(), dim, i32::from(descending), v, i)
        })
    }
    /// `self / max(||self||_p along dim, eps)`, as `torch.nn.functional.normalize`
    /// (PyTorch's defaults: `p` 2, `dim` 1, `eps` 1e-12). Floating tensors.
    /// Differentiable.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[3.0f64, 4.0, 0.0, 0.0], &[2, 2], Device::CPU)?;
    /// assert_eq!(x.normalize(2.0, 1, 1e-12)?.to_vec::<f64>()?, vec![0.6, 0.8, 0.0, 0.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_normalize`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn normalize(&self, p: f64, dim: i64, eps: f64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_normalize(self.as_ptr(), p, dim, eps, o) })
    }

    /// The cosine of the angle between `self`'s and `other`'s vectors along `dim` (the two
    /// broadcast together), as `torch.nn.functional.cosine_similarity` (PyTorch 1.13's
    /// formula, defaults `dim` 1, `eps` 1e-8): each vector divided by its norm clamped
    /// below at `eps`, then the dot product. Floating tensors. Differentiable in both.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::from_slice(&[3.0f64, 4.0], &[1, 2], Device::CPU)?;
    /// let b = Tensor::from_slice(&[4.0f64, 3.0], &[1, 2], Device::CPU)?;
    /// let c = a.cosine_similarity(&b, 1, 1e-8)?.to_vec::<f64>()?;
    /// assert!((c[0] - 0.96).abs() < 1e-15); // (12 + 12) / (5 * 5)
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_cosine_similarity`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn cosine_similarity(&self, other: &Tensor, dim: i64, eps: f64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_cosine_similarity(self.as_ptr(), other.as_ptr(), dim, eps, o) })
    }

    /// `||self - other + eps||_p` over the last dim (the two broadcast together), as
    /// `torch.nn.functional.pairwise_distance` (defaults `p` 2, `eps` 1e-6, `keepdim`
    /// false). Floating tensors. Differentiable in both.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::from_slice(&[3.0f64, 4.0, 0.0, 0.0], &[2, 2], Device::CPU)?;
    /// let b = Tensor::from_slice(&[0.0f64, 0.0], &[2], Device::CPU)?;
    /// let d = a.pairwise_distance(&b, 2.0, 0.0, true)?;
    /// assert_eq!((d.shape(), d.to_vec::<f64>()?), (vec![2, 1], vec![5.0, 0.0]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_pairwise_distance`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn pairwise_distance(&self, other: &Tensor, p: f64, eps: f64, keepdim: bool) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_pairwise_distance(self.as_ptr(), other.as_ptr(), p, eps, i32::from(keepdim), o)
        })
    }

    /// The distinct elements (over all of `self`) in ascending order, as
    /// `torch.unique(sorted=True, return_inverse, return_counts)`: NaN last, each NaN its
    /// own value; `-0.0` and `0.0` are one. With `with_inverse`, the second result (`i64`,
    /// `self`'s shape) holds the index into the values of each element; with
    /// `with_counts`, the third (`i64`) how often each value occurs; `None` when not asked
    /// for. Waits for the device (the number of values is read back). Not differentiable.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[2i64, 1, 1, 3], &[2, 2], Device::CPU)?;
    /// let (values, inverse, counts) = t.unique(true, true)?;
    /// assert_eq!(values.to_vec::<i64>()?, vec![1, 2, 3]);
    /// assert_eq!(inverse.unwrap().to_vec::<i64>()?, vec![1, 0, 0, 2]);
    /// assert_eq!(counts.unwrap().to_vec::<i64>()?, vec![2, 1, 1]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_unique`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn unique(&self, with_inverse: bool, with_counts: bool) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        let mut values: *mut ffi::dt_tensor = std::ptr::null_mut();
        let mut inverse: *mut ffi::dt_tensor = std::ptr::null_mut();
        let mut counts: *mut ffi::dt_tensor = std::ptr::null_mut();
        let inverse_out: *mut *mut ffi::dt_tensor = if with_inverse { &mut inverse } else { std::ptr::null_mut() };
        let counts_out: *mut *mut ffi::dt_tensor = if with_counts { &mut counts } else { std::ptr::null_mut() };
        // SAFETY: a live handle and out-pointers to locals (or NULL for those not wanted).
        check(unsafe { ffi::dt_unique(self.as_ptr(), &mut values, inverse_out, counts_out) })?;
        let values = Tensor::from_owned_ptr(values)
            .ok_or_else(|| Error::new(ErrorCode::Internal, "the library returned success and a NULL tensor"))?;
        Ok((values, Tensor::from_owned_ptr(inverse), Tensor::from_owned_ptr(counts)))
    }

    /// How often each value `0 ..= max(self, minlength - 1)` occurs in `self`, a 1-d
    /// tensor of non-negative integers (any integer dtype), as `torch.bincount`: `i64`
    /// counts, or with `weights` (1-d, `self`'s length and device) the sum of the weights
    /// of each value's elements, in the weights' dtype when floating, else `f64`. Waits for
    /// the device (the largest value is read back). Not differentiable.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[0i64, 2, 2, 5], &[4], Device::CPU)?;
    /// assert_eq!(t.bincount(None, 0)?.to_vec::<i64>()?, vec![1, 0, 2, 0, 0, 1]);
    /// let w = Tensor::from_slice(&[0.5f32, 1.0, 2.0, 4.0], &[4], Device::CPU)?;
    /// let b = t.bincount(Some(&w), 7)?;
    /// assert_eq!((b.dtype(), b.to_vec::<f32>()?), (DType::Float32, vec![0.5, 0.0, 3.0, 0.0, 0.0, 4.0, 0.0]));
    /// assert_eq!(w.bincount(None, 0).unwrap_err().code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_bincount`:
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) (not 1-d, a negative value,
    /// `minlength < 0`, weights of another shape),
    /// [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) (floating or bool values),
    /// [`DeviceMismatch`](crate::ErrorCode::DeviceMismatch),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn bincount(&self, weights: Option<&Tensor>, minlength: i64) -> Result<Tensor> {
        let w = weights.map_or(std::ptr::null(), |t| t.as_ptr() as *const ffi::dt_tensor);
        Tensor::from_out(|o| unsafe { ffi::dt_bincount(self.as_ptr(), w, minlength, o) })
    }

    /// The positions that sort the elements along `dim` (`i64`), as
    /// `torch.argsort(stable=True)`.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[3i32, 1, 2], &[3], Device::CPU)?;
    /// assert_eq!(t.argsort(0, true)?.to_vec::<i64>()?, vec![0, 2, 1]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_argsort`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn argsort(&self, dim: i64, descending: bool) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_argsort(self.as_ptr(), dim, i32::from(descending), o)
        })
    }
    /// The `k` largest elements along `dim` (the `k` smallest when `largest` is false),
    /// largest (smallest) first, and their positions along `dim` (`i64`), as
    /// `torch.topk`; equal elements come in order of position. Differentiable through
    /// the values.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let logits = Tensor::from_slice(&[0.1f32, 2.5, -1.0, 0.7], &[1, 4], Device::CPU)?;
    /// let (values, classes) = logits.topk(2, 1, true)?;
    /// assert_eq!(values.to_vec::<f32>()?, vec![2.5, 0.7]);
    /// assert_eq!(classes.to_vec::<i64>()?, vec![1, 3]);
    /// assert!(logits.topk(5, 1, true).is_err()); // k larger than the dim
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_topk`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn topk(&self, k: i64, dim: i64, largest: bool) -> Result<(Tensor, Tensor)> {
        Tensor::pair_from_out(|v, i| unsafe {
            ffi::dt_topk(self.as_ptr(), k, dim, i32::from(largest), v, i)
        })
    }
    /// Log-softmax along `dim`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[0.0f64, 0.0], &[2], Device::CPU)?;
    /// let l = t.log_softmax(0)?.to_vec::<f64>()?;
    /// assert!((l[0] + std::f64::consts::LN_2).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_log_softmax`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn log_softmax(&self, dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_log_softmax(self.as_ptr(), dim, o) })
    }

    // -------------------------------------------------------- joining, indexing

    /// Concatenates along `dim` (shapes match elsewhere; dtypes promote).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU)?;
    /// let b = Tensor::from_slice(&[3i64], &[1], Device::CPU)?;
    /// assert_eq!(Tensor::cat(&[&a, &b], 0)?.to_vec::<i64>()?, vec![1, 2, 3]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_cat`: an [`Error`](crate::Error)
    /// with the library's code and message.
    pub fn cat(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
        let h = handles(tensors);
        Tensor::from_out(|o| unsafe { ffi::dt_cat(h.as_ptr(), h.len(), dim, o) })
    }
    /// Stacks tensors of one shape along a new dimension `dim`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::zeros(&[2], DType::Float32, Device::CPU)?;
    /// assert_eq!(Tensor::stack(&[&a, &a, &a], 0)?.shape(), vec![3, 2]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_stack`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn stack(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
        let h = handles(tensors);
        Tensor::from_out(|o| unsafe { ffi::dt_stack(h.as_ptr(), h.len(), dim, o) })
    }

    /// A copy with the order of the elements reversed along each of `dims`, as
    /// `torch.flip(self, dims)`. A negative dim counts from the end. Empty `dims`: an
    /// unchanged copy; a 0-d tensor is its own flip. Any dtype. Differentiable: the
    /// gradient is the incoming one flipped back (grad_fn `FlipBackward0`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[2, 3])?;
    /// assert_eq!(x.flip(&[0, 1])?.to_vec::<f32>()?, [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
    /// assert_eq!(x.flip(&[-1])?.to_vec::<f32>()?, [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    /// assert_eq!(x.flip(&[0, 0]).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for a dimension out of range
    /// or repeated, [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn flip(&self, dims: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_flip(self.as_ptr(), dims.as_ptr(), dims.len(), o) })
    }

    /// A copy with the elements shifted along `dims[i]` by `shifts[i]`, as
    /// `torch.roll(self, shifts, dims)`: those that leave at one end come back at the
    /// other. A shift may be any `i64`, taken modulo the dim's size; a negative one moves
    /// towards the start. With empty `dims` the tensor is rolled as if flattened, by the
    /// one shift `shifts` must then hold; else `shifts.len() == dims.len()`, one shift per
    /// dim, and a dim may repeat, its shifts adding up. A negative dim counts from the
    /// end. Any dtype. Differentiable: the gradient is the incoming one rolled back
    /// (grad_fn `RollBackward0`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)?.reshape(&[2, 3])?;
    /// // Flattened: [[5, 0, 1], [2, 3, 4]].
    /// assert_eq!(x.roll(&[1], &[])?.to_vec::<f32>()?, [5.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
    /// // Down by one along dim 0, left by one along dim 1: [[4, 5, 3], [1, 2, 0]].
    /// assert_eq!(x.roll(&[1, -1], &[0, 1])?.to_vec::<f32>()?, [4.0, 5.0, 3.0, 1.0, 2.0, 0.0]);
    /// assert_eq!(x.roll(&[1, 2], &[0]).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for no shift,
    /// `shifts.len() != dims.len()` (with empty `dims`: more than one shift), a dimension
    /// out of range, [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn roll(&self, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_roll(self.as_ptr(), shifts.as_ptr(), shifts.len(), dims.as_ptr(), dims.len(), o)
        })
    }

    /// `self` tiled `repeats[i]` times along dim `i`, as PyTorch's `Tensor.repeat`. The
    /// copies follow one another, not interleaved: `[1, 2]` repeated 2 times is `[1, 2, 1,
    /// 2]` (`torch.repeat_interleave`'s `[1, 1, 2, 2]` is not this). `repeats.len()` is at
    /// least the number of dims; when it is larger, `self` gains leading dims of size 1
    /// first (a `[2, 3]` tensor repeated `[2, 1, 2]` is `[2, 2, 6]`). A repeat of 0 gives
    /// an empty dim. Any dtype. Differentiable: an element's gradient is the sum of its
    /// copies' (grad_fn `RepeatBackward0`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU)?;
    /// assert_eq!(t.repeat(&[2])?.to_vec::<i64>()?, [1, 2, 1, 2]);
    /// let r = t.repeat(&[2, 2])?;
    /// assert_eq!(r.shape(), [2, 4]);
    /// assert_eq!(r.to_vec::<i64>()?, [1, 2, 1, 2, 1, 2, 1, 2]);
    /// assert_eq!(t.repeat(&[]).unwrap_err().code, ErrorCode::InvalidArgument);
    /// assert_eq!(t.repeat(&[-1]).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for fewer repeats than dims
    /// or more than 16 (`DT_MAX_DIMS`), a negative repeat, a result of more than `i64::MAX`
    /// elements, [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn repeat(&self, repeats: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_repeat(self.as_ptr(), repeats.as_ptr(), repeats.len(), o)
        })
    }

    fn pieces(
        &self,
        call: impl Fn(*mut *mut ffi::dt_tensor, usize, *mut usize) -> ffi::dt_status,
    ) -> Result<Vec<Tensor>> {
        let mut n = 0usize;
        check(call(std::ptr::null_mut(), 0, &mut n))?;
        let mut raw: Vec<*mut ffi::dt_tensor> = vec![std::ptr::null_mut(); n];
        let mut m = 0usize;
        check(call(raw.as_mut_ptr(), raw.len(), &mut m))?;
        if m != n {
            // Cannot happen (the shape of self does not change); nothing was written.
            return Err(Error::new(
                ErrorCode::Internal,
                "piece count changed between calls",
            ));
        }
        Ok(raw.into_iter().filter_map(Tensor::from_owned_ptr).collect())
    }

    /// Splits into `chunks` views along `dim`, as `torch.chunk`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 5.0, 1.0, DType::Int64, Device::CPU)?;
    /// let parts = t.chunk(2, 0)?;
    /// assert_eq!(parts[1].to_vec::<i64>()?, vec![3, 4]); // 3 + 2 rows
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_chunk`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        self.pieces(|o, c, n| unsafe { ffi::dt_chunk(self.as_ptr(), chunks, dim, o, c, n) })
    }
    /// Splits into views of `split_size` along `dim`, as `torch.split`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::arange(0.0, 5.0, 1.0, DType::Int64, Device::CPU)?;
    /// let parts = t.split(2, 0)?;
    /// assert_eq!((parts.len(), parts[2].to_vec::<i64>()?), (3, vec![4]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_split`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn split(&self, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
        self.pieces(|o, c, n| unsafe { ffi::dt_split(self.as_ptr(), split_size, dim, o, c, n) })
    }

    /// Elements at the integer indices of the 1-d `index` along `dim`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[10.0f32, 20.0, 30.0], &[3], Device::CPU)?;
    /// let i = Tensor::from_slice(&[2i64, 0], &[2], Device::CPU)?;
    /// assert_eq!(t.index_select(0, &i)?.to_vec::<f32>()?, vec![30.0, 10.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_index_select`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn index_select(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_index_select(self.as_ptr(), dim, index.as_ptr(), o) })
    }
    /// `torch.gather`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU)?;
    /// let i = Tensor::from_slice(&[1i64, 0], &[2, 1], Device::CPU)?;
    /// assert_eq!(t.gather(1, &i)?.to_vec::<f32>()?, vec![2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_gather`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn gather(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_gather(self.as_ptr(), dim, index.as_ptr(), o) })
    }
    /// `torch.index_add`: a new tensor, `self` with `source`'s slices added at the
    /// positions `index` names along `dim` (repeated indices add up).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[3], DType::Float32, Device::CPU)?;
    /// let i = Tensor::from_slice(&[0i64, 2, 0], &[3], Device::CPU)?;
    /// let src = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU)?;
    /// assert_eq!(t.index_add(0, &i, &src)?.to_vec::<f32>()?, vec![4.0, 0.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_index_add`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn index_add(&self, dim: i64, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_index_add(self.as_ptr(), dim, index.as_ptr(), source.as_ptr(), o) })
    }
    /// `torch.scatter_add`: a new tensor, `self` with `src`'s elements added where `index`
    /// points along `dim` (repeated indices add up).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[3], DType::Float32, Device::CPU)?;
    /// let i = Tensor::from_slice(&[0i64, 2, 0], &[3], Device::CPU)?;
    /// let src = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU)?;
    /// assert_eq!(t.scatter_add(0, &i, &src)?.to_vec::<f32>()?, vec![4.0, 0.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_scatter_add`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn scatter_add(&self, dim: i64, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_scatter_add(self.as_ptr(), dim, index.as_ptr(), src.as_ptr(), o) })
    }

    /// `torch.multinomial`: `num_samples` category indices (int64) from each row of
    /// `self`, a 1-d `[categories]` or 2-d `[rows, categories]` floating tensor of
    /// non-negative weights (they need not sum to 1); the result is `[num_samples]` or
    /// `[rows, num_samples]`. With `replacement` each draw is independent and a category
    /// of weight 0 is never drawn; without, no index repeats in a row, and categories of
    /// weight 0 come only after all the others, in index order. Not differentiable; waits
    /// for `self`'s device.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let w = Tensor::from_slice(&[0.0f32, 1.0, 0.0, 3.0], &[4], Device::CPU)?;
    /// assert!(w.multinomial(10, true)?.to_vec::<i64>()?.iter().all(|&c| c == 1 || c == 3));
    /// assert_eq!(w.multinomial(5, false).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_multinomial`:
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for `self` not 1-d or 2-d,
    /// `num_samples < 1`, more samples than categories without replacement, a negative or
    /// non-finite weight, a row of weights summing to 0;
    /// [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) for a non-floating `self`;
    /// [`InvalidHandle`](crate::ErrorCode::InvalidHandle).
    pub fn multinomial(&self, num_samples: i64, replacement: bool) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_multinomial(self.as_ptr(), num_samples, i32::from(replacement), o)
        })
    }
    /// `torch.nn.functional.one_hot`: for int64 class indices of any shape, the int64
    /// tensor of shape `[..., num_classes]` that is 1 at each index's class and 0
    /// elsewhere; `num_classes` -1 takes the largest index + 1. Not differentiable; waits
    /// for `self`'s device.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let i = Tensor::from_slice(&[0i64, 2], &[2], Device::CPU)?;
    /// assert_eq!(i.one_hot(3)?.to_vec::<i64>()?, vec![1, 0, 0, 0, 0, 1]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_one_hot`:
    /// [`InvalidArgument`](crate::ErrorCode::InvalidArgument) for `num_classes < -1`, a
    /// negative index or one `>= num_classes`;
    /// [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) for indices not int64;
    /// [`InvalidHandle`](crate::ErrorCode::InvalidHandle).
    pub fn one_hot(&self, num_classes: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_one_hot(self.as_ptr(), num_classes, o) })
    }

    /// The int64 `[count, ndim]` indices of `self`'s nonzero elements (NaN is nonzero; any
    /// dtype), one row per element in row-major order, as `torch.nonzero`, on `self`'s
    /// device. Waits for the device (the count is read back). Not differentiable.
    ///
    /// ```
    /// # use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[0.0f32, 1.5, 0.0, -2.0], &[2, 2], Device::CPU)?;
    /// let nz = x.nonzero()?;
    /// assert_eq!((nz.shape(), nz.to_vec::<i64>()?), (vec![2, 2], vec![0, 1, 1, 1]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidHandle`](crate::ErrorCode::InvalidHandle),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn nonzero(&self) -> Result<Tensor> {
        self.truth_unary(ffi::dt_nonzero)
    }

    /// A NEW 1-d tensor of `self`'s elements where the bool `mask` is true, `self` and
    /// `mask` broadcast together, in row-major order, as `torch.masked_select`. Waits for
    /// the device (the count is read back). Differentiable in `self`
    /// (`MaskedSelectBackward0`).
    ///
    /// ```
    /// # use devtensor::{Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], Device::CPU)?;
    /// let columns = Tensor::from_slice(&[true, false, true], &[3], Device::CPU)?; // broadcast
    /// assert_eq!(x.masked_select(&columns)?.to_vec::<f32>()?, vec![1.0, 3.0, 4.0, 6.0]);
    /// assert_eq!(x.masked_select(&x).unwrap_err().code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`DtypeMismatch`](crate::ErrorCode::DtypeMismatch) for a mask that is not bool,
    /// [`ShapeMismatch`](crate::ErrorCode::ShapeMismatch) for shapes that do not
    /// broadcast, [`DeviceMismatch`](crate::ErrorCode::DeviceMismatch),
    /// [`InvalidHandle`](crate::ErrorCode::InvalidHandle),
    /// [`OutOfMemory`](crate::ErrorCode::OutOfMemory).
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        self.truth_binary(mask, ffi::dt_masked_select)
    }
}

/// How [`Tensor::pad`] fills the new elements, `torch.nn.functional.pad`'s `mode=`
/// `"constant"`, `"reflect"`, `"replicate"` or `"circular"`.
///
/// ```
/// use devtensor::PadMode;
/// assert_eq!(PadMode::default(), PadMode::Constant);
/// assert_eq!(PadMode::Reflect.as_str(), "reflect");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// `"constant"`: the value given (PyTorch's default).
    Constant,
    /// `"reflect"`: mirrored about the edge element, not repeating it.
    Reflect,
    /// `"replicate"`: the edge element repeated.
    Replicate,
    /// `"circular"`: wrapped around, the other end's elements.
    Circular,
}

impl Default for PadMode {
    /// [`PadMode::Constant`], PyTorch's `mode="constant"`.
    fn default() -> PadMode {
        PadMode::Constant
    }
}

impl PadMode {
    /// PyTorch's name: `"constant"`, `"reflect"`, `"replicate"` or `"circular"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PadMode::Constant => "constant",
            PadMode::Reflect => "reflect",
            PadMode::Replicate => "replicate",
            PadMode::Circular => "circular",
        }
    }
    fn c_name(self) -> &'static CStr {
        match self {
            PadMode::Constant => c"constant",
            PadMode::Reflect => c"reflect",
            PadMode::Replicate => c"replicate",
            PadMode::Circular => c"circular",
        }
    }
}

/// How [`Tensor::interpolate`] and [`Module::upsample`](crate::nn::Module::upsample)
/// compute the new elements, `torch.nn.functional.interpolate`'s `mode=` `"nearest"`,
/// `"linear"`, `"bilinear"` or `"trilinear"`. (PyTorch's `"bicubic"`, `"area"` and
/// `"nearest-exact"` are not in the library.)
///
/// ```
/// use devtensor::InterpolateMode;
/// assert_eq!(InterpolateMode::default(), InterpolateMode::Nearest);
/// assert_eq!(InterpolateMode::Bilinear.as_str(), "bilinear");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InterpolateMode {
    /// `"nearest"`: the input element at `floor(i * scale)` (PyTorch's default); any of
    /// the three ranks.
    Nearest,
    /// `"linear"`: between the two nearest inputs, of a 3-d input `[N, C, W]`.
    Linear,
    /// `"bilinear"`: linear in height and width, of a 4-d input `[N, C, H, W]`.
    Bilinear,
    /// `"trilinear"`: linear in the 3 spatial dims, of a 5-d input `[N, C, D, H, W]`.
    Trilinear,
}

impl Default for InterpolateMode {
    /// [`InterpolateMode::Nearest`], PyTorch's `mode="nearest"`.
    fn default() -> InterpolateMode {
        InterpolateMode::Nearest
    }
}

impl InterpolateMode {
    /// PyTorch's name: `"nearest"`, `"linear"`, `"bilinear"` or `"trilinear"`.
    pub fn as_str(self) -> &'static str {
        match self {
            InterpolateMode::Nearest => "nearest",
            InterpolateMode::Linear => "linear",
            InterpolateMode::Bilinear => "bilinear",
            InterpolateMode::Trilinear => "trilinear",
        }
    }
    pub(crate) fn c_name(self) -> &'static CStr {
        match self {
            InterpolateMode::Nearest => c"nearest",
            InterpolateMode::Linear => c"linear",
            InterpolateMode::Bilinear => c"bilinear",
            InterpolateMode::Trilinear => c"trilinear",
        }
    }
}

/// `dt_interpolate`'s and `dt_upsample_new`'s `size`, `scale_factor` and `n`: NULL where
/// not given, `n` the length of the one given (of `size` when both are: the library
/// refuses both, reading neither; with neither, 0). An empty slice passes a pointer and
/// `n` 0, which the library refuses without reading.
pub(crate) fn interpolate_args(
    size: Option<&[i64]>,
    scale_factor: Option<&[f64]>,
) -> (*const i64, *const f64, usize) {
    let n = match (size, scale_factor) {
        (Some(s), _) => s.len(),
        (None, Some(f)) => f.len(),
        (None, None) => 0,
    };
    (
        size.map_or(std::ptr::null(), |s| s.as_ptr()),
        scale_factor.map_or(std::ptr::null(), |f| f.as_ptr()),
        n,
    )
}

// ------------------------------------------------------------------ operators
//
// `+ - * /` for every mix of `Tensor` and `&Tensor`, with `f32` / `f64` / `i64` scalars on
// either side, and unary `-`. Output = Result<Tensor>: the C call fails on a device, shape
// or dtype mismatch, and an operator must not panic, so `(&a + &b)? * &a` is how a chain
// reads. Inside the impls the ops are called by path (`Tensor::add(&x, y)`): on an owned
// `Tensor`, `x.add(y)` would find the trait's by-value `add` before the inherent one.

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

/// A scalar operand on the right of `+ - * /` (`&t * 2.5f32`): `f32`, `f64`, `i32` or
/// `i64` (sealed). It reaches the C ABI as a double (an integer beyond 2^53 is rounded).
/// As the header says, an integral value behaves like a Python int (an integer tensor
/// keeps its dtype) and a non-integral one like a Python float (an integer tensor
/// becomes the default float dtype). On the left, `f64` and `i64` are implemented (one
/// type per literal kind, so that `2.0 * &t` and `2 * &t` infer without a suffix).
///
/// ```
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let t = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU)?;
/// assert_eq!((&t * 3)?.to_vec::<i64>()?, vec![3, 6]);         // stays int64
/// assert_eq!((&t * 0.5f32)?.to_vec::<f32>()?, vec![0.5, 1.0]); // the default float dtype
/// # Ok(()) }
/// ```
pub trait Scalar: sealed::Sealed + Copy {
    /// The value as the C ABI's double.
    fn to_f64(self) -> f64;
}
impl Scalar for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}
impl Scalar for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}
impl Scalar for i32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}
impl Scalar for i64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Tensor {
    /// `s - self`, as PyTorch's `s - t` (`__rsub__`): `(-self) + s`, exact in floating
    /// point, recorded by autograd.
    fn rsub_scalar(&self, s: f64) -> Result<Tensor> {
        Tensor::neg(self)?.add_scalar(s)
    }
    /// `s / self`, true division: a 0-d tensor holding `s` (of `self`'s dtype when
    /// floating, else the default float dtype, on `self`'s device) divided by `self`.
    /// One rounding per element (PyTorch's `__rtruediv__` computes `reciprocal(t) * s`,
    /// which may differ in the last bit).
    fn rdiv_scalar(&self, s: f64) -> Result<Tensor> {
        let dt = self.try_dtype()?;
        let dt = if dt.is_floating_point() {
            dt
        } else {
            crate::default_dtype()?
        };
        Tensor::full(&[], s, dt, self.device())?.div(self)
    }
}

macro_rules! operator {
    ($($tr:ident $m:ident $f:ident $fs:ident $rs:ident),*) => {$(
        impl $tr<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$f(self, rhs)
            }
        }
        impl $tr<Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$f(self, &rhs)
            }
        }
        impl $tr<&Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$f(&self, rhs)
            }
        }
        impl $tr<Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$f(&self, &rhs)
            }
        }
        impl<S: Scalar> $tr<S> for &Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: S) -> Result<Tensor> {
                Tensor::$fs(self, rhs.to_f64())
            }
        }
        impl<S: Scalar> $tr<S> for Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: S) -> Result<Tensor> {
                Tensor::$fs(&self, rhs.to_f64())
            }
        }
        operator!(@left $tr $m $rs f64);
        operator!(@left $tr $m $rs i64);
    )*};
    (@left $tr:ident $m:ident $rs:ident $s:ty) => {
        impl $tr<&Tensor> for $s {
            type Output = Result<Tensor>;
            fn $m(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$rs(rhs, self.to_f64())
            }
        }
        impl $tr<Tensor> for $s {
            type Output = Result<Tensor>;
            fn $m(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$rs(&rhs, self.to_f64())
            }
        }
    };
}
// Scalar on the left: `+` and `*` commute; `s - t` and `s / t` have helpers above.
operator!(Add add add add_scalar add_scalar, Sub sub sub sub_scalar rsub_scalar,
          Mul mul mul mul_scalar mul_scalar, Div div div div_scalar rdiv_scalar);

impl Neg for &Tensor {
    type Output = Result<Tensor>;
    /// `-t` (`dt_neg`): integer dtypes stay integer; a bool tensor is
    /// [`ErrorCode::DtypeMismatch`].
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(self)
    }
}
impl Neg for Tensor {
    type Output = Result<Tensor>;
    /// `-t`, as for `&Tensor`.
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(&self)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::leak_checked;
    use crate::{DType, Device, ErrorCode, Tensor};

    fn t(v: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(v, shape, Device::CPU).unwrap()
    }

    #[test]
    fn arithmetic_and_operators() {
        leak_checked(|| {
            let a = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
            let b = t(&[10.0, 20.0], &[2]);
            assert_eq!(
                (&a + &b).unwrap().to_vec::<f32>().unwrap(),
                vec![11.0, 22.0, 13.0, 24.0]
            );
            assert_eq!(
                (&a - &b).unwrap().to_vec::<f32>().unwrap(),
                vec![-9.0, -18.0, -7.0, -16.0]
            );
            assert_eq!(
                (&a * 2.0).unwrap().to_vec::<f32>().unwrap(),
                vec![2.0, 4.0, 6.0, 8.0]
            );
            assert_eq!((&a / &a).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 4]);
            assert_eq!(
                a.matmul(&a).unwrap().to_vec::<f32>().unwrap(),
                vec![7.0, 10.0, 15.0, 22.0]
            );
            assert_eq!(
                a.pow_scalar(2.0).unwrap().to_vec::<f32>().unwrap(),
                vec![1.0, 4.0, 9.0, 16.0]
            );
            assert_eq!(
                a.gt_scalar(2.0).unwrap().to_vec::<bool>().unwrap(),
                vec![false, false, true, true]
            );
            assert_eq!(
                a.maximum(&b).unwrap().to_vec::<f32>().unwrap(),
                vec![10.0, 20.0, 10.0, 20.0]
            );
            assert_eq!(
                a.neg().unwrap().relu().unwrap().to_vec::<f32>().unwrap(),
                vec![0.0; 4]
            );
            let e = (&a + &t(&[1.0, 2.0, 3.0], &[3])).unwrap_err();
            assert_eq!(e.code, ErrorCode::ShapeMismatch, "{e}");
            let bools = Tensor::from_slice(&[true], &[1], Device::CPU).unwrap();
            assert_eq!(
                (&bools - &bools).unwrap_err().code,
                ErrorCode::DtypeMismatch
            );
        });
    }

    #[test]
    fn operators_on_owned_and_borrowed_operands() {
        leak_checked(|| {
            let v = |r: crate::Result<Tensor>| r.unwrap().to_vec::<f32>().unwrap();
            let a = t(&[1.0, 2.0, 4.0], &[3]);
            let b = t(&[2.0, 8.0, 16.0], &[3]);
            // Tensor op Tensor in all four ownership mixes (owned operands are clones).
            assert_eq!(v(&a + &b), vec![3.0, 10.0, 20.0]);
            assert_eq!(v(a.clone() + &b), vec![3.0, 10.0, 20.0]);
            assert_eq!(v(&a + b.clone()), vec![3.0, 10.0, 20.0]);
            assert_eq!(v(a.clone() + b.clone()), vec![3.0, 10.0, 20.0]);
            assert_eq!(v(&a - &b), vec![-1.0, -6.0, -12.0]);
            assert_eq!(v(a.clone() - b.clone()), vec![-1.0, -6.0, -12.0]);
            assert_eq!(v(&a * b.clone()), vec![2.0, 16.0, 64.0]);
            assert_eq!(v(a.clone() * &b), vec![2.0, 16.0, 64.0]);
            assert_eq!(v(&b / &a), vec![2.0, 4.0, 4.0]);
            assert_eq!(v(b.clone() / a.clone()), vec![2.0, 4.0, 4.0]);
            // The issue's chain: (a + b) * a without extra borrows.
            let chain = ((&a + &b).unwrap() * &a).unwrap();
            assert_eq!(chain.to_vec::<f32>().unwrap(), vec![3.0, 20.0, 80.0]);
            // Scalars on the right: f32, f64, i64.
            assert_eq!(v(&a + 1.5f32), vec![2.5, 3.5, 5.5]);
            assert_eq!(v(a.clone() - 1.0f64), vec![0.0, 1.0, 3.0]);
            assert_eq!(v(&a * 3i64), vec![3.0, 6.0, 12.0]);
            assert_eq!(v(a.clone() / 2i64), vec![0.5, 1.0, 2.0]);
            // Scalars on the left.
            assert_eq!(v(1.5 + &a), vec![2.5, 3.5, 5.5]);
            assert_eq!(v(10.0f64 - &a), vec![9.0, 8.0, 6.0]);
            assert_eq!(v(10i64 - a.clone()), vec![9.0, 8.0, 6.0]);
            assert_eq!(v(3i64 * &a), vec![3.0, 6.0, 12.0]);
            assert_eq!(v(2.0 * a.clone()), vec![2.0, 4.0, 8.0]);
            assert_eq!(v(2 * &a), vec![2.0, 4.0, 8.0]); // bare literals infer f64 / i64
            assert_eq!(v(&a * 2), vec![2.0, 4.0, 8.0]); // i32 on the right
            assert_eq!(v(&a - 0.5), vec![0.5, 1.5, 3.5]);
            assert_eq!(v(8.0f64 / &a), vec![8.0, 4.0, 2.0]);
            assert_eq!(v(1i64 / a.clone()), vec![1.0, 0.5, 0.25]);
            // Neg, borrowed and owned.
            assert_eq!(v(-&a), vec![-1.0, -2.0, -4.0]);
            assert_eq!(v(-a.clone()), vec![-1.0, -2.0, -4.0]);
            // Integer tensors: an integral scalar keeps the dtype, s - t too; s / t is
            // true division into the default float dtype, as in PyTorch.
            let i = Tensor::from_slice(&[1i64, 2, 4], &[3], Device::CPU).unwrap();
            assert_eq!((&i + 1i64).unwrap().to_vec::<i64>().unwrap(), vec![2, 3, 5]);
            assert_eq!((10i64 - &i).unwrap().to_vec::<i64>().unwrap(), vec![9, 8, 6]);
            assert_eq!((-&i).unwrap().to_vec::<i64>().unwrap(), vec![-1, -2, -4]);
            let q = (2i64 / &i).unwrap();
            assert_eq!(q.dtype(), DType::Float32);
            assert_eq!(q.to_vec::<f32>().unwrap(), vec![2.0, 1.0, 0.5]);
            let h = (&i * 0.5f64).unwrap(); // a non-integral scalar promotes
            assert_eq!(h.to_vec::<f32>().unwrap(), vec![0.5, 1.0, 2.0]);
            // float64 stays float64 whichever side the scalar is on.
            let d = Tensor::from_slice(&[4.0f64], &[1], Device::CPU).unwrap();
            assert_eq!((1.0 / &d).unwrap().to_vec::<f64>().unwrap(), vec![0.25]);
            assert_eq!((&d / 8.0f32).unwrap().to_vec::<f64>().unwrap(), vec![0.5]);
            // Errors are values, not panics.
            let e = (a.clone() + t(&[1.0, 2.0], &[2])).unwrap_err();
            assert_eq!(e.code, ErrorCode::ShapeMismatch, "{e}");
            let bools = Tensor::from_slice(&[true], &[1], Device::CPU).unwrap();
            assert_eq!((-&bools).unwrap_err().code, ErrorCode::DtypeMismatch);
            assert_eq!((1i64 - &bools).unwrap_err().code, ErrorCode::DtypeMismatch);
            // Autograd records through the scalar-left forms: d/dx sum(1/x - x) = -1/x^2 - 1.
            let x = t(&[1.0, 2.0], &[2]);
            x.set_requires_grad(true).unwrap();
            let y = ((1i64 / &x).unwrap() - &x).unwrap();
            y.sum(&[], false).unwrap().backward().unwrap();
            assert_eq!(
                x.grad().unwrap().unwrap().to_vec::<f32>().unwrap(),
                vec![-2.0, -1.25]
            );
        });
    }

    #[test]
    fn sum_all_isclose_and_allclose() {
        leak_checked(|| {
            let a = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
            let s = a.sum_all().unwrap();
            assert_eq!((s.shape(), s.item().unwrap()), (vec![], 10.0));
            let i = Tensor::from_slice(&[true, true, false], &[3], Device::CPU).unwrap();
            assert_eq!((i.sum_all().unwrap().dtype(), i.sum_all().unwrap().item().unwrap()), (DType::Int64, 2.0));
            // |a - b| <= atol + rtol * |b|: 1e-5 * 1000 + 1e-8 = 0.01000001 at b = 1000.
            let x = Tensor::from_slice(&[1000.0f64, 0.0, 1.0], &[3], Device::CPU).unwrap();
            let y = Tensor::from_slice(&[1000.009f64, 1e-9, 1.0], &[3], Device::CPU).unwrap();
            assert!(x.allclose(&y).unwrap());
            let z = Tensor::from_slice(&[1000.011f64, 1e-9, 1.0], &[3], Device::CPU).unwrap();
            assert!(!x.allclose(&z).unwrap());
            assert_eq!(x.isclose(&z, 1e-5, 1e-8, false).unwrap().to_vec::<bool>().unwrap(), vec![false, true, true]);
            // Infinities equal to themselves are close; NaN only with equal_nan.
            let inf = Tensor::from_slice(&[f32::INFINITY, f32::NAN], &[2], Device::CPU).unwrap();
            assert_eq!(inf.isclose(&inf, 1e-5, 1e-8, false).unwrap().to_vec::<bool>().unwrap(), vec![true, false]);
            assert!(inf.allclose_with(&inf, 1e-5, 1e-8, true).unwrap());
            let ninf = Tensor::from_slice(&[f32::NEG_INFINITY, 0.0], &[2], Device::CPU).unwrap();
            assert_eq!(inf.isclose(&ninf, 1.0, 1.0, true).unwrap().to_vec::<bool>().unwrap(), vec![false, false]);
            // Broadcasting, integers, an empty tensor, errors.
            assert!(!a.allclose(&t(&[1.0, 2.0], &[2])).unwrap());
            assert!(t(&[2.0, 2.0], &[2]).allclose(&t(&[2.0], &[1])).unwrap());
            let ints = Tensor::from_slice(&[10i64, 20], &[2], Device::CPU).unwrap();
            let ints2 = Tensor::from_slice(&[11i64, 20], &[2], Device::CPU).unwrap();
            assert!(ints.allclose_with(&ints2, 0.1, 0.0, false).unwrap());
            assert!(!ints.allclose(&ints2).unwrap());
            let empty = Tensor::zeros(&[0], DType::Float32, Device::CPU).unwrap();
            assert!(empty.allclose(&empty).unwrap());
            assert_eq!(a.allclose(&t(&[1.0, 2.0, 3.0], &[3])).unwrap_err().code, ErrorCode::ShapeMismatch);
            assert_eq!(a.isclose(&a, -1.0, 0.0, false).unwrap_err().code, ErrorCode::InvalidArgument);
            // Outside autograd.
            a.set_requires_grad(true).unwrap();
            assert!(!a.isclose(&a, 1e-5, 1e-8, false).unwrap().requires_grad());
        });
    }

    #[test]
    fn reductions_and_softmax() {
        leak_checked(|| {
            let a = t(&[1.0, 5.0, 3.0, 2.0], &[2, 2]);
            assert_eq!(
                a.sum(&[0], false).unwrap().to_vec::<f32>().unwrap(),
                vec![4.0, 7.0]
            );
            assert_eq!(a.mean(&[], false).unwrap().item().unwrap(), 2.75);
            assert_eq!(a.max(&[1], true).unwrap().shape(), vec![2, 1]);
            assert_eq!(a.min(&[], false).unwrap().item().unwrap(), 1.0);
            assert_eq!(
                a.argmax(&[1], false).unwrap().to_vec::<i64>().unwrap(),
                vec![1, 0]
            );
            assert_eq!(a.argmin(&[], false).unwrap().item().unwrap(), 0.0);
            let s = a
                .softmax(1)
                .unwrap()
                .sum(&[1], false)
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            assert!(s.iter().all(|x| (x - 1.0).abs() < 1e-6));
            let l = a
                .log_softmax(1)
                .unwrap()
                .exp()
                .unwrap()
                .sum(&[], false)
                .unwrap()
                .item()
                .unwrap();
            assert!((l - 2.0).abs() < 1e-5);
            let i = Tensor::from_slice(&[1i32, 2], &[2], Device::CPU).unwrap();
            assert_eq!(i.sum(&[], false).unwrap().dtype(), DType::Int64);
            assert_eq!(
                i.mean(&[], false).unwrap_err().code,
                ErrorCode::DtypeMismatch
            );
        });
    }

    #[test]
    fn views_and_joins() {
        leak_checked(|| {
            let a = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU).unwrap();
            let m = a.reshape(&[2, 3]).unwrap();
            assert!(m.shares_storage(&a));
            let tr = m.transpose(0, 1).unwrap();
            assert_eq!(tr.shape(), vec![3, 2]);
            assert!(!tr.is_contiguous());
            assert_eq!(
                tr.contiguous().unwrap().to_vec::<f32>().unwrap(),
                vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
            );
            assert_eq!(m.permute(&[1, 0]).unwrap().shape(), vec![3, 2]);
            assert_eq!(
                m.narrow(1, 1, 2).unwrap().to_vec::<f32>().unwrap(),
                vec![1.0, 2.0, 4.0, 5.0]
            );
            let u = m.unsqueeze(0).unwrap();
            assert_eq!(u.shape(), vec![1, 2, 3]);
            assert_eq!(u.squeeze(&[]).unwrap().shape(), vec![2, 3]);
            assert_eq!(
                m.narrow(0, 0, 1).unwrap().expand(&[4, 3]).unwrap().shape(),
                vec![4, 3]
            );
            assert_eq!(u.flatten(0, -1).unwrap().shape(), vec![6]);
            assert_eq!(m.view(&[3, 2]).unwrap().shape(), vec![3, 2]);
            assert_eq!(tr.view(&[6]).unwrap_err().code, ErrorCode::ShapeMismatch);
            assert_eq!(
                m.reshape(&[4, 2]).unwrap_err().code,
                ErrorCode::ShapeMismatch
            );
            let c = Tensor::cat(&[&m, &m], 0).unwrap();
            assert_eq!(c.shape(), vec![4, 3]);
            let s = Tensor::stack(&[&m, &m, &m], 0).unwrap();
            assert_eq!(s.shape(), vec![3, 2, 3]);
            let parts = a.chunk(3, 0).unwrap();
            assert_eq!(parts.len(), 3);
            assert_eq!(parts[2].to_vec::<f32>().unwrap(), vec![4.0, 5.0]);
            assert_eq!(a.split(4, 0).unwrap().len(), 2);
            let idx = Tensor::from_slice(&[2i64, 0], &[2], Device::CPU).unwrap();
            assert_eq!(
                a.index_select(0, &idx).unwrap().to_vec::<f32>().unwrap(),
                vec![2.0, 0.0]
            );
            // a = 0..6: index_add adds rows at 2 and 0; scatter_add one element each.
            let twice = Tensor::from_slice(&[1i64, 1], &[2], Device::CPU).unwrap();
            let ones = Tensor::from_slice(&[1.0f32, 1.0], &[2], Device::CPU).unwrap();
            assert_eq!(
                a.index_add(0, &twice, &ones).unwrap().to_vec::<f32>().unwrap(),
                vec![0.0, 3.0, 2.0, 3.0, 4.0, 5.0]
            );
            let at = Tensor::from_slice(&[5i64], &[1], Device::CPU).unwrap();
            let ten = Tensor::from_slice(&[10.0f32], &[1], Device::CPU).unwrap();
            assert_eq!(
                a.scatter_add(0, &at, &ten).unwrap().to_vec::<f32>().unwrap(),
                vec![0.0, 1.0, 2.0, 3.0, 4.0, 15.0]
            );
            assert_eq!(
                Tensor::cat(&[], 0).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
        });
    }

    /// `pad` against values worked out by hand: each mode on `[1, 2, 3]`, two dims of a
    /// `[2, 2]`, crops, an integer dtype, the gradients (each element gets its number of
    /// copies in the padded tensor), and the errors.
    #[test]
    fn pad_by_hand() {
        use crate::PadMode;
        leak_checked(|| {
            let padded = |x: &Tensor, pad: &[i64], mode: PadMode, value: f64| {
                let r = x.pad(pad, mode, value).unwrap();
                (r.shape(), r.to_vec::<f32>().unwrap())
            };
            let x = t(&[1.0, 2.0, 3.0], &[3]);
            assert_eq!(
                padded(&x, &[1, 2], PadMode::Constant, 9.0),
                (vec![6], vec![9.0, 1.0, 2.0, 3.0, 9.0, 9.0])
            );
            assert_eq!(
                padded(&x, &[2, 0], PadMode::Reflect, 0.0),
                (vec![5], vec![3.0, 2.0, 1.0, 2.0, 3.0])
            );
            assert_eq!(
                padded(&x, &[1, 2], PadMode::Replicate, 0.0),
                (vec![6], vec![1.0, 1.0, 2.0, 3.0, 3.0, 3.0])
            );
            assert_eq!(
                padded(&x, &[1, 1], PadMode::Circular, 0.0),
                (vec![5], vec![3.0, 1.0, 2.0, 3.0, 1.0])
            );
            assert_eq!(padded(&x, &[], PadMode::Constant, 0.0), (vec![3], vec![1.0, 2.0, 3.0]));

            // [[1, 2], [3, 4]]: the pairs go from the last dim backwards.
            let m = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
            assert_eq!(
                padded(&m, &[1, 0, 0, 1], PadMode::Constant, 0.0),
                (vec![3, 3], vec![0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0, 0.0, 0.0])
            );
            assert_eq!(
                padded(&m, &[1, 1, 1, 1], PadMode::Reflect, 0.0),
                (
                    vec![4, 4],
                    vec![4.0, 3.0, 4.0, 3.0, 2.0, 1.0, 2.0, 1.0, 4.0, 3.0, 4.0, 3.0, 2.0, 1.0, 2.0, 1.0]
                )
            );
            assert_eq!(
                padded(&m, &[0, 1, 1, 0], PadMode::Replicate, 0.0),
                (vec![3, 3], vec![1.0, 2.0, 2.0, 1.0, 2.0, 2.0, 3.0, 4.0, 4.0])
            );
            assert_eq!(
                padded(&m, &[1, 0, 0, 1], PadMode::Circular, 0.0),
                (vec![3, 3], vec![2.0, 1.0, 2.0, 4.0, 3.0, 4.0, 2.0, 1.0, 2.0])
            );

            // Negative values crop.
            let five = t(&[1.0, 2.0, 3.0, 4.0, 5.0], &[5]);
            assert_eq!(padded(&five, &[-1, -2], PadMode::Constant, 0.0), (vec![2], vec![2.0, 3.0]));
            assert_eq!(
                padded(&five, &[-1, 1], PadMode::Constant, 7.0),
                (vec![5], vec![2.0, 3.0, 4.0, 5.0, 7.0])
            );
            assert_eq!(padded(&m, &[0, 0, -1, 0], PadMode::Constant, 0.0), (vec![1, 2], vec![3.0, 4.0]));

            // An integer tensor keeps its dtype.
            let ints = Tensor::from_slice(&[1i64, 2, 3], &[3], Device::CPU).unwrap();
            let ip = ints.pad(&[1, 1], PadMode::Constant, -4.0).unwrap();
            assert_eq!(ip.dtype(), DType::Int64);
            assert_eq!(ip.to_vec::<i64>().unwrap(), vec![-4, 1, 2, 3, -4]);

            // Gradients of the sum: each element's number of copies. reflect (2, 1) of
            // [a, b, c] is [c, b, a, b, c, b]: a once, b 3 times, c twice.
            let grad = |pad: &[i64], mode: PadMode| {
                let g = t(&[1.0, 2.0, 3.0], &[3]);
                g.set_requires_grad(true).unwrap();
                let p = g.pad(pad, mode, 0.0).unwrap();
                p.sum(&[], false).unwrap().backward().unwrap();
                (p.grad_fn_name().unwrap(), g.grad().unwrap().unwrap().to_vec::<f32>().unwrap())
            };
            assert_eq!(grad(&[2, 1], PadMode::Reflect).1, vec![1.0, 3.0, 2.0]);
            assert_eq!(grad(&[1, 2], PadMode::Replicate).1, vec![2.0, 1.0, 3.0]);
            assert_eq!(grad(&[1, 1], PadMode::Circular).1, vec![2.0, 1.0, 2.0]);
            assert_eq!(
                grad(&[1, 2], PadMode::Constant),
                ("ConstantPadNdBackward0".to_string(), vec![1.0, 1.0, 1.0])
            );
            assert_eq!(
                grad(&[-1, 0], PadMode::Constant),
                ("ConstantPadNdBackward0".to_string(), vec![0.0, 1.0, 1.0])
            );

            // PyTorch's names.
            let names: Vec<&str> = [PadMode::Constant, PadMode::Reflect, PadMode::Replicate, PadMode::Circular]
                .iter()
                .map(|m| m.as_str())
                .collect();
            assert_eq!(names, ["constant", "reflect", "replicate", "circular"]);
            assert_eq!(PadMode::default(), PadMode::Constant);

            // Errors.
            let code = |pad: &[i64], mode: PadMode, value: f64| x.pad(pad, mode, value).unwrap_err().code;
            assert_eq!(code(&[1], PadMode::Constant, 0.0), ErrorCode::InvalidArgument); // odd
            assert_eq!(code(&[1, 1, 1, 1], PadMode::Constant, 0.0), ErrorCode::InvalidArgument); // > 2 * ndim
            assert_eq!(code(&[3, 0], PadMode::Reflect, 0.0), ErrorCode::InvalidArgument); // not below the size
            assert_eq!(code(&[4, 0], PadMode::Circular, 0.0), ErrorCode::InvalidArgument); // over the size
            assert_eq!(code(&[-2, -2], PadMode::Constant, 0.0), ErrorCode::InvalidArgument); // a negative size
            assert_eq!(code(&[1, 1], PadMode::Reflect, 5.0), ErrorCode::InvalidArgument); // a value for reflect
        });
    }

    /// `leaky_relu` against values worked out by hand: `[-2, 0, 3]` with slope 0.1 is
    /// `[-0.2, 0, 3]`; the gradient is the slope where `x <= 0` (at 0 too), 1 elsewhere;
    /// floating tensors only; a slope that is not finite is refused.
    #[test]
    fn leaky_relu_by_hand() {
        leak_checked(|| {
            let x = Tensor::from_slice(&[-2.0f64, 0.0, 3.0], &[3], Device::CPU).unwrap();
            x.set_requires_grad(true).unwrap();
            let y = x.leaky_relu(0.1).unwrap();
            assert_eq!(y.to_vec::<f64>().unwrap(), vec![-0.2, 0.0, 3.0]);
            assert_eq!(y.grad_fn_name().unwrap(), "LeakyReluBackward0");
            y.sum(&[], false).unwrap().backward().unwrap();
            assert_eq!(x.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![0.1, 0.1, 1.0]);

            let x32 = t(&[-2.0, 0.0, 3.0, -0.5], &[2, 2]);
            let y32 = x32.leaky_relu(0.01).unwrap();
            assert_eq!(y32.shape(), vec![2, 2]);
            for (g, w) in y32.to_vec::<f32>().unwrap().iter().zip([-0.02f32, 0.0, 3.0, -0.005]) {
                assert!((g - w).abs() < 1e-7, "{g} against {w}");
            }
            // A slope of 0 is ReLU; a negative one is allowed (PyTorch's too).
            assert_eq!(x32.leaky_relu(0.0).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 0.0, 3.0, 0.0]);
            assert_eq!(x32.leaky_relu(-1.0).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 0.0, 3.0, 0.5]);

            let ints = Tensor::from_slice(&[-1i32, 2], &[2], Device::CPU).unwrap();
            assert_eq!(ints.leaky_relu(0.1).unwrap_err().code, ErrorCode::DtypeMismatch);
            assert_eq!(x32.leaky_relu(f64::NAN).unwrap_err().code, ErrorCode::InvalidArgument);
            assert_eq!(x32.leaky_relu(f64::INFINITY).unwrap_err().code, ErrorCode::InvalidArgument);
        });
    }

    /// `interpolate` against values worked out by hand: nearest by a factor and to a size
    /// (one value for every dim or one each), bilinear and trilinear with align corners (a
    /// linear function comes back exact), bilinear and linear without (the positions
    /// clamped at both ends), nearest by a fractional factor, the gradients, the modes'
    /// names, and the errors (PyTorch's modes that the library lacks through the raw call,
    /// as [`InterpolateMode`] has no variant for them).
    #[test]
    fn interpolate_by_hand() {
        use crate::error::check;
        use crate::InterpolateMode::{self, Bilinear, Linear, Nearest, Trilinear};
        use devtensor_sys as ffi;
        leak_checked(|| {
            let resized = |x: &Tensor, size: Option<&[i64]>, scale: Option<&[f64]>, mode: InterpolateMode, ac: bool| {
                let r = x.interpolate(size, scale, mode, ac).unwrap();
                (r.shape(), r.to_vec::<f32>().unwrap())
            };
            let close = |got: &[f32], want: &[f32]| {
                assert_eq!(got.len(), want.len(), "{got:?} against {want:?}");
                for (g, w) in got.iter().zip(want) {
                    assert!((g - w).abs() < 1e-6, "{got:?} against {want:?}");
                }
            };
            // [[0, 3], [6, 9]]: each element becomes a 2x2 block.
            let x = t(&[0.0, 3.0, 6.0, 9.0], &[1, 1, 2, 2]);
            let blocks = vec![0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 3.0, 3.0, 6.0, 6.0, 9.0, 9.0, 6.0, 6.0, 9.0, 9.0];
            assert_eq!(resized(&x, None, Some(&[2.0]), Nearest, false), (vec![1, 1, 4, 4], blocks.clone()));
            assert_eq!(resized(&x, None, Some(&[2.0, 2.0]), Nearest, false), (vec![1, 1, 4, 4], blocks.clone()));
            assert_eq!(resized(&x, Some(&[4]), None, Nearest, false), (vec![1, 1, 4, 4], blocks));
            assert_eq!(resized(&x, Some(&[1, 4]), None, Nearest, false), (vec![1, 1, 1, 4], vec![0.0, 0.0, 3.0, 3.0]));

            // bilinear, align corners, to (2, 4): the rows stay, the columns read 0, 1/3,
            // 2/3, 1.
            let (shape, v) = resized(&x, Some(&[2, 4]), None, Bilinear, true);
            assert_eq!(shape, vec![1, 1, 2, 4]);
            close(&v, &[0.0, 1.0, 2.0, 3.0, 6.0, 7.0, 8.0, 9.0]);
            // Without align corners the columns read (j + 0.5) / 2 - 0.5 clamped to [0, 1]:
            // 0, 0.25, 0.75, 1; the rows i.
            let (shape, v) = resized(&x, Some(&[2, 4]), None, Bilinear, false);
            assert_eq!(shape, vec![1, 1, 2, 4]);
            close(&v, &[0.0, 0.75, 2.25, 3.0, 6.0, 6.75, 8.25, 9.0]);

            // linear, [0, 4] to 4 without align corners: positions 0 (clamped from -0.25),
            // 0.25, 0.75, 1 (1.25 clamped at the last element): 0, 1, 3, 4.
            let l = t(&[0.0, 4.0], &[1, 1, 2]);
            assert_eq!(resized(&l, Some(&[4]), None, Linear, false), (vec![1, 1, 4], vec![0.0, 1.0, 3.0, 4.0]));
            assert_eq!(resized(&l, Some(&[3]), None, Linear, true), (vec![1, 1, 3], vec![0.0, 2.0, 4.0]));

            // nearest, [0 .. 4] by 1.5: 7 elements, output i reads floor(i / 1.5).
            let five = t(&[0.0, 1.0, 2.0, 3.0, 4.0], &[1, 1, 5]);
            assert_eq!(
                resized(&five, None, Some(&[1.5]), Nearest, false),
                (vec![1, 1, 7], vec![0.0, 0.0, 1.0, 2.0, 2.0, 3.0, 4.0])
            );

            // trilinear, align corners, 2x2x2 to 3x3x3 of v(d, h, w) = 4d + 2h + w: linear,
            // so exact, output (i, j, k) = 4 i/2 + 2 j/2 + k/2.
            let cube = t(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], &[1, 1, 2, 2, 2]);
            let mut tri = Vec::new();
            for i in 0..3 {
                for j in 0..3 {
                    for k in 0..3 {
                        tri.push(2.0 * i as f32 + j as f32 + 0.5 * k as f32);
                    }
                }
            }
            let (shape, v) = resized(&cube, Some(&[3]), None, Trilinear, true);
            assert_eq!(shape, vec![1, 1, 3, 3, 3]);
            close(&v, &tri);

            // The gradient of the sum of bilinear align corners to (2, 4): each column
            // weight pair (1 - c, c) for c = 0, 1/3, 2/3, 1 adds up to 2 per input element;
            // nearest by 2 copies each element 4 times.
            let g = Tensor::from_slice(&[0.0f64, 3.0, 6.0, 9.0], &[1, 1, 2, 2], Device::CPU).unwrap();
            g.set_requires_grad(true).unwrap();
            let y = g.interpolate(Some(&[2, 4]), None, Bilinear, true).unwrap();
            assert_eq!(y.grad_fn_name().unwrap(), "UpsampleBilinear2DBackward1");
            for (got, want) in y.to_vec::<f64>().unwrap().iter().zip([0.0, 1.0, 2.0, 3.0, 6.0, 7.0, 8.0, 9.0]) {
                assert!((got - want).abs() < 1e-12, "{got} against {want}");
            }
            y.sum(&[], false).unwrap().backward().unwrap();
            for got in g.grad().unwrap().unwrap().to_vec::<f64>().unwrap() {
                assert!((got - 2.0).abs() < 1e-12, "gradient {got}");
            }
            let g2 = Tensor::from_slice(&[0.0f64, 3.0, 6.0, 9.0], &[1, 1, 2, 2], Device::CPU).unwrap();
            g2.set_requires_grad(true).unwrap();
            g2.interpolate(None, Some(&[2.0]), Nearest, false).unwrap().sum(&[], false).unwrap().backward().unwrap();
            assert_eq!(g2.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![4.0; 4]);

            // PyTorch's names.
            let names: Vec<&str> = [Nearest, Linear, Bilinear, Trilinear].iter().map(|m| m.as_str()).collect();
            assert_eq!(names, ["nearest", "linear", "bilinear", "trilinear"]);
            assert_eq!(InterpolateMode::default(), Nearest);

            // Errors.
            let code = |x: &Tensor, size: Option<&[i64]>, scale: Option<&[f64]>, mode: InterpolateMode, ac: bool| {
                x.interpolate(size, scale, mode, ac).unwrap_err().code
            };
            assert_eq!(code(&x, Some(&[4, 4]), Some(&[2.0]), Nearest, false), ErrorCode::InvalidArgument); // both
            assert_eq!(code(&x, None, None, Nearest, false), ErrorCode::InvalidArgument); // neither
            assert_eq!(code(&x, Some(&[]), None, Nearest, false), ErrorCode::InvalidArgument); // no value
            assert_eq!(code(&x, Some(&[4, 4, 4]), None, Nearest, false), ErrorCode::InvalidArgument); // 3 for 2 dims
            assert_eq!(code(&x, Some(&[0]), None, Nearest, false), ErrorCode::InvalidArgument); // an empty output
            assert_eq!(code(&x, None, Some(&[0.0]), Nearest, false), ErrorCode::InvalidArgument); // factor 0
            assert_eq!(code(&x, Some(&[4]), None, Nearest, true), ErrorCode::InvalidArgument); // align corners
            let e = l.interpolate(Some(&[4, 4]), None, Bilinear, false).unwrap_err();
            assert_eq!(e.code, ErrorCode::ShapeMismatch);
            assert!(e.message.contains("bilinear"), "{e}");
            assert_eq!(code(&x, Some(&[4]), None, Linear, false), ErrorCode::ShapeMismatch); // linear on 4-d
            let ints = Tensor::from_slice(&[0i64, 3, 6, 9], &[1, 1, 2, 2], Device::CPU).unwrap();
            assert_eq!(code(&ints, None, Some(&[2.0]), Nearest, false), ErrorCode::DtypeMismatch);
            let flat = t(&[1.0, 2.0], &[2]);
            assert_eq!(code(&flat, Some(&[4]), None, Nearest, false), ErrorCode::ShapeMismatch); // no spatial dim

            // PyTorch's modes that the library does not have, through the raw call.
            let raw = |mode: &std::ffi::CStr| {
                let mut out: *mut ffi::dt_tensor = std::ptr::null_mut();
                let size = [4i64, 4];
                let st = unsafe {
                    ffi::dt_interpolate(x.as_ptr(), size.as_ptr(), std::ptr::null(), 2, mode.as_ptr(), 0, &mut out)
                };
                assert!(out.is_null());
                check(st).unwrap_err()
            };
            for mode in [c"bicubic", c"area", c"nearest-exact"] {
                let e = raw(mode);
                assert_eq!(e.code, ErrorCode::NotSupported, "{mode:?}: {e}");
            }
            assert_eq!(raw(c"cubic").code, ErrorCode::InvalidArgument);
        });
    }
}

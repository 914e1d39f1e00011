//! Element types.
use crate::error::{Error, ErrorCode, Result};
use devtensor_sys as ffi;
use std::ffi::CStr;
use std::fmt;

/// The dtype of a tensor's elements (PyTorch's names: `Float32` is `torch.float32`).
/// `#[non_exhaustive]`: the library may add dtypes.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// `torch.float32`
    Float32,
    /// `torch.float64`
    Float64,
    /// `torch.float16` (IEEE half)
    Float16,
    /// `torch.bfloat16`
    BFloat16,
    /// `torch.int8`
    Int8,
    /// `torch.int16`
    Int16,
    /// `torch.int32`
    Int32,
    /// `torch.int64`
    Int64,
    /// `torch.uint8`
    UInt8,
    /// `torch.bool`
    Bool,
}

impl DType {
    /// The C ABI's form of an optional dtype: `None` is `DT_DTYPE_DEFAULT`, the process
    /// default for a constructor and "unchanged" for `dt_tensor_to`.
    pub(crate) fn raw_or_default(dtype: Option<DType>) -> ffi::dt_dtype {
        dtype.map_or(ffi::DT_DTYPE_DEFAULT, DType::to_raw)
    }

    pub(crate) fn to_raw(self) -> ffi::dt_dtype {
        match self {
            DType::Float32 => ffi::DT_FLOAT32,
            DType::Float64 => ffi::DT_FLOAT64,
            DType::Float16 => ffi::DT_FLOAT16,
            DType::BFloat16 => ffi::DT_BFLOAT16,
            DType::Int8 => ffi::DT_INT8,
            DType::Int16 => ffi::DT_INT16,
            DType::Int32 => ffi::DT_INT32,
            DType::Int64 => ffi::DT_INT64,
            DType::UInt8 => ffi::DT_UINT8,
            DType::Bool => ffi::DT_BOOL,
        }
    }

    pub(crate) fn from_raw(d: ffi::dt_dtype) -> Result<DType> {
        Ok(match d {
            ffi::DT_FLOAT32 => DType::Float32,
            ffi::DT_FLOAT64 => DType::Float64,
            ffi::DT_FLOAT16 => DType::Float16,
            ffi::DT_BFLOAT16 => DType::BFloat16,
            ffi::DT_INT8 => DType::Int8,
            ffi::DT_INT16 => DType::Int16,
            ffi::DT_INT32 => DType::Int32,
            ffi::DT_INT64 => DType::Int64,
            ffi::DT_UINT8 => DType::UInt8,
            ffi::DT_BOOL => DType::Bool,
            other => {
                return Err(Error::new(
                    ErrorCode::DtypeMismatch,
                    format!("dtype code {other} is unknown to these bindings"),
                ))
            }
        })
    }

    /// Bytes per element (`dt_dtype_size`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!((DType::Float64.size(), DType::BFloat16.size(), DType::Bool.size()), (8, 2, 1));
    /// # Ok(()) }
    /// ```
    pub fn size(self) -> usize {
        let mut n = 0usize;
        // SAFETY: a valid out pointer. Every DType is a dtype of the header these bindings
        // come from, which the library knows (the version check: it is not older), so the
        // call cannot fail.
        let st = unsafe { ffi::dt_dtype_size(self.to_raw(), &mut n) };
        debug_assert_eq!(st, ffi::DT_OK);
        n
    }

    /// `true` for the floating dtypes.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert!(DType::Float16.is_floating_point() && !DType::Int64.is_floating_point());
    /// # Ok(()) }
    /// ```
    pub fn is_floating_point(self) -> bool {
        matches!(
            self,
            DType::Float32 | DType::Float64 | DType::Float16 | DType::BFloat16
        )
    }
}

impl fmt::Display for DType {
    /// PyTorch's name without `torch.`: `float32`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: static storage, never NULL.
        let s = unsafe { CStr::from_ptr(ffi::dt_dtype_name(self.to_raw())) };
        f.write_str(&s.to_string_lossy())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is the element type of a dtype: `f32 f64 i8 i16 i32 i64 u8 bool`.
/// Sealed: the binding relies on the layouts matching, so no other type can implement it.
pub trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The dtype whose elements this type holds.
    const DTYPE: DType;
    #[doc(hidden)]
    /// Copies `n` elements out with `dt_tensor_copy_to_host` (`Tensor::to_vec` checks
    /// the dtype first).
    fn copy_out(t: &crate::Tensor, n: usize) -> Result<Vec<Self>> {
        let mut v: Vec<Self> = Vec::with_capacity(n);
        let nbytes = n * std::mem::size_of::<Self>();
        // SAFETY: v has room for n elements = nbytes bytes, and the library writes
        // exactly nbytes (any other size is refused before anything is written). Every
        // bit pattern is a valid Self for all the types but bool, which overrides this.
        crate::error::check(unsafe {
            ffi::dt_tensor_copy_to_host(t.as_ptr(), v.as_mut_ptr().cast(), nbytes)
        })?;
        unsafe { v.set_len(n) };
        Ok(v)
    }
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t { const DTYPE: DType = DType::$d; }
    )*};
}
element!(f32 => Float32, f64 => Float64, i8 => Int8, i16 => Int16, i32 => Int32,
         i64 => Int64, u8 => UInt8);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    /// Reads bytes and maps nonzero to `true`, so a byte other than 0/1 (memory a caller
    /// shared through the C API) can never become an invalid `bool`.
    fn copy_out(t: &crate::Tensor, n: usize) -> Result<Vec<bool>> {
        let bytes = u8::copy_out(t, n)?;
        Ok(bytes.into_iter().map(|b| b != 0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_the_library() {
        for (d, n) in [
            (DType::Float32, 4),
            (DType::Float64, 8),
            (DType::Float16, 2),
            (DType::BFloat16, 2),
            (DType::Int8, 1),
            (DType::Int16, 2),
            (DType::Int32, 4),
            (DType::Int64, 8),
            (DType::UInt8, 1),
            (DType::Bool, 1),
        ] {
            assert_eq!(d.size(), n, "{d}");
        }
        assert_eq!(DType::Float64.size(), std::mem::size_of::<f64>());
        assert_eq!(DType::Bool.size(), std::mem::size_of::<bool>());
    }
}

//! `Error` and `ErrorCode`: a failed C call becomes `Err(Error)` carrying the status code
//! and the detail message the library recorded for it.
use devtensor_sys as ffi;
use std::ffi::CStr;
use std::fmt;

/// The kind of failure: one variant per `DT_ERR_*` code of the header, plus the
/// failures the binding itself detects. `#[non_exhaustive]`: a newer library may add
/// codes, which arrive as [`ErrorCode::Unknown`] until the binding learns them.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `DT_ERR_INVALID_ARGUMENT`: an out-of-range value, bad text, a NULL pointer.
    InvalidArgument,
    /// `DT_ERR_INVALID_HANDLE`: a released or wrong-kind handle.
    InvalidHandle,
    /// `DT_ERR_INVALID_DEVICE`: a device ordinal or type that does not exist.
    InvalidDevice,
    /// `DT_ERR_DEVICE_UNAVAILABLE`: the device type cannot be used here (no CUDA, ...).
    DeviceUnavailable,
    /// `DT_ERR_DEVICE_MISMATCH`: operands live on different devices.
    DeviceMismatch,
    /// `DT_ERR_SHAPE_MISMATCH`: shapes that cannot be combined or viewed.
    ShapeMismatch,
    /// `DT_ERR_DTYPE_MISMATCH`: a dtype the operation does not accept (also: `to_vec`
    /// asked for an element type that is not the tensor's dtype).
    DtypeMismatch,
    /// `DT_ERR_OUT_OF_MEMORY`: an allocation failed, on any device.
    OutOfMemory,
    /// `DT_ERR_DEVICE_LOST`: a sticky device error; the device is unusable.
    DeviceLost,
    /// `DT_ERR_BACKEND`: a backend library (BLAS, CUDA, ...) reported an error.
    Backend,
    /// `DT_ERR_NOT_SUPPORTED`: valid, but not implemented for these arguments.
    NotSupported,
    /// `DT_ERR_IO`: reading or writing a file failed.
    Io,
    /// `DT_ERR_FORMAT`: a file or buffer is malformed.
    Format,
    /// `DT_ERR_INTERNAL`: a bug in devtensor.
    Internal,
    /// `DT_ERR_DISTRIBUTED`: a process group failed (a peer exited, or did not join or
    /// answer within the timeout); the group is unusable (see
    /// [`ProcessGroup`](crate::ProcessGroup)).
    Distributed,
    /// The loaded library is older than the header these bindings were generated from,
    /// or of another major version (detected by the binding, no C code).
    Version,
    /// A status code this binding does not know (from a newer library).
    Unknown(i32),
}

impl ErrorCode {
    /// The code for a nonzero `dt_status`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!(ErrorCode::from_status(ErrorCode::ShapeMismatch.status().unwrap()), ErrorCode::ShapeMismatch);
    /// assert_eq!(ErrorCode::from_status(9999), ErrorCode::Unknown(9999));
    /// # Ok(()) }
    /// ```
    pub fn from_status(status: i32) -> ErrorCode {
        match status {
            ffi::DT_ERR_INVALID_ARGUMENT => ErrorCode::InvalidArgument,
            ffi::DT_ERR_INVALID_HANDLE => ErrorCode::InvalidHandle,
            ffi::DT_ERR_INVALID_DEVICE => ErrorCode::InvalidDevice,
            ffi::DT_ERR_DEVICE_UNAVAILABLE => ErrorCode::DeviceUnavailable,
            ffi::DT_ERR_DEVICE_MISMATCH => ErrorCode::DeviceMismatch,
            ffi::DT_ERR_SHAPE_MISMATCH => ErrorCode::ShapeMismatch,
            ffi::DT_ERR_DTYPE_MISMATCH => ErrorCode::DtypeMismatch,
            ffi::DT_ERR_OUT_OF_MEMORY => ErrorCode::OutOfMemory,
            ffi::DT_ERR_DEVICE_LOST => ErrorCode::DeviceLost,
            ffi::DT_ERR_BACKEND => ErrorCode::Backend,
            ffi::DT_ERR_NOT_SUPPORTED => ErrorCode::NotSupported,
            ffi::DT_ERR_IO => ErrorCode::Io,
            ffi::DT_ERR_FORMAT => ErrorCode::Format,
            ffi::DT_ERR_INTERNAL => ErrorCode::Internal,
            ffi::DT_ERR_DISTRIBUTED => ErrorCode::Distributed,
            other => ErrorCode::Unknown(other),
        }
    }

    /// The `dt_status` value, or `None` for [`ErrorCode::Version`], which has none.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let e = Tensor::zeros(&[2], DType::Float32, Device::CPU)?.reshape(&[3]).unwrap_err();
    /// assert_eq!(e.code.status(), Some(devtensor::sys::DT_ERR_SHAPE_MISMATCH));
    /// assert_eq!(ErrorCode::Version.status(), None); // the bindings' own
    /// # Ok(()) }
    /// ```
    pub fn status(self) -> Option<i32> {
        Some(match self {
            ErrorCode::InvalidArgument => ffi::DT_ERR_INVALID_ARGUMENT,
            ErrorCode::InvalidHandle => ffi::DT_ERR_INVALID_HANDLE,
            ErrorCode::InvalidDevice => ffi::DT_ERR_INVALID_DEVICE,
            ErrorCode::DeviceUnavailable => ffi::DT_ERR_DEVICE_UNAVAILABLE,
            ErrorCode::DeviceMismatch => ffi::DT_ERR_DEVICE_MISMATCH,
            ErrorCode::ShapeMismatch => ffi::DT_ERR_SHAPE_MISMATCH,
            ErrorCode::DtypeMismatch => ffi::DT_ERR_DTYPE_MISMATCH,
            ErrorCode::OutOfMemory => ffi::DT_ERR_OUT_OF_MEMORY,
            ErrorCode::DeviceLost => ffi::DT_ERR_DEVICE_LOST,
            ErrorCode::Backend => ffi::DT_ERR_BACKEND,
            ErrorCode::NotSupported => ffi::DT_ERR_NOT_SUPPORTED,
            ErrorCode::Io => ffi::DT_ERR_IO,
            ErrorCode::Format => ffi::DT_ERR_FORMAT,
            ErrorCode::Internal => ffi::DT_ERR_INTERNAL,
            ErrorCode::Distributed => ffi::DT_ERR_DISTRIBUTED,
            ErrorCode::Version => return None,
            ErrorCode::Unknown(c) => c,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status() {
            // SAFETY: dt_status_string never fails and returns static storage.
            Some(s) => {
                f.write_str(&unsafe { CStr::from_ptr(ffi::dt_status_string(s)) }.to_string_lossy())
            }
            None => f.write_str("library version mismatch"),
        }
    }
}

/// A failed devtensor call: the code and the library's detail message, e.g.
/// `DeviceMismatch`, `"add: expected device cpu:0 but got device cpu:1"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub code: ErrorCode,
    /// The detail (`dt_last_error_message()` fetched right after the failing call, on
    /// the same thread), or the binding's own description.
    pub message: String,
}

impl Error {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.code)
        } else {
            write!(f, "{} ({})", self.message, self.code)
        }
    }
}

impl std::error::Error for Error {}

/// `Result<T, devtensor::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

/// Turns a status into a `Result`. Must be called right after the C call, on the same
/// thread (Rust never moves a running function to another OS thread), so the message
/// read from `dt_last_error_message()` is the one of this failure.
#[inline]
pub(crate) fn check(status: ffi::dt_status) -> Result<()> {
    if status == ffi::DT_OK {
        Ok(())
    } else {
        Err(last_error(status))
    }
}

#[cold]
fn last_error(status: ffi::dt_status) -> Error {
    // SAFETY: never NULL; borrowed until the next failing call on this thread, and we
    // copy it at once.
    let msg = unsafe { CStr::from_ptr(ffi::dt_last_error_message()) }
        .to_string_lossy()
        .into_owned();
    Error::new(ErrorCode::from_status(status), msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_code_maps_both_ways() {
        for status in 1..=ffi::DT_ERR_DISTRIBUTED {
            let code = ErrorCode::from_status(status);
            assert!(
                !matches!(code, ErrorCode::Unknown(_)),
                "status {status} is not known to the binding"
            );
            assert_eq!(code.status(), Some(status), "{code:?}");
            assert_ne!(code.to_string(), "unknown status", "{code:?}");
        }
        assert_eq!(
            ErrorCode::from_status(ffi::DT_ERR_DISTRIBUTED),
            ErrorCode::Distributed
        );
        assert_eq!(ErrorCode::from_status(99), ErrorCode::Unknown(99));
        assert_eq!(ErrorCode::Unknown(99).status(), Some(99));
        assert_eq!(ErrorCode::Version.status(), None);
    }
}

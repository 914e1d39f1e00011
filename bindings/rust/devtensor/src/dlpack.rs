//! DLPack: zero-copy exchange with other frameworks through `DLManagedTensor` pointers
//! (`include/devtensor.h`, "DLPack"). The pointers are raw: a consumer in another library
//! (or another language) takes them over.

use crate::error::{check, Result};
use crate::ffi;
use crate::Tensor;

impl Tensor {
    /// A new `DLManagedTensor` viewing this tensor's memory, shape, strides and device,
    /// without a copy. It keeps the memory alive (also after this `Tensor` is dropped)
    /// until its deleter is called; whoever ends up holding it must call the deleter
    /// exactly once (another framework's `from_dlpack` does).
    pub fn to_dlpack(&self) -> Result<*mut ffi::DLManagedTensor> {
        let mut out: *mut ffi::DLManagedTensor = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_tensor_to_dlpack(self.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// A tensor over the memory `managed` describes, without a copy. On success the
    /// returned tensor owns `managed` and calls its deleter once, when the last tensor
    /// using the memory is dropped; on error `managed` is untouched and still the
    /// caller's.
    ///
    /// # Safety
    /// `managed` must be NULL (an error) or point to a valid `DLManagedTensor` whose
    /// `dl_tensor` describes memory that stays valid until its deleter runs, and nobody
    /// else may call that deleter once this returns `Ok`.
    pub unsafe fn from_dlpack(managed: *mut ffi::DLManagedTensor) -> Result<Tensor> {
        // SAFETY: the caller vouches for managed; out is a valid out-pointer.
        Tensor::from_out(|out| unsafe { ffi::dt_tensor_from_dlpack(managed, out) })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Device, ErrorCode, Tensor};

    #[test]
    fn round_trip_keeps_the_memory_alive_after_the_original_is_dropped() {
        let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
        let m = a.to_dlpack().unwrap();
        // SAFETY: m comes from to_dlpack and is handed over exactly once.
        let b = unsafe { Tensor::from_dlpack(m) }.unwrap();
        assert_eq!(b.shape(), vec![2, 2]);
        drop(a);
        assert_eq!(b.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn null_is_an_invalid_argument() {
        // SAFETY: NULL is documented to fail.
        let err = unsafe { Tensor::from_dlpack(std::ptr::null_mut()) }.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
    }
}

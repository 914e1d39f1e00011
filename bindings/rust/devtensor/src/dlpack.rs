//! DLPack: zero-copy exchange with other frameworks through `DLManagedTensor` pointers
//! and DLPack 1.x's `DLManagedTensorVersioned` pointers, which carry a version and a
//! read-only flag (`include/devtensor.h`, "DLPack"). The pointers are raw: a consumer in
//! another library (or another language) takes them over.
//!
//! A versioned import flagged `DLPACK_FLAG_BITMASK_READ_ONLY` gives a read-only tensor
//! ([`Tensor::is_read_only`]): devtensor never writes its memory. Out-of-place operations
//! and `to` read it freely (and [`Tensor::deep_copy`] makes a writable copy); in-place
//! writes through the raw API fail with `InvalidArgument` ("the tensor is read-only"),
//! and it exports only as a versioned struct, which carries the flag.

use crate::error::{check, Result};
use crate::ffi;
use crate::Tensor;

impl Tensor {
    /// A new `DLManagedTensor` viewing this tensor's memory, shape, strides and device,
    /// without a copy. It keeps the memory alive (also after this `Tensor` is dropped)
    /// until its deleter is called; whoever ends up holding it must call the deleter
    /// exactly once (another framework's `from_dlpack` does). A read-only tensor
    /// ([`Tensor::is_read_only`]) fails with [`ErrorCode::NotSupported`], since this struct
    /// cannot carry the flag: export it with [`Tensor::to_dlpack_versioned`].
    ///
    /// [`ErrorCode::NotSupported`]: crate::ErrorCode::NotSupported
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let managed = x.to_dlpack()?; // for another framework, which calls its deleter
    /// // Here devtensor takes it back: zero-copy both ways.
    /// let y = unsafe { Tensor::from_dlpack(managed)? };
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_to_dlpack`: an
    /// [`Error`](crate::Error) with the library's code and message.
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
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let y = unsafe { Tensor::from_dlpack(x.to_dlpack()?)? };
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_from_dlpack`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub unsafe fn from_dlpack(managed: *mut ffi::DLManagedTensor) -> Result<Tensor> {
        // SAFETY: the caller vouches for managed; out is a valid out-pointer.
        Tensor::from_out(|out| unsafe { ffi::dt_tensor_from_dlpack(managed, out) })
    }

    /// [`Tensor::to_dlpack`] as a DLPack 1.0 `DLManagedTensorVersioned`: version `{1, 0}`,
    /// and `flags` [`DLPACK_FLAG_BITMASK_READ_ONLY`] when this tensor is read-only (else
    /// 0). Also exports read-only tensors. Ownership as [`Tensor::to_dlpack`]: the struct
    /// keeps the memory alive until its deleter is called, which whoever ends up holding
    /// it must do exactly once.
    ///
    /// [`DLPACK_FLAG_BITMASK_READ_ONLY`]: crate::sys::DLPACK_FLAG_BITMASK_READ_ONLY
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let managed = x.to_dlpack_versioned()?;
    /// assert_eq!(unsafe { (*managed).version.major }, 1);
    /// let y = unsafe { Tensor::from_dlpack_versioned(managed)? };
    /// assert!(!y.is_read_only());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_to_dlpack_versioned`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn to_dlpack_versioned(&self) -> Result<*mut ffi::DLManagedTensorVersioned> {
        let mut out: *mut ffi::DLManagedTensorVersioned = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_tensor_to_dlpack_versioned(self.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// [`Tensor::from_dlpack`] for a DLPack 1.x `DLManagedTensorVersioned`, with the same
    /// ownership: on success the returned tensor owns `managed` and calls its deleter
    /// once, when the last tensor using the memory is dropped; on error `managed` is
    /// untouched and still the caller's (its deleter is not called). Only major version 1
    /// is accepted: another is [`ErrorCode::NotSupported`] (naming the version), and
    /// nothing past the version is read. With `flags` [`DLPACK_FLAG_BITMASK_READ_ONLY`]
    /// the tensor, and every view of it, is read-only ([`Tensor::is_read_only`]).
    ///
    /// # Safety
    /// `managed` must be NULL (an error) or point to a valid `DLManagedTensorVersioned`
    /// whose `dl_tensor` describes memory that stays valid until its deleter runs, and
    /// nobody else may call that deleter once this returns `Ok`. The deleter may run on
    /// whichever thread drops the last tensor using the memory. Memory that must not be
    /// written has to be flagged read-only.
    ///
    /// [`ErrorCode::NotSupported`]: crate::ErrorCode::NotSupported
    /// [`DLPACK_FLAG_BITMASK_READ_ONLY`]: crate::sys::DLPACK_FLAG_BITMASK_READ_ONLY
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let y = unsafe { Tensor::from_dlpack_versioned(x.to_dlpack_versioned()?)? };
    /// assert_eq!(y.shape(), vec![2]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_from_dlpack_versioned`:
    /// an [`Error`](crate::Error) with the library's code and message.
    pub unsafe fn from_dlpack_versioned(
        managed: *mut ffi::DLManagedTensorVersioned,
    ) -> Result<Tensor> {
        // SAFETY: the caller vouches for managed; out is a valid out-pointer.
        Tensor::from_out(|out| unsafe { ffi::dt_tensor_from_dlpack_versioned(managed, out) })
    }

    /// [`Tensor::from_dlpack`] ordered after the producer's stream
    /// (`dt_tensor_from_dlpack_stream`): work queued afterwards on the calling thread's
    /// current stream of the tensor's device (see [`crate::with_stream`]) waits for the
    /// work queued on `producer_stream` so far, without the caller waiting.
    /// `producer_stream` is encoded as DLPack's `__dlpack__(stream=)`: for CUDA memory 1 is
    /// the legacy default stream, 2 the per-thread default stream, other values a
    /// `cudaStream_t` (for example another library's, or [`crate::Stream::native_handle`]),
    /// and 0 is refused as ambiguous; for host memory only -1 or 0 (no stream). -1 always
    /// means no ordering, as [`Tensor::from_dlpack`]. Ownership as
    /// [`Tensor::from_dlpack`]; on error (also [`ErrorCode::InvalidArgument`] for a stream
    /// value the device cannot have, [`ErrorCode::Backend`]) `managed` is untouched and
    /// still the caller's.
    ///
    /// # Safety
    /// As [`Tensor::from_dlpack`]; a CUDA `producer_stream` other than 1 and 2 must be a
    /// live `cudaStream_t` of the tensor's device.
    ///
    /// [`ErrorCode::InvalidArgument`]: crate::ErrorCode::InvalidArgument
    /// [`ErrorCode::Backend`]: crate::ErrorCode::Backend
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// // -1: no ordering needed (host memory: -1 or 0)
    /// let y = unsafe { Tensor::from_dlpack_stream(x.to_dlpack()?, -1)? };
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_from_dlpack_stream`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub unsafe fn from_dlpack_stream(
        managed: *mut ffi::DLManagedTensor,
        producer_stream: i64,
    ) -> Result<Tensor> {
        // SAFETY: the caller vouches for managed and the stream; out is a valid out-pointer.
        Tensor::from_out(|out| unsafe {
            ffi::dt_tensor_from_dlpack_stream(managed, producer_stream, out)
        })
    }

    /// [`Tensor::from_dlpack_versioned`] ordered after the producer's stream, as
    /// [`Tensor::from_dlpack_stream`] is [`Tensor::from_dlpack`]
    /// (`dt_tensor_from_dlpack_versioned_stream`): the same `producer_stream` values,
    /// ownership and errors, plus the version check and read-only flag of
    /// [`Tensor::from_dlpack_versioned`].
    ///
    /// # Safety
    /// As [`Tensor::from_dlpack_versioned`] and [`Tensor::from_dlpack_stream`].
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let y = unsafe { Tensor::from_dlpack_versioned_stream(x.to_dlpack_versioned()?, -1)? };
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for
    /// `dt_tensor_from_dlpack_versioned_stream`: an [`Error`](crate::Error) with the
    /// library's code and message.
    pub unsafe fn from_dlpack_versioned_stream(
        managed: *mut ffi::DLManagedTensorVersioned,
        producer_stream: i64,
    ) -> Result<Tensor> {
        // SAFETY: the caller vouches for managed and the stream; out is a valid out-pointer.
        Tensor::from_out(|out| unsafe {
            ffi::dt_tensor_from_dlpack_versioned_stream(managed, producer_stream, out)
        })
    }

    /// Whether devtensor must not write this tensor's memory: a versioned DLPack import
    /// flagged read-only, or a view of one (`dt_tensor_is_read_only`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert!(!x.is_read_only()); // only a DLPack import flagged read-only is
    /// # Ok(()) }
    /// ```
    pub fn is_read_only(&self) -> bool {
        let mut v = 0i32;
        // SAFETY: a live handle; cannot fail with a valid out pointer.
        unsafe { ffi::dt_tensor_is_read_only(self.as_ptr(), &mut v) };
        v != 0
    }
}

#[cfg(test)]
mod tests {
    use crate::error::check;
    use crate::ffi;
    use crate::test_support::leak_checked;
    use crate::{Device, ErrorCode, Tensor};
    use std::os::raw::c_void;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const READ_ONLY: u64 = ffi::DLPACK_FLAG_BITMASK_READ_ONLY;

    /// The address of a CPU tensor's first element (`dt_tensor_data_ptr`).
    fn data_ptr(t: &Tensor) -> crate::Result<*mut c_void> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_tensor_data_ptr(t.as_ptr(), &mut p) })?;
        Ok(p)
    }

    /// A `DLManagedTensorVersioned` built and owned by the test, over a float32 matrix the
    /// test owns too. Its deleter only counts its calls (in `deletes`, which
    /// `manager_ctx` points to) and frees nothing, so a second call would be counted
    /// rather than free anything twice. Boxed: `managed` points into it.
    struct Producer {
        data: Vec<f32>,
        shape: [i64; 2],
        deletes: AtomicUsize,
        managed: ffi::DLManagedTensorVersioned,
    }

    unsafe extern "C" fn count_delete(m: *mut ffi::DLManagedTensorVersioned) {
        // SAFETY: m is a Producer's `managed`, whose manager_ctx points to its counter.
        let deletes = unsafe { &*((*m).manager_ctx as *const AtomicUsize) };
        deletes.fetch_add(1, Ordering::SeqCst);
    }

    impl Producer {
        fn new(data: Vec<f32>, shape: [i64; 2], major: u32, flags: u64) -> Box<Producer> {
            assert_eq!(data.len() as i64, shape[0] * shape[1]);
            let mut p = Box::new(Producer {
                data,
                shape,
                deletes: AtomicUsize::new(0),
                managed: ffi::DLManagedTensorVersioned {
                    version: ffi::DLPackVersion { major, minor: 0 },
                    manager_ctx: std::ptr::null_mut(),
                    deleter: Some(count_delete),
                    flags,
                    dl_tensor: ffi::DLTensor {
                        data: std::ptr::null_mut(),
                        device: ffi::DLDevice {
                            device_type: ffi::DLDeviceType_kDLCPU,
                            device_id: 0,
                        },
                        ndim: 2,
                        dtype: ffi::DLDataType {
                            code: ffi::DLDataTypeCode_kDLFloat as u8,
                            bits: 32,
                            lanes: 1,
                        },
                        shape: std::ptr::null_mut(),
                        strides: std::ptr::null_mut(), // compact row-major
                        byte_offset: 0,
                    },
                },
            });
            // Read-only memory is never written: a pointer to the Vec's buffer will do.
            p.managed.dl_tensor.data = p.data.as_ptr() as *mut c_void;
            p.managed.dl_tensor.shape = p.shape.as_mut_ptr();
            p.managed.manager_ctx = &p.deletes as *const AtomicUsize as *mut c_void;
            p
        }

        fn as_ptr(&mut self) -> *mut ffi::DLManagedTensorVersioned {
            &mut self.managed
        }

        fn deletes(&self) -> usize {
            self.deletes.load(Ordering::SeqCst)
        }
    }

    #[test]
    fn round_trip_keeps_the_memory_alive_after_the_original_is_dropped() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
            let m = a.to_dlpack().unwrap();
            // SAFETY: m comes from to_dlpack and is handed over exactly once.
            let b = unsafe { Tensor::from_dlpack(m) }.unwrap();
            assert_eq!(b.shape(), vec![2, 2]);
            drop(a);
            assert_eq!(b.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        });
    }

    #[test]
    fn null_is_an_invalid_argument() {
        leak_checked(|| {
            // SAFETY: NULL is documented to fail.
            let err = unsafe { Tensor::from_dlpack(std::ptr::null_mut()) }.unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument);
            // SAFETY: likewise.
            let err = unsafe { Tensor::from_dlpack_versioned(std::ptr::null_mut()) }.unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument);
        });
    }

    #[test]
    fn versioned_round_trip_is_version_1_0_unflagged_and_zero_copy() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
            assert!(!a.is_read_only());
            let m = a.to_dlpack_versioned().unwrap();
            // SAFETY: m is a valid struct from to_dlpack_versioned, not handed over yet.
            let (version, flags, dl) = unsafe { ((*m).version, (*m).flags, (*m).dl_tensor) };
            assert_eq!((version.major, version.minor), (1, 0));
            assert_eq!(flags, 0);
            assert_eq!(dl.ndim, 2);
            // SAFETY: dl.shape holds ndim sizes while m lives.
            assert_eq!(unsafe { std::slice::from_raw_parts(dl.shape, 2) }, &[2, 2]);
            assert_eq!(dl.device.device_type, ffi::DLDeviceType_kDLCPU);
            assert_eq!(dl.data, data_ptr(&a).unwrap());

            // SAFETY: m comes from to_dlpack_versioned and is handed over exactly once.
            let b = unsafe { Tensor::from_dlpack_versioned(m) }.unwrap();
            assert!(!b.is_read_only());
            assert_eq!(data_ptr(&b).unwrap(), data_ptr(&a).unwrap());
            // Zero-copy: a write through one is seen by the other.
            // SAFETY: a live handle.
            check(unsafe { ffi::dt_add_scalar_(a.as_ptr(), 10.0) }).unwrap();
            assert_eq!(b.to_vec::<f32>().unwrap(), vec![11.0, 12.0, 13.0, 14.0]);
            drop(a);
            assert_eq!(b.to_vec::<f32>().unwrap(), vec![11.0, 12.0, 13.0, 14.0]);
        });
    }

    #[test]
    fn read_only_import_refuses_writes_and_exports_only_versioned() {
        leak_checked(|| {
            let values = vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
            let mut p = Producer::new(values.clone(), [2, 3], 1, READ_ONLY);
            // SAFETY: p outlives every tensor over it (all dropped below); the deleter is
            // left to devtensor.
            let t = unsafe { Tensor::from_dlpack_versioned(p.as_ptr()) }.unwrap();
            assert!(t.is_read_only());
            assert_eq!(t.shape(), vec![2, 3]);
            assert_eq!(t.to_vec::<f32>().unwrap(), values);
            let row = t.narrow(0, 1, 1).unwrap(); // a view is read-only too
            assert!(row.is_read_only());

            // In-place writes and the data pointer are refused, on the tensor and its view.
            for x in [&t, &row] {
                // SAFETY: a live handle.
                let e = check(unsafe { ffi::dt_add_scalar_(x.as_ptr(), 1.0) }).unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidArgument);
                assert!(e.message.contains("read-only"), "{e}");
                let e = data_ptr(x).unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidArgument);
                assert!(e.message.contains("read-only"), "{e}");
            }
            assert_eq!(p.data, values);

            // Out-of-place ops read it, and give writable tensors; so does deep_copy.
            let d = (&t * 2.0).unwrap();
            assert!(!d.is_read_only());
            assert_eq!(
                d.to_vec::<f32>().unwrap(),
                vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
            );
            assert_eq!(
                (&row + &row).unwrap().to_vec::<f32>().unwrap(),
                vec![8.0, 10.0, 12.0]
            );
            let c = t.deep_copy().unwrap();
            assert!(!c.is_read_only());

            // Only the versioned struct can carry the flag.
            let e = t.to_dlpack().unwrap_err();
            assert_eq!(e.code, ErrorCode::NotSupported);
            let m = t.to_dlpack_versioned().unwrap();
            // SAFETY: a valid struct from to_dlpack_versioned, not handed over yet.
            let (version, flags, data) = unsafe { ((*m).version, (*m).flags, (*m).dl_tensor.data) };
            assert_eq!((version.major, version.minor), (1, 0));
            assert_eq!(flags & READ_ONLY, READ_ONLY);
            assert_eq!(data as *const f32, p.data.as_ptr());
            // SAFETY: m comes from to_dlpack_versioned and is handed over exactly once.
            let u = unsafe { Tensor::from_dlpack_versioned(m) }.unwrap();
            assert!(u.is_read_only());

            // The producer's deleter runs once, when the last tensor over its memory goes.
            drop((t, row, d, c));
            assert_eq!(p.deletes(), 0);
            assert_eq!(u.to_vec::<f32>().unwrap(), values);
            drop(u);
            assert_eq!(p.deletes(), 1);
        });
    }

    #[test]
    fn stream_ordered_imports_take_no_stream_for_host_memory() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
            let m = a.to_dlpack().unwrap();
            for bad in [7, 1, 2] {
                // SAFETY: a valid struct; on failure it stays ours.
                let e = unsafe { Tensor::from_dlpack_stream(m, bad) }.unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidArgument, "stream {bad}: {e}");
            }
            // SAFETY: still ours after the failures; handed over exactly once.
            let b = unsafe { Tensor::from_dlpack_stream(m, -1) }.unwrap();
            let m = a.to_dlpack().unwrap();
            // SAFETY: as above.
            let c = unsafe { Tensor::from_dlpack_stream(m, 0) }.unwrap();
            for t in [&b, &c] {
                assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
                assert_eq!(data_ptr(t).unwrap(), data_ptr(&a).unwrap(), "copied");
            }

            // The versioned import: the same values, the deleter once, on success only.
            let mut p = Producer::new(vec![5.0, 6.0], [1, 2], 1, READ_ONLY);
            // SAFETY: a valid struct over live memory; on failure it stays ours.
            let e = unsafe { Tensor::from_dlpack_versioned_stream(p.as_ptr(), 3) }.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
            assert_eq!(p.deletes(), 0);
            let s = crate::Stream::new(Device::CPU).unwrap();
            // SAFETY: p outlives t; devtensor calls the deleter when t is dropped.
            let t = crate::with_stream(&s, || unsafe {
                Tensor::from_dlpack_versioned_stream(p.as_ptr(), 0)
            })
            .unwrap()
            .unwrap();
            assert!(t.is_read_only());
            assert_eq!(t.to_vec::<f32>().unwrap(), vec![5.0, 6.0]);
            drop(t);
            assert_eq!(p.deletes(), 1);

            // SAFETY: NULL is documented to fail.
            let e = unsafe { Tensor::from_dlpack_stream(std::ptr::null_mut(), -1) }.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument);
            // SAFETY: likewise.
            let e = unsafe { Tensor::from_dlpack_versioned_stream(std::ptr::null_mut(), -1) }
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument);
        });
    }

    #[test]
    fn major_version_2_is_not_supported_and_stays_the_callers() {
        leak_checked(|| {
            let mut p = Producer::new(vec![1.0, 2.0], [1, 2], 2, 0);
            // SAFETY: a valid struct over live memory; on failure it stays ours.
            let e = unsafe { Tensor::from_dlpack_versioned(p.as_ptr()) }.unwrap_err();
            assert_eq!(e.code, ErrorCode::NotSupported);
            assert!(e.message.contains("version 2"), "{e}");
            assert_eq!(p.deletes(), 0);

            // Untouched and still the caller's: once it says version 1, it imports.
            p.managed.version.major = 1;
            // SAFETY: as above; devtensor calls the deleter when t is dropped.
            let t = unsafe { Tensor::from_dlpack_versioned(p.as_ptr()) }.unwrap();
            assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
            drop(t);
            assert_eq!(p.deletes(), 1);
        });
    }
}

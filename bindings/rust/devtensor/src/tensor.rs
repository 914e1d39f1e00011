//! `Tensor`: a reference-counted handle to a devtensor tensor.
use crate::error::{check, Error, ErrorCode, Result};
use crate::{check_version, read_string, DType, Device, Element};
use devtensor_sys as ffi;
use std::fmt;
use std::ptr::NonNull;

/// An n-dimensional array on one device.
///
/// A `Tensor` owns one reference to a `dt_tensor` handle. `clone()` adds a reference
/// (`dt_tensor_retain`: cheap, the clone is the *same* tensor — a view, in PyTorch's
/// terms); [`Tensor::deep_copy`] copies the data. Dropping releases the reference and
/// never panics.
///
/// No method here writes into an existing tensor's data: the API has no in-place ops,
/// since a `Tensor` is `Send + Sync` and clones share one handle, so a write through one
/// clone would race reads through another (use the out-of-place op). Every `Tensor`
/// method takes `&self`. The writes the crate does make are PyTorch's own, outside
/// `Tensor`: an optimizer step and a module's `to` or `load` write its parameters
/// ([`nn`](crate::nn)), and the collectives of [`ProcessGroup`](crate::ProcessGroup)
/// write the tensors they are given (in place, or an output); do not read those tensors
/// from another thread while that runs.
///
/// # Operators
///
/// `+ - * /` take `Tensor` or `&Tensor` on either side (an owned operand is consumed,
/// a borrowed one is not), a [`Scalar`](crate::Scalar) (`f32`, `f64`, `i32`, `i64`) on the right and an
/// `f64` or `i64` on the left (one type per literal kind, so that `2.0 - &t` needs no
/// suffix); unary `-` takes either too. They are the methods [`Tensor::add`],
/// [`Tensor::add_scalar`], [`Tensor::neg`] and so on (`s - t` is `(-t) + s`, and `s / t`
/// divides a 0-d tensor holding `s` by `t`), broadcast and promote as PyTorch does, and
/// are recorded by autograd.
///
/// Every operator's `Output` is [`Result<Tensor>`](crate::Result): operands on two
/// devices, shapes that do not broadcast or a dtype the op refuses are an [`Error`](crate::Error),
/// never a panic. So a chain takes a `?` per step:
///
/// ```
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let a = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
/// let b = Tensor::from_slice(&[3.0f32, 4.0], &[2], Device::CPU)?;
/// let c = (&a + &b)? * &a;                      // (a + b) * a, a and b still usable
/// assert_eq!(c?.to_vec::<f32>()?, vec![4.0, 12.0]);
/// let d = (2.0 - &a)? / 4i64;                   // scalars on either side
/// assert_eq!(d?.to_vec::<f32>()?, vec![0.25, 0.0]);
/// let e = (-(a * 2.0f32)?)?;                    // owned operands are consumed
/// assert_eq!(e.to_vec::<f32>()?, vec![-2.0, -4.0]);
/// let bad = &b + &Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU)?;
/// assert_eq!(bad.unwrap_err().code, devtensor::ErrorCode::ShapeMismatch);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// Each op and operator of this type ([`ErrorCode`] says more): [`ErrorCode::DeviceMismatch`] (operands on two devices),
/// [`ErrorCode::ShapeMismatch`] (shapes that do not broadcast, or do not fit a view),
/// [`ErrorCode::DtypeMismatch`] (a dtype the op refuses, e.g. `-` on bool),
/// [`ErrorCode::InvalidArgument`] (a dimension out of range), [`ErrorCode::OutOfMemory`].
///
/// No `+=` (`AddAssign` and the others): an assign operator cannot return a
/// `Result`, so it would have to panic on a mismatch or drop the error. And PyTorch's
/// `a += b` writes `a`'s memory in place, which every clone and view of `a` sees, while
/// a Rust `+=` on a handle could only rebind `a` to a new tensor: the same spelling
/// with another meaning. The crate has no in-place ops (a [`Tensor`] is `Send + Sync`
/// and its clones share one handle, so a write would race reads through another
/// clone); write `a = (&a + &b)?`.
pub struct Tensor {
    ptr: NonNull<ffi::dt_tensor>,
}

// SAFETY: include/devtensor.h, THREADING: "Every function is safe to call from any
// thread at any time. Distinct tensors may be used concurrently from different threads;
// one tensor may be read concurrently from many threads. [...] reference counts and
// handle checks are atomic." A Tensor is only a handle; moving it to another thread
// (Send) and calling its `&self` methods from several threads at once (Sync) are
// exactly the uses that paragraph allows. The racy case it names — concurrent in-place
// writes to one tensor's data — cannot happen through Tensor's own methods, which write
// no existing tensor; the writes elsewhere (optimizer steps and module moves or loads,
// which take `&mut` on the Optimizer / Module, and the collectives of a ProcessGroup)
// are documented as not to overlap other use of the tensors they write, and the header
// bounds what an overlapping reader sees (each element's old or new value;
// devtensor's own state is never corrupted). A handle cannot be released while another
// thread uses it, because release happens only in Drop, which needs ownership.
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

raw_handle!(
    Tensor,
    "devtensor::Tensor",
    dt_tensor,
    dt_tensor_retain,
    dt_tensor_release,
    "devtensor::Tensor::zeros(&[2], devtensor::DType::Float32, devtensor::Device::CPU)?"
);

impl Tensor {
    /// Wraps a NEW reference written by a C call.
    pub(crate) fn from_out(
        call: impl FnOnce(*mut *mut ffi::dt_tensor) -> ffi::dt_status,
    ) -> Result<Tensor> {
        let mut out: *mut ffi::dt_tensor = std::ptr::null_mut();
        check(call(&mut out))?;
        NonNull::new(out).map(|ptr| Tensor { ptr }).ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL tensor",
            )
        })
    }

    /// Calls an entry point with two tensor out-parameters (values and indices; an
    /// attention output and its weights) and takes both NEW references.
    pub(crate) fn pair_from_out(
        call: impl FnOnce(*mut *mut ffi::dt_tensor, *mut *mut ffi::dt_tensor) -> ffi::dt_status,
    ) -> Result<(Tensor, Tensor)> {
        let mut first: *mut ffi::dt_tensor = std::ptr::null_mut();
        let mut second: *mut ffi::dt_tensor = std::ptr::null_mut();
        check(call(&mut first, &mut second))?;
        match (Tensor::from_owned_ptr(first), Tensor::from_owned_ptr(second)) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL tensor",
            )),
        }
    }

    /// Takes ownership of a NEW reference (NULL → `None`).
    pub(crate) fn from_owned_ptr(p: *mut ffi::dt_tensor) -> Option<Tensor> {
        NonNull::new(p).map(|ptr| Tensor { ptr })
    }

    /// The handle, borrowed for the duration of `&self` (crate-private: the tests compare
    /// handles to check aliasing).
    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut ffi::dt_tensor {
        self.ptr.as_ptr()
    }

    // ---------------------------------------------------------------- constructors

    fn factory(
        shape: &[i64],
        call: impl FnOnce(*const i64, usize, *mut *mut ffi::dt_tensor) -> ffi::dt_status,
    ) -> Result<Tensor> {
        check_version()?;
        Tensor::from_out(|out| call(shape.as_ptr(), shape.len(), out))
    }

    /// Uninitialised contents (`dt_tensor_empty`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::empty(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.shape(), vec![2, 3]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_empty`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn empty(shape: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_empty(s, n, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// All zeros.
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU).unwrap();
    /// assert_eq!(t.to_string(), "tensor([[0., 0., 0.],\n        [0., 0., 0.]])");
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_zeros`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn zeros(shape: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_zeros(s, n, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// All ones.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::ones(&[2], DType::Int64, Device::CPU)?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![1, 1]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_ones`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn ones(shape: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_ones(s, n, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// Every element `value`, cast to `dtype`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::full(&[2], 2.5, DType::Float64, Device::CPU)?;
    /// assert_eq!(t.to_vec::<f64>()?, vec![2.5, 2.5]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_full`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn full(shape: &[i64], value: f64, dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_full(s, n, value, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// Uniform in [0, 1) from the device's Philox generator: the same values on every
    /// device for one seed ([`crate::manual_seed`]). `dtype` must be floating.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// devtensor::manual_seed(0)?;
    /// let a = Tensor::rand(&[3], DType::Float32, Device::CPU)?;
    /// devtensor::manual_seed(0)?;
    /// let b = Tensor::rand(&[3], DType::Float32, Device::CPU)?;
    /// assert_eq!(a.to_vec::<f32>()?, b.to_vec::<f32>()?); // one seed, the same values
    /// assert!(a.to_vec::<f32>()?.iter().all(|v| (0.0..1.0).contains(v)));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_rand`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn rand(shape: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_rand(s, n, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// Standard normal values (see [`Tensor::rand`]).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::randn(&[2, 2], DType::Float64, Device::CPU)?;
    /// assert_eq!((t.shape(), t.dtype()), (vec![2, 2], DType::Float64));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_randn`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn randn(shape: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_randn(s, n, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// Integers drawn uniformly from `[low, high)`, as `torch.randint`: element `i` is
    /// `low + floor(u_i * (high - low))` for the `u_i` a float64 [`Tensor::rand`] of
    /// `shape` gives element `i`, so the values are the same on every device for one seed.
    /// `dtype`: any integer or floating one (bool for `[0, 2)`); PyTorch's default is int64.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::randint(3, 7, &[2, 5], DType::Int64, Device::CPU)?;
    /// assert_eq!((t.shape(), t.dtype()), (vec![2, 5], DType::Int64));
    /// assert!(t.to_vec::<i64>()?.iter().all(|v| (3..7).contains(v)));
    /// let e = Tensor::randint(5, 5, &[2], DType::Int64, Device::CPU).unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_randint`: those of
    /// [`Tensor::rand`], plus [`ErrorCode::InvalidArgument`] for `low >= high`, a range
    /// wider than 2^53 or a bound `dtype` cannot hold.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn randint(low: i64, high: i64, shape: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_randint(low, high, s, n, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// A random permutation of `0 .. n-1`, as `torch.randperm`: the stable argsort of `n`
    /// float64 [`Tensor::rand`] values. `dtype`: an integer or floating one that holds
    /// `n - 1` exactly; PyTorch's default is int64.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let mut p = Tensor::randperm(5, DType::Int64, Device::CPU)?.to_vec::<i64>()?;
    /// p.sort();
    /// assert_eq!(p, vec![0, 1, 2, 3, 4]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_randperm`: those of
    /// [`Tensor::rand`], plus [`ErrorCode::InvalidArgument`] for `n < 0`, bool, or a
    /// `dtype` that cannot hold `n - 1` exactly.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn randperm(n: i64, dtype: DType, device: Device) -> Result<Tensor> {
        check_version()?;
        Tensor::from_out(|o| unsafe { ffi::dt_tensor_randperm(n, dtype.to_raw(), device.to_raw(), o) })
    }

    /// `[start, start+step, ...)` below `end`, as `torch.arange`.
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    /// let t = Tensor::arange(0.0, 4.0, 1.0, DType::Int64, Device::CPU).unwrap();
    /// assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 1, 2, 3]);
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_arange`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn arange(start: f64, end: f64, step: f64, dtype: DType, device: Device) -> Result<Tensor> {
        check_version()?;
        Tensor::from_out(|o| unsafe {
            ffi::dt_tensor_arange(start, end, step, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// `steps` values from `start` to `end`, evenly spaced, both ends included, as
    /// `torch.linspace`; integer dtypes compute in float64 and truncate toward zero.
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    /// let t = Tensor::linspace(0.0, 1.0, 5, DType::Float32, Device::CPU).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_linspace`:
    /// [`ErrorCode::InvalidArgument`] for `steps < 0`, [`ErrorCode::DtypeMismatch`] for
    /// bool, the device errors of [`Tensor::empty`].
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn linspace(start: f64, end: f64, steps: i64, dtype: DType, device: Device) -> Result<Tensor> {
        check_version()?;
        Tensor::from_out(|o| unsafe {
            ffi::dt_tensor_linspace(start, end, steps, dtype.to_raw(), device.to_raw(), o)
        })
    }

    /// The `n` x `m` matrix with ones on the diagonal and zeros elsewhere, as
    /// `torch.eye(n, m)`; any dtype.
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    /// let t = Tensor::eye(2, 3, DType::Int64, Device::CPU).unwrap();
    /// assert_eq!(t.to_vec::<i64>().unwrap(), vec![1, 0, 0, 0, 1, 0]);
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_eye`:
    /// [`ErrorCode::InvalidArgument`] for a negative `n` or `m`, the device errors of
    /// [`Tensor::empty`].
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn eye(n: i64, m: i64, dtype: DType, device: Device) -> Result<Tensor> {
        check_version()?;
        Tensor::from_out(|o| unsafe { ffi::dt_tensor_eye(n, m, dtype.to_raw(), device.to_raw(), o) })
    }

    /// A tensor of `shape` on `device` holding a copy of `data` (row-major); the dtype is
    /// `T`'s. `data.len()` must equal the number of elements.
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2], Device::CPU).unwrap();
    /// assert_eq!(t.shape(), vec![2, 2]);
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4]);
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_from_data`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn from_slice<T: Element>(data: &[T], shape: &[i64], device: Device) -> Result<Tensor> {
        check_version()?;
        let nbytes = std::mem::size_of_val(data);
        Tensor::from_out(|o| unsafe {
            ffi::dt_tensor_from_data(
                data.as_ptr().cast(),
                nbytes,
                shape.as_ptr(),
                shape.len(),
                T::DTYPE.to_raw(),
                device.to_raw(),
                o,
            )
        })
    }

    /// As [`Tensor::from_slice`], consuming a `Vec` (the data is still copied: the
    /// library owns its memory).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_vec(vec![1u8, 2, 3], &[3], Device::CPU)?;
    /// assert_eq!(t.dtype(), DType::UInt8);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Tensor::from_slice`].
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[i64], device: Device) -> Result<Tensor> {
        Tensor::from_slice(&data, shape, device)
    }

    /// A 0-d tensor holding `value`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::scalar(3i32, Device::CPU)?;
    /// assert_eq!((t.ndim(), t.item()?), (0, 3.0));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Tensor::from_slice`].
    pub fn scalar<T: Element>(value: T, device: Device) -> Result<Tensor> {
        Tensor::from_slice(&[value], &[], device)
    }

    /// An uninitialised cpu:0 tensor in page-locked ("pinned") host memory
    /// (`dt_tensor_empty_pinned`), which copies to and from a GPU can use asynchronously.
    /// Pinned memory comes from the CUDA driver: without a usable CUDA backend this is
    /// [`ErrorCode::DeviceUnavailable`], with the reason.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// match Tensor::empty_pinned(&[4], DType::Float32) {
    ///     Ok(t) => assert!(t.is_pinned()),
    ///     Err(e) => assert_eq!(e.code, ErrorCode::DeviceUnavailable), // no CUDA here
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_empty_pinned`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn empty_pinned(shape: &[i64], dtype: DType) -> Result<Tensor> {
        Tensor::factory(shape, |s, n, o| unsafe {
            ffi::dt_tensor_empty_pinned(s, n, dtype.to_raw(), o)
        })
    }

    /// This tensor's values in pinned memory, as PyTorch's `Tensor.pin_memory()`
    /// (`dt_tensor_pin_memory`): another handle to `self` when it is already pinned,
    /// else a contiguous copy. A tensor not on a CPU device is
    /// [`ErrorCode::NotSupported`]; without a usable CUDA backend this is
    /// [`ErrorCode::DeviceUnavailable`].
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// match x.pin_memory() {
    ///     Ok(p) => assert!(p.is_pinned()),
    ///     Err(e) => assert_eq!(e.code, ErrorCode::DeviceUnavailable), // no CUDA here
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_pin_memory`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn pin_memory(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_tensor_pin_memory(self.as_ptr(), o) })
    }

    /// Whether the memory is pinned host memory (`dt_tensor_is_pinned`; always `false`
    /// without CUDA).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert!(!x.is_pinned());
    /// # Ok(()) }
    /// ```
    pub fn is_pinned(&self) -> bool {
        let mut v = 0i32;
        // SAFETY: a live handle; cannot fail with a valid out pointer.
        unsafe { ffi::dt_tensor_is_pinned(self.as_ptr(), &mut v) };
        v != 0
    }

    /// Uninitialised contents with this tensor's shape, dtype and device
    /// (`dt_empty_like`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::ones(&[2, 3], DType::Int32, Device::CPU)?;
    /// let e = a.empty_like()?;
    /// assert_eq!((e.shape(), e.dtype()), (vec![2, 3], DType::Int32));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_empty_like`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn empty_like(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_empty_like(self.as_ptr(), o) })
    }

    /// Zeros / ones / `value` with this tensor's shape, dtype and device.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::ones(&[2], DType::Int32, Device::CPU)?;
    /// assert_eq!(a.zeros_like()?.to_vec::<i32>()?, vec![0, 0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_zeros_like`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn zeros_like(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_zeros_like(self.as_ptr(), o) })
    }
    /// See [`Tensor::zeros_like`].
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert_eq!(x.ones_like()?.to_vec::<f32>()?, vec![1.0, 1.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_ones_like`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn ones_like(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_ones_like(self.as_ptr(), o) })
    }
    /// See [`Tensor::zeros_like`].
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert_eq!(x.full_like(7.0)?.to_vec::<f32>()?, vec![7.0, 7.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_full_like`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn full_like(&self, value: f64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_full_like(self.as_ptr(), value, o) })
    }
    /// Uniform values in [0, 1) with this tensor's shape, dtype (floating) and device
    /// (`dt_rand_like`; see [`Tensor::rand`]).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert_eq!(x.rand_like()?.shape(), vec![2]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_rand_like`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn rand_like(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_rand_like(self.as_ptr(), o) })
    }
    /// Standard normal values with this tensor's shape, dtype (floating) and device
    /// (`dt_randn_like`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert_eq!(x.randn_like()?.dtype(), DType::Float32);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_randn_like`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn randn_like(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_randn_like(self.as_ptr(), o) })
    }

    /// Uninitialised contents of `shape` with this tensor's dtype and device, as
    /// PyTorch's `Tensor.new_empty` (`dt_tensor_new_empty`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::ones(&[1], DType::Float64, Device::CPU)?;
    /// let e = a.new_empty(&[2, 2])?;
    /// assert_eq!((e.shape(), e.dtype()), (vec![2, 2], DType::Float64));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_new_empty`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn new_empty(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_tensor_new_empty(self.as_ptr(), shape.as_ptr(), shape.len(), o)
        })
    }
    /// Zeros of `shape` with this tensor's dtype and device (`Tensor.new_zeros`).
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    /// let a = Tensor::ones(&[3], DType::Float64, Device::CPU).unwrap();
    /// let z = a.new_zeros(&[2, 2]).unwrap();
    /// assert_eq!((z.shape(), z.dtype()), (vec![2, 2], DType::Float64));
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_new_zeros`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn new_zeros(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_tensor_new_zeros(self.as_ptr(), shape.as_ptr(), shape.len(), o)
        })
    }
    /// Ones of `shape` with this tensor's dtype and device (`Tensor.new_ones`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::zeros(&[1], DType::Float64, Device::CPU)?;
    /// assert_eq!(a.new_ones(&[2])?.to_vec::<f64>()?, vec![1.0, 1.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_new_ones`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn new_ones(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_tensor_new_ones(self.as_ptr(), shape.as_ptr(), shape.len(), o)
        })
    }
    /// `value` (cast to this tensor's dtype) everywhere in `shape`, on this tensor's
    /// device (`Tensor.new_full`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let a = Tensor::zeros(&[1], DType::Int64, Device::CPU)?;
    /// assert_eq!(a.new_full(&[2], 3.0)?.to_vec::<i64>()?, vec![3, 3]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_new_full`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn new_full(&self, shape: &[i64], value: f64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_tensor_new_full(self.as_ptr(), shape.as_ptr(), shape.len(), value, o)
        })
    }

    // ---------------------------------------------------------------- metadata

    /// The number of dimensions.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.ndim(), 2);
    /// # Ok(()) }
    /// ```
    pub fn ndim(&self) -> usize {
        let mut n = 0usize;
        // SAFETY: a live handle; cannot fail with a valid out pointer.
        unsafe { ffi::dt_tensor_ndim(self.as_ptr(), &mut n) };
        n
    }

    /// The sizes of the dimensions.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.shape(), vec![2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn shape(&self) -> Vec<i64> {
        let mut s = vec![0i64; self.ndim()];
        // SAFETY: s has room for ndim sizes.
        unsafe { ffi::dt_tensor_shape(self.as_ptr(), s.as_mut_ptr(), s.len()) };
        s
    }

    /// The strides, in elements.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.strides(), vec![3, 1]);
    /// assert_eq!(t.transpose(0, 1)?.strides(), vec![1, 3]);
    /// # Ok(()) }
    /// ```
    pub fn strides(&self) -> Vec<i64> {
        let mut s = vec![0i64; self.ndim()];
        // SAFETY: s has room for ndim strides.
        unsafe { ffi::dt_tensor_strides(self.as_ptr(), s.as_mut_ptr(), s.len()) };
        s
    }

    /// The number of elements.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.numel(), 6);
    /// # Ok(()) }
    /// ```
    pub fn numel(&self) -> usize {
        let mut n = 0usize;
        unsafe { ffi::dt_tensor_numel(self.as_ptr(), &mut n) };
        n
    }

    /// The size of the elements in bytes: `numel() * dtype().size()`, what
    /// [`Tensor::to_vec`] copies (`dt_tensor_nbytes`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.nbytes(), 24); // 6 float32
    /// # Ok(()) }
    /// ```
    pub fn nbytes(&self) -> usize {
        let mut n = 0usize;
        // SAFETY: a live handle; cannot fail with a valid out pointer.
        unsafe { ffi::dt_tensor_nbytes(self.as_ptr(), &mut n) };
        n
    }

    /// The element type.
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    /// let t = Tensor::zeros(&[2], DType::Int32, Device::CPU).unwrap();
    /// assert_eq!(t.dtype(), DType::Int32);
    /// ```
    ///
    /// # Panics
    ///
    /// Only if the library reports a dtype newer than these bindings know, which the
    /// version check rules out; [`Tensor::try_dtype`] gives an `Err` instead.
    pub fn dtype(&self) -> DType {
        self.try_dtype().expect("a dtype unknown to these bindings")
    }

    /// The element type, or an error for a dtype unknown to these bindings.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.try_dtype()?, DType::Float32);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_dtype`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn try_dtype(&self) -> Result<DType> {
        let mut d = 0;
        check(unsafe { ffi::dt_tensor_dtype(self.as_ptr(), &mut d) })?;
        DType::from_raw(d)
    }

    /// The device the tensor lives on.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert_eq!(t.device(), Device::CPU);
    /// # Ok(()) }
    /// ```
    pub fn device(&self) -> Device {
        let mut d = Device::CPU.to_raw();
        unsafe { ffi::dt_tensor_device(self.as_ptr(), &mut d) };
        Device::from_raw(d).unwrap_or(Device::CPU)
    }

    /// Whether the elements are laid out contiguously in row-major order.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert!(t.is_contiguous());
    /// assert!(!t.transpose(0, 1)?.is_contiguous());
    /// # Ok(()) }
    /// ```
    pub fn is_contiguous(&self) -> bool {
        let mut v = 0i32;
        unsafe { ffi::dt_tensor_is_contiguous(self.as_ptr(), &mut v) };
        v != 0
    }

    /// Whether the two tensors share storage (one is a view of the other, or both of one).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// assert!(t.reshape(&[6])?.shares_storage(&t));
    /// assert!(!t.deep_copy()?.shares_storage(&t));
    /// # Ok(()) }
    /// ```
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        let mut v = 0i32;
        unsafe { ffi::dt_tensor_shares_storage(self.as_ptr(), other.as_ptr(), &mut v) };
        v != 0
    }

    // ---------------------------------------------------------------- moving, reading

    fn to_raw(&self, device: ffi::dt_device, dtype: ffi::dt_dtype, flags: u32) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_tensor_to(self.as_ptr(), device, dtype, flags, o) })
    }

    /// This tensor on `device`: a NEW tensor, leaving `self` alone. When `self` is
    /// already there, the result is another handle to the same tensor (PyTorch returns
    /// `self`).
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    /// let a = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
    /// let b = a.to(Device::cuda_if_available()).unwrap();
    /// assert_eq!(b.device(), Device::cuda_if_available());
    /// assert_eq!(a.device(), Device::CPU);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidDevice`] (a device that does not exist),
    /// [`ErrorCode::DeviceUnavailable`] (e.g. CUDA without a GPU), [`ErrorCode::OutOfMemory`]
    /// (`dt_tensor_to`).
    pub fn to(&self, device: Device) -> Result<Tensor> {
        self.to_raw(device.to_raw(), ffi::DT_DTYPE_DEFAULT, 0)
    }

    /// This tensor converted to `dtype` (PyTorch's casts; aliases when unchanged).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1.7f32, -1.7], &[2], Device::CPU)?;
    /// assert_eq!(t.to_dtype(DType::Int64)?.to_vec::<i64>()?, vec![1, -1]); // truncates
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Tensor::to`].
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        let keep = Device::raw_or_default(None);
        self.to_raw(keep, dtype.to_raw(), 0)
    }

    /// Device and dtype at once.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let d = x.to_device_dtype(Device::CPU, DType::Float64)?;
    /// assert_eq!(d.to_vec::<f64>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Tensor::to`].
    pub fn to_device_dtype(&self, device: Device, dtype: DType) -> Result<Tensor> {
        self.to_raw(device.to_raw(), dtype.to_raw(), 0)
    }

    /// A copy with its own storage (same device and dtype), never an alias.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let c = x.deep_copy()?;
    /// assert!(!c.shares_storage(&x));
    /// assert_eq!(c.to_vec::<f32>()?, x.to_vec::<f32>()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::OutOfMemory`] (`dt_tensor_to` with `DT_TO_COPY`).
    pub fn deep_copy(&self) -> Result<Tensor> {
        let keep = Device::raw_or_default(None);
        self.to_raw(keep, ffi::DT_DTYPE_DEFAULT, ffi::DT_TO_COPY as u32)
    }

    /// The elements in row-major order, copied to a `Vec` (from any device and layout).
    /// `T` must be the tensor's element type: asking for `f64` from a `float32` tensor is
    /// `DtypeMismatch` (convert with [`Tensor::to_dtype`] first).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// assert_eq!(x.to_vec::<f64>().unwrap_err().code, ErrorCode::DtypeMismatch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DtypeMismatch`] when `T` is not the tensor's element type; a failed copy
    /// from the device ([`ErrorCode::DeviceLost`], [`ErrorCode::Backend`]).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.expect_element::<T>("to_vec")?;
        T::copy_out(self, self.numel())
    }

    /// `DtypeMismatch` naming `method` unless `T` is the tensor's element type.
    fn expect_element<T: Element>(&self, method: &str) -> Result<()> {
        let dt = self.try_dtype()?;
        if dt != T::DTYPE {
            return Err(Error::new(
                ErrorCode::DtypeMismatch,
                format!(
                    "{}::<{}>() needs a {} tensor but the tensor is {}",
                    method,
                    std::any::type_name::<T>(),
                    T::DTYPE,
                    dt
                ),
            ));
        }
        Ok(())
    }

    /// Writes a copy of `data` (row-major) into this tensor IN PLACE, whatever its layout
    /// (`dt_tensor_copy_from_host`): how a [`Graph`](crate::Graph)'s static input gets new
    /// values between replays. `data.len()` must equal the number of elements.
    ///
    /// ```
    /// use devtensor::{Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 2], devtensor::DType::Float32, Device::CPU)?;
    /// // SAFETY: no other thread uses t (or a clone or view of it) during the copy.
    /// unsafe { t.copy_from_slice(&[1.0f32, 2.0, 3.0, 4.0])? };
    /// assert_eq!(t.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// A `Tensor` is `Send + Sync` and its clones and views share memory: the caller makes
    /// sure that no other thread reads or writes this tensor, a clone or a view of it while
    /// the copy runs (the safe crate has no other in-place write for that reason).
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DtypeMismatch`] when `T` is not the tensor's element type;
    /// [`ErrorCode::InvalidArgument`] when `data.len()` is not the number of elements, for
    /// a read-only tensor (a DLPack import) and while the tensor's stream captures a graph
    /// ([`ErrorCode::NotSupported`]); the other errors `include/devtensor.h` lists for
    /// `dt_tensor_copy_from_host`. On error the tensor is unchanged.
    pub unsafe fn copy_from_slice<T: Element>(&self, data: &[T]) -> Result<()> {
        self.expect_element::<T>("copy_from_slice")?;
        // SAFETY: a live handle and `data`'s own bytes; the library checks the byte count
        // against the tensor's size. The caller rules out concurrent use (# Safety).
        check(unsafe {
            ffi::dt_tensor_copy_from_host(
                self.as_ptr(),
                data.as_ptr().cast(),
                std::mem::size_of_val(data),
            )
        })
    }

    /// Writes `src`'s values into this tensor IN PLACE (`dt_copy_`, PyTorch's
    /// `self.copy_(src)`): `src` broadcasts to this tensor's shape, converts to its dtype
    /// and may be on any device; this tensor keeps its memory, so its views and a
    /// [`Graph`](crate::Graph) that reads it see the new values.
    ///
    /// ```
    /// use devtensor::{DType, Device, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::zeros(&[2, 2], DType::Float64, Device::CPU)?;
    /// let row = Tensor::from_slice(&[1.5f32, -2.0], &[2], Device::CPU)?;
    /// // SAFETY: no other thread uses t (or a clone or view of it) during the copy.
    /// unsafe { t.copy_from(&row)? };
    /// assert_eq!(t.to_vec::<f64>()?, vec![1.5, -2.0, 1.5, -2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// As [`copy_from_slice`](Tensor::copy_from_slice): no other thread reads or writes
    /// this tensor, a clone or a view of it while the copy runs.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::ShapeMismatch`] when `src` does not broadcast to this tensor's shape;
    /// [`ErrorCode::NotSupported`] in grad mode when either tensor requires grad (the copy
    /// is not recorded by autograd: copy inside [`no_grad`](crate::no_grad));
    /// [`ErrorCode::InvalidArgument`] for a read-only or expanded destination; the other
    /// errors `include/devtensor.h` lists for `dt_copy_`. On error the tensor is unchanged.
    pub unsafe fn copy_from(&self, src: &Tensor) -> Result<()> {
        // SAFETY: two live handles; the caller rules out concurrent use (# Safety).
        check(unsafe { ffi::dt_copy_(self.as_ptr(), src.as_ptr(), 0) })
    }

    /// The value of a one-element tensor, as `f64`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!(Tensor::scalar(2.5f32, Device::CPU)?.item()?, 2.5);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_item`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn item(&self) -> Result<f64> {
        let mut v = 0f64;
        check(unsafe { ffi::dt_tensor_item(self.as_ptr(), &mut v) })?;
        Ok(v)
    }

    // ---------------------------------------------------------------- autograd

    /// Marks a floating leaf as requiring grad (or not).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// assert!(x.requires_grad());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_set_requires_grad`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn set_requires_grad(&self, requires_grad: bool) -> Result<()> {
        check(unsafe { ffi::dt_tensor_set_requires_grad(self.as_ptr(), requires_grad as i32) })
    }

    /// Whether autograd tracks this tensor.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// assert!(!x.requires_grad());
    /// x.set_requires_grad(true)?;
    /// assert!((&x * 2.0)?.requires_grad());
    /// # Ok(()) }
    /// ```
    pub fn requires_grad(&self) -> bool {
        let mut v = 0i32;
        unsafe { ffi::dt_tensor_requires_grad(self.as_ptr(), &mut v) };
        v != 0
    }

    /// Whether this tensor has no `grad_fn`: made by the user (a constructor, `detach`, an
    /// op not recorded), not recorded by an op (`dt_tensor_is_leaf`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// assert!(x.is_leaf() && !(&x * 2.0)?.is_leaf());
    /// # Ok(()) }
    /// ```
    pub fn is_leaf(&self) -> bool {
        let mut v = 0i32;
        // SAFETY: a live handle; cannot fail with a valid out pointer.
        unsafe { ffi::dt_tensor_is_leaf(self.as_ptr(), &mut v) };
        v != 0
    }

    /// The accumulated gradient, if any.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// (&x * &x)?.sum_all()?.backward()?;
    /// assert_eq!(x.grad()?.unwrap().to_vec::<f32>()?, vec![2.0, 4.0]); // d(x^2)/dx
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_grad`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn grad(&self) -> Result<Option<Tensor>> {
        let mut out: *mut ffi::dt_tensor = std::ptr::null_mut();
        check(unsafe { ffi::dt_tensor_grad(self.as_ptr(), &mut out) })?;
        Ok(Tensor::from_owned_ptr(out))
    }

    /// Drops the accumulated gradient (`t.grad = None`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// x.sum_all()?.backward()?;
    /// x.clear_grad()?;
    /// assert!(x.grad()?.is_none());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_clear_grad`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn clear_grad(&self) -> Result<()> {
        check(unsafe { ffi::dt_tensor_clear_grad(self.as_ptr()) })
    }

    /// The backward function's name (`"MulBackward0"`), `""` for a leaf.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// assert_eq!(x.grad_fn_name()?, "");
    /// assert!(!(&x * &x)?.grad_fn_name()?.is_empty());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_grad_fn_name`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn grad_fn_name(&self) -> Result<String> {
        read_string(|b, c, n| unsafe { ffi::dt_tensor_grad_fn_name(self.as_ptr(), b, c, n) })
    }

    /// A tensor sharing this one's memory, outside any graph.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// let y = (&x * 2.0)?;
    /// let d = y.detach()?;
    /// assert!(!d.requires_grad() && d.shares_storage(&y));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_tensor_detach`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn detach(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_tensor_detach(self.as_ptr(), o) })
    }

    /// Back-propagates from this one-element tensor (`loss.backward()`), adding into
    /// every leaf's `.grad`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// (&x * 3.0)?.sum_all()?.backward()?;
    /// assert_eq!(x.grad()?.unwrap().to_vec::<f32>()?, vec![3.0, 3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_backward`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn backward(&self) -> Result<()> {
        check(unsafe { ffi::dt_backward(self.as_ptr(), std::ptr::null()) })
    }

    /// Back-propagates with `grad` as the gradient of this tensor.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// x.set_requires_grad(true)?;
    /// let y = (&x * 3.0)?;
    /// y.backward_with(&Tensor::from_slice(&[1.0f32, 10.0], &[2], Device::CPU)?)?;
    /// assert_eq!(x.grad()?.unwrap().to_vec::<f32>()?, vec![3.0, 30.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_backward`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn backward_with(&self, grad: &Tensor) -> Result<()> {
        check(unsafe { ffi::dt_backward(self.as_ptr(), grad.as_ptr()) })
    }
}

impl Clone for Tensor {
    /// Another reference to the same tensor (`dt_tensor_retain`), not a copy.
    fn clone(&self) -> Tensor {
        // SAFETY: self holds a reference, so the handle is live; retain then cannot fail
        // (the only errors are NULL and a dead handle).
        let st = unsafe { ffi::dt_tensor_retain(self.as_ptr()) };
        debug_assert_eq!(st, ffi::DT_OK);
        Tensor { ptr: self.ptr }
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // Never panics: a failure (impossible for a handle we own) is ignored.
        // SAFETY: we own exactly one reference.
        let _ = unsafe { ffi::dt_tensor_release(self.as_ptr()) };
    }
}

impl fmt::Display for Tensor {
    /// PyTorch's printed form (`dt_tensor_to_string`): `tensor([1., 2., 3.])`, with
    /// `device='cuda:0'` on a GPU. Reads the elements (copies them from the device).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match read_string(|b, c, n| unsafe { ffi::dt_tensor_to_string(self.as_ptr(), b, c, n) }) {
            Ok(s) => f.write_str(&s),
            Err(e) => write!(f, "<tensor: {e}>"),
        }
    }
}

impl fmt::Debug for Tensor {
    /// Shape, dtype and device only: never touches the device's memory.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dtype = match self.try_dtype() {
            Ok(d) => d.to_string(),
            Err(_) => "?".to_string(),
        };
        write!(
            f,
            "Tensor[{:?}, {}, {}]",
            self.shape(),
            dtype,
            self.device()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::leak_checked;

    #[test]
    fn to_returns_new_tensor_or_alias() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU).unwrap();
            // Nothing changes: the same handle (PyTorch returns self).
            let same = a.to(Device::CPU).unwrap();
            assert_eq!(same.as_ptr(), a.as_ptr());
            let same2 = a.to_dtype(DType::Float32).unwrap();
            assert_eq!(same2.as_ptr(), a.as_ptr());
            // A change: a new tensor, the source untouched.
            let d = a.to_dtype(DType::Float64).unwrap();
            assert_ne!(d.as_ptr(), a.as_ptr());
            assert!(!d.shares_storage(&a));
            assert_eq!(d.dtype(), DType::Float64);
            assert_eq!(a.dtype(), DType::Float32);
            assert_eq!(d.to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0]);
            // deep_copy never aliases.
            let c = a.deep_copy().unwrap();
            assert_ne!(c.as_ptr(), a.as_ptr());
            assert!(!c.shares_storage(&a));
            // clone is a retain: the same handle.
            let r = a.clone();
            assert_eq!(r.as_ptr(), a.as_ptr());
        });
    }

    #[test]
    fn cuda_unavailable_is_an_error() {
        if Device::cuda_is_available() {
            println!("skipped: CUDA is available here, so cuda:0 is not unavailable");
            return;
        }
        leak_checked(|| {
            let a = Tensor::zeros(&[2], DType::Float32, Device::CPU).unwrap();
            let e = a.to(Device::Cuda(0)).unwrap_err();
            assert_eq!(e.code, ErrorCode::DeviceUnavailable, "{e}");
            assert!(!e.message.is_empty());
            let e = Tensor::zeros(&[2], DType::Float32, Device::Cuda(0)).unwrap_err();
            assert_eq!(e.code, ErrorCode::DeviceUnavailable, "{e}");
        });
    }

    #[test]
    fn display_and_debug() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU).unwrap();
            assert_eq!(a.to_string(), "tensor([1., 2., 3.])");
            assert_eq!(format!("{a:?}"), "Tensor[[3], float32, cpu:0]");
            let b = Tensor::from_slice(&[1.5f64, -2.0], &[2], Device::CPU).unwrap();
            assert_eq!(
                b.to_string(),
                "tensor([ 1.5000, -2.0000], dtype=torch.float64)"
            );
            let i = Tensor::from_slice(&[true, false], &[2], Device::CPU).unwrap();
            assert_eq!(i.to_string(), "tensor([ True, False])");
        });
    }

    #[test]
    fn element_types_round_trip() {
        leak_checked(|| {
            fn rt<T: Element + PartialEq + std::fmt::Debug>(v: &[T]) {
                let t = Tensor::from_slice(v, &[v.len() as i64], Device::CPU).unwrap();
                assert_eq!(t.dtype(), T::DTYPE);
                assert_eq!(t.to_vec::<T>().unwrap(), v);
                let t2 = Tensor::from_vec(v.to_vec(), &[v.len() as i64], Device::CPU).unwrap();
                assert_eq!(t2.to_vec::<T>().unwrap(), v);
            }
            rt(&[1.5f32, -2.0]);
            rt(&[1.5f64, -2.0]);
            rt(&[1i8, -2]);
            rt(&[1i16, -2]);
            rt(&[1i32, -2]);
            rt(&[1i64, -2]);
            rt(&[1u8, 255]);
            rt(&[true, false]);
            let t = Tensor::from_slice(&[1.0f32], &[1], Device::CPU).unwrap();
            let e = t.to_vec::<f64>().unwrap_err();
            assert_eq!(e.code, ErrorCode::DtypeMismatch);
            let e = Tensor::from_slice(&[1.0f32, 2.0], &[3], Device::CPU).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
            let s = Tensor::scalar(2.5f64, Device::CPU).unwrap();
            assert_eq!(s.shape(), Vec::<i64>::new());
            assert_eq!(s.item().unwrap(), 2.5);
        });
    }

    #[test]
    fn like_and_new_constructors() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], Device::CPU)
                .unwrap();
            let e = a.empty_like().unwrap();
            assert_eq!(
                (e.shape(), e.dtype(), e.device()),
                (vec![2, 3], DType::Float64, Device::CPU)
            );
            assert!(!e.shares_storage(&a));
            crate::manual_seed(5).unwrap();
            let r = a.rand_like().unwrap();
            assert_eq!((r.shape(), r.dtype()), (vec![2, 3], DType::Float64));
            assert!(r
                .to_vec::<f64>()
                .unwrap()
                .iter()
                .all(|&v| (0.0..1.0).contains(&v)));
            crate::manual_seed(5).unwrap();
            let r2 = Tensor::rand(&[2, 3], DType::Float64, Device::CPU).unwrap();
            assert_eq!(r.to_vec::<f64>().unwrap(), r2.to_vec::<f64>().unwrap());
            let n = a.randn_like().unwrap();
            assert_eq!((n.shape(), n.dtype()), (vec![2, 3], DType::Float64));
            let i = Tensor::from_slice(&[1i32, 2], &[2], Device::CPU).unwrap();
            assert_eq!(i.rand_like().unwrap_err().code, ErrorCode::DtypeMismatch);
            assert_eq!(i.randn_like().unwrap_err().code, ErrorCode::DtypeMismatch);

            let z = a.new_zeros(&[4]).unwrap();
            assert_eq!(
                (z.dtype(), z.to_vec::<f64>().unwrap()),
                (DType::Float64, vec![0.0; 4])
            );
            let o = i.new_ones(&[2, 2]).unwrap();
            assert_eq!(
                (o.shape(), o.to_vec::<i32>().unwrap()),
                (vec![2, 2], vec![1; 4])
            );
            let f = i.new_full(&[], 3.9).unwrap(); // 0-d, the value cast to int32
            assert_eq!((f.shape(), f.to_vec::<i32>().unwrap()), (vec![], vec![3]));
            let ne = a.new_empty(&[3, 1]).unwrap();
            assert_eq!((ne.shape(), ne.dtype()), (vec![3, 1], DType::Float64));
            assert_eq!(
                a.new_zeros(&[-1]).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
        });
    }

    #[test]
    fn nbytes_and_is_leaf() {
        leak_checked(|| {
            let a = Tensor::zeros(&[2, 3], DType::Float64, Device::CPU).unwrap();
            assert_eq!(a.nbytes(), 48);
            assert_eq!(a.nbytes(), a.numel() * a.dtype().size());
            assert_eq!(a.transpose(0, 1).unwrap().nbytes(), 48); // a view: its own elements
            assert_eq!(a.narrow(1, 0, 1).unwrap().nbytes(), 16);
            assert_eq!(
                Tensor::zeros(&[5], DType::Bool, Device::CPU)
                    .unwrap()
                    .nbytes(),
                5
            );
            let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
            assert!(x.is_leaf() && !x.requires_grad());
            x.set_requires_grad(true).unwrap();
            assert!(x.is_leaf() && x.requires_grad());
            let y = (&x * 2.0).unwrap();
            assert!(!y.is_leaf() && y.requires_grad());
            let d = y.detach().unwrap();
            assert!(d.is_leaf() && !d.requires_grad());
            let unrecorded = crate::no_grad(|| (&x * 2.0).unwrap()).unwrap();
            assert!(unrecorded.is_leaf() && !unrecorded.requires_grad());
        });
    }

    #[test]
    fn pinned_memory_needs_cuda() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
            assert!(!a.is_pinned());
            if !Device::cuda_is_available() {
                let e = Tensor::empty_pinned(&[4], DType::Float32).unwrap_err();
                assert_eq!(e.code, ErrorCode::DeviceUnavailable, "{e}");
                assert!(!e.message.is_empty());
                let e = a.pin_memory().unwrap_err();
                assert_eq!(e.code, ErrorCode::DeviceUnavailable, "{e}");
                return;
            }
            let e = Tensor::empty_pinned(&[4], DType::Float32).unwrap();
            assert!(e.is_pinned());
            assert_eq!((e.shape(), e.device()), (vec![4], Device::CPU));
            let p = a.pin_memory().unwrap();
            assert!(p.is_pinned());
            assert_ne!(p.as_ptr(), a.as_ptr());
            assert_eq!(p.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
            let again = p.pin_memory().unwrap();
            assert_eq!(
                again.as_ptr(),
                p.as_ptr(),
                "pin_memory of a pinned tensor is itself"
            );
            let g = a.to(Device::Cuda(0)).unwrap();
            assert_eq!(g.pin_memory().unwrap_err().code, ErrorCode::NotSupported);
        });
    }

    #[test]
    fn raw_handles_round_trip_through_sys() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU).unwrap();
            // Borrowed: a sys call reads it; a is still the owner.
            let mut n = 0usize;
            assert_eq!(unsafe { ffi::dt_tensor_numel(a.as_raw(), &mut n) }, ffi::DT_OK);
            assert_eq!(n, 3);
            assert_eq!(a.as_raw(), a.as_ptr());
            // A NEW tensor made through sys, owned by a Tensor.
            let mut out: *mut ffi::dt_tensor = std::ptr::null_mut();
            assert_eq!(unsafe { ffi::dt_mul_scalar(a.as_raw(), 2.0, &mut out) }, ffi::DT_OK);
            let b = unsafe { Tensor::from_raw(out) };
            assert_eq!(b.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
            // Out to the caller (who writes in place through sys: nobody else holds it),
            // and back in.
            let p = b.into_raw();
            assert_eq!(unsafe { ffi::dt_add_scalar_(p, 1.0) }, ffi::DT_OK);
            let b = unsafe { Tensor::from_raw(p) };
            assert_eq!(b.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0]);
            // A reference given out and released by hand.
            let q = a.clone().into_raw();
            assert_eq!(unsafe { ffi::dt_tensor_release(q) }, ffi::DT_OK);
            assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
            // A NULL handle is refused loudly.
            let r = std::panic::catch_unwind(|| unsafe { Tensor::from_raw(std::ptr::null_mut()) });
            assert!(r.is_err());
        });
    }

    #[test]
    fn send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Tensor>();
        leak_checked(|| {
            let a = Tensor::ones(&[4], DType::Float32, Device::CPU).unwrap();
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        let b = (&a + &a).unwrap();
                        assert_eq!(b.to_vec::<f32>().unwrap(), vec![2.0; 4]);
                    });
                }
            });
        });
    }
}

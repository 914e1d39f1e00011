//! devtensor: tensors on the CPU and on CUDA GPUs, with PyTorch's device semantics,
//! through devtensor's stable C ABI (`include/devtensor.h`; raw bindings in
//! `devtensor-sys`).
//!
//! ```
//! use devtensor::{DType, Device, Tensor};
//!
//! # fn main() -> devtensor::Result<()> {
//! let dev = Device::cuda_if_available();          // cuda:0 if there is one, else cpu:0
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU)?;
//! let b = a.to(dev)?;                             // a new tensor; `a` is untouched
//! let c = (&b + &b)?;                             // operators on references
//! assert_eq!(c.to(Device::CPU)?.to_vec::<f32>()?, vec![2.0, 4.0, 6.0]);
//! println!("{c}");                                // tensor([2., 4., 6.]) (PyTorch's format)
//! assert_eq!(Tensor::zeros(&[2, 2], DType::Float64, Device::CPU)?.shape(), vec![2, 2]);
//! # Ok(()) }
//! ```
//!
//! * Every fallible call returns [`Result`]; an [`Error`] has an [`ErrorCode`] and the
//!   library's message (`"add: expected device cpu:0 but got device cpu:1"`).
//! * [`Tensor`] is a reference-counted handle: `clone()` is a cheap retain,
//!   [`Tensor::deep_copy`] copies the data; dropping releases and never panics.
//! * [`Tensor::to`] returns a new tensor and leaves the source alone; when nothing
//!   changes it returns another handle to the same tensor, as PyTorch returns `self`.
//! * Operands of one operation must share a device; mixing is [`ErrorCode::DeviceMismatch`].
//! * The first call checks that the loaded library is not older than the header the
//!   bindings were generated from ([`check_version`]).
//!
//! * Grad mode: [`set_grad_enabled`] is process-wide, for every thread without a setting
//!   of its own; [`no_grad`] turns recording off for the calling thread only (other
//!   threads keep recording), and [`thread_grad_mode`] reads the thread's own setting.
//! * Streams and events ([`Stream`], [`Event`], as `torch.cuda.Stream` / `Event`):
//!   [`with_stream`] makes a stream the calling thread's current one for its device while
//!   a closure runs (restored afterwards, even on panic); [`thread_stream`] reads it. On
//!   the CPU every call has finished when it returns, events complete when recorded and
//!   time the host clock, so the same code runs there.
//! * Graphs ([`Graph`], as `torch.cuda.CUDAGraph`, on every device): [`Stream::capture`]
//!   records the work a closure queues on the stream's device instead of running it, and
//!   [`Graph::replay`] runs it again on the same (static) tensors; the capture ends
//!   when the closure returns, fails or panics. [`Stream::is_capturing`] tells.
//! * Process groups and collectives ([`ProcessGroup`], [`ReduceOp`], as
//!   `torch.distributed`): [`ProcessGroup::from_env`] joins the group of a job started by
//!   `devtensor run --nproc-per-node N -- program`; `all_reduce_`, `broadcast_`,
//!   `all_gather`, `reduce_scatter`, `barrier`, `send` and `recv` run over Gloo on CPU
//!   tensors, writing the tensors they are given.
//! * Process settings: [`set_default_dtype`], [`set_num_threads`], [`set_allow_tf32`]
//!   (and their getters); per device, [`Device::memory_stats`] and [`Device::empty_cache`].
//! * State dicts ([`StateDict`], PyTorch's `state_dict`): an ordered map from names to
//!   tensors, from [`nn::Module::state_dict`], into [`nn::Module::load_state_dict`], and
//!   to and from safetensors files ([`StateDict::save`], [`StateDict::load`]).
//! * What the C ABI has and this crate does not expose (in-place ops, borrowing host
//!   memory) is listed with the reasons in the repository's
//!   `bindings/unbound.txt`; [`sys`] reaches all of it. The handle types ([`Tensor`],
//!   [`nn::Module`], [`nn::Optimizer`], [`nn::LrScheduler`], [`StateDict`], [`ProcessGroup`], [`Stream`], [`Event`], [`Graph`]) combine
//!   with `sys` calls through `as_raw` (borrowed), `into_raw` (the reference goes to the
//!   caller) and `unsafe from_raw` (a reference is taken over).
//!
//! Modules, losses, autograd, optimizers and learning-rate schedulers are in [`nn`].
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
// Every public function returning `Result` says when it fails; `cargo clippy` checks.
#![warn(clippy::missing_errors_doc, clippy::missing_panics_doc)]

/// `as_raw`, `into_raw` and `unsafe from_raw` for a handle type `$t { ptr: NonNull<ffi::$raw> }`
/// whose `Drop` releases one reference: the way to combine [`sys`] calls with the safe
/// types. `$make` builds a value in the doc example.
macro_rules! raw_handle {
    ($t:ident, $path:literal, $raw:ident, $retain:ident, $release:ident, $make:literal) => {
        impl $t {
            #[doc = concat!(
                "The raw `", stringify!($raw), "*`, BORROWED: valid while `self` lives; no ",
                "reference is added. For the [`sys`](crate::sys) functions the safe API does ",
                "not call. Writing through it (an in-place op) is the caller's race with every ",
                "clone and view of the same handle. Example: [`", stringify!($t), "::from_raw`].")]
            pub fn as_raw(&self) -> *mut devtensor_sys::$raw {
                self.ptr.as_ptr()
            }

            #[doc = concat!(
                "Gives up ownership: the returned `", stringify!($raw), "*` carries the ",
                "reference `self` held, which the caller now owns (release it with `sys::",
                stringify!($release), "`, or give it back to a value with [`", stringify!($t),
                "::from_raw`], whose example shows both).")]
            pub fn into_raw(self) -> *mut devtensor_sys::$raw {
                let p = self.ptr.as_ptr();
                std::mem::forget(self);
                p
            }

            #[doc = concat!(
                "Takes ownership of one reference to a raw `", stringify!($raw), "*`: ",
                "dropping the result releases it (`sys::", stringify!($release), "`).\n\n",
                "# Safety\n\n",
                "`ptr` must be a live handle of this kind carrying a reference that the ",
                "caller owns and hands over: a NEW reference returned by a `sys` call, one ",
                "added with `sys::", stringify!($retain), "`, or one from [`", stringify!($t),
                "::into_raw`]. Taking the same reference twice releases it twice (the library ",
                "then reports `InvalidHandle` on later use; the safe API assumes it does not ",
                "happen).\n\n",
                "# Panics\n\n",
                "On a NULL `ptr`.\n\n",
                "```\n",
                "use devtensor::sys;\n",
                "# fn main() -> devtensor::Result<()> {\n",
                "let a = ", $make, ";\n",
                "// A second reference through the raw crate, owned by a second value.\n",
                "assert_eq!(unsafe { sys::", stringify!($retain), "(a.as_raw()) }, sys::DT_OK);\n",
                "let b = unsafe { ", $path, "::from_raw(a.as_raw()) };\n",
                "// Out to the caller and back in.\n",
                "let p = b.into_raw();\n",
                "let b = unsafe { ", $path, "::from_raw(p) };\n",
                "drop((a, b)); // two references, two releases\n",
                "# Ok(()) }\n",
                "```")]
            pub unsafe fn from_raw(ptr: *mut devtensor_sys::$raw) -> $t {
                let ptr = std::ptr::NonNull::new(ptr)
                    .expect(concat!(stringify!($t), "::from_raw: a NULL handle"));
                $t { ptr }
            }
        }
    };
}

mod device;
mod distributed;
mod dlpack;
mod dtype;
mod error;
mod graph;
pub mod nn;
mod ops;
pub use ops::{InterpolateMode, PadMode, Scalar};
mod state_dict;
mod stream;
mod tensor;

pub use device::{Device, DeviceKind, DeviceProperties, MemoryStats};
pub use distributed::{ProcessGroup, ReduceOp};
pub use dtype::{DType, Element};
pub use error::{Error, ErrorCode, Result};
pub use graph::Graph;
pub use state_dict::{StateDict, StateDictIter};
pub use stream::{thread_stream, with_stream, Event, Stream};
pub use tensor::Tensor;

/// The raw FFI crate, for what the safe API does not cover yet.
pub use devtensor_sys as sys;

use devtensor_sys as ffi;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

static VERSION_ONCE: Once = Once::new();
static LIB_VERSION: AtomicU32 = AtomicU32::new(0);

fn version_string(v: u32) -> String {
    format!("{}.{}.{}", v / 1_000_000, v / 1_000 % 1_000, v % 1_000)
}

/// Checks, once per process, that the loaded `libdevtensor` is usable by these bindings:
/// the same major version and not older than the header they were generated from
/// ([`sys::HEADER_VERSION`]). Every constructor calls it; calling it directly is only
/// needed to fail early. The error names both versions.
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// devtensor::check_version()?; // fail early, before the first tensor
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_version`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn check_version() -> Result<()> {
    VERSION_ONCE.call_once(|| {
        // SAFETY: no arguments, never fails.
        LIB_VERSION.store(unsafe { ffi::dt_version() }, Ordering::Release);
    });
    match version_error(LIB_VERSION.load(Ordering::Acquire), ffi::HEADER_VERSION) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The error for a library of version `lib` under bindings generated from header `hdr`
/// (`DT_VERSION_NUMBER` encoding), or `None` when they fit.
fn version_error(lib: u32, hdr: u32) -> Option<Error> {
    if lib >= hdr && lib / 1_000_000 == hdr / 1_000_000 {
        return None;
    }
    Some(Error::new(
        ErrorCode::Version,
        format!(
            "libdevtensor {} is loaded but these bindings were generated from devtensor.h {}: \
             install libdevtensor {} or newer (same major version)",
            version_string(lib),
            version_string(hdr),
            version_string(hdr)
        ),
    ))
}

/// The loaded library's version, `"MAJOR.MINOR.PATCH"` (`dt_version_string`).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// let v = devtensor::version();
/// assert_eq!(v.split('.').count(), 3);
/// # Ok(()) }
/// ```
pub fn version() -> String {
    // SAFETY: static storage, never NULL.
    unsafe { CStr::from_ptr(ffi::dt_version_string()) }
        .to_string_lossy()
        .into_owned()
}

/// A description of the build: version, backends, BLAS, compiler (`dt_build_info`).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// let info = devtensor::build_info()?;
/// assert!(info.contains(&devtensor::version()));
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_build_info`: an
/// [`Error`] with the library's code and message.
pub fn build_info() -> Result<String> {
    read_string(|buf, cap, needed| unsafe { ffi::dt_build_info(buf, cap, needed) })
}

/// The number of live handles of every kind in the process (`dt_live_handle_count`): a
/// test that ends with the count it started with has leaked none.
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// let before = devtensor::live_handle_count();
/// let t = Tensor::zeros(&[1], DType::Float32, Device::CPU)?;
/// assert_eq!(devtensor::live_handle_count(), before + 1);
/// drop(t);
/// assert_eq!(devtensor::live_handle_count(), before);
/// # Ok(()) }
/// ```
pub fn live_handle_count() -> usize {
    // SAFETY: no arguments.
    unsafe { ffi::dt_live_handle_count() }
}

/// Seeds the random generators of every device (`dt_manual_seed`).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// devtensor::manual_seed(42)?;
/// let a = Tensor::randn(&[3], DType::Float32, Device::CPU)?;
/// devtensor::manual_seed(42)?;
/// assert_eq!(a.to_vec::<f32>()?, Tensor::randn(&[3], DType::Float32, Device::CPU)?.to_vec::<f32>()?);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_manual_seed`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn manual_seed(seed: u64) -> Result<()> {
    check_version()?;
    error::check(unsafe { ffi::dt_manual_seed(seed) })
}

/// Sets the number of CPU threads large operations use (`dt_set_num_threads`).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// devtensor::set_num_threads(2)?;
/// assert_eq!(devtensor::num_threads()?, 2);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_set_num_threads`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn set_num_threads(n: i32) -> Result<()> {
    check_version()?;
    error::check(unsafe { ffi::dt_set_num_threads(n) })
}

/// The number of CPU threads large operations use (`dt_num_threads`).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// assert!(devtensor::num_threads()? >= 1);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_num_threads`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn num_threads() -> Result<i32> {
    check_version()?;
    let mut n = 0i32;
    error::check(unsafe { ffi::dt_num_threads(&mut n) })?;
    Ok(n)
}

/// Sets the process-wide default dtype (`dt_set_default_dtype`), initially
/// [`DType::Float32`]: the dtype of integer-to-float results (true division, `exp` of an
/// integer tensor, ...). It must be floating ([`ErrorCode::DtypeMismatch`] otherwise).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// devtensor::set_default_dtype(DType::Float64)?;
/// let i = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU)?;
/// assert_eq!((&i / 2i64)?.dtype(), DType::Float64); // true division
/// devtensor::set_default_dtype(DType::Float32)?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_set_default_dtype`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn set_default_dtype(dtype: DType) -> Result<()> {
    check_version()?;
    error::check(unsafe { ffi::dt_set_default_dtype(dtype.to_raw()) })
}

/// The process-wide default dtype (`dt_default_dtype`).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// assert_eq!(devtensor::default_dtype()?, DType::Float32);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_default_dtype`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn default_dtype() -> Result<DType> {
    check_version()?;
    let mut d = 0;
    error::check(unsafe { ffi::dt_default_dtype(&mut d) })?;
    DType::from_raw(d)
}

/// Sets whether float32 matrix products on CUDA may use TensorFloat-32 tensor cores
/// (faster, about 10 bits of mantissa), as `torch.backends.cuda.matmul.allow_tf32`
/// (`dt_set_allow_tf32`). Off by default, as in PyTorch; process-wide; the CPU ignores it.
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// devtensor::set_allow_tf32(true)?;
/// assert!(devtensor::allow_tf32()?);
/// devtensor::set_allow_tf32(false)?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_set_allow_tf32`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn set_allow_tf32(allow: bool) -> Result<()> {
    check_version()?;
    error::check(unsafe { ffi::dt_set_allow_tf32(allow as i32) })
}

/// Whether TF32 is allowed (`dt_allow_tf32`; see [`set_allow_tf32`]).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// assert!(!devtensor::allow_tf32()?); // off by default, as in PyTorch
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_allow_tf32`: an
/// [`Error`] with the library's code and message.
/// [`ErrorCode::Version`] when the loaded library is one
/// these bindings cannot use.
pub fn allow_tf32() -> Result<bool> {
    check_version()?;
    let mut v = 0i32;
    error::check(unsafe { ffi::dt_allow_tf32(&mut v) })?;
    Ok(v != 0)
}

/// Turns autograd recording on or off, process-wide (`dt_set_grad_enabled`): for every
/// thread that has no setting of its own (see [`no_grad`]).
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::ones(&[2], DType::Float32, Device::CPU)?;
/// x.set_requires_grad(true)?;
/// devtensor::set_grad_enabled(false)?;
/// assert!(!(&x * 2.0)?.requires_grad());
/// devtensor::set_grad_enabled(true)?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_set_grad_enabled`: an
/// [`Error`] with the library's code and message.
pub fn set_grad_enabled(enabled: bool) -> Result<()> {
    error::check(unsafe { ffi::dt_set_grad_enabled(enabled as i32) })
}

/// Whether autograd records operations on this thread (`dt_grad_enabled`): the thread's
/// own setting if it has one, else the process-wide one.
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// assert!(devtensor::grad_enabled()?);
/// assert!(!devtensor::no_grad(|| devtensor::grad_enabled())??);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_grad_enabled`: an
/// [`Error`] with the library's code and message.
pub fn grad_enabled() -> Result<bool> {
    let mut v = 0i32;
    error::check(unsafe { ffi::dt_grad_enabled(&mut v) })?;
    Ok(v != 0)
}

/// Runs `f` with grad mode off on this thread only (`dt_set_thread_grad_mode`, as
/// PyTorch's `torch.no_grad()`), restoring the thread's previous mode afterwards, even on
/// panic. Other threads keep recording.
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// let x = Tensor::ones(&[2], DType::Float32, Device::CPU)?;
/// x.set_requires_grad(true)?;
/// let y = devtensor::no_grad(|| &x * 2.0)??;
/// assert!(!y.requires_grad());
/// assert!((&x * 2.0)?.requires_grad()); // recording again
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_set_thread_grad_mode`: an
/// [`Error`] with the library's code and message.
pub fn no_grad<R>(f: impl FnOnce() -> R) -> Result<R> {
    struct Restore(i32);
    impl Drop for Restore {
        fn drop(&mut self) {
            unsafe { ffi::dt_set_thread_grad_mode(self.0, std::ptr::null_mut()) };
        }
    }
    let mut prev = ffi::DT_GRAD_MODE_PROCESS;
    error::check(unsafe { ffi::dt_set_thread_grad_mode(0, &mut prev) })?;
    let _restore = Restore(prev);
    Ok(f())
}

/// A thread's own grad mode, from [`thread_grad_mode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadGradMode {
    /// No setting of its own (every thread's initial state): the thread follows the
    /// process-wide [`set_grad_enabled`].
    Process,
    /// Records, whatever the process-wide setting.
    Enabled,
    /// Does not record (inside [`no_grad`]).
    Disabled,
}

/// The calling thread's own grad mode (`dt_thread_grad_mode`): [`ThreadGradMode::Disabled`]
/// inside [`no_grad`], else [`ThreadGradMode::Process`]. [`grad_enabled`] says whether the
/// thread records, whichever setting decides it.
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// use devtensor::ThreadGradMode;
/// assert_eq!(devtensor::thread_grad_mode()?, ThreadGradMode::Process);
/// let inside = devtensor::no_grad(devtensor::thread_grad_mode)??;
/// assert_eq!(inside, ThreadGradMode::Disabled);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_thread_grad_mode`: an
/// [`Error`] with the library's code and message.
pub fn thread_grad_mode() -> Result<ThreadGradMode> {
    let mut v = 0i32;
    error::check(unsafe { ffi::dt_thread_grad_mode(&mut v) })?;
    match v {
        ffi::DT_GRAD_MODE_PROCESS => Ok(ThreadGradMode::Process),
        1 => Ok(ThreadGradMode::Enabled),
        0 => Ok(ThreadGradMode::Disabled),
        other => Err(Error::new(
            ErrorCode::Internal,
            format!("dt_thread_grad_mode returned the unknown mode {other}"),
        )),
    }
}

/// The string protocol of the header: ask for the size, then fill.
pub(crate) fn read_string(
    mut call: impl FnMut(*mut std::os::raw::c_char, usize, *mut usize) -> ffi::dt_status,
) -> Result<String> {
    let mut buf = vec![0u8; 256];
    loop {
        let mut needed = 0usize;
        error::check(call(buf.as_mut_ptr().cast(), buf.len(), &mut needed))?;
        if needed <= buf.len() {
            let end = needed.saturating_sub(1);
            buf.truncate(end);
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
        buf = vec![0u8; needed];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_check() {
        check_version().unwrap();
        assert!(version_error(1_002_003, 1_002_003).is_none());
        assert!(version_error(1_003_000, 1_002_003).is_none()); // newer minor: fine
        let e = version_error(1_001_009, 1_002_003).unwrap(); // older: refused
        assert_eq!(e.code, ErrorCode::Version);
        assert!(
            e.message.contains("libdevtensor 1.1.9") && e.message.contains("devtensor.h 1.2.3"),
            "{e}"
        );
        assert!(version_error(2_000_000, 1_002_003).is_some()); // another major: refused
        assert_eq!(version(), version_string(unsafe { ffi::dt_version() }));
    }

    #[test]
    fn no_grad_is_this_threads_alone() {
        test_support::leak_checked(|| {
            let x = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
            x.set_requires_grad(true).unwrap();
            let (inside, other_thread) = no_grad(|| {
                let y = (&x * 2.0).unwrap();
                // Another thread, meanwhile, still records.
                let z = std::thread::scope(|s| s.spawn(|| (&x * 2.0).unwrap().requires_grad()).join().unwrap());
                (y.requires_grad(), z)
            })
            .unwrap();
            assert!(!inside, "no_grad recorded");
            assert!(other_thread, "no_grad on one thread stopped another from recording");
            assert!((&x * 2.0).unwrap().requires_grad(), "the thread's mode was not restored");
            assert!(grad_enabled().unwrap());
        });
    }

    #[test]
    fn thread_grad_mode_follows_no_grad() {
        test_support::leak_checked(|| {
            assert_eq!(thread_grad_mode().unwrap(), ThreadGradMode::Process);
            let (inside, nested, other) = no_grad(|| {
                let nested = no_grad(|| thread_grad_mode().unwrap()).unwrap();
                let other =
                    std::thread::scope(|s| s.spawn(|| thread_grad_mode().unwrap()).join().unwrap());
                (thread_grad_mode().unwrap(), nested, other)
            })
            .unwrap();
            assert_eq!(inside, ThreadGradMode::Disabled);
            assert_eq!(nested, ThreadGradMode::Disabled);
            assert_eq!(
                other,
                ThreadGradMode::Process,
                "another thread took no_grad's mode"
            );
            assert_eq!(
                thread_grad_mode().unwrap(),
                ThreadGradMode::Process,
                "not restored"
            );
            // A panic inside restores the mode too.
            let r = std::panic::catch_unwind(|| no_grad(|| panic!("boom")));
            assert!(r.is_err());
            assert_eq!(
                thread_grad_mode().unwrap(),
                ThreadGradMode::Process,
                "not restored after a panic"
            );
            // The raw call can set Enabled; restore it.
            let mut prev = 0i32;
            error::check(unsafe { ffi::dt_set_thread_grad_mode(1, &mut prev) }).unwrap();
            assert_eq!(thread_grad_mode().unwrap(), ThreadGradMode::Enabled);
            error::check(unsafe { ffi::dt_set_thread_grad_mode(prev, std::ptr::null_mut()) })
                .unwrap();
            assert_eq!(thread_grad_mode().unwrap(), ThreadGradMode::Process);
        });
    }

    #[test]
    fn process_settings() {
        test_support::leak_checked(|| {
            // The default dtype: what integer division gives.
            assert_eq!(default_dtype().unwrap(), DType::Float32);
            let i = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();
            set_default_dtype(DType::Float64).unwrap();
            let q = (&i / &i).map(|q| q.dtype());
            let now = default_dtype();
            set_default_dtype(DType::Float32).unwrap();
            assert_eq!(now.unwrap(), DType::Float64);
            assert_eq!(q.unwrap(), DType::Float64);
            assert_eq!((&i / &i).unwrap().dtype(), DType::Float32);
            let e = set_default_dtype(DType::Int64).unwrap_err();
            assert_eq!(e.code, ErrorCode::DtypeMismatch, "{e}");
            assert_eq!(default_dtype().unwrap(), DType::Float32);
            // Threads.
            let n = num_threads().unwrap();
            assert!(n >= 1);
            assert_eq!(
                set_num_threads(0).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
            set_num_threads(n).unwrap();
            assert_eq!(num_threads().unwrap(), n);
            // TF32: off by default.
            assert!(!allow_tf32().unwrap());
            set_allow_tf32(true).unwrap();
            let on = allow_tf32().unwrap();
            set_allow_tf32(false).unwrap();
            assert!(on);
            assert!(!allow_tf32().unwrap());
        });
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::{Mutex, MutexGuard};

    static SERIAL: Mutex<()> = Mutex::new(());

    /// Runs a test body alone (tests of one binary run on several threads, and the handle
    /// count is process-wide) and checks that it leaves no handle behind.
    pub fn leak_checked(f: impl FnOnce()) {
        let _g: MutexGuard<'_, ()> = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let before = crate::live_handle_count();
        f();
        assert_eq!(
            crate::live_handle_count(),
            before,
            "the test leaked handles"
        );
    }
}

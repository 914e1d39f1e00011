//! Streams and events, as `torch.cuda.Stream` and `torch.cuda.Event`
//! (`include/devtensor.h`, "streams and events").
//!
//! A [`Stream`] is a queue of work on one device; work on different streams may run at
//! the same time (a copy beside a kernel) and is ordered only through [`Event`]s. Every
//! device has a default stream ([`Stream::default_for`]), the one devtensor uses unless
//! told otherwise.
//!
//! Each thread has a current stream per device, initially the default: operations,
//! copies and allocations for a tensor on that device are queued on it (it never chooses
//! the device, which still comes from the tensors). [`with_stream`] sets it for the
//! duration of a closure, as PyTorch's `torch.cuda.stream(s)` context, and
//! [`thread_stream`] reads it.
//!
//! Memory allocated while a stream is current belongs to that stream (its free is queued
//! there); another stream that uses it must be made known with [`Tensor::record_stream`].
//!
//! The CPU (and any device without streams of its own) has one in-order queue on which
//! every call has finished when it returns: all its streams are that queue, an event
//! completes when it is recorded, and elapsed times come from the host clock. Code written
//! for a GPU runs unchanged on the CPU:
//!
//! ```
//! use devtensor::{with_stream, DType, Device, Event, Stream, Tensor};
//!
//! # fn main() -> devtensor::Result<()> {
//! let dev = Device::CPU;
//! let s = Stream::new(dev)?;
//! let (start, end) = (Event::new(dev)?, Event::new(dev)?);
//! let a = Tensor::ones(&[2], DType::Float32, dev)?;
//! let b = with_stream(&s, || -> devtensor::Result<Tensor> {
//!     start.record(None)?;                       // None: the current stream, s
//!     let b = (&a + &a)?;                        // queued on s
//!     end.record(None)?;
//!     Ok(b)
//! })??;
//! assert!(start.elapsed_ms(&end)? >= 0.0);       // waits for the work between the marks
//! assert_eq!(b.to_vec::<f32>()?, vec![2.0, 2.0]);
//! # Ok(()) }
//! ```
use crate::error::{check, Error, ErrorCode, Result};
use crate::{check_version, ffi, Device, Tensor};
use std::fmt;
use std::os::raw::c_void;
use std::ptr::NonNull;

/// A queue of work on one device (`dt_stream`).
///
/// A `Stream` owns one reference: `clone()` adds one (`dt_stream_retain`; the clone is the
/// same stream), dropping releases it and never panics. The stream itself lives on while
/// tensors allocated on it, or a thread's current stream, refer to it; work queued on it
/// finishes.
pub struct Stream {
    ptr: NonNull<ffi::dt_stream>,
}

/// A marker in a stream's work that other streams and the host can wait for, and that
/// times the work between two marks (`dt_event`). `clone()` adds a reference
/// (`dt_event_retain`), dropping releases one.
pub struct Event {
    ptr: NonNull<ffi::dt_event>,
}

// SAFETY: include/devtensor.h: "Streams and events are thread-safe. Recording or waiting
// from several threads at once on the same event orders them in some order, as CUDA
// does", and every function is safe to call from any thread, with atomic reference counts
// and handle checks. A Stream or Event is only a handle; every method takes `&self`, and
// a reference is released only in Drop, which needs ownership, so no thread can release a
// handle another thread is using.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}
// SAFETY: as for Stream.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

raw_handle!(
    Stream,
    "devtensor::Stream",
    dt_stream,
    dt_stream_retain,
    dt_stream_release,
    "devtensor::Stream::new(devtensor::Device::CPU)?"
);
raw_handle!(
    Event,
    "devtensor::Event",
    dt_event,
    dt_event_retain,
    dt_event_release,
    "devtensor::Event::new(devtensor::Device::CPU)?"
);

impl Stream {
    /// Wraps a NEW reference written by a C call.
    fn from_out(call: impl FnOnce(*mut *mut ffi::dt_stream) -> ffi::dt_status) -> Result<Stream> {
        let mut out: *mut ffi::dt_stream = std::ptr::null_mut();
        check(call(&mut out))?;
        NonNull::new(out).map(|ptr| Stream { ptr }).ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL stream",
            )
        })
    }

    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut ffi::dt_stream {
        self.ptr.as_ptr()
    }

    /// A new stream on `device` (`dt_stream_create`). On a GPU it is a hardware queue of
    /// its own that does not wait for the default stream; on the CPU it is the device's
    /// one queue.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let dev = Device::cuda_if_available();
    /// let s = devtensor::Stream::new(dev)?;
    /// assert_eq!(s.device(), dev);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidDevice`], [`ErrorCode::DeviceUnavailable`],
    /// [`ErrorCode::OutOfMemory`], [`ErrorCode::Backend`].
    pub fn new(device: Device) -> Result<Stream> {
        check_version()?;
        Stream::from_out(|o| unsafe { ffi::dt_stream_create(device.to_raw(), o) })
    }

    /// Another reference to `device`'s default stream (`dt_stream_default`):
    /// [`is_default`](Stream::is_default) is true, and [`with_stream`] of it runs on the
    /// default stream.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::default_for(Device::CPU)?;
    /// assert!(s.is_default());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Stream::new`].
    pub fn default_for(device: Device) -> Result<Stream> {
        check_version()?;
        Stream::from_out(|o| unsafe { ffi::dt_stream_default(device.to_raw(), o) })
    }

    /// The stream's device (`dt_stream_device`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// assert_eq!(s.device(), Device::CPU);
    /// # Ok(()) }
    /// ```
    pub fn device(&self) -> Device {
        let mut d = Device::CPU.to_raw();
        // SAFETY: a live handle and a valid out-pointer: cannot fail.
        unsafe { ffi::dt_stream_device(self.as_ptr(), &mut d) };
        Device::from_raw(d).unwrap_or(Device::CPU)
    }

    /// Whether this is its device's default stream (`dt_stream_is_default`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// assert!(!s.is_default());
    /// assert!(devtensor::Stream::default_for(Device::CPU)?.is_default());
    /// # Ok(()) }
    /// ```
    pub fn is_default(&self) -> bool {
        let mut v = 0i32;
        // SAFETY: a live handle and a valid out-pointer: cannot fail.
        unsafe { ffi::dt_stream_is_default(self.as_ptr(), &mut v) };
        v != 0
    }

    /// Waits until the work queued on this stream has finished (`dt_stream_synchronize`;
    /// at once on the CPU).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// s.synchronize()?;
    /// assert!(s.query()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DeviceLost`] (a kernel on it failed), [`ErrorCode::Backend`].
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { ffi::dt_stream_synchronize(self.as_ptr()) })
    }

    /// Whether the work queued on this stream has finished, without waiting
    /// (`dt_stream_query`; always true on the CPU).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// assert!(s.query()?); // nothing queued
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`synchronize`](Stream::synchronize).
    pub fn query(&self) -> Result<bool> {
        let mut done = 0i32;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_stream_query(self.as_ptr(), &mut done) })?;
        Ok(done != 0)
    }

    /// Work queued on this stream after this call waits until `event`'s recorded work has
    /// finished; the caller does not wait (`dt_stream_wait_event`). `event` may be of
    /// another device; an event never recorded is no wait.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// let e = devtensor::Event::new(Device::CPU)?;
    /// e.record(None)?;
    /// s.wait_event(&e)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_stream_wait_event`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { ffi::dt_stream_wait_event(self.as_ptr(), event.as_ptr()) })
    }

    /// Work queued on this stream after this call waits for the work queued on `other` so
    /// far (an event recorded on `other`, waited for by this one; `dt_stream_wait_stream`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// let other = devtensor::Stream::default_for(Device::CPU)?;
    /// s.wait_stream(&other)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_stream_wait_stream`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn wait_stream(&self, other: &Stream) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { ffi::dt_stream_wait_stream(self.as_ptr(), other.as_ptr()) })
    }

    /// The backend's own handle of this stream, for mixing libraries on one queue
    /// (`dt_stream_native_handle`): a `cudaStream_t` for a CUDA stream (the default
    /// stream's too), NULL for a device without streams (the CPU). Borrowed: valid while
    /// this stream lives; never destroy it.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// assert!(s.native_handle()?.is_null()); // no native stream on the CPU
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_stream_native_handle`: an
    /// [`Error`](crate::Error) with the library's code and message.
    pub fn native_handle(&self) -> Result<*mut c_void> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_stream_native_handle(self.as_ptr(), &mut p) })?;
        Ok(p)
    }
}

impl Clone for Stream {
    /// Another reference to the same stream (`dt_stream_retain`).
    fn clone(&self) -> Stream {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_stream_retain(self.as_ptr()) };
        debug_assert_eq!(st, ffi::DT_OK);
        Stream { ptr: self.ptr }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: we own exactly one reference. Never panics.
        let _ = unsafe { ffi::dt_stream_release(self.as_ptr()) };
    }
}

impl fmt::Debug for Stream {
    /// `Stream(cpu:0, default)` or `Stream(cuda:0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_default() {
            write!(f, "Stream({}, default)", self.device())
        } else {
            write!(f, "Stream({})", self.device())
        }
    }
}

/// Runs `f` with `stream` as the calling thread's current stream for its device, as
/// PyTorch's `torch.cuda.stream(s)` context (`dt_set_thread_stream`): the operations,
/// copies and allocations `f` makes for tensors on that device are queued on `stream`
/// (other devices keep their current streams, and other threads are not affected). The
/// previous stream is set back afterwards, also when `f` panics (the panic goes on).
/// Calls nest; `with_stream(&Stream::default_for(dev)?, f)` runs `f` on the default
/// stream. Memory allocated inside `f` belongs to `stream`: another stream using it must
/// be made known with [`Tensor::record_stream`].
///
/// Errors, before `f` runs (it does not run then): [`ErrorCode::OutOfMemory`].
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// let dev = Device::cuda_if_available();
/// let s = devtensor::Stream::new(dev)?;
/// let y = devtensor::with_stream(&s, || Tensor::ones(&[4], DType::Float32, dev))??;
/// s.synchronize()?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0; 4]);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// The errors that `include/devtensor.h` lists for `dt_set_thread_stream`: an
/// [`Error`](crate::Error) with the library's code and message.
pub fn with_stream<R>(stream: &Stream, f: impl FnOnce() -> R) -> Result<R> {
    /// Sets the stream it holds (a reference of its own) back and releases it.
    struct Restore(*mut ffi::dt_stream);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: self.0 is the NEW reference dt_set_thread_stream handed back; it is
            // set again, on this same thread, then released once. Never panics.
            unsafe {
                ffi::dt_set_thread_stream(self.0, std::ptr::null_mut());
                ffi::dt_stream_release(self.0);
            }
        }
    }
    let mut previous: *mut ffi::dt_stream = std::ptr::null_mut();
    // SAFETY: a live handle and a valid out-pointer.
    check(unsafe { ffi::dt_set_thread_stream(stream.as_ptr(), &mut previous) })?;
    let _restore = Restore(previous);
    Ok(f())
}

/// Another reference to the calling thread's current stream for `device`
/// (`dt_thread_stream`): the stream of the innermost [`with_stream`] on this thread for
/// that device, else its default stream.
///
/// ```
/// # use devtensor::{DType, Device, ErrorCode, Tensor};
/// # fn main() -> devtensor::Result<()> {
/// let s = devtensor::Stream::new(Device::CPU)?;
/// let inside = devtensor::with_stream(&s, || devtensor::thread_stream(Device::CPU))??;
/// assert_eq!(inside.device(), Device::CPU);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`ErrorCode::InvalidDevice`], [`ErrorCode::DeviceUnavailable`].
pub fn thread_stream(device: Device) -> Result<Stream> {
    check_version()?;
    Stream::from_out(|o| unsafe { ffi::dt_thread_stream(device.to_raw(), o) })
}

impl Event {
    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut ffi::dt_event {
        self.ptr.as_ptr()
    }

    /// A new event on `device`, never recorded, that times what it marks
    /// (`dt_event_create`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let e = devtensor::Event::new(Device::CPU)?;
    /// assert!(e.query()?); // never recorded: complete
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Stream::new`].
    pub fn new(device: Device) -> Result<Event> {
        check_version()?;
        let mut out: *mut ffi::dt_event = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { ffi::dt_event_create(device.to_raw(), &mut out) })?;
        NonNull::new(out).map(|ptr| Event { ptr }).ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL event",
            )
        })
    }

    /// The event's device (`dt_event_device`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let e = devtensor::Event::new(Device::CPU)?;
    /// assert_eq!(e.device(), Device::CPU);
    /// # Ok(()) }
    /// ```
    pub fn device(&self) -> Device {
        let mut d = Device::CPU.to_raw();
        // SAFETY: a live handle and a valid out-pointer: cannot fail.
        unsafe { ffi::dt_event_device(self.as_ptr(), &mut d) };
        Device::from_raw(d).unwrap_or(Device::CPU)
    }

    /// Marks the end of the work queued on `stream` so far (`dt_event_record`; `None`: the
    /// calling thread's current stream of the event's device, see [`with_stream`]).
    /// Recording again moves the mark. On the CPU the event completes when it is recorded.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let e = devtensor::Event::new(Device::CPU)?;
    /// e.record(None)?; // on the thread's current stream
    /// e.synchronize()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DeviceMismatch`] (a stream of another device),
    /// [`ErrorCode::DeviceLost`], [`ErrorCode::Backend`].
    pub fn record(&self, stream: Option<&Stream>) -> Result<()> {
        let s = stream.map_or(std::ptr::null(), |s| s.as_ptr() as *const ffi::dt_stream);
        // SAFETY: a live handle, and a live stream or NULL.
        check(unsafe { ffi::dt_event_record(self.as_ptr(), s) })
    }

    /// Waits until the recorded work has finished, at once for an event never recorded
    /// (`dt_event_synchronize`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let e = devtensor::Event::new(Device::CPU)?;
    /// e.record(None)?;
    /// e.synchronize()?;
    /// assert!(e.query()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DeviceLost`], [`ErrorCode::Backend`].
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { ffi::dt_event_synchronize(self.as_ptr()) })
    }

    /// Whether the recorded work has finished (true for an event never recorded), without
    /// waiting (`dt_event_query`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let e = devtensor::Event::new(Device::CPU)?;
    /// e.record(None)?;
    /// e.synchronize()?;
    /// assert!(e.query()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`synchronize`](Event::synchronize).
    pub fn query(&self) -> Result<bool> {
        let mut done = 0i32;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_event_query(self.as_ptr(), &mut done) })?;
        Ok(done != 0)
    }

    /// Milliseconds from this event's mark to `end`'s, both recorded on one device, after
    /// waiting for their work to finish (`dt_event_elapsed_ms`): on a GPU from the
    /// device's clock (about 0.5 µs resolution), on the CPU from the host's steady clock.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let (start, end) = (devtensor::Event::new(Device::CPU)?, devtensor::Event::new(Device::CPU)?);
    /// start.record(None)?;
    /// let _t = Tensor::randn(&[256, 256], DType::Float32, Device::CPU)?;
    /// end.record(None)?;
    /// end.synchronize()?;
    /// assert!(start.elapsed_ms(&end)? >= 0.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (an event never recorded, events of different
    /// devices), [`ErrorCode::DeviceLost`], [`ErrorCode::Backend`].
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        let mut ms = 0f32;
        // SAFETY: two live handles and a valid out-pointer.
        check(unsafe { ffi::dt_event_elapsed_ms(self.as_ptr(), end.as_ptr(), &mut ms) })?;
        Ok(ms)
    }
}

impl Clone for Event {
    /// Another reference to the same event (`dt_event_retain`).
    fn clone(&self) -> Event {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_event_retain(self.as_ptr()) };
        debug_assert_eq!(st, ffi::DT_OK);
        Event { ptr: self.ptr }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: we own exactly one reference. Never panics.
        let _ = unsafe { ffi::dt_event_release(self.as_ptr()) };
    }
}

impl fmt::Debug for Event {
    /// `Event(cpu:0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Event({})", self.device())
    }
}

impl Tensor {
    /// Tells the allocator that this tensor's memory is used by work queued on `stream`, a
    /// stream of its device other than the one it was allocated on: when the memory is
    /// freed, the free waits for the work queued on `stream` until then
    /// (`dt_tensor_record_stream`, as torch's `Tensor.record_stream`). Nothing to do, and
    /// no error, on devices without streams (the CPU).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// let t = Tensor::zeros(&[4], DType::Float32, Device::CPU)?;
    /// t.record_stream(&s)?; // its memory waits for s's work before reuse
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DeviceMismatch`] (a stream of another device),
    /// [`ErrorCode::OutOfMemory`].
    pub fn record_stream(&self, stream: &Stream) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { ffi::dt_tensor_record_stream(self.as_ptr(), stream.as_ptr()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::leak_checked;
    use crate::DType;
    use std::time::Duration;

    fn thread_stream_is_default(d: Device) -> bool {
        thread_stream(d).unwrap().is_default()
    }

    #[test]
    fn create_clone_drop() {
        leak_checked(|| {
            let before = crate::live_handle_count();
            let s = Stream::new(Device::CPU).unwrap();
            assert_eq!(crate::live_handle_count(), before + 1);
            assert_eq!(s.device(), Device::CPU);
            assert!(!s.is_default());
            assert!(s.query().unwrap(), "a CPU stream has unfinished work");
            s.synchronize().unwrap();
            assert!(s.native_handle().unwrap().is_null());
            let c = s.clone(); // a retain: the same handle, no new one
            assert_eq!(c.as_ptr(), s.as_ptr());
            assert_eq!(crate::live_handle_count(), before + 1);
            drop(s);
            assert!(!c.is_default(), "the clone died with the original");
            drop(c);
            assert_eq!(crate::live_handle_count(), before);

            let e = Event::new(Device::CPU).unwrap();
            let e2 = e.clone();
            assert_eq!(e2.as_ptr(), e.as_ptr());
            drop(e);
            assert!(e2.query().unwrap());
            assert_eq!(format!("{e2:?}"), "Event(cpu:0)");
            drop(e2);
            assert_eq!(crate::live_handle_count(), before);

            assert_eq!(
                Stream::new(Device::Cpu(99)).unwrap_err().code,
                ErrorCode::InvalidDevice
            );
            assert_eq!(
                Event::new(Device::Cpu(99)).unwrap_err().code,
                ErrorCode::InvalidDevice
            );
            if !Device::cuda_is_available() {
                assert_eq!(
                    Stream::new(Device::Cuda(0)).unwrap_err().code,
                    ErrorCode::DeviceUnavailable
                );
            }
        });
    }

    #[test]
    fn default_stream_is_default() {
        leak_checked(|| {
            let d = Stream::default_for(Device::CPU).unwrap();
            assert!(d.is_default());
            assert_eq!(d.device(), Device::CPU);
            assert_eq!(format!("{d:?}"), "Stream(cpu:0, default)");
            assert_eq!(
                format!("{:?}", Stream::new(Device::CPU).unwrap()),
                "Stream(cpu:0)"
            );
            assert!(thread_stream_is_default(Device::CPU));
        });
    }

    #[test]
    fn with_stream_runs_ops_and_restores() {
        leak_checked(|| {
            let s = Stream::new(Device::CPU).unwrap();
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], Device::CPU).unwrap();
            let b = Tensor::from_slice(&[10.0f32, 20.0, 30.0], &[3], Device::CPU).unwrap();
            let (c, inside, other_thread) = with_stream(&s, || {
                let cur = thread_stream(Device::CPU).unwrap();
                // Another thread keeps the default stream.
                let other = std::thread::scope(|sc| {
                    sc.spawn(|| thread_stream_is_default(Device::CPU))
                        .join()
                        .unwrap()
                });
                ((&a + &b).unwrap(), cur, other)
            })
            .unwrap();
            assert_eq!(c.to_vec::<f32>().unwrap(), vec![11.0, 22.0, 33.0]);
            assert!(
                !inside.is_default(),
                "inside with_stream the stream is not s"
            );
            assert_eq!(inside.device(), Device::CPU);
            assert!(other_thread, "with_stream changed another thread's stream");
            assert!(thread_stream_is_default(Device::CPU), "not restored");

            // A panic restores the stream too, and goes on.
            let r = std::panic::catch_unwind(|| with_stream(&s, || panic!("boom")));
            assert!(r.is_err());
            assert!(
                thread_stream_is_default(Device::CPU),
                "not restored after a panic"
            );

            // Calls nest; the default stream sets the default back for the inner call.
            let def = Stream::default_for(Device::CPU).unwrap();
            with_stream(&s, || {
                with_stream(&def, || {
                    assert!(
                        thread_stream_is_default(Device::CPU),
                        "inner: not the default"
                    )
                })
                .unwrap();
                assert!(
                    !thread_stream_is_default(Device::CPU),
                    "the inner call did not restore the outer stream"
                );
            })
            .unwrap();
            assert!(thread_stream_is_default(Device::CPU));
        });
    }

    #[test]
    fn events_time_the_host_clock_on_the_cpu() {
        leak_checked(|| {
            let s = Stream::new(Device::CPU).unwrap();
            let start = Event::new(Device::CPU).unwrap();
            let end = Event::new(Device::CPU).unwrap();
            assert_eq!(start.device(), Device::CPU);
            // Never recorded: finished, nothing to wait for, no elapsed time.
            assert!(start.query().unwrap());
            start.synchronize().unwrap();
            let e = start.elapsed_ms(&end).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");

            start.record(None).unwrap(); // the thread's current stream: the default
            assert!(
                start.query().unwrap(),
                "a CPU event is finished once recorded"
            );
            assert_eq!(
                start.elapsed_ms(&end).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
            std::thread::sleep(Duration::from_millis(20));
            end.record(Some(&s)).unwrap();
            end.synchronize().unwrap();
            let ms = start.elapsed_ms(&end).unwrap();
            assert!(
                (19.99..10_000.0).contains(&ms),
                "elapsed {ms} ms across a 20 ms sleep"
            );

            // Streams wait for events and each other (already ordered on the CPU).
            s.wait_event(&start).unwrap();
            let def = Stream::default_for(Device::CPU).unwrap();
            s.wait_stream(&def).unwrap();
            def.wait_stream(&s).unwrap();
            // Recording inside with_stream (None: its stream) moves the mark.
            with_stream(&s, || start.record(None)).unwrap().unwrap();
            assert!(start.elapsed_ms(&end).unwrap() <= 0.0);
        });
    }

    #[test]
    fn record_stream_on_the_cpu_is_nothing_to_do() {
        leak_checked(|| {
            let x = Tensor::ones(&[4], DType::Float32, Device::CPU).unwrap();
            let s = Stream::new(Device::CPU).unwrap();
            x.record_stream(&s).unwrap();
            drop(s);
            assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0; 4]);
        });
    }

    /// A handle released by another owner (outside this crate) is refused by the library
    /// with InvalidHandle; it never crashes.
    #[test]
    fn a_released_handle_is_an_invalid_handle() {
        leak_checked(|| {
            let s = Stream::new(Device::CPU).unwrap();
            let stale = Stream { ptr: s.ptr }; // a second owner of one reference
            drop(s);
            assert_eq!(
                stale.synchronize().unwrap_err().code,
                ErrorCode::InvalidHandle
            );
            assert_eq!(stale.query().unwrap_err().code, ErrorCode::InvalidHandle);
            assert_eq!(
                stale.native_handle().unwrap_err().code,
                ErrorCode::InvalidHandle
            );
            assert_eq!(
                with_stream(&stale, || panic!("ran on a released stream"))
                    .unwrap_err()
                    .code,
                ErrorCode::InvalidHandle
            );
            let e = Event::new(Device::CPU).unwrap();
            let stale_event = Event { ptr: e.ptr };
            drop(e);
            let live = Stream::new(Device::CPU).unwrap();
            assert_eq!(
                stale_event.record(Some(&live)).unwrap_err().code,
                ErrorCode::InvalidHandle
            );
            assert_eq!(
                live.wait_event(&stale_event).unwrap_err().code,
                ErrorCode::InvalidHandle
            );
            assert_eq!(
                live.wait_stream(&stale).unwrap_err().code,
                ErrorCode::InvalidHandle
            );
            let x = Tensor::ones(&[1], DType::Float32, Device::CPU).unwrap();
            assert_eq!(
                x.record_stream(&stale).unwrap_err().code,
                ErrorCode::InvalidHandle
            );
            // Dropping them releases a second time: refused, and Drop ignores it.
            drop((stale, stale_event));
        });
    }

    #[test]
    fn streams_and_events_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Stream>();
        send_sync::<Event>();
        leak_checked(|| {
            let s = Stream::new(Device::CPU).unwrap();
            let e = Event::new(Device::CPU).unwrap();
            std::thread::scope(|sc| {
                for _ in 0..4 {
                    sc.spawn(|| {
                        e.record(Some(&s)).unwrap();
                        s.wait_event(&e).unwrap();
                        s.clone().synchronize().unwrap();
                    });
                }
            });
            assert!(e.query().unwrap());
        });
    }
}

//! Graphs: capture a sequence of work once, replay it many times, as `torch.cuda.CUDAGraph`
//! (`include/devtensor.h`, "graphs"): [`Graph`], [`Stream::capture`],
//! [`Stream::is_capturing`].
use crate::error::{check, Error, ErrorCode, Result};
use crate::{ffi, Device, Stream};
use std::fmt;
use std::ptr::NonNull;

/// A recorded sequence of work on one device (`dt_graph`), made by [`Stream::capture`]
/// and run again by [`replay`](Graph::replay).
///
/// While a [`Stream`] captures ([`Stream::capture`]), the work the calling thread queues on
/// it (ops, copies, a module's forward, backward, an SGD step) is RECORDED into a
/// [`Graph`] instead of running; [`Graph::replay`] runs that work again, in the same order
/// and on the same memory, without the per-call checks, autograd bookkeeping and
/// allocations of eager calls.
///
/// STATIC TENSORS. A graph keeps every tensor its work touches, so their memory stays valid
/// for replays. Inputs are the tensors the captured work read: write new values into them
/// between replays. Outputs are the tensors it wrote (the closure's results, a loss, the
/// gradients backward set, the parameters a step updated): read them after a replay.
/// Right after the capture they hold no meaningful values: capture computes nothing.
///
/// New input values go in with [`Tensor::copy_from_slice`](crate::Tensor::copy_from_slice),
/// an `unsafe` in-place write (the caller makes sure that no other thread uses the input
/// meanwhile; `bindings/unbound.txt` says why the safe crate has no other). Outputs are
/// read with [`Tensor::to_vec`](crate::Tensor::to_vec) as usual.
///
/// WHAT CANNOT BE CAPTURED fails with [`ErrorCode::NotSupported`] before doing anything,
/// and the capture goes on: reading values on the host
/// ([`Tensor::item`](crate::Tensor::item), [`Tensor::to_vec`](crate::Tensor::to_vec),
/// printing, saving, DLPack export), writing host memory into a tensor, copies between
/// the host and a GPU, synchronising or querying the capturing stream, events on it,
/// random numbers (a replay would repeat them), collectives, an Adam, RMSprop or Adagrad
/// step, and an SGD momentum step before its buffers exist (step once eagerly first, as PyTorch's warm-up
/// does).
///
/// ```
/// use devtensor::{Device, Stream, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let dev = Device::CPU;
/// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3], dev)?; // a static input
/// let s = Stream::new(dev)?;                                    // not a default stream
/// let (graph, y) = s.capture(|| &(&x * 2.0)? + &x)?;             // recorded, not run
/// assert_eq!(graph.device()?, dev);
/// graph.replay()?;                                              // y = 3x
/// assert_eq!(y.to_vec::<f32>()?, vec![3.0, 6.0, 9.0]);
/// graph.replay()?;                                              // again, the same values
/// assert_eq!(y.to_vec::<f32>()?, vec![3.0, 6.0, 9.0]);
/// # Ok(()) }
/// ```
///
/// A `Graph` owns one reference: `clone()` adds one (`dt_graph_retain`; the clone is the
/// same graph), dropping releases it and never panics. The last reference frees the graph
/// and the memory only it still holds.
pub struct Graph {
    ptr: NonNull<ffi::dt_graph>,
}

// SAFETY: include/devtensor.h, "graphs": "Replays of one graph run one at a time" (the
// library serialises them with a lock of the graph's own), and "handles (dt_graph*) are
// reference-counted as tensors are": retain, release and the readers are safe from any
// thread, with atomic reference counts and handle checks. A replay switches the calling
// thread's current stream to the captured one for its duration and back, whichever thread
// that is. A Graph is only a handle; every method takes `&self`, and a reference is
// released only in Drop, which needs ownership, so no thread can release a handle another
// thread is using.
unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

raw_handle!(
    Graph,
    "devtensor::Graph",
    dt_graph,
    dt_graph_retain,
    dt_graph_release,
    "devtensor::Stream::new(devtensor::Device::CPU)?.capture(|| Ok(()))?.0"
);

impl Graph {
    #[inline]
    fn as_ptr(&self) -> *mut ffi::dt_graph {
        self.ptr.as_ptr()
    }

    /// Runs the graph's recorded work again, in the same order and on the same memory
    /// (`dt_graph_replay`): finished on return on the CPU; on a GPU queued on the calling
    /// thread's current stream for the graph's device (the default stream, or
    /// [`with_stream`](crate::with_stream)'s), after its earlier work (wait with
    /// [`Stream::synchronize`] or an [`Event`](crate::Event)). Replays of one graph run one at a time (a replay from
    /// another thread waits).
    ///
    /// A replay writes its outputs in place: the tensors the captured work wrote (the
    /// closure's results, a loss, gradients, the parameters an optimizer step updated).
    /// As with [`Optimizer::step`](crate::nn::Optimizer::step), do not read those
    /// tensors from another thread while a replay runs (a reader sees each element's old
    /// or new value).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let x = Tensor::from_slice(&[1.0f32, -2.0], &[2], Device::CPU)?;
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// let (g, y) = s.capture(|| x.abs())?;
    /// g.replay()?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a module whose parameters the graph uses was moved
    /// since the capture: capture again; an index or class target out of range),
    /// [`ErrorCode::NotSupported`] (called while the thread captures on the graph's
    /// device: graphs do not nest), and any error of the recorded work
    /// ([`ErrorCode::OutOfMemory`], [`ErrorCode::DeviceLost`], [`ErrorCode::Backend`]),
    /// after which the steps before the failing one have run.
    pub fn replay(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { ffi::dt_graph_replay(self.as_ptr()) })
    }

    /// The number of recorded steps, kernels and copies (`dt_graph_num_steps`); 0 for a
    /// capture that recorded nothing.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// let (empty, ()) = s.capture(|| Ok(()))?;
    /// assert_eq!(empty.num_steps()?, 0);
    /// let x = Tensor::ones(&[2], DType::Float32, Device::CPU)?;
    /// let (g, _y) = s.capture(|| &x + &x)?;
    /// assert!(g.num_steps()? >= 1);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_graph_num_steps`: an
    /// [`Error`] with the library's code and message.
    pub fn num_steps(&self) -> Result<usize> {
        let mut n = 0usize;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_graph_num_steps(self.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// The device the graph's work runs on, the capturing stream's (`dt_graph_device`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// let (g, ()) = s.capture(|| Ok(()))?;
    /// assert_eq!(g.device()?, Device::CPU);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_graph_device`: an
    /// [`Error`] with the library's code and message.
    pub fn device(&self) -> Result<Device> {
        let mut d = Device::CPU.to_raw();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_graph_device(self.as_ptr(), &mut d) })?;
        Device::from_raw(d)
    }
}

impl Clone for Graph {
    /// Another reference to the same graph (`dt_graph_retain`).
    fn clone(&self) -> Graph {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_graph_retain(self.as_ptr()) };
        debug_assert_eq!(st, ffi::DT_OK);
        Graph { ptr: self.ptr }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: we own exactly one reference. Never panics.
        let _ = unsafe { ffi::dt_graph_release(self.as_ptr()) };
    }
}

impl fmt::Debug for Graph {
    /// `Graph(cpu:0, 3 steps)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.device(), self.num_steps()) {
            (Ok(d), Ok(n)) => write!(f, "Graph({d}, {n} steps)"),
            _ => write!(f, "Graph({:p})", self.as_ptr()),
        }
    }
}

/// Ends a capture begun on this thread when dropped while still armed: when the closure
/// of [`Stream::capture`] panics, or when ending it normally failed.
struct EndCapture<'a> {
    stream: Option<&'a Stream>,
}

impl EndCapture<'_> {
    /// Ends the capture (`dt_graph_capture_end`) and disarms; on failure stays armed, so
    /// that dropping tries once more.
    fn end(&mut self) -> Result<Graph> {
        let s = match self.stream {
            Some(s) => s,
            None => return Err(Error::new(ErrorCode::Internal, "the capture already ended")),
        };
        let mut out: *mut ffi::dt_graph = std::ptr::null_mut();
        // SAFETY: a live stream and a valid out-pointer; called on the thread that began.
        check(unsafe { ffi::dt_graph_capture_end(s.as_ptr(), &mut out) })?;
        self.stream = None;
        NonNull::new(out).map(|ptr| Graph { ptr }).ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "the library returned success and a NULL graph",
            )
        })
    }
}

impl Drop for EndCapture<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.stream.take() {
            let mut out: *mut ffi::dt_graph = std::ptr::null_mut();
            // SAFETY: a live stream and a valid out-pointer, on the thread that began the
            // capture (Drop runs where the guard lives); the graph, a NEW reference, is
            // released at once (NULL is a no-op). Never panics.
            unsafe {
                if ffi::dt_graph_capture_end(s.as_ptr(), &mut out) == ffi::DT_OK {
                    ffi::dt_graph_release(out);
                }
            }
        }
    }
}

impl Stream {
    /// Whether this stream is capturing now (`dt_stream_is_capturing`), inside
    /// [`capture`](Stream::capture) on any thread.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// assert!(!s.is_capturing()?);
    /// let (_g, inside) = s.capture(|| s.is_capturing())?;
    /// assert!(inside);
    /// assert!(!s.is_capturing()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_stream_is_capturing`: an
    /// [`Error`] with the library's code and message.
    pub fn is_capturing(&self) -> Result<bool> {
        let mut v = 0i32;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { ffi::dt_stream_is_capturing(self.as_ptr(), &mut v) })?;
        Ok(v != 0)
    }

    /// Records the work `f` queues on this stream's device into a new [`Graph`] instead of
    /// running it, as `torch.cuda.graph(g, stream=s)` (`dt_graph_capture_begin`, then
    /// `dt_graph_capture_end`), and returns the graph with `f`'s result.
    ///
    /// While `f` runs, this stream is the calling thread's current stream for its device
    /// (as in [`with_stream`](crate::with_stream)), so the thread's work on that device
    /// is recorded; work on other devices, and other threads' work, runs as usual (unless
    /// such a thread made this stream its current one: its work is recorded too). The
    /// capture always ends, on this thread, and the previous current stream comes back:
    /// after `f` returns, when `f` returns an error (the graph is dropped and `f`'s error
    /// returned), and when `f` panics (the panic goes on). Tensors `f` creates are static
    /// outputs: they hold meaningful values only after a [`replay`](Graph::replay).
    ///
    /// A call inside `f` that cannot be captured (see [`Graph`]
    /// and [`ErrorCode::NotSupported`]) fails and records nothing, and the capture goes
    /// on: `f` may handle that error and continue.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let s = devtensor::Stream::new(Device::CPU)?;
    /// let x = Tensor::from_slice(&[2.0f32], &[1], Device::CPU)?;
    /// let (g, (y, refused)) = s.capture(|| {
    ///     let y = (&x * &x)?;
    ///     let refused = y.item().unwrap_err().code; // no value during capture
    ///     Ok((y, refused))
    /// })?;
    /// assert_eq!(refused, ErrorCode::NotSupported);
    /// g.replay()?;
    /// assert_eq!(y.item()?, 4.0);
    /// // A default stream cannot capture; f does not run then.
    /// let def = devtensor::Stream::default_for(Device::CPU)?;
    /// let e = def.capture(|| -> devtensor::Result<()> { unreachable!() }).unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Before `f` runs (it does not run then), those of `dt_graph_capture_begin`:
    /// [`ErrorCode::InvalidArgument`] (a default stream, a stream already capturing, this
    /// thread already capturing on the stream's device), [`ErrorCode::OutOfMemory`].
    /// Then `f`'s error, or those of `dt_graph_capture_end` ([`ErrorCode::OutOfMemory`];
    /// [`ErrorCode::InvalidArgument`] when `f` ended the capture itself through
    /// [`sys`](crate::sys)).
    pub fn capture<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(Graph, R)> {
        // SAFETY: a live handle. On success this thread captures until the guard ends it.
        check(unsafe { ffi::dt_graph_capture_begin(self.as_ptr()) })?;
        let mut guard = EndCapture { stream: Some(self) };
        let r = f();
        let graph = guard.end();
        // f's error first: its graph (if any) is dropped.
        let r = r?;
        Ok((graph?, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::leak_checked;
    use crate::{thread_stream, DType, Tensor};

    #[test]
    fn clone_drop_and_handles() {
        leak_checked(|| {
            let before = crate::live_handle_count();
            let s = Stream::new(Device::CPU).unwrap();
            let x = Tensor::ones(&[2], DType::Float32, Device::CPU).unwrap();
            let (g, y) = s.capture(|| &x + &x).unwrap();
            assert!(!s.is_capturing().unwrap());
            let c = g.clone(); // a retain: the same handle, no new one
            assert_eq!(c.as_ptr(), g.as_ptr());
            let n = crate::live_handle_count();
            drop(g); // one of two references: the handle lives on
            assert_eq!(crate::live_handle_count(), n);
            c.replay().unwrap();
            assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
            assert_eq!(
                format!("{c:?}"),
                format!("Graph(cpu:0, {} steps)", c.num_steps().unwrap())
            );
            drop(c);
            assert_eq!(crate::live_handle_count(), n - 1);
            drop((y, x, s));
            assert_eq!(crate::live_handle_count(), before);
        });
    }

    #[test]
    fn a_panic_ends_the_capture_and_restores_the_stream() {
        leak_checked(|| {
            let s = Stream::new(Device::CPU).unwrap();
            let r = std::panic::catch_unwind(|| s.capture(|| -> Result<()> { panic!("boom") }));
            assert!(r.is_err());
            assert!(
                !s.is_capturing().unwrap(),
                "the capture goes on after a panic"
            );
            assert!(
                thread_stream(Device::CPU).unwrap().is_default(),
                "not restored"
            );
            // The stream can capture again.
            let (g, ()) = s.capture(|| Ok(())).unwrap();
            assert_eq!(g.num_steps().unwrap(), 0);
        });
    }

    #[test]
    fn graph_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Graph>();
    }
}

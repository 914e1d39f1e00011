//! Process groups and collectives, as `torch.distributed` (`include/devtensor.h`,
//! "distributed").
//!
//! A [`ProcessGroup`] is this process's membership of a group of `size` processes (ranks
//! `0..size`, on one machine or several) that run collectives together, over Gloo, for
//! tensors in host memory. A job is started the way torchrun starts one: `devtensor run
//! --nproc-per-node N -- program args` starts N copies of `program` with `RANK`,
//! `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT` set, and each copy joins with
//! [`ProcessGroup::from_env`]:
//!
//! ```no_run
//! use devtensor::{DType, Device, ProcessGroup, ReduceOp, Tensor};
//!
//! # fn main() -> devtensor::Result<()> {
//! let pg = ProcessGroup::from_env()?;             // blocks until every rank has joined
//! let t = Tensor::full(&[3], pg.rank() as f64, DType::Float32, Device::CPU)?;
//! pg.all_reduce_(&t, ReduceOp::Sum)?;            // in place, on every rank
//! let n = pg.size() as f32;
//! assert_eq!(t.to_vec::<f32>()?, vec![n * (n - 1.0) / 2.0; 3]);
//! # Ok(()) }
//! ```
//!
//! Collectives block, must be called by every rank of the group in the same order
//! ([`send`](ProcessGroup::send) and [`recv`](ProcessGroup::recv) by the two ranks
//! named), and run one at a time per group (calls from several threads are serialised).
//! Tensors must be on the CPU for `"gloo"` ([`ErrorCode::DeviceMismatch`] otherwise); any
//! dtype, any layout.
//!
//! Failures: a peer that exits, or that does not join or answer within the timeout, makes
//! the call fail on every other rank with [`ErrorCode::Distributed`] (naming the rank that
//! exited when devtensor can tell), never a hang. The group is then unusable: every later
//! call fails at once with [`ErrorCode::Distributed`]; drop it and, if the job goes on,
//! make a new one.
//!
//! WRITES. Unlike the rest of this crate, the collectives write into tensors the caller
//! passes: [`all_reduce_`](ProcessGroup::all_reduce_) and
//! [`broadcast_`](ProcessGroup::broadcast_) into `t`, [`all_gather`](ProcessGroup::all_gather)
//! and [`reduce_scatter`](ProcessGroup::reduce_scatter) into `output`, and
//! [`recv`](ProcessGroup::recv) into `t`, as `torch.distributed` does. A [`Tensor`] is
//! `Send + Sync` and its clones (and views) share its memory, so do not read or write
//! such a tensor from another thread while the collective runs (as with an optimizer's
//! parameters while it steps, see [`nn`](crate::nn)): the reader would see each element's
//! old or new value. A read-only tensor (a DLPack import so flagged) is refused with
//! [`ErrorCode::InvalidArgument`].
use crate::error::{check, Error, ErrorCode, Result};
use crate::{check_version, ffi, read_string, Tensor};
use std::ffi::CString;
use std::fmt;
use std::ptr::NonNull;
use std::time::Duration;

/// The reduction of [`ProcessGroup::all_reduce_`] and [`ProcessGroup::reduce_scatter`]
/// (`DT_REDUCE_*`, as `torch.distributed.ReduceOp`). For `bool` tensors `Sum` and `Max`
/// are "or", `Product` and `Min` "and".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `DT_REDUCE_SUM`: the sum over the ranks.
    Sum,
    /// `DT_REDUCE_AVG`: the sum divided by the group's size; needs a floating dtype
    /// ([`ErrorCode::DtypeMismatch`] otherwise).
    Avg,
    /// `DT_REDUCE_MIN`: the minimum over the ranks.
    Min,
    /// `DT_REDUCE_MAX`: the maximum over the ranks.
    Max,
    /// `DT_REDUCE_PRODUCT`: the product over the ranks.
    Product,
}

impl ReduceOp {
    /// The `DT_REDUCE_*` value.
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!(ReduceOp::Sum.to_raw(), devtensor::sys::DT_REDUCE_SUM);
    /// # Ok(()) }
    /// ```
    pub fn to_raw(self) -> i32 {
        match self {
            ReduceOp::Sum => ffi::DT_REDUCE_SUM,
            ReduceOp::Avg => ffi::DT_REDUCE_AVG,
            ReduceOp::Min => ffi::DT_REDUCE_MIN,
            ReduceOp::Max => ffi::DT_REDUCE_MAX,
            ReduceOp::Product => ffi::DT_REDUCE_PRODUCT,
        }
    }
}

/// A group of processes that run collectives together (`dt_process_group`).
///
/// A `ProcessGroup` owns one reference: `clone()` adds one (`dt_process_group_retain`; the
/// clone is the same group), dropping releases it and never panics. Dropping the last
/// reference closes the group's connections (peers still in a collective with this rank
/// then fail). It may be used from several threads at once: the library serialises its
/// collectives.
pub struct ProcessGroup {
    ptr: NonNull<ffi::dt_process_group>,
}

// SAFETY: include/devtensor.h, "distributed": "Threading: a group handle may be used from
// any thread", and collectives "run one at a time per group (calls from several threads
// are serialised)"; reference counts and handle checks are atomic. A ProcessGroup is only
// a handle; every method takes `&self`, and a reference is released only in Drop, which
// needs ownership, so no thread can release a handle another thread is using.
unsafe impl Send for ProcessGroup {}
unsafe impl Sync for ProcessGroup {}

raw_handle!(
    ProcessGroup,
    "devtensor::ProcessGroup",
    dt_process_group,
    dt_process_group_retain,
    dt_process_group_release,
    "devtensor::ProcessGroup::new(Some(\"gloo\"), Some(&format!(\"file://{}\", std::env::temp_dir().join(format!(\"devtensor-doc-raw-{}\", std::process::id())).display())), Some(0), Some(1), None)?"
);

/// `s` as a C string, or NULL for `None`; a NUL byte inside is an argument error.
fn c_string_arg(s: Option<&str>, what: &str) -> Result<Option<CString>> {
    s.map(|s| {
        CString::new(s).map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{what} {s:?} holds a NUL byte"),
            )
        })
    })
    .transpose()
}

impl ProcessGroup {
    /// Joins a NEW process group and returns when every rank has joined and connected
    /// (`dt_process_group_new`).
    ///
    /// * `backend`: `Some("gloo")` (CPU tensors), `Some("nccl")` (CUDA tensors;
    ///   [`ErrorCode::NotSupported`], saying why, where CUDA or NCCL cannot be used), or
    ///   `None` (or `Some("")`) for both, chosen by each tensor's device.
    /// * `init_method`: `torch.distributed`'s rendezvous spellings: `"env://"` (or `None`),
    ///   rank 0's address and port from `MASTER_ADDR` / `MASTER_PORT`; `"tcp://host:port"`;
    ///   `"file:///path"` (a file every rank can open; the last rank to release its group
    ///   deletes it, and a run that crashed leaves it behind). For env:// and tcp://, every
    ///   group of the process made with the same init method shares rank 0's store: keep
    ///   the first group alive while you make more.
    /// * `rank`, `world_size`: this process's rank and the number of ranks; `None` (or a
    ///   negative value) reads `RANK` / `WORLD_SIZE`.
    /// * `timeout`: how long any one step (joining, a collective) may wait for peers;
    ///   `None` means torch's default, 30 minutes. Rounded up to whole milliseconds;
    ///   `Some(Duration::ZERO)` is [`ErrorCode::InvalidArgument`].
    ///
    /// ```
    /// use devtensor::{DType, Device, ProcessGroup, ReduceOp, Tensor};
    /// use std::time::Duration;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process, through a file: a reduction over one rank is the identity.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-pg-{}", std::process::id()));
    /// let init = format!("file://{}", store.display());
    /// let pg = ProcessGroup::new(Some("gloo"), Some(&init), Some(0), Some(1), Some(Duration::from_secs(30)))?;
    /// assert_eq!((pg.rank(), pg.size(), pg.backend().as_str()), (0, 1, "gloo"));
    /// let t = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// pg.all_reduce_(&t, ReduceOp::Sum)?;
    /// assert_eq!(t.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a bad init method or backend; missing or malformed
    /// `RANK`, `WORLD_SIZE`, `MASTER_ADDR` or `MASTER_PORT`; a rank not below the world
    /// size; ranks started with different world sizes; a NUL byte in a string),
    /// [`ErrorCode::NotSupported`], [`ErrorCode::Io`] (the file of file:// cannot be
    /// opened), [`ErrorCode::Distributed`] (the port is taken, rank 0 unreachable, ranks
    /// that did not join in time: named), [`ErrorCode::OutOfMemory`].
    pub fn new(
        backend: Option<&str>,
        init_method: Option<&str>,
        rank: Option<i32>,
        world_size: Option<i32>,
        timeout: Option<Duration>,
    ) -> Result<ProcessGroup> {
        check_version()?;
        let timeout_ms = match timeout {
            None => 0, // the library's default
            Some(d) if d.is_zero() => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "a zero timeout: pass None for the default (30 minutes)",
                ))
            }
            // Whole milliseconds, rounded up (a positive timeout never becomes 0, which
            // would mean the default); a longer one than i64 holds waits as long as that.
            Some(d) => {
                let ms = d.as_millis() + u128::from(d.subsec_nanos() % 1_000_000 != 0);
                i64::try_from(ms).unwrap_or(i64::MAX)
            }
        };
        let backend = c_string_arg(backend, "backend")?;
        let init_method = c_string_arg(init_method, "init_method")?;
        let ptr_or_null = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        let mut out: *mut ffi::dt_process_group = std::ptr::null_mut();
        // SAFETY: NUL-terminated strings (or NULL) that outlive the call, and a valid
        // out-pointer.
        check(unsafe {
            ffi::dt_process_group_new(
                ptr_or_null(&backend),
                ptr_or_null(&init_method),
                rank.unwrap_or(-1),
                world_size.unwrap_or(-1),
                timeout_ms,
                &mut out,
            )
        })?;
        NonNull::new(out)
            .map(|ptr| ProcessGroup { ptr })
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::Internal,
                    "the library returned success and a NULL process group",
                )
            })
    }

    /// Joins a new `"gloo"` group by the env:// convention, with the rank and world size
    /// from `RANK` and `WORLD_SIZE` and the default timeout (30 minutes): what each copy of
    /// a program started by `devtensor run` (or torchrun) calls.
    ///
    /// ```no_run
    /// // cargo build && devtensor run --nproc-per-node 2 -- target/debug/myprogram
    /// # fn main() -> devtensor::Result<()> {
    /// let pg = devtensor::ProcessGroup::from_env()?;
    /// println!("rank {} of {}", pg.rank(), pg.size());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ProcessGroup::new`].
    pub fn from_env() -> Result<ProcessGroup> {
        ProcessGroup::new(Some("gloo"), Some("env://"), None, None, None)
    }

    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut ffi::dt_process_group {
        self.ptr.as_ptr()
    }

    /// This process's rank in the group, `0..size()` (`dt_process_group_rank`).
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-rank-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// assert_eq!((pg.rank(), pg.size()), (0, 1));
    /// # Ok(()) }
    /// ```
    pub fn rank(&self) -> i32 {
        let mut v = 0i32;
        // SAFETY: a live handle and a valid out-pointer: cannot fail.
        unsafe { ffi::dt_process_group_rank(self.as_ptr(), &mut v) };
        v
    }

    /// The number of ranks in the group (`dt_process_group_size`).
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-size-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// assert_eq!(pg.size(), 1);
    /// # Ok(()) }
    /// ```
    pub fn size(&self) -> i32 {
        let mut v = 0i32;
        // SAFETY: a live handle and a valid out-pointer: cannot fail.
        unsafe { ffi::dt_process_group_size(self.as_ptr(), &mut v) };
        v
    }

    /// The name of the group's backend, `"gloo"` (`dt_process_group_backend`).
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-backend-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// assert_eq!(pg.backend(), "gloo");
    /// # Ok(()) }
    /// ```
    pub fn backend(&self) -> String {
        // SAFETY: a live handle, and the buffer read_string passes: cannot fail.
        read_string(|b, c, n| unsafe { ffi::dt_process_group_backend(self.as_ptr(), b, c, n) })
            .unwrap_or_default()
    }

    /// In place: every rank's `t` becomes the reduction `op` of all ranks' `t`, element by
    /// element (`dt_all_reduce_`, as `torch.distributed.all_reduce`). `t` must have the
    /// same shape and dtype on every rank; see the module's WRITES paragraph.
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-allreduce-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// let t = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// pg.all_reduce_(&t, ReduceOp::Sum)?; // the sum over one rank
    /// assert_eq!(t.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a read-only `t`), [`ErrorCode::DeviceMismatch`],
    /// [`ErrorCode::DtypeMismatch`] ([`ReduceOp::Avg`] of a non-floating dtype),
    /// [`ErrorCode::Distributed`], [`ErrorCode::OutOfMemory`].
    pub fn all_reduce_(&self, t: &Tensor, op: ReduceOp) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { ffi::dt_all_reduce_(self.as_ptr(), t.as_ptr(), op.to_raw()) })
    }

    /// In place: every rank's `t` becomes `root`'s `t` (`dt_broadcast_`, as
    /// `torch.distributed.broadcast`); see the module's WRITES paragraph.
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-broadcast-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// let t = Tensor::from_slice(&[5i64], &[1], Device::CPU)?;
    /// pg.broadcast_(&t, 0)?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![5]);
    /// assert_eq!(pg.broadcast_(&t, 3).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`all_reduce_`](ProcessGroup::all_reduce_); a `root` that is not a rank of the
    /// group is [`ErrorCode::InvalidArgument`].
    pub fn broadcast_(&self, t: &Tensor, root: i32) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { ffi::dt_broadcast_(self.as_ptr(), t.as_ptr(), root) })
    }

    /// Writes every rank's `input`, in rank order, into `output` on every rank
    /// (`dt_all_gather`, as `torch.distributed.all_gather_into_tensor`): `output` has
    /// `size()` times `input`'s element count elements of `input`'s dtype, in any shape
    /// (e.g. `[size, ...input's shape]`); see the module's WRITES paragraph.
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-allgather-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// let input = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?;
    /// let output = Tensor::zeros(&[pg.size() as i64, 2], DType::Float32, Device::CPU)?;
    /// pg.all_gather(&input, &output)?;
    /// assert_eq!(output.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`all_reduce_`](ProcessGroup::all_reduce_), plus [`ErrorCode::ShapeMismatch`]
    /// (`output`'s element count) and [`ErrorCode::DtypeMismatch`] (the dtypes differ).
    pub fn all_gather(&self, input: &Tensor, output: &Tensor) -> Result<()> {
        // SAFETY: three live handles.
        check(unsafe { ffi::dt_all_gather(self.as_ptr(), input.as_ptr(), output.as_ptr()) })
    }

    /// Reduces `input` (`size()` times `output`'s element count elements) over the ranks
    /// with `op` and writes the r-th of its `size()` equal parts into rank r's `output`
    /// (`dt_reduce_scatter`, as `torch.distributed.reduce_scatter_tensor`); see the
    /// module's WRITES paragraph.
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-reducescatter-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// let input = Tensor::from_slice(&[3.0f32, 4.0], &[2], Device::CPU)?;
    /// let output = Tensor::zeros(&[2], DType::Float32, Device::CPU)?;
    /// pg.reduce_scatter(&input, &output, ReduceOp::Max)?;
    /// assert_eq!(output.to_vec::<f32>()?, vec![3.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`all_gather`](ProcessGroup::all_gather), plus [`ErrorCode::DtypeMismatch`] for
    /// [`ReduceOp::Avg`] of a non-floating dtype.
    pub fn reduce_scatter(&self, input: &Tensor, output: &Tensor, op: ReduceOp) -> Result<()> {
        // SAFETY: three live handles.
        check(unsafe {
            ffi::dt_reduce_scatter(self.as_ptr(), input.as_ptr(), output.as_ptr(), op.to_raw())
        })
    }

    /// Returns when every rank of the group has called it (`dt_barrier`).
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-barrier-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// pg.barrier()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Distributed`].
    pub fn barrier(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { ffi::dt_barrier(self.as_ptr()) })
    }

    /// Sends `t`'s elements to rank `dst`, which must call [`recv`](ProcessGroup::recv)
    /// with this rank, the same `tag` (>= 0) and as many bytes (`dt_send`); returns once
    /// the data has left (the receiver may not have it yet).
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-send-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// let t = Tensor::zeros(&[2], DType::Float32, Device::CPU)?;
    /// // Rank 0 of two would send with pg.send(&t, 1, 0); with one rank there is no peer.
    /// assert_eq!(pg.send(&t, 0, 0).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (`dst` not a rank or this rank, a negative tag),
    /// [`ErrorCode::DeviceMismatch`], [`ErrorCode::Distributed`].
    pub fn send(&self, t: &Tensor, dst: i32, tag: i32) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { ffi::dt_send(self.as_ptr(), t.as_ptr(), dst, tag) })
    }

    /// Receives into `t` what rank `src` sent with this `tag` (`dt_recv`; see
    /// [`send`](ProcessGroup::send) and the module's WRITES paragraph).
    ///
    /// ```
    /// # use devtensor::ReduceOp;
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// // A group of one process; under `devtensor run --nproc-per-node N` every rank joins.
    /// let store = std::env::temp_dir().join(format!("devtensor-doc-recv-{}", std::process::id()));
    /// let pg = devtensor::ProcessGroup::new(Some("gloo"), Some(&format!("file://{}", store.display())),
    ///                                       Some(0), Some(1), None)?;
    /// let t = Tensor::zeros(&[2], DType::Float32, Device::CPU)?;
    /// // Rank 1 of two would receive rank 0's with pg.recv(&t, 0, 0); here there is no peer.
    /// assert_eq!(pg.recv(&t, 0, 0).unwrap_err().code, ErrorCode::InvalidArgument);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`send`](ProcessGroup::send).
    pub fn recv(&self, t: &Tensor, src: i32, tag: i32) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { ffi::dt_recv(self.as_ptr(), t.as_ptr(), src, tag) })
    }
}

impl Clone for ProcessGroup {
    /// Another reference to the same group (`dt_process_group_retain`).
    fn clone(&self) -> ProcessGroup {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_process_group_retain(self.as_ptr()) };
        debug_assert_eq!(st, ffi::DT_OK);
        ProcessGroup { ptr: self.ptr }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // SAFETY: we own exactly one reference. Never panics.
        let _ = unsafe { ffi::dt_process_group_release(self.as_ptr()) };
    }
}

impl fmt::Debug for ProcessGroup {
    /// `ProcessGroup(rank 0 of 2, gloo)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ProcessGroup(rank {} of {}, {})",
            self.rank(),
            self.size(),
            self.backend()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::leak_checked;
    use crate::{DType, Device};

    /// A file:// init method in the temporary directory, unique to this process and name.
    fn file_store(name: &str) -> String {
        let p =
            std::env::temp_dir().join(format!("devtensor-rust-pg-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&p); // a crashed earlier run's
        format!("file://{}", p.display())
    }

    fn one_rank(name: &str) -> ProcessGroup {
        ProcessGroup::new(
            Some("gloo"),
            Some(&file_store(name)),
            Some(0),
            Some(1),
            Some(Duration::from_secs(30)),
        )
        .unwrap()
    }

    #[test]
    fn reduce_op_values() {
        assert_eq!(ReduceOp::Sum.to_raw(), 0);
        assert_eq!(ReduceOp::Avg.to_raw(), 1);
        assert_eq!(ReduceOp::Min.to_raw(), 2);
        assert_eq!(ReduceOp::Max.to_raw(), 3);
        assert_eq!(ReduceOp::Product.to_raw(), 4);
    }

    #[test]
    fn new_refuses_bad_arguments() {
        leak_checked(|| {
            let store = file_store("bad");
            let secs = Some(Duration::from_secs(5));
            let code = |b: Option<&str>, i: Option<&str>, r, w, t| {
                ProcessGroup::new(b, i, r, w, t).unwrap_err().code
            };
            if !crate::Device::cuda_is_available() {
                // Without a usable GPU "nccl" says why it cannot be used.
                let e = ProcessGroup::new(Some("nccl"), Some(&store), Some(0), Some(1), secs)
                    .unwrap_err();
                assert_eq!(e.code, ErrorCode::NotSupported, "{e}");
                assert!(e.message.contains("\"nccl\" cannot be used"), "{e}");
            }
            assert_eq!(
                code(Some("mpi"), Some(&store), Some(0), Some(1), secs),
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                code(Some("gl\0oo"), Some(&store), Some(0), Some(1), secs),
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                code(Some("gloo"), Some("udp://x"), Some(0), Some(1), secs),
                ErrorCode::InvalidArgument
            );
            // Rank not below the world size.
            assert_eq!(
                code(Some("gloo"), Some(&store), Some(1), Some(1), secs),
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                code(
                    Some("gloo"),
                    Some(&store),
                    Some(0),
                    Some(1),
                    Some(Duration::ZERO)
                ),
                ErrorCode::InvalidArgument
            );
        });
    }

    #[test]
    fn one_rank_group() {
        leak_checked(|| {
            let before = crate::live_handle_count();
            let pg = one_rank("one");
            assert_eq!(crate::live_handle_count(), before + 1);
            assert_eq!(
                (pg.rank(), pg.size(), pg.backend().as_str()),
                (0, 1, "gloo")
            );
            assert_eq!(format!("{pg:?}"), "ProcessGroup(rank 0 of 1, gloo)");
            let c = pg.clone(); // a retain: the same handle, no new one
            assert_eq!(c.as_ptr(), pg.as_ptr());
            assert_eq!(crate::live_handle_count(), before + 1);
            drop(pg);
            // Send + Sync: a clone used from another thread.
            std::thread::scope(|s| s.spawn(|| c.barrier().unwrap()).join().unwrap());

            // Over one rank every reduction is the identity.
            let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0, 4.5], &[2, 2], Device::CPU).unwrap();
            for op in [
                ReduceOp::Sum,
                ReduceOp::Avg,
                ReduceOp::Min,
                ReduceOp::Max,
                ReduceOp::Product,
            ] {
                c.all_reduce_(&x, op).unwrap();
            }
            assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, -2.0, 3.0, 4.5]);
            c.broadcast_(&x, 0).unwrap();
            let out = Tensor::zeros(&[1, 4], DType::Float32, Device::CPU).unwrap();
            c.all_gather(&x, &out).unwrap();
            assert_eq!(out.to_vec::<f32>().unwrap(), vec![1.0, -2.0, 3.0, 4.5]);
            let part = Tensor::zeros(&[4], DType::Float32, Device::CPU).unwrap();
            c.reduce_scatter(&x, &part, ReduceOp::Max).unwrap();
            assert_eq!(part.to_vec::<f32>().unwrap(), vec![1.0, -2.0, 3.0, 4.5]);
            drop(c);
            assert_eq!(crate::live_handle_count(), before + 3); // x, out, part
        });
    }

    #[test]
    fn collective_errors() {
        leak_checked(|| {
            let pg = one_rank("errors");
            let x = Tensor::ones(&[4], DType::Float32, Device::CPU).unwrap();
            let i = Tensor::ones(&[4], DType::Int32, Device::CPU).unwrap();
            let e = pg.all_reduce_(&i, ReduceOp::Avg).unwrap_err();
            assert_eq!(e.code, ErrorCode::DtypeMismatch, "{e}");
            assert_eq!(
                pg.reduce_scatter(&i, &i, ReduceOp::Avg).unwrap_err().code,
                ErrorCode::DtypeMismatch
            );
            assert_eq!(
                pg.broadcast_(&x, 1).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                pg.send(&x, 0, 0).unwrap_err().code,
                ErrorCode::InvalidArgument
            ); // this rank
            assert_eq!(
                pg.recv(&x, 0, 0).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                pg.all_gather(&x, &i).unwrap_err().code,
                ErrorCode::DtypeMismatch
            );
            let big = Tensor::zeros(&[5], DType::Float32, Device::CPU).unwrap();
            assert_eq!(
                pg.all_gather(&x, &big).unwrap_err().code,
                ErrorCode::ShapeMismatch
            );
            if Device::cuda_is_available() {
                let g = x.to(Device::Cuda(0)).unwrap();
                assert_eq!(
                    pg.all_reduce_(&g, ReduceOp::Sum).unwrap_err().code,
                    ErrorCode::DeviceMismatch
                );
            }
            // Argument errors leave the group usable.
            pg.barrier().unwrap();
            // The raw call with an op outside the enum.
            let st = unsafe { ffi::dt_all_reduce_(pg.as_ptr(), x.as_ptr(), 9) };
            assert_eq!(ErrorCode::from_status(st), ErrorCode::InvalidArgument);
        });
    }
}

//! LambdaLR and MultiplicativeLR with a Rust closure: the closure crosses into the C
//! library as `user_data` (a boxed `FnMut`), called back through `call_lambda` and
//! dropped through `drop_lambda` when the scheduler is released for the last time.

use super::lr_scheduler::new_scheduler;
use super::{LrScheduler, Optimizer};
use crate::error::{Error, Result};
use devtensor_sys as ffi;
use std::any::Any;
use std::cell::RefCell;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// What the last closure called on this thread panicked with, until a scheduler
    /// call takes it for its error. The library calls a closure on the thread that makes
    /// or steps the scheduler (include/devtensor.h, dt_lr_lambda_fn), so the failing
    /// call finds it here.
    static PANICKED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Forgets what an earlier closure call on this thread panicked with (before a call
/// that may run closures).
pub(super) fn forget_panic() {
    PANICKED.with(|p| p.borrow_mut().take());
}

/// `e` (from a call that ran closures) with what the closure panicked with, if one did.
pub(super) fn explain_panic(mut e: Error) -> Error {
    if let Some(what) = PANICKED.with(|p| p.borrow_mut().take()) {
        e.message.push_str(&format!(" (the closure panicked: {what})"));
    }
    e
}

pub(super) fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a value that is not a string".to_string()
    }
}

/// What `user_data` points to: the caller's closure, boxed once more so that the pointer
/// is thin.
type Lambda = Box<dyn FnMut(i64) -> f64 + Send>;

/// `dt_lr_lambda_fn`: the closure's factor for `epoch`. A panic is caught here (it must
/// not unwind into C) and becomes NaN, which fails the step with InvalidArgument; what it
/// said is kept for that error (`explain_panic`).
unsafe extern "C" fn call_lambda(epoch: i64, user_data: *mut c_void) -> f64 {
    // SAFETY: user_data is the `Box<Lambda>` made by `new_lambda_scheduler`, alive until
    // `drop_lambda`; the library calls one scheduler's function one call at a time
    // (include/devtensor.h, dt_lr_lambda_fn), so this is the only reference now.
    let f = unsafe { &mut *(user_data as *mut Lambda) };
    catch_unwind(AssertUnwindSafe(|| f(epoch))).unwrap_or_else(|payload| {
        let what = panic_text(payload.as_ref());
        PANICKED.with(|p| *p.borrow_mut() = Some(what));
        f64::NAN
    })
}

/// `dt_lr_lambda_free_fn`: drops the closure (once, with the scheduler's last release).
unsafe extern "C" fn drop_lambda(user_data: *mut c_void) {
    // SAFETY: as in call_lambda; the library calls this once, after the last call.
    let f = unsafe { Box::from_raw(user_data as *mut Lambda) };
    // A panicking Drop of something the closure captured must not unwind into C.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(f)));
}

type Constructor = unsafe extern "C" fn(
    *mut ffi::dt_optimizer,
    ffi::dt_lr_lambda_fn,
    *mut c_void,
    ffi::dt_lr_lambda_free_fn,
    *mut *mut ffi::dt_lr_scheduler,
) -> ffi::dt_status;

fn new_lambda_scheduler(opt: &Optimizer, f: Lambda, make: Constructor) -> Result<LrScheduler> {
    let data = Box::into_raw(Box::new(f)) as *mut c_void;
    let mut handed = false;
    let r = new_scheduler(|o| {
        // SAFETY: opt is a live optimizer; data stays valid until drop_lambda or below.
        let st = unsafe { make(opt.as_raw(), Some(call_lambda), data, Some(drop_lambda), o) };
        handed = st == ffi::DT_OK;
        st
    });
    if !handed {
        // The library frees user_data only once a scheduler holds it: here none does.
        // SAFETY: data came from Box::into_raw above and the library did not keep it.
        drop(unsafe { Box::from_raw(data as *mut Lambda) });
    }
    r
}

impl LrScheduler {
    /// `torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)` (`dt_lambda_lr_new`): the
    /// rate at each epoch is the initial rate times `lr_lambda(epoch)`. Hugging Face's
    /// warm-up schedules are LambdaLRs; `get_linear_schedule_with_warmup(opt, 3, 10)`:
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.1).build()?;
    /// let (warmup, total) = (3, 10);
    /// let sched = LrScheduler::lambda_lr(&opt, move |e| {
    ///     if e < warmup {
    ///         e as f64 / warmup as f64
    ///     } else {
    ///         ((total - e) as f64 / (total - warmup) as f64).max(0.0)
    ///     }
    /// })?;
    /// let mut rates = vec![opt.lr()?];
    /// for _ in 0..4 {
    ///     sched.step()?; // after opt.step() in training
    ///     rates.push(opt.lr()?);
    /// }
    /// let want = [0.0, 0.1 / 3.0, 0.2 / 3.0, 0.1, 0.6 / 7.0];
    /// for (got, want) in rates.iter().zip(want) {
    ///     assert!((got - want).abs() < 1e-12, "{rates:?}");
    /// }
    /// assert_eq!(sched.kind()?, "LambdaLR");
    /// # Ok(()) }
    /// ```
    ///
    /// `lr_lambda` is called for epoch 0 before this returns, then once per
    /// [`step`](LrScheduler::step), on the thread that steps, one call at a time (so an
    /// `FnMut` is enough; it must be `Send`, for the scheduler may be stepped and dropped
    /// on any thread). The scheduler keeps it until its last handle is dropped. It must
    /// return a finite number that leaves the rate `>= 0`: anything else, or a panic
    /// (caught; the error ends with "(the closure panicked: ...)", whichever scheduler's
    /// step ran it), fails that step with [`ErrorCode::InvalidArgument`] and changes
    /// nothing.
    /// Calls to schedulers from inside it fail the same way (they could wait on the
    /// scheduler being stepped). The state dict holds `base_lr`, `last_epoch` and
    /// `last_lr`, not the function, as PyTorch leaves a plain function out of its own.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (what `lr_lambda` returned for epoch 0, or its
    /// panic), [`ErrorCode::InvalidHandle`]. The optimizer is unchanged then, and the
    /// closure dropped.
    ///
    /// [`ErrorCode::InvalidArgument`]: crate::ErrorCode::InvalidArgument
    /// [`ErrorCode::InvalidHandle`]: crate::ErrorCode::InvalidHandle
    pub fn lambda_lr<F>(opt: &Optimizer, lr_lambda: F) -> Result<LrScheduler>
    where
        F: FnMut(i64) -> f64 + Send + 'static,
    {
        new_lambda_scheduler(opt, Box::new(lr_lambda), ffi::dt_lambda_lr_new)
    }

    /// `torch.optim.lr_scheduler.MultiplicativeLR(optimizer, lr_lambda)`
    /// (`dt_multiplicative_lr_new`): each [`step`](LrScheduler::step) from epoch 1 on
    /// multiplies the rate by `lr_lambda(epoch)`; making it leaves the rate as it is,
    /// without calling `lr_lambda`. Otherwise as [`lambda_lr`](LrScheduler::lambda_lr).
    ///
    /// ```
    /// use devtensor::nn::{LrScheduler, Module, Sgd};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 1, true, DType::Float32, Device::CPU)?;
    /// let opt = Sgd::new(&lin.parameters()?, 0.8).build()?;
    /// let sched = LrScheduler::multiplicative_lr(&opt, |e| if e % 2 == 1 { 0.5 } else { 1.0 })?;
    /// let mut rates = vec![opt.lr()?];
    /// for _ in 0..4 {
    ///     sched.step()?;
    ///     rates.push(opt.lr()?);
    /// }
    /// assert_eq!(rates, [0.8, 0.4, 0.4, 0.2, 0.2]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidHandle`]; the optimizer is unchanged then, and the closure
    /// dropped.
    ///
    /// [`ErrorCode::InvalidHandle`]: crate::ErrorCode::InvalidHandle
    pub fn multiplicative_lr<F>(opt: &Optimizer, lr_lambda: F) -> Result<LrScheduler>
    where
        F: FnMut(i64) -> f64 + Send + 'static,
    {
        new_lambda_scheduler(opt, Box::new(lr_lambda), ffi::dt_multiplicative_lr_new)
    }
}

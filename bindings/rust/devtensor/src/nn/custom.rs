//! Modules of your own whose forward is a Rust closure ([`Module::custom`],
//! `dt_module_new`), as a subclass of PyTorch's `nn.Module`, and the by-path lookups
//! such a forward uses ([`Module::get_parameter`], [`Module::get_buffer`]). The closure
//! crosses into the C library as `user_data` (a boxed `Fn`), is called back through
//! `call_forward` and dropped through `drop_forward` when the module and every replica
//! DataParallel made of it are gone.

use super::lr_lambda::panic_text;
use super::{new_module, Module};
use crate::error::{Error, ErrorCode, Result};
use crate::Tensor;
use devtensor_sys as ffi;
use std::ffi::CString;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a custom module holds besides its forward closure ([`Module::custom`],
/// `dt_module_spec`): named children, parameters and buffers, and how many inputs its
/// forward takes. [`Default`] is none of each and one input.
///
/// Names are not empty, hold no `'.'` and are unique across the three lists (they are
/// the parts of the state dict's keys: child `"conv1"`'s weight is `"conv1.weight"`).
///
/// ```
/// use devtensor::nn::ModuleSpec;
/// let s = ModuleSpec::default();
/// assert!(s.children.is_empty() && s.parameters.is_empty() && s.buffers.is_empty());
/// assert_eq!((s.min_inputs, s.max_inputs), (0, 0)); // both 0: exactly one input
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ModuleSpec<'a> {
    /// Child modules under their names. The module holds its own reference to each: the
    /// SAME module, not a copy (its parameters are the child's), as PyTorch's
    /// `self.conv1 = conv1`. A module listed twice shares its parameters, as in PyTorch.
    pub children: &'a [(&'a str, &'a Module)],
    /// Tensors whose VALUES become the module's own parameters, as `nn.Parameter(t)`:
    /// copies with the same shape, dtype and device, requiring grad (floating dtypes
    /// only). Reach them with [`Module::get_parameter`].
    pub parameters: &'a [(&'a str, &'a Tensor)],
    /// Tensors whose values become the module's own buffers (copies, not requiring
    /// grad; any dtype), as `register_buffer`. Reach them with [`Module::get_buffer`].
    pub buffers: &'a [(&'a str, &'a Tensor)],
    /// The fewest inputs forward takes (both counts 0: exactly one).
    pub min_inputs: usize,
    /// The most inputs forward takes, at most 16.
    pub max_inputs: usize,
}

/// What `user_data` points to: the caller's closure, boxed once more so that the pointer
/// is thin.
type ForwardFn = Box<dyn Fn(&Module, &[Tensor]) -> Result<Tensor> + Send + Sync>;

/// `msg` as a C string (a NUL byte, which would cut it short, is written `\0`).
fn c_message(msg: &str) -> CString {
    CString::new(msg.replace('\0', "\\0")).unwrap_or_default()
}

/// The `dt_status` a closure's error is reported with: its own code; the binding's
/// `Version` (which has no status) and a status that is not a failure as
/// `DT_ERR_INTERNAL`.
fn status_of(code: ErrorCode) -> ffi::dt_status {
    match code.status() {
        Some(s) if s != ffi::DT_OK => s,
        _ => ffi::DT_ERR_INTERNAL,
    }
}

/// A new owning `Module` for a BORROWED handle valid during the call (a retain).
///
/// # Safety
///
/// `h` is NULL or a live module handle.
unsafe fn retained_module(h: *mut ffi::dt_module) -> Result<Module> {
    if h.is_null() {
        return Err(Error::new(ErrorCode::Internal, "the library passed a NULL module"));
    }
    // SAFETY: a live handle (the library's, for the call); the retain is ours to release.
    crate::error::check(unsafe { ffi::dt_module_retain(h) })?;
    // SAFETY: we own the reference just added.
    Ok(unsafe { Module::from_raw(h) })
}

/// New owning `Tensor`s for `n` BORROWED input handles (retains).
///
/// # Safety
///
/// `inputs` points to `n` handles, each NULL or live.
unsafe fn retained_inputs(inputs: *const *mut ffi::dt_tensor, n: usize) -> Result<Vec<Tensor>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if inputs.is_null() {
        return Err(Error::new(ErrorCode::Internal, "the library passed NULL inputs"));
    }
    // SAFETY: n handles, per the caller.
    let raw = unsafe { std::slice::from_raw_parts(inputs, n) };
    raw.iter()
        .enumerate()
        .map(|(i, &h)| {
            if h.is_null() {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "input {i} is absent (None): a Rust forward closure takes present inputs only \
                         (leave optional inputs out at the end instead: min_inputs to max_inputs)"
                    ),
                ));
            }
            // SAFETY: a live tensor handle, borrowed for the call; the retain is ours.
            crate::error::check(unsafe { ffi::dt_tensor_retain(h) })?;
            // SAFETY: we own the reference just added.
            Ok(unsafe { Tensor::from_raw(h) })
        })
        .collect()
}

/// `dt_module_forward_fn`: runs the closure on owning handles to `self_` and the inputs
/// (retained here, released when the call ends) and hands the library a NEW reference
/// to its output. An error becomes its status, its message set with
/// `dt_set_error_message` (the library quotes it); a panic is caught here (it must not
/// unwind into C) and becomes `DT_ERR_INVALID_ARGUMENT` with the panic's text.
unsafe extern "C" fn call_forward(
    self_: *mut ffi::dt_module,
    inputs: *const *mut ffi::dt_tensor,
    n: usize,
    user_data: *mut c_void,
    out: *mut *mut ffi::dt_tensor,
) -> ffi::dt_status {
    // SAFETY: user_data is the `Box<ForwardFn>` made by `Module::custom`, alive until
    // `drop_forward`, which the library calls after the last call; the closure is `Fn +
    // Sync`, so shared references from several threads at once are sound.
    let f = unsafe { &*(user_data as *const ForwardFn) };
    // Everything the call made (the retained handles, the output on failure) is dropped
    // inside, before the message is set below.
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<*mut ffi::dt_tensor> {
        if out.is_null() {
            return Err(Error::new(ErrorCode::Internal, "the library passed a NULL out"));
        }
        // SAFETY: BORROWED handles valid during this call (dt_module_forward_fn).
        let m = unsafe { retained_module(self_) }?;
        // SAFETY: as above, n input handles.
        let xs = unsafe { retained_inputs(inputs, n) }?;
        Ok(f(&m, &xs)?.into_raw())
    }));
    let (status, message) = match r {
        Ok(Ok(t)) => {
            // SAFETY: out checked non-NULL above; the reference passes to the library,
            // which releases it.
            unsafe { *out = t };
            return ffi::DT_OK;
        }
        Ok(Err(e)) => (status_of(e.code), c_message(&e.message)),
        Err(payload) => {
            let what = panic_text(payload.as_ref());
            // A panicking Drop of the payload must not unwind into C either.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            (
                ffi::DT_ERR_INVALID_ARGUMENT,
                c_message(&format!("(the forward closure panicked: {what})")),
            )
        }
    };
    // SAFETY: a valid C string, copied by the library; never fails.
    unsafe { ffi::dt_set_error_message(message.as_ptr()) };
    status
}

/// `dt_module_free_fn`: drops the closure (once, when the module and its replicas are
/// gone, on the thread that releases the last of them).
unsafe extern "C" fn drop_forward(user_data: *mut c_void) {
    // SAFETY: as in call_forward; the library calls this once, after the last call.
    let f = unsafe { Box::from_raw(user_data as *mut ForwardFn) };
    // A panicking Drop of something the closure captured must not unwind into C.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(f)));
}

/// `s` as a C string, or [`ErrorCode::InvalidArgument`] naming `what` when it holds a
/// NUL byte (C would cut it short).
fn c_name(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("Module::custom: {what} {s:?} holds a NUL byte"),
        )
    })
}

/// A list of `spec` as the C arrays of names and handles (the names owned by the first
/// vector, which must outlive the call).
fn c_list<T, P>(
    what: &str,
    list: &[(&str, &T)],
    raw: impl Fn(&T) -> P,
) -> Result<(Vec<CString>, Vec<*const std::os::raw::c_char>, Vec<P>)> {
    let names = list
        .iter()
        .map(|(n, _)| c_name(what, n))
        .collect::<Result<Vec<_>>>()?;
    let ptrs = names.iter().map(|n| n.as_ptr()).collect();
    let handles = list.iter().map(|(_, v)| raw(*v)).collect();
    Ok((names, ptrs, handles))
}

impl Module {
    /// A module of your own (`dt_module_new`), as a subclass of PyTorch's `nn.Module`:
    /// the children, parameters and buffers `spec` names, and `forward` as its forward.
    /// It is a `Module` as every other: its state dict names are PyTorch's
    /// (`"conv1.weight"`, `"bn1.running_mean"`), so a state dict PyTorch saved for the
    /// same class loads unchanged; [`to`](Module::to) moves it, [`train`](Module::train)
    /// and [`eval`](Module::eval) reach its children, it may sit in a
    /// [`Sequential`](super::Sequential), an optimizer takes its parameters, and
    /// [`data_parallel`](Module::data_parallel) and
    /// [`distributed_data_parallel`](Module::distributed_data_parallel) wrap it. `kind` is
    /// the class name ([`Module::kind`], error messages). It starts in training mode.
    ///
    /// `forward(m, inputs)` gets the module being run and its inputs
    /// ([`ModuleSpec::min_inputs`] to [`ModuleSpec::max_inputs`] of them, one by
    /// default). Reach the module's parts through `m` ([`child`](Module::child),
    /// [`get_parameter`](Module::get_parameter), [`get_buffer`](Module::get_buffer)),
    /// not through handles the closure captured: DataParallel runs it on replicas whose
    /// tensors live on other devices. Inputs are all present: an absent one (a NULL that
    /// C or Go passed past `min_inputs`) fails the call; leave optional inputs out at the
    /// end instead. It may return an input (a clone). It may be called
    /// from several threads at once (DataParallel's replicas, or your own threads
    /// sharing the module) and re-entrantly (a custom module inside another), hence
    /// `Fn + Send + Sync + 'static`; it runs on the calling thread. Moving a module inside
    /// it fails ([`Module::to`] is `InvalidArgument`). Do not capture the module itself
    /// (nor a parent of it): the module owns the closure, so that cycle keeps both alive.
    ///
    /// When `forward` returns an error, [`Module::forward`] fails with its code and a
    /// message naming `kind` and quoting the error's message (`"Residual.forward:
    /// Linear(...): ..."`): a child's error keeps its code (the
    /// binding's own [`ErrorCode::Version`], which has no status, becomes
    /// [`ErrorCode::Internal`]). A
    /// panic is caught (it never unwinds into the library) and fails the forward with
    /// [`ErrorCode::InvalidArgument`], the message ending with `"(the forward closure
    /// panicked: ...)"`. The closure is dropped when the module, every handle to it
    /// ([`share`](Module::share), [`child`](Module::child)), the modules holding it, and
    /// every replica DataParallel made of it are gone, on the thread that drops the last.
    ///
    /// A residual block, `y = relu(lin(x)) * scale + x`, with a parameter of its own:
    ///
    /// ```
    /// use devtensor::nn::{Module, ModuleSpec};
    /// use devtensor::{DType, Device, ErrorCode, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(2, 2, true, DType::Float32, Device::CPU)?;
    /// let scale = Tensor::from_slice(&[0.5f32], &[1], Device::CPU)?;
    /// let spec = ModuleSpec {
    ///     children: &[("lin", &lin)],
    ///     parameters: &[("scale", &scale)],
    ///     ..ModuleSpec::default()
    /// };
    /// let block = Module::custom("Residual", &spec, |m, x| {
    ///     let h = m.child("lin")?.forward(&x[0])?.relu()?;
    ///     h.mul(&m.get_parameter("scale")?)?.add(&x[0])
    /// })?;
    /// assert_eq!(block.kind()?, "Residual");
    /// let names = block.state_dict()?.names()?;
    /// assert_eq!(names, ["scale", "lin.weight", "lin.bias"]); // PyTorch's order and names
    ///
    /// let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0, 4.0], &[2, 2], Device::CPU)?;
    /// let y = block.forward(&x)?;
    /// let want = lin.forward(&x)?.relu()?.mul_scalar(0.5)?.add(&x)?; // by hand
    /// assert!(y.allclose(&want)?);
    /// // Gradients reach the child's parameters and the block's own.
    /// y.sum_all()?.backward()?;
    /// assert!(block.get_parameter("scale")?.grad()?.is_some());
    /// assert!(lin.parameters()?[0].grad()?.is_some());
    ///
    /// // The closure's errors keep their code and are quoted with the kind.
    /// let bad = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU)?;
    /// let e = block.forward(&bad).unwrap_err();
    /// assert_eq!(e.code, ErrorCode::ShapeMismatch);
    /// assert!(e.message.starts_with("Residual.forward: Linear"), "{}", e.message);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: an empty `kind`, a name that is empty, holds a
    /// `'.'` or is used twice, `min_inputs` over `max_inputs`, `max_inputs` over 16, a NUL
    /// byte in `kind` or a name; [`ErrorCode::DtypeMismatch`]: a parameter that is not
    /// floating (integer state is a buffer); [`ErrorCode::InvalidHandle`],
    /// [`ErrorCode::OutOfMemory`] (`dt_module_new`). `forward` is dropped then, not
    /// called.
    pub fn custom<F>(kind: &str, spec: &ModuleSpec<'_>, forward: F) -> Result<Module>
    where
        F: Fn(&Module, &[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
    {
        let kind_c = c_name("kind", kind)?;
        let (_cn, child_names, children) = c_list("child name", spec.children, |m: &Module| m.raw())?;
        let (_pn, param_names, params) =
            c_list("parameter name", spec.parameters, |t: &Tensor| t.as_ptr() as *const ffi::dt_tensor)?;
        let (_bn, buffer_names, buffers) =
            c_list("buffer name", spec.buffers, |t: &Tensor| t.as_ptr() as *const ffi::dt_tensor)?;
        let f: ForwardFn = Box::new(forward);
        let data = Box::into_raw(Box::new(f)) as *mut c_void;
        let raw = ffi::dt_module_spec {
            struct_size: std::mem::size_of::<ffi::dt_module_spec>(),
            kind: kind_c.as_ptr(),
            n_children: children.len(),
            child_names: child_names.as_ptr(),
            children: children.as_ptr(),
            n_parameters: params.len(),
            parameter_names: param_names.as_ptr(),
            parameters: params.as_ptr(),
            n_buffers: buffers.len(),
            buffer_names: buffer_names.as_ptr(),
            buffers: buffers.as_ptr(),
            min_inputs: spec.min_inputs,
            max_inputs: spec.max_inputs,
            forward: Some(call_forward),
            user_data: data,
            free_user_data: Some(drop_forward),
        };
        let mut handed = false;
        let r = new_module(|o| {
            // SAFETY: the spec's strings, handles and arrays live until the call returns
            // (the library reads them during it); data stays valid until drop_forward or
            // below.
            let st = unsafe { ffi::dt_module_new(&raw, o) };
            handed = st == ffi::DT_OK;
            st
        });
        if !handed {
            // The library frees user_data only once a module holds it: here none does.
            // SAFETY: data came from Box::into_raw above and the library did not keep it.
            drop(unsafe { Box::from_raw(data as *mut ForwardFn) });
        }
        r
    }

    /// The parameter at a dotted path (`dt_module_get_parameter`), as PyTorch's
    /// `get_parameter`: `"weight"`, `"bn1.weight"`, `"layer1.0.conv1.weight"`. The
    /// tensor itself, not a copy (a [`Tensor`] that shares its memory with the module):
    /// later training steps and loads show through it. A custom module's forward
    /// ([`Module::custom`]) reaches its own parameters this way.
    ///
    /// ```
    /// use devtensor::nn::{Module, Sequential};
    /// use devtensor::{DType, Device, ErrorCode};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let net = Sequential::new()
    ///     .add(Module::linear(3, 2, true, DType::Float32, Device::CPU)?)
    ///     .add(Module::relu()?)
    ///     .build()?;
    /// let w = net.get_parameter("0.weight")?;
    /// assert_eq!(w.shape(), vec![2, 3]);
    /// assert!(w.shares_storage(&net.parameters()?[0]));
    /// let e = net.get_parameter("0.scale").unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// assert!(e.message.contains("parameters weight, bias"), "{}", e.message);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: no such child or parameter (the message names
    /// what is missing and what there is), a path holding a NUL byte;
    /// [`ErrorCode::InvalidHandle`].
    pub fn get_parameter(&self, path: &str) -> Result<Tensor> {
        let p = c_name("parameter path", path)?;
        // SAFETY: a live module handle and a C string, borrowed for the call.
        Tensor::from_out(|o| unsafe { ffi::dt_module_get_parameter(self.raw(), p.as_ptr(), o) })
    }

    /// The buffer at a dotted path (`dt_module_get_buffer`), as PyTorch's `get_buffer`:
    /// `"bn1.running_mean"`, `"bn1.num_batches_tracked"`. The tensor itself, not a copy,
    /// as [`Module::get_parameter`].
    ///
    /// ```
    /// use devtensor::nn::{BatchNorm1d, Module, Sequential};
    /// use devtensor::{DType, Device, ErrorCode};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let net = Sequential::new().add(BatchNorm1d::new(3).build()?).build()?;
    /// let rv = net.get_buffer("0.running_var")?;
    /// assert_eq!(rv.to_vec::<f32>()?, vec![1.0; 3]);
    /// assert_eq!(net.get_buffer("0.num_batches_tracked")?.dtype(), DType::Int64);
    /// let e = net.get_buffer("1.running_var").unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// assert!(e.message.contains("no child \"1\""), "{}", e.message);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Module::get_parameter`].
    pub fn get_buffer(&self, path: &str) -> Result<Tensor> {
        let p = c_name("buffer path", path)?;
        // SAFETY: a live module handle and a C string, borrowed for the call.
        Tensor::from_out(|o| unsafe { ffi::dt_module_get_buffer(self.raw(), p.as_ptr(), o) })
    }
}

//! Gradient clipping, as `torch.nn.utils.clip_grad_norm_` and `clip_grad_value_`
//! (`dt_clip_grad_norm_`, `dt_clip_grad_value_`): called between `backward` and
//! [`Optimizer::step`](super::Optimizer::step), over the same parameters.
use crate::error::{check, Result};
use crate::Tensor;
use devtensor_sys as ffi;

/// `torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite)`:
/// the `norm_type` norm of all the parameters' gradients together (as if concatenated)
/// is computed and, when it exceeds `max_norm`, every gradient is scaled IN PLACE by
/// `max_norm / (norm + 1e-6)`. Returns that total norm (before clipping) as a 0-d tensor.
///
/// * `norm_type`: the order `p` of the norm, > 0 (PyTorch's default is 2.0);
///   `f64::INFINITY` is the max norm, the largest gradient magnitude.
/// * `max_norm`: >= 0; `f64::INFINITY` clips nothing and only measures the norm.
/// * `error_if_nonfinite`: with `true`, a NaN or infinite total norm is an error and no
///   gradient changes (this reads the norm, so the call waits for the device); with
///   `false` (PyTorch's default) the gradients are scaled by the NaN, as PyTorch's.
///
/// Parameters without a gradient are skipped (none at all: the norm is 0, a `float32` on
/// the CPU). Gradients may lie on several devices: each one's norm is taken where it is
/// and the total on the first gradient's device, in its dtype (half and bfloat16
/// accumulate in float32). Unless `error_if_nonfinite` is set the call does not wait for
/// the device, so a training step stays asynchronous and can be captured into a
/// [`Graph`](crate::Graph).
///
/// ```
/// use devtensor::nn::clip_grad_norm_;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let w = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU)?;
/// w.set_requires_grad(true)?;
/// let c = Tensor::from_slice(&[3.0f32, 4.0], &[2], Device::CPU)?;
/// (&w * &c)?.sum_all()?.backward()?; // w.grad = [3, 4]
/// let norm = clip_grad_norm_(&[w.clone()], 1.0, 2.0, false)?;
/// assert!((norm.item()? - 5.0).abs() < 1e-6); // sqrt(3² + 4²)
/// let g = w.grad()?.unwrap().to_vec::<f32>()?;
/// assert!((g[0] - 0.6).abs() < 1e-6 && (g[1] - 0.8).abs() < 1e-6); // [3, 4] / 5
/// // The max norm: the largest magnitude, 0.8, within 1 already.
/// let inf = clip_grad_norm_(&[w.clone()], 1.0, f64::INFINITY, false)?;
/// assert!((inf.item()? - 0.8).abs() < 1e-6);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (a negative or NaN
/// `max_norm`, a `norm_type` that is not positive, a non-finite norm with
/// `error_if_nonfinite`), [`ErrorCode::InvalidHandle`](crate::ErrorCode::InvalidHandle),
/// [`ErrorCode::OutOfMemory`](crate::ErrorCode::OutOfMemory) (`dt_clip_grad_norm_`).
pub fn clip_grad_norm_(
    params: &[Tensor],
    max_norm: f64,
    norm_type: f64,
    error_if_nonfinite: bool,
) -> Result<Tensor> {
    crate::check_version()?;
    let h: Vec<*const ffi::dt_tensor> = params.iter().map(|t| t.as_ptr() as *const _).collect();
    Tensor::from_out(|o| unsafe {
        ffi::dt_clip_grad_norm_(
            h.as_ptr(),
            h.len(),
            max_norm,
            norm_type,
            error_if_nonfinite as i32,
            o,
        )
    })
}

/// `torch.nn.utils.clip_grad_value_(params, clip_value)`: clamps every gradient IN PLACE
/// to `[-clip_value, clip_value]`; parameters without a gradient are skipped.
///
/// ```
/// use devtensor::nn::clip_grad_value_;
/// use devtensor::{Device, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let w = Tensor::from_slice(&[0.0f32, 0.0, 0.0], &[3], Device::CPU)?;
/// w.set_requires_grad(true)?;
/// let c = Tensor::from_slice(&[-3.0f32, 0.25, 2.0], &[3], Device::CPU)?;
/// (&w * &c)?.sum_all()?.backward()?; // w.grad = [-3, 0.25, 2]
/// clip_grad_value_(&[w.clone()], 1.0)?;
/// assert_eq!(w.grad()?.unwrap().to_vec::<f32>()?, vec![-1.0, 0.25, 1.0]);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`ErrorCode::InvalidArgument`](crate::ErrorCode::InvalidArgument) (a negative or NaN
/// `clip_value`), [`ErrorCode::InvalidHandle`](crate::ErrorCode::InvalidHandle)
/// (`dt_clip_grad_value_`).
pub fn clip_grad_value_(params: &[Tensor], clip_value: f64) -> Result<()> {
    crate::check_version()?;
    let h: Vec<*const ffi::dt_tensor> = params.iter().map(|t| t.as_ptr() as *const _).collect();
    check(unsafe { ffi::dt_clip_grad_value_(h.as_ptr(), h.len(), clip_value) })
}

//! Views and operations on `Tensor`, each one C call. Every result is a NEW tensor (a
//! view for the view functions); operands must share a device (else `DeviceMismatch`).
use crate::error::{check, Error, ErrorCode, Result};
use crate::Tensor;
use devtensor_sys as ffi;
use std::ops::{Add, Div, Mul, Sub};

macro_rules! binary {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), other.as_ptr(), o) })
        }
    )*};
}
macro_rules! scalar {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        pub fn $name(&self, other: f64) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), other, o) })
        }
    )*};
}
macro_rules! unary {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        pub fn $name(&self) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), o) })
        }
    )*};
}
macro_rules! reduce {
    ($($(#[$m:meta])* $name:ident => $f:ident;)*) => {$(
        $(#[$m])*
        pub fn $name(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
            Tensor::from_out(|o| unsafe { ffi::$f(self.as_ptr(), dims.as_ptr(), dims.len(), keepdim as i32, o) })
        }
    )*};
}

fn handles(tensors: &[&Tensor]) -> Vec<*const ffi::dt_tensor> {
    tensors
        .iter()
        .map(|t| t.as_ptr() as *const ffi::dt_tensor)
        .collect()
}

impl Tensor {
    // ------------------------------------------------------------------- views

    /// The same elements with another shape (one `-1` is inferred); a view when the
    /// strides allow (exactly when PyTorch's is), else a copy.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_reshape(self.as_ptr(), shape.as_ptr(), shape.len(), o)
        })
    }
    /// As [`Tensor::reshape`] but always a view (`ShapeMismatch` when it cannot be).
    pub fn view(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_view(self.as_ptr(), shape.as_ptr(), shape.len(), o) })
    }
    /// Swaps two dimensions (a view).
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_transpose(self.as_ptr(), dim0, dim1, o) })
    }
    /// Reorders the dimensions (a view).
    pub fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_permute(self.as_ptr(), dims.as_ptr(), dims.len(), o)
        })
    }
    /// `length` elements of `dim` from `start` (a view).
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_narrow(self.as_ptr(), dim, start, length, o) })
    }
    /// Drops the listed size-1 dimensions (every size-1 dimension when `dims` is empty).
    pub fn squeeze(&self, dims: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_squeeze(self.as_ptr(), dims.as_ptr(), dims.len(), o)
        })
    }
    /// Inserts a size-1 dimension at `dim`.
    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_unsqueeze(self.as_ptr(), dim, o) })
    }
    /// Broadcasts to `shape` (a view with zero strides; `-1` keeps a size).
    pub fn expand(&self, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe {
            ffi::dt_expand(self.as_ptr(), shape.as_ptr(), shape.len(), o)
        })
    }
    /// A row-major contiguous tensor: `self` again when already contiguous, else a copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_contiguous(self.as_ptr(), o) })
    }
    /// Flattens dimensions `start_dim..=end_dim` into one.
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_flatten(self.as_ptr(), start_dim, end_dim, o) })
    }

    // ------------------------------------------------------------ elementwise

    binary! {
        /// `self + other`, broadcasting, with PyTorch's type promotion.
        add => dt_add;
        /// `self - other`.
        sub => dt_sub;
        /// `self * other`.
        mul => dt_mul;
        /// `self / other` (true division: integers give the default float dtype).
        div => dt_div;
        /// `self ** other`.
        pow => dt_pow;
        /// Elementwise maximum.
        maximum => dt_maximum;
        /// Elementwise minimum.
        minimum => dt_minimum;
        /// Matrix product, as `torch.matmul` (dot, matrix, batched).
        matmul => dt_matmul;
        /// `self == other`, a bool tensor.
        eq => dt_eq;
        /// `self != other`.
        ne => dt_ne;
        /// `self < other`.
        lt => dt_lt;
        /// `self <= other`.
        le => dt_le;
        /// `self > other`.
        gt => dt_gt;
        /// `self >= other`.
        ge => dt_ge;
    }

    scalar! {
        /// `self + s` (an integral `s` keeps an integer dtype, as a Python int would).
        add_scalar => dt_add_scalar;
        /// `self - s`.
        sub_scalar => dt_sub_scalar;
        /// `self * s`.
        mul_scalar => dt_mul_scalar;
        /// `self / s`.
        div_scalar => dt_div_scalar;
        /// `self ** s`.
        pow_scalar => dt_pow_scalar;
        /// `max(self, s)`.
        maximum_scalar => dt_maximum_scalar;
        /// `min(self, s)`.
        minimum_scalar => dt_minimum_scalar;
        /// `self == s`.
        eq_scalar => dt_eq_scalar;
        /// `self != s`.
        ne_scalar => dt_ne_scalar;
        /// `self < s`.
        lt_scalar => dt_lt_scalar;
        /// `self <= s`.
        le_scalar => dt_le_scalar;
        /// `self > s`.
        gt_scalar => dt_gt_scalar;
        /// `self >= s`.
        ge_scalar => dt_ge_scalar;
    }

    unary! {
        /// `-self`.
        neg => dt_neg;
        /// `|self|`.
        abs => dt_abs;
        /// `e^self`.
        exp => dt_exp;
        /// Natural logarithm.
        log => dt_log;
        /// Square root.
        sqrt => dt_sqrt;
        /// `1 / sqrt(self)`.
        rsqrt => dt_rsqrt;
        /// Sine.
        sin => dt_sin;
        /// Cosine.
        cos => dt_cos;
        /// `max(self, 0)`.
        relu => dt_relu;
        /// Logistic sigmoid.
        sigmoid => dt_sigmoid;
        /// Hyperbolic tangent.
        tanh => dt_tanh;
        /// GELU (exact, erf form).
        gelu => dt_gelu;
        /// SiLU (`x * sigmoid(x)`).
        silu => dt_silu;
    }

    /// `cond ? a : b` elementwise (`self` is the bool condition).
    pub fn where_(&self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_where(self.as_ptr(), a.as_ptr(), b.as_ptr(), o) })
    }

    // ------------------------------------------------------------- reductions

    reduce! {
        /// Sum over `dims` (all when empty); integers sum to int64.
        ///
        /// ```
        /// use devtensor::{Device, Tensor};
        /// let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap();
        /// assert_eq!(t.sum(&[1], false).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
        /// assert_eq!(t.sum(&[], false).unwrap().item().unwrap(), 10.0);
        /// ```
        sum => dt_sum;
        /// Mean over `dims` of a floating tensor.
        mean => dt_mean;
        /// Largest value over `dims` (`torch.amax`).
        max => dt_max;
        /// Smallest value over `dims` (`torch.amin`).
        min => dt_min;
        /// Index of the first largest value along ONE dimension (`dims.len() <= 1`;
        /// empty: over the flattened tensor).
        argmax => dt_argmax;
        /// Index of the first smallest value (see [`Tensor::argmax`]).
        argmin => dt_argmin;
    }

    /// Softmax along `dim`.
    pub fn softmax(&self, dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_softmax(self.as_ptr(), dim, o) })
    }
    /// Log-softmax along `dim`.
    pub fn log_softmax(&self, dim: i64) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_log_softmax(self.as_ptr(), dim, o) })
    }

    // -------------------------------------------------------- joining, indexing

    /// Concatenates along `dim` (shapes match elsewhere; dtypes promote).
    pub fn cat(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
        let h = handles(tensors);
        Tensor::from_out(|o| unsafe { ffi::dt_cat(h.as_ptr(), h.len(), dim, o) })
    }
    /// Stacks tensors of one shape along a new dimension `dim`.
    pub fn stack(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
        let h = handles(tensors);
        Tensor::from_out(|o| unsafe { ffi::dt_stack(h.as_ptr(), h.len(), dim, o) })
    }

    fn pieces(
        &self,
        call: impl Fn(*mut *mut ffi::dt_tensor, usize, *mut usize) -> ffi::dt_status,
    ) -> Result<Vec<Tensor>> {
        let mut n = 0usize;
        check(call(std::ptr::null_mut(), 0, &mut n))?;
        let mut raw: Vec<*mut ffi::dt_tensor> = vec![std::ptr::null_mut(); n];
        let mut m = 0usize;
        check(call(raw.as_mut_ptr(), raw.len(), &mut m))?;
        if m != n {
            // Cannot happen (the shape of self does not change); nothing was written.
            return Err(Error::new(
                ErrorCode::Internal,
                "piece count changed between calls",
            ));
        }
        Ok(raw.into_iter().filter_map(Tensor::from_owned_ptr).collect())
    }

    /// Splits into `chunks` views along `dim`, as `torch.chunk`.
    pub fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        self.pieces(|o, c, n| unsafe { ffi::dt_chunk(self.as_ptr(), chunks, dim, o, c, n) })
    }
    /// Splits into views of `split_size` along `dim`, as `torch.split`.
    pub fn split(&self, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
        self.pieces(|o, c, n| unsafe { ffi::dt_split(self.as_ptr(), split_size, dim, o, c, n) })
    }

    /// Elements at the integer indices of the 1-d `index` along `dim`.
    pub fn index_select(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_index_select(self.as_ptr(), dim, index.as_ptr(), o) })
    }
    /// `torch.gather`.
    pub fn gather(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_gather(self.as_ptr(), dim, index.as_ptr(), o) })
    }
}

macro_rules! operator {
    ($($tr:ident $m:ident $f:ident $fs:ident),*) => {$(
        /// Elementwise, broadcasting; `Err` on a device, shape or dtype mismatch.
        impl $tr<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: &Tensor) -> Result<Tensor> {
                self.$f(rhs)
            }
        }
        /// With a scalar: `&t + 1.0`.
        impl $tr<f64> for &Tensor {
            type Output = Result<Tensor>;
            fn $m(self, rhs: f64) -> Result<Tensor> {
                self.$fs(rhs)
            }
        }
    )*};
}
operator!(Add add add add_scalar, Sub sub sub sub_scalar, Mul mul mul mul_scalar,
          Div div div div_scalar);

#[cfg(test)]
mod tests {
    use crate::test_support::leak_checked;
    use crate::{DType, Device, ErrorCode, Tensor};

    fn t(v: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(v, shape, Device::CPU).unwrap()
    }

    #[test]
    fn arithmetic_and_operators() {
        leak_checked(|| {
            let a = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
            let b = t(&[10.0, 20.0], &[2]);
            assert_eq!(
                (&a + &b).unwrap().to_vec::<f32>().unwrap(),
                vec![11.0, 22.0, 13.0, 24.0]
            );
            assert_eq!(
                (&a - &b).unwrap().to_vec::<f32>().unwrap(),
                vec![-9.0, -18.0, -7.0, -16.0]
            );
            assert_eq!(
                (&a * 2.0).unwrap().to_vec::<f32>().unwrap(),
                vec![2.0, 4.0, 6.0, 8.0]
            );
            assert_eq!((&a / &a).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 4]);
            assert_eq!(
                a.matmul(&a).unwrap().to_vec::<f32>().unwrap(),
                vec![7.0, 10.0, 15.0, 22.0]
            );
            assert_eq!(
                a.pow_scalar(2.0).unwrap().to_vec::<f32>().unwrap(),
                vec![1.0, 4.0, 9.0, 16.0]
            );
            assert_eq!(
                a.gt_scalar(2.0).unwrap().to_vec::<bool>().unwrap(),
                vec![false, false, true, true]
            );
            assert_eq!(
                a.maximum(&b).unwrap().to_vec::<f32>().unwrap(),
                vec![10.0, 20.0, 10.0, 20.0]
            );
            assert_eq!(
                a.neg().unwrap().relu().unwrap().to_vec::<f32>().unwrap(),
                vec![0.0; 4]
            );
            let e = (&a + &t(&[1.0, 2.0, 3.0], &[3])).unwrap_err();
            assert_eq!(e.code, ErrorCode::ShapeMismatch, "{e}");
            let bools = Tensor::from_slice(&[true], &[1], Device::CPU).unwrap();
            assert_eq!(
                (&bools - &bools).unwrap_err().code,
                ErrorCode::DtypeMismatch
            );
        });
    }

    #[test]
    fn reductions_and_softmax() {
        leak_checked(|| {
            let a = t(&[1.0, 5.0, 3.0, 2.0], &[2, 2]);
            assert_eq!(
                a.sum(&[0], false).unwrap().to_vec::<f32>().unwrap(),
                vec![4.0, 7.0]
            );
            assert_eq!(a.mean(&[], false).unwrap().item().unwrap(), 2.75);
            assert_eq!(a.max(&[1], true).unwrap().shape(), vec![2, 1]);
            assert_eq!(a.min(&[], false).unwrap().item().unwrap(), 1.0);
            assert_eq!(
                a.argmax(&[1], false).unwrap().to_vec::<i64>().unwrap(),
                vec![1, 0]
            );
            assert_eq!(a.argmin(&[], false).unwrap().item().unwrap(), 0.0);
            let s = a
                .softmax(1)
                .unwrap()
                .sum(&[1], false)
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            assert!(s.iter().all(|x| (x - 1.0).abs() < 1e-6));
            let l = a
                .log_softmax(1)
                .unwrap()
                .exp()
                .unwrap()
                .sum(&[], false)
                .unwrap()
                .item()
                .unwrap();
            assert!((l - 2.0).abs() < 1e-5);
            let i = Tensor::from_slice(&[1i32, 2], &[2], Device::CPU).unwrap();
            assert_eq!(i.sum(&[], false).unwrap().dtype(), DType::Int64);
            assert_eq!(
                i.mean(&[], false).unwrap_err().code,
                ErrorCode::DtypeMismatch
            );
        });
    }

    #[test]
    fn views_and_joins() {
        leak_checked(|| {
            let a = Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU).unwrap();
            let m = a.reshape(&[2, 3]).unwrap();
            assert!(m.shares_storage(&a));
            let tr = m.transpose(0, 1).unwrap();
            assert_eq!(tr.shape(), vec![3, 2]);
            assert!(!tr.is_contiguous());
            assert_eq!(
                tr.contiguous().unwrap().to_vec::<f32>().unwrap(),
                vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
            );
            assert_eq!(m.permute(&[1, 0]).unwrap().shape(), vec![3, 2]);
            assert_eq!(
                m.narrow(1, 1, 2).unwrap().to_vec::<f32>().unwrap(),
                vec![1.0, 2.0, 4.0, 5.0]
            );
            let u = m.unsqueeze(0).unwrap();
            assert_eq!(u.shape(), vec![1, 2, 3]);
            assert_eq!(u.squeeze(&[]).unwrap().shape(), vec![2, 3]);
            assert_eq!(
                m.narrow(0, 0, 1).unwrap().expand(&[4, 3]).unwrap().shape(),
                vec![4, 3]
            );
            assert_eq!(u.flatten(0, -1).unwrap().shape(), vec![6]);
            assert_eq!(m.view(&[3, 2]).unwrap().shape(), vec![3, 2]);
            assert_eq!(tr.view(&[6]).unwrap_err().code, ErrorCode::ShapeMismatch);
            assert_eq!(
                m.reshape(&[4, 2]).unwrap_err().code,
                ErrorCode::ShapeMismatch
            );
            let c = Tensor::cat(&[&m, &m], 0).unwrap();
            assert_eq!(c.shape(), vec![4, 3]);
            let s = Tensor::stack(&[&m, &m, &m], 0).unwrap();
            assert_eq!(s.shape(), vec![3, 2, 3]);
            let parts = a.chunk(3, 0).unwrap();
            assert_eq!(parts.len(), 3);
            assert_eq!(parts[2].to_vec::<f32>().unwrap(), vec![4.0, 5.0]);
            assert_eq!(a.split(4, 0).unwrap().len(), 2);
            let idx = Tensor::from_slice(&[2i64, 0], &[2], Device::CPU).unwrap();
            assert_eq!(
                a.index_select(0, &idx).unwrap().to_vec::<f32>().unwrap(),
                vec![2.0, 0.0]
            );
            assert_eq!(
                Tensor::cat(&[], 0).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
        });
    }
}

//! The truth-value ops (dt_isnan, dt_isinf, dt_isfinite, dt_logical_not, dt_logical_and,
//! dt_logical_or, dt_logical_xor, dt_any, dt_all) against values worked out by hand:
//! each kind of float value, integers, mixed dtypes, broadcasting, every dim, keepdim,
//! empty reductions, NaN as true, and the errors. Each test runs alone and checks that it
//! leaves no handle behind.
use devtensor::{DType, Device, ErrorCode, Tensor};

mod common;
use common::leak_checked;

/// Asserts that `t` is a bool tensor of shape `shape` holding `want`.
fn assert_bools(what: &str, t: &Tensor, shape: &[i64], want: &[bool]) {
    assert_eq!(t.dtype(), DType::Bool, "{what}: dtype");
    assert_eq!(t.shape(), shape, "{what}: shape");
    assert_eq!(t.to_vec::<bool>().unwrap(), want, "{what}");
}

#[test]
fn isnan_isinf_isfinite_logical_not_by_hand() {
    leak_checked(|| {
        let inf = f32::INFINITY;
        let x = Tensor::from_slice(&[f32::NAN, inf, -inf, 0.0, -0.0, 1.5], &[6], Device::CPU).unwrap();
        type Op = fn(&Tensor) -> devtensor::Result<Tensor>;
        let cases: [(&str, Op, [bool; 6]); 4] = [
            ("isnan", Tensor::isnan, [true, false, false, false, false, false]),
            ("isinf", Tensor::isinf, [false, true, true, false, false, false]),
            ("isfinite", Tensor::isfinite, [false, false, false, true, true, true]),
            // NaN and the infinities are nonzero (true), so their negation is false; -0 is zero.
            ("logical_not", Tensor::logical_not, [false, false, false, true, true, false]),
        ];
        for (what, op, want) in cases {
            assert_bools(what, &op(&x).unwrap(), &[6], &want);
        }

        // Integers are never NaN or infinite.
        let ints = Tensor::from_slice(&[0i64, 3], &[2], Device::CPU).unwrap();
        assert_bools("isnan of int64", &ints.isnan().unwrap(), &[2], &[false, false]);
        assert_bools("isinf of int64", &ints.isinf().unwrap(), &[2], &[false, false]);
        assert_bools("isfinite of int64", &ints.isfinite().unwrap(), &[2], &[true, true]);
        assert_bools("logical_not of int64", &ints.logical_not().unwrap(), &[2], &[true, false]);

        // The result is a new tensor, outside autograd.
        let g = Tensor::from_slice(&[1.0f32, f32::NAN], &[2], Device::CPU).unwrap();
        g.set_requires_grad(true).unwrap();
        assert!(!g.isnan().unwrap().requires_grad());
    });
}

#[test]
fn logical_and_or_xor_by_hand() {
    leak_checked(|| {
        let a = Tensor::from_slice(&[1i64, 0, 2, 0], &[4], Device::CPU).unwrap();
        let b = Tensor::from_slice(&[true, true, false, false], &[4], Device::CPU).unwrap();
        assert_bools("logical_and", &a.logical_and(&b).unwrap(), &[4], &[true, false, false, false]);
        assert_bools("logical_or", &a.logical_or(&b).unwrap(), &[4], &[true, true, true, false]);
        assert_bools("logical_xor", &a.logical_xor(&b).unwrap(), &[4], &[false, true, true, false]);

        // [3, 1] with [4]: [3, 4]. Rows 0, NaN (true), -2; columns 0, 1, 0, 0.5.
        let col = Tensor::from_slice(&[0.0f32, f32::NAN, -2.0], &[3, 1], Device::CPU).unwrap();
        let row = Tensor::from_slice(&[0.0f64, 1.0, 0.0, 0.5], &[4], Device::CPU).unwrap();
        #[rustfmt::skip]
        let (and, or, xor) = (
            [false, false, false, false,
             false, true, false, true,
             false, true, false, true],
            [false, true, false, true,
             true, true, true, true,
             true, true, true, true],
            [false, true, false, true,
             true, false, true, false,
             true, false, true, false],
        );
        assert_bools("logical_and([3, 1], [4])", &col.logical_and(&row).unwrap(), &[3, 4], &and);
        assert_bools("logical_or([3, 1], [4])", &col.logical_or(&row).unwrap(), &[3, 4], &or);
        assert_bools("logical_xor([3, 1], [4])", &col.logical_xor(&row).unwrap(), &[3, 4], &xor);

        // Shapes that do not broadcast.
        let x23 = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU).unwrap();
        let x4 = Tensor::zeros(&[4], DType::Float32, Device::CPU).unwrap();
        assert_eq!(x23.logical_and(&x4).unwrap_err().code, ErrorCode::ShapeMismatch);
        assert_eq!(x23.logical_or(&x4).unwrap_err().code, ErrorCode::ShapeMismatch);
        assert_eq!(x23.logical_xor(&x4).unwrap_err().code, ErrorCode::ShapeMismatch);
    });
}

#[test]
fn any_all_by_hand() {
    leak_checked(|| {
        let x = Tensor::from_slice(&[0.0f32, 0.0, 0.0, 1.0], &[2, 2], Device::CPU).unwrap();
        assert_bools("any(&[])", &x.any(&[], false).unwrap(), &[], &[true]);
        assert_bools("all(&[])", &x.all(&[], false).unwrap(), &[], &[false]);
        assert_bools("any(&[1])", &x.any(&[1], false).unwrap(), &[2], &[false, true]);
        assert_bools("all(&[1])", &x.all(&[1], false).unwrap(), &[2], &[false, false]);
        assert_bools("any(&[1], keepdim)", &x.any(&[1], true).unwrap(), &[2, 1], &[false, true]);
        assert_bools("all(&[-1], keepdim)", &x.all(&[-1], true).unwrap(), &[2, 1], &[false, false]);
        assert_bools("any(&[0])", &x.any(&[0], false).unwrap(), &[2], &[false, true]);
        assert_bools("all(&[], keepdim)", &x.all(&[], true).unwrap(), &[1, 1], &[false]);

        // Over no element: false / true, a 0-d result.
        let e = Tensor::zeros(&[0, 3], DType::Float32, Device::CPU).unwrap();
        assert_bools("any(&[]) of [0, 3]", &e.any(&[], false).unwrap(), &[], &[false]);
        assert_bools("all(&[]) of [0, 3]", &e.all(&[], false).unwrap(), &[], &[true]);
        assert_bools("any(&[0]) of [0, 3]", &e.any(&[0], false).unwrap(), &[3], &[false; 3]);
        assert_bools("all(&[0]) of [0, 3]", &e.all(&[0], false).unwrap(), &[3], &[true; 3]);

        // NaN is nonzero: true.
        let nan = Tensor::from_slice(&[0.0f64, f64::NAN], &[2], Device::CPU).unwrap();
        assert_bools("any of [0, NaN]", &nan.any(&[], false).unwrap(), &[], &[true]);
        let nans = Tensor::from_slice(&[f64::NAN, f64::NAN], &[2], Device::CPU).unwrap();
        assert_bools("all of [NaN, NaN]", &nans.all(&[], false).unwrap(), &[], &[true]);

        // Bool for every dtype, uint8 included.
        let u = Tensor::from_slice(&[0u8, 7], &[2], Device::CPU).unwrap();
        assert_bools("any of uint8", &u.any(&[], false).unwrap(), &[], &[true]);
        assert_bools("all of uint8", &u.all(&[], false).unwrap(), &[], &[false]);
        let bs = Tensor::from_slice(&[true, true], &[2], Device::CPU).unwrap();
        assert_bools("all of bool", &bs.all(&[], false).unwrap(), &[], &[true]);

        // Errors.
        assert_eq!(x.any(&[2], false).unwrap_err().code, ErrorCode::InvalidArgument);
        assert_eq!(x.all(&[-3], false).unwrap_err().code, ErrorCode::InvalidArgument);
        assert_eq!(x.any(&[0, 0], false).unwrap_err().code, ErrorCode::InvalidArgument);
    });
}

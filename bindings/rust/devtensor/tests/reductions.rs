//! logsumexp and vector_norm (dt_logsumexp, dt_vector_norm) against values worked out by
//! hand: overflow safety, every dim, keepdim, integer promotion, each ord, the gradients
//! (none NaN at a zero norm) and the errors. Each test runs alone and checks that it
//! leaves no handle behind.
use devtensor::{DType, Device, ErrorCode, Tensor};

mod common;
use common::leak_checked;

fn f32s(data: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

/// Asserts that `t` has shape `shape` and holds `want` within `tol`, element by element.
fn assert_near(what: &str, t: &Tensor, shape: &[i64], want: &[f64], tol: f64) {
    let got = t.to_vec::<f32>().unwrap();
    assert_eq!(t.shape(), shape, "{what}: shape");
    assert_eq!(got.len(), want.len(), "{what}: {got:?}, want {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (*g as f64 - w).abs() <= tol,
            "{what}: {got:?}, want {want:?} (within {tol})"
        );
    }
}

#[test]
fn logsumexp_by_hand() {
    leak_checked(|| {
        let ln2 = std::f64::consts::LN_2;
        // log(1 + 3) = ln 4; log(2 e^1000) = 1000 + ln 2, where exp(1000) alone overflows.
        let x = f32s(&[0.0, 3f32.ln(), 1000.0, 1000.0], &[2, 2]);
        let want = [4f64.ln(), 1000.0 + ln2];
        assert_near("logsumexp(&[1])", &x.logsumexp(&[1], false).unwrap(), &[2], &want, 1e-4);
        assert_near(
            "logsumexp(&[-1], keepdim)",
            &x.logsumexp(&[-1], true).unwrap(),
            &[2, 1],
            &want,
            1e-4,
        );
        // Every dim: log(1 + 3 + 4 + 8) = ln 16.
        let y = f32s(&[0.0, 3f32.ln(), 4f32.ln(), 8f32.ln()], &[2, 2]);
        assert_near("logsumexp(&[])", &y.logsumexp(&[], false).unwrap(), &[], &[4.0 * ln2], 1e-6);
        assert_near(
            "logsumexp(&[], keepdim)",
            &y.logsumexp(&[], true).unwrap(),
            &[1, 1],
            &[4.0 * ln2],
            1e-6,
        );
        // Integers are taken as the default dtype (float32): log(e + e) = 1 + ln 2.
        let ints = Tensor::from_slice(&[1i64, 1], &[2], Device::CPU).unwrap();
        let li = ints.logsumexp(&[], false).unwrap();
        assert_eq!(li.dtype(), DType::Float32);
        assert_eq!(li.dtype(), devtensor::default_dtype().unwrap());
        assert_near("logsumexp of int64 [1, 1]", &li, &[], &[1.0 + ln2], 1e-6);
        // Over an empty dim: log 0 = -inf.
        let e = Tensor::zeros(&[2, 0], DType::Float32, Device::CPU).unwrap();
        assert_eq!(
            e.logsumexp(&[1], false).unwrap().to_vec::<f32>().unwrap(),
            [f32::NEG_INFINITY, f32::NEG_INFINITY]
        );
        // The gradient is the softmax: [1/4, 3/4] for [0, ln 3].
        let h = f32s(&[0.0, 3f32.ln()], &[2]);
        h.set_requires_grad(true).unwrap();
        let l = h.logsumexp(&[], false).unwrap();
        assert_eq!(l.grad_fn_name().unwrap(), "LogsumexpBackward0");
        l.backward().unwrap();
        assert_near("logsumexp gradient", &h.grad().unwrap().unwrap(), &[2], &[0.25, 0.75], 1e-6);
        // Errors.
        assert_eq!(x.logsumexp(&[2], false).unwrap_err().code, ErrorCode::InvalidArgument);
        assert_eq!(x.logsumexp(&[0, 0], false).unwrap_err().code, ErrorCode::InvalidArgument);
    });
}

#[test]
fn vector_norm_by_hand() {
    leak_checked(|| {
        // [[3, -4], [0, 0]] along dim 1.
        let v = f32s(&[3.0, -4.0, 0.0, 0.0], &[2, 2]);
        for (ord, want) in [
            (2.0, [5.0, 0.0]),
            (1.0, [7.0, 0.0]),
            (f64::INFINITY, [4.0, 0.0]),
            (f64::NEG_INFINITY, [3.0, 0.0]),
            (0.0, [2.0, 0.0]),
            (3.0, [91f64.cbrt(), 0.0]),
        ] {
            let what = format!("vector_norm({ord}, &[1])");
            assert_near(&what, &v.vector_norm(ord, &[1], false).unwrap(), &[2], &want, 1e-6);
        }
        let all = v.vector_norm(2.0, &[], false).unwrap();
        assert_near("vector_norm(2, &[])", &all, &[], &[5.0], 1e-6);
        assert_near(
            "vector_norm(1, &[0], keepdim)",
            &v.vector_norm(1.0, &[0], true).unwrap(),
            &[1, 2],
            &[3.0, 4.0],
            1e-6,
        );
        // d|x|/dx = x / |x| = [0.6, -0.8] for [3, -4], and 0 (not NaN) for the zero row.
        let g = f32s(&[3.0, -4.0, 0.0, 0.0], &[2, 2]);
        g.set_requires_grad(true).unwrap();
        let n = g.vector_norm(2.0, &[1], false).unwrap();
        assert_eq!(n.grad_fn_name().unwrap(), "LinalgVectorNormBackward0");
        n.sum_all().unwrap().backward().unwrap();
        assert_near(
            "vector_norm(2, &[1]) gradient",
            &g.grad().unwrap().unwrap(),
            &[2, 2],
            &[0.6, -0.8, 0.0, 0.0],
            1e-6,
        );
        // Over an empty dim the 2-norm is 0; the inf-norm has no identity.
        let e = Tensor::zeros(&[2, 0], DType::Float32, Device::CPU).unwrap();
        let empty = e.vector_norm(2.0, &[1], false).unwrap();
        assert_near("vector_norm(2) over an empty dim", &empty, &[2], &[0.0, 0.0], 0.0);
        assert_eq!(
            e.vector_norm(f64::INFINITY, &[1], false).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        // Errors.
        let ints = Tensor::from_slice(&[3i64, 4], &[2], Device::CPU).unwrap();
        assert_eq!(ints.vector_norm(2.0, &[], false).unwrap_err().code, ErrorCode::DtypeMismatch);
        assert_eq!(
            v.vector_norm(f64::NAN, &[], false).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(v.vector_norm(2.0, &[2], false).unwrap_err().code, ErrorCode::InvalidArgument);
    });
}

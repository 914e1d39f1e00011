//! The structured constructors (dt_tensor_eye, dt_tensor_linspace), dt_one_hot, dt_nonzero,
//! dt_masked_select (and its gradient) and the
//! random ones (dt_tensor_randint, dt_tensor_randperm, dt_multinomial): PyTorch's values,
//! randint and randperm against their documented definitions over a float64 rand drawn
//! after the same seed, multinomial's weight-0 categories, and the errors. Each test runs
//! alone (manual_seed and the handle count are process-wide) and checks that it leaves no
//! handle behind.
use devtensor::{DType, Device, ErrorCode, Tensor};

mod common;
use common::{assert_near, leak_checked};

/// Asserts that `t` has shape `shape` and dtype `dtype`.
fn assert_meta(what: &str, t: &Tensor, shape: &[i64], dtype: DType) {
    assert_eq!((t.shape(), t.dtype()), (shape.to_vec(), dtype), "{what}: shape and dtype");
}

/// The code of `r`'s error (panics on success).
fn code(r: devtensor::Result<Tensor>) -> ErrorCode {
    r.unwrap_err().code
}

/// A float64 rand of `shape` drawn right after `manual_seed(seed)`, as a Vec.
fn seeded_rand(seed: u64, shape: &[i64]) -> Vec<f64> {
    devtensor::manual_seed(seed).unwrap();
    Tensor::rand(shape, DType::Float64, Device::CPU).unwrap().to_vec::<f64>().unwrap()
}

#[test]
fn eye_and_linspace_against_pytorch() {
    leak_checked(|| {
        let e = Tensor::eye(2, 3, DType::Float32, Device::CPU).unwrap();
        assert_meta("eye(2, 3)", &e, &[2, 3], DType::Float32);
        assert_eq!(e.to_vec::<f32>().unwrap(), [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        let ei = Tensor::eye(3, 2, DType::Int64, Device::CPU).unwrap();
        assert_meta("eye(3, 2) int64", &ei, &[3, 2], DType::Int64);
        assert_eq!(ei.to_vec::<i64>().unwrap(), [1, 0, 0, 1, 0, 0]);
        assert_meta("eye(0, 2)", &Tensor::eye(0, 2, DType::Float64, Device::CPU).unwrap(), &[0, 2], DType::Float64);
        assert_eq!(code(Tensor::eye(-1, 2, DType::Float32, Device::CPU)), ErrorCode::InvalidArgument);
        assert_eq!(code(Tensor::eye(2, -1, DType::Float32, Device::CPU)), ErrorCode::InvalidArgument);

        let l = Tensor::linspace(0.0, 1.0, 5, DType::Float32, Device::CPU).unwrap();
        assert_meta("linspace(0, 1, 5)", &l, &[5], DType::Float32);
        assert_eq!(l.to_vec::<f32>().unwrap(), [0.0, 0.25, 0.5, 0.75, 1.0]);
        // torch.linspace(0, 10, 4, dtype=torch.int64): steps of 10/3, truncated toward zero,
        // the second half counted back from the end.
        let li = Tensor::linspace(0.0, 10.0, 4, DType::Int64, Device::CPU).unwrap();
        assert_eq!(li.to_vec::<i64>().unwrap(), [0, 3, 6, 10]);
        let ld = Tensor::linspace(1.0, -1.0, 3, DType::Float64, Device::CPU).unwrap();
        assert_near("linspace(1, -1, 3)", &ld.to_vec::<f64>().unwrap(), &[1.0, 0.0, -1.0], 0.0);
        let one = Tensor::linspace(2.0, 5.0, 1, DType::Float64, Device::CPU).unwrap();
        assert_eq!(one.to_vec::<f64>().unwrap(), [2.0]);
        assert_meta(
            "linspace(0, 1, 0)",
            &Tensor::linspace(0.0, 1.0, 0, DType::Float32, Device::CPU).unwrap(),
            &[0],
            DType::Float32,
        );
        assert_eq!(code(Tensor::linspace(0.0, 1.0, -1, DType::Float32, Device::CPU)), ErrorCode::InvalidArgument);
        assert_eq!(code(Tensor::linspace(0.0, 1.0, 2, DType::Bool, Device::CPU)), ErrorCode::DtypeMismatch);
    });
}

#[test]
fn one_hot_rows_of_the_identity() {
    leak_checked(|| {
        let idx = Tensor::from_slice(&[0i64, 2, 1], &[3], Device::CPU).unwrap();
        let o = idx.one_hot(3).unwrap();
        assert_meta("one_hot([0, 2, 1], 3)", &o, &[3, 3], DType::Int64);
        assert_eq!(o.to_vec::<i64>().unwrap(), [1, 0, 0, 0, 0, 1, 0, 1, 0]);
        assert_eq!(idx.one_hot(4).unwrap().to_vec::<i64>().unwrap(), [1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0]);
        // -1: the largest index + 1; the indices keep their shape.
        let idx2 = Tensor::from_slice(&[1i64, 0], &[2, 1], Device::CPU).unwrap();
        let o2 = idx2.one_hot(-1).unwrap();
        assert_meta("one_hot([[1], [0]], -1)", &o2, &[2, 1, 2], DType::Int64);
        assert_eq!(o2.to_vec::<i64>().unwrap(), [0, 1, 1, 0]);

        let neg = Tensor::from_slice(&[0i64, -1], &[2], Device::CPU).unwrap();
        assert_eq!(code(neg.one_hot(3)), ErrorCode::InvalidArgument);
        assert_eq!(code(idx.one_hot(2)), ErrorCode::InvalidArgument); // index 2 >= 2 classes
        assert_eq!(code(idx.one_hot(-2)), ErrorCode::InvalidArgument);
        let f = Tensor::from_slice(&[0.0f32, 1.0], &[2], Device::CPU).unwrap();
        assert_eq!(code(f.one_hot(2)), ErrorCode::DtypeMismatch);
    });
}

#[test]
fn randint_is_low_plus_floor_of_a_seeded_rand() {
    leak_checked(|| {
        let (seed, low, high) = (1234u64, -3i64, 10i64);
        let shape = [4i64, 50];
        devtensor::manual_seed(seed).unwrap();
        let r1 = Tensor::randint(low, high, &shape, DType::Int64, Device::CPU).unwrap();
        let r2 = Tensor::randint(low, high, &shape, DType::Int64, Device::CPU).unwrap();
        assert_meta("randint", &r1, &shape, DType::Int64);
        // The second draw continues the stream as a second float64 rand would.
        let u1 = seeded_rand(seed, &shape);
        let u2 = Tensor::rand(&shape, DType::Float64, Device::CPU).unwrap().to_vec::<f64>().unwrap();
        for (r, u) in [(&r1, u1), (&r2, u2)] {
            let want: Vec<i64> = u.iter().map(|v| low + (v * (high - low) as f64).floor() as i64).collect();
            assert_eq!(r.to_vec::<i64>().unwrap(), want, "randint against low + floor(u * (high - low))");
        }
        let mut seen = r1.to_vec::<i64>().unwrap();
        assert!(seen.iter().all(|v| (low..high).contains(v)), "randint out of range: {seen:?}");
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len() as i64, high - low, "200 draws did not hit every value: {seen:?}");
        let r32 = Tensor::randint(0, 5, &[3], DType::Int32, Device::CPU).unwrap();
        assert_meta("randint int32", &r32, &[3], DType::Int32);
        assert_meta("randint 0-d", &Tensor::randint(0, 5, &[], DType::Int64, Device::CPU).unwrap(), &[], DType::Int64);

        assert_eq!(code(Tensor::randint(5, 5, &shape, DType::Int64, Device::CPU)), ErrorCode::InvalidArgument);
        assert_eq!(code(Tensor::randint(6, 5, &shape, DType::Int64, Device::CPU)), ErrorCode::InvalidArgument);
        assert_eq!(code(Tensor::randint(0, 300, &shape, DType::UInt8, Device::CPU)), ErrorCode::InvalidArgument);
    });
}

#[test]
fn randperm_is_the_stable_argsort_of_a_seeded_rand() {
    leak_checked(|| {
        let (seed, n) = (99u64, 100i64);
        devtensor::manual_seed(seed).unwrap();
        let p = Tensor::randperm(n, DType::Int64, Device::CPU).unwrap();
        assert_meta("randperm(100)", &p, &[n], DType::Int64);
        let got = p.to_vec::<i64>().unwrap();
        let iota: Vec<i64> = (0..n).collect();
        assert_ne!(got, iota, "randperm(100) is the identity");
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(sorted, iota, "randperm(100) sorted");
        let u = seeded_rand(seed, &[n]);
        let u = Tensor::from_slice(&u, &[n], Device::CPU).unwrap();
        assert_eq!(got, u.argsort(0, false).unwrap().to_vec::<i64>().unwrap(), "randperm against argsort of rand");

        assert_meta("randperm(5) int32", &Tensor::randperm(5, DType::Int32, Device::CPU).unwrap(), &[5], DType::Int32);
        assert_meta("randperm(0)", &Tensor::randperm(0, DType::Int64, Device::CPU).unwrap(), &[0], DType::Int64);
        assert_eq!(code(Tensor::randperm(-1, DType::Int64, Device::CPU)), ErrorCode::InvalidArgument);
        assert_eq!(code(Tensor::randperm(3, DType::Bool, Device::CPU)), ErrorCode::InvalidArgument);
        // 299 does not fit uint8.
        assert_eq!(code(Tensor::randperm(300, DType::UInt8, Device::CPU)), ErrorCode::InvalidArgument);
    });
}

#[test]
fn multinomial_never_draws_a_weight_of_zero() {
    leak_checked(|| {
        devtensor::manual_seed(5).unwrap();
        let w = Tensor::from_slice(&[0.0f32, 1.0, 0.0, 3.0], &[4], Device::CPU).unwrap();
        let m = w.multinomial(1000, true).unwrap();
        assert_meta("multinomial(1000, true)", &m, &[1000], DType::Int64);
        let mut counts = [0usize; 4];
        for c in m.to_vec::<i64>().unwrap() {
            counts[usize::try_from(c).unwrap()] += 1;
        }
        assert_eq!((counts[0], counts[2], counts[1] + counts[3]), (0, 0, 1000), "drew {counts:?}");
        // Weight 3 against 1: about 750 of 1000 (the standard deviation is under 14).
        assert!((650..=850).contains(&counts[3]), "drew 3 {} times in 1000, want about 750", counts[3]);
        for _ in 0..20 {
            let p = w.multinomial(4, false).unwrap().to_vec::<i64>().unwrap();
            assert!(
                p == [1, 3, 0, 2] || p == [3, 1, 0, 2],
                "multinomial of [0, 1, 0, 3] without replacement: {p:?}, want 1 and 3, then 0, 2"
            );
        }
        // 2-d: a row per distribution.
        let w2 = Tensor::from_slice(&[1.0f64, 0.0, 0.0, 2.0], &[2, 2], Device::CPU).unwrap();
        let m2 = w2.multinomial(3, true).unwrap();
        assert_meta("multinomial 2-d", &m2, &[2, 3], DType::Int64);
        assert_eq!(m2.to_vec::<i64>().unwrap(), [0, 0, 0, 1, 1, 1]);

        assert_eq!(code(w.multinomial(0, true)), ErrorCode::InvalidArgument);
        assert_eq!(code(w.multinomial(5, false)), ErrorCode::InvalidArgument);
        let negative = Tensor::from_slice(&[1.0f32, -1.0], &[2], Device::CPU).unwrap();
        assert_eq!(code(negative.multinomial(1, true)), ErrorCode::InvalidArgument);
        let zero = Tensor::from_slice(&[0.0f32, 0.0], &[2], Device::CPU).unwrap();
        assert_eq!(code(zero.multinomial(1, true)), ErrorCode::InvalidArgument);
        let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();
        assert_eq!(code(ints.multinomial(1, true)), ErrorCode::DtypeMismatch);
    });
}

#[test]
fn nonzero_and_masked_select_against_pytorch() {
    leak_checked(|| {
        // torch.nonzero / torch.masked_select of the same tensors.
        let x = Tensor::from_slice(&[0.0f64, 1.5, 0.0, -2.0, 0.0, f64::NAN], &[2, 3], Device::CPU).unwrap();
        let nz = x.nonzero().unwrap();
        assert_meta("nonzero", &nz, &[3, 2], DType::Int64);
        assert_eq!(nz.to_vec::<i64>().unwrap(), vec![0, 1, 1, 0, 1, 2]);
        let w = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], Device::CPU).unwrap();
        w.set_requires_grad(true).unwrap();
        let columns = Tensor::from_slice(&[true, false, true], &[3], Device::CPU).unwrap();
        let sel = w.masked_select(&columns).unwrap();
        assert_eq!(sel.to_vec::<f64>().unwrap(), vec![1.0, 3.0, 4.0, 6.0]);
        assert_eq!(sel.grad_fn_name().unwrap(), "MaskedSelectBackward0");
        sel.sum_all().unwrap().backward().unwrap();
        let g = w.grad().unwrap().unwrap().to_vec::<f64>().unwrap();
        assert_near("masked_select's gradient", &g, &[1.0, 0.0, 1.0, 1.0, 0.0, 1.0], 0.0);
        // errors: a float mask, shapes that do not broadcast
        assert_eq!(code(w.masked_select(&x)), ErrorCode::DtypeMismatch);
        let four = Tensor::from_slice(&[true, false, true, true], &[4], Device::CPU).unwrap();
        assert_eq!(code(w.masked_select(&four)), ErrorCode::ShapeMismatch);
    });
}

#[test]
fn unique_and_bincount_against_pytorch() {
    leak_checked(|| {
        // torch.unique(sorted=True, return_inverse=True, return_counts=True) and
        // torch.bincount of the same tensors.
        let x = Tensor::from_slice(&[2.5f32, -1.0, 2.5, 0.0, -1.0, 2.5], &[3, 2], Device::CPU).unwrap();
        let (values, inverse, counts) = x.unique(true, true).unwrap();
        assert_eq!(values.to_vec::<f32>().unwrap(), vec![-1.0, 0.0, 2.5]);
        let inverse = inverse.unwrap();
        assert_meta("unique inverse", &inverse, &[3, 2], DType::Int64);
        assert_eq!(inverse.to_vec::<i64>().unwrap(), vec![2, 0, 2, 1, 0, 2]);
        assert_eq!(counts.unwrap().to_vec::<i64>().unwrap(), vec![2, 1, 3]);
        let (only, no_inverse, no_counts) = x.unique(false, false).unwrap();
        assert!(no_inverse.is_none() && no_counts.is_none());
        assert_eq!(only.to_vec::<f32>().unwrap(), vec![-1.0, 0.0, 2.5]);

        let idx = Tensor::from_slice(&[1u8, 3, 1, 0], &[4], Device::CPU).unwrap();
        let b = idx.bincount(None, 0).unwrap();
        assert_meta("bincount", &b, &[4], DType::Int64);
        assert_eq!(b.to_vec::<i64>().unwrap(), vec![1, 2, 0, 1]);
        let w = Tensor::from_slice(&[1i64, 2, 3, 4], &[4], Device::CPU).unwrap();
        let bw = idx.bincount(Some(&w), 6).unwrap();
        assert_meta("bincount with int64 weights", &bw, &[6], DType::Float64);
        assert_eq!(bw.to_vec::<f64>().unwrap(), vec![4.0, 4.0, 0.0, 2.0, 0.0, 0.0]);
        let neg = Tensor::from_slice(&[1i64, -1], &[2], Device::CPU).unwrap();
        assert_eq!(code(neg.bincount(None, 0)), ErrorCode::InvalidArgument);
        assert_eq!(code(idx.bincount(None, -1)), ErrorCode::InvalidArgument);
    });
}

#[test]
fn distances_against_hand_values() {
    leak_checked(|| {
        // F.normalize, F.cosine_similarity and F.pairwise_distance give these too.
        let x = Tensor::from_slice(&[3.0f64, 4.0, 0.0, 0.0], &[2, 2], Device::CPU).unwrap();
        let y = Tensor::from_slice(&[4.0f64, 3.0, 1.0, 0.0], &[2, 2], Device::CPU).unwrap();
        x.set_requires_grad(true).unwrap();
        let c = x.cosine_similarity(&y, 1, 1e-8).unwrap();
        assert_near("cosine", &c.to_vec::<f64>().unwrap(), &[0.96, 0.0], 1e-15);
        // d/dx of (x.y)/(|x||y|) at x = [3,4], y = [4,3]: y/(|x||y|) - (x.y) x/(|x|^3 |y|)
        c.sum_all().unwrap().backward().unwrap();
        let g = x.grad().unwrap().unwrap().to_vec::<f64>().unwrap();
        assert_near("cosine gradient", &g[..2], &[4.0 / 25.0 - 24.0 * 3.0 / 625.0, 3.0 / 25.0 - 24.0 * 4.0 / 625.0], 1e-15);
        let d = x.pairwise_distance(&y, 2.0, 0.0, false).unwrap();
        assert_near("pairwise", &d.to_vec::<f64>().unwrap(), &[2f64.sqrt(), 1.0], 1e-15);
        let n = y.normalize(1.0, 1, 1e-12).unwrap();
        assert_near("normalize p=1", &n.to_vec::<f64>().unwrap(), &[4.0 / 7.0, 3.0 / 7.0, 1.0, 0.0], 1e-15);
        let three = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3], Device::CPU).unwrap();
        assert_eq!(code(x.cosine_similarity(&three, 1, 1e-8)), ErrorCode::ShapeMismatch);
        assert_eq!(code(x.normalize(2.0, 2, 1e-12)), ErrorCode::InvalidArgument);
    });
}

//! flip, roll and repeat (dt_flip, dt_roll, dt_repeat) against values worked out by hand
//! on x = [[0, 1, 2], [3, 4, 5]]: several dims, negative dims, the flattened roll, shifts
//! past the size, a repeated roll dim, tiling with a new leading dim, an integer dtype,
//! the gradients and the errors. Each test runs alone and checks that it leaves no
//! handle behind.
use devtensor::{DType, Device, ErrorCode, Tensor};

mod common;
use common::leak_checked;

fn f32s(data: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

/// [[0, 1, 2], [3, 4, 5]] as float32.
fn x() -> Tensor {
    Tensor::arange(0.0, 6.0, 1.0, DType::Float32, Device::CPU)
        .unwrap()
        .reshape(&[2, 3])
        .unwrap()
}

/// Asserts that `t` has shape `shape` and holds exactly `want`.
fn assert_eq_f32(what: &str, t: &Tensor, shape: &[i64], want: &[f32]) {
    assert_eq!(t.shape(), shape, "{what}: shape");
    assert_eq!(t.to_vec::<f32>().unwrap(), want, "{what}");
}

/// The gradient of `sum(f(leaf) * w)` for the leaf [[0, 1, 2], [3, 4, 5]], after checking
/// that `f`'s result has grad_fn `want_fn`.
fn grad_of(f: impl Fn(&Tensor) -> Tensor, w: &Tensor, want_fn: &str) -> Tensor {
    let leaf = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
    leaf.set_requires_grad(true).unwrap();
    let y = f(&leaf);
    assert_eq!(y.grad_fn_name().unwrap(), want_fn);
    y.mul(w).unwrap().sum_all().unwrap().backward().unwrap();
    leaf.grad().unwrap().expect("the leaf has a gradient")
}

#[test]
fn flip_by_hand() {
    leak_checked(|| {
        let x = x();
        let flip = |dims: &[i64]| x.flip(dims).unwrap();
        assert_eq_f32("flip(&[0, 1])", &flip(&[0, 1]), &[2, 3], &[5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
        assert_eq_f32("flip(&[0])", &flip(&[0]), &[2, 3], &[3.0, 4.0, 5.0, 0.0, 1.0, 2.0]);
        assert_eq_f32("flip(&[-1])", &flip(&[-1]), &[2, 3], &[2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
        assert_eq_f32("flip(&[])", &flip(&[]), &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();
        assert_eq!(ints.flip(&[0]).unwrap().to_vec::<i64>().unwrap(), [2, 1]);

        // The gradient of sum(flip(x, 0) * w) is w flipped back.
        let w = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let g = grad_of(|l| l.flip(&[0]).unwrap(), &w, "FlipBackward0");
        assert_eq_f32("flip(&[0]) gradient", &g, &[2, 3], &[4.0, 5.0, 6.0, 1.0, 2.0, 3.0]);

        for dims in [&[0, 0][..], &[1, -1], &[2], &[-3]] {
            assert_eq!(
                x.flip(dims).unwrap_err().code,
                ErrorCode::InvalidArgument,
                "flip({dims:?})"
            );
        }
    });
}

#[test]
fn roll_by_hand() {
    leak_checked(|| {
        let x = x();
        let roll = |shifts: &[i64], dims: &[i64]| x.roll(shifts, dims).unwrap();
        // Flattened: [[5, 0, 1], [2, 3, 4]].
        assert_eq_f32("roll(&[1], &[])", &roll(&[1], &[]), &[2, 3], &[5.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq_f32("roll(&[-2], &[])", &roll(&[-2], &[]), &[2, 3], &[2.0, 3.0, 4.0, 5.0, 0.0, 1.0]);
        // Down by one along dim 0, left by one along dim 1.
        assert_eq_f32(
            "roll(&[1, -1], &[0, 1])",
            &roll(&[1, -1], &[0, 1]),
            &[2, 3],
            &[4.0, 5.0, 3.0, 1.0, 2.0, 0.0],
        );
        // 7 is 1 modulo 3.
        assert_eq_f32("roll(&[7], &[1])", &roll(&[7], &[1]), &[2, 3], &[2.0, 0.0, 1.0, 5.0, 3.0, 4.0]);
        // A repeated dim: its shifts add up (1 + 1 along dim 1).
        assert_eq_f32(
            "roll(&[1, 1], &[1, -1])",
            &roll(&[1, 1], &[1, -1]),
            &[2, 3],
            &[1.0, 2.0, 0.0, 4.0, 5.0, 3.0],
        );
        let ints = Tensor::from_slice(&[1i64, 2, 3], &[3], Device::CPU).unwrap();
        assert_eq!(ints.roll(&[1], &[]).unwrap().to_vec::<i64>().unwrap(), [3, 1, 2]);

        // y[i] = x[i - 1] (flattened): x[j]'s gradient is w[j + 1], w rolled back by one.
        let w = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let g = grad_of(|l| l.roll(&[1], &[]).unwrap(), &w, "RollBackward0");
        assert_eq_f32("roll(&[1], &[]) gradient", &g, &[2, 3], &[2.0, 3.0, 4.0, 5.0, 6.0, 1.0]);

        for (shifts, dims) in [
            (&[1, 2][..], &[0][..]),
            (&[1], &[0, 1]),
            (&[1, 2], &[]),
            (&[], &[]),
            (&[1], &[2]),
        ] {
            assert_eq!(
                x.roll(shifts, dims).unwrap_err().code,
                ErrorCode::InvalidArgument,
                "roll({shifts:?}, {dims:?})"
            );
        }
    });
}

#[test]
fn repeat_by_hand() {
    leak_checked(|| {
        let x = x();
        // A new leading dim of 2 blocks, each [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]].
        let block = [0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 4.0, 5.0];
        let want: Vec<f32> = block.iter().chain(&block).copied().collect();
        assert_eq_f32("repeat(&[2, 1, 2])", &x.repeat(&[2, 1, 2]).unwrap(), &[2, 2, 6], &want);
        assert_eq_f32(
            "repeat(&[2, 1])",
            &x.repeat(&[2, 1]).unwrap(),
            &[4, 3],
            &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        );
        assert_eq_f32("repeat(&[1, 0])", &x.repeat(&[1, 0]).unwrap(), &[2, 0], &[]);
        // Tiled, not interleaved.
        let ints = Tensor::from_slice(&[1i64, 2], &[2], Device::CPU).unwrap();
        assert_eq!(ints.repeat(&[2]).unwrap().to_vec::<i64>().unwrap(), [1, 2, 1, 2]);

        // Every element has 2 * 3 copies, each with weight 1.
        let ones = Tensor::ones(&[4, 9], DType::Float32, Device::CPU).unwrap();
        let g = grad_of(|l| l.repeat(&[2, 3]).unwrap(), &ones, "RepeatBackward0");
        assert_eq_f32("repeat(&[2, 3]) gradient", &g, &[2, 3], &[6.0; 6]);

        for repeats in [&[2][..], &[], &[2, -1], &[-1, 1, 1]] {
            assert_eq!(
                x.repeat(repeats).unwrap_err().code,
                ErrorCode::InvalidArgument,
                "repeat({repeats:?})"
            );
        }
    });
}

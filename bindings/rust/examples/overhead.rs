//! What the safe wrapper costs per tiny op over the C call (issue 5's benchmark): `&a + &b`
//! on two float32[4] CPU tensors through `devtensor` (a Result, a Tensor whose Drop
//! releases it) against `dt_add` + `dt_tensor_release` through `devtensor-sys`, in the
//! same process, interleaved in rounds; the minimum over rounds of each is reported.
//!
//!     cargo run --offline --release --example overhead [-- iterations rounds]
use devtensor::sys as ffi;
use devtensor::{Device, Tensor};
use std::time::Instant;

fn main() -> devtensor::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let iters: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let rounds: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7);
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4], Device::CPU)?;
    let b = Tensor::from_slice(&[5.0f32, 6.0, 7.0, 8.0], &[4], Device::CPU)?;
    // The same two tensors made through the raw FFI, for the C side.
    let (ra, rb) = (raw(&[1.0, 2.0, 3.0, 4.0]), raw(&[5.0, 6.0, 7.0, 8.0]));
    let (mut best_c, mut best_rust) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..iters {
            let mut out: *mut ffi::dt_tensor = std::ptr::null_mut();
            let st = unsafe { ffi::dt_add(ra, rb, &mut out) };
            assert_eq!(st, 0);
            unsafe { ffi::dt_tensor_release(out) };
        }
        best_c = best_c.min(t.elapsed().as_secs_f64() / iters as f64);
        let t = Instant::now();
        for _ in 0..iters {
            let c = (&a + &b)?;
            std::hint::black_box(&c);
        }
        best_rust = best_rust.min(t.elapsed().as_secs_f64() / iters as f64);
    }
    println!(
        "add of two float32[4], min over {rounds} rounds x {iters}: C API {:.1} ns, safe Rust {:.1} ns, overhead {:+.1}%",
        best_c * 1e9,
        best_rust * 1e9,
        (best_rust / best_c - 1.0) * 100.0
    );
    Ok(())
}

/// A float32[4] CPU tensor made with dt_tensor_from_data (one reference, released at the
/// end of main by the process exit; this is a benchmark, not a library).
fn raw(v: &[f32; 4]) -> *const ffi::dt_tensor {
    let shape = [4i64];
    let mut out: *mut ffi::dt_tensor = std::ptr::null_mut();
    let st = unsafe {
        ffi::dt_tensor_from_data(
            v.as_ptr() as *const std::ffi::c_void,
            16,
            shape.as_ptr(),
            1,
            ffi::DT_FLOAT32,
            ffi::dt_device { type_: ffi::DT_DEVICE_CPU, index: 0 },
            &mut out,
        )
    };
    assert_eq!(st, 0);
    out
}

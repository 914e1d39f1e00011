//! Shared by the integration tests that count handles: each such test runs alone (the
//! handle count, and manual_seed where used, are process-wide) and must leave no handle
//! behind.
use devtensor::live_handle_count;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `f` alone among this test binary's leak-checked tests and fails when it leaves a
/// handle behind.
pub fn leak_checked(f: impl FnOnce()) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = live_handle_count();
    f();
    assert_eq!(live_handle_count(), before, "the test leaked handles");
}

/// Asserts that `got` is `want` within `tol`, element by element (f32 or f64 on either
/// side, compared as f64).
#[allow(dead_code)] // not every test binary compares values
pub fn assert_near<G, W>(what: &str, got: &[G], want: &[W], tol: f64)
where
    G: Copy + Into<f64> + std::fmt::Debug,
    W: Copy + Into<f64> + std::fmt::Debug,
{
    assert_eq!(got.len(), want.len(), "{what}: {got:?}, want {want:?}");
    for (g, w) in got.iter().zip(want) {
        let (g, w): (f64, f64) = ((*g).into(), (*w).into());
        assert!((g - w).abs() <= tol, "{what}: {got:?}, want {want:?} (within {tol})");
    }
}

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

//! `cargo:rustc-link-arg` from devtensor-sys's build script applies to that crate's own
//! targets only, so the rpath to libdevtensor.so is repeated here, from the directory
//! devtensor-sys found (`links = "devtensor"` passes it as DEP_DEVTENSOR_LIB_DIR): the
//! tests, doctests and examples of this crate then run without LD_LIBRARY_PATH.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_DEVTENSOR_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_DEVTENSOR_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}

//! Only for DEVTENSOR_LINK_BY_SONAME=1 (see devtensor-sys's build.rs): then programs link
//! against libdevtensor.so.0 by soname, and devtensor-sys's rpath (`cargo:rustc-link-arg`)
//! applies to its own package only, so the rpath is repeated here, from the directory
//! devtensor-sys passes as DEP_DEVTENSOR_RPATH (`links = "devtensor"`): the tests,
//! doctests and examples of this crate then run without LD_LIBRARY_PATH. By default
//! devtensor-sys records the library's absolute path in every program linked with it, and
//! this script emits nothing.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_DEVTENSOR_RPATH");
    if let Ok(dir) = std::env::var("DEP_DEVTENSOR_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}

//! Finds libdevtensor.so without any build-dependency crate:
//!   1. DEVTENSOR_LIB_DIR, a directory holding libdevtensor.so, or else
//!   2. the `pkg-config` program (`pkg-config --libs-only-L devtensor`, which honours
//!      PKG_CONFIG_PATH).
//!
//! Emits the link directive, the search path and an rpath, so test binaries and examples
//! run without LD_LIBRARY_PATH. Fails with a message naming both ways when neither works.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn from_env() -> Option<Result<PathBuf, String>> {
    let dir = env::var_os("DEVTENSOR_LIB_DIR")?;
    let dir = PathBuf::from(dir);
    if dir.join("libdevtensor.so").exists() {
        Some(Ok(dir))
    } else {
        Some(Err(format!(
            "DEVTENSOR_LIB_DIR={} holds no libdevtensor.so",
            dir.display()
        )))
    }
}

fn from_pkg_config() -> Result<Vec<PathBuf>, String> {
    let pc = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = Command::new(&pc)
        .args(["--libs-only-L", "devtensor"])
        .output()
        .map_err(|e| format!("could not run `{pc}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{pc} --libs-only-L devtensor` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let dirs: Vec<PathBuf> = text
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("-L"))
        .map(PathBuf::from)
        .collect();
    if dirs.is_empty() {
        // devtensor.pc in a system directory: the linker's default path finds the library.
        return Ok(Vec::new());
    }
    if !dirs.iter().any(|d| d.join("libdevtensor.so").exists()) {
        return Err(format!(
            "pkg-config gave {} but no libdevtensor.so is there",
            text.trim()
        ));
    }
    Ok(dirs)
}

fn emit(dirs: &[PathBuf]) {
    for d in dirs {
        println!("cargo:rustc-link-search=native={}", d.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", d.display());
    }
    println!("cargo:rustc-link-lib=dylib=devtensor");
    if let Some(d) = dirs.first() {
        // Visible to dependents' build scripts as DEP_DEVTENSOR_LIB_DIR.
        println!("cargo:lib_dir={}", d.display());
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=DEVTENSOR_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG");
    println!("cargo:rerun-if-changed=build.rs");

    match from_env() {
        Some(Ok(dir)) => {
            println!(
                "cargo:rerun-if-changed={}",
                Path::new(&dir).join("libdevtensor.so").display()
            );
            return emit(&[dir]);
        }
        Some(Err(e)) => fail(&e, None),
        None => {}
    }
    match from_pkg_config() {
        Ok(dirs) => emit(&dirs),
        Err(e) => fail("DEVTENSOR_LIB_DIR is not set", Some(&e)),
    }
}

fn fail(env_reason: &str, pc_reason: Option<&str>) -> ! {
    eprintln!(
        "\nerror: devtensor-sys cannot find libdevtensor.so.\n\
         Tell it where the library is, in one of two ways:\n  \
         1. DEVTENSOR_LIB_DIR=/path/to/dir containing libdevtensor.so, or\n  \
         2. PKG_CONFIG_PATH=/prefix/lib/pkgconfig so that `pkg-config --libs-only-L devtensor` finds devtensor.pc\n     \
         (after `cmake --install build/release --prefix /prefix`).\n\
         DEVTENSOR_LIB_DIR: {env_reason}\n\
         pkg-config: {}\n",
        pc_reason.unwrap_or("not tried (DEVTENSOR_LIB_DIR was set)")
    );
    std::process::exit(1);
}

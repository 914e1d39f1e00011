//! Finds libdevtensor.so without any build-dependency crate:
//!   1. DEVTENSOR_LIB_DIR, a directory holding libdevtensor.so, or else
//!   2. the `pkg-config` program (`pkg-config --libs-only-L devtensor`, which honours
//!      PKG_CONFIG_PATH).
//!
//! Fails with a message naming both ways when neither works.
//!
//! Every binary linked with this crate (its own tests, and the programs of any crate that
//! depends on it, directly or through `devtensor`) must find the library at run time
//! without LD_LIBRARY_PATH and without a build.rs of its own. An rpath cannot do that:
//! Cargo applies a build script's `cargo:rustc-link-arg` to the script's own package
//! only. What Cargo does pass on to every dependent's link is `rustc-link-search` and
//! `rustc-link-lib`. So when the library sits in a directory of its own (pkg-config or
//! DEVTENSOR_LIB_DIR names one), this script links against a stub instead of the
//! library: `$OUT_DIR/libdevtensor.so`, compiled with `cc`, defining the same `dt_*`
//! symbols with the same version nodes (read with `nm -D` from the real library), whose
//! soname is the real library's absolute path (e.g. `/prefix/lib/libdevtensor.so.0`).
//! The linker records a library's soname as the program's DT_NEEDED entry, and the
//! dynamic loader opens a DT_NEEDED entry that contains a slash as a path: the program
//! loads the real library from where it was found at build time. The stub is never
//! loaded. (Unlike an rpath, LD_LIBRARY_PATH does not override such a path.)
//!
//! DEVTENSOR_LINK_BY_SONAME=1 links against the real library instead (DT_NEEDED
//! `libdevtensor.so.0`), for a program that will find the library through the loader's
//! usual search (ldconfig, LD_LIBRARY_PATH); this crate's tests and those of `devtensor`
//! then get an rpath (`cargo:rpath`, read by devtensor's build.rs as
//! DEP_DEVTENSOR_RPATH). A devtensor.pc in a directory the linker searches by default
//! (no `-L` from pkg-config) also links by soname.
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn from_env() -> Option<Result<PathBuf, String>> {
    let dir = env::var_os("DEVTENSOR_LIB_DIR")?;
    let mut dir = PathBuf::from(dir);
    if dir.is_relative() {
        if let Ok(abs) = fs::canonicalize(&dir) {
            dir = abs;
        }
    }
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
        .map(|d| tidy(Path::new(d)))
        .collect();
    if dirs.is_empty() {
        // devtensor.pc in a system directory: the linker's default path finds the library.
        return Ok(Vec::new());
    }
    match dirs.iter().find(|d| d.join("libdevtensor.so").exists()) {
        Some(d) => Ok(vec![d.clone()]),
        None => Err(format!(
            "pkg-config gave {} but no libdevtensor.so is there",
            text.trim()
        )),
    }
}

/// `dir` with each `name/..` taken out where `name` is not a symbolic link: a relocatable
/// devtensor.pc gives `-L/prefix/lib/pkgconfig/../../lib`, which is `/prefix/lib`.
fn tidy(dir: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in dir.components() {
        let is_link = fs::symlink_metadata(&out).map_or(true, |m| m.file_type().is_symlink());
        match part {
            Component::ParentDir
                if !is_link
                    && matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            _ => out.push(part),
        }
    }
    out
}

/// Runs a program and returns its stdout, or a message naming the command.
fn run(cmd: &mut Command) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| format!("could not run {shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn tool(var: &str, default: &str) -> Command {
    println!("cargo:rerun-if-env-changed={var}");
    Command::new(env::var(var).unwrap_or_else(|_| default.to_string()))
}

/// The soname of `lib` (`readelf -d`), if it has one.
fn soname(lib: &Path) -> Result<Option<String>, String> {
    let text = run(tool("READELF", "readelf").arg("-d").arg(lib))?;
    Ok(text
        .lines()
        .find(|l| l.contains("(SONAME)"))
        .and_then(|l| Some(l[l.find('[')? + 1..l.rfind(']')?].to_string())))
}

/// Builds `$OUT_DIR/libdevtensor.so`: the `dt_*` symbols `lib` defines (functions as
/// empty functions, data as arrays of its size), under their default version nodes, with
/// the soname `needed`.
fn build_stub(lib: &Path, needed: &Path, out: &Path) -> Result<(), String> {
    let text = run(tool("NM", "nm")
        .args(["-D", "-S", "--defined-only"])
        .arg(lib))?;
    let mut c = String::from("/* generated by devtensor-sys's build.rs: a link-time stand-in */\n");
    let mut nodes: Vec<(String, Vec<String>)> = Vec::new();
    let mut count = 0;
    for line in text.lines() {
        // "ADDRESS [SIZE] TYPE NAME[@@VERSION]"; version nodes themselves are type A.
        let f: Vec<&str> = line.split_whitespace().collect();
        let (size, kind, full) = match f.as_slice() {
            [_, size, kind, name] => (u64::from_str_radix(size, 16).unwrap_or(0), *kind, *name),
            [_, kind, name] => (0, *kind, *name),
            _ => continue,
        };
        let (name, version) = match full.split_once("@@") {
            Some((n, v)) => (n, Some(v)),
            None if full.contains('@') => continue, // a non-default version: not linkable
            None => (full, None),
        };
        if !name.starts_with("dt_") || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            continue;
        }
        match kind {
            "T" | "W" | "i" => writeln!(c, "void {name}(void) {{}}").unwrap(),
            "D" | "B" | "R" | "V" | "G" | "S" => writeln!(
                c,
                "__attribute__((aligned(16))) char {name}[{}];",
                size.max(1)
            )
            .unwrap(),
            _ => continue,
        }
        count += 1;
        if let Some(v) = version {
            match nodes.iter_mut().find(|(n, _)| n == v) {
                Some((_, names)) => names.push(name.to_string()),
                None => nodes.push((v.to_string(), vec![name.to_string()])),
            }
        }
    }
    if count == 0 {
        return Err(format!("`nm -D` lists no dt_* symbol in {}", lib.display()));
    }
    let src = out.join("devtensor_stub.c");
    fs::write(&src, c).map_err(|e| format!("writing {}: {e}", src.display()))?;
    let mut cc = tool("CC", "cc");
    cc.args(["-shared", "-fPIC", "-o"])
        .arg(out.join("libdevtensor.so"))
        .arg(&src)
        .arg(format!("-Wl,-soname,{}", needed.display()));
    if !nodes.is_empty() {
        let mut map = String::new();
        for (node, names) in &nodes {
            writeln!(map, "{node} {{\n  global:").unwrap();
            for n in names {
                writeln!(map, "    {n};").unwrap();
            }
            writeln!(map, "}};").unwrap();
        }
        let path = out.join("devtensor_stub.map");
        fs::write(&path, map).map_err(|e| format!("writing {}: {e}", path.display()))?;
        cc.arg(format!("-Wl,--version-script={}", path.display()));
    }
    run(&mut cc).map(|_| ())
}

fn emit(dir: Option<&Path>) {
    println!("cargo:rustc-link-lib=dylib=devtensor");
    let dir = match dir {
        Some(dir) => dir,
        None => return,
    };
    // Visible to dependents' build scripts as DEP_DEVTENSOR_LIB_DIR.
    println!("cargo:lib_dir={}", dir.display());
    let lib = dir.join("libdevtensor.so");
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rerun-if-env-changed=DEVTENSOR_LINK_BY_SONAME");
    let by_soname =
        env::var_os("DEVTENSOR_LINK_BY_SONAME").is_some_and(|v| v != "0" && !v.is_empty());
    if !by_soname {
        let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
        let stub = soname(&lib).and_then(|name| {
            let needed = dir.join(name.unwrap_or_else(|| "libdevtensor.so".to_string()));
            build_stub(&lib, &needed, &out)
        });
        match stub {
            Ok(()) => {
                println!("cargo:rustc-link-search=native={}", out.display());
                return;
            }
            Err(e) => fail_with(&format!(
                "could not build the link stub that records {}'s path in the programs \
                 linked with it:\n  {e}\n(set DEVTENSOR_LINK_BY_SONAME=1 to link by soname; \
                 programs then need LD_LIBRARY_PATH or ldconfig to find the library)",
                lib.display()
            )),
        }
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    // devtensor's build.rs gives its own tests and examples the same rpath.
    println!("cargo:rpath={}", dir.display());
}

fn main() {
    println!("cargo:rerun-if-env-changed=DEVTENSOR_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG");
    println!("cargo:rerun-if-changed=build.rs");

    match from_env() {
        Some(Ok(dir)) => return emit(Some(&dir)),
        Some(Err(e)) => fail(&e, None),
        None => {}
    }
    match from_pkg_config() {
        Ok(dirs) => emit(dirs.first().map(PathBuf::as_path)),
        Err(e) => fail("DEVTENSOR_LIB_DIR is not set", Some(&e)),
    }
}

fn fail_with(msg: &str) -> ! {
    eprintln!("\nerror: devtensor-sys: {msg}\n");
    std::process::exit(1);
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

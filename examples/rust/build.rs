//! Runs fusec on the shipped spec into OUT_DIR (the artifact the crate
//! loads: env!("OUT_DIR")/kl_divergence.manifest) and links libfuserun from
//! the clone's lib/ (or $FUSERUN_LIB_DIR), with an rpath so that the
//! binaries and tests start without LD_LIBRARY_PATH. fusec is the clone's
//! bin/fusec (or $FUSEC): `make` builds both.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = here.join("../..").canonicalize().expect("the clone's root");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let spec = root.join("specs/kl_divergence.fuse");
    let fusec = env::var("FUSEC").map(PathBuf::from).unwrap_or_else(|_| root.join("bin/fusec"));
    let status = Command::new(&fusec)
        .arg("--arch=sm_80,sm_90,sm_90a")
        .arg("-o")
        .arg(&out)
        .arg(&spec)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {} ({e}): build it with make", fusec.display()));
    assert!(status.success(), "{} -o {} {} failed: {status}", fusec.display(), out.display(), spec.display());

    let lib = env::var("FUSERUN_LIB_DIR").map(PathBuf::from).unwrap_or_else(|_| root.join("lib"));
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib=fuserun");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    for p in [&spec, &fusec, &lib.join("libfuserun.so")] {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!("cargo:rerun-if-env-changed=FUSEC");
    println!("cargo:rerun-if-env-changed=FUSERUN_LIB_DIR");
}

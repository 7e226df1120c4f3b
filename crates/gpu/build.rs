//! Compiles the kernel headers as plain C++ for the host-side unit tests
//! (kernels/host/*.cpp wrap them in `extern "C"` functions). Without a C++ compiler the
//! crate still builds: the `ws_host_kernels` cfg is left unset and those tests say that
//! they were skipped.

use std::path::Path;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(ws_host_kernels)");
    println!("cargo:rerun-if-changed=kernels");
    embed_sources();
    let mut files: Vec<_> = std::fs::read_dir("kernels/host")
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        return;
    }
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++17")
        .include(Path::new("kernels"))
        .opt_level(2)
        .warnings(true)
        .cargo_warnings(false);
    for f in &files {
        b.file(f);
    }
    match b.try_compile("wirespeed_gpu_host_kernels") {
        Ok(()) => println!("cargo:rustc-cfg=ws_host_kernels"),
        Err(e) => println!(
            "cargo:warning=kernel headers not compiled for the host (no C++ compiler?): {e}; \
             their host tests will be skipped"
        ),
    }
}

/// Writes `$OUT_DIR/kernel_files.rs`: every kernel source (kernels/*.cuh and *.cu) as a
/// (name, text) pair, so the binary carries them and NVRTC needs no files at run time.
fn embed_sources() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("crates/gpu/kernels exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cuh") || n.ends_with(".cu"))
        .collect();
    names.sort();
    let mut out = String::from("&[\n");
    for n in &names {
        let path = dir.join(n);
        out.push_str(&format!(
            "    ({n:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("]\n");
    let dest =
        Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set")).join("kernel_files.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

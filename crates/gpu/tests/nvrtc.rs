//! Every kernel compiles to PTX and a CUBIN for sm_90 (the H100/H200 target) with NVRTC. Needs only
//! libnvrtc, not a GPU. Where NVRTC cannot be loaded the test says it was skipped, unless
//! WIRESPEED_REQUIRE_NVRTC=1 (set by .ci/run after installing the NVRTC wheel), where
//! that is a failure.

use wirespeed_gpu::{runtime, source};

#[test]
fn every_kernel_compiles_for_sm_90() {
    let required = std::env::var("WIRESPEED_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    if !wirespeed_gpu::nvrtc_present() {
        assert!(
            !required,
            "WIRESPEED_REQUIRE_NVRTC=1 but libnvrtc could not be loaded"
        );
        eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA NVRTC)");
        return;
    }
    // A private cache, so that this test really compiles.
    let dir = std::env::temp_dir().join(format!("wirespeed-ptx-test-{}", std::process::id()));
    std::env::set_var("WIRESPEED_KERNEL_CACHE", &dir);
    let mut failures = Vec::new();
    let mut n = 0;
    for k in source::kernels() {
        n += 1;
        match runtime::compile(k, "sm_90") {
            Ok(c) => {
                assert!(!c.cached, "{k}: came from a cache that should be empty");
                assert!(c.ptx.contains(".target sm_90"), "{k}: PTX is not for sm_90");
                assert!(c.ptx.contains(".entry"), "{k}: PTX has no kernel entry");
                assert!(
                    c.cubin.starts_with(b"\x7fELF"),
                    "{k}: the CUBIN is no ELF image"
                );
                // The second compile is a cache hit with the same image.
                let again = runtime::compile(k, "sm_90").unwrap();
                assert!(again.cached, "{k}: second compile missed the cache");
                assert_eq!(again.cubin, c.cubin);
                let local = c.ptx.matches("ld.local").count() + c.ptx.matches("st.local").count();
                eprintln!(
                    "{k}: {} bytes of PTX ({local} local-memory accesses), {} bytes of CUBIN",
                    c.ptx.len(),
                    c.cubin.len()
                );
                // ptxas's report for each entry point: its name, registers and stack,
                // and spills where there are any.
                for line in c.log.lines().filter(|l| {
                    l.contains("Compiling entry")
                        || l.contains("Function properties for ws_")
                        || l.contains("registers")
                        || (l.contains("spill") && !l.contains(" 0 bytes spill stores"))
                }) {
                    eprintln!("    {}", line.trim());
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(n > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

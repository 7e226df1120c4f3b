//! Kernel sources carried in the binary, and the inliner that turns a `.cu` file and the
//! headers it includes into the one self-contained string NVRTC compiles.

use sha2::{Digest, Sha256};

/// Every file under crates/gpu/kernels/ (headers `.cuh` and kernels `.cu`), by name.
pub const FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/kernel_files.rs"));

/// The kernel files (`.cu`): each compiles to one module.
pub fn kernels() -> impl Iterator<Item = &'static str> {
    FILES.iter().map(|(n, _)| *n).filter(|n| n.ends_with(".cu"))
}

/// The text of one kernel file, or None.
pub fn file(name: &str) -> Option<&'static str> {
    FILES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// A kernel file with every `#include "x.cuh"` replaced by that header's text (each header
/// once, depth first), `#pragma once` dropped. Errors name a missing header.
pub fn inline(name: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut seen = Vec::new();
    inline_into(name, &mut out, &mut seen)?;
    Ok(out)
}

fn inline_into(name: &str, out: &mut String, seen: &mut Vec<String>) -> Result<(), String> {
    if seen.iter().any(|s| s == name) {
        return Ok(());
    }
    seen.push(name.to_string());
    let text = file(name).ok_or_else(|| format!("kernel source '{name}' not found"))?;
    out.push_str(&format!("// ---- {name}\n"));
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#pragma once") {
            continue;
        }
        if let Some(rest) = t.strip_prefix("#include") {
            let rest = rest.trim();
            if let Some(inc) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                inline_into(inc, out, seen)?;
                continue;
            }
            // System headers (<stdint.h>) appear only in host-only branches.
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(())
}

/// Hex SHA-256 of the inlined source, the target architecture and the compile options:
/// the key of the on-disk PTX cache.
pub fn cache_key(source: &str, arch: &str, options: &[String]) -> String {
    let mut h = Sha256::new();
    h.update(source.as_bytes());
    h.update([0]);
    h.update(arch.as_bytes());
    for o in options {
        h.update([0]);
        h.update(o.as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_inlines_with_each_header_once() {
        let mut n = 0;
        for k in kernels() {
            let s = inline(k).unwrap_or_else(|e| panic!("{k}: {e}"));
            assert_eq!(s.matches("// ---- common.cuh\n").count(), 1, "{k}");
            assert!(!s.contains("#include \""), "{k} still includes a header");
            n += 1;
        }
        assert!(n >= 1, "no kernels found");
    }

    #[test]
    fn missing_header_is_an_error() {
        assert!(inline("no-such.cu").is_err());
    }

    #[test]
    fn cache_key_depends_on_arch_and_options() {
        let a = cache_key("x", "sm_90", &[]);
        assert_ne!(a, cache_key("x", "sm_80", &[]));
        assert_ne!(a, cache_key("x", "sm_90", &["-lineinfo".into()]));
        assert_ne!(a, cache_key("y", "sm_90", &[]));
        assert_eq!(a, cache_key("x", "sm_90", &[]));
    }
}

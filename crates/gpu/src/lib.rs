//! The device, and nothing else: the CUDA runtime, the kernels, and device entry points
//! that take an open [`Gpu`] and return [`GpuError`]. Each gives the answers of the CPU
//! implementation it mirrors (crates/ed25519, msm, rsa, eccvm). Which hardware runs a
//! job, the `auto` thresholds and the fallback to the CPU live in crates/engine; the
//! differential checks and benchmarks of these kernels live in bench/ (`wirespeed bench
//! gpu`).
//!
//! - [`runtime`]: the driver API and NVRTC loaded at run time ([`gpu()`], [`usable`]),
//!   kernels compiled at first use and cached on disk by source hash and architecture.
//! - [`source`]: the kernel sources (crates/gpu/kernels/) carried in the binary.
//! - [`ed25519`]: Ed25519 verification of a batch ([`ed25519::verify_many`]), with a
//!   reusable [`ed25519::Verifier`].
//! - [`msm`]: BLS12-377 G1 multi-scalar multiplication (Pippenger), one-shot or against
//!   a point set kept on the device ([`msm::DeviceMsm`]).
//! - [`rsa`]: batched RSA private operations (CRT), public modexp and modmul.
//! - [`eccvm`]: the lane VM, one thread per input set.
//! - [`selftest`]: the smoke kernel.
//!
//! The kernel headers also compile as plain C++ on the host; the crate's unit tests
//! check them against the Rust implementations where a C++ compiler is present.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod eccvm;
pub mod ed25519;
#[cfg(all(test, ws_host_kernels))]
mod host;
pub mod msm;
pub mod rsa;
pub mod runtime;
pub mod selftest;
pub mod source;

pub use runtime::{gpu, nvrtc_present, usable, Gpu, GpuError};

/// True when the kernel headers were compiled for the host and their unit tests run.
pub const HOST_KERNELS: bool = cfg!(ws_host_kernels);

#[cfg(test)]
mod tests {
    #[test]
    fn host_kernels_compiled_where_required() {
        let required = std::env::var("WIRESPEED_REQUIRE_HOST_KERNELS").is_ok_and(|v| v == "1");
        match (super::HOST_KERNELS, required) {
            (true, _) => {}
            (false, true) => panic!("the kernel headers did not compile for the host"),
            (false, false) => {
                eprintln!("skipped: kernel headers not compiled for the host (no C++ compiler)")
            }
        }
    }
}

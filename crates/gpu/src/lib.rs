//! The CUDA backend: Ed25519 verification, BLS12-377 MSM and RSA modexp on NVIDIA GPUs,
//! with the CPU as fallback giving identical answers.
//!
//! - [`runtime`]: the driver API and NVRTC loaded at run time ([`gpu()`]), kernels
//!   compiled at first use and cached on disk by source hash and architecture.
//! - [`backend`]: `--backend auto|cpu|gpu`.
//! - [`msm`]: BLS12-377 G1 multi-scalar multiplication (Pippenger), one-shot or against
//!   a point set kept on the device ([`msm::GpuMsm`]).
//! - [`source`]: the kernel sources (crates/gpu/kernels/) carried in the binary.
//! - [`ed25519`]: Ed25519 verification, batches ([`ed25519::verify_many`]) and a
//!   micro-batching stream ([`ed25519::Stream`]).
//!
//! The kernel headers also compile as plain C++ on the host; the crate's unit tests
//! check them against the Rust implementations where a C++ compiler is present.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod backend;
pub mod check;
pub mod eccvm;
pub mod ed25519;
#[cfg(all(test, ws_host_kernels))]
mod host;
pub mod msm;
pub mod rsa;
pub mod runtime;
pub mod source;

pub use backend::{Backend, Chosen, UnknownBackend};
pub use runtime::{gpu, nvrtc_present, Gpu, GpuError};

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

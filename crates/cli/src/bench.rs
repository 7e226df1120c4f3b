//! `wirespeed bench`: side-by-side comparisons with peer libraries (crate wirespeed-bench).

use clap::Subcommand;

use crate::error::CliError;

/// What `wirespeed bench` measures.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Ed25519 verification beside ed25519-dalek, ed25519-zebra, ring and OpenSSL
    Ed25519(wirespeed_bench::ed25519::BenchArgs),
    /// Modular squaring (1024-4096 bits) beside GMP, OpenSSL and num-bigint; VDF proof overhead
    Vdf(wirespeed_bench::vdf::BenchArgs),
    /// BLS12-377 G1 MSM beside arkworks and gnark-crypto (Go, when installed)
    Msm(wirespeed_bench::msm::BenchArgs),
    /// RSA sign and verify beside OpenSSL and the rsa crate
    Rsa(wirespeed_bench::rsa::BenchArgs),
    /// On an NVIDIA GPU: every GPU-against-CPU check and the GPU benchmarks, as JSON
    Gpu(crate::gpu::GpuBenchArgs),
}

/// Runs `wirespeed bench`.
pub fn run(cmd: &BenchCommand) -> Result<(), CliError> {
    match cmd {
        BenchCommand::Ed25519(args) => wirespeed_bench::ed25519::run(args).map_err(CliError::Bench),
        BenchCommand::Vdf(args) => wirespeed_bench::vdf::run(args).map_err(CliError::Bench),
        BenchCommand::Msm(args) => wirespeed_bench::msm::run(args).map_err(CliError::Bench),
        BenchCommand::Rsa(args) => wirespeed_bench::rsa::run(args).map_err(CliError::Bench),
        BenchCommand::Gpu(args) => crate::gpu::bench(args),
    }
}

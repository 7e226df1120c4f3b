//! `wirespeed bench`: side-by-side comparisons with peer libraries (crate wirespeed-bench,
//! its `peers` feature, off by default) and `bench gpu` (always built).

use clap::Subcommand;
#[cfg(feature = "peers")]
use wirespeed_bench::{
    ed25519::BenchArgs as Ed25519Args, msm::BenchArgs as MsmArgs, rsa::BenchArgs as RsaArgs,
    vdf::BenchArgs as VdfArgs,
};

use crate::error::CliError;

/// The arguments of a peer benchmark in a binary built without the `peers` feature: any
/// are taken, and the command says in one line that it needs the feature.
#[cfg(not(feature = "peers"))]
#[derive(clap::Args, Debug)]
pub struct NeedsPeers {
    /// Taken so that any arguments parse; the command refuses before reading them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    #[allow(dead_code)]
    rest: Vec<String>,
}
#[cfg(not(feature = "peers"))]
type Ed25519Args = NeedsPeers;
#[cfg(not(feature = "peers"))]
type VdfArgs = NeedsPeers;
#[cfg(not(feature = "peers"))]
type MsmArgs = NeedsPeers;
#[cfg(not(feature = "peers"))]
type RsaArgs = NeedsPeers;

/// What `wirespeed bench` measures.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Ed25519 verification beside ed25519-dalek, ed25519-zebra, ring, OpenSSL and Narya (Go, with --narya)
    Ed25519(Ed25519Args),
    /// Modular squaring (1024-4096 bits) beside GMP, OpenSSL and num-bigint; VDF proof overhead
    Vdf(VdfArgs),
    /// BLS12-377 G1 MSM beside arkworks and gnark-crypto (Go, when installed)
    Msm(MsmArgs),
    /// RSA sign and verify beside OpenSSL and the rsa crate
    Rsa(RsaArgs),
    /// On an NVIDIA GPU: every GPU-against-CPU check and the GPU benchmarks, as JSON
    Gpu(crate::gpu::GpuBenchArgs),
}

/// Runs `wirespeed bench`.
#[cfg(feature = "peers")]
pub fn run(cmd: &BenchCommand) -> Result<(), CliError> {
    match cmd {
        BenchCommand::Ed25519(args) => wirespeed_bench::ed25519::run(args).map_err(CliError::Bench),
        BenchCommand::Vdf(args) => wirespeed_bench::vdf::run(args).map_err(CliError::Bench),
        BenchCommand::Msm(args) => wirespeed_bench::msm::run(args).map_err(CliError::Bench),
        BenchCommand::Rsa(args) => wirespeed_bench::rsa::run(args).map_err(CliError::Bench),
        BenchCommand::Gpu(args) => crate::gpu::bench(args),
    }
}

/// Runs `wirespeed bench` in a binary without the peer libraries: `bench gpu` runs, the
/// side-by-side benchmarks say they need the `peers` feature.
#[cfg(not(feature = "peers"))]
pub fn run(cmd: &BenchCommand) -> Result<(), CliError> {
    let needs = |command| CliError::NeedsFeature {
        command,
        feature: "peers",
    };
    match cmd {
        BenchCommand::Ed25519(_) => Err(needs("bench ed25519")),
        BenchCommand::Vdf(_) => Err(needs("bench vdf")),
        BenchCommand::Msm(_) => Err(needs("bench msm")),
        BenchCommand::Rsa(_) => Err(needs("bench rsa")),
        BenchCommand::Gpu(args) => crate::gpu::bench(args),
    }
}

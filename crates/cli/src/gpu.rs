//! The GPU side of the CLI: `--backend` values that name a device, and
//! `wirespeed bench gpu`.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use wirespeed_gpu::check::{self, Options};

use crate::error::CliError;

/// `--backend auto|cpu|gpu`.
pub fn parse_device(s: &str) -> Result<wirespeed_gpu::Backend, String> {
    s.parse::<wirespeed_gpu::Backend>()
        .map_err(|e| e.to_string())
}

/// Where a job of `work` items runs (`auto`: the GPU from `min_gpu_work` items when one
/// is usable), or the error for `gpu` without one.
pub fn choose(
    backend: wirespeed_gpu::Backend,
    work: usize,
    min_gpu_work: usize,
) -> Result<wirespeed_gpu::Chosen, CliError> {
    backend.choose(work, min_gpu_work).map_err(CliError::Gpu)
}

/// A `--backend` value of a command whose CPU path has its own lane backends (`B`):
/// `auto` (the GPU when present and worth it, else the best CPU lanes), `cpu`, `gpu`, or
/// one CPU backend by name (`serial`, `avx2`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where<B> {
    /// The GPU for large enough jobs when there is one, else the CPU's own `auto`.
    Auto,
    /// The CPU, with this lane backend.
    Cpu(B),
    /// The GPU; an error where there is none.
    Gpu,
}

impl<B: Default + Copy> Where<B> {
    /// The device choice to pass to the GPU crate.
    pub fn device(&self) -> wirespeed_gpu::Backend {
        match self {
            Where::Auto => wirespeed_gpu::Backend::Auto,
            Where::Cpu(_) => wirespeed_gpu::Backend::Cpu,
            Where::Gpu => wirespeed_gpu::Backend::Gpu,
        }
    }

    /// The CPU lane backend to use when the job runs on the CPU.
    pub fn cpu(&self) -> B {
        match self {
            Where::Cpu(b) => *b,
            _ => B::default(),
        }
    }
}

/// Parses a [`Where`]: `gpu`, `cpu`, `auto`, else a CPU backend name. `lanes` lists the
/// CPU names for the error message.
pub fn parse_where<B: std::str::FromStr + Default>(
    s: &str,
    lanes: &str,
) -> Result<Where<B>, String> {
    match s {
        "auto" => Ok(Where::Auto),
        "gpu" => Ok(Where::Gpu),
        "cpu" => Ok(Where::Cpu(B::default())),
        _ => s
            .parse::<B>()
            .map(Where::Cpu)
            .map_err(|_| format!("unknown backend '{s}' (expected auto, cpu, gpu, {lanes})")),
    }
}

/// Arguments of `wirespeed bench gpu`.
#[derive(Args, Debug)]
#[command(after_help = "\
Runs, on device 0: a smoke kernel, then for every kernel the differential checks (GPU
answers against the CPU's on random and edge inputs, every Ed25519 rule mode) and the
benchmarks (medians of --runs, the CPU beside the GPU where it fits in the run).
Writes one JSON report (device name, driver and CUDA versions, checks, figures).
Exit status: 0 when every check passed, 1 when one failed or there is no usable GPU.")]
pub struct GpuBenchArgs {
    /// Write the JSON report here (else to standard output)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Small sizes and few runs: a smoke test of every kernel
    #[arg(long)]
    pub quick: bool,

    /// Runs per benchmark figure
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,

    /// Seed of the random inputs
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
}

/// Runs `wirespeed bench gpu`.
pub fn bench(args: &GpuBenchArgs) -> Result<(), CliError> {
    let opts = Options {
        quick: args.quick,
        runs: args.runs as usize,
        seed: args.seed,
    };
    let report = check::run(&opts).map_err(CliError::Gpu)?;
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| CliError::Internal(format!("report serialization: {e}")))?;
    match &args.out {
        Some(path) => std::fs::write(path, json + "\n").map_err(|source| CliError::Output {
            path: path.clone(),
            source,
        })?,
        None => writeln!(std::io::stdout().lock(), "{json}").map_err(CliError::Stdout)?,
    }
    let mut err = std::io::stderr().lock();
    let d = &report.device;
    let _ = writeln!(
        err,
        "{} (sm {}, {} SMs), driver {} (CUDA {}), NVRTC {}",
        d.name,
        d.capability,
        d.sm_count,
        d.driver_version.as_deref().unwrap_or("?"),
        d.driver_cuda_version,
        d.nvrtc_version.as_deref().unwrap_or("?")
    );
    for c in &report.checks {
        let verdict = if c.passed() { "ok  " } else { "FAIL" };
        let _ = writeln!(
            err,
            "{verdict} {:<48} {:>9} cases {:>6} mismatches {}",
            c.name,
            c.cases,
            c.mismatches,
            c.detail.as_deref().unwrap_or("")
        );
    }
    for b in &report.benches {
        let cpu = b
            .cpu_median
            .map(|c| format!("  cpu {c:.4} ({:.1}x)", b.median / c))
            .unwrap_or_default();
        let _ = writeln!(
            err,
            "{:<48} n={:<9} {:.4} {}{cpu}",
            b.name, b.size, b.median, b.unit
        );
    }
    if report.passed() {
        Ok(())
    } else {
        Err(CliError::Check(
            "a GPU check failed (see the report)".into(),
        ))
    }
}

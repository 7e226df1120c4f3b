//! The hardware side of the CLI: `--backend` values (parsed into the engine's
//! [`Backend`]), and `wirespeed bench gpu` (the harness lives in bench/).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use wirespeed_bench::gpu::{self as check, Options, Report};
use wirespeed_engine::{Backend, Lanes};

use crate::error::CliError;

/// `--backend auto|cpu|gpu` (commands without lane choices).
pub fn parse_device(s: &str) -> Result<Backend, String> {
    Backend::parse_device(s).map_err(|e| e.to_string())
}

/// A `--backend` of a command whose CPU path has lane choices: `auto`, `cpu`, `gpu`, or
/// one of `lanes` by name (`serial`, `avx2`, ...).
pub fn parse_with_lanes(s: &str, lanes: &[Lanes]) -> Result<Backend, String> {
    Backend::parse_with(s, lanes).map_err(|e| e.to_string())
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

    /// Run only this section after the smoke kernel (repeatable): ed25519, msm, rsa, eccvm
    #[arg(long, value_name = "SECTION", value_parser = clap::builder::PossibleValuesParser::new(check::SECTIONS))]
    pub only: Vec<String>,
}

/// Runs `wirespeed bench gpu`. Each check and figure is printed to stderr as soon as its
/// section ends, and with `--out` the JSON file is rewritten then too, so a run stopped
/// part way keeps what it measured.
pub fn bench(args: &GpuBenchArgs) -> Result<(), CliError> {
    let opts = Options {
        quick: args.quick,
        runs: args.runs as usize,
        seed: args.seed,
        only: args.only.clone(),
    };
    let (mut shown_checks, mut shown_benches) = (0, 0);
    let mut save_error = None;
    let mut progress = |r: &Report| {
        if shown_checks == 0 && shown_benches == 0 {
            print_device(&r.device);
        }
        for c in &r.checks[shown_checks..] {
            print_check(c);
        }
        for b in &r.benches[shown_benches..] {
            print_bench(b);
        }
        (shown_checks, shown_benches) = (r.checks.len(), r.benches.len());
        if let Some(path) = &args.out {
            if let Err(e) = save(path, r) {
                save_error.get_or_insert(e);
            }
        }
    };
    let report = check::run(&opts, &mut progress).map_err(CliError::Gpu)?;
    if let Some(e) = save_error {
        return Err(e);
    }
    if args.out.is_none() {
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::Internal(format!("report serialization: {e}")))?;
        writeln!(std::io::stdout().lock(), "{json}").map_err(CliError::Stdout)?;
    }
    if report.passed() {
        Ok(())
    } else {
        Err(CliError::Check(
            "a GPU check failed (see the report)".into(),
        ))
    }
}

/// Writes the report through a temporary file and a rename (never a torn file).
fn save(path: &std::path::Path, r: &Report) -> Result<(), CliError> {
    let json = serde_json::to_string_pretty(r)
        .map_err(|e| CliError::Internal(format!("report serialization: {e}")))?;
    crate::files::write_atomic(path, (json + "\n").as_bytes())
}

fn print_device(d: &check::DeviceInfo) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "{} (sm {}, {} SMs), driver {} (CUDA {}), NVRTC {}",
        d.name,
        d.capability,
        d.sm_count,
        d.driver_version.as_deref().unwrap_or("?"),
        d.driver_cuda_version,
        d.nvrtc_version.as_deref().unwrap_or("?")
    );
}

fn print_check(c: &check::Check) {
    let verdict = if c.passed() { "ok  " } else { "FAIL" };
    let _ = writeln!(
        std::io::stderr().lock(),
        "{verdict} {:<48} {:>9} cases {:>6} mismatches {}",
        c.name,
        c.cases,
        c.mismatches,
        c.detail.as_deref().unwrap_or("")
    );
}

/// How many times faster the GPU is than the CPU for a figure in `unit` (a rate: GPU
/// over CPU; a time: CPU over GPU), or None for units that are neither.
pub fn speedup(unit: &str, gpu: f64, cpu: f64) -> Option<f64> {
    if unit.ends_with("/s") {
        Some(gpu / cpu)
    } else if matches!(unit, "ms" | "us" | "s") {
        Some(cpu / gpu)
    } else {
        None
    }
}

fn print_bench(b: &check::Bench) {
    let cpu = match (
        b.cpu_median,
        speedup(&b.unit, b.median, b.cpu_median.unwrap_or(0.0)),
    ) {
        (Some(c), Some(x)) => format!("  cpu {c:.4} (GPU {x:.1}x as fast)"),
        (Some(c), None) => format!("  cpu {c:.4}"),
        _ => String::new(),
    };
    let _ = writeln!(
        std::io::stderr().lock(),
        "{:<48} n={:<9} {:.4} {}{cpu}",
        b.name,
        b.size,
        b.median,
        b.unit
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speedup_follows_the_unit() {
        assert_eq!(speedup("verifies/s", 10.0, 2.0), Some(5.0));
        assert_eq!(speedup("ms", 2.0, 10.0), Some(5.0));
        assert_eq!(speedup("bytes", 2.0, 10.0), None);
    }
}

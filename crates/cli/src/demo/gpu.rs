//! Demo section: the GPU backend. Without a usable GPU it says why and that the
//! throughput kernels run on the CPU; with one, it runs Ed25519 verification (every rule
//! mode) and an MSM on the GPU and checks every answer against the CPU's.

use std::io::Write;
use std::time::Instant;

use wirespeed_ed25519::{Item, Mode};
use wirespeed_engine::Backend;

use super::{DemoOptions, Section};
use crate::error::CliError;

/// The GPU section.
pub const SECTION: Section = Section {
    name: "gpu",
    title: "GPU backend (CUDA)",
    run,
};

fn run(opts: &DemoOptions, out: &mut dyn Write) -> Result<(), CliError> {
    let w = |e: std::io::Error| CliError::Stdout(e);
    let g = match Backend::Gpu.choose(1, 1) {
        Ok(wirespeed_engine::Chosen::Gpu(g)) => g,
        other => {
            let why = match other {
                Err(e) => e.to_string(),
                Ok(_) => "the GPU backend chose the CPU".to_string(),
            };
            writeln!(out, "no usable GPU: {why}").map_err(w)?;
            writeln!(
                out,
                "--backend auto runs everything on the CPU here; the kernels' arithmetic is \
                 checked on the host by cargo test (docs/gpu.md)"
            )
            .map_err(w)?;
            return Ok(());
        }
    };
    writeln!(
        out,
        "{} (sm {}.{}, {} SMs), driver CUDA {}.{}",
        g.name,
        g.capability.0,
        g.capability.1,
        g.sm_count,
        g.driver_cuda_version / 1000,
        g.driver_cuda_version % 1000 / 10
    )
    .map_err(w)?;
    let n = if opts.quick { 1 << 13 } else { 1 << 16 };
    let records = wirespeed_sigdata::gen::generate(n, 128, 7, 0.01);
    let items: Vec<Item<'_>> = wirespeed_sigdata::items(&records);
    writeln!(out, "{:<24} {:>9} {:>12}  check", "job", "n", "per sec").map_err(w)?;
    for mode in Mode::ALL {
        // The first call compiles (or loads) the kernel: time the second.
        let _ = wirespeed_engine::ed25519::verify_many(Backend::Gpu, &items, mode);
        let t = Instant::now();
        let got = wirespeed_engine::ed25519::verify_many(Backend::Gpu, &items, mode)
            .map_err(CliError::Gpu)?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = wirespeed_engine::ed25519::verify_many(Backend::CPU, &items, mode)
            .map_err(|e| CliError::Internal(e.to_string()))?;
        if got != cpu {
            return Err(CliError::Check(format!(
                "GPU Ed25519 verdicts differ from the CPU's ({mode})"
            )));
        }
        writeln!(
            out,
            "{:<24} {:>9} {:>12.0}  ok (every verdict = CPU)",
            format!("ed25519 {mode}"),
            n,
            n as f64 / secs
        )
        .map_err(w)?;
    }
    let m = if opts.quick { 1 << 12 } else { 1 << 16 };
    let points = wirespeed_msm::gen::points(m, 1);
    let scalars = wirespeed_msm::gen::scalars(m, 2);
    let _ = wirespeed_engine::msm::msm(Backend::Gpu, &points, &scalars);
    let t = Instant::now();
    let r = wirespeed_engine::msm::msm(Backend::Gpu, &points, &scalars).map_err(CliError::Gpu)?;
    let secs = t.elapsed().as_secs_f64();
    let want = wirespeed_engine::msm::msm(Backend::CPU, &points, &scalars)
        .map_err(|e| CliError::Internal(e.to_string()))?;
    if r != want {
        return Err(CliError::Check("GPU MSM differs from the CPU's".into()));
    }
    writeln!(
        out,
        "{:<24} {:>9} {:>12.0}  ok (= CPU)",
        "msm (points/s)",
        m,
        m as f64 / secs
    )
    .map_err(w)?;
    Ok(())
}

//! The lane VM's section of `wirespeed bench gpu`.

use rand::Rng;
use rand_chacha::ChaCha20Rng;

use super::{median, time_runs, Bench, Check, Options, Report};
use wirespeed_engine::GpuError;

/// Checks, then the benchmark.
pub(super) fn run(
    opts: &Options,
    rng: &mut ChaCha20Rng,
    report: &mut Report,
) -> Result<(), GpuError> {
    report.checks.push(eccvm_check(rng)?);
    report.benches.push(eccvm_bench(opts, rng)?);
    Ok(())
}

/// The lane VM: random programs and the RFC 8032 decoding programs, GPU against CPU.
fn eccvm_check(rng: &mut ChaCha20Rng) -> Result<Check, GpuError> {
    use wirespeed_eccvm::testing::{edge_values, random_program};
    use wirespeed_eccvm::Program;
    let mut programs = Vec::new();
    for _ in 0..40 {
        programs.push(
            Program::parse(&random_program(rng))
                .map_err(|e| GpuError::Unsupported(e.to_string()))?,
        );
    }
    for mode in ["strict", "zip215", "cofactored-strict", "libsodium"] {
        for role in ['a', 'r'] {
            let bytes = wirespeed_eccvm::rfc8032::decode_program(mode, role)
                .ok_or_else(|| GpuError::Unsupported(format!("no program {mode} {role}")))?;
            programs.push(Program::parse(bytes).map_err(|e| GpuError::Unsupported(e.to_string()))?);
        }
    }
    let (mut cases, mut mismatches, mut detail) = (0, 0, None);
    for (i, p) in programs.iter().enumerate() {
        let vals = edge_values(rng);
        // 1000 + i sets: partial warps and blocks.
        let inputs: Vec<[u8; 32]> = (0..(1000 + i) * p.inputs())
            .map(|k| {
                if k % 3 == 0 {
                    vals[k % vals.len()]
                } else {
                    rng.gen()
                }
            })
            .collect();
        let want = wirespeed_engine::eccvm::run(wirespeed_engine::Backend::CPU, p, &inputs)
            .map_err(|e| GpuError::Unsupported(e.to_string()))?;
        let got = match wirespeed_engine::eccvm::run(wirespeed_engine::Backend::Gpu, p, &inputs) {
            Ok(v) => v,
            Err(wirespeed_engine::eccvm::Error::Gpu(e)) => return Err(e),
            Err(e) => return Err(GpuError::Unsupported(e.to_string())),
        };
        cases += want.len();
        let bad =
            want.iter().zip(&got).filter(|(a, b)| a != b).count() + want.len().abs_diff(got.len());
        if bad > 0 {
            mismatches += bad;
            detail.get_or_insert_with(|| format!("program {i}: {bad} outputs differ"));
        }
    }
    Ok(Check {
        name: "eccvm: random and RFC 8032 programs".into(),
        cases,
        mismatches,
        detail,
    })
}

/// Input sets per second of the strict A-decoding program, GPU and CPU.
fn eccvm_bench(opts: &Options, rng: &mut ChaCha20Rng) -> Result<Bench, GpuError> {
    use wirespeed_eccvm::Program;
    let bytes = wirespeed_eccvm::rfc8032::decode_program("strict", 'a')
        .ok_or_else(|| GpuError::Unsupported("no strict decoding program".into()))?;
    let p = Program::parse(bytes).map_err(|e| GpuError::Unsupported(e.to_string()))?;
    let sets = if opts.quick { 1 << 16 } else { 1 << 20 };
    let inputs: Vec<[u8; 32]> = (0..sets * p.inputs()).map(|_| rng.gen()).collect();
    let on = |b: wirespeed_engine::Backend| {
        time_runs(opts.runs, || {
            wirespeed_engine::eccvm::run(b, &p, &inputs).map(|_| ())
        })
        .map(|t| t.iter().map(|s| sets as f64 / s).collect::<Vec<_>>())
    };
    let fail = |e: wirespeed_engine::eccvm::Error| match e {
        wirespeed_engine::eccvm::Error::Gpu(e) => e,
        e => GpuError::Unsupported(e.to_string()),
    };
    // Warm-up: compile and load the module outside the timed runs.
    wirespeed_engine::eccvm::run(wirespeed_engine::Backend::Gpu, &p, &inputs[..p.inputs()])
        .map_err(fail)?;
    let runs = on(wirespeed_engine::Backend::Gpu).map_err(fail)?;
    let cpu = on(wirespeed_engine::Backend::CPU).map_err(fail)?;
    Ok(Bench {
        name: "eccvm strict A decoding, sets/s incl. transfers".into(),
        size: sets,
        unit: "sets/s".into(),
        median: median(&runs),
        runs,
        cpu_median: Some(median(&cpu)),
    })
}

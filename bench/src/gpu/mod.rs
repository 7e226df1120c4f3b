//! `wirespeed bench gpu`: on a machine with a GPU, run every differential check (GPU
//! against CPU on random and edge inputs) and the benchmarks in one go, and return one
//! JSON-serializable report with the device, driver and CUDA versions. The checks call
//! the engine (crates/engine) with `gpu` and `cpu` named, and the device crate
//! (crates/gpu) for its plans and the smoke kernel; nothing here is in a production
//! crate.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

use wirespeed_gpu::{gpu, Gpu, GpuError};

mod eccvm;
mod ed25519;
mod ed25519_inputs;
mod msm;
mod rsa;

/// One kernel's part of the run: pushes its checks and benchmarks onto the report.
type Section = fn(&Options, &mut ChaCha20Rng, &mut Report) -> Result<(), GpuError>;

/// The device a report was taken on.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// Device name.
    pub name: String,
    /// Compute capability, "9.0".
    pub capability: String,
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Device memory in bytes.
    pub memory_bytes: usize,
    /// The CUDA version the driver supports ("13.0").
    pub driver_cuda_version: String,
    /// The NVIDIA driver version (from nvidia-smi, when it can be run).
    pub driver_version: Option<String>,
    /// The NVRTC version that compiled the kernels ("13.5").
    pub nvrtc_version: Option<String>,
}

/// One differential check: the GPU's answers against the CPU's.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// Inputs compared.
    pub cases: usize,
    /// Inputs whose answers differed.
    pub mismatches: usize,
    /// The first mismatch or error, if any.
    pub detail: Option<String>,
}

impl Check {
    /// True when every case agreed and nothing failed. A check that compared nothing
    /// has not passed.
    pub fn passed(&self) -> bool {
        self.cases > 0 && self.mismatches == 0 && self.detail.is_none()
    }
}

/// One benchmark figure: the median of several runs, with the CPU beside it when run.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    /// What was measured.
    pub name: String,
    /// Problem size (signatures, points, operations).
    pub size: usize,
    /// Unit of `median` ("ops/s", "ms", "us").
    pub unit: String,
    /// Median over `runs`.
    pub median: f64,
    /// Every run.
    pub runs: Vec<f64>,
    /// The CPU backend's median in the same unit, where measured in the same run.
    pub cpu_median: Option<f64>,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// UTC time the report was started (RFC 3339).
    pub started: String,
    /// The device.
    pub device: DeviceInfo,
    /// Differential checks.
    pub checks: Vec<Check>,
    /// Benchmarks.
    pub benches: Vec<Bench>,
}

impl Report {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(Check::passed)
    }
}

/// How much to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Smaller sizes and fewer repetitions (a smoke run).
    pub quick: bool,
    /// Runs per benchmark figure.
    pub runs: usize,
    /// Seed of the random inputs.
    pub seed: u64,
    /// Run only these sections (empty: all of them); see [`SECTIONS`].
    pub only: Vec<String>,
}

/// The sections after the smoke kernel, in the order they run.
pub const SECTIONS: [&str; 4] = ["ed25519", "msm", "rsa", "eccvm"];

impl Default for Options {
    fn default() -> Options {
        Options {
            quick: false,
            runs: 5,
            seed: 0x5eed,
            only: Vec::new(),
        }
    }
}

/// GPU answers against the CPU's, position by position: the number that differ (a length
/// mismatch counts as the difference in length, at least 1) and a description of the
/// first (`first(i, gpu, cpu)`), as a [`Check`] records them.
pub fn tally<T: PartialEq>(
    got: &[T],
    want: &[T],
    what: &str,
    first: impl Fn(usize, &T, &T) -> String,
) -> (usize, Option<String>) {
    if got.len() != want.len() {
        return (
            want.len().abs_diff(got.len()).max(1),
            Some(format!("{} {what} for {} inputs", got.len(), want.len())),
        );
    }
    let mut bad = 0;
    let mut detail = None;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            bad += 1;
            detail.get_or_insert_with(|| first(i, g, w));
        }
    }
    (bad, detail)
}

/// The median of a list of figures (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => s[n / 2],
        _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Runs a closure `runs` times and returns each run's seconds.
pub fn time_runs<E>(runs: usize, mut f: impl FnMut() -> Result<(), E>) -> Result<Vec<f64>, E> {
    let mut out = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        out.push(t.elapsed().as_secs_f64());
    }
    Ok(out)
}

fn device_info(g: &Gpu) -> Result<DeviceInfo, GpuError> {
    let (_, total) = g.memory()?;
    let driver_version = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=driver_version", "--format=csv,noheader"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(|l| l.trim().to_string()));
    let nvrtc_version = wirespeed_gpu::runtime::nvrtc_version();
    let v = g.driver_cuda_version;
    Ok(DeviceInfo {
        name: g.name.clone(),
        capability: format!("{}.{}", g.capability.0, g.capability.1),
        sm_count: g.sm_count,
        memory_bytes: total,
        driver_cuda_version: format!("{}.{}", v / 1000, (v % 1000) / 10),
        driver_version,
        nvrtc_version,
    })
}

/// The smoke kernel: a * b + c on a million random triples, against the host.
fn selftest(g: &Gpu, rng: &mut ChaCha20Rng) -> Result<Check, GpuError> {
    let n = 1usize << 20;
    let a: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let b: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let c: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let got = wirespeed_gpu::selftest::mul_add(g, &a, &b, &c)?;
    let mut mismatches = 0;
    let mut detail = None;
    for i in 0..n {
        let want = a[i] as u64 * b[i] as u64 + c[i] as u64;
        let have = got[2 * i] as u64 | (got[2 * i + 1] as u64) << 32;
        if want != have {
            mismatches += 1;
            detail.get_or_insert_with(|| format!("index {i}: {have:#x} != {want:#x}"));
        }
    }
    Ok(Check {
        name: "selftest: 32x32+32 products".into(),
        cases: n,
        mismatches,
        detail,
    })
}

/// Runs every check and benchmark on device 0. Fails only when there is no usable GPU;
/// a check that fails is recorded in the report (see [`Report::passed`]).
///
/// `progress` sees the report after the smoke kernel and after each section, so a caller
/// can save what is done before a long or failing section. A section that panics is
/// recorded as a failed check and the next one still runs.
pub fn run(opts: &Options, progress: &mut dyn FnMut(&Report)) -> Result<Report, GpuError> {
    if let Some(bad) = opts.only.iter().find(|n| !SECTIONS.contains(&n.as_str())) {
        return Err(GpuError::Unsupported(format!(
            "unknown section '{bad}' (expected {})",
            SECTIONS.join(", ")
        )));
    }
    let g = gpu()?;
    if !wirespeed_gpu::nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    let started = now_rfc3339();
    let mut rng = ChaCha20Rng::seed_from_u64(opts.seed);
    let mut report = Report {
        started,
        device: device_info(g)?,
        checks: Vec::new(),
        benches: Vec::new(),
    };
    let guarded = |name: &str, r: Result<Check, GpuError>| {
        r.unwrap_or_else(|e| Check {
            name: name.to_string(),
            cases: 0,
            mismatches: 0,
            detail: Some(e.to_string()),
        })
    };
    report
        .checks
        .push(guarded("selftest", selftest(g, &mut rng)));
    progress(&report);
    // Each kernel's section: its checks, then its benchmarks. A section that fails with
    // an error or panics is recorded as a failed check and the next section still runs.
    let sections: [Section; 4] = [ed25519::run, msm::run, rsa::run, eccvm::run];
    for (name, section) in SECTIONS.into_iter().zip(sections) {
        if !opts.only.is_empty() && !opts.only.iter().any(|n| n == name) {
            continue;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            section(opts, &mut rng, &mut report)
        }));
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => report.checks.push(guarded(name, Err(e))),
            Err(p) => {
                let why = p
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| p.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                report.checks.push(guarded(
                    name,
                    Err(GpuError::Unsupported(format!(
                        "the section panicked: {why}"
                    ))),
                ));
            }
        }
        progress(&report);
    }
    Ok(report)
}

/// The current UTC time as RFC 3339 (seconds).
pub fn now_rfc3339() -> String {
    wirespeed_util::time::Utc::now().rfc3339()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn timestamp_shape() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z'), "{t}");
    }

    #[test]
    fn without_a_gpu_the_run_says_why() {
        if let Err(why) = gpu() {
            let e = run(&Options::default(), &mut |_| {}).unwrap_err();
            assert_eq!(e, why);
        }
    }
}

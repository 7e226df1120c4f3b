//! `--backend auto|cpu|gpu`: which hardware runs a throughput job.

use std::fmt;
use std::str::FromStr;

use crate::runtime::{gpu, nvrtc_present, Gpu, GpuError};

/// The backend a user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The GPU when one is present and the batch is large enough to be worth the
    /// transfers; the CPU otherwise.
    #[default]
    Auto,
    /// Always the CPU.
    Cpu,
    /// Always the GPU; an error where there is none.
    Gpu,
}

impl Backend {
    /// The CLI names.
    pub const NAMES: [&'static str; 3] = ["auto", "cpu", "gpu"];

    /// Decides where a job of `work` items runs. `min_gpu_work` is the smallest job for
    /// which `auto` picks the GPU. `gpu` without a usable GPU (driver, device and NVRTC)
    /// is an error naming what is missing.
    pub fn choose(self, work: usize, min_gpu_work: usize) -> Result<Chosen, GpuError> {
        match self {
            Backend::Cpu => Ok(Chosen::Cpu),
            Backend::Gpu => usable_gpu().map(Chosen::Gpu),
            Backend::Auto if work < min_gpu_work => Ok(Chosen::Cpu),
            Backend::Auto => Ok(usable_gpu().map_or(Chosen::Cpu, Chosen::Gpu)),
        }
    }
}

/// The device, if it is there and its kernels can be compiled.
fn usable_gpu() -> Result<&'static Gpu, GpuError> {
    let g = gpu()?;
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    Ok(g)
}

/// Where a job runs.
#[derive(Clone, Copy, Debug)]
pub enum Chosen {
    /// On the CPU.
    Cpu,
    /// On this GPU.
    Gpu(&'static Gpu),
}

impl Chosen {
    /// "cpu" or "gpu".
    pub fn name(&self) -> &'static str {
        match self {
            Chosen::Cpu => "cpu",
            Chosen::Gpu(_) => "gpu",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        })
    }
}

/// An unknown backend name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBackend(pub String);

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown backend '{}' (expected auto, cpu or gpu)",
            self.0
        )
    }
}

impl std::error::Error for UnknownBackend {}

impl FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "gpu" => Ok(Backend::Gpu),
            _ => Err(UnknownBackend(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in Backend::NAMES {
            assert_eq!(n.parse::<Backend>().unwrap().to_string(), n);
        }
        assert!("cuda".parse::<Backend>().is_err());
    }

    #[test]
    fn cpu_is_always_available_and_auto_keeps_small_jobs_on_it() {
        assert!(matches!(Backend::Cpu.choose(1 << 30, 1), Ok(Chosen::Cpu)));
        assert!(matches!(Backend::Auto.choose(3, 4), Ok(Chosen::Cpu)));
    }

    #[test]
    fn gpu_without_a_device_is_a_clear_error() {
        match Backend::Gpu.choose(1, 1) {
            Ok(_) => eprintln!("a GPU is present: the no-GPU error path is not exercised here"),
            Err(e) => {
                let m = e.to_string();
                assert!(
                    m.contains("CUDA") || m.contains("NVRTC") || m.contains("disabled"),
                    "{m}"
                );
                // auto falls back instead of failing.
                assert!(matches!(Backend::Auto.choose(1 << 20, 1), Ok(Chosen::Cpu)));
            }
        }
    }
}

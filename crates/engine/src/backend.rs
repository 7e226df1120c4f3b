//! Where an operation runs: [`Backend`] (what the caller asked for: `auto`, `cpu`, `gpu`,
//! or one CPU lane width), [`Lanes`] (the one description of the CPU's lane widths),
//! [`Op`] (the operations, each with its `auto` threshold) and [`Chosen`] (where one
//! call runs, decided by [`Backend::select`]).
//!
//! Guarantees:
//! - `gpu` without a usable device (driver, device and NVRTC) is an error naming what
//!   is missing, never a silent CPU run; `auto` without one is the CPU.
//! - `auto` sends a job to the GPU only from its operation's threshold ([`Op::min_gpu`])
//!   on: below it the transfers and the launch cost more than the CPU needs.
//! - The CPU's features are read once, here ([`cpu`], the process's one detection in
//!   `wirespeed_util::cpu::CpuFeatures`), and `Auto` lanes are resolved here
//!   ([`resolve`]); the CPU crates get both as arguments (their `*_with` entry points)
//!   and never probe the CPU. A lane width this CPU lacks is reported by
//!   [`Lanes::available`].

use std::fmt;
use std::str::FromStr;

use wirespeed_gpu::{Gpu, GpuError};
use wirespeed_util::cpu::CpuFeatures;

/// The CPU's lane widths: the one description in `wirespeed-util`, where the CPU crates
/// can read it too.
pub use wirespeed_util::lanes::Lanes;

/// This CPU's features (detected once per process): what the engine passes to the CPU
/// crates' `*_with` entry points.
pub fn cpu() -> &'static CpuFeatures {
    CpuFeatures::get()
}

/// `l` with `Auto` resolved to the widest lanes this CPU runs (a concrete width as it
/// is; the CPU crates check it against [`cpu`] and run serially where it is missing).
pub fn resolve(l: Lanes) -> Lanes {
    l.resolve_on(cpu())
}

/// The hardware a caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The GPU when one is usable and the job reaches its operation's threshold, else
    /// the CPU's widest lanes.
    #[default]
    Auto,
    /// The CPU, with these lanes.
    Cpu(Lanes),
    /// The GPU; an error where there is none.
    Gpu,
}

/// The operations the engine dispatches, each with its `auto` threshold: the one table
/// of sizes from which `auto` picks the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Ed25519 verification of a batch (signatures).
    Ed25519,
    /// BLS12-377 G1 multi-scalar multiplication (points).
    Msm,
    /// RSA private operations and batch signing (messages).
    Rsa,
    /// Public modular powers and products (items).
    Modexp,
    /// The lane VM (input sets).
    LaneVm,
}

impl Op {
    /// The smallest job `auto` sends to the GPU.
    pub const fn min_gpu(self) -> usize {
        match self {
            // Below it the transfers and the launch cost more than the CPU's lanes and
            // cores need.
            Op::Ed25519 => 4096,
            Op::Msm => 1 << 16,
            Op::Rsa | Op::Modexp => 256,
            // A launch and two copies cost more than the CPU lanes need for a few
            // thousand sets of a short program.
            Op::LaneVm => 1 << 14,
        }
    }
}

/// Where one call runs.
#[derive(Clone, Copy, Debug)]
pub enum Chosen {
    /// On the CPU, with these lanes.
    Cpu(Lanes),
    /// On this GPU.
    Gpu(&'static Gpu),
}

impl Chosen {
    /// "cpu" or "gpu".
    pub fn name(&self) -> &'static str {
        match self {
            Chosen::Cpu(_) => "cpu",
            Chosen::Gpu(_) => "gpu",
        }
    }
}

impl Backend {
    /// `cpu`: the CPU's widest lanes.
    pub const CPU: Backend = Backend::Cpu(Lanes::Auto);

    /// The names every `--backend` takes besides lane names.
    pub const NAMES: [&'static str; 3] = ["auto", "cpu", "gpu"];

    /// Decides where a job of `work` items of `op` runs (the one decision every
    /// operation dispatches through). `gpu` without a usable GPU is an error naming
    /// what is missing; `auto` then runs on the CPU.
    pub fn select(self, op: Op, work: usize) -> Result<Chosen, GpuError> {
        self.choose(work, op.min_gpu())
    }

    /// [`Backend::select`] with an explicit threshold.
    pub fn choose(self, work: usize, min_gpu_work: usize) -> Result<Chosen, GpuError> {
        match self {
            Backend::Cpu(l) => Ok(Chosen::Cpu(l)),
            Backend::Gpu => wirespeed_gpu::usable().map(Chosen::Gpu),
            Backend::Auto if work < min_gpu_work => Ok(Chosen::Cpu(Lanes::Auto)),
            Backend::Auto => {
                Ok(wirespeed_gpu::usable().map_or(Chosen::Cpu(Lanes::Auto), Chosen::Gpu))
            }
        }
    }

    /// The CPU lanes used when the job runs on the CPU.
    pub fn lanes(&self) -> Lanes {
        match self {
            Backend::Cpu(l) => *l,
            _ => Lanes::Auto,
        }
    }

    /// Parses `auto`, `cpu` or `gpu` only (the `--backend` of commands without lane
    /// choices).
    pub fn parse_device(s: &str) -> Result<Backend, UnknownBackend> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::CPU),
            "gpu" => Ok(Backend::Gpu),
            _ => Err(UnknownBackend {
                name: s.to_string(),
                lanes: Vec::new(),
            }),
        }
    }

    /// Parses `auto`, `cpu`, `gpu`, or one of `lanes` by name (`serial`, `avx2`, ...).
    pub fn parse_with(s: &str, lanes: &[Lanes]) -> Result<Backend, UnknownBackend> {
        Backend::parse_device(s).or_else(|_| {
            lanes
                .iter()
                .find(|l| **l != Lanes::Auto && l.name() == s)
                .map(|l| Backend::Cpu(*l))
                .ok_or_else(|| UnknownBackend {
                    name: s.to_string(),
                    lanes: lanes
                        .iter()
                        .filter(|l| **l != Lanes::Auto)
                        .copied()
                        .collect(),
                })
        })
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Auto => f.write_str("auto"),
            Backend::Cpu(Lanes::Auto) => f.write_str("cpu"),
            Backend::Cpu(l) => f.write_str(l.name()),
            Backend::Gpu => f.write_str("gpu"),
        }
    }
}

/// Every name: `auto`, `cpu`, `gpu` and the lane names.
impl FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        Backend::parse_with(s, &Lanes::ALL)
    }
}

/// An unknown backend name, and the lane names that were accepted besides auto, cpu and
/// gpu.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBackend {
    /// The name given.
    pub name: String,
    /// The lane names accepted (none: only auto, cpu, gpu).
    pub lanes: Vec<Lanes>,
}

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown backend '{}' (expected auto, cpu", self.name)?;
        match self.lanes.split_last() {
            None => f.write_str(" or gpu)"),
            Some((last, rest)) => {
                f.write_str(", gpu")?;
                for l in rest {
                    write!(f, ", {l}")?;
                }
                write!(f, " or {last})")
            }
        }
    }
}

impl std::error::Error for UnknownBackend {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in Backend::NAMES {
            assert_eq!(n.parse::<Backend>().unwrap().to_string(), n);
        }
        for l in Lanes::ALL.into_iter().skip(1) {
            assert_eq!(l.name().parse::<Backend>().unwrap(), Backend::Cpu(l));
            assert_eq!(Backend::Cpu(l).to_string(), l.name());
        }
        assert!("cuda".parse::<Backend>().is_err());
    }

    #[test]
    fn unknown_names_list_what_is_accepted() {
        assert_eq!(
            Backend::parse_device("cuda").unwrap_err().to_string(),
            "unknown backend 'cuda' (expected auto, cpu or gpu)"
        );
        assert!(Backend::parse_device("avx2").is_err());
        let vm = [Lanes::Serial, Lanes::Avx2, Lanes::Ifma];
        assert_eq!(
            Backend::parse_with("ifma4", &vm).unwrap_err().to_string(),
            "unknown backend 'ifma4' (expected auto, cpu, gpu, serial, avx2 or ifma)"
        );
        assert_eq!(
            Backend::parse_with("avx2", &vm),
            Ok(Backend::Cpu(Lanes::Avx2))
        );
        assert_eq!(Backend::parse_with("cpu", &vm), Ok(Backend::CPU));
    }

    #[test]
    fn thresholds_are_the_ones_the_cli_help_states() {
        // verify --help: "the GPU for batches of 4096 or more".
        assert_eq!(Op::Ed25519.min_gpu(), 4096);
        // msm --help: "the GPU from 2^16 points".
        assert_eq!(Op::Msm.min_gpu(), 1 << 16);
        // rsa batch-sign --help: "the GPU from 256 messages".
        assert_eq!(Op::Rsa.min_gpu(), 256);
        assert_eq!(Op::Modexp.min_gpu(), 256);
        assert_eq!(Op::LaneVm.min_gpu(), 1 << 14);
    }

    #[test]
    fn cpu_is_always_available_and_auto_keeps_small_jobs_on_it() {
        assert!(matches!(
            Backend::CPU.choose(1 << 30, 1),
            Ok(Chosen::Cpu(Lanes::Auto))
        ));
        assert!(matches!(Backend::Auto.choose(3, 4), Ok(Chosen::Cpu(_))));
        assert!(matches!(
            Backend::Cpu(Lanes::Serial).select(Op::Msm, 1 << 30),
            Ok(Chosen::Cpu(Lanes::Serial))
        ));
        assert!(matches!(
            Backend::Auto.select(Op::Ed25519, Op::Ed25519.min_gpu() - 1),
            Ok(Chosen::Cpu(_))
        ));
        assert!(Lanes::Serial.available() && Lanes::Auto.available());
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
                assert!(matches!(
                    Backend::Auto.choose(1 << 20, 1),
                    Ok(Chosen::Cpu(_))
                ));
            }
        }
    }
}

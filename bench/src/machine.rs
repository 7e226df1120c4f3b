//! The machine a benchmark ran on, and when: printed at the head of every report so a
//! figure in BENCHMARKS.md can be traced to its hardware.

use wirespeed_util::proc;

/// CPU model, core count and the SIMD features wirespeed's backends care about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo ("unknown" where it cannot be read).
    pub cpu: String,
    /// Logical cores the process may use.
    pub cores: usize,
    /// The CPU reports AVX2.
    pub avx2: bool,
    /// The CPU reports AVX-512 IFMA.
    pub avx512ifma: bool,
    /// CPU family (CPUID display family; 25 = Zen 3/4, 26 = Zen 5 on AMD).
    pub family: u32,
    /// The microarchitecture class the kernels are chosen by
    /// (`CpuFeatures::microarch`: `zen5`, `zen4`, ...).
    pub microarch: String,
}

impl Machine {
    /// Reads /proc/cpuinfo (Linux, through `wirespeed_util::proc`); elsewhere falls
    /// back to run-time feature detection.
    pub fn detect() -> Machine {
        let cpuinfo = proc::read_cpuinfo().unwrap_or_default();
        let field = |name: &str| proc::cpuinfo_field(&cpuinfo, name).map(str::to_string);
        let flags = field("flags").unwrap_or_default();
        let has = |f: &str| flags.split_whitespace().any(|x| x == f);
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        Machine {
            cpu: field("model name").unwrap_or_else(|| "unknown".to_string()),
            cores,
            avx2: has("avx2") || avx2_detected(),
            avx512ifma: has("avx512ifma"),
            family: wirespeed_util::cpu::CpuFeatures::get().family,
            microarch: wirespeed_util::cpu::CpuFeatures::get().microarch(),
        }
    }

    /// One line for a report header.
    pub fn summary(&self) -> String {
        let yn = |b: bool| if b { "yes" } else { "no" };
        format!(
            "{}, cpu family {} ({}), {} logical cores, AVX2: {}, AVX-512 IFMA: {}",
            self.cpu,
            self.family,
            self.microarch,
            self.cores,
            yn(self.avx2),
            yn(self.avx512ifma)
        )
    }
}

fn avx2_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The current UTC date and time as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let t = wirespeed_util::time::Utc::now();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year, t.month, t.day, t.hour, t.minute
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_does_not_panic() {
        let m = Machine::detect();
        assert!(m.cores >= 1);
        assert!(!m.summary().is_empty());
    }
}

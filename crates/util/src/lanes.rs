//! The CPU's lane widths, one description for every operation and every crate: the
//! engine's `Backend::Cpu` carries it, and each operation maps it onto its own crate's
//! arithmetic. Whether this CPU runs a width is read from [`CpuFeatures`] (detected
//! once), or from features the caller passes ([`Lanes::available_on`]), so a crate
//! given a `Lanes` never has to probe the CPU itself.

use std::fmt;

use crate::cpu::CpuFeatures;

/// The CPU's lane widths, one description for every operation. Each operation maps it
/// to its own arithmetic (see the operation's module); `Auto` is the widest this CPU
/// runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lanes {
    /// The widest lanes this CPU supports (detected at run time).
    #[default]
    Auto,
    /// One item at a time, 64-bit scalar arithmetic (always available).
    Serial,
    /// Four items per AVX2 register.
    Avx2,
    /// Eight items per 512-bit register with the AVX-512 IFMA multipliers (AVX-512F,
    /// IFMA and DQ).
    Ifma,
    /// Four items per 256-bit register with AVX-512 IFMA (also AVX-512VL).
    Ifma4,
}

impl Lanes {
    /// Every lane width, `Auto` first.
    pub const ALL: [Lanes; 5] = [
        Lanes::Auto,
        Lanes::Serial,
        Lanes::Avx2,
        Lanes::Ifma,
        Lanes::Ifma4,
    ];

    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Lanes::Auto => "auto",
            Lanes::Serial => "serial",
            Lanes::Avx2 => "avx2",
            Lanes::Ifma => "ifma",
            Lanes::Ifma4 => "ifma4",
        }
    }

    /// True if this CPU can run the lanes.
    pub fn available(&self) -> bool {
        self.available_on(CpuFeatures::get())
    }

    /// True if a CPU with features `f` can run the lanes.
    pub fn available_on(&self, f: &CpuFeatures) -> bool {
        match self {
            Lanes::Auto | Lanes::Serial => true,
            Lanes::Avx2 => f.avx2(),
            Lanes::Ifma => f.ifma(),
            Lanes::Ifma4 => f.ifma_vl(),
        }
    }
}

impl Lanes {
    /// Every concrete width (not `Auto`).
    pub const CONCRETE: [Lanes; 4] = [Lanes::Serial, Lanes::Avx2, Lanes::Ifma, Lanes::Ifma4];

    /// `Auto` resolved to the widest width this CPU runs (8-lane IFMA, else AVX2, else
    /// serial); a concrete width as it is.
    pub fn resolve(&self) -> Lanes {
        self.resolve_on(CpuFeatures::get())
    }

    /// [`Lanes::resolve`] for a CPU with features `f`.
    pub fn resolve_on(&self, f: &CpuFeatures) -> Lanes {
        match self {
            Lanes::Auto if f.ifma() => Lanes::Ifma,
            Lanes::Auto if f.avx2() => Lanes::Avx2,
            Lanes::Auto => Lanes::Serial,
            l => *l,
        }
    }
}

impl std::str::FromStr for Lanes {
    type Err = String;
    fn from_str(s: &str) -> Result<Lanes, String> {
        Lanes::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| {
                format!("unknown backend '{s}' (expected auto, serial, avx2, ifma or ifma4)")
            })
    }
}

impl fmt::Display for Lanes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_auto_and_serial_run_everywhere() {
        let mut names: Vec<&str> = Lanes::ALL.iter().map(Lanes::name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Lanes::ALL.len());
        assert_eq!(Lanes::default(), Lanes::Auto);
        assert_eq!(Lanes::Ifma4.to_string(), "ifma4");
        let none = CpuFeatures::default();
        for l in Lanes::ALL {
            let here = matches!(l, Lanes::Auto | Lanes::Serial);
            assert_eq!(l.available_on(&none), here, "{l}");
        }
        for l in Lanes::ALL {
            assert_eq!(l.available(), l.available_on(CpuFeatures::get()), "{l}");
            assert_eq!(l.name().parse::<Lanes>(), Ok(l));
            let r = l.resolve_on(&none);
            assert_eq!(r, if l == Lanes::Auto { Lanes::Serial } else { l });
            assert!(
                l.resolve().available(),
                "{l} resolves to a width this CPU runs"
            );
        }
        assert!("avx512".parse::<Lanes>().is_err());
    }
}

//! The CPU's features and microarchitecture, detected once per process.
//!
//! [`CpuFeatures::get`] is the one detection of the process. The engine reads it and
//! passes it (or a narrower set) down: the CPU crates' `*_with` entry points take a
//! `&CpuFeatures` or a `Lanes` value and never probe the CPU themselves. What each lane
//! backend needs is stated here once ([`CpuFeatures::avx2`], [`CpuFeatures::ifma`],
//! [`CpuFeatures::ifma_vl`], [`CpuFeatures::adx`]).
//!
//! Soundness: the feature flags are private, so a `CpuFeatures` value can only claim
//! what this CPU has: it comes from detection ([`CpuFeatures::get`],
//! [`CpuFeatures::detect`]) or from removing features ([`CpuFeatures::none`],
//! [`CpuFeatures::limited_to`]). A crate that checks a kernel's needs against the value
//! it was given (`Lanes::available_on`) before entering `unsafe` SIMD code therefore
//! never executes an instruction the CPU lacks.
//!
//! The vendor, family and model come from CPUID leaves 0 and 1 (family = base family,
//! plus the extended family when the base is 15; model = base model, with the extended
//! model in its high nibble when the base family is 6 or 15), so a kernel can be chosen
//! per microarchitecture: AMD family 25 (Zen 3/Zen 4: Zen 4 runs 512-bit IFMA as two
//! 256-bit halves) and family 26 (Zen 5, full-width IFMA) are told apart by
//! [`CpuFeatures::microarch`].

use std::sync::OnceLock;

/// What the CPU offers, as the standard library's run-time detection and CPUID report.
/// The flags are private: a value never claims a feature this CPU lacks (see the module
/// note); `Default` is [`CpuFeatures::none`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuFeatures {
    /// AVX2.
    has_avx2: bool,
    /// AVX-512 Foundation.
    has_avx512f: bool,
    /// AVX-512 IFMA (52-bit multiply-add).
    has_avx512ifma: bool,
    /// AVX-512 DQ (64-bit multiply-low and conversions).
    has_avx512dq: bool,
    /// AVX-512 VL (the 128- and 256-bit forms).
    has_avx512vl: bool,
    /// BMI2 (`mulx`).
    has_bmi2: bool,
    /// ADX (`adcx`/`adox`).
    has_adx: bool,
    /// The CPUID vendor string (`AuthenticAMD`, `GenuineIntel`; empty off x86-64).
    pub vendor: String,
    /// The display family (0 off x86-64).
    pub family: u32,
    /// The display model (0 off x86-64).
    pub model: u32,
}

impl CpuFeatures {
    /// This CPU's features, detected at the first call and kept.
    pub fn get() -> &'static CpuFeatures {
        static DETECTED: OnceLock<CpuFeatures> = OnceLock::new();
        DETECTED.get_or_init(CpuFeatures::detect)
    }

    /// Probes the CPU now (use [`CpuFeatures::get`] for the kept result).
    pub fn detect() -> CpuFeatures {
        #[cfg(target_arch = "x86_64")]
        {
            let (vendor, family, model) = cpuid_identity();
            CpuFeatures {
                has_avx2: std::arch::is_x86_feature_detected!("avx2"),
                has_avx512f: std::arch::is_x86_feature_detected!("avx512f"),
                has_avx512ifma: std::arch::is_x86_feature_detected!("avx512ifma"),
                has_avx512dq: std::arch::is_x86_feature_detected!("avx512dq"),
                has_avx512vl: std::arch::is_x86_feature_detected!("avx512vl"),
                has_bmi2: std::arch::is_x86_feature_detected!("bmi2"),
                has_adx: std::arch::is_x86_feature_detected!("adx"),
                vendor,
                family,
                model,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            CpuFeatures::default()
        }
    }

    /// No feature beyond x86-64's (or any CPU's) base instructions: every kernel runs
    /// its portable, scalar form.
    pub fn none() -> CpuFeatures {
        CpuFeatures::default()
    }

    /// These features narrowed to what `lanes` needs (the scalar `mulx`/`adx` rows are
    /// kept for every width but `Serial`, which keeps nothing): how the engine passes a
    /// caller's lane choice down to crates that read features. `Auto` keeps all.
    pub fn limited_to(&self, lanes: crate::lanes::Lanes) -> CpuFeatures {
        use crate::lanes::Lanes;
        let mut f = self.clone();
        let (avx2, ifma, vl, adx) = match lanes {
            Lanes::Auto => (true, true, true, true),
            Lanes::Serial => (false, false, false, false),
            Lanes::Avx2 => (true, false, false, true),
            Lanes::Ifma => (true, true, false, true),
            Lanes::Ifma4 => (true, true, true, true),
        };
        f.has_avx2 &= avx2;
        f.has_avx512f &= ifma;
        f.has_avx512ifma &= ifma;
        f.has_avx512dq &= ifma;
        f.has_avx512vl &= vl;
        f.has_bmi2 &= adx;
        f.has_adx &= adx;
        f
    }

    /// AVX2: the 4-lane radix-2^25.5 field arithmetic.
    pub fn avx2(&self) -> bool {
        self.has_avx2
    }

    /// AVX-512 F, IFMA and DQ: the 8-lane (zmm) radix-2^51/2^52 arithmetic (DQ for the
    /// 64-bit multiply-low of the reductions).
    pub fn ifma(&self) -> bool {
        self.has_avx512f && self.has_avx512ifma && self.has_avx512dq
    }

    /// [`CpuFeatures::ifma`] plus AVX-512 VL: the 4-lane (ymm) forms of the IFMA
    /// arithmetic.
    pub fn ifma_vl(&self) -> bool {
        self.ifma() && self.has_avx512vl
    }

    /// AVX-512 F and IFMA alone: the big-integer and BLS12-377 IFMA products (they
    /// use no DQ instruction).
    pub fn ifma_products(&self) -> bool {
        self.has_avx512f && self.has_avx512ifma
    }

    /// BMI2 and ADX: the `mulx` rows with two carry chains.
    pub fn adx(&self) -> bool {
        self.has_bmi2 && self.has_adx
    }

    /// A short name for the microarchitecture class, where it decides a kernel:
    /// `zen5` (AMD family 26), `zen4` (AMD family 25 with AVX-512), `zen3` (AMD family
    /// 25 without), `amd-fFAMILY` for other AMD parts, `intel-avx512` / `intel` for
    /// Intel, `other` for the rest.
    pub fn microarch(&self) -> String {
        match (self.vendor.as_str(), self.family) {
            ("AuthenticAMD", 26) => "zen5".into(),
            ("AuthenticAMD", 25) if self.has_avx512f => "zen4".into(),
            ("AuthenticAMD", 25) => "zen3".into(),
            ("AuthenticAMD", f) => format!("amd-f{f}"),
            ("GenuineIntel", _) if self.has_avx512f => "intel-avx512".into(),
            ("GenuineIntel", _) => "intel".into(),
            _ => "other".into(),
        }
    }

    /// True where 512-bit IFMA instructions run at full width (one zmm multiply-add
    /// per cycle per port, not two 256-bit halves): Zen 5 and Intel's AVX-512 parts;
    /// false on Zen 4 and where there is no IFMA.
    pub fn full_width_ifma(&self) -> bool {
        self.ifma() && !(self.vendor == "AuthenticAMD" && self.family == 25)
    }
}

/// The vendor string and display family and model from CPUID leaves 0 and 1.
#[cfg(target_arch = "x86_64")]
fn cpuid_identity() -> (String, u32, u32) {
    // CPUID exists on every x86-64 processor; leaves 0 and 1 are always valid.
    let (l0, l1) = (
        core::arch::x86_64::__cpuid(0),
        core::arch::x86_64::__cpuid(1),
    );
    let mut vendor = Vec::with_capacity(12);
    for r in [l0.ebx, l0.edx, l0.ecx] {
        vendor.extend_from_slice(&r.to_le_bytes());
    }
    let vendor = String::from_utf8_lossy(&vendor).into_owned();
    let (family, model) = display_family_model(l1.eax);
    (vendor, family, model)
}

/// The display family and model of CPUID leaf 1's EAX.
pub fn display_family_model(eax: u32) -> (u32, u32) {
    let base_family = (eax >> 8) & 0xf;
    let base_model = (eax >> 4) & 0xf;
    let ext_family = (eax >> 20) & 0xff;
    let ext_model = (eax >> 16) & 0xf;
    let family = if base_family == 15 {
        base_family + ext_family
    } else {
        base_family
    };
    let model = if base_family == 6 || base_family == 15 {
        (ext_model << 4) | base_model
    } else {
        base_model
    };
    (family, model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_and_model_follow_the_cpuid_rules() {
        // AMD EPYC 9004 (Zen 4): family 0x19, model 0x11.
        assert_eq!(display_family_model(0x00a1_0f11), (25, 0x11));
        // AMD Zen 5: family 0x1a.
        assert_eq!(display_family_model(0x00b0_0f00), (26, 0));
        // Intel Sapphire Rapids: family 6, model 0x8f.
        assert_eq!(display_family_model(0x0008_06f8), (6, 0x8f));
        // Family below 15 ignores the extended family.
        assert_eq!(display_family_model(0x0ff0_0521), (5, 2));
    }

    #[test]
    fn detection_agrees_with_the_standard_library_and_proc() {
        let f = CpuFeatures::get();
        assert_eq!(f, &CpuFeatures::detect(), "detection is stable");
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(f.avx2(), std::arch::is_x86_feature_detected!("avx2"));
            assert!(!f.ifma_vl() || f.ifma());
            assert!(!f.ifma() || f.ifma_products());
            // Where /proc/cpuinfo is there, its family is ours.
            if let Ok(text) = crate::proc::read_cpuinfo() {
                let family = crate::proc::cpuinfo_field(&text, "cpu family")
                    .and_then(|v| v.parse::<u32>().ok());
                if let Some(family) = family {
                    assert_eq!(f.family, family);
                }
            }
        }
        assert!(!f.microarch().is_empty());
    }

    #[test]
    fn narrowing_never_adds_a_feature() {
        use crate::lanes::Lanes;
        let f = CpuFeatures::get();
        assert_eq!(&f.limited_to(Lanes::Auto), f);
        let none = f.limited_to(Lanes::Serial);
        assert!(!none.avx2() && !none.ifma_products() && !none.adx());
        assert_eq!(CpuFeatures::none().microarch(), "other");
        for l in Lanes::ALL {
            let n = f.limited_to(l);
            assert!(!n.avx2() || f.avx2(), "{l}");
            assert!(!n.ifma_products() || f.ifma_products(), "{l}");
            assert!(!n.ifma_vl() || f.ifma_vl(), "{l}");
            assert!(!n.adx() || f.adx(), "{l}");
            // The narrowed set still runs the lanes it was narrowed to, where f did.
            assert_eq!(l.available_on(&n), l.available_on(f), "{l}");
            // ... and no wider concrete lanes.
            assert!(l.resolve_on(&n).available_on(&n), "{l}");
        }
    }
}

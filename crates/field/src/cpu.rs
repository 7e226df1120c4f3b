//! Which instruction sets each lane backend of this crate needs, asked of the one
//! detection of the CPU ([`CpuFeatures`], in `wirespeed-util`; this crate and its users
//! never probe the CPU themselves).

pub use wirespeed_util::cpu::CpuFeatures;
/// The one description of the CPU's lane widths, for the crates above this one.
pub use wirespeed_util::lanes::Lanes;

/// AVX2: what [`crate::avx2`] needs.
pub fn has_avx2() -> bool {
    CpuFeatures::get().avx2()
}

/// AVX-512 F, IFMA and DQ: what [`crate::ifma`]'s 8-lane (zmm) arithmetic needs (DQ
/// for the 64-bit multiply-low of the reductions).
pub fn has_ifma() -> bool {
    CpuFeatures::get().ifma()
}

/// [`has_ifma`] plus AVX-512 VL: the 4-lane (ymm) forms of the IFMA arithmetic.
pub fn has_ifma_vl() -> bool {
    CpuFeatures::get().ifma_vl()
}

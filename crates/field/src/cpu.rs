//! Run-time CPU feature checks for the backends of this crate and its users: one place
//! that says which instruction sets each lane backend needs.

/// AVX2: what [`crate::avx2`] needs.
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// AVX-512 F, IFMA and DQ: what [`crate::ifma`]'s 8-lane (zmm) arithmetic needs (DQ
/// for the 64-bit multiply-low of the reductions).
pub fn has_ifma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
            && std::arch::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`has_ifma`] plus AVX-512 VL: the 4-lane (ymm) forms of the IFMA arithmetic.
pub fn has_ifma_vl() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_ifma() && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

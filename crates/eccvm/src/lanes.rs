//! The field backends the interpreter is instantiated on, and the run-time choice
//! between them (the workspace's [`Lanes`]).
//!
//! A backend is a GF(2^255-19) type holding N independent elements (N lanes, one input
//! set each) with the operations of docs/trace-format.md section 4 that touch field
//! elements. Limb bounds: the field crate's types accept reduced values everywhere, but
//! `add` there may return unreduced limbs that must not be added again
//! (`wirespeed_field::FieldOps`). The VM keeps every register reduced, so any register
//! can feed any instruction: its `add` reduces (a weak carry pass for [`Fe51`],
//! `a - (-b)` for [`Fe26x4`], whose `sub` accepts and returns reduced values; the IFMA
//! type's `add` already reduces).
//!
//! Booleans are lane masks in a `u8`: bit j is lane j's value.

use wirespeed_field::{Fe51, FieldOps};

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;
#[cfg(target_arch = "x86_64")]
use wirespeed_field::{avx2::Fe26x4, ifma::Fe51x8};

/// Which arithmetic runs the program: the workspace's one lane description. `Serial`
/// runs one input set at a time, radix 2^51 ([`Fe51`], always available); `Avx2` four
/// sets per AVX2 register (`wirespeed_field::avx2::Fe26x4`); `Ifma` eight sets per
/// AVX-512 register with the 52-bit IFMA multipliers (`wirespeed_field::ifma::Fe51x8`;
/// AVX-512F, IFMA and DQ); `Ifma4` runs as `Ifma` here (the interpreter has no 4-lane
/// IFMA form); `Auto` the widest the CPU features passed in support.
pub use wirespeed_field::cpu::Lanes;

/// N field elements, one per lane, every value reduced (see the module docs).
pub(crate) trait LaneField: Copy {
    /// Lanes.
    const N: usize;
    /// Packs exactly N elements, lane j = `v[j]`.
    ///
    /// # Safety
    /// The CPU must support the backend's instruction set.
    unsafe fn pack(v: &[Fe51]) -> Self;
    /// Writes the N lanes to `out` (exactly N elements).
    fn unpack(&self, out: &mut [Fe51]);
    /// self + b, reduced.
    fn add_r(&self, b: &Self) -> Self;
    /// self - b.
    fn sub_r(&self, b: &Self) -> Self;
    /// self * b.
    fn mul_r(&self, b: &Self) -> Self;
    /// self^2.
    fn sqr_r(&self) -> Self;
    /// -self.
    fn neg_r(&self) -> Self;
    /// Lane j of the result is lane j of `a` where bit j of `mask` is set, else of `b`.
    fn select(mask: u8, a: &Self, b: &Self) -> Self;
}

impl LaneField for Fe51 {
    const N: usize = 1;
    #[inline(always)]
    unsafe fn pack(v: &[Fe51]) -> Self {
        v[0]
    }
    #[inline(always)]
    fn unpack(&self, out: &mut [Fe51]) {
        out[0] = *self;
    }
    #[inline(always)]
    fn add_r(&self, b: &Self) -> Self {
        FieldOps::add(self, b).weak_reduce()
    }
    #[inline(always)]
    fn sub_r(&self, b: &Self) -> Self {
        FieldOps::sub(self, b)
    }
    #[inline(always)]
    fn mul_r(&self, b: &Self) -> Self {
        FieldOps::mul(self, b)
    }
    #[inline(always)]
    fn sqr_r(&self) -> Self {
        self.square()
    }
    #[inline(always)]
    fn neg_r(&self) -> Self {
        FieldOps::neg(self)
    }
    #[inline(always)]
    fn select(mask: u8, a: &Self, b: &Self) -> Self {
        if mask & 1 == 1 {
            *a
        } else {
            *b
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl LaneField for Fe26x4 {
    const N: usize = 4;
    #[inline(always)]
    unsafe fn pack(v: &[Fe51]) -> Self {
        // SAFETY: forwarded contract (AVX2).
        unsafe { Fe26x4::pack(v) }
    }
    #[inline(always)]
    fn unpack(&self, out: &mut [Fe51]) {
        self.unpack_into(out)
    }
    #[inline(always)]
    fn add_r(&self, b: &Self) -> Self {
        // a - (-b): `neg` returns a reduced value and `sub` takes a reduced subtrahend
        // and returns a reduced difference, unlike `add`.
        FieldOps::sub(self, &FieldOps::neg(b))
    }
    #[inline(always)]
    fn sub_r(&self, b: &Self) -> Self {
        FieldOps::sub(self, b)
    }
    #[inline(always)]
    fn mul_r(&self, b: &Self) -> Self {
        FieldOps::mul(self, b)
    }
    #[inline(always)]
    fn sqr_r(&self) -> Self {
        self.square()
    }
    #[inline(always)]
    fn neg_r(&self) -> Self {
        FieldOps::neg(self)
    }
    #[inline(always)]
    fn select(mask: u8, a: &Self, b: &Self) -> Self {
        let bit = |j: u8| -(((mask >> j) & 1) as i64);
        let mut r = b.0;
        // SAFETY: a Fe26x4 exists only on a CPU with AVX2 (the type's safety model).
        unsafe {
            let m = _mm256_set_epi64x(bit(3), bit(2), bit(1), bit(0));
            for i in 0..10 {
                r[i] = _mm256_blendv_epi8(b.0[i], a.0[i], m);
            }
        }
        Fe26x4(r)
    }
}

#[cfg(target_arch = "x86_64")]
impl LaneField for Fe51x8 {
    const N: usize = 8;
    #[inline(always)]
    unsafe fn pack(v: &[Fe51]) -> Self {
        // SAFETY: forwarded contract (AVX-512F, IFMA, DQ).
        unsafe { Fe51x8::pack(v) }
    }
    #[inline(always)]
    fn unpack(&self, out: &mut [Fe51]) {
        self.unpack_into(out)
    }
    #[inline(always)]
    fn add_r(&self, b: &Self) -> Self {
        // The IFMA type's `add` carries: its result is reduced.
        FieldOps::add(self, b)
    }
    #[inline(always)]
    fn sub_r(&self, b: &Self) -> Self {
        FieldOps::sub(self, b)
    }
    #[inline(always)]
    fn mul_r(&self, b: &Self) -> Self {
        FieldOps::mul(self, b)
    }
    #[inline(always)]
    fn sqr_r(&self) -> Self {
        self.square()
    }
    #[inline(always)]
    fn neg_r(&self) -> Self {
        FieldOps::neg(self)
    }
    #[inline(always)]
    fn select(mask: u8, a: &Self, b: &Self) -> Self {
        let mut r = b.0;
        // SAFETY: a Fe51x8 exists only on a CPU with AVX-512F (the type's safety model).
        unsafe {
            for i in 0..5 {
                r[i] = _mm512_mask_blend_epi64(mask, b.0[i], a.0[i]);
            }
        }
        wirespeed_field::ifma::Fe51v(r)
    }
}

//! GF(2^255-19) in the lanes of AVX-512 IFMA registers: [`Fe51x8`] (zmm, eight lanes)
//! and [`Fe51x4`] (ymm, four lanes, needs AVX-512VL) hold independent field elements,
//! one per 64-bit lane (one per signature, or one per product in single verification),
//! each in five radix-2^51 limbs; limb i of all lanes lives in one vector. One generic
//! implementation, [`Fe51v`], serves both widths through [`IfmaVec`].
//!
//! Products use `vpmadd52luq`/`vpmadd52huq`, which multiply the low 52 bits of each lane
//! and add the low or high 52 bits of the 104-bit product to an accumulator. In radix
//! 2^51 the high half of a_i b_j weighs 2^52 = 2 * 2^51 at column i+j, so column k sums
//! lo(i+j=k) + 2 hi(i+j=k-1), and columns 5..9 fold into 0..4 times 19 (2^255 = 19).
//! The same layout as curve25519-dalek's IFMA backend (de Valence, "Accelerating
//! Edwards curve arithmetic with parallel formulas", 2018), written independently; the
//! column lists were produced mechanically by a script (see docs/field-arithmetic.md).
//!
//! Limb bounds (per lane):
//! - reduced: every limb < 2^51 + 2^17, in particular < 2^52, which is what the IFMA
//!   multiplier requires of its inputs (it ignores bits 52..63). Every operation,
//!   `add` included, returns reduced limbs, so any output can feed any input.
//! - inside `mul`: lo and hi column sums are each < 5 * 2^52, so c_k < 15 * 2^52 < 2^56,
//!   c_k + 19 c_(k+5) < 2^61, and one parallel carry pass leaves limbs < 2^51 + 2^15.
//! - `add`/`sub`/`neg` sums are < 2^56 before their parallel carry pass.
//!
//! Multiplying by 19 (fold and carry) uses one `vpmullq` (AVX-512DQ) instead of two
//! shifts and two adds: measured faster on AMD Zen 4, where it is a single operation
//! (BENCHMARKS.md); on Intel cores it is three, and the shift form would be the choice.
//!
//! Safety model: as in [`crate::avx2`], a value can only be created by the `unsafe`
//! constructors, whose contract is that the CPU has the instruction sets of its width
//! (AVX-512F + IFMA + DQ for zmm; additionally AVX-512VL for ymm).

use core::arch::x86_64::*;
use core::fmt::Debug;

use crate::{Fe51, FieldOps};

/// One SIMD register width usable by [`Fe51v`]. Every method needs the width's
/// instruction sets; callers guarantee them through the constructors of [`Fe51v`].
pub trait IfmaVec: Copy + Debug + Send + Sync + 'static {
    /// 64-bit lanes per register.
    const LANES: usize;
    /// All lanes = v.
    fn splat(v: u64) -> Self;
    /// acc + low 52 bits of a*b (low 52 bits of a and b).
    fn madd_lo(acc: Self, a: Self, b: Self) -> Self;
    /// acc + high 52 bits of a*b.
    fn madd_hi(acc: Self, a: Self, b: Self) -> Self;
    /// Lane-wise a + b.
    fn add(a: Self, b: Self) -> Self;
    /// Lane-wise a - b.
    fn sub(a: Self, b: Self) -> Self;
    /// Lane-wise a & b.
    fn and(a: Self, b: Self) -> Self;
    /// Lane-wise a >> 51.
    fn shr51(a: Self) -> Self;
    /// Lane-wise 19 a.
    fn mul19(a: Self) -> Self;
    /// Lane-wise a << 1.
    fn shl1(a: Self) -> Self;
    /// Lane-wise a << 4.
    fn shl4(a: Self) -> Self;
    /// Loads LANES u64 from `src` (length >= LANES).
    fn load(src: &[u64]) -> Self;
    /// Stores LANES u64 to `dst` (length >= LANES).
    fn store(self, dst: &mut [u64]);
    /// Lane j = base[idx[j]]; the caller guarantees every index is in bounds.
    ///
    /// # Safety
    /// Every lane of `idx` must index inside the allocation `base` points into.
    unsafe fn gather(base: *const i64, idx: Self) -> Self;
}

macro_rules! ifma_vec {
    ($v:ty, $lanes:expr, $madd_lo:ident, $madd_hi:ident, $add:ident, $sub:ident, $and:ident,
     $srli:ident, $slli:ident, $set1:ident, $loadu:ident, $storeu:ident, $gather:ident, $mullo:ident) => {
        // SAFETY (every block below): values of this type reach these methods only through
        // `Fe51v`, whose constructors require the width's instruction sets (module docs).
        impl IfmaVec for $v {
            const LANES: usize = $lanes;
            #[inline(always)]
            fn splat(v: u64) -> Self {
                // SAFETY: see above.
                unsafe { $set1(v as i64) }
            }
            #[inline(always)]
            fn madd_lo(acc: Self, a: Self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { $madd_lo(acc, a, b) }
            }
            #[inline(always)]
            fn madd_hi(acc: Self, a: Self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { $madd_hi(acc, a, b) }
            }
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { $add(a, b) }
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { $sub(a, b) }
            }
            #[inline(always)]
            fn and(a: Self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { $and(a, b) }
            }
            #[inline(always)]
            fn shr51(a: Self) -> Self {
                // SAFETY: see above.
                unsafe { $srli::<51>(a) }
            }
            #[inline(always)]
            fn mul19(a: Self) -> Self {
                // SAFETY: see above.
                unsafe { $mullo(a, $set1(19)) }
            }
            #[inline(always)]
            fn shl1(a: Self) -> Self {
                // SAFETY: see above.
                unsafe { $slli::<1>(a) }
            }
            #[inline(always)]
            fn shl4(a: Self) -> Self {
                // SAFETY: see above.
                unsafe { $slli::<4>(a) }
            }
            #[inline(always)]
            fn load(src: &[u64]) -> Self {
                assert!(src.len() >= $lanes);
                // SAFETY: see above; `src` holds at least LANES u64 (checked).
                unsafe { $loadu(src.as_ptr() as *const _) }
            }
            #[inline(always)]
            fn store(self, dst: &mut [u64]) {
                assert!(dst.len() >= $lanes);
                // SAFETY: see above; `dst` holds at least LANES u64 (checked).
                unsafe { $storeu(dst.as_mut_ptr() as *mut _, self) }
            }
            #[inline(always)]
            unsafe fn gather(base: *const i64, idx: Self) -> Self {
                // SAFETY: see above; indices in bounds (caller's contract).
                unsafe { $gather(base, idx) }
            }
        }
    };
}

/// # Safety
/// AVX-512F present; every lane of `idx` indexes inside `base`'s allocation.
#[inline(always)]
unsafe fn gather512(base: *const i64, idx: __m512i) -> __m512i {
    // SAFETY: forwarded contract.
    unsafe { _mm512_i64gather_epi64::<8>(idx, base) }
}

/// # Safety
/// AVX2 present; every lane of `idx` indexes inside `base`'s allocation.
#[inline(always)]
unsafe fn gather256(base: *const i64, idx: __m256i) -> __m256i {
    // SAFETY: forwarded contract.
    unsafe { _mm256_i64gather_epi64::<8>(base, idx) }
}

ifma_vec!(
    __m512i,
    8,
    _mm512_madd52lo_epu64,
    _mm512_madd52hi_epu64,
    _mm512_add_epi64,
    _mm512_sub_epi64,
    _mm512_and_si512,
    _mm512_srli_epi64,
    _mm512_slli_epi64,
    _mm512_set1_epi64,
    _mm512_loadu_si512,
    _mm512_storeu_si512,
    gather512,
    _mm512_mullo_epi64
);
ifma_vec!(
    __m256i,
    4,
    _mm256_madd52lo_epu64,
    _mm256_madd52hi_epu64,
    _mm256_add_epi64,
    _mm256_sub_epi64,
    _mm256_and_si256,
    _mm256_srli_epi64,
    _mm256_slli_epi64,
    _mm256_set1_epi64x,
    _mm256_loadu_si256,
    _mm256_storeu_si256,
    gather256,
    _mm256_mullo_epi64
);

/// Field elements in the lanes of an IFMA register (see module docs).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Fe51v<V>(pub [V; 5]);

/// Eight elements in zmm registers (AVX-512F + AVX-512 IFMA).
pub type Fe51x8 = Fe51v<__m512i>;
/// Four elements in ymm registers (AVX-512 IFMA + AVX-512VL).
pub type Fe51x4 = Fe51v<__m256i>;

const MASK51: u64 = (1 << 51) - 1;

#[inline(always)]
fn lo52<V: IfmaVec>(acc: V, a: V, b: V) -> V {
    V::madd_lo(acc, a, b)
}

#[inline(always)]
fn hi52<V: IfmaVec>(acc: V, a: V, b: V) -> V {
    V::madd_hi(acc, a, b)
}

#[inline(always)]
fn add<V: IfmaVec>(a: V, b: V) -> V {
    V::add(a, b)
}

#[inline(always)]
fn times19<V: IfmaVec>(a: V) -> V {
    V::mul19(a)
}

/// One parallel carry pass over five sums (each < 2^62): limb i keeps its low 51 bits
/// and receives the carry of limb i-1 (limb 0 receives 19 times the carry of limb 4).
#[inline(always)]
fn carry<V: IfmaVec>(c: [V; 5]) -> Fe51v<V> {
    let m = V::splat(MASK51);
    let k0 = V::shr51(c[0]);
    let k1 = V::shr51(c[1]);
    let k2 = V::shr51(c[2]);
    let k3 = V::shr51(c[3]);
    let k4 = V::shr51(c[4]);
    Fe51v([
        add(V::and(c[0], m), times19(k4)),
        add(V::and(c[1], m), k0),
        add(V::and(c[2], m), k1),
        add(V::and(c[3], m), k2),
        add(V::and(c[4], m), k3),
    ])
}

/// Combines columns c_k = lo_k + 2 hi_k (k = 0..9), folds 5..9 onto 0..4, carries.
#[inline(always)]
fn fold<V: IfmaVec>(lo: [V; 10], hi: [V; 10]) -> Fe51v<V> {
    let mut c = lo;
    for k in 0..10 {
        c[k] = add(lo[k], V::shl1(hi[k]));
    }
    carry([
        add(c[0], times19(c[5])),
        add(c[1], times19(c[6])),
        add(c[2], times19(c[7])),
        add(c[3], times19(c[8])),
        add(c[4], times19(c[9])),
    ])
}

impl<V: IfmaVec> Fe51v<V> {
    /// Packs `V::LANES` elements, lane j = `v[j]`.
    ///
    /// # Safety
    /// The CPU must support the instruction sets of this width (module docs).
    #[inline(always)]
    pub unsafe fn pack(v: &[Fe51]) -> Self {
        assert!(v.len() == V::LANES);
        let mut limbs = [[0u64; 8]; 5];
        for (j, fe) in v.iter().enumerate() {
            let r = fe.weak_reduce();
            for i in 0..5 {
                limbs[i][j] = r.0[i];
            }
        }
        let mut out = [V::splat(0); 5];
        for i in 0..5 {
            out[i] = V::load(&limbs[i]);
        }
        Fe51v(out)
    }

    /// Writes the lanes to `out` (exactly `V::LANES` elements).
    #[inline(always)]
    pub fn unpack_into(&self, out: &mut [Fe51]) {
        assert!(out.len() == V::LANES);
        let mut limbs = [[0u64; 8]; 5];
        for i in 0..5 {
            self.0[i].store(&mut limbs[i]);
        }
        for (j, fe) in out.iter_mut().enumerate() {
            *fe = Fe51([
                limbs[0][j],
                limbs[1][j],
                limbs[2][j],
                limbs[3][j],
                limbs[4][j],
            ])
            .weak_reduce();
        }
    }

    /// Per-lane table lookup: lane j of the result is lane j of `table[idx[j]]`
    /// (`idx` has `V::LANES` entries, each bounds-checked).
    #[inline(always)]
    pub fn select(table: &[Self], idx: &[usize]) -> Self {
        assert!(
            idx.len() == V::LANES && idx.iter().all(|&i| i < table.len()),
            "lane table index out of range"
        );
        let stride = 5 * V::LANES;
        let mut base = [0u64; 8];
        for j in 0..V::LANES {
            base[j] = (idx[j] * stride + j) as u64;
        }
        let ptr = table.as_ptr() as *const i64;
        let step = V::splat(V::LANES as u64);
        let mut vi = V::load(&base);
        let mut out = [V::splat(0); 5];
        for limb in out.iter_mut() {
            // SAFETY: every address is entry*stride + limb*LANES + lane, below
            // table.len()*stride u64s from the start (indices checked above).
            *limb = unsafe { V::gather(ptr, vi) };
            vi = V::add(vi, step);
        }
        Fe51v(out)
    }
}

/// 16p per limb: the bias added before subtracting (any reduced subtrahend fits).
const SIXTEEN_P: [u64; 5] = [
    16 * (MASK51 - 18),
    16 * MASK51,
    16 * MASK51,
    16 * MASK51,
    16 * MASK51,
];

impl<V: IfmaVec> FieldOps for Fe51v<V> {
    #[inline(always)]
    fn add(&self, b: &Self) -> Self {
        let (a, b) = (&self.0, &b.0);
        carry([
            add(a[0], b[0]),
            add(a[1], b[1]),
            add(a[2], b[2]),
            add(a[3], b[3]),
            add(a[4], b[4]),
        ])
    }

    #[inline(always)]
    fn sub(&self, b: &Self) -> Self {
        let mut r = self.0;
        for i in 0..5 {
            r[i] = V::sub(add(r[i], V::splat(SIXTEEN_P[i])), b.0[i]);
        }
        carry(r)
    }

    #[inline(always)]
    fn neg(&self) -> Self {
        let mut r = self.0;
        for i in 0..5 {
            r[i] = V::sub(V::splat(SIXTEEN_P[i]), r[i]);
        }
        carry(r)
    }

    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        let a = &self.0;
        let b = &rhs.0;
        let z = V::splat(0);
        let lo0 = lo52(z, a[0], b[0]);
        let hi0 = z;
        let lo1 = lo52(lo52(z, a[0], b[1]), a[1], b[0]);
        let hi1 = hi52(z, a[0], b[0]);
        let lo2 = lo52(lo52(lo52(z, a[0], b[2]), a[1], b[1]), a[2], b[0]);
        let hi2 = hi52(hi52(z, a[0], b[1]), a[1], b[0]);
        let lo3 = lo52(
            lo52(lo52(lo52(z, a[0], b[3]), a[1], b[2]), a[2], b[1]),
            a[3],
            b[0],
        );
        let hi3 = hi52(hi52(hi52(z, a[0], b[2]), a[1], b[1]), a[2], b[0]);
        let lo4 = lo52(
            lo52(
                lo52(lo52(lo52(z, a[0], b[4]), a[1], b[3]), a[2], b[2]),
                a[3],
                b[1],
            ),
            a[4],
            b[0],
        );
        let hi4 = hi52(
            hi52(hi52(hi52(z, a[0], b[3]), a[1], b[2]), a[2], b[1]),
            a[3],
            b[0],
        );
        let lo5 = lo52(
            lo52(lo52(lo52(z, a[1], b[4]), a[2], b[3]), a[3], b[2]),
            a[4],
            b[1],
        );
        let hi5 = hi52(
            hi52(
                hi52(hi52(hi52(z, a[0], b[4]), a[1], b[3]), a[2], b[2]),
                a[3],
                b[1],
            ),
            a[4],
            b[0],
        );
        let lo6 = lo52(lo52(lo52(z, a[2], b[4]), a[3], b[3]), a[4], b[2]);
        let hi6 = hi52(
            hi52(hi52(hi52(z, a[1], b[4]), a[2], b[3]), a[3], b[2]),
            a[4],
            b[1],
        );
        let lo7 = lo52(lo52(z, a[3], b[4]), a[4], b[3]);
        let hi7 = hi52(hi52(hi52(z, a[2], b[4]), a[3], b[3]), a[4], b[2]);
        let lo8 = lo52(z, a[4], b[4]);
        let hi8 = hi52(hi52(z, a[3], b[4]), a[4], b[3]);
        let lo9 = z;
        let hi9 = hi52(z, a[4], b[4]);
        fold(
            [lo0, lo1, lo2, lo3, lo4, lo5, lo6, lo7, lo8, lo9],
            [hi0, hi1, hi2, hi3, hi4, hi5, hi6, hi7, hi8, hi9],
        )
    }

    #[inline(always)]
    fn square(&self) -> Self {
        let a = &self.0;
        let z = V::splat(0);
        let lo0 = lo52(z, a[0], a[0]);
        let lo1 = add(lo52(z, a[0], a[1]), lo52(z, a[0], a[1]));
        let lo2 = add(
            add(lo52(z, a[0], a[2]), lo52(z, a[0], a[2])),
            lo52(z, a[1], a[1]),
        );
        let lo3 = add(
            lo52(lo52(z, a[0], a[3]), a[1], a[2]),
            lo52(lo52(z, a[0], a[3]), a[1], a[2]),
        );
        let lo4 = add(
            add(
                lo52(lo52(z, a[0], a[4]), a[1], a[3]),
                lo52(lo52(z, a[0], a[4]), a[1], a[3]),
            ),
            lo52(z, a[2], a[2]),
        );
        let lo5 = add(
            lo52(lo52(z, a[1], a[4]), a[2], a[3]),
            lo52(lo52(z, a[1], a[4]), a[2], a[3]),
        );
        let lo6 = add(
            add(lo52(z, a[2], a[4]), lo52(z, a[2], a[4])),
            lo52(z, a[3], a[3]),
        );
        let lo7 = add(lo52(z, a[3], a[4]), lo52(z, a[3], a[4]));
        let lo8 = lo52(z, a[4], a[4]);
        let lo9 = z;
        let hi0 = z;
        let hi1 = hi52(z, a[0], a[0]);
        let hi2 = add(hi52(z, a[0], a[1]), hi52(z, a[0], a[1]));
        let hi3 = add(
            add(hi52(z, a[0], a[2]), hi52(z, a[0], a[2])),
            hi52(z, a[1], a[1]),
        );
        let hi4 = add(
            hi52(hi52(z, a[0], a[3]), a[1], a[2]),
            hi52(hi52(z, a[0], a[3]), a[1], a[2]),
        );
        let hi5 = add(
            add(
                hi52(hi52(z, a[0], a[4]), a[1], a[3]),
                hi52(hi52(z, a[0], a[4]), a[1], a[3]),
            ),
            hi52(z, a[2], a[2]),
        );
        let hi6 = add(
            hi52(hi52(z, a[1], a[4]), a[2], a[3]),
            hi52(hi52(z, a[1], a[4]), a[2], a[3]),
        );
        let hi7 = add(
            add(hi52(z, a[2], a[4]), hi52(z, a[2], a[4])),
            hi52(z, a[3], a[3]),
        );
        let hi8 = add(hi52(z, a[3], a[4]), hi52(z, a[3], a[4]));
        let hi9 = hi52(z, a[4], a[4]);
        fold(
            [lo0, lo1, lo2, lo3, lo4, lo5, lo6, lo7, lo8, lo9],
            [hi0, hi1, hi2, hi3, hi4, hi5, hi6, hi7, hi8, hi9],
        )
    }
}

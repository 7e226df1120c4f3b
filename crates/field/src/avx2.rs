//! GF(2^255-19) four lanes at a time with AVX2: [`Fe26x4`] holds four independent field
//! elements (one per 64-bit lane, so one per signature), each in ten limbs of radix
//! 2^25.5 (limb i carries 26 bits for even i and 25 bits for odd i, at bit position
//! ceil(25.5 i)). Limb i of all four lanes lives in one `__m256i`.
//!
//! Products use `vpmuludq` (32x32 -> 64 bits per lane). Column sums follow ref10's
//! `fe_mul`/`fe_sq` (Bernstein et al., "High-speed high-security signatures", 2011): a
//! product of two odd limbs is doubled, a product that wraps past 2^255 is multiplied by
//! 19. The term lists were produced mechanically by a script (see docs/field-arithmetic.md).
//!
//! Limb bounds (per lane):
//! - reduced: even limbs < 2^26, odd limbs < 2^25 + 2^17 (outputs of `mul`, `square`, `sub`,
//!   `neg`, and of `pack`).
//! - `mul` accepts the sum of up to three reduced values (even limbs < 2^27.6, odd < 2^26.6):
//!   then 19 g_j < 2^32 fits a 32-bit multiplier input and every column sum is < 2^62.2.
//! - `square` accepts the sum of up to two reduced values (columns < 2^62).
//! - `sub` accepts a subtrahend of up to two reduced values (it adds 4p first).
//! - `add` does not reduce.
//!
//! The point formulas never exceed these (see crates/ed25519/src/point.rs).
//!
//! Safety model: every intrinsic here needs AVX2. A `Fe26x4` can only be created by the
//! `unsafe` constructors, whose contract is that the CPU supports AVX2; every safe method
//! takes a `Fe26x4` and so runs only on such a CPU.

use core::arch::x86_64::*;

use crate::{Fe51, FieldOps};

/// Four field elements, one per lane (see module docs).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub struct Fe26x4(pub [__m256i; 10]);

const MASK26: u64 = (1 << 26) - 1;
const MASK25: u64 = (1 << 25) - 1;

#[inline(always)]
fn mul32(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: only reachable through Fe26x4 methods, which exist only on AVX2 CPUs.
    unsafe { _mm256_mul_epu32(a, b) }
}

#[inline(always)]
fn add64(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: as for `mul32`.
    unsafe { _mm256_add_epi64(a, b) }
}

#[inline(always)]
fn sub64(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: as for `mul32`.
    unsafe { _mm256_sub_epi64(a, b) }
}

#[inline(always)]
fn splat(v: u64) -> __m256i {
    // SAFETY: as for `mul32`.
    unsafe { _mm256_set1_epi64x(v as i64) }
}

#[inline(always)]
fn shr(a: __m256i, n: i32) -> __m256i {
    // SAFETY: as for `mul32`. The shift count is 25 or 26.
    unsafe {
        if n == 26 {
            _mm256_srli_epi64(a, 26)
        } else {
            _mm256_srli_epi64(a, 25)
        }
    }
}

#[inline(always)]
fn and(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: as for `mul32`.
    unsafe { _mm256_and_si256(a, b) }
}

#[inline(always)]
fn times19(a: __m256i) -> __m256i {
    // 19 a = 16 a + 2 a + a; a < 2^59 so nothing overflows.
    // SAFETY: as for `mul32`.
    unsafe { add64(add64(_mm256_slli_epi64(a, 4), _mm256_slli_epi64(a, 1)), a) }
}

/// Carries ten 64-bit column sums (each < 2^63) down to reduced limbs, in ref10's
/// interleaved order (two chains, half the latency of one).
#[inline(always)]
fn carry(mut h: [__m256i; 10]) -> Fe26x4 {
    let m26 = splat(MASK26);
    let m25 = splat(MASK25);
    macro_rules! c {
        ($i:expr, $bits:expr, $m:expr) => {{
            let c = shr(h[$i], $bits);
            h[$i + 1] = add64(h[$i + 1], c);
            h[$i] = and(h[$i], $m);
        }};
    }
    c!(0, 26, m26);
    c!(4, 26, m26);
    c!(1, 25, m25);
    c!(5, 25, m25);
    c!(2, 26, m26);
    c!(6, 26, m26);
    c!(3, 25, m25);
    c!(7, 25, m25);
    c!(4, 26, m26);
    c!(8, 26, m26);
    let c9 = shr(h[9], 25);
    h[9] = and(h[9], m25);
    h[0] = add64(h[0], times19(c9));
    c!(0, 26, m26);
    Fe26x4(h)
}

impl Fe26x4 {
    /// Packs four elements, lane j = `v[j]`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline(always)]
    pub unsafe fn pack(v: &[Fe51]) -> Fe26x4 {
        assert!(v.len() == 4);
        let r = [
            v[0].weak_reduce(),
            v[1].weak_reduce(),
            v[2].weak_reduce(),
            v[3].weak_reduce(),
        ];
        let mut limbs = [[0u64; 4]; 10];
        for (j, fe) in r.iter().enumerate() {
            for i in 0..5 {
                limbs[2 * i][j] = fe.0[i] & MASK26;
                limbs[2 * i + 1][j] = fe.0[i] >> 26;
            }
        }
        let mut out = [splat(0); 10];
        for i in 0..10 {
            // SAFETY: AVX2 is present (caller's contract); unaligned load of 4 u64.
            out[i] = unsafe { _mm256_loadu_si256(limbs[i].as_ptr() as *const __m256i) };
        }
        Fe26x4(out)
    }

    /// The same element in every lane.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline(always)]
    pub unsafe fn splat(v: &Fe51) -> Fe26x4 {
        // SAFETY: forwarded contract.
        unsafe { Fe26x4::pack(&[*v; 4]) }
    }

    /// Unpacks the four lanes.
    #[inline(always)]
    pub fn unpack(&self) -> [Fe51; 4] {
        let mut limbs = [[0u64; 4]; 10];
        for i in 0..10 {
            // SAFETY: AVX2 is present (type invariant); unaligned store of 4 u64.
            unsafe { _mm256_storeu_si256(limbs[i].as_mut_ptr() as *mut __m256i, self.0[i]) };
        }
        let mut out = [Fe51::ZERO; 4];
        for (j, fe) in out.iter_mut().enumerate() {
            let mut l = [0u64; 5];
            for i in 0..5 {
                l[i] = limbs[2 * i][j] + (limbs[2 * i + 1][j] << 26);
            }
            *fe = Fe51(l).weak_reduce();
        }
        out
    }

    /// Writes the four lanes to `out` (exactly four elements).
    #[inline(always)]
    pub fn unpack_into(&self, out: &mut [Fe51]) {
        out.copy_from_slice(&self.unpack());
    }

    /// Per-lane table lookup: lane j of the result is lane j of `table[idx[j]]`.
    /// Indices are bounds-checked.
    #[inline(always)]
    pub fn select(table: &[Fe26x4], idx: &[usize]) -> Fe26x4 {
        assert!(idx.len() == 4);
        assert!(
            idx.iter().all(|&i| i < table.len()),
            "lane table index out of range"
        );
        // Offsets in u64 units from the table start: entry * 40 + limb * 4 + lane.
        let base = [
            (idx[0] * 40) as i64,
            (idx[1] * 40 + 1) as i64,
            (idx[2] * 40 + 2) as i64,
            (idx[3] * 40 + 3) as i64,
        ];
        let ptr = table.as_ptr() as *const i64;
        let mut out = [splat(0); 10];
        // SAFETY: AVX2 is present (type invariant); every gathered address is
        // entry*40 + limb*4 + lane < table.len()*40 u64s from the start, in bounds.
        unsafe {
            let mut vi = _mm256_loadu_si256(base.as_ptr() as *const __m256i);
            let four = _mm256_set1_epi64x(4);
            for limb in out.iter_mut() {
                *limb = _mm256_i64gather_epi64::<8>(ptr, vi);
                vi = _mm256_add_epi64(vi, four);
            }
        }
        Fe26x4(out)
    }
}

/// 4p in radix 2^25.5, per limb: the bias added before subtracting.
const FOUR_P: [u64; 10] = [
    4 * (MASK26 - 18),
    4 * MASK25,
    4 * MASK26,
    4 * MASK25,
    4 * MASK26,
    4 * MASK25,
    4 * MASK26,
    4 * MASK25,
    4 * MASK26,
    4 * MASK25,
];

impl FieldOps for Fe26x4 {
    #[inline(always)]
    fn add(&self, b: &Fe26x4) -> Fe26x4 {
        let mut r = self.0;
        for i in 0..10 {
            r[i] = add64(r[i], b.0[i]);
        }
        Fe26x4(r)
    }

    #[inline(always)]
    fn sub(&self, b: &Fe26x4) -> Fe26x4 {
        let mut r = self.0;
        for i in 0..10 {
            r[i] = sub64(add64(r[i], splat(FOUR_P[i])), b.0[i]);
        }
        carry(r)
    }

    #[inline(always)]
    fn neg(&self) -> Fe26x4 {
        let mut r = self.0;
        for i in 0..10 {
            r[i] = sub64(splat(FOUR_P[i]), r[i]);
        }
        carry(r)
    }

    #[inline(always)]
    fn mul(&self, rhs: &Fe26x4) -> Fe26x4 {
        let f = &self.0;
        let g = &rhs.0;
        let mut g19 = [splat(0); 10];
        for j in 1..10 {
            g19[j] = times19(g[j]);
        }
        let mut f2 = [splat(0); 10];
        for i in (1..10).step_by(2) {
            f2[i] = add64(f[i], f[i]);
        }
        let h0 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[0]), mul32(f2[1], g19[9])),
                    add64(mul32(f[2], g19[8]), mul32(f2[3], g19[7])),
                ),
                add64(
                    add64(mul32(f[4], g19[6]), mul32(f2[5], g19[5])),
                    add64(mul32(f[6], g19[4]), mul32(f2[7], g19[3])),
                ),
            ),
            add64(mul32(f[8], g19[2]), mul32(f2[9], g19[1])),
        );
        let h1 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[1]), mul32(f[1], g[0])),
                    add64(mul32(f[2], g19[9]), mul32(f[3], g19[8])),
                ),
                add64(
                    add64(mul32(f[4], g19[7]), mul32(f[5], g19[6])),
                    add64(mul32(f[6], g19[5]), mul32(f[7], g19[4])),
                ),
            ),
            add64(mul32(f[8], g19[3]), mul32(f[9], g19[2])),
        );
        let h2 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[2]), mul32(f2[1], g[1])),
                    add64(mul32(f[2], g[0]), mul32(f2[3], g19[9])),
                ),
                add64(
                    add64(mul32(f[4], g19[8]), mul32(f2[5], g19[7])),
                    add64(mul32(f[6], g19[6]), mul32(f2[7], g19[5])),
                ),
            ),
            add64(mul32(f[8], g19[4]), mul32(f2[9], g19[3])),
        );
        let h3 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[3]), mul32(f[1], g[2])),
                    add64(mul32(f[2], g[1]), mul32(f[3], g[0])),
                ),
                add64(
                    add64(mul32(f[4], g19[9]), mul32(f[5], g19[8])),
                    add64(mul32(f[6], g19[7]), mul32(f[7], g19[6])),
                ),
            ),
            add64(mul32(f[8], g19[5]), mul32(f[9], g19[4])),
        );
        let h4 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[4]), mul32(f2[1], g[3])),
                    add64(mul32(f[2], g[2]), mul32(f2[3], g[1])),
                ),
                add64(
                    add64(mul32(f[4], g[0]), mul32(f2[5], g19[9])),
                    add64(mul32(f[6], g19[8]), mul32(f2[7], g19[7])),
                ),
            ),
            add64(mul32(f[8], g19[6]), mul32(f2[9], g19[5])),
        );
        let h5 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[5]), mul32(f[1], g[4])),
                    add64(mul32(f[2], g[3]), mul32(f[3], g[2])),
                ),
                add64(
                    add64(mul32(f[4], g[1]), mul32(f[5], g[0])),
                    add64(mul32(f[6], g19[9]), mul32(f[7], g19[8])),
                ),
            ),
            add64(mul32(f[8], g19[7]), mul32(f[9], g19[6])),
        );
        let h6 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[6]), mul32(f2[1], g[5])),
                    add64(mul32(f[2], g[4]), mul32(f2[3], g[3])),
                ),
                add64(
                    add64(mul32(f[4], g[2]), mul32(f2[5], g[1])),
                    add64(mul32(f[6], g[0]), mul32(f2[7], g19[9])),
                ),
            ),
            add64(mul32(f[8], g19[8]), mul32(f2[9], g19[7])),
        );
        let h7 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[7]), mul32(f[1], g[6])),
                    add64(mul32(f[2], g[5]), mul32(f[3], g[4])),
                ),
                add64(
                    add64(mul32(f[4], g[3]), mul32(f[5], g[2])),
                    add64(mul32(f[6], g[1]), mul32(f[7], g[0])),
                ),
            ),
            add64(mul32(f[8], g19[9]), mul32(f[9], g19[8])),
        );
        let h8 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[8]), mul32(f2[1], g[7])),
                    add64(mul32(f[2], g[6]), mul32(f2[3], g[5])),
                ),
                add64(
                    add64(mul32(f[4], g[4]), mul32(f2[5], g[3])),
                    add64(mul32(f[6], g[2]), mul32(f2[7], g[1])),
                ),
            ),
            add64(mul32(f[8], g[0]), mul32(f2[9], g19[9])),
        );
        let h9 = add64(
            add64(
                add64(
                    add64(mul32(f[0], g[9]), mul32(f[1], g[8])),
                    add64(mul32(f[2], g[7]), mul32(f[3], g[6])),
                ),
                add64(
                    add64(mul32(f[4], g[5]), mul32(f[5], g[4])),
                    add64(mul32(f[6], g[3]), mul32(f[7], g[2])),
                ),
            ),
            add64(mul32(f[8], g[1]), mul32(f[9], g[0])),
        );
        carry([h0, h1, h2, h3, h4, h5, h6, h7, h8, h9])
    }

    #[inline(always)]
    fn square(&self) -> Fe26x4 {
        let f = &self.0;
        let mut f2 = [splat(0); 10];
        let mut f4 = [splat(0); 10];
        let mut f19 = [splat(0); 10];
        for i in 0..10 {
            f2[i] = add64(f[i], f[i]);
            f4[i] = add64(f2[i], f2[i]);
            f19[i] = times19(f[i]);
        }
        let h0 = add64(
            add64(
                add64(mul32(f[0], f[0]), mul32(f4[1], f19[9])),
                add64(mul32(f2[2], f19[8]), mul32(f4[3], f19[7])),
            ),
            add64(mul32(f2[4], f19[6]), mul32(f2[5], f19[5])),
        );
        let h1 = add64(
            add64(
                add64(mul32(f2[0], f[1]), mul32(f2[2], f19[9])),
                add64(mul32(f2[3], f19[8]), mul32(f2[4], f19[7])),
            ),
            mul32(f2[5], f19[6]),
        );
        let h2 = add64(
            add64(
                add64(mul32(f2[0], f[2]), mul32(f2[1], f[1])),
                add64(mul32(f4[3], f19[9]), mul32(f2[4], f19[8])),
            ),
            add64(mul32(f4[5], f19[7]), mul32(f[6], f19[6])),
        );
        let h3 = add64(
            add64(
                add64(mul32(f2[0], f[3]), mul32(f2[1], f[2])),
                add64(mul32(f2[4], f19[9]), mul32(f2[5], f19[8])),
            ),
            mul32(f2[6], f19[7]),
        );
        let h4 = add64(
            add64(
                add64(mul32(f2[0], f[4]), mul32(f4[1], f[3])),
                add64(mul32(f[2], f[2]), mul32(f4[5], f19[9])),
            ),
            add64(mul32(f2[6], f19[8]), mul32(f2[7], f19[7])),
        );
        let h5 = add64(
            add64(
                add64(mul32(f2[0], f[5]), mul32(f2[1], f[4])),
                add64(mul32(f2[2], f[3]), mul32(f2[6], f19[9])),
            ),
            mul32(f2[7], f19[8]),
        );
        let h6 = add64(
            add64(
                add64(mul32(f2[0], f[6]), mul32(f4[1], f[5])),
                add64(mul32(f2[2], f[4]), mul32(f2[3], f[3])),
            ),
            add64(mul32(f4[7], f19[9]), mul32(f[8], f19[8])),
        );
        let h7 = add64(
            add64(
                add64(mul32(f2[0], f[7]), mul32(f2[1], f[6])),
                add64(mul32(f2[2], f[5]), mul32(f2[3], f[4])),
            ),
            mul32(f2[8], f19[9]),
        );
        let h8 = add64(
            add64(
                add64(mul32(f2[0], f[8]), mul32(f4[1], f[7])),
                add64(mul32(f2[2], f[6]), mul32(f4[3], f[5])),
            ),
            add64(mul32(f[4], f[4]), mul32(f2[9], f19[9])),
        );
        let h9 = add64(
            add64(
                add64(mul32(f2[0], f[9]), mul32(f2[1], f[8])),
                add64(mul32(f2[2], f[7]), mul32(f2[3], f[6])),
            ),
            mul32(f2[4], f[5]),
        );
        carry([h0, h1, h2, h3, h4, h5, h6, h7, h8, h9])
    }
}

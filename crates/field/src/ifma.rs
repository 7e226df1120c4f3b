//! GF(2^255-19) eight lanes at a time with AVX-512 IFMA: [`Fe51x8`] holds eight
//! independent field elements (one per 64-bit lane of a zmm register, so one per
//! signature), each in five radix-2^51 limbs; limb i of all lanes lives in one `__m512i`.
//!
//! Products use `vpmadd52luq`/`vpmadd52huq`, which multiply the low 52 bits of each lane
//! and add the low or high 52 bits of the 104-bit product to an accumulator. In radix
//! 2^51 the high half of a_i b_j weighs 2^52 = 2 * 2^51 at column i+j, so column k sums
//! lo(i+j=k) + 2 hi(i+j=k-1), and columns 5..9 fold into 0..4 times 19 (2^255 = 19).
//! The same layout as curve25519-dalek's IFMA backend (de Valence, "Accelerating
//! Edwards curve arithmetic with parallel formulas", 2018), written independently.
//!
//! Limb bounds (per lane):
//! - reduced: every limb < 2^51 + 2^17, in particular < 2^52, which is what the IFMA
//!   multiplier requires of its inputs (it ignores bits 52..63). Every operation,
//!   `add` included, returns reduced limbs, so any output can feed any input.
//! - inside `mul`: lo and hi column sums are each < 5 * 2^52, so c_k < 15 * 2^52 < 2^56,
//!   c_k + 19 c_(k+5) < 2^61, and one parallel carry pass leaves limbs < 2^51 + 2^15.
//! - `add`/`sub`/`neg` sums are < 2^56 before their parallel carry pass.
//!
//! Safety model: as in [`crate::avx2`], a `Fe51x8` can only be created by the `unsafe`
//! constructors, whose contract is that the CPU has AVX-512F and AVX-512 IFMA.

use core::arch::x86_64::*;

use crate::{Fe51, FieldOps};

/// Eight field elements, one per lane (see module docs).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Fe51x8(pub [__m512i; 5]);

const MASK51: u64 = (1 << 51) - 1;

#[inline(always)]
fn lo52(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: only reachable through Fe51x8 methods, which exist only on CPUs with
    // AVX-512F and AVX-512 IFMA.
    unsafe { _mm512_madd52lo_epu64(acc, a, b) }
}

#[inline(always)]
fn hi52(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: as for `lo52`.
    unsafe { _mm512_madd52hi_epu64(acc, a, b) }
}

#[inline(always)]
fn add(a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: as for `lo52`.
    unsafe { _mm512_add_epi64(a, b) }
}

#[inline(always)]
fn sub(a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: as for `lo52`.
    unsafe { _mm512_sub_epi64(a, b) }
}

#[inline(always)]
fn splat(v: u64) -> __m512i {
    // SAFETY: as for `lo52`.
    unsafe { _mm512_set1_epi64(v as i64) }
}

#[inline(always)]
fn times19(a: __m512i) -> __m512i {
    // SAFETY: as for `lo52`. 19 a = 16 a + 2 a + a, a < 2^57.
    unsafe { add(add(_mm512_slli_epi64(a, 4), _mm512_slli_epi64(a, 1)), a) }
}

#[inline(always)]
fn double(a: __m512i) -> __m512i {
    // SAFETY: as for `lo52`.
    unsafe { _mm512_slli_epi64(a, 1) }
}

/// One parallel carry pass over five sums (each < 2^62): limb i keeps its low 51 bits
/// and receives the carry of limb i-1 (limb 0 receives 19 times the carry of limb 4).
#[inline(always)]
fn carry(c: [__m512i; 5]) -> Fe51x8 {
    // SAFETY: as for `lo52`.
    unsafe {
        let m = splat(MASK51);
        let k0 = _mm512_srli_epi64(c[0], 51);
        let k1 = _mm512_srli_epi64(c[1], 51);
        let k2 = _mm512_srli_epi64(c[2], 51);
        let k3 = _mm512_srli_epi64(c[3], 51);
        let k4 = _mm512_srli_epi64(c[4], 51);
        Fe51x8([
            add(_mm512_and_si512(c[0], m), times19(k4)),
            add(_mm512_and_si512(c[1], m), k0),
            add(_mm512_and_si512(c[2], m), k1),
            add(_mm512_and_si512(c[3], m), k2),
            add(_mm512_and_si512(c[4], m), k3),
        ])
    }
}

/// Combines columns c_k = lo_k + 2 hi_k (k = 0..9), folds 5..9 onto 0..4, carries.
#[inline(always)]
fn fold(lo: [__m512i; 10], hi: [__m512i; 10]) -> Fe51x8 {
    let mut c = [splat(0); 10];
    for k in 0..10 {
        c[k] = add(lo[k], double(hi[k]));
    }
    carry([
        add(c[0], times19(c[5])),
        add(c[1], times19(c[6])),
        add(c[2], times19(c[7])),
        add(c[3], times19(c[8])),
        add(c[4], times19(c[9])),
    ])
}

impl Fe51x8 {
    /// Packs eight elements, lane j = `v[j]`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512 IFMA.
    #[inline(always)]
    pub unsafe fn pack(v: &[Fe51; 8]) -> Fe51x8 {
        let mut limbs = [[0u64; 8]; 5];
        for (j, fe) in v.iter().enumerate() {
            let r = fe.weak_reduce();
            for i in 0..5 {
                limbs[i][j] = r.0[i];
            }
        }
        // SAFETY: AVX-512F present (caller's contract); unaligned loads of 8 u64.
        let mut out = [splat(0); 5];
        for i in 0..5 {
            // SAFETY: as above.
            out[i] = unsafe { _mm512_loadu_si512(limbs[i].as_ptr() as *const _) };
        }
        Fe51x8(out)
    }

    /// Unpacks the eight lanes.
    #[inline(always)]
    pub fn unpack(&self) -> [Fe51; 8] {
        let mut limbs = [[0u64; 8]; 5];
        for i in 0..5 {
            // SAFETY: AVX-512F present (type invariant); unaligned store of 8 u64.
            unsafe { _mm512_storeu_si512(limbs[i].as_mut_ptr() as *mut _, self.0[i]) };
        }
        std::array::from_fn(|j| {
            Fe51([
                limbs[0][j],
                limbs[1][j],
                limbs[2][j],
                limbs[3][j],
                limbs[4][j],
            ])
            .weak_reduce()
        })
    }

    /// Per-lane table lookup: lane j of the result is lane j of `table[idx[j]]`.
    /// Indices are bounds-checked.
    #[inline(always)]
    pub fn select(table: &[Fe51x8], idx: &[usize; 8]) -> Fe51x8 {
        assert!(
            idx.iter().all(|&i| i < table.len()),
            "lane table index out of range"
        );
        // Offsets in u64 units: entry * 40 + limb * 8 + lane.
        let mut base = [0i64; 8];
        for j in 0..8 {
            base[j] = (idx[j] * 40 + j) as i64;
        }
        let ptr = table.as_ptr() as *const i64;
        // SAFETY: AVX-512F present (type invariant); every address is
        // entry*40 + limb*8 + lane < table.len()*40 u64s from the start, in bounds.
        unsafe {
            let vi = _mm512_loadu_si512(base.as_ptr() as *const _);
            let eight = _mm512_set1_epi64(8);
            let v1 = _mm512_add_epi64(vi, eight);
            let v2 = _mm512_add_epi64(v1, eight);
            let v3 = _mm512_add_epi64(v2, eight);
            let v4 = _mm512_add_epi64(v3, eight);
            Fe51x8([
                _mm512_i64gather_epi64::<8>(vi, ptr),
                _mm512_i64gather_epi64::<8>(v1, ptr),
                _mm512_i64gather_epi64::<8>(v2, ptr),
                _mm512_i64gather_epi64::<8>(v3, ptr),
                _mm512_i64gather_epi64::<8>(v4, ptr),
            ])
        }
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

impl FieldOps for Fe51x8 {
    #[inline(always)]
    fn add(&self, b: &Fe51x8) -> Fe51x8 {
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
    fn sub(&self, b: &Fe51x8) -> Fe51x8 {
        let mut r = self.0;
        for i in 0..5 {
            r[i] = sub(add(r[i], splat(SIXTEEN_P[i])), b.0[i]);
        }
        carry(r)
    }

    #[inline(always)]
    fn neg(&self) -> Fe51x8 {
        let mut r = self.0;
        for i in 0..5 {
            r[i] = sub(splat(SIXTEEN_P[i]), r[i]);
        }
        carry(r)
    }

    #[inline(always)]
    fn mul(&self, rhs: &Fe51x8) -> Fe51x8 {
        let a = &self.0;
        let b = &rhs.0;
        let z = splat(0);
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
    fn square(&self) -> Fe51x8 {
        let a = &self.0;
        let z = splat(0);
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

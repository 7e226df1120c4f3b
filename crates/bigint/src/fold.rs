//! Long chains of modular squarings for minimum latency (the VDF evaluator), in radix
//! 2^52 with AVX-512 IFMA, reducing by folding with precomputed powers of two instead of
//! Montgomery's digit-serial reduction.
//!
//! The Montgomery kernel ([`crate::ifma`]) reduces one digit per step, and each step's
//! quotient digit waits for the previous step: K dependent steps per squaring, each
//! a chain of vector multiply-adds, a lane shift and a scalar round trip. Here a squaring
//! has no such chain:
//!
//! 1. T = x^2 as column sums: the cross products x_i x_j (i < j) once, doubled, plus the
//!    squares x_i^2. Every product is independent, so the multiply-adds run at the
//!    units' throughput, into separate low- and high-half accumulators;
//! 2. the digits of T are normalised: one vector carry round, and the exact rounds
//!    (two more and a carry-lookahead) only when a digit came out at 2^52 or above,
//!    which these values make about one digit in 2^40;
//! 3. fold: U = (T mod 2^(52 K)) + sum over j = K..2K-1 of t_j R_j, with the table
//!    R_j = 2^(52 j) mod n (again independent products), then normalised;
//! 4. fold again, at bit P = 52 (K - 1) + 9: X = (U mod 2^P) + q C with q = U >> P
//!    (below 2^50) and C = 2^P mod n, then normalised: the next x.
//!
//! Values are congruent to the true ones modulo n and stay below 2^(52 K) (not below
//! n): K is the least digit count with n < 2^(52 K - 53), which bounds every step:
//! - column sums of T: at most 2K products of 52 bits each, below 2^59;
//! - U < 2^(52 K + 7) (the raw low half of T plus K products below 2^52 n), so after
//!   normalisation q < 2^50 fits a 52-bit multiplier;
//! - X < 2^(52 K - 43) + 2^50 n < 2^(52 K - 2).
//!
//! The caller reduces the chain's result modulo n once at the end ([`Fold::sqr_n`]
//! returns it reduced). Variable time: the normalisation's rare exact path and the final
//! reduction branch on the values. It serves public values (VDF chains), never secrets.

use core::arch::x86_64::*;

use crate::ifma::{from_digits, normalize, to_digits};

const MASK: u64 = (1 << 52) - 1;
/// Low bits of digit K - 1 kept by the second fold (P = 52 (K - 1) + SPLIT).
const SPLIT: u32 = 9;
/// The most registers a value takes (2048-bit moduli: 41 digits).
const MAXV: usize = 6;

/// Digits for an `limbs`-limb modulus type: the least K with 2^(64 limbs) <= 2^(52 K - 53).
pub fn digits_for(limbs: usize) -> usize {
    (64 * limbs + 53).div_ceil(52)
}

/// True when the kernel exists for `limbs`-limb types (1024 and 2048 bits).
pub fn supports(limbs: usize) -> bool {
    matches!(limbs, 16 | 32)
}

/// The constants of the folding chain for one odd modulus n.
#[derive(Clone, Debug)]
pub struct Fold {
    /// Digit count K.
    k: usize,
    /// The modulus, limbs.
    n: Vec<u64>,
    /// R_j = 2^(52 j) mod n for j = K..2K-1, each as 8 V digit lanes.
    r: Vec<u64>,
    /// C = 2^P mod n, 8 V digit lanes.
    c: Vec<u64>,
    /// Lanes below K: all ones; others 0 (T mod 2^(52 K)).
    low: Vec<u64>,
    /// Lanes below K - 1: all ones; lane K - 1: the low SPLIT bits; others 0 (U mod 2^P).
    keep: Vec<u64>,
}

impl Fold {
    /// Constants for the odd modulus `n` (limbs, a width [`supports`] accepts).
    pub fn new(n: &[u64]) -> Fold {
        let k = digits_for(n.len());
        let lanes = 8 * k.div_ceil(8);
        // 2^e mod n for increasing e, by doubling (n has no more bits than its type).
        let mut x = vec![0u64; n.len()];
        x[0] = 1;
        let mut e = 0usize;
        let mut pow2 = |target: usize| -> [u64; crate::ifma::MAX_DIGITS] {
            while e < target {
                double_mod(&mut x, n);
                e += 1;
            }
            to_digits(&x, k)
        };
        let p = 52 * (k - 1) + SPLIT as usize;
        let c = pow2(p)[..lanes].to_vec();
        let mut r = Vec::with_capacity(k * lanes);
        for j in k..2 * k {
            r.extend_from_slice(&pow2(52 * j)[..lanes]);
        }
        let low = (0..lanes)
            .map(|l| if l < k { u64::MAX } else { 0 })
            .collect();
        let keep = (0..lanes)
            .map(|l| match l {
                l if l + 1 < k => u64::MAX,
                l if l + 1 == k => (1 << SPLIT) - 1,
                _ => 0,
            })
            .collect();
        Fold {
            k,
            n: n.to_vec(),
            r,
            c,
            low,
            keep,
        }
    }

    /// x^(2^count) mod n for x below n (limbs of n's width), into `out`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and IFMA ([`crate::ifma::available_on`]); `x` and `out`
    /// have n's width.
    pub unsafe fn sqr_n(&self, x: &[u64], count: u64, out: &mut [u64]) {
        let mut wide = [0u64; 2 * MAXV * 8];
        let wide = &mut wide[..self.n.len() + 2];
        match self.k {
            // SAFETY: the caller guarantees the CPU features; the widths match.
            21 => unsafe { sqr_n_t::<3, 21>(self, x, count, wide) },
            // SAFETY: as above.
            41 => unsafe { sqr_n_t::<6, 41>(self, x, count, wide) },
            k => unreachable!("no folding kernel for {k} digits"),
        }
        reduce(wide, &self.n, out);
    }
}

/// x = 2 x mod n for x < n (limbs of equal length).
fn double_mod(x: &mut [u64], n: &[u64]) {
    let mut carry = 0u64;
    for w in x.iter_mut() {
        let top = *w >> 63;
        *w = (*w << 1) | carry;
        carry = top;
    }
    if carry == 1 || !less(x, n) {
        sub_in_place(x, n);
    }
}

/// a < b, equal lengths.
fn less(a: &[u64], b: &[u64]) -> bool {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        if x != y {
            return x < y;
        }
    }
    false
}

/// a -= b (b no longer than a; wraps).
fn sub_in_place(a: &mut [u64], b: &[u64]) {
    let mut borrow = 0u64;
    for (i, w) in a.iter_mut().enumerate() {
        let (d1, b1) = w.overflowing_sub(b.get(i).copied().unwrap_or(0));
        let (d2, b2) = d1.overflowing_sub(borrow);
        *w = d2;
        borrow = (b1 | b2) as u64;
    }
}

/// out = z mod n, for z of n.len() + 2 limbs: binary long division by the shifted
/// modulus (its step count depends on n's length only).
fn reduce(z: &mut [u64], n: &[u64], out: &mut [u64]) {
    let nbits = n.len() * 64
        - n.iter().rev().take_while(|&&w| w == 0).count() * 64
        - n.iter()
            .rev()
            .find(|&&w| w != 0)
            .map_or(0, |w| w.leading_zeros() as usize);
    let zbits = z.len() * 64;
    let mut m = vec![0u64; z.len()];
    for s in (0..=zbits - nbits).rev() {
        // m = n << s
        m.fill(0);
        let (w, b) = (s / 64, s % 64);
        for (i, &limb) in n.iter().enumerate() {
            if i + w < m.len() {
                m[i + w] |= limb << b;
            }
            if b > 0 && i + w + 1 < m.len() {
                m[i + w + 1] |= limb >> (64 - b);
            }
        }
        if !less(z, &m) {
            sub_in_place(z, &m);
        }
    }
    out.copy_from_slice(&z[..n.len()]);
}

/// Register v of x shifted up by `s` lanes (x has V registers; zeros shift in).
#[inline(always)]
unsafe fn up<const V: usize>(x: &[__m512i; V], v: usize, s: usize) -> __m512i {
    // SAFETY: register intrinsics; AVX-512 F per the caller.
    unsafe {
        let zero = _mm512_setzero_si512();
        let hi = if v < V { x[v] } else { zero };
        let lo = if v > 0 { x[v - 1] } else { zero };
        match s {
            0 => hi,
            1 => _mm512_alignr_epi64::<7>(hi, lo),
            2 => _mm512_alignr_epi64::<6>(hi, lo),
            3 => _mm512_alignr_epi64::<5>(hi, lo),
            4 => _mm512_alignr_epi64::<4>(hi, lo),
            5 => _mm512_alignr_epi64::<3>(hi, lo),
            6 => _mm512_alignr_epi64::<2>(hi, lo),
            _ => _mm512_alignr_epi64::<1>(hi, lo),
        }
    }
}

/// [`normalize`], fast: one carry round, which leaves every digit below 2^52 unless a
/// digit was within 2^12 of it (about one digit in 2^40 on these values); only then the
/// exact rounds run. The branch depends on the (public) values.
#[inline(always)]
unsafe fn normalize_fast(r: &mut [__m512i]) {
    // SAFETY: register intrinsics only.
    unsafe {
        let mask = _mm512_set1_epi64(MASK as i64);
        let mut prev = _mm512_setzero_si512();
        let mut over = 0u8;
        for x in r.iter_mut() {
            let c = _mm512_srli_epi64::<52>(*x);
            let lo = _mm512_and_si512(*x, mask);
            *x = _mm512_add_epi64(lo, _mm512_alignr_epi64::<7>(c, prev));
            over |= _mm512_cmpgt_epu64_mask(*x, mask);
            prev = c;
        }
        if over != 0 {
            normalize(r);
        }
    }
}

#[inline(always)]
unsafe fn load(d: &[u64]) -> __m512i {
    debug_assert!(d.len() >= 8);
    // SAFETY: 8 lanes in bounds (asserted by the callers' layouts); unaligned load.
    unsafe { _mm512_loadu_si512(d.as_ptr().cast()) }
}

/// The products x_i x_j with j > i, for the digits i = 8B..8B+8 of x, into the
/// accumulators (the square is twice their sum plus the diagonal). Row v of `sh[s]`
/// holds x_j for j = 8 v + lane - s, landing at 8 (B + v) + lane; j > i holds for
/// every lane of rows v >= B + 2, for lanes above 2s - 8 of row B + 1 and lanes above
/// 2s of row B, and for none below.
#[inline(always)]
unsafe fn square_block<const B: usize, const V: usize>(
    lo: &mut [__m512i; 2 * MAXV],
    hi: &mut [__m512i; 2 * MAXV],
    xd: &[u64; 8 * MAXV],
    sh: &[[__m512i; MAXV + 1]; 8],
) {
    // SAFETY: register intrinsics; AVX-512 F + IFMA per the caller.
    unsafe {
        for (s, row) in sh.iter().enumerate() {
            let a = _mm512_set1_epi64(xd[8 * B + s] as i64);
            if s < 4 {
                let m = (0xffu32 << (2 * s + 1)) as u8;
                lo[2 * B] = _mm512_mask_madd52lo_epu64(lo[2 * B], m, a, row[B]);
                hi[2 * B] = _mm512_mask_madd52hi_epu64(hi[2 * B], m, a, row[B]);
            }
            let m = (0xffu32 << (2 * s).saturating_sub(7)) as u8;
            lo[2 * B + 1] = _mm512_mask_madd52lo_epu64(lo[2 * B + 1], m, a, row[B + 1]);
            hi[2 * B + 1] = _mm512_mask_madd52hi_epu64(hi[2 * B + 1], m, a, row[B + 1]);
            for v in B + 2..=V {
                lo[B + v] = _mm512_madd52lo_epu64(lo[B + v], a, row[v]);
                hi[B + v] = _mm512_madd52hi_epu64(hi[B + v], a, row[v]);
            }
        }
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn sqr_n_t<const V: usize, const K: usize>(
    f: &Fold,
    x: &[u64],
    count: u64,
    out: &mut [u64],
) {
    // SAFETY: the target features are enabled for this function; every load and store
    // stays inside the fixed arrays below or the context's tables of 8 V lanes per entry.
    unsafe {
        debug_assert_eq!(f.k, K);
        let k = K;
        let lanes = 8 * V;
        let zero = _mm512_setzero_si512();
        let mut xd = [0u64; 8 * MAXV];
        xd[..lanes].copy_from_slice(&to_digits(x, k)[..lanes]);
        let mut xv = [zero; V];
        for (v, r) in xv.iter_mut().enumerate() {
            *r = load(&xd[8 * v..]);
        }
        let mut td = [0u64; 16 * MAXV];
        let low: [__m512i; V] = core::array::from_fn(|v| load(&f.low[8 * v..]));
        let keep: [__m512i; V] = core::array::from_fn(|v| load(&f.keep[8 * v..]));
        let c: [__m512i; V] = core::array::from_fn(|v| load(&f.c[8 * v..]));
        for _ in 0..count {
            // x shifted up by s lanes, s = 0..8, in V + 1 registers each.
            let mut sh = [[zero; MAXV + 1]; 8];
            for (s, row) in sh.iter_mut().enumerate() {
                for (v, reg) in row.iter_mut().enumerate().take(V + 1) {
                    *reg = up(&xv, v, s);
                }
            }
            // T = x^2: digit i times x lands at i..; low halves at i + j, high halves
            // one digit up (added after the loop).
            let mut lo = [zero; 2 * MAXV];
            let mut hi = [zero; 2 * MAXV];
            // One block of 8 digits at a time, the block index a constant so that
            // the accumulators stay in registers.
            macro_rules! block {
                ($($b:literal)*) => {$(
                    if $b < V {
                        square_block::<$b, V>(&mut lo, &mut hi, &xd, &sh);
                    }
                )*};
            }
            block!(0 1 2 3 4 5);
            // T = 2 (cross products) + the squares x_i^2 at 2i (low half) and 2i + 1.
            let mut t = [zero; 2 * MAXV];
            for q in 0..2 * V {
                let below = if q > 0 { hi[q - 1] } else { zero };
                t[q] = _mm512_add_epi64(lo[q], _mm512_alignr_epi64::<7>(hi[q], below));
                t[q] = _mm512_add_epi64(t[q], t[q]);
            }
            let spread_lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
            let spread_hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
            for b in 0..V {
                let sl = _mm512_madd52lo_epu64(zero, xv[b], xv[b]);
                let sh = _mm512_madd52hi_epu64(zero, xv[b], xv[b]);
                let d0 = _mm512_permutex2var_epi64(sl, spread_lo, sh);
                let d1 = _mm512_permutex2var_epi64(sl, spread_hi, sh);
                t[2 * b] = _mm512_add_epi64(t[2 * b], d0);
                t[2 * b + 1] = _mm512_add_epi64(t[2 * b + 1], d1);
            }
            normalize_fast(&mut t[..2 * V]);
            for q in 0..2 * V {
                _mm512_storeu_si512(td.as_mut_ptr().add(8 * q).cast(), t[q]);
            }
            // U = (T mod 2^(52 K)) + sum t_j R_j.
            let mut ulo = [zero; V];
            let mut uhi = [zero; V];
            for v in 0..V {
                ulo[v] = _mm512_and_si512(t[v], low[v]);
            }
            // For narrow values, even and odd j go to separate accumulators (two
            // chains of multiply-adds instead of one); wide ones have registers for
            // one set only.
            let mut ulo1 = [zero; V];
            let mut uhi1 = [zero; V];
            for j in (K..2 * K).step_by(2) {
                let h = _mm512_set1_epi64(td[j] as i64);
                let rj = &f.r[(j - K) * lanes..];
                for v in 0..V {
                    let rv = load(&rj[8 * v..]);
                    ulo[v] = _mm512_madd52lo_epu64(ulo[v], h, rv);
                    uhi[v] = _mm512_madd52hi_epu64(uhi[v], h, rv);
                }
                if j + 1 < 2 * K {
                    let h = _mm512_set1_epi64(td[j + 1] as i64);
                    let rj = &f.r[(j + 1 - K) * lanes..];
                    let (alo, ahi) = if V <= 3 {
                        (&mut ulo1, &mut uhi1)
                    } else {
                        (&mut ulo, &mut uhi)
                    };
                    for v in 0..V {
                        let rv = load(&rj[8 * v..]);
                        alo[v] = _mm512_madd52lo_epu64(alo[v], h, rv);
                        ahi[v] = _mm512_madd52hi_epu64(ahi[v], h, rv);
                    }
                }
            }
            for v in 0..V {
                ulo[v] = _mm512_add_epi64(ulo[v], ulo1[v]);
                uhi[v] = _mm512_add_epi64(uhi[v], uhi1[v]);
            }
            let mut u = [zero; V];
            for v in 0..V {
                let below = if v > 0 { uhi[v - 1] } else { zero };
                u[v] = _mm512_add_epi64(ulo[v], _mm512_alignr_epi64::<7>(uhi[v], below));
            }
            normalize_fast(&mut u);
            // X = (U mod 2^P) + q C, q = U >> P in every lane.
            let below =
                _mm512_permutexvar_epi64(_mm512_set1_epi64(((K - 1) % 8) as i64), u[(K - 1) / 8]);
            let above = _mm512_permutexvar_epi64(_mm512_set1_epi64((K % 8) as i64), u[K / 8]);
            let qv = _mm512_or_si512(
                _mm512_srli_epi64::<{ SPLIT }>(below),
                _mm512_slli_epi64::<{ 52 - SPLIT }>(above),
            );
            let mut wlo = [zero; V];
            let mut whi = [zero; V];
            for v in 0..V {
                wlo[v] = _mm512_madd52lo_epu64(_mm512_and_si512(u[v], keep[v]), qv, c[v]);
                whi[v] = _mm512_madd52hi_epu64(zero, qv, c[v]);
            }
            for v in 0..V {
                let below = if v > 0 { whi[v - 1] } else { zero };
                xv[v] = _mm512_add_epi64(wlo[v], _mm512_alignr_epi64::<7>(whi[v], below));
            }
            normalize_fast(&mut xv);
            for v in 0..V {
                _mm512_storeu_si512(xd.as_mut_ptr().add(8 * v).cast(), xv[v]);
            }
        }
        let last = out.len() - 1;
        out[last] = from_digits(&xd[..k], &mut out[..last]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    fn value(d: &[u64]) -> BigUint {
        d.iter()
            .rev()
            .fold(BigUint::default(), |acc, &x| (acc << 52u32) + x)
    }

    fn lanes(r: &[__m512i; 3]) -> [u64; 24] {
        let mut d = [0u64; 24];
        for (v, x) in r.iter().enumerate() {
            // SAFETY: 8 lanes into 8 slots.
            unsafe { _mm512_storeu_si512(d.as_mut_ptr().add(8 * v).cast(), *x) };
        }
        d
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn regs(d: &[u64; 24]) -> [__m512i; 3] {
        // SAFETY: in-bounds loads of 8 lanes each.
        core::array::from_fn(|v| unsafe { load(&d[8 * v..]) })
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn run(d: &[u64; 24]) -> [u64; 24] {
        // SAFETY: the features are enabled for this function.
        unsafe {
            let mut r = regs(d);
            normalize_fast(&mut r);
            lanes(&r)
        }
    }

    /// The fast normalisation keeps the value and leaves 52-bit digits, on inputs that
    /// take its exact path (a carry into a run of all-ones digits, a digit just below
    /// 2^52) and on ordinary redundant ones.
    #[test]
    fn fast_normalisation_is_exact_on_every_path() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            eprintln!("skipped: no AVX-512 F");
            return;
        }
        let mut cases = crate::ifma::tests::normalize_cases();
        // A carry of 1 into lane 1 (2^52 - 1): one round leaves 2^52 there.
        let mut d = [0u64; 24];
        d[0] = 1 << 52;
        d[1] = MASK;
        cases.push(d);
        // A large carry into a run of all-ones digits across registers.
        let mut d = [0u64; 24];
        d[5] = (1 << 59) + MASK;
        d[6..20].fill(MASK);
        cases.push(d);
        for d in cases {
            // SAFETY: AVX-512 F is present (checked above).
            let out = unsafe { run(&d) };
            assert!(out.iter().all(|&x| x <= MASK), "{out:x?}");
            assert_eq!(value(&out), value(&d), "{d:x?}");
        }
    }
}

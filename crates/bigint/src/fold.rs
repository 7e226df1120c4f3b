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
//! 2. the digits of T from digit K's register up are normalised (the ones below are
//!    only added, and stay raw): one vector carry round and a carry-lookahead on lane
//!    masks; in the chain of squarings the lookahead runs only when a digit came out at
//!    2^52 or above, which these values make about one digit in 2^40;
//! 3. fold: U = (T mod 2^(52 K)) + sum over j = K..2K-1 of t_j R_j, with the table
//!    R_j = 2^(52 j) mod n (again independent products), left unnormalised;
//! 4. fold again, at bit P = 52 (K - 1) + 9: X = (U mod 2^P) + q C with q = U >> P and
//!    C = 2^P mod n, then normalised: the next x.
//!
//! Values are congruent to the true ones modulo n and stay below 2^(52 K) (not below
//! n): K is the least digit count with n < 2^(52 K - 53), which bounds every step:
//! - column sums of T: at most 2K products of 52 bits each, below 2^59;
//! - U's digits: below 2^61, and only digits 0..K-1 are set (each R_j is below n, so
//!   its products end at digit K - 1): q = u_{K-1} >> 9 < 2^50 fits a 52-bit multiplier,
//!   and cutting digit K - 1 to its low 9 bits leaves U mod 2^P exactly;
//! - X < 2^(52 K - 42) + 2^50 n < 2^(52 K - 2).
//!
//! Results leave as values below 2^(52 K) in two limbs more than n; the caller reduces
//! them modulo n (`MontCtx` does it in constant time, into Montgomery form).
//!
//! Two entry points: [`Fold::sqr_n`], chains of squarings of public values (the VDF),
//! variable time (the rare exact normalisation is a branch on the values); and
//! [`Fold::pow_ct_pair`], two powers with secret exponents at once (the CRT halves of an
//! RSA private operation), constant time: exact normalisations only, the window's table
//! entry chosen by a masked scan.

use core::arch::x86_64::*;

use crate::ifma::{from_digits, normalize, scan, to_digits};
use crate::mont::{window_bits, CT_WINDOW};

const MASK: u64 = (1 << 52) - 1;
/// Low bits of digit K - 1 kept by the second fold (P = 52 (K - 1) + SPLIT).
const SPLIT: u32 = 9;
/// The most registers a value takes (2048-bit moduli: 41 digits).
const MAXV: usize = 6;

/// Digits for an `limbs`-limb modulus type: the least K with 2^(64 limbs) <= 2^(52 K - 53).
pub fn digits_for(limbs: usize) -> usize {
    (64 * limbs + 53).div_ceil(52)
}

/// True when the kernel exists for `limbs`-limb types (1024, 1536 and 2048 bits).
pub fn supports(limbs: usize) -> bool {
    matches!(limbs, 16 | 24 | 32)
}

/// The constants of the folding chain for one odd modulus n.
#[derive(Clone, Debug)]
pub struct Fold {
    /// Digit count K.
    k: usize,
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
    /// Constants for the odd modulus `n` > 1 (limbs); None for an even modulus, 1, or a
    /// width [`supports`] does not accept.
    pub fn new(n: &[u64]) -> Option<Fold> {
        let one = n[1..].iter().all(|&w| w == 0) && n[0] == 1;
        if !supports(n.len()) || n[0] & 1 == 0 || one {
            return None;
        }
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
        Some(Fold { k, r, c, low, keep })
    }

    /// A value congruent to x^(2^count) mod n and below 2^(52 K), as n.len() + 2 limbs
    /// in `out`, for x below n (limbs of n's width). Variable time (public values).
    ///
    /// # Safety
    /// The CPU has AVX-512 F and IFMA ([`crate::ifma::available_on`]); `x` has n's
    /// width and `out` two limbs more.
    pub unsafe fn sqr_n(&self, x: &[u64], count: u64, out: &mut [u64]) {
        match self.k {
            // SAFETY: the caller guarantees the CPU features; the widths match.
            21 => unsafe { sqr_n_t::<3, 21>(self, x, count, out) },
            // SAFETY: as above.
            31 => unsafe { sqr_n_t::<4, 31>(self, x, count, out) },
            // SAFETY: as above.
            41 => unsafe { sqr_n_t::<6, 41>(self, x, count, out) },
            k => unreachable!("no folding kernel for {k} digits"),
        }
    }

    /// (base^e mod n, base2^e2 mod n2), each as a congruent value below 2^(52 K) in two
    /// limbs more than n, the two powers interleaved, in constant time: a fixed window of
    /// [`CT_WINDOW`] bits over `bits` exponent bits, the table entry chosen by a masked
    /// scan, exact normalisations only (no branch or address depends on base or e).
    ///
    /// # Safety
    /// As for [`Fold::sqr_n`], for both contexts (of one width); `bits <= 64 * e.len()`.
    pub unsafe fn pow_ct_pair(
        &self,
        other: &Fold,
        base: (&[u64], &[u64]),
        e: (&[u64], &[u64]),
        bits: usize,
        out: (&mut [u64], &mut [u64]),
    ) {
        assert_eq!(self.k, other.k, "two widths");
        let f = (self, other);
        match self.k {
            // SAFETY: the caller guarantees the CPU features, widths and lengths.
            21 => unsafe { pow_pair_t::<3, 21>(f, base, e, bits, out) },
            // SAFETY: as above.
            31 => unsafe { pow_pair_t::<4, 31>(f, base, e, bits, out) },
            // SAFETY: as above.
            41 => unsafe { pow_pair_t::<6, 41>(f, base, e, bits, out) },
            k => unreachable!("no folding kernel for {k} digits"),
        }
    }
}

/// x = 2 x mod n for x < n (limbs of equal length), in constant time (the tables of a
/// secret modulus, an RSA prime, are built with it).
fn double_mod(x: &mut [u64], n: &[u64]) {
    let mut carry = 0u64;
    for w in x.iter_mut() {
        let top = *w >> 63;
        *w = (*w << 1) | carry;
        carry = top;
    }
    // d = x - n; keep d when 2x overflowed the limbs or did not borrow.
    let mut borrow = 0u64;
    let mut d = [0u64; crate::mont::MAX_LIMBS];
    for ((dw, &xw), &nw) in d.iter_mut().zip(x.iter()).zip(n) {
        let (d1, b1) = xw.overflowing_sub(nw);
        let (d2, b2) = d1.overflowing_sub(borrow);
        *dw = d2;
        borrow = (b1 | b2) as u64;
    }
    let keep_d = (carry | (borrow ^ 1)).wrapping_neg();
    for (xw, dw) in x.iter_mut().zip(d) {
        *xw = (dw & keep_d) | (*xw & !keep_d);
    }
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

/// The products of digits 8B..8B+8 of a with every digit of b (rows of b shifted as in
/// [`square_block`]), into the accumulators.
#[inline(always)]
unsafe fn product_block<const B: usize, const V: usize>(
    lo: &mut [__m512i; 2 * MAXV],
    hi: &mut [__m512i; 2 * MAXV],
    ad: &[u64; 8 * MAXV],
    sh: &[[__m512i; MAXV + 1]; 8],
) {
    // SAFETY: register intrinsics; AVX-512 F + IFMA per the caller.
    unsafe {
        for (s, row) in sh.iter().enumerate() {
            let a = _mm512_set1_epi64(ad[8 * B + s] as i64);
            for v in 0..=V {
                lo[B + v] = _mm512_madd52lo_epu64(lo[B + v], a, row[v]);
                hi[B + v] = _mm512_madd52hi_epu64(hi[B + v], a, row[v]);
            }
        }
    }
}

/// A value of the chain: normalised digits (below 2^(52 K)) in registers, and in memory
/// for the broadcasts of the next product.
#[derive(Clone, Copy)]
struct Val<const V: usize> {
    v: [__m512i; V],
    d: [u64; 8 * MAXV],
}

impl<const V: usize> Val<V> {
    #[inline(always)]
    unsafe fn from_regs(v: [__m512i; V]) -> Self {
        let mut d = [0u64; 8 * MAXV];
        for (j, x) in v.iter().enumerate() {
            // SAFETY: 8 lanes at 8 j < 8 V <= 8 MAXV.
            unsafe { _mm512_storeu_si512(d.as_mut_ptr().add(8 * j).cast(), *x) };
        }
        Val { v, d }
    }

    #[inline(always)]
    unsafe fn from_limbs(x: &[u64], k: usize) -> Self {
        let mut d = [0u64; 8 * MAXV];
        d[..8 * V].copy_from_slice(&to_digits(x, k)[..8 * V]);
        // SAFETY: in-bounds loads of 8 lanes each.
        let v = core::array::from_fn(|j| unsafe { load(&d[8 * j..]) });
        Val { v, d }
    }

    /// The digits as n.len() + 2 limbs.
    fn write_limbs(&self, k: usize, out: &mut [u64]) {
        let last = out.len() - 1;
        out[last] = from_digits(&self.d[..k], &mut out[..last]);
    }
}

/// x shifted up by s lanes, s = 0..8, in V + 1 registers each.
#[inline(always)]
unsafe fn shifted<const V: usize>(x: &[__m512i; V]) -> [[__m512i; MAXV + 1]; 8] {
    // SAFETY: register intrinsics; AVX-512 F per the caller.
    unsafe {
        let mut sh = [[_mm512_setzero_si512(); MAXV + 1]; 8];
        for (s, row) in sh.iter_mut().enumerate() {
            for (v, reg) in row.iter_mut().enumerate().take(V + 1) {
                *reg = up(x, v, s);
            }
        }
        sh
    }
}

/// lo + (hi one lane up), over 2 V registers.
#[inline(always)]
unsafe fn join<const V: usize>(
    lo: &[__m512i; 2 * MAXV],
    hi: &[__m512i; 2 * MAXV],
) -> [__m512i; 2 * MAXV] {
    // SAFETY: register intrinsics; AVX-512 F per the caller.
    unsafe {
        let zero = _mm512_setzero_si512();
        let mut t = [zero; 2 * MAXV];
        for q in 0..2 * V {
            let below = if q > 0 { hi[q - 1] } else { zero };
            t[q] = _mm512_add_epi64(lo[q], _mm512_alignr_epi64::<7>(hi[q], below));
        }
        t
    }
}

/// Runs `$f::<B, V>(args)` for every block B < V, B a constant so that the
/// accumulators stay in registers.
macro_rules! blocks {
    ($f:ident, $v:ident, $($arg:expr),*) => {
        blocks!(@each $f, $v, ($($arg),*), 0 1 2 3 4 5)
    };
    (@each $f:ident, $v:ident, $args:tt, $($b:literal)*) => {$(
        if $b < $v {
            blocks!(@call $f, $v, $b, $args);
        }
    )*};
    (@call $f:ident, $v:ident, $b:literal, ($($arg:expr),*)) => {
        $f::<$b, $v>($($arg),*)
    };
}

/// x^2 from the cross products' accumulators: twice their sum plus the squares x_i^2 at
/// 2i (low half) and 2i + 1 (high half); unnormalised, 2 V registers.
#[inline(always)]
unsafe fn square_finish<const V: usize>(
    x: &Val<V>,
    lo: &[__m512i; 2 * MAXV],
    hi: &[__m512i; 2 * MAXV],
) -> [__m512i; 2 * MAXV] {
    // SAFETY: register intrinsics; AVX-512 F + IFMA per the caller.
    unsafe {
        let zero = _mm512_setzero_si512();
        let mut t = join::<V>(lo, hi);
        for r in t.iter_mut().take(2 * V) {
            *r = _mm512_add_epi64(*r, *r);
        }
        let spread_lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
        let spread_hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
        for b in 0..V {
            let sl = _mm512_madd52lo_epu64(zero, x.v[b], x.v[b]);
            let sh = _mm512_madd52hi_epu64(zero, x.v[b], x.v[b]);
            let d0 = _mm512_permutex2var_epi64(sl, spread_lo, sh);
            let d1 = _mm512_permutex2var_epi64(sl, spread_hi, sh);
            t[2 * b] = _mm512_add_epi64(t[2 * b], d0);
            t[2 * b + 1] = _mm512_add_epi64(t[2 * b + 1], d1);
        }
        t
    }
}

/// x^2, unnormalised (2 V registers).
#[inline(always)]
unsafe fn square<const V: usize>(x: &Val<V>) -> [__m512i; 2 * MAXV] {
    // SAFETY: register intrinsics and in-bounds memory; AVX-512 F + IFMA per the caller.
    unsafe {
        let zero = _mm512_setzero_si512();
        let sh = shifted(&x.v);
        let (mut lo, mut hi) = ([zero; 2 * MAXV], [zero; 2 * MAXV]);
        blocks!(square_block, V, &mut lo, &mut hi, &x.d, &sh);
        square_finish(x, &lo, &hi)
    }
}

/// a b, unnormalised (2 V registers).
#[inline(always)]
unsafe fn product<const V: usize>(a: &Val<V>, b: &[__m512i; V]) -> [__m512i; 2 * MAXV] {
    // SAFETY: register intrinsics and in-bounds memory; AVX-512 F + IFMA per the caller.
    unsafe {
        let zero = _mm512_setzero_si512();
        let sh = shifted(b);
        let (mut lo, mut hi) = ([zero; 2 * MAXV], [zero; 2 * MAXV]);
        blocks!(product_block, V, &mut lo, &mut hi, &a.d, &sh);
        join::<V>(&lo, &hi)
    }
}

/// The folding constants in registers.
struct Consts<const V: usize> {
    low: [__m512i; V],
    keep: [__m512i; V],
    c: [__m512i; V],
}

impl<const V: usize> Consts<V> {
    #[inline(always)]
    unsafe fn of(f: &Fold) -> Self {
        // SAFETY: the tables hold 8 V lanes each.
        unsafe {
            Consts {
                low: core::array::from_fn(|v| load(&f.low[8 * v..])),
                keep: core::array::from_fn(|v| load(&f.keep[8 * v..])),
                c: core::array::from_fn(|v| load(&f.c[8 * v..])),
            }
        }
    }
}

/// Normalises T (`CT`: the exact, constant-time path) and returns its digits in memory,
/// for the broadcasts of the first fold.
#[inline(always)]
unsafe fn fold_head<const V: usize, const K: usize, const CT: bool>(
    t: &mut [__m512i; 2 * MAXV],
) -> [u64; 16 * MAXV] {
    // SAFETY: register intrinsics and in-bounds stores; AVX-512 F per the caller.
    unsafe {
        // Only the registers from the one holding digit K up: the digits below stay
        // raw (below 2^59; they are only added), and any split of T into a raw low part
        // and a normalised high part is exact.
        norm::<CT>(&mut t[K / 8..2 * V]);
        let mut td = [0u64; 16 * MAXV];
        for q in K / 8..2 * V {
            _mm512_storeu_si512(td.as_mut_ptr().add(8 * q).cast(), t[q]);
        }
        td
    }
}

#[inline(always)]
unsafe fn norm<const CT: bool>(r: &mut [__m512i]) {
    // SAFETY: register intrinsics; AVX-512 F per the caller.
    unsafe {
        if CT {
            normalize(r)
        } else {
            normalize_fast(r)
        }
    }
}

/// The first fold's term t_j R_j, into one pair of accumulators.
#[inline(always)]
unsafe fn fold_terms<const V: usize, const K: usize>(
    f: &Fold,
    td: &[u64; 16 * MAXV],
    j: usize,
    lo: &mut [__m512i; V],
    hi: &mut [__m512i; V],
) {
    // SAFETY: the table has K entries of 8 V lanes; AVX-512 F + IFMA per the caller.
    unsafe {
        let h = _mm512_set1_epi64(td[j] as i64);
        let rj = &f.r[(j - K) * 8 * V..];
        for v in 0..V {
            let rv = load(&rj[8 * v..]);
            lo[v] = _mm512_madd52lo_epu64(lo[v], h, rv);
            hi[v] = _mm512_madd52hi_epu64(hi[v], h, rv);
        }
    }
}

/// From the first fold's accumulators (their sum is U = (T mod 2^(52 K)) + sum t_j R_j):
/// fold at bit P (X = (U mod 2^P) + q C, q = U >> P), normalise X.
#[inline(always)]
unsafe fn fold_tail<const V: usize, const K: usize, const CT: bool>(
    consts: &Consts<V>,
    acc: [[__m512i; V]; 4],
) -> Val<V> {
    // SAFETY: register intrinsics; AVX-512 F + IFMA per the caller.
    unsafe {
        let zero = _mm512_setzero_si512();
        let [lo0, hi0, lo1, hi1] = acc;
        let mut u = [zero; V];
        for v in 0..V {
            let below = if v > 0 {
                _mm512_add_epi64(hi0[v - 1], hi1[v - 1])
            } else {
                zero
            };
            let here = _mm512_add_epi64(hi0[v], hi1[v]);
            u[v] = _mm512_add_epi64(
                _mm512_add_epi64(lo0[v], lo1[v]),
                _mm512_alignr_epi64::<7>(here, below),
            );
        }
        // U is left unnormalised: its digits are below 2^61 and only digits 0..K-1 are
        // set (the table entries are below n, so their products end at digit K - 1),
        // so q = u_{K-1} >> SPLIT (below 2^50) and U mod 2^P (digit K - 1 cut to SPLIT
        // bits) split U exactly at bit P.
        let qv = _mm512_srli_epi64::<{ SPLIT }>(_mm512_permutexvar_epi64(
            _mm512_set1_epi64(((K - 1) % 8) as i64),
            u[(K - 1) / 8],
        ));
        let mut wlo = [zero; V];
        let mut whi = [zero; V];
        for v in 0..V {
            wlo[v] = _mm512_madd52lo_epu64(_mm512_and_si512(u[v], consts.keep[v]), qv, consts.c[v]);
            whi[v] = _mm512_madd52hi_epu64(zero, qv, consts.c[v]);
        }
        let mut x = [zero; V];
        for v in 0..V {
            let below = if v > 0 { whi[v - 1] } else { zero };
            x[v] = _mm512_add_epi64(wlo[v], _mm512_alignr_epi64::<7>(whi[v], below));
        }
        norm::<CT>(&mut x);
        Val::from_regs(x)
    }
}

/// The first fold's accumulators, the low one starting at T mod 2^(52 K).
#[inline(always)]
unsafe fn fold_start<const V: usize>(
    consts: &Consts<V>,
    t: &[__m512i; 2 * MAXV],
) -> [[__m512i; V]; 4] {
    // SAFETY: register intrinsics; AVX-512 F per the caller.
    unsafe {
        let zero = _mm512_setzero_si512();
        let mut acc = [[zero; V]; 4];
        for v in 0..V {
            acc[0][v] = _mm512_and_si512(t[v], consts.low[v]);
        }
        acc
    }
}

/// T (a product of two values of the chain, unnormalised) to a value of the chain
/// congruent to it: normalise, fold at digit K with the table, normalise, fold at bit P,
/// normalise. `CT`: every normalisation takes the exact, constant-time path.
#[inline(always)]
unsafe fn fold<const V: usize, const K: usize, const CT: bool>(
    f: &Fold,
    consts: &Consts<V>,
    mut t: [__m512i; 2 * MAXV],
) -> Val<V> {
    // SAFETY: as in the parts.
    unsafe {
        let td = fold_head::<V, K, CT>(&mut t);
        let [mut lo0, mut hi0, mut lo1, mut hi1] = fold_start(consts, &t);
        // For narrow values, even and odd j go to separate accumulators (two chains of
        // multiply-adds instead of one); wide ones have registers for one set only.
        for j in (K..2 * K).step_by(2) {
            fold_terms::<V, K>(f, &td, j, &mut lo0, &mut hi0);
            if j + 1 < 2 * K {
                if V <= 3 {
                    fold_terms::<V, K>(f, &td, j + 1, &mut lo1, &mut hi1);
                } else {
                    fold_terms::<V, K>(f, &td, j + 1, &mut lo0, &mut hi0);
                }
            }
        }
        fold_tail::<V, K, CT>(consts, [lo0, hi0, lo1, hi1])
    }
}

/// [`fold`] of two values at once (two moduli of one width), step by step.
#[inline(always)]
unsafe fn fold2<const V: usize, const K: usize, const CT: bool>(
    f: (&Fold, &Fold),
    consts: (&Consts<V>, &Consts<V>),
    mut t: ([__m512i; 2 * MAXV], [__m512i; 2 * MAXV]),
) -> (Val<V>, Val<V>) {
    // SAFETY: as in the parts.
    unsafe {
        let tdx = fold_head::<V, K, CT>(&mut t.0);
        let tdy = fold_head::<V, K, CT>(&mut t.1);
        let [mut lx, mut hx, lx1, hx1] = fold_start(consts.0, &t.0);
        let [mut ly, mut hy, ly1, hy1] = fold_start(consts.1, &t.1);
        for j in K..2 * K {
            fold_terms::<V, K>(f.0, &tdx, j, &mut lx, &mut hx);
            fold_terms::<V, K>(f.1, &tdy, j, &mut ly, &mut hy);
        }
        (
            fold_tail::<V, K, CT>(consts.0, [lx, hx, lx1, hx1]),
            fold_tail::<V, K, CT>(consts.1, [ly, hy, ly1, hy1]),
        )
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn sqr_n_t<const V: usize, const K: usize>(
    f: &Fold,
    x: &[u64],
    count: u64,
    out: &mut [u64],
) {
    debug_assert_eq!(f.k, K);
    // SAFETY: the target features are enabled for this function.
    unsafe {
        let consts = Consts::<V>::of(f);
        let mut x = Val::<V>::from_limbs(x, K);
        for _ in 0..count {
            x = fold::<V, K, false>(f, &consts, square(&x));
        }
        x.write_limbs(K, out);
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn pow_pair_t<const V: usize, const K: usize>(
    f: (&Fold, &Fold),
    base: (&[u64], &[u64]),
    e: (&[u64], &[u64]),
    bits: usize,
    out: (&mut [u64], &mut [u64]),
) {
    debug_assert!(f.0.k == K && f.1.k == K);
    // SAFETY: the target features are enabled for this function.
    unsafe {
        let (c0, c1) = (Consts::<V>::of(f.0), Consts::<V>::of(f.1));
        let mut one = [_mm512_setzero_si512(); V];
        one[0] = _mm512_zextsi128_si512(_mm_cvtsi64_si128(1));
        let one = Val::from_regs(one);
        // base^0 .. base^(2^CT_WINDOW - 1), each half.
        let table = |f: &Fold, c: &Consts<V>, b: &[u64]| {
            let b = Val::<V>::from_limbs(b, K);
            let mut t = [one.v; 1 << CT_WINDOW];
            let mut p = b;
            t[1] = b.v;
            for entry in t.iter_mut().skip(2) {
                p = fold::<V, K, true>(f, c, product(&p, &b.v));
                *entry = p.v;
            }
            t
        };
        let (t0, t1) = (table(f.0, &c0, base.0), table(f.1, &c1, base.1));
        let (mut a0, mut a1) = (one, one);
        for w in (0..bits.div_ceil(CT_WINDOW)).rev() {
            for _ in 0..CT_WINDOW {
                (a0, a1) = fold2::<V, K, true>(f, (&c0, &c1), (square(&a0), square(&a1)));
            }
            let at = w * CT_WINDOW;
            let m0 = scan(&t0, window_bits(e.0, at, CT_WINDOW));
            let m1 = scan(&t1, window_bits(e.1, at, CT_WINDOW));
            (a0, a1) = fold2::<V, K, true>(f, (&c0, &c1), (product(&a0, &m0), product(&a1, &m1)));
        }
        a0.write_limbs(K, out.0);
        a1.write_limbs(K, out.1);
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

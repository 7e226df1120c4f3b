//! Montgomery squaring chains in radix 2^52 with AVX-512 IFMA (`vpmadd52luq` /
//! `vpmadd52huq`), for long chains of squarings of public values (the VDF).
//!
//! Shape: the word-by-word "almost Montgomery multiplication" of Gueron and Krasnov
//! ("Accelerating big integer arithmetic using Intel IFMA extensions", ARITH 2016),
//! vectorised across the digit index: a value of K 52-bit digits lives in V = ceil(K/8)
//! zmm registers, digit j in lane j % 8 of register j / 8. One multiplication a b is K
//! steps; step i adds the low halves of a_i * b and y_i * n (y_i makes digit 0 vanish
//! mod 2^52), shifts the accumulator down one digit, then adds the high halves, which
//! belong one digit up and so land in place after the shift.
//!
//! Redundancy (the lazy reduction the hardware designs use):
//! - digits are not normalised inside a multiplication: a 64-bit lane gains less than
//!   4 * 2^52 per step, so after K <= 80 steps it stays below 2^61;
//! - values are not reduced below n between squarings: with R' = 2^(52 K) >= 4 n, inputs
//!   below 2n give (a b + Y n) / R' < 2n, so the chain never subtracts n; one conditional
//!   subtraction happens when the chain leaves this module.
//!
//! Between multiplications the digits are normalised (IFMA reads only the low 52 bits
//! of each lane): two vector carry rounds leave every digit <= 2^52, and a carry-lookahead
//! on lane masks finishes the rare runs of 2^52 - 1 digits. Nothing branches on the data
//! and the instruction sequence is fixed, so the same code serves secret exponents.
//!
//! Domain: a context using this kernel is a Montgomery context with R' in place of
//! 2^(64 L); `MontCtx` converts limbs to digits and back around each call, and chains of
//! squarings and powers stay in digits and registers from end to end.

use core::arch::x86_64::*;

use crate::mont::{ct_eq, sliding_width, sliding_windows, window_bits, CT_WINDOW};

const MASK: u64 = (1 << 52) - 1;

/// The most 52-bit digits a chain uses (4096-bit types need 79).
pub const MAX_DIGITS: usize = 80;

/// True when a CPU with features `f` has AVX-512 F and IFMA (`f` never claims more
/// than this CPU has).
pub fn available_on(f: &wirespeed_util::cpu::CpuFeatures) -> bool {
    f.ifma_products()
}

/// Digits for an `limbs`-limb type: the least K with 2^(52 K) >= 4 * 2^(64 limbs).
pub fn digits_for(limbs: usize) -> usize {
    (64 * limbs + 2).div_ceil(52)
}

/// True when the kernel exists for `limbs`-limb types (1024, 1536, 2048, 3072 and 4096
/// bits; 1536 for the CRT halves of RSA-3072).
pub fn supports(limbs: usize) -> bool {
    matches!(limbs, 16 | 24 | 32 | 48 | 64)
}

/// Splits little-endian 64-bit limbs into `k` 52-bit digits (higher bits are dropped).
pub fn to_digits(x: &[u64], k: usize) -> [u64; MAX_DIGITS] {
    let mut out = [0u64; MAX_DIGITS];
    for (i, d) in out.iter_mut().enumerate().take(k) {
        let (w, s) = (52 * i / 64, 52 * i % 64);
        let mut v = x.get(w).copied().unwrap_or(0) >> s;
        if s > 12 {
            v |= x.get(w + 1).copied().unwrap_or(0) << (64 - s);
        }
        *d = v & MASK;
    }
    out
}

/// Joins normalised 52-bit digits into `out` (zeroed first); returns the bits above
/// `out`, shifted down (at most a few bits for values below 2n).
pub fn from_digits(d: &[u64], out: &mut [u64]) -> u64 {
    out.fill(0);
    let mut top = 0u64;
    let len = out.len();
    for (i, &v) in d.iter().enumerate() {
        let (w, s) = (52 * i / 64, 52 * i % 64);
        for (word, part) in [(w, v << s), (w + 1, if s > 12 { v >> (64 - s) } else { 0 })] {
            if word < len {
                out[word] |= part;
            } else if word == len {
                top |= part;
            }
        }
    }
    top
}

/// Runs `$body` with `V` bound to the register count for `$k` digits.
macro_rules! by_width {
    ($k:expr, $v:ident => $body:expr) => {
        match $k.div_ceil(8) {
            3 => {
                const $v: usize = 3;
                $body
            }
            4 => {
                const $v: usize = 4;
                $body
            }
            5 => {
                const $v: usize = 5;
                $body
            }
            8 => {
                const $v: usize = 8;
                $body
            }
            10 => {
                const $v: usize = 10;
                $body
            }
            v => unreachable!("no IFMA kernel for {v} registers"),
        }
    };
}

/// Montgomery arithmetic modulo n in radix 2^52 with R' = 2^(52 K): every operation takes
/// and returns 64-bit limbs (values below n; results below 2n plus the bits above the
/// limbs, for the caller's final subtraction), and keeps digits in registers inside.
#[derive(Clone, Debug)]
pub struct Radix52 {
    /// Digit count K.
    k: usize,
    /// The modulus in digits.
    n: [u64; MAX_DIGITS],
    /// -n^(-1) mod 2^52.
    k0: u64,
    /// R' mod n in digits (1 in this Montgomery form).
    one: [u64; MAX_DIGITS],
}

impl Radix52 {
    /// Constants for the odd modulus `n` (a width [`supports`] accepts), given R' mod n.
    pub fn new(n: &[u64], one: &[u64]) -> Radix52 {
        let k = digits_for(n.len());
        let mut inv = 1u64;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inv)));
        }
        Radix52 {
            k,
            n: to_digits(n, k),
            k0: inv.wrapping_neg() & MASK,
            one: to_digits(one, k),
        }
    }

    /// a b / R' mod n for a, b below 2^(64 L) with a b < 2 n R' (any a, b < n, or b = 1):
    /// the result, below 2n, goes to `out`; returns the bits above `out`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and IFMA ([`available_on`]); `a`, `b` and `out` have the
    /// width this context was built for.
    pub unsafe fn mul(&self, a: &[u64], b: &[u64], out: &mut [u64]) -> u64 {
        // SAFETY: the caller guarantees the CPU features and the widths.
        by_width!(self.k, V => unsafe { mul_t::<V>(self, a, b, out) })
    }

    /// `count` squarings of `x` (below n), as [`Radix52::mul`] leaves them.
    ///
    /// # Safety
    /// As for [`Radix52::mul`].
    pub unsafe fn sqr_n(&self, x: &[u64], count: u64, out: &mut [u64]) -> u64 {
        // SAFETY: the caller guarantees the CPU features and the widths.
        by_width!(self.k, V => unsafe { sqr_n_t::<V>(self, x, count, out) })
    }

    /// base^e (base below n, in this Montgomery form) for the little-endian exponent
    /// limbs `e`, over `bits` bits. With `ct`: a fixed window of [`CT_WINDOW`] bits, the
    /// table entry chosen by a masked scan of all entries, so neither branches nor memory
    /// addresses depend on base or e. Without it: square and multiply, multiplying only
    /// for set bits (public exponents).
    ///
    /// # Safety
    /// As for [`Radix52::mul`]; `bits <= 64 * e.len()`.
    pub unsafe fn pow(
        &self,
        base: &[u64],
        e: &[u64],
        bits: usize,
        ct: bool,
        out: &mut [u64],
    ) -> u64 {
        // SAFETY: the caller guarantees the CPU features, the widths and the exponent
        // length.
        by_width!(self.k, V => unsafe { pow_t::<V>(self, base, e, bits, ct, out) })
    }
}

impl Radix52 {
    /// Two constant-time powers (as [`Radix52::pow`] with `ct`) under two moduli of the
    /// same width, interleaved step by step: one core keeps both chains in flight.
    ///
    /// # Safety
    /// As for [`Radix52::pow`], for both contexts; both have the same digit count.
    pub unsafe fn pow_ct_pair(
        &self,
        other: &Radix52,
        base: (&[u64], &[u64]),
        e: (&[u64], &[u64]),
        bits: usize,
        out: (&mut [u64], &mut [u64]),
    ) -> (u64, u64) {
        debug_assert_eq!(self.k, other.k);
        // SAFETY: the caller guarantees the CPU features, widths and exponent lengths.
        by_width!(self.k, V => unsafe { pow_pair_t::<V>((self, other), base, e, bits, out) })
    }
}

#[inline(always)]
unsafe fn load<const V: usize>(d: &[u64; MAX_DIGITS]) -> [__m512i; V] {
    // SAFETY: AVX-512 F is present (every caller runs with it enabled).
    let mut v = [unsafe { _mm512_setzero_si512() }; V];
    for (j, x) in v.iter_mut().enumerate() {
        // SAFETY: 8 V <= MAX_DIGITS, so lanes 8j..8j+8 are in bounds; unaligned load.
        *x = unsafe { _mm512_loadu_si512(d.as_ptr().add(8 * j).cast()) };
    }
    v
}

#[inline(always)]
unsafe fn store<const V: usize>(v: &[__m512i; V], d: &mut [u64; MAX_DIGITS]) {
    for (j, x) in v.iter().enumerate() {
        // SAFETY: as in `load`.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().add(8 * j).cast(), *x) };
    }
}

/// One step of the multiplication: r = (r + a_i b + y n) / 2^52 with y making the low
/// digit vanish (digits left unnormalised).
#[inline(always)]
unsafe fn amm_step<const V: usize>(
    r: &mut [__m512i; V],
    ai: u64,
    b: &[__m512i; V],
    b0: u64,
    n: &[__m512i; V],
    n0: u64,
    k0: u64,
) {
    // SAFETY: register-only intrinsics; the caller has AVX-512 F + IFMA.
    unsafe {
        let zero = _mm512_setzero_si512();
        // Digit 0 after this step's low products, computed on the scalar side so that y
        // does not wait for the vector multiply-add.
        let r0 =
            (_mm_cvtsi128_si64(_mm512_castsi512_si128(r[0])) as u64) + (ai.wrapping_mul(b0) & MASK);
        let av = _mm512_set1_epi64(ai as i64);
        for j in 0..V {
            r[j] = _mm512_madd52lo_epu64(r[j], av, b[j]);
        }
        let y = r0.wrapping_mul(k0) & MASK;
        // Digit 0 plus the low half of y n_0 is 0 mod 2^52; its carry moves up.
        let carry = (r0 + (y.wrapping_mul(n0) & MASK)) >> 52;
        let yv = _mm512_set1_epi64(y as i64);
        for j in 0..V {
            r[j] = _mm512_madd52lo_epu64(r[j], yv, n[j]);
        }
        for j in 0..V - 1 {
            r[j] = _mm512_alignr_epi64::<1>(r[j + 1], r[j]);
        }
        r[V - 1] = _mm512_alignr_epi64::<1>(zero, r[V - 1]);
        r[0] = _mm512_add_epi64(
            r[0],
            _mm512_zextsi128_si512(_mm_cvtsi64_si128(carry as i64)),
        );
        for j in 0..V {
            r[j] = _mm512_madd52hi_epu64(r[j], av, b[j]);
            r[j] = _mm512_madd52hi_epu64(r[j], yv, n[j]);
        }
    }
}

#[inline(always)]
unsafe fn lane0(v: __m512i) -> u64 {
    // SAFETY: register intrinsic; AVX-512 F per the caller.
    unsafe { _mm_cvtsi128_si64(_mm512_castsi512_si128(v)) as u64 }
}

/// a b / R' mod n, below 2n, normalised; a (as digits) and b normalised and below 2n.
#[inline(always)]
unsafe fn amm<const V: usize>(
    a: &[u64; MAX_DIGITS],
    b: &[__m512i; V],
    n: &[__m512i; V],
    c: &Radix52,
) -> [__m512i; V] {
    // SAFETY: register-only work; the caller has AVX-512 F + IFMA.
    unsafe {
        let mut r = [_mm512_setzero_si512(); V];
        let b0 = lane0(b[0]);
        for &ai in &a[..c.k] {
            amm_step(&mut r, ai, b, b0, n, c.n[0], c.k0);
        }
        normalize(&mut r);
        r
    }
}

/// Two independent multiplications (moduli of the same width) in one loop, so that
/// each one's latency hides behind the other's work.
#[inline(always)]
unsafe fn amm2<const V: usize>(
    x: (&[u64; MAX_DIGITS], &[__m512i; V], &[__m512i; V], &Radix52),
    z: (&[u64; MAX_DIGITS], &[__m512i; V], &[__m512i; V], &Radix52),
) -> ([__m512i; V], [__m512i; V]) {
    // SAFETY: register-only work; the caller has AVX-512 F + IFMA.
    unsafe {
        let (mut r, mut s) = ([_mm512_setzero_si512(); V], [_mm512_setzero_si512(); V]);
        let (bx0, bz0) = (lane0(x.1[0]), lane0(z.1[0]));
        for i in 0..x.3.k {
            amm_step(&mut r, x.0[i], x.1, bx0, x.2, x.3.n[0], x.3.k0);
            amm_step(&mut s, z.0[i], z.1, bz0, z.2, z.3.n[0], z.3.k0);
        }
        normalize(&mut r);
        normalize(&mut s);
        (r, s)
    }
}

/// The table base^0 .. base^(2^CT_WINDOW - 1) (base^0 = R' mod n).
#[inline(always)]
unsafe fn power_table<const V: usize>(
    base: &[u64; MAX_DIGITS],
    n: &[__m512i; V],
    c: &Radix52,
) -> [[__m512i; V]; 1 << CT_WINDOW] {
    // SAFETY: register-only work and in-bounds loads; AVX-512 F + IFMA per the caller.
    unsafe {
        let mut table = [load::<V>(&c.one); 1 << CT_WINDOW];
        table[1] = load::<V>(base);
        for i in 2..table.len() {
            table[i] = amm::<V>(base, &table[i - 1], n, c);
        }
        table
    }
}

/// table[idx] by a masked scan of every entry (no secret-dependent address).
#[inline(always)]
pub(crate) unsafe fn scan<const V: usize>(
    table: &[[__m512i; V]; 1 << CT_WINDOW],
    idx: u64,
) -> [__m512i; V] {
    // SAFETY: register-only intrinsics; AVX-512 F per the caller.
    unsafe {
        let mut sel = [_mm512_setzero_si512(); V];
        for (i, t) in table.iter().enumerate() {
            let k = (ct_eq(i as u64, idx) as u8).wrapping_neg();
            for j in 0..V {
                sel[j] = _mm512_mask_blend_epi64(k, sel[j], t[j]);
            }
        }
        sel
    }
}

/// Normalises the digits (each below 2^63) of a value below 2^(52 * 8 * r.len()) to 52
/// bits each, in constant time (at most 16 registers): one carry round, then a
/// carry-lookahead on lane masks.
#[inline(always)]
pub(crate) unsafe fn normalize(r: &mut [__m512i]) {
    // SAFETY: register intrinsics only.
    unsafe {
        let mask = _mm512_set1_epi64(MASK as i64);
        let mut prev = _mm512_setzero_si512();
        for x in r.iter_mut() {
            let c = _mm512_srli_epi64::<52>(*x);
            let lo = _mm512_and_si512(*x, mask);
            // Lane 0 takes the carry out of the previous register's lane 7.
            *x = _mm512_add_epi64(lo, _mm512_alignr_epi64::<7>(c, prev));
            prev = c;
        }
        // Digits are now below 2^52 + 2^12. The last carries, as an adder would: digits
        // of 2^52 or more generate a carry (G), digits equal to 2^52 - 1 pass one on (P);
        // the carry into digit j is bit j of ((G | P) + G) ^ P (G and P are disjoint).
        // Adding it and masking leaves 52-bit digits.
        let one = _mm512_set1_epi64(1);
        // 64-bit lane masks where they suffice (up to 8 registers), 128-bit otherwise.
        macro_rules! lookahead {
            ($t:ty) => {{
                let (mut g, mut p): ($t, $t) = (0, 0);
                for (j, x) in r.iter().enumerate() {
                    g |= (_mm512_cmpgt_epu64_mask(*x, mask) as $t) << (8 * j);
                    p |= (_mm512_cmpeq_epu64_mask(*x, mask) as $t) << (8 * j);
                }
                let carries = ((g | p).wrapping_add(g)) ^ p;
                for (j, x) in r.iter_mut().enumerate() {
                    let k = (carries >> (8 * j)) as u8;
                    *x = _mm512_and_si512(_mm512_mask_add_epi64(*x, k, *x, one), mask);
                }
            }};
        }
        if r.len() <= 8 {
            lookahead!(u64)
        } else {
            lookahead!(u128)
        }
    }
}

/// Lane tables for limbs -> digits, for the two halves of a 16-digit group (13 limbs):
/// digit j = 8 h + lane is (limb[w] >> s) | (limb[w + 1] << (64 - s)), masked, for
/// w = floor(52 j / 64), s = 52 j mod 64 (a shift by 64 gives 0).
const fn to_digit_tables(h: usize) -> [[i64; 8]; 4] {
    let mut t = [[0i64; 8]; 4];
    let mut l = 0;
    while l < 8 {
        let j = 8 * h + l;
        let (w, s) = (52 * j / 64, 52 * j % 64);
        t[0][l] = w as i64;
        t[1][l] = (w + 1) as i64;
        t[2][l] = s as i64;
        t[3][l] = (64 - s) as i64;
        l += 1;
    }
    t
}

/// Lane tables for digits -> limbs: limb w = 8 h + lane of a group is
/// (d[j] >> s) | (d[j + 1] << (52 - s)) | (d[j + 2] << (104 - s)) for j = floor(64 w / 52),
/// s = 64 w mod 52 (indices mod 16; lanes past limb 12 are never stored).
const fn to_limb_tables(h: usize) -> [[i64; 8]; 6] {
    let mut t = [[0i64; 8]; 6];
    let mut l = 0;
    while l < 8 {
        let w = 8 * h + l;
        let (j, s) = (64 * w / 52, 64 * w % 52);
        t[0][l] = (j % 16) as i64;
        t[1][l] = ((j + 1) % 16) as i64;
        t[2][l] = ((j + 2) % 16) as i64;
        t[3][l] = s as i64;
        t[4][l] = (52 - s) as i64;
        t[5][l] = (104 - s) as i64;
        l += 1;
    }
    t
}

const TO_DIGITS: [[[i64; 8]; 4]; 2] = [to_digit_tables(0), to_digit_tables(1)];
const TO_LIMBS: [[[i64; 8]; 6]; 2] = [to_limb_tables(0), to_limb_tables(1)];

#[inline(always)]
unsafe fn vec(t: &[i64; 8]) -> __m512i {
    // SAFETY: reads 8 lanes from an 8-lane array.
    unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
}

/// Lanes start..start+8 of `x`, zero past its end (masked load: nothing out of bounds).
#[inline(always)]
unsafe fn load_lanes(x: &[u64], start: usize) -> __m512i {
    let have = x.len().saturating_sub(start).min(8);
    let m = ((1u16 << have) - 1) as u8;
    // SAFETY: masked-off lanes are not read; when `have` is 0 no lane is read.
    unsafe { _mm512_maskz_loadu_epi64(m, x.as_ptr().wrapping_add(start).cast()) }
}

/// Stores lanes of `v` to out[start..start+8], those below `lanes` and inside `out`.
#[inline(always)]
unsafe fn store_lanes(out: &mut [u64], start: usize, v: __m512i, lanes: usize) {
    let have = out.len().saturating_sub(start).min(lanes);
    let m = ((1u16 << have) - 1) as u8;
    // SAFETY: masked-off lanes are not written.
    unsafe { _mm512_mask_storeu_epi64(out.as_mut_ptr().wrapping_add(start).cast(), m, v) }
}

/// Limbs (a value below 2^(64 len)) to V registers of 52-bit digits.
#[inline(always)]
unsafe fn from_limbs<const V: usize>(x: &[u64]) -> [__m512i; V] {
    // SAFETY: register intrinsics and the bounded loads above.
    unsafe {
        let mask = _mm512_set1_epi64(MASK as i64);
        let mut r = [_mm512_setzero_si512(); V];
        for (v, rv) in r.iter_mut().enumerate() {
            let base = 13 * (v / 2);
            let (lo, hi) = (load_lanes(x, base), load_lanes(x, base + 8));
            let t = &TO_DIGITS[v % 2];
            let p1 = _mm512_permutex2var_epi64(lo, vec(&t[0]), hi);
            let p2 = _mm512_permutex2var_epi64(lo, vec(&t[1]), hi);
            let d = _mm512_or_si512(
                _mm512_srlv_epi64(p1, vec(&t[2])),
                _mm512_sllv_epi64(p2, vec(&t[3])),
            );
            *rv = _mm512_and_si512(d, mask);
        }
        r
    }
}

/// Normalised digits to limbs in `out`; returns limb out.len() (the bits above).
#[inline(always)]
unsafe fn to_limbs<const V: usize>(r: &[__m512i; V], out: &mut [u64]) -> u64 {
    // SAFETY: register intrinsics and the bounded stores above.
    unsafe {
        let mut top = 0u64;
        let (tg, tl) = (out.len() / 13, out.len() % 13);
        for g in 0..V.div_ceil(2) {
            let d0 = r[2 * g];
            let d1 = if 2 * g + 1 < V {
                r[2 * g + 1]
            } else {
                _mm512_setzero_si512()
            };
            let mut halves = [_mm512_setzero_si512(); 2];
            for (h, half) in halves.iter_mut().enumerate() {
                let t = &TO_LIMBS[h];
                let a = _mm512_permutex2var_epi64(d0, vec(&t[0]), d1);
                let b = _mm512_permutex2var_epi64(d0, vec(&t[1]), d1);
                let c = _mm512_permutex2var_epi64(d0, vec(&t[2]), d1);
                *half = _mm512_or_si512(
                    _mm512_srlv_epi64(a, vec(&t[3])),
                    _mm512_or_si512(
                        _mm512_sllv_epi64(b, vec(&t[4])),
                        _mm512_sllv_epi64(c, vec(&t[5])),
                    ),
                );
            }
            store_lanes(out, 13 * g, halves[0], 8);
            store_lanes(out, 13 * g + 8, halves[1], 5);
            if g == tg {
                let mut lanes = [0u64; 16];
                _mm512_storeu_si512(lanes.as_mut_ptr().cast(), halves[0]);
                _mm512_storeu_si512(lanes.as_mut_ptr().add(8).cast(), halves[1]);
                top = lanes[tl];
            }
        }
        top
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn mul_t<const V: usize>(c: &Radix52, a: &[u64], b: &[u64], out: &mut [u64]) -> u64 {
    // SAFETY: the target features are enabled for this function.
    unsafe {
        let n = load::<V>(&c.n);
        let mut digits = [0u64; MAX_DIGITS];
        store(&from_limbs::<V>(a), &mut digits);
        to_limbs(&amm::<V>(&digits, &from_limbs::<V>(b), &n, c), out)
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn sqr_n_t<const V: usize>(c: &Radix52, x: &[u64], count: u64, out: &mut [u64]) -> u64 {
    // SAFETY: the target features are enabled for this function.
    unsafe {
        let n = load::<V>(&c.n);
        let mut digits = [0u64; MAX_DIGITS];
        let mut r = from_limbs::<V>(x);
        for _ in 0..count {
            store(&r, &mut digits);
            r = amm::<V>(&digits, &r, &n, c);
        }
        to_limbs(&r, out)
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn pow_t<const V: usize>(
    c: &Radix52,
    base: &[u64],
    e: &[u64],
    bits: usize,
    ct: bool,
    out: &mut [u64],
) -> u64 {
    // SAFETY: the target features are enabled for this function.
    unsafe {
        let n = load::<V>(&c.n);
        let mut base_digits = [0u64; MAX_DIGITS];
        store(&from_limbs::<V>(base), &mut base_digits);
        let mut digits = c.one;
        let mut acc = load::<V>(&digits);
        if ct {
            // Fixed window over `bits` bits; every window: the same squarings, a masked
            // scan of the whole table, one multiplication.
            let table = power_table::<V>(&base_digits, &n, c);
            for w in (0..bits.div_ceil(CT_WINDOW)).rev() {
                for _ in 0..CT_WINDOW {
                    acc = amm::<V>(&digits, &acc, &n, c);
                    store(&acc, &mut digits);
                }
                let sel = scan(&table, window_bits(e, w * CT_WINDOW, CT_WINDOW));
                acc = amm::<V>(&digits, &sel, &n, c);
                store(&acc, &mut digits);
            }
            return to_limbs(&acc, out);
        }
        // Public exponent: a sliding window over odd powers (see `MontCtx::vartime_pow`).
        let w = sliding_width(bits);
        let mut table = vec![[0u64; MAX_DIGITS]; 1 << (w - 1)];
        table[0] = base_digits;
        let mut b2 = [0u64; MAX_DIGITS];
        store(
            &amm::<V>(&base_digits, &load::<V>(&base_digits), &n, c),
            &mut b2,
        );
        for k in 1..table.len() {
            let v = amm::<V>(&b2, &load::<V>(&table[k - 1]), &n, c);
            store(&v, &mut table[k]);
        }
        let mut started = false;
        for (sq, val) in sliding_windows(e, bits, w) {
            if !started {
                // The top window (odd value): start from its table entry.
                digits = table[(val >> 1) as usize];
                acc = load::<V>(&digits);
                started = true;
                continue;
            }
            for _ in 0..sq {
                acc = amm::<V>(&digits, &acc, &n, c);
                store(&acc, &mut digits);
            }
            if val != 0 {
                acc = amm::<V>(&table[(val >> 1) as usize], &acc, &n, c);
                store(&acc, &mut digits);
            }
        }
        to_limbs(&acc, out)
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn pow_pair_t<const V: usize>(
    c: (&Radix52, &Radix52),
    base: (&[u64], &[u64]),
    e: (&[u64], &[u64]),
    bits: usize,
    out: (&mut [u64], &mut [u64]),
) -> (u64, u64) {
    // SAFETY: the target features are enabled for this function.
    unsafe {
        let (nx, nz) = (load::<V>(&c.0.n), load::<V>(&c.1.n));
        let (mut bx, mut bz) = ([0u64; MAX_DIGITS], [0u64; MAX_DIGITS]);
        store(&from_limbs::<V>(base.0), &mut bx);
        store(&from_limbs::<V>(base.1), &mut bz);
        let tx = power_table::<V>(&bx, &nx, c.0);
        let tz = power_table::<V>(&bz, &nz, c.1);
        let (mut dx, mut dz) = (c.0.one, c.1.one);
        let (mut ax, mut az) = (load::<V>(&dx), load::<V>(&dz));
        for w in (0..bits.div_ceil(CT_WINDOW)).rev() {
            for _ in 0..CT_WINDOW {
                (ax, az) = amm2::<V>((&dx, &ax, &nx, c.0), (&dz, &az, &nz, c.1));
                store(&ax, &mut dx);
                store(&az, &mut dz);
            }
            let sx = scan(&tx, window_bits(e.0, w * CT_WINDOW, CT_WINDOW));
            let sz = scan(&tz, window_bits(e.1, w * CT_WINDOW, CT_WINDOW));
            (ax, az) = amm2::<V>((&dx, &sx, &nx, c.0), (&dz, &sz, &nz, c.1));
            store(&ax, &mut dx);
            store(&az, &mut dz);
        }
        (to_limbs(&ax, out.0), to_limbs(&az, out.1))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Scalar carry propagation over 8 V lanes.
    fn ripple(lanes: &mut [u64]) {
        let mut c = 0u64;
        for l in lanes {
            let v = *l + c;
            *l = v & MASK;
            c = v >> 52;
        }
        assert_eq!(c, 0, "test value wider than its lanes");
    }

    /// Redundant digit vectors (3 registers) for the normalisation tests: a carry that has
    /// to run through a string of all-ones digits after two rounds, and lanes up to
    /// 2^61 (the most a multiplication leaves) with room at the top.
    pub(crate) fn normalize_cases() -> Vec<[u64; 24]> {
        let mut cases: Vec<[u64; 24]> = Vec::new();
        let mut run = [0u64; 24];
        run[0] = 1 << 52;
        run[1..12].fill(MASK);
        cases.push(run);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let mut v = [0u64; 24];
            for l in v.iter_mut().take(22) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *l = x >> (3 + x % 12);
            }
            cases.push(v);
        }
        cases
    }

    #[test]
    fn normalize_matches_scalar_ripple_including_long_carry_runs() {
        if !available_on(wirespeed_util::cpu::CpuFeatures::get()) {
            return;
        }
        for case in normalize_cases() {
            let mut want = case;
            ripple(&mut want);
            let mut d = [0u64; MAX_DIGITS];
            d[..24].copy_from_slice(&case);
            // SAFETY: `available()` checked above.
            unsafe {
                let mut r = load::<3>(&d);
                normalize(&mut r);
                store(&r, &mut d);
            }
            assert_eq!(&d[..24], &want[..]);
        }
    }

    #[test]
    fn vector_conversions_match_scalar_ones() {
        if !available_on(wirespeed_util::cpu::CpuFeatures::get()) {
            return;
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for limbs in [16usize, 24, 32, 48, 64] {
            let k = digits_for(limbs);
            for top_bits in [0u32, 1, 3] {
                let v: Vec<u64> = (0..limbs)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x
                    })
                    .collect();
                let d = to_digits(&v, k);
                let mut want = d;
                // A value a few bits wider than the limbs (results below 2n can be).
                let extra = 64 * limbs;
                want[extra / 52] |= ((1u64 << top_bits) - 1) << (extra % 52) & MASK;
                want[extra / 52 + 1] |= ((1u64 << top_bits) - 1) >> (52 - extra % 52);
                let mut back = vec![0u64; limbs];
                // SAFETY: `available()` checked above; widths as each kernel expects.
                let (got_digits, top) = unsafe {
                    let mut got = [0u64; MAX_DIGITS];
                    by_width!(k, V => {
                        store(&from_limbs::<V>(&v), &mut got);
                        let top = to_limbs::<V>(&load::<V>(&want), &mut back);
                        (got, top)
                    })
                };
                assert_eq!(&got_digits[..], &d[..], "{limbs} limbs");
                assert_eq!(back, v, "{limbs} limbs");
                assert_eq!(top, (1u64 << top_bits) - 1, "{limbs} limbs");
            }
        }
    }

    #[test]
    fn digits_round_trip() {
        let x: Vec<u64> = (0..32u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let k = digits_for(32);
        let d = to_digits(&x, k);
        assert!(d.iter().all(|&v| v <= MASK));
        let mut back = [0u64; 32];
        assert_eq!(from_digits(&d[..k], &mut back), 0);
        assert_eq!(&back[..], &x[..]);
    }
}

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
//! of each lane): two vector carry rounds leave every digit <= 2^52, and the rare digit
//! equal to 2^52 is rippled by a scalar loop. That branch depends on the data, so this
//! path is for public values only: the constant-time paths (`MontCtx::pow_ct`) never
//! use it.
//!
//! Domains: `MontCtx` keeps values as a R with R = 2^(64 L). The chain multiplies once
//! by c_in = R'^2 / R mod n to get a R', squares in that domain, and multiplies once by
//! R mod n to come back to a R.

use core::arch::x86_64::*;

const MASK: u64 = (1 << 52) - 1;

/// The most 52-bit digits a chain uses (4096-bit types need 79).
pub const MAX_DIGITS: usize = 80;

/// True when the CPU has AVX-512 F and IFMA.
pub fn available() -> bool {
    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma")
}

/// Digits for an `limbs`-limb type: the least K with 2^(52 K) >= 4 * 2^(64 limbs).
pub fn digits_for(limbs: usize) -> usize {
    (64 * limbs + 2).div_ceil(52)
}

/// True when chains exist for `limbs`-limb types (1024, 2048, 3072 and 4096 bits).
pub fn supports(limbs: usize) -> bool {
    matches!(limbs, 16 | 32 | 48 | 64)
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

/// Per-modulus constants for the chain.
#[derive(Clone, Debug)]
pub struct Chain {
    /// Digit count K.
    k: usize,
    /// The modulus in digits.
    n: [u64; MAX_DIGITS],
    /// -n^(-1) mod 2^52.
    k0: u64,
    /// R'^2 / R mod n in digits (takes a R to a R').
    c_in: [u64; MAX_DIGITS],
    /// R mod n in digits (takes a R' to a R).
    c_out: [u64; MAX_DIGITS],
}

impl Chain {
    /// Constants for modulus `n` (odd, `limbs` limbs), given c_in = 2^(104 K - 64 L) mod n
    /// and R mod n as limbs.
    pub fn new(n: &[u64], c_in: &[u64], r_mod_n: &[u64]) -> Chain {
        let k = digits_for(n.len());
        let mut inv = 1u64;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inv)));
        }
        Chain {
            k,
            n: to_digits(n, k),
            k0: inv.wrapping_neg() & MASK,
            c_in: to_digits(c_in, k),
            c_out: to_digits(r_mod_n, k),
        }
    }

    /// Digit count K (c_in must be 2^(104 K - 64 L) mod n).
    pub fn digits(limbs: usize) -> usize {
        digits_for(limbs)
    }

    /// `count` squarings of `x` (a value a R < n, as `limbs` 64-bit limbs); writes the
    /// result a^(2^count) R, below 2n, into `out` and returns the bits above it.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and IFMA ([`available`]), and `out.len()` is a length
    /// [`supports`] accepts (the one this chain was built for).
    pub unsafe fn sqr_n(&self, x: &[u64], count: u64, out: &mut [u64]) -> u64 {
        let d = to_digits(x, self.k);
        // SAFETY: the caller guarantees the CPU features; V matches K for each width.
        let r = unsafe {
            match self.k.div_ceil(8) {
                3 => chain::<3>(self, &d, count),
                5 => chain::<5>(self, &d, count),
                8 => chain::<8>(self, &d, count),
                10 => chain::<10>(self, &d, count),
                v => unreachable!("no chain for {v} vectors"),
            }
        };
        from_digits(&r[..self.k], out)
    }
}

#[inline(always)]
unsafe fn load<const V: usize>(d: &[u64; MAX_DIGITS]) -> [__m512i; V] {
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

/// a b / R' mod n, below 2n, with unnormalised digits; a and b normalised and below 2n.
#[inline(always)]
unsafe fn amm<const V: usize>(
    a: &[u64; MAX_DIGITS],
    b: &[__m512i; V],
    n: &[__m512i; V],
    n0: u64,
    k0: u64,
    k: usize,
) -> [__m512i; V] {
    // SAFETY (whole body): register-only intrinsics; the caller has AVX-512 F + IFMA.
    unsafe {
        let zero = _mm512_setzero_si512();
        let mut r = [zero; V];
        for &ai in &a[..k] {
            let av = _mm512_set1_epi64(ai as i64);
            for j in 0..V {
                r[j] = _mm512_madd52lo_epu64(r[j], av, b[j]);
            }
            let r0 = _mm_cvtsi128_si64(_mm512_castsi512_si128(r[0])) as u64;
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
            r[0] = _mm512_add_epi64(r[0], _mm512_zextsi128_si512(_mm_cvtsi64_si128(carry as i64)));
            for j in 0..V {
                r[j] = _mm512_madd52hi_epu64(r[j], av, b[j]);
                r[j] = _mm512_madd52hi_epu64(r[j], yv, n[j]);
            }
        }
        r
    }
}

/// Normalises the digits of a value below 2^(52 K) to 52 bits each.
#[inline(always)]
unsafe fn normalize<const V: usize>(r: &mut [__m512i; V]) {
    // SAFETY (whole body): register intrinsics, and a scalar view of `r` as u64 lanes.
    unsafe {
        let mask = _mm512_set1_epi64(MASK as i64);
        for _ in 0..2 {
            let mut prev = _mm512_setzero_si512();
            for x in r.iter_mut() {
                let c = _mm512_srli_epi64::<52>(*x);
                let lo = _mm512_and_si512(*x, mask);
                // Lane 0 takes the carry out of the previous register's lane 7.
                *x = _mm512_add_epi64(lo, _mm512_alignr_epi64::<7>(c, prev));
                prev = c;
            }
        }
        // Two rounds leave digits <= 2^52; a digit equal to 2^52 needs a ripple (rare).
        let mut over = 0u8;
        for x in r.iter() {
            over |= _mm512_cmpgt_epu64_mask(*x, mask);
        }
        if over != 0 {
            let lanes = core::slice::from_raw_parts_mut(r.as_mut_ptr().cast::<u64>(), 8 * V);
            let mut c = 0u64;
            for l in lanes {
                let v = *l + c;
                *l = v & MASK;
                c = v >> 52;
            }
        }
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn chain<const V: usize>(c: &Chain, x: &[u64; MAX_DIGITS], count: u64) -> [u64; MAX_DIGITS] {
    // SAFETY (whole body): the target features are enabled for this function.
    unsafe {
        let n = load::<V>(&c.n);
        let (n0, k0, k) = (c.n[0], c.k0, c.k);
        let mut digits = [0u64; MAX_DIGITS];
        let mut r = amm::<V>(x, &load::<V>(&c.c_in), &n, n0, k0, k);
        normalize(&mut r);
        for _ in 0..count {
            store(&r, &mut digits);
            r = amm::<V>(&digits, &r, &n, n0, k0, k);
            normalize(&mut r);
        }
        store(&r, &mut digits);
        let mut r = amm::<V>(&digits, &load::<V>(&c.c_out), &n, n0, k0, k);
        normalize(&mut r);
        store(&r, &mut digits);
        digits
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn normalize_matches_scalar_ripple_including_long_carry_runs() {
        if !available() {
            return;
        }
        let mut cases: Vec<[u64; 24]> = Vec::new();
        // A carry that has to run through a string of all-ones digits after two rounds.
        let mut run = [0u64; 24];
        run[0] = 1 << 52;
        run[1..12].fill(MASK);
        cases.push(run);
        // Lanes near 2^61 (the most a multiplication leaves), with room at the top.
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
        for case in cases {
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
    fn digits_round_trip() {
        let x: Vec<u64> = (0..32u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let k = digits_for(32);
        let d = to_digits(&x, k);
        assert!(d.iter().all(|&v| v <= MASK));
        let mut back = [0u64; 32];
        assert_eq!(from_digits(&d[..k], &mut back), 0);
        assert_eq!(&back[..], &x[..]);
    }
}

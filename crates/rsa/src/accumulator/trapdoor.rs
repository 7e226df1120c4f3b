//! The trapdoor: [`Trapdoor`] (lambda(n) for n = p q) and the constant-time root
//! A^(x^-1 mod lambda(n)) ([`ct_root`]), in time independent of lambda: lambda mod x by
//! Montgomery arithmetic, its inverse by Fermat's little theorem modulo the public prime
//! x, the exact division by x as a multiplication by x^-1 mod 2^k, and the power with
//! [`MontCtx::pow_ct`]. The context modulo x is built for the group's [`CpuFeatures`]
//! (those of [`super::RsaGroup::new_with`]). Building a [`Trapdoor`] uses num-bigint and
//! is not constant time (once per key).

use std::fmt;

use num_bigint::BigUint;
use wirespeed_bigint::{CpuFeatures, MontCtx, Uint};

#[cfg(doc)]
use super::PRIME_BITS;
use super::{AccumulatorError, MAX_MODULUS_BITS, U256};
use crate::PrivateKey;

/// Width of the exact division in [`ct_inverse_mod`]: lambda(n) times a 256-bit number.
const WIDE: usize = 72;

/// x^-1 mod lambda, in time independent of lambda (x: a public [`PRIME_BITS`]-bit prime,
/// lambda < 2^(64 L), L a multiple of 4). None when x divides lambda.
///
/// r = lambda mod x (Horner over 256-bit chunks in Montgomery form modulo x), v = r^(x-2)
/// mod x = lambda^-1 mod x (Fermat; the exponent is public), then lambda v - 1 = k x
/// exactly with 0 < k < lambda, and x (lambda - k) = 1 mod lambda; k is found by
/// multiplying lambda v - 1 by x^-1 mod 2^(64 WIDE) (an exact division). The context
/// modulo x is built for a CPU with features `f`.
fn ct_inverse_mod<const L: usize>(lambda: &Uint<L>, x: &U256, f: &CpuFeatures) -> Option<Uint<L>> {
    let cx = MontCtx::<4>::new_with(x, f).ok()?;
    // 2^256 mod x = 2^256 - x, since 2^255 <= x < 2^256.
    let t = cx.to_mont(&U256::ZERO.overflowing_sub(x).0);
    let mut acc = U256::ZERO;
    for j in (0..L / 4).rev() {
        let chunk = Uint(std::array::from_fn(|i| lambda.0[4 * j + i]));
        acc = ct_add_mod(&cx.mul(&acc, &t), &cx.reduce_to_mont(&chunk), x);
    }
    let (xm2, _) = x.overflowing_sub(&U256::from_u64(2));
    let v = cx.from_mont(&cx.vartime_pow(&acc, &xm2.0));
    if v.is_zero() {
        return None;
    }
    let lam_w = lambda.resize::<WIDE>();
    let (t, _) = lam_w
        .wrapping_mul(&v.resize::<WIDE>())
        .overflowing_sub(&Uint::ONE);
    let k = t.wrapping_mul(&inverse_mod_2k::<WIDE>(&x.resize::<WIDE>()));
    Some(lambda.overflowing_sub(&k.resize::<L>()).0)
}

/// (a + b) mod m for a, b < m, without a branch.
fn ct_add_mod<const L: usize>(a: &Uint<L>, b: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    let (s, carry) = a.overflowing_add(b);
    let (t, borrow) = s.overflowing_sub(m);
    Uint::select(&t, &s, (borrow as u64) & !(carry as u64) & 1)
}

/// x^-1 mod 2^(64 W) for odd x, by Newton's iteration (each step doubles the correct
/// low bits).
fn inverse_mod_2k<const W: usize>(x: &Uint<W>) -> Uint<W> {
    let mut inv = Uint::<W>::ONE;
    let mut good = 1;
    while good < 64 * W {
        let (two_minus, _) = Uint::<W>::from_u64(2).overflowing_sub(&x.wrapping_mul(&inv));
        inv = inv.wrapping_mul(&two_minus);
        good *= 2;
    }
    inv
}

/// The accumulator manager's trapdoor: lambda(n) = lcm(p - 1, q - 1) for n = p q.
///
/// Holding it allows forging witnesses for any element (see the module docs): keep it
/// with the manager. Its `Debug` output shows the modulus size only.
#[derive(Clone)]
pub struct Trapdoor {
    pub(super) n: BigUint,
    /// lambda(n), zero-padded to 4096 bits.
    pub(super) lambda: Uint<64>,
}

impl fmt::Debug for Trapdoor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Trapdoor({}-bit modulus, factors hidden)", self.n.bits())
    }
}

impl Trapdoor {
    /// From the two distinct odd prime factors of the modulus (their primality is not
    /// tested here; every trapdoor result is checked before it is used). Variable time,
    /// once per key.
    pub fn new(p: &BigUint, q: &BigUint) -> Result<Trapdoor, AccumulatorError> {
        let three = BigUint::from(3u8);
        if p < &three || q < &three || !p.bit(0) || !q.bit(0) {
            return Err(AccumulatorError::BadTrapdoor("factors must be odd primes"));
        }
        if p == q {
            return Err(AccumulatorError::BadTrapdoor("the factors must differ"));
        }
        let n = p * q;
        if n.bits() as usize > MAX_MODULUS_BITS {
            return Err(AccumulatorError::ModulusSize {
                bits: n.bits() as usize,
            });
        }
        let (pm1, qm1) = (p - 1u8, q - 1u8);
        let lambda = &pm1 * &qm1 / gcd(&pm1, &qm1);
        Ok(Trapdoor {
            n,
            lambda: Uint::from_biguint_wrapping(&lambda),
        })
    }

    /// From an RSA private key's prime factors.
    pub fn from_private_key(key: &PrivateKey) -> Result<Trapdoor, AccumulatorError> {
        let (p, q) = key.primes();
        Trapdoor::new(&p, &q)
    }

    /// The modulus p q.
    pub fn modulus(&self) -> &BigUint {
        &self.n
    }
}

/// gcd(a, b) by Euclid (public sizes; used once per trapdoor).
fn gcd(a: &BigUint, b: &BigUint) -> BigUint {
    let (mut a, mut b) = (a.clone(), b.clone());
    while b != BigUint::from(0u8) {
        let r = &a % &b;
        a = b;
        b = r;
    }
    a
}

/// value^(x^-1 mod lambda) mod n, constant time in lambda; None when x divides lambda.
/// The context modulo x is built for a CPU with features `f` (the group's).
pub(super) fn ct_root<const L: usize>(
    c: &MontCtx<L>,
    value: &BigUint,
    lambda: &Uint<64>,
    x: &U256,
    f: &CpuFeatures,
) -> Option<BigUint> {
    let u = ct_inverse_mod::<L>(&lambda.resize::<L>(), x, f)?;
    let a = c.to_mont(&Uint::from_biguint_wrapping(value));
    Some(c.from_mont(&c.pow_ct(&a, &u)).to_biguint())
}

#[cfg(test)]
mod tests {
    use super::super::hash_to_prime;
    use super::*;

    #[test]
    fn inverse_mod_2k_inverts() {
        let x = Uint::<8>([0x1234_5678_9abc_def1, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(x.wrapping_mul(&inverse_mod_2k(&x)), Uint::ONE);
    }

    #[test]
    fn constant_time_inverse_matches_num_bigint() {
        let x = hash_to_prime(b"x");
        let xb = x.to_biguint();
        // lambda: an even number of 1000 bits, and one with x as a factor.
        let mut l = [0u64; 16];
        for (i, v) in l.iter_mut().enumerate().take(15) {
            *v = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1);
        }
        l[0] &= !1;
        let lambda = Uint::<16>(l);
        let lb = lambda.to_biguint();
        let multiple = Uint::<16>::from_biguint_wrapping(&(&xb * 12345u32));
        for f in [CpuFeatures::none(), CpuFeatures::get().clone()] {
            let u = ct_inverse_mod(&lambda, &x, &f).expect("invertible");
            assert_eq!(u.to_biguint(), xb.modinv(&lb).expect("coprime"));
            assert!(ct_inverse_mod(&multiple, &x, &f).is_none());
        }
    }
}

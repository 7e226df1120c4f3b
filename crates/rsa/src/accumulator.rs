//! An RSA accumulator: a constant-size commitment A to a set of byte strings, with
//! membership witnesses, in the group (Z/nZ)* of an RSA modulus n whose factorization
//! nobody knows.
//!
//! Each element is hashed to a 256-bit prime x ([`hash_to_prime`]); the set
//! {x_1, ..., x_m} is committed to as A = g^(x_1 ... x_m) mod n for a base g. A witness
//! for x is w = g^(product of the other primes), and checking it is one 256-bit power:
//! w^x == A ([`Accumulator::verify`]).
//!
//! - [`Accumulator::add_batch`]: hashes the elements, multiplies their primes with a
//!   product tree, and raises A to the product: one power for the whole batch.
//! - [`Accumulator::witnesses`]: witnesses for many members at once by the root-factor
//!   method (Sander, Ta-Shma, Yung, "Blind, auditable membership proofs", FC 2000;
//!   Boneh, Bunz, Fisch, "Batching techniques for accumulators with applications to IOPs
//!   and stateless blockchains", CRYPTO 2019): for a set split into halves L and R, the
//!   witnesses of L are those of the accumulator g^(prod R) over L alone, and the
//!   witnesses of R those of g^(prod L) over R; recursing to single members gives all m
//!   witnesses with O(m log m) 256-bit exponent steps instead of the O(m^2) of one power
//!   per member. The two halves and the two recursive calls run in parallel (rayon) while
//!   a subset holds at least [`PARALLEL_MIN`] members; halves that hold no requested
//!   member are skipped.
//! - [`Accumulator::update_witness_on_add`], [`Accumulator::update_witness_on_remove`]:
//!   a member's witness after other elements were added (w^(product of the new primes))
//!   or removed (with Bezout coefficients, no trapdoor).
//! - With the trapdoor ([`Trapdoor`]: the factors p and q of n), [`Accumulator::remove`]
//!   takes x out (A' = A^(x^-1 mod lambda(n))) and [`Accumulator::trapdoor_witness`]
//!   computes one witness with a single power, whatever the size of the set.
//!
//! Set semantics: the accumulator holds a set of primes. Adding an element whose prime is
//! already a member, or that appears twice in one batch, is an error
//! ([`AccumulatorError::AlreadyMember`]) and leaves the accumulator unchanged (a batch
//! is added whole or not at all); removing or asking a witness for a non-member is
//! [`AccumulatorError::NotMember`]. Members are kept in insertion order; a removal moves
//! the last member into the freed slot.
//!
//! # Security assumptions
//!
//! - **Strong RSA assumption**: given n and a random y in (Z/nZ)*, nobody can find
//!   u and an e > 1 with u^e = y mod n. Under it, no one without the trapdoor can produce
//!   a witness for a prime that is not a member: w^x = A with x coprime to every member
//!   would give an x-th root of g (Baric, Pfitzmann, "Collision-free accumulators and
//!   fail-stop signature schemes without trees", EUROCRYPT 1997).
//! - **Unknown factorization**: the modulus must be one whose factors nobody holds, such
//!   as the RSA-2048 factoring challenge number (RSA Laboratories, 1991; the CLI's
//!   default), or a modulus from a ceremony in which the factors were discarded. Whoever
//!   knows p and q can compute x-th roots and so forge a witness for any element: the
//!   [`Trapdoor`] operations are for the accumulator's manager only, and verifiers must
//!   not accept a modulus whose factors the manager kept unless they trust the manager.
//!   Moduli of 1024 to 4096 bits are accepted; 1024 bits is for tests only (at least 2048
//!   bits for 112-bit security).
//! - **The base**: g must not be of known small order (1, -1) nor chosen with a known
//!   root. [`derive_base`] hashes n to a number below n and squares it: a quadratic
//!   residue that nobody chose, so no one knows a root of it.
//! - **Hash to prime**: distinct elements must map to distinct primes, and no one may
//!   find a non-member whose prime divides the product of the members (for a prime: equals
//!   a member's prime). [`hash_to_prime`] behaves as a random choice among the roughly
//!   2^247 primes of 256 bits, so a collision costs about 2^124 SHA-256 evaluations (a
//!   birthday bound) and hitting a given member's prime about 2^247: primes of
//!   2 lambda = 256 bits for lambda = 128-bit security, as is usual for hashed
//!   accumulators (shorter primes make collisions, and so forged memberships, feasible).
//!   Primality is decided by Baillie-PSW ([`wirespeed_bigint::prime`]), for which no
//!   counterexample is known.
//! - **Witness order**: -1 has order 2 in (Z/nZ)*; since every x is odd, (-w)^x = -A, so
//!   a sign flip never verifies.
//!
//! # Timing
//!
//! Everything except the trapdoor operations works on public data and runs in variable
//! time (the internal powers are named `vartime_`). The trapdoor operations compute
//! x^-1 mod lambda(n) and A^(x^-1) in time independent of the trapdoor: lambda(n) mod x
//! by Montgomery arithmetic, its inverse by Fermat's little theorem modulo the public
//! prime x, the exact division by x as a multiplication by x^-1 mod 2^k, and the power
//! with [`MontCtx::pow_ct`]. Building a [`Trapdoor`] (lambda(n) = lcm(p - 1, q - 1), once
//! per key) uses num-bigint and is not constant time, like key loading in [`crate::key`].
//! Each trapdoor result is checked (its x-th power must give A back) before it is used.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use num_bigint::BigUint;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use wirespeed_bigint::{prime, MontCtx, Uint};

use crate::PrivateKey;

/// A 256-bit unsigned integer: the element primes.
pub type U256 = Uint<4>;

/// Size of every element prime in bits (the top bit is always set).
pub const PRIME_BITS: usize = 256;
/// Smallest accepted modulus in bits (for tests; use 2048 or more).
pub const MIN_MODULUS_BITS: usize = 1024;
/// Largest accepted modulus in bits.
pub const MAX_MODULUS_BITS: usize = 4096;
/// Most members an accumulator holds.
pub const MAX_MEMBERS: usize = 1 << 20;
/// Subsets of at least this many members split their work across rayon tasks.
pub const PARALLEL_MIN: usize = 8;

/// Domain-separation tag of [`hash_to_prime`].
const PRIME_TAG: &[u8] = b"wirespeed-rsa/v1/accumulator/hash-to-prime";
/// Domain-separation tag of [`derive_base`].
const BASE_TAG: &[u8] = b"wirespeed-rsa/v1/accumulator/base";

/// Why an accumulator operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccumulatorError {
    /// The modulus is not of 1024 to 4096 bits.
    ModulusSize {
        /// Its size.
        bits: usize,
    },
    /// The modulus is even.
    EvenModulus,
    /// The base is unusable (why).
    BadBase(&'static str),
    /// The accumulator value is 0, 1, n - 1, or not below the modulus.
    ValueOutOfRange,
    /// A member prime is not an odd 256-bit number (index in the list given).
    BadMember {
        /// Position in the list.
        index: usize,
    },
    /// More members than [`MAX_MEMBERS`].
    TooManyMembers {
        /// How many there would be.
        count: usize,
    },
    /// The element (index in the batch) is already a member, or repeats an earlier one
    /// of the same batch; nothing was added.
    AlreadyMember {
        /// Position in the batch.
        index: usize,
    },
    /// The element (index in the list given; 0 for a single element) is not a member.
    NotMember {
        /// Position in the list.
        index: usize,
    },
    /// The witness is not below the modulus.
    WitnessOutOfRange,
    /// The witness does not verify.
    WitnessRejected,
    /// The trapdoor's factors are not the factors of this accumulator's modulus.
    TrapdoorMismatch,
    /// The factors cannot form a trapdoor (why).
    BadTrapdoor(&'static str),
    /// The element's prime divides lambda(n): it has no inverse there (probability about
    /// 2^-250 for a hashed prime).
    NotInvertible,
    /// A trapdoor result failed its check (the factors are not primes, or a fault);
    /// nothing was changed.
    CheckFailed,
}

impl fmt::Display for AccumulatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccumulatorError::ModulusSize { bits } => write!(
                f,
                "{bits}-bit modulus not supported ({MIN_MODULUS_BITS} to {MAX_MODULUS_BITS} bits)"
            ),
            AccumulatorError::EvenModulus => f.write_str("the modulus is even"),
            AccumulatorError::BadBase(why) => write!(f, "bad base: {why}"),
            AccumulatorError::ValueOutOfRange => {
                f.write_str("accumulator value is 0, 1, n - 1 or not below the modulus n")
            }
            AccumulatorError::BadMember { index } => {
                write!(f, "member {index} is not an odd {PRIME_BITS}-bit prime")
            }
            AccumulatorError::TooManyMembers { count } => {
                write!(f, "{count} members; at most {MAX_MEMBERS} are supported")
            }
            AccumulatorError::AlreadyMember { index } => {
                write!(f, "element {index} is already a member")
            }
            AccumulatorError::NotMember { index } => write!(f, "element {index} is not a member"),
            AccumulatorError::WitnessOutOfRange => f.write_str("witness not below the modulus"),
            AccumulatorError::WitnessRejected => f.write_str("witness does not verify"),
            AccumulatorError::TrapdoorMismatch => {
                f.write_str("the trapdoor's factors are not those of this modulus")
            }
            AccumulatorError::BadTrapdoor(why) => write!(f, "bad trapdoor: {why}"),
            AccumulatorError::NotInvertible => {
                f.write_str("the element's prime divides lambda(n); it cannot be removed")
            }
            AccumulatorError::CheckFailed => {
                f.write_str("trapdoor result failed its check; nothing was changed")
            }
        }
    }
}

impl std::error::Error for AccumulatorError {}

// ---------------------------------------------------------------------------------------
// Hash to prime and the base.

/// Odd primes below 256 grouped so that each group's product fits in a u64: one
/// remainder per group sieves a candidate before the probable-prime test.
fn sieve_groups() -> &'static [(u64, Vec<u64>)] {
    static GROUPS: OnceLock<Vec<(u64, Vec<u64>)>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let primes = (3u64..256).filter(|&p| (2..p).take_while(|d| d * d <= p).all(|d| p % d != 0));
        let mut groups: Vec<(u64, Vec<u64>)> = vec![];
        for p in primes {
            match groups.last_mut() {
                Some((prod, ps)) if prod.checked_mul(p).is_some() => {
                    *prod *= p;
                    ps.push(p);
                }
                _ => groups.push((p, vec![p])),
            }
        }
        groups
    })
}

/// True when no odd prime below 256 divides c (c above 256).
fn passes_sieve(c: &U256) -> bool {
    sieve_groups().iter().all(|(prod, ps)| {
        let r = c.rem_u64(*prod);
        ps.iter().all(|p| !r.is_multiple_of(*p))
    })
}

/// The prime that represents `element`: the first candidate that passes Baillie-PSW
/// ([`wirespeed_bigint::prime::is_probable_prime`]), candidate = SHA-256(tag, element,
/// counter) read big-endian with the top bit and the low bit set, counter = 0, 1, ...
/// Every field is length-prefixed (8-byte big-endian length); the tag is
/// `wirespeed-rsa/v1/accumulator/hash-to-prime`, the counter 8 bytes big-endian. The
/// result has exactly [`PRIME_BITS`] bits; about 89 candidates are drawn on average (most
/// leave at a sieve by the primes below 256). Deterministic; variable time (public data).
pub fn hash_to_prime(element: &[u8]) -> U256 {
    prime::hashed_candidates(&[PRIME_TAG, element])
        .map(|digest| {
            let mut c = U256::from_be_bytes(&digest).unwrap_or(U256::ZERO);
            c.0[3] |= 1 << 63;
            c.0[0] |= 1;
            c
        })
        .find(|c| passes_sieve(c) && prime::is_probable_prime(c))
        .unwrap_or_else(|| unreachable!("the candidate stream is endless"))
}

/// The default base for modulus n: h^2 mod n, with h = SHA-256 blocks of (tag, n, block
/// counter) over n's byte length plus 16 bytes, reduced mod n (every field length-prefixed,
/// the tag `wirespeed-rsa/v1/accumulator/base`). A quadratic residue that nobody chose;
/// a draw that is not a unit, or whose square is 0, 1 or n - 1, moves on to the next
/// attempt counter (never seen in practice).
pub fn derive_base(n: &BigUint) -> BigUint {
    let nb = n.to_bytes_be();
    let want = nb.len() + 16;
    let one = BigUint::from(1u8);
    for attempt in 0u64.. {
        let mut bytes = Vec::with_capacity(want + 32);
        let mut block = 0u64;
        while bytes.len() < want {
            let mut h = Sha256::new();
            for field in [BASE_TAG, &nb, &attempt.to_be_bytes(), &block.to_be_bytes()] {
                h.update((field.len() as u64).to_be_bytes());
                h.update(field);
            }
            bytes.extend_from_slice(&h.finalize());
            block += 1;
        }
        bytes.truncate(want);
        let h = BigUint::from_bytes_be(&bytes) % n;
        let g = &h * &h % n;
        if g > one && g != n - &one && h.modinv(n).is_some() {
            return g;
        }
    }
    unreachable!("the attempt counter does not run out")
}

// ---------------------------------------------------------------------------------------
// The group.

/// A Montgomery context at the working width (boxed: the widths differ in size).
#[derive(Clone, Debug)]
enum Ctx {
    W16(Box<MontCtx<16>>),
    W32(Box<MontCtx<32>>),
    W48(Box<MontCtx<48>>),
    W64(Box<MontCtx<64>>),
}

/// Runs `$body` with `$c` bound to the group's `&MontCtx<L>` (L = 16, 32, 48 or 64).
macro_rules! with_ctx {
    ($g:expr, $c:ident => $body:expr) => {
        match &$g.ctx {
            Ctx::W16(b) => {
                let $c = &**b;
                $body
            }
            Ctx::W32(b) => {
                let $c = &**b;
                $body
            }
            Ctx::W48(b) => {
                let $c = &**b;
                $body
            }
            Ctx::W64(b) => {
                let $c = &**b;
                $body
            }
        }
    };
}

/// The limbs of b (b below 2^(64 L)).
fn to_uint<const L: usize>(b: &BigUint) -> Uint<L> {
    let mut out = [0u64; L];
    for (o, d) in out.iter_mut().zip(b.iter_u64_digits()) {
        *o = d;
    }
    Uint(out)
}

fn from_uint<const L: usize>(u: &Uint<L>) -> BigUint {
    BigUint::from_bytes_be(&u.to_be_bytes())
}

/// The group (Z/nZ)* of an odd modulus of 1024 to 4096 bits, with its Montgomery context
/// at the smallest of 1024, 2048, 3072 and 4096 bits that holds n.
#[derive(Clone, Debug)]
pub struct RsaGroup {
    n: BigUint,
    bits: usize,
    ctx: Ctx,
}

impl PartialEq for RsaGroup {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n
    }
}

impl Eq for RsaGroup {}

impl RsaGroup {
    /// Validates n (odd, 1024 to 4096 bits) and builds its context.
    pub fn new(n: &BigUint) -> Result<RsaGroup, AccumulatorError> {
        let bits = n.bits() as usize;
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) {
            return Err(AccumulatorError::ModulusSize { bits });
        }
        if !n.bit(0) {
            return Err(AccumulatorError::EvenModulus);
        }
        fn ctx<const L: usize>(n: &BigUint) -> Result<Box<MontCtx<L>>, AccumulatorError> {
            MontCtx::new(&to_uint::<L>(n))
                .map(Box::new)
                .map_err(|_| AccumulatorError::EvenModulus)
        }
        let ctx = match bits {
            0..=1024 => Ctx::W16(ctx(n)?),
            1025..=2048 => Ctx::W32(ctx(n)?),
            2049..=3072 => Ctx::W48(ctx(n)?),
            _ => Ctx::W64(ctx(n)?),
        };
        Ok(RsaGroup {
            n: n.clone(),
            bits,
            ctx,
        })
    }

    /// The modulus n.
    pub fn modulus(&self) -> &BigUint {
        &self.n
    }

    /// Size of n in bits.
    pub fn bits(&self) -> usize {
        self.bits
    }

    /// Size of n in bytes (the width of every group element when written out).
    pub fn byte_len(&self) -> usize {
        self.bits.div_ceil(8)
    }

    /// base^e mod n (base reduced mod n first); variable time (public data).
    pub fn vartime_pow(&self, base: &BigUint, e: &BigUint) -> BigUint {
        let limbs = e.to_u64_digits();
        let base = base % &self.n;
        with_ctx!(self, c => {
            let b = c.to_mont(&to_uint(&base));
            from_uint(&c.from_mont(&c.vartime_pow(&b, &limbs)))
        })
    }

    /// Checks a base: a unit other than 0, 1 and n - 1.
    fn check_base(&self, g: &BigUint) -> Result<(), AccumulatorError> {
        let one = BigUint::from(1u8);
        if *g >= self.n {
            return Err(AccumulatorError::BadBase("not below the modulus"));
        }
        if *g <= one || *g == &self.n - &one {
            return Err(AccumulatorError::BadBase(
                "0, 1 and n - 1 have order at most 2",
            ));
        }
        if g.modinv(&self.n).is_none() {
            return Err(AccumulatorError::BadBase(
                "shares a factor with the modulus",
            ));
        }
        Ok(())
    }
}

/// w^x == value? (w < n checked by the caller).
fn vartime_check<const L: usize>(c: &MontCtx<L>, w: &BigUint, x: &U256, value: &BigUint) -> bool {
    let wm = c.to_mont(&to_uint(w));
    c.from_mont(&c.vartime_pow(&wm, &x.0)) == to_uint::<L>(value)
}

/// base^(product of the primes): one 256-bit power per prime (the same exponent bits as
/// one power by the product, without forming it). Montgomery form in and out.
fn vartime_pow_chain<const L: usize>(c: &MontCtx<L>, base: &Uint<L>, primes: &[U256]) -> Uint<L> {
    primes
        .iter()
        .fold(*base, |acc, x| c.vartime_pow(&acc, &x.0))
}

/// Root factor: out[i] = g^(product of primes[j], j != i) for every i with want[i], for g
/// in Montgomery form (other entries stay None).
fn vartime_root_factor<const L: usize>(
    c: &MontCtx<L>,
    g: Uint<L>,
    primes: &[U256],
    want: &[bool],
    out: &mut [Option<Uint<L>>],
) {
    if !want.iter().any(|&w| w) {
        return;
    }
    if primes.len() == 1 {
        out[0] = Some(g);
        return;
    }
    let mid = primes.len() / 2;
    let (pl, pr) = primes.split_at(mid);
    let (wl, wr) = want.split_at(mid);
    let (ol, or) = out.split_at_mut(mid);
    let (need_l, need_r) = (wl.iter().any(|&w| w), wr.iter().any(|&w| w));
    // The left half's base is g^(prod R); the right half's is g^(prod L).
    let base_l = || need_l.then(|| vartime_pow_chain(c, &g, pr));
    let base_r = || need_r.then(|| vartime_pow_chain(c, &g, pl));
    let parallel = primes.len() >= PARALLEL_MIN;
    let (gl, gr) = if parallel {
        rayon::join(base_l, base_r)
    } else {
        (base_l(), base_r())
    };
    let left = |out: &mut [Option<Uint<L>>]| {
        if let Some(gl) = gl {
            vartime_root_factor(c, gl, pl, wl, out)
        }
    };
    let right = |out: &mut [Option<Uint<L>>]| {
        if let Some(gr) = gr {
            vartime_root_factor(c, gr, pr, wr, out)
        }
    };
    if parallel {
        rayon::join(|| left(ol), || right(or));
    } else {
        left(ol);
        right(or);
    }
}

/// The product of the primes, by a product tree (halves multiplied in parallel above a few
/// dozen leaves).
fn product_tree(primes: &[U256]) -> BigUint {
    if primes.len() <= 16 {
        return primes
            .iter()
            .fold(BigUint::from(1u8), |acc, x| acc * from_uint(x));
    }
    let (l, r) = primes.split_at(primes.len() / 2);
    let (a, b) = if primes.len() >= 256 {
        rayon::join(|| product_tree(l), || product_tree(r))
    } else {
        (product_tree(l), product_tree(r))
    };
    a * b
}

/// An odd number with exactly [`PRIME_BITS`] bits (the shape of every member prime).
fn well_shaped(x: &U256) -> bool {
    x.bits() == PRIME_BITS && x.is_odd()
}

// ---------------------------------------------------------------------------------------
// The trapdoor.

/// Width of the exact division in [`ct_inverse_mod`]: lambda(n) times a 256-bit number.
const WIDE: usize = 72;

/// x^-1 mod lambda, in time independent of lambda (x: a public [`PRIME_BITS`]-bit prime,
/// lambda < 2^(64 L), L a multiple of 4). None when x divides lambda.
///
/// r = lambda mod x (Horner over 256-bit chunks in Montgomery form modulo x), v = r^(x-2)
/// mod x = lambda^-1 mod x (Fermat; the exponent is public), then lambda v - 1 = k x
/// exactly with 0 < k < lambda, and x (lambda - k) = 1 mod lambda; k is found by
/// multiplying lambda v - 1 by x^-1 mod 2^(64 WIDE) (an exact division).
fn ct_inverse_mod<const L: usize>(lambda: &Uint<L>, x: &U256) -> Option<Uint<L>> {
    let cx = MontCtx::<4>::new(x).ok()?;
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
    n: BigUint,
    /// lambda(n), zero-padded to 4096 bits.
    lambda: Uint<64>,
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
            lambda: to_uint(&lambda),
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
fn ct_root<const L: usize>(
    c: &MontCtx<L>,
    value: &BigUint,
    lambda: &Uint<64>,
    x: &U256,
) -> Option<BigUint> {
    let u = ct_inverse_mod::<L>(&lambda.resize::<L>(), x)?;
    let a = c.to_mont(&to_uint(value));
    Some(from_uint(&c.from_mont(&c.pow_ct(&a, &u))))
}

// ---------------------------------------------------------------------------------------
// The accumulator.

/// An RSA accumulator: the group, the base g, the value A = g^(product of the members)
/// and the member primes (needed to compute witnesses).
#[derive(Clone, Debug)]
pub struct Accumulator {
    group: RsaGroup,
    base: BigUint,
    value: BigUint,
    members: Vec<U256>,
    index: HashMap<U256, usize>,
}

impl Accumulator {
    /// An empty accumulator with the hashed base [`derive_base`] (A = g).
    pub fn new(group: RsaGroup) -> Accumulator {
        let base = derive_base(group.modulus());
        Accumulator {
            group,
            value: base.clone(),
            base,
            members: vec![],
            index: HashMap::new(),
        }
    }

    /// An empty accumulator with a given base: a unit other than 0, 1 and n - 1 (prefer
    /// [`Accumulator::new`]: a base with a known root breaks soundness).
    pub fn with_base(group: RsaGroup, base: &BigUint) -> Result<Accumulator, AccumulatorError> {
        group.check_base(base)?;
        Ok(Accumulator {
            group,
            value: base.clone(),
            base: base.clone(),
            members: vec![],
            index: HashMap::new(),
        })
    }

    /// Rebuilds an accumulator from saved parts. Checks the base, that the value is a
    /// number from 2 to n - 2, and that the members are distinct odd 256-bit numbers, at
    /// most [`MAX_MEMBERS`]; it does not recompute the value (one power over all members:
    /// [`Accumulator::vartime_recompute_value`]) nor test the members for primality.
    pub fn from_parts(
        group: RsaGroup,
        base: &BigUint,
        value: &BigUint,
        members: Vec<U256>,
    ) -> Result<Accumulator, AccumulatorError> {
        group.check_base(base)?;
        // 0, 1 and n - 1 are refused: with value 1 (or n - 1) the witness 1 (or n - 1)
        // raised to any odd prime gives the value back, so every element would verify.
        let n_minus_1 = group.modulus() - BigUint::from(1u8);
        if *value >= *group.modulus() || *value <= BigUint::from(1u8) || *value == n_minus_1 {
            return Err(AccumulatorError::ValueOutOfRange);
        }
        if members.len() > MAX_MEMBERS {
            return Err(AccumulatorError::TooManyMembers {
                count: members.len(),
            });
        }
        let mut index = HashMap::with_capacity(members.len());
        for (i, x) in members.iter().enumerate() {
            if !well_shaped(x) {
                return Err(AccumulatorError::BadMember { index: i });
            }
            if index.insert(*x, i).is_some() {
                return Err(AccumulatorError::AlreadyMember { index: i });
            }
        }
        Ok(Accumulator {
            group,
            base: base.clone(),
            value: value.clone(),
            members,
            index,
        })
    }

    /// The group.
    pub fn group(&self) -> &RsaGroup {
        &self.group
    }

    /// The modulus n.
    pub fn modulus(&self) -> &BigUint {
        self.group.modulus()
    }

    /// The base g.
    pub fn base(&self) -> &BigUint {
        &self.base
    }

    /// The value A = g^(product of the members) mod n: the commitment.
    pub fn value(&self) -> &BigUint {
        &self.value
    }

    /// The member primes, in insertion order (a removal moves the last one into the
    /// freed slot).
    pub fn members(&self) -> &[U256] {
        &self.members
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// True when there are no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// True when the prime is a member.
    pub fn contains_prime(&self, x: &U256) -> bool {
        self.index.contains_key(x)
    }

    /// True when the element (hashed to its prime) is a member.
    pub fn contains(&self, element: &[u8]) -> bool {
        self.contains_prime(&hash_to_prime(element))
    }

    /// g^(product of the members), recomputed with one power (to check a loaded value).
    pub fn vartime_recompute_value(&self) -> BigUint {
        let e = product_tree(&self.members);
        self.group.vartime_pow(&self.base, &e)
    }

    /// Adds a batch of elements (hashed in parallel with [`hash_to_prime`]): A becomes
    /// A^(product of their primes), one variable-time power. Returns the primes, in
    /// batch order (for [`Accumulator::update_witness_on_add`]). An element that is
    /// already a member or repeats within the batch is an error and nothing is added.
    pub fn add_batch<E: AsRef<[u8]> + Sync>(
        &mut self,
        elements: &[E],
    ) -> Result<Vec<U256>, AccumulatorError> {
        let primes: Vec<U256> = elements
            .par_iter()
            .map(|e| hash_to_prime(e.as_ref()))
            .collect();
        self.add_primes(&primes)?;
        Ok(primes)
    }

    /// Adds primes directly (each must be a 256-bit probable prime; checked with
    /// Baillie-PSW): the same as [`Accumulator::add_batch`] after hashing.
    pub fn add_primes(&mut self, primes: &[U256]) -> Result<(), AccumulatorError> {
        let count = self.members.len().saturating_add(primes.len());
        if count > MAX_MEMBERS {
            return Err(AccumulatorError::TooManyMembers { count });
        }
        let mut seen = HashSet::with_capacity(primes.len());
        for (i, x) in primes.iter().enumerate() {
            if self.index.contains_key(x) || !seen.insert(*x) {
                return Err(AccumulatorError::AlreadyMember { index: i });
            }
        }
        if let Some(i) = primes
            .par_iter()
            .position_first(|x| !well_shaped(x) || !prime::is_probable_prime(x))
        {
            return Err(AccumulatorError::BadMember { index: i });
        }
        let e = product_tree(primes);
        self.value = self.group.vartime_pow(&self.value, &e);
        for x in primes {
            self.index.insert(*x, self.members.len());
            self.members.push(*x);
        }
        Ok(())
    }

    /// Witnesses for the listed elements (each hashed to its prime), in list order, by
    /// root factor over the whole member set: subsets without a listed member are
    /// skipped, so a few witnesses cost less than all of them. A non-member is
    /// [`AccumulatorError::NotMember`] with its position in the list.
    pub fn witnesses<E: AsRef<[u8]> + Sync>(
        &self,
        elements: &[E],
    ) -> Result<Vec<BigUint>, AccumulatorError> {
        let primes: Vec<U256> = elements
            .par_iter()
            .map(|e| hash_to_prime(e.as_ref()))
            .collect();
        self.witnesses_for_primes(&primes)
    }

    /// Witnesses for member primes, in list order (see [`Accumulator::witnesses`]).
    pub fn witnesses_for_primes(&self, primes: &[U256]) -> Result<Vec<BigUint>, AccumulatorError> {
        let mut want = vec![false; self.members.len()];
        let mut slots = Vec::with_capacity(primes.len());
        for (i, x) in primes.iter().enumerate() {
            let &slot = self
                .index
                .get(x)
                .ok_or(AccumulatorError::NotMember { index: i })?;
            want[slot] = true;
            slots.push(slot);
        }
        let all = self.root_factor(&want);
        Ok(slots
            .into_iter()
            .map(|s| all[s].clone().unwrap_or_default())
            .collect())
    }

    /// The witness of every member, in member order.
    pub fn all_witnesses(&self) -> Vec<BigUint> {
        self.root_factor(&vec![true; self.members.len()])
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()
    }

    fn root_factor(&self, want: &[bool]) -> Vec<Option<BigUint>> {
        with_ctx!(self.group, c => {
            let mut out = vec![None; self.members.len()];
            if !out.is_empty() {
                let g = c.to_mont(&to_uint(&self.base));
                vartime_root_factor(c, g, &self.members, want, &mut out);
            }
            out.iter()
                .map(|w| w.map(|w| from_uint(&c.from_mont(&w))))
                .collect()
        })
    }

    /// Checks a membership witness for an element: Ok when witness^x == A for the
    /// element's prime x.
    pub fn verify(&self, element: &[u8], witness: &BigUint) -> Result<(), AccumulatorError> {
        self.verify_prime(&hash_to_prime(element), witness)
    }

    /// [`Accumulator::verify`] for a prime.
    pub fn verify_prime(&self, x: &U256, witness: &BigUint) -> Result<(), AccumulatorError> {
        verify_prime(&self.group, &self.value, x, witness)
    }

    /// A member's witness after `added` primes joined (this accumulator's value already
    /// includes them): witness^(product of the added primes). The result is checked
    /// against A for the member's prime `member`.
    pub fn update_witness_on_add(
        &self,
        witness: &BigUint,
        member: &U256,
        added: &[U256],
    ) -> Result<BigUint, AccumulatorError> {
        if *witness >= *self.modulus() {
            return Err(AccumulatorError::WitnessOutOfRange);
        }
        let w = self.group.vartime_pow(witness, &product_tree(added));
        self.verify_prime(member, &w)?;
        Ok(w)
    }

    /// A member's witness after another member `removed` left (this accumulator is the
    /// one after the removal, value A'; `witness` was valid before it, w^x = A = A'^y):
    /// with a x + b y = 1 (a = x^-1 mod y, b <= 0), the new witness is A'^a w^b, since
    /// (A'^a w^b)^x = A'^(a x) A'^(b y) = A'. No trapdoor needed; checked against A'.
    pub fn update_witness_on_remove(
        &self,
        witness: &BigUint,
        member: &U256,
        removed: &U256,
    ) -> Result<BigUint, AccumulatorError> {
        let n = self.modulus();
        if *witness >= *n {
            return Err(AccumulatorError::WitnessOutOfRange);
        }
        if member == removed {
            return Err(AccumulatorError::NotMember { index: 0 });
        }
        let (x, y) = (from_uint(member), from_uint(removed));
        let a = x.modinv(&y).ok_or(AccumulatorError::WitnessRejected)?;
        // b = (1 - a x) / y <= 0; w^b = (w^-1)^((a x - 1) / y).
        let minus_b = (&a * &x - 1u8) / &y;
        let w_inv = witness.modinv(n).ok_or(AccumulatorError::WitnessRejected)?;
        let w =
            self.group.vartime_pow(&self.value, &a) * self.group.vartime_pow(&w_inv, &minus_b) % n;
        self.verify_prime(member, &w)?;
        Ok(w)
    }

    /// Removes an element with the trapdoor: A' = A^(x^-1 mod lambda(n)), constant time
    /// in the trapdoor, checked (A'^x == A) before it replaces A.
    pub fn remove(&mut self, element: &[u8], trapdoor: &Trapdoor) -> Result<(), AccumulatorError> {
        self.remove_prime(&hash_to_prime(element), trapdoor)
    }

    /// [`Accumulator::remove`] for a member prime.
    pub fn remove_prime(&mut self, x: &U256, trapdoor: &Trapdoor) -> Result<(), AccumulatorError> {
        let &slot = self
            .index
            .get(x)
            .ok_or(AccumulatorError::NotMember { index: 0 })?;
        let root = self.trapdoor_root(x, trapdoor)?;
        self.value = root;
        self.index.remove(x);
        self.members.swap_remove(slot);
        if let Some(moved) = self.members.get(slot) {
            self.index.insert(*moved, slot);
        }
        Ok(())
    }

    /// One member's witness with the trapdoor: A^(x^-1 mod lambda(n)), a single
    /// constant-time power whatever the number of members (checked before release).
    pub fn trapdoor_witness(
        &self,
        element: &[u8],
        trapdoor: &Trapdoor,
    ) -> Result<BigUint, AccumulatorError> {
        let x = hash_to_prime(element);
        if !self.contains_prime(&x) {
            return Err(AccumulatorError::NotMember { index: 0 });
        }
        self.trapdoor_root(&x, trapdoor)
    }

    /// A^(1/x) with the trapdoor, checked.
    fn trapdoor_root(&self, x: &U256, trapdoor: &Trapdoor) -> Result<BigUint, AccumulatorError> {
        if trapdoor.n != *self.modulus() {
            return Err(AccumulatorError::TrapdoorMismatch);
        }
        if !well_shaped(x) {
            return Err(AccumulatorError::NotInvertible);
        }
        let root = with_ctx!(self.group, c => ct_root(c, &self.value, &trapdoor.lambda, x))
            .ok_or(AccumulatorError::NotInvertible)?;
        let ok = with_ctx!(self.group, c => vartime_check(c, &root, x, &self.value));
        if !ok {
            return Err(AccumulatorError::CheckFailed);
        }
        Ok(root)
    }
}

/// Checks witness^x == value in `group`: for verifiers that hold only the modulus and the
/// accumulator value. A witness not below n is an error, and so is a value not below n
/// or one of 0, 1 and n - 1 (for which a witness of 1 or n - 1 would pass for any
/// element).
pub fn verify_prime(
    group: &RsaGroup,
    value: &BigUint,
    x: &U256,
    witness: &BigUint,
) -> Result<(), AccumulatorError> {
    let n_minus_1 = group.modulus() - BigUint::from(1u8);
    if *value >= *group.modulus() || *value <= BigUint::from(1u8) || *value == n_minus_1 {
        return Err(AccumulatorError::ValueOutOfRange);
    }
    if *witness >= *group.modulus() {
        return Err(AccumulatorError::WitnessOutOfRange);
    }
    if with_ctx!(group, c => vartime_check(c, witness, x, value)) {
        Ok(())
    } else {
        Err(AccumulatorError::WitnessRejected)
    }
}

/// [`verify_prime`] for an element (hashed with [`hash_to_prime`]).
pub fn verify_element(
    group: &RsaGroup,
    value: &BigUint,
    element: &[u8],
    witness: &BigUint,
) -> Result<(), AccumulatorError> {
    verify_prime(group, value, &hash_to_prime(element), witness)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sieve_groups_cover_the_odd_primes_below_256() {
        let all: Vec<u64> = sieve_groups()
            .iter()
            .flat_map(|(_, ps)| ps.clone())
            .collect();
        assert_eq!(all.len(), 53); // pi(256) = 54, less 2
        for (prod, ps) in sieve_groups() {
            assert_eq!(ps.iter().product::<u64>(), *prod);
        }
    }

    #[test]
    fn inverse_mod_2k_inverts() {
        let x = Uint::<8>([0x1234_5678_9abc_def1, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(x.wrapping_mul(&inverse_mod_2k(&x)), Uint::ONE);
    }

    #[test]
    fn constant_time_inverse_matches_num_bigint() {
        let x = hash_to_prime(b"x");
        let xb = from_uint(&x);
        // lambda: an even number of 1000 bits, and one with x as a factor.
        let mut l = [0u64; 16];
        for (i, v) in l.iter_mut().enumerate().take(15) {
            *v = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1);
        }
        l[0] &= !1;
        let lambda = Uint::<16>(l);
        let lb = from_uint(&lambda);
        let u = ct_inverse_mod(&lambda, &x).expect("invertible");
        assert_eq!(from_uint(&u), xb.modinv(&lb).expect("coprime"));
        let multiple = to_uint::<16>(&(&xb * 12345u32));
        assert!(ct_inverse_mod(&multiple, &x).is_none());
    }
}

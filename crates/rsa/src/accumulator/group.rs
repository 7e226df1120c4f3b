//! [`RsaGroup`]: the group (Z/nZ)* of an odd modulus of 1024 to 4096 bits, with its
//! Montgomery context ([`DynMontCtx`]: at the smallest of 1024, 2048, 3072 and 4096 bits
//! that holds n) built for the [`CpuFeatures`] passed to [`RsaGroup::new_with`], which the
//! group keeps for every other context of its operations (the trapdoor root's context
//! modulo the element prime), and the variable-time work on public data: powers, the witness check, the
//! root-factor recursion and the product tree.

use num_bigint::BigUint;
use wirespeed_bigint::{CpuFeatures, DynMontCtx, ModulusError, MontCtx, RsaModulus, Uint, U4096};

use super::{AccumulatorError, PARALLEL_MIN, PRIME_BITS, U256};

/// The group (Z/nZ)* of an odd modulus of 1024 to 4096 bits, with its Montgomery context
/// at the smallest of 1024, 2048, 3072 and 4096 bits that holds n (a [`RsaModulus`]:
/// validation, context and features live there; n is also kept as a `BigUint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsaGroup {
    m: RsaModulus,
    n: BigUint,
}

impl RsaGroup {
    /// Validates n (odd, 1024 to 4096 bits) and builds its context.
    pub fn new(n: &BigUint) -> Result<RsaGroup, AccumulatorError> {
        Self::new_with(n, CpuFeatures::get())
    }

    /// [`RsaGroup::new`] with n's context built for a CPU with features `f`.
    pub fn new_with(n: &BigUint, f: &CpuFeatures) -> Result<RsaGroup, AccumulatorError> {
        let m = RsaModulus::from_biguint_with(n, f).map_err(|e| match e {
            ModulusError::Size { bits } => AccumulatorError::ModulusSize { bits },
            ModulusError::Even => AccumulatorError::EvenModulus,
        })?;
        Ok(RsaGroup { m, n: n.clone() })
    }

    /// The CPU features this group's contexts are built for.
    pub fn features(&self) -> &CpuFeatures {
        self.m.features()
    }

    /// n's Montgomery context at its working width.
    pub(super) fn ctx(&self) -> &DynMontCtx {
        self.m.ctx()
    }

    /// The modulus n.
    pub fn modulus(&self) -> &BigUint {
        &self.n
    }

    /// Size of n in bits.
    pub fn bits(&self) -> usize {
        self.m.bits()
    }

    /// Size of n in bytes (the width of every group element when written out).
    pub fn byte_len(&self) -> usize {
        self.m.byte_len()
    }

    /// base^e mod n (base reduced mod n first); variable time (public data).
    pub fn vartime_pow(&self, base: &BigUint, e: &BigUint) -> BigUint {
        let limbs = e.to_u64_digits();
        let base = base % &self.n;
        self.ctx()
            .vartime_modpow(&U4096::from_biguint_wrapping(&base), &limbs)
            .to_biguint()
    }

    /// Checks a base: a unit other than 0, 1 and n - 1.
    pub(super) fn check_base(&self, g: &BigUint) -> Result<(), AccumulatorError> {
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
pub(super) fn vartime_check<const L: usize>(
    c: &MontCtx<L>,
    w: &BigUint,
    x: &U256,
    value: &BigUint,
) -> bool {
    let wm = c.to_mont(&Uint::from_biguint_wrapping(w));
    c.from_mont(&c.vartime_pow(&wm, &x.0)) == Uint::<L>::from_biguint_wrapping(value)
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
pub(super) fn vartime_root_factor<const L: usize>(
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
pub(super) fn product_tree(primes: &[U256]) -> BigUint {
    if primes.len() <= 16 {
        return primes
            .iter()
            .fold(BigUint::from(1u8), |acc, x| acc * x.to_biguint());
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
pub(super) fn well_shaped(x: &U256) -> bool {
    x.bits() == PRIME_BITS && x.is_odd()
}

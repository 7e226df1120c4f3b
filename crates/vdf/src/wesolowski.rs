//! Wesolowski's proof (Wesolowski, "Efficient verifiable delay functions", EUROCRYPT
//! 2019; Boneh, Bunz, Fisch, "A survey of two verifiable delay functions", 2018,
//! section 3.2), in the group (Z/NZ)* / {1, -1} (see [`crate::modulus`]).
//!
//! Statement: y = |x^(2^T)|. Challenge: l = [`crate::prime::hash_to_prime`]
//! (N, x, y, T), a 128-bit prime; the verifier recomputes it with the same Baillie-PSW
//! search, so l is prime by construction. Proof: pi = |x^q| with q = floor(2^T / l).
//! Verifier: r = 2^T mod l, accept iff pi is in 1..=(N-1)/2 and |pi^l x^r| = y; pi^l x^r
//! is one simultaneous (Shamir) exponentiation: 128 squarings and at most 128
//! multiplications.
//!
//! Provers:
//! - [`prove_wesolowski_simple`]: long division of 2^T by l, one bit of q per step:
//!   r = 2r mod l, b = carry, pi = pi^2 x^b. T squarings and about T/2 multiplications.
//! - [`prove_wesolowski`]: from the checkpoints C_i = x^(2^(i k)) of an [`Evaluation`].
//!   Split q into k-bit blocks q = sum_i Q_i 2^(i k), so x^q = prod_i C_i^(Q_i), and each
//!   block into windows of kappa bits at offsets o = 0, kappa, 2 kappa, ... (the last may be
//!   narrower): x^q = prod_o (prod_i C_i^(d_(i,o)))^(2^o). Horner over the offsets from
//!   the top, with kappa squarings between offsets; each inner product by 2^kappa buckets
//!   (bucket\[d\] *= C_i, then prod_d bucket\[d\]^d by running suffix products). Digits come
//!   from q's definition: floor(q / 2^p) mod 2^w = floor(2^w r / l) with
//!   r = 2^(T - p - w) mod l, stepped from block to block by multiplying r by 2^k mod l.
//!   Cost about T/kappa + (k/kappa) 2^(kappa+1) + k group operations; kappa (<= 16) is
//!   chosen to minimise it. Only blocks below bit T - 127 are visited (q < 2^(T-127)).
//!   The blocks are split into one range per rayon worker (x^q = prod_i C_i^(Q_i) needs no
//!   coordination between ranges); the partial products are multiplied at the end.

use wirespeed_bigint::{CpuFeatures, MontCtx, Uint, U4096};

use crate::eval::check_delay;
use crate::modulus::{canon, dispatch, narrow, widen};
use crate::prime::hash_to_prime_with;
use crate::{Evaluation, Modulus, VdfError};

type U128 = Uint<2>;

pub(crate) fn to_uint(v: u128) -> U128 {
    Uint([v as u64, (v >> 64) as u64])
}

pub(crate) fn from_uint(v: &U128) -> u128 {
    v.0[0] as u128 | (v.0[1] as u128) << 64
}

/// Largest window width in bits (2^16 buckets).
const MAX_WINDOW: u32 = 16;

/// Wesolowski's challenge prime for the statement (N, x, y, T), tested for primality
/// with the modulus' CPU features.
pub fn challenge(n: &Modulus, x: &U4096, y: &U4096, t: u64) -> u128 {
    hash_to_prime_with(
        &n.value_bytes(n.value()),
        &n.value_bytes(x),
        &n.value_bytes(y),
        t,
        n.features(),
    )
}

/// 2^e mod l for an odd l > 1 (MontCtx on one 128-bit limb pair).
pub(crate) fn pow2_mod(l: &MontCtx<2>, e: u64) -> U128 {
    let two = l.reduce_to_mont(&Uint::from_u64(2));
    l.from_mont(&l.vartime_pow(&two, &[e]))
}

/// floor(2^w r / l) for r < l < 2^128 (w bits of long division).
fn div_step(mut r: u128, l: u128, w: u32) -> u64 {
    let mut d = 0u64;
    for _ in 0..w {
        let carry = r >> 127;
        r <<= 1;
        let bit = carry == 1 || r >= l;
        if bit {
            r = r.wrapping_sub(l);
        }
        d = (d << 1) | bit as u64;
    }
    d
}

/// The proof pi by long division (T squarings): the reference the checkpoint prover is
/// tested against. `y` must be the canonical output |x^(2^T)|.
pub fn prove_wesolowski_simple(
    n: &Modulus,
    x: &U4096,
    t: u64,
    y: &U4096,
) -> Result<U4096, VdfError> {
    n.check_input(x)?;
    check_delay(t)?;
    if !n.is_canonical_element(y) {
        return Err(VdfError::OutputOutOfRange);
    }
    let l = challenge(n, x, y, t);
    Ok(dispatch!(n, ctx => simple_inner(ctx, x, t, l)))
}

fn simple_inner<const L: usize>(ctx: &MontCtx<L>, x: &U4096, t: u64, l: u128) -> U4096 {
    let xm = ctx.to_mont(&narrow::<L>(x));
    let mut pi = ctx.one();
    let mut r: u128 = 1;
    for _ in 0..t {
        let carry = r >> 127;
        r <<= 1;
        let bit = carry == 1 || r >= l;
        if bit {
            r = r.wrapping_sub(l);
        }
        pi = ctx.sqr(&pi);
        if bit {
            pi = ctx.mul(&pi, &xm);
        }
    }
    widen(&canon(ctx.modulus(), &ctx.from_mont(&pi)))
}

/// The proof pi from an evaluation's checkpoints (see the module docs); the evaluation is
/// checked for consistency with N first ([`Evaluation::check`]).
pub fn prove_wesolowski(n: &Modulus, ev: &Evaluation) -> Result<U4096, VdfError> {
    ev.check(n)?;
    let l = challenge(n, &ev.x, &ev.output, ev.t);
    Ok(dispatch!(n, ctx => checkpoint_inner(ctx, ev, l, n.features())))
}

/// Window width minimising gamma (blocks + 2^(kappa+1)) + kappa (gamma - 1), gamma =
/// ceil(k / kappa).
fn choose_window(k: u64, blocks: u64) -> u32 {
    let mut best = (u128::MAX, 1);
    for kappa in 1..=MAX_WINDOW.min(k.min(64) as u32) {
        let gamma = k.div_ceil(kappa as u64) as u128;
        let cost = gamma * (blocks as u128 + (2u128 << kappa)) + kappa as u128 * (gamma - 1);
        if cost < best.0 {
            best = (cost, kappa);
        }
    }
    best.1
}

fn checkpoint_inner<const L: usize>(
    ctx: &MontCtx<L>,
    ev: &Evaluation,
    l: u128,
    f: &CpuFeatures,
) -> U4096 {
    let (t, k) = (ev.t, ev.checkpoint_every);
    if t < 128 {
        // q = floor(2^T / l) = 0 since l > 2^127.
        return U4096::ONE;
    }
    // Blocks i with i k <= T - 128 can hold nonzero bits of q.
    let blocks = (t - 128) / k + 1;
    let c: Vec<Uint<L>> = ev.checkpoints[..blocks as usize]
        .iter()
        .map(|(_, v)| ctx.to_mont(&narrow::<L>(v)))
        .collect();
    let parts = rayon::current_num_threads();
    widen(&pi_from_checkpoints(ctx, &c, t, k, l, f, parts))
}

/// pi = |x^floor(2^t / l)| (plain, canonical) from `c[i]` = x^(2^(i k)) in Montgomery
/// form (at least the blocks with i k <= t - 128), by the windowed bucket method of the
/// module docs, with the blocks split into `parts` ranges (run on rayon's pool when
/// `parts` > 1, on the calling thread otherwise).
pub(crate) fn pi_from_checkpoints<const L: usize>(
    ctx: &MontCtx<L>,
    c: &[Uint<L>],
    t: u64,
    k: u64,
    l: u128,
    f: &CpuFeatures,
    parts: usize,
) -> Uint<L> {
    if t < 128 || k == 0 {
        return Uint::ONE;
    }
    let blocks = ((t - 128) / k + 1).min(c.len() as u64);
    let Ok(lctx) = MontCtx::new_with(&to_uint(l), f) else {
        return Uint::ONE; // l is an odd prime > 2^127: unreachable
    };
    // x^q = prod_i C_i^(Q_i) splits over block ranges: one range per worker thread, each
    // with its own buckets, multiplied together at the end.
    let parts = (parts as u64).clamp(1, blocks.max(1));
    let kappa = choose_window(k, blocks.div_ceil(parts));
    let ranges: Vec<(u64, u64)> = (0..parts)
        .map(|p| (p * blocks / parts, (p + 1) * blocks / parts))
        .collect();
    let run = |&(lo, hi): &(u64, u64)| range_product(ctx, &lctx, c, l, t, k, kappa, lo, hi);
    let products: Vec<Option<Uint<L>>> = if parts > 1 {
        use rayon::prelude::*;
        ranges.par_iter().map(run).collect()
    } else {
        ranges.iter().map(run).collect()
    };
    let pi = products
        .into_iter()
        .flatten()
        .reduce(|a, b| ctx.mul(&a, &b))
        .map_or(Uint::ONE, |a| ctx.from_mont(&a));
    canon(ctx.modulus(), &pi)
}

/// prod over blocks i in [lo, hi) of C_i^(Q_i), in Montgomery form (None for 1), by the
/// windowed bucket method described in the module docs.
fn range_product<const L: usize>(
    ctx: &MontCtx<L>,
    lctx: &MontCtx<2>,
    c: &[Uint<L>],
    l: u128,
    t: u64,
    k: u64,
    kappa: u32,
    lo: u64,
    hi: u64,
) -> Option<Uint<L>> {
    if lo >= hi {
        return None;
    }
    // 2^k mod l in Montgomery form: steps r from block i to block i - 1.
    let step = lctx.to_mont(&pow2_mod(lctx, k));
    let mut buckets: Vec<Option<Uint<L>>> = vec![None; 1 << kappa];
    let mut acc: Option<Uint<L>> = None;
    let offsets: Vec<u64> = (0..k.div_ceil(kappa as u64))
        .map(|j| j * kappa as u64)
        .collect();
    let top = t - 128;
    for &o in offsets.iter().rev() {
        if let Some(a) = acc {
            acc = Some(ctx.sqr_n(&a, kappa as u64));
        }
        let w = (kappa as u64).min(k - o) as u32;
        for b in buckets.iter_mut() {
            *b = None;
        }
        // Blocks whose window position p = i k + o satisfies p <= T - 128, from the top:
        // r_i = 2^(T - p - w) mod l.
        if o > top {
            continue;
        }
        let i_max = ((top - o) / k).min(hi - 1);
        if i_max < lo {
            continue;
        }
        let mut r = lctx.to_mont(&pow2_mod(lctx, t - (i_max * k + o) - w as u64));
        for i in (lo..=i_max).rev() {
            let d = div_step(from_uint(&lctx.from_mont(&r)), l, w) as usize;
            if d != 0 {
                buckets[d] = Some(match &buckets[d] {
                    Some(b) => ctx.mul(b, &c[i as usize]),
                    None => c[i as usize],
                });
            }
            r = lctx.mul(&r, &step);
        }
        // prod_d bucket[d]^d = prod_d (prod_{e >= d} bucket[e]).
        let mut running: Option<Uint<L>> = None;
        let mut window: Option<Uint<L>> = None;
        for b in buckets[1..(1usize << w)].iter().rev() {
            if let Some(b) = b {
                running = Some(match running {
                    Some(s) => ctx.mul(&s, b),
                    None => *b,
                });
            }
            if let Some(s) = &running {
                window = Some(match window {
                    Some(p) => ctx.mul(&p, s),
                    None => *s,
                });
            }
        }
        if let Some(wv) = window {
            acc = Some(match acc {
                Some(a) => ctx.mul(&a, &wv),
                None => wv,
            });
        }
    }
    acc
}

/// Verifies pi for the statement y = |x^(2^T)| mod N: x a valid input, T in range, y and
/// pi canonical, and |pi^l x^r| = y. About 128 squarings and 128 multiplications.
pub fn verify_wesolowski(
    n: &Modulus,
    x: &U4096,
    t: u64,
    y: &U4096,
    pi: &U4096,
) -> Result<(), VdfError> {
    n.check_input(x)?;
    check_delay(t)?;
    if !n.is_canonical_element(y) {
        return Err(VdfError::OutputOutOfRange);
    }
    if !n.is_canonical_element(pi) {
        return Err(VdfError::ProofValueOutOfRange);
    }
    let l = challenge(n, x, y, t);
    let Ok(lctx) = MontCtx::new_with(&to_uint(l), n.features()) else {
        return Err(VdfError::ProofRejected); // l is an odd prime: unreachable
    };
    let r = from_uint(&pow2_mod(&lctx, t));
    let ok = dispatch!(n, ctx => {
        let v = pow2_vartime(ctx, &narrow(pi), l, &narrow(x), r);
        canon(ctx.modulus(), &ctx.from_mont(&v)) == narrow(y)
    });
    if ok {
        Ok(())
    } else {
        Err(VdfError::ProofRejected)
    }
}

/// a^ea b^eb in Montgomery form for plain a, b < N (Shamir's simultaneous
/// exponentiation, variable time: public exponents only).
pub(crate) fn pow2_vartime<const L: usize>(
    ctx: &MontCtx<L>,
    a: &Uint<L>,
    ea: u128,
    b: &Uint<L>,
    eb: u128,
) -> Uint<L> {
    let am = ctx.to_mont(a);
    let bm = ctx.to_mont(b);
    let abm = ctx.mul(&am, &bm);
    let bits = 128 - (ea | eb).leading_zeros();
    let mut acc = ctx.one();
    for i in (0..bits).rev() {
        acc = ctx.sqr(&acc);
        match ((ea >> i) & 1, (eb >> i) & 1) {
            (1, 1) => acc = ctx.mul(&acc, &abm),
            (1, 0) => acc = ctx.mul(&acc, &am),
            (0, 1) => acc = ctx.mul(&acc, &bm),
            _ => {}
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_choice_is_sane() {
        assert_eq!(choose_window(1, 10), 1);
        let kappa = choose_window(1 << 18, 4096);
        assert!((6..=12).contains(&kappa), "{kappa}");
        assert_eq!(div_step(1, 3, 2), 1); // floor(4/3)
        assert_eq!(div_step(u128::MAX - 1, u128::MAX, 1), 1);
    }
}

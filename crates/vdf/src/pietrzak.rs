//! Pietrzak's proof (Pietrzak, "Simple verifiable delay functions", ITCS 2019; Boneh,
//! Bunz, Fisch, "A survey of two verifiable delay functions", 2018, section 3.1), in the
//! group (Z/NZ)* / {1, -1} (see [`crate::modulus`]).
//!
//! Halving protocol, made non-interactive with Fiat-Shamir. Start from (x_0, y_0, T_0) =
//! (|x|, y, T) with y = |x^(2^T)|. While T_i > 1:
//! 1. if T_i is odd: y_i <- |y_i^2| and T_i <- T_i + 1 (so x_i^(2^T_i) = y_i still holds);
//! 2. h_i = T_i / 2; the proof carries mu_i = |x_i^(2^h_i)|;
//! 3. r_i = the first 16 bytes (big-endian) of SHA-256(tag, N, x_i, y_i, mu_i, T_i), each
//!    field length-prefixed (8-byte big-endian length; values big-endian of N's byte
//!    length; T_i 8 bytes big-endian);
//! 4. x_(i+1) = |x_i^(r_i) mu_i|, y_(i+1) = |mu_i^(r_i) y_i|, T_(i+1) = h_i.
//!
//! At T_i = 1 the verifier checks |x_i^2| = y_i. The proof has ceil(log2 T) mu values (40 at
//! T = 2^40, 63 at the largest T, 2^63); the verifier does about 200 group operations per
//! value.
//!
//! Prover: x_i^(2^s) = (x_(i-1)^(2^s))^(r_(i-1)) x_(i-1)^(2^(s + h_(i-1))), so mu_i is a
//! tree with 2^i leaves x^(2^p) (p = h_i plus a subset sum of h_0..h_(i-1)) and 2^i - 1
//! exponentiations by 128-bit r's. Each leaf starts from the nearest checkpoint (or y) at
//! or below p. Per level the prover takes the cheaper of that tree and computing
//! x_i^(2^h_i) directly with h_i squarings; with checkpoints every k squarings the total is
//! about sqrt(2 T k) squarings beside the tree work (the direct method alone costs T).

use sha2::{Digest, Sha256};
use wirespeed_bigint::{MontCtx, Uint, U4096};

use crate::eval::check_delay;
use crate::modulus::{canon, dispatch, narrow, widen};
use crate::{Evaluation, Modulus, VdfError};

/// Most mu values any proof may carry (T <= 2^63 needs at most 63).
pub const MAX_MU: usize = 64;

/// Domain-separation tag of the Fiat-Shamir challenges.
const CHALLENGE_TAG: &[u8] = b"wirespeed-vdf/v1/pietrzak-challenge";

/// Group operations charged for one exponentiation by a 128-bit r (cost model only).
const POW_COST: u64 = 200;

/// The halving schedule for T: (T_i after the odd adjustment, h_i) per level.
fn schedule(t: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut ti = t;
    while ti > 1 {
        let even = ti + (ti & 1);
        out.push((even, even / 2));
        ti = even / 2;
    }
    out
}

/// Number of mu values a proof for T carries: ceil(log2 T).
pub fn proof_len(t: u64) -> usize {
    schedule(t).len()
}

/// r_i for one level (all values canonical, `byte_len()` big-endian bytes).
fn challenge(n: &Modulus, x: &[u8], y: &[u8], mu: &[u8], ti: u64) -> u128 {
    let mut h = Sha256::new();
    let nb = n.value_bytes(n.value());
    for field in [CHALLENGE_TAG, &nb, x, y, mu, &ti.to_be_bytes()] {
        h.update((field.len() as u64).to_be_bytes());
        h.update(field);
    }
    let d = h.finalize();
    let mut top = [0u8; 16];
    top.copy_from_slice(&d[..16]);
    u128::from_be_bytes(top)
}

/// base^e for base in Montgomery form and a 128-bit public exponent.
fn pow128<const L: usize>(ctx: &MontCtx<L>, base: &Uint<L>, e: u128) -> Uint<L> {
    ctx.vartime_pow(base, &[e as u64, (e >> 64) as u64])
}

/// Canonical plain value of a Montgomery-form residue.
fn out<const L: usize>(ctx: &MontCtx<L>, v: &Uint<L>) -> Uint<L> {
    canon(ctx.modulus(), &ctx.from_mont(v))
}

fn bytes<const L: usize>(n: &Modulus, v: &Uint<L>) -> Vec<u8> {
    n.value_bytes(&widen(v))
}

/// Builds the proof (mu_0, mu_1, ...) from an evaluation (checked for consistency with N
/// first, [`Evaluation::check`]).
pub fn prove_pietrzak(n: &Modulus, ev: &Evaluation) -> Result<Vec<U4096>, VdfError> {
    ev.check(n)?;
    Ok(dispatch!(n, ctx => prove_inner(ctx, n, ev)))
}

/// Stored powers x^(2^p) in Montgomery form: checkpoints and y.
struct Powers<const L: usize> {
    k: u64,
    t: u64,
    checkpoints: Vec<Uint<L>>,
    y: Uint<L>,
}

impl<const L: usize> Powers<L> {
    /// Squarings from the nearest stored power at or below p.
    fn distance(&self, p: u64) -> u64 {
        if p >= self.t {
            p - self.t
        } else {
            p % self.k
        }
    }

    fn get(&self, ctx: &MontCtx<L>, p: u64) -> Uint<L> {
        if p >= self.t {
            ctx.sqr_n(&self.y, p - self.t)
        } else {
            ctx.sqr_n(&self.checkpoints[(p / self.k) as usize], p % self.k)
        }
    }
}

/// x_i^(2^s) as the tree over levels 0..i (see the module docs).
fn tree<const L: usize>(
    ctx: &MontCtx<L>,
    pw: &Powers<L>,
    levels: &[(u64, u128)], // (h_j, r_j) for j < i
    s: u64,
) -> Uint<L> {
    match levels.split_last() {
        None => pw.get(ctx, s),
        Some((&(h, r), below)) => {
            let a = tree(ctx, pw, below, s);
            let b = tree(ctx, pw, below, s + h);
            ctx.mul(&pow128(ctx, &a, r), &b)
        }
    }
}

/// Estimated group operations for the tree of x_i^(2^s); None when above `limit`.
fn tree_cost(pw_dist: &dyn Fn(u64) -> u64, hs: &[u64], s: u64, limit: u64) -> Option<u64> {
    let leaves = 1u64.checked_shl(hs.len() as u32)?;
    let mut cost = (leaves - 1).checked_mul(POW_COST)?;
    if cost >= limit {
        return None;
    }
    for mask in 0..leaves {
        let p = hs
            .iter()
            .enumerate()
            .filter(|(j, _)| (mask >> j) & 1 == 1)
            .fold(s, |acc, (_, h)| acc + h);
        cost += pw_dist(p);
        if cost >= limit {
            return None;
        }
    }
    Some(cost)
}

fn prove_inner<const L: usize>(ctx: &MontCtx<L>, n: &Modulus, ev: &Evaluation) -> Vec<U4096> {
    let pw = Powers {
        k: ev.checkpoint_every,
        t: ev.t,
        checkpoints: ev
            .checkpoints
            .iter()
            .map(|(_, v)| ctx.to_mont(&narrow::<L>(v)))
            .collect(),
        y: ctx.to_mont(&narrow::<L>(&ev.y)),
    };
    let mut xi = pw.checkpoints[0];
    let mut yi = ctx.to_mont(&narrow::<L>(&ev.output));
    let mut levels: Vec<(u64, u128)> = Vec::new();
    let mut mus = Vec::new();
    for (ti, h) in schedule(ev.t) {
        if ti != levels.last().map_or(ev.t, |&(h, _)| h) {
            yi = ctx.sqr(&yi); // odd T_i: y_i <- y_i^2
        }
        let hs: Vec<u64> = levels.iter().map(|&(h, _)| h).collect();
        let mu = match tree_cost(&|p| pw.distance(p), &hs, h, h) {
            Some(_) => tree(ctx, &pw, &levels, h),
            None => ctx.sqr_n(&xi, h),
        };
        let (xc, yc, muc) = (out(ctx, &xi), out(ctx, &yi), out(ctx, &mu));
        let r = challenge(n, &bytes(n, &xc), &bytes(n, &yc), &bytes(n, &muc), ti);
        xi = ctx.mul(&pow128(ctx, &xi, r), &mu);
        yi = ctx.mul(&pow128(ctx, &mu, r), &yi);
        levels.push((h, r));
        mus.push(widen(&muc));
    }
    mus
}

/// Verifies a Pietrzak proof for y = |x^(2^T)| mod N: x a valid input, T in range, y and
/// every mu canonical, exactly [`proof_len`]`(T)` values, and the halving checks.
pub fn verify_pietrzak(
    n: &Modulus,
    x: &U4096,
    t: u64,
    y: &U4096,
    mu: &[U4096],
) -> Result<(), VdfError> {
    n.check_input(x)?;
    check_delay(t)?;
    if !n.is_canonical_element(y) {
        return Err(VdfError::OutputOutOfRange);
    }
    let sched = schedule(t);
    if mu.len() != sched.len() {
        return Err(VdfError::ProofLength {
            expected: sched.len(),
            got: mu.len(),
        });
    }
    if !mu.iter().all(|m| n.is_canonical_element(m)) {
        return Err(VdfError::ProofValueOutOfRange);
    }
    let ok = dispatch!(n, ctx => verify_inner(ctx, n, x, t, y, mu, &sched));
    if ok {
        Ok(())
    } else {
        Err(VdfError::ProofRejected)
    }
}

fn verify_inner<const L: usize>(
    ctx: &MontCtx<L>,
    n: &Modulus,
    x: &U4096,
    t: u64,
    y: &U4096,
    mu: &[U4096],
    sched: &[(u64, u64)],
) -> bool {
    // Canonical values in Montgomery form; out() canonicalises before hashing.
    let mut xi = ctx.to_mont(&narrow::<L>(x));
    let mut yi = ctx.to_mont(&narrow::<L>(y));
    let mut prev = t;
    for (&(ti, h), m) in sched.iter().zip(mu) {
        if ti != prev {
            yi = ctx.sqr(&yi);
        }
        let mu_plain = narrow::<L>(m);
        let mum = ctx.to_mont(&mu_plain);
        let (xc, yc) = (out(ctx, &xi), out(ctx, &yi));
        let r = challenge(n, &bytes(n, &xc), &bytes(n, &yc), &bytes(n, &mu_plain), ti);
        xi = ctx.mul(&pow128(ctx, &xi, r), &mum);
        yi = ctx.mul(&pow128(ctx, &mum, r), &yi);
        prev = h;
    }
    out(ctx, &ctx.sqr(&xi)) == out(ctx, &yi)
}

//! Segmented Wesolowski proofs: one Wesolowski proof per segment of the chain, each built
//! while the evaluator squares the next segments, so that only the last (short) segment
//! is left to prove after the last squaring. In the spirit of the segment-by-segment
//! proofs of Wesolowski ("Efficient verifiable delay functions", EUROCRYPT 2019, section
//! 4.2) and the "n-Wesolowski" construction of Ephraim, Freitag, Komargodski, Pass
//! ("Continuous verifiable delay functions", EUROCRYPT 2020).
//!
//! Statement: y = |x^(2^T)| in (Z/NZ)* / {1, -1} (see [`crate::modulus`]). The prover
//! chooses segment lengths T_0 + ... + T_(s-1) = T (each >= 1, s <= [`MAX_SEGMENTS`])
//! and carries them in the proof, with the intermediate values x_1 .. x_(s-1) and one
//! proof pi_j per segment. With x_0 = x, x_s = y, start_j = T_0 + ... + T_(j-1):
//!
//! - x_(j+1) = |x_j^(2^(T_j))| (canonical; x_1 .. x_(s-1) and every pi_j in 1..=(N-1)/2);
//! - l_j = [`crate::prime::hash_fields_to_prime_with`] over (tag, N, x, T, s, j, start_j,
//!   T_j, x_j, x_(j+1)): a 128-bit prime;
//! - pi_j = |x_j^q_j|, q_j = floor(2^(T_j) / l_j); the verifier checks, for every j,
//!   |pi_j^(l_j) x_j^(r_j)| = x_(j+1) with r_j = 2^(T_j) mod l_j (one Shamir
//!   exponentiation, as in [`crate::wesolowski`]). Verification costs s single checks.
//!
//! Soundness. Each segment is Wesolowski's argument for its own statement (x_j, x_(j+1),
//! T_j); a false chain has at least one false segment, so a forger must break one of s
//! Wesolowski instances (adaptive root assumption, union bound over s <= 64). What the
//! challenge hashes is what makes that reduction hold: l_j must be drawn after both
//! endpoints of segment j are fixed (x_(j+1) is in the hash, as y is in the single proof),
//! and it binds the whole statement (N, x, T), the layout (s, j, start_j, T_j) and a tag
//! of its own. Without that binding the challenges would be "weak Fiat-Shamir"
//! (Bernhard, Pereira, Warinschi, ASIACRYPT 2012): a prover could carry a segment proof
//! from one chain, one position or one layout to another, or search over layouts and
//! positions for a convenient prime, and the challenge of segment j would not depend on
//! which statement it is evidence for. What the challenge deliberately leaves out is y:
//! that is what lets segment j be proved before the last squaring.
//!
//! Prover ([`eval_segmented`]): the evaluator runs on the calling thread and keeps the
//! checkpoints of [`crate::eval`] (every k squarings); segment boundaries are multiples
//! of k ([`segment_lengths`]), so segment j's checkpoints are x_j^(2^(i k)). At the end
//! of each segment its checkpoints (in Montgomery form) go to one prover thread, which
//! builds pi_j with the checkpoint method of [`crate::wesolowski`] on one core; the
//! segments left once the evaluation is over (the last one, and any backlog) are proved
//! on every rayon worker. The layout
//! ([`SEGMENT_WEIGHTS`]) is 12 equal segments and a tail halving down to 1/64 of them:
//! with the prover costing about 0.4 T_j squarings' time per segment on one core (the
//! folding squaring kernel runs the chain about twice as fast as the exponentiations of
//! the proof), each proof finishes while the evaluator squares the segments after it, and
//! the last segment is about T / 831, so the work left after the last squaring is under
//! a hundredth of the evaluation. [`prove_segmented`] builds the same proof afterwards from an
//! [`Evaluation`] (used when an evaluation was resumed from disk).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use wirespeed_bigint::{CpuFeatures, MontCtx, Uint, U4096};

use crate::eval::{check_delay, checkpoint_interval, Chain};
use crate::modulus::{canon, dispatch, narrow, widen};
use crate::prime::hash_fields_to_prime_with;
use crate::wesolowski::{pi_from_checkpoints, pow2_mod, pow2_vartime, to_uint};
use crate::{EvalOptions, Evaluation, Modulus, Proof, VdfError, VdfProof};

/// Most segments a proof may carry.
pub const MAX_SEGMENTS: usize = 64;

/// Relative lengths of the segments the provers choose (in whole checkpoint intervals,
/// rounded; segments that round to nothing are dropped): 12 equal ones, then halving.
pub const SEGMENT_WEIGHTS: [u64; 18] = [
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 32, 16, 8, 4, 2, 1,
];

/// Domain-separation tag of the segment challenges.
const CHALLENGE_TAG: &[u8] = b"wirespeed-vdf/v2/segmented-wesolowski-challenge";

/// The segment lengths the provers use for T with checkpoint interval k: boundaries at
/// multiples of k placed by [`SEGMENT_WEIGHTS`], the T mod k squarings after the last
/// multiple of k in the last segment. Every length is >= 1 and they sum to T (for T >= 1,
/// k >= 1).
pub fn segment_lengths(t: u64, k: u64) -> Vec<u64> {
    let k = k.max(1);
    let blocks = t / k;
    let total: u64 = SEGMENT_WEIGHTS.iter().sum();
    let mut out = Vec::with_capacity(SEGMENT_WEIGHTS.len());
    let (mut cum, mut prev) = (0u64, 0u64);
    for w in SEGMENT_WEIGHTS {
        cum += w;
        let b = (blocks as u128 * cum as u128 / total as u128) as u64;
        if b > prev {
            out.push((b - prev) * k);
            prev = b;
        }
    }
    let rem = t - blocks * k;
    match out.last_mut() {
        Some(last) => *last += rem,
        None if t > 0 => out.push(t),
        None => {}
    }
    out
}

/// The challenge prime l_j of segment j (see the module docs); `from` and `to` are x_j
/// and x_(j+1) (x itself for j = 0).
#[allow(clippy::too_many_arguments)]
pub fn segment_challenge(
    n: &Modulus,
    x: &U4096,
    t: u64,
    s: usize,
    j: usize,
    start: u64,
    len: u64,
    from: &U4096,
    to: &U4096,
) -> u128 {
    let be = |v: u64| v.to_be_bytes();
    let (nb, xb, fb, tb) = (
        n.value_bytes(n.value()),
        n.value_bytes(x),
        n.value_bytes(from),
        n.value_bytes(to),
    );
    let (t8, s8, j8, st8, l8) = (be(t), be(s as u64), be(j as u64), be(start), be(len));
    hash_fields_to_prime_with(
        &[CHALLENGE_TAG, &nb, &xb, &t8, &s8, &j8, &st8, &l8, &fb, &tb],
        n.features(),
    )
}

/// Checks the shape of a segmented proof for T: 1..=[`MAX_SEGMENTS`] lengths, each >= 1,
/// summing to T; one intermediate value fewer than lengths; one pi per length.
pub fn check_layout(t: u64, lengths: &[u64], mids: usize, pis: usize) -> Result<(), VdfError> {
    let s = lengths.len();
    if s == 0 || s > MAX_SEGMENTS {
        return Err(VdfError::SegmentLayout("1 to 64 segments"));
    }
    if mids != s - 1 || pis != s {
        return Err(VdfError::SegmentLayout(
            "s segments carry s - 1 intermediate values and s proofs",
        ));
    }
    if lengths.contains(&0) {
        return Err(VdfError::SegmentLayout("a segment has length 0"));
    }
    let sum = lengths.iter().try_fold(0u64, |a, &b| a.checked_add(b));
    if sum != Some(t) {
        return Err(VdfError::SegmentLayout("segment lengths do not sum to T"));
    }
    Ok(())
}

/// Verifies a segmented proof of y = |x^(2^T)| (see the module docs): x a valid input,
/// T in range, the layout sound, y, the intermediate values and the proofs canonical,
/// and every segment's Wesolowski check.
pub fn verify_segmented(
    n: &Modulus,
    x: &U4096,
    t: u64,
    y: &U4096,
    lengths: &[u64],
    mids: &[U4096],
    pis: &[U4096],
) -> Result<(), VdfError> {
    n.check_input(x)?;
    check_delay(t)?;
    if !n.is_canonical_element(y) {
        return Err(VdfError::OutputOutOfRange);
    }
    check_layout(t, lengths, mids.len(), pis.len())?;
    if !mids.iter().chain(pis).all(|v| n.is_canonical_element(v)) {
        return Err(VdfError::ProofValueOutOfRange);
    }
    let s = lengths.len();
    let mut start = 0u64;
    for (j, (&len, pi)) in lengths.iter().zip(pis).enumerate() {
        let from = if j == 0 { x } else { &mids[j - 1] };
        let to = if j + 1 == s { y } else { &mids[j] };
        let l = segment_challenge(n, x, t, s, j, start, len, from, to);
        let Ok(lctx) = MontCtx::new_with(&to_uint(l), n.features()) else {
            return Err(VdfError::ProofRejected); // l is an odd prime: unreachable
        };
        let r = pow2_mod(&lctx, len);
        let r = r.0[0] as u128 | (r.0[1] as u128) << 64;
        let ok = dispatch!(n, ctx => {
            let v = pow2_vartime(ctx, &narrow(pi), l, &narrow(from), r);
            canon(ctx.modulus(), &ctx.from_mont(&v)) == narrow(to)
        });
        if !ok {
            return Err(VdfError::ProofRejected);
        }
        start += len;
    }
    Ok(())
}

/// Builds the segmented proof afterwards from an evaluation's checkpoints (checked for
/// consistency with N first), segment after segment on every rayon worker. The same
/// proof [`eval_segmented`] builds beside the evaluation.
pub fn prove_segmented(n: &Modulus, ev: &Evaluation) -> Result<Proof, VdfError> {
    ev.check(n)?;
    let k = ev.checkpoint_every;
    let lengths = segment_lengths(ev.t, k);
    let s = lengths.len();
    let mut mids = Vec::with_capacity(s.saturating_sub(1));
    let mut pis = Vec::with_capacity(s);
    let mut start = 0u64;
    for (j, &len) in lengths.iter().enumerate() {
        let end = start + len;
        let from = if j == 0 {
            ev.x
        } else {
            n.canonical(&ev.checkpoints[(start / k) as usize].1)
        };
        let to = if j + 1 == s {
            ev.output
        } else {
            n.canonical(&ev.checkpoints[(end / k) as usize].1)
        };
        let l = segment_challenge(n, &ev.x, ev.t, s, j, start, len, &from, &to);
        let first = (start / k) as usize;
        let last = first + len.div_ceil(k) as usize; // exclusive, <= the checkpoint count
        let pi = dispatch!(n, ctx => {
            let c: Vec<Uint<_>> = ev.checkpoints[first..last]
                .iter()
                .map(|(_, v)| ctx.to_mont(&narrow(v)))
                .collect();
            widen(&pi_from_checkpoints(ctx, &c, len, k, l, n.features(), rayon::current_num_threads()))
        });
        if j + 1 < s {
            mids.push(to);
        }
        pis.push(pi);
        start = end;
    }
    Ok(Proof::WesolowskiSegmented { lengths, mids, pis })
}

/// Evaluates y = x^(2^T) mod N (as [`crate::eval()`], same checkpoints and checks) and
/// builds the segmented proof beside it: each segment is proved on a second thread as
/// soon as the evaluator has passed its end (see the module docs). The progress callback
/// runs on the calling thread, which does the squarings; its call with T marks the last
/// squaring.
pub fn eval_segmented(
    n: &Modulus,
    x: &U4096,
    t: u64,
    opts: &EvalOptions<'_>,
) -> Result<(Evaluation, VdfProof), VdfError> {
    n.check_input(x)?;
    check_delay(t)?;
    let (k, count) = checkpoint_interval(t, opts.checkpoint_every)?;
    let lengths = segment_lengths(t, k);
    let job = Job {
        n,
        x,
        t,
        k,
        count,
        lengths: &lengths,
        progress: opts.progress,
        features: n.features(),
    };
    let (y, output, checkpoints, mids, pis) = dispatch!(n, ctx => streamed(ctx, &job));
    let ev = Evaluation {
        x: *x,
        t,
        checkpoint_every: k,
        y,
        output,
        checkpoints,
    };
    let proof = VdfProof {
        modulus: n.clone(),
        x: *x,
        t,
        y: output,
        proof: Proof::WesolowskiSegmented { lengths, mids, pis },
    };
    Ok((ev, proof))
}

struct Job<'a> {
    n: &'a Modulus,
    x: &'a U4096,
    t: u64,
    k: u64,
    count: u64,
    lengths: &'a [u64],
    progress: Option<&'a dyn Fn(u64)>,
    features: &'a CpuFeatures,
}

/// One finished segment for the prover thread.
struct Done<const L: usize> {
    j: usize,
    start: u64,
    from: U4096,
    to: U4096,
    /// x_j^(2^(i k)) in Montgomery form, i = 0, 1, ... while i k < T_j.
    checkpoints: Vec<Uint<L>>,
}

type Streamed = (U4096, U4096, Vec<(u64, U4096)>, Vec<U4096>, Vec<U4096>);

fn streamed<const L: usize>(ctx: &MontCtx<L>, job: &Job<'_>) -> Streamed {
    let (t, k, s) = (job.t, job.k, job.lengths.len());
    let evaluated = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Done<L>>();
        // The prover sees the statement, not the progress callback (which stays on this
        // thread).
        let (n, x, lengths, features) = (job.n, job.x, job.lengths, job.features);
        let evaluated = &evaluated;
        let prover = scope.spawn(move || {
            let mut pis = Vec::with_capacity(s);
            for d in rx {
                let len = lengths[d.j];
                let l = segment_challenge(n, x, t, s, d.j, d.start, len, &d.from, &d.to);
                // Once the evaluation is over (the last segment, or a backlog the prover
                // did not clear in time), every core may prove.
                let parts = if evaluated.load(Ordering::Acquire) {
                    rayon::current_num_threads()
                } else {
                    1
                };
                let pi = pi_from_checkpoints(ctx, &d.checkpoints, len, k, l, features, parts);
                pis.push(widen(&pi));
            }
            pis
        });

        let mut chain = Chain::new(ctx, job.x, k, job.count);
        let mut mids = Vec::with_capacity(s.saturating_sub(1));
        let mut seg = vec![chain.v];
        let mut start = 0u64;
        let mut from = *job.x;
        for (j, &len) in job.lengths.iter().enumerate() {
            let end = start + len;
            chain.run_to(ctx, end, job.progress, |at, v| {
                if at < end {
                    seg.push(*v);
                }
            });
            let v = chain.v;
            let to = widen(&canon(ctx.modulus(), &ctx.from_mont(&v)));
            let checkpoints = std::mem::replace(&mut seg, vec![v]);
            // The prover thread only ends when the channel closes, after this loop.
            let _ = tx.send(Done {
                j,
                start,
                from,
                to,
                checkpoints,
            });
            if j + 1 < s {
                mids.push(to);
            }
            from = to;
            start = end;
        }
        evaluated.store(true, Ordering::Release);
        drop(tx);
        let y = ctx.from_mont(&chain.v);
        let pis = match prover.join() {
            Ok(p) => p,
            Err(e) => std::panic::resume_unwind(e),
        };
        (
            widen(&y),
            widen(&canon(ctx.modulus(), &y)),
            chain.checkpoints,
            mids,
            pis,
        )
    })
}

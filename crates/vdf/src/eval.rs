//! Evaluation: y = x^(2^T) mod N by T sequential Montgomery squarings, keeping
//! checkpoints x^(2^(j k)) for j = 0, 1, ..., floor(T / k).
//!
//! Values stay in Montgomery form for the whole chain (`MontCtx::sqr_n`); x is converted
//! in once, and each checkpoint and y are converted out once. The checkpoint interval k
//! defaults to ceil(T / 16383), so at most 16384 checkpoints are kept (8 MiB as U4096),
//! and any interval is refused if it keeps more than [`MAX_CHECKPOINTS`]. The checkpoints
//! let the provers run without repeating the T squarings (Wesolowski, "Efficient
//! verifiable delay functions", 2019, section 4.1).

use std::fmt;

use wirespeed_bigint::{MontCtx, Uint, U4096};

use crate::modulus::{canon, dispatch, narrow, widen};
use crate::{Modulus, VdfError};

/// Largest accepted T: 2^63 squarings. A u64 counts every T a run could reach (LCS35's
/// t = 79,685,186,856,218 is about 2^46; CSAIL2019's is 2^56); the top bit is left free
/// so that every position the provers compute stays below 2^64: Pietrzak's halving
/// rounds odd T_i up (T_i + 1) and its tree sums up to T plus one per level.
pub const MAX_DELAY: u64 = 1 << 63;
/// Checkpoints kept when the interval is chosen automatically (at most).
pub const DEFAULT_CHECKPOINTS: u64 = 1 << 14;
/// Most checkpoints an explicit interval may ask for (32 MiB of `U4096`).
pub const MAX_CHECKPOINTS: u64 = 1 << 16;
/// The progress callback is called at least every this many squarings.
const PROGRESS_STEP: u64 = 1 << 16;

/// Options for [`eval`].
#[derive(Clone, Copy, Default)]
pub struct EvalOptions<'a> {
    /// Checkpoint interval k in squarings; 0 picks ceil(T / 16383) (at most 16384 kept).
    pub checkpoint_every: u64,
    /// Called with the number of squarings done so far, at least every 65536 squarings,
    /// at each checkpoint and at the end.
    pub progress: Option<&'a dyn Fn(u64)>,
}

impl fmt::Debug for EvalOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EvalOptions")
            .field("checkpoint_every", &self.checkpoint_every)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The result of [`eval`]: y and the checkpoints the provers start from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The input x.
    pub x: U4096,
    /// The number of squarings T.
    pub t: u64,
    /// The checkpoint interval k.
    pub checkpoint_every: u64,
    /// x^(2^T) mod N exactly (the time-lock value).
    pub y: U4096,
    /// The VDF output |y| = min(y, N - y), the value proofs attest (see [`crate::modulus`]).
    pub output: U4096,
    /// (j k, x^(2^(j k)) mod N) for j = 0..=floor(T / k); the first is (0, x).
    pub checkpoints: Vec<(u64, U4096)>,
}

/// Checks T in 1..=[`MAX_DELAY`].
pub fn check_delay(t: u64) -> Result<(), VdfError> {
    if t == 0 || t > MAX_DELAY {
        return Err(VdfError::DelayOutOfRange { t });
    }
    Ok(())
}

/// The interval used for T and a requested interval (0: automatic), and the number of
/// checkpoints it keeps; refuses more than [`MAX_CHECKPOINTS`].
pub fn checkpoint_interval(t: u64, requested: u64) -> Result<(u64, u64), VdfError> {
    let k = if requested == 0 {
        t.div_ceil(DEFAULT_CHECKPOINTS - 1).max(1)
    } else {
        requested
    };
    let count = t / k + 1;
    if count > MAX_CHECKPOINTS {
        return Err(VdfError::TooManyCheckpoints {
            count,
            max: MAX_CHECKPOINTS,
        });
    }
    Ok((k, count))
}

/// Computes y = x^(2^T) mod N with checkpoints every k squarings.
///
/// Refuses x outside 1 < x < N - 1 ([`VdfError::InputOutOfRange`],
/// [`VdfError::TrivialInput`]), T outside 1..=2^63 and intervals that keep more than
/// [`MAX_CHECKPOINTS`] checkpoints.
pub fn eval(
    n: &Modulus,
    x: &U4096,
    t: u64,
    opts: &EvalOptions<'_>,
) -> Result<Evaluation, VdfError> {
    n.check_input(x)?;
    check_delay(t)?;
    let (k, count) = checkpoint_interval(t, opts.checkpoint_every)?;
    let (y, output, checkpoints) =
        dispatch!(n, ctx => eval_inner(ctx, x, t, k, count, opts.progress));
    Ok(Evaluation {
        x: *x,
        t,
        checkpoint_every: k,
        y,
        output,
        checkpoints,
    })
}

type EvalParts = (U4096, U4096, Vec<(u64, U4096)>);

fn eval_inner<const L: usize>(
    ctx: &MontCtx<L>,
    x: &U4096,
    t: u64,
    k: u64,
    count: u64,
    progress: Option<&dyn Fn(u64)>,
) -> EvalParts {
    let mut chain = Chain::new(ctx, x, k, count);
    chain.run_to(ctx, t, progress, |_, _| {});
    let y = ctx.from_mont(&chain.v);
    (
        widen(&y),
        widen(&canon(ctx.modulus(), &y)),
        chain.checkpoints,
    )
}

/// The squaring chain of an evaluation: the current value (Montgomery form), the
/// squarings done, and the checkpoints (plain) every k squarings so far.
pub(crate) struct Chain<const L: usize> {
    /// x^(2^done) in Montgomery form.
    pub(crate) v: Uint<L>,
    /// Squarings done.
    pub(crate) done: u64,
    k: u64,
    next_checkpoint: u64,
    /// (j k, x^(2^(j k))) for j k <= done.
    pub(crate) checkpoints: Vec<(u64, U4096)>,
}

impl<const L: usize> Chain<L> {
    /// The chain at x, room for `count` checkpoints.
    pub(crate) fn new(ctx: &MontCtx<L>, x: &U4096, k: u64, count: u64) -> Self {
        let mut checkpoints = Vec::with_capacity(count as usize);
        checkpoints.push((0, *x));
        Chain {
            v: ctx.to_mont(&narrow::<L>(x)),
            done: 0,
            k,
            next_checkpoint: k,
            checkpoints,
        }
    }

    /// Squares up to `end` squarings, keeping a checkpoint at each multiple of k (and
    /// calling `at_checkpoint` with its position and Montgomery value), calling `progress`
    /// at least every 65536 squarings, at each checkpoint and at `end`.
    pub(crate) fn run_to(
        &mut self,
        ctx: &MontCtx<L>,
        end: u64,
        progress: Option<&dyn Fn(u64)>,
        mut at_checkpoint: impl FnMut(u64, &Uint<L>),
    ) {
        while self.done < end {
            let stop = end
                .min(self.next_checkpoint)
                .min(self.done.saturating_add(PROGRESS_STEP));
            self.v = ctx.sqr_n(&self.v, stop - self.done);
            self.done = stop;
            if self.done == self.next_checkpoint {
                self.checkpoints
                    .push((self.done, widen(&ctx.from_mont(&self.v))));
                self.next_checkpoint = self.next_checkpoint.saturating_add(self.k);
                at_checkpoint(self.done, &self.v);
            }
            if let Some(p) = progress {
                p(self.done);
            }
        }
    }
}

impl Evaluation {
    /// Recomputes the last segment (from the last checkpoint before T, or the one before
    /// it when T is a checkpoint) and compares it with y: a silent arithmetic fault in
    /// the final squarings, or a y that does not follow, is
    /// [`VdfError::InconsistentEvaluation`]. Costs at most k squarings.
    pub fn check_last_segment(&self, n: &Modulus) -> Result<(), VdfError> {
        self.check(n)?;
        let from = self
            .checkpoints
            .iter()
            .rev()
            .find(|(pos, _)| *pos < self.t)
            .ok_or(VdfError::InconsistentEvaluation("no checkpoint below T"))?;
        let steps = self.t - from.0;
        let again = dispatch!(n, ctx => widen(&ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&narrow(&from.1)), steps))));
        if again != self.y {
            return Err(VdfError::InconsistentEvaluation(
                "the last segment recomputed differs from y: arithmetic fault",
            ));
        }
        Ok(())
    }

    /// Checks that the parts fit together for N: x a valid input, T in range, the
    /// checkpoints at 0, k, 2k, ... up to T with values below N, the first being x.
    /// Does not recompute the squarings.
    pub fn check(&self, n: &Modulus) -> Result<(), VdfError> {
        n.check_input(&self.x)?;
        check_delay(self.t)?;
        if self.checkpoint_every == 0 {
            return Err(VdfError::InconsistentEvaluation("checkpoint interval is 0"));
        }
        let expected = self.t / self.checkpoint_every + 1;
        if self.checkpoints.len() as u64 != expected {
            return Err(VdfError::InconsistentEvaluation(
                "checkpoint count does not match T and the interval",
            ));
        }
        for (j, (pos, v)) in self.checkpoints.iter().enumerate() {
            if *pos != j as u64 * self.checkpoint_every {
                return Err(VdfError::InconsistentEvaluation(
                    "checkpoint positions are not 0, k, 2k, ...",
                ));
            }
            if *v >= *n.value() {
                return Err(VdfError::InconsistentEvaluation(
                    "checkpoint value not below N",
                ));
            }
        }
        if self.checkpoints[0].1 != self.x {
            return Err(VdfError::InconsistentEvaluation(
                "first checkpoint is not x",
            ));
        }
        if self.y >= *n.value() || self.output != n.canonical(&self.y) {
            return Err(VdfError::InconsistentEvaluation(
                "output is not the canonical form of y",
            ));
        }
        Ok(())
    }
}

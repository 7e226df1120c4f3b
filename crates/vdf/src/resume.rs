//! Long evaluations that survive being killed: the chain's state is saved atomically
//! every few seconds, and [`run`] continues from a saved [`State`] to the same answer.
//!
//! State file (`DIR/state`), all integers big-endian:
//! `b"WSVDFST1"` | m: u16 (byte length of N, 128..=512) | N (m bytes) | x (m) | T: u64 |
//! k: u64 (checkpoint interval) | done: u64 | value = x^(2^done) mod N (m) |
//! proof: u8 (0 none, 1 Wesolowski, 2 Pietrzak, 3 segmented Wesolowski, proved after the
//! run from the checkpoints) | c: u32 (checkpoints) | c times (index: u64 | value (m)) | SHA-256 of everything before (32 bytes).
//!
//! Decoding builds N's context for the [`CpuFeatures`] passed to the `_with` forms
//! ([`State::from_bytes_with`], [`State::load_with`]; the plain forms use the detected
//! features) and is strict: every length is checked against the bounds before allocating, the
//! checksum must match (a torn or corrupted file is refused, never resumed), and the
//! parts must fit together (checkpoints at 0, k, 2k, ... up to `done`, values below N).
//!
//! Saving (`wirespeed_util::fs::replace`): write a temporary file in `DIR`, fsync it,
//! rename it over `DIR/state`, fsync `DIR`. A
//! kill at any moment leaves either the previous state or the new one.
//!
//! Fault detection: when a segment ends on a checkpoint, the value is also compared with
//! an independent recomputation of the last segment from the previous checkpoint, at
//! `verify_every` checkpoints (0: never). A silent arithmetic fault is then reported as
//! [`VdfError::InconsistentEvaluation`] instead of being carried forward.
//!
//! A saved state does not vouch for itself: a fault just before a save leaves a wrong
//! value under a consistent checksum, and a file can be edited and re-summed. So [`run`]
//! first [`audit`]s the state it continues: it recomputes the value at `done` from the
//! last checkpoint and the last checkpoint from the one before. A part that does not
//! follow rolls the state back to the newest checkpoint that does (walking back over at
//! most [`MAX_ROLLBACK`] faulty checkpoints, x itself always being sound); more than that
//! is [`ResumeError::Unsound`]. At the end, the last segment is recomputed from its
//! checkpoint and compared with y before the evaluation is returned.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::eval::{check_delay, checkpoint_interval, Evaluation, MAX_CHECKPOINTS};
use crate::modulus::{canon, dispatch, narrow, widen, Modulus};
use crate::{CpuFeatures, ProofKind, VdfError, U4096};

const MAGIC: &[u8; 8] = b"WSVDFST1";

/// The saved state of an evaluation in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// N.
    pub modulus: Modulus,
    /// x.
    pub x: U4096,
    /// T.
    pub t: u64,
    /// Checkpoint interval k.
    pub checkpoint_every: u64,
    /// Squarings done.
    pub done: u64,
    /// x^(2^done) mod N.
    pub value: U4096,
    /// The proof to build at the end, if any.
    pub proof: Option<ProofKind>,
    /// (j k, x^(2^(j k))) for j k <= done; the first is (0, x).
    pub checkpoints: Vec<(u64, U4096)>,
}

/// Why a state cannot be saved, loaded or continued.
#[derive(Debug)]
pub enum ResumeError {
    /// Reading or writing the state failed.
    Io(PathBuf, std::io::Error),
    /// The state file is not a valid state (one line: what is wrong).
    Malformed(String),
    /// The evaluation itself refused or detected a fault.
    Vdf(VdfError),
    /// The saved state does not follow from its own checkpoints further back than
    /// [`MAX_ROLLBACK`] checkpoints (what differs, one line).
    Unsound(String),
}

impl std::fmt::Display for ResumeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResumeError::Io(p, e) => write!(f, "'{}': {e}", p.display()),
            ResumeError::Malformed(m) => write!(f, "invalid state file: {m}"),
            ResumeError::Vdf(e) => write!(f, "{e}"),
            ResumeError::Unsound(m) => write!(f, "the saved state does not check out: {m}"),
        }
    }
}

impl std::error::Error for ResumeError {}

impl From<VdfError> for ResumeError {
    fn from(e: VdfError) -> Self {
        ResumeError::Vdf(e)
    }
}

impl State {
    /// A fresh state (nothing done yet) after checking the inputs.
    pub fn new(
        modulus: Modulus,
        x: U4096,
        t: u64,
        checkpoint_every: u64,
        proof: Option<ProofKind>,
    ) -> Result<State, VdfError> {
        modulus.check_input(&x)?;
        check_delay(t)?;
        let (k, _) = checkpoint_interval(t, checkpoint_every)?;
        Ok(State {
            modulus,
            x,
            t,
            checkpoint_every: k,
            done: 0,
            value: x,
            proof,
            checkpoints: vec![(0, x)],
        })
    }

    /// The path of the state file in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("state")
    }

    /// Serializes the state (format in the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let m = self.modulus.byte_len();
        let val = |v: &U4096| {
            let b = v.to_be_bytes();
            b[b.len() - m..].to_vec()
        };
        let mut out = Vec::with_capacity(64 + (4 + self.checkpoints.len()) * (m + 8));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(m as u16).to_be_bytes());
        out.extend(val(self.modulus.value()));
        out.extend(val(&self.x));
        out.extend_from_slice(&self.t.to_be_bytes());
        out.extend_from_slice(&self.checkpoint_every.to_be_bytes());
        out.extend_from_slice(&self.done.to_be_bytes());
        out.extend(val(&self.value));
        out.push(match self.proof {
            None => 0,
            Some(ProofKind::Wesolowski) => 1,
            Some(ProofKind::Pietrzak) => 2,
            Some(ProofKind::WesolowskiSegmented) => 3,
        });
        out.extend_from_slice(&(self.checkpoints.len() as u32).to_be_bytes());
        for (i, v) in &self.checkpoints {
            out.extend_from_slice(&i.to_be_bytes());
            out.extend(val(v));
        }
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// Parses and checks a state (see the module docs for what is refused).
    pub fn from_bytes(b: &[u8]) -> Result<State, ResumeError> {
        State::from_bytes_with(b, CpuFeatures::get())
    }

    /// [`State::from_bytes`] with N's context built for a CPU with features `f`.
    pub fn from_bytes_with(b: &[u8], f: &CpuFeatures) -> Result<State, ResumeError> {
        let bad = |m: &str| ResumeError::Malformed(m.to_string());
        if b.len() < MAGIC.len() + 2 + 32 || &b[..8] != MAGIC {
            return Err(bad("not a wirespeed VDF state (bad magic or too short)"));
        }
        let (body, sum) = b.split_at(b.len() - 32);
        if Sha256::digest(body).as_slice() != sum {
            return Err(bad("checksum mismatch (torn or corrupted file)"));
        }
        let mut r = Reader { b: &body[8..] };
        let m = r.u16()? as usize;
        if !(128..=512).contains(&m) {
            return Err(bad("modulus length out of range"));
        }
        let modulus = Modulus::from_be_bytes_with(r.take(m)?, f)
            .map_err(|e| ResumeError::Malformed(e.to_string()))?;
        let value_of = |bytes: &[u8]| -> Result<U4096, ResumeError> {
            let v =
                U4096::from_be_bytes(bytes).map_err(|e| ResumeError::Malformed(e.to_string()))?;
            if v >= *modulus.value() {
                return Err(bad("value not below the modulus"));
            }
            Ok(v)
        };
        let x = value_of(r.take(m)?)?;
        let t = r.u64()?;
        let k = r.u64()?;
        let done = r.u64()?;
        let value = value_of(r.take(m)?)?;
        let proof = match r.take(1)?[0] {
            0 => None,
            1 => Some(ProofKind::Wesolowski),
            2 => Some(ProofKind::Pietrzak),
            3 => Some(ProofKind::WesolowskiSegmented),
            _ => return Err(bad("unknown proof kind")),
        };
        let count = r.u32()? as u64;
        if count > MAX_CHECKPOINTS || count as usize * (m + 8) != r.b.len() {
            return Err(bad("checkpoint count does not match the file length"));
        }
        let mut checkpoints = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let i = r.u64()?;
            checkpoints.push((i, value_of(r.take(m)?)?));
        }
        let state = State {
            modulus,
            x,
            t,
            checkpoint_every: k,
            done,
            value,
            proof,
            checkpoints,
        };
        state.check()?;
        Ok(state)
    }

    /// The parts fit together: valid x and T, done <= T, checkpoints exactly at
    /// 0, k, ..., floor(done / k) k with the first equal to x.
    fn check(&self) -> Result<(), ResumeError> {
        let bad = |m: &str| Err(ResumeError::Malformed(m.to_string()));
        self.modulus.check_input(&self.x)?;
        check_delay(self.t)?;
        let (k, _) = checkpoint_interval(self.t, self.checkpoint_every)?;
        if k != self.checkpoint_every || k == 0 {
            return bad("checkpoint interval inconsistent with T");
        }
        if self.done > self.t {
            return bad("more squarings done than T");
        }
        if self.checkpoints.len() as u64 != self.done / k + 1 {
            return bad("wrong number of checkpoints for the squarings done");
        }
        for (j, (i, _)) in self.checkpoints.iter().enumerate() {
            if *i != j as u64 * k {
                return bad("checkpoint indices are not 0, k, 2k, ...");
            }
        }
        if self.checkpoints[0].1 != self.x {
            return bad("first checkpoint is not x");
        }
        Ok(())
    }

    /// Writes the state atomically into `dir` (temp file, fsync, rename, fsync dir).
    pub fn save(&self, dir: &Path) -> Result<(), ResumeError> {
        fs::create_dir_all(dir).map_err(|e| ResumeError::Io(dir.to_path_buf(), e))?;
        let fin = State::path(dir);
        wirespeed_util::fs::replace(&fin, &self.to_bytes()).map_err(|e| ResumeError::Io(fin, e))
    }

    /// Loads the state saved in `dir` (the file is bounded by the state's own limits).
    pub fn load(dir: &Path) -> Result<State, ResumeError> {
        State::load_with(dir, CpuFeatures::get())
    }

    /// [`State::load`] with N's context built for a CPU with features `f`.
    pub fn load_with(dir: &Path, f: &CpuFeatures) -> Result<State, ResumeError> {
        let p = State::path(dir);
        let max = 64 + (MAX_CHECKPOINTS as usize + 4) * (512 + 8);
        // Bounded by the bytes read, not the size reported: a device or pipe put in
        // the state's place is refused at `max + 1` bytes.
        use wirespeed_util::io::{read_file_bounded, BoundedReadError};
        let bytes = read_file_bounded(&p, max).map_err(|e| match e {
            BoundedReadError::Io(e) => ResumeError::Io(p.clone(), e),
            BoundedReadError::ReportedTooLarge { len, .. } => ResumeError::Malformed(format!(
                "state file has {len} bytes, more than any valid state"
            )),
            BoundedReadError::TooLarge { .. } => ResumeError::Malformed(format!(
                "state file holds more than {max} bytes, more than any valid state"
            )),
        })?;
        State::from_bytes_with(&bytes, f)
    }
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ResumeError> {
        if self.b.len() < n {
            return Err(ResumeError::Malformed("truncated".into()));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u16(&mut self) -> Result<u16, ResumeError> {
        Ok(u16::from_be_bytes([self.take(1)?[0], self.take(1)?[0]]))
    }
    fn u32(&mut self) -> Result<u32, ResumeError> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(a))
    }
    fn u64(&mut self) -> Result<u64, ResumeError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }
}

/// How [`run`] saves and checks.
#[derive(Clone, Copy)]
pub struct RunOptions<'a> {
    /// Save the state at least this often (and at the end).
    pub save_every: Duration,
    /// Recompute the last segment at every n-th checkpoint to detect faults (0: never).
    pub verify_every: u64,
    /// Called with the squarings done so far.
    pub progress: Option<&'a dyn Fn(u64)>,
    /// Called when [`audit`] rolled the state back (before any squaring).
    pub on_rollback: Option<&'a dyn Fn(&Audit)>,
}

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("save_every", &self.save_every)
            .field("verify_every", &self.verify_every)
            .field("progress", &self.progress.is_some())
            .field("on_rollback", &self.on_rollback.is_some())
            .finish()
    }
}

/// Squarings between looks at the clock.
const STEP: u64 = 1 << 14;

/// Most faulty checkpoints [`audit`] walks back over before it refuses the state.
pub const MAX_ROLLBACK: usize = 4;

/// What [`audit`] found in a saved state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Audit {
    /// The value at `done` and the last checkpoint follow from their predecessors.
    Sound,
    /// Some part did not follow; the state now stands at the checkpoint `to`.
    RolledBack {
        /// `done` as saved.
        from: u64,
        /// `done` after the rollback (a checkpoint position).
        to: u64,
        /// What did not follow (one line).
        what: String,
    },
}

/// x^(2^steps) mod N.
fn square_n(n: &Modulus, v: &U4096, steps: u64) -> U4096 {
    dispatch!(n, ctx => widen(&ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&narrow(v)), steps))))
}

/// Recomputes what the state vouches for last (see the module docs): the value at
/// `done` from the last checkpoint, and the last checkpoint from the one before, then
/// walks back while a checkpoint does not follow from its predecessor. Rolls `state`
/// back to the newest checkpoint that follows (or x); more than [`MAX_ROLLBACK`] faulty
/// checkpoints is [`ResumeError::Unsound`]. Costs at most (MAX_ROLLBACK + 2) k squarings.
pub fn audit(state: &mut State) -> Result<Audit, ResumeError> {
    state.check()?;
    let n = state.modulus.clone();
    let k = state.checkpoint_every;
    let last = state.checkpoints.len() - 1;
    let mut what = Vec::new();
    let (pos, cp) = state.checkpoints[last];
    if square_n(&n, &cp, state.done - pos) != state.value {
        what.push(format!(
            "the value at done = {} does not follow from the checkpoint at {pos}",
            state.done
        ));
    }
    let mut j = last;
    while j > 0 && square_n(&n, &state.checkpoints[j - 1].1, k) != state.checkpoints[j].1 {
        what.push(format!(
            "the checkpoint at {} does not follow from the one at {}",
            state.checkpoints[j].0,
            state.checkpoints[j - 1].0
        ));
        if last - j + 1 > MAX_ROLLBACK {
            return Err(ResumeError::Unsound(format!(
                "{}; more than {MAX_ROLLBACK} checkpoints are faulty",
                what.join("; ")
            )));
        }
        j -= 1;
    }
    if what.is_empty() {
        return Ok(Audit::Sound);
    }
    let from = state.done;
    state.checkpoints.truncate(j + 1);
    (state.done, state.value) = state.checkpoints[j];
    Ok(Audit::RolledBack {
        from,
        to: state.done,
        what: what.join("; "),
    })
}

/// Continues `state` to T squarings, saving into `dir`; returns the evaluation (as
/// [`crate::eval()`] would) once done. The state is [`audit`]ed first (a rollback is
/// reported to `opts.on_rollback`), and the last segment is recomputed at the end
/// ([`Evaluation::check_last_segment`]). The final state (done = T) is saved too.
pub fn run(mut state: State, dir: &Path, opts: &RunOptions<'_>) -> Result<Evaluation, ResumeError> {
    if state.done > 0 {
        let found = audit(&mut state)?;
        if found != Audit::Sound {
            if let Some(f) = opts.on_rollback {
                f(&found);
            }
        }
    }
    state.check()?;
    let k = state.checkpoint_every;
    let mut last_save = Instant::now();
    let n = state.modulus.clone();
    while state.done < state.t {
        let next_cp = (state.done / k + 1) * k;
        let stop = state.t.min(next_cp).min(state.done + STEP);
        let steps = stop - state.done;
        state.value = dispatch!(n, ctx => widen(&ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&narrow(&state.value)), steps))));
        state.done = stop;
        if stop == next_cp {
            let j = stop / k;
            if opts.verify_every > 0 && j.is_multiple_of(opts.verify_every) {
                let prev = state.checkpoints[(j - 1) as usize].1;
                let again = dispatch!(n, ctx => widen(&ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&narrow(&prev)), k))));
                if again != state.value {
                    return Err(VdfError::InconsistentEvaluation(
                        "recomputed segment differs: arithmetic fault",
                    )
                    .into());
                }
            }
            state.checkpoints.push((stop, state.value));
        }
        if let Some(p) = opts.progress {
            p(state.done);
        }
        if last_save.elapsed() >= opts.save_every {
            state.save(dir)?;
            last_save = Instant::now();
        }
    }
    state.save(dir)?;
    let output = dispatch!(n, ctx => widen(&canon(ctx.modulus(), &narrow(&state.value))));
    let ev = Evaluation {
        x: state.x,
        t: state.t,
        checkpoint_every: k,
        y: state.value,
        output,
        checkpoints: state.checkpoints,
    };
    ev.check_last_segment(&n)?;
    Ok(ev)
}

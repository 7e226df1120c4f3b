//! `wirespeed vdf eval|verify`: evaluate y = x^(2^T) mod N with a proof, and check one.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use serde::Serialize;
use wirespeed_engine::backend::cpu;
use wirespeed_vdf::encode::MAX_JSON_LEN;
use wirespeed_vdf::resume::{self, Audit, ResumeError, RunOptions, State};
use wirespeed_vdf::{
    eval, eval_segmented, prove, EvalOptions, Evaluation, Modulus, ProofKind, VdfProof, U4096,
};

use crate::error::CliError;
use crate::files::{read_bounded_bytes, read_bounded_text, write_file};
use crate::progress::Progress;

/// `wirespeed vdf ...`.
#[derive(Subcommand, Debug)]
pub enum VdfCommand {
    /// Evaluate y = x^(2^T) mod N by T sequential squarings, with a proof
    Eval(EvalArgs),
    /// Continue an evaluation saved with `vdf eval --checkpoint-dir DIR` (same answer)
    Resume(ResumeArgs),
    /// Verify a proof file written by `vdf eval --out` (JSON or the binary form)
    #[command(
        after_help = "Exit status: 0 valid, 1 invalid (the reason is printed), \
                            2 malformed or unreadable input."
    )]
    Verify(VerifyProofArgs),
}

/// Which proof `vdf eval` builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProofChoice {
    /// Segmented Wesolowski: one Wesolowski proof per segment, built while the evaluation
    /// runs (little left after the last squaring); up to 29 group elements (format
    /// version 2).
    WesolowskiSegmented,
    /// Wesolowski: one group element, challenge a 128-bit prime, built after the last
    /// squaring (format version 1).
    Wesolowski,
    /// Pietrzak: ceil(log2 T) group elements.
    Pietrzak,
    /// No proof: print or write y only.
    None,
}

/// Arguments of `wirespeed vdf eval`.
#[derive(Args, Debug)]
#[command(after_help = "\
Without --out, prints y = x^(2^T) mod N as hex on stdout. The proof file carries the
VDF output min(y, N - y) (proofs work modulo +-1). Input: 1 < x < N - 1, 1 <= T <= 2^63,
N odd with 1024 to 4096 bits (default: the RSA-2048 challenge number).")]
pub struct EvalArgs {
    /// Modulus N in hex [default: RSA-2048 challenge number]
    #[arg(long, value_name = "HEX", conflicts_with = "modulus_file")]
    pub modulus: Option<String>,
    /// File holding N in hex (whitespace ignored)
    #[arg(long, value_name = "FILE")]
    pub modulus_file: Option<PathBuf>,
    /// The input x in hex
    #[arg(long, value_name = "HEX")]
    pub x: String,
    /// The delay T: number of squarings
    #[arg(long, value_name = "T")]
    pub t: u64,
    /// Proof to build
    #[arg(long, value_enum, default_value = "wesolowski-segmented")]
    pub proof: ProofChoice,
    /// Write the statement and proof as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one JSON object: y (hex), t (the whole evaluation), bits, resumed_from
    /// (squarings of earlier runs), squarings, secs and ns_per_square (this run)
    #[arg(long)]
    pub json: bool,
    /// Save the evaluation's state here (atomically) so `vdf resume DIR` can continue it
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    #[command(flatten)]
    pub saving: SaveArgs,
}

/// How a resumable evaluation saves and checks itself.
#[derive(Args, Debug)]
pub struct SaveArgs {
    /// With --checkpoint-dir: seconds between saves [default: 10]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub save_every: Option<f64>,
    /// With --checkpoint-dir: recompute every n-th checkpoint segment to catch arithmetic
    /// faults (0: never) [default: 64]
    #[arg(long, value_name = "N")]
    pub verify_every: Option<u64>,
}

impl SaveArgs {
    /// Refuses --save-every or --verify-every without a checkpoint directory (they
    /// would be ignored), before any work.
    pub(crate) fn need_dir(&self, dir: Option<&Path>) -> Result<(), CliError> {
        let given = self.save_every.is_some() || self.verify_every.is_some();
        if given && dir.is_none() {
            return Err(CliError::Invalid(
                "--save-every and --verify-every need --checkpoint-dir DIR".into(),
            ));
        }
        Ok(())
    }
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a number of seconds between 0 and 86400"
        )),
    }
}

/// Arguments of `wirespeed vdf resume`.
#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// The directory given to `vdf eval --checkpoint-dir`
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write the statement and proof as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one JSON object: y (hex), t (the whole evaluation), bits, resumed_from
    /// (squarings of earlier runs), squarings, secs and ns_per_square (this run)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub saving: SaveArgs,
}

/// Arguments of `wirespeed vdf verify`.
#[derive(Args, Debug)]
pub struct VerifyProofArgs {
    /// Proof file (JSON, or the compact binary form)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The modulus N the proof must be about, in hex: the group you trust (a proof
    /// carries its own N, which proves nothing by itself) [default: the RSA-2048
    /// challenge number]
    #[arg(long, value_name = "HEX", conflicts_with = "modulus_file")]
    pub modulus: Option<String>,
    /// File holding the trusted N in hex (whitespace ignored)
    #[arg(long, value_name = "FILE")]
    pub modulus_file: Option<PathBuf>,
    /// One JSON object: valid, and kind, modulus (fingerprint), bits and t when valid
    /// (reason when not)
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct EvalSummary {
    y: String,
    /// Squarings of the whole evaluation.
    t: u64,
    bits: usize,
    /// Squarings earlier runs did (0 unless resumed).
    resumed_from: u64,
    /// Squarings this run did (t - resumed_from).
    squarings: u64,
    /// Seconds this run took.
    secs: f64,
    /// This run's seconds per squaring, in ns.
    ns_per_square: f64,
}

/// Runs a `vdf` subcommand.
pub fn run(cmd: &VdfCommand) -> Result<(), CliError> {
    match cmd {
        VdfCommand::Eval(a) => run_eval(a),
        VdfCommand::Resume(a) => run_resume(a),
        VdfCommand::Verify(a) => {
            // A verifying command: a trusted modulus that is not a valid N is a
            // malformed value (exit 2).
            // A file that cannot be read or is too long is named as such; a value that is
            // not a valid N names the flag it came from.
            let flag = if a.modulus.is_some() {
                "--modulus"
            } else {
                "--modulus-file"
            };
            let trusted = modulus_from(&a.modulus, &a.modulus_file).map_err(|e| match e {
                e @ (CliError::Open { .. } | CliError::MalformedInput { .. }) => e,
                CliError::Invalid(message) => CliError::MalformedArg {
                    arg: flag.into(),
                    message,
                },
                e => CliError::MalformedArg {
                    arg: flag.into(),
                    message: e.to_string(),
                },
            })?;
            run_verify(&a.file, &trusted, a.json)
        }
    }
}

/// A hex value (whitespace ignored); the error is the reason alone, without the flag.
fn hex_value(s: &str) -> Result<U4096, CliError> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    U4096::from_hex(&clean).map_err(|e| CliError::Invalid(e.to_string()))
}

fn hex_arg(what: &str, s: &str) -> Result<U4096, CliError> {
    hex_value(s).map_err(|e| CliError::Invalid(format!("{what}: {e}")))
}

fn modulus(a: &EvalArgs) -> Result<Modulus, CliError> {
    let flag = if a.modulus.is_some() {
        "--modulus"
    } else {
        "--modulus-file"
    };
    modulus_from(&a.modulus, &a.modulus_file).map_err(|e| match e {
        CliError::Invalid(m) => CliError::Invalid(format!("{flag}: {m}")),
        e => e,
    })
}

/// N from `--modulus HEX` or `--modulus-file F`, or the RSA-2048 challenge number.
fn modulus_from(hex: &Option<String>, file: &Option<PathBuf>) -> Result<Modulus, CliError> {
    let hex = match (hex, file) {
        (Some(h), _) => h.clone(),
        (None, Some(path)) => read_bounded_text(path, MAX_JSON_LEN)?,
        (None, None) => return Ok(Modulus::rsa2048_with(cpu())),
    };
    Modulus::new_with(&hex_value(&hex)?, cpu()).map_err(CliError::Vdf)
}

/// Where an evaluation's result goes.
struct Finish<'a> {
    kind: Option<ProofKind>,
    /// A proof built beside the evaluation, with the seconds it took after the last
    /// squaring.
    built: Option<(VdfProof, f64)>,
    out: Option<&'a Path>,
    json: bool,
}

fn proof_kind(p: ProofChoice) -> Option<ProofKind> {
    match p {
        ProofChoice::Wesolowski => Some(ProofKind::Wesolowski),
        ProofChoice::Pietrzak => Some(ProofKind::Pietrzak),
        ProofChoice::WesolowskiSegmented => Some(ProofKind::WesolowskiSegmented),
        ProofChoice::None => None,
    }
}

/// A resumable run's error; a state that does not check out names the directory.
/// A `--checkpoint-dir` that exists but is not a directory is refused (exit 2) in those
/// words, before anything is computed.
pub(crate) fn checkpoint_dir_usable(dir: &Path) -> Result<(), CliError> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(CliError::MalformedInput {
            path: dir.to_path_buf(),
            message: "--checkpoint-dir names a file, not a directory".into(),
        }),
        _ => Ok(()),
    }
}

pub(crate) fn resume_err(dir: &Path) -> impl Fn(ResumeError) -> CliError + '_ {
    move |e| match e {
        ResumeError::Io(path, source) => CliError::Open { path, source },
        ResumeError::Malformed(message) => CliError::MalformedInput {
            path: State::path(dir),
            message,
        },
        ResumeError::Unsound(message) => CliError::MalformedInput {
            path: dir.to_path_buf(),
            message: format!("the saved state does not check out: {message}"),
        },
        ResumeError::Vdf(e) => CliError::Vdf(e),
    }
}

/// Says on stderr that a saved state was rolled back, and why, and lowers `resumed_from`
/// to the checkpoint it went back to (so this run's count includes the redone squarings).
pub(crate) fn report_rollback<'a>(
    label: &'a str,
    dir: &'a Path,
    resumed_from: &'a std::cell::Cell<u64>,
) -> impl Fn(&Audit) + 'a {
    move |a| {
        if let Audit::RolledBack { from, to, what } = a {
            resumed_from.set(*to);
            eprintln!(
                "{label}: the state in {} does not check out ({what}); going back from {from} \
                 to the checkpoint at {to} squarings",
                dir.display()
            );
        }
    }
}

/// Progress of `vdf` squarings from `start_at` of `total` (a bar on a terminal).
fn with_progress<T>(total: u64, start_at: u64, f: impl FnOnce(&dyn Fn(u64)) -> T) -> (T, f64) {
    Progress {
        label: "vdf",
        total,
        start_at,
        eta_line: false,
    }
    .run(f)
}

fn run_eval(a: &EvalArgs) -> Result<(), CliError> {
    a.saving.need_dir(a.checkpoint_dir.as_deref())?;
    let n = modulus(a)?;
    let x = hex_arg("--x", &a.x)?;
    let kind = proof_kind(a.proof);
    // Squarings an earlier run in the checkpoint directory already did.
    let mut done_before = 0;
    let mut built = None;
    let (ev, secs) = match &a.checkpoint_dir {
        None if kind == Some(ProofKind::WesolowskiSegmented) => {
            // Proved beside the evaluation; the progress call with T marks the last
            // squaring.
            let last = std::cell::Cell::new(None);
            let ((r, end), secs) = with_progress(a.t, 0, |tick| {
                let mark = |done: u64| {
                    if done == a.t {
                        last.set(Some(Instant::now()));
                    }
                    tick(done)
                };
                let opts = EvalOptions {
                    checkpoint_every: 0,
                    progress: Some(&mark),
                };
                (eval_segmented(&n, &x, a.t, &opts), Instant::now())
            });
            let (ev, proof) = r.map_err(CliError::Vdf)?;
            let tail = last.get().map_or(0.0, |l| (end - l).as_secs_f64());
            built = Some((proof, tail));
            (ev, (secs - tail).max(0.0))
        }
        None => {
            let (ev, secs) = with_progress(a.t, 0, |tick| {
                eval(
                    &n,
                    &x,
                    a.t,
                    &EvalOptions {
                        checkpoint_every: 0,
                        progress: Some(tick),
                    },
                )
            });
            (ev.map_err(CliError::Vdf)?, secs)
        }
        Some(dir) => {
            checkpoint_dir_usable(dir)?;
            let fresh = State::new(n.clone(), x, a.t, 0, kind).map_err(CliError::Vdf)?;
            let state = match saved_state(dir, &fresh)? {
                Some(old) => {
                    eprintln!(
                        "vdf: resuming at {} of {} squarings from {}",
                        old.done,
                        old.t,
                        dir.display()
                    );
                    old
                }
                None => {
                    fresh.save(dir).map_err(resume_err(dir))?;
                    fresh
                }
            };
            let from = std::cell::Cell::new(state.done);
            let rollback = report_rollback("vdf", dir, &from);
            let (ev, secs) = with_progress(a.t, state.done, |tick| {
                resume::run(state, dir, &a.saving.options(tick, &rollback))
            });
            done_before = from.get();
            (ev.map_err(resume_err(dir))?, secs)
        }
    };
    finish(
        &n,
        &ev,
        done_before,
        secs,
        &Finish {
            kind,
            built,
            out: a.out.as_deref(),
            json: a.json,
        },
    )
}

/// The state saved in `dir` by an earlier run of the same statement (to resume), None
/// when there is none; a directory that holds another evaluation (another modulus, x, T
/// or proof) is refused, naming what differs, and left as it is.
pub(crate) fn saved_state(dir: &Path, asked: &State) -> Result<Option<State>, CliError> {
    if !State::path(dir).exists() {
        return Ok(None);
    }
    let old = State::load_with(dir, cpu()).map_err(|e| match e {
        ResumeError::Malformed(message) => CliError::MalformedInput {
            path: State::path(dir),
            message,
        },
        e => resume_err(dir)(e),
    })?;
    let mut differs = Vec::new();
    if old.modulus != asked.modulus {
        differs.push(format!(
            "modulus {} (asked {})",
            old.modulus.fingerprint(),
            asked.modulus.fingerprint()
        ));
    }
    if old.x != asked.x {
        differs.push(format!("x {} (asked {})", old.x.to_hex(), asked.x.to_hex()));
    }
    if old.t != asked.t {
        differs.push(format!("T {} (asked {})", old.t, asked.t));
    }
    if old.proof != asked.proof {
        // As --proof names them.
        let name = |p: Option<ProofKind>| p.map_or("none", ProofKind::name);
        differs.push(format!(
            "proof {} (asked {})",
            name(old.proof),
            name(asked.proof)
        ));
    }
    if differs.is_empty() {
        return Ok(Some(old));
    }
    Err(CliError::MalformedInput {
        path: dir.to_path_buf(),
        message: format!(
            "holds another evaluation: {}; give another --checkpoint-dir, or continue that \
             one with `wirespeed vdf resume {}`",
            differs.join(", "),
            dir.display()
        ),
    })
}

impl SaveArgs {
    /// The library's run options: saving and checking as asked, progress to `tick`,
    /// rollbacks to `rollback`.
    pub(crate) fn options<'a>(
        &self,
        tick: &'a dyn Fn(u64),
        rollback: &'a dyn Fn(&Audit),
    ) -> RunOptions<'a> {
        RunOptions {
            save_every: Duration::from_secs_f64(self.save_every.unwrap_or(10.0)),
            verify_every: self.verify_every.unwrap_or(64),
            progress: Some(tick),
            on_rollback: Some(rollback),
        }
    }
}

fn run_resume(a: &ResumeArgs) -> Result<(), CliError> {
    let state = State::load_with(&a.dir, cpu()).map_err(|e| match e {
        ResumeError::Malformed(message) => CliError::MalformedInput {
            path: State::path(&a.dir),
            message,
        },
        e => resume_err(&a.dir)(e),
    })?;
    let n = state.modulus.clone();
    let (t, kind) = (state.t, state.proof);
    let from = std::cell::Cell::new(state.done);
    let rollback = report_rollback("vdf", &a.dir, &from);
    let (ev, secs) = with_progress(t, from.get(), |tick| {
        resume::run(state, &a.dir, &a.saving.options(tick, &rollback))
    });
    let ev = ev.map_err(resume_err(&a.dir))?;
    finish(
        &n,
        &ev,
        from.get(),
        secs,
        &Finish {
            kind,
            built: None,
            out: a.out.as_deref(),
            json: a.json,
        },
    )
}

/// Checks the evaluation (the last segment recomputed), proves (if asked) and verifies
/// the proof against N before anything is written, writes --out, prints the result.
/// `resumed_from` is how many squarings earlier runs did (this run did the rest).
fn finish(
    n: &Modulus,
    ev: &Evaluation,
    resumed_from: u64,
    secs: f64,
    f: &Finish<'_>,
) -> Result<(), CliError> {
    ev.check_last_segment(n).map_err(CliError::Vdf)?;
    if let Some(kind) = f.kind {
        let p0 = Instant::now();
        let (proof, before) = match &f.built {
            Some((p, tail)) => (p.clone(), *tail),
            None => (prove(n, ev, kind).map_err(CliError::Vdf)?, 0.0),
        };
        // Never write or print a proof the verifier has not accepted.
        proof.verify(n).map_err(|e| {
            CliError::Internal(format!(
                "the {} proof just built does not verify ({e}): an arithmetic fault; \
                 nothing was written",
                kind.name()
            ))
        })?;
        let proof_secs = before + p0.elapsed().as_secs_f64();
        if !f.json && std::io::stderr().is_terminal() {
            eprintln!(
                "{} proof in {proof_secs:.3} s after the last squaring ({:.1}% of the evaluation)",
                kind.name(),
                100.0 * proof_secs / secs.max(1e-9)
            );
        }
        if let Some(path) = f.out {
            write_file(path, proof.to_json().as_bytes())?;
        }
    } else if let Some(path) = f.out {
        let doc = serde_json::json!({
            "modulus": n.value().to_hex(),
            "x": ev.x.to_hex(),
            "t": ev.t,
            "y": ev.output.to_hex(),
        });
        write_file(path, doc.to_string().as_bytes())?;
    }

    let mut stdout = std::io::stdout().lock();
    if f.json {
        let s = EvalSummary {
            y: ev.y.to_hex(),
            t: ev.t,
            bits: n.bits(),
            resumed_from,
            squarings: ev.t - resumed_from.min(ev.t),
            secs,
            ns_per_square: secs * 1e9 / (ev.t - resumed_from.min(ev.t)).max(1) as f64,
        };
        let line = serde_json::to_string(&s).map_err(|e| CliError::Internal(e.to_string()))?;
        writeln!(stdout, "{line}").map_err(CliError::Stdout)
    } else if let Some(path) = f.out.filter(|p| *p != Path::new("/dev/stdout")) {
        // One line saying what was written (the document itself is in the file).
        let what = match f.kind {
            Some(kind) => format!("{} proof", kind.name()),
            None => "evaluation".to_string(),
        };
        writeln!(stdout, "wrote {}: {what}, T = {}", path.display(), ev.t).map_err(CliError::Stdout)
    } else if f.out.is_none() {
        writeln!(stdout, "{}", ev.y.to_hex()).map_err(CliError::Stdout)
    } else {
        Ok(())
    }
}

fn run_verify(path: &Path, trusted: &Modulus, json: bool) -> Result<(), CliError> {
    let bytes = read_bounded_bytes(path, MAX_JSON_LEN)?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let decoded = if first == Some(&b'{') {
        std::str::from_utf8(&bytes)
            .map_err(|_| "not UTF-8 text".to_string())
            .and_then(|s| VdfProof::from_json_with(s, cpu()).map_err(|e| e.to_string()))
    } else {
        VdfProof::from_bytes_with(&bytes, cpu()).map_err(|e| e.to_string())
    };
    let proof = decoded.map_err(|message| CliError::MalformedInput {
        path: path.to_path_buf(),
        message,
    })?;
    let checked = proof.verify(trusted).map_err(CliError::Vdf).map(|()| {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), proof.kind().name().into());
        m.insert("modulus".into(), trusted.fingerprint().into());
        m.insert("bits".into(), trusted.bits().into());
        m.insert("t".into(), proof.t.into());
        m
    });
    crate::verdict::report(json, checked, || {
        format!(
            "valid: {} proof, modulus {} ({} bits), T = {}",
            proof.kind().name(),
            trusted.fingerprint(),
            trusted.bits(),
            proof.t
        )
    })
}

//! `wirespeed vdf eval|verify`: evaluate y = x^(2^T) mod N with a proof, and check one.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use wirespeed_vdf::encode::MAX_JSON_LEN;
use wirespeed_vdf::{eval, prove, EvalOptions, Modulus, ProofKind, VdfProof, U4096};

use crate::error::CliError;

/// `wirespeed vdf ...`.
#[derive(Subcommand, Debug)]
pub enum VdfCommand {
    /// Evaluate y = x^(2^T) mod N by T sequential squarings, with a proof
    Eval(EvalArgs),
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
    /// Wesolowski: one group element, challenge a 128-bit prime.
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
VDF output min(y, N - y) (proofs work modulo +-1). Input: 1 < x < N - 1, 1 <= T <= 2^40,
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
    #[arg(long, value_enum, default_value = "wesolowski")]
    pub proof: ProofChoice,
    /// Write the statement and proof as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one JSON object: y (hex), t, bits, secs, ns_per_square
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `wirespeed vdf verify`.
#[derive(Args, Debug)]
pub struct VerifyProofArgs {
    /// Proof file (JSON, or the compact binary form)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Serialize)]
struct EvalSummary {
    y: String,
    t: u64,
    bits: usize,
    secs: f64,
    ns_per_square: f64,
}

/// Runs a `vdf` subcommand.
pub fn run(cmd: &VdfCommand) -> Result<(), CliError> {
    match cmd {
        VdfCommand::Eval(a) => run_eval(a),
        VdfCommand::Verify(a) => run_verify(&a.file),
    }
}

fn hex_arg(what: &str, s: &str) -> Result<U4096, CliError> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    U4096::from_hex(&clean).map_err(|e| CliError::Invalid(format!("{what}: {e}")))
}

fn modulus(a: &EvalArgs) -> Result<Modulus, CliError> {
    let hex = match (&a.modulus, &a.modulus_file) {
        (Some(h), _) => h.clone(),
        (None, Some(path)) => read_bounded(path, MAX_JSON_LEN)?,
        (None, None) => return Ok(Modulus::rsa2048()),
    };
    Modulus::new(&hex_arg("--modulus", &hex)?).map_err(CliError::Vdf)
}

/// Reads a file of at most `max` bytes (refused before reading more).
fn read_bounded_bytes(path: &Path, max: usize) -> Result<Vec<u8>, CliError> {
    let open = |source| CliError::Open {
        path: path.to_path_buf(),
        source,
    };
    let len = std::fs::metadata(path).map_err(open)?.len();
    if len > max as u64 {
        return Err(CliError::MalformedInput {
            path: path.to_path_buf(),
            message: format!("file has {len} bytes; at most {max} are accepted"),
        });
    }
    std::fs::read(path).map_err(open)
}

/// Reads a UTF-8 text file of at most `max` bytes.
fn read_bounded(path: &Path, max: usize) -> Result<String, CliError> {
    String::from_utf8(read_bounded_bytes(path, max)?).map_err(|_| CliError::MalformedInput {
        path: path.to_path_buf(),
        message: "not UTF-8 text".into(),
    })
}

fn progress_bar(t: u64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(t);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} squarings  {per_sec}  {msg}  ETA {eta_precise}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

fn run_eval(a: &EvalArgs) -> Result<(), CliError> {
    let n = modulus(a)?;
    let x = hex_arg("--x", &a.x)?;
    let bar = progress_bar(a.t);
    let start = Instant::now();
    let tick = |done: u64| {
        if let Some(b) = &bar {
            b.set_position(done);
            let secs = start.elapsed().as_secs_f64();
            if done > 0 {
                b.set_message(format!("{:.1} ns/square", secs * 1e9 / done as f64));
            }
        }
    };
    let opts = EvalOptions {
        checkpoint_every: 0,
        progress: Some(&tick),
    };
    let ev = eval(&n, &x, a.t, &opts).map_err(CliError::Vdf)?;
    let secs = start.elapsed().as_secs_f64();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }

    let kind = match a.proof {
        ProofChoice::Wesolowski => Some(ProofKind::Wesolowski),
        ProofChoice::Pietrzak => Some(ProofKind::Pietrzak),
        ProofChoice::None => None,
    };
    if let Some(kind) = kind {
        let p0 = Instant::now();
        let proof = prove(&n, &ev, kind).map_err(CliError::Vdf)?;
        let proof_secs = p0.elapsed().as_secs_f64();
        if !a.json && std::io::stderr().is_terminal() {
            eprintln!(
                "{kind:?} proof in {proof_secs:.3} s after the last squaring ({:.1}% of the evaluation)",
                100.0 * proof_secs / secs.max(1e-9)
            );
        }
        if let Some(path) = &a.out {
            write_file(path, proof.to_json().as_bytes())?;
        }
    } else if let Some(path) = &a.out {
        let doc = serde_json::json!({
            "modulus": n.value().to_hex(),
            "x": x.to_hex(),
            "t": a.t,
            "y": ev.output.to_hex(),
        });
        write_file(path, doc.to_string().as_bytes())?;
    }

    let mut stdout = std::io::stdout().lock();
    if a.json {
        let s = EvalSummary {
            y: ev.y.to_hex(),
            t: a.t,
            bits: n.bits(),
            secs,
            ns_per_square: secs * 1e9 / a.t as f64,
        };
        let line = serde_json::to_string(&s).map_err(|e| CliError::Internal(e.to_string()))?;
        writeln!(stdout, "{line}").map_err(CliError::Stdout)
    } else if a.out.is_none() {
        writeln!(stdout, "{}", ev.y.to_hex()).map_err(CliError::Stdout)
    } else {
        Ok(())
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|source| CliError::Output {
        path: path.to_path_buf(),
        source,
    })
}

fn run_verify(path: &Path) -> Result<(), CliError> {
    let bytes = read_bounded_bytes(path, MAX_JSON_LEN)?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let decoded = if first == Some(&b'{') {
        std::str::from_utf8(&bytes)
            .map_err(|_| "not UTF-8 text".to_string())
            .and_then(|s| VdfProof::from_json(s).map_err(|e| e.to_string()))
    } else {
        VdfProof::from_bytes(&bytes).map_err(|e| e.to_string())
    };
    let proof = decoded.map_err(|message| CliError::MalformedInput {
        path: path.to_path_buf(),
        message,
    })?;
    proof.verify().map_err(CliError::Vdf)?;
    writeln!(
        std::io::stdout().lock(),
        "valid: {:?} proof, {} bits, T = {}",
        proof.kind(),
        proof.modulus.bits(),
        proof.t
    )
    .map_err(CliError::Stdout)
}

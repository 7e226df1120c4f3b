//! `wirespeed verify`: one verdict per signature record in a file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use wirespeed_ed25519::{verify_many_with, Backend, Item, Mode, VerifyError};
use wirespeed_sigdata::format::{self, Format};

use crate::args::{all_cores, in_pool, parse_backend, parse_format, parse_mode, parse_threads};
use crate::error::CliError;

/// Arguments of `wirespeed verify`.
#[derive(Args, Debug)]
#[command(after_help = "\
Formats: bin = records back to back, `u32 msg_len (LE) | msg | sig[64] | pk[32]`;
jsonl = one `{\"pk\":\"<hex>\",\"msg\":\"<hex>\",\"sig\":\"<hex>\"}` per line.
Prints `count=.. valid=.. invalid=.. secs=.. per_sec=..` (secs: verification only).
Exit status: 0 when the file was read to its end (invalid signatures included),
2 when it is truncated or malformed (the records before the bad one are verified and
their verdicts written), 1 for any other error.")]
pub struct VerifyArgs {
    /// Signature record file (binary or JSON Lines, see below)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Validation rules: strict, zip215, cofactored-strict or libsodium
    #[arg(long, value_name = "MODE", default_value = "strict", value_parser = parse_mode)]
    pub mode: Mode,

    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// Arithmetic backend: auto, serial, avx2, ifma or ifma4 (one this CPU lacks falls back to serial)
    #[arg(long, value_name = "BACKEND", default_value = "auto", value_parser = parse_backend)]
    pub backend: Backend,

    /// File format: bin or jsonl [default: jsonl for a .jsonl file, else bin]
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub format: Option<Format>,

    /// Write one line per record, in input order: `ok` or `invalid <Reason>`
    #[arg(long, value_name = "OUT")]
    pub verdicts: Option<PathBuf>,

    /// Print the summary as one JSON object (count, valid, invalid, secs, per_sec)
    #[arg(long)]
    pub json: bool,
}

/// The summary printed after verification.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// Records verified.
    pub count: usize,
    /// Valid signatures.
    pub valid: usize,
    /// Invalid signatures.
    pub invalid: usize,
    /// Seconds spent verifying (reading and writing excluded).
    pub secs: f64,
    /// Records verified per second.
    pub per_sec: f64,
}

impl Summary {
    fn new(verdicts: &[Result<(), VerifyError>], secs: f64) -> Summary {
        let valid = verdicts.iter().filter(|v| v.is_ok()).count();
        let count = verdicts.len();
        let per_sec = if secs > 0.0 { count as f64 / secs } else { 0.0 };
        Summary {
            count,
            valid,
            invalid: count - valid,
            secs,
            per_sec,
        }
    }

    fn line(&self, json: bool) -> String {
        if json {
            // A struct of integers and finite floats always serializes.
            serde_json::to_string(self).unwrap_or_default()
        } else {
            format!(
                "count={} valid={} invalid={} secs={:.6} per_sec={:.0}",
                self.count, self.valid, self.invalid, self.secs, self.per_sec
            )
        }
    }
}

/// Runs `wirespeed verify`.
pub fn run(args: &VerifyArgs) -> Result<(), CliError> {
    let format = args.format.unwrap_or_else(|| Format::from_path(&args.file));
    let read = format::read_path(&args.file, format).map_err(|source| CliError::Open {
        path: args.file.clone(),
        source,
    })?;
    let items: Vec<Item<'_>> = wirespeed_sigdata::items(&read.records);

    let threads = args.threads.unwrap_or_else(all_cores);
    let (verdicts, secs) = in_pool(threads, || {
        let start = Instant::now();
        let v = verify_many_with(&items, args.mode, args.backend);
        (v, start.elapsed().as_secs_f64())
    })
    .map_err(CliError::ThreadPool)?;

    if let Some(path) = &args.verdicts {
        write_verdicts(path, &verdicts)?;
    }
    let line = Summary::new(&verdicts, secs).line(args.json);
    writeln!(std::io::stdout().lock(), "{line}").map_err(CliError::Stdout)?;

    match read.error {
        Some(error) => Err(CliError::Malformed {
            path: args.file.clone(),
            error,
        }),
        None => Ok(()),
    }
}

/// Writes `ok` or `invalid <Reason>` per verdict, one per line.
pub fn write_verdicts(path: &Path, verdicts: &[Result<(), VerifyError>]) -> Result<(), CliError> {
    let err = |source| CliError::Output {
        path: path.to_path_buf(),
        source,
    };
    let mut out = BufWriter::new(File::create(path).map_err(err)?);
    for v in verdicts {
        match v {
            Ok(()) => out.write_all(b"ok\n"),
            Err(e) => writeln!(out, "invalid {}", e.name()),
        }
        .map_err(err)?;
    }
    out.flush().map_err(err)
}

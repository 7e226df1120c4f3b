//! `wirespeed verify`: one verdict per signature record in a file.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use wirespeed_ed25519::{Item, Mode, VerifyError};
use wirespeed_engine::{Backend, Chosen, Op};
use wirespeed_sigdata::format::{Format, RecordReader};

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
    /// Signature record file (binary or JSON Lines, see below); `-` reads standard input
    /// (bin unless --format jsonl)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Validation rules: strict, zip215, cofactored-strict or libsodium
    #[arg(long, value_name = "MODE", default_value = "strict", value_parser = parse_mode)]
    pub mode: Mode,

    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// Where to run: auto (the GPU for batches of 4096 or more when one is present, else
    /// the best CPU lanes), cpu, gpu, or a CPU lane backend: serial, avx2, ifma or ifma4
    /// (one this CPU lacks falls back to serial)
    #[arg(long, value_name = "BACKEND", default_value = "auto", value_parser = parse_backend)]
    pub backend: Backend,

    /// File format: bin or jsonl [default: jsonl for a .jsonl file, else bin]
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub format: Option<Format>,

    /// Write one line per record, in input order: `ok` or `invalid <Reason>`
    #[arg(long, value_name = "OUT")]
    pub verdicts: Option<PathBuf>,

    /// Print the summary as one JSON object (count, valid, invalid, secs, per_sec; and
    /// fallbacks, reason -> count, when a GPU run was answered on the CPU)
    #[arg(long)]
    pub json: bool,

    /// Records per batch (memory bound); hidden, for tests of batch boundaries
    #[arg(long, hide = true, default_value_t = BATCH, value_parser = parse_batch)]
    pub batch: usize,
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
    /// GPU runs answered on the CPU, by reason (`crate::fallback`); present only when
    /// some call fell back, so the summary otherwise keeps its five numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<serde_json::Value>,
    /// Where a batch of this run's size verifies: `gpu`, or the CPU lane backend the
    /// CPU's features resolve to (`ifma`, `ifma4`, `avx2`, `serial`).
    pub kernel: String,
    /// The CPU's microarchitecture class, by which kernels are chosen (`zen5`, ...).
    pub microarch: String,
    /// The CPU family (CPUID display family).
    pub cpu_family: u32,
}

impl Summary {
    fn new(count: usize, valid: usize, secs: f64, kernel: String) -> Summary {
        let per_sec = if secs > 0.0 { count as f64 / secs } else { 0.0 };
        let cpu = wirespeed_engine::backend::cpu();
        Summary {
            kernel,
            microarch: cpu.microarch(),
            cpu_family: cpu.family,
            count,
            valid,
            invalid: count - valid,
            secs,
            per_sec,
            fallbacks: crate::fallback::any().then(crate::fallback::json),
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

fn parse_batch(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a positive batch size")),
    }
}

/// Records verified per batch: memory stays bounded however large the file is, and each
/// batch is large enough to keep every core busy.
const BATCH: usize = 1 << 16;

/// Runs `wirespeed verify`: streams the file in batches, verifies each batch on the
/// pool, and appends its verdicts before reading the next.
pub fn run(args: &VerifyArgs) -> Result<(), CliError> {
    let open_err = |source| CliError::Open {
        path: args.file.clone(),
        source,
    };
    // `-` reads standard input (its length unknown: a truncated last record is still
    // reported, by the reader, without the file's total length).
    let (input, total): (Box<dyn std::io::Read + Send>, Option<u64>) =
        if args.file.as_os_str() == "-" {
            (Box::new(std::io::stdin()), None)
        } else {
            let file = File::open(&args.file).map_err(open_err)?;
            let total = file.metadata().map_err(open_err)?.len();
            (Box::new(file), Some(total))
        };
    let mut input = BufReader::with_capacity(256 << 10, input);
    let format = args.format.unwrap_or_else(|| Format::from_path(&args.file));
    // Standard input has no extension to tell JSON Lines by: read as bin unless --format
    // says, and when it fails at once on text that opens as a JSON object does, say so.
    let looks_jsonl = args.format.is_none() && args.file.as_os_str() == "-" && {
        use std::io::BufRead;
        let head = input.fill_buf().map_err(open_err)?;
        let mut rest = head.iter().skip_while(|b| b.is_ascii_whitespace());
        rest.next() == Some(&b'{') && rest.find(|b| !b.is_ascii_whitespace()) == Some(&b'"')
    };
    let mut reader = RecordReader::new(input, format);
    if let Some(total) = total {
        reader = reader.with_total_len(total);
    }
    let mut verdict_out = match &args.verdicts {
        Some(path) => Some(VerdictWriter::create(path)?),
        None => None,
    };

    if args.backend == Backend::Gpu {
        // Fail before reading: `gpu` on a machine without one is an error even for an
        // empty file.
        Backend::Gpu.choose(0, 0).map_err(CliError::Gpu)?;
    }
    let threads = args.threads.unwrap_or_else(all_cores);
    let outcome = in_pool(threads, || -> Result<_, CliError> {
        let (mut count, mut valid, mut secs) = (0usize, 0usize, 0f64);
        let mut batch = Vec::with_capacity(args.batch.min(1 << 12));
        let mut error = None;
        loop {
            batch.clear();
            while batch.len() < args.batch {
                match reader.next() {
                    Some(Ok(r)) => batch.push(r),
                    Some(Err(e)) => {
                        error = Some(e);
                        break;
                    }
                    None => break,
                }
            }
            if !batch.is_empty() {
                let items: Vec<Item<'_>> = wirespeed_sigdata::items(&batch);
                let start = Instant::now();
                let verdicts =
                    wirespeed_engine::ed25519::verify_many(args.backend, &items, args.mode)
                        .map_err(CliError::Gpu)?;
                secs += start.elapsed().as_secs_f64();
                count += verdicts.len();
                valid += verdicts.iter().filter(|v| v.is_ok()).count();
                if let Some(w) = verdict_out.as_mut() {
                    w.write(&verdicts)?;
                }
            }
            if error.is_some() || batch.len() < args.batch {
                break;
            }
        }
        let kernel = match args.backend.select(Op::Ed25519, count.min(args.batch)) {
            Ok(Chosen::Cpu(l)) => wirespeed_engine::backend::resolve(l).name().to_string(),
            Ok(other) => other.name().to_string(),
            Err(_) => "cpu".to_string(),
        };
        Ok((Summary::new(count, valid, secs, kernel), error))
    })
    .map_err(CliError::ThreadPool)?;
    let (summary, error) = outcome?;
    if let Some(w) = verdict_out {
        w.finish()?;
    }
    // The summary of what was verified before a malformed record; none when the first
    // record already was (the error alone says it all).
    if error.is_none() || summary.count > 0 {
        let line = summary.line(args.json);
        writeln!(std::io::stdout().lock(), "{line}").map_err(CliError::Stdout)?;
    }
    crate::fallback::report();

    match error {
        Some(error) if looks_jsonl && summary.count == 0 => Err(CliError::MalformedInput {
            path: args.file.clone(),
            message: format!(
                "{error} (it looks like JSON Lines: give --format jsonl to read standard \
                 input as such)"
            ),
        }),
        Some(error) => Err(CliError::Malformed {
            path: args.file.clone(),
            error,
        }),
        None => Ok(()),
    }
}

/// The verdict file: one line per record, `ok` or `invalid <Reason>`, in input order.
struct VerdictWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl VerdictWriter {
    fn create(path: &Path) -> Result<Self, CliError> {
        let out = File::create(path).map_err(|source| CliError::Output {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(VerdictWriter {
            path: path.to_path_buf(),
            out: BufWriter::new(out),
        })
    }

    fn write(&mut self, verdicts: &[Result<(), VerifyError>]) -> Result<(), CliError> {
        for v in verdicts {
            match v {
                Ok(()) => self.out.write_all(b"ok\n"),
                Err(e) => writeln!(self.out, "invalid {}", e.name()),
            }
            .map_err(|source| CliError::Output {
                path: self.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<(), CliError> {
        self.out.flush().map_err(|source| CliError::Output {
            path: self.path,
            source,
        })
    }
}

//! `wirespeed gen`: deterministic test data.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use wirespeed_sigdata::format::{self, Format};
use wirespeed_sigdata::gen::generate;

use crate::args::parse_format;
use crate::error::CliError;

/// Most records `gen sigs` writes.
pub const MAX_N: usize = 100_000_000;
/// Longest message `gen sigs` writes (16 MiB).
pub const MAX_MSG_LEN: usize = 16 << 20;
/// Most record bytes `gen sigs` holds in memory before writing (16 GiB).
pub const MAX_TOTAL_BYTES: u64 = 16 << 30;

/// What `wirespeed gen` generates.
#[derive(Subcommand, Debug)]
pub enum GenCommand {
    /// Ed25519 signature records (the input of `wirespeed verify`)
    Sigs(GenSigsArgs),
    /// BLS12-377 points and scalars in arkworks format (the input of `wirespeed msm`)
    Msm(GenMsmArgs),
    /// Solana transactions as UDP packets in a pcap capture (the input of
    /// `wirespeed pipeline run --source pcap:FILE`)
    Pcap(GenPcapArgs),
}

/// Most transactions `gen pcap` writes.
pub const MAX_PCAP_N: usize = 10_000_000;

/// Arguments of `wirespeed gen pcap`.
#[derive(Args, Debug)]
#[command(after_help = "\
Legacy Solana transfers (one or two signers, some with a memo), each in an
Ethernet/IPv4/UDP frame. round(N * dup-frac) are byte-for-byte copies of earlier valid
transactions and round(N * bad-frac) have one bit flipped in a signature or the recent
blockhash; the rest are valid. Prints the counts a correct verifier must find:
`valid=.. bad=.. duplicate=..`. The same --n, --dup-frac, --bad-frac and --seed always
give the same capture. Limits: N <= 10,000,000, dup-frac + bad-frac <= 1.")]
pub struct GenPcapArgs {
    /// Number of transactions
    #[arg(long, value_name = "N")]
    pub n: usize,

    /// Fraction of duplicates (0 to 1)
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = parse_fraction)]
    pub dup_frac: f64,

    /// Fraction of transactions with a bad signature (0 to 1)
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = parse_fraction)]
    pub bad_frac: f64,

    /// Seed of the deterministic generator
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Output capture (replaced if it exists)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Arguments of `wirespeed gen msm`.
#[derive(Args, Debug)]
#[command(after_help = "\
Points are [k]G for uniform k; scalars are uniform below r, or skewed with --skewed
(50% zero, 25% one, 15% below 2^16, 10% uniform). The same --n and --seed always give
the same files. Limit: N <= 2^28.")]
pub struct GenMsmArgs {
    /// Number of points and scalars
    #[arg(long, value_name = "N")]
    pub n: usize,

    /// Seed of the deterministic generator
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Points file to write (Vec<G1Affine>, arkworks uncompressed)
    #[arg(long, value_name = "FILE")]
    pub points: PathBuf,

    /// Scalars file to write (Vec<Fr>, arkworks uncompressed)
    #[arg(long, value_name = "FILE")]
    pub scalars: PathBuf,

    /// Skewed scalars instead of uniform ones
    #[arg(long)]
    pub skewed: bool,
}

/// Arguments of `wirespeed gen sigs`.
#[derive(Args, Debug)]
#[command(after_help = "\
The same --n, --msg-len, --seed and --bad-frac always give the same records.
Limits: N <= 100,000,000, L <= 16 MiB (16,777,216), N * (L + 96) <= 16 GiB.")]
pub struct GenSigsArgs {
    /// Number of records
    #[arg(long, value_name = "N")]
    pub n: usize,

    /// Message length in bytes
    #[arg(long, value_name = "L")]
    pub msg_len: usize,

    /// Seed of the deterministic generator
    #[arg(long, value_name = "S")]
    pub seed: u64,

    /// Output file (replaced if it exists)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// Probability (0 to 1) that each record is corrupted by one flipped bit, drawn per
    /// record from the seeded generator: about N * F records, not exactly
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = parse_fraction)]
    pub bad_frac: f64,

    /// File format: bin or jsonl [default: jsonl for a .jsonl file, else bin]
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub format: Option<Format>,
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("'{s}' is not a fraction between 0 and 1")),
    }
}

/// Checks the size bounds of `gen sigs`.
pub fn check_bounds(n: usize, msg_len: usize) -> Result<(), CliError> {
    if n > MAX_N {
        return Err(CliError::Invalid(format!(
            "--n {n} is too large (at most {MAX_N})"
        )));
    }
    if msg_len > MAX_MSG_LEN {
        return Err(CliError::Invalid(format!(
            "--msg-len {msg_len} is too large (at most {MAX_MSG_LEN} bytes)"
        )));
    }
    let total = (n as u64).saturating_mul(msg_len as u64 + 96);
    if total > MAX_TOTAL_BYTES {
        return Err(CliError::Invalid(format!(
            "--n {n} records of --msg-len {msg_len} bytes make {total} bytes \
             (at most {MAX_TOTAL_BYTES})"
        )));
    }
    Ok(())
}

/// Runs `wirespeed gen`.
pub fn run(cmd: &GenCommand) -> Result<(), CliError> {
    match cmd {
        GenCommand::Sigs(args) => run_sigs(args),
        GenCommand::Msm(args) => run_msm(args),
        GenCommand::Pcap(args) => run_pcap(args),
    }
}

fn run_pcap(args: &GenPcapArgs) -> Result<(), CliError> {
    use wirespeed_sigverify::gen::{generate, Expect};
    use wirespeed_sigverify::pcap::{write_pcap, CaptureError};

    if args.n > MAX_PCAP_N {
        return Err(CliError::Invalid(format!(
            "--n {} is too large (at most {MAX_PCAP_N})",
            args.n
        )));
    }
    if args.dup_frac + args.bad_frac > 1.0 + 1e-9 {
        return Err(CliError::Invalid(format!(
            "--dup-frac {} and --bad-frac {} add up to more than 1",
            args.dup_frac, args.bad_frac
        )));
    }
    let traffic = generate(args.n, args.dup_frac, args.bad_frac, args.seed);
    let count = |e: Expect| traffic.iter().filter(|g| g.expect == e).count();
    let (valid, bad, dup) = (
        count(Expect::Valid),
        count(Expect::BadSignature),
        count(Expect::Duplicate),
    );
    write_pcap(&args.out, traffic.iter().map(|g| g.bytes.as_slice())).map_err(|e| {
        let source = match e {
            CaptureError::Io(e) => e,
            other => std::io::Error::other(other.to_string()),
        };
        CliError::Output {
            path: args.out.clone(),
            source,
        }
    })?;
    let bytes = std::fs::metadata(&args.out).map_or(0, |m| m.len());
    writeln!(
        std::io::stdout().lock(),
        "wrote {} transactions to '{}' (pcap, {bytes} bytes): valid={valid} bad={bad} \
         duplicate={dup}",
        args.n,
        args.out.display()
    )
    .map_err(CliError::Stdout)
}

fn run_msm(args: &GenMsmArgs) -> Result<(), CliError> {
    if args.n > crate::msm::MAX_ELEMENTS {
        return Err(CliError::Invalid(format!(
            "--n {} is too large (at most {})",
            args.n,
            crate::msm::MAX_ELEMENTS
        )));
    }
    let start = std::time::Instant::now();
    let points = wirespeed_msm::gen::points(args.n, args.seed);
    let scalars = if args.skewed {
        wirespeed_msm::gen::skewed_scalars(args.n, args.seed)
    } else {
        wirespeed_msm::gen::scalars(args.n, args.seed)
    };
    crate::files::write_file(&args.points, &wirespeed_msm::format::encode_points(&points))?;
    crate::files::write_file(
        &args.scalars,
        &wirespeed_msm::format::encode_scalars(&scalars),
    )?;
    writeln!(
        std::io::stdout().lock(),
        "wrote {} points to '{}' and {} scalars to '{}' in {:.1} s",
        args.n,
        args.points.display(),
        args.n,
        args.scalars.display(),
        start.elapsed().as_secs_f64()
    )
    .map_err(CliError::Stdout)
}

fn run_sigs(args: &GenSigsArgs) -> Result<(), CliError> {
    check_bounds(args.n, args.msg_len)?;
    let format = args.format.unwrap_or_else(|| Format::from_path(&args.out));
    let records = generate(args.n, args.msg_len, args.seed, args.bad_frac);
    format::write_path(&args.out, format, &records).map_err(|source| CliError::WriteRecords {
        path: args.out.clone(),
        source,
    })?;
    let bytes = std::fs::metadata(&args.out).map_or(0, |m| m.len());
    writeln!(
        std::io::stdout().lock(),
        "wrote {} records to '{}' ({format}, {bytes} bytes)",
        args.n,
        args.out.display()
    )
    .map_err(CliError::Stdout)
}

//! `wirespeed`: verify, generate test data, and demonstrate every system.
//!
//! Every error ends the process with one line on stderr and a non-zero status: 2 for a
//! truncated or malformed input file (or a malformed value given to a verifying command),
//! 1 for everything else. Standard output closed by its reader (a pipe into `head`) ends
//! the process quietly with status 0.
//!
//! The process allocates through jemalloc (not the system's malloc): the key-value
//! server's dataset is many small blocks freed and made again under eviction, and
//! jemalloc's size classes round them less than glibc's malloc (no 8-byte header, an
//! 8-byte class) and it gives freed pages back to the system over time, so the
//! server's resident size follows its `maxmemory` (docs/benchmarks-history.md, "Key-value server:
//! memory per key", has the figures that chose it).

mod accumulator;
mod args;
mod bench;
mod completions;
mod demo;
mod error;
mod fallback;
mod files;
mod gen;
mod gpu;
mod kvs;
mod kvs_bench;
mod monitor;
mod msm;
mod pipeline;
mod pipeline_sweep;
mod progress;
mod rsa;
mod table;
mod timelock;
mod trace;
mod vdf;
mod verdict;
mod verify;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

use crate::error::{CliError, EXIT_ERROR};

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The wirespeed command line.
#[derive(Parser, Debug)]
#[command(
    name = "wirespeed",
    version,
    about = "wirespeed: high-speed cryptographic verification, proofs and a Redis-compatible key-value server",
    after_help = "Exit status: 0 on success (for a verifying command: valid), 2 for an input \
                  that cannot be read or is truncated or malformed (a missing file, a value out \
                  of range), 1 for any other error (for a verifying command: checked and \
                  invalid). `verify` and `rsa batch-verify` check batches: 0 when the input \
                  is read whole, the verdicts in their summary."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Verify a file of Ed25519 signature records, one verdict per record
    Verify(verify::VerifyArgs),
    /// Generate deterministic test data
    #[command(subcommand)]
    Gen(gen::GenCommand),
    /// Run each system's main job on built-in inputs and print a table per system
    Demo(demo::DemoArgs),
    /// Benchmark wirespeed beside peer libraries, in the same run
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Verifiable delay function in an RSA group: evaluate with a proof, verify a proof
    #[command(subcommand)]
    Vdf(vdf::VdfCommand),
    /// Time-lock puzzles: lock a message for T sequential squarings, solve, open
    #[command(subcommand)]
    Timelock(timelock::TimelockCommand),
    /// BLS12-377 G1 multi-scalar multiplication of arkworks point and scalar files
    Msm(msm::MsmArgs),
    /// RSA signatures: sign and verify (PKCS#1 v1.5 or PSS, SHA-2)
    #[command(subcommand)]
    Rsa(rsa::RsaCommand),
    /// RSA accumulator: add elements, membership witnesses, verify a witness
    #[command(subcommand)]
    Accumulator(accumulator::AccumulatorCommand),
    /// Redis-protocol key-value server
    #[command(subcommand)]
    Kvs(kvs::KvsCommand),
    /// Streaming signature-verification pipeline over a file, a capture, UDP or generated traffic
    #[command(subcommand)]
    Pipeline(pipeline::PipelineCommand),
    /// Watch a running pipeline's tiles through its shared-memory metrics file
    Monitor(monitor::MonitorArgs),
    /// Traced programs: compile Python reference code, run it in the lane VM, count it
    #[command(subcommand)]
    Trace(trace::TraceCommand),
    /// Print a shell completion script (bash, zsh or fish) generated from this CLI
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff) generated from this CLI: `wirespeed man | man -l -`;
    /// `wirespeed man vdf verify` for a subcommand's
    Man(completions::ManArgs),
}

fn run(cli: &Cli) -> Result<(), CliError> {
    match &cli.command {
        Command::Verify(args) => verify::run(args),
        Command::Gen(cmd) => gen::run(cmd),
        Command::Demo(args) => demo::run(args),
        Command::Bench(cmd) => bench::run(cmd),
        Command::Vdf(cmd) => vdf::run(cmd),
        Command::Timelock(cmd) => timelock::run(cmd),
        Command::Msm(args) => msm::run(args),
        Command::Rsa(cmd) => rsa::run(cmd),
        Command::Accumulator(cmd) => accumulator::run(cmd),
        Command::Kvs(cmd) => kvs::run(cmd),
        Command::Pipeline(cmd) => pipeline::run(cmd),
        Command::Monitor(args) => monitor::run(args),
        Command::Trace(cmd) => trace::run(cmd),
        Command::Completions(a) => completions::completions(Cli::command(), a),
        Command::Man(a) => completions::man(Cli::command(), a),
    }
}

fn main() -> ExitCode {
    // A tile's panic is caught and reported by the pipeline runner (one error line and
    // a non-zero exit); keep the default hook's message for every other panic.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let tile = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with(wirespeed_disco::run::THREAD_PREFIX));
        if !tile {
            default_hook(info);
        }
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`wirespeed man | head`): what it read was written; end
        // quietly, as other command-line tools do.
        Err(CliError::Stdout(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(CliError::Verdict(reason)) => {
            eprintln!("invalid: {reason}");
            ExitCode::from(EXIT_ERROR)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Help and version go to stdout with status 0; a usage error becomes one line on stderr
/// and status 1.
fn usage_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(EXIT_ERROR)
        }
        _ => {
            eprintln!("{}", one_line(&e.render().to_string()));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Joins a multi-line clap message into one line: the text before the usage block, tips
/// (except clap's suggestion of a similar subcommand, flag or value) and the closing
/// pointer dropped, followed by a pointer to `--help`.
fn one_line(rendered: &str) -> String {
    let parts: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && (!l.starts_with("tip:") || l.contains("similar"))
                && !l.starts_with("For more information")
        })
        .collect();
    format!("{} (see --help)", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn clap_errors_become_one_line() {
        let e = Cli::try_parse_from(["wirespeed", "gen", "sigs", "--n", "5"])
            .expect_err("missing arguments");
        let line = one_line(&e.render().to_string());
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with("error: "), "{line}");
        assert!(line.contains("--msg-len"), "{line}");
    }
}

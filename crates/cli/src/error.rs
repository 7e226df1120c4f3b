//! The CLI's errors: each becomes one line on stderr and an exit status.

use std::fmt;
use std::io;
use std::path::PathBuf;

use wirespeed_sigdata::format::{ParseError, WriteError};

/// Exit status for an input that cannot be read or is truncated or malformed (records
/// before it were handled), or a malformed value given to a verifying command.
pub const EXIT_MALFORMED: u8 = 2;
/// Exit status for every other error.
pub const EXIT_ERROR: u8 = 1;

/// Everything that can stop a subcommand.
#[derive(Debug)]
pub enum CliError {
    /// An argument value that parsed but is out of bounds.
    Invalid(String),
    /// A verifying command's verdict: the input was checked and is not valid (exit 1),
    /// shown as `invalid: REASON` rather than as an error.
    Verdict(String),
    /// An input file could not be opened or read (exit 2, as a malformed one).
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// An output file could not be created or written.
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Records could not be written.
    WriteRecords {
        /// The file.
        path: PathBuf,
        /// Why.
        source: WriteError,
    },
    /// The input file is truncated or malformed at one record.
    Malformed {
        /// The file.
        path: PathBuf,
        /// Where and why.
        error: ParseError,
    },
    /// Standard output could not be written.
    Stdout(io::Error),
    /// The worker thread pool could not be built.
    ThreadPool(String),
    /// A demo section's results failed their correctness check.
    Check(String),
    /// A benchmark failed.
    Bench(String),
    /// A failure that is no fault of the input (a bug).
    Internal(String),
    /// An input file that is not a well-formed document of its kind (exit 2).
    MalformedInput {
        /// The file.
        path: PathBuf,
        /// What is wrong, one line.
        message: String,
    },
    /// A VDF evaluation or proof that could not be done or did not verify.
    Vdf(wirespeed_vdf::VdfError),
    /// A command-line value that a verifying command must parse is malformed (exit 2,
    /// like a malformed file: a verdict of 1 means "checked and invalid").
    MalformedArg {
        /// The flag.
        arg: String,
        /// What is wrong, one line.
        message: String,
    },
    /// The signature-verification pipeline could not start or a tile failed.
    Pipeline(String),
    /// The Python tracing compiler could not run or refused the source file.
    Compiler(String),
    /// The GPU backend was asked for and cannot run, or failed.
    Gpu(wirespeed_engine::GpuError),
    /// The command needs a Cargo feature this binary was built without (only the
    /// `peers` benchmarks today, off by default).
    #[cfg_attr(feature = "peers", allow(dead_code))]
    NeedsFeature {
        /// The command, e.g. "bench ed25519".
        command: &'static str,
        /// The feature, e.g. "peers".
        feature: &'static str,
    },
}

impl CliError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Open { .. }
            | CliError::Malformed { .. }
            | CliError::MalformedInput { .. }
            | CliError::MalformedArg { .. } => EXIT_MALFORMED,
            _ => EXIT_ERROR,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Invalid(m) | CliError::Verdict(m) => f.write_str(m),
            CliError::Open { path, source } => {
                write!(f, "cannot read '{}': {source}", path.display())
            }
            CliError::Output { path, source } => {
                write!(f, "cannot write '{}': {source}", path.display())
            }
            CliError::WriteRecords { path, source } => match source {
                WriteError::Io(e) => write!(f, "cannot write '{}': {e}", path.display()),
                e => write!(f, "cannot write '{}': {e}", path.display()),
            },
            CliError::Malformed { path, error } => {
                write!(f, "'{}': {error}", path.display())
            }
            CliError::Stdout(e) => write!(f, "cannot write to standard output: {e}"),
            CliError::ThreadPool(e) => write!(f, "cannot start worker threads: {e}"),
            CliError::Check(m) => write!(f, "check failed: {m}"),
            CliError::Bench(m) => write!(f, "benchmark failed: {m}"),
            CliError::Internal(m) => write!(f, "internal error: {m}"),
            CliError::MalformedInput { path, message } => {
                write!(f, "'{}': {message}", path.display())
            }
            CliError::Vdf(e) => write!(f, "{e}"),
            CliError::MalformedArg { arg, message } => write!(f, "{arg}: {message}"),
            CliError::Pipeline(m) => write!(f, "pipeline: {m}"),
            CliError::Compiler(m) => write!(f, "trace compile: {m}"),
            CliError::Gpu(e) => write!(f, "GPU backend: {e}"),
            CliError::NeedsFeature { command, feature } => write!(
                f,
                "'wirespeed {command}' compares with peer libraries, which this binary was \
                 built without: build it with `cargo build --release --features {feature}` \
                 (links OpenSSL and GMP: Debian's libssl-dev and libgmp-dev)"
            ),
        }
    }
}

impl std::error::Error for CliError {}

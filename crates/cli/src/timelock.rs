//! `wirespeed timelock create|solve|open`: time-lock puzzles (see wirespeed_vdf::timelock).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use wirespeed_engine::backend::cpu;
use wirespeed_vdf::timelock::{self, Lcs35, Puzzle, TimelockError, MAX_MESSAGE};
use wirespeed_vdf::{EvalOptions, U4096};

use crate::error::CliError;
use crate::files::{read_bounded_bytes, read_bounded_text, write_file};
use crate::progress::Progress;

/// `wirespeed timelock ...`.
#[derive(Subcommand, Debug)]
pub enum TimelockCommand {
    /// Lock a message for T squarings (fast: uses the factors of a fresh modulus)
    Create(CreateArgs),
    /// Solve a puzzle by T sequential squarings; prints the solution w (hex)
    Solve(SolveArgs),
    /// Open a puzzle with its solution; writes the message
    #[command(
        after_help = "The solution is checked against the puzzle's own modulus before the \
                      message is written.\nExit status: 0 opened, 1 a wrong solution (the \
                      reason is printed), 2 malformed or unreadable input (the puzzle file, \
                      --solution)."
    )]
    Open(OpenArgs),
}

/// Arguments of `timelock create`.
#[derive(Args, Debug)]
pub struct CreateArgs {
    /// T, the number of squarings a solver must do
    #[arg(long, value_name = "T")]
    pub t: u64,
    /// Modulus size: 1024 or 2048
    #[arg(long, default_value_t = 2048)]
    pub bits: usize,
    /// The message (text)
    #[arg(
        long,
        conflicts_with = "message_file",
        required_unless_present = "message_file"
    )]
    pub message: Option<String>,
    /// The message, read from a file (at most 1 MiB)
    #[arg(long, value_name = "FILE")]
    pub message_file: Option<PathBuf>,
    /// Where to write the puzzle (JSON)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Print one JSON object: puzzle (the file written), t, bits, modulus (fingerprint),
    /// message_bytes
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `timelock solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// The puzzle (JSON from `timelock create`, or with --lcs35 the text form n, t, z)
    #[arg(value_name = "PUZZLE")]
    pub puzzle: PathBuf,
    /// The puzzle is in Rivest's LCS35 form; print the secret z XOR w (hex)
    #[arg(long)]
    pub lcs35: bool,
    /// Also write the solution (hex) to this file
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one JSON object: solution (hex; the secret with --lcs35), t, resumed_from,
    /// squarings and secs (this run)
    #[arg(long)]
    pub json: bool,
    /// Save progress here (atomically, every --save-every seconds); rerunning the same
    /// command after a crash or kill resumes from the saved state; a directory holding
    /// another puzzle's state is refused (exit 2) and left as it is
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    #[command(flatten)]
    pub saving: crate::vdf::SaveArgs,
}

/// Arguments of `timelock open`.
#[derive(Args, Debug)]
pub struct OpenArgs {
    /// The puzzle (JSON)
    #[arg(value_name = "PUZZLE")]
    pub puzzle: PathBuf,
    /// The solution w in hex, or @FILE to read it from a file
    #[arg(long, value_name = "HEX|@FILE")]
    pub solution: String,
    /// Write the message here instead of standard output
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one JSON object instead of the raw message: valid, message (text, null when
    /// not UTF-8), message_hex, message_bytes, t ({"valid":false,"reason"} for a wrong
    /// solution)
    #[arg(long)]
    pub json: bool,
}

/// Runs a `timelock` subcommand.
pub fn run(cmd: &TimelockCommand) -> Result<(), CliError> {
    match cmd {
        TimelockCommand::Create(a) => create(a),
        TimelockCommand::Solve(a) => solve(a),
        TimelockCommand::Open(a) => open(a),
    }
}

fn tl_err(path: &Path) -> impl Fn(TimelockError) -> CliError + '_ {
    move |e| match e {
        TimelockError::Malformed(message) => CliError::MalformedInput {
            path: path.to_path_buf(),
            message,
        },
        TimelockError::Vdf(e) => CliError::Vdf(e),
        e => CliError::Invalid(e.to_string()),
    }
}

fn create(a: &CreateArgs) -> Result<(), CliError> {
    let message = match (&a.message, &a.message_file) {
        (Some(m), _) => m.clone().into_bytes(),
        (None, Some(f)) => read_bounded_bytes(f, MAX_MESSAGE)?,
        (None, None) => {
            return Err(CliError::Invalid(
                "--message or --message-file is required".into(),
            ))
        }
    };
    let mut rng = rand::rngs::OsRng;
    let (puzzle, _) =
        timelock::create_with(a.bits, a.t, &message, &mut rng, cpu()).map_err(tl_err(&a.out))?;
    write_file(&a.out, puzzle.to_json().as_bytes())?;
    if !a.json {
        return Ok(());
    }
    let line = serde_json::json!({
        "puzzle": a.out.display().to_string(),
        "t": puzzle.t,
        "bits": puzzle.modulus.bits(),
        "modulus": puzzle.modulus.fingerprint(),
        "message_bytes": message.len(),
    });
    writeln!(std::io::stdout().lock(), "{line}").map_err(CliError::Stdout)
}

fn solve(a: &SolveArgs) -> Result<(), CliError> {
    a.saving.need_dir(a.checkpoint_dir.as_deref())?;
    let text = read_bounded_text(&a.puzzle, 3 * MAX_MESSAGE)?;
    let lcs35 = if a.lcs35 {
        Some(Lcs35::parse_with(&text, cpu()).map_err(tl_err(&a.puzzle))?)
    } else {
        None
    };
    let (modulus, t) = match &lcs35 {
        Some(p) => (p.modulus.clone(), p.t),
        None => {
            let p = Puzzle::from_json_with(&text, cpu()).map_err(tl_err(&a.puzzle))?;
            if p.base != U4096::from_u64(2) {
                return Err(CliError::Invalid(
                    "only base-2 puzzles are supported".into(),
                ));
            }
            (p.modulus, p.t)
        }
    };
    let (w, resumed_from, secs) = match &a.checkpoint_dir {
        None => {
            let (ev, secs) = progress(t, 0).run(|tick| {
                let opts = EvalOptions {
                    checkpoint_every: 0,
                    progress: Some(tick),
                };
                wirespeed_vdf::eval(&modulus, &U4096::from_u64(2), t, &opts)
            });
            let ev = ev.map_err(CliError::Vdf)?;
            // Recompute the last segment: a fault in the final squarings is caught
            // before the solution is printed.
            ev.check_last_segment(&modulus).map_err(CliError::Vdf)?;
            (ev.y, 0, secs)
        }
        Some(dir) => solve_resumable(&modulus, t, dir, &a.saving)?,
    };
    let hex = match &lcs35 {
        Some(p) => p.secret(&w).to_hex(),
        None => w.to_hex(),
    };
    if let Some(out) = &a.out {
        write_file(out, hex.as_bytes())?;
    }
    let line = if a.json {
        serde_json::json!({
            "solution": hex,
            "t": t,
            "resumed_from": resumed_from,
            "squarings": t - resumed_from.min(t),
            "secs": secs,
        })
        .to_string()
    } else {
        hex
    };
    writeln!(std::io::stdout().lock(), "{line}").map_err(CliError::Stdout)
}

/// Progress of the solver's squarings: a bar on a terminal, and one line with the
/// measured rate and the ETA once it is known (an LCS35-sized T takes years).
fn progress(t: u64, start_at: u64) -> Progress<'static> {
    Progress {
        label: "timelock",
        total: t,
        start_at,
        eta_line: true,
    }
}

/// 2^(2^T) mod N, saving into `dir` and resuming a state found there for the same N, T.
/// Returns w, the squarings earlier runs did, and this run's seconds.
fn solve_resumable(
    modulus: &wirespeed_vdf::Modulus,
    t: u64,
    dir: &Path,
    saving: &crate::vdf::SaveArgs,
) -> Result<(U4096, u64, f64), CliError> {
    use wirespeed_vdf::resume::{self, State};
    crate::vdf::checkpoint_dir_usable(dir)?;
    // The same puzzle resumes where the directory's state stands; another puzzle's state
    // is refused (exit 2, naming what differs) and left as it is, as `vdf eval` does.
    let fresh =
        State::new(modulus.clone(), U4096::from_u64(2), t, 0, None).map_err(CliError::Vdf)?;
    let state = match crate::vdf::saved_state(dir, &fresh)? {
        Some(old) => {
            eprintln!(
                "timelock: resuming at {} of {} squarings from {}",
                old.done,
                old.t,
                dir.display()
            );
            old
        }
        None => fresh,
    };
    let from = std::cell::Cell::new(state.done);
    let rollback = crate::vdf::report_rollback("timelock", dir, &from);
    let (ev, secs) = progress(t, state.done)
        .run(|tick| resume::run(state, dir, &saving.options(tick, &rollback)));
    let ev = ev.map_err(crate::vdf::resume_err(dir))?;
    Ok((ev.y, from.get(), secs))
}

fn open(a: &OpenArgs) -> Result<(), CliError> {
    // The puzzle is the input here: a value of it out of range (T, the modulus) makes
    // it malformed (exit 2); a solution that does not open it is invalid (exit 1).
    let puzzle_err = |e| match e {
        TimelockError::Vdf(v) => CliError::MalformedInput {
            path: a.puzzle.clone(),
            message: v.to_string(),
        },
        e => tl_err(&a.puzzle)(e),
    };
    let p = Puzzle::from_json_with(&read_bounded_text(&a.puzzle, 3 * MAX_MESSAGE)?, cpu())
        .map_err(puzzle_err)?;
    let hex = match a.solution.strip_prefix('@') {
        Some(f) => read_bounded_text(Path::new(f), 4096)?,
        None => a.solution.clone(),
    };
    let w = U4096::from_hex(hex.trim()).map_err(|e| CliError::MalformedArg {
        arg: "--solution".into(),
        message: e.to_string(),
    })?;
    // A wrong solution is a verdict: with --json it is an object on stdout too.
    let msg = match timelock::open(&p, &w).map_err(puzzle_err) {
        Ok(msg) => msg,
        Err(e) => return crate::verdict::report(a.json, Err(e), String::new),
    };
    if let Some(path) = &a.out {
        write_file(path, &msg)?;
    }
    if a.json {
        let mut m = serde_json::Map::new();
        m.insert("message".into(), std::str::from_utf8(&msg).ok().into());
        m.insert(
            "message_hex".into(),
            msg.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
                .into(),
        );
        m.insert("message_bytes".into(), msg.len().into());
        m.insert("t".into(), p.t.into());
        return crate::verdict::report(true, Ok(m), String::new);
    }
    match &a.out {
        Some(_) => Ok(()),
        // The message as it was locked; on a terminal, then a newline when it lacks
        // one (the shell's prompt would follow it on the same line). A pipe or a file
        // gets the bytes exactly, as --out does.
        None => {
            use std::io::IsTerminal;
            let mut out = std::io::stdout().lock();
            out.write_all(&msg).map_err(CliError::Stdout)?;
            if !msg.ends_with(b"\n") && out.is_terminal() {
                out.write_all(b"\n").map_err(CliError::Stdout)?;
            }
            Ok(())
        }
    }
}

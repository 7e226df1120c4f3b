//! `wirespeed accumulator add|witness|verify`: an RSA accumulator kept in a JSON state
//! file (see wirespeed_rsa::accumulator for the construction and its assumptions).
//!
//! State file (JSON, one object, written atomically: temp file, fsync, rename):
//!
//! ```text
//! {"format":"wirespeed-accumulator","version":1,
//!  "modulus":"<hex>","base":"<hex>","value":"<hex>",
//!  "members":[{"element":"<hex>","prime":"<hex>"}, ...]}
//! ```
//!
//! modulus, base and value are big-endian hex of the modulus' byte length; each member is
//! the element's bytes and its 256-bit prime (hash_to_prime of the element, kept so that
//! loading does not hash every member again). Members are in insertion order. `witness`
//! checks every witness it writes against the value, so a state whose value does not
//! match its members is reported (exit 2) instead of producing witnesses that fail.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use num_bigint::BigUint;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use wirespeed_engine::backend::cpu;
use wirespeed_rsa::accumulator::{
    hash_to_prime_with, Accumulator, AccumulatorError, RsaGroup, MAX_MEMBERS, U256,
};

use crate::error::CliError;
use crate::files::{read_bounded_text, write_atomic, write_file};
use wirespeed_util::hex::encode as hex;

/// Largest element accepted, in bytes.
pub const MAX_ELEMENT_BYTES: usize = 1024;
/// Largest element list file accepted (256 MiB).
const MAX_LIST_BYTES: usize = 256 << 20;
/// Largest state file accepted (512 MiB: a million members of 100-byte elements fit).
const MAX_STATE_BYTES: usize = 512 << 20;
/// Largest witness or element given on the command line or in an @FILE (bytes of text).
const MAX_ARG_BYTES: usize = 4 * MAX_ELEMENT_BYTES + 64;
/// The state file's format name and version.
const FORMAT: &str = "wirespeed-accumulator";
const VERSION: u32 = 1;

/// `wirespeed accumulator ...`.
#[derive(Subcommand, Debug)]
pub enum AccumulatorCommand {
    /// Add elements (hex, one per line) to the accumulator; creates the state file when
    /// absent
    Add(AddArgs),
    /// Membership witnesses for listed members (hex, one per line, in input order)
    Witness(WitnessArgs),
    /// Check one element's witness against the state's value
    #[command(
        after_help = "Exit status: 0 valid, 1 invalid (the reason is printed), \
                            2 malformed or unreadable input (state file, --elem, --witness, \
                            --modulus)."
    )]
    Verify(VerifyArgs),
}

/// Arguments of `wirespeed accumulator add`.
#[derive(Args, Debug)]
#[command(after_help = "\
A new state uses the modulus of --modulus (an RSA public or private key PEM of 2048 bits
or more; its factors must be unknown to anyone who should not forge witnesses, so a
private key is used for its N with a warning on stderr) or, by default, the RSA-2048
factoring challenge number; the base is derived by hashing the modulus. Adding an
element that is already a member, or listing one twice, is an error and changes nothing.")]
pub struct AddArgs {
    /// The accumulator state (JSON); created when absent
    #[arg(long, value_name = "ACC.json")]
    pub state: PathBuf,
    /// Elements, one per line, hex (at most 1024 bytes each)
    #[arg(long = "in", value_name = "ELEMS")]
    pub input: PathBuf,
    /// Modulus for a new state: RSA key PEM [default: the RSA-2048 challenge number]
    #[arg(long, value_name = "PUB.pem")]
    pub modulus: Option<PathBuf>,
    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N", value_parser = crate::args::parse_threads)]
    pub threads: Option<usize>,
    /// One JSON object: count, members, secs, per_sec
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `wirespeed accumulator witness`.
#[derive(Args, Debug)]
pub struct WitnessArgs {
    /// The accumulator state (JSON)
    #[arg(long, value_name = "ACC.json")]
    pub state: PathBuf,
    /// Members, one per line, hex
    #[arg(long = "in", value_name = "ELEMS")]
    pub input: PathBuf,
    /// Witnesses out, one per line, hex, in input order
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N", value_parser = crate::args::parse_threads)]
    pub threads: Option<usize>,
    /// One JSON object: count, members, secs, per_sec
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `wirespeed accumulator verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The accumulator state (JSON)
    #[arg(long, value_name = "ACC.json")]
    pub state: PathBuf,
    /// The element in hex, or @FILE to read the hex from a file (@FILE:LINE for one
    /// line of a list)
    #[arg(long, value_name = "HEX|@FILE[:LINE]")]
    pub elem: String,
    /// The witness in hex, or @FILE to read it from a file (@FILE:LINE for one line of
    /// the file `accumulator witness` writes)
    #[arg(long, value_name = "HEX|@FILE[:LINE]")]
    pub witness: String,
    /// The modulus the state must use: an RSA key PEM (public or private) whose N you
    /// trust; a state carries its own N, and one whose factors are known proves nothing
    /// [default: the RSA-2048 challenge number]
    #[arg(long, value_name = "PUB.pem")]
    pub modulus: Option<PathBuf>,
    /// One JSON object: valid, and the modulus fingerprint and member count when valid
    /// (reason when not)
    #[arg(long)]
    pub json: bool,
}

/// The state file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateFile {
    format: String,
    version: u32,
    modulus: String,
    base: String,
    value: String,
    members: Vec<MemberEntry>,
}

/// One member of the state file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MemberEntry {
    element: String,
    prime: String,
}

/// A loaded state: the accumulator and the members' elements (hex, as stored).
struct State {
    acc: Accumulator,
    elements: Vec<String>,
}

/// Runs `wirespeed accumulator`.
pub fn run(cmd: &AccumulatorCommand) -> Result<(), CliError> {
    match cmd {
        AccumulatorCommand::Add(a) => run_add(a),
        AccumulatorCommand::Witness(a) => run_witness(a),
        AccumulatorCommand::Verify(a) => run_verify(a),
    }
}

fn malformed(path: &Path, message: impl Into<String>) -> CliError {
    CliError::MalformedInput {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Bytes of an even-length hex string (either case); None for anything else.
fn unhex(t: &str) -> Option<Vec<u8>> {
    wirespeed_util::hex::decode(t).ok()
}

/// v as big-endian hex of exactly `len` bytes (v below 2^(8 len)).
fn fixed_hex(v: &BigUint, len: usize) -> String {
    hex(&wirespeed_bigint::biguint_to_be_bytes_padded(v, len))
}

/// A number of at most `max_bytes` bytes from hex (leading zeros allowed up to that
/// width); the error is one line.
fn parse_number(s: &str, max_bytes: usize) -> Result<BigUint, String> {
    let t = s.strip_prefix("0x").unwrap_or(s);
    if t.is_empty() {
        return Err("empty number".into());
    }
    if t.len() > 2 * max_bytes {
        return Err(format!("number longer than {max_bytes} bytes"));
    }
    if let Some(i) = t.bytes().position(|c| !c.is_ascii_hexdigit()) {
        return Err(format!("not a hex digit at position {i}"));
    }
    BigUint::parse_bytes(t.as_bytes(), 16).ok_or_else(|| "not hex".into())
}

/// Elements of a list file: hex lines (blank lines skipped), each with its line number.
fn element_lines(path: &Path) -> Result<Vec<(usize, Vec<u8>)>, CliError> {
    let text = read_bounded_text(path, MAX_LIST_BYTES)?;
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.len() > 2 * MAX_ELEMENT_BYTES {
            return Err(malformed(
                path,
                format!(
                    "line {}: element longer than {MAX_ELEMENT_BYTES} bytes",
                    i + 1
                ),
            ));
        }
        let bytes = unhex(t).ok_or_else(|| malformed(path, format!("line {}: not hex", i + 1)))?;
        if out.len() == MAX_MEMBERS {
            return Err(malformed(path, format!("more than {MAX_MEMBERS} elements")));
        }
        out.push((i + 1, bytes));
    }
    Ok(out)
}

/// Loads and validates a state file (bounded before reading; every field checked).
fn load_state(path: &Path) -> Result<State, CliError> {
    let text = read_bounded_text(path, MAX_STATE_BYTES)?;
    let f: StateFile = serde_json::from_str(&text).map_err(|e| {
        malformed(
            path,
            format!("not an accumulator state: {}", one_line(&e.to_string())),
        )
    })?;
    if f.format != FORMAT {
        return Err(malformed(path, format!("format is not \"{FORMAT}\"")));
    }
    if f.version != VERSION {
        return Err(malformed(
            path,
            format!(
                "state version {} not supported (expected {VERSION})",
                f.version
            ),
        ));
    }
    let max = wirespeed_rsa::accumulator::MAX_MODULUS_BITS / 8;
    let field = |name: &str, s: &str| {
        parse_number(s, max).map_err(|e| malformed(path, format!("{name}: {e}")))
    };
    let n = field("modulus", &f.modulus)?;
    let group =
        RsaGroup::new_with(&n, cpu()).map_err(|e| malformed(path, format!("modulus: {e}")))?;
    let base = field("base", &f.base)?;
    let value = field("value", &f.value)?;
    if f.members.len() > MAX_MEMBERS {
        return Err(malformed(path, format!("more than {MAX_MEMBERS} members")));
    }
    let mut primes = Vec::with_capacity(f.members.len());
    let mut elements = Vec::with_capacity(f.members.len());
    for (i, m) in f.members.into_iter().enumerate() {
        if m.element.len() > 2 * MAX_ELEMENT_BYTES || unhex(&m.element).is_none() {
            return Err(malformed(
                path,
                format!("member {i}: element is not hex of at most {MAX_ELEMENT_BYTES} bytes"),
            ));
        }
        let x = parse_number(&m.prime, 32)
            .map_err(|e| malformed(path, format!("member {i}: prime: {e}")))?;
        primes.push(U256::from_be_bytes(&x.to_bytes_be()).unwrap_or(U256::ZERO));
        elements.push(m.element.to_ascii_lowercase());
    }
    let acc = Accumulator::from_parts(group, &base, &value, primes)
        .map_err(|e| malformed(path, e.to_string()))?;
    Ok(State { acc, elements })
}

/// Writes the state atomically.
fn save_state(path: &Path, s: &State) -> Result<(), CliError> {
    let len = s.acc.group().byte_len();
    let f = StateFile {
        format: FORMAT.into(),
        version: VERSION,
        modulus: fixed_hex(s.acc.modulus(), len),
        base: fixed_hex(s.acc.base(), len),
        value: fixed_hex(s.acc.value(), len),
        members: s
            .elements
            .iter()
            .zip(s.acc.members())
            .map(|(e, x)| MemberEntry {
                element: e.clone(),
                prime: format!("{:0>64}", x.to_hex()),
            })
            .collect(),
    };
    let mut text = serde_json::to_string(&f).map_err(|e| CliError::Internal(e.to_string()))?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A short name for a modulus, as `vdf verify` names its moduli
/// ([`wirespeed_vdf::Modulus::fingerprint`]); an accumulator's modulus (odd, 1024 to
/// 4096 bits) is always one it takes.
fn fingerprint(n: &BigUint) -> String {
    wirespeed_vdf::Modulus::from_be_bytes_with(&n.to_bytes_be(), cpu())
        .map(|m| m.fingerprint())
        .unwrap_or_else(|_| format!("{n:x}"))
}

/// The modulus of a state: from a key PEM, or the RSA-2048 challenge number. With
/// `creating`, a private key is used for its N with one line on stderr saying that its
/// holder knows the factors (and so can forge witnesses); a key below 2048 bits is
/// refused by the key loader, naming its size.
fn new_modulus(pem: Option<&Path>, creating: bool) -> Result<BigUint, CliError> {
    match pem {
        Some(path) => {
            let (key, private) = crate::rsa::load_public_or_private(path)?;
            if private && creating {
                eprintln!(
                    "accumulator: warning: '{}' is a private key: only its modulus is used, \
                     but whoever holds this file knows the factors and can forge witnesses",
                    path.display()
                );
            }
            Ok(key.n().clone())
        }
        None => BigUint::parse_bytes(wirespeed_bigint::RSA_2048_HEX.as_bytes(), 16)
            .ok_or_else(|| CliError::Internal("RSA-2048 constant is not hex".into())),
    }
}

fn summary(json: bool, count: usize, members: usize, secs: f64) -> Result<(), CliError> {
    let per_sec = count as f64 / secs.max(1e-9);
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({
            "count": count, "members": members, "secs": secs, "per_sec": per_sec
        });
        writeln!(out, "{v}")
    } else {
        writeln!(
            out,
            "count={count} members={members} secs={secs:.3} per_sec={per_sec:.0}"
        )
    }
    .map_err(CliError::Stdout)
}

fn run_add(a: &AddArgs) -> Result<(), CliError> {
    let lines = element_lines(&a.input)?;
    let mut state = match std::fs::metadata(&a.state) {
        Ok(_) => {
            let s = load_state(&a.state)?;
            if let Some(pem) = &a.modulus {
                if new_modulus(Some(pem), false)? != *s.acc.modulus() {
                    return Err(CliError::Invalid(format!(
                        "--modulus: '{}' already uses another modulus",
                        a.state.display()
                    )));
                }
            }
            s
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let n = new_modulus(a.modulus.as_deref(), true)?;
            let group = RsaGroup::new_with(&n, cpu())
                .map_err(|e| CliError::Invalid(format!("--modulus: {e}")))?;
            State {
                acc: Accumulator::new(group),
                elements: vec![],
            }
        }
        Err(source) => {
            return Err(CliError::Open {
                path: a.state.clone(),
                source,
            })
        }
    };
    let elems: Vec<&[u8]> = lines.iter().map(|(_, e)| e.as_slice()).collect();
    let threads = a.threads.unwrap_or_else(crate::args::all_cores);
    let t = Instant::now();
    crate::args::in_pool(threads, || state.acc.add_batch(&elems))
        .map_err(CliError::ThreadPool)?
        .map_err(|e| match e {
            AccumulatorError::AlreadyMember { index } => CliError::Invalid(format!(
                "'{}' line {}: element is already a member (nothing was added)",
                a.input.display(),
                lines[index].0
            )),
            e => CliError::Invalid(e.to_string()),
        })?;
    let secs = t.elapsed().as_secs_f64();
    state.elements.extend(elems.iter().map(|e| hex(e)));
    save_state(&a.state, &state)?;
    summary(a.json, elems.len(), state.acc.len(), secs)
}

fn run_witness(a: &WitnessArgs) -> Result<(), CliError> {
    let state = load_state(&a.state)?;
    let lines = element_lines(&a.input)?;
    let elems: Vec<&[u8]> = lines.iter().map(|(_, e)| e.as_slice()).collect();
    let threads = a.threads.unwrap_or_else(crate::args::all_cores);
    let acc = &state.acc;
    let t = Instant::now();
    let ws = crate::args::in_pool(threads, || -> Result<Vec<BigUint>, CliError> {
        let primes: Vec<U256> = elems
            .par_iter()
            .map(|e| hash_to_prime_with(e, cpu()))
            .collect();
        let ws = acc.witnesses_for_primes(&primes).map_err(|e| match e {
            AccumulatorError::NotMember { index } => CliError::Invalid(format!(
                "'{}' line {}: not a member",
                a.input.display(),
                lines[index].0
            )),
            e => CliError::Invalid(e.to_string()),
        })?;
        // Every witness is checked against the value before it is written.
        let bad = primes
            .par_iter()
            .zip(&ws)
            .any(|(x, w)| acc.verify_prime(x, w).is_err());
        if bad {
            return Err(malformed(
                &a.state,
                "value does not match the members (a computed witness fails)",
            ));
        }
        Ok(ws)
    })
    .map_err(CliError::ThreadPool)??;
    let secs = t.elapsed().as_secs_f64();
    let len = acc.group().byte_len();
    let text: String = ws.iter().map(|w| fixed_hex(w, len) + "\n").collect();
    write_file(&a.out, text.as_bytes())?;
    summary(a.json, ws.len(), acc.len(), secs)
}

/// The text of a `HEX|@FILE|@FILE:LINE` argument (whitespace removed), and the file it
/// came from. A file of one value is read whole; a file of several, one a line (as
/// `accumulator witness` writes witnesses and `add` and `witness` read elements), needs
/// the line named: `@FILE:LINE`, 1-based, as the line numbers errors give.
fn arg_text(v: &str, flag: &str) -> Result<(String, Option<PathBuf>), CliError> {
    let Some(spec) = v.strip_prefix('@') else {
        return Ok((v.split_whitespace().collect(), None));
    };
    // FILE:LINE only where FILE:LINE is not itself a file.
    let (path, line) = match spec.rsplit_once(':') {
        Some((p, n)) if !Path::new(spec).exists() => match n.parse::<usize>() {
            Ok(n) => (p, Some(n)),
            Err(_) => (spec, None),
        },
        _ => (spec, None),
    };
    let file = Some(PathBuf::from(path));
    let text = read_bounded_text(Path::new(path), MAX_LIST_BYTES)?;
    let values = text.lines().filter(|l| !l.trim().is_empty()).count();
    let chosen = match line {
        Some(n) => match text.lines().nth(n.wrapping_sub(1)) {
            Some(l) if n >= 1 && !l.trim().is_empty() => l,
            _ => {
                return Err(bad_arg(
                    flag,
                    &file,
                    format!("line {n} holds no value ({values} values in the file)"),
                ))
            }
        },
        None if values > 1 => {
            return Err(bad_arg(
                flag,
                &file,
                format!("holds {values} values, one a line: name one with @FILE:LINE"),
            ))
        }
        None => text.as_str(),
    };
    if chosen.len() > MAX_ARG_BYTES {
        return Err(bad_arg(
            flag,
            &file,
            format!("longer than {MAX_ARG_BYTES} bytes"),
        ));
    }
    Ok((chosen.split_whitespace().collect(), file))
}

/// A malformed `HEX|@FILE` argument (exit 2): names the file, or the flag.
fn bad_arg(flag: &str, file: &Option<PathBuf>, message: String) -> CliError {
    match file {
        Some(path) => malformed(path, message),
        None => CliError::MalformedArg {
            arg: flag.to_string(),
            message,
        },
    }
}

fn run_verify(a: &VerifyArgs) -> Result<(), CliError> {
    let trusted = new_modulus(a.modulus.as_deref(), false)?;
    let state = load_state(&a.state)?;
    if *state.acc.modulus() != trusted {
        return Err(CliError::Invalid(format!(
            "the state uses modulus {}, not the trusted modulus {} (give the key with \
             --modulus if you trust it)",
            fingerprint(state.acc.modulus()),
            fingerprint(&trusted)
        )));
    }
    let (elem_text, elem_file) = arg_text(&a.elem, "--elem")?;
    if elem_text.len() > 2 * MAX_ELEMENT_BYTES {
        return Err(bad_arg(
            "--elem",
            &elem_file,
            format!("element longer than {MAX_ELEMENT_BYTES} bytes"),
        ));
    }
    let elem = unhex(&elem_text).ok_or_else(|| bad_arg("--elem", &elem_file, "not hex".into()))?;
    let (w_text, w_file) = arg_text(&a.witness, "--witness")?;
    let w = parse_number(&w_text, state.acc.group().byte_len())
        .map_err(|e| bad_arg("--witness", &w_file, e))?;
    let checked = match state.acc.verify(&elem, &w) {
        Ok(()) => {
            let mut m = serde_json::Map::new();
            m.insert("modulus".into(), fingerprint(state.acc.modulus()).into());
            m.insert("members".into(), state.elements.len().into());
            Ok(m)
        }
        // Not below the modulus: a malformed witness (exit 2), as one too long to parse.
        Err(e @ AccumulatorError::WitnessOutOfRange) => {
            Err(bad_arg("--witness", &w_file, e.to_string()))
        }
        Err(e) => Err(CliError::Invalid(e.to_string())),
    };
    crate::verdict::report(a.json, checked, || {
        let n = state.elements.len();
        format!(
            "valid: modulus {} ({} bits), {n} member{}",
            fingerprint(state.acc.modulus()),
            state.acc.group().bits(),
            if n == 1 { "" } else { "s" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_helpers() {
        assert_eq!(unhex("00ffA0"), Some(vec![0, 0xff, 0xa0]));
        assert_eq!(unhex(""), Some(vec![]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("+1"), None);
        assert_eq!(unhex("é1"), None);
        assert_eq!(fixed_hex(&BigUint::from(0x1234u32), 4), "00001234");
        assert_eq!(parse_number("0x0ff", 2), Ok(BigUint::from(255u32)));
        assert!(parse_number("", 2).is_err());
        assert!(parse_number("12345", 2).is_err());
        assert!(parse_number("12g4", 2).is_err());
    }
}

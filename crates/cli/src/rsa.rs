//! `wirespeed rsa sign|verify`: RSA signatures (PKCS#1 v1.5 or PSS, SHA-2).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use std::time::Instant;

use wirespeed_engine::rsa::{private_key_from_pem, public_key_from_pem};
use wirespeed_rsa::{batch_verify, pkcs1v15, pss, Hash, Padding, PublicKey, RsaError};

use crate::error::CliError;
use crate::files::{read_bounded_bytes, read_bounded_text};
use wirespeed_util::hex::encode as hex;

/// Largest key file accepted.
const MAX_KEY_BYTES: usize = 64 << 10;
/// Largest message file accepted (1 GiB).
const MAX_MESSAGE_BYTES: usize = 1 << 30;

/// What `wirespeed rsa` does.
#[derive(Subcommand, Debug)]
pub enum RsaCommand {
    /// Sign a file; prints the signature as hex
    Sign(SignArgs),
    /// Verify a signature on a file; exit 0 valid, 1 invalid, 2 malformed or unreadable input
    Verify(VerifyArgs),
    /// Sign every line (hex) of a file; signatures one per line (hex), in input order
    BatchSign(BatchSignArgs),
    /// Verify line-by-line signatures; verdicts one per line (ok / invalid)
    BatchVerify(BatchVerifyArgs),
}

/// Arguments of `wirespeed rsa batch-sign`.
#[derive(Args, Debug)]
pub struct BatchSignArgs {
    /// Private key, PEM (PKCS#1 or PKCS#8)
    #[arg(long, value_name = "KEY.pem")]
    pub key: PathBuf,
    /// Messages, one per line, hex
    #[arg(long = "in", value_name = "FILE")]
    pub input: PathBuf,
    /// Signatures out, one per line, hex
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// RSASSA-PSS instead of PKCS#1 v1.5
    #[arg(long)]
    pub pss: bool,
    /// Hash: sha256, sha384 or sha512
    #[arg(long, default_value = "sha256", value_parser = parse_hash)]
    pub hash: Hash,
    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N", value_parser = crate::args::parse_threads)]
    pub threads: Option<usize>,
    /// One JSON object: count, secs, per_sec, fallbacks (GPU runs answered on the CPU,
    /// reason -> count)
    #[arg(long)]
    pub json: bool,
    /// Where the private operations run: auto (the GPU from 256 messages when one is
    /// present), cpu or gpu
    #[arg(long, value_name = "BACKEND", default_value = "auto", value_parser = crate::gpu::parse_device)]
    pub backend: wirespeed_engine::Backend,
}

/// Arguments of `wirespeed rsa batch-verify`.
#[derive(Args, Debug)]
pub struct BatchVerifyArgs {
    /// Public key, PEM
    #[arg(long = "pub", value_name = "PUB.pem")]
    pub public: PathBuf,
    /// Messages, one per line, hex
    #[arg(long = "in", value_name = "FILE")]
    pub input: PathBuf,
    /// Signatures, one per line, hex, in the same order
    #[arg(long, value_name = "FILE")]
    pub sigs: PathBuf,
    /// Verdicts out, one per line: ok or invalid
    #[arg(long, value_name = "FILE")]
    pub verdicts: Option<PathBuf>,
    /// RSASSA-PSS instead of PKCS#1 v1.5
    #[arg(long)]
    pub pss: bool,
    /// Hash: sha256, sha384 or sha512
    #[arg(long, default_value = "sha256", value_parser = parse_hash)]
    pub hash: Hash,
    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N", value_parser = crate::args::parse_threads)]
    pub threads: Option<usize>,
    /// One JSON object: count, valid, invalid, secs, per_sec
    #[arg(long)]
    pub json: bool,
}

/// Hex lines of a file (blank lines skipped); a bad line is named (exit 2).
fn hex_lines(path: &Path) -> Result<Vec<Vec<u8>>, CliError> {
    let text = read_bounded_text(path, MAX_MESSAGE_BYTES)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            unhex(l.trim()).ok_or_else(|| CliError::MalformedInput {
                path: path.to_path_buf(),
                message: format!("line {}: not hex", i + 1),
            })
        })
        .collect()
}

fn unhex(t: &str) -> Option<Vec<u8>> {
    wirespeed_util::hex::decode(t).ok()
}

fn padding(pss: bool) -> Padding {
    if pss {
        Padding::Pss
    } else {
        Padding::Pkcs1v15
    }
}

fn summary(json: bool, count: usize, secs: f64, extra: &[(&str, usize)]) -> Result<(), CliError> {
    let per_sec = count as f64 / secs.max(1e-9);
    let mut out = std::io::stdout().lock();
    if json {
        let mut v = serde_json::json!({ "count": count, "secs": secs, "per_sec": per_sec });
        for (k, n) in extra {
            v[*k] = (*n).into();
        }
        writeln!(out, "{v}")
    } else {
        let rest: String = extra.iter().map(|(k, n)| format!(" {k}={n}")).collect();
        writeln!(
            out,
            "count={count}{rest} secs={secs:.3} per_sec={per_sec:.0}"
        )
    }
    .map_err(CliError::Stdout)
}

/// Arguments of `wirespeed rsa sign`.
#[derive(Args, Debug)]
pub struct SignArgs {
    /// Private key, PEM (PKCS#1 or PKCS#8), 2048, 3072 or 4096 bits
    #[arg(long, value_name = "KEY.pem")]
    pub key: PathBuf,
    /// The message file
    #[arg(long = "in", value_name = "FILE")]
    pub input: PathBuf,
    /// RSASSA-PSS (salt as long as the digest) instead of PKCS#1 v1.5
    #[arg(long)]
    pub pss: bool,
    /// Hash: sha256, sha384 or sha512
    #[arg(long, default_value = "sha256", value_parser = parse_hash)]
    pub hash: Hash,
    /// One JSON object: signature (hex), bits, padding and hash
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `wirespeed rsa verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Public key, PEM (PKCS#1 or SubjectPublicKeyInfo); a private key PEM works too
    #[arg(long = "pub", value_name = "PUB.pem")]
    pub public: PathBuf,
    /// The message file
    #[arg(long = "in", value_name = "FILE")]
    pub input: PathBuf,
    /// The signature file: hex (whitespace ignored) or the raw bytes
    #[arg(long, value_name = "SIG")]
    pub sig: PathBuf,
    /// RSASSA-PSS instead of PKCS#1 v1.5
    #[arg(long)]
    pub pss: bool,
    /// Hash: sha256, sha384 or sha512
    #[arg(long, default_value = "sha256", value_parser = parse_hash)]
    pub hash: Hash,
    /// One JSON object: valid, and bits, padding and hash when valid (reason when not)
    #[arg(long)]
    pub json: bool,
}

fn parse_hash(s: &str) -> Result<Hash, String> {
    Hash::from_name(s).ok_or_else(|| format!("'{s}' is not sha256, sha384 or sha512"))
}

fn key_error(path: &Path, e: RsaError) -> CliError {
    CliError::MalformedInput {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A public key from a PEM file (a private key PEM gives its public half).
pub(crate) fn load_public(path: &Path) -> Result<PublicKey, CliError> {
    load_public_or_private(path).map(|(k, _)| k)
}

/// A public key from a PEM file, and whether the file was a private key (whose holder
/// knows the factors of N).
pub(crate) fn load_public_or_private(path: &Path) -> Result<(PublicKey, bool), CliError> {
    let pem = read_bounded_text(path, MAX_KEY_BYTES)?;
    match public_key_from_pem(&pem) {
        Ok(k) => Ok((k, false)),
        Err(public_err) => match private_key_from_pem(&pem) {
            Ok(k) => Ok((k.public().clone(), true)),
            // A private key that parsed but cannot be used (its size, its parts): that
            // is what is wrong with the file, not that it is no public key.
            Err(e @ (RsaError::UnsupportedSize(_) | RsaError::BadKey(_))) => {
                Err(key_error(path, e))
            }
            Err(_) => Err(key_error(path, public_err)),
        },
    }
}

fn signature_bytes(path: &Path, size: usize) -> Result<Vec<u8>, CliError> {
    let raw = read_bounded_bytes(path, 4 * size + 64)?;
    if raw.len() == size {
        return Ok(raw);
    }
    let text: String = String::from_utf8_lossy(&raw)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    match bytes {
        Some(b) if b.len() == size => Ok(b),
        _ => Err(CliError::MalformedInput {
            path: path.to_path_buf(),
            message: format!("not a {size}-byte signature (raw, or hex)"),
        }),
    }
}

/// Runs `wirespeed rsa`.
pub fn run(cmd: &RsaCommand) -> Result<(), CliError> {
    match cmd {
        RsaCommand::Sign(a) => {
            let pem = read_bounded_text(&a.key, MAX_KEY_BYTES)?;
            let key = private_key_from_pem(&pem).map_err(|e| key_error(&a.key, e))?;
            let msg = read_bounded_bytes(&a.input, MAX_MESSAGE_BYTES)?;
            let sig = if a.pss {
                pss::sign(&key, a.hash, &msg, &mut rand::thread_rng())
            } else {
                pkcs1v15::sign(&key, a.hash, &msg)
            }
            .map_err(|e| CliError::Internal(e.to_string()))?;
            let line = if a.json {
                serde_json::json!({
                    "signature": hex(&sig),
                    "bits": key.public().size() * 8,
                    "padding": if a.pss { "pss" } else { "pkcs1v15" },
                    "hash": format!("{:?}", a.hash).to_lowercase(),
                })
                .to_string()
            } else {
                hex(&sig)
            };
            writeln!(std::io::stdout().lock(), "{line}").map_err(CliError::Stdout)
        }
        RsaCommand::Verify(a) => {
            let key = load_public(&a.public)?;
            let msg = read_bounded_bytes(&a.input, MAX_MESSAGE_BYTES)?;
            let sig = signature_bytes(&a.sig, key.size())?;
            let r = if a.pss {
                pss::verify(&key, a.hash, &msg, &sig)
            } else {
                pkcs1v15::verify(&key, a.hash, &msg, &sig)
            };
            let checked = r
                .map(|()| {
                    let mut m = serde_json::Map::new();
                    m.insert("bits".into(), (key.size() * 8).into());
                    m.insert(
                        "padding".into(),
                        if a.pss { "pss" } else { "pkcs1v15" }.into(),
                    );
                    m.insert("hash".into(), format!("{:?}", a.hash).to_lowercase().into());
                    m
                })
                .map_err(|e| CliError::Invalid(e.to_string()));
            crate::verdict::report(a.json, checked, || "valid".into())
        }
        RsaCommand::BatchSign(a) => {
            let pem = read_bounded_text(&a.key, MAX_KEY_BYTES)?;
            let key = private_key_from_pem(&pem).map_err(|e| key_error(&a.key, e))?;
            let msgs = hex_lines(&a.input)?;
            let threads = a.threads.unwrap_or_else(crate::args::all_cores);
            let t = Instant::now();
            let sigs = crate::args::in_pool(threads, || {
                wirespeed_engine::rsa::batch_sign(a.backend, &key, padding(a.pss), a.hash, &msgs)
            })
            .map_err(CliError::ThreadPool)?
            .map_err(CliError::Gpu)?
            .map_err(|e| CliError::Internal(e.to_string()))?;
            let secs = t.elapsed().as_secs_f64();
            let text: String = sigs.iter().map(|s| hex(s) + "\n").collect();
            crate::files::write_file(&a.out, text.as_bytes())?;
            crate::fallback::report();
            if a.json {
                let per_sec = sigs.len() as f64 / secs.max(1e-9);
                let v = serde_json::json!({
                    "count": sigs.len(), "secs": secs, "per_sec": per_sec,
                    "fallbacks": crate::fallback::json(),
                });
                writeln!(std::io::stdout().lock(), "{v}").map_err(CliError::Stdout)
            } else {
                summary(false, sigs.len(), secs, &[])
            }
        }
        RsaCommand::BatchVerify(a) => {
            let key = load_public(&a.public)?;
            let msgs = hex_lines(&a.input)?;
            let sigs = hex_lines(&a.sigs)?;
            if msgs.len() != sigs.len() {
                return Err(CliError::Invalid(format!(
                    "{} messages but {} signatures",
                    msgs.len(),
                    sigs.len()
                )));
            }
            let pairs: Vec<(Vec<u8>, Vec<u8>)> = msgs.into_iter().zip(sigs).collect();
            let threads = a.threads.unwrap_or_else(crate::args::all_cores);
            let t = Instant::now();
            let verdicts = crate::args::in_pool(threads, || {
                batch_verify(&key, padding(a.pss), a.hash, &pairs)
            })
            .map_err(CliError::ThreadPool)?;
            let secs = t.elapsed().as_secs_f64();
            if let Some(path) = &a.verdicts {
                let text: String = verdicts
                    .iter()
                    .map(|&ok| if ok { "ok\n" } else { "invalid\n" })
                    .collect();
                crate::files::write_file(path, text.as_bytes())?;
            }
            let valid = verdicts.iter().filter(|&&v| v).count();
            summary(
                a.json,
                verdicts.len(),
                secs,
                &[("valid", valid), ("invalid", verdicts.len() - valid)],
            )
        }
    }
}

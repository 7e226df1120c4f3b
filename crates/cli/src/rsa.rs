//! `wirespeed rsa sign|verify`: RSA signatures (PKCS#1 v1.5 or PSS, SHA-2).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use wirespeed_rsa::{pkcs1v15, pss, Hash, PrivateKey, PublicKey, RsaError};

use crate::error::CliError;
use crate::files::{read_bounded_bytes, read_bounded_text};

/// Largest key file accepted.
const MAX_KEY_BYTES: usize = 64 << 10;
/// Largest message file accepted (1 GiB).
const MAX_MESSAGE_BYTES: usize = 1 << 30;

/// What `wirespeed rsa` does.
#[derive(Subcommand, Debug)]
pub enum RsaCommand {
    /// Sign a file; prints the signature as hex
    Sign(SignArgs),
    /// Verify a signature on a file; exit 0 valid, 1 invalid, 2 malformed input
    Verify(VerifyArgs),
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

fn load_public(path: &Path) -> Result<PublicKey, CliError> {
    let pem = read_bounded_text(path, MAX_KEY_BYTES)?;
    match PublicKey::from_pem(&pem) {
        Ok(k) => Ok(k),
        Err(e) => PrivateKey::from_pem(&pem)
            .map(|k| k.public().clone())
            .map_err(|_| key_error(path, e)),
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
            let key = PrivateKey::from_pem(&pem).map_err(|e| key_error(&a.key, e))?;
            let msg = read_bounded_bytes(&a.input, MAX_MESSAGE_BYTES)?;
            let sig = if a.pss {
                pss::sign(&key, a.hash, &msg, &mut rand::thread_rng())
            } else {
                pkcs1v15::sign(&key, a.hash, &msg)
            }
            .map_err(|e| CliError::Internal(e.to_string()))?;
            let hex: String = sig.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(std::io::stdout().lock(), "{hex}").map_err(CliError::Stdout)
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
            match r {
                Ok(()) => writeln!(std::io::stdout().lock(), "valid").map_err(CliError::Stdout),
                Err(e) => Err(CliError::Invalid(e.to_string())),
            }
        }
    }
}

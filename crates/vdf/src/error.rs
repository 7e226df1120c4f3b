//! Typed errors: [`VdfError`] for evaluation, proving and verification, [`DecodeError`]
//! for the JSON and binary encodings. Each variant is one failure a caller can act on,
//! and each prints as one line.

use std::fmt;

/// Why an evaluation, a proof or a verification cannot go ahead or fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VdfError {
    /// The modulus is even.
    EvenModulus,
    /// The modulus is outside the supported 1024..=4096 bits.
    ModulusSize {
        /// Its size in bits.
        bits: usize,
    },
    /// x >= N.
    InputOutOfRange,
    /// x is 0, 1 or N - 1: its powers are trivial.
    TrivialInput,
    /// T is outside 1..=2^63.
    DelayOutOfRange {
        /// The rejected T.
        t: u64,
    },
    /// The checkpoint interval would keep more checkpoints than allowed.
    TooManyCheckpoints {
        /// Checkpoints the interval asks for.
        count: u64,
        /// The most allowed.
        max: u64,
    },
    /// An [`Evaluation`](crate::Evaluation) whose parts do not fit together.
    InconsistentEvaluation(&'static str),
    /// y is not the canonical output: it must lie in 1..=(N-1)/2.
    OutputOutOfRange,
    /// A proof value (pi or a mu) is not in 1..=(N-1)/2.
    ProofValueOutOfRange,
    /// A Pietrzak proof has the wrong number of mu values for its T.
    ProofLength {
        /// The number T calls for.
        expected: usize,
        /// The number given.
        got: usize,
    },
    /// A segmented proof whose segments do not fit T: 1 to 64 segments, each at least
    /// one squaring long, summing to T, with one intermediate value fewer than segments
    /// and one proof per segment.
    SegmentLayout(&'static str),
    /// The proof is well formed but does not verify.
    ProofRejected,
    /// The proof is about another group than the one the verifier trusts (a proof in a
    /// group of known order, a prime modulus say, proves nothing).
    UntrustedModulus {
        /// The fingerprint of the proof's modulus.
        proof: String,
        /// The fingerprint of the trusted modulus.
        trusted: String,
    },
}

impl fmt::Display for VdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VdfError::EvenModulus => f.write_str("modulus must be odd"),
            VdfError::ModulusSize { bits } => write!(
                f,
                "modulus has {bits} bits; 1024 to 4096 bits are supported"
            ),
            VdfError::InputOutOfRange => f.write_str("x must be less than the modulus"),
            VdfError::TrivialInput => f.write_str("x must not be 0, 1 or N-1"),
            VdfError::DelayOutOfRange { t } => {
                write!(f, "T = {t} is out of range; T must be in 1..=2^63")
            }
            VdfError::TooManyCheckpoints { count, max } => write!(
                f,
                "checkpoint interval too small: {count} checkpoints, at most {max}"
            ),
            VdfError::InconsistentEvaluation(why) => {
                write!(f, "inconsistent evaluation: {why}")
            }
            VdfError::OutputOutOfRange => {
                f.write_str("y must be the canonical output, in 1..=(N-1)/2")
            }
            VdfError::ProofValueOutOfRange => f.write_str("proof value must be in 1..=(N-1)/2"),
            VdfError::ProofLength { expected, got } => write!(
                f,
                "Pietrzak proof has {got} mu values; T calls for {expected}"
            ),
            VdfError::SegmentLayout(why) => write!(f, "segmented proof layout: {why}"),
            VdfError::ProofRejected => f.write_str("proof does not verify"),
            VdfError::UntrustedModulus { proof, trusted } => write!(
                f,
                "the proof is for modulus {proof}, not the trusted modulus {trusted} \
                 (give the modulus with --modulus or --modulus-file if you trust it)"
            ),
        }
    }
}

impl std::error::Error for VdfError {}

/// Why a JSON or binary encoding is not a valid proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input is longer than any valid encoding.
    TooLarge {
        /// Input length in bytes.
        len: usize,
        /// Largest accepted length.
        max: usize,
    },
    /// JSON syntax or structure (a missing, duplicate or unknown field, a wrong type).
    Json(String),
    /// A hex field that is not canonical hex.
    BadHex {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A proof type other than "wesolowski" / "pietrzak" / "wesolowski-segmented" (JSON)
    /// or 1 / 2 / 3 (binary), or a type its version does not have.
    UnknownProofType(String),
    /// The proof object has fields that do not match its type.
    ProofFields(&'static str),
    /// More Pietrzak mu values than any T allows.
    TooManyMu {
        /// The number given (or a lower bound of it).
        count: usize,
        /// The most allowed.
        max: usize,
    },
    /// More segments (or list entries of a segmented proof) than any proof allows.
    TooManySegments {
        /// The number given (or a lower bound of it).
        count: usize,
        /// The most allowed.
        max: usize,
    },
    /// An unknown version: the binary version byte, or the JSON "version" field.
    Version(u8),
    /// The binary modulus length is not 128..=512 bytes or has a leading zero byte.
    ModulusLength(usize),
    /// The binary encoding ends early.
    Truncated {
        /// Bytes the header announces.
        needed: usize,
        /// Bytes present.
        got: usize,
    },
    /// Bytes after the end of the binary encoding.
    TrailingBytes(usize),
    /// A field that parses but is not valid for the statement.
    Invalid {
        /// The field.
        field: &'static str,
        /// Why.
        error: VdfError,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TooLarge { len, max } => {
                write!(f, "input is {len} bytes; at most {max} are accepted")
            }
            DecodeError::Json(msg) => write!(f, "invalid JSON proof: {msg}"),
            DecodeError::BadHex { field, reason } => write!(f, "field {field}: {reason}"),
            DecodeError::UnknownProofType(t) => write!(
                f,
                "unknown proof type {t:?}; expected \"wesolowski\", \"pietrzak\" or \"wesolowski-segmented\""
            ),
            DecodeError::ProofFields(why) => write!(f, "proof fields: {why}"),
            DecodeError::TooManyMu { count, max } => {
                write!(f, "Pietrzak proof has {count} mu values; at most {max}")
            }
            DecodeError::TooManySegments { count, max } => {
                write!(f, "segmented proof has {count} entries in a list; at most {max}")
            }
            DecodeError::Version(v) => write!(f, "unknown version {v}; expected 1 or 2"),
            DecodeError::ModulusLength(n) => write!(
                f,
                "modulus length {n} bytes: must be 128 to 512 with a nonzero first byte"
            ),
            DecodeError::Truncated { needed, got } => {
                write!(f, "truncated: {needed} bytes needed, {got} present")
            }
            DecodeError::TrailingBytes(n) => write!(f, "{n} bytes after the end of the proof"),
            DecodeError::Invalid { field, error } => write!(f, "field {field}: {error}"),
        }
    }
}

impl std::error::Error for DecodeError {}

//! JSON and binary encodings of a [`VdfProof`], with strict decoding.
//!
//! JSON (one object, no other fields):
//! `{"modulus": hex, "x": hex, "t": number, "y": hex, "proof": {"type": "wesolowski",
//! "pi": hex}}` or `... "proof": {"type": "pietrzak", "mu": [hex, ...]}}` (version 1, no
//! "version" field), or `{"version": 2, "modulus": ..., "proof": {"type":
//! "wesolowski-segmented", "lengths": [number, ...], "mids": [hex, ...], "pis": [hex,
//! ...]}}` (version 2, written for segmented proofs only; a version 2 document may hold any
//! of the three types, a version 1 document only the first two).
//! Hex is big-endian without prefix or leading zeros ("0" alone for zero, which no field
//! accepts); digits a-f in either case are accepted, the encoder writes lowercase. Inputs
//! longer than [`MAX_JSON_LEN`] bytes, hex longer than 1024 digits, more than
//! [`MAX_MU`] mu values and more than [`MAX_SEGMENTS`] entries in a segmented proof's
//! lists are refused before they are stored.
//!
//! Binary (all integers big-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 1 | version: 1, or 2 (written for segmented proofs only) |
//! | 1 | proof type: 1 = Wesolowski, 2 = Pietrzak (versions 1 and 2), 3 = segmented Wesolowski (version 2) |
//! | 2 | m = byte length of N, 128..=512 |
//! | m | N (first byte nonzero) |
//! | 8 | T |
//! | m | x |
//! | m | y |
//! | m | pi (Wesolowski) — or 1 byte c <= 64, then c values of m bytes (Pietrzak) — or 1 byte s in 1..=64, s lengths of 8 bytes, s - 1 intermediate values and s proofs of m bytes (segmented) |
//!
//! The decoders build the proof's modulus for the [`CpuFeatures`] passed to their `_with`
//! forms ([`VdfProof::from_json_with`], [`VdfProof::from_bytes_with`]); the plain forms
//! use the detected features.
//!
//! Both decoders then apply the same checks: N odd of 1024..=4096 bits; T in 1..=2^63;
//! 1 < x < N - 1; y, pi, every mu and every intermediate value and segment proof in
//! 1..=(N-1)/2 (canonical, see [`crate::modulus`]); exactly ceil(log2 T) mu values; a
//! segment layout that fits T ([`crate::segmented::check_layout`]). Decoding does not verify the proof: call
//! [`VdfProof::verify`].

use std::fmt;

use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use wirespeed_bigint::{CpuFeatures, U4096};

use crate::eval::check_delay;
use crate::pietrzak::{proof_len, MAX_MU};
use crate::segmented::{check_layout, MAX_SEGMENTS};
use crate::{DecodeError, Modulus, Proof, VdfError, VdfProof};

/// Largest JSON input accepted (a 4096-bit Pietrzak proof with 40 values is about 45 KiB).
pub const MAX_JSON_LEN: usize = 256 * 1024;
/// Binary format version of single Wesolowski and Pietrzak proofs (what readers before
/// segmented proofs accept).
pub const BINARY_VERSION: u8 = 1;
/// Format version (binary and JSON) of segmented proofs; its readers accept every type.
pub const SEGMENTED_VERSION: u8 = 2;
const TYPE_WESOLOWSKI: u8 = 1;
const TYPE_PIETRZAK: u8 = 2;
const TYPE_SEGMENTED: u8 = 3;
/// Most hex digits in a value (4096 bits).
const MAX_HEX_DIGITS: usize = 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonDoc {
    version: Option<u8>,
    modulus: String,
    x: String,
    t: u64,
    y: String,
    proof: JsonProof,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonProof {
    #[serde(rename = "type")]
    kind: String,
    pi: Option<String>,
    mu: Option<Bounded<String, MAX_MU>>,
    lengths: Option<Bounded<u64, MAX_SEGMENTS>>,
    mids: Option<Bounded<String, MAX_SEGMENTS>>,
    pis: Option<Bounded<String, MAX_SEGMENTS>>,
}

/// Up to `MAX` elements kept; further elements are skipped unstored and counted.
struct Bounded<T, const MAX: usize> {
    values: Vec<T>,
    total: usize,
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for Bounded<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
            type Value = Bounded<T, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of at most {MAX} values")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut values = Vec::new();
                let mut total = 0usize;
                loop {
                    if total < MAX {
                        match seq.next_element::<T>()? {
                            Some(s) => values.push(s),
                            None => break,
                        }
                    } else if seq.next_element::<IgnoredAny>()?.is_none() {
                        break;
                    }
                    total += 1;
                }
                Ok(Bounded { values, total })
            }
        }
        d.deserialize_seq(V::<T, MAX>(std::marker::PhantomData))
    }
}

/// Strict hex: nonempty, at most 1024 digits, no prefix, no leading zero.
fn parse_hex(field: &'static str, s: &str) -> Result<U4096, DecodeError> {
    let bad = |reason| Err(DecodeError::BadHex { field, reason });
    if s.is_empty() {
        return bad("empty hex string");
    }
    if s.len() > MAX_HEX_DIGITS {
        return bad("longer than 1024 hex digits (4096 bits)");
    }
    if !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return bad("not a hex string (digits 0-9, a-f only, no 0x prefix)");
    }
    if s.len() > 1 && s.starts_with('0') {
        return bad("leading zeros are not allowed");
    }
    U4096::from_hex(s).or(bad("not a hex string"))
}

/// The checks both decoders share (see the module docs); N's context is built for `f`.
fn validate(
    modulus: U4096,
    x: U4096,
    t: u64,
    y: U4096,
    proof: Proof,
    f: &CpuFeatures,
) -> Result<VdfProof, DecodeError> {
    let invalid = |field, error| DecodeError::Invalid { field, error };
    let n = Modulus::new_with(&modulus, f).map_err(|e| invalid("modulus", e))?;
    check_delay(t).map_err(|e| invalid("t", e))?;
    n.check_input(&x).map_err(|e| invalid("x", e))?;
    if !n.is_canonical_element(&y) {
        return Err(invalid("y", VdfError::OutputOutOfRange));
    }
    match &proof {
        Proof::Wesolowski { pi } => {
            if !n.is_canonical_element(pi) {
                return Err(invalid("pi", VdfError::ProofValueOutOfRange));
            }
        }
        Proof::Pietrzak { mu } => {
            let expected = proof_len(t);
            if mu.len() != expected {
                return Err(invalid(
                    "mu",
                    VdfError::ProofLength {
                        expected,
                        got: mu.len(),
                    },
                ));
            }
            if !mu.iter().all(|m| n.is_canonical_element(m)) {
                return Err(invalid("mu", VdfError::ProofValueOutOfRange));
            }
        }
        Proof::WesolowskiSegmented { lengths, mids, pis } => {
            check_layout(t, lengths, mids.len(), pis.len()).map_err(|e| invalid("lengths", e))?;
            if !mids.iter().all(|m| n.is_canonical_element(m)) {
                return Err(invalid("mids", VdfError::ProofValueOutOfRange));
            }
            if !pis.iter().all(|m| n.is_canonical_element(m)) {
                return Err(invalid("pis", VdfError::ProofValueOutOfRange));
            }
        }
    }
    Ok(VdfProof {
        modulus: n,
        x,
        t,
        y,
        proof,
    })
}

impl VdfProof {
    /// The JSON form (compact, lowercase hex; see the module docs).
    pub fn to_json(&self) -> String {
        let proof = match &self.proof {
            Proof::Wesolowski { pi } => {
                format!(r#"{{"type":"wesolowski","pi":"{}"}}"#, pi.to_hex())
            }
            Proof::Pietrzak { mu } => {
                let list: Vec<String> = mu.iter().map(|m| format!("\"{}\"", m.to_hex())).collect();
                format!(r#"{{"type":"pietrzak","mu":[{}]}}"#, list.join(","))
            }
            Proof::WesolowskiSegmented { lengths, mids, pis } => {
                let hex = |v: &[U4096]| {
                    let list: Vec<String> =
                        v.iter().map(|m| format!("\"{}\"", m.to_hex())).collect();
                    list.join(",")
                };
                let lengths: Vec<String> = lengths.iter().map(u64::to_string).collect();
                format!(
                    r#"{{"type":"wesolowski-segmented","lengths":[{}],"mids":[{}],"pis":[{}]}}"#,
                    lengths.join(","),
                    hex(mids),
                    hex(pis)
                )
            }
        };
        let version = match self.proof {
            Proof::WesolowskiSegmented { .. } => format!(r#""version":{SEGMENTED_VERSION},"#),
            _ => String::new(),
        };
        format!(
            r#"{{{}"modulus":"{}","x":"{}","t":{},"y":"{}","proof":{}}}"#,
            version,
            self.modulus.value().to_hex(),
            self.x.to_hex(),
            self.t,
            self.y.to_hex(),
            proof
        )
    }

    /// Strict JSON decoding (see the module docs); does not verify the proof.
    pub fn from_json(s: &str) -> Result<Self, DecodeError> {
        Self::from_json_with(s, CpuFeatures::get())
    }

    /// [`VdfProof::from_json`] with the modulus built for a CPU with features `f`.
    pub fn from_json_with(s: &str, f: &CpuFeatures) -> Result<Self, DecodeError> {
        if s.len() > MAX_JSON_LEN {
            return Err(DecodeError::TooLarge {
                len: s.len(),
                max: MAX_JSON_LEN,
            });
        }
        let doc: JsonDoc = serde_json::from_str(s).map_err(|e| DecodeError::Json(e.to_string()))?;
        let version = doc.version.unwrap_or(BINARY_VERSION);
        if version != BINARY_VERSION && version != SEGMENTED_VERSION {
            return Err(DecodeError::Version(version));
        }
        let p = doc.proof;
        let segmented_fields = p.lengths.is_some() || p.mids.is_some() || p.pis.is_some();
        let single_fields = p.pi.is_some() || p.mu.is_some();
        let proof = match (p.kind.as_str(), p.pi, p.mu) {
            ("wesolowski" | "pietrzak", _, _) if segmented_fields => {
                return Err(DecodeError::ProofFields(
                    "lengths, mids and pis belong to a wesolowski-segmented proof",
                ))
            }
            ("wesolowski-segmented", _, _) if version < SEGMENTED_VERSION => {
                return Err(DecodeError::UnknownProofType(
                    "wesolowski-segmented (needs \"version\": 2)".into(),
                ))
            }
            ("wesolowski-segmented", _, _) if single_fields => {
                return Err(DecodeError::ProofFields(
                    "a wesolowski-segmented proof has exactly the fields lengths, mids and pis",
                ))
            }
            ("wesolowski-segmented", _, _) => {
                let (Some(lengths), Some(mids), Some(pis)) = (p.lengths, p.mids, p.pis) else {
                    return Err(DecodeError::ProofFields(
                        "a wesolowski-segmented proof has exactly the fields lengths, mids and pis",
                    ));
                };
                for total in [lengths.total, mids.total, pis.total] {
                    if total > MAX_SEGMENTS {
                        return Err(DecodeError::TooManySegments {
                            count: total,
                            max: MAX_SEGMENTS,
                        });
                    }
                }
                let hexes = |field, v: &[String]| {
                    v.iter()
                        .map(|m| parse_hex(field, m))
                        .collect::<Result<Vec<_>, _>>()
                };
                Proof::WesolowskiSegmented {
                    lengths: lengths.values,
                    mids: hexes("mids", &mids.values)?,
                    pis: hexes("pis", &pis.values)?,
                }
            }
            ("wesolowski", Some(pi), None) => Proof::Wesolowski {
                pi: parse_hex("pi", &pi)?,
            },
            ("wesolowski", _, _) => {
                return Err(DecodeError::ProofFields(
                    "a wesolowski proof has exactly the field pi",
                ))
            }
            ("pietrzak", None, Some(list)) => {
                if list.total > MAX_MU {
                    return Err(DecodeError::TooManyMu {
                        count: list.total,
                        max: MAX_MU,
                    });
                }
                let mu = list
                    .values
                    .iter()
                    .map(|m| parse_hex("mu", m))
                    .collect::<Result<Vec<_>, _>>()?;
                Proof::Pietrzak { mu }
            }
            ("pietrzak", _, _) => {
                return Err(DecodeError::ProofFields(
                    "a pietrzak proof has exactly the field mu",
                ))
            }
            (other, _, _) => return Err(DecodeError::UnknownProofType(other.to_string())),
        };
        validate(
            parse_hex("modulus", &doc.modulus)?,
            parse_hex("x", &doc.x)?,
            doc.t,
            parse_hex("y", &doc.y)?,
            proof,
            f,
        )
    }

    /// The binary form (see the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = &self.modulus;
        let m = n.byte_len();
        let mut out = Vec::with_capacity(4 + 8 + m * (4 + MAX_MU));
        let (version, kind) = match self.proof {
            Proof::Wesolowski { .. } => (BINARY_VERSION, TYPE_WESOLOWSKI),
            Proof::Pietrzak { .. } => (BINARY_VERSION, TYPE_PIETRZAK),
            Proof::WesolowskiSegmented { .. } => (SEGMENTED_VERSION, TYPE_SEGMENTED),
        };
        out.push(version);
        out.push(kind);
        out.extend_from_slice(&(m as u16).to_be_bytes());
        out.extend_from_slice(&n.value_bytes(n.value()));
        out.extend_from_slice(&self.t.to_be_bytes());
        out.extend_from_slice(&n.value_bytes(&self.x));
        out.extend_from_slice(&n.value_bytes(&self.y));
        match &self.proof {
            Proof::Wesolowski { pi } => out.extend_from_slice(&n.value_bytes(pi)),
            Proof::Pietrzak { mu } => {
                out.push(mu.len() as u8);
                for v in mu {
                    out.extend_from_slice(&n.value_bytes(v));
                }
            }
            Proof::WesolowskiSegmented { lengths, mids, pis } => {
                out.push(lengths.len() as u8);
                for len in lengths {
                    out.extend_from_slice(&len.to_be_bytes());
                }
                for v in mids.iter().chain(pis) {
                    out.extend_from_slice(&n.value_bytes(v));
                }
            }
        }
        out
    }

    /// Strict binary decoding (see the module docs); does not verify the proof. Lengths
    /// are checked against the input before anything is stored.
    pub fn from_bytes(b: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with(b, CpuFeatures::get())
    }

    /// [`VdfProof::from_bytes`] with the modulus built for a CPU with features `f`.
    pub fn from_bytes_with(b: &[u8], f: &CpuFeatures) -> Result<Self, DecodeError> {
        let truncated = |needed| DecodeError::Truncated {
            needed,
            got: b.len(),
        };
        if b.len() < 4 {
            return Err(truncated(4));
        }
        if b[0] != BINARY_VERSION && b[0] != SEGMENTED_VERSION {
            return Err(DecodeError::Version(b[0]));
        }
        let kind = b[1];
        let known = kind == TYPE_WESOLOWSKI
            || kind == TYPE_PIETRZAK
            || (kind == TYPE_SEGMENTED && b[0] == SEGMENTED_VERSION);
        if !known {
            return Err(DecodeError::UnknownProofType(kind.to_string()));
        }
        let m = u16::from_be_bytes([b[2], b[3]]) as usize;
        if !(128..=512).contains(&m) {
            return Err(DecodeError::ModulusLength(m));
        }
        // Header, N, T, x, y.
        let fixed = 4 + m + 8 + 2 * m;
        let (count, needed) = if kind == TYPE_WESOLOWSKI {
            (1, fixed + m)
        } else if kind == TYPE_SEGMENTED {
            if b.len() <= fixed {
                return Err(truncated(fixed + 1));
            }
            let s = b[fixed] as usize;
            if s > MAX_SEGMENTS {
                return Err(DecodeError::TooManySegments {
                    count: s,
                    max: MAX_SEGMENTS,
                });
            }
            if s == 0 {
                return Err(DecodeError::Invalid {
                    field: "lengths",
                    error: VdfError::SegmentLayout("1 to 64 segments"),
                });
            }
            (s, fixed + 1 + 8 * s + (2 * s - 1) * m)
        } else {
            if b.len() <= fixed {
                return Err(truncated(fixed + 1));
            }
            let c = b[fixed] as usize;
            if c > MAX_MU {
                return Err(DecodeError::TooManyMu {
                    count: c,
                    max: MAX_MU,
                });
            }
            (c, fixed + 1 + c * m)
        };
        if b.len() < needed {
            return Err(truncated(needed));
        }
        if b.len() > needed {
            return Err(DecodeError::TrailingBytes(b.len() - needed));
        }
        if b[4] == 0 {
            return Err(DecodeError::ModulusLength(m));
        }
        // m <= 512 bytes: every value fits a U4096.
        let value = |at: usize| U4096::from_be_bytes(&b[at..at + m]).unwrap_or(U4096::ZERO);
        let modulus = value(4);
        let mut tb = [0u8; 8];
        tb.copy_from_slice(&b[4 + m..12 + m]);
        let t = u64::from_be_bytes(tb);
        let x = value(12 + m);
        let y = value(12 + 2 * m);
        let proof = if kind == TYPE_WESOLOWSKI {
            Proof::Wesolowski {
                pi: value(12 + 3 * m),
            }
        } else if kind == TYPE_SEGMENTED {
            let s = count;
            let at = fixed + 1;
            let lengths = (0..s)
                .map(|i| {
                    let mut lb = [0u8; 8];
                    lb.copy_from_slice(&b[at + 8 * i..at + 8 * i + 8]);
                    u64::from_be_bytes(lb)
                })
                .collect();
            let vals = at + 8 * s;
            Proof::WesolowskiSegmented {
                lengths,
                mids: (0..s - 1).map(|i| value(vals + i * m)).collect(),
                pis: (0..s).map(|i| value(vals + (s - 1 + i) * m)).collect(),
            }
        } else {
            let start = fixed + 1;
            Proof::Pietrzak {
                mu: (0..count).map(|i| value(start + i * m)).collect(),
            }
        };
        validate(modulus, x, t, y, proof, f)
    }
}

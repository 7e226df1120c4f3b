//! A verifiable delay function in an RSA group: y = x^(2^T) mod N by T sequential
//! squarings, with a short proof that makes checking y take milliseconds.
//!
//! ```text
//! let n = Modulus::rsa2048();                       // or Modulus::new(&N)
//! let ev = eval(&n, &x, t, &EvalOptions::default())?; // T squarings, checkpoints
//! let proof = prove(&n, &ev, ProofKind::Wesolowski)?; // or ProofKind::Pietrzak
//! let (ev, proof) = eval_segmented(&n, &x, t, &EvalOptions::default())?; // proved alongside
//! proof.verify(&n)?;                                 // milliseconds, in the group of n
//! let json = proof.to_json();                        // or proof.to_bytes()
//! VdfProof::from_json(&json)?.verify(&Modulus::rsa2048())?; // the caller's trusted N
//! ```
//!
//! - Modulus: any odd N of 1024..=4096 bits; arithmetic runs at the smallest of 1024,
//!   2048, 3072, 4096 bits that holds N. Default: the RSA-2048 challenge number
//!   ([`Modulus::rsa2048`]). See [`modulus`]. The `_with` constructors
//!   ([`Modulus::new_with`], [`timelock::create_with`]) and decoders
//!   ([`VdfProof::from_json_with`], [`VdfProof::from_bytes_with`],
//!   [`resume::State::load_with`], [`timelock::Puzzle::from_json_with`],
//!   [`timelock::Lcs35::parse_with`]) take the [`CpuFeatures`] every Montgomery context
//!   of that group is built for; the plain ones use the detected.
//! - Input: 1 < x < N - 1. x >= N is refused with [`VdfError::InputOutOfRange`], and 0, 1
//!   and N - 1, whose powers are 0 or 1 for every T >= 1, with [`VdfError::TrivialInput`].
//!   (An x sharing a factor with N is not detected; finding one factors N.)
//! - Delay: 1 <= T <= 2^63 ([`MAX_DELAY`]).
//! - Group: proofs work in (Z/NZ)* / {1, -1}; the VDF output is |y| = min(y, N - y) with
//!   y = x^(2^T) mod N, and every proof value is canonical the same way. Without this, -y
//!   would also verify (see [`modulus`]). [`Evaluation`] carries both y (the exact power,
//!   for time-lock uses) and the output.
//! - Evaluation ([`eval()`]): Montgomery squarings end to end, checkpoints every k squarings
//!   (at most 16384 by default) for the provers.
//! - Proofs: Wesolowski ([`wesolowski`]; one group element, challenge a 128-bit prime from
//!   [`prime::hash_to_prime`], tested with our Baillie-PSW), segmented Wesolowski
//!   ([`segmented`]; one Wesolowski proof per segment, built beside the evaluation by
//!   [`eval_segmented`], so that little is left after the last squaring) and Pietrzak
//!   ([`pietrzak`]; ceil(log2 T) group elements). The provers start from the checkpoints. All data are
//!   plain values (`Send + Sync`, no globals): a proof can be built on one thread while
//!   another evaluates.
//! - Encodings ([`encode`]): JSON and a compact binary form, both strictly decoded.
//!
//! Sources: Wesolowski, "Efficient verifiable delay functions" (EUROCRYPT 2019);
//! Pietrzak, "Simple verifiable delay functions" (ITCS 2019); Boneh, Bunz, Fisch, "A
//! survey of two verifiable delay functions" (2018). Variable time throughout: every value
//! here is public.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod encode;
mod error;
pub mod eval;
pub mod modulus;
pub mod pietrzak;
pub mod prime;
pub mod resume;
pub mod segmented;
pub mod timelock;
pub mod wesolowski;

pub use error::{DecodeError, VdfError};
pub use eval::{eval, EvalOptions, Evaluation, MAX_DELAY};
pub use modulus::Modulus;
pub use pietrzak::{prove_pietrzak, verify_pietrzak};
pub use segmented::{eval_segmented, prove_segmented, verify_segmented};
pub use wesolowski::{prove_wesolowski, prove_wesolowski_simple, verify_wesolowski};
pub use wirespeed_bigint::{CpuFeatures, Kernel, U4096};

/// Which proof to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProofKind {
    /// One group element; verification about 2 x 128 group operations.
    Wesolowski,
    /// ceil(log2 T) group elements; verification about 200 group operations per element.
    Pietrzak,
    /// One Wesolowski proof per segment of the chain, built while the evaluation runs
    /// ([`segmented`]): 2 s - 1 group elements for s <= 64 segments (15 at most with the
    /// default layout); verification s single checks.
    WesolowskiSegmented,
}

impl ProofKind {
    /// The name the encodings and the command line use: "wesolowski", "pietrzak",
    /// "wesolowski-segmented".
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::Wesolowski => "wesolowski",
            ProofKind::Pietrzak => "pietrzak",
            ProofKind::WesolowskiSegmented => "wesolowski-segmented",
        }
    }
}

/// A proof body.
// One value inline (512 bytes) beside a Vec: proofs are built and checked once each, so
// the size difference costs nothing worth a Box in every match.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// pi = |x^floor(2^T / l)|.
    Wesolowski {
        /// pi, in 1..=(N-1)/2.
        pi: U4096,
    },
    /// (mu_0, mu_1, ...), each in 1..=(N-1)/2.
    Pietrzak {
        /// The mu values, one per halving.
        mu: Vec<U4096>,
    },
    /// Segment lengths T_0..T_(s-1), intermediate values x_1..x_(s-1) and one pi per
    /// segment (see [`segmented`]).
    WesolowskiSegmented {
        /// T_j, each >= 1, summing to T; 1..=64 of them.
        lengths: Vec<u64>,
        /// x_1..x_(s-1), each in 1..=(N-1)/2.
        mids: Vec<U4096>,
        /// pi_0..pi_(s-1), each in 1..=(N-1)/2.
        pis: Vec<U4096>,
    },
}

/// A statement y = |x^(2^T) mod N| with its proof: what the encodings carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VdfProof {
    /// N.
    pub modulus: Modulus,
    /// x.
    pub x: U4096,
    /// T.
    pub t: u64,
    /// The canonical output |x^(2^T) mod N|.
    pub y: U4096,
    /// The proof.
    pub proof: Proof,
}

/// Builds a proof of the evaluation's output (checked for consistency with N first), after
/// the evaluation. A segmented proof is built beside the evaluation by
/// [`eval_segmented`]; built here it costs as much as a single Wesolowski proof.
pub fn prove(n: &Modulus, ev: &Evaluation, kind: ProofKind) -> Result<VdfProof, VdfError> {
    let proof = match kind {
        ProofKind::Wesolowski => Proof::Wesolowski {
            pi: prove_wesolowski(n, ev)?,
        },
        ProofKind::Pietrzak => Proof::Pietrzak {
            mu: prove_pietrzak(n, ev)?,
        },
        ProofKind::WesolowskiSegmented => prove_segmented(n, ev)?,
    };
    Ok(VdfProof {
        modulus: n.clone(),
        x: ev.x,
        t: ev.t,
        y: ev.output,
        proof,
    })
}

impl VdfProof {
    /// Verifies the proof in the group of `trusted`, the modulus the caller trusts (the
    /// RSA-2048 challenge number, say, whose order nobody knows): Ok(()) or the reason it
    /// fails: [`VdfError::UntrustedModulus`] when the proof is about another modulus (a
    /// proof carries its modulus, but one in a group of known order, a prime say, can be
    /// forged in seconds, so the modulus must come from the caller), or
    /// [`VdfError::ProofRejected`] when well formed but wrong.
    pub fn verify(&self, trusted: &Modulus) -> Result<(), VdfError> {
        if self.modulus != *trusted {
            return Err(VdfError::UntrustedModulus {
                proof: self.modulus.fingerprint(),
                trusted: trusted.fingerprint(),
            });
        }
        // In the caller's modulus (equal to the proof's), so that its contexts are built
        // for the features the caller chose.
        match &self.proof {
            Proof::Wesolowski { pi } => verify_wesolowski(trusted, &self.x, self.t, &self.y, pi),
            Proof::Pietrzak { mu } => verify_pietrzak(trusted, &self.x, self.t, &self.y, mu),
            Proof::WesolowskiSegmented { lengths, mids, pis } => {
                verify_segmented(trusted, &self.x, self.t, &self.y, lengths, mids, pis)
            }
        }
    }

    /// The proof type.
    pub fn kind(&self) -> ProofKind {
        match self.proof {
            Proof::Wesolowski { .. } => ProofKind::Wesolowski,
            Proof::Pietrzak { .. } => ProofKind::Pietrzak,
            Proof::WesolowskiSegmented { .. } => ProofKind::WesolowskiSegmented,
        }
    }
}

// Proofs may be built on another thread while evaluation continues.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Modulus>();
    send_sync::<Evaluation>();
    send_sync::<VdfProof>();
};

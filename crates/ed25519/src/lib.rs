//! Ed25519 signature verification (RFC 8032) with named rule modes.
//!
//! - [`verify`]: one signature, minimum latency: radix-2^51 point arithmetic, scalar
//!   halving, and the two square roots of decoding and the four half-size products of
//!   the equation run side by side in SIMD lanes (4-lane IFMA, 8-lane IFMA or AVX2,
//!   the best the CPU has; serial without; [`verify_backend`] names the choice).
//! - [`verify_many`]: one verdict per signature, several signatures per register (four
//!   per AVX2 register, eight per AVX-512 IFMA register, or four per ymm IFMA
//!   register; the CPU's features from `wirespeed_util::cpu::CpuFeatures`) and all
//!   cores (rayon); [`verify_many_with`] takes the backend.
//! - [`verify_many_cached`]: the same verdicts with a bounded [`KeyCache`] of decoded
//!   public keys, for traffic where keys repeat.
//! - CPU features: the `_with` entry points ([`verify_with`], [`verify_many_with`],
//!   [`verify_many_here_with`], [`vartime_decode_checked_many_with`]) take the
//!   [`CpuFeatures`] they may use and check every lane backend against them before its
//!   `unsafe` code; this crate never probes the CPU. The forms without features
//!   ([`verify`], [`verify_many`], ...) are convenience wrappers over the process's one
//!   detection (`CpuFeatures::get`), for tests and examples; the engine calls the
//!   `_with` forms.
//! - [`vartime_decode_checked`]: one point encoding decoded with one mode's checks for
//!   the public key or R (the reference for the compiled decoding programs).
//!
//! - [`SigningKey`] ([`sign`]): RFC 8032 signing, constant time with respect to the
//!   secret key and the nonce (fixed-window base multiplication with masked table
//!   reads, the `ct_` scalar arithmetic): the signer of generated traffic and demos.
//!
//! Rules per [`Mode`] are tabulated in docs/ed25519-rules.md. All verification code is
//! variable time: it only ever handles public data; the signing path is [`sign`].

#![cfg_attr(not(test), warn(missing_docs))]

mod cache;
mod checked;
mod halving;
mod lanes;
mod many;
mod mode;
#[allow(missing_docs)] // coordinates are named as in the formulas
pub mod point;
pub mod serial;
pub mod sign;
mod verify;

pub use cache::{CacheStats, KeyCache};
pub use checked::{
    vartime_decode_checked, vartime_decode_checked_many, vartime_decode_checked_many_with,
    Coordinates, Role,
};
pub use many::{
    verify_many, verify_many_cached, verify_many_cached_with, verify_many_here,
    verify_many_here_cached_with, verify_many_here_with, verify_many_with, Item, Lanes,
};
pub use mode::{Mode, UnknownMode, VerifyError};
pub use sign::SigningKey;
pub use verify::{verify, verify_backend, verify_backend_on, verify_with};
/// The CPU features the `_with` entry points take (detected once, in `wirespeed-util`).
pub use wirespeed_field::cpu::CpuFeatures;

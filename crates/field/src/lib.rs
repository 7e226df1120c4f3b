//! Prime-field arithmetic for wirespeed.
//!
//! - [`Fe51`]: GF(2^255-19), one element in five radix-2^51 limbs (serial, u128 products).
//! - [`avx2::Fe26x4`]: GF(2^255-19), four independent elements in the four 64-bit lanes of
//!   AVX2 registers (radix 2^25.5), one lane per signature.
//! - [`ifma::Fe51x8`]: GF(2^255-19), eight elements in the lanes of AVX-512 registers,
//!   multiplied with the 52-bit IFMA instructions.
//! - [`Scalar`]: integers mod the Ed25519 group order L.
//!
//! Every backend implements [`FieldOps`], so the curve code is written once and
//! instantiated per backend. Each module states its own limb bounds.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod fe51;
pub mod scalar;

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod ifma;

pub use fe51::Fe51;
pub use scalar::Scalar;

/// The ring operations the curve formulas need, with the limb-bound contract of
/// [`Fe51`]: `mul`/`square`/`sub`/`neg` return reduced values, `add` of two reduced
/// values may be fed to `mul`, `square` and `sub` (but not added again).
pub trait FieldOps: Copy {
    /// self + b (not reduced).
    fn add(&self, b: &Self) -> Self;
    /// self - b (reduced).
    fn sub(&self, b: &Self) -> Self;
    /// -self (reduced).
    fn neg(&self) -> Self;
    /// self * b (reduced).
    fn mul(&self, b: &Self) -> Self;
    /// self^2 (reduced).
    fn square(&self) -> Self;
}

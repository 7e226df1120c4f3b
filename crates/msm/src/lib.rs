//! BLS12-377 G1 multi-scalar multiplication for zero-knowledge provers.
//!
//! - [`fq`]: the base field (377-bit, Montgomery, six limbs); [`fr`]: scalars.
//! - [`g1`]: points in affine, Jacobian and XYZZ coordinates; curve and subgroup checks.
//! - [`te`]: the twisted Edwards form (a = -1, extended coordinates) of G1.
//! - [`msm()`]: Pippenger with signed digits, Edwards buckets and running sums, on rayon.
//! - [`format`]: arkworks-compatible files for points and scalars.
//! - `gen` (feature `gen`): deterministic random and skewed inputs.
//! - `ark` (feature `arkworks`, on by default): conversions from and to arkworks 0.5
//!   types and an arkworks-shaped call.

#![cfg_attr(not(test), warn(missing_docs))]

#[cfg(feature = "arkworks")]
pub mod ark;
mod batch;
pub mod format;
pub mod fq;
pub mod fr;
pub mod g1;
#[cfg(feature = "gen")]
pub mod gen;
#[cfg(target_arch = "x86_64")]
mod ifma;
pub mod msm;
mod precomputed;
pub mod te;

pub use fq::Fq;
pub use fr::Scalar;
pub use g1::{Affine, Jacobian};
pub use msm::{msm, msm_with, MsmError, Precomputed};
/// The CPU features the `_with` entry points take (detected once, in `wirespeed-util`).
pub use wirespeed_util::cpu::CpuFeatures;
pub use wirespeed_util::lanes::Lanes;

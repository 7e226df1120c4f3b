//! Fixed-width big integers for wirespeed's RSA-group work (VDF, RSA primitives).
//!
//! - [`Uint<L>`]: an unsigned integer of `L` 64-bit limbs (little-endian), for the sizes
//!   in use [`U1024`], [`U2048`], [`U3072`], [`U4096`] and small ones for exponents.
//! - [`MontCtx<L>`]: a Montgomery context for one odd modulus: multiplication and a
//!   dedicated squaring, with conversion in and out of Montgomery form only at the ends
//!   of a chain.
//! - [`DynMontCtx`]: a Montgomery context whose width (1024 to 4096 bits) is chosen at
//!   run time from the modulus, dispatching to `MontCtx<L>` ([`with_width!`]).
//! - [`RsaModulus`]: an odd modulus of 1024 to 4096 bits with its context and the
//!   features it was built for (the VDF's and the accumulators' group modulus).
//! - [`prime`]: the Baillie-PSW probable-prime test on `Uint<L>` (public values).
//! - [`convert`]: `Uint<L>` to and from num-bigint's `BigUint` and padded bytes.
//! - [`constants`]: the RSA-2048 challenge number, the default modulus of the VDF and
//!   of accumulators.
//!
//! Limb bounds and reduction rules are stated in each module.

#![cfg_attr(not(test), warn(missing_docs))]

#[cfg(target_arch = "x86_64")]
pub mod adx;
pub mod constants;
pub mod convert;
pub mod dynmont;
#[cfg(target_arch = "x86_64")]
pub mod fold;
#[cfg(target_arch = "x86_64")]
pub mod ifma;
pub mod modulus;
pub mod mont;
pub mod prime;
pub mod uint;

pub use constants::RSA_2048_HEX;
pub use convert::biguint_to_be_bytes_padded;
pub use dynmont::DynMontCtx;
pub use modulus::{ModulusError, RsaModulus, MAX_MODULUS_BITS, MIN_MODULUS_BITS};
pub use mont::{Kernel, MontCtx, MontError};
pub use uint::{ParseError, Uint};
/// The CPU features the `_with` constructors take (detected once, in `wirespeed-util`).
pub use wirespeed_util::cpu::CpuFeatures;

/// 1024-bit integer.
pub type U1024 = Uint<16>;
/// 2048-bit integer.
pub type U2048 = Uint<32>;
/// 3072-bit integer.
pub type U3072 = Uint<48>;
/// 4096-bit integer.
pub type U4096 = Uint<64>;

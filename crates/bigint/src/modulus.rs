//! [`RsaModulus`]: an odd modulus of 1024 to 4096 bits with its Montgomery context, the
//! group modulus shared by the VDF (`wirespeed_vdf::Modulus`) and the RSA accumulators
//! (`wirespeed_rsa::accumulator::RsaGroup`). It validates the size and parity once,
//! builds the context at the smallest of 1024, 2048, 3072 and 4096 bits that holds n for
//! the [`CpuFeatures`] passed in, and keeps those features for every other context the
//! group's operations build.

use std::fmt;

use num_bigint::BigUint;

use crate::{CpuFeatures, DynMontCtx, Kernel, U4096};

/// Smallest supported modulus size in bits.
pub const MIN_MODULUS_BITS: usize = 1024;
/// Largest supported modulus size in bits.
pub const MAX_MODULUS_BITS: usize = 4096;

/// Why a number is not a supported modulus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModulusError {
    /// Not 1024 to 4096 bits long.
    Size {
        /// Its size in bits.
        bits: usize,
    },
    /// Even.
    Even,
}

impl fmt::Display for ModulusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModulusError::Size { bits } => write!(
                f,
                "{bits}-bit modulus not supported ({MIN_MODULUS_BITS} to {MAX_MODULUS_BITS} bits)"
            ),
            ModulusError::Even => f.write_str("the modulus is even"),
        }
    }
}

impl std::error::Error for ModulusError {}

/// A validated odd modulus of 1024 to 4096 bits with its Montgomery context.
#[derive(Clone, Debug)]
pub struct RsaModulus {
    n: U4096,
    bits: usize,
    ctx: DynMontCtx,
    /// The features the contexts are built for.
    features: CpuFeatures,
}

impl PartialEq for RsaModulus {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n
    }
}

impl Eq for RsaModulus {}

impl RsaModulus {
    /// Validates n (odd, 1024 to 4096 bits) and builds its context for a CPU with
    /// features `f`.
    pub fn new_with(n: &U4096, f: &CpuFeatures) -> Result<Self, ModulusError> {
        let bits = n.bits();
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) {
            return Err(ModulusError::Size { bits });
        }
        if !n.is_odd() {
            return Err(ModulusError::Even);
        }
        // n is odd and above 1 (at least 1024 bits), so the context cannot refuse it;
        // its error is mapped anyway.
        let ctx = DynMontCtx::new_with(n, f).map_err(|_| ModulusError::Even)?;
        Ok(RsaModulus {
            n: *n,
            bits,
            ctx,
            features: f.clone(),
        })
    }

    /// [`RsaModulus::new_with`] for n given as a `BigUint` (any size: too long is
    /// [`ModulusError::Size`]).
    pub fn from_biguint_with(n: &BigUint, f: &CpuFeatures) -> Result<Self, ModulusError> {
        let bits = n.bits() as usize;
        if bits > MAX_MODULUS_BITS {
            return Err(ModulusError::Size { bits });
        }
        Self::new_with(&U4096::from_biguint_wrapping(n), f)
    }

    /// n.
    pub fn value(&self) -> &U4096 {
        &self.n
    }

    /// Size of n in bits.
    pub fn bits(&self) -> usize {
        self.bits
    }

    /// Size of n in bytes: the width of every group element when written out.
    pub fn byte_len(&self) -> usize {
        self.bits.div_ceil(8)
    }

    /// Working width in 64-bit limbs (16, 32, 48 or 64).
    pub fn limbs(&self) -> usize {
        self.ctx.limbs()
    }

    /// The Montgomery context at the working width.
    pub fn ctx(&self) -> &DynMontCtx {
        &self.ctx
    }

    /// The Montgomery kernel n's context runs.
    pub fn kernel(&self) -> Kernel {
        self.ctx.kernel()
    }

    /// The CPU features this modulus' contexts are built for.
    pub fn features(&self) -> &CpuFeatures {
        &self.features
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> CpuFeatures {
        CpuFeatures::none()
    }

    #[test]
    fn sizes_and_parity() {
        let one = U4096::ONE;
        let at = |bits: usize| one.shl(bits - 1).overflowing_add(&one).0;
        for bits in [1024, 1025, 2048, 3000, 4096] {
            let m = RsaModulus::new_with(&at(bits), &none()).expect("odd, in range");
            assert_eq!(m.bits(), bits);
            assert_eq!(m.byte_len(), bits.div_ceil(8));
            assert_eq!(DynMontCtx::limbs_for(bits), Some(m.limbs()));
        }
        assert_eq!(
            RsaModulus::new_with(&at(1023), &none()),
            Err(ModulusError::Size { bits: 1023 })
        );
        let even = one.shl(2000);
        assert_eq!(
            RsaModulus::new_with(&even, &none()),
            Err(ModulusError::Even)
        );
        let big = BigUint::from(1u8) << 5000u32;
        assert_eq!(
            RsaModulus::from_biguint_with(&(big + 1u8), &none()),
            Err(ModulusError::Size { bits: 5001 })
        );
    }
}

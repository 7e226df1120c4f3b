//! [`DynMontCtx`]: one Montgomery context whose width is chosen at run time from the
//! modulus, for code that takes moduli of any size from 2 to 4096 bits (RSA keys, VDF
//! moduli, accumulator groups).
//!
//! It holds a fixed-width [`MontCtx<L>`] of the smallest of 1024, 2048, 3072 and 4096
//! bits (L = 16, 32, 48, 64) that holds n, so every operation runs the fixed-width code
//! with its kernels (portable, ADX, IFMA) and its guarantees: inputs below n, outputs
//! fully reduced, [`DynMontCtx::pow_ct`] constant-time in base and exponent, the
//! `vartime_` operations variable-time in the exponent only.
//!
//! Two ways to use it:
//! - the methods, whose values travel as [`U4096`] (any value below n fits; entering
//!   and leaving the working width is a limb copy, public in its length); convenient
//!   where one operation's cost dwarfs the copy (a power, a verification);
//! - [`with_width!`](crate::with_width), which runs a block of generic code with the
//!   `&MontCtx<L>` itself (the block is compiled once per width), for hot loops that
//!   must stay at the working width (a chain of squarings).

use num_bigint::BigUint;

use wirespeed_util::cpu::CpuFeatures;

use crate::mont::{Kernel, MontCtx, MontError};
use crate::uint::Uint;
use crate::U4096;

/// A Montgomery context at the working width of its modulus (boxed: the widths differ
/// in size). Match on it through [`with_width!`](crate::with_width).
#[derive(Clone, Debug)]
pub enum DynMontCtx {
    /// Moduli of up to 1024 bits.
    W16(Box<MontCtx<16>>),
    /// Moduli of 1025 to 2048 bits.
    W32(Box<MontCtx<32>>),
    /// Moduli of 2049 to 3072 bits.
    W48(Box<MontCtx<48>>),
    /// Moduli of 3073 to 4096 bits.
    W64(Box<MontCtx<64>>),
}

/// Runs `$body` with `$c` bound to the `&MontCtx<L>` inside a `&DynMontCtx` (L = 16, 32,
/// 48 or 64); `$body` is generic code, compiled once per width.
///
/// ```
/// use wirespeed_bigint::{with_width, DynMontCtx, U4096};
/// let ctx = DynMontCtx::new(&U4096::from_u64(1_000_003)).unwrap();
/// let x = U4096::from_u64(5);
/// let y = with_width!(&ctx, c => {
///     let xm = c.to_mont(&x.resize());
///     c.from_mont(&c.sqr_n(&xm, 3)).resize::<64>()
/// });
/// assert_eq!(y, U4096::from_u64(390_625));
/// ```
#[macro_export]
macro_rules! with_width {
    ($ctx:expr, $c:ident => $body:expr) => {
        match $ctx {
            $crate::DynMontCtx::W16(b) => {
                let $c = &**b;
                $body
            }
            $crate::DynMontCtx::W32(b) => {
                let $c = &**b;
                $body
            }
            $crate::DynMontCtx::W48(b) => {
                let $c = &**b;
                $body
            }
            $crate::DynMontCtx::W64(b) => {
                let $c = &**b;
                $body
            }
        }
    };
}

/// The context at width L for n (below 2^(64 L)).
fn boxed<const L: usize>(n: &U4096, f: &CpuFeatures) -> Result<Box<MontCtx<L>>, MontError> {
    MontCtx::new_with(&n.resize::<L>(), f).map(Box::new)
}

/// v narrowed to L limbs (v below 2^(64 L): the high limbs are zero).
#[inline(always)]
fn narrow<const L: usize>(v: &U4096) -> Uint<L> {
    v.resize::<L>()
}

/// v widened to 4096 bits.
#[inline(always)]
fn widen<const L: usize>(v: &Uint<L>) -> U4096 {
    v.resize::<64>()
}

impl DynMontCtx {
    /// Working width in limbs for a modulus of `bits` bits: 16, 32, 48 or 64; None
    /// above 4096 bits.
    pub fn limbs_for(bits: usize) -> Option<usize> {
        match bits {
            0..=1024 => Some(16),
            1025..=2048 => Some(32),
            2049..=3072 => Some(48),
            3073..=4096 => Some(64),
            _ => None,
        }
    }

    /// Convenience wrapper: [`DynMontCtx::new_with`] this process's detected features.
    pub fn new(n: &U4096) -> Result<Self, MontError> {
        Self::new_with(n, CpuFeatures::get())
    }

    /// The context for an odd n > 1 of at most 4096 bits, with the fastest kernel a CPU
    /// with features `f` runs.
    pub fn new_with(n: &U4096, f: &CpuFeatures) -> Result<Self, MontError> {
        Ok(match Self::limbs_for(n.bits()) {
            Some(16) => DynMontCtx::W16(boxed(n, f)?),
            Some(32) => DynMontCtx::W32(boxed(n, f)?),
            Some(48) => DynMontCtx::W48(boxed(n, f)?),
            _ => DynMontCtx::W64(boxed(n, f)?),
        })
    }

    /// Convenience wrapper: [`DynMontCtx::from_biguint_with`] this process's detected
    /// features.
    pub fn from_biguint(n: &BigUint) -> Result<Self, MontError> {
        Self::from_biguint_with(n, CpuFeatures::get())
    }

    /// The context for n given as a `BigUint`, with the fastest kernel a CPU with
    /// features `f` runs; [`MontError::TooWide`] above 4096 bits.
    pub fn from_biguint_with(n: &BigUint, f: &CpuFeatures) -> Result<Self, MontError> {
        let n = U4096::try_from_biguint(n).map_err(|_| MontError::TooWide)?;
        Self::new_with(&n, f)
    }

    /// The same context with another kernel (see [`MontCtx::with_kernel`]).
    pub fn with_kernel(self, kernel: Kernel) -> Self {
        match self {
            DynMontCtx::W16(c) => DynMontCtx::W16(Box::new(c.with_kernel(kernel))),
            DynMontCtx::W32(c) => DynMontCtx::W32(Box::new(c.with_kernel(kernel))),
            DynMontCtx::W48(c) => DynMontCtx::W48(Box::new(c.with_kernel(kernel))),
            DynMontCtx::W64(c) => DynMontCtx::W64(Box::new(c.with_kernel(kernel))),
        }
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        with_width!(self, c => c.kernel())
    }

    /// [`MontCtx::chain_kernel`] for this width.
    pub fn chain_kernel(&self, k: u64) -> &'static str {
        with_width!(self, c => c.chain_kernel(k))
    }

    /// Working width in 64-bit limbs (16, 32, 48 or 64).
    pub fn limbs(&self) -> usize {
        match self {
            DynMontCtx::W16(_) => 16,
            DynMontCtx::W32(_) => 32,
            DynMontCtx::W48(_) => 48,
            DynMontCtx::W64(_) => 64,
        }
    }

    /// log2 of the Montgomery radix R (see [`MontCtx::radix_bits`]).
    pub fn radix_bits(&self) -> usize {
        with_width!(self, c => c.radix_bits())
    }

    /// The modulus n.
    pub fn modulus(&self) -> U4096 {
        with_width!(self, c => widen(c.modulus()))
    }

    /// Size of n in bits.
    pub fn bits(&self) -> usize {
        with_width!(self, c => c.modulus().bits())
    }

    /// 1 in Montgomery form (R mod n).
    pub fn one(&self) -> U4096 {
        with_width!(self, c => widen(&c.one()))
    }

    /// aR mod n, for a < n.
    pub fn to_mont(&self, a: &U4096) -> U4096 {
        with_width!(self, c => widen(&c.to_mont(&narrow(a))))
    }

    /// a R^-1 mod n: leaves Montgomery form.
    pub fn from_mont(&self, a: &U4096) -> U4096 {
        with_width!(self, c => widen(&c.from_mont(&narrow(a))))
    }

    /// a b R^-1 mod n, for a, b < n.
    pub fn mul(&self, a: &U4096, b: &U4096) -> U4096 {
        with_width!(self, c => widen(&c.mul(&narrow(a), &narrow(b))))
    }

    /// a^2 R^-1 mod n, for a < n.
    pub fn sqr(&self, a: &U4096) -> U4096 {
        with_width!(self, c => widen(&c.sqr(&narrow(a))))
    }

    /// a^(2^k) in Montgomery form: k squarings at the working width.
    pub fn sqr_n(&self, a: &U4096, k: u64) -> U4096 {
        with_width!(self, c => widen(&c.sqr_n(&narrow(a), k)))
    }

    /// base^e for base in Montgomery form, constant-time in base and e over the
    /// working width's 64 L exponent bits ([`MontCtx::pow_ct`]); e must be below
    /// 2^(64 L) ([`DynMontCtx::limbs`]): higher bits are not read.
    pub fn pow_ct(&self, base: &U4096, e: &U4096) -> U4096 {
        with_width!(self, c => widen(&c.pow_ct(&narrow(base), &narrow(e))))
    }

    /// base^e for base in Montgomery form and a public exponent of any length
    /// (little-endian limbs); variable time in e ([`MontCtx::vartime_pow`]).
    pub fn vartime_pow(&self, base: &U4096, e: &[u64]) -> U4096 {
        with_width!(self, c => widen(&c.vartime_pow(&narrow(base), e)))
    }

    /// base^e mod n for a plain (not Montgomery) base < n and a public exponent;
    /// variable time in e.
    pub fn vartime_modpow(&self, base: &U4096, e: &[u64]) -> U4096 {
        with_width!(self, c => {
            let b = c.to_mont(&narrow(base));
            widen(&c.from_mont(&c.vartime_pow(&b, e)))
        })
    }

    /// base^e mod n for a plain base < n and a secret e below 2^(64 L), constant-time
    /// in base and e.
    pub fn modpow_ct(&self, base: &U4096, e: &U4096) -> U4096 {
        with_width!(self, c => {
            let b = c.to_mont(&narrow(base));
            widen(&c.from_mont(&c.pow_ct(&b, &narrow(e))))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_is_the_smallest_that_holds_n() {
        for (bits, limbs) in [
            (2, 16),
            (1024, 16),
            (1025, 32),
            (2048, 32),
            (2049, 48),
            (3072, 48),
            (3073, 64),
            (4096, 64),
        ] {
            let n = U4096::ONE.shl(bits - 1).overflowing_add(&U4096::ONE).0;
            let c = DynMontCtx::new(&n).expect("odd n above 1");
            assert_eq!((c.limbs(), c.bits(), c.modulus()), (limbs, bits, n));
        }
        assert_eq!(DynMontCtx::limbs_for(4097), None);
    }

    #[test]
    fn refuses_what_montgomery_cannot_take() {
        assert_eq!(
            DynMontCtx::new(&U4096::from_u64(10)).err(),
            Some(MontError::EvenModulus)
        );
        assert_eq!(
            DynMontCtx::new(&U4096::ONE).err(),
            Some(MontError::ModulusOne)
        );
        let big = BigUint::from(1u8) << 4096u32;
        assert_eq!(
            DynMontCtx::from_biguint(&(big + 1u8)).err(),
            Some(MontError::TooWide)
        );
    }
}

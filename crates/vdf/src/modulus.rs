//! The RSA modulus N and the group the VDF works in.
//!
//! - Any odd N of 1024..=4096 bits. Arithmetic runs in the smallest of `U1024`, `U2048`,
//!   `U3072`, `U4096` that holds N: [`Modulus`] keeps one [`DynMontCtx`] (that width's
//!   Montgomery context) and a `dispatch!` macro instantiates generic code for each of
//!   the four widths.
//!   Public values travel as `U4096` (any value below N fits); conversion to the working
//!   width is a limb copy.
//! - The group is (Z/NZ)* / {1, -1}: every element is named by its canonical
//!   representative |v| = min(v, N - v), in 1..=(N-1)/2. Without the quotient a prover
//!   could claim -y as the output with proof -pi (l is odd, so (-pi)^l x^r = -y) and
//!   Pietrzak's halving would accept a sign flip in mu half the time: -1 is the one known
//!   low-order element of (Z/NZ)*, which both proofs must exclude (see the discussions of
//!   low-order elements in Boneh, Bunz, Fisch, "A survey of two verifiable delay
//!   functions", 2018, and of (Z/NZ)* / {1, -1} in Wesolowski, "Efficient verifiable delay
//!   functions", 2019). Outputs, proof values and hashed intermediate values are canonical; inputs x are any
//!   1 < x < N - 1.
//! - Hardware: [`Modulus::new_with`] (and the other `_with` constructors) build the
//!   context for the [`CpuFeatures`] passed in, and the modulus keeps them: every other
//!   Montgomery context the crate builds for this group (the Wesolowski prime l, the
//!   time-lock primes) uses them too. The plain constructors use the detected features.
//! - The default modulus is the RSA-2048 factoring challenge number (RSA Laboratories,
//!   1991): 617 decimal digits, factorization unknown.

use wirespeed_bigint::{
    CpuFeatures, DynMontCtx, Kernel, ModulusError, RsaModulus, Uint, U1024, U2048, U3072, U4096,
};

use crate::VdfError;

/// The RSA-2048 challenge number, big-endian hex (kept in `wirespeed-bigint`, which the
/// accumulators share). Its decimal expansion (617 digits, 2519590847...2120720357) is
/// checked in the tests.
pub use wirespeed_bigint::RSA_2048_HEX;

/// The supported modulus sizes in bits (`wirespeed_bigint`'s, shared with the
/// accumulators).
pub use wirespeed_bigint::{MAX_MODULUS_BITS, MIN_MODULUS_BITS};

/// Runs `$body` with `$ctx` bound to the modulus' Montgomery context at its working width
/// (`&MontCtx<L>` for L in 16, 32, 48, 64; [`wirespeed_bigint::with_width`]); `$body` is
/// generic code compiled four times.
macro_rules! dispatch {
    ($m:expr, $ctx:ident => $body:expr) => {
        wirespeed_bigint::with_width!($m.ctx(), $ctx => $body)
    };
}
pub(crate) use dispatch;

/// A validated VDF modulus with its Montgomery context (a [`RsaModulus`]: validation,
/// context and features live there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modulus(RsaModulus);

impl Modulus {
    /// Validates N (odd, 1024..=4096 bits) and builds its context.
    pub fn new(n: &U4096) -> Result<Self, VdfError> {
        Self::new_with(n, CpuFeatures::get())
    }

    /// [`Modulus::new`] with the context built for a CPU with features `f`.
    pub fn new_with(n: &U4096, f: &CpuFeatures) -> Result<Self, VdfError> {
        RsaModulus::new_with(n, f)
            .map(Modulus)
            .map_err(|e| match e {
                ModulusError::Size { bits } => VdfError::ModulusSize { bits },
                ModulusError::Even => VdfError::EvenModulus,
            })
    }

    /// N from big-endian bytes (leading zero bytes allowed).
    pub fn from_be_bytes(b: &[u8]) -> Result<Self, VdfError> {
        Self::from_be_bytes_with(b, CpuFeatures::get())
    }

    /// [`Modulus::from_be_bytes`] for a CPU with features `f`.
    pub fn from_be_bytes_with(b: &[u8], f: &CpuFeatures) -> Result<Self, VdfError> {
        let first = b.iter().position(|&x| x != 0).unwrap_or(b.len());
        let n = U4096::from_be_bytes(&b[first..]).map_err(|_| VdfError::ModulusSize {
            bits: 8 * (b.len() - first),
        })?;
        Self::new_with(&n, f)
    }

    /// The RSA-2048 challenge number ([`RSA_2048_HEX`]), the default modulus.
    pub fn rsa2048() -> Self {
        Self::rsa2048_with(CpuFeatures::get())
    }

    /// [`Modulus::rsa2048`] for a CPU with features `f`.
    pub fn rsa2048_with(f: &CpuFeatures) -> Self {
        let n = wirespeed_bigint::constants::rsa_2048().resize::<64>();
        Self::new_with(&n, f).expect("RSA-2048 is an odd 2048-bit number")
    }

    /// The CPU features this modulus' contexts are built for.
    pub fn features(&self) -> &CpuFeatures {
        self.0.features()
    }

    /// The Montgomery kernel N's context runs.
    pub fn kernel(&self) -> Kernel {
        self.0.kernel()
    }

    /// N.
    pub fn value(&self) -> &U4096 {
        self.0.value()
    }

    /// A short name for N: the first 8 bytes of SHA-256 over N's big-endian bytes (its
    /// byte length of them), in hex. Two moduli with the same fingerprint are the same
    /// modulus for any practical purpose; shown to users so they can tell which group a
    /// proof is about.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let bytes = self.value().to_be_bytes();
        let skip = bytes.len().saturating_sub(self.byte_len());
        let digest = Sha256::digest(&bytes[skip..]);
        wirespeed_util::hex::encode(&digest[..8])
    }

    /// Size of N in bits.
    pub fn bits(&self) -> usize {
        self.0.bits()
    }

    /// Size of N in bytes: the width of every value in the encodings and the hashes.
    pub fn byte_len(&self) -> usize {
        self.0.byte_len()
    }

    /// Working width in 64-bit limbs (16, 32, 48 or 64).
    pub fn limbs(&self) -> usize {
        self.0.limbs()
    }

    /// The Montgomery context at the working width.
    pub(crate) fn ctx(&self) -> &DynMontCtx {
        self.0.ctx()
    }

    /// v as `byte_len()` big-endian bytes (v < N).
    pub(crate) fn value_bytes(&self, v: &U4096) -> Vec<u8> {
        let b = v.to_be_bytes();
        b[b.len() - self.byte_len()..].to_vec()
    }

    /// Checks an input x: 1 < x < N - 1.
    pub fn check_input(&self, x: &U4096) -> Result<(), VdfError> {
        let n = self.value();
        if x >= n {
            return Err(VdfError::InputOutOfRange);
        }
        let (n_minus_1, _) = n.overflowing_sub(&U4096::ONE);
        if *x <= U4096::ONE || *x == n_minus_1 {
            return Err(VdfError::TrivialInput);
        }
        Ok(())
    }

    /// The canonical representative |v| = min(v, N - v) of v < N.
    pub fn canonical(&self, v: &U4096) -> U4096 {
        let (neg, _) = self.value().overflowing_sub(v);
        if neg < *v {
            neg
        } else {
            *v
        }
    }

    /// True for 1 <= v <= (N-1)/2: a canonical, nonzero group element.
    pub fn is_canonical_element(&self, v: &U4096) -> bool {
        !v.is_zero() && v < self.value() && self.canonical(v) == *v
    }
}

/// |v| = min(v, N - v) at the working width, for v < N.
pub(crate) fn canon<const L: usize>(n: &Uint<L>, v: &Uint<L>) -> Uint<L> {
    let (neg, _) = n.overflowing_sub(v);
    if neg < *v {
        neg
    } else {
        *v
    }
}

/// Narrows a value below N to the working width.
pub(crate) fn narrow<const L: usize>(v: &U4096) -> Uint<L> {
    v.resize::<L>()
}

/// Widens a working-width value to `U4096`.
pub(crate) fn widen<const L: usize>(v: &Uint<L>) -> U4096 {
    v.resize::<64>()
}

// The working widths the dispatch covers.
const _: () = {
    assert!(U1024::BITS == 1024 && U2048::BITS == 2048);
    assert!(U3072::BITS == 3072 && U4096::BITS == 4096);
};

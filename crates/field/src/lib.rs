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

pub mod cpu;
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

/// x^(2^k), by k squarings.
#[inline(always)]
pub fn square_n<F: FieldOps>(x: &F, k: u32) -> F {
    let mut r = *x;
    for _ in 0..k {
        r = r.square();
    }
    r
}

/// Returns (x^(2^250 - 1), x^11), the shared prefix of inversion and square roots in
/// GF(2^255-19) (the addition chain of ref10 / curve25519-dalek: 250 squarings and 11
/// multiplications). Generic so the serial and lane backends share one chain.
#[inline(always)]
pub fn pow22501<F: FieldOps>(x: &F) -> (F, F) {
    let t0 = x.square(); // 2
    let t1 = square_n(&t0, 2); // 8
    let t2 = x.mul(&t1); // 9
    let t3 = t0.mul(&t2); // 11
    let t4 = t3.square(); // 22
    let t5 = t2.mul(&t4); // 31 = 2^5 - 1
    let t7 = square_n(&t5, 5).mul(&t5); // 2^10 - 1
    let t9 = square_n(&t7, 10).mul(&t7); // 2^20 - 1
    let t11 = square_n(&t9, 20).mul(&t9); // 2^40 - 1
    let t13 = square_n(&t11, 10).mul(&t7); // 2^50 - 1
    let t15 = square_n(&t13, 50).mul(&t13); // 2^100 - 1
    let t17 = square_n(&t15, 100).mul(&t15); // 2^200 - 1
    let t19 = square_n(&t17, 50).mul(&t13); // 2^250 - 1
    (t19, t3)
}

/// x^((p-5)/8) = x^(2^252 - 3), the exponentiation inside square roots (RFC 8032 5.1.3).
#[inline(always)]
pub fn pow_p58<F: FieldOps>(x: &F) -> F {
    let (t19, _) = pow22501(x);
    square_n(&t19, 2).mul(x)
}

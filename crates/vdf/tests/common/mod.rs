//! Helpers shared by the VDF integration tests.
#![allow(dead_code)]

use rand::Rng;
use wirespeed_bigint::Uint;
use wirespeed_vdf::{Modulus, U4096};

/// Unwraps, printing the error's one-line message on failure.
pub fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A random odd number of exactly `bits` bits.
pub fn random_odd(rng: &mut impl Rng, bits: usize) -> U4096 {
    let mut l = [0u64; 64];
    rng.fill(&mut l[..]);
    let mut n = Uint(l).shr(4096 - bits);
    n.0[(bits - 1) / 64] |= 1 << ((bits - 1) % 64);
    n.0[0] |= 1;
    n
}

/// A random modulus of exactly `bits` bits.
pub fn random_modulus(rng: &mut impl Rng, bits: usize) -> Modulus {
    ok(Modulus::new(&random_odd(rng, bits)))
}

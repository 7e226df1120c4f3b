//! Deterministic random inputs: uniform scalars below r, and points [k]G for uniform k
//! from a fixed-base table (32 windows of 8 bits: 32 mixed additions per point), made in
//! parallel chunks whose seeds depend only on (seed, chunk), so the output does not
//! depend on the thread count.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::fr::Scalar;
use crate::g1::{Affine, Jacobian};

/// Elements per independently seeded chunk.
const CHUNK: usize = 4096;

fn rng(seed: u64, stream: u64, chunk: usize) -> ChaCha20Rng {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..16].copy_from_slice(&stream.to_le_bytes());
    s[16..24].copy_from_slice(&(chunk as u64).to_le_bytes());
    ChaCha20Rng::from_seed(s)
}

/// A uniform scalar in [0, r) (rejection sampling on 253-bit values).
pub fn random_scalar(rng: &mut impl Rng) -> Scalar {
    loop {
        let mut l: [u64; 4] = rng.gen();
        l[3] &= (1u64 << 61) - 1;
        if let Some(s) = Scalar::from_limbs(l) {
            return s;
        }
    }
}

/// `n` uniform scalars from `seed`.
pub fn scalars(n: usize, seed: u64) -> Vec<Scalar> {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut r = rng(seed, 1, c);
            let len = CHUNK.min(n - c * CHUNK);
            (0..len).map(move |_| random_scalar(&mut r))
        })
        .collect()
}

/// Skewed scalars like real witness vectors: 50% zero, 25% one, 15% below 2^16 and 10%
/// uniform.
pub fn skewed_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut r = rng(seed, 3, c);
            let len = CHUNK.min(n - c * CHUNK);
            (0..len).map(move |_| match r.gen_range(0..100) {
                0..50 => Scalar::ZERO,
                50..75 => Scalar::from_u64(1),
                75..90 => Scalar::from_u64(r.gen_range(0..1 << 16)),
                _ => random_scalar(&mut r),
            })
        })
        .collect()
}

/// table[j][v - 1] = v 2^(8 j) G for v in 1..=255, affine.
fn base_table() -> Vec<Vec<Affine>> {
    let mut base = Jacobian::from(Affine::generator());
    let mut table = Vec::with_capacity(32);
    for _ in 0..32 {
        let mut row = Vec::with_capacity(255);
        let mut acc = base;
        for _ in 0..255 {
            row.push(acc);
            acc = acc.add(&base);
        }
        table.push(Jacobian::batch_to_affine(&row));
        for _ in 0..8 {
            base = base.double();
        }
    }
    table
}

/// `n` points [k_i] G for uniform k_i from `seed`.
pub fn points(n: usize, seed: u64) -> Vec<Affine> {
    let table = base_table();
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut r = rng(seed, 2, c);
            let len = CHUNK.min(n - c * CHUNK);
            let jac: Vec<Jacobian> = (0..len)
                .map(|_| {
                    let k = random_scalar(&mut r).to_bytes_le();
                    let mut acc = Jacobian::INFINITY;
                    for (j, &byte) in k.iter().enumerate() {
                        if byte != 0 {
                            acc = acc.add_affine(&table[j][byte as usize - 1]);
                        }
                    }
                    acc
                })
                .collect();
            Jacobian::batch_to_affine(&jac)
        })
        .collect()
}

//! The constant-time scalar forms (signing) against the variable-time ones
//! (verification) on random and edge values: wide reduction, 256-bit reduction,
//! products and sums mod L agree exactly.

use rand::{Rng, SeedableRng};
use wirespeed_field::Scalar;

#[test]
fn constant_time_forms_equal_the_variable_time_ones() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(25519);
    let mut wide: Vec<[u8; 64]> = vec![[0; 64], [0xff; 64]];
    // L - 1, the largest scalar.
    let m1 = Scalar::from_bytes_mod_order(&{
        let mut b = [0u8; 32];
        b[0] = 1;
        b
    })
    .neg();
    let mut edge = [0u8; 64];
    edge[..32].copy_from_slice(&m1.to_bytes());
    wide.push(edge);
    for _ in 0..500 {
        let mut b = [0u8; 64];
        rng.fill(&mut b[..]);
        wide.push(b);
    }
    let mut prev = m1;
    for b in &wide {
        let v = Scalar::from_bytes_mod_order_wide(b);
        assert_eq!(Scalar::ct_from_bytes_mod_order_wide(b), v, "{b:02x?}");
        let half: [u8; 32] = b[32..].try_into().unwrap_or([0; 32]);
        assert_eq!(
            Scalar::ct_from_bytes_mod_order(&half),
            Scalar::from_bytes_mod_order(&half)
        );
        assert_eq!(v.ct_mul(&prev), v.mul(&prev));
        assert_eq!(v.ct_add(&prev), v.add(&prev));
        assert_eq!(m1.ct_add(&m1), m1.add(&m1));
        prev = v;
    }
}

//! Keys built for a CPU without features (`CpuFeatures::none()`: the portable Montgomery
//! kernel) and for this CPU (its widest kernel: ADX rows or radix-2^52 IFMA) give the
//! same bytes: private operations, PKCS#1 v1.5 signatures, public operations and
//! accumulator groups, on keys of every supported size from a seeded generator.

use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rsa::pkcs1::{EncodeRsaPrivateKey, EncodeRsaPublicKey};
use rsa::traits::PublicKeyParts;
use wirespeed_rsa::accumulator::RsaGroup;
use wirespeed_rsa::{pkcs1v15, CpuFeatures, Hash, Kernel, PrivateKey, PublicKey};

/// A value below n of n's byte length (the top byte cleared).
fn below(rng: &mut StdRng, size: usize) -> Vec<u8> {
    let mut m = vec![0u8; size];
    rng.fill(&mut m[1..]);
    m
}

#[test]
fn portable_and_widest_kernels_agree() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    let mut rng = StdRng::seed_from_u64(2048);
    for bits in [2048usize, 3072, 4096] {
        let theirs = rsa::RsaPrivateKey::new(&mut rng, bits).expect("key generation");
        let der = theirs.to_pkcs1_der().expect("PKCS#1 DER");
        let pub_der = theirs
            .to_public_key()
            .to_pkcs1_der()
            .expect("PKCS#1 public DER");
        let (scalar, wide) = (
            PrivateKey::from_der_with(der.as_bytes(), &none).expect("key"),
            PrivateKey::from_der_with(der.as_bytes(), widest).expect("key"),
        );
        let (pub_scalar, pub_wide) = (
            PublicKey::from_der_with(pub_der.as_bytes(), &none).expect("key"),
            PublicKey::from_der_with(pub_der.as_bytes(), widest).expect("key"),
        );
        for (k, want) in [
            (scalar.kernel(), Kernel::Portable),
            (scalar.public().kernel(), Kernel::Portable),
            (pub_scalar.kernel(), Kernel::Portable),
            (wide.kernel(), Kernel::best_on(widest)),
            (wide.public().kernel(), Kernel::best_on(widest)),
            (pub_wide.kernel(), Kernel::best_on(widest)),
        ] {
            assert_eq!(k, want, "{bits} bits");
        }
        let size = wide.public().size();
        for i in 0..4 {
            let what = format!("{bits} bits, case {i}, {:?}", wide.kernel());
            let m = below(&mut rng, size);
            let s = wide.raw(&m).expect("private operation");
            assert_eq!(scalar.raw(&m).expect("private operation"), s, "raw, {what}");
            assert_eq!(
                pub_scalar.vartime_raw(&s).expect("public operation"),
                pub_wide.vartime_raw(&s).expect("public operation"),
                "vartime_raw, {what}"
            );
            assert_eq!(pub_wide.vartime_raw(&s).expect("public operation"), m);
            let msg = format!("message {i}");
            assert_eq!(
                pkcs1v15::sign(&scalar, Hash::Sha256, msg.as_bytes()).expect("sign"),
                pkcs1v15::sign(&wide, Hash::Sha256, msg.as_bytes()).expect("sign"),
                "pkcs1v15, {what}"
            );
        }
        let n = BigUint::from_bytes_be(&theirs.n().to_bytes_be());
        let (g_scalar, g_wide) = (
            RsaGroup::new_with(&n, &none).expect("group"),
            RsaGroup::new_with(&n, widest).expect("group"),
        );
        for i in 0..2 {
            let base = BigUint::from_bytes_be(&below(&mut rng, size));
            let e = BigUint::from_bytes_be(&below(&mut rng, 40));
            assert_eq!(
                g_scalar.vartime_pow(&base, &e),
                g_wide.vartime_pow(&base, &e),
                "group power, {bits} bits, case {i}"
            );
        }
    }
}

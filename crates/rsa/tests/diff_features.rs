//! Keys built for a CPU without features (`CpuFeatures::none()`: the portable Montgomery
//! kernel) and for this CPU (its widest kernel: ADX rows or radix-2^52 IFMA) give the
//! same bytes: private operations, PKCS#1 v1.5 signatures, public operations and
//! accumulator groups, on keys of every supported size from a seeded generator; and
//! accumulators in groups built for either give the same values, witnesses, trapdoor
//! witnesses and removals (the trapdoor root's context modulo the element prime is built
//! for the group's features) and the same verdicts; elements hash to the same primes.

use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rsa::pkcs1::{EncodeRsaPrivateKey, EncodeRsaPublicKey};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use wirespeed_rsa::accumulator::{
    hash_to_prime, hash_to_prime_with, verify_element, Accumulator, AccumulatorError, RsaGroup,
    Trapdoor,
};
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

/// Everything an accumulator run produced, to compare across features.
#[derive(Debug, PartialEq)]
struct AccRun {
    value: BigUint,
    witnesses: Vec<BigUint>,
    trapdoor_witnesses: Vec<BigUint>,
    verdicts: Vec<Result<(), AccumulatorError>>,
    after_remove: BigUint,
    removed_verdict: Result<(), AccumulatorError>,
}

fn accumulator_run(
    n: &BigUint,
    trapdoor: &Trapdoor,
    elements: &[Vec<u8>],
    f: &CpuFeatures,
) -> AccRun {
    let group = RsaGroup::new_with(n, f).expect("group");
    assert_eq!(group.features(), f);
    let mut acc = Accumulator::new(group.clone());
    acc.add_batch(elements).expect("add");
    let witnesses = acc.all_witnesses();
    let trapdoor_witnesses: Vec<BigUint> = elements
        .iter()
        .map(|e| acc.trapdoor_witness(e, trapdoor).expect("trapdoor witness"))
        .collect();
    let mut verdicts = vec![];
    for (e, w) in elements.iter().zip(&witnesses) {
        verdicts.push(verify_element(&group, acc.value(), e, w));
        // A wrong witness: must be rejected.
        verdicts.push(verify_element(&group, acc.value(), e, &(w + 1u8)));
    }
    let value = acc.value().clone();
    acc.remove(&elements[0], trapdoor).expect("remove");
    AccRun {
        value,
        trapdoor_witnesses,
        verdicts,
        after_remove: acc.value().clone(),
        // The removed element's old witness against the new value: must be rejected.
        removed_verdict: verify_element(&group, acc.value(), &elements[0], &witnesses[0]),
        witnesses,
    }
}

#[test]
fn accumulator_trapdoor_operations_agree() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    let mut rng = StdRng::seed_from_u64(1024);
    for bits in [1024usize, 2048] {
        let key = rsa::RsaPrivateKey::new(&mut rng, bits).expect("key generation");
        let primes: Vec<BigUint> = key
            .primes()
            .iter()
            .map(|p| BigUint::from_bytes_be(&p.to_bytes_be()))
            .collect();
        let trapdoor = Trapdoor::new(&primes[0], &primes[1]).expect("trapdoor");
        let n = BigUint::from_bytes_be(&key.n().to_bytes_be());
        let elements: Vec<Vec<u8>> = (0..9u32)
            .map(|i| format!("element {i} of {bits}").into_bytes())
            .collect();
        let (scalar, wide) = (
            accumulator_run(&n, &trapdoor, &elements, &none),
            accumulator_run(&n, &trapdoor, &elements, widest),
        );
        assert_eq!(scalar, wide, "{bits} bits");
        // The runs are right, not only equal: trapdoor witnesses are the witnesses, good
        // witnesses verify, wrong ones and a removed element's do not.
        assert_eq!(wide.trapdoor_witnesses, wide.witnesses, "{bits} bits");
        for (i, v) in wide.verdicts.iter().enumerate() {
            let want = if i % 2 == 0 {
                Ok(())
            } else {
                Err(AccumulatorError::WitnessRejected)
            };
            assert_eq!(*v, want, "{bits} bits, verdict {i}");
        }
        assert_ne!(wide.after_remove, wide.value, "{bits} bits");
        assert_eq!(
            wide.removed_verdict,
            Err(AccumulatorError::WitnessRejected),
            "{bits} bits"
        );
    }
}

#[test]
fn elements_hash_to_the_same_primes() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    for i in 0..200u32 {
        let e = format!("element {i}");
        let x = hash_to_prime_with(e.as_bytes(), &none);
        assert_eq!(x, hash_to_prime_with(e.as_bytes(), widest), "{e}");
        assert_eq!(x, hash_to_prime(e.as_bytes()), "{e}");
        assert_eq!(x.bits(), 256, "{e}");
    }
}

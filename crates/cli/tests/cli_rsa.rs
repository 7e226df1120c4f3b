//! `wirespeed rsa sign|verify` end to end, against OpenSSL: signatures made by the CLI
//! verify with OpenSSL and with the CLI; tampered ones exit 1; malformed keys exit 2.

use std::path::PathBuf;

use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::rsa::{Padding, Rsa};
use openssl::sign::{RsaPssSaltlen, Verifier};

mod common;

use common::{unhex, wirespeed};

fn temp(name: &str) -> PathBuf {
    common::temp("rsa", name)
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().expect("utf-8 temp path")
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

#[test]
fn batch_sign_then_batch_verify_with_one_tampered_signature() {
    let rsa = Rsa::generate(2048).expect("keygen");
    let (key, msgs, sigs, verdicts) = (
        temp("bk.pem"),
        temp("msgs.hex"),
        temp("sigs.hex"),
        temp("v.txt"),
    );
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("write");
    let pkey = PKey::from_rsa(rsa).expect("pkey");
    let lines: Vec<String> = (0..25u32)
        .map(|i| i.to_be_bytes().iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    std::fs::write(&msgs, lines.join("\n") + "\n").expect("write");
    let o = wirespeed(&[
        "rsa",
        "batch-sign",
        "--key",
        s(&key),
        "--in",
        s(&msgs),
        "--out",
        s(&sigs),
        "--threads",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["count"], 25);
    assert!(v["per_sec"].as_f64().is_some_and(|x| x > 0.0));
    let text = std::fs::read_to_string(&sigs).expect("read");
    let mut sig_lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(sig_lines.len(), 25);
    // Line i is OpenSSL-valid for message i (input order kept).
    for (i, line) in sig_lines.iter().enumerate() {
        let mut ver = Verifier::new(MessageDigest::sha256(), &pkey).expect("verifier");
        assert!(ver
            .verify_oneshot(&unhex(line), &(i as u32).to_be_bytes())
            .expect("verify"));
    }
    // Each backend named gives the same (deterministic) PKCS#1 v1.5 signatures.
    let sigs2 = temp("sigs2.hex");
    for backend in ["cpu", "gpu"] {
        let o = wirespeed(&[
            "rsa",
            "batch-sign",
            "--key",
            s(&key),
            "--in",
            s(&msgs),
            "--out",
            s(&sigs2),
            "--backend",
            backend,
        ]);
        if backend == "gpu" && !common::ran_on_gpu(&o, "rsa batch-sign --backend gpu") {
            continue;
        }
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            std::fs::read_to_string(&sigs2).expect("read"),
            text,
            "{backend}"
        );
    }
    // Tamper with signature 7.
    let mut bad = unhex(&sig_lines[7]);
    bad[100] ^= 4;
    sig_lines[7] = bad.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(&sigs, sig_lines.join("\n")).expect("write");
    let o = wirespeed(&[
        "rsa",
        "batch-verify",
        "--pub",
        s(&key),
        "--in",
        s(&msgs),
        "--sigs",
        s(&sigs),
        "--verdicts",
        s(&verdicts),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (
            v["count"].as_u64(),
            v["valid"].as_u64(),
            v["invalid"].as_u64()
        ),
        (Some(25), Some(24), Some(1))
    );
    let verdict_lines: Vec<String> = std::fs::read_to_string(&verdicts)
        .expect("read")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(verdict_lines[7], "invalid");
    assert!(verdict_lines
        .iter()
        .enumerate()
        .all(|(i, l)| (i == 7) == (l == "invalid")));
    // A non-hex line is malformed input (exit 2), naming the line.
    std::fs::write(&msgs, "00\nzz\n").expect("write");
    let o = wirespeed(&[
        "rsa",
        "batch-sign",
        "--key",
        s(&key),
        "--in",
        s(&msgs),
        "--out",
        s(&sigs),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 2"));
}

#[test]
fn keys_that_are_not_usable_rsa_keys_say_why_in_plain_words() {
    let text = |b: Vec<u8>| String::from_utf8(b).expect("pem");
    let ed = PKey::generate_ed25519().expect("ed25519");
    let p256 =
        openssl::ec::EcGroup::from_curve_name(openssl::nid::Nid::X9_62_PRIME256V1).expect("P-256");
    let ec = PKey::from_ec_key(openssl::ec::EcKey::generate(&p256).expect("ec")).expect("pkey");
    let rsa = PKey::from_rsa(Rsa::generate(2048).expect("keygen")).expect("pkey");
    let msg = temp("plain.txt");
    std::fs::write(&msg, b"hello").expect("write");
    for (name, pem, says) in [
        (
            "ed25519.pem",
            text(ed.private_key_to_pem_pkcs8().expect("pem")),
            "not an RSA key (found Ed25519)",
        ),
        (
            "encrypted.pem",
            text(
                rsa.private_key_to_pem_pkcs8_passphrase(
                    openssl::symm::Cipher::aes_128_cbc(),
                    b"pw",
                )
                .expect("pem"),
            ),
            "encrypted keys are not supported",
        ),
        (
            "ec.pem",
            text(ec.private_key_to_pem_pkcs8().expect("pem")),
            "not an RSA key (found an EC key)",
        ),
        (
            "ec-public.pem",
            text(ec.public_key_to_pem().expect("pem")),
            "not an RSA key (found an EC key)",
        ),
        ("empty.pem", String::new(), "the key file is empty"),
        (
            "not-pem.pem",
            "hello\n".to_string(),
            "not a PEM key file (no -----BEGIN line)",
        ),
    ] {
        let key = temp(name);
        std::fs::write(&key, pem).expect("write");
        let o = wirespeed(&["rsa", "sign", "--key", s(&key), "--in", s(&msg)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        // The public-key path says the same.
        let o = wirespeed(&[
            "rsa",
            "verify",
            "--pub",
            s(&key),
            "--in",
            s(&msg),
            "--sig",
            s(&msg),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
    }
}

#[test]
fn a_private_key_of_an_unsupported_size_says_its_size() {
    let key = temp("k1024.pem");
    let rsa = Rsa::generate(1024).expect("keygen");
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("write");
    let msg = temp("m1024.txt");
    std::fs::write(&msg, b"hello").expect("write");
    for args in [
        vec!["rsa", "sign", "--key", s(&key), "--in", s(&msg)],
        vec![
            "rsa",
            "verify",
            "--pub",
            s(&key),
            "--in",
            s(&msg),
            "--sig",
            s(&msg),
        ],
    ] {
        let o = wirespeed(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("1024-bit modulus not supported"),
            "{args:?}: {err}"
        );
    }
}

//! Signatures and verifications per second on one core, beside OpenSSL in the same run.
use std::time::Instant;

use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::rsa::Rsa;
use openssl::sign::{Signer, Verifier};
use wirespeed_rsa::{pkcs1v15, Hash, PrivateKey};

fn main() {
    for bits in [2048u32, 3072, 4096] {
        let rsa = Rsa::generate(bits).expect("keygen");
        let pem = String::from_utf8(rsa.private_key_to_pem().expect("pem")).expect("utf8");
        let pkey = PKey::from_rsa(rsa).expect("pkey");
        let key = PrivateKey::from_pem(&pem).expect("parse");
        let msg = b"wirespeed";
        let reps = (400 * 2048 * 2048 / (bits as usize * bits as usize)).max(20);
        let t = Instant::now();
        let mut sig = Vec::new();
        for _ in 0..reps {
            sig = pkcs1v15::sign(&key, Hash::Sha256, msg).expect("sign");
        }
        let ours = reps as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        for _ in 0..reps {
            let mut s = Signer::new(MessageDigest::sha256(), &pkey).expect("signer");
            sig = s.sign_oneshot_to_vec(msg).expect("sign");
        }
        let theirs = reps as f64 / t.elapsed().as_secs_f64();
        let vreps = reps * 20;
        let t = Instant::now();
        for _ in 0..vreps {
            pkcs1v15::verify(key.public(), Hash::Sha256, msg, &sig).expect("verify");
        }
        let ours_v = vreps as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        for _ in 0..vreps {
            let mut v = Verifier::new(MessageDigest::sha256(), &pkey).expect("verifier");
            assert!(v.verify_oneshot(&sig, msg).expect("verify"));
        }
        let theirs_v = vreps as f64 / t.elapsed().as_secs_f64();
        println!(
            "RSA-{bits}: sign {ours:.0}/s vs OpenSSL {theirs:.0}/s ({:.2}x); verify {ours_v:.0}/s vs {theirs_v:.0}/s ({:.2}x)",
            ours / theirs,
            ours_v / theirs_v
        );
    }
}

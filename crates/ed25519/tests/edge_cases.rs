//! Edge cases built from public facts about edwards25519: the 8 small-order points in
//! every encoding (canonical, y >= p, x = 0 with the sign bit set) as A and as R; y >= p
//! encodings of ordinary points; S >= L; mixed-order keys and R; the all-zero key; bad
//! lengths and undecodable points.
//!
//! The expected verdict of every mode comes from its reference, computed here at test
//! time: ed25519-dalek `verify_strict` (strict), ed25519-zebra (zip215), and the literal
//! models in `common` (cofactored-strict, libsodium). Where a construction is meant to be
//! accepted or rejected by a peer, that is asserted too, so a case cannot silently lose
//! its point.

mod common;

use common::{
    add, all_encodings, base_encoding, challenge, check_all, dalek_strict, encode, mul_base,
    noncanonical_ordinary_encodings, random_scalar, sign_raw, small_order_encodings, torsion,
    zebra, Point, Scalar, L_BYTES,
};
use curve25519_dalek::edwards::CompressedEdwardsY;
use curve25519_dalek::scalar::Scalar as DScalar;
use curve25519_dalek::traits::IsIdentity;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wirespeed_ed25519::serial::vartime_decompress;
use wirespeed_ed25519::{
    verify, verify_many_cached_with, verify_many_here_cached_with, verify_many_with, Item,
    KeyCache, Mode, VerifyError,
};

/// One input to every verifier.
#[derive(Clone, Debug)]
struct Case {
    label: String,
    msg: Vec<u8>,
    sig: Vec<u8>,
    pk: Vec<u8>,
}

impl Case {
    fn new(label: impl Into<String>, msg: &[u8], sig: &[u8], pk: &[u8]) -> Case {
        Case {
            label: label.into(),
            msg: msg.to_vec(),
            sig: sig.to_vec(),
            pk: pk.to_vec(),
        }
    }

    /// Checks every mode against its reference; returns the expected verdicts.
    fn check(&self) -> [bool; 4] {
        check_all(&self.label, &self.msg, &self.sig, &self.pk)
    }

    fn ours(&self, mode: Mode) -> Result<(), VerifyError> {
        verify(&self.msg, &self.sig, &self.pk, mode)
    }
}

const STRICT: usize = 0;
const ZIP215: usize = 1;
const COFACTORED_STRICT: usize = 2;
const LIBSODIUM: usize = 3;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn random_msg(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut m = vec![0u8; rng.gen_range(0..80)];
    rng.fill_bytes(&mut m);
    m
}

/// An honest key pair: secret a and the canonical encoding of [a]B.
fn keypair(rng: &mut ChaCha8Rng) -> (Scalar, [u8; 32]) {
    let a = random_scalar(rng);
    (a, base_encoding(&a))
}

/// An honest signature: R = [r]B, S = r + k a.
fn honest(rng: &mut ChaCha8Rng, a: &Scalar, pk: &[u8; 32], msg: &[u8]) -> [u8; 64] {
    let r = random_scalar(rng);
    sign_raw(&base_encoding(&r), pk, &r, a, msg)
}

// ---------------------------------------------------------------------------------------
// Case builders
// ---------------------------------------------------------------------------------------

/// Small-order A in every encoding. With R = [r]B and S = r the cofactored equation holds
/// for any k ([8][k]A = 0), so zip215 accepts; every other mode must reject.
fn small_order_a_cases() -> Vec<(Case, bool)> {
    let mut rng = rng(1);
    let mut out = Vec::new();
    for (i, e) in small_order_encodings().iter().enumerate() {
        for j in 0..3 {
            let msg = random_msg(&mut rng);
            let r = random_scalar(&mut rng);
            let sig = sign_raw(&base_encoding(&r), &e.bytes, &r, &Scalar::ZERO, &msg);
            let label = format!("small-order A #{i} ({}) sig {j}", hex::encode(e.bytes));
            out.push((Case::new(label, &msg, &sig, &e.bytes), true));
            // Off by one in S: rejected by every mode.
            let mut bad = sig;
            bad[32] ^= 1;
            let label = format!("small-order A #{i} bad S {j}");
            out.push((Case::new(label, &msg, &bad, &e.bytes), false));
        }
    }
    out
}

/// Small-order R in every encoding, honest key. S = k a with k over R's bytes as sent:
/// the cofactored equation holds. When R's encoding is not canonical, a second signature
/// hashes the canonical re-encoding instead, which zip215 must reject (k is computed over
/// the bytes as received).
fn small_order_r_cases() -> Vec<(Case, bool)> {
    let mut rng = rng(2);
    let mut out = Vec::new();
    for (i, e) in small_order_encodings().iter().enumerate() {
        for j in 0..3 {
            let (a, pk) = keypair(&mut rng);
            let msg = random_msg(&mut rng);
            let sig = sign_raw(&e.bytes, &pk, &Scalar::ZERO, &a, &msg);
            let label = format!("small-order R #{i} ({}) sig {j}", hex::encode(e.bytes));
            out.push((Case::new(label, &msg, &sig, &pk), true));
            if !e.canonical {
                let canon = CompressedEdwardsY(e.bytes).decompress().unwrap().compress();
                let k = challenge(canon.as_bytes(), &pk, &msg);
                let mut sig2 = sig;
                sig2[32..].copy_from_slice(&k.mul(&a).to_bytes());
                let label = format!("small-order R #{i} k over re-encoded R {j}");
                out.push((Case::new(label, &msg, &sig2, &pk), false));
            }
        }
    }
    out
}

/// Small-order A and R together (every pair of encodings), S = 0: [8](-[k]A - R) = 0, so
/// zip215 accepts all of them.
fn small_order_pair_cases() -> Vec<(Case, bool)> {
    let encs = small_order_encodings();
    let mut out = Vec::new();
    for (i, a) in encs.iter().enumerate() {
        for (j, r) in encs.iter().enumerate() {
            let mut sig = [0u8; 64];
            sig[..32].copy_from_slice(&r.bytes);
            let label = format!("small-order A #{i}, R #{j}, S = 0");
            out.push((Case::new(label, b"pair", &sig, &a.bytes), true));
        }
    }
    out
}

/// The all-zero key (y = 0: a point of order 4) with the all-zero signature, with
/// R = [r]B, S = r, and with a random signature.
fn all_zero_key_cases() -> Vec<(Case, Option<bool>)> {
    let mut rng = rng(3);
    let pk = [0u8; 32];
    let mut out = vec![
        (
            Case::new(
                "all-zero key, all-zero sig, empty msg",
                b"",
                &[0u8; 64],
                &pk,
            ),
            Some(true),
        ),
        (
            Case::new("all-zero key, all-zero sig", b"hello", &[0u8; 64], &pk),
            Some(true),
        ),
    ];
    let r = random_scalar(&mut rng);
    let sig = sign_raw(&base_encoding(&r), &pk, &r, &Scalar::ZERO, b"zero key");
    out.push((
        Case::new("all-zero key, R = [r]B, S = r", b"zero key", &sig, &pk),
        Some(true),
    ));
    let mut sig = [0u8; 64];
    rng.fill_bytes(&mut sig);
    sig[63] &= 0x0f;
    out.push((
        Case::new("all-zero key, random sig", b"zero key", &sig, &pk),
        None,
    ));
    out
}

/// y >= p encodings of points that are not of small order, as A.
fn noncanonical_a_cases() -> Vec<Case> {
    let mut rng = rng(4);
    let mut out = Vec::new();
    for (i, enc) in noncanonical_ordinary_encodings().iter().enumerate() {
        let msg = random_msg(&mut rng);
        let r = random_scalar(&mut rng);
        // R = [r]B, S = r: the equation needs [k]A = 0, which fails for a large-order A.
        let sig = sign_raw(&base_encoding(&r), enc, &r, &Scalar::ZERO, &msg);
        out.push(Case::new(
            format!("y >= p key #{i} ({})", hex::encode(enc)),
            &msg,
            &sig,
            enc,
        ));
        let (b, other_pk) = keypair(&mut rng);
        let sig = honest(&mut rng, &b, &other_pk, &msg);
        out.push(Case::new(
            format!("y >= p key #{i}, someone else's signature"),
            &msg,
            &sig,
            enc,
        ));
    }
    out
}

/// y >= p encodings of points that are not of small order, as R (honest key).
fn noncanonical_r_cases() -> Vec<Case> {
    let mut rng = rng(5);
    let mut out = Vec::new();
    for (i, enc) in noncanonical_ordinary_encodings().iter().enumerate() {
        let (a, pk) = keypair(&mut rng);
        let msg = random_msg(&mut rng);
        let nonce = random_scalar(&mut rng);
        let sig = sign_raw(enc, &pk, &nonce, &a, &msg);
        out.push(Case::new(
            format!("y >= p R #{i} ({})", hex::encode(enc)),
            &msg,
            &sig,
            &pk,
        ));
        let sig = sign_raw(enc, &pk, &Scalar::ZERO, &a, &msg);
        out.push(Case::new(
            format!("y >= p R #{i}, S = k a"),
            &msg,
            &sig,
            &pk,
        ));
    }
    out
}

/// S at and above L: L, L + 1, S + L for a valid S, 2^253 - 1, 2^256 - 1; and L - 1
/// (in range).
fn s_range_cases() -> Vec<(Case, bool)> {
    let mut rng = rng(6);
    let mut out = Vec::new();
    for j in 0..8 {
        let (a, pk) = keypair(&mut rng);
        let msg = random_msg(&mut rng);
        let sig = honest(&mut rng, &a, &pk, &msg);
        let s: [u8; 32] = sig[32..].try_into().unwrap();
        let mut l_minus_1 = L_BYTES;
        l_minus_1[0] -= 1;
        let mut l_plus_1 = L_BYTES;
        l_plus_1[0] += 1;
        let mut top253 = [0xffu8; 32];
        top253[31] = 0x1f;
        let variants: [(&str, [u8; 32], bool); 6] = [
            ("S + L", common::add_le(&s, &L_BYTES), true),
            ("S = L", L_BYTES, true),
            ("S = L + 1", l_plus_1, true),
            ("S = 2^253 - 1", top253, true),
            ("S = 2^256 - 1", [0xff; 32], true),
            ("S = L - 1", l_minus_1, false),
        ];
        out.push((Case::new(format!("valid {j}"), &msg, &sig, &pk), false));
        for (name, s2, out_of_range) in variants {
            let mut sig2 = sig;
            sig2[32..].copy_from_slice(&s2);
            out.push((
                Case::new(format!("{name} ({j})"), &msg, &sig2, &pk),
                out_of_range,
            ));
        }
    }
    out
}

/// [k]T = 0, decided by curve25519-dalek (the expected verdicts come from the peers).
fn k_torsion_is_zero(t: &Point, k: &Scalar) -> bool {
    let t = CompressedEdwardsY(encode(t))
        .decompress()
        .expect("a torsion point's encoding decodes");
    (t * DScalar::from_bytes_mod_order(k.to_bytes())).is_identity()
}

/// Mixed-order keys A = [a]B + T (T of order 2, 4 or 8), signed honestly with a. The
/// cofactored equation holds; the cofactorless one only when [k]T = 0.
fn mixed_order_key_cases() -> Vec<(Case, bool)> {
    let mut rng = rng(7);
    let t = torsion();
    let mut out = Vec::new();
    for (i, ti) in t.iter().enumerate().skip(1) {
        for j in 0..6 {
            let a = random_scalar(&mut rng);
            let pk = encode(&add(&mul_base(&a), ti));
            let msg = random_msg(&mut rng);
            let sig = honest(&mut rng, &a, &pk, &msg);
            let k = challenge(&sig[..32], &pk, &msg);
            let kt_zero = k_torsion_is_zero(ti, &k);
            let label = format!("mixed-order key A = [a]B + [{i}]T8, sig {j}");
            out.push((Case::new(label, &msg, &sig, &pk), kt_zero));
        }
        // Search for a message with [k]T = 0, so that cofactorless modes accept too.
        let a = random_scalar(&mut rng);
        let pk = encode(&add(&mul_base(&a), ti));
        for n in 0u32.. {
            let msg = n.to_le_bytes();
            let sig = honest(&mut rng, &a, &pk, &msg);
            let k = challenge(&sig[..32], &pk, &msg);
            if k_torsion_is_zero(ti, &k) {
                let label = format!("mixed-order key [{i}]T8 with [k]T = 0 (msg {n})");
                out.push((Case::new(label, &msg, &sig, &pk), true));
                break;
            }
        }
    }
    out
}

/// Mixed-order R = [r]B + T, honest key, S = r + k a: only the cofactored equation holds.
fn mixed_order_r_cases() -> Vec<Case> {
    let mut rng = rng(8);
    let t = torsion();
    let mut out = Vec::new();
    for (i, ti) in t.iter().enumerate().skip(1) {
        for j in 0..4 {
            let (a, pk) = keypair(&mut rng);
            let msg = random_msg(&mut rng);
            let r = random_scalar(&mut rng);
            let rb = encode(&add(&mul_base(&r), ti));
            let sig = sign_raw(&rb, &pk, &r, &a, &msg);
            out.push(Case::new(
                format!("mixed-order R = [r]B + [{i}]T8, sig {j}"),
                &msg,
                &sig,
                &pk,
            ));
        }
    }
    out
}

/// 32-byte strings with no point: y values for which (y^2 - 1)/(d y^2 + 1) is not a square.
fn undecodable_encodings() -> Vec<[u8; 32]> {
    let mut out = Vec::new();
    for y in 2u8..60 {
        let mut b = [0u8; 32];
        b[0] = y;
        if CompressedEdwardsY(b).decompress().is_none() {
            out.push(b);
        }
    }
    assert!(out.len() > 5);
    out
}

fn undecodable_cases() -> Vec<Case> {
    let mut rng = rng(9);
    let mut out = Vec::new();
    for (i, enc) in undecodable_encodings().iter().enumerate() {
        let (a, pk) = keypair(&mut rng);
        let msg = random_msg(&mut rng);
        let sig = honest(&mut rng, &a, &pk, &msg);
        out.push(Case::new(format!("undecodable A #{i}"), &msg, &sig, enc));
        let sig = sign_raw(enc, &pk, &Scalar::ZERO, &a, &msg);
        out.push(Case::new(format!("undecodable R #{i}"), &msg, &sig, &pk));
    }
    out
}

fn bad_length_cases() -> Vec<Case> {
    let mut rng = rng(10);
    let (a, pk) = keypair(&mut rng);
    let msg = b"length".to_vec();
    let sig = honest(&mut rng, &a, &pk, &msg);
    let mut long_sig = sig.to_vec();
    long_sig.push(0);
    let mut long_pk = pk.to_vec();
    long_pk.push(0);
    vec![
        Case::new("empty sig", &msg, &[], &pk),
        Case::new("63-byte sig", &msg, &sig[..63], &pk),
        Case::new("65-byte sig", &msg, &long_sig, &pk),
        Case::new("empty key", &msg, &sig, &[]),
        Case::new("31-byte key", &msg, &sig, &pk[..31]),
        Case::new("33-byte key", &msg, &sig, &long_pk),
    ]
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[test]
fn small_order_points_decode_as_an_independent_decoder_says() {
    let encs = small_order_encodings();
    // The blocklist (a public list) covers exactly these encodings once the sign bit is
    // masked, and the canonical ones are the 8 torsion points.
    for e in &encs {
        assert!(common::ge25519_has_small_order(&e.bytes));
        let ours = vartime_decompress(&e.bytes).expect("small-order encodings decode");
        assert!(ours.point.is_small_order(), "{}", hex::encode(e.bytes));
        assert_eq!(ours.is_canonical(), e.canonical, "{}", hex::encode(e.bytes));
        let theirs = CompressedEdwardsY(e.bytes).decompress().unwrap();
        assert_eq!(ours.point.compress(), theirs.compress().to_bytes());
    }
    for t in torsion() {
        assert_eq!(all_encodings(&t).iter().filter(|e| e.canonical).count(), 1);
    }
}

#[test]
fn small_order_a_in_every_encoding() {
    for (c, zip215_accepts) in small_order_a_cases() {
        let want = c.check();
        assert_eq!(want[ZIP215], zip215_accepts, "construction: {}", c.label);
        assert!(!want[STRICT] && !want[COFACTORED_STRICT] && !want[LIBSODIUM]);
        if zip215_accepts {
            // S < L and A decodes, so strict's first failing rule is A's order.
            assert_eq!(
                c.ours(Mode::Strict),
                Err(VerifyError::SmallOrderA),
                "{}",
                c.label
            );
        }
    }
}

#[test]
fn small_order_r_in_every_encoding() {
    for (c, zip215_accepts) in small_order_r_cases() {
        let want = c.check();
        assert_eq!(want[ZIP215], zip215_accepts, "construction: {}", c.label);
        assert!(!want[STRICT] && !want[COFACTORED_STRICT] && !want[LIBSODIUM]);
        // S < L and A is an ordinary point, so strict's first failing rule concerns R.
        let got = c.ours(Mode::Strict);
        assert!(
            matches!(
                got,
                Err(VerifyError::SmallOrderR | VerifyError::NonCanonicalR)
            ),
            "{}: {got:?}",
            c.label
        );
    }
}

#[test]
fn small_order_a_and_r_in_every_pair_of_encodings() {
    let cases = small_order_pair_cases();
    assert_eq!(cases.len(), 14 * 14);
    for (c, zip215_accepts) in cases {
        let want = c.check();
        assert_eq!(want[ZIP215], zip215_accepts, "construction: {}", c.label);
    }
}

#[test]
fn all_zero_key() {
    for (c, zebra_accepts) in all_zero_key_cases() {
        let want = c.check();
        if let Some(z) = zebra_accepts {
            assert_eq!(want[ZIP215], z, "construction: {}", c.label);
        }
        assert!(!want[STRICT] && !want[COFACTORED_STRICT] && !want[LIBSODIUM]);
    }
}

#[test]
fn y_at_least_p_encodings_of_ordinary_points_as_a() {
    let cases = noncanonical_a_cases();
    assert!(cases.len() >= 4, "some y in 2..=18 must be on the curve");
    for c in cases {
        // Both peers accept such a key encoding (the signature is what fails).
        let pk: [u8; 32] = c.pk.clone().try_into().unwrap();
        assert!(ed25519_dalek::VerifyingKey::from_bytes(&pk).is_ok());
        assert!(ed25519_zebra::VerificationKey::try_from(pk).is_ok());
        c.check();
        assert_eq!(
            c.ours(Mode::CofactoredStrict),
            Err(VerifyError::NonCanonicalA),
            "{}",
            c.label
        );
        assert_eq!(c.ours(Mode::Libsodium), Err(VerifyError::NonCanonicalA));
        // Strict and zip215 accept the encoding, so only the equation can fail.
        assert_eq!(c.ours(Mode::Strict), Err(VerifyError::EquationFailed));
        assert_eq!(c.ours(Mode::Zip215), Err(VerifyError::EquationFailed));
    }
}

#[test]
fn y_at_least_p_encodings_of_ordinary_points_as_r() {
    for c in noncanonical_r_cases() {
        let want = c.check();
        assert_eq!(want, [false; 4], "{}", c.label);
        assert_eq!(c.ours(Mode::Zip215), Err(VerifyError::EquationFailed));
        assert_eq!(c.ours(Mode::Strict), Err(VerifyError::NonCanonicalR));
    }
}

#[test]
fn s_out_of_range() {
    for (c, out_of_range) in s_range_cases() {
        let want = c.check();
        if out_of_range {
            assert!(!zebra(&c.msg, &c.sig, &c.pk) && !dalek_strict(&c.msg, &c.sig, &c.pk));
            for m in Mode::ALL {
                assert_eq!(c.ours(m), Err(VerifyError::ScalarOutOfRange), "{}", c.label);
            }
        } else if c.label.starts_with("valid") {
            assert_eq!(want, [true; 4], "{}", c.label);
        } else {
            assert_eq!(want, [false; 4], "{}", c.label);
        }
    }
}

#[test]
fn mixed_order_keys() {
    let cases = mixed_order_key_cases();
    let mut cofactorless_rejects = 0;
    for (c, kt_zero) in &cases {
        let want = c.check();
        assert!(
            want[ZIP215] && want[COFACTORED_STRICT],
            "construction: {}",
            c.label
        );
        assert_eq!(want[STRICT], *kt_zero, "construction: {}", c.label);
        assert_eq!(want[LIBSODIUM], *kt_zero, "construction: {}", c.label);
        if !kt_zero {
            cofactorless_rejects += 1;
        }
    }
    assert!(cofactorless_rejects > cases.len() / 2);
}

#[test]
fn mixed_order_r() {
    for c in mixed_order_r_cases() {
        let want = c.check();
        assert_eq!(
            want,
            [false, true, true, false],
            "construction: {}",
            c.label
        );
    }
}

#[test]
fn undecodable_a_and_r() {
    for c in undecodable_cases() {
        let want = c.check();
        assert_eq!(want, [false; 4], "{}", c.label);
        let expected = if c.label.contains(" A ") {
            VerifyError::InvalidPointA
        } else {
            VerifyError::InvalidPointR
        };
        for m in Mode::ALL {
            // Libsodium never decodes R (it compares bytes), but the verdict is the same.
            if m != Mode::Libsodium || expected == VerifyError::InvalidPointA {
                assert_eq!(c.ours(m), Err(expected), "{} {m}", c.label);
            }
        }
    }
}

#[test]
fn bad_lengths() {
    for c in bad_length_cases() {
        assert_eq!(c.check(), [false; 4], "{}", c.label);
        for m in Mode::ALL {
            assert_eq!(c.ours(m), Err(VerifyError::BadLength), "{} {m}", c.label);
        }
    }
}

fn every_case() -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    cases.extend(small_order_a_cases().into_iter().map(|c| c.0));
    cases.extend(small_order_r_cases().into_iter().map(|c| c.0));
    cases.extend(small_order_pair_cases().into_iter().map(|c| c.0));
    cases.extend(all_zero_key_cases().into_iter().map(|c| c.0));
    cases.extend(noncanonical_a_cases());
    cases.extend(noncanonical_r_cases());
    cases.extend(s_range_cases().into_iter().map(|c| c.0));
    cases.extend(mixed_order_key_cases().into_iter().map(|c| c.0));
    cases.extend(mixed_order_r_cases());
    cases.extend(undecodable_cases());
    cases.extend(bad_length_cases());
    cases
}

#[test]
fn verify_many_matches_verify_on_every_edge_case() {
    let cases = every_case();
    let items: Vec<Item> = cases
        .iter()
        .map(|c| Item {
            msg: &c.msg,
            sig: &c.sig,
            pk: &c.pk,
        })
        .collect();
    for mode in Mode::ALL {
        let single: Vec<_> = cases.iter().map(|c| c.ours(mode)).collect();
        for backend in common::all_backends() {
            let many =
                verify_many_with(&items, mode, backend, wirespeed_ed25519::CpuFeatures::get());
            assert_eq!(many.len(), cases.len());
            for i in 0..cases.len() {
                assert_eq!(
                    many[i], single[i],
                    "{}: mode {mode} backend {backend:?}",
                    cases[i].label
                );
            }
        }
    }
}

/// The key cache never changes a verdict: every edge case, in every mode and on every
/// backend, through one cache shared by all of them (so an encoding cached while
/// checking one mode is reused by the others), with the items twice over (the second
/// pass hits) and with a cache small enough to evict all the time.
#[test]
fn verify_many_cached_matches_verify_on_every_edge_case() {
    let cases = every_case();
    let mut items: Vec<Item> = cases
        .iter()
        .map(|c| Item {
            msg: &c.msg,
            sig: &c.sig,
            pk: &c.pk,
        })
        .collect();
    items.extend(items.clone().into_iter().rev());
    let n = cases.len();
    let index = |i: usize| if i < n { i } else { 2 * n - 1 - i };
    let cpu = wirespeed_ed25519::CpuFeatures::get();
    for capacity in [0, 1 << 16] {
        let cache = KeyCache::new(capacity);
        for mode in Mode::ALL {
            let single: Vec<_> = cases.iter().map(|c| c.ours(mode)).collect();
            for backend in common::all_backends() {
                let many = verify_many_cached_with(&items, mode, backend, cpu, &cache);
                let mut here = vec![Ok(()); items.len()];
                verify_many_here_cached_with(&items, mode, backend, cpu, &cache, &mut here);
                for (i, (m, h)) in many.iter().zip(&here).enumerate() {
                    let want = &single[index(i)];
                    let label = &cases[index(i)].label;
                    assert_eq!(
                        m, want,
                        "{label}: mode {mode} backend {backend:?} cache {capacity}"
                    );
                    assert_eq!(h, want, "{label}: here, mode {mode} backend {backend:?}");
                }
            }
        }
        let st = cache.stats();
        assert!(st.hits > 0 && st.misses > 0, "{st:?}");
        assert!(st.len <= st.capacity, "{st:?}");
    }
}

//! Shared helpers for the Ed25519 integration tests.
//!
//! - Peer verdicts: ed25519-dalek 2.x `VerifyingKey::from_bytes` + `verify_strict` (the
//!   reference for `strict`) and ed25519-zebra 4.x `VerificationKey::try_from` + `verify`
//!   (the reference for `zip215`).
//! - Reference models for `cofactored-strict` and `libsodium`, written on curve25519-dalek
//!   primitives so that they share no code with the verifier under test. The libsodium
//!   model follows `crypto_sign_ed25519_verify_detached` step by step, including its
//!   byte-level helpers (`sc25519_is_canonical`, `ge25519_is_canonical`,
//!   `ge25519_has_small_order`), ported as written.
//! - The small-order points of edwards25519 and every encoding of them, and a signer that
//!   can publish any key encoding and any R (`wirespeed_sigdata::edge`, whose sets are
//!   pinned there to digests recorded from a curve25519-dalek implementation). The models
//!   hash and reduce k themselves ([`model_challenge`]), on curve25519-dalek.

#![allow(dead_code)]

use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar as DScalar;
use curve25519_dalek::traits::IsIdentity;
use wirespeed_ed25519::{Lanes, Mode};
// Not every test file uses every builder.
#[allow(unused_imports)]
pub use wirespeed_sigdata::edge::{
    add, add_le, all_encodings, base_encoding, challenge, challenge_hash, encode, mul_base,
    noncanonical_ordinary_encodings, order8_point, random_scalar, sign_raw, small_order_encodings,
    torsion, Encoding, Point, Scalar, L_BYTES, ORDER8_Y, P_BYTES,
};

/// y of a point of order 8, as it stands in libsodium's blocklist (the same point as
/// `ORDER8_Y`).
pub const ORDER8_Y_HEX: &str = "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05";

/// Decodes hex of any length (test constants only).
pub fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("test constant is valid hex")
}

/// Decodes 64 hex digits.
pub fn unhex32(s: &str) -> [u8; 32] {
    unhex(s).try_into().expect("32 bytes")
}

// ---------------------------------------------------------------------------------------
// Peers
// ---------------------------------------------------------------------------------------

/// ed25519-dalek 2.x: `VerifyingKey::from_bytes` then `verify_strict`.
pub fn dalek_strict(msg: &[u8], sig: &[u8], pk: &[u8]) -> bool {
    let Ok(pk) = <&[u8; 32]>::try_from(pk) else {
        return false;
    };
    let Ok(sig) = ed25519_dalek::Signature::from_slice(sig) else {
        return false;
    };
    let Ok(vk) = ed25519_dalek::VerifyingKey::from_bytes(pk) else {
        return false;
    };
    vk.verify_strict(msg, &sig).is_ok()
}

/// ed25519-zebra 4.x: `VerificationKey::try_from(bytes)` then `verify` (ZIP 215 rules).
pub fn zebra(msg: &[u8], sig: &[u8], pk: &[u8]) -> bool {
    let Ok(vk) = ed25519_zebra::VerificationKey::try_from(pk) else {
        return false;
    };
    let Ok(sig) = <[u8; 64]>::try_from(sig) else {
        return false;
    };
    vk.verify(&ed25519_zebra::Signature::from_bytes(&sig), msg)
        .is_ok()
}

// ---------------------------------------------------------------------------------------
// Reference models
// ---------------------------------------------------------------------------------------

/// True iff bits 0..254 of `b`, as an integer, are >= p (compared from the top byte down).
pub fn y_ge_p(b: &[u8; 32]) -> bool {
    for i in (0..32).rev() {
        let v = if i == 31 { b[i] & 0x7f } else { b[i] };
        if v != P_BYTES[i] {
            return v > P_BYTES[i];
        }
    }
    true
}

/// True iff the point has x = 0 (P = -P exactly when x = 0).
pub fn x_is_zero(p: &EdwardsPoint) -> bool {
    *p == -p
}

/// Decoding under the canonical rules: y < p, the point exists, and not "negative zero"
/// (x = 0 with the sign bit set).
pub fn decode_canonical(b: &[u8; 32]) -> Option<EdwardsPoint> {
    if y_ge_p(b) {
        return None;
    }
    let p = CompressedEdwardsY(*b).decompress()?;
    if b[31] >> 7 == 1 && x_is_zero(&p) {
        return None;
    }
    Some(p)
}

/// k = SHA-512(R || A || M) mod L over the bytes as given, reduced by curve25519-dalek
/// (the models share no arithmetic with the verifier under test).
pub fn model_challenge(r: &[u8], a: &[u8], msg: &[u8]) -> DScalar {
    DScalar::from_bytes_mod_order_wide(&challenge_hash(r, a, msg))
}

/// The cofactored-strict rules, literally: S < L; A and R canonical, decodable and not of
/// small order; [8]([S]B - [k]A - R) = 0 with k over the bytes as given.
pub fn model_cofactored_strict(msg: &[u8], sig: &[u8], pk: &[u8]) -> bool {
    let (Ok(sig), Ok(pk)) = (<&[u8; 64]>::try_from(sig), <&[u8; 32]>::try_from(pk)) else {
        return false;
    };
    let r_bytes: [u8; 32] = sig[..32].try_into().expect("32 bytes");
    let s_bytes: [u8; 32] = sig[32..].try_into().expect("32 bytes");
    let Some(s) = Option::<DScalar>::from(DScalar::from_canonical_bytes(s_bytes)) else {
        return false;
    };
    let Some(a) = decode_canonical(pk) else {
        return false;
    };
    if a.is_small_order() {
        return false;
    }
    let Some(r) = decode_canonical(&r_bytes) else {
        return false;
    };
    if r.is_small_order() {
        return false;
    }
    let k = model_challenge(&r_bytes, pk, msg);
    let q = EdwardsPoint::vartime_double_scalar_mul_basepoint(&k, &-a, &s);
    (q - r).mul_by_cofactor().is_identity()
}

/// libsodium's `sc25519_is_canonical`: s < L, by the borrow of s - L from the top byte.
fn sc25519_is_canonical(s: &[u8]) -> bool {
    let mut c: u8 = 0;
    let mut n: u8 = 1;
    let mut i = 32;
    loop {
        i -= 1;
        // (s[i] - L[i]) >> 8 is -1 (all ones) when s[i] < L[i], as C's int arithmetic.
        c |= ((((s[i] as i32) - (L_BYTES[i] as i32)) >> 8) as u8) & n;
        n &= ((((s[i] ^ L_BYTES[i]) as i32) - 1) >> 8) as u8;
        if i == 0 {
            break;
        }
    }
    c != 0
}

/// libsodium's `ge25519_is_canonical`: false iff bytes 1..30 are 0xff, byte 31 is 0x7f
/// after masking the sign bit, and byte 0 is >= 0xed (that is, y >= p).
fn ge25519_is_canonical(s: &[u8; 32]) -> bool {
    let mut c: u32 = ((s[31] & 0x7f) ^ 0x7f) as u32;
    for i in (1..=30).rev() {
        c |= (s[i] ^ 0xff) as u32;
    }
    let c = (c.wrapping_sub(1) >> 8) & 0xff;
    let d = ((0xedu32 - 1).wrapping_sub(s[0] as u32) >> 8) & 0xff;
    1 - (c & d & 1) == 1
}

/// libsodium's small-order blocklist: 0, 1, the two order-8 y values, p - 1, p, p + 1.
const BLOCKLIST: [&str; 7] = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0100000000000000000000000000000000000000000000000000000000000000",
    ORDER8_Y_HEX,
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
];

/// libsodium's `ge25519_has_small_order`: the encoding, with the sign bit of byte 31
/// masked, equals a blocklist entry.
pub fn ge25519_has_small_order(s: &[u8]) -> bool {
    BLOCKLIST.iter().any(|e| {
        let e = unhex32(e);
        s[..31] == e[..31] && (s[31] & 0x7f) == e[31]
    })
}

/// libsodium `crypto_sign_ed25519_verify_detached` (1.0.18 and later, without
/// ED25519_COMPAT), step by step. The C API takes a 64-byte signature and a 32-byte key,
/// so other lengths are rejected.
pub fn model_libsodium(msg: &[u8], sig: &[u8], pk: &[u8]) -> bool {
    let (Ok(sig), Ok(pk)) = (<&[u8; 64]>::try_from(sig), <&[u8; 32]>::try_from(pk)) else {
        return false;
    };
    if (sig[63] & 240) != 0 && !sc25519_is_canonical(&sig[32..]) {
        return false;
    }
    if ge25519_has_small_order(&sig[..32]) {
        return false;
    }
    if !ge25519_is_canonical(pk) || ge25519_has_small_order(pk) {
        return false;
    }
    // ge25519_frombytes_negate_vartime: fails only when no point has this y.
    let Some(a) = CompressedEdwardsY(*pk).decompress() else {
        return false;
    };
    let h = model_challenge(&sig[..32], pk, msg);
    // S < L here (checked above, or its top four bits are clear), so this is S itself.
    let s = DScalar::from_bytes_mod_order(sig[32..].try_into().expect("32 bytes"));
    let r = EdwardsPoint::vartime_double_scalar_mul_basepoint(&h, &-a, &s);
    r.compress().to_bytes()[..] == sig[..32]
}

/// The expected verdict of every mode, from the peers and the models, in `Mode::ALL`
/// order.
pub fn expected(msg: &[u8], sig: &[u8], pk: &[u8]) -> [bool; 4] {
    let (cofactored_strict, libsodium) = models(msg, sig, pk);
    [
        dalek_strict(msg, sig, pk),
        zebra(msg, sig, pk),
        cofactored_strict,
        libsodium,
    ]
}

/// Both models at the cost of one double-scalar multiplication: the same rules as
/// [`model_cofactored_strict`] and [`model_libsodium`], sharing k and [S]B - [k]A (both
/// hash R || A || M over the bytes as given, and both compute that point the same way).
pub fn models(msg: &[u8], sig: &[u8], pk: &[u8]) -> (bool, bool) {
    let (Ok(sig), Ok(pk)) = (<&[u8; 64]>::try_from(sig), <&[u8; 32]>::try_from(pk)) else {
        return (false, false);
    };
    let r_bytes: [u8; 32] = sig[..32].try_into().expect("32 bytes");
    let s_bytes: [u8; 32] = sig[32..].try_into().expect("32 bytes");
    let ls_s_ok = (sig[63] & 240) == 0 || sc25519_is_canonical(&sig[32..]);
    let Some(s) = Option::<DScalar>::from(DScalar::from_canonical_bytes(s_bytes)) else {
        assert!(!ls_s_ok, "libsodium's S check disagrees with S < L");
        return (false, false);
    };
    let Some(a) = CompressedEdwardsY(*pk).decompress() else {
        return (false, false);
    };
    let cs_pre = decode_canonical(pk).is_some()
        && !a.is_small_order()
        && decode_canonical(&r_bytes).is_some_and(|r| !r.is_small_order());
    let ls_pre = ls_s_ok
        && !ge25519_has_small_order(&r_bytes)
        && ge25519_is_canonical(pk)
        && !ge25519_has_small_order(pk);
    if !cs_pre && !ls_pre {
        return (false, false);
    }
    let k = model_challenge(&r_bytes, pk, msg);
    let q = EdwardsPoint::vartime_double_scalar_mul_basepoint(&k, &-a, &s);
    let cs = cs_pre && {
        let r = decode_canonical(&r_bytes).expect("checked above");
        (q - r).mul_by_cofactor().is_identity()
    };
    let ls = ls_pre && q.compress().to_bytes() == r_bytes;
    (cs, ls)
}

/// The expected verdict of one mode.
pub fn expected_for(mode: Mode, msg: &[u8], sig: &[u8], pk: &[u8]) -> bool {
    match mode {
        Mode::Strict => dalek_strict(msg, sig, pk),
        Mode::Zip215 => zebra(msg, sig, pk),
        Mode::CofactoredStrict => model_cofactored_strict(msg, sig, pk),
        Mode::Libsodium => model_libsodium(msg, sig, pk),
    }
}

/// Our verdict in every mode, asserted equal to the expected one; returns the verdicts.
#[track_caller]
pub fn check_all(label: &str, msg: &[u8], sig: &[u8], pk: &[u8]) -> [bool; 4] {
    let want = expected(msg, sig, pk);
    for (i, m) in Mode::ALL.iter().enumerate() {
        let got = wirespeed_ed25519::verify(msg, sig, pk, *m);
        assert_eq!(
            got.is_ok(),
            want[i],
            "{label}: mode {m}: ours {got:?}, reference accepts = {}\n  msg {}\n  sig {}\n  pk  {}",
            want[i],
            hex::encode(msg),
            hex::encode(sig),
            hex::encode(pk)
        );
    }
    want
}

// ---------------------------------------------------------------------------------------
// Small-order points and signers
// ---------------------------------------------------------------------------------------

/// Every `verify_many` backend to compare with `verify`: `Auto` and every concrete one
/// (a backend this CPU lacks falls back to serial, which must give the same verdicts).
pub fn all_backends() -> Vec<Lanes> {
    let mut v = vec![Lanes::Auto];
    v.extend(Lanes::CONCRETE);
    v
}

//! A single Wesolowski proof in the version 1 encodings (JSON and binary), written before
//! segmented proofs existed (RSA-2048, x = 3, T = 1000): it still decodes, verifies, and
//! re-encodes to the same bytes, and today's prover still builds the same pi.

mod common;

use common::ok;

use wirespeed_vdf::{eval, prove, EvalOptions, Modulus, ProofKind, VdfProof, U4096};

const JSON: &str = include_str!("data/wesolowski-v1.json");
const BIN: &[u8] = include_bytes!("data/wesolowski-v1.bin");

#[test]
fn version_1_proof_still_verifies() {
    let n = Modulus::rsa2048();
    let from_json = ok(VdfProof::from_json(JSON.trim_end()));
    let from_bin = ok(VdfProof::from_bytes(BIN));
    assert_eq!(from_json, from_bin);
    assert_eq!(from_json.kind(), ProofKind::Wesolowski);
    assert_eq!((from_json.t, from_json.x), (1000, U4096::from_u64(3)));
    ok(from_json.verify(&n));
    // The encoders still write version 1 for this type, byte for byte.
    assert_eq!(BIN[0], 1);
    assert_eq!(from_json.to_json(), JSON.trim_end());
    assert_eq!(from_json.to_bytes(), BIN);
    // And the prover still builds it.
    let ev = ok(eval(&n, &U4096::from_u64(3), 1000, &EvalOptions::default()));
    assert_eq!(ok(prove(&n, &ev, ProofKind::Wesolowski)), from_json);
}

//! Encodings of segmented proofs (version 2): round trips, the version rules (a segmented
//! proof needs version 2; version 2 readers take every type), and the strict decoders'
//! rejections, each with its typed error, list lengths refused before they are stored;
//! random corruptions never panic.

mod common;

use common::ok;

use rand::{Rng, SeedableRng};
use wirespeed_vdf::segmented::MAX_SEGMENTS;
use wirespeed_vdf::{
    eval, eval_segmented, prove, DecodeError, EvalOptions, Modulus, Proof, ProofKind, VdfError,
    VdfProof, U4096,
};

fn segmented(t: u64, k: u64) -> VdfProof {
    let o = EvalOptions {
        checkpoint_every: k,
        progress: None,
    };
    ok(eval_segmented(
        &Modulus::rsa2048(),
        &U4096::from_u64(3),
        t,
        &o,
    ))
    .1
}

fn json_err(s: &str) -> DecodeError {
    match VdfProof::from_json(s) {
        Ok(_) => panic!("accepted: {s}"),
        Err(e) => {
            assert!(!e.to_string().is_empty() && !e.to_string().contains('\n'));
            e
        }
    }
}

fn bin_err(b: &[u8]) -> DecodeError {
    match VdfProof::from_bytes(b) {
        Ok(_) => panic!("accepted {} bytes", b.len()),
        Err(e) => e,
    }
}

fn edit(json: &str, from: &str, to: &str) -> String {
    assert!(json.contains(from), "{from} not in {json}");
    json.replacen(from, to, 1)
}

#[test]
fn round_trips_and_versions() {
    for (t, k) in [(1, 0), (9, 0), (300, 10), (5000, 0)] {
        let p = segmented(t, k);
        let (json, bin) = (p.to_json(), p.to_bytes());
        assert!(json.starts_with("{\"version\":2,"), "{json}");
        assert_eq!((bin[0], bin[1]), (2, 3));
        assert_eq!(ok(VdfProof::from_json(&json)), p);
        assert_eq!(ok(VdfProof::from_bytes(&bin)), p);
        ok(p.verify(&Modulus::rsa2048()));
    }
    // Version 2 documents may hold the older types; version 1 ones not the new one.
    let n = Modulus::rsa2048();
    let ev = ok(eval(&n, &U4096::from_u64(3), 50, &EvalOptions::default()));
    for kind in [ProofKind::Wesolowski, ProofKind::Pietrzak] {
        let p = ok(prove(&n, &ev, kind));
        let (json, mut bin) = (p.to_json(), p.to_bytes());
        assert_eq!(bin[0], 1);
        assert_eq!(
            ok(VdfProof::from_json(&edit(&json, "{", "{\"version\":2,"))),
            p
        );
        assert_eq!(
            ok(VdfProof::from_json(&edit(&json, "{", "{\"version\":1,"))),
            p
        );
        bin[0] = 2;
        assert_eq!(ok(VdfProof::from_bytes(&bin)), p);
    }
    let p = segmented(300, 10);
    let (json, mut bin) = (p.to_json(), p.to_bytes());
    assert!(matches!(
        json_err(&edit(&json, "\"version\":2,", "")),
        DecodeError::UnknownProofType(_)
    ));
    assert!(matches!(
        json_err(&edit(&json, "\"version\":2", "\"version\":1")),
        DecodeError::UnknownProofType(_)
    ));
    assert_eq!(
        json_err(&edit(&json, "\"version\":2", "\"version\":3")),
        DecodeError::Version(3)
    );
    bin[0] = 1;
    assert_eq!(bin_err(&bin), DecodeError::UnknownProofType("3".into()));
    bin[0] = 3;
    assert_eq!(bin_err(&bin), DecodeError::Version(3));
}

#[test]
fn json_rejections() {
    // A first segment of at least 128 squarings, so that pi_0 is not 1.
    let p = segmented(3000, 10);
    let j = p.to_json();
    let Proof::WesolowskiSegmented { lengths, mids, pis } = &p.proof else {
        unreachable!()
    };
    let invalid = |field: &'static str| move |e: DecodeError| matches!(e, DecodeError::Invalid { field: f, .. } if f == field);
    // Fields of another type, missing fields.
    assert!(matches!(
        json_err(&edit(&j, "\"lengths\"", "\"pi\":\"5\",\"lengths\"")),
        DecodeError::ProofFields(_)
    ));
    let no_mids = j.replace(&format!(",\"mids\":[{}]", quoted(mids)), "");
    assert!(matches!(json_err(&no_mids), DecodeError::ProofFields(_)));
    assert!(matches!(
        json_err(&edit(
            &j,
            "\"type\":\"wesolowski-segmented\"",
            "\"type\":\"wesolowski\""
        )),
        DecodeError::ProofFields(_)
    ));
    // Lengths that do not fit T, counts that do not match, values out of range.
    let lens = |l: &[u64]| {
        let v: Vec<String> = l.iter().map(u64::to_string).collect();
        format!("\"lengths\":[{}]", v.join(","))
    };
    let orig = lens(lengths);
    let mut l = lengths.clone();
    l[0] += 1;
    assert!(invalid("lengths")(json_err(&edit(&j, &orig, &lens(&l)))));
    l[0] -= 1;
    l[1] = 0;
    assert!(invalid("lengths")(json_err(&edit(&j, &orig, &lens(&l)))));
    assert!(invalid("lengths")(json_err(&edit(
        &j,
        &orig,
        "\"lengths\":[]"
    ))));
    assert!(matches!(
        json_err(&edit(&j, &orig, "\"lengths\":[-1]")),
        DecodeError::Json(_)
    ));
    assert!(invalid("lengths")(json_err(&edit(
        &j,
        &format!("\"{}\",", pis[0].to_hex()),
        ""
    ))));
    let n = p.modulus.value();
    let big = n.overflowing_sub(&mids[0]).0; // -x_1: not canonical
    assert!(invalid("mids")(json_err(&edit(
        &j,
        &mids[0].to_hex(),
        &big.to_hex()
    ))));
    assert!(invalid("pis")(json_err(&edit(
        &j,
        &pis[0].to_hex(),
        &n.overflowing_sub(&pis[0]).0.to_hex()
    ))));
    assert!(pis[0].bits() > 1000);
    assert!(matches!(
        json_err(&edit(&j, &pis[0].to_hex(), "0x12")),
        DecodeError::BadHex { field: "pis", .. }
    ));
    // Oversized lists are refused while parsing, before the values are checked.
    let many = |name: &str, item: &str| {
        let v = vec![item; MAX_SEGMENTS + 1].join(",");
        let from = match name {
            "lengths" => orig.clone(),
            "mids" => format!("\"mids\":[{}]", quoted(mids)),
            _ => format!("\"pis\":[{}]", quoted(pis)),
        };
        edit(&j, &from, &format!("\"{name}\":[{v}]"))
    };
    for (name, item) in [("lengths", "1"), ("mids", "\"5\""), ("pis", "\"7\"")] {
        assert_eq!(
            json_err(&many(name, item)),
            DecodeError::TooManySegments {
                count: MAX_SEGMENTS + 1,
                max: MAX_SEGMENTS
            },
            "{name}"
        );
    }
}

fn quoted(v: &[U4096]) -> String {
    let q: Vec<String> = v.iter().map(|m| format!("\"{}\"", m.to_hex())).collect();
    q.join(",")
}

#[test]
fn binary_rejections() {
    let p = segmented(300, 10);
    let b = p.to_bytes();
    let m = p.modulus.byte_len();
    let fixed = 4 + m + 8 + 2 * m;
    let s = b[fixed] as usize;
    // Count byte: 0, too many, more than the bytes present.
    let mut c = b.clone();
    c[fixed] = 0;
    assert!(matches!(
        bin_err(&c),
        DecodeError::Invalid {
            field: "lengths",
            error: VdfError::SegmentLayout(_)
        }
    ));
    c[fixed] = MAX_SEGMENTS as u8 + 1;
    assert_eq!(
        bin_err(&c),
        DecodeError::TooManySegments {
            count: MAX_SEGMENTS + 1,
            max: MAX_SEGMENTS
        }
    );
    c[fixed] = 255;
    assert!(matches!(bin_err(&c), DecodeError::TooManySegments { .. }));
    c[fixed] = s as u8 + 1;
    assert!(matches!(bin_err(&c), DecodeError::Truncated { .. }));
    c[fixed] = s as u8 - 1;
    assert!(matches!(bin_err(&c), DecodeError::TrailingBytes(_)));
    assert!(matches!(
        bin_err(&b[..fixed]),
        DecodeError::Truncated { .. }
    ));
    assert!(matches!(
        bin_err(&b[..b.len() - 1]),
        DecodeError::Truncated { .. }
    ));
    let mut c = b.clone();
    c.push(0);
    assert_eq!(bin_err(&c), DecodeError::TrailingBytes(1));
    // A length changed (sum no longer T), a length of 0.
    let mut c = b.clone();
    c[fixed + 8] ^= 1;
    assert!(matches!(
        bin_err(&c),
        DecodeError::Invalid {
            field: "lengths",
            ..
        }
    ));
    let mut c = b.clone();
    c[fixed + 1..fixed + 9].copy_from_slice(&[0; 8]);
    assert!(matches!(
        bin_err(&c),
        DecodeError::Invalid {
            field: "lengths",
            ..
        }
    ));
    // An intermediate value of all ones (not below N / not canonical).
    let mut c = b.clone();
    let at = fixed + 1 + 8 * s;
    c[at..at + m].fill(0xff);
    assert!(matches!(
        bin_err(&c),
        DecodeError::Invalid { field: "mids", .. }
    ));
}

#[test]
fn random_corruptions_never_panic() {
    let p = segmented(500, 0);
    let (b, j) = (p.to_bytes(), p.to_json());
    let n = Modulus::rsa2048();
    let mut rng = rand::rngs::StdRng::seed_from_u64(77);
    for _ in 0..3000 {
        let mut c = b.clone();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..c.len());
            c[i] ^= 1 << rng.gen_range(0..8);
        }
        if rng.gen_bool(0.2) {
            c.truncate(rng.gen_range(0..c.len()));
        }
        if let Ok(q) = VdfProof::from_bytes(&c) {
            assert_eq!(VdfProof::from_bytes(&q.to_bytes()).ok(), Some(q.clone()));
            let _ = q.verify(&n);
        }
        let mut t = j.clone().into_bytes();
        let i = rng.gen_range(0..t.len());
        t[i] = rng.gen_range(b' '..=b'~');
        if let Ok(s) = std::str::from_utf8(&t) {
            if let Ok(q) = VdfProof::from_json(s) {
                assert_eq!(VdfProof::from_json(&q.to_json()).ok(), Some(q));
            }
        }
    }
}

//! JSON and binary encodings: round trips for both proof types at several widths, and the
//! strict decoders' rejections, each with its typed error; random corruptions never panic.

mod common;

use common::{ok, random_modulus};

use rand::{Rng, SeedableRng};
use wirespeed_vdf::encode::MAX_JSON_LEN;
use wirespeed_vdf::{
    eval, prove, DecodeError, EvalOptions, Modulus, Proof, ProofKind, VdfError, VdfProof, U4096,
};

fn proof(n: &Modulus, t: u64, kind: ProofKind) -> VdfProof {
    let ev = ok(eval(n, &U4096::from_u64(3), t, &EvalOptions::default()));
    ok(prove(n, &ev, kind))
}

fn rsa_proofs() -> (VdfProof, VdfProof) {
    let n = Modulus::rsa2048();
    (
        proof(&n, 200, ProofKind::Wesolowski),
        proof(&n, 200, ProofKind::Pietrzak),
    )
}

#[test]
fn round_trips() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let mut moduli = vec![Modulus::rsa2048()];
    for bits in [1024, 1031, 3072, 4096] {
        moduli.push(random_modulus(&mut rng, bits));
    }
    for n in &moduli {
        for kind in [
            ProofKind::Wesolowski,
            ProofKind::Pietrzak,
            ProofKind::WesolowskiSegmented,
        ] {
            for t in [1, 77] {
                let p = proof(n, t, kind);
                let json = p.to_json();
                assert_eq!(ok(VdfProof::from_json(&json)), p);
                let bin = p.to_bytes();
                assert_eq!(bin.len(), binary_len(n.byte_len(), &p.proof));
                assert_eq!(ok(VdfProof::from_bytes(&bin)), p);
                ok(VdfProof::from_bytes(&bin).and_then(|q| {
                    q.verify(&q.modulus).map_err(|error| DecodeError::Invalid {
                        field: "proof",
                        error,
                    })
                }));
            }
        }
    }
    // Uppercase hex and whitespace are accepted.
    let (w, _) = rsa_proofs();
    let Proof::Wesolowski { pi } = &w.proof else {
        unreachable!()
    };
    let up = |v: &U4096| v.to_hex().to_uppercase();
    let upper = format!(
        "{{ \"modulus\": \"{}\",\n \"x\": \"{}\", \"t\": {}, \"y\": \"{}\",\n \"proof\": {{ \"type\": \"wesolowski\", \"pi\": \"{}\" }} }}",
        up(w.modulus.value()),
        up(&w.x),
        w.t,
        up(&w.y),
        up(pi)
    );
    assert_eq!(ok(VdfProof::from_json(&upper)), w);
}

fn binary_len(m: usize, p: &Proof) -> usize {
    4 + 8
        + 3 * m
        + match p {
            Proof::Wesolowski { .. } => m,
            Proof::Pietrzak { mu } => 1 + mu.len() * m,
            Proof::WesolowskiSegmented { lengths, mids, pis } => {
                1 + 8 * lengths.len() + (mids.len() + pis.len()) * m
            }
        }
}

/// Replaces the first occurrence of `from` in the JSON text.
fn edit(json: &str, from: &str, to: &str) -> String {
    assert!(json.contains(from), "{from} not in {json}");
    json.replacen(from, to, 1)
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

#[test]
fn json_rejections() {
    let (w, p) = rsa_proofs();
    let (wj, pj) = (w.to_json(), p.to_json());
    let n = w.modulus.value();
    let hex = |v: &U4096| v.to_hex();
    let bad_hex = |field| move |e: DecodeError| matches!(e, DecodeError::BadHex { field: f, .. } if f == field);
    let invalid = |field: &'static str, error: VdfError| DecodeError::Invalid { field, error };

    // Syntax and structure.
    assert!(matches!(json_err("{"), DecodeError::Json(_)));
    assert!(matches!(
        json_err(&edit(&wj, "\"x\"", "\"xx\"")),
        DecodeError::Json(_)
    ));
    assert!(matches!(
        json_err(&edit(&wj, "{", "{\"extra\":1,")),
        DecodeError::Json(_)
    ));
    assert!(matches!(
        json_err(&edit(&wj, "{", &format!("{{\"x\":\"{}\",", hex(&w.x)))),
        DecodeError::Json(_)
    ));
    assert!(matches!(
        json_err(&edit(&wj, "\"t\":200", "\"t\":-1")),
        DecodeError::Json(_)
    ));
    assert!(matches!(
        json_err(&edit(&wj, "\"t\":200", "\"t\":2.5")),
        DecodeError::Json(_)
    ));
    assert!(matches!(
        json_err(&edit(&wj, "\"t\":200", "\"t\":\"200\"")),
        DecodeError::Json(_)
    ));
    assert!(matches!(
        json_err(&edit(&wj, "\"pi\"", "\"extra\":1,\"pi\"")),
        DecodeError::Json(_)
    ));
    let too_large = format!("{wj}{}", " ".repeat(MAX_JSON_LEN));
    assert_eq!(
        json_err(&too_large),
        DecodeError::TooLarge {
            len: too_large.len(),
            max: MAX_JSON_LEN
        }
    );

    // Hex.
    let x = hex(&w.x);
    let setx = |v: &str| edit(&wj, &format!("\"x\":\"{x}\""), &format!("\"x\":\"{v}\""));
    assert!(bad_hex("x")(json_err(&setx(&format!("0x{x}")))));
    assert!(bad_hex("x")(json_err(&setx(&format!("0{x}")))));
    assert!(bad_hex("x")(json_err(&setx(""))));
    assert!(bad_hex("x")(json_err(&setx(&format!("{x}g")))));
    assert!(bad_hex("x")(json_err(&setx(&format!("{x} ")))));
    assert!(bad_hex("modulus")(json_err(&edit(
        &wj,
        &hex(n),
        &"f".repeat(1025)
    ))));

    // Values.
    let nm1 = n.overflowing_sub(&U4096::ONE).0;
    assert_eq!(json_err(&setx("1")), invalid("x", VdfError::TrivialInput));
    assert_eq!(
        json_err(&setx(&hex(&nm1))),
        invalid("x", VdfError::TrivialInput)
    );
    assert_eq!(
        json_err(&setx(&hex(n))),
        invalid("x", VdfError::InputOutOfRange)
    );
    let y_neg = n.overflowing_sub(&w.y).0;
    assert_eq!(
        json_err(&edit(
            &wj,
            &format!("\"y\":\"{}\"", hex(&w.y)),
            &format!("\"y\":\"{}\"", hex(&y_neg))
        )),
        invalid("y", VdfError::OutputOutOfRange)
    );
    assert_eq!(
        json_err(&edit(
            &wj,
            &format!("\"y\":\"{}\"", hex(&w.y)),
            "\"y\":\"0\""
        )),
        invalid("y", VdfError::OutputOutOfRange)
    );
    assert_eq!(
        json_err(&edit(&wj, "\"t\":200", "\"t\":0")),
        invalid("t", VdfError::DelayOutOfRange { t: 0 })
    );
    assert_eq!(
        json_err(&edit(&wj, "\"t\":200", "\"t\":9223372036854775809")),
        invalid("t", VdfError::DelayOutOfRange { t: (1 << 63) + 1 })
    );
    let even = hex(&n.overflowing_sub(&U4096::ONE).0);
    assert_eq!(
        json_err(&edit(&wj, &hex(n), &even)),
        invalid("modulus", VdfError::EvenModulus)
    );
    assert_eq!(
        json_err(&edit(&wj, &hex(n), &"f".repeat(255))),
        invalid("modulus", VdfError::ModulusSize { bits: 1020 })
    );
    let Proof::Wesolowski { pi } = &w.proof else {
        unreachable!()
    };
    assert_eq!(
        json_err(&edit(
            &wj,
            &format!("\"pi\":\"{}\"", hex(pi)),
            "\"pi\":\"0\""
        )),
        invalid("pi", VdfError::ProofValueOutOfRange)
    );

    // Proof fields.
    assert!(matches!(
        json_err(&edit(&wj, "\"wesolowski\"", "\"sloth\"")),
        DecodeError::UnknownProofType(t) if t == "sloth"
    ));
    assert!(matches!(
        json_err(&edit(&wj, "\"wesolowski\"", "\"pietrzak\"")),
        DecodeError::ProofFields(_)
    ));
    assert!(matches!(
        json_err(&edit(&pj, "\"pietrzak\"", "\"wesolowski\"")),
        DecodeError::ProofFields(_)
    ));
    let Proof::Pietrzak { mu } = &p.proof else {
        unreachable!()
    };
    let first = format!("\"{}\"", hex(&mu[0]));
    assert_eq!(
        json_err(&edit(&pj, &format!("{first},"), "")),
        invalid(
            "mu",
            VdfError::ProofLength {
                expected: mu.len(),
                got: mu.len() - 1
            }
        )
    );
    let many = vec![first.as_str(); 70].join(",");
    let list_start = pj
        .find("\"mu\":[")
        .map(|i| i + 6)
        .unwrap_or_else(|| panic!("no mu"));
    let many_json = format!("{}{many}]}}}}", &pj[..list_start]);
    assert_eq!(
        json_err(&many_json),
        DecodeError::TooManyMu { count: 70, max: 64 }
    );
}

fn bin_err(b: &[u8]) -> DecodeError {
    match VdfProof::from_bytes(b) {
        Ok(_) => panic!("accepted {} bytes", b.len()),
        Err(e) => e,
    }
}

#[test]
fn binary_rejections() {
    let (w, p) = rsa_proofs();
    let (wb, pb) = (w.to_bytes(), p.to_bytes());
    let m = 256;
    for b in [&wb, &pb] {
        for len in 0..b.len() {
            assert!(
                matches!(bin_err(&b[..len]), DecodeError::Truncated { .. }),
                "{len}"
            );
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(bin_err(&longer), DecodeError::TrailingBytes(1));
    }
    let with = |i: usize, v: u8| {
        let mut b = wb.clone();
        b[i] = v;
        b
    };
    // Version 2 (segmented proofs) reads every type; 3 is unknown.
    assert_eq!(bin_err(&with(0, 3)), DecodeError::Version(3));
    assert_eq!(bin_err(&with(0, 0)), DecodeError::Version(0));
    assert_eq!(
        bin_err(&with(1, 3)),
        DecodeError::UnknownProofType("3".into())
    );
    assert_eq!(bin_err(&with(2, 0x10)), DecodeError::ModulusLength(0x1000));
    let mut b = with(2, 0);
    b[3] = 127;
    assert_eq!(bin_err(&b), DecodeError::ModulusLength(127));
    assert_eq!(bin_err(&with(4, 0)), DecodeError::ModulusLength(m));
    assert_eq!(
        bin_err(&with(4 + m - 1, 0xe4)),
        DecodeError::Invalid {
            field: "modulus",
            error: VdfError::EvenModulus
        }
    );
    // T = 0 (the low byte of T set to zero: T was 200).
    assert_eq!(
        bin_err(&with(4 + m + 7, 0)),
        DecodeError::Invalid {
            field: "t",
            error: VdfError::DelayOutOfRange { t: 0 }
        }
    );
    // x = 0.
    let mut b = wb.clone();
    b[12 + m..12 + 2 * m].fill(0);
    assert_eq!(
        bin_err(&b),
        DecodeError::Invalid {
            field: "x",
            error: VdfError::TrivialInput
        }
    );
    // y = N - y (not canonical).
    let mut b = wb.clone();
    let y_neg = w.modulus.value().overflowing_sub(&w.y).0;
    b[12 + 2 * m..12 + 3 * m].copy_from_slice(&y_neg.to_be_bytes()[512 - m..]);
    assert_eq!(
        bin_err(&b),
        DecodeError::Invalid {
            field: "y",
            error: VdfError::OutputOutOfRange
        }
    );
    // A mu count above 64 is refused before the values are read.
    let fixed = 4 + m + 8 + 2 * m;
    let mut b = pb[..fixed + 1].to_vec();
    b[fixed] = 65;
    assert_eq!(bin_err(&b), DecodeError::TooManyMu { count: 65, max: 64 });
    // A mu count that does not match T.
    let Proof::Pietrzak { mu } = &p.proof else {
        unreachable!()
    };
    let mut b = pb[..pb.len() - m].to_vec();
    b[fixed] -= 1;
    assert_eq!(
        bin_err(&b),
        DecodeError::Invalid {
            field: "mu",
            error: VdfError::ProofLength {
                expected: mu.len(),
                got: mu.len() - 1
            }
        }
    );
}

#[test]
fn corrupted_encodings_never_panic_and_never_verify() {
    let (w, p) = rsa_proofs();
    let mut rng = rand::rngs::StdRng::seed_from_u64(10);
    for good in [&w, &p] {
        let b = good.to_bytes();
        let j = good.to_json().into_bytes();
        for _ in 0..100 {
            let mut c = b.clone();
            let i = rng.gen_range(0..c.len());
            c[i] ^= 1 << rng.gen_range(0..8);
            if let Ok(q) = VdfProof::from_bytes(&c) {
                assert!(q.verify(&q.modulus).is_err());
            }
            let mut c = j.clone();
            let i = rng.gen_range(0..c.len());
            c[i] = rng.gen_range(0x20..0x7f);
            if let Ok(s) = std::str::from_utf8(&c) {
                if let Ok(q) = VdfProof::from_json(s) {
                    assert!(q == *good || q.verify(&q.modulus).is_err());
                }
            }
        }
    }
}

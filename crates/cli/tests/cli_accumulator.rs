//! `wirespeed accumulator add|witness|verify` end to end: add (twice) then witness then
//! verify round-trips, with every witness also checked by num-bigint; tampered
//! witnesses and non-members exit 1; duplicates change nothing; malformed state files,
//! element lists and values exit 2 with one line on stderr.

use std::path::{Path, PathBuf};

use num_bigint::BigUint;
use openssl::rsa::Rsa;
use wirespeed_rsa::accumulator::hash_to_prime;

mod common;

use common::wirespeed;

fn temp(name: &str) -> PathBuf {
    common::temp("accumulator", name)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One line on stderr (the trailing newline aside).
fn assert_one_line(o: &std::process::Output) {
    let e = stderr(o);
    assert!(!e.trim_end().is_empty(), "an error message");
    assert!(!e.trim_end().contains('\n'), "one line: {e}");
}

fn elements(tag: &str, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| hex::encode(format!("{tag}-{i}")))
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").expect("write");
}

fn state_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("state")).expect("json")
}

fn big(h: &str) -> BigUint {
    BigUint::parse_bytes(h.as_bytes(), 16).expect("hex")
}

fn add(state: &Path, elems: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["accumulator", "add", "--state", s(state), "--in", s(elems)];
    args.extend_from_slice(extra);
    wirespeed(&args)
}

fn verify(state: &Path, elem: &str, witness: &str) -> std::process::Output {
    wirespeed(&[
        "accumulator",
        "verify",
        "--state",
        s(state),
        "--elem",
        elem,
        "--witness",
        witness,
    ])
}

#[test]
fn add_witness_verify_round_trip() {
    let (state, in1, in2, req, out) = (
        temp("rt.json"),
        temp("rt1.hex"),
        temp("rt2.hex"),
        temp("rt-req.hex"),
        temp("rt-w.hex"),
    );
    let _ = std::fs::remove_file(&state);
    let first = elements("alice", 5);
    let second = elements("bob", 3);
    write_lines(&in1, &first);
    // Blank lines are skipped; hex may be upper case.
    std::fs::write(
        &in2,
        format!(
            "{}\n\n{}\n{}\n",
            second[0],
            second[1].to_uppercase(),
            second[2]
        ),
    )
    .expect("write");
    let o = add(&state, &in1, &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json summary");
    assert_eq!(v["count"], 5);
    assert_eq!(v["members"], 5);
    assert!(v["secs"].is_number() && v["per_sec"].is_number());
    let o = add(&state, &in2, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = String::from_utf8(o.stdout).expect("utf8");
    assert!(line.starts_with("count=3 members=8 "), "{line}");
    let dir = state.parent().expect("state dir");
    let left: Vec<String> = std::fs::read_dir(dir)
        .expect("list state dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".rt.json.tmp"))
        .collect();
    assert!(
        left.is_empty(),
        "temporary files left beside the state: {left:?}"
    );

    // The state: versioned, the RSA-2048 challenge modulus by default, members in order.
    let st = state_json(&state);
    assert_eq!(st["format"], "wirespeed-accumulator");
    assert_eq!(st["version"], 1);
    assert_eq!(
        st["modulus"].as_str().expect("modulus"),
        wirespeed_vdf::modulus::RSA_2048_HEX
    );
    let members = st["members"].as_array().expect("members");
    assert_eq!(members.len(), 8);
    let all: Vec<String> = first.iter().chain(&second).cloned().collect();
    for (m, e) in members.iter().zip(&all) {
        assert_eq!(m["element"].as_str(), Some(e.as_str()));
        let x = hash_to_prime(&hex::decode(e).expect("hex"));
        assert_eq!(m["prime"].as_str(), Some(x.to_hex().as_str()));
    }
    let n = big(st["modulus"].as_str().expect("n"));
    let g = big(st["base"].as_str().expect("g"));
    let a = big(st["value"].as_str().expect("A"));
    // A = g^(product of the primes), by num-bigint.
    let product = all.iter().fold(BigUint::from(1u8), |p, e| {
        p * BigUint::from_bytes_be(&hash_to_prime(&hex::decode(e).expect("hex")).to_be_bytes())
    });
    assert_eq!(g.modpow(&product, &n), a);

    // Witnesses for a subset, in request order.
    let pick = [all[6].clone(), all[0].clone(), all[3].clone()];
    write_lines(&req, &pick);
    let o = wirespeed(&[
        "accumulator",
        "witness",
        "--state",
        s(&state),
        "--in",
        s(&req),
        "--out",
        s(&out),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json summary");
    assert_eq!(v["count"], 3);
    assert_eq!(v["members"], 8);
    let text = std::fs::read_to_string(&out).expect("witnesses");
    let ws: Vec<&str> = text.lines().collect();
    assert_eq!(ws.len(), 3);
    for (e, w) in pick.iter().zip(&ws) {
        assert_eq!(w.len(), 512, "fixed width");
        let x = hash_to_prime(&hex::decode(e).expect("hex"));
        let xb = BigUint::from_bytes_be(&x.to_be_bytes());
        assert_eq!(big(w).modpow(&xb, &n), a, "w^x = A");
        let o = verify(&state, e, w);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The valid line names the modulus (the RSA-2048 challenge number's fingerprint,
        // as `vdf verify` names it) and the member count.
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "valid: modulus 6ae9d033c1d76c4f (2048 bits), 8 members\n"
        );
    }
    // @FILE forms.
    let (ef, wf) = (temp("rt-e.hex"), temp("rt-w1.hex"));
    std::fs::write(&ef, format!("{}\n", pick[1])).expect("write");
    std::fs::write(&wf, format!("{}\n", ws[1])).expect("write");
    let o = verify(&state, &format!("@{}", s(&ef)), &format!("@{}", s(&wf)));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The files `witness` reads and writes, several values a file: a line named with
    // @FILE:LINE; without one, a clear refusal (exit 2), not a number too long.
    for i in 0..3 {
        let o = verify(
            &state,
            &format!("@{}:{}", s(&req), i + 1),
            &format!("@{}:{}", s(&out), i + 1),
        );
        assert_eq!(o.status.code(), Some(0), "line {}: {}", i + 1, stderr(&o));
    }
    let o = verify(&state, &pick[0], &format!("@{}", s(&out)));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds 3 values"), "{}", stderr(&o));
    assert_one_line(&o);
    let o = verify(&state, &pick[0], &format!("@{}:9", s(&out)));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_one_line(&o);
    // A wrong line pairing is an invalid witness (exit 1).
    let o = verify(
        &state,
        &format!("@{}:1", s(&req)),
        &format!("@{}:2", s(&out)),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    // A tampered witness, another member's witness, and a non-member: exit 1.
    let mut tampered = ws[0].to_string().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    for (e, w) in [
        (pick[0].as_str(), tampered.as_str()),
        (pick[0].as_str(), ws[1]),
        (&hex::encode("mallory")[..], ws[0]),
    ] {
        let o = verify(&state, e, w);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_one_line(&o);
    }
    // A witness not below n is malformed (exit 2), whether or not it fits the modulus's
    // length: n itself, n + 1, and a number too long to parse.
    for over in [
        format!("{n:x}"),
        format!("{:x}", &n + 1u8),
        format!("{:x}", &n << 8),
    ] {
        let o = verify(&state, &pick[0], &over);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_one_line(&o);
    }
}

#[test]
fn duplicates_and_non_members_are_refused() {
    let (state, elems, out) = (temp("dup.json"), temp("dup.hex"), temp("dup-w.hex"));
    let _ = std::fs::remove_file(&state);
    let e = elements("d", 4);
    write_lines(&elems, &e);
    assert!(add(&state, &elems, &[]).status.success());
    let before = std::fs::read(&state).expect("state");
    // Already a member: exit 1, the line named, nothing changed.
    write_lines(&elems, &[hex::encode("new"), e[2].clone()]);
    let o = add(&state, &elems, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_one_line(&o);
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
    // Twice in one list.
    write_lines(&elems, &[hex::encode("x"), hex::encode("x")]);
    assert_eq!(add(&state, &elems, &[]).status.code(), Some(1));
    assert_eq!(std::fs::read(&state).expect("state"), before);
    // A witness for a non-member: exit 1 naming the line.
    write_lines(&elems, &[e[0].clone(), hex::encode("stranger")]);
    let o = wirespeed(&[
        "accumulator",
        "witness",
        "--state",
        s(&state),
        "--in",
        s(&elems),
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("line 2: not a member"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn modulus_from_a_key() {
    let (state, elems, key, other) = (
        temp("key.json"),
        temp("key.hex"),
        temp("key.pem"),
        temp("other.pem"),
    );
    let _ = std::fs::remove_file(&state);
    let rsa = Rsa::generate(2048).expect("keygen");
    std::fs::write(&key, rsa.public_key_to_pem().expect("pem")).expect("write");
    let rsa2 = Rsa::generate(2048).expect("keygen");
    std::fs::write(&other, rsa2.private_key_to_pem().expect("pem")).expect("write");
    write_lines(&elems, &elements("k", 2));
    let o = add(&state, &elems, &["--modulus", s(&key)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let st = state_json(&state);
    assert_eq!(
        big(st["modulus"].as_str().expect("n")),
        BigUint::from_bytes_be(&rsa.n().to_vec())
    );
    // Verified only where that modulus is trusted: by default (the RSA-2048 challenge
    // number) the state is refused, naming both moduli; with --modulus it verifies.
    let req = temp("key-req.hex");
    let wits = temp("key-wits.hex");
    write_lines(&req, &elements("k", 1));
    let o = wirespeed(&[
        "accumulator",
        "witness",
        "--state",
        s(&state),
        "--in",
        s(&req),
        "--out",
        s(&wits),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let w = std::fs::read_to_string(&wits).expect("witness");
    let e = std::fs::read_to_string(&req).expect("element");
    let o = verify(&state, e.trim(), w.trim());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not the trusted modulus"),
        "{}",
        stderr(&o)
    );
    assert_one_line(&o);
    let o = wirespeed(&[
        "accumulator",
        "verify",
        "--state",
        s(&state),
        "--elem",
        e.trim(),
        "--witness",
        w.trim(),
        "--modulus",
        s(&key),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The same key again is fine; another modulus for an existing state is refused.
    write_lines(&elems, &elements("k2", 1));
    assert!(add(&state, &elems, &["--modulus", s(&key)])
        .status
        .success());
    write_lines(&elems, &elements("k3", 1));
    let o = add(&state, &elems, &["--modulus", s(&other)]);
    assert_eq!(o.status.code(), Some(1));
    assert_one_line(&o);
    // A malformed key file: exit 2.
    let _ = std::fs::remove_file(&state);
    std::fs::write(
        &key,
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    )
    .expect("write");
    assert_eq!(
        add(&state, &elems, &["--modulus", s(&key)]).status.code(),
        Some(2)
    );
    assert!(!state.exists());
}

/// A private key given as --modulus is used for its N with one line saying that its
/// holder can forge witnesses; a key below 2048 bits (public or private) is refused in
/// one line naming its size (exit 2), and no state is written.
#[test]
fn a_private_or_too_small_modulus_key_says_so() {
    let (state, elems, key) = (temp("pk.json"), temp("pk.hex"), temp("pk.pem"));
    write_lines(&elems, &elements("pk", 2));
    let _ = std::fs::remove_file(&state);
    let rsa = Rsa::generate(2048).expect("keygen");
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("write");
    let o = add(&state, &elems, &["--modulus", s(&key)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_one_line(&o);
    assert!(
        stderr(&o).contains("is a private key") && stderr(&o).contains("forge witnesses"),
        "{}",
        stderr(&o)
    );
    let small = Rsa::generate(1024).expect("keygen");
    for pem in [
        small.private_key_to_pem().expect("pem"),
        small.public_key_to_pem().expect("pem"),
    ] {
        let _ = std::fs::remove_file(&state);
        std::fs::write(&key, pem).expect("write");
        let o = add(&state, &elems, &["--modulus", s(&key)]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_one_line(&o);
        assert!(stderr(&o).contains("1024-bit modulus"), "{}", stderr(&o));
        assert!(!state.exists());
    }
}

#[test]
fn malformed_inputs_exit_2_with_one_line() {
    let (state, elems, out) = (temp("bad.json"), temp("bad.hex"), temp("bad-w.hex"));
    let _ = std::fs::remove_file(&state);
    let e = elements("m", 3);
    write_lines(&elems, &e);
    assert!(add(&state, &elems, &[]).status.success());
    let good = std::fs::read_to_string(&state).expect("state");
    let st = state_json(&state);
    let witness_args = |st: &Path| {
        wirespeed(&[
            "accumulator",
            "witness",
            "--state",
            s(st),
            "--in",
            s(&elems),
            "--out",
            s(&out),
        ])
    };

    // Element lists: bad hex, odd length, an element too long.
    let bad_list = temp("bad-list.hex");
    for text in [
        format!("{}\nzz\n", e[0]),
        format!("{}\nabc\n", e[0]),
        format!("{}\n{}\n", e[0], "ab".repeat(1025)),
    ] {
        std::fs::write(&bad_list, text).expect("write");
        let o = add(&state, &bad_list, &[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_one_line(&o);
        assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&state).expect("state"), good);

    // State files: not JSON, truncated, wrong format or version, fields out of range,
    // an unknown field, a bad member.
    let mut v = st.clone();
    v["version"] = 2.into();
    let wrong_version = v.to_string();
    let mut v = st.clone();
    v["format"] = "something-else".into();
    let wrong_format = v.to_string();
    let mut v = st.clone();
    v["value"] = v["modulus"].clone();
    let value_is_n = v.to_string();
    // Values 1 and N - 1 (witness 1 or N - 1 would pass for any element), as 0 and N.
    let n = big(st["modulus"].as_str().expect("n"));
    let width = st["modulus"].as_str().expect("n").len();
    let mut v = st.clone();
    v["value"] = format!("{:0width$x}", BigUint::from(1u8)).into();
    let value_is_one = v.to_string();
    let mut v = st.clone();
    v["value"] = format!("{:0width$x}", &n - 1u8).into();
    let value_is_n_minus_one = v.to_string();
    let mut v = st.clone();
    v["value"] = "00".repeat(width / 2).into();
    let value_is_zero = v.to_string();
    let mut v = st.clone();
    v["modulus"] = "1234".into();
    let small_modulus = v.to_string();
    let mut v = st.clone();
    v["base"] = "01".into();
    let base_one = v.to_string();
    let mut v = st.clone();
    v["extra"] = 1.into();
    let unknown_field = v.to_string();
    let mut v = st.clone();
    v["members"][1]["prime"] = "07".into();
    let bad_prime = v.to_string();
    let mut v = st.clone();
    v["members"][1]["element"] = "xyz".into();
    let bad_element = v.to_string();
    let mut v = st.clone();
    v["members"][2] = v["members"][0].clone();
    let duplicate = v.to_string();
    let bad_state = temp("bad-state.json");
    for text in [
        "not json".to_string(),
        good[..good.len() / 2].to_string(),
        "{}".to_string(),
        wrong_version,
        wrong_format,
        value_is_n,
        value_is_one.clone(),
        value_is_n_minus_one.clone(),
        value_is_zero,
        small_modulus,
        base_one,
        unknown_field,
        bad_prime,
        bad_element,
        duplicate,
    ] {
        std::fs::write(&bad_state, &text).expect("write");
        for o in [
            add(&bad_state, &elems, &[]),
            witness_args(&bad_state),
            verify(&bad_state, &e[0], "02"),
        ] {
            assert_eq!(o.status.code(), Some(2), "{text:.80}: {}", stderr(&o));
            assert_one_line(&o);
        }
    }

    // With value 1 or N - 1 the witness 1 or N - 1 would be "valid" for any element:
    // refused as a state, before any witness is looked at, naming why.
    for (text, w) in [
        (value_is_one, "01".to_string()),
        (value_is_n_minus_one, format!("{:x}", &n - 1u8)),
    ] {
        std::fs::write(&bad_state, &text).expect("write");
        let o = verify(&bad_state, "abcdef", &w);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("0, 1, n - 1"), "{}", stderr(&o));
    }

    // A well-formed state whose value does not match its members: witness refuses.
    let mut v = st.clone();
    v["value"] = v["base"].clone();
    std::fs::write(&bad_state, v.to_string()).expect("write");
    let o = witness_args(&bad_state);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_one_line(&o);

    // verify: malformed element or witness values exit 2; a missing state exits 1.
    for (elem, w) in [
        ("zz", "02"),
        ("abc", "02"),
        (e[0].as_str(), "xyz"),
        (e[0].as_str(), ""),
        (e[0].as_str(), &"ab".repeat(300)[..]),
    ] {
        let o = verify(&state, elem, w);
        assert_eq!(o.status.code(), Some(2), "{elem} {w:.20}: {}", stderr(&o));
        assert_one_line(&o);
    }
    // A state that cannot be read is an input that cannot be read: exit 2.
    let o = verify(&temp("missing.json"), &e[0], "02");
    assert_eq!(o.status.code(), Some(2));
    assert_one_line(&o);
}

//! One exit-code contract for every verifying command, as the top-level help states:
//! 0 valid, 1 checked and invalid, 2 malformed or unreadable input (a missing file, a
//! value out of range). A table: each command on a valid input, an invalid one, a
//! malformed one, a missing file and one that cannot be read (a directory), for every
//! file it reads, each answered with its code and one stderr line on failure. `verify`
//! checks a batch: its status is about the file (0 when read whole, invalid signatures
//! included and counted in its summary), as its help says.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::wirespeed;

fn temp(name: &str) -> PathBuf {
    common::temp("exit-codes", name)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// Runs `args`; asserts the exit code, and one stderr line when it is not 0.
fn expect(what: &str, args: &[&str], code: i32) -> Output {
    let o = wirespeed(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{what}: {args:?}: {err}");
    if code != 0 {
        assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    }
    o
}

fn ok(args: &[&str]) -> Output {
    expect("set-up", args, 0)
}

/// A path that exists but cannot be read as a file: a directory.
fn unreadable() -> PathBuf {
    let dir = temp("a-directory");
    std::fs::create_dir_all(&dir).expect("directory");
    dir
}

#[test]
fn vdf_verify() {
    let proof = temp("p.json");
    ok(&["vdf", "eval", "--x", "05", "--t", "64", "--out", s(&proof)]);
    let text = std::fs::read_to_string(&proof).expect("proof");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let y = v["y"].as_str().expect("y");
    // Another y of the same length: checked and invalid.
    let other = if y.ends_with('0') { "1" } else { "0" };
    let wrong = temp("wrong.json");
    std::fs::write(
        &wrong,
        text.replace(y, &format!("{}{other}", &y[..y.len() - 1])),
    )
    .expect("write");
    let garbage = temp("garbage.json");
    std::fs::write(&garbage, "{not json").expect("write");
    let missing = temp("missing-proof.json");
    expect("valid", &["vdf", "verify", s(&proof)], 0);
    expect("invalid", &["vdf", "verify", s(&wrong)], 1);
    expect("malformed", &["vdf", "verify", s(&garbage)], 2);
    expect("missing", &["vdf", "verify", s(&missing)], 2);
    let dir = unreadable();
    expect("unreadable", &["vdf", "verify", s(&dir)], 2);
    // The trusted modulus is an input too.
    for (what, file) in [("missing", &missing), ("unreadable", &dir)] {
        let args = ["vdf", "verify", "--modulus-file", s(file), s(&proof)];
        expect(what, &args, 2);
    }
    let o = expect(
        "malformed modulus",
        &["vdf", "verify", "--modulus", "xyz", s(&proof)],
        2,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: --modulus: not a hex digit"),
        "{err}"
    );
    let bad_hex = temp("bad-modulus.hex");
    std::fs::write(&bad_hex, "xyz\n").expect("write");
    let o = expect(
        "malformed modulus file",
        &["vdf", "verify", "--modulus-file", s(&bad_hex), s(&proof)],
        2,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: --modulus-file: not a hex"), "{err}");
}

#[test]
fn rsa_verify() {
    let rsa = openssl::rsa::Rsa::generate(2048).expect("keygen");
    let key = temp("k.pem");
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("write");
    let msg = temp("m.txt");
    std::fs::write(&msg, b"pay 10 to alice").expect("write");
    let o = ok(&["rsa", "sign", "--key", s(&key), "--in", s(&msg)]);
    let sig = temp("s.hex");
    std::fs::write(&sig, &o.stdout).expect("write");
    let other = temp("m2.txt");
    std::fs::write(&other, b"pay 99 to mallory").expect("write");
    let bad_sig = temp("bad.hex");
    std::fs::write(&bad_sig, "zz").expect("write");
    let missing = temp("missing.hex");
    let verify = |m: &Path, g: &Path| {
        vec![
            "rsa".to_string(),
            "verify".into(),
            "--pub".into(),
            s(&key).into(),
            "--in".into(),
            s(m).into(),
            "--sig".into(),
            s(g).into(),
        ]
    };
    let run = |what: &str, args: Vec<String>, code: i32| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        expect(what, &args, code);
    };
    run("valid", verify(&msg, &sig), 0);
    run("invalid", verify(&other, &sig), 1);
    run("malformed", verify(&msg, &bad_sig), 2);
    run("missing", verify(&msg, &missing), 2);
    let dir = unreadable();
    run("unreadable signature", verify(&msg, &dir), 2);
    run("unreadable message", verify(&dir, &sig), 2);
    run("missing message", verify(&missing, &sig), 2);
    let not_a_key = temp("not-a-key.pem");
    std::fs::write(&not_a_key, "hello\n").expect("write");
    for (what, key) in [
        ("missing key", &missing),
        ("unreadable key", &dir),
        ("malformed key", &not_a_key),
    ] {
        let mut args = verify(&msg, &sig);
        args[3] = s(key).into();
        run(what, args, 2);
    }
}

#[test]
fn accumulator_verify() {
    let state = temp("acc.json");
    let _ = std::fs::remove_file(&state);
    let elems = temp("elems.txt");
    std::fs::write(&elems, "aa\nbb\n").expect("write");
    ok(&[
        "accumulator",
        "add",
        "--state",
        s(&state),
        "--in",
        s(&elems),
    ]);
    let wits = temp("w.txt");
    ok(&[
        "accumulator",
        "witness",
        "--state",
        s(&state),
        "--in",
        s(&elems),
        "--out",
        s(&wits),
    ]);
    let text = std::fs::read_to_string(&wits).expect("witnesses");
    let ws: Vec<&str> = text.lines().collect();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).expect("state")).expect("json");
    let n = v["modulus"].as_str().expect("modulus").to_string();
    let missing = temp("missing-acc.json");
    let verify = |st: &Path, e: &str, w: &str, code: i32, what: &str| {
        expect(
            what,
            &[
                "accumulator",
                "verify",
                "--state",
                s(st),
                "--elem",
                e,
                "--witness",
                w,
            ],
            code,
        );
    };
    verify(&state, "aa", ws[0], 0, "valid");
    verify(&state, "aa", ws[1], 1, "another member's witness");
    verify(&state, "cc", ws[0], 1, "a non-member");
    verify(&state, "aa", &n, 2, "a witness equal to N");
    verify(
        &state,
        "aa",
        &format!("{n}00"),
        2,
        "a witness longer than N",
    );
    verify(&state, "aa", "xyz", 2, "a witness that is not hex");
    verify(&missing, "aa", ws[0], 2, "a missing state");
    let dir = unreadable();
    verify(&dir, "aa", ws[0], 2, "an unreadable state");
    let garbage = temp("garbage-acc.json");
    std::fs::write(&garbage, "{not json").expect("write");
    verify(&garbage, "aa", ws[0], 2, "a malformed state");
    let at = |p: &Path| format!("@{}", s(p));
    verify(&state, "aa", &at(&missing), 2, "a missing @FILE witness");
    verify(&state, "aa", &at(&dir), 2, "an unreadable @FILE witness");
    verify(&state, &at(&missing), ws[0], 2, "a missing @FILE element");
    // The trusted modulus (a key file) is an input too.
    for (what, key) in [("missing", &missing), ("unreadable", &dir)] {
        let args = [
            "accumulator",
            "verify",
            "--state",
            s(&state),
            "--elem",
            "aa",
            "--witness",
            ws[0],
            "--modulus",
            s(key),
        ];
        expect(what, &args, 2);
    }
}

#[test]
fn timelock_open() {
    let puzzle = temp("tl.json");
    ok(&[
        "timelock",
        "create",
        "--t",
        "100",
        "--bits",
        "1024",
        "--message",
        "hi",
        "--out",
        s(&puzzle),
    ]);
    let o = ok(&["timelock", "solve", s(&puzzle)]);
    let w = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let text = std::fs::read_to_string(&puzzle).expect("puzzle");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    // T out of range (above 2^63) in the puzzle: malformed.
    let mut big_t = v.clone();
    big_t["t"] = serde_json::json!((1u64 << 63) + 1);
    let out_of_range = temp("tl-big-t.json");
    std::fs::write(&out_of_range, big_t.to_string()).expect("write");
    let missing = temp("missing-tl.json");
    let out = temp("message.txt");
    expect(
        "valid",
        &[
            "timelock",
            "open",
            s(&puzzle),
            "--solution",
            &w,
            "--out",
            s(&out),
        ],
        0,
    );
    assert_eq!(std::fs::read(&out).expect("message"), b"hi");
    expect(
        "a wrong solution",
        &["timelock", "open", s(&puzzle), "--solution", "02"],
        1,
    );
    expect(
        "a solution that is not hex",
        &["timelock", "open", s(&puzzle), "--solution", "xyz"],
        2,
    );
    expect(
        "T out of range",
        &["timelock", "open", s(&out_of_range), "--solution", &w],
        2,
    );
    expect(
        "missing",
        &["timelock", "open", s(&missing), "--solution", &w],
        2,
    );
    let dir = unreadable();
    expect(
        "unreadable",
        &["timelock", "open", s(&dir), "--solution", &w],
        2,
    );
    let garbage = temp("garbage-tl.json");
    std::fs::write(&garbage, "{not json").expect("write");
    expect(
        "malformed",
        &["timelock", "open", s(&garbage), "--solution", &w],
        2,
    );
    for (what, file) in [("missing", &missing), ("unreadable", &dir)] {
        let solution = format!("@{}", s(file));
        let args = ["timelock", "open", s(&puzzle), "--solution", &solution];
        expect(what, &args, 2);
    }
}

#[test]
fn ed25519_verify() {
    let sigs = temp("sigs.bin");
    ok(&[
        "gen",
        "sigs",
        "--n",
        "20",
        "--msg-len",
        "16",
        "--seed",
        "1",
        "--out",
        s(&sigs),
    ]);
    let bytes = std::fs::read(&sigs).expect("records");
    let truncated = temp("truncated.bin");
    std::fs::write(&truncated, &bytes[..bytes.len() - 3]).expect("write");
    let missing = temp("missing.bin");
    // A file read whole is answered 0 whatever its verdicts (one per record).
    let o = expect("valid", &["verify", s(&sigs)], 0);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("valid=20 invalid=0"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A record with a flipped signature bit: still 0, the invalid one counted.
    let mut flipped = bytes.clone();
    flipped[4 + 16] ^= 1;
    let bad = temp("flipped.bin");
    std::fs::write(&bad, &flipped).expect("write");
    let o = expect("an invalid record", &["verify", s(&bad)], 0);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("valid=19 invalid=1"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    expect("truncated", &["verify", s(&truncated)], 2);
    expect("missing", &["verify", s(&missing)], 2);
    expect("unreadable", &["verify", s(&unreadable())], 2);
    // The top-level help states the contract and this exception to it.
    let help = String::from_utf8_lossy(&ok(&["--help"]).stdout).to_string();
    assert!(help.contains("checked and invalid"), "{help}");
    assert!(
        help.contains("`verify` and `rsa batch-verify` check batches"),
        "{help}"
    );
}

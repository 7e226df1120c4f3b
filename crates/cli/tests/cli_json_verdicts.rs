//! `--json` on the verifying commands (`vdf verify`, `rsa verify`, `accumulator
//! verify`): one object on stdout for a valid (exit 0) and an invalid (exit 1) verdict,
//! none for malformed input (exit 2); `--json` on `rsa sign` and `timelock solve` (the
//! same signature and solution as the text output); and `verify -` reading the records
//! from standard input with the same summary as from the file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use openssl::rsa::Rsa;

mod common;

use common::wirespeed;

fn temp(name: &str) -> PathBuf {
    common::temp("json-verdicts", name)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("path")
}

/// The one JSON object on stdout.
fn verdict(o: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    serde_json::from_str(text.trim()).expect("JSON")
}

#[test]
fn vdf_verify_json() {
    let proof = temp("p.json");
    let o = wirespeed(&["vdf", "eval", "--x", "5", "--t", "300", "--out", s(&proof)]);
    assert_eq!(o.status.code(), Some(0));
    // Not silent: one line says what was written where.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("wrote {}: wesolowski-segmented proof, T = 300\n", s(&proof))
    );
    let o = wirespeed(&["vdf", "verify", s(&proof), "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = verdict(&o);
    assert_eq!(v["valid"], true);
    // The default proof is the segmented one; the single proof on request.
    assert_eq!(v["kind"], "wesolowski-segmented");
    assert_eq!(v["t"], 300);
    assert_eq!(v["bits"], 2048);
    let single = temp("single.json");
    let o = wirespeed(&[
        "vdf",
        "eval",
        "--x",
        "5",
        "--t",
        "300",
        "--proof",
        "wesolowski",
        "--out",
        s(&single),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = wirespeed(&["vdf", "verify", s(&single), "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = verdict(&o);
    assert_eq!(v["valid"], true);
    assert_eq!(v["kind"], "wesolowski");
    // A tampered T in the single proof: checked and invalid, still one object (and the
    // reason). (A segmented proof's lengths must add up to T: there, the same edit
    // makes a malformed document, exit 2, as crates/vdf/tests/encode_segmented.rs says.)
    let text = std::fs::read_to_string(&single).expect("read");
    let bad = temp("bad.json");
    std::fs::write(&bad, text.replace("\"t\":300", "\"t\":301")).expect("write");
    let o = wirespeed(&["vdf", "verify", s(&bad), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = verdict(&o);
    assert_eq!(v["valid"], false);
    assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()));
    // Without --json: the verdict as one `invalid:` line, not an error.
    let o = wirespeed(&["vdf", "verify", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("invalid: ") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    // Malformed: exit 2, no object.
    std::fs::write(&bad, "{").expect("write");
    let o = wirespeed(&["vdf", "verify", s(&bad), "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
fn rsa_verify_json() {
    let (key, msg, sig) = (temp("k.pem"), temp("m.txt"), temp("m.sig"));
    let rsa = Rsa::generate(2048).expect("keygen");
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("write");
    std::fs::write(&msg, b"hello").expect("write");
    let o = wirespeed(&["rsa", "sign", "--key", s(&key), "--in", s(&msg)]);
    assert_eq!(o.status.code(), Some(0));
    std::fs::write(&sig, &o.stdout).expect("write");
    let args = [
        "rsa",
        "verify",
        "--pub",
        s(&key),
        "--in",
        s(&msg),
        "--sig",
        s(&sig),
    ];
    let o = wirespeed(&[&args[..], &["--json"]].concat());
    assert_eq!(o.status.code(), Some(0));
    let v = verdict(&o);
    assert_eq!(
        (&v["valid"], &v["bits"], &v["padding"], &v["hash"]),
        (
            &true.into(),
            &2048.into(),
            &"pkcs1v15".into(),
            &"sha256".into()
        )
    );
    std::fs::write(&msg, b"hellO").expect("write");
    let o = wirespeed(&[&args[..], &["--json"]].concat());
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(verdict(&o)["valid"], false);
    // sign --json carries the same signature as the text output (PKCS#1 v1.5 is
    // deterministic).
    let text = wirespeed(&["rsa", "sign", "--key", s(&key), "--in", s(&msg)]);
    let js = wirespeed(&["rsa", "sign", "--key", s(&key), "--in", s(&msg), "--json"]);
    let v = verdict(&js);
    assert_eq!(v["signature"], String::from_utf8_lossy(&text.stdout).trim());
    assert_eq!(v["bits"], 2048);
    // Without --json the text line stays "valid" / the `invalid:` line.
    let o = wirespeed(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("invalid: "));
}

#[test]
fn accumulator_verify_json() {
    let (state, elems, wits) = (temp("acc.json"), temp("acc.hex"), temp("acc.w"));
    let _ = std::fs::remove_file(&state);
    std::fs::write(&elems, "aa01\nbb02\n").expect("write");
    let o = wirespeed(&[
        "accumulator",
        "add",
        "--state",
        s(&state),
        "--in",
        s(&elems),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = wirespeed(&[
        "accumulator",
        "witness",
        "--state",
        s(&state),
        "--in",
        s(&elems),
        "--out",
        s(&wits),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let w = std::fs::read_to_string(&wits).expect("read");
    let w0 = w.lines().next().expect("witness").to_string();
    let check = |elem: &str| {
        wirespeed(&[
            "accumulator",
            "verify",
            "--state",
            s(&state),
            "--elem",
            elem,
            "--witness",
            &w0,
            "--json",
        ])
    };
    let o = check("aa01");
    assert_eq!(o.status.code(), Some(0));
    let v = verdict(&o);
    assert_eq!((&v["valid"], &v["members"]), (&true.into(), &2.into()));
    assert!(v["modulus"].as_str().is_some());
    let o = check("bb02");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(verdict(&o)["valid"], false);
}

#[test]
fn verify_dash_reads_standard_input() {
    let sigs = temp("sigs.bin");
    let o = wirespeed(&[
        "gen",
        "sigs",
        "--n",
        "40",
        "--msg-len",
        "16",
        "--seed",
        "3",
        "--bad-frac",
        "0.25",
        "--out",
        s(&sigs),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let from_file = wirespeed(&["verify", s(&sigs), "--json"]);
    let bytes = std::fs::read(&sigs).expect("read");
    let run = |input: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(["verify", "-", "--json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write");
        child.wait_with_output().expect("wait")
    };
    let o = run(&bytes);
    assert_eq!(o.status.code(), Some(0));
    let (a, b) = (verdict(&from_file), verdict(&o));
    assert_eq!((&a["count"], &a["valid"]), (&b["count"], &b["valid"]));
    assert_eq!(b["count"], 40);
    // A truncated stream is malformed (exit 2), as a truncated file is.
    let o = run(&bytes[..100]);
    assert_eq!(o.status.code(), Some(2));
    // JSON Lines on standard input without --format: read as bin and refused, with the
    // error saying what to give.
    let jsonl = temp("sigs.jsonl");
    let o = wirespeed(&[
        "gen",
        "sigs",
        "--n",
        "4",
        "--msg-len",
        "8",
        "--seed",
        "3",
        "--out",
        s(&jsonl),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&std::fs::read(&jsonl).expect("read"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("give --format jsonl"), "{err}");
}

#[test]
fn timelock_solve_json() {
    let puzzle = temp("tl.json");
    let o = wirespeed(&[
        "timelock",
        "create",
        "--t",
        "3000",
        "--bits",
        "1024",
        "--message",
        "hi",
        "--out",
        s(&puzzle),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = wirespeed(&["timelock", "solve", s(&puzzle)]);
    let js = wirespeed(&["timelock", "solve", s(&puzzle), "--json"]);
    assert_eq!(js.status.code(), Some(0));
    let v = verdict(&js);
    assert_eq!(v["solution"], String::from_utf8_lossy(&text.stdout).trim());
    assert_eq!(
        (&v["t"], &v["resumed_from"], &v["squarings"]),
        (&3000.into(), &0.into(), &3000.into())
    );
    assert!(v["secs"].as_f64().is_some());
}

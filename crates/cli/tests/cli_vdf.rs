//! `wirespeed vdf eval|verify` end to end: outputs against num-bigint, proof files
//! verified, tampered files rejected (exit 1), malformed files (exit 2), bad inputs.

use std::path::PathBuf;
use std::process::{Command, Output};

use num_bigint::BigUint;

mod common;

use common::wirespeed;

fn temp(name: &str) -> PathBuf {
    common::temp("vdf", name)
}

/// A fixed odd 1024-bit modulus (not a product of known primes; fine for the chain).
fn modulus_hex() -> String {
    let mut n: BigUint = BigUint::from(1u8) << 1023usize;
    n +=
        BigUint::parse_bytes(b"1234567890abcdef1234567890abcdef1234567890abcdef", 16).expect("hex");
    n += 1u8; // keep it odd
    if &n % 2u8 == BigUint::from(0u8) {
        n += 1u8;
    }
    n.to_str_radix(16)
}

#[test]
fn eval_json_matches_num_bigint_for_several_t() {
    let nh = modulus_hex();
    let n = BigUint::parse_bytes(nh.as_bytes(), 16).expect("n");
    for (x, t) in [("2", 1u64), ("3", 2), ("abcdef", 17), ("123456789", 1000)] {
        let o = wirespeed(&[
            "vdf",
            "eval",
            "--modulus",
            &nh,
            "--x",
            x,
            "--t",
            &t.to_string(),
            "--proof",
            "none",
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                "bits",
                "ns_per_square",
                "resumed_from",
                "secs",
                "squarings",
                "t",
                "y"
            ],
            "{keys:?}"
        );
        let want = BigUint::parse_bytes(x.as_bytes(), 16)
            .expect("x")
            .modpow(&(BigUint::from(1u8) << (t as usize)), &n);
        assert_eq!(v["y"].as_str().expect("y"), want.to_str_radix(16));
        assert_eq!(v["t"].as_u64(), Some(t));
        assert_eq!(v["bits"].as_u64(), Some(1024));
    }
}

#[test]
fn proofs_verify_and_tampering_is_rejected() {
    let nh = modulus_hex();
    for proof in ["wesolowski", "pietrzak"] {
        let file = temp(&format!("{proof}.json"));
        let f = file.to_str().expect("path");
        let o = wirespeed(&[
            "vdf",
            "eval",
            "--modulus",
            &nh,
            "--x",
            "5",
            "--t",
            "777",
            "--proof",
            proof,
            "--out",
            f,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = wirespeed(&["vdf", "verify", f, "--modulus", &nh]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );

        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
        doc["t"] = serde_json::json!(778);
        let bad = temp(&format!("{proof}-bad.json"));
        std::fs::write(&bad, doc.to_string()).expect("write");
        let o = wirespeed(&[
            "vdf",
            "verify",
            bad.to_str().expect("path"),
            "--modulus",
            &nh,
        ]);
        assert_eq!(o.status.code(), Some(1), "tampered T must be invalid");
        assert!(!o.stderr.is_empty());
    }
    let mal = temp("malformed.json");
    std::fs::write(&mal, "{\"modulus\": 12").expect("write");
    assert_eq!(
        wirespeed(&["vdf", "verify", mal.to_str().expect("path")])
            .status
            .code(),
        Some(2)
    );
    let missing = temp("does-not-exist.json");
    assert_eq!(
        wirespeed(&["vdf", "verify", missing.to_str().expect("path")])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let nh = modulus_hex();
    for args in [
        vec!["vdf", "eval", "--modulus", &nh, "--x", "1", "--t", "10"], // trivial x
        vec!["vdf", "eval", "--modulus", "1234", "--x", "3", "--t", "10"], // even, small
        vec!["vdf", "eval", "--x", "3", "--t", "0"],                    // T out of range
        vec!["vdf", "eval", "--x", "zz", "--t", "5"],                   // bad hex
    ] {
        let o = wirespeed(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    // Saving options without a directory to save in would be ignored: refused, before
    // any squaring, and nothing printed.
    let puzzle = temp("no-dir-puzzle.json");
    let p = puzzle.to_str().expect("path");
    let o = wirespeed(&[
        "timelock",
        "create",
        "--t",
        "10",
        "--bits",
        "1024",
        "--message",
        "m",
        "--out",
        p,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for args in [
        vec!["vdf", "eval", "--x", "3", "--t", "10", "--save-every", "5"],
        vec![
            "vdf",
            "eval",
            "--x",
            "3",
            "--t",
            "10",
            "--verify-every",
            "1",
        ],
        vec!["timelock", "solve", p, "--save-every", "5"],
    ] {
        let o = wirespeed(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("need --checkpoint-dir"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn killed_evaluation_resumes_to_the_same_answer() {
    let nh = modulus_hex();
    let dir = temp("resume-dir");
    let _ = std::fs::remove_dir_all(&dir);
    let t = "3000000";
    let d = dir.to_str().expect("path");
    let eval_args = [
        "vdf",
        "eval",
        "--modulus",
        &nh,
        "--x",
        "3",
        "--t",
        t,
        "--proof",
        "none",
        "--json",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(eval_args)
        .args(["--checkpoint-dir", d, "--save-every", "0.05"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // Wait for a saved state with some progress, then kill -9.
    let start = std::time::Instant::now();
    let killed_at = loop {
        if let Ok(s) = wirespeed_vdf::resume::State::load(&dir) {
            if s.done > 0 {
                child.kill().expect("kill");
                break s.done;
            }
        }
        assert!(start.elapsed().as_secs() < 120, "no progress saved");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let _ = child.wait();
    let resumed = wirespeed(&["vdf", "resume", d, "--json"]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let direct = wirespeed(&eval_args);
    let y = |o: &Output| -> String {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        v["y"].as_str().expect("y").to_string()
    };
    assert_eq!(
        y(&resumed),
        y(&direct),
        "resumed after a kill at {killed_at} squarings"
    );
    // A damaged state file is refused with exit 2, not resumed.
    let state = dir.join("state");
    let mut bytes = std::fs::read(&state).expect("state");
    bytes[20] ^= 1;
    std::fs::write(&state, bytes).expect("write");
    assert_eq!(wirespeed(&["vdf", "resume", d]).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn timelock_create_solve_open_and_lcs35() {
    let puzzle = temp("tl.json");
    let w = temp("tl.w");
    let p = puzzle.to_str().expect("path");
    let o = wirespeed(&[
        "timelock",
        "create",
        "--t",
        "3000",
        "--bits",
        "1024",
        "--message",
        "open sesame",
        "--out",
        p,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = wirespeed(&["timelock", "solve", p, "--out", w.to_str().expect("path")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sol = format!("@{}", w.display());
    let o = wirespeed(&["timelock", "open", p, "--solution", &sol]);
    assert_eq!(o.stdout, b"open sesame");
    let o = wirespeed(&["timelock", "open", p, "--solution", "abcdef"]);
    assert_eq!(o.status.code(), Some(1));

    // LCS35 form: a puzzle made with the trapdoor, solved by the CLI.
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(35);
    let secret = wirespeed_vdf::U4096::from_u64(0xfeed_beef);
    let l = wirespeed_vdf::timelock::Lcs35::create(2048, 2_000, &secret, &mut rng).expect("create");
    let f = temp("lcs35.txt");
    std::fs::write(&f, l.to_text()).expect("write");
    let o = wirespeed(&["timelock", "solve", "--lcs35", f.to_str().expect("path")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "feedbeef");
}

#[test]
fn timelock_solve_saves_resumes_and_refuses_another_puzzles_state() {
    let (a, b) = (temp("tla.json"), temp("tlb.json"));
    for (f, msg) in [(&a, "first"), (&b, "second")] {
        let o = wirespeed(&[
            "timelock",
            "create",
            "--t",
            "2500",
            "--bits",
            "1024",
            "--message",
            msg,
            "--out",
            f.to_str().expect("path"),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let dir = temp("tl-state");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("path");
    let solve = |p: &PathBuf| {
        wirespeed(&[
            "timelock",
            "solve",
            p.to_str().expect("path"),
            "--checkpoint-dir",
            d,
        ])
    };
    let first = solve(&a);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(dir.join("state").exists());
    // Solving again resumes from the saved (complete) state, saying so: same solution.
    let again = solve(&a);
    assert_eq!(again.stdout, first.stdout);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("resuming at 2500 of 2500"), "{err}");
    let direct = wirespeed(&["timelock", "solve", a.to_str().expect("path")]);
    assert_eq!(direct.stdout, first.stdout);
    // The state belongs to puzzle a: puzzle b is refused, not answered wrongly, as
    // `vdf eval` refuses another statement: exit 2 naming the directory and what differs.
    let saved = std::fs::read(dir.join("state")).expect("state");
    let other = solve(&b);
    let err = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(2), "{err}");
    assert!(
        err.contains("holds another evaluation") && err.contains("modulus") && err.contains(d),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("state")).expect("state"), saved);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_proof_about_another_modulus_is_not_valid_unless_that_modulus_is_trusted() {
    // A 2048-bit prime: a group of known order, where a proof for any T is cheap to
    // forge. The honest proof below stands for such a forgery: only its modulus matters.
    let mut p = openssl::bn::BigNum::new().expect("bignum");
    p.generate_prime(2048, false, None, None).expect("prime");
    let prime = p.to_hex_str().expect("hex").to_string();
    let proof = temp("prime-modulus.json");
    let path = proof.to_str().expect("path");
    let o = wirespeed(&[
        "vdf",
        "eval",
        "--modulus",
        &prime,
        "--x",
        "05",
        "--t",
        "100",
        "--out",
        path,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // By default only the RSA-2048 challenge number is trusted.
    let o = wirespeed(&["vdf", "verify", path]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("not the trusted modulus"), "{err}");
    let fingerprints: Vec<&str> = err
        .split_whitespace()
        .map(|w| w.trim_end_matches(','))
        .filter(|w| w.len() == 16 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .collect();
    assert_eq!(fingerprints.len(), 2, "both fingerprints named: {err}");
    assert_ne!(fingerprints[0], fingerprints[1]);
    // Trusted explicitly (by hex or by file): valid, and the line names the modulus.
    let file = temp("prime.hex");
    std::fs::write(&file, format!("{prime}\n")).expect("write");
    for extra in [
        vec!["--modulus", prime.as_str()],
        vec!["--modulus-file", file.to_str().expect("path")],
    ] {
        let mut args = vec!["vdf", "verify", path];
        args.extend(extra);
        let o = wirespeed(&args);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            out.starts_with("valid: ") && out.contains(fingerprints[0]),
            "{out}"
        );
    }
    // A trusted modulus that is not one: malformed (exit 2).
    let o = wirespeed(&["vdf", "verify", path, "--modulus", "1234"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_checkpoint_dir_resumes_its_own_statement_and_refuses_another() {
    let dir = temp("ckpt-statement");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let d = dir.to_str().expect("path");
    let run_with = |x: &str, t: &str, proof: &str| {
        wirespeed(&[
            "vdf",
            "eval",
            "--x",
            x,
            "--t",
            t,
            "--proof",
            proof,
            "--checkpoint-dir",
            d,
        ])
    };
    let run = |x: &str, t: &str| run_with(x, t, "none");
    let first = run("05", "3000");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let state = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect::<Vec<_>>();
    let saved: Vec<Vec<u8>> = state
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    // The same statement again: resumed (here at its end), the same y.
    let again = run("05", "3000");
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{err}");
    assert!(err.contains("resuming at 3000 of 3000"), "{err}");
    assert_eq!(again.stdout, first.stdout);
    // Another x or another T: refused with exit 2 naming what differs, nothing changed.
    let saved_now: Vec<Vec<u8>> = state
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    for (x, t, proof, says) in [
        ("07", "3000", "none", "x 5 (asked 7)"),
        ("05", "4000", "none", "T 3000 (asked 4000)"),
        // The proof named as --proof names it.
        ("05", "3000", "pietrzak", "proof none (asked pietrzak)"),
    ] {
        let o = run_with(x, t, proof);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("holds another evaluation") && err.contains(says),
            "{err}"
        );
        let after: Vec<Vec<u8>> = state
            .iter()
            .map(|p| std::fs::read(p).expect("read"))
            .collect();
        assert_eq!(after, saved_now, "the directory was changed");
    }
    assert!(!saved.is_empty());
    // A --checkpoint-dir that is a file: refused in those words, the file untouched.
    let file = temp("ckpt-is-a-file");
    std::fs::write(&file, b"keep me").expect("write");
    let f = file.to_str().expect("path");
    for args in [
        vec![
            "vdf",
            "eval",
            "--x",
            "05",
            "--t",
            "100",
            "--checkpoint-dir",
            f,
        ],
        vec!["timelock", "solve", "PUZZLE", "--checkpoint-dir", f],
    ] {
        let puzzle = temp("ckpt-file-puzzle.json");
        if args[0] == "timelock" {
            let p = puzzle.to_str().expect("path");
            let o = wirespeed(&[
                "timelock",
                "create",
                "--t",
                "10",
                "--bits",
                "1024",
                "--message",
                "m",
                "--out",
                p,
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let args: Vec<&str> = args
            .iter()
            .map(|a| {
                if *a == "PUZZLE" {
                    puzzle.to_str().expect("path")
                } else {
                    a
                }
            })
            .collect();
        let o = wirespeed(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("not a directory"), "{args:?}: {err}");
        assert_eq!(std::fs::read(&file).expect("file"), b"keep me");
    }
}

/// Rivest's LCS35 (t = 79,685,186,856,218, above the old 2^40 limit) is accepted as
/// published: the solver starts and states its measured rate, rounded, and the time
/// it will take (months to years on any CPU); it is stopped there.
#[test]
fn timelock_solve_starts_on_lcs35_and_states_its_eta() {
    let puzzle = common::repo_root().join("crates/vdf/tests/data/lcs35-puzzle.txt");
    let p = puzzle.to_str().expect("path");
    let line = common::first_stderr_line(
        &["timelock", "solve", "--lcs35", p],
        "ETA",
        std::time::Duration::from_secs(60),
    )
    .expect("an ETA line within 60 s");
    assert!(line.starts_with("timelock: "), "{line}");
    assert!(
        line.contains(" of 79,685,186,856,218 squarings left"),
        "{line}"
    );
    // At a few million squarings a second LCS35 takes months to years: the ETA is
    // stated in days (and years when it is over one).
    // ("313 d 23 h", or "1 y 97 d" at the end of the line on a loaded machine.)
    let eta = line.split("ETA ").nth(1).expect("ETA");
    assert!(
        eta.split_whitespace().any(|w| w == "d"),
        "LCS35 takes days at any rate: {line}"
    );
    // The rate is rounded to three significant figures: "1.23 M squarings/s".
    let rate = line["timelock: ".len()..]
        .split(" squarings/s")
        .next()
        .expect("rate");
    let number = rate.split(' ').next().expect("number");
    assert!(number.len() <= 4, "rate not rounded: {line}");
    assert!(number.parse::<f64>().is_ok(), "{line}");
}

/// T is accepted up to 2^63; above it `vdf eval` refuses it in one line naming the
/// range.
#[test]
fn delay_above_two_to_the_63_is_refused_with_the_range() {
    let o = wirespeed(&["vdf", "eval", "--x", "3", "--t", "9223372036854775809"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("T must be in 1..=2^63"), "{err}");
}

/// After a resume, `--json` counts the whole evaluation in t and resumed_from, and this
/// run's squarings alone in squarings and the rate; y is the direct answer.
#[test]
fn resumed_json_separates_this_runs_squarings_from_the_whole() {
    use wirespeed_vdf::resume::State;
    let nh = modulus_hex();
    let n = wirespeed_vdf::Modulus::new(&wirespeed_vdf::U4096::from_hex(&nh).expect("hex"))
        .expect("modulus");
    let x = wirespeed_vdf::U4096::from_u64(6);
    let (t, done) = (100_000u64, 60_000u64);
    let mut s = State::new(n.clone(), x, t, 0, None).expect("state");
    let opts = wirespeed_vdf::EvalOptions {
        checkpoint_every: s.checkpoint_every,
        progress: None,
    };
    let part = wirespeed_vdf::eval(&n, &x, done, &opts).expect("eval");
    (s.done, s.value, s.checkpoints) = (done, part.y, part.checkpoints);
    let dir = temp("json-resume");
    let _ = std::fs::remove_dir_all(&dir);
    s.save(&dir).expect("save");
    let args = ["vdf", "eval", "--modulus", &nh, "--x", "6", "--t", "100000"];
    let direct = wirespeed(&[&args[..], &["--proof", "none", "--json"]].concat());
    let d = dir.to_str().expect("path");
    let resumed = wirespeed(
        &[
            &args[..],
            &["--proof", "none", "--json", "--checkpoint-dir", d],
        ]
        .concat(),
    );
    assert_eq!(resumed.status.code(), Some(0));
    let json = |o: &Output| -> serde_json::Value {
        serde_json::from_slice(&o.stdout).expect("one JSON object")
    };
    let (a, b) = (json(&direct), json(&resumed));
    assert_eq!(a["y"], b["y"]);
    assert_eq!(
        (a["resumed_from"].as_u64(), a["squarings"].as_u64()),
        (Some(0), Some(t))
    );
    assert_eq!(b["t"].as_u64(), Some(t));
    assert_eq!(b["resumed_from"].as_u64(), Some(done));
    assert_eq!(b["squarings"].as_u64(), Some(t - done));
}

/// `timelock solve --json` after a resume counts as `vdf eval` does: t the whole
/// puzzle, resumed_from the saved count, squarings this run's; the same solution.
#[test]
fn resumed_timelock_json_separates_this_runs_squarings_from_the_whole() {
    use wirespeed_vdf::resume::State;
    let puzzle = temp("tl-json-resume.json");
    let p = puzzle.to_str().expect("path");
    let (t, done) = (100_000u64, 60_000u64);
    let o = wirespeed(&[
        "timelock",
        "create",
        "--t",
        "100000",
        "--bits",
        "1024",
        "--message",
        "m",
        "--out",
        p,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&puzzle).expect("puzzle")).expect("json");
    let nh = v["modulus"].as_str().expect("modulus");
    let n = wirespeed_vdf::Modulus::new(&wirespeed_vdf::U4096::from_hex(nh).expect("hex"))
        .expect("modulus");
    let x = wirespeed_vdf::U4096::from_u64(2);
    let mut s = State::new(n.clone(), x, t, 0, None).expect("state");
    let opts = wirespeed_vdf::EvalOptions {
        checkpoint_every: s.checkpoint_every,
        progress: None,
    };
    let part = wirespeed_vdf::eval(&n, &x, done, &opts).expect("eval");
    (s.done, s.value, s.checkpoints) = (done, part.y, part.checkpoints);
    let dir = temp("tl-json-resume");
    let _ = std::fs::remove_dir_all(&dir);
    s.save(&dir).expect("save");
    let json = |o: &Output| -> serde_json::Value {
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).expect("one JSON object")
    };
    let direct = json(&wirespeed(&["timelock", "solve", p, "--json"]));
    let d = dir.to_str().expect("path");
    let resumed = json(&wirespeed(&[
        "timelock",
        "solve",
        p,
        "--json",
        "--checkpoint-dir",
        d,
    ]));
    assert_eq!(direct["solution"], resumed["solution"]);
    assert_eq!(
        (
            direct["resumed_from"].as_u64(),
            direct["squarings"].as_u64()
        ),
        (Some(0), Some(t))
    );
    assert_eq!(resumed["t"].as_u64(), Some(t));
    assert_eq!(resumed["resumed_from"].as_u64(), Some(done));
    assert_eq!(resumed["squarings"].as_u64(), Some(t - done));
}

#[test]
fn segmented_is_the_default_and_version_1_files_still_verify() {
    let nh = modulus_hex();
    let file = temp("segmented.json");
    let f = file.to_str().expect("path");
    let o = wirespeed(&[
        "vdf",
        "eval",
        "--modulus",
        &nh,
        "--x",
        "5",
        "--t",
        "3000",
        "--out",
        f,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = wirespeed(&["vdf", "verify", f, "--modulus", &nh, "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["kind"], "wesolowski-segmented");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    assert_eq!(doc["version"], 2);
    let segments = doc["proof"]["lengths"].as_array().expect("lengths").len();
    assert!((2..=18).contains(&segments), "{segments} segments");

    // A changed intermediate value is invalid (exit 1); a T the lengths do not sum to is
    // malformed (exit 2).
    let mut bad = doc.clone();
    bad["proof"]["mids"][0] = serde_json::json!("2");
    let b = temp("segmented-bad-mid.json");
    std::fs::write(&b, bad.to_string()).expect("write");
    let o = wirespeed(&["vdf", "verify", b.to_str().expect("path"), "--modulus", &nh]);
    assert_eq!(o.status.code(), Some(1));
    let mut bad = doc.clone();
    bad["t"] = serde_json::json!(3001);
    std::fs::write(&b, bad.to_string()).expect("write");
    let o = wirespeed(&["vdf", "verify", b.to_str().expect("path"), "--modulus", &nh]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lengths"));

    // Proof files of format version 1 (the single Wesolowski proof), JSON and binary.
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vdf/tests/data");
    for name in ["wesolowski-v1.json", "wesolowski-v1.bin"] {
        let path = data.join(name);
        let o = wirespeed(&["vdf", "verify", path.to_str().expect("path"), "--json"]);
        assert_eq!(o.status.code(), Some(0), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["kind"], "wesolowski", "{name}");
    }
}

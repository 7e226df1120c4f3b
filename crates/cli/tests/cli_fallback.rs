//! GPU-to-CPU fallbacks through the real binary: the commands that can fall back show
//! the engine's counts. Above each operation's GPU threshold, `--backend auto` answers
//! (on the GPU, or on the CPU: without a usable device that is `auto`'s choice, not a
//! fallback, and the counts stay zero); a count above zero always comes with its one
//! stderr line `gpu unavailable: fell back to cpu for N calls (reason)`. A one-shot
//! command with `--backend gpu` and no device fails with one error line and exit 1.

use std::path::Path;
use std::process::Output;

use openssl::rsa::Rsa;
use serde_json::Value;

mod common;

use common::wirespeed;

const REASONS: [&str; 4] = ["no_device", "out_of_memory", "unsupported", "failed"];

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The fallback line's presence matches the counts: none when every count is zero, else
/// exactly one line naming the total and a reason that occurred.
fn check_counts(fallbacks: &Value, o: &Output, what: &str) -> u64 {
    let obj = fallbacks
        .as_object()
        .unwrap_or_else(|| panic!("{what}: fallbacks is not an object: {fallbacks}"));
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want = REASONS.to_vec();
    want.sort_unstable();
    assert_eq!(keys, want, "{what}");
    let total: u64 = obj
        .values()
        .map(|v| v.as_u64().unwrap_or_else(|| panic!("{what}: {fallbacks}")))
        .sum();
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("fell back")).collect();
    if total == 0 {
        assert!(lines.is_empty(), "{what}: {err}");
    } else {
        let calls = if total == 1 { "call" } else { "calls" };
        assert_eq!(lines.len(), 1, "{what}: {err}");
        let prefix = format!("gpu unavailable: fell back to cpu for {total} {calls} (");
        assert!(lines[0].starts_with(&prefix), "{what}: {err}");
        assert!(
            REASONS.iter().any(|r| lines[0].contains(r)),
            "{what}: {err}"
        );
    }
    total
}

fn gen_sigs(out: &Path, n: usize) {
    let o = wirespeed(&[
        "gen",
        "sigs",
        "--n",
        &n.to_string(),
        "--msg-len",
        "32",
        "--seed",
        "7",
        "--bad-frac",
        "0.1",
        "--out",
        s(out),
    ]);
    assert!(o.status.success(), "gen sigs: {}", stderr(&o));
}

#[test]
fn verify_auto_above_the_threshold_shows_fallbacks_only_with_their_line() {
    let file = common::temp("fallback", "sigs.bin");
    // Above `verify`'s GPU threshold (4096).
    gen_sigs(&file, 4200);
    let o = wirespeed(&["verify", s(&file), "--backend", "auto", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["count"], 4200, "{v}");
    match v.get("fallbacks") {
        // Answered where `auto` put it (the GPU, or the CPU when none is usable): the
        // five numbers only, and no fallback line.
        None => assert!(!stderr(&o).contains("fell back"), "{}", stderr(&o)),
        Some(f) => assert!(check_counts(f, &o, "verify --backend auto") > 0, "{v}"),
    }
    // Text output: the same rule for the line.
    let o = wirespeed(&["verify", s(&file), "--backend", "auto"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn rsa_batch_sign_auto_above_the_threshold_reports_its_counts() {
    let (key, msgs, sigs) = (
        common::temp("fallback", "k.pem"),
        common::temp("fallback", "m.hex"),
        common::temp("fallback", "s.hex"),
    );
    let rsa = Rsa::generate(2048).expect("keygen");
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("write");
    // Above the GPU threshold of RSA private operations (256 messages).
    let lines: Vec<String> = (0..300u32).map(|i| format!("{i:08x}")).collect();
    std::fs::write(&msgs, lines.join("\n") + "\n").expect("write");
    let base = [
        "rsa",
        "batch-sign",
        "--key",
        s(&key),
        "--in",
        s(&msgs),
        "--out",
        s(&sigs),
    ];
    let mut args = base.to_vec();
    args.extend(["--backend", "auto", "--json"]);
    let o = wirespeed(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["count"], 300, "{v}");
    check_counts(&v["fallbacks"], &o, "rsa batch-sign --backend auto");
    // `gpu` for one call: the GPU's answer, or one error line without a device.
    let mut args = base.to_vec();
    args.extend(["--backend", "gpu", "--json"]);
    let o = wirespeed(&args);
    if common::ran_on_gpu(&o, "rsa batch-sign --backend gpu") {
        let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        assert_eq!(v["count"], 300, "{v}");
        assert_eq!(
            check_counts(&v["fallbacks"], &o, "rsa --backend gpu"),
            0,
            "{v}"
        );
    } else {
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn msm_reports_where_it_ran_and_its_counts() {
    let (p, sc) = (
        common::temp("fallback", "p.bin"),
        common::temp("fallback", "s.bin"),
    );
    let o = wirespeed(&[
        "gen",
        "msm",
        "--n",
        "64",
        "--seed",
        "3",
        "--points",
        s(&p),
        "--scalars",
        s(&sc),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for backend in ["auto", "cpu", "gpu"] {
        let o = wirespeed(&[
            "msm",
            "--points",
            s(&p),
            "--scalars",
            s(&sc),
            "--backend",
            backend,
            "--json",
        ]);
        if backend == "gpu" && !common::ran_on_gpu(&o, "msm --backend gpu") {
            assert!(o.stdout.is_empty());
            continue;
        }
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        let total = check_counts(&v["fallbacks"], &o, backend);
        // 64 points is below the GPU threshold: `auto` and `cpu` run on the CPU
        // without a fallback.
        if backend != "gpu" {
            assert_eq!(v["backend"], "cpu", "{v}");
            assert_eq!(total, 0, "{v}");
        }
    }
}

#[test]
fn verify_gpu_without_a_device_is_one_error_line() {
    let file = common::temp("fallback", "few.bin");
    gen_sigs(&file, 10);
    let o = wirespeed(&["verify", s(&file), "--backend", "gpu", "--json"]);
    if common::ran_on_gpu(&o, "verify --backend gpu") {
        let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        assert_eq!(v["count"], 10, "{v}");
    } else {
        assert!(o.stdout.is_empty());
    }
}

//! `--json` on the commands that print a result (bench vdf, bench msm, bench rsa, with
//! the `peers` feature; timelock create and open): through the real binary, stdout is
//! exactly one JSON object with the figures the text output prints, and they are sane.

mod common;

use common::{temp, wirespeed};
use serde_json::Value;

/// Runs `wirespeed ARGS`, requires exit 0 and returns stdout parsed as one JSON object.
fn json(args: &[&str]) -> Value {
    let o = wirespeed(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).expect("UTF-8 stdout");
    assert_eq!(
        text.trim_end().lines().count(),
        1,
        "{args:?}: one line of JSON on stdout, got {text:?}"
    );
    let v: Value = serde_json::from_str(&text).expect("stdout parses as JSON");
    assert!(v.is_object(), "{args:?}: {v}");
    v
}

/// `v[key]` as a positive, finite number.
#[cfg(feature = "peers")]
fn positive(v: &Value, key: &str) -> f64 {
    let x = v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"));
    assert!(x.is_finite() && x > 0.0, "{key} = {x} in {v}");
    x
}

#[cfg(feature = "peers")]
fn array<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array in {v}"))
}

#[cfg(feature = "peers")]
fn machine_and_date(v: &Value, bench: &str) {
    assert_eq!(v["bench"], bench);
    assert!(v["machine"].as_str().is_some_and(|s| !s.is_empty()), "{v}");
    assert!(
        v["date"].as_str().is_some_and(|s| s.ends_with("UTC")),
        "{v}"
    );
    assert!(v["reps"].as_u64().is_some_and(|r| r >= 1), "{v}");
}

#[test]
#[cfg(feature = "peers")]
fn bench_vdf_json() {
    let v = json(&[
        "bench",
        "vdf",
        "--chain",
        "2",
        "--reps",
        "1",
        "--proof-t",
        "256",
        "--json",
    ]);
    machine_and_date(&v, "vdf");
    assert!(
        v["microarch"].as_str().is_some_and(|s| !s.is_empty()),
        "{v}"
    );
    let rows = array(&v, "squaring");
    let bits: Vec<u64> = rows.iter().map(|r| r["bits"].as_u64().unwrap()).collect();
    assert_eq!(bits, [1024, 2048, 3072, 4096]);
    for r in rows {
        for k in [
            "wirespeed_ns",
            "wirespeed_tsc_ticks",
            "tsc_ghz",
            "gmp_ns",
            "openssl_mont_ns",
            "openssl_mod_sqr_ns",
            "num_bigint_ns",
            "ws_over_gmp",
            "ws_over_openssl_mont",
        ] {
            positive(r, k);
        }
        // The kernel named for this size on this CPU is one the library has.
        assert!(
            ["portable", "adx", "ifma", "ifma-fold"].contains(&r["kernel"].as_str().unwrap_or("")),
            "{r}"
        );
        let ratio = r["wirespeed_ns"].as_f64().unwrap() / r["gmp_ns"].as_f64().unwrap();
        assert!((ratio - r["ws_over_gmp"].as_f64().unwrap()).abs() < 1e-9 * ratio.max(1.0));
    }
    let proofs = array(&v, "proofs");
    let kinds: Vec<&str> = proofs
        .iter()
        .map(|p| p["proof"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Wesolowski", "Pietrzak", "WesolowskiSegmented"]);
    for p in proofs {
        assert_eq!(p["t"], 256);
        for k in [
            "eval_secs",
            "plain_eval_secs",
            "prove_secs",
            "overhead_pct",
            "verify_ms",
        ] {
            positive(p, k);
        }
    }
}

#[test]
#[cfg(feature = "peers")]
fn bench_msm_json() {
    let v = json(&["bench", "msm", "--log-n", "2", "--reps", "1", "--json"]);
    machine_and_date(&v, "msm");
    let rows = array(&v, "rows");
    // uniform and skewed scalars, 1 and 2 threads
    assert_eq!(rows.len(), 4, "{v}");
    for r in rows {
        assert_eq!(r["n"], 4);
        assert!(r["scalars"] == "uniform" || r["scalars"] == "skewed", "{r}");
        for k in [
            "wirespeed_secs",
            "us_per_point_per_core",
            "arkworks_secs",
            "ark_over_ws",
        ] {
            positive(r, k);
        }
        // gnark-crypto's figures are null where Go is not installed, numbers where it is
        for k in ["gnark_secs", "gnark_over_ws"] {
            assert!(r[k].is_null() || positive(r, k) > 0.0, "{r}");
        }
    }
    let pre = array(&v, "precomputed");
    assert_eq!(pre.len(), 2, "{v}");
    for r in pre {
        assert_eq!(r["n"], 4);
        for k in [
            "init_secs",
            "table_bytes",
            "plain_secs",
            "precomputed_secs",
            "speedup",
        ] {
            positive(r, k);
        }
    }
}

#[test]
#[cfg(feature = "peers")]
fn bench_rsa_json() {
    let v = json(&["bench", "rsa", "--quick", "--json"]);
    machine_and_date(&v, "rsa");
    assert!(v["cpu_family"].is_u64(), "{v}");
    let rows = array(&v, "rows");
    assert_eq!(rows.len(), 2, "{v}");
    for r in rows {
        assert_eq!(r["bits"], 2048);
        for k in [
            "ws_signs_per_s",
            "openssl_signs_per_s",
            "aws_lc_signs_per_s",
            "rsa_crate_signs_per_s",
            "sign_ws_over_openssl",
            "sign_ws_over_aws_lc",
            "ws_verifies_per_s",
            "openssl_verifies_per_s",
            "aws_lc_verifies_per_s",
            "rsa_crate_verifies_per_s",
            "verify_ws_over_openssl",
            "verify_ws_over_aws_lc",
        ] {
            positive(r, k);
        }
        assert!(
            ["portable", "adx", "ifma", "ifma-fold"].contains(&r["kernel"].as_str().unwrap_or("")),
            "{r}"
        );
    }
    let modexp = array(&v, "modexp");
    let bits: Vec<u64> = modexp.iter().map(|r| r["bits"].as_u64().unwrap()).collect();
    assert_eq!(bits, [1024, 2048, 4096]);
    for r in modexp {
        for k in [
            "ws_pow_ct_us",
            "ws_vartime_pow_us",
            "gmp_powm_sec_us",
            "gmp_powm_us",
            "pow_ct_over_powm_sec",
            "vartime_over_powm",
        ] {
            positive(r, k);
        }
    }
    let acc = &v["accumulator"];
    assert_eq!(acc["members"], 256);
    for k in [
        "threads",
        "witnesses_secs",
        "singles_secs",
        "witnesses_over_singles",
        "verify_secs",
    ] {
        positive(acc, k);
    }
    let speed = &v["openssl_speed"];
    assert!(
        speed.is_null() || positive(speed, "signs_per_s") > 0.0,
        "{v}"
    );
    let ct = &v["constant_time"];
    assert_eq!(ct["samples"], 200);
    for k in ["private_op_t", "pow_ct_t", "vartime_pow_t"] {
        assert!(ct[k].as_f64().is_some_and(f64::is_finite), "{k} in {ct}");
    }
    assert!(ct["leak_detected"].is_boolean(), "{ct}");
}

#[test]
fn timelock_create_and_open_json() {
    let puzzle = temp("json-results", "puzzle.json");
    let p = puzzle.to_str().expect("UTF-8 path");
    let message = "the answer is 42";
    let v = json(&[
        "timelock",
        "create",
        "--t",
        "64",
        "--bits",
        "1024",
        "--message",
        message,
        "--out",
        p,
        "--json",
    ]);
    assert_eq!(v["puzzle"], p);
    assert_eq!(v["t"], 64);
    assert_eq!(v["bits"], 1024);
    assert_eq!(v["message_bytes"], message.len());
    let fingerprint = v["modulus"].as_str().expect("modulus fingerprint");
    assert!(
        fingerprint.len() == 16 && fingerprint.chars().all(|c| c.is_ascii_hexdigit()),
        "{fingerprint}"
    );
    assert!(puzzle.exists());

    let solved = json(&["timelock", "solve", p, "--json"]);
    let w = solved["solution"].as_str().expect("solution");

    let opened = json(&["timelock", "open", p, "--solution", w, "--json"]);
    assert_eq!(opened["message"], message);
    assert_eq!(opened["message_hex"], hex::encode(message));
    assert_eq!(opened["message_bytes"], message.len());
    assert_eq!(opened["t"], 64);
    assert_eq!(opened["valid"], true);
    // A wrong solution is a verdict too: one object on stdout, exit 1, the error line.
    let o = wirespeed(&["timelock", "open", p, "--solution", "02", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["valid"], false);
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("does not open")),
        "{v}"
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);

    // With --out the message goes to the file and the JSON still comes on stdout.
    let out = temp("json-results", "message.txt");
    let o = out.to_str().expect("UTF-8 path");
    let opened = json(&["timelock", "open", p, "--solution", w, "--out", o, "--json"]);
    assert_eq!(opened["message"], message);
    assert_eq!(
        std::fs::read(&out).expect("message file"),
        message.as_bytes()
    );

    // Without --json the text outputs are unchanged: create prints nothing, open the
    // raw message.
    let o = wirespeed(&[
        "timelock",
        "create",
        "--t",
        "64",
        "--bits",
        "1024",
        "--message",
        message,
        "--out",
        p,
    ]);
    assert!(o.status.success() && o.stdout.is_empty());
    let solved = json(&["timelock", "solve", p, "--json"]);
    let w = solved["solution"].as_str().expect("solution");
    let o = wirespeed(&["timelock", "open", p, "--solution", w]);
    assert!(o.status.success());
    assert_eq!(o.stdout, message.as_bytes());
}

#[test]
fn timelock_open_json_binary_message() {
    let msg = temp("json-results", "binary.bin");
    std::fs::write(&msg, [0xffu8, 0x00, 0x80]).expect("write");
    let puzzle = temp("json-results", "binary-puzzle.json");
    let p = puzzle.to_str().expect("UTF-8 path");
    json(&[
        "timelock",
        "create",
        "--t",
        "16",
        "--bits",
        "1024",
        "--message-file",
        msg.to_str().expect("UTF-8 path"),
        "--out",
        p,
        "--json",
    ]);
    let w = json(&["timelock", "solve", p, "--json"])["solution"]
        .as_str()
        .expect("solution")
        .to_string();
    let opened = json(&["timelock", "open", p, "--solution", &w, "--json"]);
    assert!(opened["message"].is_null(), "{opened}");
    assert_eq!(opened["message_hex"], "ff0080");
    assert_eq!(opened["message_bytes"], 3);
}

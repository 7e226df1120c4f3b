//! `wirespeed gen msm` and `wirespeed msm` end to end: the result agrees with the
//! library and with a plain double-and-add sum; malformed files exit 2 naming the index.

use std::path::PathBuf;

use wirespeed_msm::{format, Jacobian};

mod common;

use common::wirespeed;

fn temp(name: &str) -> PathBuf {
    common::temp("msm", name)
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn gen_then_msm_matches_double_and_add() {
    let (p, s) = (temp("p.bin"), temp("s.bin"));
    for skewed in [false, true] {
        let mut args = vec![
            "gen",
            "msm",
            "--n",
            "40",
            "--seed",
            "9",
            "--points",
            path(&p),
            "--scalars",
            path(&s),
        ];
        if skewed {
            args.push("--skewed");
        }
        assert!(wirespeed(&args).status.success());
        let o = wirespeed(&[
            "msm",
            "--points",
            path(&p),
            "--scalars",
            path(&s),
            "--json",
            "--threads",
            "2",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["n"], 40);
        assert!(v["secs"].as_f64().is_some());
        let points = format::decode_points(&std::fs::read(&p).expect("read")).expect("points");
        let scalars = format::decode_scalars(&std::fs::read(&s).expect("read")).expect("scalars");
        let mut naive = Jacobian::INFINITY;
        for (pt, sc) in points.iter().zip(&scalars) {
            naive = naive.add(&Jacobian::from(*pt).mul_limbs(sc.limbs()));
        }
        let want: String = format::encode_point(&naive.to_affine())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(v["result"], want.as_str());
        assert_eq!(v["backend"], "cpu", "40 points stay on the CPU under auto");
        // The same sum on each backend named.
        for backend in ["cpu", "gpu"] {
            let o = wirespeed(&[
                "msm",
                "--points",
                path(&p),
                "--scalars",
                path(&s),
                "--json",
                "--backend",
                backend,
            ]);
            if backend == "gpu" && !common::ran_on_gpu(&o, "msm --backend gpu") {
                continue;
            }
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
            assert_eq!(v["result"], want.as_str(), "{backend}");
            assert_eq!(v["backend"], backend);
        }
        // The same sum through a precomputed table.
        let o = wirespeed(&[
            "msm",
            "--points",
            path(&p),
            "--scalars",
            path(&s),
            "--json",
            "--precompute",
            "3",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["result"], want.as_str());
        assert!(v["table_bytes"].as_u64().is_some_and(|b| b > 0));
    }
}

#[test]
fn malformed_inputs_exit_2_with_the_index() {
    let (p, s) = (temp("pm.bin"), temp("sm.bin"));
    assert!(wirespeed(&[
        "gen",
        "msm",
        "--n",
        "5",
        "--points",
        path(&p),
        "--scalars",
        path(&s)
    ])
    .status
    .success());
    let mut bytes = std::fs::read(&p).expect("read");
    bytes[8 + 3 * 96 + 5] ^= 0x10; // point 3 leaves the curve
    let bad = temp("bad.bin");
    std::fs::write(&bad, &bytes).expect("write");
    let o = wirespeed(&["msm", "--points", path(&bad), "--scalars", path(&s)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("element 3") && err.contains("not on the curve"),
        "{err}"
    );
    // Truncated scalars file.
    let sb = std::fs::read(&s).expect("read");
    std::fs::write(&bad, &sb[..sb.len() - 3]).expect("write");
    let o = wirespeed(&["msm", "--points", path(&p), "--scalars", path(&bad)]);
    assert_eq!(o.status.code(), Some(2));
    // Count mismatch between the files: exit 1 with both counts.
    let (p2, s2) = (temp("p2.bin"), temp("s2.bin"));
    assert!(wirespeed(&[
        "gen",
        "msm",
        "--n",
        "6",
        "--points",
        path(&p2),
        "--scalars",
        path(&s2)
    ])
    .status
    .success());
    let o = wirespeed(&["msm", "--points", path(&p), "--scalars", path(&s2)]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a count mismatch is malformed input"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds 5 points"));
}

#[test]
#[cfg(feature = "peers")]
fn bench_msm_sizes_are_capped_as_gen_msm_is() {
    for bad in ["0", "29", "40"] {
        let out = wirespeed(&["bench", "msm", "--log-n", bad]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--log-n {bad} ran");
        assert!(err.contains("--log-n"), "--log-n {bad}: {err}");
    }
}

/// `--reps 0` is refused before any work by every benchmark (it was taken as 1 by
/// bench vdf, msm and rsa, as ed25519 refused it).
#[test]
#[cfg(feature = "peers")]
fn bench_reps_zero_is_refused_before_any_work() {
    for bench in ["ed25519", "vdf", "msm", "rsa"] {
        let start = std::time::Instant::now();
        let out = wirespeed(&["bench", bench, "--reps", "0"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "bench {bench}: {err}");
        assert!(err.contains("--reps"), "bench {bench}: {err}");
        assert!(out.stdout.is_empty(), "bench {bench} printed a report");
        assert!(
            start.elapsed().as_secs() < 30,
            "bench {bench} did work first"
        );
    }
}

/// A binary built without the `peers` feature (the default) refuses the side-by-side
/// benchmarks with one line that says how to build them, exit 1 and nothing on stdout.
#[test]
#[cfg(not(feature = "peers"))]
fn peer_benchmarks_say_how_to_enable_them() {
    for bench in ["ed25519", "vdf", "msm", "rsa"] {
        let out = wirespeed(&["bench", bench, "--reps", "1"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "bench {bench}: {err}");
        assert!(out.stdout.is_empty(), "bench {bench} printed a report");
        assert!(err.contains("--features peers"), "bench {bench}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "bench {bench}: {err}");
    }
}

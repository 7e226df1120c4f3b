//! `wirespeed vdf eval --checkpoint-dir` does not let a saved state vouch for a fault:
//! a state whose value, `done` or last checkpoint is wrong under a consistent checksum
//! (written with the library's State API, as a fault just before a save or an edit
//! would leave it) is caught on resume, rolled back to a checkpoint that checks out,
//! and the run prints the right y (with `--proof none` too) or a proof that verifies;
//! more faulty checkpoints than can be rolled back exit 2 naming the directory.
//! `timelock solve --checkpoint-dir` is held to the same.

use std::path::{Path, PathBuf};

use num_bigint::BigUint;
use wirespeed_vdf::resume::{State, MAX_ROLLBACK};

mod common;

use common::wirespeed;

const T: &str = "100000";

fn temp(name: &str) -> PathBuf {
    let p = common::temp("vdf-faults", name);
    let _ = std::fs::remove_dir_all(&p);
    p
}

/// An odd 1024-bit modulus (the chain does not need its factors).
fn modulus_hex() -> String {
    let n: BigUint = (BigUint::from(1u8) << 1023usize) + BigUint::from(0x1234_5678_9abc_def1u64);
    n.to_str_radix(16)
}

fn eval(nh: &str, proof: &str, dir: Option<&Path>, out: Option<&Path>) -> std::process::Output {
    let mut args = vec!["vdf", "eval", "--modulus", nh, "--x", "5", "--t", T];
    args.extend(["--proof", proof]);
    if let Some(d) = dir {
        args.extend(["--checkpoint-dir", d.to_str().expect("path")]);
    }
    if let Some(o) = out {
        args.extend(["--out", o.to_str().expect("path")]);
    }
    wirespeed(&args)
}

/// Completes an evaluation in `dir`, then rewrites its state with `edit` applied.
fn edited_state(nh: &str, dir: &Path, edit: impl Fn(&mut State)) {
    let o = eval(nh, "none", Some(dir), None);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut s = State::load(dir).expect("load");
    edit(&mut s);
    s.save(dir).expect("save with a consistent checksum");
    State::load(dir).expect("the edited state loads: only recomputation can tell");
}

/// A change to a saved state.
type Edit = Box<dyn Fn(&mut State)>;

fn edits() -> Vec<(&'static str, Edit)> {
    vec![
        ("value", Box::new(|s: &mut State| s.value.0[0] ^= 1 << 5)),
        // Same checkpoint segment, so the file stays consistent (k = 7 here).
        ("done", Box::new(|s: &mut State| s.done -= 2)),
        (
            "checkpoint",
            Box::new(|s: &mut State| {
                let last = s.checkpoints.len() - 1;
                s.checkpoints[last].1 .0[2] ^= 1;
            }),
        ),
    ]
}

#[test]
fn a_faulty_saved_state_never_yields_a_wrong_y() {
    let nh = modulus_hex();
    let o = eval(&nh, "none", None, None);
    assert_eq!(o.status.code(), Some(0));
    let want = String::from_utf8_lossy(&o.stdout).trim().to_string();
    for (what, edit) in edits() {
        let dir = temp(&format!("state-{what}"));
        edited_state(&nh, &dir, edit);
        let o = eval(&nh, "none", Some(&dir), None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{what}: {err}");
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), want, "{what}");
        assert!(
            err.contains("does not check out") && err.contains(dir.to_str().expect("path")),
            "{what}: the rollback is reported naming the directory: {err}"
        );
    }
}

/// After a rollback, `--json` counts the redone squarings as this run's: resumed_from
/// is the checkpoint gone back to (T = 100000 with k = 7: the last is at 99995).
#[test]
fn a_rollback_is_counted_in_the_json_totals() {
    let nh = modulus_hex();
    let dir = temp("json-rollback");
    edited_state(&nh, &dir, |s| s.value.0[0] ^= 1);
    let d = dir.to_str().expect("path");
    let o = wirespeed(&[
        "vdf",
        "eval",
        "--modulus",
        &nh,
        "--x",
        "5",
        "--t",
        T,
        "--proof",
        "none",
        "--json",
        "--checkpoint-dir",
        d,
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["resumed_from"], 99_995);
    assert_eq!(v["squarings"], 5);
}

#[test]
fn a_faulty_saved_state_yields_a_proof_that_verifies() {
    let nh = modulus_hex();
    for (what, edit) in edits() {
        let dir = temp(&format!("proof-{what}"));
        edited_state(&nh, &dir, edit);
        // The directory holds a --proof none run; a proof is another statement, so
        // continue that one with `vdf resume` and prove from a fresh directory instead.
        let o = wirespeed(&["vdf", "resume", dir.to_str().expect("path")]);
        assert_eq!(o.status.code(), Some(0), "{what}");
        let fresh = temp(&format!("proof-fresh-{what}"));
        let out = temp(&format!("proof-{what}.json"));
        let o = eval(&nh, "wesolowski", Some(&fresh), Some(&out));
        assert_eq!(o.status.code(), Some(0), "{what}");
        let mut s = State::load(&fresh).expect("load");
        edits()
            .into_iter()
            .find(|(w, _)| *w == what)
            .expect("edit")
            .1(&mut s);
        s.save(&fresh).expect("save");
        let o = eval(&nh, "wesolowski", Some(&fresh), Some(&out));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = wirespeed(&[
            "vdf",
            "verify",
            out.to_str().expect("path"),
            "--modulus",
            &nh,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{what}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

#[test]
fn too_many_faulty_checkpoints_exit_2_naming_the_directory() {
    let nh = modulus_hex();
    let dir = temp("unsound");
    edited_state(&nh, &dir, |s| {
        let last = s.checkpoints.len() - 1;
        for j in last - MAX_ROLLBACK..=last {
            s.checkpoints[j].1 .0[1] ^= 1;
        }
    });
    let d = dir.to_str().expect("path");
    for o in [
        eval(&nh, "none", Some(&dir), None),
        wirespeed(&["vdf", "resume", d]),
    ] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(o.stdout.is_empty(), "no y is printed");
        assert!(err.contains(d), "{err}");
        assert!(err.contains("does not follow from"), "{err}");
    }
}

/// `timelock solve --checkpoint-dir` audits its saved state as `vdf eval` does: an
/// edited value, count or checkpoint is rolled back and the solution is the right one.
#[test]
fn a_faulty_saved_timelock_state_never_yields_a_wrong_solution() {
    let puzzle = temp("tl-puzzle.json");
    let _ = std::fs::remove_file(&puzzle);
    let p = puzzle.to_str().expect("path");
    let o = wirespeed(&[
        "timelock",
        "create",
        "--t",
        T,
        "--bits",
        "1024",
        "--message",
        "m",
        "--out",
        p,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = wirespeed(&["timelock", "solve", p]);
    assert_eq!(o.status.code(), Some(0));
    let want = String::from_utf8_lossy(&o.stdout).trim().to_string();
    for (what, edit) in edits() {
        let dir = temp(&format!("tl-state-{what}"));
        let d = dir.to_str().expect("path");
        let o = wirespeed(&["timelock", "solve", p, "--checkpoint-dir", d]);
        assert_eq!(o.status.code(), Some(0), "{what}");
        let mut s = State::load(&dir).expect("load");
        edit(&mut s);
        s.save(&dir).expect("save with a consistent checksum");
        let o = wirespeed(&["timelock", "solve", p, "--checkpoint-dir", d]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{what}: {err}");
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), want, "{what}");
        assert!(
            err.contains("does not check out") && err.contains(d),
            "{what}: the rollback is reported naming the directory: {err}"
        );
    }
}

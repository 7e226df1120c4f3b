//! Resumable evaluation: a state saved at any point (on or between checkpoints) resumes to
//! exactly the direct evaluation; damaged or inconsistent state files are refused; a
//! saved state whose value, `done` or last checkpoints are wrong under a consistent
//! checksum is rolled back to a checkpoint that checks out (or refused past
//! MAX_ROLLBACK faulty checkpoints) and resumes to the direct answer.

use std::path::PathBuf;
use std::time::Duration;

use wirespeed_vdf::resume::{audit, run, Audit, ResumeError, RunOptions, State, MAX_ROLLBACK};
use wirespeed_vdf::{eval, EvalOptions, Modulus, ProofKind, U4096};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "wirespeed-vdf-resume-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A 1024-bit odd modulus (2^1023 + small odd offset).
fn modulus() -> Modulus {
    let mut n = U4096::ZERO;
    n.0[15] = 1 << 63;
    n.0[0] = 0x1234_5678_9abc_def1;
    Modulus::new(&n).expect("modulus")
}

fn opts() -> RunOptions<'static> {
    RunOptions {
        save_every: Duration::ZERO,
        verify_every: 1,
        progress: None,
        on_rollback: None,
    }
}

/// The state an interrupted evaluation with interval k would have saved after `done`.
fn partial(n: &Modulus, x: &U4096, t: u64, k: u64, done: u64) -> State {
    let mut s = State::new(n.clone(), *x, t, k, Some(ProofKind::Wesolowski)).expect("state");
    if done > 0 {
        let ev = eval(
            n,
            x,
            done,
            &EvalOptions {
                checkpoint_every: k,
                progress: None,
            },
        )
        .expect("eval");
        s.done = done;
        s.value = ev.y;
        s.checkpoints = ev.checkpoints;
    }
    s
}

#[test]
fn resuming_anywhere_gives_the_direct_answer() {
    let n = modulus();
    let x = U4096::from_u64(7);
    let (t, k) = (40_000u64, 3_000u64);
    let direct = eval(
        &n,
        &x,
        t,
        &EvalOptions {
            checkpoint_every: k,
            progress: None,
        },
    )
    .expect("eval");
    for done in [0, 1, 2_999, 3_000, 3_001, 20_000, 39_000, 39_999, 40_000] {
        let d = dir(&format!("any-{done}"));
        let s = partial(&n, &x, t, k, done);
        s.save(&d).expect("save");
        let loaded = State::load(&d).expect("load");
        assert_eq!(loaded, s, "round trip at {done}");
        let ev = run(loaded, &d, &opts()).expect("run");
        assert_eq!(ev, direct, "resumed from {done}");
        // The final state is saved and complete.
        let fin = State::load(&d).expect("final");
        assert_eq!((fin.done, fin.value), (t, direct.y));
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn damaged_state_files_are_refused() {
    let n = modulus();
    let s = partial(&n, &U4096::from_u64(5), 10_000, 1_000, 4_321);
    let bytes = s.to_bytes();
    assert_eq!(State::from_bytes(&bytes).expect("valid"), s);
    for i in (0..bytes.len()).step_by(97) {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        assert!(
            matches!(State::from_bytes(&b), Err(ResumeError::Malformed(_))),
            "flip at {i}"
        );
    }
    for cut in [0, 7, 8, 40, bytes.len() - 33, bytes.len() - 1] {
        assert!(
            matches!(
                State::from_bytes(&bytes[..cut]),
                Err(ResumeError::Malformed(_))
            ),
            "cut at {cut}"
        );
    }
    // Well-formed and checksummed but inconsistent: one checkpoint too many.
    let mut bad = s.clone();
    bad.checkpoints.push((5_000, U4096::from_u64(2)));
    assert!(matches!(
        State::from_bytes(&bad.to_bytes()),
        Err(ResumeError::Malformed(_))
    ));
    let mut bad = s.clone();
    bad.done = 10_001;
    assert!(State::from_bytes(&bad.to_bytes()).is_err());
    let d = dir("missing");
    assert!(matches!(State::load(&d), Err(ResumeError::Io(..))));
}

fn direct(n: &Modulus, x: &U4096, t: u64, k: u64) -> wirespeed_vdf::Evaluation {
    let opts = EvalOptions {
        checkpoint_every: k,
        progress: None,
    };
    eval(n, x, t, &opts).expect("eval")
}

/// A wrong value saved under a consistent checksum (a fault just before a save) is
/// found on resume, rolled back to the last checkpoint, and the run reaches the
/// direct answer instead of carrying the fault to y.
#[test]
fn a_wrong_saved_value_is_rolled_back_to_its_checkpoint() {
    let n = modulus();
    let x = U4096::from_u64(11);
    let mut s = partial(&n, &x, 10_000, 1_000, 4_500);
    s.value.0[0] ^= 1;
    let d = dir("fault");
    s.save(&d).expect("save");
    let mut loaded = State::load(&d).expect("a consistent checksum loads");
    let found = audit(&mut loaded).expect("audit");
    assert!(
        matches!(&found, Audit::RolledBack { from: 4_500, to: 4_000, what } if what.contains("done = 4500")),
        "{found:?}"
    );
    let ev = run(State::load(&d).expect("load"), &d, &opts()).expect("run");
    assert_eq!(ev, direct(&n, &x, 10_000, 1_000));
    let _ = std::fs::remove_dir_all(&d);
}

/// An edited `done` (the value no longer x^(2^done)) and an edited last checkpoint are
/// caught the same way; the checkpoint case walks back to the one before.
#[test]
fn an_edited_done_or_checkpoint_is_rolled_back() {
    let n = modulus();
    let x = U4096::from_u64(13);
    let want = direct(&n, &x, 10_000, 1_000);
    let mut edited_done = partial(&n, &x, 10_000, 1_000, 4_500);
    edited_done.done = 4_700;
    let mut edited_cp = partial(&n, &x, 10_000, 1_000, 4_500);
    edited_cp.checkpoints[4].1 .0[3] ^= 1 << 9;
    for (s, to) in [(edited_done, 4_000), (edited_cp, 3_000)] {
        let mut a = s.clone();
        let found = audit(&mut a).expect("audit");
        assert!(
            matches!(found, Audit::RolledBack { to: t, .. } if t == to),
            "{found:?}"
        );
        let d = dir(&format!("edited-{to}"));
        assert_eq!(run(s, &d, &opts()).expect("run"), want);
        let _ = std::fs::remove_dir_all(&d);
    }
    // A sound state is left as it is.
    let mut sound = partial(&n, &x, 10_000, 1_000, 4_500);
    let before = sound.clone();
    assert_eq!(audit(&mut sound).expect("audit"), Audit::Sound);
    assert_eq!(sound, before);
}

/// More faulty checkpoints than MAX_ROLLBACK in a row: refused, naming what differs.
#[test]
fn too_many_faulty_checkpoints_are_refused() {
    let n = modulus();
    let x = U4096::from_u64(17);
    let mut s = partial(&n, &x, 10_000, 1_000, 9_000);
    for j in 9 - MAX_ROLLBACK..=9 {
        s.checkpoints[j].1 .0[1] ^= 1;
    }
    let d = dir("unsound");
    let r = run(s, &d, &opts());
    assert!(
        matches!(&r, Err(ResumeError::Unsound(m)) if m.contains("checkpoint at 9000")),
        "{r:?}"
    );
}

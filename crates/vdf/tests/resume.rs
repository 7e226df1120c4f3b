//! Resumable evaluation: a state saved at any point (on or between checkpoints) resumes to
//! exactly the direct evaluation; damaged or inconsistent state files are refused; a
//! fault in the chain is detected by the segment recomputation.

use std::path::PathBuf;
use std::time::Duration;

use wirespeed_vdf::resume::{run, ResumeError, RunOptions, State};
use wirespeed_vdf::{eval, EvalOptions, Modulus, ProofKind, VdfError, U4096};

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

#[test]
fn a_fault_mid_segment_is_detected_at_the_next_checkpoint() {
    let n = modulus();
    let mut s = partial(&n, &U4096::from_u64(11), 10_000, 1_000, 4_500);
    // A silently wrong value between checkpoints 4 and 5.
    s.value.0[0] ^= 1;
    let d = dir("fault");
    let r = run(s, &d, &opts());
    assert!(
        matches!(
            r,
            Err(ResumeError::Vdf(VdfError::InconsistentEvaluation(_)))
        ),
        "{r:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

//! The Python half of the tracing compiler (`python/wirespeed_trace`): runs its
//! standard-library unittest suite, `python3 -m unittest discover -s python/tests -t
//! python`, from the repository root. Skipped, with a line saying so, where `python3`
//! (3.9 or newer) is missing.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// The repository root (two levels above this crate).
fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .and_then(|p| p.parent())
        .expect("crates/cli sits two levels below the root")
        .to_path_buf()
}

/// True when `python3` runs and is at least 3.9.
fn python3_usable() -> bool {
    Command::new("python3")
        .args([
            "-c",
            "import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn python_trace_compiler_unittests_pass() {
    if !python3_usable() {
        // Straight to stderr, past the test harness's capture, so the skip shows.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: python3 not found (3.9 or newer is needed for python/tests)"
        );
        return;
    }
    let root = repo_root();
    let out = Command::new("python3")
        .args([
            "-m",
            "unittest",
            "discover",
            "-s",
            "python/tests",
            "-t",
            "python",
        ])
        .current_dir(&root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python/tests failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    // unittest reports "Ran N tests" and "OK" on stderr.
    assert!(stderr.contains("\nOK"), "{stderr}");
    assert!(
        !stderr.contains("Ran 0 tests"),
        "no tests were found:\n{stderr}"
    );
}

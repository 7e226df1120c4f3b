//! The Python half of the tracing compiler (`python/wirespeed_trace`): runs its
//! standard-library unittest suite, `python3 -m unittest discover -s python/tests -t
//! python`, from the repository root. Skipped, with a line saying so, where `python3`
//! (3.9 or newer) is missing.

mod common;

use std::process::Command;

use common::{python3_runs, repo_root, skipped, PYTHON_3_9};

#[test]
fn python_trace_compiler_unittests_pass() {
    if !python3_runs(PYTHON_3_9) {
        skipped("python3 not found (3.9 or newer is needed for python/tests)");
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

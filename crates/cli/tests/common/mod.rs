//! Helpers shared by the CLI tests.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the built `wirespeed` binary.
pub fn wirespeed(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .output()
        .expect("run wirespeed")
}

/// A path in a per-process temporary directory for the test group `group`.
pub fn temp(group: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirespeed-cli-{group}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

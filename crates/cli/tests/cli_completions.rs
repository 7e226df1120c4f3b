//! Conveniences generated from the CLI definition, through the real binary: shell
//! completions for bash, zsh and fish that name the commands and flags (the bash one
//! parses as bash), the man page, and clap's suggestions for a mistyped subcommand,
//! flag or value kept in the one-line usage error.

mod common;

use common::wirespeed;

fn stdout(args: &[&str]) -> String {
    let o = wirespeed(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}");
    String::from_utf8(o.stdout).expect("UTF-8")
}

#[test]
fn completions_name_the_commands_and_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout(&["completions", shell]);
        for word in [
            "wirespeed",
            "timelock",
            "accumulator",
            "checkpoint-dir",
            "lcs35",
        ] {
            assert!(script.contains(word), "{shell}: no '{word}'");
        }
    }
    let o = wirespeed(&["completions", "powershell-9"]);
    assert_eq!(o.status.code(), Some(1));
    // The bash script is valid bash (where bash is installed).
    let path = common::temp("completions", "wirespeed.bash");
    std::fs::write(&path, stdout(&["completions", "bash"])).expect("write");
    if let Ok(o) = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
    {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn man_page_is_roff_listing_the_subcommands() {
    let page = stdout(&["man"]);
    assert!(
        page.contains(".TH wirespeed 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    for sub in ["vdf", "timelock", "completions", "kvs"] {
        assert!(page.contains(sub), "no '{sub}'");
    }
    // The pages it lists exist: `wirespeed man vdf verify` is wirespeed-vdf-verify(1),
    // with that command's flags.
    assert!(page.contains("wirespeed\\-vdf(1)"), "{page}");
    let sub = stdout(&["man", "vdf", "verify"]);
    assert!(sub.contains(".TH wirespeed-vdf-verify 1"), "{sub}");
    assert!(sub.contains("modulus\\-file"), "{sub}");
    let o = wirespeed(&["man", "vdf", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no subcommand 'nope'"));
}

#[test]
fn mistyped_names_get_a_suggestion_on_one_line() {
    for (args, want) in [
        (vec!["verfy", "x"], "'verify'"),
        (vec!["vdf", "eval", "--x", "3", "--tt", "5"], "'--t'"),
        (
            vec![
                "vdf",
                "eval",
                "--x",
                "3",
                "--t",
                "5",
                "--proof",
                "wesolowsky",
            ],
            "'wesolowski'",
        ),
        (vec!["timelock", "solv"], "'solve'"),
    ] {
        let o = wirespeed(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("similar") && err.contains(want),
            "{args:?}: {err}"
        );
    }
}

/// A reader that stops early (`wirespeed completions bash | head`) ends the command
/// quietly: status 0, nothing on stderr. The script is larger than a pipe holds, so the
/// write meets the closed pipe.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["completions", "bash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let mut out = child.stdout.take().expect("stdout");
    let mut head = [0u8; 16];
    out.read_exact(&mut head).expect("the start of the script");
    drop(out);
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

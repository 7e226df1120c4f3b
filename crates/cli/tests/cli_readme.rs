//! The README's usage examples say what the binary prints: the sample counts of its
//! `gen sigs` / `verify` example (read from the README itself, so a change to either
//! side fails here) and `monitor --json` needing `--once`.

mod common;

use common::{repo_root, temp, wirespeed};

/// The `# count=.. valid=.. invalid=..` comment under the README's `verify` example.
fn readme_counts() -> (String, String) {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let gen = lines
        .iter()
        .find(|l| l.starts_with("wirespeed gen sigs "))
        .expect("the README's gen sigs example")
        .split('#')
        .next()
        .expect("command")
        .trim()
        .to_string();
    let counts = lines
        .iter()
        .find(|l| l.starts_with("# count="))
        .expect("the README's verify summary")
        .trim_start_matches("# ")
        .to_string();
    (gen, counts)
}

#[test]
fn the_verify_example_prints_the_counts_the_readme_shows() {
    let (gen, counts) = readme_counts();
    // The counts part only: secs and per_sec vary.
    let want: String = counts
        .split_whitespace()
        .filter(|f| {
            ["count=", "valid=", "invalid="]
                .iter()
                .any(|k| f.starts_with(k))
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(want.split(' ').count(), 3, "{counts}");
    let out = temp("readme", "sigs.bin");
    let out_s = out.to_str().expect("utf-8");
    let mut args: Vec<&str> = gen.split_whitespace().skip(1).collect();
    let at = args.iter().position(|a| *a == "--out").expect("--out") + 1;
    args[at] = out_s;
    let o = wirespeed(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = wirespeed(&["verify", out_s, "--mode", "strict"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = String::from_utf8_lossy(&o.stdout);
    assert!(
        got.starts_with(&format!("{want} secs=")),
        "README: {want}; got: {got}"
    );
    let _ = std::fs::remove_file(&out);
}

#[test]
fn monitor_json_needs_once_as_the_readme_says() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    assert!(readme.contains("--json needs --once"), "the README says it");
    let o = wirespeed(&["monitor", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--once"), "{err}");
}

//! The committed programs under `crates/eccvm/programs/` are exactly what the Python
//! compiler writes today: regenerates them with
//! `python3 -m wirespeed_trace rfc8032 --out-dir DIR` and compares byte for byte, so a
//! change to the compiler or to `rfc8032.py` cannot leave stale fixtures behind. Skipped,
//! with a line saying so, where `python3` (3.9 or newer) is missing.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use wirespeed_eccvm::rfc8032;

fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .and_then(|p| p.parent())
        .expect("crates/eccvm sits two levels below the root")
        .to_path_buf()
}

#[test]
fn committed_programs_match_the_compiler() {
    if !wirespeed_eccvm::testing::python3_usable() {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: python3 not found (3.9 or newer is needed to regenerate the programs)"
        );
        return;
    }
    let root = repo_root();
    let dir = std::env::temp_dir().join(format!("wirespeed-eccvm-fixtures-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new("python3")
        .args(["-m", "wirespeed_trace", "rfc8032", "--out-dir"])
        .arg(&dir)
        .env("PYTHONPATH", root.join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "the compiler failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut generated: Vec<String> = std::fs::read_dir(&dir)
        .expect("output directory")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".wtp").map(str::to_string)
        })
        .collect();
    generated.sort();
    let mut embedded: Vec<String> = rfc8032::ALL.iter().map(|(s, _)| s.to_string()).collect();
    embedded.sort();
    assert_eq!(
        generated, embedded,
        "the compiler writes other programs than are committed"
    );
    for (stem, bytes) in rfc8032::ALL {
        let fresh = std::fs::read(dir.join(format!("{stem}.wtp"))).expect("generated program");
        assert!(
            fresh == *bytes,
            "crates/eccvm/programs/{stem}.wtp is stale: regenerate with \
             `PYTHONPATH=python python3 -m wirespeed_trace rfc8032 --out-dir DIR` and copy DIR/*.wtp"
        );
    }
    let committed = std::fs::read_dir(root.join("crates/eccvm/programs"))
        .expect("programs directory")
        .count();
    assert_eq!(
        committed,
        rfc8032::ALL.len(),
        "files under programs/ that are not embedded"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

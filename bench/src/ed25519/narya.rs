//! Narya (<https://github.com/Overclock-Validator/narya-ed25519>), a Go Ed25519 verifier
//! with AVX-512 IFMA kernels and ed25519-dalek `verify_strict` verdicts, timed out of
//! process by the Go program in bench/narya on the same records as the other contenders.
//!
//! Narya is not part of this repository: `--narya DIR` (or `WIRESPEED_NARYA_SRC`) names a
//! checkout of it. Each run copies bench/narya into `target/narya-build`, points the
//! module at DIR with `go mod edit -replace`, and builds `target/narya-bench`. The records
//! go to a temporary file in the binary record format; the program forces Narya's `r51`
//! backend and times `VerifyBatchStrict` in chunks of [`CHUNK`] on N goroutines
//! (`GOMAXPROCS` = N), and `VerifyStrict` one signature per call for the latency.

use std::fs;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;

use wirespeed_sigdata::format::{Format, RecordWriter};
use wirespeed_sigdata::Record;

/// Narya's Go module path.
pub const MODULE: &str = "github.com/Overclock-Validator/narya-ed25519";
/// The environment variable read when `--narya` is not given.
pub const ENV: &str = "WIRESPEED_NARYA_SRC";
/// Signatures per `VerifyBatchStrict` call.
pub const CHUNK: usize = 64;
/// The Narya backend the program forces (its default, `generic`, is portable Go).
pub const BACKEND: &str = "r51";

/// The built program and what it was built from.
#[derive(Clone, Debug)]
pub struct Narya {
    bin: PathBuf,
    /// The Narya checkout, canonicalized.
    pub source: PathBuf,
}

/// What one run of the program printed (its JSON line), the fields used here.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Records verified per pass.
    pub n: usize,
    /// Median seconds per pass.
    pub secs_median: f64,
    /// Records Narya accepted.
    pub valid: usize,
    /// Single mode: median and 99th percentile of one call, microseconds.
    pub p50_us: Option<f64>,
    /// See `p50_us`.
    pub p99_us: Option<f64>,
    /// Narya's verdict per record ('1' valid, '0' invalid).
    pub verdicts: Vec<bool>,
    /// The backend Narya ran (`r51`).
    pub backend: String,
    /// Narya's module version as required by bench/narya/go.mod.
    pub version: String,
    /// The Go toolchain.
    pub go_version: String,
}

fn go(args: &[&str], dir: &Path) -> Result<(), String> {
    let out = Command::new("go")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("Narya: cannot run `go` (is Go installed and on PATH?): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "Narya: `go {}` failed in {}:\n{}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        ))
    }
}

impl Narya {
    /// Builds bench/narya against the Narya checkout `src` into `target/narya-bench`.
    pub fn build(src: &Path) -> Result<Narya, String> {
        let source = src
            .canonicalize()
            .map_err(|e| format!("Narya source {}: {e}", src.display()))?;
        let gomod = fs::read_to_string(source.join("go.mod"))
            .map_err(|e| format!("Narya source {}: go.mod: {e}", source.display()))?;
        if gomod.lines().next().map(str::trim) != Some(&format!("module {MODULE}")) {
            return Err(format!(
                "Narya source {}: go.mod does not declare module {MODULE}",
                source.display()
            ));
        }
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = manifest.join("../target");
        let build = target.join("narya-build");
        let _ = fs::remove_dir_all(&build);
        fs::create_dir_all(&build).map_err(|e| format!("{}: {e}", build.display()))?;
        for f in ["go.mod", "go.sum", "main.go"] {
            fs::copy(manifest.join("narya").join(f), build.join(f))
                .map_err(|e| format!("copying bench/narya/{f}: {e}"))?;
        }
        let replace = format!("-replace={MODULE}={}", source.display());
        go(&["mod", "edit", &replace], &build)?;
        let bin = target.join("narya-bench");
        let bin_str = bin.to_str().ok_or("target path is not UTF-8")?;
        go(&["build", "-o", bin_str, "."], &build)?;
        Ok(Narya { bin, source })
    }

    /// Runs the program on `file` (its first `n` records) with `args` and parses its line.
    pub fn run(&self, file: &Path, n: usize, args: &[&str]) -> Result<Run, String> {
        let verdicts = file.with_extension("verdicts");
        let out = Command::new(&self.bin)
            .arg("--file")
            .arg(file)
            .arg("--verdicts")
            .arg(&verdicts)
            .args([
                "--n",
                &n.to_string(),
                "--backend",
                BACKEND,
                "--allow-invalid",
            ])
            .args(args)
            .output()
            .map_err(|e| format!("Narya: running {}: {e}", self.bin.display()))?;
        if !out.status.success() {
            return Err(format!(
                "Narya: {} {} failed: {}",
                self.bin.display(),
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim_end()
            ));
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("Narya: output is not one JSON line: {e}"))?;
        let raw = fs::read(&verdicts).map_err(|e| format!("Narya verdicts: {e}"))?;
        let _ = fs::remove_file(&verdicts);
        let num = |k: &str| {
            v[k].as_f64()
                .ok_or_else(|| format!("Narya: output lacks {k}"))
        };
        let text = |k: &str| v[k].as_str().unwrap_or("unknown").to_string();
        Ok(Run {
            n: num("n")? as usize,
            secs_median: num("secs_median")?,
            valid: num("valid")? as usize,
            p50_us: v["p50_us"].as_f64(),
            p99_us: v["p99_us"].as_f64(),
            verdicts: raw.iter().map(|&b| b == b'1').collect(),
            backend: text("backend"),
            version: text("narya_version"),
            go_version: text("go_version"),
        })
    }
}

/// Writes `records` to `path` in the binary record format.
pub fn write_records(path: &Path, records: &[Record]) -> Result<(), String> {
    let file = fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = RecordWriter::new(BufWriter::new(file), Format::Bin);
    for r in records {
        w.write(r).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    w.finish()
        .map(drop)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Fails unless Narya's verdicts equal `ours` record by record, naming the first
/// disagreement and the valid counts on both sides.
pub fn check_verdicts(what: &str, ours: &[bool], run: &Run) -> Result<(), String> {
    let ours_valid = ours.iter().filter(|&&ok| ok).count();
    if run.verdicts.len() != ours.len() || run.n != ours.len() {
        return Err(format!(
            "Narya {what}: verdicts for {} records (n = {}), wirespeed has {}",
            run.verdicts.len(),
            run.n,
            ours.len()
        ));
    }
    let diff: Vec<usize> = (0..ours.len())
        .filter(|&i| ours[i] != run.verdicts[i])
        .collect();
    if diff.is_empty() && run.valid == ours_valid {
        return Ok(());
    }
    let first = diff.first().copied().unwrap_or(0);
    Err(format!(
        "VERDICT DISAGREEMENT, Narya {what}: Narya accepted {} of {} records, wirespeed \
         (strict) {ours_valid}; {} records differ, first: record {first} (wirespeed {}, Narya {})",
        run.valid,
        ours.len(),
        diff.len(),
        ours.get(first).copied().unwrap_or(false),
        run.verdicts.get(first).copied().unwrap_or(false),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(verdicts: &[bool]) -> Run {
        Run {
            n: verdicts.len(),
            secs_median: 1.0,
            valid: verdicts.iter().filter(|&&v| v).count(),
            p50_us: None,
            p99_us: None,
            verdicts: verdicts.to_vec(),
            backend: BACKEND.into(),
            version: "v0".into(),
            go_version: "go".into(),
        }
    }

    #[test]
    fn equal_verdicts_pass() {
        assert!(check_verdicts("t", &[true, false, true], &run(&[true, false, true])).is_ok());
    }

    #[test]
    fn a_disagreement_names_the_record_and_both_counts() {
        let e = check_verdicts("t", &[true, true, true], &run(&[true, false, true])).unwrap_err();
        assert!(e.contains("DISAGREEMENT"), "{e}");
        assert!(e.contains("Narya accepted 2 of 3"), "{e}");
        assert!(e.contains("wirespeed (strict) 3"), "{e}");
        assert!(e.contains("first: record 1"), "{e}");
    }

    #[test]
    fn a_short_verdict_file_fails() {
        assert!(check_verdicts("t", &[true, true], &run(&[true])).is_err());
    }

    #[test]
    fn records_round_trip_in_the_binary_format() {
        let records = wirespeed_sigdata::gen::generate(3, 5, 1, 0.0);
        let path = std::env::temp_dir().join(format!("narya-rt-{}.bin", std::process::id()));
        write_records(&path, &records).unwrap();
        let bytes = fs::read(&path).unwrap();
        let _ = fs::remove_file(&path);
        assert_eq!(bytes.len(), 3 * (4 + 5 + 64 + 32));
        assert_eq!(&bytes[..4], &5u32.to_le_bytes());
        assert_eq!(&bytes[9..73], &records[0].sig[..]);
        assert_eq!(&bytes[73..105], &records[0].pk[..]);
    }
}

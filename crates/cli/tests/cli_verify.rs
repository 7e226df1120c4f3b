//! Runs the `wirespeed` binary: gen -> verify in both formats, verdict files, the JSON
//! summary, truncated and malformed inputs, and argument errors.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use wirespeed_ed25519::{verify, Mode};
use wirespeed_sigdata::format::{read_path, Format};
use wirespeed_sigdata::Record;

/// A fresh directory under the system temp dir, removed on drop.
mod common;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "wirespeed-cli-{name}-{}-{nanos}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn wirespeed<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .output()
        .expect("run wirespeed")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a failure with one clear line on stderr and no panic; returns that line.
fn one_error_line(o: &Output) -> String {
    let err = stderr(o);
    assert!(!o.status.success(), "expected failure, stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    assert!(err.starts_with("error: "), "{err}");
    err.trim_end().to_string()
}

fn gen(out: &Path, n: usize, msg_len: usize, seed: u64, bad: f64, extra: &[&str]) {
    let mut args: Vec<String> = [
        "gen",
        "sigs",
        "--n",
        &n.to_string(),
        "--msg-len",
        &msg_len.to_string(),
        "--seed",
        &seed.to_string(),
        "--bad-frac",
        &bad.to_string(),
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    let o = wirespeed(&args);
    assert!(o.status.success(), "gen failed: {}", stderr(&o));
}

fn records(path: &Path, format: Format) -> Vec<Record> {
    let read = read_path(path, format).expect("read back");
    assert_eq!(read.error, None);
    read.records
}

/// The verdict lines wirespeed_ed25519::verify gives for `records`.
fn expected_verdicts(records: &[Record], mode: Mode) -> Vec<String> {
    records
        .iter()
        .map(|r| match verify(&r.msg, &r.sig, &r.pk, mode) {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("invalid {}", e.name()),
        })
        .collect()
}

fn verdict_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("verdict file")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Parses `count=.. valid=.. invalid=.. secs=.. per_sec=..` into (count, valid, invalid).
fn summary(line: &str) -> (usize, usize, usize) {
    let mut v = [None; 3];
    let keys: Vec<&str> = line
        .split_whitespace()
        .filter_map(|kv| {
            let (k, val) = kv.split_once('=')?;
            let slot = ["count", "valid", "invalid"].iter().position(|x| *x == k);
            if let Some(i) = slot {
                v[i] = val.parse::<usize>().ok();
            }
            Some(k)
        })
        .collect();
    assert_eq!(
        keys,
        ["count", "valid", "invalid", "secs", "per_sec"],
        "{line}"
    );
    (
        v[0].expect("count"),
        v[1].expect("valid"),
        v[2].expect("invalid"),
    )
}

#[test]
fn gen_then_verify_both_formats() {
    let dir = TempDir::new("roundtrip");
    let n = 400;
    let bin = dir.path("sigs.bin");
    let jsonl = dir.path("sigs.jsonl");
    let forced = dir.path("sigs.data");
    gen(&bin, n, 33, 11, 0.1, &[]);
    gen(&jsonl, n, 33, 11, 0.1, &[]);
    gen(&forced, n, 33, 11, 0.1, &["--format", "jsonl"]);
    let recs = records(&bin, Format::Bin);
    assert_eq!(recs.len(), n);
    assert_eq!(
        records(&jsonl, Format::Jsonl),
        recs,
        "same data in both formats"
    );
    assert_eq!(
        records(&forced, Format::Jsonl),
        recs,
        "--format overrides extension"
    );

    for (mode, extra) in [
        (Mode::Strict, vec![]),
        (
            Mode::Zip215,
            vec!["--mode", "zip215", "--threads", "1", "--backend", "serial"],
        ),
        (
            Mode::Libsodium,
            vec!["--mode", "libsodium", "--backend", "avx2"],
        ),
        (
            Mode::CofactoredStrict,
            vec!["--mode", "cofactored-strict", "--backend", "cpu"],
        ),
    ] {
        let want = expected_verdicts(&recs, mode);
        let bad = want.iter().filter(|l| *l != "ok").count();
        assert!(
            (15..=80).contains(&bad),
            "about 10% bad expected, got {bad}"
        );
        for (file, fmt) in [(&bin, None), (&jsonl, None), (&forced, Some("jsonl"))] {
            let out = dir.path("verdicts.txt");
            let mut args = vec!["verify".to_string(), file.display().to_string()];
            args.extend(extra.iter().map(|s| s.to_string()));
            if let Some(f) = fmt {
                args.extend(["--format".to_string(), f.to_string()]);
            }
            args.extend(["--verdicts".to_string(), out.display().to_string()]);
            let o = wirespeed(&args);
            assert!(
                o.status.success(),
                "{mode} {}: {}",
                file.display(),
                stderr(&o)
            );
            assert_eq!(verdict_lines(&out), want, "{mode} {}", file.display());
            let line = stdout(&o);
            assert_eq!(line.lines().count(), 1, "{line}");
            assert_eq!(summary(line.trim()), (n, n - bad, bad), "{line}");
        }
    }
}

#[test]
fn gen_is_deterministic() {
    let dir = TempDir::new("determinism");
    let (a, b) = (dir.path("a.bin"), dir.path("b.bin"));
    gen(&a, 50, 7, 99, 0.2, &[]);
    gen(&b, 50, 7, 99, 0.2, &[]);
    assert_eq!(std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
    assert_eq!(std::fs::metadata(&a).expect("a").len(), 50 * (4 + 7 + 96));
}

#[test]
fn json_summary_has_exactly_the_keys() {
    let dir = TempDir::new("json");
    let file = dir.path("s.bin");
    gen(&file, 60, 16, 5, 0.25, &[]);
    let o = wirespeed(&[
        "verify".to_string(),
        file.display().to_string(),
        "--json".into(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("one JSON object");
    let obj = v.as_object().expect("object");
    let keys: BTreeSet<&str> = obj.keys().map(String::as_str).collect();
    let want: BTreeSet<&str> = [
        "count",
        "valid",
        "invalid",
        "secs",
        "per_sec",
        "kernel",
        "microarch",
        "cpu_family",
    ]
    .into();
    assert_eq!(keys, want);
    for k in ["count", "valid", "invalid", "secs", "per_sec", "cpu_family"] {
        assert!(obj[k].is_number(), "{k}: {text}");
    }
    // The kernel named is one this CPU runs (auto on a machine without a GPU: the
    // widest CPU lanes; the GPU only where one is present).
    let kernel = obj["kernel"].as_str().expect("kernel");
    assert!(
        ["ifma", "ifma4", "avx2", "serial", "gpu"].contains(&kernel),
        "{text}"
    );
    assert!(!obj["microarch"].as_str().expect("microarch").is_empty());
    let recs = records(&file, Format::Bin);
    let bad = expected_verdicts(&recs, Mode::Strict)
        .iter()
        .filter(|l| *l != "ok")
        .count() as u64;
    assert_eq!(obj["count"].as_u64(), Some(60));
    assert_eq!(obj["invalid"].as_u64(), Some(bad));
    assert_eq!(obj["valid"].as_u64(), Some(60 - bad));
}

#[test]
fn truncated_file_verifies_the_records_before_it_and_exits_2() {
    let dir = TempDir::new("truncated");
    let file = dir.path("t.bin");
    gen(&file, 30, 20, 8, 0.2, &[]);
    let full = std::fs::read(&file).expect("file");
    let record = 4 + 20 + 64 + 32;
    // Cut record 17 ten bytes into its signature.
    let sig_at = 17 * record + 4 + 20;
    std::fs::write(&file, &full[..sig_at + 10]).expect("truncate");
    let out = dir.path("v.txt");
    // Batch sizes around the error position and the default exercise every boundary.
    for batch in ["1", "5", "16", "17", "18", "65536"] {
        let o = wirespeed(&[
            "verify".to_string(),
            file.display().to_string(),
            "--verdicts".into(),
            out.display().to_string(),
            "--batch".into(),
            batch.into(),
        ]);
        assert_eq!(o.status.code(), Some(2), "batch {batch}: {}", stderr(&o));
        let all = records(&dir_copy(&dir, &full), Format::Bin);
        assert_eq!(
            verdict_lines(&out),
            expected_verdicts(&all[..17], Mode::Strict),
            "batch {batch}"
        );
        assert_eq!(summary(stdout(&o).trim()).0, 17, "batch {batch}");
    }
    let o = wirespeed(&[
        "verify".to_string(),
        file.display().to_string(),
        "--verdicts".into(),
        out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = one_error_line(&o);
    assert!(
        err.contains(&format!(
            "record 17 at byte offset {sig_at}: truncated signature (need 64 bytes, 10 left)"
        )),
        "{err}"
    );
    let all = records(&dir_copy(&dir, &full), Format::Bin);
    assert_eq!(
        verdict_lines(&out),
        expected_verdicts(&all[..17], Mode::Strict)
    );
    let (count, _, _) = summary(stdout(&o).trim());
    assert_eq!(count, 17);
}

/// Writes `bytes` to a new file in `dir` and returns its path.
fn dir_copy(dir: &TempDir, bytes: &[u8]) -> PathBuf {
    let p = dir.path("copy.bin");
    std::fs::write(&p, bytes).expect("copy");
    p
}

#[test]
fn huge_length_prefix_is_a_clean_error() {
    let dir = TempDir::new("huge");
    let file = dir.path("h.bin");
    std::fs::write(&file, [0xff, 0xff, 0xff, 0xff, 1, 2]).expect("write");
    let o = wirespeed(&["verify".to_string(), file.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let err = one_error_line(&o);
    assert!(
        err.contains("record 0 at byte offset 4: truncated message"),
        "{err}"
    );
}

#[test]
fn malformed_jsonl_names_the_record() {
    let dir = TempDir::new("badjson");
    let file = dir.path("m.jsonl");
    gen(&file, 4, 8, 2, 0.0, &[]);
    let mut text = std::fs::read_to_string(&file).expect("file");
    let second_line_end = text.match_indices('\n').nth(1).map_or(0, |(i, _)| i + 1);
    text.insert_str(
        second_line_end,
        "\n{\"pk\":\"00\",\"msg\":\"xyz\",\"sig\":\"00\"}\n",
    );
    std::fs::write(&file, &text).expect("write");
    let out = dir.path("v.txt");
    let o = wirespeed(&[
        "verify".to_string(),
        file.display().to_string(),
        "--verdicts".into(),
        out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = one_error_line(&o);
    let offset = second_line_end + 1;
    assert!(
        err.contains(&format!(
            "record 2 at byte offset {offset}: key \"msg\" is not valid hex"
        )),
        "{err}"
    );
    assert_eq!(verdict_lines(&out), ["ok", "ok"]);
}

#[test]
fn jsonl_31_byte_key_is_bad_length() {
    let dir = TempDir::new("badlen");
    let good = dir.path("g.jsonl");
    gen(&good, 2, 10, 4, 0.0, &[]);
    let recs = records(&good, Format::Jsonl);
    let r = &recs[0];
    let line = |pk: &[u8], sig: &[u8]| {
        format!(
            "{{\"pk\":\"{}\",\"msg\":\"{}\",\"sig\":\"{}\"}}\n",
            hex::encode_upper(pk),
            hex::encode(&r.msg),
            hex::encode(sig)
        )
    };
    let file = dir.path("b.jsonl");
    let text = line(&r.pk, &r.sig) + &line(&r.pk[..31], &r.sig) + "\n" + &line(&r.pk, &r.sig[..63]);
    std::fs::write(&file, text).expect("write");
    let out = dir.path("v.txt");
    let o = wirespeed(&[
        "verify".to_string(),
        file.display().to_string(),
        "--verdicts".into(),
        out.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        verdict_lines(&out),
        ["ok", "invalid BadLength", "invalid BadLength"]
    );
}

#[test]
fn missing_file_is_one_clear_line() {
    let dir = TempDir::new("missing");
    let file = dir.path("does-not-exist.bin");
    let o = wirespeed(&["verify".to_string(), file.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let err = one_error_line(&o);
    assert!(
        err.contains("cannot read") && err.contains("does-not-exist.bin"),
        "{err}"
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn gpu_backend_gives_the_cpu_verdicts_or_one_error_line() {
    let dir = TempDir::new("gpu");
    let file = dir.path("s.bin");
    // Above the GPU's smallest batch, with a tenth of the signatures corrupted.
    gen(&file, 5000, 64, 5, 0.1, &[]);
    let recs = records(&file, Format::Bin);
    for mode in Mode::ALL {
        let out = dir.path("v.txt");
        let o = wirespeed(&[
            "verify".as_ref(),
            file.as_os_str(),
            "--backend".as_ref(),
            "gpu".as_ref(),
            "--mode".as_ref(),
            mode.name().as_ref(),
            "--verdicts".as_ref(),
            out.as_os_str(),
        ]);
        if !common::ran_on_gpu(&o, "verify --backend gpu") {
            return;
        }
        assert_eq!(
            verdict_lines(&out),
            expected_verdicts(&recs, mode),
            "{mode}"
        );
    }
}

#[test]
fn bad_arguments_are_one_clear_line() {
    let dir = TempDir::new("badargs");
    let file = dir.path("s.bin");
    gen(&file, 3, 1, 1, 0.0, &[]);
    let f = file.display().to_string();
    for (args, needle) in [
        (
            vec!["verify", &f, "--mode", "lenient"],
            "unknown mode 'lenient'",
        ),
        (
            vec!["verify", &f, "--backend", "cuda"],
            "unknown backend 'cuda'",
        ),
        (
            vec!["verify", &f, "--format", "csv"],
            "unknown format 'csv'",
        ),
        (vec!["verify", &f, "--threads", "0"], "thread count"),
        (vec!["verify"], "<FILE>"),
        (
            vec![
                "gen",
                "sigs",
                "--n",
                "100000001",
                "--msg-len",
                "1",
                "--seed",
                "1",
                "--out",
                &f,
            ],
            "--n 100000001 is too large",
        ),
        (
            vec![
                "gen",
                "sigs",
                "--n",
                "1",
                "--msg-len",
                "16777217",
                "--seed",
                "1",
                "--out",
                &f,
            ],
            "--msg-len 16777217 is too large",
        ),
        (
            vec![
                "gen",
                "sigs",
                "--n",
                "1",
                "--msg-len",
                "1",
                "--seed",
                "1",
                "--out",
                &f,
                "--bad-frac",
                "1.5",
            ],
            "fraction",
        ),
        (
            vec!["demo", "--only", "nothing"],
            "unknown demo section 'nothing'",
        ),
    ] {
        let o = wirespeed(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = one_error_line(&o);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
    // The rejected gen runs left the file as it was.
    assert_eq!(records(&file, Format::Bin).len(), 3);
}

#[test]
fn demo_quick_checks_every_mode() {
    let o = wirespeed(&["demo", "--quick"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}\n{out}", stderr(&o));
    for mode in Mode::ALL {
        let rows = out
            .lines()
            .filter(|l| l.starts_with(&format!("{mode} ")))
            .count();
        assert!(rows >= 2, "{mode}: {out}");
    }
    assert!(out.contains("p99 us") && !out.contains("MISMATCH"), "{out}");
    // The key-value section ran its server and checked every reply.
    assert_eq!(out.matches("every reply as expected").count(), 2, "{out}");
}

#[test]
fn demo_gpu_section_runs_or_says_why_not() {
    let o = wirespeed(&["demo", "--quick", "--only", "gpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("== GPU backend (CUDA) (gpu) =="), "{text}");
    // Either the reason there is no GPU, or every GPU answer checked against the CPU.
    assert!(
        text.contains("no usable GPU: ") || text.matches("ok (").count() == 5,
        "{text}"
    );
}

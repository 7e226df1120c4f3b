//! `wirespeed trace`: compile the sum-of-squares example through the embedded Python
//! compiler, run it in the VM on every backend and compare with the Python interpreter
//! (`python3 -m wirespeed_trace run`) and the untraced reference (`ref`) on the same
//! inputs; run a committed RFC 8032 program on edge encodings; stats as Python prints
//! them; one-line errors with exit status 2 for malformed programs and input files, 1
//! for the rest. Tests that need python3 (3.9 or newer) say "skipped" where it is
//! missing.

mod common;

use std::io::Write;
use std::process::{Command, Output};

use common::{missing_client, python3_runs, repo_root, skipped, temp, wirespeed, PYTHON_3_9};

fn python3_usable() -> bool {
    python3_runs(PYTHON_3_9)
}

fn skip(what: &str) {
    missing_client(&format!("python3 3.9 or newer (to {what})"));
}

/// `python3 -m wirespeed_trace ARGS` with the repository's package.
fn python(args: &[&str]) -> Output {
    Command::new("python3")
        .args(["-m", "wirespeed_trace"])
        .args(args)
        .env("PYTHONPATH", repo_root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed ({}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

/// Exit status and the single line of stderr of a failed run.
fn failure(o: &Output) -> (i32, String) {
    assert!(!o.status.success(), "expected a failure");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error: "), "{err}");
    (o.status.code().expect("exit code"), err)
}

fn program(stem: &str) -> String {
    repo_root()
        .join("crates/eccvm/programs")
        .join(format!("{stem}.wtp"))
        .display()
        .to_string()
}

fn backends() -> Vec<&'static str> {
    // An unavailable backend is an error (exit 1), so keep those that run here: the GPU
    // joins the list on a machine with one.
    let mut v = vec!["auto", "serial", "cpu"];
    for b in ["avx2", "ifma", "gpu"] {
        let probe = temp("trace", "probe.hex");
        std::fs::write(&probe, "").unwrap();
        let o = wirespeed(&[
            "trace",
            "run",
            &program("scalar-range"),
            "--inputs",
            probe.to_str().unwrap(),
            "--backend",
            b,
        ]);
        if o.status.success() {
            v.push(b);
        }
    }
    v
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Two-input lines for the sum-of-squares example: edge values and a few others.
fn sum_inputs() -> String {
    let mut p = [0xffu8; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    let mut p_minus_1 = p;
    p_minus_1[0] -= 1;
    let mut two_128 = [0u8; 32];
    two_128[16] = 1;
    let top = {
        let mut t = [0u8; 32];
        t[31] = 0x80;
        t
    };
    let vals: Vec<[u8; 32]> = vec![
        [0; 32],
        {
            let mut one = [0u8; 32];
            one[0] = 1;
            one
        },
        p,
        p_minus_1,
        [0xff; 32],
        two_128,
        {
            let mut t = two_128;
            t[16] = 0;
            t[..16].fill(0xff);
            t
        },
        top,
        [0x5a; 32],
    ];
    let mut text = String::from("# a, b\n\n");
    for (i, a) in vals.iter().enumerate() {
        let b = &vals[(i * 5 + 3) % vals.len()];
        text.push_str(&format!("{} {}\n", hex(a), hex(b)));
    }
    text
}

#[test]
fn compile_run_and_compare_with_python() {
    if !python3_usable() {
        return skip("compile the example");
    }
    let src = repo_root().join("python/examples/sum_of_squares.py");
    let prog = temp("trace", "sum.wtp");
    let dis = temp("trace", "sum.json");
    let out = wirespeed(&[
        "trace",
        "compile",
        src.to_str().unwrap(),
        "--out",
        prog.to_str().unwrap(),
        "--json",
        dis.to_str().unwrap(),
    ]);
    let printed = stdout(&out);
    assert!(printed.contains("instructions"), "{printed}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dis).unwrap()).expect("disassembly");
    assert_eq!(json["format"], "wirespeed-trace");

    let inputs = temp("trace", "sum.hex");
    std::fs::write(&inputs, sum_inputs()).unwrap();
    let (prog_s, in_s) = (prog.to_str().unwrap(), inputs.to_str().unwrap());
    let py_run = stdout(&python(&["run", prog_s, "--inputs", in_s]));
    let py_ref = stdout(&python(&["ref", src.to_str().unwrap(), "--inputs", in_s]));
    assert_eq!(py_run, py_ref);
    assert_eq!(py_run.lines().count(), 9);
    for b in backends() {
        let vm = stdout(&wirespeed(&[
            "trace",
            "run",
            prog_s,
            "--inputs",
            in_s,
            "--backend",
            b,
        ]));
        assert_eq!(vm, py_run, "backend {b}");
    }
    // stats and stats --json print what Python prints.
    for extra in [&[][..], &["--json"][..]] {
        let mut args = vec!["stats", prog_s];
        args.extend_from_slice(extra);
        let py = stdout(&python(&args));
        let mut ours = vec!["trace"];
        ours.extend_from_slice(&args);
        assert_eq!(stdout(&wirespeed(&ours)), py, "{extra:?}");
    }
}

#[test]
fn rfc_program_on_edge_encodings() {
    let base = "5866666666666666666666666666666666666666666666666666666666666666";
    let zero = "0".repeat(64);
    let lines = [
        base.to_string(),
        format!("01{}", "0".repeat(62)),    // identity: small order
        format!("ed{}7f", "ff".repeat(30)), // y = p: reduces to y = 0, order 4
        format!("01{}80", "0".repeat(60)),  // negative zero, identity
        "ff".repeat(32),                    // y = 2^255 - 1 >= p
    ];
    let inputs = temp("trace", "edge.hex");
    std::fs::write(&inputs, lines.join("\n") + "\n").unwrap();
    let in_s = inputs.to_str().unwrap();
    let strict_a = program("decode-strict-a");
    for b in backends() {
        let out = stdout(&wirespeed(&[
            "trace",
            "run",
            &strict_a,
            "--inputs",
            in_s,
            "--backend",
            b,
        ]));
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(got.len(), lines.len());
        assert_eq!(
            got[0],
            format!("01 1ad5258f602d56c9b2a7259560c72c695cdcd6fd31e2a4c0fe536ecdd3366921 {base}")
        );
        for line in &got[1..4] {
            assert_eq!(*line, format!("00 {zero} {zero}"), "backend {b}");
        }
    }
    if python3_usable() {
        let vm = stdout(&wirespeed(&["trace", "run", &strict_a, "--inputs", in_s]));
        let py = stdout(&python(&["run", &strict_a, "--inputs", in_s]));
        assert_eq!(vm, py);
    } else {
        skip("compare with the Python interpreter");
    }
    // Standard input.
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["trace", "run", &strict_a, "--inputs", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{base}\n").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(stdout(&o).starts_with("01 1ad5"));
}

#[test]
fn gpu_backend_without_a_gpu_is_one_clear_error() {
    let inputs = temp("trace", "gpu.hex");
    std::fs::write(&inputs, format!("{}\n", "00".repeat(32))).unwrap();
    let o = wirespeed(&[
        "trace",
        "run",
        &program("decode-strict-a"),
        "--inputs",
        inputs.to_str().unwrap(),
        "--backend",
        "gpu",
    ]);
    if o.status.success() {
        skipped("a GPU is present: the no-GPU error is not exercised");
        return;
    }
    let (code, err) = failure(&o);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("error: GPU backend: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn stats_of_a_committed_program() {
    let out = stdout(&wirespeed(&["trace", "stats", &program("decode-strict-a")]));
    assert!(
        out.starts_with("instructions  304\nregisters     10\nconstants     4\n"),
        "{out}"
    );
    assert!(out.contains("sqr=255"), "{out}");
}

#[test]
fn malformed_programs_and_inputs_are_one_line_errors() {
    let good = std::fs::read(program("decode-strict-a")).unwrap();
    let inputs = temp("trace", "one.hex");
    std::fs::write(&inputs, format!("{}\n", "00".repeat(32))).unwrap();
    let in_s = inputs.to_str().unwrap();

    // Bad programs: exit 2, one line naming the file and the rule.
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("magic.wtp", [b"XXXX", &good[4..]].concat(), "bad magic"),
        ("short.wtp", good[..good.len() - 3].to_vec(), "truncated"),
        (
            "version.wtp",
            {
                let mut b = good.clone();
                b[4] = 9;
                b
            },
            "unsupported format version 9",
        ),
        (
            "field.wtp",
            {
                let mut b = good.clone();
                b[6] = 2;
                b
            },
            "rule",
        ),
        ("empty.wtp", Vec::new(), "truncated"),
    ];
    for (name, bytes, want) in cases {
        let p = temp("trace", name);
        std::fs::write(&p, bytes).unwrap();
        for sub in [
            &["run", p.to_str().unwrap(), "--inputs", in_s][..],
            &["stats", p.to_str().unwrap()][..],
        ] {
            let mut args = vec!["trace"];
            args.extend_from_slice(sub);
            let (code, err) = failure(&wirespeed(&args));
            assert_eq!(code, 2, "{name}: {err}");
            assert!(err.contains(want) && err.contains(name), "{name}: {err}");
        }
    }

    // Bad input files: exit 2, one line naming the file and line.
    let strict_a = program("decode-strict-a");
    for (text, want) in [
        (
            format!("# ok\n{}\nzz\n", "00".repeat(32)),
            "line 3: not hex",
        ),
        (
            format!("{}\n", "00".repeat(31)),
            "line 1: 31 bytes, the program takes 1 inputs",
        ),
        ("abc\n".to_string(), "line 1: not hex"),
    ] {
        let p = temp("trace", "bad.hex");
        std::fs::write(&p, text).unwrap();
        let (code, err) = failure(&wirespeed(&[
            "trace",
            "run",
            &strict_a,
            "--inputs",
            p.to_str().unwrap(),
        ]));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(want), "{err}");
    }

    // Missing files: exit 2 (an input that cannot be read); usage errors: exit 1.
    let (code, err) = failure(&wirespeed(&[
        "trace",
        "run",
        "/nonexistent.wtp",
        "--inputs",
        in_s,
    ]));
    assert_eq!(code, 2, "{err}");
    let (code, err) = failure(&wirespeed(&[
        "trace",
        "run",
        &strict_a,
        "--inputs",
        in_s,
        "--backend",
        "cuda",
    ]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unknown backend"), "{err}");
    let (code, _) = failure(&wirespeed(&["trace", "run", &strict_a]));
    assert_eq!(code, 1);
}

#[test]
fn compile_errors_are_one_line() {
    // Without python3 on PATH: a clear error, exit 1.
    let empty = temp("trace", "no-python-here");
    std::fs::create_dir_all(&empty).unwrap();
    let src = repo_root().join("python/examples/sum_of_squares.py");
    let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["trace", "compile", src.to_str().unwrap(), "--out"])
        .arg(temp("trace", "never.wtp"))
        .env("PATH", &empty)
        .output()
        .unwrap();
    let (code, err) = failure(&out);
    assert_eq!(code, 1);
    assert!(err.contains("python3 not found"), "{err}");

    // A missing source file.
    let (code, err) = failure(&wirespeed(&[
        "trace",
        "compile",
        "/nonexistent/x.py",
        "--out",
        temp("trace", "x.wtp").to_str().unwrap(),
    ]));
    assert_eq!(code, 2);
    assert!(err.contains("cannot read '/nonexistent/x.py'"), "{err}");

    if !python3_usable() {
        return skip("compile a bad source file");
    }
    // A Python `if` on a traced value: the compiler's own message, one line, exit 1.
    let bad = temp("trace", "bad.py");
    std::fs::write(
        &bad,
        "from wirespeed_trace import Fe25519\n\ndef program(inp):\n    a = Fe25519(inp[0])\n    if a == 1:\n        return a\n    return a * a\n",
    )
    .unwrap();
    let (code, err) = failure(&wirespeed(&[
        "trace",
        "compile",
        bad.to_str().unwrap(),
        "--out",
        temp("trace", "bad.wtp").to_str().unwrap(),
    ]));
    assert_eq!(code, 1);
    assert!(err.contains("select"), "{err}");
}

//! Files that never end: every command that reads a user file refuses a device that
//! streams forever (`/dev/zero`) and a pipe that does, at its size limit, with exit
//! status 2 and one line, instead of reading until memory runs out (the size the file
//! system reports for them is 0, so a check of that size alone lets them through).
//!
//! Linux only (`/dev/zero`, `mkfifo`); elsewhere skipped with a line saying so.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{skipped, temp, wirespeed};

/// Asserts `out` is a refusal of an over-long input: exit 2, one line saying `says`.
fn refused(what: &str, out: &std::process::Output, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(err.contains(says), "{what}: {err}");
}

#[test]
fn a_device_that_never_ends_is_refused_at_the_limit() {
    if !std::path::Path::new("/dev/zero").exists() {
        return skipped("no /dev/zero here");
    }
    // A real accumulator state, so its verify reaches the @FILE arguments.
    let state = temp("special", "acc.json");
    let elems = temp("special", "elems.txt");
    let _ = std::fs::remove_file(&state);
    std::fs::write(&elems, "aa\n").expect("elements");
    let out = wirespeed(&[
        "accumulator",
        "add",
        "--state",
        &state.to_string_lossy(),
        "--in",
        &elems.to_string_lossy(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state = state.to_string_lossy();
    // A real puzzle, proof, key and message, so each flag is reached with the others
    // well-formed.
    let puzzle = temp("special", "tl.json");
    let proof = temp("special", "proof.json");
    let key = temp("special", "k.pem");
    let msg = temp("special", "m.txt");
    let rsa = openssl::rsa::Rsa::generate(2048).expect("keygen");
    std::fs::write(&key, rsa.private_key_to_pem().expect("pem")).expect("key");
    std::fs::write(&msg, b"hello").expect("message");
    for args in [
        vec![
            "timelock",
            "create",
            "--t",
            "10",
            "--bits",
            "1024",
            "--message",
            "hi",
            "--out",
            puzzle.to_str().expect("utf-8"),
        ],
        vec![
            "vdf",
            "eval",
            "--x",
            "05",
            "--t",
            "16",
            "--out",
            proof.to_str().expect("utf-8"),
        ],
    ] {
        let o = wirespeed(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (puzzle, proof) = (puzzle.to_string_lossy(), proof.to_string_lossy());
    let (key, msg) = (key.to_string_lossy(), msg.to_string_lossy());
    let svg = temp("special", "merge.svg");
    let svg = svg.to_string_lossy();
    for args in [
        vec!["timelock", "open", "/dev/zero", "--solution", "02"],
        vec!["timelock", "open", &puzzle, "--solution", "@/dev/zero"],
        vec!["timelock", "solve", "/dev/zero"],
        vec!["timelock", "solve", "--lcs35", "/dev/zero"],
        vec!["vdf", "verify", "--modulus-file", "/dev/zero", &proof],
        vec![
            "vdf",
            "eval",
            "--modulus-file",
            "/dev/zero",
            "--x",
            "05",
            "--t",
            "4",
        ],
        vec!["rsa", "sign", "--key", "/dev/zero", "--in", &msg],
        vec![
            "rsa",
            "verify",
            "--pub",
            "/dev/zero",
            "--in",
            &msg,
            "--sig",
            &msg,
        ],
        vec![
            "rsa",
            "verify",
            "--pub",
            &key,
            "--in",
            &msg,
            "--sig",
            "/dev/zero",
        ],
        vec!["accumulator", "add", "--state", &state, "--in", "/dev/zero"],
        vec![
            "accumulator",
            "verify",
            "--state",
            "/dev/zero",
            "--elem",
            "aa",
            "--witness",
            "02",
        ],
        vec![
            "accumulator",
            "verify",
            "--state",
            &state,
            "--elem",
            "aa",
            "--witness",
            "02",
            "--modulus",
            "/dev/zero",
        ],
        vec!["pipeline", "run", "--topology", "/dev/zero"],
        vec!["kvs", "bench", "--svg-merge", "/dev/zero", "--svg", &svg],
    ] {
        refused(&args.join(" "), &wirespeed(&args), "at most");
    }
    // A checkpoint directory whose state is the device: refused, not read whole.
    let zero_dir = temp("special", "zero-state");
    let _ = std::fs::remove_dir_all(&zero_dir);
    std::fs::create_dir_all(&zero_dir).expect("dir");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/dev/zero", zero_dir.join("state")).expect("symlink");
        let z = zero_dir.to_str().expect("utf-8");
        for args in [
            vec!["vdf", "resume", z],
            vec![
                "vdf",
                "eval",
                "--x",
                "05",
                "--t",
                "100",
                "--checkpoint-dir",
                z,
            ],
            vec!["timelock", "solve", &puzzle, "--checkpoint-dir", z],
        ] {
            refused(
                &args.join(" "),
                &wirespeed(&args),
                "more than any valid state",
            );
        }
    }
    for args in [
        vec!["vdf", "verify", "/dev/zero"],
        vec!["msm", "--points", "/dev/zero", "--scalars", "/dev/zero"],
        vec!["trace", "run", "/dev/zero", "--inputs", "/dev/zero"],
        vec!["kvs", "serve", "--config", "/dev/zero", "--port", "0"],
        vec![
            "accumulator",
            "verify",
            "--state",
            &state,
            "--elem",
            "@/dev/zero",
            "--witness",
            "@/dev/zero",
        ],
    ] {
        let out = wirespeed(&args);
        // The MSM files announce their element count first (0 in /dev/zero): what
        // follows it is refused as not matching; the rest stop at their size limit.
        let says = if args[0] == "msm" {
            "does not match"
        } else {
            "at most"
        };
        refused(&args.join(" "), &out, says);
    }
}

#[test]
fn a_pipe_that_never_ends_is_refused_at_the_limit() {
    let puzzle = temp("special", "pipe-tl.json");
    let o = wirespeed(&[
        "timelock",
        "create",
        "--t",
        "10",
        "--bits",
        "1024",
        "--message",
        "hi",
        "--out",
        puzzle.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A file argument, and an @FILE argument.
    for (name, args) in [
        ("endless.fifo", vec!["vdf", "verify", "FIFO"]),
        (
            "endless-at.fifo",
            vec![
                "timelock",
                "open",
                puzzle.to_str().expect("utf-8"),
                "--solution",
                "@FIFO",
            ],
        ),
    ] {
        let fifo = temp("special", name);
        let _ = std::fs::remove_file(&fifo);
        let made = Command::new("mkfifo")
            .arg(&fifo)
            .output()
            .is_ok_and(|o| o.status.success());
        if !made {
            return skipped("mkfifo is not available: pipes not checked");
        }
        // A writer that feeds the pipe until the reader goes away.
        let path = fifo.clone();
        let writer = std::thread::spawn(move || {
            if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&path) {
                let block = vec![b'0'; 1 << 16];
                while f.write_all(&block).is_ok() {}
            }
        });
        let fifo_s = fifo.to_str().expect("utf-8");
        let args: Vec<String> = args.iter().map(|a| a.replace("FIFO", fifo_s)).collect();
        let start = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run wirespeed");
        loop {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("{args:?} kept reading an endless pipe");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().expect("output");
        refused(&args.join(" "), &out, "at most");
        let _ = writer.join();
    }
}

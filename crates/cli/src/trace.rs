//! `wirespeed trace`: compile Python reference code into a lane-VM program (through the
//! Python compiler, `python/wirespeed_trace`, which this binary carries), run programs in
//! the VM (`wirespeed-eccvm`), and print their counts. The input and output formats of
//! `run` and `stats` are those of `python3 -m wirespeed_trace run` and `stats`, so the
//! two can be compared with `diff` (docs/trace.md).

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::{Args, Subcommand};
use serde::Serialize;
use wirespeed_eccvm::{format_line, Program};
use wirespeed_engine::Backend;

use crate::error::CliError;
use crate::files::{read_bounded_bytes, read_bounded_text};
use crate::gpu::parse_with_lanes;

/// The largest program file `run` and `stats` read (64 MiB).
const MAX_PROGRAM_BYTES: usize = 64 << 20;
/// The largest input file `run` reads (1 GiB).
const MAX_INPUT_BYTES: usize = 1 << 30;

/// The Python compiler's package, embedded so the binary works outside the repository.
const PACKAGE: &[(&str, &str)] = &[
    (
        "__init__.py",
        include_str!("../../../python/wirespeed_trace/__init__.py"),
    ),
    (
        "__main__.py",
        include_str!("../../../python/wirespeed_trace/__main__.py"),
    ),
    (
        "backend.py",
        include_str!("../../../python/wirespeed_trace/backend.py"),
    ),
    (
        "compiler.py",
        include_str!("../../../python/wirespeed_trace/compiler.py"),
    ),
    (
        "field.py",
        include_str!("../../../python/wirespeed_trace/field.py"),
    ),
    (
        "interp.py",
        include_str!("../../../python/wirespeed_trace/interp.py"),
    ),
    (
        "passes.py",
        include_str!("../../../python/wirespeed_trace/passes.py"),
    ),
    (
        "program.py",
        include_str!("../../../python/wirespeed_trace/program.py"),
    ),
    (
        "rfc8032.py",
        include_str!("../../../python/wirespeed_trace/rfc8032.py"),
    ),
    (
        "trace.py",
        include_str!("../../../python/wirespeed_trace/trace.py"),
    ),
];

/// What `wirespeed trace` does.
#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Compile FILE.py's program(inp) into a VM program (needs python3 3.9+)
    Compile(CompileArgs),
    /// Run a program on every line of a hex input file, in the VM
    Run(RunArgs),
    /// Instruction, register, constant, input and output counts of a program
    Stats(StatsArgs),
}

/// Arguments of `wirespeed trace compile`.
#[derive(Args, Debug)]
#[command(after_help = "\
FILE.py defines program(inp) (or --function NAME); it may set INPUTS (default 1) and
FIELD (default Fe25519). See docs/trace.md and python/examples/. The compiler is the
Python package carried inside this binary, run with python3 from PATH.")]
pub struct CompileArgs {
    /// The Python file to compile
    #[arg(value_name = "FILE.py")]
    pub file: PathBuf,
    /// Where to write the binary program
    #[arg(long, value_name = "PROG")]
    pub out: PathBuf,
    /// Also write the JSON disassembly here
    #[arg(long, value_name = "DIS")]
    pub json: Option<PathBuf>,
    /// Register file size the program must fit (1..256)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub registers: Option<u16>,
    /// The function to compile
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
}

/// Arguments of `wirespeed trace run`.
#[derive(Args, Debug)]
#[command(after_help = "\
A line of the input file is the hex of all the program's inputs, 32 bytes each,
concatenated (whitespace ignored; blank lines and lines starting with # skipped; '-'
reads standard input). Prints one line per input line: the outputs in slot order,
separated by spaces, a field element as 64 hex digits (32 bytes, little-endian), a
boolean as 00 or 01 -- as `python3 -m wirespeed_trace run` does.
Exit status: 2 for a malformed program or input file, 1 for any other error.")]
pub struct RunArgs {
    /// The program (binary format of docs/trace-format.md)
    #[arg(value_name = "PROG")]
    pub program: PathBuf,
    /// The hex input file ('-': standard input)
    #[arg(long, value_name = "FILE")]
    pub inputs: PathBuf,
    /// Where to run: auto (the GPU for large inputs when present, else the best CPU
    /// lanes), cpu, gpu, or a CPU backend: serial, avx2 or ifma
    #[arg(long, value_name = "BACKEND", default_value = "auto", value_parser = parse_vm_backend)]
    pub backend: Backend,
}

/// Arguments of `wirespeed trace stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The program
    #[arg(value_name = "PROG")]
    pub program: PathBuf,
    /// Print the counts as JSON
    #[arg(long)]
    pub json: bool,
}

fn parse_vm_backend(s: &str) -> Result<Backend, String> {
    parse_with_lanes(s, &wirespeed_engine::eccvm::LANES)
}

/// Runs `wirespeed trace`.
pub fn run(cmd: &TraceCommand) -> Result<(), CliError> {
    match cmd {
        TraceCommand::Compile(a) => compile(a),
        TraceCommand::Run(a) => run_program(a),
        TraceCommand::Stats(a) => stats(a),
    }
}

/// A private directory removed (with its contents) when dropped.
struct TempDir(PathBuf);

impl TempDir {
    /// A new directory under the system temporary directory, readable by this user only.
    fn new() -> Result<TempDir, CliError> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last = None;
        for attempt in 0..16u32 {
            let dir = base.join(format!(
                "wirespeed-trace-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            let mut b = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            match b.create(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) => last = Some((dir, e)),
            }
        }
        let (path, source) = last.unwrap_or_else(|| unreachable!("16 attempts were made"));
        Err(CliError::Output { path, source })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The last non-empty line of the compiler's stderr, without its `error: ` prefix.
fn compiler_message(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message");
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

fn compile(a: &CompileArgs) -> Result<(), CliError> {
    // A missing source is reported here, in the CLI's words, rather than by Python.
    std::fs::File::open(&a.file).map_err(|source| CliError::Open {
        path: a.file.clone(),
        source,
    })?;
    let tmp = TempDir::new()?;
    let pkg = tmp.0.join("wirespeed_trace");
    crate::files::create_dir(&pkg)?;
    for (name, text) in PACKAGE {
        crate::files::write_file(&pkg.join(name), text.as_bytes())?;
    }
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "wirespeed_trace", "compile"])
        .arg(&a.file)
        .arg("--out")
        .arg(&a.out);
    if let Some(j) = &a.json {
        cmd.arg("--json").arg(j);
    }
    if let Some(r) = a.registers {
        cmd.arg("--registers").arg(r.to_string());
    }
    if let Some(f) = &a.function {
        cmd.arg("--function").arg(f);
    }
    let out = cmd
        .env("PYTHONPATH", &tmp.0)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map_err(|e| {
            CliError::Compiler(if e.kind() == std::io::ErrorKind::NotFound {
                "python3 not found: `wirespeed trace compile` runs the Python compiler, which needs python3 (3.9 or newer) on PATH".into()
            } else {
                format!("cannot run python3: {e}")
            })
        })?;
    if !out.status.success() {
        return Err(CliError::Compiler(compiler_message(&out.stderr)));
    }
    std::io::stdout()
        .write_all(&out.stdout)
        .map_err(CliError::Stdout)
}

fn load_program(path: &Path) -> Result<Program, CliError> {
    let bytes = read_bounded_bytes(path, MAX_PROGRAM_BYTES)?;
    Program::parse(&bytes).map_err(|e| CliError::MalformedInput {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The input sets of a hex input file, as `python3 -m wirespeed_trace run` reads them.
fn parse_inputs(path: &Path, text: &str, n_inputs: usize) -> Result<Vec<[u8; 32]>, CliError> {
    let bad = |message: String| CliError::MalformedInput {
        path: path.to_path_buf(),
        message,
    };
    let mut out = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let t: String = line.split_whitespace().collect();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let lineno = lineno + 1;
        if !t.len().is_multiple_of(2) || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad(format!("line {lineno}: not hex")));
        }
        let len = t.len() / 2;
        if len != 32 * n_inputs {
            return Err(bad(format!(
                "line {lineno}: {len} bytes, the program takes {n_inputs} inputs of 32 bytes"
            )));
        }
        let bytes: Vec<u8> = (0..len)
            .map(|i| u8::from_str_radix(&t[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect();
        for chunk in bytes.chunks_exact(32) {
            let mut v = [0u8; 32];
            v.copy_from_slice(chunk);
            out.push(v);
        }
    }
    Ok(out)
}

fn run_program(a: &RunArgs) -> Result<(), CliError> {
    let prog = load_program(&a.program)?;
    let text = if a.inputs.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .take(MAX_INPUT_BYTES as u64 + 1)
            .read_to_string(&mut s)
            .map_err(|source| CliError::Open {
                path: a.inputs.clone(),
                source,
            })?;
        if s.len() > MAX_INPUT_BYTES {
            return Err(CliError::MalformedInput {
                path: a.inputs.clone(),
                message: format!("more than {MAX_INPUT_BYTES} bytes"),
            });
        }
        s
    } else {
        read_bounded_text(&a.inputs, MAX_INPUT_BYTES)?
    };
    let inputs = parse_inputs(&a.inputs, &text, prog.inputs())?;
    let cpu = wirespeed_engine::backend::resolve(a.backend.lanes());
    if !cpu.available() {
        return Err(CliError::Invalid(format!(
            "backend '{cpu}' is not available on this CPU"
        )));
    }
    let sets = match prog.inputs() {
        0 => 0,
        n => inputs.len() / n,
    };
    let values = match wirespeed_engine::eccvm::run_sets(a.backend, &prog, sets, &inputs) {
        Ok(v) => Ok(v),
        Err(wirespeed_engine::eccvm::Error::Gpu(e)) => return Err(CliError::Gpu(e)),
        Err(wirespeed_engine::eccvm::Error::Run(e)) => Err(e),
    }
    .map_err(|e| CliError::Internal(e.to_string()))?;
    let stdout = std::io::stdout();
    let mut w = BufWriter::new(stdout.lock());
    for set in values.chunks(prog.output_kinds().len()) {
        writeln!(w, "{}", format_line(set)).map_err(CliError::Stdout)?;
    }
    w.flush().map_err(CliError::Stdout)
}

/// The counts, in the key order of `python3 -m wirespeed_trace stats --json`.
#[derive(Serialize)]
struct StatsJson {
    instructions: usize,
    registers: usize,
    constants: usize,
    inputs: usize,
    outputs: usize,
    by_op: std::collections::BTreeMap<&'static str, usize>,
}

fn stats(a: &StatsArgs) -> Result<(), CliError> {
    let s = load_program(&a.program)?.stats();
    let mut out = String::new();
    if a.json {
        let j = StatsJson {
            instructions: s.instructions,
            registers: s.registers,
            constants: s.constants,
            inputs: s.inputs,
            outputs: s.outputs,
            by_op: s.by_op.iter().copied().collect(),
        };
        // One-space indentation, as Python's json.dumps(indent=1).
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        j.serialize(&mut ser)
            .map_err(|e| CliError::Internal(e.to_string()))?;
        out.push_str(&String::from_utf8_lossy(&buf));
        out.push('\n');
    } else {
        for (k, v) in [
            ("instructions", s.instructions),
            ("registers", s.registers),
            ("constants", s.constants),
            ("inputs", s.inputs),
            ("outputs", s.outputs),
        ] {
            out.push_str(&format!("{k:<13} {v}\n"));
        }
        let ops: Vec<String> = s.by_op.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!("by op         {}\n", ops.join(" ")));
    }
    std::io::stdout()
        .write_all(out.as_bytes())
        .map_err(CliError::Stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_of_the_package_is_embedded() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/wirespeed_trace");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .expect("python/wirespeed_trace")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".py"))
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = PACKAGE.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }

    #[test]
    fn input_lines_parse_as_python_reads_them() {
        let p = Path::new("x");
        let a = "01".repeat(32);
        let text = format!("# comment\n\n  {a}  \n{}\n", a.to_uppercase());
        let v = parse_inputs(p, &text, 1).unwrap();
        assert_eq!(v, vec![[1u8; 32], [1u8; 32]]);
        let spaced = format!("{} {}", &a[..10], &a[10..]);
        assert_eq!(parse_inputs(p, &spaced, 1).unwrap().len(), 1);
        assert!(parse_inputs(p, "zz", 1)
            .unwrap_err()
            .to_string()
            .contains("line 1: not hex"));
        assert!(parse_inputs(p, &a, 2)
            .unwrap_err()
            .to_string()
            .contains("line 1: 32 bytes, the program takes 2 inputs"));
        assert!(parse_inputs(p, "abc", 1).is_err());
    }

    #[test]
    fn compiler_messages_are_one_line() {
        assert_eq!(
            compiler_message(b"Traceback\n  File x\nerror: bad thing\n\n"),
            "bad thing"
        );
        assert_eq!(compiler_message(b""), "no message");
    }
}

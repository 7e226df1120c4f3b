"""Command line: ``python3 -m wirespeed_trace COMMAND ...`` (run with python/ on the
module path, e.g. ``PYTHONPATH=python``).

  compile FILE.py --out PROG [--json DIS] [--registers N] [--function NAME]
      Traces FILE.py's ``program(inp)`` (see wirespeed_trace.compiler.Source for the
      file convention) and writes the binary program, and optionally its disassembly.
  run PROG --inputs HEXFILE
      Runs PROG on every line of HEXFILE ('-': stdin): the hex of the program's inputs,
      32 bytes each, concatenated (blank lines and lines starting with '#' skipped).
      Prints one line per input line: the outputs in slot order, separated by spaces,
      a field element as 64 hex digits (32 bytes, little-endian), a boolean as 00 or 01.
  ref FILE.py --inputs HEXFILE
      The same output from the untraced reference code (for comparison with run).
  stats PROG [--json]
      Instruction, register, constant, input and output counts, and instructions by op.
  disasm PROG
      The JSON disassembly on stdout.
  asm DIS --out PROG
      Assembles a JSON disassembly back into a binary program.
  rfc8032 --out-dir DIR
      Compiles every program of wirespeed_trace.rfc8032 into DIR (NAME.wtp, NAME.json)
      and prints their counts.

Errors are reported as one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .backend import RegisterFileError
from .compiler import DEFAULT_REGISTERS, Source, compile_function
from .interp import Interpreter
from .program import FormatError, Program
from .trace import TraceError


class CliError(Exception):
    pass


def _read(path, binary):
    try:
        if path == "-":
            return sys.stdin.buffer.read() if binary else sys.stdin.read()
        with open(path, "rb" if binary else "r") as f:
            return f.read()
    except OSError as e:
        raise CliError("cannot read %s: %s" % (path, e.strerror)) from None


def _write(path, data):
    try:
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
    except OSError as e:
        raise CliError("cannot write %s: %s" % (path, e.strerror)) from None


def _load_program(path):
    return Program.from_bytes(_read(path, True))


def _input_lines(path, n_inputs):
    for lineno, line in enumerate(_read(path, False).splitlines(), 1):
        text = "".join(line.split())
        if not text or text.startswith("#"):
            continue
        try:
            raw = bytes.fromhex(text)
        except ValueError:
            raise CliError("%s line %d: not hex" % (path, lineno)) from None
        if len(raw) != 32 * n_inputs:
            raise CliError("%s line %d: %d bytes, the program takes %d inputs of 32 bytes"
                           % (path, lineno, len(raw), n_inputs))
        yield [raw[32 * i:32 * i + 32] for i in range(n_inputs)]


def format_outputs(outputs):
    return " ".join(("01" if v else "00") if isinstance(v, bool) else v.hex() for v in outputs)


def cmd_compile(args):
    src = Source(args.file, args.function)
    compiled = src.compile(args.registers)
    _write(args.out, compiled.program.to_bytes())
    if args.json:
        _write(args.json, compiled.program.to_json())
    print("%s: %s" % (args.out, compiled.summary()))


def cmd_run(args):
    prog = _load_program(args.program)
    it = Interpreter(prog)
    for inputs in _input_lines(args.inputs, prog.n_inputs):
        print(format_outputs(it.run(inputs)))


def cmd_ref(args):
    src = Source(args.file, args.function)
    for inputs in _input_lines(args.inputs, src.inputs):
        print(format_outputs(src.reference(inputs)))


def cmd_stats(args):
    counts = _load_program(args.program).counts()
    if args.json:
        print(json.dumps(counts, indent=1))
        return
    for k in ("instructions", "registers", "constants", "inputs", "outputs"):
        print("%-13s %d" % (k, counts[k]))
    print("by op         " + " ".join("%s=%d" % kv for kv in counts["by_op"].items()))


def cmd_disasm(args):
    sys.stdout.write(_load_program(args.program).to_json())


def cmd_asm(args):
    _write(args.out, Program.from_json(_read(args.file, False)).to_bytes())


def cmd_rfc8032(args):
    from . import rfc8032

    os.makedirs(args.out_dir, exist_ok=True)
    print("%-30s %12s %9s %9s" % ("program", "instructions", "registers", "constants"))
    for stem, fn, n_inputs in rfc8032.all_programs():
        c = compile_function(fn, n_inputs, registers=args.registers)
        base = os.path.join(args.out_dir, stem)
        _write(base + ".wtp", c.program.to_bytes())
        _write(base + ".json", c.program.to_json())
        print("%-30s %12d %9d %9d" % (stem, c.stats["instructions"], c.stats["registers"],
                                       c.stats["constants"]))


def parser():
    ap = argparse.ArgumentParser(
        prog="python3 -m wirespeed_trace",
        description="Tracing compiler from Python reference code to lane-VM programs.",
    )
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("compile", help="compile FILE.py's program(inp)")
    p.add_argument("file")
    p.add_argument("--out", required=True)
    p.add_argument("--json")
    p.add_argument("--registers", type=int, default=DEFAULT_REGISTERS)
    p.add_argument("--function", default="program")
    p.set_defaults(run=cmd_compile)
    p = sub.add_parser("run", help="run a program on hex inputs")
    p.add_argument("program")
    p.add_argument("--inputs", required=True)
    p.set_defaults(run=cmd_run)
    p = sub.add_parser("ref", help="run FILE.py's reference code on hex inputs")
    p.add_argument("file")
    p.add_argument("--inputs", required=True)
    p.add_argument("--function", default="program")
    p.set_defaults(run=cmd_ref)
    p = sub.add_parser("stats", help="instruction and register counts")
    p.add_argument("program")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_stats)
    p = sub.add_parser("disasm", help="JSON disassembly")
    p.add_argument("program")
    p.set_defaults(run=cmd_disasm)
    p = sub.add_parser("asm", help="assemble a JSON disassembly")
    p.add_argument("file")
    p.add_argument("--out", required=True)
    p.set_defaults(run=cmd_asm)
    p = sub.add_parser("rfc8032", help="compile every RFC 8032 decoding/check program")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--registers", type=int, default=DEFAULT_REGISTERS)
    p.set_defaults(run=cmd_rfc8032)
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    regs = getattr(args, "registers", None)
    if regs is not None and not 1 <= regs <= 256:
        print("error: --registers must be in 1..256", file=sys.stderr)
        return 1
    try:
        args.run(args)
    except (CliError, FormatError, TraceError, RegisterFileError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

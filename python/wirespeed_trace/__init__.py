"""wirespeed_trace: a tracing compiler from Python reference code to branch-free
programs for a lane-parallel field-arithmetic VM.

Write reference code once against the field classes and helpers below; run it on plain
ints for the reference answer, or compile it (``compile_function``) into a program
(docs/trace-format.md) that the interpreter here, and the lane VMs, execute.
"""

from .backend import RegisterFileError
from .compiler import DEFAULT_REGISTERS, Compiled, compile_function, reference, trace_function
from .field import L, P25519, Fe25519, FieldElement, Fp, Scalar
from .interp import Interpreter, run_program
from .program import FormatError, Program
from .trace import Bool, Raw, TraceError, all_of, any_of, bit, lnot, low_bits, select

__all__ = [
    "Bool",
    "Compiled",
    "DEFAULT_REGISTERS",
    "Fe25519",
    "FieldElement",
    "FormatError",
    "Fp",
    "Interpreter",
    "L",
    "P25519",
    "Program",
    "Raw",
    "RegisterFileError",
    "Scalar",
    "TraceError",
    "all_of",
    "any_of",
    "bit",
    "compile_function",
    "lnot",
    "low_bits",
    "reference",
    "run_program",
    "select",
    "trace_function",
]

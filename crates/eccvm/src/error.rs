//! Load and run errors. Each [`ProgramError`] names the validation rule of
//! docs/trace-format.md (section 5) that the program breaks, and the instruction index
//! where there is one.

use std::fmt;

use crate::program::{Kind, Opcode};

/// Why a program was refused by [`crate::Program::parse`]. The number in each message is
/// the rule of docs/trace-format.md section 5.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgramError {
    /// Rules 1 and 5: the file is shorter than its header or than its header's counts say.
    Truncated {
        /// The file's length in bytes.
        len: u64,
        /// The length the header (or the header alone) needs.
        need: u64,
    },
    /// Rule 5: bytes follow the last instruction.
    TrailingBytes {
        /// The file's length in bytes.
        len: u64,
        /// The length the header's counts give.
        expected: u64,
    },
    /// Rule 2: the file does not start with `WSTP`.
    BadMagic([u8; 4]),
    /// Rule 3: a format version this loader does not know.
    UnsupportedVersion(u16),
    /// Rule 4: a field id the format does not define (only 0, 1 and 2 exist).
    UnknownField(u16),
    /// Rule 4: a field the format defines but this VM does not run (it runs field 1,
    /// GF(2^255-19)). Reported only for programs that are otherwise valid.
    UnsupportedField(u16),
    /// Rule 6: the register count is not in 1..=256.
    RegisterCount(u16),
    /// Rule 7: the program declares no output.
    NoOutputs,
    /// Rule 8: an output kind byte other than 0 (field) or 1 (bool).
    OutputKind {
        /// The output slot.
        slot: u16,
        /// The byte found.
        kind: u8,
    },
    /// Rule 9: a field-0 program without constant 0 or with constant 0 (its modulus)
    /// below 3.
    GenericModulus,
    /// Rule 10: an opcode that section 4 does not define.
    UnknownOpcode {
        /// Instruction index.
        index: u32,
        /// The opcode byte.
        opcode: u8,
    },
    /// Rule 11: a field the opcode does not use is not 0.
    UnusedField {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// Which field: "dst", "a", "b" or "c".
        field: &'static str,
        /// Its value.
        value: u16,
    },
    /// Rule 12: the destination register is not below the register count.
    DstOutOfRange {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The register.
        reg: u16,
        /// The register count.
        registers: u16,
    },
    /// Rule 13: a register operand is not below the register count.
    RegisterOutOfRange {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The register.
        reg: u16,
        /// The register count.
        registers: u16,
    },
    /// Rule 13: a register is read before any instruction wrote it.
    ReadBeforeWrite {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The register.
        reg: u16,
    },
    /// Rule 13: a register holds the other kind than the operand needs.
    WrongKind {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The register.
        reg: u16,
        /// What the register holds.
        holds: Kind,
        /// What the operand needs.
        needs: Kind,
    },
    /// Rule 14: an input index is not below the input count.
    InputOutOfRange {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The input index.
        input: u16,
        /// The input count.
        inputs: u16,
    },
    /// Rule 15: a bit count not in 1..=256.
    BitCount {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The count.
        nbits: u16,
    },
    /// Rule 15: a bit index not in 0..=255.
    BitIndex {
        /// Instruction index.
        index: u32,
        /// The index found.
        bit: u16,
    },
    /// Rule 16: a constant index not below the constant count.
    ConstantOutOfRange {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The constant index.
        constant: u16,
        /// The constant count.
        constants: u16,
    },
    /// Rule 16: `const` names an entry that is not below the modulus.
    ConstantNotReduced {
        /// Instruction index.
        index: u32,
        /// The constant index.
        constant: u16,
    },
    /// Rule 17: a `bconst` immediate other than 0 or 1.
    BoolImmediate {
        /// Instruction index.
        index: u32,
        /// The immediate.
        value: u16,
    },
    /// Rule 18: an output slot not below the output count.
    OutputOutOfRange {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The slot.
        slot: u16,
        /// The output count.
        outputs: u16,
    },
    /// Rule 18: an output instruction of the other kind than the slot's declaration.
    OutputKindMismatch {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The slot.
        slot: u16,
        /// The slot's declared kind.
        declared: Kind,
    },
    /// Rule 18: an output slot written a second time.
    OutputWrittenTwice {
        /// Instruction index.
        index: u32,
        /// The opcode.
        op: Opcode,
        /// The slot.
        slot: u16,
    },
    /// Rule 19: an output slot that no instruction writes.
    OutputNotWritten {
        /// The slot.
        slot: u16,
    },
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ProgramError::*;
        match self {
            Truncated { len, need } => write!(
                f,
                "truncated program: {len} bytes, the header says {need} (rule 1/5)"
            ),
            TrailingBytes { len, expected } => write!(
                f,
                "trailing bytes: the program is {len} bytes, the header says {expected} (rule 5)"
            ),
            BadMagic(m) => write!(
                f,
                "bad magic {:02x}{:02x}{:02x}{:02x}: not a WSTP program (rule 2)",
                m[0], m[1], m[2], m[3]
            ),
            UnsupportedVersion(v) => {
                write!(f, "unsupported format version {v} (this loader reads version 1; rule 3)")
            }
            UnknownField(id) => write!(f, "unknown field id {id} (rule 4)"),
            UnsupportedField(id) => write!(
                f,
                "unsupported field id {id}: this VM runs field 1, GF(2^255-19) (rule 4)"
            ),
            RegisterCount(n) => write!(f, "register count {n} not in 1..256 (rule 6)"),
            NoOutputs => write!(f, "the program declares no outputs (rule 7)"),
            OutputKind { slot, kind } => write!(
                f,
                "output o{slot} has kind byte {kind}, neither 0 (field) nor 1 (bool) (rule 8)"
            ),
            GenericModulus => write!(
                f,
                "field 0 needs its modulus (>= 3) as constant 0 (rule 9)"
            ),
            UnknownOpcode { index, opcode } => {
                write!(f, "instruction {index}: unknown opcode 0x{opcode:02x} (rule 10)")
            }
            UnusedField { index, op, field, value } => write!(
                f,
                "instruction {index} ({op}): unused field {field} is {value}, must be 0 (rule 11)"
            ),
            DstOutOfRange { index, op, reg, registers } => write!(
                f,
                "instruction {index} ({op}): destination r{reg} out of range ({registers} registers; rule 12)"
            ),
            RegisterOutOfRange { index, op, reg, registers } => write!(
                f,
                "instruction {index} ({op}): register r{reg} out of range ({registers} registers; rule 13)"
            ),
            ReadBeforeWrite { index, op, reg } => write!(
                f,
                "instruction {index} ({op}): reads r{reg} before it is written (rule 13)"
            ),
            WrongKind { index, op, reg, holds, needs } => write!(
                f,
                "instruction {index} ({op}): r{reg} holds a {holds}, a {needs} is needed (rule 13)"
            ),
            InputOutOfRange { index, op, input, inputs } => write!(
                f,
                "instruction {index} ({op}): input in{input} out of range ({inputs} inputs; rule 14)"
            ),
            BitCount { index, op, nbits } => write!(
                f,
                "instruction {index} ({op}): bit count {nbits} not in 1..256 (rule 15)"
            ),
            BitIndex { index, bit } => write!(
                f,
                "instruction {index} (bit): bit index {bit} not in 0..255 (rule 15)"
            ),
            ConstantOutOfRange { index, op, constant, constants } => write!(
                f,
                "instruction {index} ({op}): constant c{constant} out of range ({constants} constants; rule 16)"
            ),
            ConstantNotReduced { index, constant } => write!(
                f,
                "instruction {index} (const): constant c{constant} is not below the modulus (rule 16)"
            ),
            BoolImmediate { index, value } => write!(
                f,
                "instruction {index} (bconst): immediate {value} is not 0 or 1 (rule 17)"
            ),
            OutputOutOfRange { index, op, slot, outputs } => write!(
                f,
                "instruction {index} ({op}): output o{slot} out of range ({outputs} outputs; rule 18)"
            ),
            OutputKindMismatch { index, op, slot, declared } => write!(
                f,
                "instruction {index} ({op}): output o{slot} is declared {declared} (rule 18)"
            ),
            OutputWrittenTwice { index, op, slot } => write!(
                f,
                "instruction {index} ({op}): output o{slot} is written twice (rule 18)"
            ),
            OutputNotWritten { slot } => {
                write!(f, "output o{slot} is never written (rule 19)")
            }
        }
    }
}

impl std::error::Error for ProgramError {}

/// Why a run was refused (the program itself was valid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The number of 32-byte inputs given is not `sets` times the program's input count.
    InputCount {
        /// Inputs given.
        given: usize,
        /// The program's inputs per set.
        per_set: usize,
        /// Sets asked for.
        sets: usize,
    },
    /// The output buffer would not fit in memory (sets times outputs overflows).
    TooManySets(usize),
    /// A caller's output buffer is not `sets` times the program's output count long.
    OutputLen {
        /// The buffer's length.
        given: usize,
        /// The length needed.
        needed: usize,
    },
    /// The backend asked for needs instructions this CPU lacks.
    BackendUnavailable(crate::Lanes),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::InputCount {
                given,
                per_set,
                sets,
            } => write!(
                f,
                "{given} inputs given; {sets} sets of {per_set} inputs need {}",
                sets.saturating_mul(*per_set)
            ),
            RunError::TooManySets(n) => write!(f, "{n} input sets are too many for one run"),
            RunError::OutputLen { given, needed } => {
                write!(
                    f,
                    "output buffer of {given} values; the run writes {needed}"
                )
            }
            RunError::BackendUnavailable(b) => {
                write!(f, "backend '{}' is not available on this CPU", b.name())
            }
        }
    }
}

impl std::error::Error for RunError {}

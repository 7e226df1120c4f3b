//! The program format of docs/trace-format.md (version 1): header, output kinds,
//! constant pool, 8-byte instructions; and its loader, which enforces every validation
//! rule of section 5 before anything can run.
//!
//! The loader never panics and never allocates from a count it has not checked: every
//! count in the header is first checked against the file's actual length (rule 5), so
//! the vectors it builds are bounded by the input's size.

use std::fmt;

use crate::code::{self, Op};
use crate::error::ProgramError;

/// The four bytes every program starts with.
pub const MAGIC: [u8; 4] = *b"WSTP";
/// The format version this loader reads.
pub const VERSION: u16 = 1;
/// Size of the fixed header in bytes.
pub const HEADER_LEN: usize = 20;
/// Size of one instruction in bytes.
pub const INSTRUCTION_LEN: usize = 8;
/// Size of one constant-pool entry in bytes.
pub const CONSTANT_LEN: usize = 32;
/// The largest register file a program may declare.
pub const MAX_REGISTERS: u16 = 256;
/// Field id of GF(2^255 - 19), the one field this VM runs.
pub const FIELD_25519: u16 = 1;

/// p = 2^255 - 19, little-endian.
const P25519: [u8; 32] = le_hex("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed");
/// L = 2^252 + 27742317777372353535851937790883648493, little-endian.
const L_ORDER: [u8; 32] =
    le_hex("1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed");

/// Parses 64 big-endian hex digits into 32 little-endian bytes (compile time only).
const fn le_hex(s: &str) -> [u8; 32] {
    let b = s.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        let hi = nibble(b[2 * i]);
        let lo = nibble(b[2 * i + 1]);
        out[31 - i] = (hi << 4) | lo;
        i += 1;
    }
    out
}

const fn nibble(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        _ => c - b'a' + 10,
    }
}

/// `a < b` for 256-bit little-endian integers.
pub(crate) fn lt_le(a: &[u8; 32], b: &[u8; 32]) -> bool {
    for i in (0..32).rev() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    false
}

/// The kind of a register or output slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A field element.
    Field,
    /// A boolean.
    Bool,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Field => "field element",
            Kind::Bool => "boolean",
        })
    }
}

/// What an operand field (a, b or c) of an instruction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operand {
    /// A register holding a field element.
    RegF,
    /// A register holding a boolean.
    RegB,
    /// An input index.
    Input,
    /// A bit count, 1..=256.
    NBits,
    /// A bit index, 0..=255.
    BitIdx,
    /// A constant index whose entry is below the modulus.
    ConstF,
    /// Any constant index.
    ConstK,
    /// 0 or 1.
    Imm01,
    /// An output slot declared field.
    OutF,
    /// An output slot declared bool.
    OutB,
}

macro_rules! opcodes {
    ($($name:ident = $code:literal, $mn:literal, $dst:expr, [$($opnd:ident),*];)*) => {
        /// An instruction's operation (docs/trace-format.md section 4).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode {
            $(
                #[doc = concat!("`", $mn, "`")]
                $name,
            )*
        }

        impl Opcode {
            /// Every opcode, in code order.
            pub const ALL: [Opcode; 20] = [$(Opcode::$name),*];

            /// The opcode byte.
            pub fn code(self) -> u8 {
                match self { $(Opcode::$name => $code,)* }
            }

            /// The opcode with this byte, if the format defines one.
            pub fn from_code(code: u8) -> Option<Opcode> {
                match code { $($code => Some(Opcode::$name),)* _ => None }
            }

            /// The mnemonic of the disassembly.
            pub fn mnemonic(self) -> &'static str {
                match self { $(Opcode::$name => $mn,)* }
            }

            /// The kind the instruction writes to `dst` (None: no destination).
            pub fn dst_kind(self) -> Option<Kind> {
                match self { $(Opcode::$name => $dst,)* }
            }

            /// What fields a, b, c hold (a prefix of them; the rest are unused).
            fn operands(self) -> &'static [Operand] {
                match self { $(Opcode::$name => &[$(Operand::$opnd),*],)* }
            }
        }
    };
}

const F: Option<Kind> = Some(Kind::Field);
const B: Option<Kind> = Some(Kind::Bool);

opcodes! {
    Load = 0x01, "load", F, [Input, NBits];
    Bit = 0x02, "bit", B, [Input, BitIdx];
    RawLt = 0x03, "rawlt", B, [Input, ConstK, NBits];
    Const = 0x04, "const", F, [ConstF];
    BConst = 0x05, "bconst", B, [Imm01];
    Add = 0x10, "add", F, [RegF, RegF];
    Sub = 0x11, "sub", F, [RegF, RegF];
    Mul = 0x12, "mul", F, [RegF, RegF];
    Sqr = 0x13, "sqr", F, [RegF];
    Neg = 0x14, "neg", F, [RegF];
    Eq = 0x20, "eq", B, [RegF, RegF];
    IsZero = 0x21, "iszero", B, [RegF];
    Parity = 0x22, "parity", B, [RegF];
    And = 0x30, "and", B, [RegB, RegB];
    Or = 0x31, "or", B, [RegB, RegB];
    Xor = 0x32, "xor", B, [RegB, RegB];
    Not = 0x33, "not", B, [RegB];
    Select = 0x40, "select", F, [RegB, RegF, RegF];
    OutF = 0x50, "outf", None, [RegF, OutF];
    OutB = 0x51, "outb", None, [RegB, OutB];
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

/// One instruction as stored in the file (validated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The operation.
    pub op: Opcode,
    /// Destination register (0 for `outf`/`outb`).
    pub dst: u8,
    /// Operand a.
    pub a: u16,
    /// Operand b.
    pub b: u16,
    /// Operand c.
    pub c: u16,
}

impl fmt::Display for Instruction {
    /// The disassembly text of docs/trace-format.md section 6 (`mul r3, r1, r2`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.op.mnemonic())?;
        let mut sep = " ";
        if self.op.dst_kind().is_some() {
            write!(f, " r{}", self.dst)?;
            sep = ", ";
        }
        for (opnd, v) in self.op.operands().iter().zip([self.a, self.b, self.c]) {
            let prefix = match opnd {
                Operand::RegF | Operand::RegB => "r",
                Operand::Input => "in",
                Operand::ConstF | Operand::ConstK => "c",
                Operand::OutF | Operand::OutB => "o",
                Operand::NBits | Operand::BitIdx | Operand::Imm01 => "",
            };
            write!(f, "{sep}{prefix}{v}")?;
            sep = ", ";
        }
        Ok(())
    }
}

/// Counts of a program, as `python3 -m wirespeed_trace stats` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Instructions.
    pub instructions: usize,
    /// Registers declared.
    pub registers: usize,
    /// Constant-pool entries.
    pub constants: usize,
    /// Inputs per set.
    pub inputs: usize,
    /// Output slots.
    pub outputs: usize,
    /// Instructions per mnemonic, sorted by mnemonic (only those that occur).
    pub by_op: Vec<(&'static str, usize)>,
}

/// A validated program of field 1, GF(2^255 - 19), ready to run.
#[derive(Clone, Debug)]
pub struct Program {
    registers: u16,
    inputs: u16,
    output_kinds: Vec<Kind>,
    constants: Vec<[u8; 32]>,
    instructions: Vec<Instruction>,
    pub(crate) code: Vec<Op>,
}

fn u16_at(d: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([d[at], d[at + 1]])
}

impl Program {
    /// Loads a program, enforcing every rule of docs/trace-format.md section 5. A
    /// program of another field than 1 is refused with
    /// [`ProgramError::UnsupportedField`] (after the other rules are checked).
    pub fn parse(data: &[u8]) -> Result<Program, ProgramError> {
        let len = data.len() as u64;
        if data.len() < HEADER_LEN {
            return Err(ProgramError::Truncated {
                len,
                need: HEADER_LEN as u64,
            });
        }
        let magic = [data[0], data[1], data[2], data[3]];
        if magic != MAGIC {
            return Err(ProgramError::BadMagic(magic));
        }
        let version = u16_at(data, 4);
        if version != VERSION {
            return Err(ProgramError::UnsupportedVersion(version));
        }
        let field = u16_at(data, 6);
        if field > 2 {
            return Err(ProgramError::UnknownField(field));
        }
        let registers = u16_at(data, 8);
        let inputs = u16_at(data, 10);
        let n_out = u16_at(data, 12);
        let n_const = u16_at(data, 14);
        let n_instr = u32::from_le_bytes([data[16], data[17], data[18], data[19]]);
        let want = HEADER_LEN as u64
            + n_out as u64
            + CONSTANT_LEN as u64 * n_const as u64
            + INSTRUCTION_LEN as u64 * n_instr as u64;
        if len < want {
            return Err(ProgramError::Truncated { len, need: want });
        }
        if len > want {
            return Err(ProgramError::TrailingBytes {
                len,
                expected: want,
            });
        }
        if registers == 0 || registers > MAX_REGISTERS {
            return Err(ProgramError::RegisterCount(registers));
        }
        if n_out == 0 {
            return Err(ProgramError::NoOutputs);
        }
        // From here every count is bounded by the (checked) file length.
        let mut pos = HEADER_LEN;
        let mut output_kinds = Vec::with_capacity(n_out as usize);
        for (slot, &k) in data[pos..pos + n_out as usize].iter().enumerate() {
            output_kinds.push(match k {
                0 => Kind::Field,
                1 => Kind::Bool,
                kind => {
                    return Err(ProgramError::OutputKind {
                        slot: slot as u16,
                        kind,
                    })
                }
            });
        }
        pos += n_out as usize;
        let constants: Vec<[u8; 32]> = data[pos..pos + CONSTANT_LEN * n_const as usize]
            .chunks_exact(CONSTANT_LEN)
            .map(|c| {
                let mut k = [0u8; 32];
                k.copy_from_slice(c);
                k
            })
            .collect();
        pos += CONSTANT_LEN * n_const as usize;
        let modulus = match field {
            0 => {
                let three = {
                    let mut t = [0u8; 32];
                    t[0] = 3;
                    t
                };
                match constants.first() {
                    Some(q) if !lt_le(q, &three) => *q,
                    _ => return Err(ProgramError::GenericModulus),
                }
            }
            1 => P25519,
            _ => L_ORDER,
        };
        let mut v = Validator {
            registers,
            inputs,
            output_kinds: &output_kinds,
            constants: &constants,
            modulus,
            reg_kind: [None; 256],
            written: vec![false; n_out as usize],
        };
        let mut instructions = Vec::with_capacity(n_instr as usize);
        for (index, raw) in data[pos..].chunks_exact(INSTRUCTION_LEN).enumerate() {
            instructions.push(v.check(index as u32, raw)?);
        }
        if let Some(slot) = v.written.iter().position(|w| !w) {
            return Err(ProgramError::OutputNotWritten { slot: slot as u16 });
        }
        if field != FIELD_25519 {
            return Err(ProgramError::UnsupportedField(field));
        }
        let code = code::compile(&instructions);
        Ok(Program {
            registers,
            inputs,
            output_kinds,
            constants,
            instructions,
            code,
        })
    }

    /// The register count.
    pub fn registers(&self) -> usize {
        self.registers as usize
    }

    /// Inputs per set (32 bytes each).
    pub fn inputs(&self) -> usize {
        self.inputs as usize
    }

    /// The declared kind of every output slot.
    pub fn output_kinds(&self) -> &[Kind] {
        &self.output_kinds
    }

    /// The constant pool, 256-bit little-endian integers.
    pub fn constants(&self) -> &[[u8; 32]] {
        &self.constants
    }

    /// The instructions as stored in the file.
    pub fn instructions(&self) -> &[Instruction] {
        &self.instructions
    }

    /// Operations of the pre-decoded form the interpreter runs (runs of squarings of one
    /// register are fused into one operation, so this can be fewer than the
    /// instructions).
    pub fn decoded_len(&self) -> usize {
        self.code.len()
    }

    /// Instruction, register, constant, input and output counts, and instructions per op.
    pub fn stats(&self) -> Stats {
        let mut by_op: Vec<(&'static str, usize)> = Vec::new();
        for op in Opcode::ALL {
            let n = self.instructions.iter().filter(|i| i.op == op).count();
            if n > 0 {
                by_op.push((op.mnemonic(), n));
            }
        }
        by_op.sort();
        Stats {
            instructions: self.instructions.len(),
            registers: self.registers(),
            constants: self.constants.len(),
            inputs: self.inputs(),
            outputs: self.output_kinds.len(),
            by_op,
        }
    }

    /// Re-encodes the program in the binary format (byte-identical to what was parsed).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            HEADER_LEN
                + self.output_kinds.len()
                + CONSTANT_LEN * self.constants.len()
                + INSTRUCTION_LEN * self.instructions.len(),
        );
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&FIELD_25519.to_le_bytes());
        out.extend_from_slice(&self.registers.to_le_bytes());
        out.extend_from_slice(&self.inputs.to_le_bytes());
        out.extend_from_slice(&(self.output_kinds.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.constants.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.instructions.len() as u32).to_le_bytes());
        out.extend(self.output_kinds.iter().map(|k| (*k == Kind::Bool) as u8));
        for c in &self.constants {
            out.extend_from_slice(c);
        }
        for i in &self.instructions {
            out.push(i.op.code());
            out.push(i.dst);
            out.extend_from_slice(&i.a.to_le_bytes());
            out.extend_from_slice(&i.b.to_le_bytes());
            out.extend_from_slice(&i.c.to_le_bytes());
        }
        out
    }
}

/// The state of the instruction rules (10-18) while walking the program in order.
struct Validator<'a> {
    registers: u16,
    inputs: u16,
    output_kinds: &'a [Kind],
    constants: &'a [[u8; 32]],
    modulus: [u8; 32],
    /// Kind of each register's latest writer (None: not written yet).
    reg_kind: [Option<Kind>; 256],
    /// Output slots written so far.
    written: Vec<bool>,
}

impl Validator<'_> {
    fn check(&mut self, index: u32, raw: &[u8]) -> Result<Instruction, ProgramError> {
        let opcode = raw[0];
        let op = Opcode::from_code(opcode).ok_or(ProgramError::UnknownOpcode { index, opcode })?;
        let ins = Instruction {
            op,
            dst: raw[1],
            a: u16_at(raw, 2),
            b: u16_at(raw, 4),
            c: u16_at(raw, 6),
        };
        let operands = op.operands();
        // Rule 11.
        if op.dst_kind().is_none() && ins.dst != 0 {
            return Err(ProgramError::UnusedField {
                index,
                op,
                field: "dst",
                value: ins.dst as u16,
            });
        }
        let fields = [("a", ins.a), ("b", ins.b), ("c", ins.c)];
        for &(field, value) in &fields[operands.len()..] {
            if value != 0 {
                return Err(ProgramError::UnusedField {
                    index,
                    op,
                    field,
                    value,
                });
            }
        }
        // Rules 13-18, operand by operand.
        for (opnd, &(_, v)) in operands.iter().zip(&fields) {
            self.operand(index, op, *opnd, v)?;
        }
        // Rule 12; the write happens after the reads.
        if let Some(kind) = op.dst_kind() {
            if ins.dst as u16 >= self.registers {
                return Err(ProgramError::DstOutOfRange {
                    index,
                    op,
                    reg: ins.dst as u16,
                    registers: self.registers,
                });
            }
            self.reg_kind[ins.dst as usize] = Some(kind);
        }
        Ok(ins)
    }

    fn operand(
        &mut self,
        index: u32,
        op: Opcode,
        opnd: Operand,
        v: u16,
    ) -> Result<(), ProgramError> {
        match opnd {
            Operand::RegF | Operand::RegB => {
                let needs = if opnd == Operand::RegF {
                    Kind::Field
                } else {
                    Kind::Bool
                };
                if v >= self.registers {
                    return Err(ProgramError::RegisterOutOfRange {
                        index,
                        op,
                        reg: v,
                        registers: self.registers,
                    });
                }
                match self.reg_kind[v as usize] {
                    None => return Err(ProgramError::ReadBeforeWrite { index, op, reg: v }),
                    Some(holds) if holds != needs => {
                        return Err(ProgramError::WrongKind {
                            index,
                            op,
                            reg: v,
                            holds,
                            needs,
                        })
                    }
                    Some(_) => {}
                }
            }
            Operand::Input => {
                if v >= self.inputs {
                    return Err(ProgramError::InputOutOfRange {
                        index,
                        op,
                        input: v,
                        inputs: self.inputs,
                    });
                }
            }
            Operand::NBits => {
                if !(1..=256).contains(&v) {
                    return Err(ProgramError::BitCount {
                        index,
                        op,
                        nbits: v,
                    });
                }
            }
            Operand::BitIdx => {
                if v > 255 {
                    return Err(ProgramError::BitIndex { index, bit: v });
                }
            }
            Operand::ConstF | Operand::ConstK => {
                let Some(k) = self.constants.get(v as usize) else {
                    return Err(ProgramError::ConstantOutOfRange {
                        index,
                        op,
                        constant: v,
                        constants: self.constants.len() as u16,
                    });
                };
                if opnd == Operand::ConstF && !lt_le(k, &self.modulus) {
                    return Err(ProgramError::ConstantNotReduced { index, constant: v });
                }
            }
            Operand::Imm01 => {
                if v > 1 {
                    return Err(ProgramError::BoolImmediate { index, value: v });
                }
            }
            Operand::OutF | Operand::OutB => {
                let kind = if opnd == Operand::OutF {
                    Kind::Field
                } else {
                    Kind::Bool
                };
                let Some(&declared) = self.output_kinds.get(v as usize) else {
                    return Err(ProgramError::OutputOutOfRange {
                        index,
                        op,
                        slot: v,
                        outputs: self.output_kinds.len() as u16,
                    });
                };
                if declared != kind {
                    return Err(ProgramError::OutputKindMismatch {
                        index,
                        op,
                        slot: v,
                        declared,
                    });
                }
                if self.written[v as usize] {
                    return Err(ProgramError::OutputWrittenTwice { index, op, slot: v });
                }
                self.written[v as usize] = true;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moduli_are_right() {
        // p = 2^255 - 19.
        let mut p = [0xffu8; 32];
        p[0] = 0xed;
        p[31] = 0x7f;
        assert_eq!(P25519, p);
        // L's low byte and high byte.
        assert_eq!(L_ORDER[0], 0xed);
        assert_eq!(L_ORDER[31], 0x10);
    }

    #[test]
    fn opcodes_round_trip() {
        for op in Opcode::ALL {
            assert_eq!(Opcode::from_code(op.code()), Some(op));
        }
        let known = (0..=255u8)
            .filter(|c| Opcode::from_code(*c).is_some())
            .count();
        assert_eq!(known, 20);
    }

    #[test]
    fn lt_le_compares_from_the_top() {
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        assert!(!lt_le(&a, &b));
        a[0] = 1;
        b[31] = 1;
        assert!(lt_le(&a, &b));
        assert!(!lt_le(&b, &a));
    }
}

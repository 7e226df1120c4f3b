//! The loader enforces every validation rule of docs/trace-format.md section 5 with its
//! own typed error, on small hand-assembled programs and on corrupted copies of the
//! committed RFC 8032 programs; random mutations of valid programs never panic (neither
//! the loader nor, when a mutant still loads, a run on every backend).

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_eccvm::{rfc8032, Kind, Lanes, Opcode, Program, ProgramError, Value};

/// A program under construction, field by field.
#[derive(Clone)]
struct Asm {
    magic: [u8; 4],
    version: u16,
    field: u16,
    registers: u16,
    inputs: u16,
    kinds: Vec<u8>,
    consts: Vec<[u8; 32]>,
    code: Vec<[u8; 8]>,
}

fn ins(op: u8, dst: u8, a: u16, b: u16, c: u16) -> [u8; 8] {
    let mut i = [op, dst, 0, 0, 0, 0, 0, 0];
    i[2..4].copy_from_slice(&a.to_le_bytes());
    i[4..6].copy_from_slice(&b.to_le_bytes());
    i[6..8].copy_from_slice(&c.to_le_bytes());
    i
}

fn small(v: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&v.to_le_bytes());
    b
}

const P: [u8; 32] = {
    let mut p = [0xffu8; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    p
};

impl Asm {
    /// in0 -> (y + 1 as a field element, the sign bit).
    fn base() -> Asm {
        Asm {
            magic: *b"WSTP",
            version: 1,
            field: 1,
            registers: 4,
            inputs: 1,
            kinds: vec![0, 1],
            consts: vec![small(1)],
            code: vec![
                ins(0x01, 0, 0, 255, 0), // load r0, in0, 255
                ins(0x04, 1, 0, 0, 0),   // const r1, c0
                ins(0x10, 2, 0, 1, 0),   // add r2, r0, r1
                ins(0x50, 0, 2, 0, 0),   // outf r2, o0
                ins(0x02, 3, 0, 255, 0), // bit r3, in0, 255
                ins(0x51, 0, 3, 1, 0),   // outb r3, o1
            ],
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&self.magic);
        for v in [
            self.version,
            self.field,
            self.registers,
            self.inputs,
            self.kinds.len() as u16,
            self.consts.len() as u16,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&(self.code.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.kinds);
        for c in &self.consts {
            b.extend_from_slice(c);
        }
        for i in &self.code {
            b.extend_from_slice(i);
        }
        b
    }

    fn parse(&self) -> Result<Program, ProgramError> {
        Program::parse(&self.bytes())
    }

    fn with(mut self, f: impl FnOnce(&mut Asm)) -> Asm {
        f(&mut self);
        self
    }

    fn err(self, f: impl FnOnce(&mut Asm)) -> ProgramError {
        let a = self.with(f);
        let e = a.parse().expect_err("the program breaks a rule");
        let msg = e.to_string();
        assert!(!msg.is_empty() && !msg.contains('\n'), "{msg}");
        assert!(msg.contains("rule "), "{msg}");
        e
    }
}

#[test]
fn the_base_program_is_valid_and_runs() {
    let p = Asm::base().parse().expect("valid");
    assert_eq!(p.to_bytes(), Asm::base().bytes());
    assert_eq!(p.output_kinds(), &[Kind::Field, Kind::Bool]);
    let mut enc = small(41);
    enc[31] = 0x80;
    for b in Lanes::ALL.into_iter().filter(|b| b.available()) {
        let out = p.run(b, &[enc]).unwrap();
        assert_eq!(out.set(0), &[Value::Field(small(42)), Value::Bool(true)]);
    }
}

#[test]
fn header_and_section_rules() {
    use ProgramError::*;
    // Rule 1.
    for n in 0..20 {
        assert_eq!(
            Program::parse(&Asm::base().bytes()[..n]).unwrap_err(),
            Truncated {
                len: n as u64,
                need: 20
            }
        );
    }
    // Rule 2.
    assert_eq!(Asm::base().err(|a| a.magic = *b"WSTQ"), BadMagic(*b"WSTQ"));
    // Rule 3.
    for v in [0, 2, 0xffff] {
        assert_eq!(Asm::base().err(|a| a.version = v), UnsupportedVersion(v));
    }
    // Rule 4: unknown ids, and known ids this VM does not run (checked last).
    for f in [3, 0x100, 0xffff] {
        assert_eq!(Asm::base().err(|a| a.field = f), UnknownField(f));
    }
    assert_eq!(Asm::base().err(|a| a.field = 2), UnsupportedField(2));
    let generic = |a: &mut Asm| {
        a.field = 0;
        a.consts = vec![small(1009), small(1)];
        a.code[1] = ins(0x04, 1, 1, 0, 0); // const r1, c1
    };
    assert_eq!(Asm::base().err(generic), UnsupportedField(0));
    // Rule 5.
    let full = Asm::base().bytes();
    let len = full.len() as u64;
    assert_eq!(
        Program::parse(&full[..full.len() - 1]).unwrap_err(),
        Truncated {
            len: len - 1,
            need: len
        }
    );
    let mut longer = full.clone();
    longer.push(0);
    assert_eq!(
        Program::parse(&longer).unwrap_err(),
        TrailingBytes {
            len: len + 1,
            expected: len
        }
    );
    // A header claiming 2^32 - 1 instructions is refused before anything is allocated.
    let mut huge = full.clone();
    huge[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(Program::parse(&huge), Err(Truncated { .. })));
    // Rule 6.
    assert_eq!(Asm::base().err(|a| a.registers = 0), RegisterCount(0));
    assert_eq!(Asm::base().err(|a| a.registers = 257), RegisterCount(257));
    assert!(Asm::base().with(|a| a.registers = 256).parse().is_ok());
    // Rule 7.
    assert_eq!(
        Asm::base().err(|a| {
            a.kinds.clear();
            a.code.retain(|i| i[0] < 0x50);
        }),
        NoOutputs
    );
    // Rule 8.
    assert_eq!(
        Asm::base().err(|a| a.kinds[1] = 2),
        OutputKind { slot: 1, kind: 2 }
    );
    // Rule 9 (field 0: the modulus is constant 0 and at least 3).
    assert_eq!(
        Asm::base().err(|a| {
            a.field = 0;
            a.consts.clear();
        }),
        GenericModulus
    );
    assert_eq!(
        Asm::base().err(|a| {
            a.field = 0;
            a.consts = vec![small(2)];
        }),
        GenericModulus
    );
}

#[test]
fn instruction_rules() {
    use ProgramError::*;
    // Rule 10.
    for code in [0x00u8, 0x06, 0x15, 0x23, 0x34, 0x41, 0x52, 0xff] {
        assert_eq!(
            Asm::base().err(|a| a.code[2][0] = code),
            UnknownOpcode {
                index: 2,
                opcode: code
            }
        );
    }
    // Rule 11: unused fields, dst of the output instructions included.
    assert_eq!(
        Asm::base().err(|a| a.code[3][1] = 7),
        UnusedField {
            index: 3,
            op: Opcode::OutF,
            field: "dst",
            value: 7
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code[1] = ins(0x04, 1, 0, 0, 9)),
        UnusedField {
            index: 1,
            op: Opcode::Const,
            field: "c",
            value: 9
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code[2] = ins(0x10, 2, 0, 1, 1)),
        UnusedField {
            index: 2,
            op: Opcode::Add,
            field: "c",
            value: 1
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code[1] = ins(0x04, 1, 0, 3, 0)),
        UnusedField {
            index: 1,
            op: Opcode::Const,
            field: "b",
            value: 3
        }
    );
    // Rule 12.
    assert_eq!(
        Asm::base().err(|a| a.code[2] = ins(0x10, 4, 0, 1, 0)),
        DstOutOfRange {
            index: 2,
            op: Opcode::Add,
            reg: 4,
            registers: 4
        }
    );
    // Rule 13: out of range, read before write, wrong kind (both ways).
    assert_eq!(
        Asm::base().err(|a| a.code[2] = ins(0x10, 2, 0, 300, 0)),
        RegisterOutOfRange {
            index: 2,
            op: Opcode::Add,
            reg: 300,
            registers: 4
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code[2] = ins(0x10, 2, 0, 2, 0)),
        ReadBeforeWrite {
            index: 2,
            op: Opcode::Add,
            reg: 2
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code.swap(4, 5)),
        ReadBeforeWrite {
            index: 4,
            op: Opcode::OutB,
            reg: 3
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code[5] = ins(0x51, 0, 2, 1, 0)),
        WrongKind {
            index: 5,
            op: Opcode::OutB,
            reg: 2,
            holds: Kind::Field,
            needs: Kind::Bool
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code.push(ins(0x13, 0, 3, 0, 0))),
        WrongKind {
            index: 6,
            op: Opcode::Sqr,
            reg: 3,
            holds: Kind::Bool,
            needs: Kind::Field
        }
    );
    // The kind is that of the latest writer: r0 rewritten as a bool.
    assert_eq!(
        Asm::base().err(|a| {
            a.code.insert(1, ins(0x05, 0, 1, 0, 0)); // bconst r0, 1
        }),
        WrongKind {
            index: 3,
            op: Opcode::Add,
            reg: 0,
            holds: Kind::Bool,
            needs: Kind::Field
        }
    );
    // Rule 14.
    assert_eq!(
        Asm::base().err(|a| a.code[0] = ins(0x01, 0, 1, 255, 0)),
        InputOutOfRange {
            index: 0,
            op: Opcode::Load,
            input: 1,
            inputs: 1
        }
    );
    // Rule 15.
    for n in [0u16, 257, 0xffff] {
        assert_eq!(
            Asm::base().err(|a| a.code[0] = ins(0x01, 0, 0, n, 0)),
            BitCount {
                index: 0,
                op: Opcode::Load,
                nbits: n
            }
        );
    }
    assert_eq!(
        Asm::base().err(|a| a.code[4] = ins(0x02, 3, 0, 256, 0)),
        BitIndex { index: 4, bit: 256 }
    );
    assert_eq!(
        Asm::base().err(|a| {
            a.consts.push(P);
            a.code[4] = ins(0x03, 3, 0, 1, 0); // rawlt r3, in0, c1, 0
        }),
        BitCount {
            index: 4,
            op: Opcode::RawLt,
            nbits: 0
        }
    );
    // Rule 16: out of range, and `const` of an entry >= p (rawlt may use it).
    assert_eq!(
        Asm::base().err(|a| a.code[1] = ins(0x04, 1, 1, 0, 0)),
        ConstantOutOfRange {
            index: 1,
            op: Opcode::Const,
            constant: 1,
            constants: 1
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.consts[0] = P),
        ConstantNotReduced {
            index: 1,
            constant: 0
        }
    );
    assert!(Asm::base()
        .with(|a| {
            a.consts.push(P);
            a.code[4] = ins(0x03, 3, 0, 1, 255);
        })
        .parse()
        .is_ok());
    // Rule 17.
    assert_eq!(
        Asm::base().err(|a| a.code[4] = ins(0x05, 3, 2, 0, 0)),
        BoolImmediate { index: 4, value: 2 }
    );
    // Rule 18: out of range, wrong kind, written twice.
    assert_eq!(
        Asm::base().err(|a| a.code[3] = ins(0x50, 0, 2, 2, 0)),
        OutputOutOfRange {
            index: 3,
            op: Opcode::OutF,
            slot: 2,
            outputs: 2
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code[3] = ins(0x50, 0, 2, 1, 0)),
        OutputKindMismatch {
            index: 3,
            op: Opcode::OutF,
            slot: 1,
            declared: Kind::Bool
        }
    );
    assert_eq!(
        Asm::base().err(|a| a.code.push(ins(0x50, 0, 0, 0, 0))),
        OutputWrittenTwice {
            index: 6,
            op: Opcode::OutF,
            slot: 0
        }
    );
    // Rule 19.
    assert_eq!(
        Asm::base().err(|a| {
            a.code.pop();
        }),
        OutputNotWritten { slot: 1 }
    );
}

/// Offsets in a committed program: the header, then (outputs) kinds, constants, code.
fn code_offset(bytes: &[u8]) -> usize {
    let outs = u16::from_le_bytes([bytes[12], bytes[13]]) as usize;
    let consts = u16::from_le_bytes([bytes[14], bytes[15]]) as usize;
    20 + outs + 32 * consts
}

#[test]
fn corrupted_fixtures_are_refused_with_the_right_error() {
    use ProgramError::*;
    let good = rfc8032::program("decode-strict-a").unwrap().to_vec();
    let at = code_offset(&good);
    let parse = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        Program::parse(&b).expect_err("corrupted")
    };
    assert_eq!(parse(&|b| b[0] = b'X'), BadMagic(*b"XSTP"));
    assert_eq!(parse(&|b| b[4] = 2), UnsupportedVersion(2));
    assert_eq!(parse(&|b| b[6] = 9), UnknownField(9));
    // As a program of field 2 (mod L) its constant d is not below the modulus; the
    // scalar-range program, which has no `const`, is valid there but not run here.
    assert_eq!(
        parse(&|b| b[6] = 2),
        ConstantNotReduced {
            index: 2,
            constant: 0
        }
    );
    let mut scalar = rfc8032::program("scalar-range").unwrap().to_vec();
    scalar[6] = 2;
    assert_eq!(Program::parse(&scalar).unwrap_err(), UnsupportedField(2));
    assert!(matches!(
        parse(&|b| b.truncate(b.len() - 8)),
        Truncated { .. }
    ));
    assert!(matches!(parse(&|b| b.extend([0; 8])), TrailingBytes { .. }));
    assert_eq!(
        parse(&|b| b[8..10].copy_from_slice(&[0, 0])),
        RegisterCount(0)
    );
    assert!(matches!(
        parse(&|b| b[12] = 0),
        Truncated { .. } | TrailingBytes { .. }
    ));
    assert_eq!(parse(&|b| b[20] = 7), OutputKind { slot: 0, kind: 7 });
    // The first instruction is `load r0, in0, 255`; the second reads r0.
    assert_eq!(
        parse(&|b| b[at] = 0x99),
        UnknownOpcode {
            index: 0,
            opcode: 0x99
        }
    );
    assert_eq!(
        parse(&|b| b[at + 1] = 200),
        DstOutOfRange {
            index: 0,
            op: Opcode::Load,
            reg: 200,
            registers: 10
        }
    );
    assert_eq!(
        parse(&|b| b[at + 2] = 1),
        InputOutOfRange {
            index: 0,
            op: Opcode::Load,
            input: 1,
            inputs: 1
        }
    );
    assert_eq!(
        parse(&|b| b[at + 4] = 0),
        BitCount {
            index: 0,
            op: Opcode::Load,
            nbits: 0
        }
    );
    assert_eq!(
        parse(&|b| b[at + 6] = 1),
        UnusedField {
            index: 0,
            op: Opcode::Load,
            field: "c",
            value: 1
        }
    );
    assert_eq!(
        parse(&|b| b[at + 8 + 2] = 5),
        ReadBeforeWrite {
            index: 1,
            op: Opcode::Sqr,
            reg: 5
        }
    );
    assert_eq!(
        parse(&|b| b[at + 8 + 2] = 10),
        RegisterOutOfRange {
            index: 1,
            op: Opcode::Sqr,
            reg: 10,
            registers: 10
        }
    );
    // Turn the first instruction into `bit r0, in0, 255`: r0 then holds a boolean.
    assert_eq!(
        parse(&|b| b[at] = 0x02),
        WrongKind {
            index: 1,
            op: Opcode::Sqr,
            reg: 0,
            holds: Kind::Bool,
            needs: Kind::Field
        }
    );
    // The last instruction writes o2; pointing it at o1 writes o1 twice.
    let last = good.len() - 8;
    assert_eq!(
        parse(&|b| b[last + 4] = 1),
        OutputWrittenTwice {
            index: 303,
            op: Opcode::OutF,
            slot: 1
        }
    );
    assert_eq!(
        parse(&|b| b[last + 4] = 0),
        OutputKindMismatch {
            index: 303,
            op: Opcode::OutF,
            slot: 0,
            declared: Kind::Bool
        }
    );
    assert_eq!(
        parse(&|b| b[last] = 0x13), // sqr r0, r2, with b = 2 unused
        UnusedField {
            index: 303,
            op: Opcode::Sqr,
            field: "b",
            value: 2
        }
    );
}

#[test]
fn random_mutations_never_panic() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xf022);
    let inputs: Vec<[u8; 32]> = (0..9)
        .map(|_| {
            let mut b = [0u8; 32];
            rng.fill_bytes(&mut b);
            b
        })
        .collect();
    let backends: Vec<Lanes> = Lanes::ALL.into_iter().filter(|b| b.available()).collect();
    let mut loaded = 0;
    for round in 0..6000 {
        let (_, src) = rfc8032::ALL[round % rfc8032::ALL.len()];
        let mut b = src.to_vec();
        match rng.gen_range(0..4) {
            0 => {
                // Flip a few bits anywhere.
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(0..b.len());
                    b[i] ^= 1 << rng.gen_range(0..8);
                }
            }
            1 => {
                // Overwrite a byte of the code with anything.
                let at = code_offset(&b);
                if at < b.len() {
                    let i = rng.gen_range(at..b.len());
                    b[i] = rng.gen();
                }
            }
            2 => {
                let n = rng.gen_range(0..b.len());
                b.truncate(n);
            }
            _ => {
                // Overwrite a header field with anything.
                let i = rng.gen_range(4..20);
                b[i] = rng.gen();
            }
        }
        match Program::parse(&b) {
            Ok(p) => {
                loaded += 1;
                assert_eq!(p.to_bytes(), b);
                let n = p.inputs();
                let sets = inputs.len().checked_div(n).unwrap_or(3);
                for be in &backends {
                    let out = p.run_sets(*be, sets, &inputs[..sets * n]).expect("runs");
                    assert_eq!(out.sets(), sets);
                }
            }
            Err(e) => assert!(!e.to_string().contains('\n')),
        }
    }
    // Some mutants stay valid (a changed register that was free, a flipped bit of an
    // unused constant...) and run.
    assert!(loaded > 0);
}

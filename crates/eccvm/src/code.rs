//! The pre-decoded form the interpreter runs: one small enum per operation with
//! register numbers as `u8` (a register file of 256 entries indexed by `u8` needs no
//! bounds checks), built once when a program is loaded.
//!
//! One fusion: a run `sqr rD, rA; sqr rD, rD; ...; sqr rD, rD` (k squarings) becomes
//! `SqrN { dst: D, a: A, n: k }`, which keeps the value in machine registers across the
//! whole run. The values rD takes inside the run are overwritten by the run itself, so
//! nothing else can read them and the fused form computes the same register file. The
//! square-root exponentiation of point decoding is mostly such runs (chains of 1 to 100
//! squarings).

use crate::program::{Instruction, Opcode};

/// One pre-decoded operation (operands as in docs/trace-format.md section 4; all
/// indices already validated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Load {
        dst: u8,
        input: u16,
        nbits: u16,
    },
    Bit {
        dst: u8,
        input: u16,
        bit: u8,
    },
    RawLt {
        dst: u8,
        input: u16,
        konst: u16,
        nbits: u16,
    },
    Const {
        dst: u8,
        konst: u16,
    },
    BConst {
        dst: u8,
        value: bool,
    },
    Add {
        dst: u8,
        a: u8,
        b: u8,
    },
    Sub {
        dst: u8,
        a: u8,
        b: u8,
    },
    Mul {
        dst: u8,
        a: u8,
        b: u8,
    },
    Sqr {
        dst: u8,
        a: u8,
    },
    SqrN {
        dst: u8,
        a: u8,
        n: u32,
    },
    Neg {
        dst: u8,
        a: u8,
    },
    Eq {
        dst: u8,
        a: u8,
        b: u8,
    },
    IsZero {
        dst: u8,
        a: u8,
    },
    Parity {
        dst: u8,
        a: u8,
    },
    And {
        dst: u8,
        a: u8,
        b: u8,
    },
    Or {
        dst: u8,
        a: u8,
        b: u8,
    },
    Xor {
        dst: u8,
        a: u8,
        b: u8,
    },
    Not {
        dst: u8,
        a: u8,
    },
    Select {
        dst: u8,
        cond: u8,
        a: u8,
        b: u8,
    },
    OutF {
        src: u8,
        slot: u16,
    },
    OutB {
        src: u8,
        slot: u16,
    },
}

/// Translates validated instructions (register operands are < 256, so `as u8` is exact).
pub(crate) fn compile(instrs: &[Instruction]) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::with_capacity(instrs.len());
    for i in instrs {
        let (d, a, b, c) = (i.dst, i.a as u8, i.b as u8, i.c as u8);
        let op = match i.op {
            Opcode::Load => Op::Load {
                dst: d,
                input: i.a,
                nbits: i.b,
            },
            Opcode::Bit => Op::Bit {
                dst: d,
                input: i.a,
                bit: b,
            },
            Opcode::RawLt => Op::RawLt {
                dst: d,
                input: i.a,
                konst: i.b,
                nbits: i.c,
            },
            Opcode::Const => Op::Const { dst: d, konst: i.a },
            Opcode::BConst => Op::BConst {
                dst: d,
                value: i.a == 1,
            },
            Opcode::Add => Op::Add { dst: d, a, b },
            Opcode::Sub => Op::Sub { dst: d, a, b },
            Opcode::Mul => Op::Mul { dst: d, a, b },
            Opcode::Sqr => {
                // Extend a run: the previous op squares into this register, and this one
                // squares that register in place.
                let fused = match out.last() {
                    Some(&Op::Sqr { dst, a: src }) if dst == d && a == d => Some(Op::SqrN {
                        dst: d,
                        a: src,
                        n: 2,
                    }),
                    Some(&Op::SqrN { dst, a: src, n }) if dst == d && a == d => Some(Op::SqrN {
                        dst: d,
                        a: src,
                        n: n + 1,
                    }),
                    _ => None,
                };
                if let Some(f) = fused {
                    out.pop();
                    out.push(f);
                    continue;
                }
                Op::Sqr { dst: d, a }
            }
            Opcode::Neg => Op::Neg { dst: d, a },
            Opcode::Eq => Op::Eq { dst: d, a, b },
            Opcode::IsZero => Op::IsZero { dst: d, a },
            Opcode::Parity => Op::Parity { dst: d, a },
            Opcode::And => Op::And { dst: d, a, b },
            Opcode::Or => Op::Or { dst: d, a, b },
            Opcode::Xor => Op::Xor { dst: d, a, b },
            Opcode::Not => Op::Not { dst: d, a },
            Opcode::Select => Op::Select {
                dst: d,
                cond: a,
                a: b,
                b: c,
            },
            Opcode::OutF => Op::OutF { src: a, slot: i.b },
            Opcode::OutB => Op::OutB { src: a, slot: i.b },
        };
        out.push(op);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqr(dst: u8, a: u16) -> Instruction {
        Instruction {
            op: Opcode::Sqr,
            dst,
            a,
            b: 0,
            c: 0,
        }
    }

    #[test]
    fn squaring_runs_fuse() {
        let code = compile(&[sqr(1, 0), sqr(1, 1), sqr(1, 1), sqr(2, 1), sqr(3, 3)]);
        assert_eq!(
            code,
            vec![
                Op::SqrN { dst: 1, a: 0, n: 3 },
                Op::Sqr { dst: 2, a: 1 },
                Op::Sqr { dst: 3, a: 3 },
            ]
        );
    }

    #[test]
    fn in_place_run_fuses_from_its_first_square() {
        let code = compile(&[sqr(4, 4), sqr(4, 4)]);
        assert_eq!(code, vec![Op::SqrN { dst: 4, a: 4, n: 2 }]);
    }
}

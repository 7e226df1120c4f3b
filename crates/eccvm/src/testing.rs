//! Program generators shared by the VM's differential tests and those of other backends
//! (the GPU's): random valid programs over every opcode, and edge input values.

use rand::{Rng, RngCore};
use rand_chacha::ChaCha20Rng;

/// p = 2^255 - 19, little-endian.
pub const P: [u8; 32] = {
    let mut p = [0xffu8; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    p
};

/// One encoded instruction.
pub fn ins(op: u8, dst: u8, a: u16, b: u16, c: u16) -> [u8; 8] {
    let mut i = [op, dst, 0, 0, 0, 0, 0, 0];
    i[2..4].copy_from_slice(&a.to_le_bytes());
    i[4..6].copy_from_slice(&b.to_le_bytes());
    i[6..8].copy_from_slice(&c.to_le_bytes());
    i
}

/// A program file from its parts (field 1, version 1).
pub fn assemble(
    registers: u16,
    inputs: u16,
    kinds: &[u8],
    consts: &[[u8; 32]],
    code: &[[u8; 8]],
) -> Vec<u8> {
    let mut b = b"WSTP".to_vec();
    for v in [
        1u16,
        1,
        registers,
        inputs,
        kinds.len() as u16,
        consts.len() as u16,
    ] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&(code.len() as u32).to_le_bytes());
    b.extend_from_slice(kinds);
    consts.iter().for_each(|c| b.extend_from_slice(c));
    code.iter().for_each(|i| b.extend_from_slice(i));
    b
}

/// A random valid program: every instruction reads registers of the right kind that
/// were written before; the last field and bool values written go to the outputs.
pub fn random_program(rng: &mut ChaCha20Rng) -> Vec<u8> {
    let registers: u16 = rng.gen_range(4..=16);
    let inputs: u16 = rng.gen_range(1..=3);
    let mut consts: Vec<[u8; 32]> = Vec::new();
    for _ in 0..rng.gen_range(1..4) {
        let mut k = [0u8; 32];
        rng.fill_bytes(&mut k);
        k[31] &= 0x7f; // < 2^255; below p except with negligible probability
        consts.push(k);
    }
    // A constant for rawlt: p, or any 256-bit value.
    let lt_const = consts.len() as u16;
    consts.push(if rng.gen_bool(0.5) { P } else { [0xff; 32] });
    let mut kind: Vec<Option<u8>> = vec![None; registers as usize];
    let mut code = Vec::new();
    let pick = |rng: &mut ChaCha20Rng, kind: &[Option<u8>], k: u8| -> Option<u16> {
        let regs: Vec<u16> = (0..kind.len() as u16)
            .filter(|&r| kind[r as usize] == Some(k))
            .collect();
        (!regs.is_empty()).then(|| regs[rng.gen_range(0..regs.len())])
    };
    // Start with a load of every input and a constant.
    for i in 0..inputs.min(registers - 1) {
        let nbits = [255u16, 256, 128, 1, 200][rng.gen_range(0..5)];
        code.push(ins(0x01, i as u8, i, nbits, 0));
        kind[i as usize] = Some(0);
    }
    let len = rng.gen_range(30..200);
    while code.len() < len {
        let dst = rng.gen_range(0..registers) as u8;
        let f = |rng: &mut ChaCha20Rng| pick(rng, &kind, 0);
        let b = |rng: &mut ChaCha20Rng| pick(rng, &kind, 1);
        let (i, dkind) = match rng.gen_range(0..20) {
            0 => (
                ins(
                    0x01,
                    dst,
                    rng.gen_range(0..inputs),
                    rng.gen_range(1..=256),
                    0,
                ),
                0,
            ),
            1 => (
                ins(
                    0x02,
                    dst,
                    rng.gen_range(0..inputs),
                    rng.gen_range(0..256),
                    0,
                ),
                1,
            ),
            2 => (
                ins(
                    0x03,
                    dst,
                    rng.gen_range(0..inputs),
                    lt_const,
                    rng.gen_range(1..=256),
                ),
                1,
            ),
            3 => (ins(0x04, dst, rng.gen_range(0..lt_const), 0, 0), 0),
            4 => (ins(0x05, dst, rng.gen_range(0..2), 0, 0), 1),
            // Additions weigh more: chains of sums are what limb bounds are about.
            5..=8 => match (f(rng), f(rng)) {
                (Some(x), Some(y)) => (ins(0x10, dst, x, y, 0), 0),
                _ => continue,
            },
            9 | 10 => {
                let op = [0x11u8, 0x12][rng.gen_range(0..2)];
                match (f(rng), f(rng)) {
                    (Some(x), Some(y)) => (ins(op, dst, x, y, 0), 0),
                    _ => continue,
                }
            }
            11 | 12 => match f(rng) {
                Some(x) => (ins([0x13u8, 0x14][rng.gen_range(0..2)], dst, x, 0, 0), 0),
                None => continue,
            },
            13 => match (f(rng), f(rng)) {
                (Some(x), Some(y)) => (ins(0x20, dst, x, y, 0), 1),
                _ => continue,
            },
            14 => match f(rng) {
                Some(x) => (ins([0x21u8, 0x22][rng.gen_range(0..2)], dst, x, 0, 0), 1),
                None => continue,
            },
            15 | 16 => match (b(rng), b(rng)) {
                (Some(x), Some(y)) => (
                    ins([0x30u8, 0x31, 0x32][rng.gen_range(0..3)], dst, x, y, 0),
                    1,
                ),
                _ => continue,
            },
            17 => match b(rng) {
                Some(x) => (ins(0x33, dst, x, 0, 0), 1),
                None => continue,
            },
            _ => match (b(rng), f(rng), f(rng)) {
                (Some(c), Some(x), Some(y)) => (ins(0x40, dst, c, x, y), 0),
                _ => continue,
            },
        };
        code.push(i);
        kind[dst as usize] = Some(dkind);
    }
    // Outputs: every register's latest value, in register order.
    let mut kinds = Vec::new();
    for r in 0..registers {
        if let Some(k) = kind[r as usize] {
            code.push(ins(0x50 + k, 0, r, kinds.len() as u16, 0));
            kinds.push(k);
        }
    }
    assemble(registers, inputs, &kinds, &consts, &code)
}

/// Input values at the edges (0, all ones, p, p + 1, bit 255 alone) and eight random ones.
pub fn edge_values(rng: &mut ChaCha20Rng) -> Vec<[u8; 32]> {
    let mut p1 = P;
    p1[0] += 1;
    let mut v = vec![[0u8; 32], [0xff; 32], P, p1, {
        let mut t = [0u8; 32];
        t[31] = 0x80;
        t
    }];
    for _ in 0..8 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        v.push(b);
    }
    v
}

/// True when `python3` runs and is 3.9 or newer (the reference compiler and interpreter
/// of the trace format need it); the tests that compare with it skip otherwise.
pub fn python3_usable() -> bool {
    std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

//! Random valid programs (every opcode, random operands, long chains of additions whose
//! unreduced sums would break the field types' limb bounds if the VM did not reduce):
//! every backend returns what the serial backend returns, on input sets whose count is no
//! multiple of the lane counts; and, where `python3` is present, what the reference
//! interpreter of the format (`python3 -m wirespeed_trace run`) prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_eccvm::{format_line, Backend, Program, Value};
use wirespeed_field::{Fe51, FieldOps};

const P: [u8; 32] = {
    let mut p = [0xffu8; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    p
};

fn ins(op: u8, dst: u8, a: u16, b: u16, c: u16) -> [u8; 8] {
    let mut i = [op, dst, 0, 0, 0, 0, 0, 0];
    i[2..4].copy_from_slice(&a.to_le_bytes());
    i[4..6].copy_from_slice(&b.to_le_bytes());
    i[6..8].copy_from_slice(&c.to_le_bytes());
    i
}

fn assemble(
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
fn random_program(rng: &mut ChaCha20Rng) -> Vec<u8> {
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

fn edge_values(rng: &mut ChaCha20Rng) -> Vec<[u8; 32]> {
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

fn python3_usable() -> bool {
    Command::new("python3")
        .args([
            "-c",
            "import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn backends_and_the_python_interpreter_agree_on_random_programs() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5eed);
    let python = python3_usable();
    if !python {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: python3 not found (the comparison with the Python interpreter)"
        );
    }
    let dir = std::env::temp_dir().join(format!("wirespeed-eccvm-random-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    for round in 0..40 {
        let bytes = random_program(&mut rng);
        let prog = Program::parse(&bytes).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let vals = edge_values(&mut rng);
        // 13 sets: no multiple of 4 or 8.
        let inputs: Vec<[u8; 32]> = (0..13 * prog.inputs())
            .map(|i| vals[(i * 7 + round) % vals.len()])
            .collect();
        let serial = prog.run(Backend::Serial, &inputs).unwrap();
        assert_eq!(serial.sets(), 13);
        for b in [Backend::Avx2, Backend::Ifma, Backend::Auto] {
            if b.available() {
                assert_eq!(prog.run(b, &inputs).unwrap(), serial, "round {round} {b}");
            }
        }
        if python {
            let pf = dir.join(format!("p{round}.wtp"));
            let inf = dir.join(format!("p{round}.hex"));
            std::fs::write(&pf, &bytes).unwrap();
            let text: String = inputs
                .chunks(prog.inputs())
                .map(|set| {
                    set.iter()
                        .map(|v| v.iter().map(|x| format!("{x:02x}")).collect::<String>())
                        .collect::<Vec<_>>()
                        .join(" ")
                        + "\n"
                })
                .collect();
            std::fs::write(&inf, text).unwrap();
            let out = Command::new("python3")
                .args(["-m", "wirespeed_trace", "run"])
                .arg(&pf)
                .arg("--inputs")
                .arg(&inf)
                .env("PYTHONPATH", root.join("python"))
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let ours: String = serial.iter().map(|s| format_line(s) + "\n").collect();
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                ours,
                "round {round}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn long_addition_chains_stay_exact() {
    // r0 = x; then r0 = r0 + r0 three hundred times, and r1 = r0 + r0 + r0 ...: without
    // a reduction after each add the limbs would overflow within a few dozen steps.
    let mut code = vec![ins(0x01, 0, 0, 256, 0)];
    for _ in 0..300 {
        code.push(ins(0x10, 0, 0, 0, 0));
    }
    code.push(ins(0x10, 1, 0, 0, 0));
    for _ in 0..50 {
        code.push(ins(0x10, 1, 1, 0, 0));
    }
    code.push(ins(0x50, 0, 0, 0, 0));
    code.push(ins(0x50, 0, 1, 1, 0));
    let prog = Program::parse(&assemble(2, 1, &[0, 0], &[], &code)).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let mut inputs = vec![[0xff; 32], P];
    for _ in 0..9 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        inputs.push(b);
    }
    // Reference by products only: x * 2^300, and that times 52.
    let two = {
        let mut t = [0u8; 32];
        t[0] = 2;
        Fe51::from_bytes(&t)
    };
    let k52 = {
        let mut t = [0u8; 32];
        t[0] = 52;
        Fe51::from_bytes(&t)
    };
    for b in Backend::ALL.into_iter().filter(|b| b.available()) {
        let out = prog.run(b, &inputs).unwrap();
        for (i, x) in inputs.iter().enumerate() {
            let mut lo = *x;
            lo[31] &= 0x7f;
            let mut v = Fe51::from_bytes(&lo);
            if x[31] >> 7 == 1 {
                v = v.add(&Fe51(P_19)).weak_reduce(); // + 2^255 = + 19
            }
            for _ in 0..300 {
                v = v.mul(&two);
            }
            let w = v.mul(&k52);
            assert_eq!(
                out.set(i),
                &[Value::Field(v.to_bytes()), Value::Field(w.to_bytes())],
                "{b}"
            );
        }
    }
}

/// 19 as radix-2^51 limbs.
const P_19: [u64; 5] = [19, 0, 0, 0, 0];

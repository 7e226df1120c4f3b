//! Random valid programs (every opcode, random operands, long chains of additions whose
//! unreduced sums would break the field types' limb bounds if the VM did not reduce):
//! every backend returns what the serial backend returns, on input sets whose count is no
//! multiple of the lane counts; and, where `python3` is present, what the reference
//! interpreter of the format (`python3 -m wirespeed_trace run`) prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_eccvm::testing::{assemble, edge_values, ins, random_program, P};
use wirespeed_eccvm::{format_line, Lanes, Program, Value};
use wirespeed_field::{Fe51, FieldOps};

#[test]
fn backends_and_the_python_interpreter_agree_on_random_programs() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5eed);
    let python = wirespeed_eccvm::testing::python3_usable();
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
        let serial = prog.run(Lanes::Serial, &inputs).unwrap();
        assert_eq!(serial.sets(), 13);
        for b in [Lanes::Avx2, Lanes::Ifma, Lanes::Auto] {
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
    for b in Lanes::ALL.into_iter().filter(|b| b.available()) {
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

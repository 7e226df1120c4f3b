//! Point decompressions with checks per second on one core: the compiled RFC 8032
//! decoding program in the VM (every backend this CPU has) against the hand-written
//! path of the ed25519 crate (`vartime_decode_checked`, serial, and
//! `vartime_decode_checked_many`, whose square roots run in SIMD lanes), on the same
//! 4,096 encodings of random points; median of 7 interleaved passes.
//!
//! ```text
//! cargo run --release -p wirespeed-eccvm --example vm_vs_native
//! ```
//!
//! Every path returns the same verdicts and coordinates (checked before timing).

use std::hint::black_box;
use std::time::Instant;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_eccvm::{rfc8032, Lanes, Program, Value};
use wirespeed_ed25519::serial::vartime_basepoint_mul;
use wirespeed_ed25519::{vartime_decode_checked, vartime_decode_checked_many, Mode, Role};
use wirespeed_field::Scalar;

const N: usize = 4096;
const PASSES: usize = 7;
/// The reference design's decompression with checks.
const REFERENCE_INSTRUCTIONS: usize = 1153;
const REFERENCE_REGISTERS: usize = 24;

/// One measured path: a name and a closure decoding all N inputs once.
type Path<'a> = (String, Box<dyn FnMut() + 'a>);

fn main() {
    let mut rng = ChaCha20Rng::seed_from_u64(2024);
    let encs: Vec<[u8; 32]> = (0..N)
        .map(|_| {
            let mut wide = [0u8; 64];
            rng.fill_bytes(&mut wide);
            vartime_basepoint_mul(&Scalar::from_bytes_mod_order_wide(&wide)).compress()
        })
        .collect();
    println!("{N} encodings of random points, median of {PASSES} interleaved passes, one thread");
    for (mode, role) in [(Mode::Strict, Role::A), (Mode::Strict, Role::R)] {
        bench(&encs, mode, role);
    }
}

fn bench(encs: &[[u8; 32]], mode: Mode, role: Role) {
    let role_char = role.name().chars().next().unwrap_or('A');
    let bytes = rfc8032::decode_program(mode.name(), role_char).expect("program");
    let prog = Program::parse(bytes).expect("committed programs load");
    let st = prog.stats();
    println!(
        "\n{mode} {}: decode-{}-{} has {} instructions ({} after fusing squaring runs), {} registers, {} constants; reference design {REFERENCE_INSTRUCTIONS} instructions, {REFERENCE_REGISTERS} registers",
        role.name(),
        mode.name(),
        role_char.to_ascii_lowercase(),
        st.instructions,
        prog.decoded_len(),
        st.registers,
        st.constants
    );

    // Check agreement first.
    let want: Vec<[Value; 3]> = encs
        .iter()
        .map(|e| match vartime_decode_checked(e, mode, role) {
            Some((x, y)) => [Value::Bool(true), Value::Field(x), Value::Field(y)],
            None => [
                Value::Bool(false),
                Value::Field([0; 32]),
                Value::Field([0; 32]),
            ],
        })
        .collect();
    let vm_backends: Vec<Lanes> = [Lanes::Serial, Lanes::Avx2, Lanes::Ifma]
        .into_iter()
        .filter(|b| b.available())
        .collect();
    for b in &vm_backends {
        let out = prog.run(*b, encs).expect("run");
        for (i, got) in out.iter().enumerate() {
            assert_eq!(got, &want[i][..], "VM {b} disagrees on input {i}");
        }
    }

    let mut paths: Vec<Path<'_>> = Vec::new();
    paths.push((
        "hand-written, serial".into(),
        Box::new(|| {
            for e in encs {
                black_box(vartime_decode_checked(black_box(e), mode, role));
            }
        }),
    ));
    for (lb, name) in [
        (wirespeed_ed25519::Lanes::Avx2, "avx2"),
        (wirespeed_ed25519::Lanes::Ifma, "ifma"),
    ] {
        if lb.available() {
            let mut out = vec![None; encs.len()];
            paths.push((
                format!("hand-written, square roots in {name} lanes"),
                Box::new(move || {
                    vartime_decode_checked_many(black_box(encs), mode, role, lb, &mut out);
                    black_box(&out);
                }),
            ));
        }
    }
    for b in vm_backends {
        let prog = &prog;
        let mut out = vec![Value::Bool(false); encs.len() * 3];
        paths.push((
            format!("VM, {b}"),
            Box::new(move || {
                prog.run_into(b, encs.len(), black_box(encs), &mut out)
                    .expect("run");
                black_box(&out);
            }),
        ));
    }

    let mut times: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    for _ in 0..PASSES {
        for (i, (_, f)) in paths.iter_mut().enumerate() {
            let t = Instant::now();
            f();
            times[i].push(t.elapsed().as_secs_f64());
        }
    }
    let medians: Vec<f64> = times
        .iter_mut()
        .map(|t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect();
    let serial = medians[0];
    println!(
        "{:<44} {:>10} {:>12} {:>18}",
        "path", "ns/op", "ops/s", "time / hand serial"
    );
    for ((name, _), m) in paths.iter().zip(&medians) {
        let ns = m * 1e9 / encs.len() as f64;
        println!(
            "{name:<44} {ns:>10.0} {:>12.0} {:>17.2}x",
            encs.len() as f64 / m,
            m / serial
        );
    }
}

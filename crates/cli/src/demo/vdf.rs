//! Demo section: an RSA-2048 VDF evaluation with its proofs (Wesolowski and Pietrzak
//! after the evaluation; the segmented Wesolowski proof, `vdf eval`'s default, proved
//! beside a second evaluation), checked three ways: the proofs verify, the result
//! equals an independent computation (num-bigint), and a tampered statement is
//! rejected.

use std::io::Write;
use std::time::Instant;

use num_bigint::BigUint;
use wirespeed_vdf::{eval, eval_segmented, prove, EvalOptions, Modulus, ProofKind, U4096};

use super::{DemoOptions, Section};
use crate::error::CliError;

/// The VDF section.
pub const SECTION: Section = Section {
    name: "vdf",
    title: "RSA-2048 verifiable delay function",
    run,
};

fn run(opts: &DemoOptions, out: &mut dyn Write) -> Result<(), CliError> {
    let t: u64 = if opts.quick { 1 << 12 } else { 1 << 18 };
    let n = Modulus::rsa2048_with(wirespeed_engine::backend::cpu());
    let x = U4096::from_u64(0x5eed);
    let start = Instant::now();
    let ev = eval(&n, &x, t, &EvalOptions::default()).map_err(CliError::Vdf)?;
    let secs = start.elapsed().as_secs_f64();
    let w = |e: std::io::Error| CliError::Stdout(e);
    writeln!(
        out,
        "y = x^(2^{t}) mod N (RSA-2048 challenge modulus, x = 0x5eed): {} squarings in {:.3} s, {:.0} ns per squaring",
        t,
        secs,
        secs * 1e9 / t as f64
    )
    .map_err(w)?;

    // Independent check of y with num-bigint (square-and-reduce, T steps).
    let nb = BigUint::from_bytes_be(&n.value().to_be_bytes());
    let mut v = BigUint::from(0x5eedu32);
    for _ in 0..t {
        v = (&v * &v) % &nb;
    }
    if BigUint::from_bytes_be(&ev.y.to_be_bytes()) != v {
        return Err(CliError::Check("VDF output differs from num-bigint".into()));
    }
    writeln!(
        out,
        "{:<20} {:>12} {:>10} {:>11} {:>10}  check",
        "proof", "prove ms", "overhead", "verify ms", "bytes"
    )
    .map_err(w)?;
    for kind in [
        ProofKind::Wesolowski,
        ProofKind::Pietrzak,
        ProofKind::WesolowskiSegmented,
    ] {
        let (proof, prove_ms) = if kind == ProofKind::WesolowskiSegmented {
            // A second evaluation with the segments proved beside it: what is left after
            // the last squaring (the progress call with T marks it) is the overhead.
            let last = std::cell::Cell::new(None);
            let mark = |done: u64| {
                if done == t {
                    last.set(Some(Instant::now()));
                }
            };
            let opts = EvalOptions {
                checkpoint_every: 0,
                progress: Some(&mark),
            };
            let (ev2, proof) = eval_segmented(&n, &x, t, &opts).map_err(CliError::Vdf)?;
            let end = Instant::now();
            if ev2.output != ev.output {
                return Err(CliError::Check(
                    "the evaluation beside the segmented prover gave another y".into(),
                ));
            }
            let tail = last.get().map_or(0.0, |l| (end - l).as_secs_f64());
            (proof, tail * 1e3)
        } else {
            let p0 = Instant::now();
            let proof = prove(&n, &ev, kind).map_err(CliError::Vdf)?;
            (proof, p0.elapsed().as_secs_f64() * 1e3)
        };
        let v0 = Instant::now();
        proof.verify(&n).map_err(CliError::Vdf)?;
        let verify_ms = v0.elapsed().as_secs_f64() * 1e3;
        let mut bad = proof.clone();
        bad.t += 1;
        if bad.verify(&n).is_ok() {
            return Err(CliError::Check(format!(
                "{kind:?} proof accepted for the wrong T"
            )));
        }
        writeln!(
            out,
            "{:<20} {:>12.1} {:>9.1}% {:>11.2} {:>10}  ok",
            kind.name(),
            prove_ms,
            prove_ms / (secs * 1e3) * 100.0,
            verify_ms,
            proof.to_bytes().len()
        )
        .map_err(w)?;
    }
    writeln!(
        out,
        "check: y equals num-bigint's (both evaluations); every proof verifies; a wrong T is rejected; segmented: prove ms is the work left after the last squaring"
    )
    .map_err(w)
}

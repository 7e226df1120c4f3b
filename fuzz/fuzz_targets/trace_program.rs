//! The lane VM's program loader on arbitrary bytes: it may refuse, never panic; a program
//! it accepts re-encodes to the same bytes and runs on every backend this CPU has with
//! identical outputs (nine input sets, a tail for the 4- and 8-lane backends).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_eccvm::{Lanes, Program};

fuzz_target!(|data: &[u8]| {
    let Ok(p) = Program::parse(data) else {
        return;
    };
    assert_eq!(p.to_bytes(), data);
    // Keep each run short: the loader accepts up to 2^32 - 1 instructions.
    if p.instructions().len() > 4096 || p.inputs() > 8 {
        return;
    }
    let inputs: Vec<[u8; 32]> = (0..9 * p.inputs())
        .map(|i| {
            let mut b = [0u8; 32];
            for (j, x) in b.iter_mut().enumerate() {
                *x = data[(i * 32 + j) % data.len()];
            }
            b
        })
        .collect();
    let serial = p.run_sets(Lanes::Serial, 9, &inputs).expect("valid run");
    for b in [Lanes::Avx2, Lanes::Ifma] {
        if b.available() {
            assert_eq!(p.run_sets(b, 9, &inputs).expect("valid run"), serial);
        }
    }
});

//! The lane VM's backends chosen only by the CPU features passed in: every compiled
//! RFC 8032 program run with no features (serial) and with this CPU's widest lanes
//! returns the same outputs on random inputs (valid points among them), and a backend
//! the given features lack is a typed error, never an unsupported instruction.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_eccvm::{rfc8032, Lanes, Program, RunError};
use wirespeed_field::cpu::CpuFeatures;

#[test]
fn serial_and_widest_backends_agree_on_random_inputs() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    assert_eq!(Lanes::Auto.resolve_on(&none), Lanes::Serial);
    let mut rng = ChaCha20Rng::seed_from_u64(18);
    let mut base = [0x66u8; 32];
    base[0] = 0x58;
    for mode in rfc8032::MODES {
        for role in ['A', 'R'] {
            let bytes = rfc8032::decode_program(mode, role)
                .unwrap_or_else(|| panic!("no program for {mode} {role}"));
            let p = Program::parse(bytes).unwrap_or_else(|e| panic!("{e}"));
            // 37 sets: full vectors of 4 and 8 and a tail; some are the base point.
            let sets = 37;
            let inputs: Vec<[u8; 32]> = (0..sets * p.inputs())
                .map(|i| if i % 5 == 0 { base } else { rng.gen() })
                .collect();
            let serial = p
                .run_sets_with(Lanes::Auto, &none, sets, &inputs)
                .unwrap_or_else(|e| panic!("{e}"));
            let wide = p
                .run_sets_with(Lanes::Auto, widest, sets, &inputs)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                serial.values(),
                wide.values(),
                "{mode} {role} on {}",
                Lanes::Auto.resolve_on(widest)
            );
        }
    }
}

#[test]
fn lanes_the_features_lack_are_an_error() {
    let p = Program::parse(rfc8032::decode_program("strict", 'A').unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let none = CpuFeatures::none();
    for b in [Lanes::Avx2, Lanes::Ifma] {
        assert!(!b.available_on(&none));
        assert!(matches!(
            p.run_sets_with(b, &none, 1, &[[0u8; 32]; 1][..p.inputs()]),
            Err(RunError::BackendUnavailable(x)) if x == b
        ));
    }
}

//! eccvm.cuh, run set by set on the host, against the CPU lane VM: the compiled RFC 8032
//! programs on edge and random encodings, and random programs over every opcode.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_eccvm::testing::{edge_values, random_program};
use wirespeed_eccvm::{Lanes, Program, Value};

use crate::eccvm::{words, Packed};

extern "C" {
    fn ws_host_eccvm_run(
        code: *const u32,
        ninstr: u32,
        consts: *const u32,
        inputs: *const u32,
        ninputs: u32,
        regs: *mut u32,
        out: *mut u32,
        noutputs: u32,
        sets: u32,
    );
}

/// The kernel's interpreter on the host.
fn host_run(p: &Program, inputs: &[[u8; 32]]) -> Vec<Value> {
    let k = Packed::new(p);
    let sets = k.sets(inputs).unwrap();
    let input_words: Vec<u32> = inputs.iter().flat_map(words).collect();
    let mut regs = vec![0u32; k.registers * 8];
    // Poisoned: every output word must be written.
    let mut out = vec![0xdead_beefu32; sets * k.kinds.len() * 8];
    // SAFETY: buffers are sized as eccvm.cuh indexes them (code: 2 words per
    // instruction, consts: 8 per constant, inputs: 8 per input, regs: 8 per register for
    // the one set in flight, out: 8 per slot per set); the program passed the loader.
    unsafe {
        ws_host_eccvm_run(
            k.code.as_ptr(),
            k.instructions,
            k.consts.as_ptr(),
            input_words.as_ptr(),
            k.inputs as u32,
            regs.as_mut_ptr(),
            out.as_mut_ptr(),
            k.kinds.len() as u32,
            sets as u32,
        )
    };
    assert!(
        out.chunks(8).all(|w| w != [0xdead_beef; 8]),
        "an output slot was not written"
    );
    k.values(&out)
}

#[test]
fn rfc8032_programs_agree_with_the_cpu_vm() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x6563_6376);
    let mut vals = edge_values(&mut rng);
    // Small-order and other special encodings come from the fixtures' own domain:
    // y = 0, 1, -1 (p - 1), with and without the sign bit.
    for y in [0u8, 1] {
        let mut b = [0u8; 32];
        b[0] = y;
        vals.push(b);
        b[31] |= 0x80;
        vals.push(b);
    }
    let mut pm1 = wirespeed_eccvm::testing::P;
    pm1[0] -= 1;
    vals.push(pm1);
    for _ in 0..64 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        vals.push(b);
    }
    let mut n = 0;
    for mode in ["strict", "zip215", "cofactored-strict", "libsodium"] {
        for role in ['a', 'r'] {
            let p = Program::parse(wirespeed_eccvm::rfc8032::decode_program(mode, role).unwrap())
                .unwrap();
            let inputs: Vec<[u8; 32]> = (0..vals.len() * p.inputs().max(1))
                .map(|i| vals[(i * 5 + 1) % vals.len()])
                .collect();
            let inputs = &inputs[..inputs.len() / p.inputs().max(1) * p.inputs()];
            let want = p.run(Lanes::Serial, inputs).unwrap();
            assert_eq!(host_run(&p, inputs), want.values(), "{mode} {role}");
            n += 1;
        }
    }
    assert_eq!(n, 8);
}

#[test]
fn random_programs_agree_with_the_cpu_vm() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5eed_0001);
    for round in 0..40 {
        let bytes = random_program(&mut rng);
        let p = Program::parse(&bytes).unwrap();
        let vals = edge_values(&mut rng);
        let inputs: Vec<[u8; 32]> = (0..13 * p.inputs())
            .map(|i| vals[(i * 7 + round) % vals.len()])
            .collect();
        let want = p.run(Lanes::Serial, &inputs).unwrap();
        assert_eq!(host_run(&p, &inputs), want.values(), "round {round}");
    }
}

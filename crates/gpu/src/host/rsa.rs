//! rsa.cuh and modexp.cuh compiled for the host, run through the same packing as the
//! GPU path (src/rsa.rs): the CRT private operation against `PrivateKey::raw` for
//! RSA-2048, 3072 and 4096, byte for byte, and the public powers and products against
//! num-bigint.

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_rsa::{PrivateKey, RsaError};

use crate::rsa::{
    crt_finish, crt_prepare, from_limb_major, limbs, r2_mod, to_limb_major, CrtKey, ItemError,
};

type Crt = unsafe extern "C" fn(*const u32, *const u32, *mut u32, u32);
type Pow = unsafe extern "C" fn(*const u32, *const u32, *mut u32, u32, u32, u32);
type Mul = unsafe extern "C" fn(*const u32, *const u32, *mut u32, u32);
type Answers = Vec<Result<Vec<u8>, RsaError>>;

extern "C" {
    fn ws_host_rsa_crt_32(key: *const u32, inp: *const u32, out: *mut u32, count: u32);
    fn ws_host_rsa_crt_48(key: *const u32, inp: *const u32, out: *mut u32, count: u32);
    fn ws_host_rsa_crt_64(key: *const u32, inp: *const u32, out: *mut u32, count: u32);
    fn ws_host_modexp_32(
        m: *const u32,
        inp: *const u32,
        out: *mut u32,
        count: u32,
        el: u32,
        eb: u32,
    );
    fn ws_host_modexp_48(
        m: *const u32,
        inp: *const u32,
        out: *mut u32,
        count: u32,
        el: u32,
        eb: u32,
    );
    fn ws_host_modexp_64(
        m: *const u32,
        inp: *const u32,
        out: *mut u32,
        count: u32,
        el: u32,
        eb: u32,
    );
    fn ws_host_modmul_32(m: *const u32, inp: *const u32, out: *mut u32, count: u32);
    fn ws_host_modmul_48(m: *const u32, inp: *const u32, out: *mut u32, count: u32);
    fn ws_host_modmul_64(m: *const u32, inp: *const u32, out: *mut u32, count: u32);
    fn ws_host_mont_mul_loop_32(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_mul_loop_48(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_mul_loop_64(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
}

fn key(bits: u32) -> PrivateKey {
    let k = openssl::rsa::Rsa::generate(bits).expect("keygen");
    let pem = String::from_utf8(k.private_key_to_pem().expect("pem")).expect("utf8");
    PrivateKey::from_pem(&pem).expect("key")
}

/// Runs a batch (item-major `items`, `inw` words in, `outw` out) through a host shim the
/// way the GPU path does: limb-major with stride = count.
fn run_shim(
    items: &[u32],
    inw: usize,
    outw: usize,
    f: impl FnOnce(*const u32, *mut u32, u32),
) -> Vec<u32> {
    let count = items.len() / inw;
    let mut lm = vec![0u32; inw * count];
    to_limb_major(items, inw, count, &mut lm);
    let mut out_lm = vec![0xa5a5_a5a5u32; outw * count];
    f(lm.as_ptr(), out_lm.as_mut_ptr(), count as u32);
    let mut out = Vec::new();
    from_limb_major(&out_lm, outw, count, count, &mut out);
    out
}

/// The key's numbers as the device path takes them.
fn crt_key(k: &PrivateKey) -> CrtKey {
    let c = k.crt_params();
    CrtKey {
        n: k.public().n().clone(),
        e: k.public().e().clone(),
        p: c.p,
        q: c.q,
        dp: c.dp,
        dq: c.dq,
        qinv: c.qinv,
    }
}

/// The CPU path's answers and the host-compiled kernel's, through crt_prepare/finish.
fn crt_both(
    k: &PrivateKey,
    shim: Crt,
    inputs: &[Vec<u8>],
    corrupt: Option<usize>,
) -> (Answers, Answers) {
    let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
    let ck = crt_key(k);
    let batch = crt_prepare(&ck, &refs).expect("supported size");
    let w = 2 * batch.n;
    let key = batch.key.clone();
    let mut out = run_shim(&batch.items, w, w, |i, o, c| {
        // SAFETY: the key block has 7n limbs, in and out 2n limbs per item for c items,
        // the sizes the shim for n limbs reads and writes.
        unsafe { shim(key.as_ptr(), i, o, c) }
    });
    if let Some(i) = corrupt {
        out[i * w + 3] ^= 1 << 7;
    }
    let gpu = crt_finish(&ck, &refs, &batch, &out)
        .into_iter()
        .map(|r| {
            r.map_err(|e| match e {
                ItemError::OutOfRange => RsaError::OutOfRange,
                ItemError::FaultDetected => RsaError::FaultDetected,
            })
        })
        .collect();
    let cpu = refs.iter().map(|m| k.raw(m)).collect();
    (cpu, gpu)
}

fn check_crt(bits: u32, shim: Crt, random: usize, seed: u64) {
    let k = key(bits);
    let c = k.crt_params();
    let n = k.public().n().clone();
    let size = k.public().size();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let one = BigUint::from(1u8);
    let mut vals = vec![
        BigUint::from(0u8),
        one.clone(),
        BigUint::from(2u8),
        &n - 1u8,
        &n - 2u8,
        c.p.clone(),
        c.q.clone(),
        &c.p * 3u8,
        &c.q * 5u8,
        &n - &c.p,
        &n - &c.q,
        &c.p - 1u8,
        &c.q + 1u8,
        (&one << (size * 8 - 9)) - 1u8,
    ];
    for _ in 0..random {
        let mut b = vec![0u8; size];
        rng.fill(&mut b[..]);
        vals.push(BigUint::from_bytes_be(&b) % &n);
    }
    let mut inputs: Vec<Vec<u8>> = vals.iter().map(|v| v.to_bytes_be()).collect();
    // Full-width encodings with leading zeros, and inputs the host must reject.
    let mut padded = vec![0u8; size - 1];
    padded.push(7);
    inputs.push(padded);
    inputs.push(n.to_bytes_be());
    inputs.push((&n + 1u8).to_bytes_be());
    inputs.push(vec![0u8; size + 1]);
    let (cpu, gpu) = crt_both(&k, shim, &inputs, None);
    for (i, (a, b)) in cpu.iter().zip(&gpu).enumerate() {
        assert_eq!(a, b, "RSA-{bits}, input {i}");
    }
    let errors = gpu.iter().filter(|r| r.is_err()).count();
    assert_eq!(
        errors, 3,
        "n, n + 1 and the overlong input are out of range"
    );
    assert!(gpu.iter().flatten().all(|s| s.len() == size));
    // A result corrupted after the kernel is caught by the check against the public key.
    let (_, gpu) = crt_both(&k, shim, &inputs[..3], Some(1));
    assert_eq!(gpu[1], Err(RsaError::FaultDetected));
    assert_eq!(gpu[0], k.raw(&inputs[0]));
}

#[test]
fn crt_2048_matches_private_key_raw() {
    check_crt(2048, ws_host_rsa_crt_32, 24, 1);
}

#[test]
fn crt_3072_matches_private_key_raw() {
    check_crt(3072, ws_host_rsa_crt_48, 6, 2);
}

#[test]
fn crt_4096_matches_private_key_raw() {
    check_crt(4096, ws_host_rsa_crt_64, 4, 3);
}

fn rand_odd(rng: &mut ChaCha20Rng, bits: usize) -> BigUint {
    let mut b = vec![0u8; bits.div_ceil(8)];
    rng.fill(&mut b[..]);
    b[0] |= 0x80 >> ((8 - bits % 8) % 8);
    b[0] &= 0xff >> ((8 - bits % 8) % 8);
    *b.last_mut().unwrap() |= 1;
    BigUint::from_bytes_be(&b)
}

fn rand_below(rng: &mut ChaCha20Rng, m: &BigUint) -> BigUint {
    let mut b = vec![0u8; (m.bits() as usize).div_ceil(8) + 8];
    rng.fill(&mut b[..]);
    BigUint::from_bytes_be(&b) % m
}

fn check_public(n: usize, pow: Pow, mul: Mul, rng: &mut ChaCha20Rng) {
    let width = 32 * n;
    let top = BigUint::from(1u8) << width;
    let mut moduli = vec![&top - 1u8, (&top >> 1u8) + 1u8, BigUint::from(3u8)];
    for bits in [width, width - 1, width - 31, width / 2 + 5] {
        moduli.push(rand_odd(rng, bits));
    }
    for m in &moduli {
        let mut block = limbs(m, n);
        block.extend(limbs(&r2_mod(m, n), n));
        // Powers: exponents of several lengths in one batch, run over the longest one's
        // bits (and over extra zero bits: the same answers).
        let mut xs = vec![BigUint::from(0u8), BigUint::from(1u8), m - 1u8];
        let mut es = vec![BigUint::from(5u8), BigUint::from(0u8), BigUint::from(2u8)];
        for k in 0..5 {
            xs.push(rand_below(rng, m));
            es.push(rand_below(rng, &(BigUint::from(1u8) << (1 + k * 61))));
        }
        xs.push(rand_below(rng, m));
        es.push((BigUint::from(1u8) << 300u32) - 1u8);
        let ebits = es.iter().map(|e| e.bits() as usize).max().unwrap();
        for (elimbs, eb) in [
            (ebits.div_ceil(32), ebits),
            (ebits.div_ceil(32) + 2, ebits + 50),
        ] {
            let mut items = Vec::new();
            for (x, e) in xs.iter().zip(&es) {
                items.extend(limbs(x, n));
                items.extend(limbs(e, elimbs));
            }
            let out = run_shim(&items, n + elimbs, n, |i, o, c| {
                // SAFETY: the modulus block has 2n limbs; each item n + elimbs in, n out.
                unsafe { pow(block.as_ptr(), i, o, c, elimbs as u32, eb as u32) }
            });
            for (k, (x, e)) in xs.iter().zip(&es).enumerate() {
                let got = BigUint::from_slice(&out[k * n..(k + 1) * n]);
                assert_eq!(got, x.modpow(e, m), "pow n={n} item {k}");
            }
        }
        // Products, the left factor anywhere below R.
        let mut items = Vec::new();
        let mut pairs = vec![(&top - 1u8, m - 1u8), (BigUint::from(0u8), m - 1u8)];
        for _ in 0..6 {
            pairs.push((rand_below(rng, &top), rand_below(rng, m)));
        }
        for (a, b) in &pairs {
            items.extend(limbs(a, n));
            items.extend(limbs(b, n));
        }
        let out = run_shim(&items, 2 * n, n, |i, o, c| {
            // SAFETY: the modulus block has 2n limbs; each item 2n limbs in, n out.
            unsafe { mul(block.as_ptr(), i, o, c) }
        });
        for (k, (a, b)) in pairs.iter().enumerate() {
            let got = BigUint::from_slice(&out[k * n..(k + 1) * n]);
            assert_eq!(got, a * b % m, "mul n={n} item {k}");
        }
    }
}

#[test]
fn modexp_and_modmul_match_num_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x6d6f_6465);
    check_public(32, ws_host_modexp_32, ws_host_modmul_32, &mut rng);
    check_public(48, ws_host_modexp_48, ws_host_modmul_48, &mut rng);
    check_public(64, ws_host_modexp_64, ws_host_modmul_64, &mut rng);
}

#[test]
fn mont_mul_loop_is_a_montgomery_product() {
    type Op = unsafe extern "C" fn(*mut u32, *const u32, *const u32, *const u32);
    let mut rng = ChaCha20Rng::seed_from_u64(0x6c6f_6f70);
    let cases: [(usize, Op); 3] = [
        (32, ws_host_mont_mul_loop_32),
        (48, ws_host_mont_mul_loop_48),
        (64, ws_host_mont_mul_loop_64),
    ];
    for (n, op) in cases {
        let width = 32 * n;
        let top = BigUint::from(1u8) << width;
        let mut moduli = vec![&top - 1u8, (&top >> 1u8) + 1u8];
        for _ in 0..8 {
            moduli.push(rand_odd(&mut rng, width));
        }
        for m in &moduli {
            let mut pairs = vec![(m - 1u8, m - 1u8), (BigUint::from(0u8), m - 1u8)];
            for _ in 0..8 {
                pairs.push((rand_below(&mut rng, m), rand_below(&mut rng, m)));
            }
            for (a, b) in &pairs {
                let mut r = vec![0u32; n];
                let (al, bl, ml) = (limbs(a, n), limbs(b, n), limbs(m, n));
                // SAFETY: every buffer has the n limbs the shim for n reads or writes.
                unsafe { op(r.as_mut_ptr(), al.as_ptr(), bl.as_ptr(), ml.as_ptr()) };
                let r = BigUint::from_slice(&r);
                assert!(&r < m, "n={n}: not reduced");
                assert_eq!((r << width) % m, a * b % m, "n={n}");
            }
        }
    }
}

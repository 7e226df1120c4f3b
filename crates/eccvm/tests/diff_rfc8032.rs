//! Differential tests: the compiled RFC 8032 programs run in the VM, on every backend
//! this CPU has, return exactly what the hand-written Rust decoding and checks of the
//! ed25519 crate return (`vartime_decode_checked`, `Scalar::from_canonical_bytes`), in
//! every rule mode and for both point roles, on random bytes, valid points (also with
//! small-order components), every encoding of the small-order points, every y >= p, the
//! negative zero and y values with no point, in batches of every size 1..=9 (tails).

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_eccvm::{rfc8032, Lanes, Program, Value};
use wirespeed_ed25519::point::Extended;
use wirespeed_ed25519::serial::{vartime_basepoint_mul, vartime_decompress};
use wirespeed_ed25519::{vartime_decode_checked, Mode, Role};
use wirespeed_field::{Fe51, Scalar};

/// p = 2^255 - 19, little-endian.
const P: [u8; 32] = {
    let mut p = [0xffu8; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    p
};

/// The canonical encodings of the eight points of order dividing 8 (y = 1, y = -1, y = 0
/// with both signs, and the four points of order 8).
const SMALL_ORDER: [&str; 8] = [
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
];

fn unhex32(s: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex");
    }
    out
}

fn le(v: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&v.to_le_bytes());
    b
}

fn with_sign(mut b: [u8; 32], sign: bool) -> [u8; 32] {
    b[31] = (b[31] & 0x7f) | ((sign as u8) << 7);
    b
}

fn random_scalar(rng: &mut impl RngCore) -> Scalar {
    let mut wide = [0u8; 64];
    rng.fill_bytes(&mut wide);
    Scalar::from_bytes_mod_order_wide(&wide)
}

fn small_order_points() -> Vec<Extended<Fe51>> {
    SMALL_ORDER
        .iter()
        .map(|h| {
            let d = vartime_decompress(&unhex32(h)).expect("small-order encodings decode");
            assert!(d.point.is_small_order(), "{h}");
            d.point
        })
        .collect()
}

/// The encodings every test runs over.
fn corpus() -> Vec<[u8; 32]> {
    let mut rng = ChaCha20Rng::seed_from_u64(0x7261_6365);
    let mut v = Vec::new();
    // Random bytes (about half have no point; most have y < p).
    for _ in 0..160 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        v.push(b);
    }
    // Valid points of large order, their negatives, and sums with small-order points.
    let small = small_order_points();
    for i in 0..48 {
        let p = vartime_basepoint_mul(&random_scalar(&mut rng));
        let enc = p.compress();
        v.push(enc);
        v.push(with_sign(enc, enc[31] >> 7 == 0));
        let t = &small[i % small.len()];
        v.push(p.add_niels(&t.to_proj_niels()).to_extended().compress());
    }
    // Every small-order point, canonical and with the sign bit flipped.
    for h in SMALL_ORDER {
        let e = unhex32(h);
        v.push(e);
        v.push(with_sign(e, e[31] >> 7 == 0));
    }
    // Every y >= p (p + 0 .. p + 18 = 2^255 - 1), both signs.
    for k in 0..19u8 {
        let mut e = P;
        e[0] += k;
        v.push(e);
        v.push(with_sign(e, true));
    }
    // Negative zero (x = 0 with the sign bit set) and small y values, both signs.
    for y in 0..24u64 {
        v.push(le(y));
        v.push(with_sign(le(y), true));
    }
    // y values with no point (non-squares u/v), found by the hand-written decoder.
    let mut found = 0;
    while found < 16 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        b[31] &= 0x7f;
        if vartime_decompress(&b).is_none() {
            v.push(b);
            found += 1;
        }
    }
    // All ones, all zeros with the top bit, 2^255 - 20 = p - 1.
    v.push([0xff; 32]);
    v.push(with_sign([0; 32], true));
    v
}

fn backends() -> Vec<Lanes> {
    [Lanes::Serial, Lanes::Avx2, Lanes::Ifma]
        .into_iter()
        .filter(|b| b.available())
        .collect()
}

fn expected(enc: &[u8; 32], mode: Mode, role: Role) -> [Value; 3] {
    match vartime_decode_checked(enc, mode, role) {
        Some((x, y)) => [Value::Bool(true), Value::Field(x), Value::Field(y)],
        None => [
            Value::Bool(false),
            Value::Field([0; 32]),
            Value::Field([0; 32]),
        ],
    }
}

fn decode_program(mode: Mode, role: Role) -> Program {
    let bytes = rfc8032::decode_program(mode.name(), role.name().chars().next().unwrap())
        .expect("a program for every mode and role");
    Program::parse(bytes).expect("committed programs load")
}

#[test]
fn decoding_programs_match_the_hand_written_checks() {
    let corpus = corpus();
    let mut accepted = 0;
    for mode in Mode::ALL {
        for role in Role::ALL {
            let prog = decode_program(mode, role);
            let want: Vec<[Value; 3]> = corpus.iter().map(|e| expected(e, mode, role)).collect();
            accepted += want.iter().filter(|w| w[0] == Value::Bool(true)).count();
            for backend in backends() {
                // The whole corpus in one run (its length is no multiple of 4 or 8).
                let out = prog.run(backend, &corpus).expect("run");
                assert_eq!(out.sets(), corpus.len());
                for (i, got) in out.iter().enumerate() {
                    assert_eq!(
                        got,
                        &want[i][..],
                        "{mode} {role:?} {backend}: encoding {}",
                        hexs(&corpus[i])
                    );
                }
                // Every batch size up to 9 over a slice that mixes verdicts.
                for batch in 1..=9 {
                    for (c, chunk) in corpus[150..250].chunks(batch).enumerate() {
                        let out = prog.run(backend, chunk).expect("run");
                        for (j, got) in out.iter().enumerate() {
                            assert_eq!(
                                got,
                                &want[150 + c * batch + j][..],
                                "{mode} {role:?} {backend} batch {batch}"
                            );
                        }
                    }
                }
            }
        }
    }
    // The corpus exercises both verdicts in bulk.
    assert!(accepted > 500, "{accepted}");
}

#[test]
fn scalar_range_program_matches_from_canonical_bytes() {
    let prog = Program::parse(rfc8032::program("scalar-range").unwrap()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let mut inputs: Vec<[u8; 32]> = Vec::new();
    // L - 1, L, L + 1 (L - 1 = -1 mod L), 0 and 2^256 - 1.
    let l_minus_1 = Scalar([1, 0, 0, 0]).neg().to_bytes();
    let mut l_bytes = l_minus_1;
    l_bytes[0] += 1;
    let mut l_plus_1 = l_bytes;
    l_plus_1[0] += 1;
    inputs.extend([l_minus_1, l_bytes, l_plus_1, [0; 32], [0xff; 32]]);
    for _ in 0..200 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        b[31] &= [0x0f, 0x1f, 0xff][rng.gen_range(0..3)];
        inputs.push(b);
    }
    for backend in backends() {
        let out = prog.run(backend, &inputs).unwrap();
        for (i, got) in out.iter().enumerate() {
            let want = Scalar::from_canonical_bytes(&inputs[i]).is_some();
            assert_eq!(
                got,
                &[Value::Bool(want)][..],
                "{backend} {}",
                hexs(&inputs[i])
            );
        }
    }
}

#[test]
fn signature_check_programs_match_the_hand_written_checks() {
    let corpus = corpus();
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    // (A, R, S) triples drawn from the corpus, S sometimes >= L.
    let mut inputs: Vec<[u8; 32]> = Vec::new();
    for _ in 0..150 {
        inputs.push(corpus[rng.gen_range(0..corpus.len())]);
        inputs.push(corpus[rng.gen_range(0..corpus.len())]);
        let mut s = [0u8; 32];
        rng.fill_bytes(&mut s);
        s[31] &= if rng.gen_bool(0.7) { 0x0f } else { 0x1f };
        inputs.push(s);
    }
    for mode in Mode::ALL {
        let prog =
            Program::parse(rfc8032::program(&format!("checks-{}", mode.name())).unwrap()).unwrap();
        for backend in backends() {
            let out = prog.run(backend, &inputs).unwrap();
            assert_eq!(out.sets(), 150);
            for (i, got) in out.iter().enumerate() {
                let [a, r, s] = [inputs[3 * i], inputs[3 * i + 1], inputs[3 * i + 2]];
                let ea = expected(&a, mode, Role::A);
                let er = expected(&r, mode, Role::R);
                let s_ok = Scalar::from_canonical_bytes(&s).is_some();
                let ok = ea[0] == Value::Bool(true) && er[0] == Value::Bool(true) && s_ok;
                let want = [
                    Value::Bool(ok),
                    ea[0],
                    er[0],
                    Value::Bool(s_ok),
                    ea[1],
                    ea[2],
                    er[1],
                    er[2],
                ];
                assert_eq!(got, &want[..], "{mode} {backend} set {i}");
            }
        }
    }
}

#[test]
fn backends_agree_on_random_bytes_in_odd_batches() {
    let prog = decode_program(Mode::Strict, Role::R);
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    for len in [0usize, 1, 2, 3, 5, 7, 8, 9, 15, 17, 33] {
        let inputs: Vec<[u8; 32]> = (0..len)
            .map(|_| {
                let mut b = [0u8; 32];
                rng.fill_bytes(&mut b);
                b
            })
            .collect();
        let serial = prog.run(Lanes::Serial, &inputs).unwrap();
        for backend in backends() {
            assert_eq!(
                prog.run(backend, &inputs).unwrap(),
                serial,
                "{backend} {len}"
            );
        }
        assert_eq!(prog.run(Lanes::Auto, &inputs).unwrap(), serial);
    }
}

fn hexs(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

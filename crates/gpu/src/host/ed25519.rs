//! The Ed25519 kernel headers (f25519.cuh, sha512.cuh, ed25519.cuh) compiled for the
//! host (kernels/host/ed25519.cpp), checked piece by piece against the Rust crates:
//! the field against `wirespeed_field::Fe51`, SHA-512 against `sha2`, the scalar
//! reduction against `wirespeed_field::Scalar`, and whole verification against
//! `wirespeed_ed25519::verify` in every mode, status code for rejection reason.

use crate::ed25519::{base_table, mode_code, status_code};
use wirespeed_ed25519::{Mode, VerifyError};

/// The edge-case builders of the Ed25519 crate's own tests (small-order points in every
/// encoding, y >= p encodings, a raw signer), used here as they are.
#[path = "../../../ed25519/tests/common/mod.rs"]
mod common;

extern "C" {
    fn ws_host_fe_mul(a: *const u8, b: *const u8, out: *mut u8);
    fn ws_host_fe_sq(a: *const u8, out: *mut u8);
    fn ws_host_fe_add_sub(a: *const u8, b: *const u8, sum: *mut u8, diff: *mut u8);
    fn ws_host_fe_invert(a: *const u8, out: *mut u8);
    fn ws_host_fe_sqrt_ratio(u: *const u8, v: *const u8, out: *mut u8) -> i32;
    fn ws_host_fe_canon(a: *const u8, out: *mut u8) -> i32;
    fn ws_host_sha512_ram(r: *const u8, a: *const u8, msg: *const u8, len: u64, out: *mut u8);
    fn ws_host_sc_reduce_wide(h: *const u8, out: *mut u8);
    fn ws_host_ed25519_verify_one(
        msg: *const u8,
        len: u64,
        sig: *const u8,
        pk: *const u8,
        mode: u32,
        base_table: *const u32,
    ) -> u8;
}

fn fe_mul(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    let mut o = [0u8; 32];
    // SAFETY: 32-byte inputs and output, as the function reads and writes.
    unsafe { ws_host_fe_mul(a.as_ptr(), b.as_ptr(), o.as_mut_ptr()) };
    o
}

fn fe_sq(a: &[u8; 32]) -> [u8; 32] {
    let mut o = [0u8; 32];
    // SAFETY: 32-byte input and output.
    unsafe { ws_host_fe_sq(a.as_ptr(), o.as_mut_ptr()) };
    o
}

fn fe_add_sub(a: &[u8; 32], b: &[u8; 32]) -> ([u8; 32], [u8; 32]) {
    let (mut s, mut d) = ([0u8; 32], [0u8; 32]);
    // SAFETY: 32-byte inputs and outputs.
    unsafe { ws_host_fe_add_sub(a.as_ptr(), b.as_ptr(), s.as_mut_ptr(), d.as_mut_ptr()) };
    (s, d)
}

fn fe_invert(a: &[u8; 32]) -> [u8; 32] {
    let mut o = [0u8; 32];
    // SAFETY: 32-byte input and output.
    unsafe { ws_host_fe_invert(a.as_ptr(), o.as_mut_ptr()) };
    o
}

fn fe_sqrt_ratio(u: &[u8; 32], v: &[u8; 32]) -> (bool, [u8; 32]) {
    let mut o = [0u8; 32];
    // SAFETY: 32-byte inputs and output.
    let ok = unsafe { ws_host_fe_sqrt_ratio(u.as_ptr(), v.as_ptr(), o.as_mut_ptr()) };
    (ok == 1, o)
}

/// (canonical bytes, is zero, is negative).
fn fe_canon(a: &[u8; 32]) -> ([u8; 32], bool, bool) {
    let mut o = [0u8; 32];
    // SAFETY: 32-byte input and output.
    let f = unsafe { ws_host_fe_canon(a.as_ptr(), o.as_mut_ptr()) };
    (o, f & 1 != 0, f & 2 != 0)
}

fn sha512_ram(r: &[u8; 32], a: &[u8; 32], msg: &[u8]) -> [u8; 64] {
    let mut o = [0u8; 64];
    // SAFETY: r and a are 32 bytes, msg has msg.len() bytes, the digest 64.
    unsafe {
        ws_host_sha512_ram(
            r.as_ptr(),
            a.as_ptr(),
            msg.as_ptr(),
            msg.len() as u64,
            o.as_mut_ptr(),
        )
    };
    o
}

fn sc_reduce_wide(h: &[u8; 64]) -> [u8; 32] {
    let mut o = [0u8; 32];
    // SAFETY: 64-byte input, 32-byte output.
    unsafe { ws_host_sc_reduce_wide(h.as_ptr(), o.as_mut_ptr()) };
    o
}

/// The kernel's verdict as a status byte; lengths are checked here, as the GPU host
/// code does before anything reaches the device.
fn verify_status(msg: &[u8], sig: &[u8], pk: &[u8], mode: Mode) -> u8 {
    if sig.len() != 64 || pk.len() != 32 {
        return status_code(Err(VerifyError::BadLength));
    }
    let t = base_table();
    // SAFETY: sig has 64 bytes, pk 32, msg msg.len(), the table its full length.
    unsafe {
        ws_host_ed25519_verify_one(
            msg.as_ptr(),
            msg.len() as u64,
            sig.as_ptr(),
            pk.as_ptr(),
            mode_code(mode),
            t.as_ptr(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::common::{
        add, add_le, all_encodings, base_encoding, encode, mul_base,
        noncanonical_ordinary_encodings, random_scalar, sign_raw, small_order_encodings, torsion,
        L_BYTES, P_BYTES,
    };
    use super::*;
    use rand::{Rng, RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use sha2::{Digest, Sha512};
    use wirespeed_field::{Fe51, FieldOps, Scalar};

    fn rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    /// Field inputs: edge values around 0, p and 2^255, then random (bit 255 random too:
    /// both sides ignore it).
    fn field_inputs(n: usize, seed: u64) -> Vec<[u8; 32]> {
        let mut v = vec![[0u8; 32], [0xff; 32], P_BYTES];
        let mut one = [0u8; 32];
        one[0] = 1;
        v.push(one);
        for d in [1u8, 2, 18, 19] {
            let mut x = P_BYTES;
            x[0] = x[0].wrapping_sub(1).wrapping_add(d); // p - 1 + d
            v.push(x);
        }
        let mut pm1 = P_BYTES;
        pm1[0] -= 1;
        v.push(pm1);
        let mut r = rng(seed);
        while v.len() < n {
            let mut x = [0u8; 32];
            r.fill_bytes(&mut x);
            if v.len() % 5 == 0 {
                // Mostly-ones and mostly-zeros limbs exercise the carries.
                for b in x.iter_mut().skip(4) {
                    *b = if v.len() % 2 == 0 { 0xff } else { 0 };
                }
            }
            v.push(x);
        }
        v
    }

    #[test]
    fn field_ops_match_fe51() {
        let xs = field_inputs(400, 1);
        for (i, a) in xs.iter().enumerate() {
            let b = &xs[(i * 7 + 3) % xs.len()];
            let (fa, fb) = (Fe51::from_bytes(a), Fe51::from_bytes(b));
            assert_eq!(fe_mul(a, b), fa.mul(&fb).to_bytes(), "mul {i}");
            assert_eq!(fe_sq(a), fa.square().to_bytes(), "sq {i}");
            let (s, d) = fe_add_sub(a, b);
            assert_eq!(s, fa.add(&fb).to_bytes(), "add {i}");
            assert_eq!(d, fa.sub(&fb).to_bytes(), "sub {i}");
            assert_eq!(fe_invert(a), fa.invert().to_bytes(), "invert {i}");
            let (c, zero, neg) = fe_canon(a);
            assert_eq!(c, fa.to_bytes(), "canon {i}");
            assert_eq!(zero, fa.is_zero(), "is_zero {i}");
            assert_eq!(neg, fa.is_negative(), "is_negative {i}");
            if !fb.is_zero() {
                let (ok, root) = fe_sqrt_ratio(a, b);
                let (rok, rroot) = Fe51::sqrt_ratio(&fa, &fb);
                assert_eq!(ok, rok, "sqrt_ratio flag {i}");
                if ok {
                    assert_eq!(root, rroot.to_bytes(), "sqrt_ratio root {i}");
                }
            }
        }
    }

    #[test]
    fn sqrt_ratio_of_squares_is_found() {
        // u = w^2 v: always a square; the roots must agree (non-negative one).
        let xs = field_inputs(100, 2);
        let mut found = 0;
        for (i, w) in xs.iter().enumerate() {
            let v = &xs[(i + 1) % xs.len()];
            let (fw, fv) = (Fe51::from_bytes(w), Fe51::from_bytes(v));
            if fv.is_zero() {
                continue;
            }
            let u = fw.square().mul(&fv).to_bytes();
            let (ok, root) = fe_sqrt_ratio(&u, v);
            assert!(ok, "{i}");
            assert_eq!(
                root,
                Fe51::sqrt_ratio(&Fe51::from_bytes(&u), &fv).1.to_bytes()
            );
            found += 1;
        }
        assert!(found > 90);
    }

    #[test]
    fn sha512_matches_sha2() {
        let mut r = rng(3);
        // The listed message lengths, and the ones putting R || A || M (64 bytes longer)
        // at the padding boundaries 111/112 and 127/128 of one and two blocks.
        let mut lens = vec![0usize, 1, 111, 112, 127, 128, 239, 240, 1000, 4096];
        lens.extend([47, 48, 63, 64, 175, 176, 191, 192]);
        for _ in 0..40 {
            lens.push(r.gen_range(0..600));
        }
        for len in lens {
            let mut ra = [0u8; 64];
            r.fill_bytes(&mut ra);
            let mut msg = vec![0u8; len];
            r.fill_bytes(&mut msg);
            let (rb, ab) = ra.split_at(32);
            let (rb, ab): (&[u8; 32], &[u8; 32]) = (rb.try_into().unwrap(), ab.try_into().unwrap());
            let mut h = Sha512::new();
            h.update(rb);
            h.update(ab);
            h.update(&msg);
            let want: [u8; 64] = h.finalize().into();
            assert_eq!(sha512_ram(rb, ab, &msg), want, "len {len}");
        }
    }

    #[test]
    fn scalar_reduction_matches_rust() {
        let mut r = rng(4);
        let mut inputs: Vec<[u8; 64]> = vec![[0u8; 64], [0xff; 64]];
        let mut l = [0u8; 64];
        l[..32].copy_from_slice(&L_BYTES);
        inputs.push(l);
        let mut lm1 = l;
        lm1[0] -= 1;
        inputs.push(lm1);
        let mut top = [0u8; 64];
        top[63] = 0x80;
        inputs.push(top);
        for i in 0..2000 {
            let mut h = [0u8; 64];
            r.fill_bytes(&mut h);
            if i % 4 == 1 {
                h[32..].fill(0);
            }
            if i % 4 == 2 {
                h[..32].fill(0xff);
            }
            inputs.push(h);
        }
        for h in &inputs {
            assert_eq!(
                sc_reduce_wide(h),
                Scalar::from_bytes_mod_order_wide(h).to_bytes(),
                "{}",
                hex::encode(h)
            );
        }
    }

    /// One verification input.
    struct Case {
        label: String,
        msg: Vec<u8>,
        sig: Vec<u8>,
        pk: Vec<u8>,
    }

    fn case(label: impl Into<String>, msg: &[u8], sig: &[u8], pk: &[u8]) -> Case {
        Case {
            label: label.into(),
            msg: msg.to_vec(),
            sig: sig.to_vec(),
            pk: pk.to_vec(),
        }
    }

    /// Asserts the kernel's status equals `verify`'s verdict in every mode; returns how
    /// many (case, mode) pairs verified, per mode.
    fn check(cases: &[Case]) -> [usize; 4] {
        let mut ok = [0usize; 4];
        for c in cases {
            for (m, mode) in Mode::ALL.iter().enumerate() {
                let want = wirespeed_ed25519::verify(&c.msg, &c.sig, &c.pk, *mode);
                let got = verify_status(&c.msg, &c.sig, &c.pk, *mode);
                assert_eq!(
                    got,
                    status_code(want),
                    "{} in {mode}: kernel {got}, verify {want:?} (msg {}, sig {}, pk {})",
                    c.label,
                    hex::encode(&c.msg),
                    hex::encode(&c.sig),
                    hex::encode(&c.pk)
                );
                ok[m] += want.is_ok() as usize;
            }
        }
        ok
    }

    fn random_msg(r: &mut ChaCha8Rng) -> Vec<u8> {
        let mut m = vec![0u8; r.gen_range(0..300)];
        r.fill_bytes(&mut m);
        m
    }

    fn arr32(b: &[u8]) -> [u8; 32] {
        b.try_into().unwrap()
    }

    #[test]
    fn verify_matches_on_generated_signatures() {
        // Honest signatures and one-bit corruptions of message, R, S and key.
        let mut cases = Vec::new();
        for (len, seed, bad) in [(0, 1, 0.0), (32, 2, 0.5), (111, 3, 0.3), (1000, 4, 0.5)] {
            for (i, rec) in wirespeed_sigdata::gen::generate(60, len, seed, bad)
                .iter()
                .enumerate()
            {
                cases.push(case(
                    format!("sigdata {len}/{seed} #{i}"),
                    &rec.msg,
                    &rec.sig,
                    &rec.pk,
                ));
            }
        }
        let ok = check(&cases);
        assert!(ok.iter().all(|&n| n > 60), "{ok:?}");
    }

    #[test]
    fn verify_matches_on_bad_lengths_and_random_bytes() {
        let mut r = rng(5);
        let rec = &wirespeed_sigdata::gen::generate(1, 10, 9, 0.0)[0];
        let mut cases = vec![
            case("short sig", &rec.msg, &rec.sig[..63], &rec.pk),
            case(
                "long pk",
                &rec.msg,
                &rec.sig,
                &[rec.pk.clone(), vec![0]].concat(),
            ),
            case("empty", b"", b"", b""),
        ];
        for i in 0..300 {
            let mut sig = [0u8; 64];
            let mut pk = [0u8; 32];
            r.fill_bytes(&mut sig);
            r.fill_bytes(&mut pk);
            if i % 2 == 0 {
                sig[63] &= 0x0f; // S < L mostly, so the points get decoded
            }
            if i % 3 == 0 {
                pk = arr32(&rec.pk); // a valid key, random R
            }
            let msg = random_msg(&mut r);
            cases.push(case(format!("random #{i}"), &msg, &sig, &pk));
        }
        check(&cases);
    }

    #[test]
    fn verify_matches_on_scalar_range() {
        let mut cases = Vec::new();
        for (i, rec) in wirespeed_sigdata::gen::generate(8, 40, 11, 0.0)
            .iter()
            .enumerate()
        {
            let s = arr32(&rec.sig[32..]);
            let mut variants = vec![add_le(&s, &L_BYTES), L_BYTES, [0xff; 32]];
            let mut lm1 = L_BYTES;
            lm1[0] -= 1;
            variants.push(lm1);
            let mut top = s;
            top[31] |= 0xe0;
            variants.push(top);
            for (j, v) in variants.iter().enumerate() {
                let mut sig = rec.sig.clone();
                sig[32..].copy_from_slice(v);
                cases.push(case(
                    format!("S variant {j} of #{i}"),
                    &rec.msg,
                    &sig,
                    &rec.pk,
                ));
            }
        }
        check(&cases);
    }

    #[test]
    fn verify_matches_on_small_order_points() {
        let mut r = rng(6);
        let encs = small_order_encodings();
        assert_eq!(encs.len(), 14);
        let mut cases = Vec::new();
        for (i, e) in encs.iter().enumerate() {
            // Small-order A: R = [r]B, S = r satisfies the cofactored equation.
            for j in 0..3 {
                let msg = random_msg(&mut r);
                let nonce = random_scalar(&mut r);
                let sig = sign_raw(
                    &base_encoding(&nonce),
                    &e.bytes,
                    &nonce,
                    &Scalar::ZERO,
                    &msg,
                );
                cases.push(case(format!("small A #{i}.{j}"), &msg, &sig, &e.bytes));
                let mut bad = sig;
                bad[32] ^= 1;
                cases.push(case(
                    format!("small A #{i}.{j} bad S"),
                    &msg,
                    &bad,
                    &e.bytes,
                ));
            }
            // Small-order R with an honest key: S = k a.
            for j in 0..3 {
                let a = random_scalar(&mut r);
                let pk = base_encoding(&a);
                let msg = random_msg(&mut r);
                let sig = sign_raw(&e.bytes, &pk, &Scalar::ZERO, &a, &msg);
                cases.push(case(format!("small R #{i}.{j}"), &msg, &sig, &pk));
            }
            // Both small, S = 0.
            for (j, f) in encs.iter().enumerate() {
                let mut sig = [0u8; 64];
                sig[..32].copy_from_slice(&f.bytes);
                cases.push(case(
                    format!("small A #{i}, R #{j}"),
                    b"pair",
                    &sig,
                    &e.bytes,
                ));
            }
        }
        let ok = check(&cases);
        // zip215 accepts the constructions, the other modes none of them.
        assert!(ok[1] > 200, "{ok:?}");
        assert_eq!((ok[0], ok[2], ok[3]), (0, 0, 0), "{ok:?}");
    }

    #[test]
    fn verify_matches_on_non_canonical_encodings() {
        let mut r = rng(7);
        let mut cases = Vec::new();
        for (i, enc) in noncanonical_ordinary_encodings().iter().enumerate() {
            // y >= p as A, with R = [r]B, S = r.
            let msg = random_msg(&mut r);
            let nonce = random_scalar(&mut r);
            let sig = sign_raw(&base_encoding(&nonce), enc, &nonce, &Scalar::ZERO, &msg);
            cases.push(case(format!("y >= p A #{i}"), &msg, &sig, enc));
            // y >= p as R, honest key.
            let a = random_scalar(&mut r);
            let pk = base_encoding(&a);
            let sig = sign_raw(enc, &pk, &Scalar::ZERO, &a, &msg);
            cases.push(case(format!("y >= p R #{i}"), &msg, &sig, &pk));
        }
        // Honest signatures with the sign bit of R or of A flipped (another point).
        for (i, rec) in wirespeed_sigdata::gen::generate(20, 16, 12, 0.0)
            .iter()
            .enumerate()
        {
            let mut sig = rec.sig.clone();
            sig[31] ^= 0x80;
            cases.push(case(
                format!("R sign flipped #{i}"),
                &rec.msg,
                &sig,
                &rec.pk,
            ));
            let mut pk = rec.pk.clone();
            pk[31] ^= 0x80;
            cases.push(case(
                format!("A sign flipped #{i}"),
                &rec.msg,
                &rec.sig,
                &pk,
            ));
        }
        assert!(cases.len() > 40);
        check(&cases);
    }

    #[test]
    fn verify_matches_on_mixed_order_points() {
        let mut r = rng(8);
        let t = torsion();
        let mut cases = Vec::new();
        for ti in 1..8 {
            for j in 0..12 {
                // A = [a]B + T, signed honestly with a: cofactored modes accept, the
                // cofactorless ones only when [k]T = 0.
                let a = random_scalar(&mut r);
                let pk = encode(&add(&mul_base(&a), &t[ti]));
                let msg = random_msg(&mut r);
                let nonce = random_scalar(&mut r);
                let sig = sign_raw(&base_encoding(&nonce), &pk, &nonce, &a, &msg);
                cases.push(case(format!("mixed A T{ti} #{j}"), &msg, &sig, &pk));
                // Every encoding of that A (the sign bit, y >= p where it exists).
                for (k, e) in all_encodings(&add(&mul_base(&a), &t[ti]))
                    .iter()
                    .enumerate()
                {
                    let sig = sign_raw(&base_encoding(&nonce), &e.bytes, &nonce, &a, &msg);
                    cases.push(case(
                        format!("mixed A T{ti} #{j} enc {k}"),
                        &msg,
                        &sig,
                        &e.bytes,
                    ));
                }
                // R = [r]B + T with an honest key.
                let b = random_scalar(&mut r);
                let pk = base_encoding(&b);
                let rp = encode(&add(&mul_base(&nonce), &t[ti]));
                let sig = sign_raw(&rp, &pk, &nonce, &b, &msg);
                cases.push(case(format!("mixed R T{ti} #{j}"), &msg, &sig, &pk));
            }
        }
        let ok = check(&cases);
        // The cofactored modes accept every honest mixed-order construction; the
        // cofactorless ones reject most of them: the equations do diverge here.
        assert!(ok[1] >= 7 * 12 * 2 && ok[2] >= 7 * 12 * 2, "{ok:?}");
        assert!(ok[0] < ok[1] && ok[3] < ok[2], "{ok:?}");
    }
}

//! The RSA section of `wirespeed bench gpu`.
//!
//! Checks, GPU against CPU byte for byte: private operations with RSA-2048, 3072 and
//! 4096 keys on random inputs below n and on edge inputs (0, 1, n - 1, multiples of p
//! and of q, short and zero-padded encodings), errors included for inputs not below n or
//! too long; public powers and products modulo 1000- to 2048-bit moduli with exponents
//! of every length in one batch. Benchmarks: private operations per second including
//! the transfers (and the fault check on the host), the CPU beside them.
//!
//! Keys are generated here (the `rsa` crate, seeded, so every run uses the same keys),
//! the three sizes in parallel.

use std::time::Instant;

use num_bigint::BigUint;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_rsa::PrivateKey;

use super::{median, tally, time_runs, Bench, Check, Options, Report};
use wirespeed_engine::rsa::{modexp_many, modmul_many, private_many};
use wirespeed_engine::{Backend, GpuError};
use wirespeed_gpu::rsa::CHUNK;

/// Key sizes checked (the first is generated first).
const KEY_BITS: [usize; 3] = [2048, 3072, 4096];

/// Seconds one benchmark figure may take in all: fewer runs when a batch is slow.
const BENCH_SECS: f64 = 20.0;

/// Checks, then benchmarks.
pub(super) fn run(
    opts: &Options,
    rng: &mut ChaCha20Rng,
    report: &mut Report,
) -> Result<(), GpuError> {
    // RSA-2048 first; the larger keys are generated meanwhile (seconds for 4096 bits).
    let keys = std::thread::scope(|s| -> Result<Vec<PrivateKey>, GpuError> {
        let larger = s.spawn(|| generate_keys(&KEY_BITS[1..]));
        let mut keys = generate_keys(&KEY_BITS[..1])?;
        private_checks(opts, &keys[0], rng, report);
        public_checks(opts, &keys[0], rng, report);
        let more = larger
            .join()
            .unwrap_or_else(|_| Err(GpuError::Unsupported("RSA key generation panicked".into())))?;
        for key in &more {
            private_checks(opts, key, rng, report);
        }
        keys.extend(more);
        Ok(keys)
    })?;

    // Benchmarks.
    let plan: &[(usize, usize, usize)] = if opts.quick {
        &[(2048, 1 << 12, 1 << 10)]
    } else {
        &[
            (2048, 1 << 16, 1 << 10),
            (3072, 1 << 14, 1 << 9),
            (4096, 1 << 13, 1 << 9),
        ]
    };
    for &(bits, n, cpu_n) in plan {
        let Some(key) = keys.iter().find(|k| k.public().bits() == bits) else {
            continue;
        };
        let inputs: Vec<Vec<u8>> = (0..n).map(|_| below(key.public().n(), rng)).collect();
        let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
        let cpu: Vec<f64> = time_runs(opts.runs, || {
            private_many(Backend::CPU, key, &refs[..cpu_n]).map(|_| ())
        })?
        .iter()
        .map(|s| cpu_n as f64 / s)
        .collect();
        // Warm-up, and a check of its results: each was raised to e and compared with
        // its input before release, so any wrong one is an error here.
        let t = Instant::now();
        let got = private_many(Backend::Gpu, key, &refs)?;
        let warm = t.elapsed().as_secs_f64();
        let bad: Vec<usize> = (0..n).filter(|&i| got[i].is_err()).collect();
        report.checks.push(Check {
            name: format!("rsa-{bits} private: benchmark batch released n={n}"),
            cases: n,
            mismatches: bad.len(),
            detail: bad
                .first()
                .map(|&i| format!("input {i}: {:?}", got[i].as_ref().err())),
        });
        drop(got);
        let runs: Vec<f64> = time_runs(runs_within(opts.runs, warm, BENCH_SECS), || {
            private_many(Backend::Gpu, key, &refs).map(|_| ())
        })?
        .iter()
        .map(|s| n as f64 / s)
        .collect();
        report.benches.push(Bench {
            name: format!("rsa-{bits} private ops, incl. transfers (CPU: {cpu_n} ops)"),
            size: n,
            unit: "ops/s".into(),
            median: median(&runs),
            runs,
            cpu_median: Some(median(&cpu)),
        });
    }
    Ok(())
}

/// private_many, GPU against CPU, on one key.
fn private_checks(opts: &Options, key: &PrivateKey, rng: &mut ChaCha20Rng, report: &mut Report) {
    let bits = key.public().bits();
    let randoms = match (bits, opts.quick) {
        (2048, false) => CHUNK + 97,
        (_, false) => 1500,
        (_, true) => 300,
    };
    let inputs = private_inputs(key, randoms, rng);
    report.checks.push(private_check(
        &format!(
            "rsa-{bits} private: random and edge inputs n={}",
            inputs.len()
        ),
        key,
        &inputs,
    ));
}

/// modexp_many and modmul_many, GPU against CPU, modulo random odd 1000-, 1024- and
/// 1536-bit moduli and the RSA-2048 key's.
fn public_checks(opts: &Options, key: &PrivateKey, rng: &mut ChaCha20Rng, report: &mut Report) {
    for bits in [1000usize, 1024, 1536, 2048] {
        let m = if bits == key.public().bits() {
            key.public().n().to_bytes_be()
        } else {
            random_modulus(bits, rng)
        };
        let count = match (bits, opts.quick) {
            (1024, false) => CHUNK + 61,
            (_, false) => 1500,
            (_, true) => 400,
        };
        let (bases, exps) = modexp_inputs(&m, count, rng);
        report.checks.push(public_check(
            &format!("modexp {bits}-bit modulus n={}", bases.len()),
            &m,
            &bases,
            &exps,
            true,
        ));
        let count = if opts.quick { 1000 } else { CHUNK + 61 };
        let (a, b) = modmul_inputs(&m, count, rng);
        report.checks.push(public_check(
            &format!("modmul {bits}-bit modulus n={}", a.len()),
            &m,
            &a,
            &b,
            false,
        ));
    }
}

/// Runs of a figure whose one run took `secs`: as asked, but no more than fit in
/// `budget` seconds, and at least one.
fn runs_within(asked: usize, secs: f64, budget: f64) -> usize {
    let fit = if secs > 0.0 {
        (budget / secs).floor()
    } else {
        f64::INFINITY
    };
    (asked as f64).min(fit).max(1.0) as usize
}

/// Seed of the keys: fixed, so that every run (whatever its --seed) uses the same keys
/// and spends the same time generating them; this one gives its 4096-bit key after few
/// candidates (about 2 s, where others take up to 30 s).
const KEY_SEED: u64 = 0x7273_612d_6b65_7981;

/// RSA keys of these sizes, generated in parallel from [`KEY_SEED`].
fn generate_keys(sizes: &[usize]) -> Result<Vec<PrivateKey>, GpuError> {
    use ::rsa::pkcs1::EncodeRsaPrivateKey;
    let make = |bits: usize| -> Result<PrivateKey, String> {
        let mut rng = ChaCha20Rng::seed_from_u64(KEY_SEED ^ bits as u64);
        let k = ::rsa::RsaPrivateKey::new(&mut rng, bits).map_err(|e| e.to_string())?;
        let der = k.to_pkcs1_der().map_err(|e| e.to_string())?;
        PrivateKey::from_der_with(der.as_bytes(), wirespeed_engine::backend::cpu())
            .map_err(|e| e.to_string())
    };
    let keys: Vec<Result<PrivateKey, String>> = std::thread::scope(|s| {
        let hs: Vec<_> = sizes.iter().map(|&b| s.spawn(move || make(b))).collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("key generation panicked".into()))
            })
            .collect()
    });
    keys.into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| GpuError::Unsupported(format!("RSA key generation: {e}")))
}

/// A uniformly random value below `n`, as big-endian bytes: zero-padded to n's length
/// or minimal, at random.
fn below(n: &BigUint, rng: &mut ChaCha20Rng) -> Vec<u8> {
    let len = n.bits().div_ceil(8) as usize;
    let mut b = vec![0u8; len + 8];
    rng.fill_bytes(&mut b);
    let v = BigUint::from_bytes_be(&b) % n;
    if rng.gen() {
        padded(&v, len)
    } else {
        v.to_bytes_be()
    }
}

/// Big-endian bytes of v, left-padded with zeros to `len`.
fn padded(v: &BigUint, len: usize) -> Vec<u8> {
    let b = v.to_bytes_be();
    let mut out = vec![0u8; len.saturating_sub(b.len())];
    out.extend_from_slice(&b);
    out
}

/// A random odd modulus of exactly `bits` bits.
fn random_modulus(bits: usize, rng: &mut ChaCha20Rng) -> Vec<u8> {
    let mut b = vec![0u8; bits.div_ceil(8)];
    rng.fill_bytes(&mut b);
    let mut v = BigUint::from_bytes_be(&b) >> (8 * b.len() - bits);
    v.set_bit(bits as u64 - 1, true);
    v.set_bit(0, true);
    v.to_bytes_be()
}

/// Inputs of private operations, in range and not, with what each is.
fn private_edges(key: &PrivateKey) -> Vec<Vec<u8>> {
    let n = key.public().n();
    let size = key.public().size();
    let c = key.crt_params();
    let one = BigUint::from(1u8);
    let mut v: Vec<Vec<u8>> = vec![
        vec![],
        vec![0],
        vec![0; size],
        vec![1],
        padded(&one, size),
        vec![2],
        vec![0xff; 8],
    ];
    for x in [
        n - 1u8,
        n - 2u8,
        c.p.clone(),
        c.q.clone(),
        &c.p * 2u8,
        &c.q * 3u8,
        n - &c.p,
        n - &c.q,
        &c.p - 1u8,
        &c.q + 1u8,
        &c.p * (&c.q - 1u8) / 2u8,
        &c.qinv * &c.q,
    ] {
        v.push(padded(&(x % n), size));
    }
    // Out of range: n and above, and values written with more bytes than n has.
    v.push(n.to_bytes_be());
    v.push((n + 1u8).to_bytes_be());
    v.push(vec![0xff; size]);
    v.push(vec![0; size + 1]);
    let mut long = vec![0u8];
    long.extend(padded(&one, size));
    v.push(long);
    v.push(vec![1; size + 1]);
    v
}

/// Edge inputs first, `randoms` random values below n, then the edge inputs again (so
/// that they sit in two chunks at different positions).
fn private_inputs(key: &PrivateKey, randoms: usize, rng: &mut ChaCha20Rng) -> Vec<Vec<u8>> {
    let edges = private_edges(key);
    let mut v = edges.clone();
    v.extend((0..randoms).map(|_| below(key.public().n(), rng)));
    v.extend(edges);
    v
}

/// A result, short, for a mismatch report.
fn show<E: std::fmt::Debug>(r: &Result<Vec<u8>, E>) -> String {
    match r {
        Ok(b) => format!("Ok({}..)", hex::encode(&b[..b.len().min(12)])),
        Err(e) => format!("Err({e:?})"),
    }
}

/// The first `len` bytes of an input, hex, for a mismatch report.
fn head(b: &[u8]) -> String {
    format!("{} bytes {}..", b.len(), hex::encode(&b[..b.len().min(12)]))
}

/// private_many on the GPU against the CPU, result for result (errors included).
fn private_check(name: &str, key: &PrivateKey, inputs: &[Vec<u8>]) -> Check {
    let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut c = Check {
        name: name.to_string(),
        cases: refs.len(),
        mismatches: 0,
        detail: None,
    };
    let want = match private_many(Backend::CPU, key, &refs) {
        Ok(w) => w,
        Err(e) => {
            c.detail = Some(format!("CPU error: {e}"));
            return c;
        }
    };
    let got = match private_many(Backend::Gpu, key, &refs) {
        Ok(g) => g,
        Err(e) => {
            c.detail = Some(format!("GPU error: {e}"));
            return c;
        }
    };
    (c.mismatches, c.detail) = diff(&refs, &got, &want);
    c
}

/// Counts differing results; the first is described.
fn diff<E: std::fmt::Debug + PartialEq>(
    inputs: &[&[u8]],
    got: &[Result<Vec<u8>, E>],
    want: &[Result<Vec<u8>, E>],
) -> (usize, Option<String>) {
    tally(got, want, "results", |i, g, w| {
        format!(
            "input {i} ({}): GPU {}, CPU {}",
            head(inputs[i]),
            show(g),
            show(w)
        )
    })
}

/// Bases and exponents for a modulus m: bases below, at and above m (the kernels reduce
/// them first), exponents of every length from none to m's, all in one batch.
fn modexp_inputs(m: &[u8], count: usize, rng: &mut ChaCha20Rng) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mv = BigUint::from_bytes_be(m);
    let bases = public_operands(&mv, count, rng);
    let exps: Vec<Vec<u8>> = (0..bases.len())
        .map(|i| match i % 8 {
            0 => vec![],
            1 => vec![0, 0],
            2 => vec![1],
            3 => vec![2],
            4 => vec![1, 0, 1],
            5 => (0..8).map(|_| rng.gen()).collect(),
            6 => (0..rng.gen_range(1..=m.len())).map(|_| rng.gen()).collect(),
            _ => (0..m.len()).map(|_| rng.gen()).collect(),
        })
        .collect();
    (bases, exps)
}

/// Two operand lists for products modulo m.
fn modmul_inputs(m: &[u8], count: usize, rng: &mut ChaCha20Rng) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mv = BigUint::from_bytes_be(m);
    let a = public_operands(&mv, count, rng);
    let mut b = public_operands(&mv, count, rng);
    b.rotate_left(3);
    (a, b)
}

/// Operands for a modulus: edge values (0, 1, m - 1, m, m + 1, 2m + 3, all ones at m's
/// width and beyond), then random values below m, of m's length and longer.
fn public_operands(m: &BigUint, count: usize, rng: &mut ChaCha20Rng) -> Vec<Vec<u8>> {
    let len = m.bits().div_ceil(8) as usize;
    let mut v: Vec<Vec<u8>> = vec![
        vec![],
        vec![0; len],
        vec![1],
        (m - 1u8).to_bytes_be(),
        m.to_bytes_be(),
        (m + 1u8).to_bytes_be(),
        (m * 2u8 + 3u8).to_bytes_be(),
        vec![0xff; len],
        vec![0xff; len + 5],
    ];
    while v.len() < count {
        let x = match v.len() % 3 {
            0 => below(m, rng),
            1 => padded(&(BigUint::from_bytes_be(&below(m, rng))), len + 2),
            _ => (0..len + 8).map(|_| rng.gen()).collect(),
        };
        v.push(x);
    }
    v.truncate(count.max(9));
    v
}

/// modexp_many (`pow`) or modmul_many on the GPU against the CPU.
fn public_check(name: &str, m: &[u8], a: &[Vec<u8>], b: &[Vec<u8>], pow: bool) -> Check {
    let ar: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
    let br: Vec<&[u8]> = b.iter().map(|v| v.as_slice()).collect();
    let op = |backend| {
        if pow {
            modexp_many(backend, m, &ar, &br)
        } else {
            modmul_many(backend, m, &ar, &br)
        }
    };
    let mut c = Check {
        name: name.to_string(),
        cases: ar.len(),
        mismatches: 0,
        detail: None,
    };
    match (op(Backend::Gpu), op(Backend::CPU)) {
        (Ok(g), Ok(w)) => {
            let g: Vec<Result<Vec<u8>, ()>> = g.into_iter().map(Ok).collect();
            let w: Vec<Result<Vec<u8>, ()>> = w.into_iter().map(Ok).collect();
            (c.mismatches, c.detail) = diff(&ar, &g, &w);
        }
        (Err(e), _) => c.detail = Some(format!("GPU error: {e}")),
        (_, Err(e)) => c.detail = Some(format!("CPU error: {e}")),
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirespeed_rsa::RsaError;

    /// A key of `bits` bits from the section's own generator.
    fn key(bits: u32) -> PrivateKey {
        generate_keys(&[bits as usize]).unwrap().remove(0)
    }

    #[test]
    fn runs_fit_the_budget() {
        assert_eq!(runs_within(5, 1.0, 20.0), 5);
        assert_eq!(runs_within(5, 6.0, 20.0), 3);
        assert_eq!(runs_within(5, 30.0, 20.0), 1);
        assert_eq!(runs_within(5, 0.0, 20.0), 5);
    }

    #[test]
    fn private_inputs_cover_both_factors_and_the_range() {
        let k = key(2048);
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let inputs = private_inputs(&k, 50, &mut rng);
        let edges = private_edges(&k).len();
        assert_eq!(inputs.len(), 50 + 2 * edges);
        let res: Vec<_> = inputs.iter().map(|m| k.raw(m)).collect();
        let out_of_range = res
            .iter()
            .filter(|r| **r == Err(RsaError::OutOfRange))
            .count();
        // Six out-of-range inputs among the edges, twice; every other one succeeds.
        assert_eq!(out_of_range, 12);
        assert!(res
            .iter()
            .all(|r| r.is_ok() || *r == Err(RsaError::OutOfRange)));
        let c = k.crt_params();
        let n = k.public().n();
        let vals: Vec<BigUint> = inputs.iter().map(|b| BigUint::from_bytes_be(b)).collect();
        let zero = BigUint::from(0u8);
        let mult = |f: &BigUint| {
            vals.iter()
                .filter(|v| *v < n && **v != zero && (*v % f) == zero)
                .count()
        };
        assert!(mult(&c.p) >= 4 && mult(&c.q) >= 4);
        assert!(vals.contains(&(n - 1u8)));
        // Random inputs are below n, of varying byte lengths.
        let randoms = &inputs[edges..edges + 50];
        assert!(randoms.iter().all(|b| BigUint::from_bytes_be(b) < *n));
        assert!(randoms.iter().any(|b| b.len() == 256));
    }

    #[test]
    fn public_inputs_have_every_exponent_length() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        for bits in [1000usize, 1024, 1536] {
            let m = random_modulus(bits, &mut rng);
            let mv = BigUint::from_bytes_be(&m);
            assert_eq!(mv.bits() as usize, bits);
            assert!(mv.bit(0));
            let (bases, exps) = modexp_inputs(&m, 100, &mut rng);
            assert_eq!((bases.len(), exps.len()), (100, 100));
            assert!(bases.iter().any(|b| BigUint::from_bytes_be(b) >= mv));
            assert!(bases.iter().any(|b| b.is_empty()));
            assert!(exps.iter().any(|e| e.is_empty()));
            assert!(exps.iter().any(|e| e.len() == m.len()));
            // The CPU path takes all of them (the reference of the GPU check).
            let br: Vec<&[u8]> = bases.iter().map(|v| v.as_slice()).collect();
            let er: Vec<&[u8]> = exps.iter().map(|v| v.as_slice()).collect();
            let p = modexp_many(Backend::CPU, &m, &br, &er).unwrap();
            assert_eq!(p[2], padded(&BigUint::from(1u8), m.len())); // 1^1
            let (a, b) = modmul_inputs(&m, 50, &mut rng);
            assert_eq!((a.len(), b.len()), (50, 50));
        }
    }

    #[test]
    fn diffs_name_the_first_mismatch() {
        let inputs: Vec<&[u8]> = vec![&[1], &[2], &[3]];
        let want: Vec<Result<Vec<u8>, RsaError>> = vec![Ok(vec![1]), Ok(vec![2]), Ok(vec![3])];
        let mut got = want.clone();
        assert_eq!(diff(&inputs, &got, &want), (0, None));
        got[1] = Err(RsaError::FaultDetected);
        let (bad, d) = diff(&inputs, &got, &want);
        assert_eq!(bad, 1);
        let d = d.unwrap();
        assert!(
            d.starts_with("input 1 (1 bytes 02..): GPU Err(FaultDetected)"),
            "{d}"
        );
    }
}

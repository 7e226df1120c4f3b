//! `wirespeed bench vdf`: ns per modular squaring in a chain x -> x^2 mod N at 1024 to
//! 4096 bits, wirespeed beside GMP (mpz square then remainder, through rug, linked from
//! the system library), OpenSSL (`BN_mod_mul_montgomery` in Montgomery form, declared
//! here since the openssl crates do not bind it, and `BN_mod_sqr`) and num-bigint in the
//! same run; then the proof overhead after an evaluation of T squarings at 2048 bits for
//! the single Wesolowski and Pietrzak proofs (built after the evaluation) and the
//! segmented Wesolowski proof (built beside it, `eval_segmented`), and their verification
//! times.

use std::time::Instant;

use clap::Args;
use num_bigint::BigUint;
use openssl::bn::{BigNum, BigNumContext};
use rug::Assign;
use wirespeed_bigint::{MontCtx, Uint};
use wirespeed_engine::backend::cpu;
use wirespeed_vdf::{
    eval, eval_segmented, prove, EvalOptions, Modulus, ProofKind, VdfProof, U4096,
};

use crate::machine::{utc_now, Machine};

/// Options of `wirespeed bench vdf`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Squarings per timed pass at 2048 bits (scaled by size for the others)
    #[arg(long, default_value_t = 10_000)]
    pub chain: u64,
    /// Timed passes per contender after one warm-up; the median is reported
    #[arg(
        long,
        default_value_t = 7,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000)
    )]
    pub reps: usize,
    /// T for the proof-overhead measurement at 2048 bits (0 skips it)
    #[arg(long, default_value_t = 1 << 20)]
    pub proof_t: u64,
    /// Smoke run: short chains, 2 passes, T = 4096
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object instead of the markdown report: machine, date, reps,
    /// squaring (ns per squaring per contender, ws / peer ratios) and proofs
    #[arg(long)]
    pub json: bool,
}

/// The median of a non-empty sample.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// OpenSSL's Montgomery functions (libcrypto is linked through openssl-sys).
mod ossl_mont {
    use std::ffi::c_int;

    use openssl_sys::{BIGNUM, BN_CTX};

    /// Opaque `BN_MONT_CTX`.
    #[repr(C)]
    pub struct BnMontCtx {
        _private: [u8; 0],
    }

    extern "C" {
        pub fn BN_MONT_CTX_new() -> *mut BnMontCtx;
        pub fn BN_MONT_CTX_free(m: *mut BnMontCtx);
        pub fn BN_MONT_CTX_set(
            m: *mut BnMontCtx,
            modulus: *const BIGNUM,
            ctx: *mut BN_CTX,
        ) -> c_int;
        pub fn BN_to_montgomery(
            r: *mut BIGNUM,
            a: *const BIGNUM,
            m: *mut BnMontCtx,
            ctx: *mut BN_CTX,
        ) -> c_int;
        pub fn BN_from_montgomery(
            r: *mut BIGNUM,
            a: *const BIGNUM,
            m: *mut BnMontCtx,
            ctx: *mut BN_CTX,
        ) -> c_int;
        pub fn BN_mod_mul_montgomery(
            r: *mut BIGNUM,
            a: *const BIGNUM,
            b: *const BIGNUM,
            m: *mut BnMontCtx,
            ctx: *mut BN_CTX,
        ) -> c_int;
    }
}

/// x^(2^chain) mod n with OpenSSL's Montgomery squaring (`BN_mod_mul_montgomery(a, a)`).
fn openssl_mont_chain(
    n: &BigNum,
    x: &BigNum,
    chain: u64,
    ctx: &mut BigNumContext,
) -> Result<BigNum, String> {
    use foreign_types::ForeignTypeRef;
    let fail = || "OpenSSL Montgomery call failed".to_string();
    let mut a = BigNum::new().map_err(|e| e.to_string())?;
    let mut b = BigNum::new().map_err(|e| e.to_string())?;
    // SAFETY: every pointer comes from a live openssl object (BigNum, BigNumContext) or
    // from BN_MONT_CTX_new (checked non-null, freed once below); the functions are
    // libcrypto's documented Montgomery API with these exact signatures.
    unsafe {
        let mont = ossl_mont::BN_MONT_CTX_new();
        if mont.is_null() {
            return Err(fail());
        }
        let mut ok = ossl_mont::BN_MONT_CTX_set(mont, n.as_ptr(), ctx.as_ptr()) == 1
            && ossl_mont::BN_to_montgomery(a.as_ptr(), x.as_ptr(), mont, ctx.as_ptr()) == 1;
        for _ in 0..chain {
            if !ok {
                break;
            }
            ok = ossl_mont::BN_mod_mul_montgomery(
                b.as_ptr(),
                a.as_ptr(),
                a.as_ptr(),
                mont,
                ctx.as_ptr(),
            ) == 1;
            std::mem::swap(&mut a, &mut b);
        }
        ok = ok && ossl_mont::BN_from_montgomery(b.as_ptr(), a.as_ptr(), mont, ctx.as_ptr()) == 1;
        ossl_mont::BN_MONT_CTX_free(mont);
        if ok {
            Ok(b)
        } else {
            Err(fail())
        }
    }
}

/// One row: ns per squaring for each contender.
#[derive(Debug, Clone)]
pub struct SquaringRow {
    /// Modulus size.
    pub bits: usize,
    /// The kernel wirespeed's chain runs for this size on this CPU (`ifma-fold`: radix
    /// 2^52, reduced by folding; `ifma`: radix-2^52 Montgomery).
    pub kernel: String,
    /// wirespeed Montgomery squaring.
    pub wirespeed: f64,
    /// The same in time-stamp-counter ticks per squaring (the TSC ticks at a fixed
    /// rate, the nominal clock on current x86 parts, not the boosted core clock).
    pub wirespeed_tsc: f64,
    /// TSC ticks per nanosecond over the wirespeed chains.
    pub tsc_ghz: f64,
    /// GMP mpz square + remainder.
    pub gmp: f64,
    /// OpenSSL BN_mod_mul_montgomery (squaring in Montgomery form).
    pub openssl_mont: f64,
    /// OpenSSL BN_mod_sqr.
    pub openssl: f64,
    /// num-bigint square + remainder.
    pub num_bigint: f64,
}

/// A deterministic odd full-width modulus and a base below it.
fn inputs<const L: usize>(seed: u64) -> (Uint<L>, Uint<L>) {
    let mut s = seed | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut n = [0u64; L];
    let mut x = [0u64; L];
    for i in 0..L {
        n[i] = next();
        x[i] = next();
    }
    n[0] |= 1;
    n[L - 1] |= 1 << 63;
    x[L - 1] >>= 1;
    (Uint(n), Uint(x))
}

/// The time-stamp counter (0 off x86-64, where the TSC columns then read 0).
fn tsc_now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: RDTSC exists on every x86-64 CPU.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// Times a squaring chain of `chain` steps for every contender and checks they agree.
pub fn squaring_row<const L: usize>(chain: u64, reps: usize) -> Result<SquaringRow, String> {
    let (n, x) = inputs::<L>(0x9e37_79b9_7f4a_7c15 ^ L as u64);
    let ctx = MontCtx::new_with(&n, cpu()).map_err(|e| e.to_string())?;
    let (nb, xb) = (
        BigUint::from_bytes_be(&n.to_be_bytes()),
        BigUint::from_bytes_be(&x.to_be_bytes()),
    );
    let order = rug::integer::Order::Msf;
    let (gn, gx) = (
        rug::Integer::from_digits(&n.to_be_bytes(), order),
        rug::Integer::from_digits(&x.to_be_bytes(), order),
    );
    let ossl = |e: openssl::error::ErrorStack| e.to_string();
    let (on, ox) = (
        BigNum::from_slice(&n.to_be_bytes()).map_err(ossl)?,
        BigNum::from_slice(&x.to_be_bytes()).map_err(ossl)?,
    );
    let mut bnctx = BigNumContext::new().map_err(ossl)?;
    let per = |t: Instant| t.elapsed().as_secs_f64() * 1e9 / chain as f64;
    let (mut ws, mut gmp, mut os, mut nbig, mut om) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut tsc, mut tsc_rate) = (vec![], vec![]);
    let mut mont_out = BigNum::new().map_err(ossl)?;
    let mut out = (
        Uint::<L>::ZERO,
        rug::Integer::new(),
        BigNum::new().map_err(ossl)?,
        BigUint::default(),
    );
    for rep in 0..=reps {
        let t = Instant::now();
        let c0 = tsc_now();
        out.0 = ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&x), chain));
        let ticks = tsc_now().wrapping_sub(c0) as f64;
        let a = per(t);
        if rep > 0 {
            tsc.push(ticks / chain as f64);
            tsc_rate.push(ticks / (a * chain as f64));
        }

        let t = Instant::now();
        let (mut v, mut sq) = (gx.clone(), rug::Integer::new());
        for _ in 0..chain {
            sq.assign(v.square_ref());
            sq %= &gn;
            std::mem::swap(&mut v, &mut sq);
        }
        let b = per(t);
        out.1 = v;

        let t = Instant::now();
        let (mut v, mut w) = (ox.to_owned().map_err(ossl)?, BigNum::new().map_err(ossl)?);
        for _ in 0..chain {
            w.mod_sqr(&v, &on, &mut bnctx).map_err(ossl)?;
            std::mem::swap(&mut v, &mut w);
        }
        let c = per(t);
        out.2 = v;

        let t = Instant::now();
        mont_out = openssl_mont_chain(&on, &ox, chain, &mut bnctx)?;
        let e = per(t);

        let t = Instant::now();
        let mut v = xb.clone();
        for _ in 0..chain {
            v = (&v * &v) % &nb;
        }
        let d = per(t);
        out.3 = v;
        if rep > 0 {
            ws.push(a);
            gmp.push(b);
            os.push(c);
            nbig.push(d);
            om.push(e);
        }
    }
    let want = out.3.to_bytes_be();
    if BigUint::from_bytes_be(&out.0.to_be_bytes()).to_bytes_be() != want
        || out.1.to_digits::<u8>(order) != want
        || out.2.to_vec() != want
        || mont_out.to_vec() != want
    {
        return Err(format!(
            "{} bits: contenders disagree on x^(2^{chain}) mod N",
            64 * L
        ));
    }
    Ok(SquaringRow {
        bits: 64 * L,
        kernel: ctx.chain_kernel(chain).to_string(),
        wirespeed: median(ws),
        wirespeed_tsc: median(tsc),
        tsc_ghz: median(tsc_rate),
        gmp: median(gmp),
        openssl_mont: median(om),
        openssl: median(os),
        num_bigint: median(nbig),
    })
}

/// Proof overhead at 2048 bits (RSA-2048 challenge modulus, x = 3).
#[derive(Debug, Clone)]
pub struct ProofRow {
    /// Which proof.
    pub kind: ProofKind,
    /// T.
    pub t: u64,
    /// Evaluation seconds (T squarings, checkpoints included; for the segmented proof,
    /// with its prover running beside the evaluation).
    pub eval_secs: f64,
    /// The plain evaluation's seconds in the same run (what overheads are measured
    /// against).
    pub plain_eval_secs: f64,
    /// Proving seconds after the last squaring.
    pub prove_secs: f64,
    /// Verification milliseconds.
    pub verify_ms: f64,
}

/// Median milliseconds of 5 verifications of a proof (an error if it does not verify).
fn verify_ms(proof: &VdfProof) -> Result<f64, String> {
    let mut times = vec![];
    for _ in 0..5 {
        let v0 = Instant::now();
        proof
            .verify(&proof.modulus)
            .map_err(|e| format!("{:?} proof does not verify: {e}", proof.kind()))?;
        times.push(v0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

/// Evaluates once and times the three provers and verifiers.
pub fn proof_rows(t: u64) -> Result<Vec<ProofRow>, String> {
    let n = Modulus::rsa2048_with(cpu());
    let x = U4096::from_u64(3);
    let start = Instant::now();
    let ev = eval(&n, &x, t, &EvalOptions::default()).map_err(|e| e.to_string())?;
    let eval_secs = start.elapsed().as_secs_f64();
    let mut rows = vec![];
    for kind in [ProofKind::Wesolowski, ProofKind::Pietrzak] {
        let p0 = Instant::now();
        let proof = prove(&n, &ev, kind).map_err(|e| e.to_string())?;
        let prove_secs = p0.elapsed().as_secs_f64();
        rows.push(ProofRow {
            kind,
            t,
            eval_secs,
            plain_eval_secs: eval_secs,
            prove_secs,
            verify_ms: verify_ms(&proof)?,
        });
    }
    // The segmented proof: proved beside the evaluation; the progress callback's call
    // with T marks the last squaring.
    let last = std::cell::Cell::new(None);
    let tick = |done: u64| {
        if done == t {
            last.set(Some(Instant::now()));
        }
    };
    let opts = EvalOptions {
        checkpoint_every: 0,
        progress: Some(&tick),
    };
    let start = Instant::now();
    let (_, proof) = eval_segmented(&n, &x, t, &opts).map_err(|e| e.to_string())?;
    let end = Instant::now();
    let last = last.get().ok_or("no progress call at T")?;
    rows.push(ProofRow {
        kind: ProofKind::WesolowskiSegmented,
        t,
        eval_secs: (last - start).as_secs_f64(),
        plain_eval_secs: eval_secs,
        prove_secs: (end - last).as_secs_f64(),
        verify_ms: verify_ms(&proof)?,
    });
    Ok(rows)
}

/// The report as one JSON object: the same figures as the markdown tables.
fn report_json(
    m: &Machine,
    reps: usize,
    rows: &[SquaringRow],
    proofs: &[ProofRow],
) -> serde_json::Value {
    let squaring: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "bits": r.bits,
                "kernel": r.kernel,
                "wirespeed_ns": r.wirespeed,
                "wirespeed_tsc_ticks": r.wirespeed_tsc,
                "tsc_ghz": r.tsc_ghz,
                "gmp_ns": r.gmp,
                "openssl_mont_ns": r.openssl_mont,
                "openssl_mod_sqr_ns": r.openssl,
                "num_bigint_ns": r.num_bigint,
                "ws_over_gmp": r.wirespeed / r.gmp,
                "ws_over_openssl_mont": r.wirespeed / r.openssl_mont,
            })
        })
        .collect();
    let proofs: Vec<serde_json::Value> = proofs
        .iter()
        .map(|r| {
            serde_json::json!({
                "proof": format!("{:?}", r.kind),
                "t": r.t,
                "eval_secs": r.eval_secs,
                "plain_eval_secs": r.plain_eval_secs,
                "prove_secs": r.prove_secs,
                "overhead_pct": 100.0 * r.prove_secs / r.plain_eval_secs,
                "total_over_plain_pct": 100.0 * ((r.eval_secs + r.prove_secs) / r.plain_eval_secs - 1.0),
                "verify_ms": r.verify_ms,
            })
        })
        .collect();
    serde_json::json!({
        "bench": "vdf",
        "machine": m.summary(),
        "cpu_family": m.family,
        "microarch": m.microarch,
        "date": utc_now(),
        "reps": reps,
        "squaring": squaring,
        "proofs": proofs,
    })
}

/// Runs the benchmark and prints a markdown report (one JSON object with `--json`).
pub fn run(args: &BenchArgs) -> Result<(), String> {
    let (chain, reps, proof_t) = if args.quick {
        (500, 2, 4096)
    } else {
        (args.chain.max(1), args.reps.max(1), args.proof_t)
    };
    eprintln!("vdf: squaring chains");
    let rows = vec![
        squaring_row::<16>(chain * 4, reps)?,
        squaring_row::<32>(chain, reps)?,
        squaring_row::<48>((chain / 2).max(1), reps)?,
        squaring_row::<64>((chain / 4).max(1), reps)?,
    ];
    let m = Machine::detect();
    if args.json {
        let proofs = if proof_t > 0 {
            eprintln!("vdf: evaluation of T = {proof_t} at 2048 bits and proofs");
            proof_rows(proof_t)?
        } else {
            vec![]
        };
        println!("{}", report_json(&m, reps, &rows, &proofs));
        return Ok(());
    }
    println!("## Modular squaring and VDF proofs: wirespeed and peers\n");
    println!("- Machine: {}\n- Date: {}", m.summary(), utc_now());
    println!("- Chain x -> x^2 mod N, random odd full-width N; median of {reps} passes after a warm-up; every contender reaches the same value");
    println!("- Peers: GMP (system library via rug: mpz square, then remainder), OpenSSL `BN_mod_mul_montgomery` (Montgomery form, like wirespeed) and `BN_mod_sqr`, num-bigint\n");
    println!("| bits | kernel | wirespeed ns | TSC ticks (TSC GHz) | GMP ns | OpenSSL Montgomery ns | OpenSSL BN_mod_sqr ns | num-bigint ns | ws / GMP | ws / OpenSSL Montgomery |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {:.0} | {:.0} ({:.2}) | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} |",
            r.bits,
            r.kernel,
            r.wirespeed,
            r.wirespeed_tsc,
            r.tsc_ghz,
            r.gmp,
            r.openssl_mont,
            r.openssl,
            r.num_bigint,
            r.wirespeed / r.gmp,
            r.wirespeed / r.openssl_mont
        );
    }
    if proof_t > 0 {
        eprintln!("vdf: evaluation of T = {proof_t} at 2048 bits and proofs");
        println!("\nOverhead: proof seconds after the last squaring over the plain evaluation's seconds; total: (evaluation with the prover beside it + proof after it) over the plain evaluation, minus 1.\n");
        println!("| proof | T | evaluation s | proof s after the last squaring | overhead | total over plain evaluation | verify ms |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for r in proof_rows(proof_t)? {
            println!(
                "| {} | {} | {:.3} | {:.4} | {:.2}% | {:.2}% | {:.2} |",
                r.kind.name(),
                r.t,
                r.eval_secs,
                r.prove_secs,
                100.0 * r.prove_secs / r.plain_eval_secs,
                100.0 * ((r.eval_secs + r.prove_secs) / r.plain_eval_secs - 1.0),
                r.verify_ms
            );
        }
    }
    Ok(())
}

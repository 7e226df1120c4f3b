//! BLS12-377 G1 MSM beside arkworks (ark-ec `VariableBaseMSM`, parallel) in this process
//! and gnark-crypto (`G1Jac.MultiExp`, the Go program in bench/gnark, run as a
//! subprocess when Go is installed) in the same run, with 1 and 2 threads, on uniform
//! and skewed scalars. wirespeed and arkworks get the same inputs and must agree; the Go
//! program draws its own inputs from the same distributions.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ark_bls12_377::{Fr as ArkFr, G1Affine, G1Projective};
use ark_ec::VariableBaseMSM;
use ark_ff::PrimeField;
use clap::Args;
use wirespeed_engine::backend::cpu;
use wirespeed_msm::ark::{affine_to_ark, jacobian_to_ark};
use wirespeed_msm::{gen, msm_with, Affine, Lanes, Scalar};

use crate::machine::{utc_now, Machine};
use crate::vdf::median;

/// Arguments of `wirespeed bench msm`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// log2 of the sizes to measure, 1 to 28 as `gen msm` allows (repeatable) [default: 16, 18, 20]
    #[arg(long = "log-n", value_name = "K", value_parser = clap::value_parser!(u32).range(1..=28))]
    pub log_n: Vec<u32>,

    /// Timed repetitions per contender after a warm-up; the median is reported
    #[arg(
        long,
        default_value_t = 3,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000)
    )]
    pub reps: usize,

    /// Smoke run: n = 2^10, one repetition
    #[arg(long)]
    pub quick: bool,

    /// Print one JSON object instead of the markdown report: machine, date, reps, rows
    /// (seconds per contender, us/pt/core, peer / ws ratios) and precomputed
    #[arg(long)]
    pub json: bool,
}

fn pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())
}

/// Builds the gnark-crypto program into target/ once; None when Go is unavailable.
fn gnark_binary() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("gnark");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/gnark-msm");
    if out.exists() {
        return Some(out);
    }
    let ok = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(&dir)
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(out)
}

fn gnark(bin: &Path, n: usize, threads: usize, reps: usize, skewed: bool) -> Option<f64> {
    let out = Command::new(bin)
        .args([
            "--n",
            &n.to_string(),
            "--threads",
            &threads.to_string(),
            "--reps",
            &reps.to_string(),
            "--scalars",
            if skewed { "skewed" } else { "uniform" },
        ])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v["secs_median"].as_f64()
}

struct Row {
    n: usize,
    kind: &'static str,
    threads: usize,
    ws: f64,
    ark: f64,
    gnark: Option<f64>,
}

fn measure(
    points: &[Affine],
    scalars: &[Scalar],
    threads: usize,
    reps: usize,
) -> Result<(f64, f64), String> {
    let ap: Vec<G1Affine> = points.iter().map(affine_to_ark).collect();
    let asc: Vec<ArkFr> = scalars
        .iter()
        .map(|s| ArkFr::from_le_bytes_mod_order(&s.to_bytes_le()))
        .collect();
    let pool = pool(threads)?;
    let (mut ws, mut ark) = (vec![], vec![]);
    for rep in 0..=reps {
        let t = Instant::now();
        let a = pool
            .install(|| msm_with(points, scalars, Lanes::Auto, cpu()))
            .map_err(|e| e.to_string())?;
        let a_secs = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let b = pool
            .install(|| G1Projective::msm(&ap, &asc))
            .map_err(|e| e.to_string())?;
        let b_secs = t.elapsed().as_secs_f64();
        if jacobian_to_ark(&a) != b {
            return Err("wirespeed and arkworks disagree".into());
        }
        if rep > 0 {
            ws.push(a_secs);
            ark.push(b_secs);
        }
    }
    Ok((median(ws), median(ark)))
}

/// One precomputed-table row: n, K, init seconds, table bytes, plain and precomputed seconds.
type PreRow = (usize, usize, f64, usize, f64, f64);

/// The report as one JSON object: the same figures as the markdown tables (gnark-crypto's
/// null where Go is not installed).
fn report_json(m: &Machine, reps: usize, rows: &[Row], pre_rows: &[PreRow]) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "n": r.n,
                "scalars": r.kind,
                "threads": r.threads,
                "wirespeed_secs": r.ws,
                "us_per_point_per_core": r.ws * 1e6 * r.threads as f64 / r.n as f64,
                "arkworks_secs": r.ark,
                "gnark_secs": r.gnark,
                "ark_over_ws": r.ark / r.ws,
                "gnark_over_ws": r.gnark.map(|g| g / r.ws),
            })
        })
        .collect();
    let pre: Vec<serde_json::Value> = pre_rows
        .iter()
        .map(|&(n, k, init, bytes, plain, fixed)| {
            serde_json::json!({
                "n": n,
                "groups": k,
                "threads": 2,
                "init_secs": init,
                "table_bytes": bytes,
                "plain_secs": plain,
                "precomputed_secs": fixed,
                "speedup": plain / fixed,
            })
        })
        .collect();
    serde_json::json!({
        "bench": "msm",
        "machine": m.summary(),
        "date": utc_now(),
        "reps": reps,
        "rows": rows,
        "precomputed": pre,
    })
}

/// Runs the benchmark and prints a markdown report (one JSON object with `--json`).
pub fn run(args: &BenchArgs) -> Result<(), String> {
    let (logs, reps) = if args.quick {
        (vec![10], 1)
    } else if args.log_n.is_empty() {
        (vec![16, 18, 20], args.reps.max(1))
    } else {
        (args.log_n.clone(), args.reps.max(1))
    };
    let gbin = gnark_binary();
    let mut rows = vec![];
    for &k in &logs {
        let n = 1usize << k;
        eprintln!("msm: n = 2^{k}: generating inputs");
        let points = gen::points(n, k as u64);
        for (kind, scalars) in [
            ("uniform", gen::scalars(n, 100 + k as u64)),
            ("skewed", gen::skewed_scalars(n, 200 + k as u64)),
        ] {
            for threads in [1, 2] {
                eprintln!("msm: n = 2^{k}, {kind}, {threads} thread(s)");
                let (ws, ark) = measure(&points, &scalars, threads, reps)?;
                let g = gbin
                    .as_deref()
                    .and_then(|b| gnark(b, n, threads, reps, kind == "skewed"));
                rows.push(Row {
                    n,
                    kind,
                    threads,
                    ws,
                    ark,
                    gnark: g,
                });
            }
        }
    }
    // Repeated MSMs on the same points with a precomputed table (2 threads).
    let mut pre_rows = vec![];
    for &k in &logs {
        let n = 1usize << k;
        let points = gen::points(n, k as u64);
        let scalars = gen::scalars(n, 300 + k as u64);
        let pool = pool(2)?;
        for groups in [2usize, 4] {
            eprintln!("msm: n = 2^{k}, precomputed K = {groups}");
            let t = Instant::now();
            let pre = pool.install(|| {
                wirespeed_msm::Precomputed::new_with(&points, groups, Lanes::Auto, cpu())
            });
            let init = t.elapsed().as_secs_f64();
            let (mut plain, mut fixed) = (vec![], vec![]);
            for rep in 0..=reps {
                let t = Instant::now();
                let a = pool
                    .install(|| msm_with(&points, &scalars, Lanes::Auto, cpu()))
                    .map_err(|e| e.to_string())?;
                let a_secs = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let b = pool
                    .install(|| pre.msm(&scalars))
                    .map_err(|e| e.to_string())?;
                let b_secs = t.elapsed().as_secs_f64();
                if a != b {
                    return Err("precomputed MSM disagrees".into());
                }
                if rep > 0 {
                    plain.push(a_secs);
                    fixed.push(b_secs);
                }
            }
            pre_rows.push((
                n,
                groups,
                init,
                pre.table_bytes(),
                median(plain),
                median(fixed),
            ));
        }
    }
    let m = Machine::detect();
    if args.json {
        println!("{}", report_json(&m, reps, &rows, &pre_rows));
        return Ok(());
    }
    println!("## BLS12-377 G1 MSM: wirespeed and peers\n");
    println!("- Machine: {}\n- Date: {}", m.summary(), utc_now());
    println!("- Median of {reps} runs after a warm-up; wirespeed and arkworks on the same inputs (checked equal); gnark-crypto on its own inputs of the same distribution");
    println!("- us/pt/core = seconds x threads / n\n");
    println!("| n | scalars | threads | wirespeed s | us/pt/core | arkworks s | gnark-crypto s | ark / ws | gnark / ws |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        let g = r.gnark.map_or("n/a".to_string(), |g| format!("{g:.3}"));
        let gr = r
            .gnark
            .map_or("n/a".to_string(), |g| format!("{:.2}", g / r.ws));
        println!(
            "| 2^{} | {} | {} | {:.3} | {:.2} | {:.3} | {} | {:.2} | {} |",
            r.n.trailing_zeros(),
            r.kind,
            r.threads,
            r.ws,
            r.ws * 1e6 * r.threads as f64 / r.n as f64,
            r.ark,
            g,
            r.ark / r.ws,
            gr
        );
    }
    println!("\nRepeated MSMs on the same points, 2 threads, uniform scalars: plain `msm` against `Precomputed::msm` (table built once)\n");
    println!("| n | K | init s | table MB | plain s | precomputed s | speed-up |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (n, k, init, bytes, plain, fixed) in pre_rows {
        println!(
            "| 2^{} | {k} | {init:.2} | {:.0} | {plain:.3} | {fixed:.3} | {:.2} |",
            n.trailing_zeros(),
            bytes as f64 / 1e6,
            plain / fixed
        );
    }
    Ok(())
}

//! `wirespeed bench ed25519`: wirespeed's Ed25519 verification beside ed25519-dalek,
//! ed25519-zebra, ring and OpenSSL, on the same generated data in the same run.
//!
//! For every (signature count, message length, thread count) the harness builds one rayon
//! pool with that many threads and times each contender on the same all-valid records
//! (`sigdata::gen::generate`): one untimed warm-up pass, then `reps` measured passes, and
//! the median is reported. Per-item peers are parallelized with `par_iter` over the items
//! in that pool; dalek's `verify_batch` gets batches of 64 with `par_iter` over the
//! batches; wirespeed's `verify_many` runs inside the pool and uses it. Every pass must
//! accept every signature, or the run fails: a contender that rejects valid signatures
//! would otherwise look fast for the wrong reason.
//!
//! Keys arrive as bytes (as in a transaction stream), so each contender parses its key
//! inside the timed loop; dalek is also shown with keys parsed beforehand, labelled so.
//!
//! Single-signature latency (p50, p99) is measured on one thread with an HDR histogram,
//! one call per sample.
//!
//! With `--narya DIR` (a checkout of Narya, a Go verifier; see [`narya`]) the same
//! records are also timed out of process by the Go program in bench/narya, after the
//! in-process contenders of each group; its verdicts must equal wirespeed's record by
//! record or the run fails.

mod contenders;
pub mod narya;
mod report;
pub mod variants;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use wirespeed_ed25519::{verify_many_with, Item, Lanes, Mode};
use wirespeed_engine::backend::cpu;
use wirespeed_sigdata::{gen, Record};

use crate::machine::{self, Machine};

use contenders::dalek_key;
pub use contenders::{Contender, DALEK_BATCH};
pub use report::{render_json, render_markdown};

/// Options of `wirespeed bench ed25519`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Smoke run: 1,000 signatures, 128-byte messages, 2 reps, 500 latency samples.
    #[arg(long)]
    pub quick: bool,
    /// Measured passes per timing after one warm-up pass; the median is reported
    /// [default: 5, or 2 with --quick].
    #[arg(long, value_name = "N")]
    pub reps: Option<usize>,
    /// Print the results as JSON instead of the markdown table.
    #[arg(long)]
    pub json: bool,
    /// Also write the markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Signature counts to time, comma-separated [default: 1000,20000].
    #[arg(long, value_name = "N,..", value_delimiter = ',')]
    pub counts: Vec<usize>,
    /// Message lengths in bytes, comma-separated [default: 128,1232].
    #[arg(long, value_name = "BYTES,..", value_delimiter = ',')]
    pub msg_lens: Vec<usize>,
    /// Thread counts (one rayon pool each), comma-separated [default: 1,2].
    #[arg(long, value_name = "N,..", value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// Single calls timed per contender for the latency percentiles
    /// [default: 3000, or 500 with --quick].
    #[arg(long, value_name = "N")]
    pub latency_samples: Option<usize>,
    /// Seed of the generated signatures.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Also time Narya (Go, github.com/Overclock-Validator/narya-ed25519) built from this
    /// checkout, out of process on the same records [default: $WIRESPEED_NARYA_SRC; not
    /// run when neither is set].
    #[arg(long, value_name = "DIR")]
    pub narya: Option<PathBuf>,
}

/// What one run measures (the resolved [`BenchArgs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Signature counts.
    pub counts: Vec<usize>,
    /// Message lengths in bytes.
    pub msg_lens: Vec<usize>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Measured passes per timing.
    pub reps: usize,
    /// Single calls per contender and message length for the latency percentiles.
    pub latency_samples: usize,
    /// Generator seed.
    pub seed: u64,
    /// The Narya checkout to build and time (None: Narya is not run).
    pub narya: Option<PathBuf>,
}

impl Config {
    /// Applies defaults (and `--quick`) and rejects zero counts, lengths or threads.
    pub fn from_args(args: &BenchArgs) -> Result<Config, String> {
        let or = |v: &[usize], full: &[usize], quick: &[usize]| {
            if !v.is_empty() {
                v.to_vec()
            } else if args.quick {
                quick.to_vec()
            } else {
                full.to_vec()
            }
        };
        let cfg = Config {
            counts: or(&args.counts, &[1_000, 20_000], &[1_000]),
            msg_lens: or(&args.msg_lens, &[128, 1232], &[128]),
            threads: or(&args.threads, &[1, 2], &[1, 2]),
            reps: args.reps.unwrap_or(if args.quick { 2 } else { 5 }),
            latency_samples: args
                .latency_samples
                .unwrap_or(if args.quick { 500 } else { 3_000 }),
            seed: args.seed,
            narya: args
                .narya
                .clone()
                .or_else(|| std::env::var_os(narya::ENV).map(PathBuf::from))
                .filter(|p| !p.as_os_str().is_empty()),
        };
        if cfg.counts.contains(&0) || cfg.threads.contains(&0) {
            return Err("signature counts and thread counts must be at least 1".into());
        }
        if cfg.reps == 0 {
            return Err("--reps must be at least 1".into());
        }
        Ok(cfg)
    }
}

/// Records borrowed as [`Item`]s, plus dalek keys parsed ahead for the pre-parsed variants.
#[derive(Debug)]
pub struct Dataset<'a> {
    /// The signatures, as wirespeed's API takes them.
    pub items: Vec<Item<'a>>,
    /// `VerifyingKey::from_bytes` of each key (`None` where it does not parse).
    pub dalek_keys: Vec<Option<ed25519_dalek::VerifyingKey>>,
}

impl<'a> Dataset<'a> {
    /// Borrows the records and pre-parses the dalek keys.
    pub fn new(records: &'a [Record]) -> Dataset<'a> {
        let items: Vec<Item<'a>> = wirespeed_sigdata::items(records);
        let dalek_keys = items.iter().map(|it| dalek_key(it.pk)).collect();
        Dataset { items, dalek_keys }
    }

    /// The number of signatures.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are no signatures.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// One throughput measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct ThroughputRow {
    /// Signatures per pass.
    pub count: usize,
    /// Message length in bytes.
    pub msg_len: usize,
    /// Threads in the pool.
    pub threads: usize,
    /// Who was timed.
    pub contender: Contender,
    /// Median seconds per pass.
    pub median_s: f64,
}

impl ThroughputRow {
    /// Verifications per second, all threads together.
    pub fn per_s(&self) -> f64 {
        self.count as f64 / self.median_s
    }

    /// Verifications per second per thread (one thread per core).
    pub fn per_s_per_core(&self) -> f64 {
        self.per_s() / self.threads as f64
    }
}

/// One latency measurement (one thread, one signature per call).
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyRow {
    /// Message length in bytes.
    pub msg_len: usize,
    /// Who was timed.
    pub contender: Contender,
    /// Calls recorded.
    pub samples: u64,
    /// Median, nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile, nanoseconds.
    pub p99_ns: u64,
}

/// Everything one run measured, with the machine it ran on.
#[derive(Clone, Debug)]
pub struct Report {
    /// The machine.
    pub machine: Machine,
    /// When (UTC).
    pub date: String,
    /// What was measured.
    pub config: Config,
    /// The backend `verify_many` resolved `Auto` to on this machine.
    pub auto_backend: &'static str,
    /// `OpenSSL_version` of the linked library.
    pub openssl_version: &'static str,
    /// The command line that reproduces the run.
    pub command: String,
    /// Throughput, grouped by (count, msg_len, threads) in the order measured.
    pub throughput: Vec<ThroughputRow>,
    /// Latency, by message length.
    pub latency: Vec<LatencyRow>,
    /// `verify_many` per lane backend, per mode and with the key cache, on cold and
    /// Zipf-keyed traffic (the largest count, the first message length).
    pub variants: Vec<variants::VariantRow>,
    /// Narya's figures (None: not run).
    pub narya: Option<NaryaReport>,
}

/// Narya, timed out of process on the same records (see [`narya`]).
#[derive(Clone, Debug)]
pub struct NaryaReport {
    /// The checkout it was built from.
    pub source: PathBuf,
    /// The module version bench/narya/go.mod requires (replaced by `source`).
    pub version: String,
    /// Narya's backend (`r51`).
    pub backend: String,
    /// The Go toolchain.
    pub go_version: String,
    /// `VerifyBatchStrict` in chunks of [`narya::CHUNK`], in the order measured.
    pub throughput: Vec<NaryaThroughputRow>,
    /// `VerifyStrict`, one signature per call, one thread.
    pub latency: Vec<NaryaLatencyRow>,
}

/// One Narya throughput measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct NaryaThroughputRow {
    /// Signatures per pass.
    pub count: usize,
    /// Message length in bytes.
    pub msg_len: usize,
    /// Goroutines (and `GOMAXPROCS`).
    pub threads: usize,
    /// Median seconds per pass.
    pub median_s: f64,
    /// Signatures Narya accepted (equal to wirespeed's count, or the run fails).
    pub valid: usize,
}

impl NaryaThroughputRow {
    /// Verifications per second, all threads together.
    pub fn per_s(&self) -> f64 {
        self.count as f64 / self.median_s
    }

    /// Verifications per second per thread.
    pub fn per_s_per_core(&self) -> f64 {
        self.per_s() / self.threads as f64
    }
}

/// One Narya latency measurement (one goroutine, `GOMAXPROCS=1`).
#[derive(Clone, Debug, PartialEq)]
pub struct NaryaLatencyRow {
    /// Message length in bytes.
    pub msg_len: usize,
    /// Calls timed.
    pub samples: usize,
    /// Median, nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile, nanoseconds.
    pub p99_ns: u64,
}

/// Times one contender: a warm-up pass, then `reps` passes; returns the median. Fails if
/// any pass accepts fewer (or more) signatures than the dataset holds.
fn time_throughput(
    c: Contender,
    data: &Dataset<'_>,
    pool: &rayon::ThreadPool,
    reps: usize,
) -> Result<f64, String> {
    let n = data.len();
    let check = |valid: usize| {
        if valid == n {
            Ok(())
        } else {
            Err(format!(
                "{}: accepted {valid} of {n} valid signatures",
                c.label()
            ))
        }
    };
    check(pool.install(|| c.count_valid(data)))?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        let valid = pool.install(|| std::hint::black_box(c.count_valid(data)));
        times.push(t.elapsed());
        check(valid)?;
    }
    Ok(median(&mut times).as_secs_f64())
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    let n = times.len();
    if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    }
}

/// Times `samples` single calls on the current thread after a short warm-up, cycling
/// through the dataset's signatures.
fn time_latency(c: Contender, data: &Dataset<'_>, samples: usize) -> Result<LatencyRow, String> {
    let items = &data.items;
    if items.is_empty() {
        return Err("latency needs at least one signature".into());
    }
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| format!("histogram: {e}"))?;
    let warm = samples.clamp(1, 200);
    for it in items.iter().cycle().take(warm) {
        std::hint::black_box(c.verify_one(std::hint::black_box(it)));
    }
    for it in items.iter().cycle().take(samples) {
        let t = Instant::now();
        let ok = std::hint::black_box(c.verify_one(std::hint::black_box(it)));
        let ns = t.elapsed().as_nanos().clamp(1, u128::from(u64::MAX)) as u64;
        if !ok {
            return Err(format!("{}: rejected a valid signature", c.label()));
        }
        hist.saturating_record(ns);
    }
    Ok(LatencyRow {
        msg_len: items[0].msg.len(),
        contender: c,
        samples: hist.len(),
        p50_ns: hist.value_at_quantile(0.50),
        p99_ns: hist.value_at_quantile(0.99),
    })
}

/// Runs every measurement of `cfg`, reporting progress on stderr when `progress` is set.
pub fn measure(cfg: &Config, command: &str, progress: bool) -> Result<Report, String> {
    let pools = cfg
        .threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .thread_name(|i| format!("bench-ed25519-{i}"))
                .build()
                .map(|p| (t, p))
                .map_err(|e| format!("thread pool of {t}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let max_count = cfg.counts.iter().copied().max().unwrap_or(0);
    let mut throughput = Vec::new();
    let mut latency = Vec::new();
    let naryabin = match &cfg.narya {
        Some(src) => {
            if progress {
                eprintln!(
                    "ed25519: building Narya's harness against {}",
                    src.display()
                );
            }
            Some(narya::Narya::build(src)?)
        }
        None => None,
    };
    let mut narya_report = naryabin.as_ref().map(|nb| NaryaReport {
        source: nb.source.clone(),
        version: String::new(),
        backend: String::new(),
        go_version: String::new(),
        throughput: Vec::new(),
        latency: Vec::new(),
    });
    for &msg_len in &cfg.msg_lens {
        let records = gen::generate(
            max_count.max(cfg.latency_samples.min(4096)).max(1),
            msg_len,
            cfg.seed,
            0.0,
        );
        let narya_file = match &naryabin {
            Some(_) => {
                let path = std::env::temp_dir().join(format!(
                    "wirespeed-narya-{}-{msg_len}.bin",
                    std::process::id()
                ));
                narya::write_records(&path, &records)?;
                Some(TempFile(path))
            }
            None => None,
        };
        for &count in &cfg.counts {
            let data = Dataset::new(&records[..count]);
            // wirespeed's verdicts, for the comparison with Narya's (not timed).
            let ours: Vec<bool> = match &naryabin {
                Some(_) => verify_many_with(&data.items, Mode::Strict, Lanes::Auto, cpu())
                    .iter()
                    .map(Result::is_ok)
                    .collect(),
                None => Vec::new(),
            };
            for (threads, pool) in &pools {
                if progress {
                    eprintln!(
                        "ed25519: {count} signatures, {msg_len}-byte messages, {threads} thread(s)"
                    );
                }
                for c in Contender::ALL {
                    let median_s = time_throughput(c, &data, pool, cfg.reps)?;
                    throughput.push(ThroughputRow {
                        count,
                        msg_len,
                        threads: *threads,
                        contender: c,
                        median_s,
                    });
                }
                if let (Some(nb), Some(file), Some(nr)) =
                    (&naryabin, &narya_file, &mut narya_report)
                {
                    let run = nb.run(
                        &file.0,
                        count,
                        &[
                            "--mode",
                            "many",
                            "--threads",
                            &threads.to_string(),
                            "--chunk",
                            &narya::CHUNK.to_string(),
                            "--reps",
                            &cfg.reps.to_string(),
                        ],
                    )?;
                    let what = format!("{count} x {msg_len} B, {threads} thread(s)");
                    narya::check_verdicts(&what, &ours, &run)?;
                    nr.version.clone_from(&run.version);
                    nr.backend.clone_from(&run.backend);
                    nr.go_version.clone_from(&run.go_version);
                    nr.throughput.push(NaryaThroughputRow {
                        count,
                        msg_len,
                        threads: *threads,
                        median_s: run.secs_median,
                        valid: run.valid,
                    });
                }
            }
        }
        if cfg.latency_samples > 0 {
            if progress {
                eprintln!("ed25519: latency, {msg_len}-byte messages, 1 thread");
            }
            let data = Dataset::new(&records);
            for c in Contender::LATENCY {
                latency.push(time_latency(c, &data, cfg.latency_samples)?);
            }
            if let (Some(nb), Some(file), Some(nr)) = (&naryabin, &narya_file, &mut narya_report) {
                let run = nb.run(
                    &file.0,
                    records.len(),
                    &[
                        "--mode",
                        "single",
                        "--reps",
                        "1",
                        "--samples",
                        &cfg.latency_samples.to_string(),
                    ],
                )?;
                let ours: Vec<bool> =
                    verify_many_with(&data.items, Mode::Strict, Lanes::Auto, cpu())
                        .iter()
                        .map(Result::is_ok)
                        .collect();
                narya::check_verdicts(&format!("single, {msg_len} B"), &ours, &run)?;
                let ns = |us: Option<f64>| us.map_or(0, |us| (us * 1e3).round() as u64);
                nr.latency.push(NaryaLatencyRow {
                    msg_len,
                    samples: cfg.latency_samples,
                    p50_ns: ns(run.p50_us),
                    p99_ns: ns(run.p99_us),
                });
            }
        }
    }
    let variants = match (cfg.counts.iter().max(), cfg.msg_lens.first()) {
        (Some(&count), Some(&msg_len)) => {
            if progress {
                eprintln!("ed25519: variants (backends, modes, key cache), {count} signatures");
            }
            variants::measure(count, msg_len, &cfg.threads, cfg.reps, cfg.seed)?
        }
        _ => vec![],
    };
    Ok(Report {
        machine: Machine::detect(),
        date: machine::utc_now(),
        config: cfg.clone(),
        auto_backend: Lanes::Auto.resolve_on(cpu()).name(),
        openssl_version: openssl::version::version(),
        command: command.to_string(),
        throughput,
        latency,
        variants,
        narya: narya_report,
    })
}

/// A file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Default for BenchArgs {
    /// The full run, as `wirespeed bench ed25519` with no flags.
    fn default() -> BenchArgs {
        BenchArgs {
            quick: false,
            reps: None,
            json: false,
            out: None,
            counts: Vec::new(),
            msg_lens: Vec::new(),
            threads: Vec::new(),
            latency_samples: None,
            seed: DEFAULT_SEED,
            narya: None,
        }
    }
}

/// The generator seed when `--seed` is not given.
pub const DEFAULT_SEED: u64 = 1;

impl BenchArgs {
    /// The command line that reproduces these options.
    pub fn command_line(&self) -> String {
        let list = |v: &[usize]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut s = String::from("wirespeed bench ed25519");
        if self.quick {
            s += " --quick";
        }
        if let Some(r) = self.reps {
            s += &format!(" --reps {r}");
        }
        if !self.counts.is_empty() {
            s += &format!(" --counts {}", list(&self.counts));
        }
        if !self.msg_lens.is_empty() {
            s += &format!(" --msg-lens {}", list(&self.msg_lens));
        }
        if !self.threads.is_empty() {
            s += &format!(" --threads {}", list(&self.threads));
        }
        if let Some(n) = self.latency_samples {
            s += &format!(" --latency-samples {n}");
        }
        if self.seed != DEFAULT_SEED {
            s += &format!(" --seed {}", self.seed);
        }
        if let Some(dir) = &self.narya {
            s += &format!(" --narya {}", dir.display());
        }
        s
    }
}

/// Runs the benchmark: prints the markdown table (or JSON with `--json`) on stdout and
/// writes the markdown to `--out` when given.
pub fn run(args: &BenchArgs) -> Result<(), String> {
    let cfg = Config::from_args(args)?;
    let report = measure(&cfg, &args.command_line(), true)?;
    let md = render_markdown(&report);
    if let Some(path) = &args.out {
        std::fs::write(path, &md).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&render_json(&report))
            .map_err(|e| format!("JSON: {e}"))?;
        println!("{json}");
    } else {
        print!("{md}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_and_even() {
        let ms = Duration::from_millis;
        assert_eq!(median(&mut [ms(3), ms(1), ms(2)]), ms(2));
        assert_eq!(
            median(&mut [ms(4), ms(1), ms(2), ms(3)]),
            Duration::from_micros(2500)
        );
    }

    #[test]
    fn quick_config() {
        let cfg = Config::from_args(&BenchArgs {
            quick: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(cfg.counts, [1_000]);
        assert_eq!(cfg.msg_lens, [128]);
        assert_eq!(cfg.threads, [1, 2]);
        assert_eq!(cfg.reps, 2);
        let full = Config::from_args(&BenchArgs::default()).unwrap();
        assert_eq!(full.counts, [1_000, 20_000]);
        assert_eq!(full.msg_lens, [128, 1232]);
        assert_eq!(full.reps, 5);
    }

    #[test]
    fn zero_reps_rejected() {
        let args = BenchArgs {
            reps: Some(0),
            ..Default::default()
        };
        assert!(Config::from_args(&args).is_err());
    }
}

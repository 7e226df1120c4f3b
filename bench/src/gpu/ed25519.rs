//! The Ed25519 verification section of `wirespeed bench gpu`.
//!
//! Checks, GPU verdicts against the CPU's (verdict and rejection reason), in every mode:
//! batches of 1, 255, 4097 and one large batch spanning several chunks and both streams,
//! each mixing honest signatures (messages of 0 bytes to 4 KiB), corrupted ones and the
//! edge cases of the rules: small-order A and R in every encoding (negative zero
//! included), y >= p, S >= L, wrong lengths, points off the curve, and mixed-order keys
//! on which the cofactored and cofactorless equations disagree. Then the streaming mode:
//! every verdict once, in order, with the caller's id.
//!
//! Benchmarks: batch throughput including the transfers (CPU beside it), the streaming
//! mode's round trip for one signature, and its latency under an open-loop load.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use wirespeed_ed25519::{Item, Mode, VerifyError};
use wirespeed_sigdata::Record;

use super::ed25519_inputs::{edge_cases, honest_records, mixed, random_records, tile, BLOCK};
use super::{median, tally, time_runs, Bench, Check, Options, Report};
use wirespeed_engine::backend::cpu;
use wirespeed_engine::ed25519::{verify_many, Stream, StreamConfig};
use wirespeed_engine::{Backend, GpuError};

/// Problem sizes of one run.
struct Sizes {
    /// The large mixed batch (several chunks).
    large: usize,
    /// Distinct honest/corrupted records behind the mixed batches.
    pool: usize,
    /// Batches of the throughput benchmark.
    bench: Vec<usize>,
    /// The CPU throughput figure's batch.
    cpu_bench: usize,
    /// Signatures through the streaming check.
    stream: usize,
    /// Seconds of offered load per rate in the latency benchmark.
    load_secs: f64,
}

fn sizes(opts: &Options) -> Sizes {
    if opts.quick {
        Sizes {
            large: 1 << 16,
            pool: 1 << 16,
            bench: vec![1 << 16],
            cpu_bench: 1 << 16,
            stream: 4096,
            load_secs: 0.3,
        }
    } else {
        Sizes {
            large: 1 << 20,
            pool: 1 << 20,
            bench: vec![1 << 20, 1 << 22],
            cpu_bench: 1 << 18,
            stream: 20_000,
            load_secs: 2.0,
        }
    }
}

/// Checks, then benchmarks.
pub(super) fn run(
    opts: &Options,
    rng: &mut ChaCha20Rng,
    report: &mut Report,
) -> Result<(), GpuError> {
    let sz = sizes(opts);
    let edges = edge_cases(rng);
    let pool = random_records(sz.pool, rng.gen());
    for mode in Mode::ALL {
        let singles = mixed(&edges, &pool, 8, rng.gen_range(0..pool.len()));
        let mut c = Check {
            name: format!("ed25519 {mode}: single items x8"),
            cases: 0,
            mismatches: 0,
            detail: None,
        };
        for it in &singles {
            let one = compare("", std::slice::from_ref(it), mode);
            c.cases += one.cases;
            c.mismatches += one.mismatches;
            if c.detail.is_none() {
                c.detail = one.detail;
            }
        }
        report.checks.push(c);
        for n in [255, 4097, sz.large] {
            let items = mixed(&edges, &pool, n, rng.gen_range(0..pool.len()));
            report.checks.push(compare(
                &format!("ed25519 {mode}: mixed batch n={n}"),
                &items,
                mode,
            ));
        }
    }
    let items = mixed(&edges, &pool, sz.stream, rng.gen_range(0..pool.len()));
    report
        .checks
        .push(stream_check(Backend::Gpu, &items, Mode::Zip215));
    drop(pool);

    // Benchmarks: honest signatures of 128-byte messages, strict mode.
    let recs = honest_records(*sz.bench.iter().min().unwrap_or(&1), 128, rng.gen());
    let cpu_items = tile(&recs, sz.cpu_bench);
    let _ = cpu_verify_many(&cpu_items, Mode::Strict);
    let cpu: Vec<f64> = time_runs(opts.runs, || {
        let _ = cpu_verify_many(&cpu_items, Mode::Strict);
        Ok::<(), GpuError>(())
    })?
    .iter()
    .map(|s| sz.cpu_bench as f64 / s)
    .collect();
    drop(cpu_items);
    let cpu_median = median(&cpu);
    let mut batch_rate = 0f64;
    for &n in &sz.bench {
        let items = tile(&recs, n);
        // Warm-up, and its verdicts against the CPU's (all honest signatures).
        report.checks.push(compare(
            &format!("ed25519 strict: honest benchmark batch n={n}"),
            &items,
            Mode::Strict,
        ));
        // The largest batch gets at most three runs (it is 4M signatures each).
        let reps = if n == *sz.bench.iter().max().unwrap_or(&n) && sz.bench.len() > 1 {
            opts.runs.min(3)
        } else {
            opts.runs
        };
        let runs: Vec<f64> = time_runs(reps, || {
            verify_many(Backend::Gpu, &items, Mode::Strict).map(|_| ())
        })?
        .iter()
        .map(|s| n as f64 / s)
        .collect();
        report.benches.push(Bench {
            name: format!(
                "ed25519 strict verify, 128-byte msgs, incl. transfers (CPU: {} sigs)",
                sz.cpu_bench
            ),
            size: n,
            unit: "verifies/s".into(),
            median: median(&runs),
            runs,
            cpu_median: Some(cpu_median),
        });
        batch_rate = batch_rate.max(median(&report.benches[report.benches.len() - 1].runs));
    }

    let rt = round_trips(Backend::Gpu, &recs, 50)?;
    report.benches.push(Bench {
        name: "ed25519 stream strict: single-signature round trip, unloaded".into(),
        size: 1,
        unit: "us".into(),
        median: median(&rt),
        runs: rt,
        cpu_median: None,
    });
    let mut loaded = Check {
        name: "ed25519 stream strict: verdicts under load".into(),
        cases: 0,
        mismatches: 0,
        detail: None,
    };
    for (rate, label) in [(100_000.0, "100k"), (1_000_000.0, "1M")] {
        if batch_rate < 1.5 * rate {
            // The stream could not keep up even in full batches: the backlog would only
            // grow for the whole run. Say so instead of measuring it.
            report.benches.push(Bench {
                name: format!(
                    "ed25519 stream strict, {label} sigs/s offered: not run (batch throughput under 1.5x the load)"
                ),
                size: 0,
                unit: "verifies/s".into(),
                median: batch_rate,
                runs: vec![batch_rate],
                cpu_median: None,
            });
            continue;
        }
        let l = stream_load(Backend::Gpu, &recs, rate, sz.load_secs)?;
        loaded.cases += l.verdicts;
        loaded.mismatches += l.rejected + l.submitted.abs_diff(l.verdicts);
        if loaded.detail.is_none() {
            loaded.detail = l.problem(label);
        }
        let overloaded = if l.overloaded {
            format!(", producer stopped after {} (overloaded)", l.submitted)
        } else {
            String::new()
        };
        let name = |what: &str| {
            format!(
                "ed25519 stream strict, {label} sigs/s offered for {}s{overloaded}: {what}",
                sz.load_secs
            )
        };
        for (what, q) in [("p50 latency", 0.50), ("p99 latency", 0.99)] {
            let v = percentile(&l.latency_us, q);
            report.benches.push(Bench {
                name: name(what),
                size: l.submitted,
                unit: "us".into(),
                median: v,
                runs: vec![v],
                cpu_median: None,
            });
        }
        report.benches.push(Bench {
            name: name("verdict rate"),
            size: l.submitted,
            unit: "verdicts/s".into(),
            median: l.achieved,
            runs: vec![l.achieved],
            cpu_median: None,
        });
    }
    report.checks.push(loaded);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------

/// One item in a mismatch report.
fn describe(it: &Item<'_>) -> String {
    let msg = if it.msg.len() <= 32 {
        hex::encode(it.msg)
    } else {
        format!("{} bytes", it.msg.len())
    };
    format!(
        "msg {msg}, sig {}, pk {}",
        hex::encode(it.sig),
        hex::encode(it.pk)
    )
}

/// Counts the differences between two verdict lists; the first one is described.
fn diff(
    items: &[Item<'_>],
    got: &[Result<(), VerifyError>],
    want: &[Result<(), VerifyError>],
) -> (usize, Option<String>) {
    tally(got, want, "verdicts", |i, g, w| {
        format!("item {i}: GPU {g:?}, CPU {w:?} ({})", describe(&items[i]))
    })
}

/// The CPU's verdicts on a batch: the widest lanes of the features the engine reads.
fn cpu_verify_many(items: &[Item<'_>], mode: Mode) -> Vec<Result<(), VerifyError>> {
    wirespeed_ed25519::verify_many_with(items, mode, wirespeed_ed25519::Lanes::Auto, cpu())
}

/// The GPU's verdicts on a batch against the CPU's.
fn compare(name: &str, items: &[Item<'_>], mode: Mode) -> Check {
    let want = cpu_verify_many(items, mode);
    let (mismatches, detail) = match verify_many(Backend::Gpu, items, mode) {
        Ok(got) => diff(items, &got, &want),
        Err(e) => (0, Some(format!("GPU error: {e}"))),
    };
    Check {
        name: name.to_string(),
        cases: items.len(),
        mismatches,
        detail,
    }
}

/// Ids given to the stream: not the positions, so that a mix-up shows.
fn stream_id(i: usize) -> u64 {
    1_000_000 + 3 * i as u64
}

/// The streaming mode on the GPU: half the signatures in one burst (full micro-batches),
/// the rest in small groups with pauses (batches closed by the deadline); every verdict
/// must arrive once, in order, with its id, equal to `verify`.
fn stream_check(backend: Backend, items: &[Item<'_>], mode: Mode) -> Check {
    let mut c = Check {
        name: format!("ed25519 {mode}: stream of {} in order", items.len()),
        cases: items.len(),
        mismatches: 0,
        detail: None,
    };
    let want: Vec<Result<(), VerifyError>> = items
        .par_iter()
        .map(|it| wirespeed_ed25519::verify_with(it.msg, it.sig, it.pk, mode, cpu()))
        .collect();
    let cfg = StreamConfig {
        mode,
        backend,
        max_batch: 4096,
        deadline: Duration::from_millis(1),
    };
    let (s, rx) = match Stream::new(cfg) {
        Ok(x) => x,
        Err(e) => {
            c.detail = Some(format!("GPU error: {e}"));
            return c;
        }
    };
    let half = items.len() / 2;
    for (i, it) in items.iter().enumerate() {
        if s.submit(stream_id(i), it.msg, it.sig, it.pk).is_err() {
            c.detail = Some(format!("the stream stopped at submission {i}"));
            return c;
        }
        if i >= half && i % 97 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let mut got = Vec::with_capacity(items.len());
    while got.len() < items.len() {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(v) => got.push(v),
            Err(_) => break,
        }
    }
    let failures = s.gpu_failures();
    let ran = s.backend();
    s.close();
    // Anything after the last expected verdict is a duplicate.
    let extra = rx.try_iter().count();
    let mut note = |m: String| {
        c.detail.get_or_insert(m);
    };
    if ran
        != (if backend == Backend::CPU {
            "cpu"
        } else {
            "gpu"
        })
    {
        note(format!("the stream ran on the {ran}"));
    }
    if failures > 0 {
        note(format!(
            "{failures} micro-batches failed on the GPU (verified on the CPU instead)"
        ));
    }
    if got.len() < items.len() || extra > 0 {
        c.mismatches += items.len() - got.len() + extra;
        note(format!(
            "{} verdicts for {} signatures",
            got.len() + extra,
            items.len()
        ));
    }
    for (k, v) in got.iter().enumerate() {
        if v.id != stream_id(k) || v.result != want[k] || v.batch_len == 0 {
            c.mismatches += 1;
            note(format!(
                "verdict {k}: id {} {:?} (batch of {}), expected id {} {:?} ({})",
                v.id,
                v.result,
                v.batch_len,
                stream_id(k),
                want[k],
                describe(&items[k])
            ));
        }
    }
    c
}

// ---------------------------------------------------------------------------------------
// Streaming latency
// ---------------------------------------------------------------------------------------

/// The value at quantile `q` (0..=1) of sorted figures, nearest rank; NaN when empty.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Submit-to-verdict times (microseconds) of single signatures through a GPU stream that
/// closes every micro-batch at once: the floor under any streaming latency.
fn round_trips(backend: Backend, recs: &[Record], n: usize) -> Result<Vec<f64>, GpuError> {
    let cfg = StreamConfig {
        mode: Mode::Strict,
        backend,
        max_batch: 1,
        deadline: Duration::ZERO,
    };
    let (s, rx) = Stream::new(cfg)?;
    let mut out = Vec::with_capacity(n);
    let closed = || GpuError::Driver("the verification stream stopped".into());
    for i in 0..n + 5 {
        let r = &recs[i % recs.len()];
        let t = Instant::now();
        s.submit(i as u64, &r.msg, &r.sig, &r.pk)
            .map_err(|_| closed())?;
        rx.recv_timeout(Duration::from_secs(30))
            .map_err(|_| closed())?;
        // The first few load the kernel and size the buffers.
        if i >= 5 {
            out.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    s.close();
    Ok(out)
}

/// What an open-loop run measured.
struct Load {
    /// Scheduled submission to verdict, microseconds, sorted.
    latency_us: Vec<f64>,
    /// Signatures submitted.
    submitted: usize,
    /// Verdicts received.
    verdicts: usize,
    /// Honest signatures rejected.
    rejected: usize,
    /// Micro-batches the GPU failed on.
    failures: u64,
    /// Verdicts per second from the first scheduled submission to the last verdict.
    achieved: f64,
    /// The producer stopped early: over a second's worth of signatures was waiting.
    overloaded: bool,
}

impl Load {
    /// What went wrong with the verdicts, if anything. Not keeping up with the offered
    /// load is a figure, not a failure: it shows in the benchmark names instead.
    fn problem(&self, label: &str) -> Option<String> {
        let what = if self.failures > 0 {
            format!("{} micro-batches failed on the GPU", self.failures)
        } else if self.verdicts != self.submitted {
            format!(
                "{} verdicts for {} signatures",
                self.verdicts, self.submitted
            )
        } else if self.rejected > 0 {
            format!("{} honest signatures rejected", self.rejected)
        } else {
            return None;
        };
        Some(format!("{label} sigs/s: {what}"))
    }
}

/// Offers `rate` signatures per second for `secs` seconds to a GPU stream from a producer
/// thread that submits on a fixed schedule (open loop: it never waits for verdicts), and
/// measures each signature's latency from its scheduled submission time to its verdict,
/// so that a producer falling behind counts against the stream.
fn stream_load(backend: Backend, recs: &[Record], rate: f64, secs: f64) -> Result<Load, GpuError> {
    let n = ((rate * secs) as usize).max(1);
    let cfg = StreamConfig {
        mode: Mode::Strict,
        backend,
        max_batch: 1 << 16,
        deadline: Duration::from_micros(100),
    };
    let log: Arc<Mutex<Vec<(u64, Instant, bool)>>> =
        Arc::new(Mutex::new(Vec::with_capacity(n + BLOCK)));
    let count = Arc::new(AtomicUsize::new(0));
    let (sink, counter) = (log.clone(), count.clone());
    let s = Stream::with_callback(cfg, move |v| {
        let t = Instant::now();
        sink.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((v.id, t, v.result.is_ok()));
        counter.fetch_add(1, Ordering::Release);
    })?;
    let closed = || GpuError::Driver("the verification stream stopped".into());
    let wait_for = |k: usize, limit: Duration| {
        let t = Instant::now();
        while count.load(Ordering::Acquire) < k {
            if t.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    };
    // Warm-up: a burst loads the kernel and sizes the buffers for large micro-batches.
    let warm = BLOCK.min(recs.len()) * 4;
    for i in 0..warm {
        let r = &recs[i % recs.len()];
        s.submit(u64::MAX - i as u64, &r.msg, &r.sig, &r.pk)
            .map_err(|_| closed())?;
    }
    if !wait_for(warm, Duration::from_secs(60)) {
        return Err(GpuError::Driver(
            "the stream's warm-up burst did not complete in 60 s".into(),
        ));
    }
    log.lock().unwrap_or_else(|p| p.into_inner()).clear();
    count.store(0, Ordering::Release);

    let period = 1e9 / rate;
    let start = Instant::now() + Duration::from_millis(1);
    let due = |i: usize| start + Duration::from_nanos((i as f64 * period) as u64);
    let overloaded = AtomicBool::new(false);
    let backlog = rate as usize;
    let submitted = std::thread::scope(|sc| {
        sc.spawn(|| {
            for i in 0..n {
                let at = due(i);
                while Instant::now() < at {
                    std::hint::spin_loop();
                }
                if i % 1024 == 0 && i > count.load(Ordering::Acquire) + backlog {
                    overloaded.store(true, Ordering::Relaxed);
                    return i;
                }
                let r = &recs[i % recs.len()];
                if s.submit(i as u64, &r.msg, &r.sig, &r.pk).is_err() {
                    return i;
                }
            }
            n
        })
        .join()
        .unwrap_or(0)
    });
    wait_for(submitted, Duration::from_secs(60));
    let failures = s.gpu_failures();
    s.close();
    let log = std::mem::take(&mut *log.lock().unwrap_or_else(|p| p.into_inner()));
    let mut latency_us: Vec<f64> = log
        .iter()
        .map(|&(id, t, _)| t.saturating_duration_since(due(id as usize)).as_secs_f64() * 1e6)
        .collect();
    latency_us.sort_by(|a, b| a.total_cmp(b));
    let last = log.iter().map(|x| x.1).max().unwrap_or(start);
    let span = last.saturating_duration_since(start).as_secs_f64();
    Ok(Load {
        submitted,
        verdicts: log.len(),
        rejected: log.iter().filter(|x| !x.2).count(),
        failures,
        achieved: if span > 0.0 {
            log.len() as f64 / span
        } else {
            f64::NAN
        },
        overloaded: overloaded.load(Ordering::Relaxed),
        latency_us,
    })
}

#[cfg(test)]
mod tests {
    use super::super::ed25519_inputs::MSG_LENS;
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&v, 1.0), 100.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 0.5), 2.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    /// Accepted counts per mode, in Mode::ALL order.
    fn accepted(items: &[Item<'_>]) -> [usize; 4] {
        let mut out = [0; 4];
        for (k, mode) in Mode::ALL.iter().enumerate() {
            out[k] = wirespeed_ed25519::verify_many(items, *mode)
                .iter()
                .filter(|r| r.is_ok())
                .count();
        }
        out
    }

    #[test]
    fn edge_cases_separate_the_modes() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let edges = edge_cases(&mut rng);
        assert!(edges.len() > 400 && edges.len() < 1000, "{}", edges.len());
        let items = wirespeed_sigdata::items(&edges);
        let ok = accepted(&items);
        let n = items.len();
        // Every mode accepts some and rejects most; zip215 accepts the most, the strict
        // modes the fewest; cofactored and cofactorless modes disagree.
        assert!(ok.iter().all(|&k| k > 20 && k < n / 2), "{ok:?} of {n}");
        assert!(ok[1] > ok[0] && ok[1] > ok[2] && ok[2] > ok[0], "{ok:?}");
        let strict = wirespeed_ed25519::verify_many(&items, Mode::Strict);
        let cof = wirespeed_ed25519::verify_many(&items, Mode::CofactoredStrict);
        assert!(strict
            .iter()
            .zip(&cof)
            .any(|(s, c)| s.is_err() && c.is_ok()));
        // Every rejection reason shows up in zip215 or strict.
        let reasons: std::collections::HashSet<u8> = Mode::ALL
            .iter()
            .flat_map(|m| wirespeed_ed25519::verify_many(&items, *m))
            .map(wirespeed_gpu::ed25519::status_code)
            .collect();
        assert_eq!(reasons.len(), 10, "{reasons:?}");
        // Deterministic in the seed.
        assert_eq!(edge_cases(&mut ChaCha20Rng::seed_from_u64(1)), edges);
    }

    #[test]
    fn mixed_batches_hold_edges_and_random_records() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let edges = edge_cases(&mut rng);
        let pool = random_records(3 * BLOCK + 5, 9);
        assert_eq!(pool.len(), 3 * BLOCK + 5);
        // Message lengths change per block.
        assert_eq!(pool[0].msg.len(), MSG_LENS[0]);
        assert_eq!(pool[BLOCK].msg.len(), MSG_LENS[1]);
        assert_eq!(pool[3 * BLOCK].msg.len(), MSG_LENS[3]);
        let items = mixed(&edges, &pool, 4097, 100);
        assert_eq!(items.len(), 4097);
        // All edge cases are in a batch of 4097.
        let n_edges = (0..items.len()).filter(|i| i % 4 == 1).count();
        assert!(n_edges >= edges.len(), "{n_edges} < {}", edges.len());
        let ok = accepted(&items);
        for (k, mode) in Mode::ALL.iter().enumerate() {
            // About 70% of the random records are honest, few edge cases are.
            let frac = ok[k] as f64 / items.len() as f64;
            assert!((0.45..0.75).contains(&frac), "{mode}: {frac}");
        }
        assert!(ok[1] > ok[0], "{ok:?}");
        // The honest benchmark records all verify.
        let h = honest_records(300, 128, 3);
        assert!(h.iter().all(|r| r.msg.len() == 128));
        let hi = tile(&h, 500);
        assert!(wirespeed_ed25519::verify_many(&hi, Mode::Strict)
            .iter()
            .all(|r| r.is_ok()));
    }

    #[test]
    fn verdict_diffs_name_the_first_mismatch() {
        let recs = honest_records(3, 8, 4);
        let items = wirespeed_sigdata::items(&recs);
        let want = vec![Ok(()); 3];
        let mut got = want.clone();
        assert_eq!(diff(&items, &got, &want), (0, None));
        got[1] = Err(VerifyError::EquationFailed);
        got[2] = Err(VerifyError::SmallOrderA);
        let (bad, detail) = diff(&items, &got, &want);
        assert_eq!(bad, 2);
        let d = detail.unwrap();
        assert!(
            d.starts_with("item 1: GPU Err(EquationFailed), CPU Ok(())"),
            "{d}"
        );
        assert_eq!(diff(&items, &got[..2], &want).0, 1);
    }

    #[test]
    fn stream_check_and_load_work_on_the_cpu_backend() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let edges = edge_cases(&mut rng);
        let pool = random_records(600, 6);
        let items = mixed(&edges, &pool, 1500, 7);
        let c = stream_check(Backend::CPU, &items, Mode::Zip215);
        assert!(c.passed(), "{c:?}");
        assert_eq!(c.cases, 1500);

        let recs = honest_records(200, 128, 8);
        let rt = round_trips(Backend::CPU, &recs, 10).unwrap();
        assert_eq!(rt.len(), 10);
        assert!(rt.iter().all(|&us| us > 0.0 && us < 1e6), "{rt:?}");

        let l = stream_load(Backend::CPU, &recs, 5_000.0, 0.2).unwrap();
        assert_eq!(l.problem("5k"), None);
        assert_eq!((l.submitted, l.verdicts, l.rejected), (1000, 1000, 0));
        assert_eq!(l.latency_us.len(), 1000);
        assert!(l.latency_us.windows(2).all(|w| w[0] <= w[1]));
        // The verdicts kept up with the offered rate (within a loaded machine's slack).
        assert!(
            l.achieved > 2_500.0 && l.achieved < 10_000.0,
            "{}",
            l.achieved
        );
        assert!(
            percentile(&l.latency_us, 0.5) < 100_000.0,
            "{:?}",
            &l.latency_us[500]
        );
    }
}

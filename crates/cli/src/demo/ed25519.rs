//! Demo section: Ed25519 verification in every mode and on every available backend, many
//! signatures at once (throughput) and one at a time (latency), with each verdict checked
//! against the generator's known answer (which records it corrupted), and that answer
//! against ed25519-dalek's `verify_strict` in a build with the `peers` feature.

use std::io::Write;
use std::time::Instant;

use hdrhistogram::Histogram;
#[cfg(feature = "peers")]
use rayon::prelude::*;
use wirespeed_ed25519::{Item, Lanes, Mode, VerifyError};
use wirespeed_engine::ed25519::verify;
use wirespeed_sigdata::gen::{generate_marked, KEYS};
use wirespeed_sigdata::Record;

use super::{DemoOptions, Section};
use crate::args::group_digits;
use crate::error::CliError;
use crate::table::{Align, Table};

/// The section.
pub const SECTION: Section = Section {
    name: "ed25519",
    title: "Ed25519 signature verification",
    run,
};

/// Signatures verified per mode and backend (`--quick`: a tenth).
const N: usize = 20_000;
/// Message length in bytes.
const MSG_LEN: usize = 128;
/// Fraction of records corrupted by the generator.
const BAD_FRAC: f64 = 0.01;
/// Generator seed.
const SEED: u64 = 25519;
/// Single-signature calls timed per mode (`--quick`: a tenth).
const LATENCY_CALLS: usize = 2_000;
/// Items verified before each timed run, to warm caches and threads.
const WARMUP: usize = 256;

fn run(opts: &DemoOptions, out: &mut dyn Write) -> Result<(), CliError> {
    let scale = if opts.quick { 10 } else { 1 };
    let (n, calls) = (N / scale, LATENCY_CALLS / scale);
    let start = Instant::now();
    // The known answer: a record is valid exactly when the generator left it intact.
    let (records, expected): (Vec<Record>, Vec<bool>) = generate_marked(n, MSG_LEN, SEED, BAD_FRAC)
        .into_iter()
        .map(|(r, corrupted)| (r, !corrupted))
        .unzip();
    let expected_invalid = expected.iter().filter(|ok| !**ok).count();
    let mut failures = Vec::new();
    if let Some(differ) = dalek_disagrees(&records, &expected) {
        failures.push(format!(
            "ed25519-dalek verify_strict differs from the generator on {differ} records"
        ));
    }
    writeln!(
        out,
        "{n} signatures by {KEYS} keys over {MSG_LEN}-byte messages (seed {SEED}), \
         {:.0}% corrupted: {expected_invalid} invalid, as generated{CONFIRMED_BY} \
         (prepared in {:.1} s)",
        BAD_FRAC * 100.0,
        start.elapsed().as_secs_f64()
    )
    .map_err(CliError::Stdout)?;

    let items: Vec<Item<'_>> = wirespeed_sigdata::items(&records);
    let backends: Vec<Lanes> = Lanes::CONCRETE
        .into_iter()
        .filter(Lanes::available)
        .collect();
    let threads = rayon::current_num_threads();

    let mut table = Table::new(&[
        ("mode", Align::Left),
        ("call", Align::Left),
        ("backend", Align::Left),
        ("threads", Align::Right),
        ("verifies/s", Align::Right),
        ("per core/s", Align::Right),
        ("p50 us", Align::Right),
        ("p99 us", Align::Right),
        ("valid", Align::Right),
        ("invalid", Align::Right),
        ("check", Align::Left),
    ]);
    for mode in Mode::ALL {
        for &backend in &backends {
            let on = wirespeed_engine::Backend::Cpu(backend);
            let _ = wirespeed_engine::ed25519::verify_many(on, &items[..WARMUP.min(n)], mode);
            let start = Instant::now();
            let verdicts = wirespeed_engine::ed25519::verify_many(on, &items, mode)
                .map_err(|e| CliError::Internal(e.to_string()))?;
            let rate = per_sec(n, start.elapsed().as_secs_f64());
            let check = compare(&verdicts, &expected);
            let row = Row {
                mode,
                call: "verify_many",
                backend: backend.name(),
                threads,
                rate,
                latency: None,
                verdicts: &verdicts,
                check: &check,
            };
            table.row(row.cells());
            if check != "ok" {
                failures.push(format!("{mode} verify_many {}: {check}", backend.name()));
            }
        }

        let single = time_single(&items, mode, calls)?;
        let expected_here: Vec<bool> = (0..calls).map(|i| expected[i % n]).collect();
        let check = compare(&single.verdicts, &expected_here);
        let row = Row {
            mode,
            call: "verify",
            backend: wirespeed_engine::ed25519::verify_backend().name(),
            threads: 1,
            rate: single.rate,
            latency: Some(single.latency),
            verdicts: &single.verdicts,
            check: &check,
        };
        table.row(row.cells());
        if check != "ok" {
            failures.push(format!("{mode} verify: {check}"));
        }
    }
    out.write_all(table.render().as_bytes())
        .map_err(CliError::Stdout)?;
    writeln!(
        out,
        "verify_many: {n} signatures per run on rayon's pool; verify: {calls} calls \
         on one thread, latency per call; check: every verdict equals the generator's known answer"
    )
    .map_err(CliError::Stdout)?;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(CliError::Check(format!("ed25519: {}", failures.join("; "))))
    }
}

/// One table row.
struct Row<'a> {
    mode: Mode,
    call: &'static str,
    backend: &'static str,
    threads: usize,
    rate: f64,
    /// p50 and p99 in microseconds.
    latency: Option<(f64, f64)>,
    verdicts: &'a [Result<(), VerifyError>],
    check: &'a str,
}

impl Row<'_> {
    fn cells(&self) -> Vec<String> {
        let valid = self.verdicts.iter().filter(|v| v.is_ok()).count();
        let invalid = self.verdicts.len() - valid;
        let (p50, p99) = match self.latency {
            Some((a, b)) => (format!("{a:.1}"), format!("{b:.1}")),
            None => ("-".into(), "-".into()),
        };
        vec![
            self.mode.to_string(),
            self.call.into(),
            self.backend.into(),
            self.threads.to_string(),
            group_digits(self.rate as u64),
            group_digits((self.rate / self.threads.max(1) as f64) as u64),
            p50,
            p99,
            group_digits(valid as u64),
            group_digits(invalid as u64),
            self.check.into(),
        ]
    }
}

/// Results of timing single-signature calls.
struct Single {
    verdicts: Vec<Result<(), VerifyError>>,
    /// Calls per second.
    rate: f64,
    /// p50 and p99 latency in microseconds.
    latency: (f64, f64),
}

/// Times `calls` single-signature verifications, cycling through `items`.
fn time_single(items: &[Item<'_>], mode: Mode, calls: usize) -> Result<Single, CliError> {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| CliError::Internal(format!("latency histogram: {e}")))?;
    let mut verdicts = Vec::with_capacity(calls);
    if items.is_empty() {
        return Ok(Single {
            verdicts,
            rate: 0.0,
            latency: (0.0, 0.0),
        });
    }
    for it in items.iter().cycle().take(WARMUP) {
        let _ = verify(it.msg, it.sig, it.pk, mode);
    }
    let start = Instant::now();
    for it in items.iter().cycle().take(calls) {
        let t = Instant::now();
        let v = verify(it.msg, it.sig, it.pk, mode);
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        hist.saturating_record(ns.max(1));
        verdicts.push(v);
    }
    let rate = per_sec(calls, start.elapsed().as_secs_f64());
    let us = |q: f64| hist.value_at_quantile(q) as f64 / 1000.0;
    Ok(Single {
        verdicts,
        rate,
        latency: (us(0.50), us(0.99)),
    })
}

fn per_sec(count: usize, secs: f64) -> f64 {
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

/// "ok", or how many verdicts differ from the reference.
fn compare(verdicts: &[Result<(), VerifyError>], expected: &[bool]) -> String {
    let differ = verdicts
        .iter()
        .zip(expected)
        .filter(|(v, ok)| v.is_ok() != **ok)
        .count();
    if differ == 0 && verdicts.len() == expected.len() {
        "ok".into()
    } else {
        format!("MISMATCH ({differ} of {} differ)", verdicts.len())
    }
}

/// Whether ed25519-dalek's `verify_strict` agrees with the generator on every record
/// (with the `peers` feature): a peer confirms the known answer the verdicts are
/// checked against. `None` when it does, else how many records differ.
#[cfg(feature = "peers")]
fn dalek_disagrees(records: &[Record], expected: &[bool]) -> Option<usize> {
    let differ = records
        .par_iter()
        .zip(expected)
        .filter(|(r, ok)| dalek_accepts(r) != **ok)
        .count();
    (differ > 0).then_some(differ)
}

#[cfg(feature = "peers")]
fn dalek_accepts(r: &Record) -> bool {
    let (Ok(pk), Ok(sig)) = (
        <[u8; 32]>::try_from(r.pk.as_slice()),
        <[u8; 64]>::try_from(r.sig.as_slice()),
    ) else {
        return false;
    };
    let Ok(key) = ed25519_dalek::VerifyingKey::from_bytes(&pk) else {
        return false;
    };
    key.verify_strict(&r.msg, &ed25519_dalek::Signature::from_bytes(&sig))
        .is_ok()
}

/// A build without the peer libraries has no second opinion on the known answer.
#[cfg(not(feature = "peers"))]
fn dalek_disagrees(_records: &[Record], _expected: &[bool]) -> Option<usize> {
    None
}

/// What confirms the generator's known answer, for the summary line.
#[cfg(feature = "peers")]
const CONFIRMED_BY: &str = ", as ed25519-dalek verify_strict confirms";
#[cfg(not(feature = "peers"))]
const CONFIRMED_BY: &str = " (built without the peers feature: no ed25519-dalek cross-check)";

//! Demo section: the streaming verification pipeline (source -> parse -> verify x N ->
//! reorder -> dedup -> sink) over generated Solana traffic with known duplicates, bad
//! signatures and malformed packets; the accepted transactions must be exactly the
//! generator's valid ones and every other count must match. Whether they came out in
//! arrival order is shown beside (the reorder tile's order is best effort).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use wirespeed_disco::metrics::{read, Snapshot};

use wirespeed_sigverify::gen::{generate, Expect};
use wirespeed_sigverify::pipeline::{run as run_pipeline, Config};
use wirespeed_sigverify::tiles::Input;

use super::{DemoOptions, Section};
use crate::args::group_digits;
use crate::error::CliError;
use crate::monitor;
use crate::pipeline::{latency_us, tx_per_sec};
use crate::table::{Align, Table};

/// The section.
pub const SECTION: Section = Section {
    name: "pipeline",
    title: "Streaming signature-verification pipeline",
    run,
};

/// Transactions generated (`--quick`: a tenth).
const N: usize = 50_000;
/// Fraction of duplicates.
const DUP_FRAC: f64 = 0.05;
/// Fraction of bad signatures.
const BAD_FRAC: f64 = 0.05;
/// Generator seed.
const SEED: u64 = 2024;
/// One malformed packet (a truncated copy) after every this many transactions.
const MALFORMED_EVERY: usize = 1_000;

/// How often the monitor view is sampled while the pipeline runs.
const MONITOR_EVERY: Duration = Duration::from_millis(500);

/// The monitor's view of the running pipeline (what `wirespeed monitor` shows from
/// another terminal): redrawn in place every half second on a terminal; elsewhere only
/// the last frame, taken when the pipeline has finished, is printed.
fn watch<T>(
    path: &Path,
    worker: &std::thread::ScopedJoinHandle<'_, T>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let live = std::io::stdout().is_terminal();
    let mut prev: Option<(Snapshot, Instant)> = None;
    let mut drawn_lines = 0;
    loop {
        let finished = worker.is_finished();
        if let Ok(snap) = read(path) {
            let now = Instant::now();
            let rates = match &prev {
                Some((p, at)) => {
                    monitor::rates(Some(p), &snap, now.duration_since(*at).as_secs_f64())
                }
                None => monitor::rates(None, &snap, 0.0),
            };
            if live || finished {
                let frame = monitor::frame_text(path, &snap, &rates, MONITOR_EVERY, 110);
                if live && drawn_lines > 0 {
                    // Back over the previous frame.
                    write!(out, "\x1b[{drawn_lines}A").map_err(CliError::Stdout)?;
                }
                write!(out, "{frame}").map_err(CliError::Stdout)?;
                out.flush().map_err(CliError::Stdout)?;
                drawn_lines = frame.lines().count();
            }
            // Live: rates over the last interval. Otherwise the one frame shows rates
            // over the whole run (from the first snapshot).
            if live || prev.is_none() {
                prev = Some((snap, now));
            }
        }
        if finished {
            return Ok(());
        }
        if prev.is_none() {
            // The pipeline has not created its metrics yet: look again soon, so the
            // first snapshot is taken near the start.
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        let until = Instant::now() + MONITOR_EVERY;
        while Instant::now() < until && !worker.is_finished() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn run(opts: &DemoOptions, out: &mut dyn Write) -> Result<(), CliError> {
    let n = if opts.quick { N / 10 } else { N };
    let start = Instant::now();
    let traffic = generate(n, DUP_FRAC, BAD_FRAC, SEED);
    let count = |e: Expect| traffic.iter().filter(|g| g.expect == e).count() as u64;
    let (valid, bad, dup) = (
        count(Expect::Valid),
        count(Expect::BadSignature),
        count(Expect::Duplicate),
    );
    let want_ids: Vec<[u8; 64]> = traffic
        .iter()
        .filter(|g| g.expect == Expect::Valid)
        .map(|g| g.txn_id)
        .collect();
    let mut packets = Vec::with_capacity(n + n / MALFORMED_EVERY);
    let mut malformed = 0u64;
    for (i, g) in traffic.into_iter().enumerate() {
        if i % MALFORMED_EVERY == MALFORMED_EVERY - 1 {
            packets.push((false, g.bytes[..g.bytes.len() / 2].to_vec()));
            malformed += 1;
        }
        packets.push((false, g.bytes));
    }
    let ingested = packets.len() as u64;
    writeln!(
        out,
        "{n} Solana transactions (seed {SEED}): {valid} valid, {bad} with a bad signature, \
         {dup} duplicates, plus {malformed} malformed packets (prepared in {:.1} s)",
        start.elapsed().as_secs_f64()
    )
    .map_err(CliError::Stdout)?;

    let config = Config {
        collect_ids: true,
        metrics_path: std::env::temp_dir().join(format!(
            "wirespeed-demo-pipeline-{}.metrics",
            std::process::id()
        )),
        ..Config::default()
    };
    let stop = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        let worker =
            scope.spawn(|| run_pipeline(&config, Input::Memory(packets.into_iter()), &stop));
        watch(&config.metrics_path, &worker, out)?;
        worker
            .join()
            .map_err(|_| CliError::Pipeline("the pipeline thread panicked".into()))
    })?;
    let _ = std::fs::remove_file(&config.metrics_path);
    let s = result.map_err(|e| CliError::Pipeline(e.to_string()))?;

    let got_malformed: u64 = s.malformed.iter().map(|(_, v)| v).sum();
    let ids: Vec<[u8; 64]> = s.ids.concat();
    let mut failures = Vec::new();
    for (what, got, want) in [
        ("ingested", s.ingested, ingested),
        ("accepted", s.accepted_total(), valid),
        ("bad signature", s.bad_signature, bad),
        ("duplicate", s.duplicates, dup),
        ("malformed", got_malformed, malformed),
        ("shed", s.shed, 0),
    ] {
        if got != want {
            failures.push(format!("{what}: {got}, expected {want}"));
        }
    }
    // Delivery order is best effort (the reorder tile gives up on a ticket held past
    // its window and delivers it late): the set must match, the order is reported.
    let in_order = ids == want_ids;
    let (mut got_set, mut want_set) = (ids, want_ids);
    got_set.sort_unstable();
    want_set.sort_unstable();
    if got_set != want_set {
        failures.push("the accepted ids are not the valid ones".into());
    }
    let given_up = s
        .metrics
        .tiles
        .iter()
        .find(|t| t.name == "reorder")
        .and_then(|t| t.custom.iter().find(|(k, _)| k == "given_up"))
        .map_or(0, |(_, v)| *v);
    let us = |q: f64| latency_us(&s, q).map_or("-".into(), |v| format!("{v:.1}"));
    let mut t = Table::new(&[
        ("verify tiles", Align::Right),
        ("tx/s", Align::Right),
        ("p50 us", Align::Right),
        ("p99 us", Align::Right),
        ("accepted", Align::Right),
        ("bad sig", Align::Right),
        ("duplicate", Align::Right),
        ("malformed", Align::Right),
        ("in order", Align::Left),
        ("check", Align::Left),
    ]);
    t.row(vec![
        config.verify_tiles.to_string(),
        group_digits(tx_per_sec(&s).round() as u64),
        us(0.5),
        us(0.99),
        group_digits(s.accepted_total()),
        group_digits(s.bad_signature),
        group_digits(s.duplicates),
        group_digits(got_malformed),
        if in_order {
            "yes".into()
        } else {
            format!("no ({} given up)", group_digits(given_up))
        },
        if failures.is_empty() {
            "ok: counts and ids as generated".into()
        } else {
            "MISMATCH".into()
        },
    ]);
    write!(out, "{}", t.render()).map_err(CliError::Stdout)?;
    writeln!(
        out,
        "p50/p99: ingest to verdict with the source unpaced (packets as fast as the pipeline \
         takes them), so mostly queueing behind the source; `wirespeed pipeline run --rate \
         PPS` measures latency at a set load"
    )
    .map_err(CliError::Stdout)?;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(CliError::Check(format!(
            "pipeline: {}",
            failures.join("; ")
        )))
    }
}

//! Rendering of an Ed25519 [`Report`]: a markdown table ready for BENCHMARKS.md, or JSON.
//!
//! Every ratio is oriented so that a value above 1 means wirespeed is faster: throughput
//! as wirespeed ÷ peer, latency as peer ÷ wirespeed.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{Contender, LatencyRow, Report, ThroughputRow};

/// The throughput of wirespeed `c` in the same (count, msg_len, threads) group as `row`.
fn ws_rate(report: &Report, row: &ThroughputRow, c: Contender) -> Option<f64> {
    report
        .throughput
        .iter()
        .find(|r| {
            r.contender == c
                && r.count == row.count
                && r.msg_len == row.msg_len
                && r.threads == row.threads
        })
        .map(ThroughputRow::per_s)
}

/// wirespeed `c` ÷ this row, for peer rows only.
fn throughput_ratio(report: &Report, row: &ThroughputRow, c: Contender) -> Option<f64> {
    if row.contender.is_wirespeed() {
        return None;
    }
    Some(ws_rate(report, row, c)? / row.per_s())
}

/// Peer ÷ wirespeed `verify` latency at the same message length: (p50, p99).
fn latency_ratio(report: &Report, row: &LatencyRow) -> Option<(f64, f64)> {
    if row.contender.is_wirespeed() {
        return None;
    }
    let ws = report
        .latency
        .iter()
        .find(|r| r.contender == Contender::WsVerify && r.msg_len == row.msg_len)?;
    Some((
        row.p50_ns as f64 / ws.p50_ns as f64,
        row.p99_ns as f64 / ws.p99_ns as f64,
    ))
}

/// An integer with thousands separators.
/// `x` rounded to a whole number, its digits grouped in threes (negative: 0).
fn grouped(x: f64) -> String {
    wirespeed_util::digits::group_digits(x.max(0.0).round() as u64)
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "—".to_string(), |r| format!("{r:.2}"))
}

fn micros(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1_000.0)
}

/// The markdown section: header with machine and date, throughput table, latency table.
pub fn render_markdown(report: &Report) -> String {
    let cfg = &report.config;
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "## Ed25519 verification: wirespeed and peers\n");
    let _ = writeln!(s, "- Machine: {}", report.machine.summary());
    let _ = writeln!(s, "- Date: {}", report.date);
    let _ = writeln!(s, "- Command: `{}`", report.command);
    let _ = writeln!(
        s,
        "- Data: `sigdata::gen::generate(n, msg_len, seed {}, 0.0)`, all signatures valid; \
         every contender accepted every signature on every pass",
        cfg.seed
    );
    let _ = writeln!(
        s,
        "- Timing: one warm-up pass, then the median of {} pass{}; one rayon pool per thread \
         count; peers run `par_iter` over items (dalek `verify_batch`: over batches of 64); \
         keys are parsed inside the timed loop unless marked pre-parsed",
        cfg.reps,
        if cfg.reps == 1 { "" } else { "es" }
    );
    let _ = writeln!(
        s,
        "- wirespeed: `Mode::Strict`; `verify_many` auto backend on this machine: {}; {}",
        report.auto_backend, report.openssl_version
    );
    let _ = writeln!(
        s,
        "- Ratios: above 1 means wirespeed is faster (throughput: wirespeed ÷ peer; latency: \
         peer ÷ wirespeed)\n"
    );

    let _ = writeln!(s, "### Throughput\n");
    let _ = writeln!(
        s,
        "| sigs | msg bytes | threads | contender | verifies/s | verifies/s per core \
         | ws verify ÷ peer | ws verify_many ÷ peer |"
    );
    let _ = writeln!(s, "|---:|---:|---:|---|---:|---:|---:|---:|");
    for r in &report.throughput {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            grouped(r.count as f64),
            r.msg_len,
            r.threads,
            r.contender.label(),
            grouped(r.per_s()),
            grouped(r.per_s_per_core()),
            ratio(throughput_ratio(report, r, Contender::WsVerify)),
            ratio(throughput_ratio(report, r, Contender::WsVerifyMany)),
        );
    }

    if !report.latency.is_empty() {
        let _ = writeln!(
            s,
            "\n### Single-signature latency (1 thread, {} calls per contender)\n",
            grouped(cfg.latency_samples as f64)
        );
        let _ = writeln!(
            s,
            "| msg bytes | contender | p50 µs | p99 µs | p50 peer ÷ ws | p99 peer ÷ ws |"
        );
        let _ = writeln!(s, "|---:|---|---:|---:|---:|---:|");
        for r in &report.latency {
            let rr = latency_ratio(report, r);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                r.msg_len,
                r.contender.label(),
                micros(r.p50_ns),
                micros(r.p99_ns),
                ratio(rr.map(|x| x.0)),
                ratio(rr.map(|x| x.1)),
            );
        }
    }
    s += &super::variants::render_markdown(&report.variants);
    s
}

/// The same results as JSON (rates in verifications per second, latency in nanoseconds).
pub fn render_json(report: &Report) -> Value {
    let m = &report.machine;
    let cfg = &report.config;
    let throughput: Vec<Value> = report
        .throughput
        .iter()
        .map(|r| {
            json!({
                "count": r.count,
                "msg_len": r.msg_len,
                "threads": r.threads,
                "contender": r.contender.key(),
                "label": r.contender.label(),
                "median_s": r.median_s,
                "verifies_per_s": r.per_s(),
                "verifies_per_s_per_core": r.per_s_per_core(),
                "ratio_ws_verify": throughput_ratio(report, r, Contender::WsVerify),
                "ratio_ws_verify_many": throughput_ratio(report, r, Contender::WsVerifyMany),
            })
        })
        .collect();
    let latency: Vec<Value> = report
        .latency
        .iter()
        .map(|r| {
            let rr = latency_ratio(report, r);
            json!({
                "msg_len": r.msg_len,
                "contender": r.contender.key(),
                "label": r.contender.label(),
                "samples": r.samples,
                "p50_ns": r.p50_ns,
                "p99_ns": r.p99_ns,
                "ratio_p50_peer_over_ws": rr.map(|x| x.0),
                "ratio_p99_peer_over_ws": rr.map(|x| x.1),
            })
        })
        .collect();
    json!({
        "bench": "ed25519",
        "date": report.date,
        "command": report.command,
        "machine": {
            "cpu": m.cpu,
            "cores": m.cores,
            "avx2": m.avx2,
            "avx512ifma": m.avx512ifma,
            "cpu_family": m.family,
            "microarch": m.microarch,
        },
        "config": {
            "counts": cfg.counts,
            "msg_lens": cfg.msg_lens,
            "threads": cfg.threads,
            "reps": cfg.reps,
            "latency_samples": cfg.latency_samples,
            "seed": cfg.seed,
        },
        "wirespeed_mode": "strict",
        "auto_backend": report.auto_backend,
        "openssl_version": report.openssl_version,
        "throughput": throughput,
        "latency": latency,
        "variants": super::variants::render_json(&report.variants),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        assert_eq!(grouped(0.0), "0");
        assert_eq!(grouped(999.4), "999");
        assert_eq!(grouped(1_000.0), "1,000");
        assert_eq!(grouped(1_234_567.0), "1,234,567");
    }
}

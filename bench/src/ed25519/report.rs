//! Rendering of an Ed25519 [`Report`]: a markdown table ready for BENCHMARKS.md, or JSON.
//!
//! Every ratio is oriented so that a value above 1 means wirespeed is faster: throughput
//! as wirespeed ÷ peer, latency as peer ÷ wirespeed.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{narya, Contender, LatencyRow, NaryaThroughputRow, Report, ThroughputRow};

/// The label of Narya's throughput rows.
pub const NARYA_BATCH_LABEL: &str = "Narya VerifyBatchStrict (64, r51, Go)";
/// The label of Narya's latency rows.
pub const NARYA_SINGLE_LABEL: &str = "Narya VerifyStrict (r51, Go)";

/// wirespeed `c` ÷ Narya in the same (count, msg_len, threads) group.
fn narya_ratio(report: &Report, row: &NaryaThroughputRow, c: Contender) -> Option<f64> {
    let ws = report.throughput.iter().find(|r| {
        r.contender == c
            && r.count == row.count
            && r.msg_len == row.msg_len
            && r.threads == row.threads
    })?;
    Some(ws.per_s() / row.per_s())
}

/// Narya's row in the same group as `row`.
fn narya_row<'a>(report: &'a Report, row: &ThroughputRow) -> Option<&'a NaryaThroughputRow> {
    report
        .narya
        .as_ref()?
        .throughput
        .iter()
        .find(|n| n.count == row.count && n.msg_len == row.msg_len && n.threads == row.threads)
}

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
    match &report.narya {
        Some(n) => {
            let _ = writeln!(
                s,
                "- Narya: {} {} built from `{}` with {}, backend {}; timed out of process by \
                 bench/narya on the same records (written to a file): `VerifyBatchStrict` in \
                 chunks of {} on N goroutines (`GOMAXPROCS` = N), `VerifyStrict` one call at a \
                 time for the latency; its verdicts equalled wirespeed's on every record",
                narya::MODULE,
                n.version,
                n.source.display(),
                n.go_version,
                n.backend,
                narya::CHUNK,
            );
        }
        None => {
            let _ = writeln!(
                s,
                "- Narya: not run (give `--narya DIR`, a checkout of {}, or set {})",
                narya::MODULE,
                narya::ENV
            );
        }
    }
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
    for (i, r) in report.throughput.iter().enumerate() {
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
        // Narya's row closes its group.
        let last_of_group = report.throughput.get(i + 1).is_none_or(|next| {
            (next.count, next.msg_len, next.threads) != (r.count, r.msg_len, r.threads)
        });
        if let Some(n) = narya_row(report, r).filter(|_| last_of_group) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                grouped(n.count as f64),
                n.msg_len,
                n.threads,
                NARYA_BATCH_LABEL,
                grouped(n.per_s()),
                grouped(n.per_s_per_core()),
                ratio(narya_ratio(report, n, Contender::WsVerify)),
                ratio(narya_ratio(report, n, Contender::WsVerifyMany)),
            );
        }
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
        for (i, r) in report.latency.iter().enumerate() {
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
            let last_of_len = report
                .latency
                .get(i + 1)
                .is_none_or(|next| next.msg_len != r.msg_len);
            let narya = report
                .narya
                .as_ref()
                .and_then(|n| n.latency.iter().find(|n| n.msg_len == r.msg_len));
            if let (true, Some(n)) = (last_of_len, narya) {
                let ws = ws_latency(report, r.msg_len);
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} |",
                    n.msg_len,
                    NARYA_SINGLE_LABEL,
                    micros(n.p50_ns),
                    micros(n.p99_ns),
                    ratio(ws.map(|w| n.p50_ns as f64 / w.p50_ns as f64)),
                    ratio(ws.map(|w| n.p99_ns as f64 / w.p99_ns as f64)),
                );
            }
        }
    }

    if let Some(n) = &report.narya {
        let _ = writeln!(s, "\n### wirespeed against Narya\n");
        let _ = writeln!(
            s,
            "| sigs | msg bytes | threads | ws verify_many verifies/s | Narya verifies/s \
             | ws ÷ Narya |"
        );
        let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|");
        for r in &n.throughput {
            let ws = narya_ratio(report, r, Contender::WsVerifyMany);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                grouped(r.count as f64),
                r.msg_len,
                r.threads,
                ws.map_or_else(|| "—".to_string(), |x| grouped(x * r.per_s())),
                grouped(r.per_s()),
                ratio(ws),
            );
        }
        for l in &n.latency {
            let ws = ws_latency(report, l.msg_len);
            let _ = writeln!(
                s,
                "| single call | {} | 1 | p50 {} µs | p50 {} µs | {} |",
                l.msg_len,
                ws.map_or_else(|| "—".to_string(), |w| micros(w.p50_ns)),
                micros(l.p50_ns),
                ratio(ws.map(|w| l.p50_ns as f64 / w.p50_ns as f64)),
            );
        }
    }
    s += &super::variants::render_markdown(&report.variants);
    s
}

/// wirespeed `verify`'s latency row at `msg_len`.
fn ws_latency(report: &Report, msg_len: usize) -> Option<&LatencyRow> {
    report
        .latency
        .iter()
        .find(|r| r.contender == Contender::WsVerify && r.msg_len == msg_len)
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
        "narya": narya_json(report),
    })
}

/// Narya's figures as JSON (null when it was not run).
fn narya_json(report: &Report) -> Value {
    let Some(n) = &report.narya else {
        return Value::Null;
    };
    let throughput: Vec<Value> = n
        .throughput
        .iter()
        .map(|r| {
            json!({
                "count": r.count,
                "msg_len": r.msg_len,
                "threads": r.threads,
                "label": NARYA_BATCH_LABEL,
                "chunk": narya::CHUNK,
                "median_s": r.median_s,
                "verifies_per_s": r.per_s(),
                "verifies_per_s_per_core": r.per_s_per_core(),
                "valid": r.valid,
                "ratio_ws_verify": narya_ratio(report, r, Contender::WsVerify),
                "ratio_ws_verify_many": narya_ratio(report, r, Contender::WsVerifyMany),
            })
        })
        .collect();
    let latency: Vec<Value> = n
        .latency
        .iter()
        .map(|l| {
            let ws = ws_latency(report, l.msg_len);
            json!({
                "msg_len": l.msg_len,
                "label": NARYA_SINGLE_LABEL,
                "samples": l.samples,
                "p50_ns": l.p50_ns,
                "p99_ns": l.p99_ns,
                "ratio_p50_peer_over_ws": ws.map(|w| l.p50_ns as f64 / w.p50_ns as f64),
                "ratio_p99_peer_over_ws": ws.map(|w| l.p99_ns as f64 / w.p99_ns as f64),
            })
        })
        .collect();
    json!({
        "module": narya::MODULE,
        "version": n.version,
        "source": n.source.display().to_string(),
        "backend": n.backend,
        "go_version": n.go_version,
        "throughput": throughput,
        "latency": latency,
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

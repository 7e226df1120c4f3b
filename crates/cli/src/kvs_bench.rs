//! The parts of `wirespeed kvs bench` beyond one run: the server's CPU time around a run,
//! open-loop sweeps over offered rates, their JSON documents and SVG plots.
//!
//! A sweep document (`--sweep-json`) is
//! `{"label", "protocol", "connections", "keys", "key_dist", "value_size", "value_sizes",
//! "get_ratio", "points": [{"offered_rate", "requests", "secs", "per_sec", "p50_us",
//! "p90_us", "p99_us", "p999_us", "max_us", "mismatches", "server_cpu_s",
//! "cpu_s_per_million"}], "saturated_at"}`; `--svg-merge` draws several of them (one
//! server each) on one chart. `key_dist` and `value_sizes` are the distributions in the
//! form `--key-dist` and `--value-size` take (`"zipf:0.99"`, `"64-4096"`); `value_size`
//! is the size in bytes when it is fixed, else null.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use wirespeed_loadgen::plot::{self, Chart, Dash, Series};
use wirespeed_loadgen::{self as loadgen, LoadReport, LoadSpec};

use crate::error::CliError;

/// One run and the server CPU seconds it cost (when server pids were given).
#[derive(Debug)]
pub struct Measured {
    /// The load generator's report.
    pub report: LoadReport,
    /// User plus system seconds of the server processes over the run, summed.
    pub server_cpu_s: Option<f64>,
    /// Each server process's seconds: (pid, seconds).
    pub server_cpu_by_pid: Vec<(u32, f64)>,
}

impl Measured {
    /// Server CPU seconds per million requests.
    pub fn cpu_s_per_million(&self) -> Option<f64> {
        let n = self.report.requests;
        self.server_cpu_s
            .filter(|_| n > 0)
            .map(|s| s / n as f64 * 1e6)
    }

    /// The run's JSON fields (the caller adds what describes the load).
    pub fn json(&self, spec: &LoadSpec) -> Value {
        let r = &self.report;
        json!({
            "requests": r.requests, "secs": r.secs, "per_sec": r.per_sec(),
            "p50_us": r.us(0.5), "p90_us": r.us(0.9), "p99_us": r.us(0.99),
            "p999_us": r.us(0.999), "max_us": r.us(1.0), "mismatches": r.mismatches,
            "protocol": spec.protocol.name(),
            "mode": if spec.rate.is_some() { "open" } else { "closed" },
            "offered_rate": spec.rate,
            "key_dist": spec.key_dist.to_string(),
            "value_sizes": spec.value_size.to_string(),
            "server_cpu_s": self.server_cpu_s,
            "cpu_s_per_million": self.cpu_s_per_million(),
            "server_cpu_s_by_pid": self.server_cpu_by_pid.iter()
                .map(|&(pid, s)| json!({"pid": pid, "cpu_s": s})).collect::<Vec<_>>(),
            "cluster": spec.cluster, "moved": r.moved, "asks": r.asks,
        })
    }

    /// The run as one `key=value` line.
    pub fn line(&self, spec: &LoadSpec) -> String {
        let r = &self.report;
        let mut line = format!("protocol={} ", spec.protocol);
        match spec.rate {
            Some(rate) => line += &format!("mode=open offered_rate={rate} "),
            None => line += "mode=closed ",
        }
        line += &format!(
            "key_dist={} value_sizes={} ",
            spec.key_dist, spec.value_size
        );
        line += &format!(
            "requests={} secs={:.3} per_sec={:.0} p50_us={:.1} p90_us={:.1} p99_us={:.1} p999_us={:.1} max_us={:.1} mismatches={}",
            r.requests, r.secs, r.per_sec(), r.us(0.5), r.us(0.9), r.us(0.99), r.us(0.999), r.us(1.0), r.mismatches
        );
        if spec.cluster {
            line += &format!(" cluster=true moved={} asks={}", r.moved, r.asks);
        }
        if let (Some(cpu), Some(per)) = (self.server_cpu_s, self.cpu_s_per_million()) {
            line += &format!(" server_cpu_s={cpu:.3} cpu_s_per_million={per:.3}");
            if self.server_cpu_by_pid.len() > 1 {
                let each: Vec<String> = self
                    .server_cpu_by_pid
                    .iter()
                    .map(|(pid, s)| format!("{pid}:{s:.3}"))
                    .collect();
                line += &format!(" server_cpu_s_by_pid={}", each.join(","));
            }
        }
        line
    }
}

/// A failed run as a CLI error: an overloaded server or an I/O failure.
pub fn load_error(spec: &LoadSpec, e: std::io::Error) -> CliError {
    match loadgen::overloaded(&e) {
        Some(o) => CliError::Bench(o.to_string()),
        None => CliError::Invalid(format!("{}: {e}", spec.addr)),
    }
}

fn cpu_secs(pid: u32) -> Result<f64, CliError> {
    loadgen::process_cpu_secs(pid)
        .map_err(|e| CliError::Invalid(format!("--server-pid {pid}: {e}")))
}

/// Runs `spec`, reading the CPU time of processes `pids` (if any) before and after.
pub fn measure(spec: &LoadSpec, pids: &[u32]) -> Result<Measured, CliError> {
    measure_io(spec, pids)?.map_err(|e| load_error(spec, e))
}

/// [`measure`], with the load's own error kept apart (a sweep stops at an overload).
fn measure_io(spec: &LoadSpec, pids: &[u32]) -> Result<Result<Measured, std::io::Error>, CliError> {
    let before = pids
        .iter()
        .map(|&p| cpu_secs(p))
        .collect::<Result<Vec<_>, _>>()?;
    let report = match loadgen::run(spec) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    let after = pids
        .iter()
        .map(|&p| cpu_secs(p))
        .collect::<Result<Vec<_>, _>>()?;
    let server_cpu_by_pid: Vec<(u32, f64)> = pids
        .iter()
        .zip(before.iter().zip(&after))
        .map(|(&pid, (b, a))| (pid, (a - b).max(0.0)))
        .collect();
    let server_cpu_s = (!pids.is_empty()).then(|| server_cpu_by_pid.iter().map(|p| p.1).sum());
    Ok(Ok(Measured {
        report,
        server_cpu_s,
        server_cpu_by_pid,
    }))
}

/// Parses `--sweep`: a comma list of positive rates.
pub fn parse_rates(s: &str) -> Result<Vec<f64>, CliError> {
    let rates = s
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| match t.parse::<f64>() {
            Ok(r) if valid_rate(r) => Ok(r),
            _ => Err(CliError::Invalid(format!(
                "--sweep: '{t}' is not a rate (requests per second, above 0 and at most 1e9)"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if rates.is_empty() {
        return Err(CliError::Invalid(
            "--sweep needs at least one rate, e.g. 20000,40000,60000".into(),
        ));
    }
    Ok(rates)
}

/// A rate `--rate` and `--sweep` accept.
pub fn valid_rate(r: f64) -> bool {
    r.is_finite() && r > 0.0 && r <= 1e9
}

/// Where a sweep's results go.
#[derive(Debug)]
pub struct SweepOutput<'a> {
    /// The server's name in the document and the plot.
    pub label: &'a str,
    /// The sweep document.
    pub json_file: Option<&'a Path>,
    /// The plot.
    pub svg_file: Option<&'a Path>,
    /// Print the document on stdout (else one line per rate).
    pub print_json: bool,
}

/// Runs the open loop at each rate in turn (same spec otherwise). Stops at the first rate
/// the server cannot keep up with; the document records it as `saturated_at`.
pub fn sweep(
    spec: &LoadSpec,
    rates: &[f64],
    pids: &[u32],
    out: &SweepOutput<'_>,
) -> Result<(), CliError> {
    let mut points = Vec::new();
    let mut saturated_at = None;
    let mut mismatches = 0;
    for &rate in rates {
        let spec = LoadSpec {
            rate: Some(rate),
            ..spec.clone()
        };
        let m = match measure_io(&spec, pids)? {
            Ok(m) => m,
            Err(e) if loadgen::overloaded(&e).is_some() => {
                eprintln!("kvs bench: {e}; the sweep stops at {rate} requests/s");
                saturated_at = Some(rate);
                break;
            }
            Err(e) => return Err(load_error(&spec, e)),
        };
        if !out.print_json {
            println!("{}", m.line(&spec));
        }
        mismatches += m.report.mismatches;
        points.push(m.json(&spec));
    }
    let doc = json!({
        "label": out.label,
        "protocol": spec.protocol.name(),
        "connections": spec.connections,
        "keys": spec.keys,
        "key_dist": spec.key_dist.to_string(),
        "value_size": spec.value_size.fixed(),
        "value_sizes": spec.value_size.to_string(),
        "get_ratio": spec.get_ratio,
        "points": points,
        "saturated_at": saturated_at,
    });
    if out.print_json {
        println!("{doc}");
    }
    if let Some(path) = out.json_file {
        write(path, format!("{doc:#}\n"))?;
    }
    if let Some(path) = out.svg_file {
        let curves = [("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p999_us")];
        let series = curves
            .iter()
            .enumerate()
            .map(|(i, (name, field))| Series {
                label: (*name).to_string(),
                points: curve(&points, field),
                color: i,
                dash: Dash::Solid,
            })
            .collect();
        let chart = Chart {
            title: format!(
                "{}: latency against offered load ({}, {} connections)",
                out.label, spec.protocol, spec.connections
            ),
            x_label: "offered rate (requests/s)".into(),
            y_label: "latency (µs, from the scheduled send)".into(),
            series,
        };
        write(path, plot::svg(&chart))?;
    }
    if mismatches > 0 {
        return Err(CliError::Check(format!(
            "{mismatches} replies differed from the expected bytes"
        )));
    }
    Ok(())
}

/// (offered rate, `field`) of each point that has both.
fn curve(points: &[Value], field: &str) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter_map(|p| Some((p["offered_rate"].as_f64()?, p[field].as_f64()?)))
        .collect()
}

fn write(path: &Path, text: String) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|source| CliError::Output {
        path: path.to_path_buf(),
        source,
    })
}

/// The largest sweep document `--svg-merge` reads (one holds a few hundred bytes per
/// rate).
const MAX_SWEEP_JSON_BYTES: usize = 16 << 20;

/// Draws sweep documents (one server each) on one chart: p99 solid, p50 dashed, a color
/// per server.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<(), CliError> {
    let mut series = Vec::new();
    for (i, path) in inputs.iter().enumerate() {
        let text = crate::files::read_bounded_text(path, MAX_SWEEP_JSON_BYTES)?;
        let malformed = |message: String| CliError::MalformedInput {
            path: path.clone(),
            message,
        };
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| malformed(format!("not JSON: {e}")))?;
        let points = doc["points"]
            .as_array()
            .ok_or_else(|| malformed("not a sweep document: no \"points\" array".into()))?;
        for (n, p) in points.iter().enumerate() {
            for field in ["offered_rate", "p50_us", "p99_us"] {
                if p[field].as_f64().is_none() {
                    return Err(malformed(format!("point {n}: no number \"{field}\"")));
                }
            }
        }
        let label = match doc["label"].as_str() {
            Some(l) => l.to_string(),
            None => path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("input {}", i + 1)),
        };
        series.push(Series {
            label: format!("{label} p99"),
            points: curve(points, "p99_us"),
            color: i,
            dash: Dash::Solid,
        });
        series.push(Series {
            label: format!("{label} p50"),
            points: curve(points, "p50_us"),
            color: i,
            dash: Dash::Dashed,
        });
    }
    let chart = Chart {
        title: "Latency against offered load: p99 (solid), p50 (dashed)".into(),
        x_label: "offered rate (requests/s)".into(),
        y_label: "latency (µs, from the scheduled send)".into(),
        series,
    };
    write(out, plot::svg(&chart))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_or_fail_with_a_typed_error() {
        assert_eq!(
            parse_rates("20000, 40000,6e4").ok(),
            Some(vec![20000.0, 40000.0, 60000.0])
        );
        for bad in ["", ",", "0", "-5", "abc", "1,NaN", "inf"] {
            assert!(
                matches!(parse_rates(bad), Err(CliError::Invalid(_))),
                "{bad:?}"
            );
        }
    }
}

//! Progress of a long chain of squarings (`vdf eval`, `vdf resume`, `timelock solve`).
//!
//! On a terminal a bar shows squarings done of T, the rate, ns per squaring and the time
//! left. Rates and times count only the squarings this run did (a resumed evaluation
//! starts at the saved count, so the squarings of earlier runs do not inflate the rate).
//! With `eta_line`, one line on stderr states the measured rate and the estimated time
//! to the end once the rate has been measured for a second, terminal or not, so that
//! a solver of a puzzle that takes years (LCS35) learns it before it has run long.
//!
//! Rates are rounded to three significant figures ("2.98 M/s"), not printed with the
//! many decimals of a raw float.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// Seconds of squaring before the rate is trusted for the ETA line.
const MEASURE_SECS: f64 = 1.0;

/// A rate rounded to three significant figures with a k/M/G prefix: "2.98 M".
pub fn rate(per_sec: f64) -> String {
    let (v, unit) = if per_sec >= 1e9 {
        (per_sec / 1e9, " G")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, " M")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, " k")
    } else {
        (per_sec, " ")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}").trim_end().to_string()
}

/// A duration in the two largest units that matter: "1 y 97 d", "3 h 20 min", "45 s".
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "unknown".into();
    }
    let s = secs.round() as u64;
    let (y, d, h, m) = (
        s / 31_557_600,
        s % 31_557_600 / 86_400,
        s % 86_400 / 3600,
        s % 3600 / 60,
    );
    if y > 0 {
        format!("{y} y {d} d")
    } else if d > 0 {
        format!("{d} d {h} h")
    } else if h > 0 {
        format!("{h} h {m} min")
    } else if m > 0 {
        format!("{m} min {} s", s % 60)
    } else {
        format!("{secs:.1} s")
    }
}

/// Where a run of squarings reports its progress.
pub struct Progress<'a> {
    /// Who speaks on stderr ("vdf", "timelock").
    pub label: &'a str,
    /// T, the squarings of the whole evaluation.
    pub total: u64,
    /// Squarings an earlier run already did (the count this run starts at).
    pub start_at: u64,
    /// Print one line with the measured rate and the ETA after a second.
    pub eta_line: bool,
}

impl Progress<'_> {
    /// Runs `f` with a progress callback (called with the squarings done so far) and
    /// returns its result and the seconds this run took.
    pub fn run<T>(&self, f: impl FnOnce(&dyn Fn(u64)) -> T) -> (T, f64) {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(self.total);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {human_pos}/{human_len} squarings  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_position(self.start_at);
            bar
        });
        let start = Instant::now();
        let told = std::cell::Cell::new(false);
        let tick = |done: u64| {
            let secs = start.elapsed().as_secs_f64();
            let this_run = done.saturating_sub(self.start_at);
            let per_sec = if secs > 0.0 {
                this_run as f64 / secs
            } else {
                0.0
            };
            let left = self.total.saturating_sub(done);
            let eta = if per_sec > 0.0 {
                duration(left as f64 / per_sec)
            } else {
                "unknown".into()
            };
            if let Some(b) = &bar {
                b.set_position(done);
                if this_run > 0 {
                    b.set_message(format!(
                        "{}/s  {:.1} ns/square  ETA {eta}",
                        rate(per_sec),
                        1e9 / per_sec
                    ));
                }
            }
            if self.eta_line && !told.get() && secs >= MEASURE_SECS && left > 0 && this_run > 0 {
                told.set(true);
                let line = format!(
                    "{}: {} squarings/s ({:.1} ns/square); {} of {} squarings left, ETA {eta}",
                    self.label,
                    rate(per_sec),
                    1e9 / per_sec,
                    wirespeed_util::digits::group_digits(left),
                    wirespeed_util::digits::group_digits(self.total),
                );
                match &bar {
                    Some(b) => b.println(line),
                    None => eprintln!("{line}"),
                }
            }
        };
        let r = f(&tick);
        let secs = start.elapsed().as_secs_f64();
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        (r, secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_durations_are_rounded() {
        assert_eq!(rate(2_981_197.930_1), "2.98 M");
        assert_eq!(rate(12_345.0), "12.3 k");
        assert_eq!(rate(999.4), "999");
        assert_eq!(rate(4.2e9), "4.20 G");
        assert_eq!(duration(45.04), "45.0 s");
        assert_eq!(duration(3.0 * 3600.0 + 20.0 * 60.0), "3 h 20 min");
        assert_eq!(duration(2.0 * 31_557_600.0 + 5.0 * 86_400.0), "2 y 5 d");
    }
}

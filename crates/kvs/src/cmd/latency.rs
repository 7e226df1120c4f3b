//! LATENCY: the latency monitor's events ([`crate::latency`]: LATEST, HISTORY, RESET,
//! GRAPH, DOCTOR) and the per-command latency histograms
//! ([`crate::state::histogram`]: HISTOGRAM), with Redis's reply shapes.
//!
//! - `LATEST`: per event, `[name, time of the newest sample, its ms, all-time max ms]`.
//! - `HISTORY event`: the event's samples, oldest first, as `[time, ms]` (none for an
//!   event never recorded).
//! - `RESET [event ...]`: forgets those events (all without names); the count forgot.
//! - `GRAPH event`: a text chart of the event's samples (bars scaled from its lowest to
//!   highest kept sample, each bar's age below it), or an error without samples.
//! - `DOCTOR`: a report of each event's samples and what to look at.
//! - `HISTOGRAM [command ...]`: per command or subcommand (a container named gives its
//!   subcommands), `calls` and `histogram_usec`, the cumulative calls at each power of
//!   two of microseconds that holds some; unknown names are skipped.

use std::fmt::Write as _;

use super::{eq, Ctx};
use crate::acl::catalog;
use crate::latency::{self as l, Sample, Series};
use crate::resp::Writer;

/// Characters of a graph's line.
const WIDTH: usize = 80;
/// Rows of a graph's bars (each in two steps: `_` half, `#` whole).
const ROWS: usize = 4;

/// LATENCY LATEST | HISTORY event | RESET [event ...] | GRAPH event | DOCTOR |
/// HISTOGRAM [command ...] | HELP.
pub fn latency(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    let n = args.len();
    let fits = if eq(sub, "latest") || eq(sub, "doctor") || eq(sub, "help") {
        n == 2
    } else if eq(sub, "history") || eq(sub, "graph") {
        n == 3
    } else if eq(sub, "reset") || eq(sub, "histogram") {
        true
    } else {
        let name: String = String::from_utf8_lossy(sub).chars().take(128).collect();
        return w.error(&format!(
            "ERR unknown subcommand '{name}'. Try LATENCY HELP."
        ));
    };
    if !fits {
        return super::arity(w, format!("latency|{}", super::lower(sub)).as_bytes());
    }
    let monitor = &ctx.shared.latency;
    let now = wirespeed_util::time::unix_ms() / 1000;
    if eq(sub, "latest") {
        let events = monitor.events();
        w.array(events.len());
        for (name, s) in events {
            let last = s.latest();
            w.array(4);
            w.bulk(name.as_bytes());
            w.int(last.time as i64);
            w.int(last.ms as i64);
            w.int(s.max() as i64);
        }
    } else if eq(sub, "history") {
        let samples: Vec<Sample> = monitor
            .event(args[2])
            .map(|(_, s)| s.samples().collect())
            .unwrap_or_default();
        w.array(samples.len());
        for s in samples {
            w.array(2);
            w.int(s.time as i64);
            w.int(s.ms as i64);
        }
    } else if eq(sub, "reset") {
        w.int(monitor.reset(&args[2..]) as i64);
    } else if eq(sub, "graph") {
        match monitor.event(args[2]) {
            Some((name, s)) => w.verbatim(graph(name, &s, now).as_bytes()),
            None => w.error(&format!(
                "ERR No samples available for event '{}'",
                String::from_utf8_lossy(args[2])
                    .chars()
                    .take(128)
                    .collect::<String>()
            )),
        }
    } else if eq(sub, "doctor") {
        let report = doctor(monitor.threshold(), &monitor.events(), now);
        w.verbatim(report.as_bytes());
    } else if eq(sub, "histogram") {
        histogram(ctx, &args[2..], w);
    } else {
        super::help(
            w,
            &[
                "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "LATEST",
                "    For each event: its name, the time and latency of its newest sample,",
                "    and the highest latency it ever had.",
                "HISTORY <event>",
                "    The time and latency (ms) of each sample of <event>, oldest first.",
                "RESET [<event> ...]",
                "    Forget the samples of the <event>s named (all events without names).",
                "GRAPH <event>",
                "    A text chart of the samples of <event>.",
                "DOCTOR",
                "    A report on the events recorded and what may cause them.",
                "HISTOGRAM [<command> ...]",
                "    Per command (all without names): its calls and their cumulative",
                "    distribution over powers of two of microseconds.",
            ],
        );
    }
}

/// LATENCY HISTOGRAM's reply for the commands `names` (every command without).
fn histogram(ctx: &mut Ctx, names: &[&[u8]], w: &mut Writer) {
    let cat = catalog::catalog();
    let mut ids: Vec<u16> = Vec::new();
    if names.is_empty() {
        ids.extend(0..cat.entries().len() as u16);
    } else {
        // Each command once, in the order named (a name repeated adds nothing).
        let mut seen = vec![false; cat.entries().len()];
        for name in names {
            let Some(id) = cat.find(name) else {
                continue;
            };
            let e = cat.entry(id);
            for i in std::iter::once(id).chain(e.subs.clone()) {
                if !std::mem::replace(&mut seen[i as usize], true) {
                    ids.push(i);
                }
            }
        }
    }
    let totals = &ctx.shared.stats.histograms;
    let found: Vec<(u16, crate::state::histogram::Histogram)> = ids
        .into_iter()
        .map(|id| (id, totals.get(id, &ctx.stats.histograms)))
        .filter(|(_, h)| h.calls > 0)
        .collect();
    w.map(found.len());
    for (id, h) in found {
        w.bulk(cat.entry(id).name.as_bytes());
        w.map(2);
        w.bulk(b"calls");
        w.int(h.calls as i64);
        w.bulk(b"histogram_usec");
        let pairs = h.cumulative();
        w.map(pairs.len());
        for (usec, count) in pairs {
            w.int(usec as i64);
            w.int(count as i64);
        }
    }
}

/// The height of a bar for `ms` between `low` and `high`: 1 to `ROWS * 2`.
fn level(ms: u64, low: u64, high: u64) -> usize {
    if high <= low {
        return ROWS * 2;
    }
    1 + ((ms.saturating_sub(low)) * (ROWS as u64 * 2 - 1) / (high - low)) as usize
}

/// An age in its largest whole unit: `42s`, `5m`, `3h`, `2d`.
fn age(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// LATENCY GRAPH: a header with the kept samples' range and the all-time high, then
/// the samples as bars, [`WIDTH`] to a block, each bar's age written downwards under
/// it.
pub(crate) fn graph(event: &str, s: &Series, now: u64) -> String {
    let samples: Vec<Sample> = s.samples().collect();
    let high = samples.iter().map(|x| x.ms).max().unwrap_or(0);
    let low = samples.iter().map(|x| x.ms).min().unwrap_or(0);
    let mut out = format!(
        "{event} - high {high} ms, low {low} ms (all time high {} ms)\n{}\n",
        s.max(),
        "-".repeat(WIDTH)
    );
    let line = |out: &mut String, chars: &mut dyn Iterator<Item = char>| {
        let text: String = chars.collect();
        out.push_str(text.trim_end());
        out.push('\n');
    };
    for block in samples.chunks(WIDTH) {
        let levels: Vec<usize> = block.iter().map(|x| level(x.ms, low, high)).collect();
        for row in (0..ROWS).rev() {
            let mut bars = levels.iter().map(|&h| match h.saturating_sub(row * 2) {
                0 => ' ',
                1 => '_',
                _ => '#',
            });
            line(&mut out, &mut bars);
        }
        out.push('\n');
        let ages: Vec<Vec<char>> = block
            .iter()
            .map(|x| age(now.saturating_sub(x.time)).chars().collect())
            .collect();
        let depth = ages.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..depth {
            let mut chars = ages.iter().map(|a| a.get(i).copied().unwrap_or(' '));
            line(&mut out, &mut chars);
        }
        out.push('\n');
    }
    out
}

/// What an event's spikes usually come from on this server, and what to do.
fn advice(event: &str) -> &'static str {
    match event {
        l::COMMAND => "Slow commands (`command`): commands without the fast flag ran for the threshold or longer, and their event loop served nobody else meanwhile. SLOWLOG GET names them with their arguments. Commands over whole large values (KEYS, SMEMBERS, HGETALL, LRANGE 0 -1, SORT, unions and intersections of big sets, long scripts) take time in proportion to the value: prefer SCAN, SSCAN, HSCAN and ZSCAN, keep values smaller, or split the work into several calls.",
        l::FAST_COMMAND => "Fast commands (`fast-command`): commands that take constant or logarithmic time ran for the threshold or longer, so the time went elsewhere: the machine is short of CPU (other processes, a CPU quota, a busy neighbour on a shared host), the server's memory is being swapped out (compare used_memory_rss in INFO memory with the memory the machine has free), or the process was stopped. Look at the host before the workload.",
        l::EXPIRE_CYCLE => "Active expiry (`expire-cycle`): one round's sweep of keys past their deadline took the threshold or longer: many keys expire at the same moment, or large values are freed as they expire (a collection of millions of elements takes tens of milliseconds to free). Spread the deadlines (add some jitter to the TTLs), and remove large values with UNLINK, which frees them in the background, rather than letting them expire.",
        l::EVICTION_CYCLE | l::EVICTION_DEL => "Eviction (`eviction-cycle`, `eviction-del`): commands waited while keys were evicted to stay under maxmemory. Writes are adding memory faster than evicting one key at a time frees it, or the evicted values are large. Raise maxmemory, write less at once, or keep values smaller.",
        l::AOF_WRITE | l::AOF_WRITE_ALONE | l::AOF_WRITE_ACTIVE_CHILD | l::AOF_FSYNC_ALWAYS => "The append-only log (`aof-write`, `aof-fsync-always`): writing or syncing the log took the threshold or longer, and the replies to writes waited for it. The disk is slow or busy (check its latency with iostat -x). With appendfsync always every write waits for a sync: everysec bounds what a crash can lose to about a second and waits far less. A disk of its own for the log helps both.",
        l::AOF_REWRITE_DIFF_WRITE | l::AOF_RENAME => "The end of a log rewrite (`aof-rewrite-diff-write`, `aof-rename`): the changes made while the rewrite ran were written and synced, and the new log renamed over the old one, while writes waited. A slow disk makes this longer; so do many writes during the rewrite: run BGREWRITEAOF at quieter times.",
        _ => "This event is a moment of the server that took the threshold or longer; LATENCY HISTORY shows when.",
    }
}

/// LATENCY DOCTOR: the threshold, each event's samples summarized, then what to look
/// at for the kinds of events seen.
pub(crate) fn doctor(threshold: u64, events: &[(&'static str, Series)], now: u64) -> String {
    let mut out = String::new();
    if events.is_empty() {
        if threshold == 0 {
            out.push_str("Latency monitoring is off (latency-monitor-threshold is 0), so no latency events have been recorded.\n\nTurn it on with CONFIG SET latency-monitor-threshold <milliseconds>, choosing a value somewhat above the latency you expect from this server: every command, expiry sweep, eviction and log write that takes at least that long is then recorded, for LATENCY LATEST, HISTORY, GRAPH and this report.\n");
        } else {
            let _ = writeln!(out, "No latency event has reached the threshold of {threshold} ms since monitoring started or since the last LATENCY RESET: nothing to report.");
        }
        return out;
    }
    match threshold {
        0 => out.push_str("Latency monitoring is off now (latency-monitor-threshold is 0); these events were recorded while it was on.\n\n"),
        t => {
            let _ = writeln!(out, "Events that took {t} ms or more (latency-monitor-threshold), one sample a second at most, the last {} kept:\n", l::SAMPLES);
        }
    }
    for (i, (name, s)) in events.iter().enumerate() {
        let sum = s.summary(now);
        let _ = write!(
            out,
            "{}. {name}: {} sample{}, mean {:.0} ms (mean deviation {:.0} ms), from {} to {} ms, the worst ever {} ms",
            i + 1,
            sum.samples,
            if sum.samples == 1 { "" } else { "s" },
            sum.mean,
            sum.deviation,
            sum.low,
            sum.high,
            sum.max,
        );
        if sum.period > 0 {
            let _ = write!(out, "; about one every {} s", sum.period);
        }
        let last = now.saturating_sub(s.latest().time);
        let _ = writeln!(out, "; the newest {} ago.", age(last));
    }
    out.push_str("\nWhat to look at:\n");
    let mut said: Vec<&str> = Vec::new();
    for (name, _) in events {
        let a = advice(name);
        if !said.contains(&a) {
            said.push(a);
            let _ = writeln!(out, "\n- {a}");
        }
    }
    out.push_str("\nLATENCY GRAPH <event> draws an event's samples and LATENCY HISTORY <event> lists them; LATENCY RESET forgets them.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(samples: &[(u64, u64)]) -> Series {
        let mut s = Series::default();
        for &(t, ms) in samples {
            s.add(t, ms);
        }
        s
    }

    #[test]
    fn a_graph_scales_its_bars_and_dates_them() {
        let s = series(&[(1000, 300), (1001, 400), (1002, 500)]);
        let g = graph("command", &s, 1010);
        let lines: Vec<&str> = g.lines().collect();
        assert_eq!(
            lines[0],
            "command - high 500 ms, low 300 ms (all time high 500 ms)"
        );
        assert_eq!(lines[1], "-".repeat(WIDTH));
        // Four rows of bars, top first: the highest whole, the lowest a half step.
        assert_eq!(&lines[2..6], &["  #", "  #", " ##", "_##"]);
        assert_eq!(lines[6], "");
        // Ages 10 s, 9 s and 8 s, written downwards.
        assert_eq!(&lines[7..10], &["198", "0ss", "s"]);
    }

    #[test]
    fn a_graph_of_many_samples_comes_in_blocks() {
        let samples: Vec<(u64, u64)> = (0..100).map(|i| (10_000 + i, 50 + i)).collect();
        let g = graph("expire-cycle", &series(&samples), 10_200);
        assert!(g.starts_with("expire-cycle - high 149 ms, low 50 ms"));
        assert!(g.lines().all(|l| l.chars().count() <= WIDTH));
        // Two blocks of bars: 80 samples, then 20.
        let full_rows = g.lines().filter(|l| l.ends_with('#')).count();
        assert!(full_rows >= 2, "{g}");
        assert_eq!(age(59), "59s");
        assert_eq!(age(120), "2m");
        assert_eq!(age(7200), "2h");
        assert_eq!(age(3 * 86_400), "3d");
    }

    #[test]
    fn the_settings_parse_as_redis_and_load_from_a_file() {
        let mut c = crate::config::Config::default();
        assert_eq!((c.latency_threshold, c.latency_tracking), (0, true));
        c.set("latency-monitor-threshold", b"200").unwrap();
        c.set("LATENCY-TRACKING", b"No").unwrap();
        assert_eq!((c.latency_threshold, c.latency_tracking), (200, false));
        let p = c.params();
        assert!(p.contains(&("latency-monitor-threshold", "200".to_string())));
        assert!(p.contains(&("latency-tracking", "no".to_string())));
        let e = c.set("latency-monitor-threshold", b"-1").unwrap_err();
        assert!(e.contains("between 0 and"), "{e}");
        assert!(c.set("latency-monitor-threshold", b"soon").is_err());
        assert!(c.set("latency-tracking", b"maybe").is_err());
        assert_eq!(c.latency_threshold, 200, "a refused value changes nothing");
        let mut s = crate::server::ServerConfig::default();
        let warnings = crate::conf::apply(
            &mut s,
            "latency-monitor-threshold 25\nlatency-tracking no\n",
        )
        .unwrap();
        assert!(warnings.is_empty());
        assert_eq!(
            (s.cmd.latency_threshold, s.cmd.latency_tracking),
            (25, false)
        );
    }

    #[test]
    fn level_spans_the_rows() {
        assert_eq!(level(300, 300, 500), 1);
        assert_eq!(level(500, 300, 500), ROWS * 2);
        assert_eq!(level(7, 7, 7), ROWS * 2);
    }

    #[test]
    fn the_doctor_reports_each_event_and_advises_once_per_kind() {
        let off = doctor(0, &[], 100);
        assert!(off.contains("latency-monitor-threshold is 0"), "{off}");
        let quiet = doctor(100, &[], 100);
        assert!(quiet.contains("100 ms"), "{quiet}");
        let events = vec![
            ("aof-write", series(&[(90, 120)])),
            ("aof-write-alone", series(&[(90, 120)])),
            ("command", series(&[(10, 300), (50, 500)])),
        ];
        let r = doctor(100, &events, 100);
        assert!(r.contains("1. aof-write: 1 sample, mean 120 ms"), "{r}");
        assert!(r.contains("3. command: 2 samples, mean 400 ms (mean deviation 100 ms), from 300 to 500 ms, the worst ever 500 ms; about one every 45 s; the newest 50s ago."), "{r}");
        assert_eq!(r.matches("The append-only log").count(), 1, "{r}");
        assert!(r.contains("SLOWLOG GET"), "{r}");
    }
}

//! The latency monitor: the moments that can stall an event loop are timed while
//! `latency-monitor-threshold` (milliseconds) is above 0, and each that took at least
//! the threshold becomes a sample of its event. LATENCY LATEST, HISTORY, GRAPH, DOCTOR
//! and RESET read it (`crate::cmd::latency`).
//!
//! Events, with Redis's names where this server has the same moment:
//!
//! | event | moment |
//! |---|---|
//! | `command` | a command without the `fast` flag (its whole run, DEBUG SLEEP included) |
//! | `fast-command` | a command with the `fast` flag |
//! | `expire-cycle` | one round's step of the active expiry sweep (the keys it removes freed on the loop) |
//! | `eviction-cycle` | the evictions `maxmemory` makes before a command |
//! | `eviction-del` | one key's eviction among them |
//! | `aof-write` | a write of the append-only log (any loop's records, group commit) |
//! | `aof-write-alone`, `aof-write-active-child` | the same write, without / while a log rewrite runs |
//! | `aof-fsync-always` | the log's `fdatasync` under `appendfsync always` |
//! | `aof-rewrite-diff-write` | at the end of a rewrite: the changes made meanwhile written and synced |
//! | `aof-rename` | the rewritten log renamed over the old one (and its directory synced) |
//!
//! Each event keeps its last [`SAMPLES`] samples (time in seconds, latency in ms), at
//! most one per second (within a second the highest wins), and its all-time maximum.
//! Event names come from the server only (`&'static str`), never from clients, so the
//! table holds at most the events above: memory is bounded.
//!
//! Cost: while the threshold is 0 (the default), a timed moment costs one relaxed
//! atomic load ([`Monitor::start`]); samples are rare and take a mutex.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Samples one event keeps (Redis's `LATENCY_TS_LEN`).
pub const SAMPLES: usize = 160;

/// A command without the `fast` flag.
pub const COMMAND: &str = "command";
/// A command with the `fast` flag.
pub const FAST_COMMAND: &str = "fast-command";
/// A step of the active expiry sweep.
pub const EXPIRE_CYCLE: &str = "expire-cycle";
/// The evictions before a command.
pub const EVICTION_CYCLE: &str = "eviction-cycle";
/// One key's eviction.
pub const EVICTION_DEL: &str = "eviction-del";
/// A write of the log.
pub const AOF_WRITE: &str = "aof-write";
/// A write of the log while no rewrite runs.
pub const AOF_WRITE_ALONE: &str = "aof-write-alone";
/// A write of the log while a rewrite runs.
pub const AOF_WRITE_ACTIVE_CHILD: &str = "aof-write-active-child";
/// The log's sync under `appendfsync always`.
pub const AOF_FSYNC_ALWAYS: &str = "aof-fsync-always";
/// A rewrite's last step: the changes made meanwhile, written and synced.
pub const AOF_REWRITE_DIFF_WRITE: &str = "aof-rewrite-diff-write";
/// A rewrite's rename over the old log.
pub const AOF_RENAME: &str = "aof-rename";

/// One sample: when (seconds since the epoch; 0: an empty slot) and how long (ms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Seconds since the epoch.
    pub time: u64,
    /// Milliseconds.
    pub ms: u64,
}

/// The samples of one event: a ring of [`SAMPLES`], one per second, and the maximum.
#[derive(Clone, Debug)]
pub struct Series {
    ring: [Sample; SAMPLES],
    /// Where the next second's sample goes.
    next: usize,
    max: u64,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            ring: [Sample::default(); SAMPLES],
            next: 0,
            max: 0,
        }
    }
}

impl Series {
    /// Adds `ms` at `time`: the second's sample keeps the highest of that second.
    pub fn add(&mut self, time: u64, ms: u64) {
        self.max = self.max.max(ms);
        let last = &mut self.ring[(self.next + SAMPLES - 1) % SAMPLES];
        if last.time == time && time != 0 {
            last.ms = last.ms.max(ms);
            return;
        }
        self.ring[self.next] = Sample { time, ms };
        self.next = (self.next + 1) % SAMPLES;
    }

    /// The samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = Sample> + '_ {
        (0..SAMPLES)
            .map(move |i| self.ring[(self.next + i) % SAMPLES])
            .filter(|s| s.time != 0)
    }

    /// The newest sample.
    pub fn latest(&self) -> Sample {
        self.ring[(self.next + SAMPLES - 1) % SAMPLES]
    }

    /// The highest latency since the event was first recorded (or reset).
    pub fn max(&self) -> u64 {
        self.max
    }
}

/// The events' samples and the threshold, shared by the loops and the log.
#[derive(Debug, Default)]
pub struct Monitor {
    /// `latency-monitor-threshold`, ms (0: off).
    threshold: AtomicU64,
    events: Mutex<BTreeMap<&'static str, Series>>,
}

impl Monitor {
    /// A monitor recording from `threshold_ms` (0: off).
    pub fn new(threshold_ms: u64) -> Monitor {
        Monitor {
            threshold: AtomicU64::new(threshold_ms),
            events: Mutex::default(),
        }
    }

    /// Changes the threshold (CONFIG SET, through the settings' update).
    pub fn set_threshold(&self, ms: u64) {
        self.threshold.store(ms, Ordering::Relaxed);
    }

    /// The threshold in ms (0: off).
    #[inline]
    pub fn threshold(&self) -> u64 {
        self.threshold.load(Ordering::Relaxed)
    }

    /// The start of a timed moment: None while monitoring is off.
    #[inline]
    pub fn start(&self) -> Option<Instant> {
        (self.threshold() > 0).then(Instant::now)
    }

    /// The end of a moment [`Monitor::start`] began: a sample of `event` if it took
    /// the threshold or more.
    #[inline]
    pub fn end(&self, started: Option<Instant>, event: &'static str) {
        if let Some(t) = started {
            self.add_if_needed(event, t.elapsed().as_millis() as u64);
        }
    }

    /// A sample of `event` (now) if `ms` reaches the threshold (and it is not 0).
    pub fn add_if_needed(&self, event: &'static str, ms: u64) {
        let threshold = self.threshold();
        if threshold > 0 && ms >= threshold {
            self.add(event, ms, wirespeed_util::time::unix_ms() / 1000);
        }
    }

    /// A sample of `event` at `time` (seconds since the epoch).
    pub fn add(&self, event: &'static str, ms: u64, time: u64) {
        self.lock().entry(event).or_default().add(time, ms);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, Series>> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every event with samples, by name.
    pub fn events(&self) -> Vec<(&'static str, Series)> {
        self.lock().iter().map(|(k, v)| (*k, v.clone())).collect()
    }

    /// The samples of the event named `name` (any bytes: unknown names have none).
    pub fn event(&self, name: &[u8]) -> Option<(&'static str, Series)> {
        let events = self.lock();
        events
            .iter()
            .find(|(k, _)| k.as_bytes() == name)
            .map(|(k, v)| (*k, v.clone()))
    }

    /// Forgets the events named in `names` (every event when empty); returns how many
    /// it forgot.
    pub fn reset(&self, names: &[&[u8]]) -> usize {
        let mut events = self.lock();
        if names.is_empty() {
            let n = events.len();
            events.clear();
            return n;
        }
        let before = events.len();
        events.retain(|k, _| !names.contains(&k.as_bytes()));
        before - events.len()
    }
}

/// What one event's samples say (LATENCY DOCTOR).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Samples kept.
    pub samples: usize,
    /// Their mean, ms.
    pub mean: f64,
    /// Their mean absolute deviation from the mean, ms.
    pub deviation: f64,
    /// The lowest and highest kept, ms.
    pub low: u64,
    /// See `low`.
    pub high: u64,
    /// The highest ever, ms.
    pub max: u64,
    /// Seconds between spikes on average, over the span from the first kept sample to
    /// `now` (0 with one sample).
    pub period: u64,
}

impl Series {
    /// The summary of the samples kept, as of `now` (seconds since the epoch).
    pub fn summary(&self, now: u64) -> Summary {
        let all: Vec<Sample> = self.samples().collect();
        if all.is_empty() {
            return Summary {
                max: self.max,
                ..Summary::default()
            };
        }
        let n = all.len();
        let mean = all.iter().map(|s| s.ms as f64).sum::<f64>() / n as f64;
        let deviation = all.iter().map(|s| (s.ms as f64 - mean).abs()).sum::<f64>() / n as f64;
        let first = all.iter().map(|s| s.time).min().unwrap_or(now);
        Summary {
            samples: n,
            mean,
            deviation,
            low: all.iter().map(|s| s.ms).min().unwrap_or(0),
            high: all.iter().map(|s| s.ms).max().unwrap_or(0),
            max: self.max,
            period: if n > 1 {
                now.saturating_sub(first) / n as u64
            } else {
                0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_per_second_the_highest_wins() {
        let mut s = Series::default();
        s.add(100, 30);
        s.add(100, 50);
        s.add(100, 40);
        s.add(101, 10);
        let got: Vec<Sample> = s.samples().collect();
        assert_eq!(
            got,
            vec![Sample { time: 100, ms: 50 }, Sample { time: 101, ms: 10 }]
        );
        assert_eq!(s.latest(), Sample { time: 101, ms: 10 });
        assert_eq!(s.max(), 50);
    }

    #[test]
    fn the_ring_keeps_the_last_samples_and_the_all_time_max() {
        let mut s = Series::default();
        s.add(1, 1000);
        for t in 2..=(SAMPLES as u64 + 10) {
            s.add(t, t);
        }
        let got: Vec<Sample> = s.samples().collect();
        assert_eq!(got.len(), SAMPLES);
        assert_eq!(got[0].time, 11, "oldest first");
        assert_eq!(got[SAMPLES - 1].time, SAMPLES as u64 + 10);
        assert_eq!(s.max(), 1000, "the maximum outlives its sample");
    }

    #[test]
    fn the_threshold_decides_and_zero_is_off() {
        let m = Monitor::new(0);
        assert!(m.start().is_none());
        m.add_if_needed(COMMAND, 1_000);
        assert!(m.events().is_empty());
        m.set_threshold(100);
        m.add_if_needed(COMMAND, 99);
        assert!(m.events().is_empty());
        m.add_if_needed(COMMAND, 100);
        m.add_if_needed(EXPIRE_CYCLE, 250);
        let names: Vec<&str> = m.events().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, vec![COMMAND, EXPIRE_CYCLE]);
        assert_eq!(m.event(b"command").unwrap().1.latest().ms, 100);
        assert!(m.event(b"nosuchevent").is_none());
    }

    #[test]
    fn reset_forgets_named_or_all_events() {
        let m = Monitor::new(1);
        m.add(COMMAND, 5, 10);
        m.add(FAST_COMMAND, 5, 10);
        m.add(EXPIRE_CYCLE, 5, 10);
        assert_eq!(m.reset(&[b"blabla"]), 0);
        assert_eq!(m.reset(&[b"command", b"command", b"blabla"]), 1);
        assert_eq!(m.events().len(), 2);
        assert_eq!(m.reset(&[]), 2);
        assert!(m.events().is_empty());
    }

    #[test]
    fn a_summary_of_the_samples() {
        let mut s = Series::default();
        for (t, ms) in [(100, 10), (110, 20), (120, 30)] {
            s.add(t, ms);
        }
        let sum = s.summary(130);
        assert_eq!(sum.samples, 3);
        assert!((sum.mean - 20.0).abs() < 1e-9);
        assert!((sum.deviation - 20.0 / 3.0).abs() < 1e-9);
        assert_eq!((sum.low, sum.high, sum.max), (10, 30, 30));
        assert_eq!(sum.period, 10);
    }
}

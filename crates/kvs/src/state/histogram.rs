//! Per-command latency histograms for LATENCY HISTOGRAM and INFO latencystats's
//! percentiles (`latency-tracking yes`, the default), by command and subcommand
//! (`client|list`: the ids of `crate::acl::catalog`).
//!
//! Buckets follow Redis's reply: powers of two of nanoseconds from 2^10 (about 1 µs)
//! to 2^30 (about 1.07 s; longer calls count there), each named by the highest
//! microsecond value it holds as Redis's 2-significant-digit HDR histogram reports it
//! (1, 2, 4, 8, 16, 33, 66, 132, ... 541065, 1073741); the reply gives the cumulative
//! count at each bucket that holds calls.
//!
//! Like INFO commandstats (`crate::state::cmdstats`), a loop counts into its own
//! [`Local`] and adds it to the shared [`Totals`] once a round. Every call is counted;
//! the time of a `fast` command is measured one call in 16 (unless the slow log's or
//! the latency monitor's threshold times every call), so for those the buckets hold
//! the measured calls and the reply scales them to the call count: `calls` is exact,
//! the distribution an estimate from a 1-in-16 sample.

use std::sync::atomic::{AtomicU64, Ordering};

/// Ids counted (commands and subcommands; the catalog checks it has fewer).
pub const MAX_IDS: usize = crate::acl::catalog::WORDS * 64;

/// Buckets: 2^10 to 2^30 ns.
pub const BUCKETS: usize = 21;

/// The smallest power of two a bucket stands for.
const LOW_POWER: u32 = 10;

/// The bucket of a call that took `ns` nanoseconds: the first power of two 2^k
/// (k from 10 to 30) whose HDR equivalence range (2^k plus 2^(k-7), at two
/// significant digits) reaches it.
pub fn bucket(ns: u64) -> usize {
    let v = ns.clamp(1, 1_000_000_000);
    let mut k = 64 - (v - 1).leading_zeros();
    if k > LOW_POWER && v < (1 << (k - 1)) + (1 << (k - 8)) {
        k -= 1;
    }
    (k.clamp(LOW_POWER, LOW_POWER + BUCKETS as u32 - 1) - LOW_POWER) as usize
}

/// The name of bucket `b` in the reply: the highest microsecond value it holds.
pub fn bucket_usec(b: usize) -> u64 {
    let k = LOW_POWER + b as u32;
    if b + 1 == BUCKETS {
        // The last bucket ends at the histogram's limit.
        return (1u64 << k) / 1000;
    }
    ((1u64 << k) + (1u64 << (k - 7)) - 1) / 1000
}

/// The counts of one command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Calls.
    pub calls: u64,
    /// Measured calls by bucket.
    pub timed: [u64; BUCKETS],
}

impl Histogram {
    /// The reply's pairs: (bucket's µs, cumulative calls) for each bucket that adds
    /// calls, the counts scaled from the measured calls to `calls`.
    pub fn cumulative(&self) -> Vec<(u64, u64)> {
        let measured: u64 = self.timed.iter().sum();
        let mut out = Vec::new();
        if measured == 0 {
            return out;
        }
        let (mut sum, mut last) = (0u64, 0u64);
        for (b, &n) in self.timed.iter().enumerate() {
            sum += n;
            let scaled = if measured == self.calls {
                sum
            } else {
                ((sum as u128 * self.calls as u128 + measured as u128 / 2) / measured as u128)
                    as u64
            };
            if scaled > last {
                out.push((bucket_usec(b), scaled));
                last = scaled;
            }
        }
        out
    }

    /// The latency at percentile `p` (0 to 100) of the measured calls, in
    /// microseconds, as Redis's INFO latencystats takes it from its HDR histogram
    /// (`hdr_value_at_percentile`): the highest value of the first bucket whose
    /// cumulative count reaches `p`% of the calls (rounded, at least one), or for 0 the
    /// lowest value of the first bucket with calls. None without measured calls. The
    /// buckets are powers of two, so the value is a bucket's bound (Redis's histogram
    /// has finer buckets).
    pub fn percentile_usec(&self, p: f64) -> Option<f64> {
        let measured: u64 = self.timed.iter().sum();
        if measured == 0 {
            return None;
        }
        let want = ((p.min(100.0) / 100.0 * measured as f64 + 0.5) as u64).max(1);
        let mut sum = 0;
        let b = self.timed.iter().position(|&n| {
            sum += n;
            sum >= want
        })?;
        let ns = if p == 0.0 {
            if b == 0 {
                1
            } else {
                bucket_high_ns(b - 1) + 1
            }
        } else {
            bucket_high_ns(b)
        };
        Some(ns as f64 / 1000.0)
    }
}

/// The highest time bucket `b` holds, in nanoseconds.
fn bucket_high_ns(b: usize) -> u64 {
    let k = LOW_POWER + b as u32;
    if b + 1 == BUCKETS {
        return 1 << k;
    }
    (1u64 << k) + (1u64 << (k - 7)) - 1
}

/// A loop's counts not yet added to the totals.
#[derive(Clone, Debug, Default)]
pub struct Local {
    rows: Vec<Histogram>,
    /// Ids counted since the last [`Totals::add`].
    touched: Vec<u16>,
}

impl Local {
    /// A call of command `id` (a catalog id), that took `ns` when it was measured.
    #[inline]
    pub fn record(&mut self, id: u16, ns: Option<u64>) {
        let i = id as usize;
        if i >= MAX_IDS {
            return;
        }
        if self.rows.len() <= i {
            self.rows.resize(MAX_IDS, Histogram::default());
        }
        let h = &mut self.rows[i];
        if h.calls == 0 {
            self.touched.push(id);
        }
        h.calls += 1;
        if let Some(ns) = ns {
            h.timed[bucket(ns)] += 1;
        }
    }
}

/// The totals of every loop.
#[derive(Debug)]
pub struct Totals {
    /// Per id: the calls, then the measured calls by bucket.
    rows: Box<[[AtomicU64; BUCKETS + 1]]>,
}

impl Default for Totals {
    fn default() -> Totals {
        Totals {
            rows: (0..MAX_IDS)
                .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
        }
    }
}

impl Totals {
    /// Adds a loop's counts and zeroes them.
    pub fn add(&self, local: &mut Local) {
        for id in local.touched.drain(..) {
            let i = id as usize;
            let h = std::mem::take(&mut local.rows[i]);
            let row = &self.rows[i];
            row[0].fetch_add(h.calls, Ordering::Relaxed);
            for (a, &n) in row[1..].iter().zip(&h.timed) {
                if n != 0 {
                    a.fetch_add(n, Ordering::Relaxed);
                }
            }
        }
    }

    /// The counts of command `id`, with a loop's own not yet added.
    pub fn get(&self, id: u16, local: &Local) -> Histogram {
        let i = id as usize;
        let Some(row) = self.rows.get(i) else {
            return Histogram::default();
        };
        let mut h = local.rows.get(i).copied().unwrap_or_default();
        h.calls += row[0].load(Ordering::Relaxed);
        for (t, a) in h.timed.iter_mut().zip(&row[1..]) {
            *t += a.load(Ordering::Relaxed);
        }
        h
    }

    /// CONFIG RESETSTAT.
    pub fn reset(&self) {
        for r in self.rows.iter() {
            for a in r {
                a.store(0, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_named_as_redis_reports_them() {
        // What redis-server 7.0 answers for DEBUG SLEEP calls of these lengths.
        let names: Vec<u64> = (0..BUCKETS).map(bucket_usec).collect();
        assert_eq!(&names[..8], &[1, 2, 4, 8, 16, 33, 66, 132]);
        assert_eq!(names[8], 264);
        assert_eq!(names[9], 528);
        assert_eq!(names[11], 2113);
        assert_eq!(names[14], 16908);
        assert_eq!(names[19], 541065);
        assert_eq!(names[20], 1073741);
    }

    #[test]
    fn a_time_falls_in_the_first_bucket_that_reaches_it() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1_031), 0);
        assert_eq!(bucket(1_032), 1);
        assert_eq!(bucket(2_063), 1);
        assert_eq!(bucket(2_064), 2);
        // 0.3 s and 0.1 s: Redis's 541065 and 135266.
        assert_eq!(bucket_usec(bucket(300_000_000)), 541065);
        assert_eq!(bucket_usec(bucket(100_000_000)), 135266);
        // Longer than the histogram's limit: the last bucket.
        assert_eq!(bucket(5_000_000_000), BUCKETS - 1);
        for b in 0..BUCKETS {
            let top = bucket_usec(b) * 1000;
            assert!(bucket(top) <= b, "bucket {b}");
        }
    }

    #[test]
    fn counts_add_up_across_loops_and_reset() {
        let totals = Totals::default();
        let mut a = Local::default();
        let mut b = Local::default();
        a.record(7, Some(500));
        a.record(7, Some(3_000));
        b.record(7, Some(500));
        b.record(9, None);
        totals.add(&mut a);
        let h = totals.get(7, &b);
        assert_eq!(h.calls, 3);
        assert_eq!(h.cumulative(), vec![(1, 2), (4, 3)]);
        assert_eq!(totals.get(7, &a).calls, 2, "added once");
        // Calls without a measurement: counted, no distribution yet.
        assert_eq!(totals.get(9, &b).calls, 1);
        assert!(totals.get(9, &b).cumulative().is_empty());
        totals.reset();
        assert_eq!(totals.get(7, &Local::default()), Histogram::default());
        assert_eq!(totals.get(MAX_IDS as u16, &a), Histogram::default());
    }

    #[test]
    fn percentiles_are_read_as_redis_reads_its_histogram() {
        let mut h = Histogram::default();
        assert_eq!(h.percentile_usec(50.0), None);
        // 3 calls of about 6 µs, one of 12 µs, sampled (calls counts all 64 of them).
        h.calls = 64;
        h.timed[bucket(6_000)] = 3;
        h.timed[bucket(12_000)] = 1;
        assert_eq!(h.percentile_usec(50.0), Some(8.255));
        assert_eq!(h.percentile_usec(75.0), Some(8.255));
        assert_eq!(h.percentile_usec(99.0), Some(16.511));
        assert_eq!(h.percentile_usec(100.0), Some(16.511));
        assert_eq!(h.percentile_usec(250.0), Some(16.511));
        // 0: the low end of the first bucket with calls.
        assert_eq!(h.percentile_usec(0.0), Some(4.128));
        // Each bucket's reported value is in that bucket.
        for b in 0..BUCKETS {
            let mut one = Histogram::default();
            one.timed[b] = 1;
            let hi = (one.percentile_usec(50.0).unwrap() * 1000.0).round() as u64;
            let lo = (one.percentile_usec(0.0).unwrap() * 1000.0).round() as u64;
            assert_eq!((bucket(hi), bucket(lo)), (b, b), "bucket {b}");
            assert!(lo <= hi);
        }
    }

    #[test]
    fn a_sampled_distribution_is_scaled_to_the_calls() {
        let mut h = Histogram {
            calls: 32,
            ..Histogram::default()
        };
        h.timed[0] = 1;
        h.timed[3] = 1;
        assert_eq!(h.cumulative(), vec![(1, 16), (8, 32)]);
    }
}

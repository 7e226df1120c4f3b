//! Per-command counters for INFO commandstats: calls, time, and the calls refused
//! before they ran (`rejected_calls`: arity, authentication, `maxmemory`, a failing
//! log) or that answered an error (`failed_calls`), by row of the command table
//! (`crate::cmd::table`; the INFO section that names them is `crate::cmd::server`).
//!
//! A loop counts into its own [`Local`] and adds it to the shared [`Totals`] once a
//! round (no shared cache line written per command). Time: commands without the
//! `fast` flag are timed every call; fast ones one call in 16, counted 16 times, so
//! `usec` of a fast command is an estimate (two clock readings per GET would cost a
//! tenth of its time). A blocked command counts once: when it is served, times out,
//! or is unblocked.

use std::sync::atomic::{AtomicU64, Ordering};

/// Rows counted (the command table has fewer; it checks so when compiled).
pub const MAX_ROWS: usize = 512;

/// The counters of one command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Calls that ran.
    pub calls: u64,
    /// Microseconds spent in them (an estimate for fast commands, see the module note).
    pub usec: u64,
    /// Calls refused before they ran.
    pub rejected: u64,
    /// Calls that ran and answered an error.
    pub failed: u64,
}

/// A loop's counts not yet added to the totals.
#[derive(Clone, Debug, Default)]
pub struct Local {
    counts: Vec<Counts>,
    /// Rows counted since the last [`Totals::add`].
    touched: Vec<u16>,
    tick: u32,
}

impl Local {
    fn slot(&mut self, i: usize) -> &mut Counts {
        if self.counts.len() <= i {
            self.counts.resize(MAX_ROWS, Counts::default());
        }
        if self.counts[i] == Counts::default() {
            self.touched.push(i as u16);
        }
        &mut self.counts[i]
    }

    /// Whether to time this call of a command (every call of a slow one, one call in
    /// 16 of a `fast` one), and the weight of its time.
    pub fn timing(&mut self, fast: bool) -> Option<u64> {
        if !fast {
            return Some(1);
        }
        self.tick = self.tick.wrapping_add(1);
        self.tick.is_multiple_of(16).then_some(16)
    }

    /// A call of the command of row `row` that ran.
    pub fn ran(&mut self, row: usize, usec: u64, failed: bool) {
        let c = self.slot(row);
        c.calls += 1;
        c.usec += usec;
        c.failed += failed as u64;
    }

    /// A call of the command of row `row` refused before it ran.
    pub fn rejected(&mut self, row: usize) {
        self.slot(row).rejected += 1;
    }
}

/// The totals of every loop.
#[derive(Debug)]
pub struct Totals {
    rows: Box<[[AtomicU64; 4]]>,
}

impl Default for Totals {
    fn default() -> Totals {
        Totals {
            rows: (0..MAX_ROWS).map(|_| Default::default()).collect(),
        }
    }
}

impl Totals {
    /// Adds a loop's counts and zeroes them.
    pub fn add(&self, local: &mut Local) {
        for i in local.touched.drain(..) {
            let i = i as usize;
            let c = std::mem::take(&mut local.counts[i]);
            let row = &self.rows[i];
            for (a, n) in row.iter().zip([c.calls, c.usec, c.rejected, c.failed]) {
                if n != 0 {
                    a.fetch_add(n, Ordering::Relaxed);
                }
            }
        }
    }

    /// One call of the command of row `row` that ran outside a loop's counting (a
    /// blocked client's time ran out).
    pub fn ran(&self, row: usize) {
        self.rows[row][0].fetch_add(1, Ordering::Relaxed);
    }

    /// The counts of row `i`, with a loop's own not yet added.
    pub fn get(&self, i: usize, local: &Local) -> Counts {
        let r = &self.rows[i];
        let l = local.counts.get(i).copied().unwrap_or_default();
        let g = |k: usize| r[k].load(Ordering::Relaxed);
        Counts {
            calls: g(0) + l.calls,
            usec: g(1) + l.usec,
            rejected: g(2) + l.rejected,
            failed: g(3) + l.failed,
        }
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

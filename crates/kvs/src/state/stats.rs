//! INFO's counters: each loop counts in a plain [`Stats`] and adds it to the shared
//! [`SharedStats`] once per round.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Counters for INFO (a loop's own, until added to the shared ones; the totals).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Commands executed.
    pub commands: u64,
    /// Per command (INFO commandstats).
    pub per_command: super::cmdstats::Local,
    /// Per command and subcommand latency histograms (LATENCY HISTOGRAM).
    pub histograms: super::histogram::Local,
    /// Connections accepted.
    pub connections: u64,
    /// Keys removed by expiry.
    pub expired: u64,
    /// Successful key lookups.
    pub hits: u64,
    /// Failed key lookups.
    pub misses: u64,
    /// Keys evicted by maxmemory.
    pub evicted: u64,
    /// Clients connected now.
    pub connected: u64,
    /// Server start, ms since the epoch.
    pub started_ms: u64,
    /// Error replies counted by the commands that ran (so the request's own check
    /// does not count them again).
    pub errors_seen: u64,
    /// Write commands that succeeded since the last round (added to
    /// [`crate::snapshot::RdbState::dirty`] at its end).
    pub dirty: u64,
}

/// Counters for INFO, added to by every loop.
#[derive(Debug, Default)]
pub struct SharedStats {
    commands: AtomicU64,
    connections: AtomicU64,
    expired: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    evicted: AtomicU64,
    connected: AtomicU64,
    started_ms: u64,
    /// Bytes allocated for the clients' query and reply buffers (their capacities), as
    /// of each loop's last round: INFO `mem_clients_normal`, part of `used_memory` and
    /// of what `maxmemory` limits.
    client_buffers: AtomicUsize,
    /// Clients closed for passing `client-output-buffer-limit`.
    output_limit_kills: AtomicU64,
    /// Per command (INFO commandstats).
    pub per_command: super::cmdstats::Totals,
    /// Per command and subcommand latency histograms (LATENCY HISTOGRAM).
    pub histograms: super::histogram::Totals,
    /// Error replies by their code (INFO errorstats): at most [`ERROR_CODES`] codes.
    errors: std::sync::Mutex<std::collections::BTreeMap<Box<str>, u64>>,
    /// Error replies (INFO `total_error_replies`).
    error_replies: AtomicU64,
}

/// The most error codes INFO errorstats keeps apart (as Redis, so a client cannot
/// grow the table by inventing codes: script errors may carry any).
pub const ERROR_CODES: usize = 128;

impl SharedStats {
    /// Counters of a server started at `started_ms` (ms since the epoch).
    pub fn new(started_ms: u64) -> SharedStats {
        SharedStats {
            started_ms,
            ..SharedStats::default()
        }
    }

    /// Adds a loop's counts and zeroes them.
    pub fn add(&self, local: &mut Stats) {
        for (total, n) in [
            (&self.commands, local.commands),
            (&self.expired, local.expired),
            (&self.hits, local.hits),
            (&self.misses, local.misses),
            (&self.evicted, local.evicted),
        ] {
            if n != 0 {
                total.fetch_add(n, Ordering::Relaxed);
            }
        }
        self.per_command.add(&mut local.per_command);
        self.histograms.add(&mut local.histograms);
        let per_command = std::mem::take(&mut local.per_command);
        let histograms = std::mem::take(&mut local.histograms);
        // The writes stay for the round's end (the RDB schedule's count).
        *local = Stats {
            per_command,
            histograms,
            dirty: local.dirty,
            ..Stats::default()
        };
    }

    /// The totals, with a loop's counts not yet added (`local`).
    pub fn total(&self, local: &Stats) -> Stats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            commands: get(&self.commands) + local.commands,
            connections: get(&self.connections),
            expired: get(&self.expired) + local.expired,
            hits: get(&self.hits) + local.hits,
            misses: get(&self.misses) + local.misses,
            evicted: get(&self.evicted) + local.evicted,
            connected: get(&self.connected),
            started_ms: self.started_ms,
            per_command: Default::default(),
            histograms: Default::default(),
            errors_seen: 0,
            dirty: 0,
        }
    }

    /// Counts an error reply whose code (the first word, `ERR`, `WRONGTYPE`, ...) is
    /// `code`.
    pub fn error(&self, code: &[u8]) {
        self.error_replies.fetch_add(1, Ordering::Relaxed);
        let code = String::from_utf8_lossy(code);
        let mut m = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&*code) {
            *n += 1;
        } else if m.len() < ERROR_CODES {
            m.insert(code.into(), 1);
        }
    }

    /// The error replies since the start (or CONFIG RESETSTAT), and their counts by
    /// code.
    pub fn errors(&self) -> (u64, Vec<(String, u64)>) {
        let m = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        (
            self.error_replies.load(Ordering::Relaxed),
            m.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        )
    }

    /// CONFIG RESETSTAT: every counter but the connected clients and the start time.
    pub fn reset(&self) {
        self.error_replies.store(0, Ordering::Relaxed);
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        for a in [
            &self.commands,
            &self.connections,
            &self.expired,
            &self.hits,
            &self.misses,
            &self.evicted,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.per_command.reset();
        self.histograms.reset();
    }

    /// Adds a change of the clients' buffer capacities (`before` to `after` bytes).
    pub fn client_buffers_changed(&self, before: usize, after: usize) {
        if after > before {
            self.client_buffers
                .fetch_add(after - before, Ordering::Relaxed);
        } else if after < before {
            self.client_buffers
                .fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    /// Bytes held by the clients' query and reply buffers.
    pub fn client_buffers(&self) -> usize {
        self.client_buffers.load(Ordering::Relaxed)
    }

    /// A client closed for passing `client-output-buffer-limit`.
    pub fn output_limit_kill(&self) {
        self.output_limit_kills.fetch_add(1, Ordering::Relaxed);
    }

    /// Clients closed for passing `client-output-buffer-limit` since the start.
    pub fn output_limit_kills(&self) -> u64 {
        self.output_limit_kills.load(Ordering::Relaxed)
    }

    /// Clients accepted.
    pub fn connected(&self, n: u64) {
        if n > 0 {
            self.connections.fetch_add(n, Ordering::Relaxed);
            self.connected.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Clients gone.
    pub fn disconnected(&self, n: u64) {
        if n > 0 {
            self.connected.fetch_sub(n, Ordering::Relaxed);
        }
    }
}

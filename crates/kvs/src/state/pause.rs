//! The server's pause (CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as in Redis
//! 7.0; the commands are `crate::cmd::pause`).
//!
//! While a pause lasts, a client's next command is held, unanswered and not run, when
//! the pause is ALL (every command, CLIENT UNPAUSE and the pausing client's own
//! included), or when it is WRITE and the command may change the dataset: a write
//! command (also inside MULTI, where it is held before it is queued), EVAL, EVALSHA and
//! FCALL (not their `_RO` forms), PUBLISH, SPUBLISH, PFCOUNT, and an EXEC whose queue
//! holds such a command. Reads go on under WRITE. A held client runs nothing more of
//! its input until the pause ends (its timeout, or CLIENT UNPAUSE), then its commands
//! run in order. Held clients count in INFO `blocked_clients`. A MONITOR client is
//! never held (Redis treats it as a replica).
//!
//! Pauses combine as in Redis: a new one keeps the more restrictive mode and the later
//! end of the two. The active expiry sweep stops during a pause (keys past their time
//! that no command reads stay until it ends).
//!
//! The state is two atomics in the server's state: a command costs one load
//! while no pause is set. A loop keeps its held connections in a list, runs them again
//! once the pause is over, and sleeps no longer than the pause's end; CLIENT UNPAUSE
//! wakes every loop.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

/// No pause.
const NONE: u8 = 0;
/// Writes are held.
pub(crate) const WRITES: u8 = 1;
/// Every command is held.
pub(crate) const ALL: u8 = 2;

/// The server's pause.
#[derive(Debug, Default)]
pub struct Pause {
    /// NONE, WRITES or ALL (read once per command).
    mode: AtomicU8,
    /// When it ends, ms since the epoch.
    end: AtomicU64,
    /// Clients held now (INFO `blocked_clients`).
    held: AtomicUsize,
    /// Serializes changes.
    change: Mutex<()>,
}

impl Pause {
    /// True while a pause is set (it may have just run out): one atomic load.
    #[inline]
    pub fn on(&self) -> bool {
        self.mode.load(Ordering::Acquire) != NONE
    }

    /// The mode in force at `now` (NONE once the end has passed, which clears it).
    fn mode(&self, now: u64) -> u8 {
        let mode = self.mode.load(Ordering::Acquire);
        if mode != NONE && now >= self.end.load(Ordering::Acquire) {
            let _g = self.change.lock().unwrap_or_else(|p| p.into_inner());
            if now >= self.end.load(Ordering::Acquire) {
                self.mode.store(NONE, Ordering::Release);
            }
            return self.mode.load(Ordering::Acquire);
        }
        mode
    }

    /// True while a pause is in force at `now` (the expiry sweep waits).
    pub fn active(&self, now: u64) -> bool {
        self.on() && self.mode(now) != NONE
    }

    /// Milliseconds from `now` to the pause's end (0 when none).
    pub fn left(&self, now: u64) -> u64 {
        if self.mode(now) == NONE {
            return 0;
        }
        self.end.load(Ordering::Acquire).saturating_sub(now)
    }

    pub(crate) fn set(&self, mode: u8, end: u64) {
        let _g = self.change.lock().unwrap_or_else(|p| p.into_inner());
        let now_mode = self.mode.load(Ordering::Acquire);
        if now_mode == NONE {
            self.end.store(end, Ordering::Release);
        } else {
            self.end.fetch_max(end, Ordering::AcqRel);
        }
        self.mode.store(now_mode.max(mode), Ordering::Release);
    }

    /// Holds writes until `end` (ms since the epoch), as CLIENT PAUSE WRITE does: a
    /// manual cluster failover's primary while its replica catches up.
    pub fn pause_writes(&self, end: u64) {
        self.set(WRITES, end);
    }

    /// Ends the pause (as CLIENT UNPAUSE; the caller wakes the loops).
    pub fn clear(&self) {
        let _g = self.change.lock().unwrap_or_else(|p| p.into_inner());
        self.mode.store(NONE, Ordering::Release);
        self.end.store(0, Ordering::Release);
    }

    /// Whether a request waits for the pause to end at `now`: `monitor` for a MONITOR
    /// client (never held), `may_write` says whether the request may change the
    /// dataset (asked only under a WRITE pause). Call only when [`Pause::on`].
    pub(crate) fn holds(&self, monitor: bool, may_write: impl FnOnce() -> bool, now: u64) -> bool {
        match self.mode(now) {
            ALL => !monitor,
            WRITES => !monitor && may_write(),
            _ => false,
        }
    }

    /// A client is held (`true`) or let go (`false`).
    pub(crate) fn count(&self, held: bool) {
        if held {
            self.held.fetch_add(1, Ordering::AcqRel);
        } else {
            self.held.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Clients held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }
}

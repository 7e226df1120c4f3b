//! The clients in MONITOR mode (the command and the lines they get: `crate::cmd::monitor`):
//! a command costs one atomic load while none is attached.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The clients in MONITOR mode.
#[derive(Debug, Default)]
pub struct Monitors {
    /// How many (read once per command).
    count: AtomicUsize,
    ids: Mutex<Vec<u64>>,
}

impl Monitors {
    /// True when some client monitors (one atomic load).
    #[inline]
    pub fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) != 0
    }

    pub(crate) fn ids(&self) -> std::sync::MutexGuard<'_, Vec<u64>> {
        self.ids.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn add(&self, id: u64) {
        let mut ids = self.ids();
        if !ids.contains(&id) {
            ids.push(id);
            self.count.store(ids.len(), Ordering::Release);
        }
    }

    /// Client `id` stops monitoring (RESET, or its connection closed).
    pub fn remove(&self, id: u64) {
        let mut ids = self.ids();
        ids.retain(|&x| x != id);
        self.count.store(ids.len(), Ordering::Release);
    }
}

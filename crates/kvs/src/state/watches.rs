//! The registry of watched keys (WATCH) the event loops share: each watched key's
//! version moves with every change to it (what the log records), so EXEC can tell
//! whether a watched key changed (`crate::cmd::multi`). Without watchers a write pays
//! one atomic load ([`Watches::any`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// A key and its database.
type DbKey = (usize, Vec<u8>);

/// Watched keys of every connection: (database, key) to (watchers, version).
#[derive(Debug, Default)]
pub struct Watches {
    keys: AtomicUsize,
    map: Mutex<WatchMap>,
}

#[derive(Debug, Default)]
struct WatchMap {
    keys: HashMap<DbKey, (usize, u64)>,
    next: u64,
}

impl Watches {
    /// True when some connection watches a key.
    #[inline]
    pub fn any(&self) -> bool {
        self.keys.load(Ordering::Relaxed) != 0
    }

    fn lock(&self) -> MutexGuard<'_, WatchMap> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Moves the versions of the watched keys among `keys` (with their databases).
    pub fn touch<'k>(&self, keys: impl Iterator<Item = (usize, &'k [u8])>) {
        let mut m = self.lock();
        let m = &mut *m;
        for (db, k) in keys {
            if let Some(e) = m.keys.get_mut(&(db, k.to_vec())) {
                m.next += 1;
                e.1 = m.next;
            }
        }
    }

    /// Every watched key (to check which exist before FLUSHALL).
    pub(crate) fn watched(&self) -> Vec<DbKey> {
        self.lock().keys.keys().cloned().collect()
    }

    pub(crate) fn watch(&self, db: usize, key: &[u8]) -> u64 {
        let mut m = self.lock();
        let e = m.keys.entry((db, key.to_vec())).or_insert((0, 0));
        e.0 += 1;
        let v = e.1;
        self.keys.store(m.keys.len(), Ordering::Relaxed);
        v
    }

    pub(crate) fn unwatch(&self, keys: &[Watched]) {
        let mut m = self.lock();
        for w in keys {
            let k = (w.db, w.key.clone());
            if let Some(e) = m.keys.get_mut(&k) {
                e.0 -= 1;
                if e.0 == 0 {
                    m.keys.remove(&k);
                }
            }
        }
        self.keys.store(m.keys.len(), Ordering::Relaxed);
    }

    pub(crate) fn unchanged(&self, keys: &[Watched]) -> bool {
        let m = self.lock();
        keys.iter().all(|w| {
            m.keys
                .get(&(w.db, w.key.clone()))
                .is_some_and(|e| e.1 == w.version)
        })
    }
}

/// A key one connection watches, with its version when watched.
#[derive(Debug)]
pub(crate) struct Watched {
    /// Its database.
    pub(crate) db: usize,
    /// The key.
    pub(crate) key: Vec<u8>,
    /// Its version in [`Watches`] when watched.
    pub(crate) version: u64,
    /// The key's deadline when watched (0: none, or no key).
    pub(crate) expires_at: u64,
}

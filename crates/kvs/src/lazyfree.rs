//! Freeing big values off the event loops, as Redis's lazy free does: UNLINK, FLUSHDB
//! and FLUSHALL ASYNC (and DEL, FLUSHDB/FLUSHALL with `lazyfree-lazy-user-del` /
//! `lazyfree-lazy-user-flush` yes) hand a value whose freeing takes more than
//! [`THRESHOLD`] steps, or a whole database, to one background thread, which drops it.
//! The key is gone from the keyspace (and its memory from `used_memory`) at once; only
//! the deallocation runs later. INFO shows `lazyfree_pending_objects` (handed over,
//! not yet freed) and `lazyfreed_objects` (freed so, since CONFIG RESETSTAT).
//!
//! The thread starts on first use. If it cannot be started, the value is freed on the
//! caller's thread: slower, never lost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

use crate::value::Value;

/// Values whose freeing takes more steps than this are freed in the background
/// (Redis's LAZYFREE_THRESHOLD).
pub const THRESHOLD: usize = 64;

/// Something to drop, and how many objects it counts for.
type Job = (Box<dyn Send>, u64);

struct Lazy {
    tx: Mutex<Option<Sender<Job>>>,
    pending: AtomicU64,
    freed: AtomicU64,
}

static LAZY: OnceLock<Lazy> = OnceLock::new();

fn lazy() -> &'static Lazy {
    LAZY.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        let started = std::thread::Builder::new()
            .name("kvs-lazyfree".into())
            .spawn(move || {
                for (job, n) in rx {
                    drop(job);
                    let l = lazy();
                    l.freed.fetch_add(n, Ordering::Relaxed);
                    l.pending.fetch_sub(n, Ordering::Release);
                }
            })
            .is_ok();
        Lazy {
            tx: Mutex::new(started.then_some(tx)),
            pending: AtomicU64::new(0),
            freed: AtomicU64::new(0),
        }
    })
}

/// The steps freeing `v` takes (Redis's `lazyfreeGetFreeEffort`): one per element of
/// a collection, per node and pending entry of a stream; 1 for a string.
pub fn effort(v: &Value) -> usize {
    match v {
        Value::Str(_) => 1,
        Value::Hash(h) => h.len(),
        Value::Set(s) => s.len(),
        Value::List(l) => l.len(),
        Value::ZSet(z) => z.len(),
        Value::Stream(s) => {
            s.nodes().count()
                + s.groups
                    .values()
                    .map(|g| 1 + g.pel.len() + g.consumers.len())
                    .sum::<usize>()
        }
    }
}

/// Frees `v` in the background when that is worth it, else here.
pub fn free_value(v: Value) {
    if effort(&v) > THRESHOLD {
        free(Box::new(v), 1);
    }
}

/// Frees `what` (counting `objects` objects) on the background thread.
pub fn free<T: Send + 'static>(what: Box<T>, objects: u64) {
    let l = lazy();
    l.pending.fetch_add(objects, Ordering::AcqRel);
    let tx = l.tx.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let job: Job = (what, objects);
    let back = match tx {
        Some(tx) => tx.send(job).err().map(|e| e.0),
        None => Some(job),
    };
    if let Some((job, n)) = back {
        drop(job);
        l.pending.fetch_sub(n, Ordering::Release);
    }
}

/// `lazyfree_pending_objects` and `lazyfreed_objects`.
pub fn counts() -> (u64, u64) {
    match LAZY.get() {
        Some(l) => (
            l.pending.load(Ordering::Acquire),
            l.freed.load(Ordering::Relaxed),
        ),
        None => (0, 0),
    }
}

/// CONFIG RESETSTAT: `lazyfreed_objects` starts again from 0.
pub fn reset() {
    if let Some(l) = LAZY.get() {
        l.freed.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_values_go_to_the_thread_and_are_counted() {
        let mut set = crate::value::Set::default();
        for i in 0..1000u32 {
            set.insert(&i.to_le_bytes());
        }
        let v = Value::Set(Box::new(set));
        assert!(effort(&v) > THRESHOLD);
        assert_eq!(effort(&Value::Str(vec![1; 100_000])), 1);
        let (_, before) = counts();
        free_value(v);
        let start = std::time::Instant::now();
        while counts().1 == before {
            assert!(start.elapsed().as_secs() < 10, "never freed");
            std::thread::yield_now();
        }
    }
}

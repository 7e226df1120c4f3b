//! A bounded single-producer single-consumer queue of values.
//!
//! Lamport's ring: the producer owns `tail`, the consumer owns `head`, each on its own
//! cache line and each caching the other's last seen value so that the shared line is
//! read only when the cached view says full (or empty). A slot is written before the
//! release store of `tail` that publishes it and read before the release store of
//! `head` that frees it; the acquire loads on the other side order the accesses.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;

use crate::sync::{Arc, AtomicUsize, Ordering, Padded};
use crate::{check_depth, TangoError};

struct Ring<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
    /// Next slot to read (written by the consumer).
    head: Padded<AtomicUsize>,
    /// Next slot to write (written by the producer).
    tail: Padded<AtomicUsize>,
}

impl<T> std::fmt::Debug for Ring<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity", &self.slots.len())
            .finish()
    }
}

// SAFETY: a slot is accessed by the producer only between its claim (tail not yet
// published) and by the consumer only between publication and its release (head), and
// those windows are ordered by the release/acquire pairs on head and tail; values of
// T move from one thread to the other, hence T: Send.
unsafe impl<T: Send> Sync for Ring<T> {}
// SAFETY: as above; the ring owns values of T, which may move between threads.
unsafe impl<T: Send> Send for Ring<T> {}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        let head = self.head.0.load(Ordering::Relaxed);
        let tail = self.tail.0.load(Ordering::Relaxed);
        for i in head..tail {
            // SAFETY: slots in head..tail hold initialised values nobody else can reach
            // (we have &mut self).
            unsafe { (*self.slots[i & self.mask].get()).assume_init_drop() };
        }
    }
}

/// The sending end.
#[derive(Debug)]
pub struct Sender<T> {
    ring: Arc<Ring<T>>,
    tail: usize,
    head_seen: usize,
}

/// The receiving end.
#[derive(Debug)]
pub struct Receiver<T> {
    ring: Arc<Ring<T>>,
    head: usize,
    tail_seen: usize,
}

/// A queue of `capacity` values (a power of two, 2 to 2^24).
pub fn channel<T>(capacity: usize) -> Result<(Sender<T>, Receiver<T>), TangoError> {
    check_depth(capacity)?;
    let ring = Arc::new(Ring {
        slots: (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
        mask: capacity - 1,
        head: Padded(AtomicUsize::new(0)),
        tail: Padded(AtomicUsize::new(0)),
    });
    Ok((
        Sender {
            ring: ring.clone(),
            tail: 0,
            head_seen: 0,
        },
        Receiver {
            ring,
            head: 0,
            tail_seen: 0,
        },
    ))
}

impl<T> Sender<T> {
    /// Queues `v`, or gives it back when the queue is full.
    pub fn try_send(&mut self, v: T) -> Result<(), T> {
        let cap = self.ring.slots.len();
        if self.tail.wrapping_sub(self.head_seen) == cap {
            self.head_seen = self.ring.head.0.load(Ordering::Acquire);
            if self.tail.wrapping_sub(self.head_seen) == cap {
                return Err(v);
            }
        }
        let slot = &self.ring.slots[self.tail & self.ring.mask];
        // SAFETY: tail - head < capacity, so this slot is free: the consumer released it
        // (the acquire load of head ordered its read before this write) and will not
        // touch it until the release store of tail below.
        unsafe { (*slot.get()).write(v) };
        self.tail = self.tail.wrapping_add(1);
        self.ring.tail.0.store(self.tail, Ordering::Release);
        Ok(())
    }

    /// Values queued and not yet received (a snapshot).
    pub fn len(&self) -> usize {
        self.tail
            .wrapping_sub(self.ring.head.0.load(Ordering::Acquire))
    }

    /// True when nothing is queued (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Receiver<T> {
    /// The oldest queued value, if any.
    pub fn try_recv(&mut self) -> Option<T> {
        if self.head == self.tail_seen {
            self.tail_seen = self.ring.tail.0.load(Ordering::Acquire);
            if self.head == self.tail_seen {
                return None;
            }
        }
        let slot = &self.ring.slots[self.head & self.ring.mask];
        // SAFETY: head < tail, so the producer wrote this slot before its release store
        // of tail, which our acquire load saw; it will not write it again until the
        // release store of head below.
        let v = unsafe { (*slot.get()).assume_init_read() };
        self.head = self.head.wrapping_add(1);
        self.ring.head.0.store(self.head, Ordering::Release);
        Some(v)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_full_and_empty() {
        let (mut tx, mut rx) = channel::<String>(4).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rx.try_recv(), None);
        for i in 0..4 {
            assert_eq!(tx.try_send(i.to_string()), Ok(()));
        }
        assert_eq!(tx.try_send("x".into()), Err("x".to_string()));
        assert_eq!(tx.len(), 4);
        assert_eq!(rx.try_recv().as_deref(), Some("0"));
        assert_eq!(tx.try_send("4".into()), Ok(()));
        for want in ["1", "2", "3", "4"] {
            assert_eq!(rx.try_recv().as_deref(), Some(want));
        }
        assert_eq!(rx.try_recv(), None);
        // Values left in the queue are dropped with it (no leak: checked by Miri-style
        // counting below).
        let counter = std::sync::Arc::new(());
        let (mut tx, rx) = channel(8).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..5 {
            assert!(tx.try_send(counter.clone()).is_ok());
        }
        assert_eq!(std::sync::Arc::strong_count(&counter), 6);
        drop((tx, rx));
        assert_eq!(std::sync::Arc::strong_count(&counter), 1);
    }
}

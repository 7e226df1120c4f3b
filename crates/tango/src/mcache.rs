//! The metadata ring: one producer, any number of consumers, overrun detection.
//!
//! Slot `seq & (depth - 1)` holds the descriptor of fragment `seq` (sequence numbers
//! start at 1; a slot that never held anything reads as sequence 0). A consumer that
//! wants fragment `s` reads the slot's sequence number `t`:
//! - `t == s`: the descriptor is there;
//! - `t < s` (as a signed difference): not published yet;
//! - `t > s`: the producer has already reused the slot, the consumer is overrun (by at
//!   least `t - s` fragments).
//!
//! Writing is a seqlock (H.-J. Boehm, "Can seqlocks get along with programming language
//! memory models?", MSPC 2012): the producer marks the slot with `seq - 1` (older than
//! `seq`, newer than what it replaces), issues a release fence, writes the fields and
//! stores `seq` with release. The reader loads the sequence with acquire, the fields,
//! then issues an acquire fence and loads the sequence again: if both loads give `s`,
//! no write overlapped and the fields belong to `s`. All fields are atomics (relaxed),
//! so a torn read is detected, never undefined behaviour.

use crate::sync::{fence, AtomicU64, Ordering};
use crate::{check_depth, TangoError};

/// A fragment descriptor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Sequence number (set by the producer on publish).
    pub seq: u64,
    /// A 64-bit tag the producer chooses (a hash, a destination): consumers can filter
    /// on it without touching the payload.
    pub sig: u64,
    /// First 64-byte chunk of the payload in the dcache.
    pub chunk: u32,
    /// Payload size in bytes.
    pub sz: u16,
    /// Control bits (application-defined).
    pub ctl: u16,
    /// When the data entered the system (low 32 bits of a nanosecond clock).
    pub tsorig: u32,
    /// When the fragment was published (low 32 bits of a nanosecond clock).
    pub tspub: u32,
}

#[derive(Debug)]
#[repr(align(32))]
struct Slot {
    seq: AtomicU64,
    sig: AtomicU64,
    /// chunk | sz << 32 | ctl << 48
    loc: AtomicU64,
    /// tsorig | tspub << 32
    ts: AtomicU64,
}

/// What a consumer finds for the sequence number it wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The descriptor.
    Ready(Meta),
    /// Not published yet.
    Empty,
    /// The slot already holds a later fragment: the reader fell a ring behind. `seq` is
    /// the sequence number found there (resume from at most `seq - depth + 1`).
    Overrun {
        /// What the slot holds now.
        seq: u64,
    },
}

/// The ring of descriptors.
#[derive(Debug)]
pub struct Mcache {
    slots: Box<[Slot]>,
    mask: u64,
}

/// Signed distance `a - b` of sequence numbers.
#[inline]
pub fn seq_diff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

impl Mcache {
    /// A ring of `depth` slots (a power of two, 2 to 2^24), all empty.
    pub fn new(depth: usize) -> Result<Mcache, TangoError> {
        check_depth(depth)?;
        let slots = (0..depth)
            .map(|_| Slot {
                seq: AtomicU64::new(0),
                sig: AtomicU64::new(0),
                loc: AtomicU64::new(0),
                ts: AtomicU64::new(0),
            })
            .collect();
        Ok(Mcache {
            slots,
            mask: depth as u64 - 1,
        })
    }

    /// Number of slots.
    pub fn depth(&self) -> usize {
        self.slots.len()
    }

    fn slot(&self, seq: u64) -> &Slot {
        &self.slots[(seq & self.mask) as usize]
    }

    /// Publishes `meta` under `meta.seq`. Only one thread may publish into a ring (the
    /// [`crate::link::Producer`] owns that right), and sequence numbers must increase
    /// by one from 1.
    pub(crate) fn publish(&self, meta: &Meta) {
        let s = self.slot(meta.seq);
        s.seq.store(meta.seq.wrapping_sub(1), Ordering::Relaxed);
        fence(Ordering::Release);
        s.sig.store(meta.sig, Ordering::Relaxed);
        s.loc.store(
            u64::from(meta.chunk) | u64::from(meta.sz) << 32 | u64::from(meta.ctl) << 48,
            Ordering::Relaxed,
        );
        s.ts.store(
            u64::from(meta.tsorig) | u64::from(meta.tspub) << 32,
            Ordering::Relaxed,
        );
        s.seq.store(meta.seq, Ordering::Release);
    }

    /// Reads the descriptor of fragment `seq`.
    pub fn read(&self, seq: u64) -> Read {
        let s = self.slot(seq);
        let t0 = s.seq.load(Ordering::Acquire);
        let d = seq_diff(t0, seq);
        if d < 0 {
            return Read::Empty;
        }
        if d > 0 {
            return Read::Overrun { seq: t0 };
        }
        let sig = s.sig.load(Ordering::Relaxed);
        let loc = s.loc.load(Ordering::Relaxed);
        let ts = s.ts.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let t1 = s.seq.load(Ordering::Relaxed);
        if t1 != seq {
            // Overwritten while we read: the slot now holds seq - 1 + depth (being
            // written) or later.
            return Read::Overrun {
                seq: t1.max(seq.wrapping_add(1)),
            };
        }
        Read::Ready(Meta {
            seq,
            sig,
            chunk: loc as u32,
            sz: (loc >> 32) as u16,
            ctl: (loc >> 48) as u16,
            tsorig: ts as u32,
            tspub: (ts >> 32) as u32,
        })
    }

    /// True while fragment `seq` is still in its slot (not yet reclaimed): a consumer
    /// calls this after copying the payload to confirm the copy.
    pub fn still_holds(&self, seq: u64) -> bool {
        fence(Ordering::Acquire);
        self.slot(seq).seq.load(Ordering::Relaxed) == seq
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn empty_ready_and_overrun() {
        let m = Mcache::new(4).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.read(1), Read::Empty);
        for seq in 1..=6 {
            m.publish(&Meta {
                seq,
                sig: seq * 10,
                chunk: seq as u32,
                sz: 3,
                ctl: 1,
                tsorig: 7,
                tspub: 8,
            });
        }
        // 3..=6 are in the ring; 1 and 2 were overwritten by 5 and 6.
        assert_eq!(m.read(1), Read::Overrun { seq: 5 });
        assert_eq!(m.read(2), Read::Overrun { seq: 6 });
        match m.read(4) {
            Read::Ready(meta) => {
                assert_eq!((meta.seq, meta.sig, meta.chunk), (4, 40, 4));
                assert_eq!((meta.sz, meta.ctl, meta.tsorig, meta.tspub), (3, 1, 7, 8));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(m.read(7), Read::Empty);
        assert!(m.still_holds(6) && !m.still_holds(2));
        assert_eq!(Mcache::new(3).err(), Some(TangoError::Depth(3)));
        assert_eq!(Mcache::new(1).err(), Some(TangoError::Depth(1)));
    }
}

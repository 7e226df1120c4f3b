//! A producer, its reliable consumers (flow-controlled by credits) and any number of
//! unreliable ones, over one [`Mcache`] and one [`Dcache`].
//!
//! Every consumer sees every fragment (a broadcast ring); spreading work over several
//! consumers is the reader's choice (for example `seq % n == i`), made without touching
//! the payload. Credits: a reliable consumer stores the next sequence number it will
//! read in its own cache line (`fseq`, release) after it is done with the previous
//! fragment; the producer may publish fragment `p` only while `p - min(fseq) < depth`,
//! so it never reclaims a slot or a chunk a reliable consumer still needs. It reads the
//! fseqs (acquire) only when its cached credits run out.

use std::sync::OnceLock;
use std::time::Instant;

use crate::dcache::Dcache;
use crate::mcache::{seq_diff, Mcache, Meta, Read};
use crate::sync::{Arc, AtomicU64, Ordering, Padded};
use crate::TangoError;

/// Low 32 bits of a monotonic nanosecond clock (wraps every 4.3 s; differences of
/// timestamps less than that apart are exact with `wrapping_sub`).
pub fn now_ns32() -> u32 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u32
}

#[derive(Debug)]
struct Shared {
    mcache: Mcache,
    dcache: Dcache,
    /// Next sequence number each reliable consumer will read.
    fseqs: Box<[Padded<AtomicU64>]>,
    /// Last sequence number published (0: none).
    published: Padded<AtomicU64>,
}

/// Why a publish did not happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublishError {
    /// No credits: the slowest reliable consumer is a whole ring behind.
    Full,
    /// The payload is larger than the link's MTU.
    TooBig(TangoError),
}

/// The producing end (one per link; not cloneable).
#[derive(Debug)]
pub struct Producer {
    shared: Arc<Shared>,
    seq: u64,
    chunk: u32,
    credits: u64,
    full: u64,
}

/// A consuming end.
#[derive(Debug)]
pub struct Consumer {
    shared: Arc<Shared>,
    seq: u64,
    /// Index of this consumer's fseq (None: unreliable).
    fseq: Option<usize>,
    overrun: u64,
}

/// What [`Consumer::poll`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recv {
    /// The next fragment; its payload is in the caller's buffer.
    Frag(Meta),
    /// Nothing new.
    Empty,
    /// The consumer fell behind and `lost` fragments were overwritten before it read
    /// them (only unreliable consumers); it resumes with the oldest one still there.
    Overrun {
        /// Fragments skipped.
        lost: u64,
    },
}

/// A link of `depth` slots for payloads of up to `mtu` bytes, with `reliable`
/// flow-controlled consumers.
pub fn link(
    depth: usize,
    mtu: usize,
    reliable: usize,
) -> Result<(Producer, Vec<Consumer>), TangoError> {
    let shared = Arc::new(Shared {
        mcache: Mcache::new(depth)?,
        dcache: Dcache::new(mtu, depth)?,
        fseqs: (0..reliable).map(|_| Padded(AtomicU64::new(1))).collect(),
        published: Padded(AtomicU64::new(0)),
    });
    let consumers = (0..reliable)
        .map(|i| Consumer {
            shared: shared.clone(),
            seq: 1,
            fseq: Some(i),
            overrun: 0,
        })
        .collect();
    let producer = Producer {
        shared,
        seq: 1,
        chunk: 0,
        credits: 0,
        full: 0,
    };
    Ok((producer, consumers))
}

impl Producer {
    /// Credits now: how many fragments may be published before the slowest reliable
    /// consumer would be overrun.
    pub fn refresh_credits(&mut self) -> u64 {
        let depth = self.shared.mcache.depth() as u64;
        let slowest = self
            .shared
            .fseqs
            .iter()
            .map(|f| f.0.load(Ordering::Acquire))
            .min_by_key(|&f| seq_diff(f, self.seq));
        self.credits = match slowest {
            Some(f) => depth.saturating_sub(seq_diff(self.seq, f).max(0) as u64),
            None => depth,
        };
        self.credits
    }

    /// Publishes `data` with tag `sig`, control bits `ctl` and origin time `tsorig`;
    /// returns its sequence number.
    pub fn try_publish(
        &mut self,
        data: &[u8],
        sig: u64,
        ctl: u16,
        tsorig: u32,
    ) -> Result<u64, PublishError> {
        let mtu = self.shared.dcache.mtu();
        if data.len() > mtu {
            return Err(PublishError::TooBig(TangoError::TooBig {
                size: data.len(),
                mtu,
            }));
        }
        if self.credits == 0 && self.refresh_credits() == 0 {
            self.full += 1;
            return Err(PublishError::Full);
        }
        let seq = self.seq;
        self.shared.dcache.write(self.chunk, data);
        self.shared.mcache.publish(&Meta {
            seq,
            sig,
            chunk: self.chunk,
            sz: data.len() as u16,
            ctl,
            tsorig,
            tspub: now_ns32(),
        });
        self.shared.published.0.store(seq, Ordering::Release);
        self.chunk = self.shared.dcache.next(self.chunk, data.len());
        self.seq += 1;
        self.credits -= 1;
        Ok(seq)
    }

    /// Credits as last computed, less what was published since (no shared reads).
    pub fn credits(&self) -> u64 {
        self.credits
    }

    /// Times [`Producer::try_publish`] found no credits.
    pub fn full_count(&self) -> u64 {
        self.full
    }

    /// Sequence number of the next fragment.
    pub fn next_seq(&self) -> u64 {
        self.seq
    }

    /// A consumer that is not waited for (a monitor, a best-effort reader); it starts
    /// after the last published fragment and may be overrun.
    pub fn unreliable(&self) -> Consumer {
        Consumer {
            shared: self.shared.clone(),
            seq: self.shared.published.0.load(Ordering::Acquire) + 1,
            fseq: None,
            overrun: 0,
        }
    }
}

impl Consumer {
    /// Reads the next fragment into `out`.
    pub fn poll(&mut self, out: &mut Vec<u8>) -> Recv {
        self.poll_with(out, |_| true)
    }

    /// Reads the next fragment that `keep` accepts into `out`, passing over (without
    /// copying their payloads) up to 64 that it rejects; `Empty` when none was kept.
    /// Several consumers of one link share its work this way (each keeps its share).
    pub fn poll_with(&mut self, out: &mut Vec<u8>, keep: impl Fn(&Meta) -> bool) -> Recv {
        let mut passed = 0;
        loop {
            match self.poll_one(out, &keep) {
                Some(r) => return r,
                None if passed < 64 => passed += 1,
                None => return Recv::Empty,
            }
        }
    }

    /// One fragment: Some(what happened), or None when it was passed over.
    fn poll_one(&mut self, out: &mut Vec<u8>, keep: &impl Fn(&Meta) -> bool) -> Option<Recv> {
        let sh = &*self.shared;
        let depth = sh.mcache.depth() as u64;
        loop {
            match sh.mcache.read(self.seq) {
                Read::Empty => return Some(Recv::Empty),
                Read::Overrun { seq } => {
                    // Resume at the oldest fragment that can still be in the ring: a ring
                    // behind the newest published (at least what the slot showed).
                    let newest = sh.published.0.load(Ordering::Acquire);
                    let newest = if seq_diff(newest, seq) > 0 {
                        newest
                    } else {
                        seq
                    };
                    let resume = newest.wrapping_sub(depth - 1);
                    let resume = if seq_diff(resume, self.seq) > 0 {
                        resume
                    } else {
                        self.seq + 1
                    };
                    let lost = resume.wrapping_sub(self.seq);
                    self.seq = resume;
                    self.overrun += lost;
                    self.publish_progress();
                    return Some(Recv::Overrun { lost });
                }
                Read::Ready(meta) if !keep(&meta) => {
                    self.seq += 1;
                    self.publish_progress();
                    return None;
                }
                Read::Ready(meta) => {
                    sh.dcache.read(meta.chunk, meta.sz as usize, out);
                    if !sh.mcache.still_holds(self.seq) {
                        // Overwritten during the copy: the next read reports it.
                        continue;
                    }
                    self.seq += 1;
                    self.publish_progress();
                    return Some(Recv::Frag(meta));
                }
            }
        }
    }

    fn publish_progress(&self) {
        if let Some(i) = self.fseq {
            self.shared.fseqs[i].0.store(self.seq, Ordering::Release);
        }
    }

    /// Sequence number of the next fragment this consumer will read.
    pub fn next_seq(&self) -> u64 {
        self.seq
    }

    /// Fragments lost to overruns so far.
    pub fn overrun_count(&self) -> u64 {
        self.overrun
    }

    /// Last sequence number the producer published (0: none yet).
    pub fn published(&self) -> u64 {
        self.shared.published.0.load(Ordering::Acquire)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn credits_stop_the_producer_and_reads_free_them() {
        let (mut p, mut cs) = link(4, 64, 1).unwrap_or_else(|e| panic!("{e}"));
        let mut c = cs.pop().unwrap_or_else(|| panic!("one consumer"));
        for i in 0..4u8 {
            assert_eq!(
                p.try_publish(&[i; 10], u64::from(i), 0, 0),
                Ok(u64::from(i) + 1)
            );
        }
        assert_eq!(p.try_publish(&[9], 0, 0, 0), Err(PublishError::Full));
        let mut buf = Vec::new();
        match c.poll(&mut buf) {
            Recv::Frag(m) => assert_eq!((m.seq, m.sig, buf.as_slice()), (1, 0, &[0u8; 10][..])),
            other => panic!("{other:?}"),
        }
        assert_eq!(p.try_publish(&[4; 3], 4, 0, 0), Ok(5));
        for want in 2..=5u64 {
            assert!(matches!(c.poll(&mut buf), Recv::Frag(m) if m.seq == want));
        }
        assert_eq!(c.poll(&mut buf), Recv::Empty);
        assert!(matches!(
            p.try_publish(&[0; 65], 0, 0, 0),
            Err(PublishError::TooBig(_))
        ));
        assert_eq!(p.full_count(), 1);
    }

    #[test]
    fn an_unreliable_reader_is_overrun_and_told_how_far() {
        let (mut p, _) = link(8, 64, 0).unwrap_or_else(|e| panic!("{e}"));
        let mut mon = p.unreliable();
        for i in 0..20u64 {
            assert_eq!(p.try_publish(&i.to_le_bytes(), i, 0, 0), Ok(i + 1));
        }
        let mut buf = Vec::new();
        // Fragments 1..=12 are gone; 13..=20 remain.
        assert_eq!(mon.poll(&mut buf), Recv::Overrun { lost: 12 });
        for want in 13..=20u64 {
            match mon.poll(&mut buf) {
                Recv::Frag(m) => {
                    assert_eq!(m.seq, want);
                    assert_eq!(buf, (want - 1).to_le_bytes());
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(mon.poll(&mut buf), Recv::Empty);
        assert_eq!(mon.overrun_count(), 12);
        assert_eq!(p.unreliable().next_seq(), 21);
        // Two readers sharing the work by sequence number.
        let (mut p, mut cs) = link(16, 8, 2).unwrap_or_else(|e| panic!("{e}"));
        for i in 1..=10u64 {
            assert!(p.try_publish(&i.to_le_bytes(), i, 0, 0).is_ok());
        }
        for (r, c) in cs.iter_mut().enumerate() {
            let mut got = Vec::new();
            while let Recv::Frag(m) = c.poll_with(&mut buf, |m| m.seq % 2 == r as u64) {
                assert_eq!(buf, m.seq.to_le_bytes());
                got.push(m.seq);
            }
            let want: Vec<u64> = (1..=10).filter(|s| s % 2 == r as u64).collect();
            assert_eq!(got, want);
            assert_eq!(c.next_seq(), 11, "passed-over fragments are consumed");
        }
    }
}

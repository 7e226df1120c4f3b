//! The tile trait and what a tile sees while it runs.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use wirespeed_tango::link::PublishError;
use wirespeed_tango::{Consumer, Meta, Producer};

use crate::metrics::{Counter, TileMetrics};

/// Control bit: end of stream (no payload). The runner sends it down every output when
/// a tile finishes, and a tile finishes when every input has delivered it.
pub const CTL_EOS: u16 = 1 << 15;

/// What happens when an output link has no credits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// The producing tile waits (it is not run until the link has credits for a burst);
    /// the wait is counted as backpressure time and pushes back to the source.
    #[default]
    Backpressure,
    /// The fragment is dropped and counted (`shed`); the producer never waits.
    Shed,
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Policy, String> {
        match s {
            "backpressure" => Ok(Policy::Backpressure),
            "shed" => Ok(Policy::Shed),
            _ => Err(format!("policy must be backpressure or shed, not '{s}'")),
        }
    }
}

/// An input link and which of its fragments this tile takes.
#[derive(Debug)]
pub struct Input {
    pub(crate) consumer: Consumer,
    pub(crate) share: Share,
    pub(crate) ended: bool,
}

/// How tiles reading one link divide its fragments.
#[derive(Debug)]
pub(crate) enum Share {
    /// Fragments with `seq % of == index`.
    Modulo(u64, u64),
    /// Whichever tile reaches a fragment first takes it; the last fragment this tile
    /// took (a second look at the same fragment gives the same answer).
    Claim(Arc<Claim>, Cell<u64>),
    /// Fragments whose control bits under the mask (first) equal the value (second):
    /// the producer names each fragment's reader.
    Routed(u16, u16),
}

impl Share {
    /// Whether this tile takes fragment `seq` with control bits `ctl`.
    pub(crate) fn takes(&self, seq: u64, ctl: u16) -> bool {
        match self {
            Share::Modulo(index, of) => seq % of == *index,
            Share::Routed(mask, value) => ctl & mask == *value,
            Share::Claim(claim, last) => {
                if last.get() == seq {
                    return true;
                }
                let won = claim.take(seq);
                if won {
                    last.set(seq);
                }
                won
            }
        }
    }
}

/// The next unclaimed fragment of a link whose reliable consumers share its work
/// dynamically ([`Input::claimed`]): a consumer at fragment `s` takes it by moving the
/// counter from `s` to `s + 1`, and passes over it when the counter is already beyond.
/// Consumers read in order and never pass an unclaimed fragment, so the counter is
/// never behind any of them and each fragment goes to exactly one. A tile slowed by
/// other work on its thread simply takes fewer.
#[derive(Debug)]
pub struct Claim {
    next: AtomicU64,
}

impl Claim {
    /// A counter for a fresh link (its consumers start at fragment 1).
    pub fn new() -> Arc<Claim> {
        Arc::new(Claim {
            next: AtomicU64::new(1),
        })
    }

    /// Takes fragment `seq` if nobody has.
    pub fn take(&self, seq: u64) -> bool {
        let mut c = self.next.load(Ordering::Acquire);
        loop {
            if c > seq {
                return false;
            }
            match self
                .next
                .compare_exchange_weak(c, seq + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => c = now,
            }
        }
    }
}

impl Input {
    /// All fragments of `consumer`.
    pub fn all(consumer: Consumer) -> Input {
        Input::shared(consumer, 0, 1)
    }

    /// Share `index` of `of` of `consumer`'s fragments (by sequence number; end of
    /// stream always).
    pub fn shared(consumer: Consumer, index: u64, of: u64) -> Input {
        Input {
            consumer,
            share: Share::Modulo(index, of.max(1)),
            ended: false,
        }
    }

    /// The fragments of `consumer` whose control bits under `mask` equal `value` (end
    /// of stream always): the producer chooses each fragment's reader, for a deal that
    /// follows something only the producer knows (say, each reader's backlog). The
    /// readers' values must be distinct and cover every value the producer writes, or
    /// a fragment is read by no tile (or by two).
    pub fn routed(consumer: Consumer, mask: u16, value: u16) -> Input {
        Input {
            consumer,
            share: Share::Routed(mask & !CTL_EOS, value & mask & !CTL_EOS),
            ended: false,
        }
    }

    /// The fragments of `consumer` this tile reaches before the other tiles holding
    /// the same `claim` (one per link; end of stream always): work sharing that
    /// follows how fast each tile actually goes.
    pub fn claimed(consumer: Consumer, claim: Arc<Claim>) -> Input {
        Input {
            consumer,
            share: Share::Claim(claim, Cell::new(0)),
            ended: false,
        }
    }
}

/// An output link with its policy.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) producer: Producer,
    pub(crate) policy: Policy,
}

/// What a tile publishes through and counts with.
#[derive(Debug)]
pub struct Ctx {
    pub(crate) outputs: Vec<Output>,
    pub(crate) metrics: TileMetrics,
    pub(crate) finished: bool,
    pub(crate) inputs_ended: bool,
}

impl Ctx {
    /// Publishes `data` on output `out` with tag `sig`, control bits `ctl` and origin
    /// time `tsorig`. True when published; false when a shedding link dropped it (and
    /// counted it). On a backpressured link the runner guarantees credits for the
    /// tile's burst, so it is published.
    pub fn publish(&mut self, out: usize, data: &[u8], sig: u64, ctl: u16, tsorig: u32) -> bool {
        let Some(o) = self.outputs.get_mut(out) else {
            return false;
        };
        loop {
            match o.producer.try_publish(data, sig, ctl & !CTL_EOS, tsorig) {
                Ok(_) => {
                    self.metrics.add(Counter::Out, 1);
                    return true;
                }
                Err(PublishError::Full) if o.policy == Policy::Backpressure => {
                    // More than the declared burst: wait here (counted).
                    let t = std::time::Instant::now();
                    wirespeed_tango::spin();
                    self.metrics
                        .add(Counter::BackpressureNs, t.elapsed().as_nanos() as u64);
                }
                Err(_) => {
                    self.metrics.add(Counter::Shed, 1);
                    return false;
                }
            }
        }
    }

    /// Number of outputs.
    pub fn outputs(&self) -> usize {
        self.outputs.len()
    }

    /// This tile's metrics (custom counters, rejections, latency).
    pub fn metrics(&self) -> &TileMetrics {
        &self.metrics
    }

    /// True once every input has delivered end of stream (nothing more will come).
    pub fn inputs_ended(&self) -> bool {
        self.inputs_ended
    }

    /// Declares the tile finished (a source at the end of its input): the runner sends
    /// end of stream down every output.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// True once [`Ctx::finish`] was called.
    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

/// A stage of a pipeline. Callbacks must not block for long: tiles may share a thread.
pub trait Tile: Send {
    /// Short name, shown by the monitor.
    fn name(&self) -> String;

    /// Most fragments one callback publishes on any single output (the runner calls a
    /// tile only when each backpressured output has that many credits).
    fn burst(&self) -> u64 {
        1
    }

    /// Once, on the tile's thread, before anything else.
    fn on_start(&mut self, _ctx: &mut Ctx) {}

    /// A fragment from input `input` (its payload in `payload`).
    fn on_fragment(&mut self, ctx: &mut Ctx, input: usize, meta: &Meta, payload: &[u8]);

    /// Called when the inputs had nothing: sources produce here, batching tiles flush
    /// what waited too long. True when it did some work.
    fn on_idle(&mut self, _ctx: &mut Ctx) -> bool {
        false
    }

    /// About every millisecond: periodic chores (metrics, timeouts).
    fn housekeeping(&mut self, _ctx: &mut Ctx) {}

    /// Work still held that must go out before the end: while true after every input
    /// has ended, the runner keeps calling `on_idle` (with credits for a burst) instead
    /// of ending the tile.
    fn pending(&self) -> bool {
        false
    }

    /// Every input has ended and nothing is pending: flush what is left, at most a
    /// burst (the runner then sends end of stream).
    fn on_end(&mut self, _ctx: &mut Ctx) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU8;

    #[test]
    fn routed_fragments_go_to_the_reader_their_control_bits_name() {
        let readers: Vec<Share> = (0..4u16)
            .map(|i| Share::Routed(0b11 << 3, i << 3))
            .collect();
        for ctl in 0..u16::MAX >> 1 {
            let takers = readers.iter().filter(|r| r.takes(7, ctl)).count();
            assert_eq!(takers, 1, "ctl {ctl:#x}");
            assert!(readers[usize::from(ctl >> 3 & 0b11)].takes(7, ctl));
        }
    }

    #[test]
    fn claimed_fragments_go_to_exactly_one_reader() {
        const N: usize = 200_000;
        let claim = Claim::new();
        let owner: Arc<Vec<AtomicU8>> = Arc::new((0..=N).map(|_| AtomicU8::new(0)).collect());
        let handles: Vec<_> = (1..=3u8)
            .map(|me| {
                let (claim, owner) = (claim.clone(), owner.clone());
                std::thread::spawn(move || {
                    let share = Share::Claim(claim, Cell::new(0));
                    let mut won = 0usize;
                    for seq in 1..=N as u64 {
                        if share.takes(seq, 0) {
                            // Asking again about the same fragment gives the same answer.
                            assert!(share.takes(seq, 0));
                            let prev = owner[seq as usize].swap(me, Ordering::Relaxed);
                            assert_eq!(prev, 0, "fragment {seq} taken twice");
                            won += 1;
                        }
                    }
                    won
                })
            })
            .collect();
        let total: usize = handles.into_iter().map(|h| h.join().unwrap_or(0)).sum();
        assert_eq!(total, N);
        assert!(owner[1..].iter().all(|o| o.load(Ordering::Relaxed) != 0));
    }
}

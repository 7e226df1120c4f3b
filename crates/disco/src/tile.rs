//! The tile trait and what a tile sees while it runs.

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
    /// Take fragments with `seq % of == index` (work sharing among `of` tiles).
    pub(crate) share: (u64, u64),
    pub(crate) ended: bool,
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
            share: (index, of.max(1)),
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

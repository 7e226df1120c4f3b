//! The shared loop: each thread runs its tiles round-robin, pinned to a core when asked.
//!
//! A round of one tile: if any backpressured output has fewer credits than the tile's
//! burst, the tile is skipped (backpressure time counted) and the thread moves on to
//! its other tiles, so a producer and its consumer can share a core; otherwise up to
//! [`FRAGS_PER_ROUND`] fragments are taken from the inputs round-robin (end-of-stream
//! markers close an input), or `on_idle` is called when there were none. When every
//! input has ended, `on_idle` keeps being called while the tile reports
//! [`Tile::pending`] work (so it can send what it holds a burst at a time); then (or
//! when a source calls [`Ctx::finish`]) `on_end` runs and end of stream goes down every
//! output; the pipeline is done when every tile is. A panic in
//! a tile is caught, reported with the tile's name, and stops every thread. A thread
//! with nothing to do spins (yielding its core between spins when the pipeline has more
//! threads than the machine has cores), and after [`IDLE_BEFORE_NAP`] of idleness
//! sleeps [`NAP`] at a time.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wirespeed_tango::{Producer, Recv};

use crate::metrics::{Counter, Metrics};
use crate::tile::{Ctx, Input, Output, Policy, Tile, CTL_EOS};

/// Most fragments a tile takes in one round before the thread moves on.
pub const FRAGS_PER_ROUND: usize = 32;

/// Pipeline threads are named this followed by their tiles' names (so a panic hook can
/// tell a tile's panic, which the runner reports, from others).
pub const THREAD_PREFIX: &str = "tile:";

/// Idle time after which a thread naps instead of spinning.
pub const IDLE_BEFORE_NAP: Duration = Duration::from_millis(2);

/// One nap of an idle thread (the longest it can add to the latency of a packet that
/// arrives after a quiet spell).
pub const NAP: Duration = Duration::from_micros(50);

/// A tile with its links and placement.
pub struct TileSpec {
    /// The tile.
    pub tile: Box<dyn Tile>,
    /// Its inputs, in the order `on_fragment` numbers them.
    pub inputs: Vec<Input>,
    /// Its outputs, in the order `Ctx::publish` numbers them.
    pub outputs: Vec<(Producer, Policy)>,
    /// Tiles with the same thread number share a thread.
    pub thread: usize,
    /// Core to pin that thread to (the first tile of a thread that names one decides).
    pub core: Option<usize>,
}

impl std::fmt::Debug for TileSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TileSpec")
            .field("tile", &self.tile.name())
            .field("thread", &self.thread)
            .field("core", &self.core)
            .finish()
    }
}

/// Why a pipeline stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// A tile panicked.
    Panicked {
        /// The tile.
        tile: String,
        /// The panic message.
        message: String,
    },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Panicked { tile, message } => {
                write!(f, "tile '{tile}' failed: {message}")
            }
        }
    }
}

impl std::error::Error for RunError {}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every tile finished (end of stream reached the sinks).
    Drained,
    /// The stop flag was raised first.
    Stopped,
}

/// Tiles ready to run.
#[derive(Debug)]
pub struct Pipeline {
    tiles: Vec<TileSpec>,
    metrics: Arc<Metrics>,
}

struct Running {
    tile: Box<dyn Tile>,
    inputs: Vec<Input>,
    ctx: Ctx,
    /// Outputs that still need their end-of-stream marker.
    eos_pending: Vec<usize>,
    ending: bool,
    done: bool,
    next_input: usize,
    blocked_since: Option<Instant>,
    last_housekeeping: Instant,
}

impl Pipeline {
    /// Tiles (in metrics order: tile i writes block i of `metrics`).
    pub fn new(tiles: Vec<TileSpec>, metrics: Arc<Metrics>) -> Pipeline {
        Pipeline { tiles, metrics }
    }

    /// Runs until every tile has finished or `stop` is raised.
    pub fn run(self, stop: &AtomicBool) -> Result<Ended, RunError> {
        let metrics = self.metrics;
        let mut threads: Vec<(Option<usize>, Vec<Running>)> = Vec::new();
        let mut order: Vec<usize> = Vec::new();
        for (i, spec) in self.tiles.into_iter().enumerate() {
            let slot = match order.iter().position(|&t| t == spec.thread) {
                Some(s) => s,
                None => {
                    order.push(spec.thread);
                    threads.push((None, Vec::new()));
                    threads.len() - 1
                }
            };
            if threads[slot].0.is_none() {
                threads[slot].0 = spec.core;
            }
            let outputs: Vec<Output> = spec
                .outputs
                .into_iter()
                .map(|(producer, policy)| Output { producer, policy })
                .collect();
            let n_out = outputs.len();
            threads[slot].1.push(Running {
                tile: spec.tile,
                inputs: spec.inputs,
                ctx: Ctx {
                    outputs,
                    metrics: metrics.tile(i),
                    finished: false,
                    inputs_ended: false,
                },
                eos_pending: (0..n_out).collect(),
                ending: false,
                done: false,
                next_input: 0,
                blocked_since: None,
                last_housekeeping: Instant::now(),
            });
        }
        let failure: Mutex<Option<RunError>> = Mutex::new(None);
        let halt = AtomicBool::new(false);
        // With a core per thread, an idle thread keeps spinning (yielding would hand
        // its core to whatever else is runnable, for a whole time slice); with more
        // threads than cores, idle threads yield so busy ones get the cores.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let may_yield = threads.len() > cores;
        let finished = std::thread::scope(|s| {
            let handles: Vec<_> = threads
                .into_iter()
                .map(|(core, tiles)| {
                    let (halt, failure) = (&halt, &failure);
                    let names: Vec<String> = tiles.iter().map(|t| t.tile.name()).collect();
                    std::thread::Builder::new()
                        .name(format!("{THREAD_PREFIX}{}", names.join(",")))
                        .spawn_scoped(s, move || {
                            if let Some(c) = core {
                                core_affinity::set_for_current(core_affinity::CoreId { id: c });
                            }
                            run_thread(tiles, stop, halt, failure, may_yield)
                        })
                        .unwrap_or_else(|e| panic!("cannot start a pipeline thread: {e}"))
                })
                .collect();
            while handles.iter().any(|h| !h.is_finished()) {
                metrics.heartbeat(0);
                std::thread::sleep(Duration::from_millis(20));
            }
            handles.into_iter().all(|h| h.join().unwrap_or(false))
        });
        let failure = failure.into_inner().unwrap_or_else(|p| p.into_inner());
        metrics.heartbeat(if failure.is_some() { 2 } else { 1 });
        match failure {
            Some(e) => Err(e),
            None if finished => Ok(Ended::Drained),
            None => Ok(Ended::Stopped),
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// One thread's loop; true when all its tiles finished.
fn run_thread(
    mut tiles: Vec<Running>,
    stop: &AtomicBool,
    halt: &AtomicBool,
    failure: &Mutex<Option<RunError>>,
    may_yield: bool,
) -> bool {
    let fail = |t: &Running, p: Box<dyn std::any::Any + Send>| {
        let e = RunError::Panicked {
            tile: t.tile.name(),
            message: panic_message(&*p),
        };
        t.ctx.metrics.set(Counter::State, 2);
        let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(e);
        halt.store(true, Ordering::Relaxed);
    };
    for t in &mut tiles {
        let Running { tile, ctx, .. } = t;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| tile.on_start(ctx))) {
            fail(t, p);
            return false;
        }
    }
    let mut buf = Vec::with_capacity(2048);
    let mut idle_rounds = 0u32;
    let mut idle_since: Option<Instant> = None;
    // One clock read per round: the end of one round is the start of the next (the
    // clock was several percent of a busy thread's time at three reads per round).
    let mut last = Instant::now();
    loop {
        if stop.load(Ordering::Relaxed) || halt.load(Ordering::Relaxed) {
            return false;
        }
        let mut any_work = false;
        let mut all_done = true;
        for t in tiles.iter_mut().filter(|t| !t.done) {
            all_done = false;
            match catch_unwind(AssertUnwindSafe(|| round(t, &mut buf, last))) {
                Ok(did) => {
                    let now = Instant::now();
                    let ns = now.duration_since(last).as_nanos() as u64;
                    last = now;
                    let m = &t.ctx.metrics;
                    m.add(
                        if did {
                            Counter::BusyNs
                        } else {
                            Counter::IdleNs
                        },
                        ns,
                    );
                    m.add(Counter::Rounds, 1);
                    any_work |= did;
                }
                Err(p) => {
                    fail(t, p);
                    return false;
                }
            }
        }
        if all_done {
            return true;
        }
        if any_work {
            idle_rounds = 0;
            idle_since = None;
        } else {
            idle_rounds += 1;
            // Spin briefly, then give the core away (threads may share cores), and
            // after a long quiet spell sleep in short naps rather than burn a core.
            if idle_rounds <= 64 {
                std::hint::spin_loop();
            } else if last.duration_since(*idle_since.get_or_insert(last)) < IDLE_BEFORE_NAP {
                if may_yield {
                    std::thread::yield_now();
                    last = Instant::now();
                } else {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::sleep(NAP);
                // The nap is nobody's round.
                last = Instant::now();
            }
        }
    }
}

/// One round of one tile, started at `now`; true when it did work.
fn round(t: &mut Running, buf: &mut Vec<u8>, now: Instant) -> bool {
    if now.duration_since(t.last_housekeeping) >= Duration::from_millis(1) {
        t.last_housekeeping = now;
        t.tile.housekeeping(&mut t.ctx);
    }
    if t.ending {
        return send_eos(t);
    }
    // Credits for a burst on every backpressured output, or skip this tile for now.
    let burst = t.tile.burst().max(1);
    let blocked = t.ctx.outputs.iter_mut().any(|o| {
        o.policy == Policy::Backpressure
            && o.producer.credits() < burst
            && o.producer.refresh_credits() < burst
    });
    if blocked {
        let since = *t.blocked_since.get_or_insert(now);
        t.ctx.metrics.add(
            Counter::BackpressureNs,
            now.duration_since(since).as_nanos() as u64,
        );
        t.blocked_since = Some(now);
        return false;
    }
    t.blocked_since = None;
    let mut did = false;
    let n = t.inputs.len();
    let mut taken = 0;
    let mut empty_streak = 0;
    while taken < FRAGS_PER_ROUND && empty_streak < n {
        let i = t.next_input % n.max(1);
        t.next_input = t.next_input.wrapping_add(1);
        let input = &mut t.inputs[i];
        if input.ended {
            empty_streak += 1;
            continue;
        }
        let share = &input.share;
        let r = input
            .consumer
            .poll_with(buf, |m| m.ctl & CTL_EOS != 0 || share.takes(m.seq, m.ctl));
        match r {
            Recv::Frag(m) if m.ctl & CTL_EOS != 0 => {
                input.ended = true;
                did = true;
            }
            Recv::Frag(m) => {
                t.ctx.metrics.add(Counter::In, 1);
                t.tile.on_fragment(&mut t.ctx, i, &m, buf);
                did = true;
                taken += 1;
                empty_streak = 0;
                // Each fragment may publish a burst: recheck the credits.
                let short = t
                    .ctx
                    .outputs
                    .iter()
                    .any(|o| o.policy == Policy::Backpressure && o.producer.credits() < burst);
                if short {
                    break;
                }
            }
            Recv::Overrun { lost } => {
                t.ctx.metrics.add(Counter::Overrun, lost);
                did = true;
            }
            Recv::Empty => empty_streak += 1,
        }
    }
    if !did {
        did = t.tile.on_idle(&mut t.ctx);
    }
    let inputs_ended = n > 0 && t.inputs.iter().all(|i| i.ended);
    t.ctx.inputs_ended = inputs_ended;
    if inputs_ended && t.tile.pending() {
        // Held work goes out in bursts, through on_idle, before the end.
        if !did {
            did = t.tile.on_idle(&mut t.ctx);
        }
        return did;
    }
    if inputs_ended || t.ctx.finished {
        t.tile.on_end(&mut t.ctx);
        t.ending = true;
        send_eos(t);
        did = true;
    }
    did
}

/// Sends end of stream on every output that still needs it; finishes the tile when
/// all have it. True when something was sent.
fn send_eos(t: &mut Running) -> bool {
    let before = t.eos_pending.len();
    let outputs = &mut t.ctx.outputs;
    t.eos_pending
        .retain(|&o| outputs[o].producer.try_publish(&[], 0, CTL_EOS, 0).is_err());
    if t.eos_pending.is_empty() {
        t.done = true;
        t.ctx.metrics.set(Counter::State, 1);
    }
    t.eos_pending.len() < before || t.done
}

//! Puts verdicts back in arrival (ticket) order.

use super::*;

/// Passes verdicts on in ticket (arrival) order when `ordered`, else as they come.
#[derive(Debug)]
pub struct Reorder {
    ordered: bool,
    next: u64,
    /// Verdicts waiting for earlier tickets: slot `t - next`.
    window: std::collections::VecDeque<Option<(u16, u32, Vec<u8>)>>,
    max_window: usize,
    /// Buffers of delivered verdicts, reused for the next ones that must wait (no
    /// allocation per packet once the window has been as deep as it gets).
    spare: Vec<Vec<u8>>,
}

impl Reorder {
    /// In ticket order (`ordered`) or as verdicts arrive; `max_window` bounds what is
    /// held (past it, a missing ticket is given up on and counted): it should exceed
    /// what the verify tiles can have in flight (their input ring plus their batches).
    pub fn new(ordered: bool, max_window: usize) -> Reorder {
        Reorder {
            ordered,
            next: 1,
            window: std::collections::VecDeque::new(),
            max_window: max_window.max(1),
            spare: Vec::new(),
        }
    }

    fn deliver(ctx: &mut Ctx, ticket: u64, ctl: u16, tsorig: u32, packet: &[u8]) {
        ctx.publish(0, packet, ticket, ctl, tsorig);
    }

    /// Sends up to [`REORDER_BURST`] verdicts that are next in order (or, with `all`,
    /// whatever is next, giving up on missing tickets).
    fn release(&mut self, ctx: &mut Ctx, all: bool) {
        let mut sent = 0;
        while let Some(front) = self.window.front() {
            if sent == REORDER_BURST {
                break;
            }
            if front.is_none() && !all && self.window.len() <= self.max_window {
                break;
            }
            sent += 1;
            if let Some(Some((ctl, ts, p))) = self.window.pop_front() {
                Reorder::deliver(ctx, self.next, ctl, ts, &p);
                if self.spare.len() < self.max_window {
                    self.spare.push(p);
                }
            } else {
                ctx.metrics().count(ReorderCounter::GivenUp, 1);
            }
            self.next += 1;
        }
    }
}

impl Tile for Reorder {
    fn name(&self) -> String {
        "reorder".into()
    }

    fn burst(&self) -> u64 {
        REORDER_BURST as u64
    }

    fn pending(&self) -> bool {
        !self.window.is_empty()
    }

    fn on_idle(&mut self, ctx: &mut Ctx) -> bool {
        let before = self.next;
        self.release(ctx, ctx.inputs_ended());
        self.next != before
    }

    fn on_start(&mut self, ctx: &mut Ctx) {
        declared(ctx.metrics().declare::<ReorderCounter>());
    }

    fn on_fragment(&mut self, ctx: &mut Ctx, _: usize, meta: &Meta, packet: &[u8]) {
        if !self.ordered {
            Reorder::deliver(ctx, meta.sig, meta.ctl, meta.tsorig, packet);
            return;
        }
        let Some(at) = meta.sig.checked_sub(self.next) else {
            // Given up on earlier: deliver late rather than lose it.
            Reorder::deliver(ctx, meta.sig, meta.ctl, meta.tsorig, packet);
            return;
        };
        let at = at as usize;
        if at >= self.window.len() {
            self.window.resize(at + 1, None);
        }
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(packet);
        self.window[at] = Some((meta.ctl, meta.tsorig, buf));
        self.release(ctx, false);
    }
}

/// Most verdicts the reorder tile sends per callback.
pub const REORDER_BURST: usize = 64;

//! Verifies micro-batches with the lane verifier (a key cache, a latency budget).

use super::*;

/// Verifies micro-batches with the lane verifier: a batch goes when it holds `batch`
/// packets, or when the input has run dry and its oldest packet has waited `budget`
/// (zero, the default: as soon as the input is dry). Under load the input never runs
/// dry and batches fill; at low load a packet is verified as soon as it arrives (small
/// batches take the single-signature path, so this costs no throughput there).
#[derive(Debug)]
pub struct Verify {
    /// Which of the verify tiles.
    pub index: usize,
    /// Packets per batch.
    pub batch: usize,
    /// Longest wait of a packet for its batch.
    pub budget: Duration,
    /// Rule mode.
    pub mode: Mode,
    /// Where batches are verified (the CPU lanes unless the topology says otherwise).
    pub backend: wirespeed_engine::Backend,
    /// The held packets' payloads, back to back.
    arena: Vec<u8>,
    held: Vec<Held>,
    first: Option<Instant>,
    verdicts: Vec<Result<(), VerifyError>>,
    deal: Option<Arc<Deal>>,
    key_cache: Option<Arc<KeyCache>>,
}

/// A packet waiting in a verify tile's batch.
#[derive(Clone, Copy, Debug)]
struct Held {
    /// Where its payload starts in the arena.
    off: usize,
    /// Payload length.
    len: usize,
    /// Its ticket (`meta.sig`).
    ticket: u64,
    /// Its ingest time (`meta.tsorig`).
    tsorig: u32,
    /// Its kind and destination bits (`meta.ctl`).
    ctl: u16,
    /// Where its signatures lie (None: the fragment carried no consistent descriptor,
    /// and the packet gets a bad verdict).
    desc: Option<TxnDesc>,
}

impl Verify {
    /// Verify tile `index`.
    pub fn new(index: usize, batch: usize, budget: Duration, mode: Mode) -> Verify {
        let batch = batch.clamp(1, 1 << 16);
        Verify {
            index,
            batch,
            budget,
            mode,
            backend: wirespeed_engine::Backend::CPU,
            arena: Vec::with_capacity(batch * 1232),
            held: Vec::with_capacity(batch),
            first: None,
            verdicts: Vec::new(),
            deal: None,
            key_cache: None,
        }
    }

    /// Looks public keys up in `cache` (shared by the verify tiles; None: no cache)
    /// before decoding them on the CPU path. Verdicts are the same either way.
    pub fn caching(mut self, cache: Option<Arc<KeyCache>>) -> Verify {
        self.key_cache = cache;
        self
    }

    /// Reports each batch it starts verifying to `deal` (the parse tile deals by
    /// backlog).
    pub fn reporting(mut self, deal: Arc<Deal>) -> Verify {
        self.deal = Some(deal);
        self
    }

    /// Verifies on `backend` instead of the CPU lanes. A batch the GPU fails on is
    /// verified on the CPU (counted as `gpu_fallbacks`), so every ticket still leaves
    /// with a verdict.
    pub fn on(mut self, backend: wirespeed_engine::Backend) -> Verify {
        self.backend = backend;
        self
    }

    fn flush(&mut self, ctx: &mut Ctx) {
        if self.held.is_empty() {
            return;
        }
        if let Some(d) = &self.deal {
            d.taken(self.index, self.held.len() as u64);
        }
        // One item per signature, read where the parse tile's descriptor says (no second
        // parse); `owner[i]` is the packet of item i.
        let mut items: Vec<Item<'_>> = Vec::with_capacity(self.held.len() * 2);
        let mut owner = Vec::with_capacity(self.held.len() * 2);
        let mut bad = vec![false; self.held.len()];
        for (p, h) in self.held.iter().enumerate() {
            match h.desc {
                Some(d) => {
                    for it in d.items(&self.arena[h.off..h.off + h.len]) {
                        items.push(it);
                        owner.push(p);
                    }
                }
                None => bad[p] = true,
            }
        }
        // The engine's service rule: a batch the GPU fails on is answered on the CPU.
        let cache = self.key_cache.as_deref();
        if verify_many_here_cached(self.backend, &items, self.mode, cache, &mut self.verdicts)
            .is_some()
        {
            ctx.metrics().count(VerifyCounter::GpuFallbacks, 1);
        }
        for (v, &p) in self.verdicts.iter().zip(&owner) {
            bad[p] |= v.is_err();
        }
        drop(items);
        for (p, h) in self.held.iter().enumerate() {
            let base = h.ctl & !(VERDICT_MASK | LANE_MASK);
            if bad[p] {
                ctx.metrics().add(Counter::Rejected, 1);
                ctx.publish(0, &[], h.ticket, base | BAD_SIG, h.tsorig);
            } else {
                let payload = &self.arena[h.off..h.off + h.len];
                ctx.publish(0, payload, h.ticket, base | VALID, h.tsorig);
            }
        }
        ctx.metrics().count(VerifyCounter::Batches, 1);
        self.held.clear();
        self.arena.clear();
        self.first = None;
    }
}

impl Tile for Verify {
    fn name(&self) -> String {
        format!("verify{}", self.index)
    }

    fn burst(&self) -> u64 {
        self.batch as u64
    }

    fn on_start(&mut self, ctx: &mut Ctx) {
        declared(ctx.metrics().declare_one(VerifyCounter::Batches));
        declared(ctx.metrics().declare_one(VerifyCounter::BadDescriptor));
        if !matches!(self.backend, wirespeed_engine::Backend::Cpu(_)) {
            declared(ctx.metrics().declare_one(VerifyCounter::GpuFallbacks));
        }
    }

    fn on_fragment(&mut self, ctx: &mut Ctx, _: usize, meta: &Meta, fragment: &[u8]) {
        let (payload, desc) = match TxnDesc::split(fragment) {
            Some((payload, desc)) => (payload, Some(desc)),
            None => {
                ctx.metrics().count(VerifyCounter::BadDescriptor, 1);
                (fragment, None)
            }
        };
        let off = self.arena.len();
        self.arena.extend_from_slice(payload);
        self.held.push(Held {
            off,
            len: payload.len(),
            ticket: meta.sig,
            tsorig: meta.tsorig,
            ctl: meta.ctl,
            desc,
        });
        self.first.get_or_insert_with(Instant::now);
        if self.held.len() >= self.batch {
            self.flush(ctx);
        }
    }

    fn on_idle(&mut self, ctx: &mut Ctx) -> bool {
        match self.first {
            Some(t) if t.elapsed() >= self.budget => {
                self.flush(ctx);
                true
            }
            _ => false,
        }
    }

    fn on_end(&mut self, ctx: &mut Ctx) {
        self.flush(ctx);
    }
}

//! Drops duplicates of valid packets within the horizon; counts verdicts.

use super::*;

/// Delivers valid packets to their destination unless seen within the horizon; counts
/// bad signatures and duplicates.
#[derive(Debug)]
pub struct DedupTile {
    set: Dedup,
}

impl DedupTile {
    /// Remembering the last `horizon` transaction ids.
    pub fn new(horizon: usize) -> DedupTile {
        DedupTile {
            set: Dedup::new(horizon),
        }
    }
}

impl Tile for DedupTile {
    fn name(&self) -> String {
        "dedup".into()
    }

    fn on_start(&mut self, ctx: &mut Ctx) {
        declared(ctx.metrics().declare::<DedupCounter>());
    }

    fn on_fragment(&mut self, ctx: &mut Ctx, _: usize, meta: &Meta, packet: &[u8]) {
        if meta.ctl & VERDICT_MASK != VALID {
            ctx.metrics().count(DedupCounter::BadSignature, 1);
            return;
        }
        let id = packet_id(meta.ctl & KIND_RAW != 0, packet);
        if id.is_some_and(|id| !self.set.insert(&id)) {
            ctx.metrics().add(Counter::Rejected, 1);
            ctx.metrics().count(DedupCounter::Duplicate, 1);
            return;
        }
        let dest = usize::from(meta.ctl >> DEST_SHIFT) & (MAX_DEST - 1);
        ctx.publish(
            dest.min(ctx.outputs() - 1),
            packet,
            meta.sig,
            meta.ctl,
            meta.tsorig,
        );
    }
}

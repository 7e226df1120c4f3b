//! Consumes verified transactions: counts, latency, ids.

use super::*;

/// What a sink saw.
#[derive(Debug)]
pub struct SinkReport {
    /// Transaction ids accepted, in delivery order (when collected).
    pub ids: Vec<[u8; 64]>,
    /// Ingest-to-verdict latency, nanoseconds.
    pub latency: Histogram<u64>,
}

/// A consumer of verified transactions: counts them, records their latency and (when
/// asked) their ids.
#[derive(Debug)]
pub struct Sink {
    /// Destination number.
    pub index: usize,
    collect: bool,
    report: Arc<Mutex<SinkReport>>,
    /// Fault injection: panic on the transaction after this many (tests of the
    /// failure path use it; None in normal runs).
    pub fail_after: Option<u64>,
    seen: u64,
}

impl Sink {
    /// Sink `index`; its report is shared with the caller.
    pub fn new(index: usize, collect: bool) -> (Sink, Arc<Mutex<SinkReport>>) {
        let latency = Histogram::new_with_bounds(1, 60_000_000_000, 3)
            .unwrap_or_else(|_| unreachable!("constant histogram bounds"));
        let report = Arc::new(Mutex::new(SinkReport {
            ids: Vec::new(),
            latency,
        }));
        (
            Sink {
                index,
                collect,
                report: report.clone(),
                fail_after: None,
                seen: 0,
            },
            report,
        )
    }
}

impl Tile for Sink {
    fn name(&self) -> String {
        format!("sink{}", self.index)
    }

    fn on_fragment(&mut self, ctx: &mut Ctx, _: usize, meta: &Meta, packet: &[u8]) {
        if self.fail_after.is_some_and(|n| self.seen >= n) {
            panic!("injected failure after {} transactions", self.seen);
        }
        self.seen += 1;
        let ns = u64::from(now_ns32().wrapping_sub(meta.tsorig));
        ctx.metrics().record_ns(ns);
        let mut r = self.report.lock().unwrap_or_else(|p| p.into_inner());
        let _ = r.latency.record(ns.max(1));
        if self.collect {
            if let Some(id) = packet_id(meta.ctl & KIND_RAW != 0, packet) {
                r.ids.push(id);
            }
        }
    }
}

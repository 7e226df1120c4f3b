//! The stages of the verification pipeline, as [`wirespeed_disco::Tile`]s.
//!
//! Fragments between tiles: the payload is the packet (a Solana transaction, or a raw
//! record `pk(32) || sig(64) || msg`); `meta.sig` carries the packet's *ticket* (its
//! rank among well-formed packets, from 1, assigned by the parse tile) and `meta.tsorig`
//! its ingest time; `meta.ctl` carries the kind, the verdict and the destination (and,
//! from the parse tile to the verify tiles, the verify tile that takes it:
//! [`crate::deal`]). The packet is parsed once: on the parse -> verify link it is followed by a
//! [`TxnDesc`](crate::desc::TxnDesc) (where its signatures, keys and message lie), which
//! the verify tiles read instead of parsing again and do not pass on.
//!
//! ```text
//! source -> parse -> verify x N -> reorder -> dedup -> sink x D
//! ```
//!
//! Every ticket yields exactly one verdict at the reorder tile (valid or bad signature),
//! so it can put them back in arrival order without waiting for tickets that will never
//! come; malformed packets never get a ticket (the parse tile counts them by reason).
//! Dedup comes after reordering so that the first copy to *arrive* is the one kept (the
//! verifiers finish out of order; deduplicating before reordering would keep whichever
//! copy a verifier finished first, and deliver it at the later copy's place).

use std::io::BufRead;
use std::net::UdpSocket;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use wirespeed_disco::{Counter, Ctx, Tile};
use wirespeed_ed25519::{Item, KeyCache, Mode, VerifyError};
use wirespeed_engine::ed25519::verify_many_here_cached;
use wirespeed_tango::link::now_ns32;
use wirespeed_tango::Meta;

use crate::counters::declared;
pub use crate::counters::{
    DedupCounter, ParseCounter, ReorderCounter, SourceCounter, VerifyCounter,
};
use crate::deal::{Deal, Dealer};
use crate::dedup::Dedup;
use crate::desc::TxnDesc;
use crate::pcap::UdpReader;
use crate::solana::{self, ParseError};
use crate::udp::KernelDrops;

/// Kind bit: a raw record (else a Solana transaction).
pub const KIND_RAW: u16 = 1;
/// Verdict bits (2 bits at 1..3).
pub const VERDICT_MASK: u16 = 0b110;
/// Every signature verified.
pub const VALID: u16 = 1 << 1;
/// A signature failed (or a key or signature was malformed).
pub const BAD_SIG: u16 = 2 << 1;
/// Seen within the dedup horizon.
pub const DUPLICATE: u16 = 3 << 1;
/// The verify tile a packet is dealt to, on the parse -> verify link: 5 bits at 3..8
/// ([`crate::deal::LANE_MASK`]; cleared by the verify tile).
pub use crate::deal::LANE_MASK;
/// Destination: 4 bits at 8..12.
pub const DEST_SHIFT: u16 = 8;
/// Most destinations.
pub const MAX_DEST: usize = 16;

/// Largest packet carried (a Solana packet is at most 1232 bytes; a raw record may
/// carry a message of up to 1952 bytes). Longer packets are counted (`oversize`) and
/// dropped by the source.
pub const MAX_PACKET: usize = 2048;

/// Smallest raw record: key and signature, empty message.
const RAW_HEADER: usize = 96;

/// A raw record packet.
pub fn raw_packet(pk: &[u8], sig: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(RAW_HEADER + msg.len());
    p.extend_from_slice(pk);
    p.extend_from_slice(sig);
    p.extend_from_slice(msg);
    p
}

/// The transaction id of a packet: its first signature. Read straight from the bytes
/// (no parse): stages after the parse tile see well-formed packets only.
pub fn packet_id(kind_raw: bool, packet: &[u8]) -> Option<[u8; 64]> {
    if kind_raw {
        packet.get(32..96)?.try_into().ok()
    } else {
        solana::first_signature(packet)
    }
}

/// Where packets come from.
pub enum Input {
    /// Signature records (binary or JSON Lines), streamed.
    Records(sigdata_reader::Reader),
    /// UDP payloads of a capture, streamed.
    Pcap(Box<UdpReader<std::fs::File>>),
    /// A UDP socket (runs until stopped).
    Udp(UdpSocket),
    /// Packets in memory, each with its kind (true: raw record).
    Memory(std::vec::IntoIter<(bool, Vec<u8>)>),
}

/// The record reader behind [`Input::Records`].
pub mod sigdata_reader {
    /// A streaming reader of signature records.
    pub type Reader = wirespeed_sigdata::format::RecordReader<std::io::BufReader<std::fs::File>>;
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Input::Records(_) => "Records",
            Input::Pcap(_) => "Pcap",
            Input::Udp(_) => "Udp",
            Input::Memory(_) => "Memory",
        })
    }
}

/// Reads packets and publishes them (optionally at a fixed rate).
#[derive(Debug)]
pub struct Source {
    /// Where from.
    pub input: Input,
    /// Packets per second (None: as fast as the pipeline takes them).
    pub rate: Option<f64>,
    /// Stop after this many packets.
    pub limit: Option<u64>,
    pub(crate) sent: u64,
    pub(crate) start: Option<Instant>,
    pub(crate) buf: Vec<u8>,
    /// Why reading stopped early, if it did.
    pub(crate) error: Arc<Mutex<Option<String>>>,
    /// The kernel's drop count of a UDP source's socket, when it can be read.
    kernel_drops: Option<Arc<KernelDrops>>,
    /// When the drop count was last read.
    drops_read: Option<Instant>,
    /// The drop count as last read (widened to 64 bits).
    drops: u64,
}

/// How often the source reads the kernel's drop count of its socket.
pub const KERNEL_DROPS_EVERY: Duration = Duration::from_secs(1);

impl Source {
    /// A source; `error` receives the reason if the input turns out malformed.
    pub fn new(
        input: Input,
        rate: Option<f64>,
        limit: Option<u64>,
        error: Arc<Mutex<Option<String>>>,
    ) -> Source {
        Source {
            input,
            rate,
            limit,
            sent: 0,
            start: None,
            buf: vec![0; 65_536],
            error,
            kernel_drops: None,
            drops_read: None,
            drops: 0,
        }
    }

    /// Counts the kernel's drops of the UDP source's socket as `udp_kernel_drops`,
    /// read from `drops` at the start and then every [`KERNEL_DROPS_EVERY`].
    pub fn with_kernel_drops(mut self, drops: Arc<KernelDrops>) -> Source {
        self.kernel_drops = Some(drops);
        self
    }

    /// Reads the kernel's drop count into `udp_kernel_drops` (a failed read keeps the
    /// last count: the socket lives as long as the reader, so it does not happen).
    fn read_kernel_drops(&mut self, ctx: &mut Ctx) {
        if let Some(d) = &self.kernel_drops {
            self.drops_read = Some(Instant::now());
            if let Ok(total) = d.total(self.drops) {
                self.drops = total;
                ctx.metrics()
                    .set_count(SourceCounter::UdpKernelDrops, total);
            }
        }
    }

    fn fail(&self, ctx: &mut Ctx, why: String) {
        *self.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
        ctx.finish();
    }
}

impl Tile for Source {
    fn name(&self) -> String {
        "source".into()
    }

    fn burst(&self) -> u64 {
        SOURCE_BURST as u64
    }

    fn on_start(&mut self, ctx: &mut Ctx) {
        declared(ctx.metrics().declare::<SourceCounter>());
        if self.kernel_drops.is_some() {
            declared(ctx.metrics().declare_one(SourceCounter::UdpKernelDrops));
            self.read_kernel_drops(ctx);
        }
    }

    fn housekeeping(&mut self, ctx: &mut Ctx) {
        // Called while the source is held back too: that is when the kernel drops.
        if self
            .drops_read
            .is_some_and(|t| t.elapsed() >= KERNEL_DROPS_EVERY)
        {
            self.read_kernel_drops(ctx);
        }
    }

    fn on_fragment(&mut self, _: &mut Ctx, _: usize, _: &Meta, _: &[u8]) {}

    fn on_idle(&mut self, ctx: &mut Ctx) -> bool {
        // Up to a burst of packets per call (the runner checked the credits for it).
        let mut did = false;
        for _ in 0..SOURCE_BURST {
            if !self.next_packet(ctx) {
                break;
            }
            did = true;
        }
        did
    }
}

/// Most packets the source reads per call.
pub const SOURCE_BURST: usize = 16;

impl Source {
    /// Reads and publishes one packet; false when none is due or the input is done.
    fn next_packet(&mut self, ctx: &mut Ctx) -> bool {
        if ctx.is_finished() {
            return false;
        }
        if self.limit.is_some_and(|l| self.sent >= l) {
            ctx.finish();
            return false;
        }
        let start = *self.start.get_or_insert_with(Instant::now);
        // With a rate, a packet's ingest time is when it was due, not when it could be
        // sent: a pipeline that holds the source back is charged for the wait (no
        // coordinated omission in the latencies).
        let mut late = Duration::ZERO;
        if let Some(rate) = self.rate {
            let due = start + Duration::from_secs_f64(self.sent as f64 / rate);
            let now = Instant::now();
            if now < due {
                return false;
            }
            late = now - due;
        }
        let now =
            now_ns32().wrapping_sub(late.as_nanos().min(u64::from(u32::MAX / 2) as u128) as u32);
        let (raw, ok): (bool, Option<Vec<u8>>) = match &mut self.input {
            Input::Records(r) => match r.next() {
                None => (true, None),
                Some(Err(e)) => {
                    let why = e.to_string();
                    self.fail(ctx, why);
                    return false;
                }
                Some(Ok(rec)) => (true, Some(raw_packet(&rec.pk, &rec.sig, &rec.msg))),
            },
            Input::Pcap(r) => match r.next_packet() {
                None => (false, None),
                Some(Err(e)) => {
                    let why = e.to_string();
                    self.fail(ctx, why);
                    return false;
                }
                Some(Ok(p)) => (false, Some(p.payload.to_vec())),
            },
            Input::Udp(sock) => match sock.recv(&mut self.buf) {
                Ok(n) => (false, Some(self.buf[..n].to_vec())),
                Err(_) => return false,
            },
            Input::Memory(it) => match it.next() {
                None => (false, None),
                Some((raw, p)) => (raw, Some(p)),
            },
        };
        let Some(packet) = ok else {
            ctx.finish();
            return false;
        };
        let ctl = if raw { KIND_RAW } else { 0 };
        if packet.len() > MAX_PACKET {
            ctx.metrics().count(SourceCounter::Oversize, 1);
            ctx.metrics().add(Counter::Rejected, 1);
        } else {
            ctx.publish(0, &packet, 0, ctl, now);
        }
        self.sent += 1;
        true
    }
}

/// Parses packets: malformed ones are counted by reason and dropped; well-formed ones
/// get a ticket and a destination, and go on followed by their [`TxnDesc`] (and, with
/// [`Parse::dealing`], the verify tile that takes them).
#[derive(Debug)]
pub struct Parse {
    /// Destinations (sinks).
    pub dests: usize,
    pub(crate) ticket: u64,
    dealer: Option<Dealer>,
    /// The outgoing fragment: packet, then descriptor.
    frag: Vec<u8>,
}

impl Parse {
    /// A parse tile routing to `dests` destinations.
    pub fn new(dests: usize) -> Parse {
        Parse {
            dests: dests.clamp(1, MAX_DEST),
            ticket: 0,
            dealer: None,
            frag: Vec::with_capacity(MAX_PACKET + crate::desc::DESC_LEN),
        }
    }

    /// Names the verify tile of each packet in its control bits, by `dealer` (the
    /// verify tiles read theirs with `wirespeed_disco::Input::routed`).
    pub fn dealing(mut self, dealer: Dealer) -> Parse {
        self.dealer = Some(dealer);
        self
    }
}

impl Tile for Parse {
    fn name(&self) -> String {
        "parse".into()
    }

    fn on_start(&mut self, ctx: &mut Ctx) {
        declared(ctx.metrics().declare::<ParseCounter>());
    }

    fn on_fragment(&mut self, ctx: &mut Ctx, _: usize, meta: &Meta, packet: &[u8]) {
        let raw = meta.ctl & KIND_RAW != 0;
        let desc = if raw {
            if packet.len() < RAW_HEADER {
                ctx.metrics().count(ParseCounter::RawTooShort, 1);
                ctx.metrics().add(Counter::Rejected, 1);
                return;
            }
            TxnDesc::RAW
        } else {
            // `parse` accepts at most 1232 bytes and returns views into `packet`, so
            // every transaction it accepts has a descriptor; TooLong stands for the
            // impossible rest.
            match solana::parse(packet)
                .and_then(|t| TxnDesc::of_transaction(packet, &t).ok_or(ParseError::TooLong))
            {
                Ok(d) => d,
                Err(e) => {
                    ctx.metrics().count(ParseCounter::Malformed(e), 1);
                    ctx.metrics().add(Counter::Rejected, 1);
                    return;
                }
            }
        };
        // The first signer's key picks the destination.
        let key0 = packet.get(usize::from(desc.key_off)).copied().unwrap_or(0);
        self.ticket += 1;
        let dest = (key0 as usize % self.dests) as u16;
        let lane = self
            .dealer
            .as_mut()
            .map_or(0, |d| Dealer::lane_bits(d.next_lane()));
        let ctl = (meta.ctl & KIND_RAW) | dest << DEST_SHIFT | lane;
        self.frag.clear();
        self.frag.extend_from_slice(packet);
        self.frag.extend_from_slice(&desc.encode());
        ctx.publish(0, &self.frag, self.ticket, ctl, meta.tsorig);
    }
}

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

/// Reads signature records for [`Input::Records`].
pub fn open_records(path: &std::path::Path) -> std::io::Result<sigdata_reader::Reader> {
    let format = wirespeed_sigdata::format::Format::from_path(path);
    let file = std::fs::File::open(path)?;
    let reader = std::io::BufReader::new(file);
    let _: &dyn BufRead = &reader;
    Ok(wirespeed_sigdata::format::RecordReader::new(reader, format))
}

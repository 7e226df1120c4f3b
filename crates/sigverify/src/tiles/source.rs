//! Reads packets: a record file, a capture, a UDP socket or packets in memory, published
//! as they come or at a fixed rate.

use super::*;

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

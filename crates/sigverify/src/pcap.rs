//! UDP payloads from pcap and pcapng captures, and a pcap writer for generated traffic.
//!
//! Reading: [`UdpReader`] takes a classic pcap (either byte order, microsecond or
//! nanosecond timestamps) or a pcapng file (any number of sections and interfaces, each
//! interface's `if_tsresol` and `if_tsoffset` applied), parsed by the `pcap-file` crate,
//! and yields each UDP datagram's payload with its timestamp in nanoseconds since the
//! Unix epoch. Frames are decoded by [`decode_frame`] for these link types: Ethernet II
//! with up to [`MAX_VLAN_TAGS`] 802.1Q/802.1ad tags, Linux cooked capture v1 and v2, raw
//! IP (either version, or v4/v6 only), and BSD loopback (`NULL` and `LOOP`). IPv4 options
//! are skipped by the header length; IPv6 hop-by-hop, routing and destination-options
//! headers are skipped (at most [`MAX_IPV6_EXTENSIONS`]). Everything else (other link
//! types, non-IP, non-UDP, fragments of either IP version, unskippable IPv6 extension
//! headers, lengths that disagree) is skipped and counted by [`Skip`] reason; UDP
//! checksums are not checked. A malformed capture structure stops reading with a
//! [`CaptureError`]. Memory is bounded: `pcap-file` reads through one fixed 8 MB buffer
//! (a record larger than that is reported as [`CaptureError::Truncated`]), and the reader
//! keeps one payload buffer of at most [`MAX_PAYLOAD`] bytes.
//!
//! Writing: [`write_pcap`] wraps each payload in Ethernet II / IPv4 / UDP from
//! 10.0.0.1:8001 to 10.0.0.2:8002 (valid IPv4 header and UDP checksums) in a
//! nanosecond-resolution little-endian pcap, one packet per microsecond.

mod frame;
mod write;

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{PcapError, TsResolution};

pub use frame::{
    decode_frame, LinkType, Skip, SkipCounts, Udp, MAX_IPV6_EXTENSIONS, MAX_PAYLOAD, MAX_VLAN_TAGS,
};
pub use write::{
    udp_frame, write_pcap, write_pcap_to, MAX_WRITE_PAYLOAD, WRITE_DST, WRITE_EPOCH_S, WRITE_SRC,
};

/// Most pcapng interfaces remembered per section (packets on later ones are skipped).
pub const MAX_INTERFACES: usize = 1 << 16;

/// Why a capture could not be read or written.
#[derive(Debug)]
pub enum CaptureError {
    /// Reading or writing failed.
    Io(io::Error),
    /// The input does not start with a pcap or pcapng magic number.
    NotACapture,
    /// The input ends inside a record (or holds a record over the 8 MB read buffer).
    Truncated,
    /// The capture's structure is malformed (the `pcap-file` parser's reason).
    Malformed(String),
    /// A payload too long for one IPv4/UDP datagram (bytes; at most
    /// [`MAX_WRITE_PAYLOAD`]).
    PayloadTooLong(usize),
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::Io(e) => write!(f, "i/o error: {e}"),
            CaptureError::NotACapture => f.write_str("not a pcap or pcapng file"),
            CaptureError::Truncated => f.write_str("capture ends inside a record"),
            CaptureError::Malformed(m) => write!(f, "malformed capture: {m}"),
            CaptureError::PayloadTooLong(n) => write!(
                f,
                "payload of {n} bytes exceeds the {MAX_WRITE_PAYLOAD}-byte UDP/IPv4 limit"
            ),
        }
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CaptureError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for CaptureError {
    fn from(e: io::Error) -> Self {
        CaptureError::Io(e)
    }
}

impl From<PcapError> for CaptureError {
    fn from(e: PcapError) -> Self {
        match e {
            PcapError::IoError(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                CaptureError::Truncated
            }
            PcapError::IoError(e) => CaptureError::Io(e),
            PcapError::IncompleteBuffer => CaptureError::Truncated,
            other => CaptureError::Malformed(other.to_string()),
        }
    }
}

/// One UDP payload read from a capture, borrowed from the reader until the next call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpPacket<'a> {
    /// Capture timestamp, nanoseconds since the Unix epoch (0 for pcapng simple packet
    /// blocks, which carry none).
    pub ts_ns: u64,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// The UDP payload.
    pub payload: &'a [u8],
}

/// A pcapng interface: its link type and timestamp units.
#[derive(Clone, Copy, Debug)]
struct Iface {
    link: Option<LinkType>,
    /// `if_tsresol`: 10^-n seconds per tick, or 2^-n with the high bit set.
    tsresol: u8,
    /// `if_tsoffset`, seconds.
    offset_s: u64,
}

impl Iface {
    fn new(idb: &InterfaceDescriptionBlock<'_>) -> Iface {
        let mut i = Iface {
            link: LinkType::from_linktype(u32::from(idb.linktype)),
            tsresol: 6,
            offset_s: 0,
        };
        for o in &idb.options {
            match o {
                InterfaceDescriptionOption::IfTsResol(r) => i.tsresol = *r,
                InterfaceDescriptionOption::IfTsOffset(s) => i.offset_s = *s,
                _ => {}
            }
        }
        i
    }

    fn ts_ns(&self, ticks: u64) -> u64 {
        let ticks = u128::from(ticks);
        let ns = if self.tsresol & 0x80 != 0 {
            (ticks * 1_000_000_000) >> (self.tsresol & 0x7f)
        } else {
            let r = u32::from(self.tsresol);
            if r <= 9 {
                ticks * 10u128.pow(9 - r)
            } else {
                10u128.checked_pow(r - 9).map_or(0, |d| ticks / d)
            }
        };
        let ns = u64::try_from(ns).unwrap_or(u64::MAX);
        ns.saturating_add(self.offset_s.saturating_mul(1_000_000_000))
    }
}

enum Inner<R: Read> {
    Pcap {
        reader: PcapReader<R>,
        link: Option<LinkType>,
        nanos: bool,
    },
    PcapNg {
        reader: PcapNgReader<R>,
        ifaces: Vec<Iface>,
    },
}

/// What reading one record gave.
enum Step {
    End,
    Failed(CaptureError),
    /// A block that is not a packet, or a skipped packet (already counted).
    Nothing,
    /// A UDP datagram whose payload is now in the reader's buffer.
    Packet {
        ts_ns: u64,
        src_port: u16,
        dst_port: u16,
    },
}

/// Reads UDP payloads from a pcap or pcapng stream (detected by its magic number).
pub struct UdpReader<R: Read> {
    inner: Inner<io::Chain<io::Cursor<[u8; 4]>, R>>,
    buf: Vec<u8>,
    skipped: SkipCounts,
    done: bool,
}

impl<R: Read> fmt::Debug for UdpReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.inner {
            Inner::Pcap { .. } => "pcap",
            Inner::PcapNg { .. } => "pcapng",
        };
        f.debug_struct("UdpReader")
            .field("format", &kind)
            .field("skipped", &self.skipped)
            .field("done", &self.done)
            .finish()
    }
}

impl UdpReader<File> {
    /// Opens a capture file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CaptureError> {
        // pcap-file reads through its own 8 MB buffer: no BufReader.
        UdpReader::new(File::open(path)?)
    }
}

impl<R: Read> UdpReader<R> {
    /// Reads the file header.
    pub fn new(mut r: R) -> Result<Self, CaptureError> {
        let mut magic = [0u8; 4];
        r.read_exact(&mut magic).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => CaptureError::NotACapture,
            _ => CaptureError::Io(e),
        })?;
        let input = io::Cursor::new(magic).chain(r);
        let inner = match magic {
            [0x0a, 0x0d, 0x0d, 0x0a] => Inner::PcapNg {
                reader: PcapNgReader::new(input)?,
                ifaces: Vec::new(),
            },
            [0xa1, 0xb2, 0xc3, 0xd4]
            | [0xd4, 0xc3, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0x3c, 0x4d]
            | [0x4d, 0x3c, 0xb2, 0xa1] => {
                let reader = PcapReader::new(input)?;
                let h = reader.header();
                Inner::Pcap {
                    link: LinkType::from_linktype(u32::from(h.datalink)),
                    nanos: h.ts_resolution == TsResolution::NanoSecond,
                    reader,
                }
            }
            _ => return Err(CaptureError::NotACapture),
        };
        Ok(UdpReader {
            inner,
            buf: Vec::new(),
            skipped: SkipCounts::default(),
            done: false,
        })
    }

    /// Frames skipped so far, by reason.
    pub fn skipped(&self) -> &SkipCounts {
        &self.skipped
    }

    /// The next UDP payload; `None` at the end of the capture. An error ends the stream
    /// (the next call returns `None`).
    pub fn next_packet(&mut self) -> Option<Result<UdpPacket<'_>, CaptureError>> {
        if self.done {
            return None;
        }
        loop {
            let step = match &mut self.inner {
                Inner::Pcap {
                    reader,
                    link,
                    nanos,
                } => pcap_step(reader, *link, *nanos, &mut self.buf, &mut self.skipped),
                Inner::PcapNg { reader, ifaces } => {
                    pcapng_step(reader, ifaces, &mut self.buf, &mut self.skipped)
                }
            };
            match step {
                Step::Nothing => continue,
                Step::End => {
                    self.done = true;
                    return None;
                }
                Step::Failed(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Step::Packet {
                    ts_ns,
                    src_port,
                    dst_port,
                } => {
                    return Some(Ok(UdpPacket {
                        ts_ns,
                        src_port,
                        dst_port,
                        payload: &self.buf,
                    }))
                }
            }
        }
    }
}

/// Decodes a frame into `buf`, or counts why not.
fn take_frame(
    link: Option<LinkType>,
    frame: &[u8],
    ts_ns: u64,
    buf: &mut Vec<u8>,
    skipped: &mut SkipCounts,
) -> Step {
    let Some(link) = link else {
        skipped.add(Skip::UnsupportedLink);
        return Step::Nothing;
    };
    match decode_frame(link, frame) {
        Ok(u) => {
            buf.clear();
            buf.extend_from_slice(u.payload);
            Step::Packet {
                ts_ns,
                src_port: u.src_port,
                dst_port: u.dst_port,
            }
        }
        Err(s) => {
            skipped.add(s);
            Step::Nothing
        }
    }
}

fn pcap_step<R: Read>(
    reader: &mut PcapReader<R>,
    link: Option<LinkType>,
    nanos: bool,
    buf: &mut Vec<u8>,
    skipped: &mut SkipCounts,
) -> Step {
    // Raw records: the checked form rejects records whose original length exceeds the
    // snapshot length, which real captures contain.
    match reader.next_raw_packet() {
        None => Step::End,
        Some(Err(e)) => Step::Failed(e.into()),
        Some(Ok(p)) => {
            let frac = u64::from(p.ts_frac) * if nanos { 1 } else { 1000 };
            let ts_ns = u64::from(p.ts_sec) * 1_000_000_000 + frac;
            take_frame(link, &p.data, ts_ns, buf, skipped)
        }
    }
}

fn pcapng_step<R: Read>(
    reader: &mut PcapNgReader<R>,
    ifaces: &mut Vec<Iface>,
    buf: &mut Vec<u8>,
    skipped: &mut SkipCounts,
) -> Step {
    let block = match reader.next_block() {
        None => return Step::End,
        Some(Err(e)) => return Step::Failed(e.into()),
        Some(Ok(b)) => b,
    };
    let (iface, ticks, data): (u32, u64, &[u8]) = match &block {
        Block::SectionHeader(_) => {
            ifaces.clear();
            return Step::Nothing;
        }
        Block::InterfaceDescription(idb) => {
            if ifaces.len() < MAX_INTERFACES {
                ifaces.push(Iface::new(idb));
            }
            return Step::Nothing;
        }
        Block::EnhancedPacket(p) => {
            let ticks = u64::try_from(p.timestamp.as_nanos()).unwrap_or(u64::MAX);
            (p.interface_id, ticks, &p.data)
        }
        Block::Packet(p) => (u32::from(p.interface_id), p.timestamp, &p.data),
        Block::SimplePacket(p) => {
            // The data includes the block's padding; IP lengths trim it.
            let Some(i) = ifaces.first() else {
                skipped.add(Skip::UnknownInterface);
                return Step::Nothing;
            };
            return take_frame(i.link, &p.data, 0, buf, skipped);
        }
        _ => return Step::Nothing,
    };
    let Some(i) = usize::try_from(iface).ok().and_then(|i| ifaces.get(i)) else {
        skipped.add(Skip::UnknownInterface);
        return Step::Nothing;
    };
    take_frame(i.link, data, i.ts_ns(ticks), buf, skipped)
}

/// Everything read from a capture.
#[derive(Debug, Default)]
pub struct Capture {
    /// `(timestamp_ns, payload)` for each UDP datagram, in capture order.
    pub packets: Vec<(u64, Vec<u8>)>,
    /// Frames skipped, by reason.
    pub skipped: SkipCounts,
    /// The error that stopped reading early, if any; the packets before it are kept.
    pub error: Option<CaptureError>,
}

/// Reads every UDP payload of a capture file. Fails only if the file cannot be opened
/// or has no pcap/pcapng header; a later error is returned in [`Capture::error`].
pub fn read_udp_payloads(path: impl AsRef<Path>) -> Result<Capture, CaptureError> {
    read_udp_payloads_from(File::open(path)?)
}

/// [`read_udp_payloads`] from any reader.
pub fn read_udp_payloads_from<R: Read>(r: R) -> Result<Capture, CaptureError> {
    let mut reader = UdpReader::new(r)?;
    let mut out = Capture::default();
    while let Some(p) = reader.next_packet() {
        match p {
            Ok(p) => out.packets.push((p.ts_ns, p.payload.to_vec())),
            Err(e) => out.error = Some(e),
        }
    }
    out.skipped = *reader.skipped();
    Ok(out)
}

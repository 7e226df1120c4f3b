//! The pcap writer: each payload wrapped in Ethernet II / IPv4 / UDP.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use super::frame::{IPV4_HEADER_LEN, PROTO_UDP, UDP_HEADER_LEN};
use super::CaptureError;

/// Largest payload [`write_pcap`] accepts: the 16-bit IPv4 total length less the IPv4 and
/// UDP headers.
pub const MAX_WRITE_PAYLOAD: usize = 65535 - IPV4_HEADER_LEN - UDP_HEADER_LEN;

/// Source address of written frames: 10.0.0.1:8001.
pub const WRITE_SRC: ([u8; 4], u16) = ([10, 0, 0, 1], 8001);
/// Destination address of written frames: 10.0.0.2:8002.
pub const WRITE_DST: ([u8; 4], u16) = ([10, 0, 0, 2], 8002);
/// Timestamp of the first written packet: 2023-11-14T22:13:20Z, in seconds.
pub const WRITE_EPOCH_S: u64 = 1_700_000_000;

/// One's-complement sum of big-endian 16-bit words (odd length padded with a zero).
fn sum16(mut acc: u32, b: &[u8]) -> u32 {
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Replaces `out` with an Ethernet II / IPv4 / UDP frame from [`WRITE_SRC`] to
/// [`WRITE_DST`] carrying `payload`, with IPv4 identification `ip_id`.
pub fn udp_frame(payload: &[u8], ip_id: u16, out: &mut Vec<u8>) -> Result<(), CaptureError> {
    if payload.len() > MAX_WRITE_PAYLOAD {
        return Err(CaptureError::PayloadTooLong(payload.len()));
    }
    let udp_len = (UDP_HEADER_LEN + payload.len()) as u16;
    let total = (IPV4_HEADER_LEN + UDP_HEADER_LEN + payload.len()) as u16;
    let (src, sport) = WRITE_SRC;
    let (dst, dport) = WRITE_DST;
    out.clear();
    // Ethernet: locally administered MACs 02:00:00:00:00:02 <- 02:00:00:00:00:01.
    out.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let ip = out.len();
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&ip_id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0, 64, PROTO_UDP, 0, 0]); // DF, TTL 64, checksum 0
    out.extend_from_slice(&src);
    out.extend_from_slice(&dst);
    let csum = fold(sum16(0, &out[ip..]));
    out[ip + 10..ip + 12].copy_from_slice(&csum.to_be_bytes());
    let udp = out.len();
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&udp_len.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(payload);
    // UDP checksum over the pseudo-header (addresses, protocol, length) and datagram.
    let mut acc = sum16(0, &src);
    acc = sum16(acc, &dst);
    acc += u32::from(PROTO_UDP) + u32::from(udp_len);
    let csum = match fold(sum16(acc, &out[udp..])) {
        0 => 0xffff,
        c => c,
    };
    out[udp + 6..udp + 8].copy_from_slice(&csum.to_be_bytes());
    Ok(())
}

/// Writes a pcap of one Ethernet/IPv4/UDP frame per payload (see [`udp_frame`]) to `w`;
/// packet `i` is stamped [`WRITE_EPOCH_S`] plus `i` microseconds. Returns the number of
/// packets written.
pub fn write_pcap_to<'a, W: Write>(
    w: W,
    packets: impl IntoIterator<Item = &'a [u8]>,
) -> Result<u64, CaptureError> {
    let header = PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: 262_144,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
    };
    let mut writer = PcapWriter::with_header(w, header)?;
    let mut frame = Vec::with_capacity(2048);
    let mut n = 0u64;
    for payload in packets {
        udp_frame(payload, n as u16, &mut frame)?;
        let packet = PcapPacket {
            timestamp: Duration::from_secs(WRITE_EPOCH_S) + Duration::from_micros(n),
            orig_len: frame.len() as u32,
            data: Cow::Borrowed(&frame),
        };
        writer.write_packet(&packet)?;
        n += 1;
    }
    let mut w = writer.into_writer();
    w.flush()?;
    Ok(n)
}

/// [`write_pcap_to`] a new file at `path` (replacing any).
pub fn write_pcap<'a>(
    path: impl AsRef<Path>,
    packets: impl IntoIterator<Item = &'a [u8]>,
) -> Result<u64, CaptureError> {
    write_pcap_to(BufWriter::new(File::create(path)?), packets)
}

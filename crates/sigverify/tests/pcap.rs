//! Capture reading and writing: written pcaps read back exactly (payloads, timestamps,
//! ports, checksums); every supported link type, VLAN tags, IPv4 options and IPv6
//! extension headers decode; everything else is skipped under the right reason; damaged
//! captures end in a typed error, never a panic.

use std::borrow::Cow;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::SectionHeaderBlock;
use pcap_file::pcapng::blocks::simple_packet::SimplePacketBlock;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, Endianness, TsResolution};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_sigverify::gen::generate;
use wirespeed_sigverify::pcap::{
    decode_frame, read_udp_payloads, read_udp_payloads_from, udp_frame, write_pcap, write_pcap_to,
    CaptureError, LinkType, Skip, UdpReader, MAX_WRITE_PAYLOAD, WRITE_EPOCH_S,
};
use wirespeed_sigverify::solana::parse;

fn checksum_ok(bytes: &[u8], mut acc: u32) -> bool {
    for c in bytes.chunks(2) {
        acc += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc == 0xffff
}

fn ipv4_udp(payload: &[u8], options: usize, frag: u16, proto: u8) -> Vec<u8> {
    let ihl = 20 + options;
    let total = (ihl + 8 + payload.len()) as u16;
    let mut b = vec![0x40 | (ihl / 4) as u8, 0];
    b.extend_from_slice(&total.to_be_bytes());
    b.extend_from_slice(&[0, 1]);
    b.extend_from_slice(&frag.to_be_bytes());
    b.extend_from_slice(&[64, proto, 0, 0, 192, 168, 1, 1, 192, 168, 1, 2]);
    b.extend(std::iter::repeat_n(1u8, options)); // NOP options
    b.extend_from_slice(&1234u16.to_be_bytes());
    b.extend_from_slice(&8001u16.to_be_bytes());
    b.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(payload);
    b
}

/// IPv6/UDP behind the extension headers `ext` (each 8 bytes, given by type).
fn ipv6_udp(payload: &[u8], ext: &[u8]) -> Vec<u8> {
    let mut upper = Vec::new();
    for (i, _) in ext.iter().enumerate() {
        let next = ext.get(i + 1).copied().unwrap_or(17);
        upper.extend_from_slice(&[next, 0, 0, 0, 0, 0, 0, 0]);
    }
    upper.extend_from_slice(&5555u16.to_be_bytes());
    upper.extend_from_slice(&8001u16.to_be_bytes());
    upper.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    upper.extend_from_slice(&[0, 0]);
    upper.extend_from_slice(payload);
    let mut b = vec![0x60, 0, 0, 0];
    b.extend_from_slice(&(upper.len() as u16).to_be_bytes());
    b.push(ext.first().copied().unwrap_or(17));
    b.push(64);
    b.extend_from_slice(&[0xfe; 16]);
    b.extend_from_slice(&[0xfd; 16]);
    b.extend_from_slice(&upper);
    b
}

fn ethernet(ethertype: u16, vlans: &[u16], ip: &[u8]) -> Vec<u8> {
    let mut b = vec![0xaa; 12];
    for tpid in vlans {
        b.extend_from_slice(&tpid.to_be_bytes());
        b.extend_from_slice(&[0, 7]);
    }
    b.extend_from_slice(&ethertype.to_be_bytes());
    b.extend_from_slice(ip);
    b
}

fn sll(proto: u16, ip: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0];
    b.extend_from_slice(&proto.to_be_bytes());
    b.extend_from_slice(ip);
    b
}

fn sll2(proto: u16, ip: &[u8]) -> Vec<u8> {
    let mut b = proto.to_be_bytes().to_vec();
    b.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0]);
    b.extend_from_slice(ip);
    b
}

#[test]
fn written_pcap_reads_back() {
    let payloads: Vec<Vec<u8>> = vec![
        vec![],
        b"hello".to_vec(),
        vec![0xab; 1232],
        vec![7; MAX_WRITE_PAYLOAD],
    ];
    let path = std::env::temp_dir().join(format!("sigverify-test-{}.pcap", std::process::id()));
    let n = write_pcap(&path, payloads.iter().map(|p| &p[..])).unwrap();
    assert_eq!(n, 4);
    let cap = read_udp_payloads(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(cap.error.is_none());
    assert_eq!(cap.skipped.total(), 0);
    assert_eq!(cap.packets.len(), 4);
    for (i, ((ts, p), want)) in cap.packets.iter().zip(&payloads).enumerate() {
        assert_eq!(p, want);
        assert_eq!(*ts, WRITE_EPOCH_S * 1_000_000_000 + i as u64 * 1000);
    }

    assert!(matches!(
        UdpReader::new(&b""[..]),
        Err(CaptureError::NotACapture)
    ));
    assert!(matches!(
        UdpReader::new(&b"nope, text"[..]),
        Err(CaptureError::NotACapture)
    ));
    let mut buf = Vec::new();
    write_pcap_to(&mut buf, [&b"x"[..]]).unwrap();
    let mut r = UdpReader::new(&buf[..]).unwrap();
    let p = r.next_packet().unwrap().unwrap();
    assert_eq!((p.src_port, p.dst_port, p.payload), (8001, 8002, &b"x"[..]));
    assert!(r.next_packet().is_none());
    assert!(r.next_packet().is_none());
}

#[test]
fn written_frames_have_valid_checksums() {
    let mut frame = Vec::new();
    for len in [0usize, 1, 2, 3, 100, 1232, 1233] {
        let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        udp_frame(&payload, 9, &mut frame).unwrap();
        let ip = &frame[14..];
        assert!(checksum_ok(&ip[..20], 0), "IPv4 header checksum");
        let udp_len = 8 + len as u32;
        let pseudo = sum_words(&ip[12..20]) + 17 + udp_len;
        assert!(checksum_ok(&ip[20..], pseudo), "UDP checksum");
        let u = decode_frame(LinkType::Ethernet, &frame).unwrap();
        assert_eq!(u.payload, &payload[..]);
    }
    assert!(matches!(
        udp_frame(&vec![0; MAX_WRITE_PAYLOAD + 1], 0, &mut frame),
        Err(CaptureError::PayloadTooLong(_))
    ));
}

fn sum_words(b: &[u8]) -> u32 {
    b.chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum()
}

#[test]
fn generated_traffic_survives_a_pcap_round_trip() {
    let items = generate(500, 0.1, 0.1, 4);
    let mut buf = Vec::new();
    write_pcap_to(&mut buf, items.iter().map(|g| &g.bytes[..])).unwrap();
    let cap = read_udp_payloads_from(&buf[..]).unwrap();
    assert_eq!(cap.packets.len(), items.len());
    for ((_, p), g) in cap.packets.iter().zip(&items) {
        assert_eq!(p, &g.bytes);
        assert_eq!(parse(p).unwrap().txn_id(), g.txn_id);
    }
}

#[test]
fn link_types_and_network_layers_decode() {
    let p = b"payload";
    let v4 = ipv4_udp(p, 0, 0x4000, 17);
    let v4_opts = ipv4_udp(p, 8, 0, 17);
    let v6 = ipv6_udp(p, &[]);
    let v6_ext = ipv6_udp(p, &[0, 60, 43]);
    let cases: Vec<(LinkType, Vec<u8>)> = vec![
        (LinkType::Ethernet, ethernet(0x0800, &[], &v4)),
        (LinkType::Ethernet, ethernet(0x0800, &[], &v4_opts)),
        (LinkType::Ethernet, ethernet(0x86dd, &[0x8100], &v6)),
        (
            LinkType::Ethernet,
            ethernet(0x86dd, &[0x88a8, 0x8100], &v6_ext),
        ),
        (LinkType::LinuxSll, sll(0x0800, &v4)),
        (LinkType::LinuxSll2, sll2(0x86dd, &v6)),
        (LinkType::Raw, v4.clone()),
        (LinkType::Raw, v6_ext.clone()),
        (LinkType::Ipv4, v4_opts.clone()),
        (LinkType::Ipv6, v6.clone()),
        (LinkType::Null, [&2u32.to_le_bytes()[..], &v4].concat()),
        (LinkType::Null, [&30u32.to_be_bytes()[..], &v6].concat()),
        (LinkType::Loop, [&24u32.to_be_bytes()[..], &v6].concat()),
    ];
    for (link, frame) in &cases {
        let u = decode_frame(*link, frame).unwrap_or_else(|e| panic!("{link:?}: {e:?}"));
        assert_eq!(u.payload, p);
        assert_eq!(u.dst_port, 8001);
        // Ethernet minimum-size padding after the IP datagram is ignored.
        let mut padded = frame.clone();
        padded.extend_from_slice(&[0; 18]);
        assert_eq!(decode_frame(*link, &padded).unwrap().payload, p);
    }
}

#[test]
fn skips_are_counted_by_reason() {
    let p = b"payload";
    let v4 = ipv4_udp(p, 0, 0, 17);
    let mut bad_udp_len = v4.clone();
    bad_udp_len[24..26].copy_from_slice(&100u16.to_be_bytes());
    let mut bad_ihl = v4.clone();
    bad_ihl[0] = 0x44;
    let cases: Vec<(LinkType, Vec<u8>, Skip)> = vec![
        (
            LinkType::Ethernet,
            ethernet(0x0806, &[], &[0; 28]),
            Skip::NotIp,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x0800, &[0x8100; 5], &v4),
            Skip::NotIp,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x0800, &[], &ipv4_udp(p, 0, 0, 6)),
            Skip::NotUdp,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x0800, &[], &ipv4_udp(p, 0, 0x2000, 17)),
            Skip::Fragment,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x0800, &[], &ipv4_udp(p, 0, 0x0010, 17)),
            Skip::Fragment,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x0800, &[], &bad_udp_len),
            Skip::BadUdpLength,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x0800, &[], &bad_ihl),
            Skip::BadIpHeader,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x86dd, &[], &v4),
            Skip::BadIpHeader,
        ),
        (
            LinkType::Ethernet,
            ethernet(0x0800, &[], &v4[..v4.len() - 1]),
            Skip::Truncated,
        ),
        (LinkType::Ethernet, vec![0; 13], Skip::Truncated),
        (LinkType::Raw, ipv6_udp(p, &[44]), Skip::Fragment),
        (LinkType::Raw, ipv6_udp(p, &[0, 50]), Skip::Ipv6Extension),
        (LinkType::Raw, ipv6_udp(p, &[60; 9]), Skip::Ipv6Extension),
        (LinkType::Raw, ipv6_udp(p, &[59]), Skip::NotUdp),
        (LinkType::Raw, vec![0x50; 40], Skip::NotIp),
        (LinkType::Raw, vec![], Skip::Truncated),
        (LinkType::LinuxSll, sll(0x0806, &v4), Skip::NotIp),
        (
            LinkType::LinuxSll2,
            sll2(0x0800, &[])[..19].to_vec(),
            Skip::Truncated,
        ),
        (
            LinkType::Null,
            [&7u32.to_le_bytes()[..], &v4].concat(),
            Skip::NotIp,
        ),
    ];
    for (link, frame, want) in &cases {
        assert_eq!(
            decode_frame(*link, frame),
            Err(*want),
            "{link:?} {frame:02x?}"
        );
    }
    for s in Skip::ALL {
        assert_eq!(Skip::ALL[s.index()], s);
        assert!(!s.reason().is_empty());
    }
}

/// A raw pcapng enhanced packet block, for what the pcap-file writer refuses to write
/// (packets on undescribed interfaces).
fn raw_epb(e: Endianness, iface: u32, ticks: u64, data: &[u8]) -> Vec<u8> {
    let u32b = |v: u32| match e {
        Endianness::Big => v.to_be_bytes(),
        Endianness::Little => v.to_le_bytes(),
    };
    let pad = (4 - data.len() % 4) % 4;
    let len = (32 + data.len() + pad) as u32;
    let mut b = Vec::new();
    for v in [6, len, iface, (ticks >> 32) as u32, ticks as u32] {
        b.extend_from_slice(&u32b(v));
    }
    b.extend_from_slice(&u32b(data.len() as u32));
    b.extend_from_slice(&u32b(data.len() as u32));
    b.extend_from_slice(data);
    b.extend(std::iter::repeat_n(0u8, pad));
    b.extend_from_slice(&u32b(len));
    b
}

/// A pcapng with four interfaces (Ethernet at microseconds, SLL at nanoseconds, SLL2 at
/// 2^-10 s with a 100 s offset, and 802.11, unsupported), packets on each, a packet on
/// an undescribed interface, a simple packet block, then a second section with one raw
/// IP interface, whose packets on interface 1 are unknown there.
fn pcapng_capture(endianness: Endianness) -> Vec<u8> {
    let p = b"solana";
    let v4 = ipv4_udp(p, 0, 0, 17);
    let section = SectionHeaderBlock {
        endianness,
        ..Default::default()
    };
    let mut w = PcapNgWriter::with_section_header(Vec::new(), section.clone()).unwrap();
    let idb = |link, opts| InterfaceDescriptionBlock {
        linktype: link,
        snaplen: 0,
        options: opts,
    };
    w.write_pcapng_block(idb(DataLink::ETHERNET, vec![]))
        .unwrap();
    w.write_pcapng_block(idb(
        DataLink::LINUX_SLL,
        vec![InterfaceDescriptionOption::IfTsResol(9)],
    ))
    .unwrap();
    w.write_pcapng_block(idb(
        DataLink::LINUX_SLL2,
        vec![
            InterfaceDescriptionOption::IfTsResol(0x80 | 10),
            InterfaceDescriptionOption::IfTsOffset(100),
        ],
    ))
    .unwrap();
    w.write_pcapng_block(idb(DataLink::IEEE802_11, vec![]))
        .unwrap();
    let epb = |iface: u32, ticks: u64, data: Vec<u8>| EnhancedPacketBlock {
        interface_id: iface,
        timestamp: Duration::from_nanos(ticks),
        original_len: data.len() as u32,
        data: Cow::Owned(data),
        options: vec![],
    };
    w.write_pcapng_block(epb(0, 5_000_001, ethernet(0x0800, &[0x8100], &v4)))
        .unwrap();
    w.write_pcapng_block(epb(1, 5_000_000_002, sll(0x0800, &v4)))
        .unwrap();
    w.write_pcapng_block(epb(2, 3 << 10, sll2(0x0800, &v4)))
        .unwrap();
    w.write_pcapng_block(epb(3, 1, v4.clone())).unwrap();
    w.write_pcapng_block(epb(0, 1, ethernet(0x0806, &[], &[0; 28])))
        .unwrap();
    w.write_pcapng_block(SimplePacketBlock {
        original_len: 0,
        data: Cow::Owned(ethernet(0x0800, &[], &v4)),
    })
    .unwrap();
    let mut bytes = w.into_inner();
    bytes.extend(raw_epb(endianness, 9, 1, &v4));
    // A new section forgets the interfaces.
    let mut w = PcapNgWriter::with_section_header(bytes, section).unwrap();
    w.write_pcapng_block(idb(DataLink::RAW, vec![])).unwrap();
    w.write_pcapng_block(epb(0, 7, v4.clone())).unwrap();
    let mut bytes = w.into_inner();
    bytes.extend(raw_epb(endianness, 1, 1, &v4));
    bytes
}

#[test]
fn pcapng_interfaces_timestamps_and_sections() {
    for e in [Endianness::Little, Endianness::Big] {
        let bytes = pcapng_capture(e);
        let cap = read_udp_payloads_from(&bytes[..]).unwrap();
        assert!(cap.error.is_none(), "{:?}", cap.error);
        let ts: Vec<u64> = cap.packets.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            ts,
            [
                5_000_001_000,
                5_000_000_002,
                100_000_000_000 + 3_000_000_000,
                0,
                7_000
            ]
        );
        assert!(cap.packets.iter().all(|(_, p)| p == b"solana"));
        assert_eq!(cap.skipped.get(Skip::UnsupportedLink), 1);
        assert_eq!(cap.skipped.get(Skip::UnknownInterface), 2);
        assert_eq!(cap.skipped.get(Skip::NotIp), 1);
        assert_eq!(cap.skipped.total(), 4);
    }
}

#[test]
fn classic_pcap_byte_orders_and_resolutions() {
    let v6 = ipv6_udp(b"abc", &[]);
    for (endianness, ts_resolution) in [
        (Endianness::Big, TsResolution::MicroSecond),
        (Endianness::Little, TsResolution::MicroSecond),
        (Endianness::Big, TsResolution::NanoSecond),
    ] {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: 64,
            datalink: DataLink::RAW,
            ts_resolution,
            endianness,
        };
        let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
        let t = Duration::new(12, 345_678_000);
        w.write_packet(&PcapPacket::new(t, v6.len() as u32, &v6))
            .unwrap();
        // Cut by the snapshot length: the original was longer.
        w.write_packet(&PcapPacket::new(t, 100, &v6[..v6.len() - 1]))
            .unwrap();
        let bytes = w.into_writer();
        let cap = read_udp_payloads_from(&bytes[..]).unwrap();
        assert!(cap.error.is_none(), "{:?}", cap.error);
        assert_eq!(cap.packets, vec![(12_345_678_000, b"abc".to_vec())]);
        assert_eq!(cap.skipped.get(Skip::Truncated), 1);
    }
}

#[test]
fn damaged_captures_never_panic() {
    let mut pcap = Vec::new();
    let items = generate(20, 0.0, 0.0, 1);
    write_pcap_to(&mut pcap, items.iter().map(|g| &g.bytes[..])).unwrap();
    let full = read_udp_payloads_from(&pcap[..]).unwrap().packets;
    for n in 0..pcap.len() {
        match read_udp_payloads_from(&pcap[..n]) {
            Ok(cap) => {
                // A cut between records is a clean end; inside one, a truncation.
                assert!(full.starts_with(&cap.packets));
                if let Some(e) = cap.error {
                    assert!(matches!(e, CaptureError::Truncated), "cut at {n}: {e:?}");
                }
            }
            Err(e) => assert!(
                matches!(e, CaptureError::NotACapture | CaptureError::Truncated),
                "{e:?}"
            ),
        }
    }

    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let captures = [
        pcap,
        pcapng_capture(Endianness::Little),
        pcapng_capture(Endianness::Big),
    ];
    for round in 0..3000 {
        let mut b = captures[round % captures.len()].clone();
        for _ in 0..rng.gen_range(1..5) {
            let i = rng.gen_range(0..b.len());
            b[i] = rng.gen();
        }
        if let Ok(mut r) = UdpReader::new(&b[..]) {
            let mut n = 0;
            while let Some(p) = r.next_packet() {
                if let Ok(p) = p {
                    assert!(p.payload.len() <= 65535);
                }
                n += 1;
                assert!(n < 10_000);
            }
        }
    }
}

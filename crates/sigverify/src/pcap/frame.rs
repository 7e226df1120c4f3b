//! Frame decoding: link-layer, IPv4/IPv6 and UDP headers down to the UDP payload.

use std::fmt;

/// Largest UDP payload: the 16-bit UDP length less its 8-byte header.
pub const MAX_PAYLOAD: usize = 65535 - UDP_HEADER_LEN;
/// Most stacked VLAN tags decoded in one Ethernet frame.
pub const MAX_VLAN_TAGS: usize = 4;
/// Most IPv6 extension headers skipped before giving up.
pub const MAX_IPV6_EXTENSIONS: usize = 8;

pub(crate) const UDP_HEADER_LEN: usize = 8;
pub(crate) const IPV4_HEADER_LEN: usize = 20;
const IPV6_HEADER_LEN: usize = 40;
pub(crate) const PROTO_UDP: u8 = 17;

/// A link-layer header type this module decodes (pcap `LINKTYPE_*` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// BSD loopback, 4-byte protocol family in the capturing host's byte order (0).
    Null,
    /// Ethernet II (1).
    Ethernet,
    /// Raw IPv4 or IPv6 (101; also 12 and 14, `DLT_RAW` on some systems).
    Raw,
    /// OpenBSD loopback, 4-byte protocol family in network byte order (108).
    Loop,
    /// Linux cooked capture v1, 16-byte header (113).
    LinuxSll,
    /// Raw IPv4 (228).
    Ipv4,
    /// Raw IPv6 (229).
    Ipv6,
    /// Linux cooked capture v2, 20-byte header (276).
    LinuxSll2,
}

impl LinkType {
    /// The link type for a pcap/pcapng `LINKTYPE_*` value, if decoded here.
    pub fn from_linktype(v: u32) -> Option<LinkType> {
        Some(match v {
            0 => LinkType::Null,
            1 => LinkType::Ethernet,
            12 | 14 | 101 => LinkType::Raw,
            108 => LinkType::Loop,
            113 => LinkType::LinuxSll,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            276 => LinkType::LinuxSll2,
            _ => return None,
        })
    }
}

/// Why a frame was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// The capture's (or interface's) link type is not one of [`LinkType`].
    UnsupportedLink,
    /// A pcapng packet names an interface that was not described.
    UnknownInterface,
    /// The frame ends before its headers do, or before the length its IP header claims
    /// (for example a capture cut by the snapshot length).
    Truncated,
    /// Not IPv4 or IPv6 (ARP, LLDP, 802.3 length frames, other protocol families...).
    NotIp,
    /// A wrong IP version for the link type or ethertype, an IPv4 header length under 20
    /// bytes, or a total length shorter than the header.
    BadIpHeader,
    /// A fragment (IPv4 more-fragments or non-zero offset; an IPv6 fragment header).
    Fragment,
    /// An IPv6 extension header that is not skipped (ESP, AH, mobility...), or more than
    /// [`MAX_IPV6_EXTENSIONS`] of them.
    Ipv6Extension,
    /// An IP protocol other than UDP.
    NotUdp,
    /// A UDP length under 8 or past the end of the IP payload.
    BadUdpLength,
}

impl Skip {
    /// Every reason, in declaration order (`ALL[s.index()] == s`).
    pub const ALL: [Skip; 9] = [
        Skip::UnsupportedLink,
        Skip::UnknownInterface,
        Skip::Truncated,
        Skip::NotIp,
        Skip::BadIpHeader,
        Skip::Fragment,
        Skip::Ipv6Extension,
        Skip::NotUdp,
        Skip::BadUdpLength,
    ];

    /// A short snake_case name, for counters and logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Skip::UnsupportedLink => "unsupported_link",
            Skip::UnknownInterface => "unknown_interface",
            Skip::Truncated => "truncated",
            Skip::NotIp => "not_ip",
            Skip::BadIpHeader => "bad_ip_header",
            Skip::Fragment => "fragment",
            Skip::Ipv6Extension => "ipv6_extension",
            Skip::NotUdp => "not_udp",
            Skip::BadUdpLength => "bad_udp_length",
        }
    }

    /// This reason's position in [`Skip::ALL`].
    pub fn index(&self) -> usize {
        *self as usize
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// Skipped frames, counted by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkipCounts {
    counts: [u64; Skip::ALL.len()],
}

impl SkipCounts {
    /// Counts one frame skipped for `s`.
    pub fn add(&mut self, s: Skip) {
        self.counts[s.index()] += 1;
    }

    /// Frames skipped for `s`.
    pub fn get(&self, s: Skip) -> u64 {
        self.counts[s.index()]
    }

    /// Frames skipped for any reason.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Every reason with its count, zeros included, in [`Skip::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Skip, u64)> + '_ {
        Skip::ALL.iter().map(|s| (*s, self.get(*s)))
    }
}

/// A decoded UDP datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Udp<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// The payload (exactly the UDP length less 8 bytes).
    pub payload: &'a [u8],
}

#[derive(Clone, Copy)]
enum Net {
    V4,
    V6,
}

fn be16(b: &[u8], at: usize) -> Result<u16, Skip> {
    match b.get(at..at.saturating_add(2)) {
        Some(&[hi, lo]) => Ok(u16::from_be_bytes([hi, lo])),
        _ => Err(Skip::Truncated),
    }
}

fn from_ethertype(t: u16) -> Result<Net, Skip> {
    match t {
        0x0800 => Ok(Net::V4),
        0x86dd => Ok(Net::V6),
        _ => Err(Skip::NotIp),
    }
}

/// BSD protocol family values: AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD,
/// OpenBSD), 28 (FreeBSD) or 30 (macOS).
fn from_family(f: u32) -> Option<Net> {
    match f {
        2 => Some(Net::V4),
        24 | 28 | 30 => Some(Net::V6),
        _ => None,
    }
}

fn rest(b: &[u8], at: usize) -> Result<&[u8], Skip> {
    b.get(at..).ok_or(Skip::Truncated)
}

/// Strips the link-layer header.
fn link(link: LinkType, f: &[u8]) -> Result<(Net, &[u8]), Skip> {
    match link {
        LinkType::Ethernet => {
            let mut at = 12;
            let mut t = be16(f, at)?;
            let mut tags = 0;
            while matches!(t, 0x8100 | 0x88a8 | 0x9100) {
                tags += 1;
                if tags > MAX_VLAN_TAGS {
                    return Err(Skip::NotIp);
                }
                at += 4;
                t = be16(f, at)?;
            }
            Ok((from_ethertype(t)?, rest(f, at + 2)?))
        }
        LinkType::LinuxSll => Ok((from_ethertype(be16(f, 14)?)?, rest(f, 16)?)),
        LinkType::LinuxSll2 => {
            let t = be16(f, 0)?;
            if f.len() < 20 {
                return Err(Skip::Truncated);
            }
            Ok((from_ethertype(t)?, rest(f, 20)?))
        }
        LinkType::Raw => match f.first().map(|b| b >> 4) {
            None => Err(Skip::Truncated),
            Some(4) => Ok((Net::V4, f)),
            Some(6) => Ok((Net::V6, f)),
            Some(_) => Err(Skip::NotIp),
        },
        LinkType::Ipv4 => Ok((Net::V4, f)),
        LinkType::Ipv6 => Ok((Net::V6, f)),
        LinkType::Null | LinkType::Loop => {
            let Some(&[a, b, c, d]) = f.get(..4) else {
                return Err(Skip::Truncated);
            };
            let be = u32::from_be_bytes([a, b, c, d]);
            let net = if link == LinkType::Loop {
                from_family(be)
            } else {
                from_family(u32::from_le_bytes([a, b, c, d])).or_else(|| from_family(be))
            };
            Ok((net.ok_or(Skip::NotIp)?, rest(f, 4)?))
        }
    }
}

/// The IPv4 payload and protocol.
fn ipv4(b: &[u8]) -> Result<(u8, &[u8]), Skip> {
    match b.first() {
        None => return Err(Skip::Truncated),
        Some(v) if v >> 4 != 4 => return Err(Skip::BadIpHeader),
        Some(_) if b.len() < IPV4_HEADER_LEN => return Err(Skip::Truncated),
        Some(_) => {}
    }
    let ihl = usize::from(b[0] & 0x0f) * 4;
    let total = usize::from(be16(b, 2)?);
    if ihl < IPV4_HEADER_LEN || total < ihl {
        return Err(Skip::BadIpHeader);
    }
    if total > b.len() {
        return Err(Skip::Truncated);
    }
    // More-fragments flag or a non-zero fragment offset.
    if be16(b, 6)? & 0x3fff != 0 {
        return Err(Skip::Fragment);
    }
    Ok((b[9], &b[ihl..total]))
}

/// The IPv6 upper-layer payload and protocol, past skippable extension headers.
fn ipv6(b: &[u8]) -> Result<(u8, &[u8]), Skip> {
    match b.first() {
        None => return Err(Skip::Truncated),
        Some(v) if v >> 4 != 6 => return Err(Skip::BadIpHeader),
        Some(_) if b.len() < IPV6_HEADER_LEN => return Err(Skip::Truncated),
        Some(_) => {}
    }
    let end = IPV6_HEADER_LEN + usize::from(be16(b, 4)?);
    let mut p = b.get(IPV6_HEADER_LEN..end).ok_or(Skip::Truncated)?;
    let mut next = b[6];
    let mut skipped = 0;
    loop {
        match next {
            // Hop-by-hop, routing, destination options: next header, length in 8-byte
            // units past the first 8.
            0 | 43 | 60 => {
                skipped += 1;
                if skipped > MAX_IPV6_EXTENSIONS {
                    return Err(Skip::Ipv6Extension);
                }
                let (Some(&nh), Some(&len)) = (p.first(), p.get(1)) else {
                    return Err(Skip::Truncated);
                };
                next = nh;
                p = rest(p, (usize::from(len) + 1) * 8)?;
            }
            44 => return Err(Skip::Fragment),
            // ESP, AH, mobility, HIP, shim6, experimental.
            50 | 51 | 135 | 139 | 140 | 253 | 254 => return Err(Skip::Ipv6Extension),
            proto => return Ok((proto, p)),
        }
    }
}

fn udp(p: &[u8]) -> Result<Udp<'_>, Skip> {
    if p.len() < UDP_HEADER_LEN {
        return Err(Skip::Truncated);
    }
    let len = usize::from(be16(p, 4)?);
    if len < UDP_HEADER_LEN || len > p.len() {
        return Err(Skip::BadUdpLength);
    }
    Ok(Udp {
        src_port: be16(p, 0)?,
        dst_port: be16(p, 2)?,
        payload: &p[UDP_HEADER_LEN..len],
    })
}

/// Decodes one captured frame down to its UDP datagram.
pub fn decode_frame(link_type: LinkType, frame: &[u8]) -> Result<Udp<'_>, Skip> {
    let (net, ip) = link(link_type, frame)?;
    let (proto, payload) = match net {
        Net::V4 => ipv4(ip)?,
        Net::V6 => ipv6(ip)?,
    };
    if proto != PROTO_UDP {
        return Err(Skip::NotUdp);
    }
    udp(payload)
}

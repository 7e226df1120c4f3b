//! Redis's cluster bus messages (`clusterMsg`), byte for byte: the codec a node needs to
//! speak with redis-server nodes on the bus port. Not yet the bus this server runs
//! (that is [`super::bus`], its own text protocol); this is its first part, checked
//! against what redis-server 7.0 itself sends.
//!
//! A message is a fixed header of [`HEADER_LEN`] bytes, every integer big-endian
//! (`sig` "RCmb", the total length, version 1, the sender's ports, type and count, its
//! epochs and replication offset, its name, slot bitmap, primary, IP, extension count,
//! flags, cluster state and message flags), then the data of its type: for PING, PONG
//! and MEET `count` gossip sections of [`GOSSIP_LEN`] bytes and, when the header's
//! flag says so, `extensions` ping extensions (each 8-byte aligned: its length, type,
//! then its data); FAIL a node name; PUBLISH a channel and message; UPDATE a config
//! epoch, a node name and its slots; the failover messages nothing.
//!
//! Decoding is for bytes from anyone who can reach the port: every length is checked
//! against the bytes there and the type's rules (Redis's `clusterIsValidPacket`) before
//! anything is read; a message longer than [`MAX_MESSAGE`] is refused unread.

/// The signature every message starts with.
pub const SIG: &[u8; 4] = b"RCmb";
/// The bus protocol version.
pub const VERSION: u16 = 1;
/// Bytes of the header, before the type's data.
pub const HEADER_LEN: usize = 2256;
/// Bytes of one gossip section.
pub const GOSSIP_LEN: usize = 104;
/// Length of a node name (40 hex digits).
pub const NAME_LEN: usize = 40;
/// Bytes of the IP field (`NET_IP_STR_LEN`).
pub const IP_LEN: usize = 46;
/// Hash slots.
pub const SLOTS: usize = 16384;
/// Largest message accepted (a PUBLISH carries a message of any size in Redis; here
/// 64 MiB bounds what one peer can make this server hold).
pub const MAX_MESSAGE: usize = 64 << 20;

/// Message types.
pub mod kind {
    /// PING.
    pub const PING: u16 = 0;
    /// PONG (the answer to PING and MEET).
    pub const PONG: u16 = 1;
    /// MEET: join this cluster.
    pub const MEET: u16 = 2;
    /// FAIL: a node failed.
    pub const FAIL: u16 = 3;
    /// PUBLISH propagated.
    pub const PUBLISH: u16 = 4;
    /// A replica asks for votes.
    pub const FAILOVER_AUTH_REQUEST: u16 = 5;
    /// A primary's vote.
    pub const FAILOVER_AUTH_ACK: u16 = 6;
    /// A node's slots, newer than the receiver's view.
    pub const UPDATE: u16 = 7;
    /// A manual failover starts (the primary pauses its clients).
    pub const MFSTART: u16 = 8;
    /// A module's message.
    pub const MODULE: u16 = 9;
    /// SPUBLISH propagated.
    pub const PUBLISHSHARD: u16 = 10;
}

/// Node flags (`flags` of the header and of gossip sections).
pub mod flag {
    /// A primary.
    pub const MASTER: u16 = 1;
    /// A replica.
    pub const SLAVE: u16 = 2;
    /// Possibly failing (this node's view).
    pub const PFAIL: u16 = 4;
    /// Failing (agreed).
    pub const FAIL: u16 = 8;
    /// The node itself.
    pub const MYSELF: u16 = 16;
    /// Met, not yet answered.
    pub const HANDSHAKE: u16 = 32;
    /// Its address is not known.
    pub const NOADDR: u16 = 64;
    /// To be sent a MEET.
    pub const MEET: u16 = 128;
    /// A replica that may migrate to an orphaned primary.
    pub const MIGRATE_TO: u16 = 256;
    /// A replica that never fails over.
    pub const NOFAILOVER: u16 = 512;
}

/// `mflags[0]`: the message carries ping extensions.
pub const MFLAG_EXT_DATA: u8 = 1 << 2;

/// Ping extension types.
pub mod ext {
    /// `cluster-announce-hostname`.
    pub const HOSTNAME: u16 = 0;
    /// `cluster-announce-human-nodename`.
    pub const HUMAN_NODENAME: u16 = 1;
    /// A node CLUSTER FORGET removed (name, then seconds).
    pub const FORGOTTEN_NODE: u16 = 2;
    /// The shard id.
    pub const SHARDID: u16 = 3;
}

/// The header: what every message says about its sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Message type ([`kind`]).
    pub kind: u16,
    /// The client port (TCP or TLS).
    pub port: u16,
    /// The other client port (TLS or TCP; 0: none).
    pub pport: u16,
    /// The bus port.
    pub cport: u16,
    /// The cluster's epoch as the sender knows it.
    pub current_epoch: u64,
    /// The sender's config epoch (a replica: its primary's).
    pub config_epoch: u64,
    /// Replication offset.
    pub offset: u64,
    /// The sender's name.
    pub sender: [u8; NAME_LEN],
    /// The slots it serves, one bit each (bit `s & 7` of byte `s >> 3`).
    pub slots: Box<[u8; SLOTS / 8]>,
    /// Its primary's name (all zero: none).
    pub slaveof: [u8; NAME_LEN],
    /// Its IP as it says (NUL-padded; all zero: the address the bus sees).
    pub myip: [u8; IP_LEN],
    /// Node flags ([`flag`]).
    pub flags: u16,
    /// 0: cluster ok, 1: fail.
    pub state: u8,
    /// Message flags.
    pub mflags: [u8; 3],
}

/// A gossip section: what the sender knows of another node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gossip {
    /// Its name.
    pub name: [u8; NAME_LEN],
    /// When the sender last pinged it (seconds).
    pub ping_sent: u32,
    /// When the sender last heard its PONG (seconds).
    pub pong_received: u32,
    /// Its IP.
    pub ip: [u8; IP_LEN],
    /// Its client port.
    pub port: u16,
    /// Its bus port.
    pub cport: u16,
    /// Its flags as the sender sees them.
    pub flags: u16,
    /// Its other client port.
    pub pport: u16,
}

/// A ping extension: its type and data (without padding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ext {
    /// Its type ([`ext`]).
    pub kind: u16,
    /// Its data (a string without its NUL).
    pub data: Vec<u8>,
}

/// What follows the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// PING, PONG, MEET.
    Ping {
        /// The nodes it tells of.
        gossip: Vec<Gossip>,
        /// Its extensions.
        exts: Vec<Ext>,
    },
    /// FAIL: the node that failed.
    Fail {
        /// The node.
        node: [u8; NAME_LEN],
    },
    /// PUBLISH and PUBLISHSHARD.
    Publish {
        /// The channel.
        channel: Vec<u8>,
        /// The message.
        message: Vec<u8>,
    },
    /// UPDATE: a node's slots as of its config epoch.
    Update {
        /// The node's config epoch.
        config_epoch: u64,
        /// The node.
        node: [u8; NAME_LEN],
        /// Its slots.
        slots: Box<[u8; SLOTS / 8]>,
    },
    /// FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK, MFSTART: nothing.
    Empty,
    /// MODULE: kept as bytes.
    Module(Vec<u8>),
}

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The sender's header.
    pub header: Header,
    /// The type's data.
    pub body: Body,
}

/// Why bytes are not a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BusError {
    /// Fewer bytes than the message says (read more).
    Short {
        /// Bytes needed.
        need: usize,
    },
    /// Not "RCmb", or another version.
    Signature,
    /// A length that does not fit the type (or past [`MAX_MESSAGE`]).
    Length(usize),
    /// A type this codec does not know.
    Kind(u16),
}

impl std::fmt::Display for BusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BusError::Short { need } => write!(f, "a message cut short ({need} bytes needed)"),
            BusError::Signature => f.write_str("not a cluster bus message (signature or version)"),
            BusError::Length(n) => write!(f, "a message length that does not fit its type: {n}"),
            BusError::Kind(k) => write!(f, "an unknown message type: {k}"),
        }
    }
}

impl std::error::Error for BusError {}

/// Reads big-endian fields from a checked slice.
struct Rd<'a>(&'a [u8], usize);

impl<'a> Rd<'a> {
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let s = &self.0[self.1..self.1 + n];
        self.1 += n;
        s
    }
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N));
        a
    }
    fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.array())
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.array())
    }
    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.array())
    }
    fn slots(&mut self) -> Box<[u8; SLOTS / 8]> {
        let mut b = Box::new([0u8; SLOTS / 8]);
        b.copy_from_slice(self.bytes(SLOTS / 8));
        b
    }
}

/// The whole length of the message `buf` starts with, once its first 8 bytes are there
/// (checked against [`MAX_MESSAGE`] and the header's length).
pub fn message_len(buf: &[u8]) -> Result<usize, BusError> {
    if buf.len() < 8 {
        return Err(BusError::Short { need: 8 });
    }
    if &buf[..4] != SIG {
        return Err(BusError::Signature);
    }
    let n = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]) as usize;
    if !(HEADER_LEN..=MAX_MESSAGE).contains(&n) {
        return Err(BusError::Length(n));
    }
    Ok(n)
}

/// Decodes the message at the start of `buf`; its length with it.
pub fn decode(buf: &[u8]) -> Result<(Message, usize), BusError> {
    let total = message_len(buf)?;
    if buf.len() < total {
        return Err(BusError::Short { need: total });
    }
    let msg = &buf[..total];
    let mut r = Rd(msg, 8);
    if r.u16() != VERSION {
        return Err(BusError::Signature);
    }
    let port = r.u16();
    let kind = r.u16();
    let count = r.u16() as usize;
    let current_epoch = r.u64();
    let config_epoch = r.u64();
    let offset = r.u64();
    let sender = r.array();
    let slots = r.slots();
    let slaveof = r.array();
    let myip = r.array();
    let extensions = r.u16() as usize;
    r.bytes(30);
    let pport = r.u16();
    let cport = r.u16();
    let flags = r.u16();
    let state = r.bytes(1)[0];
    let mflags = r.array();
    debug_assert_eq!(r.1, HEADER_LEN);
    let header = Header {
        kind,
        port,
        pport,
        cport,
        current_epoch,
        config_epoch,
        offset,
        sender,
        slots,
        slaveof,
        myip,
        flags,
        state,
        mflags,
    };
    let data = total - HEADER_LEN;
    let body = match kind {
        kind::PING | kind::PONG | kind::MEET => {
            let gossip_bytes = count
                .checked_mul(GOSSIP_LEN)
                .filter(|&g| g <= data)
                .ok_or(BusError::Length(total))?;
            let mut gossip = Vec::with_capacity(count);
            for _ in 0..count {
                gossip.push(Gossip {
                    name: r.array(),
                    ping_sent: r.u32(),
                    pong_received: r.u32(),
                    ip: r.array(),
                    port: r.u16(),
                    cport: r.u16(),
                    flags: r.u16(),
                    pport: r.u16(),
                });
                r.bytes(2);
            }
            let mut left = data - gossip_bytes;
            let mut exts = Vec::new();
            if header.mflags[0] & MFLAG_EXT_DATA != 0 {
                for _ in 0..extensions {
                    if left < 8 {
                        return Err(BusError::Length(total));
                    }
                    let len = r.u32() as usize;
                    let kind = r.u16();
                    r.bytes(2);
                    if len < 8 || len > left || !len.is_multiple_of(8) {
                        return Err(BusError::Length(total));
                    }
                    let mut data = r.bytes(len - 8).to_vec();
                    if matches!(kind, ext::HOSTNAME | ext::HUMAN_NODENAME) {
                        // A string ends at its NUL (the rest is padding).
                        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                        data.truncate(end);
                    }
                    exts.push(Ext { kind, data });
                    left -= len;
                }
            }
            if left != 0 {
                return Err(BusError::Length(total));
            }
            Body::Ping { gossip, exts }
        }
        kind::FAIL => {
            if data != NAME_LEN {
                return Err(BusError::Length(total));
            }
            Body::Fail { node: r.array() }
        }
        kind::PUBLISH | kind::PUBLISHSHARD => {
            if data < 8 {
                return Err(BusError::Length(total));
            }
            let (c, m) = (r.u32() as usize, r.u32() as usize);
            // The two lengths, then the channel and the message (the struct's 8
            // placeholder bytes do not count).
            let need = c
                .checked_add(m)
                .and_then(|n| n.checked_add(8))
                .ok_or(BusError::Length(total))?;
            if need != data {
                return Err(BusError::Length(total));
            }
            let channel = r.bytes(c).to_vec();
            let message = r.bytes(m).to_vec();
            Body::Publish { channel, message }
        }
        kind::UPDATE => {
            if data != 8 + NAME_LEN + SLOTS / 8 {
                return Err(BusError::Length(total));
            }
            Body::Update {
                config_epoch: r.u64(),
                node: r.array(),
                slots: r.slots(),
            }
        }
        kind::FAILOVER_AUTH_REQUEST | kind::FAILOVER_AUTH_ACK | kind::MFSTART => {
            // Redis sends the header alone (its length check: no data at all).
            if data != 0 {
                return Err(BusError::Length(total));
            }
            Body::Empty
        }
        kind::MODULE => Body::Module(r.bytes(data).to_vec()),
        k => return Err(BusError::Kind(k)),
    };
    Ok((Message { header, body }, total))
}

/// Encodes a message as Redis does (counts and lengths from its body).
pub fn encode(m: &Message) -> Vec<u8> {
    let h = &m.header;
    let mut out = Vec::with_capacity(HEADER_LEN + 256);
    out.extend_from_slice(SIG);
    out.extend_from_slice(&[0; 4]);
    let (count, extensions) = match &m.body {
        Body::Ping { gossip, exts } => (gossip.len() as u16, exts.len() as u16),
        _ => (0, 0),
    };
    for v in [VERSION, h.port, h.kind, count] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    for v in [h.current_epoch, h.config_epoch, h.offset] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(&h.sender);
    out.extend_from_slice(&h.slots[..]);
    out.extend_from_slice(&h.slaveof);
    out.extend_from_slice(&h.myip);
    out.extend_from_slice(&extensions.to_be_bytes());
    out.extend_from_slice(&[0; 30]);
    for v in [h.pport, h.cport, h.flags] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.push(h.state);
    let mut mflags = h.mflags;
    if extensions > 0 {
        mflags[0] |= MFLAG_EXT_DATA;
    }
    out.extend_from_slice(&mflags);
    match &m.body {
        Body::Ping { gossip, exts } => {
            for g in gossip {
                out.extend_from_slice(&g.name);
                out.extend_from_slice(&g.ping_sent.to_be_bytes());
                out.extend_from_slice(&g.pong_received.to_be_bytes());
                out.extend_from_slice(&g.ip);
                for v in [g.port, g.cport, g.flags, g.pport, 0] {
                    out.extend_from_slice(&v.to_be_bytes());
                }
            }
            for e in exts {
                // Strings carry their NUL; everything is padded to 8 bytes.
                let nul = matches!(e.kind, ext::HOSTNAME | ext::HUMAN_NODENAME) as usize;
                let len = (8 + e.data.len() + nul).div_ceil(8) * 8;
                out.extend_from_slice(&(len as u32).to_be_bytes());
                out.extend_from_slice(&e.kind.to_be_bytes());
                out.extend_from_slice(&[0; 2]);
                out.extend_from_slice(&e.data);
                out.resize(out.len() + len - 8 - e.data.len(), 0);
            }
        }
        Body::Fail { node } => out.extend_from_slice(node),
        Body::Publish { channel, message } => {
            out.extend_from_slice(&(channel.len() as u32).to_be_bytes());
            out.extend_from_slice(&(message.len() as u32).to_be_bytes());
            out.extend_from_slice(channel);
            out.extend_from_slice(message);
        }
        Body::Update {
            config_epoch,
            node,
            slots,
        } => {
            out.extend_from_slice(&config_epoch.to_be_bytes());
            out.extend_from_slice(node);
            out.extend_from_slice(&slots[..]);
        }
        Body::Empty => {}
        Body::Module(b) => out.extend_from_slice(b),
    }
    let total = out.len() as u32;
    out[4..8].copy_from_slice(&total.to_be_bytes());
    out
}

/// A fixed-size field from text, NUL-padded (a node name, an IP).
pub fn field<const N: usize>(s: &str) -> [u8; N] {
    let mut a = [0u8; N];
    let n = s.len().min(N);
    a[..n].copy_from_slice(&s.as_bytes()[..n]);
    a
}

/// A NUL-padded field as text.
pub fn text(f: &[u8]) -> String {
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    String::from_utf8_lossy(&f[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u16) -> Header {
        let mut slots = Box::new([0u8; SLOTS / 8]);
        slots[0] = 0b101;
        slots[SLOTS / 8 - 1] = 0x80;
        Header {
            kind,
            port: 7000,
            pport: 0,
            cport: 17000,
            current_epoch: 5,
            config_epoch: 3,
            offset: 123_456,
            sender: field(&"a".repeat(40)),
            slots,
            slaveof: [0; NAME_LEN],
            myip: field("127.0.0.1"),
            flags: flag::MASTER | flag::MYSELF,
            state: 0,
            mflags: [0; 3],
        }
    }

    fn round_trip(body: Body, kind: u16) -> Vec<u8> {
        let m = Message {
            header: header(kind),
            body,
        };
        let bytes = encode(&m);
        let (back, n) = decode(&bytes).unwrap();
        assert_eq!(n, bytes.len());
        let mut want = m.clone();
        if matches!(&m.body, Body::Ping { exts, .. } if !exts.is_empty()) {
            want.header.mflags[0] |= MFLAG_EXT_DATA;
        }
        assert_eq!(back, want);
        assert_eq!(encode(&back), bytes);
        bytes
    }

    #[test]
    fn every_type_round_trips_at_redis_offsets() {
        let g = Gossip {
            name: field(&"b".repeat(40)),
            ping_sent: 1,
            pong_received: 2,
            ip: field("10.0.0.2"),
            port: 7001,
            cport: 17001,
            flags: flag::SLAVE,
            pport: 0,
        };
        let ping = round_trip(
            Body::Ping {
                gossip: vec![g.clone(), g],
                exts: vec![
                    Ext {
                        kind: ext::HOSTNAME,
                        data: b"host-a".to_vec(),
                    },
                    Ext {
                        kind: ext::SHARDID,
                        data: vec![b'c'; 40],
                    },
                ],
            },
            kind::PING,
        );
        // Header fields where Redis's static asserts put them.
        assert_eq!(&ping[..4], b"RCmb");
        assert_eq!(u16::from_be_bytes([ping[10], ping[11]]), 7000);
        assert_eq!(u16::from_be_bytes([ping[14], ping[15]]), 2, "count");
        assert_eq!(ping[40], b'a');
        assert_eq!(ping[80], 0b101);
        assert_eq!(&ping[2168..2177], b"127.0.0.1");
        assert_eq!(
            u16::from_be_bytes([ping[2214], ping[2215]]),
            2,
            "extensions"
        );
        assert_eq!(u16::from_be_bytes([ping[2248], ping[2249]]), 17000);
        assert_eq!(ping[2253] & MFLAG_EXT_DATA, MFLAG_EXT_DATA);
        // Two gossips, an 8-byte-aligned hostname (8 + 7 -> 16) and a shard id (48).
        assert_eq!(ping.len(), HEADER_LEN + 2 * GOSSIP_LEN + 16 + 48);
        round_trip(
            Body::Fail {
                node: field(&"f".repeat(40)),
            },
            kind::FAIL,
        );
        let p = round_trip(
            Body::Publish {
                channel: b"ch".to_vec(),
                message: b"hello".to_vec(),
            },
            kind::PUBLISH,
        );
        assert_eq!(p.len(), HEADER_LEN + 8 + 2 + 5);
        round_trip(
            Body::Update {
                config_epoch: 9,
                node: field(&"u".repeat(40)),
                slots: Box::new([0xff; SLOTS / 8]),
            },
            kind::UPDATE,
        );
        let auth = round_trip(Body::Empty, kind::FAILOVER_AUTH_REQUEST);
        assert_eq!(auth.len(), HEADER_LEN);
    }

    #[test]
    fn hostile_bytes_are_refused_not_read_past() {
        let good = encode(&Message {
            header: header(kind::PING),
            body: Body::Ping {
                gossip: vec![],
                exts: vec![Ext {
                    kind: ext::HOSTNAME,
                    data: b"h".to_vec(),
                }],
            },
        });
        // Every cut: short, never a panic.
        for n in 0..good.len() {
            assert!(decode(&good[..n]).is_err(), "cut at {n}");
        }
        // Every flipped byte: decoded or refused, never a panic.
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0xa5;
            let _ = decode(&b);
        }
        // Lengths that lie.
        let mut huge = good.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(decode(&huge), Err(BusError::Length(u32::MAX as usize)));
        let mut many = good.clone();
        many[14..16].copy_from_slice(&u16::MAX.to_be_bytes());
        assert!(matches!(decode(&many), Err(BusError::Length(_))));
        let mut exts = good.clone();
        exts[2214..2216].copy_from_slice(&u16::MAX.to_be_bytes());
        assert!(matches!(decode(&exts), Err(BusError::Length(_))));
        let mut sig = good;
        sig[0] = b'X';
        assert_eq!(decode(&sig), Err(BusError::Signature));
    }
}

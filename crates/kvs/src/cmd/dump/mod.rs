//! DUMP and RESTORE: a key's value in Redis's serialization, so keys move between
//! Redis and this server in both directions.
//!
//! A payload is the object type byte and the value ([`encode`], [`decode`]), then the
//! RDB version (u16 LE) and a CRC-64 (Jones polynomial, reflected, as Redis's `crc64`;
//! u64 LE) of everything before it. DUMP writes RDB version 9 with plain encodings
//! (strings over 20 bytes LZF-compressed when that pays, as Redis writes them), which
//! every Redis from 5.0 on restores; RESTORE reads versions up to 11 (Redis 7.2)
//! and every encoding Redis 7.0 and 7.2 write for strings, lists, sets, hashes and
//! sorted sets.
//!
//! Streams are read and written too ([`stream`]), nodes, deleted entries, groups,
//! pending entries and consumers with their times. DUMP writes a stream as Redis 7.0
//! does (`STREAM_LISTPACKS_2`, RDB version 10, which Redis 7.0 and 7.2 restore), or as
//! Redis 7.2 does (`STREAM_LISTPACKS_3`, version 11, only 7.2) when a consumer's
//! active time differs from its seen time and the older form would lose it; Redis 6.2
//! restores neither. RESTORE reads the forms of Redis 5.0 to 7.2.
//!
//! RESTORE follows Redis's order of checks and its error texts: options (a syntax
//! error, IDLETIME and FREQ values), an existing key without REPLACE (BUSYKEY), the
//! TTL, the version and checksum, then the value. A TTL of 0 means no deadline; one
//! already past (ABSTTL) creates nothing and only removes the key REPLACE named. The
//! restored key is written as COPY writes one: through the store's memory count, the
//! append-only log (its whole value), WATCH, blocked clients (RESTORE is a write, so
//! clients waiting on the key are served after it) and the `restore` notification.
//! IDLETIME sets when the key counts as last used (OBJECT IDLETIME, LRU eviction)
//! unless an LFU policy is set; FREQ sets the key's LFU counter (OBJECT FREQ, LFU
//! eviction) only when one is, as in Redis.

mod decode;
mod encode;
mod functions;
mod lzf;
mod packed;
pub mod rdb;
mod stream;
#[cfg(test)]
mod tests;

use super::{eq, parse_i64, Ctx, NOT_INT, SYNTAX};
use crate::resp::Writer;
use crate::value::Value;

pub use decode::Malformed;
pub use functions::{function_codes, function_payload};
pub use rdb::{RdbError, RdbKey, RdbSummary, RdbWriter};

/// The RDB version DUMP writes for every type but streams (Redis 5.0 to 6.2; 7.0 and
/// 7.2 read it too); a stream takes 10 or 11 (see [`stream`]).
pub const DUMP_VERSION: u16 = 9;
/// The newest RDB version RESTORE reads (Redis 7.2).
pub const MAX_VERSION: u16 = 11;

/// Why a payload could not be restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreError {
    /// Too short, a newer RDB version, or a checksum that does not match.
    Footer,
    /// The value is not one this server reads.
    Format,
}

impl RestoreError {
    /// Redis's reply.
    pub fn message(self) -> &'static str {
        match self {
            RestoreError::Footer => "ERR DUMP payload version or checksum are wrong",
            RestoreError::Format => "ERR Bad data format",
        }
    }
}

/// The tables of the reflected Jones polynomial for slicing by 8: `CRC_TABLES[0]` is
/// the byte-at-a-time table; `CRC_TABLES[k][b]` is the CRC of byte `b` followed by `k`
/// zero bytes, so eight input bytes are folded with eight lookups.
const CRC_TABLES: [[u64; 256]; 8] = {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5; // 0xad93d23594c935a9, bits reversed
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
};

/// Redis's CRC-64 of `data` (initial value 0, no final xor).
pub fn crc64(data: &[u8]) -> u64 {
    crc64_update(0, data)
}

/// The CRC-64 of the bytes whose CRC is `crc` followed by `data` (a file's checksum
/// computed as it is written or read in pieces).
pub fn crc64_update(mut crc: u64, data: &[u8]) -> u64 {
    let t = &CRC_TABLES;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let x = crc ^ u64::from_le_bytes(c.try_into().expect("8 bytes"));
        crc = t[7][(x & 0xff) as usize]
            ^ t[6][((x >> 8) & 0xff) as usize]
            ^ t[5][((x >> 16) & 0xff) as usize]
            ^ t[4][((x >> 24) & 0xff) as usize]
            ^ t[3][((x >> 32) & 0xff) as usize]
            ^ t[2][((x >> 40) & 0xff) as usize]
            ^ t[1][((x >> 48) & 0xff) as usize]
            ^ t[0][(x >> 56) as usize];
    }
    chunks.remainder().iter().fold(crc, |crc, &b| {
        t[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
}

/// The DUMP payload of `v`.
pub fn serialize(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let version = encode::object(&mut out, v);
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The value a payload holds, after its version and checksum are checked.
pub fn deserialize(payload: &[u8]) -> Result<Value, RestoreError> {
    let Some(body_len) = payload.len().checked_sub(10) else {
        return Err(RestoreError::Footer);
    };
    let footer = &payload[body_len..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let crc = u64::from_le_bytes(footer[2..].try_into().map_err(|_| RestoreError::Footer)?);
    if version > MAX_VERSION || crc64(&payload[..body_len + 2]) != crc {
        return Err(RestoreError::Footer);
    }
    // As in Redis, the value is read from the whole payload: one whose last field
    // runs into the footer is taken with those bytes.
    decode::object(&mut decode::Reader::new(payload)).map_err(|_| RestoreError::Format)
}

/// DUMP key: the payload, or nil when the key is absent.
pub fn dump(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match ctx.keys.get(args[1], ctx.now) {
        Some(e) => w.bulk(&serialize(&e.value)),
        None => w.null(),
    }
}

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ f].
pub fn restore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, now) = (args[1], ctx.now);
    let (mut replace, mut absttl, mut idle, mut freq) = (false, false, None, None);
    let mut i = 4;
    while i < args.len() {
        let more = i + 1 < args.len();
        if eq(args[i], "replace") {
            replace = true;
        } else if eq(args[i], "absttl") {
            absttl = true;
        } else if eq(args[i], "idletime") && more && freq.is_none() {
            match parse_i64(args[i + 1]) {
                None => return w.error(NOT_INT),
                Some(s) if s < 0 => return w.error("ERR Invalid IDLETIME value, must be >= 0"),
                Some(s) => idle = Some(s as u64),
            }
            i += 1;
        } else if eq(args[i], "freq") && more && idle.is_none() {
            match parse_i64(args[i + 1]) {
                None => return w.error(NOT_INT),
                Some(f) if !(0..=255).contains(&f) => {
                    return w.error("ERR Invalid FREQ value, must be >= 0 and <= 255")
                }
                Some(f) => freq = Some(f as u8),
            }
            i += 1;
        } else {
            return w.error(SYNTAX);
        }
        i += 1;
    }
    let existed = ctx.keys.contains(key, now);
    if existed && !replace {
        return w.error("BUSYKEY Target key name already exists.");
    }
    let ttl = match parse_i64(args[2]) {
        None => return w.error(NOT_INT),
        Some(t) if t < 0 => return w.error("ERR Invalid TTL value, must be >= 0"),
        Some(t) => t as u64,
    };
    let value = match deserialize(args[3]) {
        Ok(v) => v,
        Err(e) => return w.error(e.message()),
    };
    let at = match ttl {
        0 => 0,
        t if absttl => t,
        t => now.saturating_add(t),
    };
    if at != 0 && at <= now {
        // Already past: nothing is created; REPLACE still removed the old key.
        if existed {
            ctx.keys.remove(key);
            ctx.log_del(key);
        }
        return w.simple("OK");
    }
    ctx.keys.put(key, value, at, now);
    ctx.log_key(key);
    // As Redis: IDLETIME counts under an LRU policy, FREQ under an LFU one.
    let lfu = ctx.config.policy.is_lfu();
    if let Some(s) = idle.filter(|_| !lfu) {
        ctx.keys
            .store(key)
            .set_idle(key, now, s.saturating_mul(1000));
    }
    if let Some(f) = freq.filter(|_| lfu) {
        ctx.keys.store(key).set_freq(key, f, now);
    }
    w.simple("OK");
}

//! The log's bytes: the file header, record framing, and the scans that read a file
//! without trusting it.
//!
//! A log starts with a 16-byte header: the magic `89 57 53 41 4f 46 0d 0a`
//! (`\x89WSAOF\r\n`: the first byte is not ASCII and cannot start UTF-8 text, a RESP
//! stream or an RDB file, and as a u32 length it is far over [`MAX_RECORD`], so no
//! headerless log of the previous format starts with it), the format version (u32 LE,
//! [`VERSION`]) and the CRC-32 of those 12 bytes (u32 LE). Records follow back to back:
//! `[payload length: u32 LE][CRC-32 of the payload: u32 LE][payload]`, the payload an
//! effect (tag byte, length-prefixed key and value, u64 deadlines). A change to a
//! database other than 0 is tag 7, the database (u32 LE) and the change's payload;
//! SWAPDB is tag 8 and the two databases; tag 9 is a change to the function
//! libraries; tag 10 is a replica's replication position (the primary's replication
//! id, length-prefixed, and the offset, u64 LE); tag 11, alone, asks a replica for its
//! offset (replication streams only, never in a log). Older builds refuse a log holding a
//! tag they do not know (an unknown record), never misread it.
//!
//! [`classify`] names what a file is before any of it is read as records: empty (a new
//! log), a prefix of our own header (a crash while creating the log), a wirespeed log
//! of some version, a log of the previous format without a header (its first record
//! checks out), or a foreign file (a Redis AOF in RESP text, an RDB file, text, unknown
//! binary). [`scan_records`] reads records in order and stops at the first bad one,
//! saying what is wrong with it ([`Problem`]); [`scan_after`] then looks for valid
//! records after it, byte by byte, so a reader can tell a torn tail (nothing valid
//! after an incomplete record, or only zero bytes) from damage in the middle. Lengths
//! are bounded before anything is allocated (a record by [`MAX_RECORD`] and by the bytes
//! left in the file), and [`scan_after`] stops once it has read and checksummed about
//! twice the bytes it scans plus 1 GiB, so a hostile file cannot make it quadratic
//! (the result then says the scan was cut short).

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};

use super::Effect;

/// The first 8 bytes of every log.
pub const MAGIC: [u8; 8] = *b"\x89WSAOF\r\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Bytes in the header.
pub const HEADER_LEN: u64 = 16;
/// Largest record accepted (a 512 MB value, its key and the framing).
pub const MAX_RECORD: u32 = 600 * 1024 * 1024;

pub(crate) const SET: u8 = 1;
const DEL: u8 = 2;
const DEADLINE: u8 = 3;
const CLEAR: u8 = 4;
const BATCH: u8 = 5;
const CMD: u8 = 6;
const DB: u8 = 7;
const SWAPDB: u8 = 8;
const FUNCTION: u8 = 9;
const POSITION: u8 = 10;
const GETACK: u8 = 11;

/// The header of a version-`version` log.
pub fn header_of(version: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&version.to_le_bytes());
    let crc = crc32fast::hash(&h[..12]);
    h[12..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The header this build writes.
pub fn header() -> [u8; 16] {
    header_of(VERSION)
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Appends one framed record for `e` to `out`.
pub fn encode(e: &Effect, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    encode_payload(e, out);
    let payload_len = (out.len() - start - 8) as u32;
    let crc = crc32fast::hash(&out[start + 8..]);
    out[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// A record's payload: its tag, then its fields.
fn encode_payload(e: &Effect, out: &mut Vec<u8>) {
    match e {
        Effect::Set {
            key,
            value,
            expires_at,
        } => {
            out.push(SET);
            put_bytes(out, key);
            put_bytes(out, value);
            out.extend_from_slice(&expires_at.to_le_bytes());
        }
        Effect::Del { key } => {
            out.push(DEL);
            put_bytes(out, key);
        }
        Effect::Deadline { key, at } => {
            out.push(DEADLINE);
            put_bytes(out, key);
            out.extend_from_slice(&at.to_le_bytes());
        }
        Effect::Clear => out.push(CLEAR),
        Effect::GetAck => out.push(GETACK),
        Effect::Cmd(argv) | Effect::Function(argv) => {
            // [count: u32 LE] then each argument as [length: u32 LE][bytes].
            out.push(if matches!(e, Effect::Cmd(_)) {
                CMD
            } else {
                FUNCTION
            });
            out.extend_from_slice(&(argv.len() as u32).to_le_bytes());
            for a in argv {
                put_bytes(out, a);
            }
        }
        Effect::Position { replid, offset } => {
            out.push(POSITION);
            put_bytes(out, replid);
            out.extend_from_slice(&offset.to_le_bytes());
        }
        Effect::SwapDb { a, b } => {
            out.push(SWAPDB);
            out.extend_from_slice(&a.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
        }
        Effect::Db { db, effect } => {
            // [database: u32 LE] then the change's payload.
            out.push(DB);
            out.extend_from_slice(&db.to_le_bytes());
            encode_payload(effect, out);
        }
        Effect::Batch(effects) => {
            // [count: u32 LE] then each change as [length: u32 LE][payload].
            out.push(BATCH);
            out.extend_from_slice(&(effects.len() as u32).to_le_bytes());
            for e in effects {
                let at = out.len();
                out.extend_from_slice(&[0; 4]);
                encode_payload(e, out);
                let n = (out.len() - at - 4) as u32;
                out[at..at + 4].copy_from_slice(&n.to_le_bytes());
            }
        }
    }
}

/// Decodes one payload (its checksum already checked).
pub fn decode(p: &[u8]) -> Option<Effect> {
    decode_at(p, false)
}

fn decode_at(p: &[u8], nested: bool) -> Option<Effect> {
    let (&tag, _) = p.split_first()?;
    let read_bytes = |r: &mut &[u8]| -> Option<Vec<u8>> {
        let (n, tail) = r.split_at_checked(4)?;
        let n = u32::from_le_bytes(n.try_into().ok()?) as usize;
        let (v, tail) = tail.split_at_checked(n)?;
        *r = tail;
        Some(v.to_vec())
    };
    let read_u64 = |r: &mut &[u8]| -> Option<u64> {
        let (v, tail) = r.split_at_checked(8)?;
        *r = tail;
        Some(u64::from_le_bytes(v.try_into().ok()?))
    };
    let mut r = &p[1..];
    let e = match tag {
        SET => Effect::Set {
            key: read_bytes(&mut r)?,
            value: read_bytes(&mut r)?,
            expires_at: read_u64(&mut r)?,
        },
        DEL => Effect::Del {
            key: read_bytes(&mut r)?,
        },
        DEADLINE => Effect::Deadline {
            key: read_bytes(&mut r)?,
            at: read_u64(&mut r)?,
        },
        CLEAR => Effect::Clear,
        GETACK if !nested => Effect::GetAck,
        POSITION => Effect::Position {
            replid: read_bytes(&mut r)?,
            offset: read_u64(&mut r)?,
        },
        SWAPDB => {
            let (a, tail) = r.split_at_checked(4)?;
            let (b, tail) = tail.split_at_checked(4)?;
            r = tail;
            Effect::SwapDb {
                a: u32::from_le_bytes(a.try_into().ok()?),
                b: u32::from_le_bytes(b.try_into().ok()?),
            }
        }
        CMD | FUNCTION => {
            let (n, tail) = r.split_at_checked(4)?;
            let n = u32::from_le_bytes(n.try_into().ok()?) as usize;
            r = tail;
            // Each argument takes at least 4 bytes: the count is bounded by the payload;
            // a command has its name and a key (or a FUNCTION subcommand).
            if n < 2 {
                return None;
            }
            let mut argv = Vec::with_capacity(n.min(r.len() / 4));
            for _ in 0..n {
                argv.push(read_bytes(&mut r)?);
            }
            if tag == CMD {
                Effect::Cmd(argv)
            } else {
                Effect::Function(argv)
            }
        }
        BATCH if !nested => {
            let (n, tail) = r.split_at_checked(4)?;
            let n = u32::from_le_bytes(n.try_into().ok()?) as usize;
            r = tail;
            // Each change takes at least 5 bytes: the count is bounded by the payload.
            let mut effects = Vec::with_capacity(n.min(r.len() / 5));
            for _ in 0..n {
                let inner = read_bytes(&mut r)?;
                effects.push(decode_at(&inner, true)?);
            }
            Effect::Batch(effects)
        }
        DB => {
            let (db, tail) = r.split_at_checked(4)?;
            let db = u32::from_le_bytes(db.try_into().ok()?);
            // A change to database 0 is never wrapped, and a wrapper holds one change.
            if db == 0
                || matches!(
                    tail.first(),
                    Some(&DB)
                        | Some(&BATCH)
                        | Some(&SWAPDB)
                        | Some(&FUNCTION)
                        | Some(&POSITION)
                        | Some(&GETACK)
                )
            {
                return None;
            }
            let effect = decode_at(tail, true)?;
            return Some(Effect::Db {
                db,
                effect: Box::new(effect),
            });
        }
        _ => return None,
    };
    r.is_empty().then_some(e)
}

/// A file that is not a wirespeed log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// Starts like a RESP command array (`*<n>\r\n`): a Redis AOF.
    RedisAof,
    /// Starts with `REDIS`: an RDB file, or an AOF with an RDB preamble.
    RedisRdb,
    /// Printable UTF-8 text.
    Text,
    /// Something else; its first bytes (up to 8).
    Binary(Vec<u8>),
}

impl fmt::Display for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Foreign::RedisAof => f.write_str("looks like a Redis AOF (RESP text)"),
            Foreign::RedisRdb => {
                f.write_str("looks like a Redis RDB file (or an AOF with an RDB preamble)")
            }
            Foreign::Text => f.write_str("a text file"),
            Foreign::Binary(b) => {
                f.write_str("unknown binary header (first bytes")?;
                for x in b {
                    write!(f, " {x:02x}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// What a file is, from its first bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No bytes: a new log.
    Empty,
    /// Fewer than 16 bytes, all a prefix of this build's header: a crash while the log
    /// was being created (no record can have been written).
    TornHeader,
    /// A wirespeed log of this version; records start at byte 16.
    Current,
    /// A wirespeed log of another version (the header checks out).
    Version(u32),
    /// The magic, but the header is cut short or fails its checksum.
    BadHeader,
    /// A log of the previous format: records from byte 0, the first one valid.
    Headerless,
    /// Not a wirespeed log.
    Foreign(Foreign),
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Empty => f.write_str("an empty file (a new log)"),
            Kind::TornHeader => f.write_str("a log whose header was cut short as it was created"),
            Kind::Current => write!(f, "wirespeed log version {VERSION}"),
            Kind::Version(v) => write!(
                f,
                "wirespeed log version {v}, this build reads version {VERSION}"
            ),
            Kind::BadHeader => f.write_str("a wirespeed log whose header is damaged"),
            Kind::Headerless => f.write_str("an old wirespeed log without a header"),
            Kind::Foreign(x) => write!(f, "not a wirespeed log: {x}"),
        }
    }
}

/// Reads `f` at `off` until `buf` is full or the file ends; the count read.
pub fn read_at(f: &File, off: u64, buf: &mut [u8]) -> io::Result<usize> {
    let mut r = f;
    r.seek(SeekFrom::Start(off))?;
    read_full(&mut r, buf)
}

/// Reads until `buf` is full or the input ends; the count read.
pub fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Names what the file `f` of `total` bytes is, from its first bytes (and, for a
/// headerless log, its first record).
pub fn classify(f: &File, total: u64) -> io::Result<Kind> {
    if total == 0 {
        return Ok(Kind::Empty);
    }
    let mut head = [0u8; 512];
    let n = read_at(f, 0, &mut head)?;
    let head = &head[..n];
    let ours = header();
    if n < 16 && head == &ours[..n] {
        return Ok(Kind::TornHeader);
    }
    if head.starts_with(&MAGIC) {
        if n < 16 {
            return Ok(Kind::BadHeader);
        }
        let crc = u32::from_le_bytes([head[12], head[13], head[14], head[15]]);
        if crc32fast::hash(&head[..12]) != crc {
            return Ok(Kind::BadHeader);
        }
        let v = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        return Ok(if v == VERSION {
            Kind::Current
        } else {
            Kind::Version(v)
        });
    }
    let mut budget = u64::MAX;
    if matches!(
        probe(&mut Window::new(f, total), 0, total, &mut budget)?,
        Probe::Valid(_)
    ) {
        return Ok(Kind::Headerless);
    }
    Ok(Kind::Foreign(foreign(head)))
}

/// What a file that is neither ours nor headerless looks like.
fn foreign(head: &[u8]) -> Foreign {
    if head.starts_with(b"REDIS") {
        return Foreign::RedisRdb;
    }
    if let Some(rest) = head.strip_prefix(b"*") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest[digits..].starts_with(b"\r\n") {
            return Foreign::RedisAof;
        }
    }
    let text = match std::str::from_utf8(head) {
        Ok(_) => true,
        // A multi-byte character cut by the end of the sample is still text.
        Err(e) => e.error_len().is_none() && head.len() == 512,
    };
    let printable = head
        .iter()
        .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r' | 0x0c));
    if text && printable {
        Foreign::Text
    } else {
        Foreign::Binary(head[..head.len().min(8)].to_vec())
    }
}

/// What is wrong with a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Fewer than 8 bytes left for the record header.
    ShortHeader {
        /// Bytes left.
        left: u64,
    },
    /// The announced payload runs past the end of the file.
    PastEnd {
        /// Announced payload bytes.
        len: u32,
        /// Bytes left after the record header.
        left: u64,
    },
    /// The announced length is over [`MAX_RECORD`] (and fits in the file).
    TooLong {
        /// Announced payload bytes.
        len: u32,
    },
    /// The payload's CRC-32 differs from the stored one.
    Checksum {
        /// Stored.
        stored: u32,
        /// Computed over the payload.
        computed: u32,
    },
    /// The checksum holds but the payload is not an effect.
    Undecodable,
}

impl Problem {
    /// The record is incomplete: its header or its payload runs past the end of the
    /// file (what a write cut by a crash leaves).
    pub fn incomplete(&self) -> bool {
        matches!(self, Problem::ShortHeader { .. } | Problem::PastEnd { .. })
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::ShortHeader { left } => {
                write!(f, "record header cut short ({left} of 8 bytes)")
            }
            Problem::PastEnd { len, left } => write!(
                f,
                "record announces {len} payload bytes but only {left} follow"
            ),
            Problem::TooLong { len } => {
                write!(f, "record length {len} is over the limit of {MAX_RECORD}")
            }
            Problem::Checksum { stored, computed } => write!(
                f,
                "checksum mismatch (stored {stored:08x}, computed {computed:08x})"
            ),
            Problem::Undecodable => f.write_str("payload does not decode as an effect"),
        }
    }
}

/// The first bad record of a log and what lies after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bad {
    /// Byte offset of the record in the file.
    pub offset: u64,
    /// Its number: records before it + 1.
    pub record: u64,
    /// What is wrong with it.
    pub problem: Problem,
    /// Bytes from it to the end of the file.
    pub rest: u64,
    /// Every byte from it to the end of the file is zero.
    pub zero_rest: bool,
    /// Valid records found after it.
    pub after: After,
}

impl Bad {
    /// A torn tail, which may be cut without losing an acknowledged write: nothing
    /// valid after it, and the record incomplete or the rest zero bytes.
    pub fn torn(&self) -> bool {
        self.after.records == 0
            && !self.after.cut_short
            && (self.problem.incomplete() || self.zero_rest)
    }
}

/// What [`scan_after`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct After {
    /// Valid records found (complete, checksum good, payload decodable).
    pub records: u64,
    /// Offset of the first one.
    pub first: Option<u64>,
    /// The scan stopped at its work limit before the end of the file.
    pub cut_short: bool,
}

/// The result of reading a log's records from its first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Records {
    /// Valid records before the first bad one.
    pub records: u64,
    /// Where the valid prefix ends (the first bad record's offset, or the file's end).
    pub good_end: u64,
    /// The first bad record, if any.
    pub bad: Option<Bad>,
}

/// Reads the records of `f` (`total` bytes) from `start`, passing each to `each`, up to
/// the first bad one; then looks after it ([`scan_after`], all of the rest when
/// `count_all`, else up to the first valid record).
pub fn scan_records(
    f: &File,
    start: u64,
    total: u64,
    count_all: bool,
    mut each: impl FnMut(Effect),
) -> io::Result<Records> {
    let mut r = f;
    r.seek(SeekFrom::Start(start))?;
    let mut r = BufReader::with_capacity(1 << 16, r);
    let mut pos = start;
    let mut records = 0u64;
    let mut header = [0u8; 8];
    let mut payload = Vec::new();
    let problem = loop {
        let left = total - pos;
        if left == 0 {
            return Ok(Records {
                records,
                good_end: pos,
                bad: None,
            });
        }
        if left < 8 {
            break Problem::ShortHeader { left };
        }
        if read_full(&mut r, &mut header)? < 8 {
            // The file shrank under us: what is there is short.
            break Problem::ShortHeader { left };
        }
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let stored = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if u64::from(len) > left - 8 {
            break Problem::PastEnd {
                len,
                left: left - 8,
            };
        }
        if len > MAX_RECORD {
            break Problem::TooLong { len };
        }
        payload.resize(len as usize, 0);
        if read_full(&mut r, &mut payload)? < len as usize {
            break Problem::PastEnd {
                len,
                left: left - 8,
            };
        }
        let computed = crc32fast::hash(&payload);
        if computed != stored {
            break Problem::Checksum { stored, computed };
        }
        let Some(e) = decode(&payload) else {
            break Problem::Undecodable;
        };
        each(e);
        records += 1;
        pos += 8 + u64::from(len);
    };
    let after = scan_after(f, pos + 1, total, !count_all)?;
    let zero_rest = after.records == 0 && rest_is_zero(f, pos, total)?;
    Ok(Records {
        records,
        good_end: pos,
        bad: Some(Bad {
            offset: pos,
            record: records + 1,
            problem,
            rest: total - pos,
            zero_rest,
            after,
        }),
    })
}

/// True when bytes `[from, total)` of `f` are all zero.
fn rest_is_zero(f: &File, from: u64, total: u64) -> io::Result<bool> {
    let mut r = f;
    r.seek(SeekFrom::Start(from))?;
    let mut r = r.take(total - from);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = read_full(&mut r, &mut buf)?;
        if buf[..n].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        if n < buf.len() {
            return Ok(true);
        }
    }
}

/// Looks for valid records in `[from, total)` of `f`: at each offset, a record whose
/// length fits in the file, whose payload has the shape of an effect (checked from a
/// few bytes, before any checksum) and whose checksum holds; after one, the scan goes
/// on at its end (the records that follow it). Stops at the first when `first_only`,
/// and once it has read and checksummed `2 * (total - from) + 1 GiB` bytes.
pub fn scan_after(f: &File, from: u64, total: u64, first_only: bool) -> io::Result<After> {
    let mut win = Window::new(f, total);
    let mut budget = 2 * total.saturating_sub(from) + (1 << 30);
    let mut after = After::default();
    let mut q = from;
    while q + 9 <= total {
        match probe(&mut win, q, total, &mut budget)? {
            Probe::Valid(len) => {
                after.records += 1;
                after.first.get_or_insert(q);
                if first_only {
                    break;
                }
                q += 8 + u64::from(len);
            }
            Probe::Invalid => q += 1,
            Probe::OutOfBudget => {
                after.cut_short = true;
                break;
            }
        }
    }
    Ok(after)
}

/// A read window over a file: at most 1 MiB of it in memory; every byte read counts
/// against the caller's budget.
struct Window<'f> {
    f: &'f File,
    total: u64,
    start: u64,
    buf: Vec<u8>,
}

const WINDOW: usize = 1 << 20;

impl<'f> Window<'f> {
    fn new(f: &'f File, total: u64) -> Window<'f> {
        Window {
            f,
            total,
            start: 0,
            buf: Vec::new(),
        }
    }

    /// Bytes `[off, off + n)` (`n <= WINDOW`, within the file), reading the window
    /// there if they are not in it; `None` when the budget cannot pay for the read.
    fn get(&mut self, off: u64, n: usize, budget: &mut u64) -> io::Result<Option<&[u8]>> {
        let end = self.start + self.buf.len() as u64;
        if off < self.start || off + n as u64 > end {
            let want = (self.total - off).min(WINDOW as u64) as usize;
            if *budget < want as u64 {
                return Ok(None);
            }
            *budget -= want as u64;
            self.buf.resize(want, 0);
            let got = read_at(self.f, off, &mut self.buf)?;
            self.buf.truncate(got);
            self.start = off;
            if got < n {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the file shrank while it was read",
                ));
            }
        }
        let at = (off - self.start) as usize;
        Ok(Some(&self.buf[at..at + n]))
    }
}

enum Probe {
    /// A valid record with this payload length.
    Valid(u32),
    Invalid,
    OutOfBudget,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Is there a valid record at `q`? Its shape first (length, tag, inner lengths: what
/// [`decode`] checks, from at most two small reads), then its checksum.
fn probe(win: &mut Window<'_>, q: u64, total: u64, budget: &mut u64) -> io::Result<Probe> {
    if q + 9 > total {
        return Ok(Probe::Invalid);
    }
    let head_n = (total - q).min(13) as usize;
    let mut h = [0u8; 13];
    match win.get(q, head_n, budget)? {
        Some(b) => h[..head_n].copy_from_slice(b),
        None => return Ok(Probe::OutOfBudget),
    }
    let len = u32_at(&h, 0);
    let stored = u32_at(&h, 4);
    let tag = h[8];
    if len == 0 || len > MAX_RECORD || q + 8 + u64::from(len) > total {
        return Ok(Probe::Invalid);
    }
    let len64 = u64::from(len);
    let key_len = || (head_n >= 13).then(|| u64::from(u32_at(&h, 9)));
    let shaped = match tag {
        CLEAR => len == 1,
        DEL => key_len().is_some_and(|k| len64 == 5 + k),
        DEADLINE => key_len().is_some_and(|k| len64 == 13 + k),
        SET => match key_len() {
            Some(k) if 17 + k <= len64 => {
                let Some(v) = win.get(q + 8 + 5 + k, 4, budget)? else {
                    return Ok(Probe::OutOfBudget);
                };
                len64 == 17 + k + u64::from(u32_at(v, 0))
            }
            _ => false,
        },
        _ => false,
    };
    if !shaped {
        return Ok(Probe::Invalid);
    }
    if *budget < len64 {
        return Ok(Probe::OutOfBudget);
    }
    *budget -= len64;
    let mut hasher = crc32fast::Hasher::new();
    let mut off = q + 8;
    let end = off + len64;
    while off < end {
        let n = (end - off).min(WINDOW as u64) as usize;
        let Some(chunk) = win.get(off, n, budget)? else {
            return Ok(Probe::OutOfBudget);
        };
        hasher.update(chunk);
        off += n as u64;
    }
    Ok(if hasher.finalize() == stored {
        Probe::Valid(len)
    } else {
        Probe::Invalid
    })
}

//! Redis's RDB file: a whole keyspace in the serialization DUMP uses for one value, so
//! a `dump.rdb` written by Redis loads here and one written here loads in Redis.
//!
//! A file is `REDIS` and the version in four ASCII digits, then opcodes: auxiliary
//! fields (`AUX`, name and value strings), function libraries (`FUNCTION2`, the code),
//! for each database `SELECTDB` and `RESIZEDB` (sizes, a hint), then its keys, each
//! optionally preceded by its deadline (`EXPIRETIME_MS`, u64 LE; `EXPIRETIME`, u32 LE
//! seconds, in old files), its idle time (`IDLE`) or its LFU counter (`FREQ`), then the
//! object type, the key as a string and the value ([`super::decode`]); at the end
//! `EOF` and, from version 5 on, the CRC-64 of every byte before it (0: not computed,
//! Redis's `rdbchecksum no`).
//!
//! [`read`] takes files of versions 1 to 12 (Redis 7.4). Every value type and encoding
//! of DUMP's reader loads; what this server cannot hold is refused whole, with one line
//! naming the key, its type and its offset: module values (types 6 and 7) and module
//! data (`MODULE_AUX`), hashes with field deadlines (Redis 7.4, types 22 to 25), and
//! the function format of Redis 7.0's release candidates. Nothing is half loaded: the
//! caller builds the keyspace from the keys handed to it and drops it on an error. The
//! input is untrusted: lengths are checked against the bytes left before anything is
//! allocated (as for RESTORE), and a database number against `databases`.
//!
//! [`RdbWriter`] writes one: RDB version 9 (Redis 6.0 and later load it) unless the
//! content needs more, 10 with function libraries or streams (Redis 7.0), 11 with a
//! stream consumer whose active time Redis 7.0's form would lose (Redis 7.2); every
//! value in DUMP's encodings, the checksum computed as the bytes go out.

use std::fmt;
use std::io::{self, Write};

use super::decode::{self, Reader};
use super::{crc64_update, encode};
use crate::value::Value;

/// The newest file version read (Redis 7.4's).
pub const MAX_FILE_VERSION: u16 = 12;

/// RDB opcodes (Redis's `RDB_OPCODE_*`).
mod op {
    pub const SLOT_INFO: u8 = 244;
    pub const FUNCTION2: u8 = 245;
    pub const FUNCTION_PRE_GA: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}

/// Why a file cannot be loaded; [`fmt::Display`] gives the one line to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RdbError {
    /// The file does not start with `REDIS` and a four-digit version.
    NotRdb,
    /// A version this server does not read.
    Version(u16),
    /// The file ends before its `EOF` opcode and checksum.
    Truncated {
        /// Where the missing bytes begin.
        offset: usize,
    },
    /// Bytes that are no RDB opcode or field.
    Malformed {
        /// Where the opcode or field starts.
        offset: usize,
        /// What was being read.
        what: &'static str,
    },
    /// A key whose value cannot be loaded.
    Key {
        /// The key.
        key: Vec<u8>,
        /// Its object type.
        ty: u8,
        /// Where its type byte is.
        offset: usize,
        /// True when the type is valid but not one this server holds (a module's
        /// value, a hash with field deadlines); false when the value is damaged.
        unsupported: bool,
    },
    /// Data this server cannot hold, outside any key.
    Unsupported {
        /// Where its opcode is.
        offset: usize,
        /// What it is.
        what: &'static str,
    },
    /// `SELECTDB` names a database past `databases`.
    Database {
        /// The database named.
        db: u64,
        /// The server's `databases`.
        databases: usize,
        /// Where the opcode is.
        offset: usize,
    },
    /// The checksum at the end does not match the file.
    Checksum {
        /// The one the file holds.
        stored: u64,
        /// The one its bytes have.
        computed: u64,
    },
}

/// A key as text for a message: printable ASCII kept, other bytes escaped, at most 64.
fn shown(key: &[u8]) -> String {
    let mut s: String = key
        .iter()
        .take(64)
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    if key.len() > 64 {
        s.push_str("...");
    }
    s
}

/// Redis's name of an object type, for messages.
fn type_name(ty: u8) -> &'static str {
    match ty {
        0 => "string",
        1 | 10 | 14 | 18 => "list",
        2 | 11 | 20 => "set",
        3 | 5 | 12 | 17 => "zset",
        4 | 9 | 13 | 16 => "hash",
        6 | 7 => "module",
        15 | 19 | 21 => "stream",
        22..=25 => "hash with field deadlines",
        _ => "unknown",
    }
}

impl fmt::Display for RdbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RdbError::NotRdb => f.write_str("not an RDB file (it does not start with REDIS and a version)"),
            RdbError::Version(v) => write!(
                f,
                "RDB version {v} is not supported (this server reads versions 1 to {MAX_FILE_VERSION})"
            ),
            RdbError::Truncated { offset } => {
                write!(f, "the file ends at byte {offset}, before its EOF opcode and checksum")
            }
            RdbError::Malformed { offset, what } => write!(f, "bad {what} at byte {offset}"),
            RdbError::Key {
                key,
                ty,
                offset,
                unsupported,
            } => write!(
                f,
                "key '{}' at byte {offset}: {} of type {ty} ({})",
                shown(key),
                if *unsupported {
                    "this server cannot load a value"
                } else {
                    "a damaged value"
                },
                type_name(*ty)
            ),
            RdbError::Unsupported { offset, what } => {
                write!(f, "{what} at byte {offset}, which this server cannot load")
            }
            RdbError::Database {
                db,
                databases,
                offset,
            } => write!(
                f,
                "database {db} at byte {offset}, but this server has {databases} (raise databases)"
            ),
            RdbError::Checksum { stored, computed } => write!(
                f,
                "wrong checksum: the file says {stored:016x}, its bytes give {computed:016x}"
            ),
        }
    }
}

impl std::error::Error for RdbError {}

/// One key of a file.
#[derive(Debug)]
pub struct RdbKey {
    /// Its database.
    pub db: usize,
    /// The key.
    pub key: Vec<u8>,
    /// The value.
    pub value: Value,
    /// Deadline in ms since the epoch (0: none). Keys already past it are handed over
    /// too: a primary drops them, a replica keeps them (as Redis does).
    pub expires_at: u64,
    /// Seconds since last use, when the file holds it (`IDLE`).
    pub idle_s: Option<u64>,
}

/// What a file held besides its keys.
#[derive(Debug, Default)]
pub struct RdbSummary {
    /// Its version.
    pub version: u16,
    /// Its auxiliary fields, in order.
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    /// The code of each function library.
    pub functions: Vec<Vec<u8>>,
    /// Keys read.
    pub keys: u64,
}

impl RdbSummary {
    /// The value of auxiliary field `name`.
    pub fn aux(&self, name: &str) -> Option<&[u8]> {
        self.aux
            .iter()
            .find(|(k, _)| k == name.as_bytes())
            .map(|(_, v)| v.as_slice())
    }
}

/// Reads the RDB file `buf`, handing each key to `each` in file order; `databases`
/// bounds the database numbers. On an error some keys may have been handed over
/// already: the caller drops what it built.
pub fn read(
    buf: &[u8],
    databases: usize,
    each: impl FnMut(RdbKey),
) -> Result<RdbSummary, RdbError> {
    read_with_hints(buf, databases, |_, _| {}, each)
}

/// [`read`], with `hint(db, keys)` called for each database's size hint (`RESIZEDB`),
/// at most a third of the bytes left in the file (a key takes three at least).
pub fn read_with_hints(
    buf: &[u8],
    databases: usize,
    mut hint: impl FnMut(usize, u64),
    mut each: impl FnMut(RdbKey),
) -> Result<RdbSummary, RdbError> {
    if buf.len() < 9 || &buf[..5] != b"REDIS" || !buf[5..9].iter().all(u8::is_ascii_digit) {
        return Err(RdbError::NotRdb);
    }
    let version = buf[5..9]
        .iter()
        .fold(0u16, |v, d| v * 10 + u16::from(d - b'0'));
    if !(1..=MAX_FILE_VERSION).contains(&version) {
        return Err(RdbError::Version(version));
    }
    let mut summary = RdbSummary {
        version,
        ..RdbSummary::default()
    };
    let mut r = Reader::new(&buf[9..]);
    let (mut db, mut expires_at, mut idle_s) = (0usize, 0u64, None);
    loop {
        let at = buf.len() - r.left();
        // A field of an opcode that cannot be read: the file ends, or it is damaged.
        let bad = |r: &Reader, what| {
            if r.left() == 0 {
                RdbError::Truncated { offset: buf.len() }
            } else {
                RdbError::Malformed { offset: at, what }
            }
        };
        let t = r.byte().map_err(|_| RdbError::Truncated { offset: at })?;
        match t {
            op::EXPIRETIME_MS => {
                expires_at = u64::from_le_bytes(r.array().map_err(|_| bad(&r, "deadline"))?);
            }
            op::EXPIRETIME => {
                let s = u32::from_le_bytes(r.array().map_err(|_| bad(&r, "deadline"))?);
                expires_at = u64::from(s) * 1000;
            }
            op::FREQ => {
                r.byte().map_err(|_| bad(&r, "LFU counter"))?;
            }
            op::IDLE => idle_s = Some(r.any_len().map_err(|_| bad(&r, "idle time"))?),
            op::SELECTDB => {
                let d = r.any_len().map_err(|_| bad(&r, "database number"))?;
                if d >= databases as u64 {
                    return Err(RdbError::Database {
                        db: d,
                        databases,
                        offset: at,
                    });
                }
                db = d as usize;
            }
            op::RESIZEDB => {
                let keys = r.any_len().map_err(|_| bad(&r, "database size hint"))?;
                r.any_len().map_err(|_| bad(&r, "database size hint"))?;
                // A key takes three bytes at least (type, key, value).
                hint(db, keys.min(r.left() as u64 / 3));
            }
            op::SLOT_INFO => {
                for _ in 0..3 {
                    r.any_len().map_err(|_| bad(&r, "slot size hint"))?;
                }
            }
            op::AUX => {
                let k = r.string().map_err(|_| bad(&r, "auxiliary field"))?;
                let v = r.string().map_err(|_| bad(&r, "auxiliary field"))?;
                summary.aux.push((k, v));
            }
            op::FUNCTION2 => {
                let code = r.string().map_err(|_| bad(&r, "function library"))?;
                summary.functions.push(code);
            }
            op::FUNCTION_PRE_GA => {
                return Err(RdbError::Unsupported {
                    offset: at,
                    what: "a function library of Redis 7.0's release candidates",
                })
            }
            op::MODULE_AUX => {
                return Err(RdbError::Unsupported {
                    offset: at,
                    what: "a module's data",
                })
            }
            op::EOF => {
                if version >= 5 {
                    let end = buf.len() - r.left();
                    let stored = u64::from_le_bytes(
                        r.array()
                            .map_err(|_| RdbError::Truncated { offset: buf.len() })?,
                    );
                    if stored != 0 {
                        let computed = crc64_update(0, &buf[..end]);
                        if computed != stored {
                            return Err(RdbError::Checksum { stored, computed });
                        }
                    }
                }
                return Ok(summary);
            }
            ty => {
                let key = r.string().map_err(|_| bad(&r, "key"))?;
                if !decode::known(ty) {
                    return Err(RdbError::Key {
                        key,
                        ty,
                        offset: at,
                        unsupported: (6..=7).contains(&ty) || (22..=25).contains(&ty),
                    });
                }
                let value = match decode::value(&mut r, ty) {
                    Ok(v) => v,
                    Err(_) if r.left() == 0 => {
                        return Err(RdbError::Truncated { offset: buf.len() })
                    }
                    Err(_) => {
                        return Err(RdbError::Key {
                            key,
                            ty,
                            offset: at,
                            unsupported: false,
                        })
                    }
                };
                summary.keys += 1;
                each(RdbKey {
                    db,
                    key,
                    value,
                    expires_at,
                    idle_s,
                });
                expires_at = 0;
                idle_s = None;
            }
        }
    }
}

/// The file version for content holding `values` (and function libraries when
/// `functions`): the least every reader of it needs.
pub fn version_for<'a>(functions: bool, values: impl Iterator<Item = &'a Value>) -> u16 {
    let base = if functions { 10 } else { super::DUMP_VERSION };
    values.map(encode::version_of).fold(base, u16::max)
}

/// Bytes buffered before they go to the output.
const FLUSH_AT: usize = 1 << 20;

/// Writes an RDB file: [`RdbWriter::new`] (the header), then [`RdbWriter::aux`],
/// [`RdbWriter::function`], per database [`RdbWriter::select_db`] and its
/// [`RdbWriter::key`]s, and [`RdbWriter::finish`] (EOF and checksum).
pub struct RdbWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    crc: u64,
    written: u64,
}

impl<W: Write> fmt::Debug for RdbWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RdbWriter")
            .field("written", &(self.written + self.buf.len() as u64))
            .finish()
    }
}

impl<W: Write> RdbWriter<W> {
    /// A file of `version` (see [`version_for`]) written to `out`.
    pub fn new(out: W, version: u16) -> RdbWriter<W> {
        let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
        buf.extend_from_slice(format!("REDIS{version:04}").as_bytes());
        RdbWriter {
            out,
            buf,
            crc: 0,
            written: 0,
        }
    }

    fn spill(&mut self) -> io::Result<()> {
        self.crc = crc64_update(self.crc, &self.buf);
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    fn maybe_spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.spill()?;
        }
        Ok(())
    }

    /// An auxiliary field.
    pub fn aux(&mut self, name: &str, value: &[u8]) -> io::Result<()> {
        self.buf.push(op::AUX);
        encode::string(&mut self.buf, name.as_bytes());
        encode::string(&mut self.buf, value);
        self.maybe_spill()
    }

    /// A function library's code.
    pub fn function(&mut self, code: &[u8]) -> io::Result<()> {
        self.buf.push(op::FUNCTION2);
        encode::string(&mut self.buf, code);
        self.maybe_spill()
    }

    /// The start of database `db`'s keys: `keys` of them, `expires` with a deadline.
    pub fn select_db(&mut self, db: usize, keys: u64, expires: u64) -> io::Result<()> {
        self.buf.push(op::SELECTDB);
        encode::len(&mut self.buf, db as u64);
        self.buf.push(op::RESIZEDB);
        encode::len(&mut self.buf, keys);
        encode::len(&mut self.buf, expires);
        self.maybe_spill()
    }

    /// One key: its deadline (0: none), its idle time when given, then its value.
    pub fn key(
        &mut self,
        key: &[u8],
        value: &Value,
        expires_at: u64,
        idle_s: Option<u64>,
    ) -> io::Result<()> {
        if expires_at != 0 {
            self.buf.push(op::EXPIRETIME_MS);
            self.buf.extend_from_slice(&expires_at.to_le_bytes());
        }
        if let Some(s) = idle_s {
            self.buf.push(op::IDLE);
            encode::len(&mut self.buf, s);
        }
        // The type byte, the key, then the value: the value's encoding starts with
        // its type, and the key goes in after it.
        let start = self.buf.len();
        encode::object(&mut self.buf, value);
        let mut k = Vec::with_capacity(key.len() + 9);
        encode::string(&mut k, key);
        self.buf.splice(start + 1..start + 1, k);
        self.maybe_spill()
    }

    /// Ends the file (EOF and checksum) and returns the output and the bytes written.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.buf.push(op::EOF);
        self.spill()?;
        let crc = self.crc.to_le_bytes();
        self.out.write_all(&crc)?;
        self.out.flush()?;
        Ok((self.out, self.written + 8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Hash, List, Set, ZSet};

    fn sample() -> Vec<(usize, Vec<u8>, Value, u64)> {
        let mut l = List::default();
        l.push(false, b"a");
        l.push(false, b"12");
        let mut s = Set::default();
        s.insert(b"m");
        let mut h = Hash::default();
        h.insert(b"f", b"v");
        let mut z = ZSet::default();
        z.insert(b"z", 1.5);
        vec![
            (0, b"str".to_vec(), Value::Str(b"hello".to_vec()), 0),
            (
                0,
                b"int".to_vec(),
                Value::Str(b"-42".to_vec()),
                1_900_000_000_000,
            ),
            (0, b"long".to_vec(), Value::Str(vec![b'x'; 5000]), 0),
            (1, b"list".to_vec(), Value::List(Box::new(l)), 0),
            (1, b"set".to_vec(), Value::Set(Box::new(s)), 0),
            (3, b"hash".to_vec(), Value::Hash(Box::new(h)), 0),
            (
                3,
                b"zset".to_vec(),
                Value::ZSet(Box::new(z)),
                2_000_000_000_000,
            ),
        ]
    }

    fn file(keys: &[(usize, Vec<u8>, Value, u64)], functions: &[&[u8]]) -> Vec<u8> {
        let v = version_for(!functions.is_empty(), keys.iter().map(|k| &k.2));
        let mut w = RdbWriter::new(Vec::new(), v);
        w.aux("redis-ver", b"7.2.0").unwrap();
        for f in functions {
            w.function(f).unwrap();
        }
        for db in 0..4 {
            let mine: Vec<_> = keys.iter().filter(|k| k.0 == db).collect();
            if mine.is_empty() {
                continue;
            }
            w.select_db(db, mine.len() as u64, 0).unwrap();
            for (_, k, v, at) in mine {
                w.key(k, v, *at, Some(7)).unwrap();
            }
        }
        let (out, n) = w.finish().unwrap();
        assert_eq!(n as usize, out.len());
        out
    }

    fn load(buf: &[u8]) -> Result<(RdbSummary, Vec<RdbKey>), RdbError> {
        let mut keys = Vec::new();
        let s = read(buf, 16, |k| keys.push(k))?;
        Ok((s, keys))
    }

    #[test]
    fn a_written_file_reads_back_whole() {
        let keys = sample();
        let code: &[u8] = b"#!lua name=lib\nredis.register_function('f', function() return 1 end)";
        let buf = file(&keys, &[code]);
        assert_eq!(&buf[..9], b"REDIS0010");
        let (s, back) = load(&buf).unwrap();
        assert_eq!(s.version, 10);
        assert_eq!(s.aux("redis-ver"), Some(&b"7.2.0"[..]));
        assert_eq!(s.functions, vec![code.to_vec()]);
        assert_eq!(s.keys, keys.len() as u64);
        for ((db, k, v, at), got) in keys.iter().zip(&back) {
            assert_eq!(
                (got.db, &got.key, &got.value, got.expires_at),
                (*db, k, v, *at)
            );
            assert_eq!(got.idle_s, Some(7));
        }
        // Without functions or streams the file is version 9, which Redis 6 loads.
        assert_eq!(&file(&keys, &[])[..9], b"REDIS0009");
    }

    #[test]
    fn damage_anywhere_is_an_error_never_a_panic() {
        let buf = file(&sample(), &[b"#!lua name=x\nreturn 1"]);
        // Every truncation.
        for n in 0..buf.len() {
            assert!(load(&buf[..n]).is_err(), "cut at {n}");
        }
        // Every single flipped byte: the checksum or the parser catches it.
        for i in 0..buf.len() {
            let mut b = buf.clone();
            b[i] ^= 0x41;
            assert!(load(&b).is_err(), "flip at {i}");
        }
    }

    #[test]
    fn random_mutations_are_loaded_whole_or_refused() {
        // Bytes changed, inserted and removed at random (the checksum set to 0 so
        // that the parser is reached): never a panic; what loads writes back the same.
        let mut base = file(&sample(), &[b"#!lua name=x\nreturn 1"]);
        let n = base.len();
        base[n - 8..].fill(0);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut loaded = 0;
        for _ in 0..20_000 {
            let mut b = base.clone();
            for _ in 0..1 + rand() % 4 {
                let at = 9 + (rand() as usize) % (b.len() - 17);
                match rand() % 3 {
                    0 => b[at] = rand() as u8,
                    1 => b.insert(at, rand() as u8),
                    _ => {
                        b.remove(at);
                    }
                }
            }
            if let Ok((_, keys)) = load(&b) {
                loaded += 1;
                let mut w = RdbWriter::new(Vec::new(), 11);
                for k in &keys {
                    w.select_db(k.db, 1, 0).unwrap();
                    w.key(&k.key, &k.value, k.expires_at, k.idle_s).unwrap();
                }
                let (again, _) = w.finish().unwrap();
                let (_, back) = load(&again).unwrap();
                assert_eq!(back.len(), keys.len());
                for (a, b) in keys.iter().zip(&back) {
                    assert_eq!((a.db, &a.key, &a.value), (b.db, &b.key, &b.value));
                }
            }
        }
        // Some mutations only touch a value's bytes and still load.
        assert!(loaded > 0);
    }

    #[test]
    fn what_cannot_be_held_is_named() {
        // A module value (type 7) after a good key; no checksum (0).
        let mut b = b"REDIS0009".to_vec();
        b.extend_from_slice(&[op::SELECTDB, 0, 0, 1, b'a', 1, b'b', 7, 3]);
        b.extend_from_slice(b"mod");
        b.extend_from_slice(&[0, 0, 0]);
        let e = load(&b).unwrap_err();
        assert_eq!(
            e,
            RdbError::Key {
                key: b"mod".to_vec(),
                ty: 7,
                offset: 16,
                unsupported: true
            }
        );
        assert!(e.to_string().contains("key 'mod' at byte 16"), "{e}");
        assert!(e.to_string().contains("module"), "{e}");
        // A database past `databases`.
        let mut b = b"REDIS0009".to_vec();
        b.extend_from_slice(&[op::SELECTDB, 20, op::EOF, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(matches!(load(&b), Err(RdbError::Database { db: 20, .. })));
        // Not a file of ours to read.
        assert_eq!(load(b"REDIS0013").unwrap_err(), RdbError::Version(13));
        assert_eq!(load(b"*1\r\n$4\r\nPING\r\n").unwrap_err(), RdbError::NotRdb);
        // A checksum of 0 is not checked (rdbchecksum no).
        let mut b = b"REDIS0009".to_vec();
        b.extend_from_slice(&[0, 1, b'k', 1, b'v', op::EOF, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(load(&b).unwrap().0.keys, 1);
    }
}

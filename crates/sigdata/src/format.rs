//! Record file formats, read as a stream and written record by record.
//!
//! - **Binary** ([`Format::Bin`]): records back to back, no header, no padding:
//!   `u32 msg_len (little-endian) | msg[msg_len] | sig[64] | pk[32]`.
//! - **JSON Lines** ([`Format::Jsonl`]): one object per line,
//!   `{"pk":"<hex>","msg":"<hex>","sig":"<hex>"}`. Blank lines are ignored, other keys are
//!   ignored, hex is case-insensitive on input and lowercase on output. A `sig` or `pk` of
//!   the wrong length is not a parse error: the record is kept and the verifier reports
//!   `BadLength` for it.
//!
//! Reading stops at the first truncated or malformed record with a [`ParseError`] that
//! names the record index (0-based, counting records, not lines) and the byte offset of
//! the field that went wrong (for JSON Lines, the start of the line); the records before
//! it are kept. Untrusted lengths never size an allocation: a message length larger than
//! what is left of the input is reported as truncation, and message buffers grow only as
//! bytes actually arrive.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::str::FromStr;

use crate::Record;

/// Signature length in the binary format.
pub const SIG_LEN: usize = 64;
/// Public-key length in the binary format.
pub const PK_LEN: usize = 32;
/// Longest JSON Lines line accepted (bytes, newline excluded).
pub const MAX_JSONL_LINE: u64 = 256 << 20;
/// Initial message buffer size; beyond it buffers grow as data arrives.
const MSG_RESERVE: u64 = 64 << 10;

/// A record file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `u32 msg_len (LE) | msg | sig[64] | pk[32]`, back to back.
    Bin,
    /// One JSON object per line with hex fields `pk`, `msg`, `sig`.
    Jsonl,
}

impl Format {
    /// The CLI name (`bin` or `jsonl`).
    pub fn name(&self) -> &'static str {
        match self {
            Format::Bin => "bin",
            Format::Jsonl => "jsonl",
        }
    }

    /// The default for a path: JSON Lines for a `.jsonl` extension (any case), else binary.
    pub fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("jsonl") => Format::Jsonl,
            _ => Format::Bin,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown format name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown format '{}' (expected bin or jsonl)", self.0)
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        match s {
            "bin" => Ok(Format::Bin),
            "jsonl" => Ok(Format::Jsonl),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

/// A field of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// The binary format's `u32` message length.
    LengthPrefix,
    /// The message.
    Message,
    /// The signature.
    Signature,
    /// The public key.
    PublicKey,
}

impl Field {
    /// The name used in error messages.
    pub fn name(&self) -> &'static str {
        match self {
            Field::LengthPrefix => "length prefix",
            Field::Message => "message",
            Field::Signature => "signature",
            Field::PublicKey => "public key",
        }
    }

    /// The JSON Lines key (the length prefix has none).
    pub fn json_key(&self) -> &'static str {
        match self {
            Field::LengthPrefix => "msg_len",
            Field::Message => "msg",
            Field::Signature => "sig",
            Field::PublicKey => "pk",
        }
    }
}

/// What went wrong in a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The input ended inside a field.
    Truncated {
        /// The field being read.
        field: Field,
        /// Bytes the field needs.
        need: u64,
        /// Bytes that were left.
        left: u64,
    },
    /// A JSON Lines line longer than [`MAX_JSONL_LINE`].
    LineTooLong {
        /// The limit in bytes.
        limit: u64,
    },
    /// A JSON Lines line that is not valid JSON.
    Json(String),
    /// A JSON Lines line that is valid JSON but not an object.
    NotObject,
    /// A required key is missing.
    MissingField(Field),
    /// A key's value is not a string.
    NotString(Field),
    /// A key's value is not valid hex.
    BadHex {
        /// The field.
        field: Field,
        /// What the hex decoder said.
        detail: String,
    },
    /// Reading the input failed.
    Io {
        /// The I/O error kind.
        kind: io::ErrorKind,
        /// The I/O error message.
        detail: String,
    },
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Truncated { field, need, left } => write!(
                f,
                "truncated {} (need {need} bytes, {left} left)",
                field.name()
            ),
            ParseErrorKind::LineTooLong { limit } => {
                write!(f, "line longer than {limit} bytes")
            }
            ParseErrorKind::Json(e) => write!(f, "invalid JSON: {e}"),
            ParseErrorKind::NotObject => f.write_str("line is not a JSON object"),
            ParseErrorKind::MissingField(k) => write!(f, "missing key \"{}\"", k.json_key()),
            ParseErrorKind::NotString(k) => {
                write!(f, "key \"{}\" is not a string", k.json_key())
            }
            ParseErrorKind::BadHex { field, detail } => {
                write!(f, "key \"{}\" is not valid hex: {detail}", field.json_key())
            }
            ParseErrorKind::Io { detail, .. } => write!(f, "read error: {detail}"),
        }
    }
}

/// A truncated or malformed record: which one, where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Index of the failing record (0-based; also the number of records read before it).
    pub index: usize,
    /// Byte offset of the failing field (binary) or line (JSON Lines) in the input.
    pub offset: u64,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record {} at byte offset {}: {}",
            self.index, self.offset, self.kind
        )
    }
}

impl std::error::Error for ParseError {}

/// Everything read from an input: the good records and, if reading stopped early, why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Records parsed before the end or the error, in input order.
    pub records: Vec<Record>,
    /// The error that stopped reading, if any.
    pub error: Option<ParseError>,
}

/// Streams records from a buffered reader. Yields `Err` once, at the first bad record, and
/// then ends.
#[derive(Debug)]
pub struct RecordReader<R> {
    inner: R,
    format: Format,
    index: usize,
    offset: u64,
    total: Option<u64>,
    line: Vec<u8>,
    done: bool,
}

impl<R: BufRead> RecordReader<R> {
    /// A reader of `format` records.
    pub fn new(inner: R, format: Format) -> Self {
        RecordReader {
            inner,
            format,
            index: 0,
            offset: 0,
            total: None,
            line: Vec::new(),
            done: false,
        }
    }

    /// Declares the input's total length (a file's size), so that a length prefix larger
    /// than the rest of the input is rejected before any reading.
    pub fn with_total_len(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// Records yielded so far.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads everything that is left into a [`ReadOutcome`].
    pub fn read_all(mut self) -> ReadOutcome {
        let mut out = ReadOutcome::default();
        for r in &mut self {
            match r {
                Ok(rec) => out.records.push(rec),
                Err(e) => out.error = Some(e),
            }
        }
        out
    }

    fn err(&mut self, offset: u64, kind: ParseErrorKind) -> Option<Result<Record, ParseError>> {
        self.done = true;
        Some(Err(ParseError {
            index: self.index,
            offset,
            kind,
        }))
    }

    fn next_bin(&mut self) -> Option<Result<Record, ParseError>> {
        let mut len = [0u8; 4];
        let at = self.offset;
        let got = match read_up_to(&mut self.inner, &mut len) {
            Ok(n) => n,
            Err(e) => return self.err(at, io_kind(&e)),
        };
        if got == 0 {
            return None;
        }
        if got < len.len() {
            return self.err(at, truncated(Field::LengthPrefix, 4, got as u64));
        }
        self.offset += 4;
        let msg_len = u64::from(u32::from_le_bytes(len));
        let at = self.offset;
        if let Some(total) = self.total {
            let left = total.saturating_sub(at);
            if msg_len > left {
                return self.err(at, truncated(Field::Message, msg_len, left));
            }
        }
        let mut msg = Vec::with_capacity(msg_len.min(MSG_RESERVE) as usize);
        match (&mut self.inner).take(msg_len).read_to_end(&mut msg) {
            Ok(n) if n as u64 == msg_len => {}
            Ok(n) => return self.err(at, truncated(Field::Message, msg_len, n as u64)),
            Err(e) => return self.err(at, io_kind(&e)),
        }
        self.offset += msg_len;
        let mut sig = vec![0u8; SIG_LEN];
        let mut pk = vec![0u8; PK_LEN];
        for (field, buf) in [(Field::Signature, &mut sig), (Field::PublicKey, &mut pk)] {
            let at = self.offset;
            match read_up_to(&mut self.inner, buf) {
                Ok(n) if n == buf.len() => self.offset += n as u64,
                Ok(n) => return self.err(at, truncated(field, buf.len() as u64, n as u64)),
                Err(e) => return self.err(at, io_kind(&e)),
            }
        }
        self.index += 1;
        Some(Ok(Record { msg, sig, pk }))
    }

    fn next_jsonl(&mut self) -> Option<Result<Record, ParseError>> {
        loop {
            let at = self.offset;
            self.line.clear();
            let limit = MAX_JSONL_LINE + 1;
            let n = match (&mut self.inner)
                .take(limit)
                .read_until(b'\n', &mut self.line)
            {
                Ok(n) => n,
                Err(e) => return self.err(at, io_kind(&e)),
            };
            if n == 0 {
                return None;
            }
            self.offset += n as u64;
            let body = match self.line.last() {
                Some(b'\n') => &self.line[..n - 1],
                _ => &self.line[..],
            };
            if body.len() as u64 > MAX_JSONL_LINE {
                return self.err(
                    at,
                    ParseErrorKind::LineTooLong {
                        limit: MAX_JSONL_LINE,
                    },
                );
            }
            if body.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return match parse_json_line(body) {
                Ok(rec) => {
                    self.index += 1;
                    Some(Ok(rec))
                }
                Err(kind) => self.err(at, kind),
            };
        }
    }
}

impl<R: BufRead> Iterator for RecordReader<R> {
    type Item = Result<Record, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = match self.format {
            Format::Bin => self.next_bin(),
            Format::Jsonl => self.next_jsonl(),
        };
        if item.is_none() {
            self.done = true;
        }
        item
    }
}

fn truncated(field: Field, need: u64, left: u64) -> ParseErrorKind {
    ParseErrorKind::Truncated { field, need, left }
}

fn io_kind(e: &io::Error) -> ParseErrorKind {
    ParseErrorKind::Io {
        kind: e.kind(),
        detail: e.to_string(),
    }
}

/// Fills `buf` as far as the input allows; returns the bytes read (short only at the end).
fn read_up_to<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn parse_json_line(body: &[u8]) -> Result<Record, ParseErrorKind> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| ParseErrorKind::Json(e.to_string()))?;
    let obj = value.as_object().ok_or(ParseErrorKind::NotObject)?;
    let field = |f: Field| -> Result<Vec<u8>, ParseErrorKind> {
        let v = obj
            .get(f.json_key())
            .ok_or(ParseErrorKind::MissingField(f))?;
        let s = v.as_str().ok_or(ParseErrorKind::NotString(f))?;
        hex::decode(s).map_err(|e| ParseErrorKind::BadHex {
            field: f,
            detail: e.to_string(),
        })
    };
    Ok(Record {
        pk: field(Field::PublicKey)?,
        msg: field(Field::Message)?,
        sig: field(Field::Signature)?,
    })
}

/// Reads all records of `format` from `reader`.
pub fn read_all<R: Read>(reader: R, format: Format) -> ReadOutcome {
    RecordReader::new(BufReader::new(reader), format).read_all()
}

/// Reads all records of `format` from the file at `path`. Failing to open or stat the file
/// is the `Err`; everything after that is in the [`ReadOutcome`].
pub fn read_path(path: &Path, format: Format) -> io::Result<ReadOutcome> {
    let file = File::open(path)?;
    let total = file.metadata()?.len();
    let reader = BufReader::with_capacity(256 << 10, file);
    Ok(RecordReader::new(reader, format)
        .with_total_len(total)
        .read_all())
}

/// A record that cannot be written, or a failed write.
#[derive(Debug)]
pub enum WriteError {
    /// Writing failed.
    Io(io::Error),
    /// The binary format needs a 64-byte signature and a 32-byte key.
    BadLength {
        /// Index of the record.
        index: usize,
        /// The field of the wrong length.
        field: Field,
        /// Its length.
        len: usize,
    },
    /// The binary format's length prefix is a `u32`.
    MessageTooLong {
        /// Index of the record.
        index: usize,
        /// The message length.
        len: usize,
    },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Io(e) => write!(f, "write error: {e}"),
            WriteError::BadLength { index, field, len } => write!(
                f,
                "record {index}: {} of {len} bytes cannot be written in the binary format",
                field.name()
            ),
            WriteError::MessageTooLong { index, len } => write!(
                f,
                "record {index}: message of {len} bytes exceeds the binary format's 4 GiB limit"
            ),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}

/// Writes records one at a time in one format.
#[derive(Debug)]
pub struct RecordWriter<W: Write> {
    inner: W,
    format: Format,
    index: usize,
}

impl<W: Write> RecordWriter<W> {
    /// A writer of `format` records (wrap `inner` in a `BufWriter` for files).
    pub fn new(inner: W, format: Format) -> Self {
        RecordWriter {
            inner,
            format,
            index: 0,
        }
    }

    /// Writes one record. A record the format cannot hold is rejected before any byte of
    /// it is written.
    pub fn write(&mut self, r: &Record) -> Result<(), WriteError> {
        let index = self.index;
        match self.format {
            Format::Bin => {
                let len = u32::try_from(r.msg.len()).map_err(|_| WriteError::MessageTooLong {
                    index,
                    len: r.msg.len(),
                })?;
                for (field, v, want) in [
                    (Field::Signature, &r.sig, SIG_LEN),
                    (Field::PublicKey, &r.pk, PK_LEN),
                ] {
                    if v.len() != want {
                        let len = v.len();
                        return Err(WriteError::BadLength { index, field, len });
                    }
                }
                self.inner.write_all(&len.to_le_bytes())?;
                self.inner.write_all(&r.msg)?;
                self.inner.write_all(&r.sig)?;
                self.inner.write_all(&r.pk)?;
            }
            Format::Jsonl => {
                let line = format!(
                    "{{\"pk\":\"{}\",\"msg\":\"{}\",\"sig\":\"{}\"}}\n",
                    hex::encode(&r.pk),
                    hex::encode(&r.msg),
                    hex::encode(&r.sig)
                );
                self.inner.write_all(line.as_bytes())?;
            }
        }
        self.index += 1;
        Ok(())
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> Result<W, WriteError> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

/// Writes all `records` to `w` in `format` and flushes.
pub fn write_all<W: Write>(w: W, format: Format, records: &[Record]) -> Result<(), WriteError> {
    let mut out = RecordWriter::new(w, format);
    for r in records {
        out.write(r)?;
    }
    out.finish().map(|_| ())
}

/// Writes all `records` to a new file at `path` (replacing any file there).
pub fn write_path(path: &Path, format: Format, records: &[Record]) -> Result<(), WriteError> {
    let file = File::create(path)?;
    write_all(BufWriter::with_capacity(256 << 10, file), format, records)
}

#[cfg(test)]
mod tests;

//! The Redis serialization protocol: a bounded, incremental request parser and a reply
//! writer for RESP2 and RESP3.
//!
//! Requests come in two forms (as Redis accepts them):
//! - multibulk: `*<count>\r\n` followed by `count` bulk strings `$<len>\r\n<bytes>\r\n`;
//! - inline: one line of space-separated words (what `telnet` or `redis-cli` piping
//!   sends), with double- and single-quoted words and backslash escapes in double
//!   quotes.
//!
//! [`parse`] looks at the start of a buffer and returns the length of the first
//! complete request, with its arguments as byte ranges into the buffer (no copy, no
//! allocation once the caller's range vector has grown), or `None` when the request is
//! not complete yet. It never reads a bulk payload byte by byte: it checks the header
//! and jumps by the announced length. It starts from the first byte on every call; the
//! server uses [`crate::input::Parser`], which keeps its place between reads and gives
//! the same answers (tested against this function), and adds the limits before AUTH.
//!
//! Limits ([`Limits`]) are checked before anything is reserved: a bulk longer than
//! `max_bulk` (Redis's `proto-max-bulk-len`, 512 MB by default), a multibulk count above
//! `max_multibulk` (1,048,576) or an inline line longer than `max_inline` (64 KiB) is a
//! [`ProtocolError`], after which the connection is closed, as Redis does.

use std::ops::Range;

/// Bounds on what one request may announce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest bulk string (bytes).
    pub max_bulk: usize,
    /// Most arguments in one multibulk request.
    pub max_multibulk: usize,
    /// Longest inline request line (bytes).
    pub max_inline: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bulk: 512 * 1024 * 1024,
            max_multibulk: 1024 * 1024,
            max_inline: 64 * 1024,
        }
    }
}

/// A request the server cannot parse; the connection is answered with the message and
/// closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// The multibulk count is not a number, or is out of range.
    MultibulkLength,
    /// A bulk length is not a number, negative, or above the limit.
    BulkLength,
    /// Something other than `$` where a bulk string must start.
    ExpectedBulk(u8),
    /// A bulk string is not followed by CRLF.
    MissingCrlf,
    /// An inline request line is longer than the limit.
    InlineTooBig,
    /// Before AUTH, a multibulk count above
    /// [`crate::input::UNAUTH_MAX_MULTIBULK`].
    UnauthMultibulkLength,
    /// Before AUTH, a bulk length above [`crate::input::UNAUTH_MAX_BULK`].
    UnauthBulkLength,
    /// An inline request has an unterminated quote.
    UnbalancedQuotes,
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtocolError::MultibulkLength => write!(f, "Protocol error: invalid multibulk length"),
            ProtocolError::BulkLength => write!(f, "Protocol error: invalid bulk length"),
            ProtocolError::ExpectedBulk(b) => {
                write!(
                    f,
                    "Protocol error: expected '$', got '{}'",
                    char::from(*b).escape_default()
                )
            }
            ProtocolError::MissingCrlf => {
                write!(f, "Protocol error: bulk string not followed by CRLF")
            }
            ProtocolError::InlineTooBig => write!(f, "Protocol error: too big inline request"),
            ProtocolError::UnauthMultibulkLength => {
                write!(f, "Protocol error: unauthenticated multibulk length")
            }
            ProtocolError::UnauthBulkLength => {
                write!(f, "Protocol error: unauthenticated bulk length")
            }
            ProtocolError::UnbalancedQuotes => {
                write!(f, "Protocol error: unbalanced quotes in request")
            }
        }
    }
}

impl std::error::Error for ProtocolError {}

/// Position of the first CRLF at or after `from`, looking at no more than `max` bytes.
fn find_crlf(buf: &[u8], from: usize, max: usize) -> Option<usize> {
    let end = buf.len().min(from.saturating_add(max).saturating_add(2));
    buf.get(from..end)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| from + p)
}

/// A decimal integer line `<digits>\r\n` starting at `at` (after the type byte); None
/// when the line is not complete; Err when it is not a number.
pub(crate) fn number(buf: &[u8], at: usize) -> Result<Option<(i64, usize)>, ()> {
    // 20 digits and a sign cover every i64.
    let Some(end) = find_crlf(buf, at, 21) else {
        return if buf.len() - at.min(buf.len()) > 22 {
            Err(())
        } else {
            Ok(None)
        };
    };
    // Digits with an optional '-' (as Redis's string2ll: no '+', no spaces), checked.
    let (neg, digits) = match &buf[at..end] {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    if digits.is_empty() {
        return Err(());
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(());
        }
        let d = i64::from(d - b'0');
        v = v.checked_mul(10).ok_or(())?;
        v = if neg {
            v.checked_sub(d)
        } else {
            v.checked_add(d)
        }
        .ok_or(())?;
    }
    Ok(Some((v, end + 2)))
}

/// Parses the first request in `buf`: `Ok(Some(len))` with `args` holding its
/// arguments as ranges of `buf` when it is complete (`args` may be empty: an empty
/// request is skipped, as Redis does), `Ok(None)` when more input is needed.
pub fn parse(
    buf: &mut [u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    args.clear();
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_multibulk(buf, limits, args),
        Some(_) => parse_inline(buf, limits, args),
    }
}

fn parse_multibulk(
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    let (count, mut at) = match number(buf, 1) {
        Err(()) => return Err(ProtocolError::MultibulkLength),
        Ok(None) => return Ok(None),
        Ok(Some(v)) => v,
    };
    if count <= 0 {
        return Ok(Some(at));
    }
    if count as u64 > limits.max_multibulk as u64 {
        return Err(ProtocolError::MultibulkLength);
    }
    // Reserve only what the bytes already received can hold (4 bytes per argument at
    // least), never what the count announces.
    args.reserve((count as usize).min(buf.len() / 4 + 1));
    for _ in 0..count {
        let Some(&tag) = buf.get(at) else {
            return Ok(None);
        };
        if tag != b'$' {
            return Err(ProtocolError::ExpectedBulk(tag));
        }
        let (len, start) = match number(buf, at + 1) {
            Err(()) => return Err(ProtocolError::BulkLength),
            Ok(None) => return Ok(None),
            Ok(Some(v)) => v,
        };
        if len < 0 || len as u64 > limits.max_bulk as u64 {
            return Err(ProtocolError::BulkLength);
        }
        let end = start + len as usize;
        if buf.len() < end + 2 {
            return Ok(None);
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Err(ProtocolError::MissingCrlf);
        }
        args.push(start..end);
        at = end + 2;
    }
    Ok(Some(at))
}

fn parse_inline(
    buf: &mut [u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    let Some(nl) = buf
        .iter()
        .take(limits.max_inline + 1)
        .position(|&b| b == b'\n')
    else {
        return if buf.len() > limits.max_inline {
            Err(ProtocolError::InlineTooBig)
        } else {
            Ok(None)
        };
    };
    let line_end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    split_args(&mut buf[..line_end], args)?;
    Ok(Some(nl + 1))
}

/// Splits a line into words as Redis does for inline requests and configuration
/// files: words are separated by spaces; a word in double quotes may hold spaces and
/// the escapes `\n \r \t \b \a \\ \" \xHH`; a word in single quotes may hold `\'`.
/// Escapes are resolved in place (the result is never longer than its source), so
/// each word is a range of `line` afterwards. A closing quote must end the word.
pub fn split_args(line: &mut [u8], args: &mut Vec<Range<usize>>) -> Result<(), ProtocolError> {
    let mut i = 0;
    while i < line.len() {
        if line[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        match line[i] {
            q @ (b'"' | b'\'') => {
                let start = i + 1;
                let (mut from, mut to) = (start, start);
                loop {
                    let Some(&c) = line.get(from) else {
                        return Err(ProtocolError::UnbalancedQuotes);
                    };
                    let next = line.get(from + 1).copied();
                    let (byte, used) = match (q, c, next) {
                        (_, c, _) if c == q => break,
                        (b'"', b'\\', Some(b'x')) => {
                            let hex =
                                |k: usize| line.get(k).and_then(|&h| (h as char).to_digit(16));
                            match (hex(from + 2), hex(from + 3)) {
                                (Some(h), Some(l)) => ((h * 16 + l) as u8, 4),
                                _ => (b'x', 2),
                            }
                        }
                        (b'"', b'\\', Some(e)) => (
                            match e {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 8,
                                b'a' => 7,
                                other => other,
                            },
                            2,
                        ),
                        (b'\'', b'\\', Some(b'\'')) => (b'\'', 2),
                        (_, c, _) => (c, 1),
                    };
                    line[to] = byte;
                    to += 1;
                    from += used;
                }
                args.push(start..to);
                i = from + 1;
                if i < line.len() && !line[i].is_ascii_whitespace() {
                    return Err(ProtocolError::UnbalancedQuotes);
                }
            }
            _ => {
                let start = i;
                while i < line.len() && !line[i].is_ascii_whitespace() {
                    i += 1;
                }
                args.push(start..i);
            }
        }
    }
    Ok(())
}

/// Which reply encoding a connection speaks (RESP3 after `HELLO 3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Proto {
    /// RESP2 (the default).
    #[default]
    Resp2,
    /// RESP3.
    Resp3,
}

/// Appends replies to an output buffer.
#[derive(Debug)]
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
    proto: Proto,
}

impl<'a> Writer<'a> {
    /// A writer appending to `out` in the encoding `proto`.
    pub fn new(out: &'a mut Vec<u8>, proto: Proto) -> Writer<'a> {
        Writer { out, proto }
    }

    fn line(&mut self, tag: u8, body: &[u8]) {
        self.out.push(tag);
        self.out.extend_from_slice(body);
        self.out.extend_from_slice(b"\r\n");
    }

    fn int_line(&mut self, tag: u8, v: i64) {
        let mut b = itoa_buf();
        let s = fmt_i64(v, &mut b);
        self.line(tag, s);
    }

    /// `+OK`-style status.
    pub fn simple(&mut self, s: &str) {
        self.line(b'+', s.as_bytes());
    }

    /// An error (`-ERR ...`, `-WRONGTYPE ...`): `msg` includes its prefix word.
    pub fn error(&mut self, msg: &str) {
        // CR and LF would end the line early.
        let clean: Vec<u8> = msg
            .bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b })
            .collect();
        self.line(b'-', &clean);
    }

    /// An integer.
    pub fn int(&mut self, v: i64) {
        self.int_line(b':', v);
    }

    /// A bulk string.
    pub fn bulk(&mut self, v: &[u8]) {
        self.int_line(b'$', v.len() as i64);
        self.out.extend_from_slice(v);
        self.out.extend_from_slice(b"\r\n");
    }

    /// The null value (`$-1` in RESP2, `_` in RESP3).
    pub fn null(&mut self) {
        match self.proto {
            Proto::Resp2 => self.out.extend_from_slice(b"$-1\r\n"),
            Proto::Resp3 => self.out.extend_from_slice(b"_\r\n"),
        }
    }

    /// The null array (`*-1` in RESP2, `_` in RESP3).
    pub fn null_array(&mut self) {
        match self.proto {
            Proto::Resp2 => self.out.extend_from_slice(b"*-1\r\n"),
            Proto::Resp3 => self.out.extend_from_slice(b"_\r\n"),
        }
    }

    /// An array header of `n` elements (the elements follow).
    pub fn array(&mut self, n: usize) {
        self.int_line(b'*', n as i64);
    }

    /// A map header of `n` pairs (RESP3 `%`; RESP2 an array of 2n elements).
    pub fn map(&mut self, n: usize) {
        match self.proto {
            Proto::Resp2 => self.int_line(b'*', 2 * n as i64),
            Proto::Resp3 => self.int_line(b'%', n as i64),
        }
    }

    /// A set header of `n` elements (RESP3 `~`; RESP2 an array).
    pub fn set(&mut self, n: usize) {
        match self.proto {
            Proto::Resp2 => self.int_line(b'*', n as i64),
            Proto::Resp3 => self.int_line(b'~', n as i64),
        }
    }

    /// The encoding this writer uses.
    pub fn proto(&self) -> Proto {
        self.proto
    }

    /// Bytes written to the output so far (where a reply starts, to take it back).
    pub fn position(&self) -> usize {
        self.out.len()
    }

    /// The byte at `pos` of the output, if written (the type of a reply started there).
    pub fn byte_at(&self, pos: usize) -> Option<u8> {
        self.out.get(pos).copied()
    }

    /// The code of the error reply written at `pos` (its first word), if that reply is
    /// an error.
    pub fn error_code(&self, pos: usize) -> Option<&[u8]> {
        let rest = self.out.get(pos..)?.strip_prefix(b"-")?;
        let end = rest
            .iter()
            .take(64)
            .position(|&b| b == b' ' || b == b'\r')
            .unwrap_or(rest.len().min(64));
        Some(&rest[..end])
    }

    /// Drops what was written after `pos` (a reply taken back).
    pub fn truncate(&mut self, pos: usize) {
        self.out.truncate(pos);
    }

    /// Bytes already encoded (a reply built with another writer).
    pub fn raw(&mut self, v: &[u8]) {
        self.out.extend_from_slice(v);
    }

    /// A verbatim text (RESP3 `=` with the `txt` format; a bulk string in RESP2).
    pub fn verbatim(&mut self, v: &[u8]) {
        match self.proto {
            Proto::Resp2 => self.bulk(v),
            Proto::Resp3 => {
                self.int_line(b'=', v.len() as i64 + 4);
                self.out.extend_from_slice(b"txt:");
                self.out.extend_from_slice(v);
                self.out.extend_from_slice(b"\r\n");
            }
        }
    }
}

fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

/// Decimal digits of `v` in `buf` (no allocation).
fn fmt_i64(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Appends one request in RESP (an array of bulk strings) to `out`: what MIGRATE sends
/// another server and a Redis-protocol replica's stream carries.
pub fn request(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parsed = Option<(Vec<Vec<u8>>, usize)>;

    fn words(buf: &[u8]) -> Result<Parsed, ProtocolError> {
        let mut args = Vec::new();
        let mut buf = buf.to_vec();
        let buf = &mut buf[..];
        Ok(parse(buf, &Limits::default(), &mut args)?
            .map(|n| (args.iter().map(|r| buf[r.clone()].to_vec()).collect(), n)))
    }

    #[test]
    fn multibulk_requests_parse_and_split_anywhere() {
        let req = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nv\r\nx!\r\n";
        let (w, n) = words(req)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_default();
        assert_eq!(n, req.len());
        assert_eq!(w, vec![b"SET".to_vec(), b"k".to_vec(), b"v\r\nx!".to_vec()]);
        for cut in 0..req.len() {
            assert_eq!(words(&req[..cut]), Ok(None), "cut at {cut}");
        }
        // Two requests back to back: the first one's length.
        let mut two = req.to_vec();
        two.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        assert_eq!(words(&two).map(|o| o.map(|(_, n)| n)), Ok(Some(req.len())));
    }

    #[test]
    fn inline_requests_parse() {
        let (w, n) = words(b"set  k \"a b\\\"c\" 'x y'\r\nrest")
            .unwrap_or_default()
            .unwrap_or_default();
        assert_eq!(n, 23);
        assert_eq!(w[0], b"set");
        assert_eq!(w[2], b"a b\"c");
        assert_eq!(w[3], b"x y");
        // Redis's escapes: in double quotes \n \r \t \b \a \\ \" \xHH; in single
        // quotes only \'. An escape that is not one keeps the character.
        let (w, _) = words(b"SET \"\\x41\\x7a\\n\\t\\\\\\q\\xZZ\" 'it\\'s \\n'\n")
            .unwrap_or_default()
            .unwrap_or_default();
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(w[1], b"Az\n\t\\qxZZ");
        assert_eq!(w[2], b"it's \\n");
        assert_eq!(
            words(b"get \"a\"b\r\n"),
            Err(ProtocolError::UnbalancedQuotes)
        );
        assert_eq!(
            words(b"get \"a\\\"\r\n"),
            Err(ProtocolError::UnbalancedQuotes)
        );
        assert_eq!(words(b"PING"), Ok(None));
        assert_eq!(words(b"\r\n").map(|o| o.map(|(w, _)| w.len())), Ok(Some(0)));
        assert_eq!(words(b"get \"k\r\n"), Err(ProtocolError::UnbalancedQuotes));
    }

    #[test]
    fn bad_and_huge_headers_are_errors() {
        assert_eq!(words(b"*x\r\n"), Err(ProtocolError::MultibulkLength));
        for bad in [
            &b"*+1\r\n"[..],
            b"*\r\n",
            b"*-\r\n",
            b"*1 \r\n",
            b"*1\r\n$+1\r\n",
        ] {
            assert!(words(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            words(b"*1\r\n$-0\r\n"),
            Ok(None),
            "-0 is zero: an empty bulk"
        );
        assert_eq!(words(b"*2000000\r\n"), Err(ProtocolError::MultibulkLength));
        assert_eq!(
            words(b"*99999999999999999999999\r\n"),
            Err(ProtocolError::MultibulkLength)
        );
        assert_eq!(words(b"*1\r\n$-3\r\n"), Err(ProtocolError::BulkLength));
        assert_eq!(
            words(b"*1\r\n$600000000\r\n"),
            Err(ProtocolError::BulkLength)
        );
        assert_eq!(
            words(b"*1\r\n:3\r\n"),
            Err(ProtocolError::ExpectedBulk(b':'))
        );
        assert_eq!(
            words(b"*1\r\n$1\r\nab\r\n"),
            Err(ProtocolError::MissingCrlf)
        );
        assert_eq!(words(&vec![b'a'; 70_000]), Err(ProtocolError::InlineTooBig));
        // A count with no terminator keeps waiting only while it could still be one.
        assert_eq!(words(b"*12"), Ok(None));
        assert_eq!(words(&[b'*'; 40]), Err(ProtocolError::MultibulkLength));
        // Empty and negative multibulk requests are skipped.
        assert_eq!(
            words(b"*0\r\n").map(|o| o.map(|(w, n)| (w.len(), n))),
            Ok(Some((0, 4)))
        );
        assert_eq!(
            words(b"*-1\r\n").map(|o| o.map(|(w, n)| (w.len(), n))),
            Ok(Some((0, 5)))
        );
    }

    #[test]
    fn replies_encode_in_both_protocols() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, Proto::Resp2);
        w.simple("OK");
        w.int(-42);
        w.bulk(b"hi");
        w.null();
        w.map(1);
        w.error("ERR bad\r\nthing");
        assert_eq!(
            out,
            b"+OK\r\n:-42\r\n$2\r\nhi\r\n$-1\r\n*2\r\n-ERR bad  thing\r\n"
        );
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, Proto::Resp3);
        w.null();
        w.map(2);
        w.verbatim(b"ab");
        assert_eq!(out, b"_\r\n%2\r\n=6\r\ntxt:ab\r\n");
        let mut b = itoa_buf();
        assert_eq!(fmt_i64(i64::MIN, &mut b), b"-9223372036854775808");
    }
}

//! A connection's input: the bytes received and not yet run, and the parse state of the
//! request at their front, so that each read costs only the bytes it brings.
//!
//! [`Parser`] parses one request at a time and keeps where it got to between calls:
//! the multibulk count still to come, the arguments complete so far (as ranges from
//! the request's start), the offset reached, and the length of a bulk whose header
//! was read but whose payload has not all arrived. A call looks only at bytes it has
//! not looked at before, except a header line cut by the end of the input (at most 24
//! bytes, read again when the rest comes) and an inline line, split into words once
//! its newline arrives; a bulk payload is never looked at, only jumped over.
//! [`Parser::examined`] counts the bytes looked at, and the tests hold it to twice the
//! bytes fed plus 24 per call (a multibulk request: once the bytes fed plus 24 per call). Its answers, limits and errors are exactly those
//! of [`crate::resp::parse`] on the whole input (a property test feeds requests split
//! at arbitrary points).
//!
//! Before AUTH (a password is set and the connection has not authenticated), a
//! multibulk request may hold at most [`UNAUTH_MAX_MULTIBULK`] arguments and each bulk
//! at most [`UNAUTH_MAX_BULK`] bytes, as Redis does since its fix for CVE-2021-32675:
//! the header that announces more is an error as soon as it is seen, before its
//! payload is buffered. The check is per request, with the authentication state as it
//! is when the request's header is parsed (after the previous request ran).
//!
//! [`Input`] holds the bytes in one buffer that is only ever zero-filled once per byte
//! of its length, and reads go straight into it (no bounce buffer). Once the header of
//! a bulk of at least [`BIG_BULK`] bytes is seen, the buffer is sized at once to hold
//! the rest of the request (no growth by repeated doubling copies) and the next read
//! asks for exactly the rest of the bulk. Otherwise a read asks for [`READ_SIZE`]
//! bytes, never past `client-query-buffer-limit` by more than one byte. Consumed
//! requests are dropped by moving the unfinished one to the front once per batch. The
//! buffer is kept between batches (freeing and growing it again for every pipelined
//! batch left the allocator a trail of freed blocks, resident until it decays: 64 KiB
//! values churned to 2.8x maxmemory); the server frees it once the connection has been
//! idle for a second ([`Input::shrink_idle`]).

use std::io;
use std::ops::Range;

use crate::resp::{number, split_args, Limits, ProtocolError};

/// Most arguments of a multibulk request before AUTH.
pub const UNAUTH_MAX_MULTIBULK: usize = 10;
/// Longest bulk of a request before AUTH (bytes).
pub const UNAUTH_MAX_BULK: usize = 16 * 1024;
/// A bulk at least this long is read straight to its size.
pub const BIG_BULK: usize = 32 * 1024;
/// Bytes asked of one read otherwise.
pub const READ_SIZE: usize = 16 * 1024;

/// Longest header line looked at again when the input ends inside it: the type byte
/// is counted apart; `number` reads up to 21 digits and the CRLF.
const HEADER_RESCAN: u64 = 23;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Mode {
    /// Nothing of the request looked at yet.
    #[default]
    Start,
    /// An inline request; `scanned` bytes hold no newline.
    Inline,
    /// A multibulk request: `left` arguments to come from offset `pos`.
    Multibulk,
    /// The request is complete and `pos` bytes long.
    Done,
}

/// The parse state of one request (see the module note).
#[derive(Debug, Default)]
pub struct Parser {
    mode: Mode,
    /// Inline: bytes known to hold no newline.
    scanned: usize,
    /// Multibulk: arguments still to come.
    left: usize,
    /// Multibulk: offset of the next header, or of the payload of `bulk`; Done: the
    /// request's length.
    pos: usize,
    /// Multibulk: the length of the bulk whose header was read (its payload starts at
    /// `pos`).
    bulk: Option<usize>,
    /// The request's arguments, as ranges from its start.
    args: Vec<Range<usize>>,
    /// Bytes looked at, over the parser's life.
    examined: u64,
}

impl Parser {
    /// Parses on from where the last call stopped. `buf` starts at the request's first
    /// byte and holds what the last call saw, maybe with more appended. `Ok(Some(len))`
    /// when the request is complete (its arguments in [`Parser::args`]; none for an
    /// empty request, which is skipped), until [`Parser::next`]; `Ok(None)` when more
    /// input is needed. `authed` false applies the limits before AUTH.
    pub fn advance(
        &mut self,
        buf: &mut [u8],
        limits: &Limits,
        authed: bool,
    ) -> Result<Option<usize>, ProtocolError> {
        match self.mode {
            Mode::Done => return Ok(Some(self.pos)),
            Mode::Start => match buf.first() {
                None => return Ok(None),
                Some(b'*') => {
                    let Some((count, at)) = self.number(buf, 1, ProtocolError::MultibulkLength)?
                    else {
                        return Ok(None);
                    };
                    if count <= 0 {
                        return Ok(Some(self.done(at)));
                    }
                    if count as u64 > limits.max_multibulk as u64 {
                        return Err(ProtocolError::MultibulkLength);
                    }
                    if !authed && count as u64 > UNAUTH_MAX_MULTIBULK as u64 {
                        return Err(ProtocolError::UnauthMultibulkLength);
                    }
                    self.mode = Mode::Multibulk;
                    self.left = count as usize;
                    self.pos = at;
                    self.bulk = None;
                }
                Some(_) => {
                    self.mode = Mode::Inline;
                    self.scanned = 0;
                }
            },
            Mode::Inline | Mode::Multibulk => {}
        }
        if self.mode == Mode::Inline {
            return self.inline(buf, limits);
        }
        while self.left > 0 {
            let len = match self.bulk {
                Some(len) => len,
                None => {
                    let Some(&tag) = buf.get(self.pos) else {
                        return Ok(None);
                    };
                    if tag != b'$' {
                        return Err(ProtocolError::ExpectedBulk(tag));
                    }
                    let Some((len, start)) =
                        self.number(buf, self.pos + 1, ProtocolError::BulkLength)?
                    else {
                        return Ok(None);
                    };
                    if len < 0 || len as u64 > limits.max_bulk as u64 {
                        return Err(ProtocolError::BulkLength);
                    }
                    if !authed && len as u64 > UNAUTH_MAX_BULK as u64 {
                        return Err(ProtocolError::UnauthBulkLength);
                    }
                    self.pos = start;
                    self.bulk = Some(len as usize);
                    len as usize
                }
            };
            let end = self.pos + len;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            self.examined += 2;
            if &buf[end..end + 2] != b"\r\n" {
                return Err(ProtocolError::MissingCrlf);
            }
            self.args.push(self.pos..end);
            self.pos = end + 2;
            self.bulk = None;
            self.left -= 1;
        }
        Ok(Some(self.done(self.pos)))
    }

    /// A number line at `at` (the `*` or `$` before it counted too), with the bytes
    /// looked at counted.
    fn number(
        &mut self,
        buf: &[u8],
        at: usize,
        bad: ProtocolError,
    ) -> Result<Option<(i64, usize)>, ProtocolError> {
        let seen = buf.len().saturating_sub(at).min(HEADER_RESCAN as usize) as u64;
        match number(buf, at) {
            Err(()) => Err(bad),
            Ok(None) => {
                self.examined += 1 + seen;
                Ok(None)
            }
            Ok(Some((v, next))) => {
                self.examined += 1 + (next - at) as u64;
                Ok(Some((v, next)))
            }
        }
    }

    fn inline(&mut self, buf: &mut [u8], limits: &Limits) -> Result<Option<usize>, ProtocolError> {
        let window = buf.len().min(limits.max_inline.saturating_add(1));
        let from = self.scanned.min(window);
        let found = buf[from..window].iter().position(|&b| b == b'\n');
        self.examined += match found {
            Some(p) => p + 1,
            None => window - from,
        } as u64;
        let Some(p) = found else {
            self.scanned = window;
            return if buf.len() > limits.max_inline {
                Err(ProtocolError::InlineTooBig)
            } else {
                Ok(None)
            };
        };
        let nl = from + p;
        let line_end = if nl > 0 && buf[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        self.args.clear();
        self.examined += line_end as u64;
        split_args(&mut buf[..line_end], &mut self.args)?;
        Ok(Some(self.done(nl + 1)))
    }

    fn done(&mut self, len: usize) -> usize {
        self.mode = Mode::Done;
        self.pos = len;
        len
    }

    /// The arguments of the complete request, as ranges from its start.
    pub fn args(&self) -> &[Range<usize>] {
        &self.args
    }

    /// The request is complete.
    pub fn is_done(&self) -> bool {
        self.mode == Mode::Done
    }

    /// Forgets the request (complete or not): the next call starts a new one.
    pub fn next(&mut self) {
        self.mode = Mode::Start;
        self.args.clear();
        self.bulk = None;
        self.left = 0;
        self.pos = 0;
        self.scanned = 0;
    }

    /// Bytes looked at so far (payloads jumped over are not).
    pub fn examined(&self) -> u64 {
        self.examined
    }

    /// While a bulk of at least [`BIG_BULK`] bytes is being received: the length from
    /// the request's start through the bulk's CRLF.
    pub fn big_bulk_end(&self) -> Option<usize> {
        match (self.mode, self.bulk) {
            (Mode::Multibulk, Some(len)) if len >= BIG_BULK => Some(self.pos + len + 2),
            _ => None,
        }
    }

    /// Frees a large argument list (after a request of many arguments).
    fn shrink(&mut self) {
        if self.args.capacity() > 1024 {
            self.args = Vec::new();
        }
    }
}

/// A connection's input buffer and the parse state of its first request (see the module
/// note).
#[derive(Debug, Default)]
pub struct Input {
    /// Zero-filled once; the data is `buf[..filled]`.
    buf: Vec<u8>,
    filled: usize,
    /// The first request not yet run starts here.
    start: usize,
    parser: Parser,
}

/// What one [`Input::read_from`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// The peer finished sending.
    End,
    /// Bytes arrived.
    Bytes {
        /// How many.
        got: usize,
        /// How many the read had room for (fewer arrived: the source is drained).
        asked: usize,
    },
    /// More than `limit` bytes would be waiting: nothing was kept.
    OverLimit,
}

impl Input {
    /// Bytes received and not yet run.
    pub fn pending(&self) -> usize {
        self.filled - self.start
    }

    /// Reads once from `src` into the buffer, keeping at most `limit` pending bytes
    /// (`client-query-buffer-limit`).
    pub fn read_from(&mut self, src: &mut impl io::Read, limit: usize) -> io::Result<Received> {
        let pending = self.pending();
        let mut want = match self.parser.big_bulk_end() {
            Some(end) => end.saturating_sub(pending).max(1),
            None => READ_SIZE,
        };
        // One byte past the limit is enough to know it was passed.
        want = want.min(limit.saturating_sub(pending).saturating_add(1));
        let need = self.filled + want;
        if self.buf.len() < need {
            // A big bulk: room for the rest of its request at once (a single huge
            // bulk costs one allocation of its size), but at least double the room
            // (a pipeline of many big bulks grows the buffer a few times, not once per
            // bulk, which would copy it over and over and leave the allocator a trail
            // of freed blocks).
            if self.parser.big_bulk_end().is_some() && need > self.buf.capacity() {
                let room = need.max(2 * self.buf.capacity());
                self.buf.reserve_exact(room - self.buf.len());
            }
            self.buf.resize(need, 0);
        }
        let got = src.read(&mut self.buf[self.filled..need])?;
        if got == 0 {
            return Ok(Received::End);
        }
        if pending + got > limit {
            self.clear();
            return Ok(Received::OverLimit);
        }
        self.filled += got;
        Ok(Received::Bytes { got, asked: want })
    }

    /// Appends bytes (for tests and callers without a socket).
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.truncate(self.filled);
        self.buf.extend_from_slice(bytes);
        self.filled = self.buf.len();
    }

    /// Parses the first request not yet run on from where it stopped (see
    /// [`Parser::advance`]).
    pub fn parse(&mut self, limits: &Limits, authed: bool) -> Result<Option<usize>, ProtocolError> {
        self.parser
            .advance(&mut self.buf[self.start..self.filled], limits, authed)
    }

    /// The first request has been parsed whole and not yet consumed.
    pub fn ready(&self) -> bool {
        self.parser.is_done()
    }

    /// The complete first request: its bytes and its arguments as ranges of them.
    pub fn request(&self) -> (&[u8], &[Range<usize>]) {
        let len = if self.parser.is_done() {
            self.parser.pos
        } else {
            0
        };
        (&self.buf[self.start..self.start + len], self.parser.args())
    }

    /// Drops the complete first request (it ran).
    pub fn consume(&mut self) {
        if self.parser.is_done() {
            self.start += self.parser.pos;
            self.parser.next();
        }
    }

    /// Moves the unfinished request to the front of the buffer. Called once per batch.
    pub fn compact(&mut self) {
        if self.start == self.filled {
            self.start = 0;
            self.filled = 0;
        } else if self.start > 0 {
            self.buf.copy_within(self.start..self.filled, 0);
            self.filled -= self.start;
            self.start = 0;
        }
    }

    /// Drops everything received and the parse state.
    pub fn clear(&mut self) {
        self.start = 0;
        self.filled = 0;
        self.parser.next();
    }

    /// The parser (for its counters).
    pub fn parser(&self) -> &Parser {
        &self.parser
    }

    /// Frees the buffer when nothing is pending, it is over `keep` bytes and `peak`
    /// (the most bytes pending lately) is under half of it: the server's once-a-second
    /// pass, so a connection that once sent a big request keeps nothing of it.
    pub fn shrink_idle(&mut self, keep: usize, peak: usize) {
        if self.pending() == 0 && self.buf.len() > keep && peak < self.buf.len() / 2 {
            self.start = 0;
            self.filled = 0;
            self.buf = Vec::new();
            self.parser.shrink();
        }
    }

    /// Bytes the buffer holds room for.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(input: &mut Input, bytes: &[u8], authed: bool) -> Result<Option<usize>, ProtocolError> {
        input.extend(bytes);
        input.parse(&Limits::default(), authed)
    }

    #[test]
    fn a_million_arguments_fed_a_few_bytes_at_a_time_cost_linear_work() {
        const N: usize = 1_000_000;
        let mut req = format!("*{N}\r\n").into_bytes();
        for i in 0..N {
            req.extend_from_slice(format!("$1\r\n{}\r\n", i % 10).as_bytes());
        }
        let mut input = Input::default();
        let (mut at, mut calls, mut step) = (0, 0u64, 0);
        let mut result = Ok(None);
        while at < req.len() {
            // Pieces of 1 to 5 bytes, so headers are cut at every place.
            step = step % 5 + 1;
            let to = (at + step).min(req.len());
            let before = input.parser().examined();
            result = fed(&mut input, &req[at..to], true);
            let cost = input.parser().examined() - before;
            assert!(
                cost <= (to - at) as u64 + 24,
                "{cost} bytes looked at for {} new ones, at {at}",
                to - at
            );
            at = to;
            calls += 1;
        }
        assert_eq!(result, Ok(Some(req.len())));
        assert!(input.parser().examined() <= req.len() as u64 + 24 * calls);
        let (bytes, args) = input.request();
        assert_eq!(args.len(), N);
        assert!(args
            .iter()
            .enumerate()
            .all(|(i, r)| bytes[r.clone()] == [b'0' + (i % 10) as u8]));
    }

    #[test]
    fn an_inline_line_fed_byte_by_byte_is_scanned_once() {
        let line = [&b"SET k "[..], &[b'v'; 60_000], b"\r\n"].concat();
        let mut input = Input::default();
        let mut result = Ok(None);
        for b in line.chunks(1) {
            result = fed(&mut input, b, true);
        }
        assert_eq!(result, Ok(Some(line.len())));
        assert_eq!(input.request().1.len(), 3);
        // Once for the newline, once more to split the words.
        assert!(input.parser().examined() <= 2 * line.len() as u64);
    }

    #[test]
    fn before_auth_large_headers_fail_on_the_header_alone() {
        let cases: [(&[u8], Option<ProtocolError>); 6] = [
            (b"*11\r\n", Some(ProtocolError::UnauthMultibulkLength)),
            (b"*10\r\n", None),
            (b"*1\r\n$16385\r\n", Some(ProtocolError::UnauthBulkLength)),
            (b"*1\r\n$16384\r\n", None),
            (
                b"*1\r\n$200000000\r\n",
                Some(ProtocolError::UnauthBulkLength),
            ),
            // The limits that apply to everyone come first.
            (b"*1\r\n$999999999999\r\n", Some(ProtocolError::BulkLength)),
        ];
        for (header, err) in cases {
            let mut input = Input::default();
            assert_eq!(
                fed(&mut input, header, false),
                err.clone().map_or(Ok(None), Err)
            );
            // Once authenticated, the same headers only wait for their payload
            // (the general limits still apply).
            let mut input = Input::default();
            let general = fed(&mut input, header, true);
            assert!(
                general == Ok(None) || general == Err(ProtocolError::BulkLength),
                "{header:?}: {general:?}"
            );
        }
        assert_eq!(
            ProtocolError::UnauthBulkLength.to_string(),
            "Protocol error: unauthenticated bulk length"
        );
        assert_eq!(
            ProtocolError::UnauthMultibulkLength.to_string(),
            "Protocol error: unauthenticated multibulk length"
        );
    }

    #[test]
    fn a_big_bulk_is_read_straight_to_its_size() {
        let payload = vec![7u8; 10 * BIG_BULK];
        let head = format!("*2\r\n$3\r\nSET\r\n${}\r\n", payload.len()).into_bytes();
        let whole = [&head[..], &payload, b"\r\n"].concat();
        let mut src = &whole[..];
        let mut input = Input::default();
        let first = input
            .read_from(&mut src, usize::MAX)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            first,
            Received::Bytes {
                got: READ_SIZE,
                asked: READ_SIZE
            }
        );
        assert_eq!(input.parse(&Limits::default(), true), Ok(None));
        // The rest of the bulk in one read, into a buffer sized once to the request.
        let second = input
            .read_from(&mut src, usize::MAX)
            .unwrap_or_else(|e| panic!("{e}"));
        let rest = whole.len() - READ_SIZE;
        assert_eq!(
            second,
            Received::Bytes {
                got: rest,
                asked: rest
            }
        );
        assert_eq!(input.capacity(), whole.len());
        assert_eq!(input.parse(&Limits::default(), true), Ok(Some(whole.len())));
        assert_eq!(input.request().1.len(), 2);
        input.consume();
        input.compact();
        assert_eq!(input.capacity(), whole.len(), "kept for the next batch");
        // Once idle (the most pending since the last pass under half of it): freed.
        input.shrink_idle(16 * 1024, whole.len());
        assert_eq!(input.capacity(), whole.len(), "still in use lately");
        input.shrink_idle(16 * 1024, 0);
        assert_eq!(input.capacity(), 0, "a large buffer left empty is freed");
    }

    #[test]
    fn reads_stop_one_byte_past_the_query_buffer_limit() {
        let data = [b'a'; 100];
        let mut src = &data[..];
        let mut input = Input::default();
        let read = |input: &mut Input, src: &mut &[u8]| {
            input.read_from(src, 10).unwrap_or_else(|e| panic!("{e}"))
        };
        assert_eq!(read(&mut input, &mut src), Received::OverLimit);
        assert_eq!(src.len(), 89, "one byte past the limit was asked for");
        assert_eq!(input.pending(), 0, "nothing kept");
        let mut src = &data[..10];
        assert_eq!(
            read(&mut input, &mut src),
            Received::Bytes { got: 10, asked: 11 }
        );
    }
}

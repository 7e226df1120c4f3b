//! The wire side of a load run: the requests (RESP and memcached text), the reply each
//! one must get, framing of replies as bytes arrive (whole replies only, whatever their
//! content; a reply over [`MAX_REPLY`] bytes or nested too deep is an error), and
//! connecting (with `AUTH` where a password is given).

use std::io::{self, Read, Write};
use std::net::SocketAddr;

use mio::net::TcpStream;

use crate::{Protocol, IO_TIMEOUT, MAX_REPLY};

/// The 16 bytes of the key of index `i`.
pub(crate) fn key_bytes(i: u64) -> [u8; 16] {
    let mut key = *b"key:000000000000";
    let mut n = i % 1_000_000_000_000;
    for d in key[4..].iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    key
}

/// Appends the 16-byte key of index `i`.
fn push_key(out: &mut Vec<u8>, i: u64) {
    out.extend_from_slice(&key_bytes(i));
}

/// The 16-byte key of index `i`.
pub fn key_of(i: u64) -> String {
    let mut key = Vec::with_capacity(16);
    push_key(&mut key, i);
    key.into_iter().map(char::from).collect()
}

/// Appends the value of key `i`: `i` in hex and a dot, repeated to `value_size` bytes.
fn push_value(out: &mut Vec<u8>, i: u64, value_size: usize) {
    let mut pattern = [0u8; 17];
    let digits = ((u64::BITS - i.leading_zeros()).div_ceil(4) as usize).max(1);
    for (j, d) in pattern[..digits].iter_mut().enumerate() {
        *d = b"0123456789abcdef"[((i >> (4 * (digits - 1 - j))) & 15) as usize];
    }
    pattern[digits] = b'.';
    let pattern = &pattern[..=digits];
    let mut left = value_size;
    while left >= pattern.len() {
        out.extend_from_slice(pattern);
        left -= pattern.len();
    }
    out.extend_from_slice(&pattern[..left]);
}

/// The value every SET of key `i` writes: `value_size` bytes derived from `i` (with a
/// [`ValueSize`](crate::ValueSize) `sizes`, `value_of(i, sizes.of(i))`).
pub fn value_of(i: u64, value_size: usize) -> Vec<u8> {
    let mut value = Vec::with_capacity(value_size);
    push_value(&mut value, i, value_size);
    value
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Appends the request for key `k` (a GET, or a SET of its value) to `out`.
pub(crate) fn push_request(
    protocol: Protocol,
    out: &mut Vec<u8>,
    k: u64,
    get: bool,
    value_size: usize,
) {
    match (protocol, get) {
        (Protocol::Resp, true) => {
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$16\r\n");
            push_key(out, k);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Resp, false) => {
            out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$16\r\n");
            push_key(out, k);
            out.extend_from_slice(b"\r\n$");
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Memcache, true) => {
            out.extend_from_slice(b"get ");
            push_key(out, k);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Memcache, false) => {
            out.extend_from_slice(b"set ");
            push_key(out, k);
            out.extend_from_slice(b" 0 0 ");
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends the exact reply expected to the request of [`push_request`].
pub(crate) fn push_reply(
    protocol: Protocol,
    out: &mut Vec<u8>,
    k: u64,
    get: bool,
    value_size: usize,
) {
    match (protocol, get) {
        (Protocol::Resp, true) => {
            out.push(b'$');
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Resp, false) => out.extend_from_slice(b"+OK\r\n"),
        (Protocol::Memcache, true) => {
            out.extend_from_slice(b"VALUE ");
            push_key(out, k);
            out.extend_from_slice(b" 0 ");
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\nEND\r\n");
        }
        (Protocol::Memcache, false) => out.extend_from_slice(b"STORED\r\n"),
    }
}

pub(crate) fn bad_reply(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("reply: {what}"))
}

pub(crate) fn closed_by_server() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the server closed the connection",
    )
}

/// The end (just past its `\n`) of the line that starts at `at`; `None` while it is
/// incomplete.
fn line_end(buf: &[u8], at: usize) -> io::Result<Option<usize>> {
    match buf[at..].iter().position(|&b| b == b'\n') {
        Some(i) if i < MAX_REPLY => Ok(Some(at + i + 1)),
        None if buf.len() - at < MAX_REPLY => Ok(None),
        _ => Err(bad_reply("a line longer than 64 MiB")),
    }
}

/// The end of a block of `n` bytes (and its `\r\n`) that starts at `at`; `None` while it
/// is incomplete.
fn block_end(buf: &[u8], at: usize, n: usize) -> io::Result<Option<usize>> {
    if n > MAX_REPLY {
        return Err(bad_reply("longer than 64 MiB"));
    }
    let end = at + n + 2;
    Ok((buf.len() >= end).then_some(end))
}

/// The number in a line such as `$12\r\n` (after its type byte).
fn line_number(line: &[u8]) -> io::Result<i64> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|t| t.trim_end().parse().ok())
        .ok_or_else(|| bad_reply("a malformed length"))
}

/// The length of the whole reply at the start of `buf`, delimited by the protocol's
/// framing only (its content is compared afterwards); `None` while it is incomplete.
pub(crate) fn frame(protocol: Protocol, buf: &[u8]) -> io::Result<Option<usize>> {
    match protocol {
        Protocol::Resp => frame_resp(buf, 0, 0),
        Protocol::Memcache => frame_memcache(buf),
    }
}

/// The end of the RESP value that starts at `at`.
fn frame_resp(buf: &[u8], at: usize, depth: usize) -> io::Result<Option<usize>> {
    if depth > 16 {
        return Err(bad_reply("nested too deep"));
    }
    let Some(end) = line_end(buf, at)? else {
        return Ok(None);
    };
    let (&kind, rest) = buf[at..end]
        .split_first()
        .ok_or_else(|| bad_reply("empty"))?;
    match kind {
        // Bulk string, blob error, verbatim string: a length, then that many bytes.
        b'$' | b'!' | b'=' => match line_number(rest)? {
            n if n >= 0 => block_end(buf, end, n as usize),
            _ => Ok(Some(end)),
        },
        // Array, set, push; map and attribute (pairs).
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = line_number(rest)?;
            let per = if matches!(kind, b'%' | b'|') { 2 } else { 1 };
            let mut pos = end;
            for _ in 0..n.max(0).saturating_mul(per) {
                match frame_resp(buf, pos, depth + 1)? {
                    Some(e) => pos = e,
                    None => return Ok(None),
                }
            }
            Ok(Some(pos))
        }
        // Everything else is one line.
        _ => Ok(Some(end)),
    }
}

fn frame_memcache(buf: &[u8]) -> io::Result<Option<usize>> {
    let mut pos = 0;
    loop {
        let Some(end) = line_end(buf, pos)? else {
            return Ok(None);
        };
        let Some(rest) = buf[pos..end].strip_prefix(b"VALUE ") else {
            // END, STORED, ERROR, CLIENT_ERROR ..., SERVER_ERROR ...: one line.
            return Ok(Some(end));
        };
        // VALUE <key> <flags> <bytes> [<cas unique>], then the data block and its \r\n.
        let n = std::str::from_utf8(rest)
            .ok()
            .and_then(|t| t.split_ascii_whitespace().nth(2))
            .and_then(|t| t.parse::<usize>().ok())
            .ok_or_else(|| bad_reply("a malformed VALUE line"))?;
        match block_end(buf, end, n)? {
            Some(e) => pos = e,
            None => return Ok(None),
        }
    }
}

/// Takes the next whole reply off the front of `pending` (bytes received and not yet
/// framed), reading more from `r` as needed (blocking).
pub(crate) fn read_reply(
    protocol: Protocol,
    r: &mut impl Read,
    pending: &mut Vec<u8>,
) -> io::Result<Vec<u8>> {
    let mut chunk = [0u8; 16 << 10];
    loop {
        if let Some(n) = frame(protocol, pending)? {
            return Ok(pending.drain(..n).collect());
        }
        match r.read(&mut chunk) {
            Ok(0) => return Err(closed_by_server()),
            Ok(n) => pending.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A non-blocking connection without Nagle's delay.
pub(crate) fn connect(addr: SocketAddr, password: Option<&str>) -> io::Result<TcpStream> {
    let mut s = std::net::TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    if let Some(pw) = password {
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        authenticate(&mut s, pw)?;
    }
    s.set_nonblocking(true)?;
    Ok(TcpStream::from_std(s))
}

/// Sends `AUTH password` on a blocking connection and reads the reply line: an error
/// unless it is `+OK` (the server's error text is kept in the message).
pub(crate) fn authenticate(s: &mut std::net::TcpStream, password: &str) -> io::Result<()> {
    let mut req = format!("*2\r\n$4\r\nAUTH\r\n${}\r\n", password.len()).into_bytes();
    req.extend_from_slice(password.as_bytes());
    req.extend_from_slice(b"\r\n");
    s.write_all(&req)?;
    // The reply is one line; read it a byte at a time so nothing after it is taken.
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        if line.len() > 512 || s.read(&mut b)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "no reply to AUTH",
            ));
        }
        line.push(b[0]);
    }
    if line == b"+OK\r\n" {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "AUTH refused: {}",
                String::from_utf8_lossy(&line).trim_end()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replies(protocol: Protocol, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut r = io::Cursor::new(bytes);
        let mut pending = Vec::new();
        let mut all = Vec::new();
        while (r.position() as usize) < bytes.len() || !pending.is_empty() {
            let reply = read_reply(protocol, &mut r, &mut pending);
            all.push(reply.unwrap_or_else(|e| panic!("{e}")));
        }
        all
    }

    #[test]
    fn replies_are_framed_whatever_their_content() {
        let resp = replies(
            Protocol::Resp,
            b"$3\r\nabc\r\n+OK\r\n$-1\r\n-ERR no\r\n*2\r\n$1\r\nx\r\n:5\r\n$2\r\n\r\n\r\n",
        );
        let want: Vec<&[u8]> = vec![
            b"$3\r\nabc\r\n",
            b"+OK\r\n",
            b"$-1\r\n",
            b"-ERR no\r\n",
            b"*2\r\n$1\r\nx\r\n:5\r\n",
            b"$2\r\n\r\n\r\n",
        ];
        assert_eq!(resp, want);
        let mc = replies(
            Protocol::Memcache,
            b"VALUE k 0 4\r\nab\r\n\r\nEND\r\nEND\r\nSTORED\r\nSERVER_ERROR out of memory\r\n",
        );
        let want: Vec<&[u8]> = vec![
            b"VALUE k 0 4\r\nab\r\n\r\nEND\r\n",
            b"END\r\n",
            b"STORED\r\n",
            b"SERVER_ERROR out of memory\r\n",
        ];
        assert_eq!(mc, want);
    }

    #[test]
    fn truncated_or_malformed_replies_are_errors() {
        for (p, bytes) in [
            (Protocol::Resp, &b"$5\r\nab"[..]),
            (Protocol::Resp, b"$x\r\n"),
            (Protocol::Resp, b"+OK"),
            (Protocol::Memcache, b"VALUE k 0\r\n"),
            (Protocol::Memcache, b"VALUE k 0 9\r\nabc\r\n"),
        ] {
            let mut pending = Vec::new();
            assert!(
                read_reply(p, &mut io::Cursor::new(bytes), &mut pending).is_err(),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    /// (request, expected reply) of key `k`.
    fn request(protocol: Protocol, k: u64, get: bool, value_size: usize) -> (Vec<u8>, Vec<u8>) {
        let (mut out, mut reply) = (Vec::new(), Vec::new());
        push_request(protocol, &mut out, k, get, value_size);
        push_reply(protocol, &mut reply, k, get, value_size);
        (out, reply)
    }

    #[test]
    fn expected_replies_match_the_requests() {
        let (out, e) = request(Protocol::Memcache, 7, true, 5);
        assert_eq!(out, b"get key:000000000007\r\n");
        assert_eq!(e, b"VALUE key:000000000007 0 5\r\n7.7.7\r\nEND\r\n");
        let (out, e) = request(Protocol::Memcache, 7, false, 5);
        assert_eq!(out, b"set key:000000000007 0 0 5\r\n7.7.7\r\n");
        assert_eq!(e, b"STORED\r\n");
        let (out, e) = request(Protocol::Resp, 7, true, 5);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000007\r\n");
        assert_eq!(e, b"$5\r\n7.7.7\r\n");
        let (out, e) = request(Protocol::Resp, 4660, false, 12);
        assert_eq!(
            out,
            b"*3\r\n$3\r\nSET\r\n$16\r\nkey:000000004660\r\n$12\r\n1234.1234.12\r\n"
        );
        assert_eq!(e, b"+OK\r\n");
    }

    #[test]
    fn keys_and_values_are_the_documented_functions_of_the_index() {
        for i in [
            0,
            1,
            7,
            15,
            16,
            255,
            4096,
            999_999_999_999,
            1 << 40,
            u64::MAX,
        ] {
            assert_eq!(key_of(i), format!("key:{:012}", i % 1_000_000_000_000));
            for size in [0, 1, 5, 17, 64, 1000] {
                let want: Vec<u8> = format!("{i:x}.").bytes().cycle().take(size).collect();
                assert_eq!(value_of(i, size), want, "{i} {size}");
            }
        }
    }

    #[test]
    fn replies_arriving_byte_by_byte_are_framed_when_complete() {
        let cases: [(Protocol, &[u8]); 4] = [
            (Protocol::Resp, b"$3\r\nabc\r\n"),
            (Protocol::Resp, b"*2\r\n$1\r\nx\r\n%1\r\n+a\r\n:5\r\n"),
            (Protocol::Memcache, b"VALUE k 0 4\r\nab\r\n\r\nEND\r\n"),
            (Protocol::Memcache, b"STORED\r\n"),
        ];
        for (p, reply) in cases {
            for cut in 0..reply.len() {
                let framed = frame(p, &reply[..cut]).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(framed, None, "{p} {cut}");
            }
            let mut two = reply.to_vec();
            two.extend_from_slice(reply);
            assert_eq!(frame(p, &two).ok(), Some(Some(reply.len())), "{p}");
        }
    }
}

//! The incremental parser ([`wirespeed_kvs::input`]) against the whole-buffer parser
//! ([`wirespeed_kvs::resp::parse`]): any stream of requests (multibulk, inline, or
//! arbitrary bytes), fed in pieces cut at arbitrary points, gives the same requests
//! with the same arguments, then the same error or the same unfinished tail, as
//! parsing the whole stream.

use proptest::prelude::*;

use wirespeed_kvs::input::{Input, Received};
use wirespeed_kvs::resp::{parse, Limits, ProtocolError};

#[derive(Debug, PartialEq, Eq)]
enum End {
    /// Bytes left over, not yet a whole request.
    Incomplete,
    Error(ProtocolError),
}

type Requests = Vec<(Vec<Vec<u8>>, usize)>;

/// Small limits, so that streams reach them.
fn limits() -> Limits {
    Limits {
        max_bulk: 40,
        max_multibulk: 6,
        max_inline: 48,
    }
}

/// Every request of `whole`, parsed from the start of what remains each time.
fn reference(whole: &[u8], limits: &Limits) -> (Requests, End) {
    let mut buf = whole.to_vec();
    let mut at = 0;
    let mut out = Vec::new();
    let mut args = Vec::new();
    loop {
        let rest = &mut buf[at..];
        match parse(rest, limits, &mut args) {
            Ok(None) => return (out, End::Incomplete),
            Ok(Some(len)) => {
                out.push((args.iter().map(|r| rest[r.clone()].to_vec()).collect(), len));
                at += len;
            }
            Err(e) => return (out, End::Error(e)),
        }
    }
}

/// A source that hands out `data` in pieces ending at `bounds` (a read never crosses
/// one), then says the end.
struct Pieces<'a> {
    data: &'a [u8],
    bounds: Vec<usize>,
    at: usize,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let end = self
            .bounds
            .iter()
            .copied()
            .find(|&b| b > self.at)
            .unwrap_or(self.data.len());
        let n = out.len().min(end - self.at);
        out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The same, read by [`Input`] from a source that cuts `whole` at `cuts`, each request
/// run (consumed) as soon as it is complete, the buffer compacted after each read as
/// the server does after each batch.
fn incremental(whole: &[u8], cuts: &[usize], limits: &Limits) -> (Requests, End) {
    let mut bounds: Vec<usize> = cuts.iter().map(|&c| c % (whole.len() + 1)).collect();
    bounds.sort_unstable();
    let mut src = Pieces {
        data: whole,
        bounds,
        at: 0,
    };
    let mut input = Input::default();
    let mut out = Vec::new();
    loop {
        match input.read_from(&mut src, usize::MAX) {
            Ok(Received::Bytes { .. }) => {}
            Ok(other) => {
                assert_eq!(other, Received::End);
                return (out, End::Incomplete);
            }
            Err(e) => panic!("{e}"),
        }
        loop {
            match input.parse(limits, true) {
                Ok(None) => break,
                Ok(Some(len)) => {
                    let (bytes, args) = input.request();
                    assert_eq!(bytes.len(), len);
                    out.push((
                        args.iter().map(|r| bytes[r.clone()].to_vec()).collect(),
                        len,
                    ));
                    input.consume();
                }
                Err(e) => return (out, End::Error(e)),
            }
        }
        input.compact();
    }
}

fn multibulk(args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// One request's bytes: a well-formed multibulk or inline request, or a few bytes of
/// anything (which may be a broken header, a lone CRLF, or quotes).
fn request() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..12), 0..5)
            .prop_map(|a| multibulk(&a)),
        2 => prop::collection::vec("[a-z\"' \\\\]{0,10}", 0..4)
            .prop_map(|w| format!("{}\r\n", w.join(" ")).into_bytes()),
        1 => prop::collection::vec(
            prop_oneof![Just(b'*'), Just(b'$'), Just(b'\r'), Just(b'\n'), Just(b'1'), Just(b'-'), any::<u8>()],
            0..16,
        ),
        1 => Just(b"*9\r\n".to_vec()),
        1 => Just(b"*1\r\n$99\r\n".to_vec()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn split_streams_parse_as_whole_ones(
        reqs in prop::collection::vec(request(), 1..6),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole: Vec<u8> = reqs.concat();
        for limits in [Limits::default(), limits()] {
            prop_assert_eq!(incremental(&whole, &cuts, &limits), reference(&whole, &limits));
        }
    }

    #[test]
    fn byte_at_a_time_parses_as_whole(reqs in prop::collection::vec(request(), 1..4)) {
        let whole: Vec<u8> = reqs.concat();
        let cuts: Vec<usize> = (0..whole.len()).collect();
        prop_assert_eq!(incremental(&whole, &cuts, &limits()), reference(&whole, &limits()));
    }
}

#[test]
fn a_large_request_cut_anywhere_keeps_its_arguments() {
    // Bulks across the big-bulk size, so their reads are sized to them.
    let args: Vec<Vec<u8>> = [0usize, 1, 100, 40_000, 70_000]
        .iter()
        .map(|&n| (0..n).map(|i| (i * 7 + n) as u8).collect())
        .collect();
    let whole = multibulk(&args);
    let expected = reference(&whole, &Limits::default());
    assert_eq!(expected.0.len(), 1);
    for step in [1, 3, 1000, 16 * 1024, 65_537] {
        let cuts: Vec<usize> = (0..whole.len()).step_by(step).collect();
        assert_eq!(
            incremental(&whole, &cuts, &Limits::default()),
            expected,
            "pieces of {step}"
        );
    }
}

use super::*;
use crate::gen::generate;

fn small_records() -> Vec<Record> {
    [0usize, 3, 10]
        .iter()
        .enumerate()
        .map(|(i, &n)| Record {
            msg: (0..n as u8).map(|b| b.wrapping_mul(7) ^ i as u8).collect(),
            sig: vec![0x40 + i as u8; SIG_LEN],
            pk: vec![0xa0 + i as u8; PK_LEN],
        })
        .collect()
}

fn encode(format: Format, records: &[Record]) -> Vec<u8> {
    let mut out = Vec::new();
    write_all(&mut out, format, records).expect("encodable records");
    out
}

fn read_bytes(format: Format, data: &[u8], with_total: bool) -> ReadOutcome {
    let r = RecordReader::new(data, format);
    if with_total {
        r.with_total_len(data.len() as u64).read_all()
    } else {
        r.read_all()
    }
}

#[test]
fn round_trip_both_formats() {
    let mut records = generate(40, 17, 9, 0.2);
    records.extend(small_records());
    for format in [Format::Bin, Format::Jsonl] {
        let data = encode(format, &records);
        for with_total in [false, true] {
            let got = read_bytes(format, &data, with_total);
            assert_eq!(got.error, None, "{format}");
            assert_eq!(got.records, records, "{format}");
        }
        let got = read_all(&data[..], format);
        assert_eq!(got.records, records);
    }
}

#[test]
fn round_trip_through_a_file() {
    let records = generate(10, 5, 1, 0.0);
    let dir = std::env::temp_dir().join(format!("wirespeed-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for format in [Format::Bin, Format::Jsonl] {
        let path = dir.join(format!("r.{}", format.name()));
        write_path(&path, format, &records).expect("write");
        assert_eq!(Format::from_path(&path), format);
        let got = read_path(&path, format).expect("open");
        assert_eq!(got.error, None);
        assert_eq!(got.records, records);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn binary_layout_is_exact() {
    let r = &small_records()[1];
    let data = encode(Format::Bin, std::slice::from_ref(r));
    assert_eq!(&data[..4], &[3, 0, 0, 0]);
    assert_eq!(&data[4..7], &r.msg[..]);
    assert_eq!(&data[7..71], &r.sig[..]);
    assert_eq!(&data[71..], &r.pk[..]);
}

#[test]
fn jsonl_layout_is_exact_and_lowercase() {
    let r = Record {
        msg: vec![0xAB, 0x01],
        sig: vec![0xCD],
        pk: vec![0xEF, 0x00],
    };
    let data = encode(Format::Jsonl, std::slice::from_ref(&r));
    assert_eq!(
        String::from_utf8(data).expect("utf-8"),
        "{\"pk\":\"ef00\",\"msg\":\"ab01\",\"sig\":\"cd\"}\n"
    );
}

#[test]
fn jsonl_accepts_uppercase_blank_lines_crlf_and_extra_keys() {
    let text = "\n  \r\n{\"sig\":\"CD\",\"msg\":\"\",\"pk\":\"Ef00\",\"note\":1}\r\n\n\
                {\"pk\":\"00\",\"msg\":\"0a\",\"sig\":\"11\"}";
    let got = read_all(text.as_bytes(), Format::Jsonl);
    assert_eq!(got.error, None);
    assert_eq!(
        got.records,
        vec![
            Record {
                msg: vec![],
                sig: vec![0xcd],
                pk: vec![0xef, 0x00],
            },
            Record {
                msg: vec![0x0a],
                sig: vec![0x11],
                pk: vec![0x00],
            },
        ]
    );
}

/// Byte offsets where each field of each record starts, and where the file ends.
fn bin_layout(records: &[Record]) -> Vec<[(Field, u64, u64); 4]> {
    let mut at = 0u64;
    records
        .iter()
        .map(|r| {
            let m = r.msg.len() as u64;
            let l = [
                (Field::LengthPrefix, at, 4),
                (Field::Message, at + 4, m),
                (Field::Signature, at + 4 + m, SIG_LEN as u64),
                (Field::PublicKey, at + 4 + m + SIG_LEN as u64, PK_LEN as u64),
            ];
            at += 4 + m + (SIG_LEN + PK_LEN) as u64;
            l
        })
        .collect()
}

#[test]
fn binary_truncation_at_every_position() {
    let records = small_records();
    let data = encode(Format::Bin, &records);
    let layout = bin_layout(&records);
    for cut in 0..=data.len() {
        let cut64 = cut as u64;
        // The record being cut, and the field inside it (None: the cut is on a boundary).
        let mut expect_records = 0;
        let mut expect_err = None;
        for (i, fields) in layout.iter().enumerate() {
            let end = fields[3].1 + fields[3].2;
            if end <= cut64 {
                expect_records = i + 1;
                continue;
            }
            if fields[0].1 < cut64 {
                let (field, start, need) = *fields
                    .iter()
                    .rev()
                    .find(|f| f.1 <= cut64 && f.2 > 0)
                    .expect("a field starts before the cut");
                let left = cut64 - start;
                expect_err = Some(ParseError {
                    index: i,
                    offset: start,
                    kind: ParseErrorKind::Truncated { field, need, left },
                });
            }
            break;
        }
        for with_total in [false, true] {
            let got = read_bytes(Format::Bin, &data[..cut], with_total);
            assert_eq!(got.records, records[..expect_records], "cut {cut}");
            assert_eq!(got.error, expect_err, "cut {cut}");
        }
    }
}

#[test]
fn jsonl_truncation_at_every_position() {
    let records = small_records();
    let data = encode(Format::Jsonl, &records);
    let line_starts: Vec<u64> = std::iter::once(0)
        .chain(
            data.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i as u64 + 1),
        )
        .collect();
    for cut in 0..=data.len() {
        let got = read_all(&data[..cut], Format::Jsonl);
        let n = got.records.len();
        assert_eq!(got.records, records[..n], "cut {cut}");
        // A line is complete once its closing brace is in; anything shorter is an error.
        let whole = line_starts[1..]
            .iter()
            .filter(|&&s| s <= cut as u64)
            .count();
        let brace_in = data[..cut].last() == Some(&b'}');
        assert_eq!(n, whole + usize::from(brace_in), "cut {cut}");
        match got.error {
            None => assert!(brace_in || cut as u64 == line_starts[n], "cut {cut}"),
            Some(e) => {
                assert_eq!(e.index, n, "cut {cut}");
                assert_eq!(e.offset, line_starts[n], "cut {cut}");
                assert!(matches!(e.kind, ParseErrorKind::Json(_)), "cut {cut}: {e}");
            }
        }
    }
}

#[test]
fn oversized_length_prefix_is_truncation_not_allocation() {
    let mut data = u32::MAX.to_le_bytes().to_vec();
    data.extend_from_slice(&[1, 2, 3]);
    for with_total in [false, true] {
        let got = read_bytes(Format::Bin, &data, with_total);
        assert!(got.records.is_empty());
        let e = got.error.expect("error");
        assert_eq!(e.index, 0);
        assert_eq!(e.offset, 4);
        assert_eq!(
            e.kind,
            ParseErrorKind::Truncated {
                field: Field::Message,
                need: u64::from(u32::MAX),
                left: 3,
            }
        );
    }
}

#[test]
fn error_display_names_record_offset_and_cause() {
    let e = ParseError {
        index: 17,
        offset: 4242,
        kind: ParseErrorKind::Truncated {
            field: Field::Signature,
            need: 64,
            left: 10,
        },
    };
    assert_eq!(
        e.to_string(),
        "record 17 at byte offset 4242: truncated signature (need 64 bytes, 10 left)"
    );
}

fn jsonl_error(text: &str) -> (usize, ParseError) {
    let got = read_all(text.as_bytes(), Format::Jsonl);
    (got.records.len(), got.error.expect("an error"))
}

const GOOD: &str = "{\"pk\":\"00\",\"msg\":\"\",\"sig\":\"11\"}\n";

#[test]
fn jsonl_bad_hex() {
    for (bad, field) in [
        (
            "{\"pk\":\"zz\",\"msg\":\"\",\"sig\":\"11\"}",
            Field::PublicKey,
        ),
        (
            "{\"pk\":\"00\",\"msg\":\"abc\",\"sig\":\"11\"}",
            Field::Message,
        ),
        (
            "{\"pk\":\"00\",\"msg\":\"\",\"sig\":\"1g\"}",
            Field::Signature,
        ),
        (
            "{\"pk\":\"00\",\"msg\":\" 0a\",\"sig\":\"11\"}",
            Field::Message,
        ),
    ] {
        let text = format!("{GOOD}\n{bad}\n{GOOD}");
        let (n, e) = jsonl_error(&text);
        assert_eq!(n, 1, "{bad}");
        assert_eq!(e.index, 1, "{bad}");
        assert_eq!(e.offset, GOOD.len() as u64 + 1, "{bad}");
        match &e.kind {
            ParseErrorKind::BadHex { field: f, .. } => assert_eq!(*f, field, "{bad}"),
            k => panic!("{bad}: unexpected {k}"),
        }
        let text = e.to_string();
        assert!(text.contains("not valid hex"), "{text}");
    }
}

#[test]
fn jsonl_bad_json() {
    type KindCheck = fn(&ParseErrorKind) -> bool;
    let cases: [(&str, KindCheck); 7] = [
        ("{", |k| matches!(k, ParseErrorKind::Json(_))),
        ("not json", |k| matches!(k, ParseErrorKind::Json(_))),
        ("{\"pk\":\"00\"} trailing", |k| {
            matches!(k, ParseErrorKind::Json(_))
        }),
        ("[1,2]", |k| matches!(k, ParseErrorKind::NotObject)),
        ("{\"msg\":\"\",\"sig\":\"11\"}", |k| {
            *k == ParseErrorKind::MissingField(Field::PublicKey)
        }),
        ("{\"pk\":\"00\",\"msg\":5,\"sig\":\"11\"}", |k| {
            *k == ParseErrorKind::NotString(Field::Message)
        }),
        ("{\"pk\":\"00\",\"msg\":\"\",\"sig\":null}", |k| {
            *k == ParseErrorKind::NotString(Field::Signature)
        }),
    ];
    for (bad, check) in cases {
        let text = format!("{GOOD}{GOOD}{bad}\n{GOOD}");
        let (n, e) = jsonl_error(&text);
        assert_eq!(n, 2, "{bad}");
        assert_eq!(e.index, 2, "{bad}");
        assert_eq!(e.offset, 2 * GOOD.len() as u64, "{bad}");
        assert!(check(&e.kind), "{bad}: {e}");
    }
}

#[test]
fn jsonl_keeps_wrong_length_sig_and_pk() {
    let text = format!(
        "{{\"pk\":\"{}\",\"msg\":\"00\",\"sig\":\"{}\"}}\n",
        "ab".repeat(31),
        "cd".repeat(65)
    );
    let got = read_all(text.as_bytes(), Format::Jsonl);
    assert_eq!(got.error, None);
    assert_eq!(got.records[0].pk.len(), 31);
    assert_eq!(got.records[0].sig.len(), 65);
}

#[test]
fn binary_writer_rejects_what_it_cannot_hold() {
    let mut r = small_records()[2].clone();
    r.pk.pop();
    let mut out = Vec::new();
    let mut w = RecordWriter::new(&mut out, Format::Bin);
    let e = w.write(&r).expect_err("31-byte key");
    assert!(matches!(
        e,
        WriteError::BadLength {
            index: 0,
            field: Field::PublicKey,
            len: 31
        }
    ));
    let out = w.finish().expect("flush");
    assert!(out.is_empty(), "nothing written for a rejected record");
    // JSON Lines holds any length.
    assert!(write_all(Vec::new(), Format::Jsonl, &[r]).is_ok());
}

struct FailAfter(usize);

impl Read for FailAfter {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0 == 0 {
            return Err(io::Error::other("device gone"));
        }
        let n = self.0.min(buf.len());
        buf[..n].fill(0);
        self.0 -= n;
        Ok(n)
    }
}

#[test]
fn read_errors_are_reported_with_position() {
    let got = read_all(FailAfter(2 + 4), Format::Bin);
    assert_eq!(got.records.len(), 0);
    let e = got.error.expect("error");
    assert_eq!((e.index, e.offset), (0, 4));
    assert!(matches!(
        e.kind,
        ParseErrorKind::Io {
            kind: io::ErrorKind::Other,
            ..
        }
    ));
}

#[test]
fn format_names_and_defaults() {
    assert_eq!("bin".parse::<Format>(), Ok(Format::Bin));
    assert_eq!("jsonl".parse::<Format>(), Ok(Format::Jsonl));
    assert!("json".parse::<Format>().is_err());
    assert_eq!(Format::from_path(Path::new("a/b.jsonl")), Format::Jsonl);
    assert_eq!(Format::from_path(Path::new("b.JSONL")), Format::Jsonl);
    assert_eq!(Format::from_path(Path::new("b.json")), Format::Bin);
    assert_eq!(Format::from_path(Path::new("sigs")), Format::Bin);
}

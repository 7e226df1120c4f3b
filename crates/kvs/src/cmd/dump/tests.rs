//! Round trips of every type, payloads DUMPed by Redis 7.0.15, the packed encodings of
//! older versions, the CRC, and random, truncated and mutated payloads (never a panic);
//! streams in all three of their forms, with hostile payloads of each kind.

use super::packed::{build_listpack, Elem};
use super::*;
use crate::stream::{Group, Keep, Stream, StreamId, Trim};
use crate::value::{Hash, List, Set, ZSet};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `body` with RDB version `version` and its checksum.
fn sealed(body: &[u8], version: u16) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

fn list(items: &[&[u8]]) -> Value {
    let mut l = List::default();
    items.iter().for_each(|i| l.push(false, i));
    Value::List(Box::new(l))
}

fn set(items: &[&[u8]]) -> Value {
    let mut s = Set::default();
    items.iter().for_each(|i| assert!(s.insert(i)));
    Value::Set(Box::new(s))
}

fn hash(pairs: &[(&[u8], &[u8])]) -> Value {
    let mut h = Hash::default();
    pairs.iter().for_each(|(f, v)| assert!(h.insert(f, v)));
    Value::Hash(Box::new(h))
}

fn zset(pairs: &[(&[u8], f64)]) -> Value {
    let mut z = ZSet::default();
    pairs
        .iter()
        .for_each(|(m, s)| assert!(z.insert(m, *s).is_none()));
    Value::ZSet(Box::new(z))
}

#[test]
fn crc64_is_redis_s() {
    // The check value of Redis's crc64 test.
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    assert_eq!(crc64(b""), 0);
}

#[test]
fn every_type_round_trips() {
    let big = vec![b'x'; 5000];
    let values = [
        Value::Str(b"hello".to_vec()),
        Value::Str(Vec::new()),
        Value::Str(big.clone()),
        Value::Str(b"12345".to_vec()),
        Value::Str(b"-2147483648".to_vec()),
        Value::Str(b"2147483648".to_vec()),
        Value::Str(b"007".to_vec()),
        Value::Str(b"-0".to_vec()),
        list(&[b"a", b"", b"17", &big]),
        set(&[b"1", b"2", b"-3", b"x", &big]),
        hash(&[(b"f", b"v"), (b"n", b"1"), (&big, b"")]),
        zset(&[
            (b"a", 1.5),
            (b"b", f64::INFINITY),
            (b"c", f64::NEG_INFINITY),
            (&big, -0.1),
        ]),
    ];
    for v in values {
        let p = serialize(&v);
        assert_eq!(u16::from_le_bytes([p[p.len() - 10], p[p.len() - 9]]), 9);
        assert_eq!(deserialize(&p), Ok(v));
    }
    // A long list takes a 14-bit and then a 32-bit count.
    let many: Vec<Vec<u8>> = (0..70_000).map(|i| i.to_string().into_bytes()).collect();
    let refs: Vec<&[u8]> = many.iter().map(Vec::as_slice).collect();
    let v = list(&refs);
    assert_eq!(deserialize(&serialize(&v)), Ok(v));
    let v = list(&refs[..300]);
    assert_eq!(deserialize(&serialize(&v)), Ok(v));
}

#[test]
fn lzf_round_trips_and_only_when_it_pays() {
    let mut rng = Rng(7);
    let noise: Vec<u8> = (0..20_000).map(|_| rng.next() as u8).collect();
    let mut text = Vec::new();
    for i in 0..3000 {
        text.extend(format!("key:{} value {} ", i % 97, i % 13).bytes());
    }
    let cases: Vec<Vec<u8>> = vec![
        vec![b'a'; 54],
        vec![0; 100_000],
        text,
        // A repeat just inside the 8 KiB window.
        [&noise[..8000], &noise[..3000]].concat(),
    ];
    for c in &cases {
        let z = lzf::compress(c, 4).expect("compressible");
        assert!(z.len() + 4 <= c.len());
        assert_eq!(lzf::decompress(&z, c.len() as u64).as_ref(), Ok(c));
    }
    assert!(lzf::compress(&noise, 4).is_none());
    // A repeat farther back than the window is out of reach.
    assert!(lzf::compress(&[&noise[..9000], &noise[..3000]].concat(), 4).is_none());
    assert!(lzf::compress(b"abc", 4).is_none());
    // DUMP compresses long strings, as Redis does, and reads them back.
    let v = Value::Str(vec![b'a'; 54]);
    let p = serialize(&v);
    assert_eq!(p[..2], [0, 0xc3]);
    assert_eq!(deserialize(&p), Ok(v));
}

#[test]
fn integers_use_the_int_encodings() {
    assert_eq!(serialize(&Value::Str(b"-7".to_vec()))[..3], [0, 0xc0, 0xf9]);
    assert_eq!(
        serialize(&Value::Str(b"12345".to_vec()))[..4],
        [0, 0xc1, 0x39, 0x30]
    );
    assert_eq!(serialize(&Value::Str(b"70000".to_vec()))[..2], [0, 0xc2]);
    // Not spelled as Redis prints it, or wider than 32 bits: the bytes themselves.
    assert_eq!(serialize(&Value::Str(b"+1".to_vec()))[..2], [0, 2]);
    assert_eq!(
        serialize(&Value::Str(b"123456789012".to_vec()))[..2],
        [0, 12]
    );
}

#[test]
fn payloads_dumped_by_redis_7_0_load() {
    let big = "x".repeat(100);
    let cases: &[(&str, Value)] = &[
        ("00c139300a009d94ea2793fc08b9", Value::Str(b"12345".to_vec())),
        ("00c0f90a005e26d130d7a242ab", Value::Str(b"-7".to_vec())),
        (
            "000c3132333435363738393031320a00911001b1d116e7ac",
            Value::Str(b"123456789012".to_vec()),
        ),
        // LZF.
        (
            "00c30936016161e029000161610a00737e3c546de6af43",
            Value::Str(vec![b'a'; 54]),
        ),
        // Quicklist 2 of one listpack, and one compressed by LZF.
        (
            "120102171700000005008161028162020101ded402f2a0860104ff0a007fcdf657f83805c0",
            list(&[b"a", b"b", b"1", b"-300", b"100000"]),
        ),
        (
            "120102c313407108710000000200e06478e05a000466817902ff0a0039854c731419a4c2",
            list(&[big.as_bytes(), b"y"]),
        ),
        (
            "10151500000004008266310382763103826632030201ff0a005c5ea813feec1ff5",
            hash(&[(b"f1", b"v1"), (b"f2", b"2")]),
        ),
        (
            "111d1d0000000600816302842d696e660581610283312e35048162020201ff0a0017dce91ab8436c89",
            zset(&[(b"c", f64::NEG_INFINITY), (b"a", 1.5), (b"b", 2.0)]),
        ),
        (
            "0b18040000000400000090eefeff0100000002000000030000000a00a8b63c622cbf2c9c",
            set(&[b"-70000", b"1", b"2", b"3"]),
        ),
        (
            "02030162016301610a00b294da2e4ecda6fc",
            set(&[b"a", b"b", b"c"]),
        ),
        (
            "04010166c3094064017878e057000178780a00521178d175a9af13",
            hash(&[(b"f", big.as_bytes())]),
        ),
        (
            "0502017a0000000000001040c3094064017878e0570001787800000000000008400a006e0a46c0c26c3e2c",
            zset(&[(b"z", 4.0), (big.as_bytes(), 3.0)]),
        ),
        (
            "0202c3094064017878e0570001787801710a00f4dc6716c2a7d830",
            set(&[big.as_bytes(), b"q"]),
        ),
    ];
    for (p, want) in cases {
        assert_eq!(deserialize(&hex(p)).as_ref(), Ok(want), "{p}");
    }
}

/// A ziplist of `items`, as Redis before 7 wrote them.
fn ziplist(items: &[Elem]) -> Vec<u8> {
    let (mut body, mut prev, mut tail) = (Vec::new(), 0usize, 10usize);
    for e in items {
        let start = body.len();
        tail = 10 + start;
        if prev < 254 {
            body.push(prev as u8);
        } else {
            body.push(254);
            body.extend((prev as u32).to_le_bytes());
        }
        match *e {
            Elem::Int(i) if (0..=12).contains(&i) => body.push(0xf1 + i as u8),
            Elem::Int(i) if i8::try_from(i).is_ok() => body.extend([0xfe, i as u8]),
            Elem::Int(i) if i16::try_from(i).is_ok() => {
                body.push(0xc0);
                body.extend((i as i16).to_le_bytes());
            }
            Elem::Int(i) if (-(1 << 23)..1 << 23).contains(&i) => {
                body.push(0xf0);
                body.extend(&(i as i32).to_le_bytes()[..3]);
            }
            Elem::Int(i) if i32::try_from(i).is_ok() => {
                body.push(0xd0);
                body.extend((i as i32).to_le_bytes());
            }
            Elem::Int(i) => {
                body.push(0xe0);
                body.extend(i.to_le_bytes());
            }
            Elem::Str(s) if s.len() < 64 => {
                body.push(s.len() as u8);
                body.extend(s);
            }
            Elem::Str(s) if s.len() < 16384 => {
                body.extend([0x40 | (s.len() >> 8) as u8, s.len() as u8]);
                body.extend(s);
            }
            Elem::Str(s) => {
                body.push(0x80);
                body.extend((s.len() as u32).to_be_bytes());
                body.extend(s);
            }
        }
        prev = body.len() - start;
    }
    let mut out = ((body.len() + 11) as u32).to_le_bytes().to_vec();
    out.extend((tail as u32).to_le_bytes());
    out.extend((items.len() as u16).to_le_bytes());
    out.extend(body);
    out.push(0xff);
    out
}

/// An RDB string of `b` (its length below 16384).
fn rdb_string(b: &[u8]) -> Vec<u8> {
    let mut out = if b.len() < 64 {
        vec![b.len() as u8]
    } else {
        vec![0x40 | (b.len() >> 8) as u8, b.len() as u8]
    };
    out.extend(b);
    out
}

#[test]
fn older_packed_encodings_load() {
    let long = vec![b'y'; 300];
    let items = [
        Elem::Str(b"a"),
        Elem::Int(7),
        Elem::Int(-100),
        Elem::Int(1000),
        Elem::Int(-5_000_000),
        Elem::Int(2_000_000_000),
        Elem::Int(i64::MIN),
        Elem::Str(&long),
    ];
    let want: Vec<Vec<u8>> = items.iter().map(|e| e.bytes().into_owned()).collect();
    let want_refs: Vec<&[u8]> = want.iter().map(Vec::as_slice).collect();
    let zl = ziplist(&items);
    // A list as one ziplist (Redis 3.0), and as a quicklist of two (Redis 3.2 to 6.2).
    let mut body = vec![decode::ty::LIST_ZIPLIST];
    body.extend(rdb_string(&zl));
    assert_eq!(deserialize(&sealed(&body, 6)), Ok(list(&want_refs)));
    let mut body = vec![decode::ty::LIST_QUICKLIST, 2];
    body.extend(rdb_string(&zl));
    body.extend(rdb_string(&ziplist(&[Elem::Str(b"end")])));
    let mut both = want_refs.clone();
    both.push(b"end");
    assert_eq!(deserialize(&sealed(&body, 9)), Ok(list(&both)));
    // Hashes and sorted sets as ziplists of pairs; scores as text or integers.
    let mut body = vec![decode::ty::HASH_ZIPLIST];
    body.extend(rdb_string(&ziplist(&[Elem::Str(b"f"), Elem::Int(5)])));
    assert_eq!(deserialize(&sealed(&body, 9)), Ok(hash(&[(b"f", b"5")])));
    let mut body = vec![decode::ty::ZSET_ZIPLIST];
    let pairs = [
        Elem::Str(b"m"),
        Elem::Str(b"2.5"),
        Elem::Int(3),
        Elem::Int(-4),
    ];
    body.extend(rdb_string(&ziplist(&pairs)));
    assert_eq!(
        deserialize(&sealed(&body, 9)),
        Ok(zset(&[(b"m", 2.5), (b"3", -4.0)]))
    );
    // A set as a listpack (Redis 7.2, RDB 11), with every listpack encoding.
    let mut body = vec![decode::ty::SET_LISTPACK];
    body.extend(rdb_string(&build_listpack(&items)));
    assert_eq!(deserialize(&sealed(&body, 11)), Ok(set(&want_refs)));
    // A plain sorted set, scores as text, and a quicklist 2 plain node.
    let body = [3, 2, 1, b'a', 3, b'1', b'.', b'5', 1, b'b', 254];
    assert_eq!(
        deserialize(&sealed(&body, 9)),
        Ok(zset(&[(b"a", 1.5), (b"b", f64::INFINITY)]))
    );
    let mut body = vec![decode::ty::LIST_QUICKLIST_2, 1, 1];
    body.extend(rdb_string(&long));
    assert_eq!(deserialize(&sealed(&body, 10)), Ok(list(&[&long])));
}

#[test]
fn bad_payloads_are_refused() {
    let ok = serialize(&Value::Str(b"v".to_vec()));
    assert_eq!(deserialize(&ok[..9]), Err(RestoreError::Footer));
    let mut flipped = ok.clone();
    flipped[1] ^= 1;
    assert_eq!(deserialize(&flipped), Err(RestoreError::Footer));
    // A newer RDB version than 11.
    assert_eq!(
        deserialize(&sealed(&[0, 1, b'v'], 12)),
        Err(RestoreError::Footer)
    );
    let format = |body: &[u8]| deserialize(&sealed(body, 9));
    // Empty collections, duplicates, a NaN score, an unknown type, a stream cut short
    // (its length is read from the footer and matches no entry), a module.
    for body in [
        &[1, 0][..],
        &[2, 2, 1, b'a', 1, b'a'],
        &[4, 2, 1, b'f', 0, 1, b'f', 0],
        &[3, 1, 1, b'a', 253],
        &[0, 0x3f, b'a'],
        &[8],
        &[15, 0],
        &[7, 0],
        &[0, 0xc3, 1, 0],
        &[0, 0xc3, 1, 200, 0],
    ] {
        assert_eq!(format(body), Err(RestoreError::Format), "{body:?}");
    }
    // An odd number of entries in a hash listpack.
    let mut body = vec![decode::ty::HASH_LISTPACK];
    body.extend(rdb_string(&build_listpack(&[Elem::Str(b"f")])));
    assert_eq!(format(&body), Err(RestoreError::Format));
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_truncated_and_mutated_payloads_never_panic() {
    let big = vec![b'x'; 200];
    let mut seeds: Vec<Vec<u8>> = [
        "120102171700000005008161028162020101ded402f2a0860104ff0a007fcdf657f83805c0",
        "120102c313407108710000000200e06478e05a000466817902ff0a0039854c731419a4c2",
        "111d1d0000000600816302842d696e660581610283312e35048162020201ff0a0017dce91ab8436c89",
        "0b18040000000400000090eefeff0100000002000000030000000a00a8b63c622cbf2c9c",
        "00c30936016161e029000161610a00737e3c546de6af43",
    ]
    .iter()
    .map(|h| hex(h))
    .collect();
    seeds.push(serialize(&zset(&[(b"a", 1.0), (&big, 2.0)])));
    seeds.push(serialize(&hash(&[(b"f", &big)])));
    let mut zl = vec![decode::ty::LIST_QUICKLIST, 1];
    zl.extend(rdb_string(&ziplist(&[Elem::Str(&big), Elem::Int(-9)])));
    seeds.push(sealed(&zl, 9));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // The body is mutated and the footer sealed again, so the decoder itself is
    // exercised rather than the checksum.
    let check = |body: &[u8]| match deserialize(&sealed(body, 10)) {
        Ok(v) => assert_eq!(deserialize(&serialize(&v)), Ok(v)),
        Err(e) => assert_eq!(e, RestoreError::Format),
    };
    for seed in &seeds {
        let body = &seed[..seed.len() - 10];
        for cut in 0..body.len() {
            check(&body[..cut]);
        }
        for _ in 0..3000 {
            let mut m = body.to_vec();
            for _ in 0..1 + rng.next() % 4 {
                let i = (rng.next() % m.len() as u64) as usize;
                m[i] = match rng.next() % 4 {
                    0 => m[i] ^ (1 << (rng.next() % 8)),
                    1 => 0xff,
                    2 => 0,
                    _ => rng.next() as u8,
                };
            }
            check(&m);
        }
    }
    for _ in 0..20_000 {
        let n = (rng.next() % 40) as usize;
        let body: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        check(&body);
    }
}

fn sid(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

fn stream(s: Stream) -> Value {
    Value::Stream(Box::new(s))
}

/// The RDB version a payload declares.
fn version_of(p: &[u8]) -> u16 {
    u16::from_le_bytes([p[p.len() - 10], p[p.len() - 9]])
}

/// A stream of several nodes (4 entries each) with fields like and unlike the master
/// entry's, values in every listpack encoding, ID differences from the master that
/// wrap (negative sequences, milliseconds past 2^63), entries deleted inside nodes, a
/// whole node deleted, an exactly trimmed head, and two groups with pending entries
/// and consumers; with `never_active`, one consumer was never active (so the payload
/// needs `STREAM_LISTPACKS_3`).
fn busy_stream(never_active: bool) -> Stream {
    let mid = vec![b'm'; 300];
    let big = vec![b'b'; 5000];
    let values: [&[u8]; 21] = [
        b"0",
        b"127",
        b"128",
        b"-1",
        b"-4096",
        b"4095",
        b"-32768",
        b"32767",
        b"8388607",
        b"-8388608",
        b"2147483647",
        b"-2147483649",
        b"9223372036854775807",
        b"-9223372036854775808",
        b"18446744073709551616",
        b"007",
        b"-0",
        b"+1",
        b"",
        &mid,
        &big,
    ];
    let mut s = Stream::default();
    for (i, v) in values.iter().enumerate() {
        let id = sid(1000 + i as u64 / 3, i as u64 % 3);
        let fields: Vec<&[u8]> = match i % 4 {
            2 => vec![b"other", v],
            3 => vec![b"f", v, b"n", b"1", b"extra", b"x"],
            _ => vec![b"f", v, b"n", b"1"],
        };
        s.append(id, &fields, 4, 1 << 20);
    }
    s.append(
        sid(1 << 50, u64::MAX - 1),
        &[b"f", b"1", b"n", b"2"],
        4,
        1 << 20,
    );
    s.append(sid(u64::MAX - 1, 0), &[b"f", b"3", b"n", b"4"], 4, 1 << 20);
    s.append(sid(u64::MAX, u64::MAX), &[b"1", b"2"], 4, 1 << 20);
    for id in [sid(1001, 1), sid(1003, 2), sid(1004, 0)] {
        assert!(s.delete(id));
    }
    // The node of 1002-2 .. 1003-2 goes whole.
    for id in [sid(1002, 2), sid(1003, 0), sid(1003, 1)] {
        assert!(s.delete(id));
    }
    let left = s.len() - 2;
    s.trim(Trim {
        keep: Keep::MaxLen(left),
        approx: false,
        limit: 0,
    });
    let mut g = Group::new(sid(1002, 0), Some(7));
    g.assign(sid(1000, 2), b"alice", 1_700_000_000_000, 1);
    g.assign(sid(1001, 0), b"alice", 1_700_000_000_001, 3);
    g.assign(sid(999, 0), b"12345", 5, 2);
    g.assign(sid(1005, 1), b"bob", u64::MAX - 1, u64::MAX);
    for (name, t) in [
        (&b"alice"[..], 1_700_000_000_100),
        (b"12345", 9),
        (b"bob", 0),
    ] {
        let c = g.consumers.get_mut(name).expect("consumer");
        c.seen_time = t;
        c.active_time = Some(t);
    }
    g.consumer(b"carol", 77).0.active_time = if never_active { None } else { Some(77) };
    s.groups.insert(b"readers".as_slice().into(), g);
    s.groups
        .insert(b"-7".as_slice().into(), Group::new(StreamId::MIN, None));
    s
}

#[test]
fn streams_round_trip() {
    let mut empty_with_group = Stream::default();
    empty_with_group.last_id = sid(5, 5);
    empty_with_group.entries_added = 3;
    empty_with_group.max_deleted = sid(5, 5);
    empty_with_group
        .groups
        .insert(b"g".as_slice().into(), Group::new(sid(5, 5), Some(3)));
    // One node of more than 65535 listpack elements (its count not kept), and many
    // nodes.
    let mut one_node = Stream::default();
    let mut many = Stream::default();
    for i in 1..=20_000u64 {
        let v = i.to_string();
        one_node.append(sid(i, 0), &[b"f", v.as_bytes()], 0, 0);
        many.append(sid(i / 7, i % 7), &[b"field", v.as_bytes()], 100, 4096);
    }
    for i in (1..=20_000u64).step_by(3) {
        assert!(many.delete(sid(i / 7, i % 7)));
    }
    assert!(many.nodes().count() > 100);
    let cases = [
        (Stream::default(), 10),
        (empty_with_group, 10),
        (busy_stream(false), 10),
        (busy_stream(true), 11),
        (one_node, 10),
        (many, 10),
    ];
    for (s, version) in cases {
        let v = stream(s);
        let p = serialize(&v);
        assert_eq!(p[0], if version == 10 { 19 } else { 21 });
        assert_eq!(version_of(&p), version);
        assert_eq!(deserialize(&p), Ok(v));
    }
    // Deleted entries stay in their nodes, flagged, as Redis keeps them.
    let Ok(Value::Stream(back)) = deserialize(&serialize(&stream(busy_stream(false)))) else {
        panic!("a stream");
    };
    let deleted = back
        .nodes()
        .flat_map(|(_, n)| n.items.iter())
        .filter(|i| i.deleted)
        .count();
    assert_eq!(deleted, 4);
    assert_eq!(back.len(), 16);
}

/// Redis 7.0.15's DUMP of `s1`: node max 3 entries, `XADD s1 1-1 f v n 5`, `1-2 f -300
/// n 100000`, `2-0 g x`, `5-7 f a n b`, then `XDEL s1 1-2`.
const REDIS_S1: &str = "130210000000000000000100000000000000014043430000001900020101010201816602816e02000102010001000181760205010501030100010101ded402f2a0860104050100010101dfff0201018167028178020601ff100000000000000005000000000000000723230000000c00010100010201816602816e0200010201000100018161028162020501ff0305070101010204000a00e7fe51873eab9571";
/// `XGROUP CREATE s2 g1 $ MKSTREAM`.
const REDIS_S2: &str = "1300000000000000000001026731000081ffffffffffffffff00000a0027ca2565ea9aa45b";
/// Node max 3 entries, `XADD s3 N-0 k vN` for N in 1..=5, `XGROUP CREATE s3 ga 0`,
/// `XGROUP CREATE s3 gb $`, `XREADGROUP GROUP ga alice COUNT 2 STREAMS s3 >`, the same
/// for bob with COUNT 1, `XACK s3 ga 1-0`, `XGROUP CREATECONSUMER s3 gb carol`, `XDEL
/// s3 5-0`; every time 1795934507144.
const REDIS_S3: &str = "1302100000000000000001000000000000000036360000001400030100010101816b020001020100010001827631030401020101010001827632030401020102010001827633030401ff10000000000000000400000000000000002a2a0000000f00010101010101816b020001020100010001827634030401030101010001827635030401ff040500010005000502026761030003020000000000000002000000000000000088d00926a2010000010000000000000003000000000000000088d00926a2010000010205616c69636588d00926a2010000010000000000000002000000000000000003626f6288d00926a20100000100000000000000030000000000000000026762050081ffffffffffffffff0001056361726f6c88d00926a2010000000a003df70ff43e2c55dd";
/// Default node limits: `XADD s4 5-10 <a x 70> <x x 5000>`, `6-0 f 1`,
/// `18446744073709551614-18446744073709551615 f -9223372036854775808` (the first node
/// LZF-compressed).
const REDIS_S4: &str = "1302100000000000000005000000000000000ac3406253ef07ef1300000a00010120020301e04661e03c0003480001022050030001f088205d0078e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ee0004278d0401ff100000000000000006000000000000000030300000000f000201000101018166020001020100010001010104010201dff802dfff02f40000000000000080090401ff0381fffffffffffffffe81ffffffffffffffff050a000003000a004cde2c6e3e7edfb5";

/// The streams REDIS_S1 to REDIS_S4 hold, built through the stream's own API.
fn redis_streams() -> [Stream; 4] {
    const T: u64 = 1_795_934_507_144;
    let mut s1 = Stream::default();
    s1.append(sid(1, 1), &[b"f", b"v", b"n", b"5"], 3, 4096);
    s1.append(sid(1, 2), &[b"f", b"-300", b"n", b"100000"], 3, 4096);
    s1.append(sid(2, 0), &[b"g", b"x"], 3, 4096);
    s1.append(sid(5, 7), &[b"f", b"a", b"n", b"b"], 3, 4096);
    assert!(s1.delete(sid(1, 2)));
    let mut s2 = Stream::default();
    s2.groups
        .insert(b"g1".as_slice().into(), Group::new(StreamId::MIN, None));
    let mut s3 = Stream::default();
    for n in 1..=5u64 {
        s3.append(sid(n, 0), &[b"k", format!("v{n}").as_bytes()], 3, 4096);
    }
    let mut ga = Group::new(sid(3, 0), Some(3));
    ga.assign(sid(2, 0), b"alice", T, 1);
    ga.assign(sid(3, 0), b"bob", T, 1);
    let mut gb = Group::new(sid(5, 0), None);
    gb.consumer(b"carol", T);
    for c in ga.consumers.values_mut().chain(gb.consumers.values_mut()) {
        c.seen_time = T;
        c.active_time = Some(T);
    }
    s3.groups.insert(b"ga".as_slice().into(), ga);
    s3.groups.insert(b"gb".as_slice().into(), gb);
    assert!(s3.delete(sid(5, 0)));
    let mut s4 = Stream::default();
    s4.append(sid(5, 10), &[&[b'a'; 70], &[b'x'; 5000]], 100, 4096);
    s4.append(sid(6, 0), &[b"f", b"1"], 100, 4096);
    s4.append(
        sid(u64::MAX - 1, u64::MAX),
        &[b"f", b"-9223372036854775808"],
        100,
        4096,
    );
    [s1, s2, s3, s4]
}

#[test]
fn streams_dumped_by_redis_7_0_load_and_dump_the_same_bytes() {
    let [s1, s2, s3, s4] = redis_streams();
    for (p, want) in [
        (REDIS_S1, s1),
        (REDIS_S2, s2),
        (REDIS_S3, s3),
        (REDIS_S4, s4),
    ] {
        let v = stream(want);
        assert_eq!(deserialize(&hex(p)), Ok(v.clone()), "{p}");
        // Written back byte for byte as Redis wrote it (but for the LZF of s4's first
        // node, which this compressor may find differently).
        if p != REDIS_S4 {
            assert_eq!(serialize(&v), hex(p));
        }
    }
}

/// The body of the stream payload `p` (no footer) cut into its nodes and the rest.
fn split_stream_body(p: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let body = &p[..p.len() - 10];
    // The bodies used here have nodes only of strings below 64 bytes or with a
    // 14-bit length: walk them.
    let mut at = 2;
    let string = |at: &mut usize| {
        let b = body[*at];
        let n = match b >> 6 {
            0 => {
                *at += 1;
                usize::from(b & 0x3f)
            }
            1 => {
                *at += 2;
                usize::from(b & 0x3f) << 8 | usize::from(body[*at - 1])
            }
            _ => panic!("not a plain string"),
        };
        *at += n;
    };
    for _ in 0..body[1] {
        string(&mut at);
        string(&mut at);
    }
    (body[..at].to_vec(), body[at..].to_vec())
}

#[test]
fn older_and_newer_stream_forms_load() {
    // Redis 5.0 to 6.2 wrote STREAM_LISTPACKS: no first ID, largest deleted ID, count
    // added nor read counters. s1 so: length 3, last ID 5-7, no group.
    let (nodes, _) = split_stream_body(&hex(REDIS_S1));
    let mut body = nodes.clone();
    body[0] = 15;
    body.extend([3, 5, 7, 0]);
    let [mut s1, _, mut s3, _] = redis_streams();
    s1.max_deleted = StreamId::MIN;
    s1.entries_added = 3;
    assert_eq!(deserialize(&sealed(&body, 9)), Ok(stream(s1)));
    // An empty one: its first ID is the highest, as Redis 7 finds it.
    let mut empty = Stream::default();
    empty.last_id = sid(3, 4);
    empty.first_id = StreamId::MAX;
    assert_eq!(
        deserialize(&sealed(&[15, 0, 0, 3, 4, 0], 9)),
        Ok(stream(empty))
    );
    // s3 so: length 4, last 5-0, groups ga (last 3-0) and gb (last 5-0) as before,
    // without their read counters, which are estimated: unknown in the middle of the
    // stream, all entries at its end.
    let (nodes, rest) = split_stream_body(&hex(REDIS_S3));
    let mut body = nodes;
    body[0] = 15;
    // length, last ID, (first ID, largest deleted, added dropped), group count.
    body.extend([rest[0], rest[1], rest[2], rest[8]]);
    // Group ga: name, last ID, (read counter dropped), then PEL and consumers up to gb.
    let gb = rest
        .windows(3)
        .position(|w| w == [2, b'g', b'b'])
        .expect("gb");
    body.extend(&rest[9..14]);
    body.extend(&rest[15..gb]);
    // gb: name, last ID, (read counter: 9 bytes dropped), the rest.
    body.extend(&rest[gb..gb + 5]);
    body.extend(&rest[gb + 14..]);
    s3.max_deleted = StreamId::MIN;
    s3.entries_added = 4;
    s3.groups.get_mut(&b"ga"[..]).unwrap().entries_read = None;
    s3.groups.get_mut(&b"gb"[..]).unwrap().entries_read = Some(4);
    assert_eq!(deserialize(&sealed(&body, 9)), Ok(stream(s3.clone())));
    // Redis 7.2 writes STREAM_LISTPACKS_3 with version 11: an active time per
    // consumer, -1 for one never active.
    s3.groups
        .get_mut(&b"gb"[..])
        .unwrap()
        .consumers
        .get_mut(&b"carol"[..])
        .unwrap()
        .active_time = None;
    let p = serialize(&stream(s3.clone()));
    assert_eq!((p[0], version_of(&p)), (21, 11));
    let carol = p.windows(6).position(|w| w == b"\x05carol").expect("carol");
    assert_eq!(p[carol + 14..carol + 22], [0xff; 8]);
    assert_eq!(deserialize(&p), Ok(stream(s3)));
}

/// A node's listpack from its elements: integers and strings.
fn lp(items: &[Elem]) -> Vec<u8> {
    let mut w = packed::ListpackWriter::new();
    for e in items {
        match *e {
            Elem::Int(i) => w.int(i),
            Elem::Str(s) => w.string(s),
        }
    }
    w.finish()
}

/// A `STREAM_LISTPACKS_2` body of `nodes` (master ID, listpack) and `rest` (the
/// metadata and groups).
fn stream_body(nodes: &[(StreamId, Vec<u8>)], rest: &[u8]) -> Vec<u8> {
    let mut b = vec![19];
    encode::len(&mut b, nodes.len() as u64);
    for (id, lp) in nodes {
        let mut k = id.ms.to_be_bytes().to_vec();
        k.extend(id.seq.to_be_bytes());
        encode::string(&mut b, &k);
        encode::string(&mut b, lp);
    }
    b.extend(rest);
    b
}

#[test]
fn bad_stream_payloads_are_refused() {
    use Elem::{Int as I, Str as S};
    // One node at 7-0: entries 7-0 (fields f, v) and 7-1 (deleted); then length 1, last
    // ID 7-1, first 7-0, largest deleted 7-1, 2 added.
    let good_lp = |count: i64, deleted: i64, lp_count: i64| {
        lp(&[
            I(count),
            I(deleted),
            I(1),
            S(b"f"),
            I(0),
            I(2),
            I(0),
            I(0),
            S(b"v"),
            I(lp_count),
            I(3),
            I(0),
            I(1),
            S(b"w"),
            I(4),
        ])
    };
    let meta = [1, 7, 1, 7, 0, 7, 1, 2];
    let ok = stream_body(
        &[(sid(7, 0), good_lp(1, 1, 4))],
        &[&meta[..], &[0]].concat(),
    );
    let Ok(Value::Stream(s)) = deserialize(&sealed(&ok, 10)) else {
        panic!("the good payload loads");
    };
    assert_eq!(s.len(), 1);
    assert_eq!(s.range(StreamId::MIN, StreamId::MAX).count(), 1);
    // A group "g" at 7-0, read counter 1, whose PEL holds 7-0 (time 5, count 2), then
    // `consumers`.
    let group = |consumers: &[u8]| {
        let mut g = vec![1, 1, b'g', 7, 0, 1, 1];
        g.extend(raw(sid(7, 0)));
        g.extend(5u64.to_le_bytes());
        g.push(2);
        g.extend(consumers);
        g
    };
    let consumer = |name: u8, pel: &[StreamId]| {
        let mut c = vec![1, name];
        c.extend(9u64.to_le_bytes());
        c.push(pel.len() as u8);
        pel.iter().for_each(|id| c.extend(raw(*id)));
        c
    };
    let with_group = |consumers: &[u8]| {
        stream_body(
            &[(sid(7, 0), good_lp(1, 1, 4))],
            &[&meta[..], &group(consumers)].concat(),
        )
    };
    let one = [&[1u8][..], &consumer(b'a', &[sid(7, 0)])].concat();
    assert!(deserialize(&sealed(&with_group(&one), 10)).is_ok());
    let bad: Vec<(&str, Vec<u8>)> = vec![
        // The listpack's counts.
        (
            "live count",
            stream_body(&[(sid(7, 0), good_lp(2, 0, 4))], &meta),
        ),
        (
            "deleted count",
            stream_body(&[(sid(7, 0), good_lp(1, 2, 4))], &meta),
        ),
        (
            "lp-count",
            stream_body(&[(sid(7, 0), good_lp(1, 1, 5))], &meta),
        ),
        (
            "negative count",
            stream_body(&[(sid(7, 0), good_lp(-1, 3, 4))], &meta),
        ),
        // The master ID: not 16 bytes, or not the first entry's.
        (
            "key size",
            [
                &[19u8, 1, 15][..],
                &[0; 15],
                &rdb_string(&good_lp(1, 1, 4)),
                &meta,
            ]
            .concat(),
        ),
        (
            "master ID",
            stream_body(&[(sid(6, 0), good_lp(1, 1, 4))], &meta),
        ),
        // Two nodes out of order.
        (
            "node order",
            stream_body(
                &[(sid(7, 0), good_lp(1, 1, 4)), (sid(7, 1), good_lp(1, 1, 4))],
                &meta,
            ),
        ),
        // Entries out of order inside a node (the second 1 ms before the master).
        (
            "entry order",
            stream_body(
                &[(
                    sid(7, 0),
                    lp(&[
                        I(2),
                        I(0),
                        I(0),
                        I(0),
                        I(2),
                        I(0),
                        I(0),
                        I(3),
                        I(2),
                        I(-1),
                        I(0),
                        I(3),
                    ]),
                )],
                &[2, 7, 1, 7, 0, 0, 0, 2, 0],
            ),
        ),
        // A field count beyond the listpack; a node without entries.
        (
            "field count",
            stream_body(
                &[(
                    sid(7, 0),
                    lp(&[I(1), I(0), I(0), I(0), I(0), I(0), I(0), I(9)]),
                )],
                &meta,
            ),
        ),
        (
            "no entries",
            stream_body(&[(sid(7, 0), lp(&[I(0), I(0), I(0), I(0)]))], &[0, 0, 0, 0]),
        ),
        (
            "no listpack",
            stream_body(&[(sid(7, 0), lp(&[]))], &[0, 0, 0, 0]),
        ),
        // The stream's length, its last ID below its last entry, a count added below
        // the length.
        (
            "length",
            stream_body(
                &[(sid(7, 0), good_lp(1, 1, 4))],
                &[2, 7, 1, 7, 0, 7, 1, 2, 0],
            ),
        ),
        (
            "last ID",
            stream_body(
                &[(sid(7, 0), good_lp(1, 1, 4))],
                &[1, 6, 0, 7, 0, 7, 1, 2, 0],
            ),
        ),
        (
            "added",
            stream_body(
                &[(sid(7, 0), good_lp(1, 1, 4))],
                &[1, 7, 1, 7, 0, 7, 1, 0, 0],
            ),
        ),
        // Groups: a PEL entry nobody holds, one held twice, a consumer's entry not in
        // the group's PEL, a duplicate consumer, a duplicate group.
        (
            "PEL without consumer",
            with_group(&[1, 1, b'a', 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        ),
        (
            "PEL held twice",
            with_group(
                &[
                    &[2u8][..],
                    &consumer(b'a', &[sid(7, 0)]),
                    &consumer(b'b', &[sid(7, 0)]),
                ]
                .concat(),
            ),
        ),
        (
            "PEL held twice by one",
            with_group(&[&[1u8][..], &consumer(b'a', &[sid(7, 0), sid(7, 0)])].concat()),
        ),
        (
            "consumer entry not pending",
            with_group(&[&[1u8][..], &consumer(b'a', &[sid(7, 0), sid(7, 1)])].concat()),
        ),
        (
            "duplicate consumer",
            with_group(
                &[
                    &[2u8][..],
                    &consumer(b'a', &[sid(7, 0)]),
                    &consumer(b'a', &[]),
                ]
                .concat(),
            ),
        ),
        (
            "duplicate group",
            stream_body(
                &[(sid(7, 0), good_lp(1, 1, 4))],
                &[
                    &meta[..],
                    &[2, 1, b'g', 0, 0, 0, 0, 0, 1, b'g', 0, 0, 0, 0, 0],
                ]
                .concat(),
            ),
        ),
        // Counts far beyond the payload.
        (
            "node count",
            [&[19u8, 0x81][..], &[0xff; 8], &[0; 20]].concat(),
        ),
        (
            "group count",
            stream_body(&[], &[0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff]),
        ),
        (
            "PEL count",
            stream_body(
                &[],
                &[
                    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, b'g', 0, 0, 0, 0x80, 0, 1, 0, 0,
                ],
            ),
        ),
    ];
    for (what, body) in bad {
        assert_eq!(
            deserialize(&sealed(&body, 10)),
            Err(RestoreError::Format),
            "{what}"
        );
        // Cut anywhere, it never panics.
        for cut in 0..body.len() {
            let _ = deserialize(&sealed(&body[..cut], 10));
        }
    }
    // Every cut of the good payloads is refused (their last bytes then come from the
    // footer) or loads a stream, never panics.
    for body in [ok, with_group(&one)] {
        for cut in 0..body.len() {
            let _ = deserialize(&sealed(&body[..cut], 10));
        }
    }
}

/// An ID as 16 bytes, big endian.
fn raw(id: StreamId) -> [u8; 16] {
    let mut k = [0; 16];
    k[..8].copy_from_slice(&id.ms.to_be_bytes());
    k[8..].copy_from_slice(&id.seq.to_be_bytes());
    k
}

#[test]
fn stream_payloads_that_would_expand_too_far_are_refused() {
    // A master field of 60000 bytes that 20000 entries of 10 bytes each repeat (as the
    // same fields): 1.2 GB from a payload of 260 KB.
    use Elem::{Int as I, Str as S};
    let name = vec![b'n'; 60_000];
    let n = 20_000i64;
    let mut items = vec![I(n), I(0), I(1), S(&name), I(0)];
    for i in 0..n {
        items.extend([I(2), I(i), I(0), I(1), I(4)]);
    }
    let mut meta = vec![];
    encode::len(&mut meta, n as u64);
    encode::len(&mut meta, n as u64 - 1);
    meta.extend([0, 0, 0, 0, 0]);
    encode::len(&mut meta, n as u64);
    meta.push(0);
    let body = stream_body(&[(sid(0, 0), lp(&items))], &meta);
    assert!(body.len() < 400_000);
    assert_eq!(deserialize(&sealed(&body, 10)), Err(RestoreError::Format));
    // The same with a short field name loads.
    items[3] = S(b"n");
    let body = stream_body(&[(sid(0, 0), lp(&items))], &meta);
    let Ok(Value::Stream(s)) = deserialize(&sealed(&body, 10)) else {
        panic!("loads");
    };
    assert_eq!(s.len(), n as u64);
}

#[test]
fn mutated_stream_payloads_never_panic() {
    let mut seeds: Vec<Vec<u8>> = [REDIS_S1, REDIS_S2, REDIS_S3, REDIS_S4, REDIS_7_2_S3]
        .iter()
        .map(|h| hex(h))
        .collect();
    seeds.push(serialize(&stream(busy_stream(true))));
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let check = |body: &[u8]| match deserialize(&sealed(body, 11)) {
        Ok(v) => assert_eq!(deserialize(&serialize(&v)), Ok(v)),
        Err(e) => assert_eq!(e, RestoreError::Format),
    };
    for seed in &seeds {
        let body = &seed[..seed.len() - 10];
        for cut in 0..body.len().min(3000) {
            check(&body[..cut]);
        }
        for round in 0..4000 {
            let mut m = body.to_vec();
            // Mostly few flips; some rounds change the type byte to another stream
            // form.
            if round % 10 == 0 {
                m[0] = [15, 19, 21][(rng.next() % 3) as usize];
            }
            for _ in 0..1 + rng.next() % 4 {
                let i = (rng.next() % m.len() as u64) as usize;
                m[i] = match rng.next() % 4 {
                    0 => m[i] ^ (1 << (rng.next() % 8)),
                    1 => 0xff,
                    2 => 0,
                    _ => rng.next() as u8,
                };
            }
            check(&m);
        }
    }
}

/// Redis 7.2.6's DUMP (`STREAM_LISTPACKS_3`, RDB 11): node max 3 entries, `XADD s3 N-0
/// k vN` for N in 1..=5, `XGROUP CREATE s3 ga 0`, `XREADGROUP GROUP ga alice COUNT 2
/// STREAMS s3 >` (at T1), `XGROUP CREATECONSUMER s3 ga carol` (T1), then alice reading
/// her history (`... STREAMS s3 0`, at T2: seen, not active).
const REDIS_7_2_S3: &str = "1502100000000000000001000000000000000036360000001400030100010101816b020001020100010001827631030401020101010001827632030401020102010001827633030401ff10000000000000000400000000000000002a2a0000000f00020100010101816b020001020100010001827634030401020101010001827635030401ff0505000100000005010267610200020200000000000000010000000000000000ef7d0e26a20100000200000000000000020000000000000000ef7d0e26a2010000020205616c696365ef7d0e26a2010000e47d0e26a2010000020000000000000001000000000000000000000000000000020000000000000000056361726f6ce47d0e26a2010000ffffffffffffffff000b00786f741a9e636413";

#[test]
fn streams_dumped_by_redis_7_2_load_and_dump_the_same_bytes() {
    const T1: u64 = 1_795_934_813_668;
    const T2: u64 = 1_795_934_813_679;
    let mut s = Stream::default();
    for n in 1..=5u64 {
        s.append(sid(n, 0), &[b"k", format!("v{n}").as_bytes()], 3, 4096);
    }
    let mut ga = Group::new(sid(2, 0), Some(2));
    ga.assign(sid(1, 0), b"alice", T2, 2);
    ga.assign(sid(2, 0), b"alice", T2, 2);
    let alice = ga.consumers.get_mut(&b"alice"[..]).expect("alice");
    alice.seen_time = T2;
    alice.active_time = Some(T1);
    ga.consumer(b"carol", T1);
    s.groups.insert(b"ga".as_slice().into(), ga);
    let v = stream(s);
    assert_eq!(deserialize(&hex(REDIS_7_2_S3)), Ok(v.clone()));
    assert_eq!(serialize(&v), hex(REDIS_7_2_S3));
}

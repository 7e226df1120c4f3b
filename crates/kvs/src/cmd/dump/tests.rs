//! Round trips of every type, payloads DUMPed by Redis 7.0.15, the packed encodings of
//! older versions, the CRC, and random, truncated and mutated payloads (never a panic).

use super::packed::{build_listpack, Elem};
use super::*;
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
    // Empty collections, duplicates, a NaN score, an unknown type, a stream, a module.
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

//! Properties of the Solana transaction parser on arbitrary input: it never panics, every
//! rejection is a typed reason, every strict prefix of a transaction is `TooShort`, any
//! appended byte is `TrailingBytes`, and whatever it accepts is internally consistent.

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_sigverify::gen::generate;
use wirespeed_sigverify::solana::{
    encode_compact_u16, encode_legacy_message, encode_transaction, parse, CompiledInstruction,
    MessageHeader, ParseError, Transaction, Version, PACKET_DATA_SIZE, SIGNATURE_LEN,
};

/// A v0 transaction built by hand: `signers` signers, two static non-signers (a writable
/// account and a program), and lookups loading `lookups[i] = (writable, readonly)`
/// accounts; one instruction names the last looked-up account.
fn v0_transaction(signers: u8, lookups: &[(u8, u8)]) -> Vec<u8> {
    let header = MessageHeader {
        num_required_signatures: signers,
        num_readonly_signed: 0,
        num_readonly_unsigned: 1,
    };
    let keys: Vec<[u8; 32]> = (0..signers + 2).map(|i| [i + 1; 32]).collect();
    let looked_up: usize = lookups.iter().map(|(w, r)| usize::from(w + r)).sum();
    let last = (keys.len() + looked_up - 1) as u8;
    let accounts = [0, last];
    let ix = [CompiledInstruction {
        program_id_index: signers + 1,
        accounts: &accounts,
        data: b"hello",
    }];
    let mut msg = vec![0x80];
    encode_legacy_message(header, &keys, &[0xee; 32], &ix, &mut msg).unwrap();
    encode_compact_u16(lookups.len() as u16, &mut msg);
    for (t, (w, r)) in lookups.iter().enumerate() {
        msg.extend_from_slice(&[0x40 + t as u8; 32]);
        msg.push(*w);
        msg.extend(0..*w);
        msg.push(*r);
        msg.extend(0..*r);
    }
    let sigs: Vec<[u8; 64]> = (0..signers).map(|i| [0xa0 + i; 64]).collect();
    encode_transaction(&sigs, &msg).unwrap()
}

/// Valid transactions of both versions.
fn corpus() -> Vec<Vec<u8>> {
    let mut c: Vec<Vec<u8>> = generate(20, 0.0, 0.0, 1)
        .into_iter()
        .map(|g| g.bytes)
        .collect();
    c.push(v0_transaction(1, &[]));
    c.push(v0_transaction(2, &[(1, 0)]));
    c.push(v0_transaction(3, &[(2, 3), (0, 1)]));
    c.push(v0_transaction(4, &[(5, 5), (1, 1), (3, 0)]));
    c
}

/// Internal consistency of an accepted transaction.
fn check_accepted(bytes: &[u8], tx: &Transaction<'_>) {
    let n = tx.signatures.len();
    assert!(n >= 1);
    assert_eq!(n, usize::from(tx.header.num_required_signatures));
    assert_eq!(tx.signers.len(), n);
    assert_eq!(tx.signers, &tx.account_keys[..n]);
    assert!(bytes.ends_with(tx.message));
    let sig_bytes = bytes.len() - tx.message.len();
    assert!((1..=3).contains(&(sig_bytes - n * SIGNATURE_LEN)));
    assert_eq!(
        &bytes[sig_bytes - n * SIGNATURE_LEN..sig_bytes],
        tx.signatures.as_flattened()
    );
    assert_eq!(tx.txn_id(), tx.signatures[0]);
    assert!(tx.num_accounts() <= 256);
    assert!(bytes.len() <= PACKET_DATA_SIZE);
    assert_eq!(tx.items().len(), n);
    match tx.version {
        Version::Legacy => {
            assert!(tx.message[0] < 0x80);
            assert_eq!(tx.num_lookups, 0);
        }
        Version::V0 => assert_eq!(tx.message[0], 0x80),
    }
}

#[test]
fn hand_built_v0_transactions_parse() {
    let b = v0_transaction(4, &[(5, 5), (1, 1), (3, 0)]);
    let tx = parse(&b).unwrap();
    assert_eq!(tx.version, Version::V0);
    assert_eq!(tx.num_lookups, 3);
    assert_eq!(tx.num_lookup_accounts, 15);
    assert_eq!(tx.num_accounts(), 6 + 15);
    check_accepted(&b, &tx);

    let b = v0_transaction(1, &[(0, 0)]);
    assert_eq!(parse(&b), Err(ParseError::EmptyLookup));
    // 3 static + 254 looked up = 257 accounts; one fewer is the most allowed.
    let b = v0_transaction(1, &[(127, 127)]);
    assert_eq!(parse(&b).map(|_| ()), Err(ParseError::TooManyAccounts));
    let b = v0_transaction(1, &[(127, 126)]);
    assert_eq!(parse(&b).unwrap().num_accounts(), 256);
}

#[test]
fn every_strict_prefix_is_too_short() {
    for b in corpus() {
        check_accepted(&b, &parse(&b).unwrap());
        for n in 0..b.len() {
            assert_eq!(parse(&b[..n]), Err(ParseError::TooShort), "cut at {n}");
        }
    }
}

#[test]
fn any_appended_byte_is_trailing() {
    for b in corpus() {
        for x in [0u8, 1, 0x7f, 0x80, 0xff] {
            let mut t = b.clone();
            t.push(x);
            assert_eq!(parse(&t), Err(ParseError::TrailingBytes));
        }
    }
}

#[test]
fn single_bit_flips_never_panic_and_stay_consistent() {
    let mut seen = [0usize; ParseError::ALL.len()];
    let mut ok = 0;
    for b in corpus() {
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut t = b.clone();
                t[i] ^= 1 << bit;
                match parse(&t) {
                    Ok(tx) => {
                        check_accepted(&t, &tx);
                        ok += 1;
                    }
                    Err(e) => seen[e.index()] += 1,
                }
            }
        }
    }
    assert!(ok > 0);
    // Flips alone reach most reasons.
    let reached = seen.iter().filter(|&&n| n > 0).count();
    assert!(reached >= 9, "{seen:?}");
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let corpus = corpus();
    for round in 0..200_000 {
        let b: Vec<u8> = if round % 2 == 0 {
            let mut b = vec![0u8; rng.gen_range(0..=PACKET_DATA_SIZE + 8)];
            rng.fill_bytes(&mut b);
            // Small counts make deeper parses likely.
            if let Some(first) = b.first_mut() {
                *first %= 5;
            }
            b
        } else {
            let mut b = corpus[rng.gen_range(0..corpus.len())].clone();
            for _ in 0..rng.gen_range(1..6) {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
            b.truncate(rng.gen_range(0..=b.len()));
            b
        };
        if let Ok(tx) = parse(&b) {
            check_accepted(&b, &tx);
        }
    }
}

#[test]
fn signature_count_limits() {
    // A compact-u16 count of 0xffff signatures with no data behind it: too short, and
    // nothing sized by the count.
    assert_eq!(parse(&[0xff, 0xff, 0x03]), Err(ParseError::TooShort));
    // Count above u16::MAX.
    assert_eq!(parse(&[0xff, 0xff, 0x04]), Err(ParseError::BadCompactU16));
    // Four-byte encoding.
    assert_eq!(
        parse(&[0x81, 0x80, 0x80, 0x00]),
        Err(ParseError::BadCompactU16)
    );
    // 128 signatures cannot match a legacy or v0 header (at most 127).
    let mut b = vec![0x80, 0x01];
    b.extend(std::iter::repeat_n(0u8, 128 * 64));
    b.truncate(PACKET_DATA_SIZE);
    assert_eq!(parse(&b), Err(ParseError::TooShort));
    assert_eq!(
        parse(&vec![0; PACKET_DATA_SIZE + 1]),
        Err(ParseError::TooLong)
    );
}

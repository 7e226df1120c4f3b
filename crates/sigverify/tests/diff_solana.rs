//! The Solana transaction parser against the Solana SDK (solana-transaction 6 and its
//! crates, serialized with bincode, the SDK's serde wire encoding): transactions built and
//! signed by the SDK parse to the same signatures, signer keys and message bytes, and
//! verify; on truncated, bit-flipped and re-encoded bytes our parser accepts exactly what
//! the SDK deserializes and sanitizes; compact-u16 decoding matches `solana-short-vec` on
//! every input of up to three bytes.

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use solana_hash::Hash;
use solana_instruction::{AccountMeta, Instruction};
use solana_keypair::Keypair;
use solana_message::{v0, AddressLookupTableAccount, Message, VersionedMessage};
use solana_pubkey::Pubkey;
use solana_short_vec::{decode_shortu16_len, ShortU16};
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction as SdkTransaction;
use wirespeed_ed25519::{verify, Mode};
use wirespeed_sigverify::solana::{
    decode_compact_u16, parse, ParseError, Version, PACKET_DATA_SIZE,
};

fn keypair(rng: &mut ChaCha20Rng) -> Keypair {
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    Keypair::new_from_array(seed)
}

fn pubkey(rng: &mut ChaCha20Rng) -> Pubkey {
    let mut k = [0u8; 32];
    rng.fill_bytes(&mut k);
    Pubkey::new_from_array(k)
}

fn hash(rng: &mut ChaCha20Rng) -> Hash {
    let mut h = [0u8; 32];
    rng.fill_bytes(&mut h);
    Hash::new_from_array(h)
}

/// 1 to 4 signers and 1 to 4 instructions over a small pool of programs and accounts.
/// The first instruction names every signer, so all of them sign.
fn instructions(
    rng: &mut ChaCha20Rng,
    signers: &[Keypair],
    programs: &[Pubkey],
    others: &[Pubkey],
) -> Vec<Instruction> {
    let n = rng.gen_range(1..=4);
    (0..n)
        .map(|i| {
            let mut metas = Vec::new();
            if i == 0 {
                for (j, s) in signers.iter().enumerate() {
                    // The payer (first) is writable; the others read-only or writable.
                    if j == 0 || rng.gen_bool(0.5) {
                        metas.push(AccountMeta::new(s.pubkey(), true));
                    } else {
                        metas.push(AccountMeta::new_readonly(s.pubkey(), true));
                    }
                }
            }
            for _ in 0..rng.gen_range(0..4) {
                let k = others[rng.gen_range(0..others.len())];
                if rng.gen_bool(0.5) {
                    metas.push(AccountMeta::new(k, false));
                } else {
                    metas.push(AccountMeta::new_readonly(k, false));
                }
            }
            let mut data = vec![0u8; rng.gen_range(0..=80)];
            rng.fill_bytes(&mut data);
            Instruction::new_with_bytes(programs[rng.gen_range(0..programs.len())], &data, metas)
        })
        .collect()
}

struct Pool {
    programs: Vec<Pubkey>,
    others: Vec<Pubkey>,
}

fn pool(rng: &mut ChaCha20Rng) -> Pool {
    Pool {
        programs: (0..3).map(|_| pubkey(rng)).collect(),
        others: (0..10).map(|_| pubkey(rng)).collect(),
    }
}

/// SDK-built transactions: legacy (as `Transaction`) and v0 (with 0 to 2 lookup tables),
/// 1 to 4 signers, serialized with bincode.
fn sdk_transactions(count: usize, seed: u64) -> Vec<(VersionedTransaction, Vec<u8>)> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let pool = pool(&mut rng);
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < count {
        i += 1;
        let signers: Vec<Keypair> = (0..rng.gen_range(1..=4))
            .map(|_| keypair(&mut rng))
            .collect();
        let payer = signers[0].pubkey();
        let ixs = instructions(&mut rng, &signers, &pool.programs, &pool.others);
        let blockhash = hash(&mut rng);
        let tx = if i % 2 == 0 {
            let msg = Message::new(&ixs, Some(&payer));
            let legacy = SdkTransaction::new(&signers[..], msg, blockhash);
            let bytes = bincode::serialize(&legacy).unwrap();
            let versioned = VersionedTransaction::from(legacy.clone());
            // The legacy and versioned encodings of a legacy transaction agree.
            assert_eq!(bincode::serialize(&versioned).unwrap(), bytes);
            assert_eq!(legacy.message_data(), legacy.message.serialize());
            versioned
        } else {
            let tables: Vec<AddressLookupTableAccount> = (0..rng.gen_range(0..=2))
                .map(|_| AddressLookupTableAccount {
                    key: pubkey(&mut rng),
                    addresses: pool
                        .others
                        .iter()
                        .filter(|_| rng.gen_bool(0.5))
                        .copied()
                        .collect(),
                })
                .collect();
            let msg = v0::Message::try_compile(&payer, &ixs, &tables, blockhash).unwrap();
            VersionedTransaction::try_new(VersionedMessage::V0(msg), &signers[..]).unwrap()
        };
        let bytes = bincode::serialize(&tx).unwrap();
        // Oversized ones are tested on their own.
        if bytes.len() <= PACKET_DATA_SIZE {
            out.push((tx, bytes));
        }
    }
    out
}

/// Whether the SDK takes `b` as one well-formed transaction: it deserializes (bincode) to
/// a legacy or v0 transaction using every byte, sanitizes, and fits a packet.
fn sdk_accepts(b: &[u8]) -> bool {
    if b.len() > PACKET_DATA_SIZE {
        return false;
    }
    let Ok(tx) = bincode::deserialize::<VersionedTransaction>(b) else {
        return false;
    };
    if bincode::serialized_size(&tx).ok() != Some(b.len() as u64) {
        return false; // trailing bytes
    }
    !matches!(tx.message, VersionedMessage::V1(_)) && tx.sanitize().is_ok()
}

fn check_matches_sdk(tx: &VersionedTransaction, bytes: &[u8]) {
    let ours = parse(bytes).unwrap_or_else(|e| panic!("{e:?} on {bytes:02x?}"));
    let msg = tx.message.serialize();
    assert_eq!(ours.message, &msg[..], "signed message bytes");
    assert_eq!(
        ours.version,
        match tx.message {
            VersionedMessage::Legacy(_) => Version::Legacy,
            _ => Version::V0,
        }
    );
    assert_eq!(ours.signatures.len(), tx.signatures.len());
    for (a, b) in ours.signatures.iter().zip(&tx.signatures) {
        assert_eq!(&a[..], b.as_ref());
    }
    let h = tx.message.header();
    assert_eq!(
        ours.header.num_required_signatures,
        h.num_required_signatures
    );
    assert_eq!(
        ours.header.num_readonly_signed,
        h.num_readonly_signed_accounts
    );
    assert_eq!(
        ours.header.num_readonly_unsigned,
        h.num_readonly_unsigned_accounts
    );
    let keys = tx.message.static_account_keys();
    assert_eq!(ours.account_keys.len(), keys.len());
    for (a, b) in ours.account_keys.iter().zip(keys) {
        assert_eq!(&a[..], b.as_ref());
    }
    assert_eq!(ours.signers.len(), usize::from(h.num_required_signatures));
    assert_eq!(
        ours.recent_blockhash,
        tx.message.recent_blockhash().as_bytes()
    );
    assert_eq!(
        usize::from(ours.num_instructions),
        tx.message.instructions().len()
    );
    let lookups = tx.message.address_table_lookups().unwrap_or(&[]);
    assert_eq!(usize::from(ours.num_lookups), lookups.len());
    let looked_up: usize = lookups
        .iter()
        .map(|l| l.writable_indexes.len() + l.readonly_indexes.len())
        .sum();
    assert_eq!(usize::from(ours.num_lookup_accounts), looked_up);
    assert_eq!(&ours.txn_id()[..], tx.signatures[0].as_ref());
    for item in ours.items() {
        assert_eq!(verify(item.msg, item.sig, item.pk, Mode::Strict), Ok(()));
    }
}

#[test]
fn sdk_built_transactions_parse_identically_and_verify() {
    let txs = sdk_transactions(200, 1);
    let mut versions = [0usize; 2];
    let mut signer_counts = [0usize; 5];
    let mut with_lookups = 0;
    for (tx, bytes) in &txs {
        assert!(sdk_accepts(bytes));
        check_matches_sdk(tx, bytes);
        let ours = parse(bytes).unwrap();
        versions[usize::from(ours.version == Version::V0)] += 1;
        signer_counts[ours.signers.len()] += 1;
        with_lookups += usize::from(ours.num_lookups > 0);
    }
    // The sample covers both versions, every signer count and lookups.
    assert!(versions.iter().all(|&n| n > 50), "{versions:?}");
    assert!(
        signer_counts[1..].iter().all(|&n| n > 10),
        "{signer_counts:?}"
    );
    assert!(with_lookups > 20, "{with_lookups}");
}

#[test]
fn oversized_transactions_are_too_long() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let signer = keypair(&mut rng);
    for data_len in [1100, 1200, 1300] {
        let ix = Instruction::new_with_bytes(
            pubkey(&mut rng),
            &vec![7u8; data_len],
            vec![AccountMeta::new(signer.pubkey(), true)],
        );
        let msg = Message::new(&[ix], Some(&signer.pubkey()));
        let tx = SdkTransaction::new(&[&signer], msg, hash(&mut rng));
        let bytes = bincode::serialize(&tx).unwrap();
        let vtx = VersionedTransaction::from(tx);
        if bytes.len() > PACKET_DATA_SIZE {
            assert_eq!(parse(&bytes), Err(ParseError::TooLong), "{}", bytes.len());
        } else {
            check_matches_sdk(&vtx, &bytes);
        }
    }
}

#[test]
fn a_changed_signature_or_message_byte_fails_verification() {
    for (_, bytes) in sdk_transactions(20, 2) {
        let mut b = bytes.clone();
        let last = b.len() - 1;
        b[last] ^= 1; // the last byte is instruction data or a lookup index
        if let Ok(tx) = parse(&b) {
            assert!(tx
                .items()
                .any(|i| verify(i.msg, i.sig, i.pk, Mode::Strict).is_err()));
        }
        let mut b = bytes.clone();
        b[1] ^= 0x20; // first signature's R
        let tx = parse(&b).unwrap();
        assert!(tx
            .items()
            .any(|i| verify(i.msg, i.sig, i.pk, Mode::Strict).is_err()));
    }
}

#[test]
fn truncations_agree_with_sdk() {
    for (_, bytes) in sdk_transactions(12, 3) {
        for n in 0..bytes.len() {
            let cut = &bytes[..n];
            assert_eq!(parse(cut), Err(ParseError::TooShort), "cut at {n}");
            assert!(!sdk_accepts(cut), "SDK accepts a cut at {n}");
        }
    }
}

#[test]
fn bit_flips_agree_with_sdk() {
    let mut accepted = 0;
    let mut rejected = 0;
    for (_, bytes) in sdk_transactions(8, 4) {
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                let ours = parse(&b);
                assert_eq!(
                    ours.is_ok(),
                    sdk_accepts(&b),
                    "byte {i} bit {bit}: ours {ours:?}"
                );
                if ours.is_ok() {
                    accepted += 1;
                } else {
                    rejected += 1;
                }
            }
        }
    }
    assert!(accepted > 1000 && rejected > 100, "{accepted} {rejected}");
}

#[test]
fn random_multi_byte_corruption_agrees_with_sdk() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    for (_, bytes) in sdk_transactions(16, 5) {
        for _ in 0..500 {
            let mut b = bytes.clone();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
            match rng.gen_range(0..3) {
                0 => b.truncate(rng.gen_range(0..=b.len())),
                1 => b.extend((0..rng.gen_range(1..8)).map(|_| rng.gen::<u8>())),
                _ => {}
            }
            assert_eq!(parse(&b).is_ok(), sdk_accepts(&b), "{:?}", parse(&b));
        }
    }
}

/// Positions of the compact-u16 fields of a parsed transaction: the signature count,
/// the account key count and the instruction count.
fn compact_fields(bytes: &[u8]) -> [usize; 3] {
    let tx = parse(bytes).unwrap();
    let msg = bytes.len() - tx.message.len();
    let keys = msg + 3 + usize::from(tx.version == Version::V0);
    let ixs = keys + 1 + 32 * tx.account_keys.len() + 32;
    [0, keys, ixs]
}

#[test]
fn non_canonical_compact_u16_is_rejected_like_sdk() {
    for (_, bytes) in sdk_transactions(20, 6) {
        for at in compact_fields(&bytes) {
            let v = bytes[at];
            assert!(v < 0x80, "one-byte counts in these transactions");
            // Aliases of v: [v|0x80, 0x00] and [v|0x80, 0x80, 0x00].
            for alias in [&[v | 0x80, 0x00][..], &[v | 0x80, 0x80, 0x00]] {
                let mut b = bytes[..at].to_vec();
                b.extend_from_slice(alias);
                b.extend_from_slice(&bytes[at + 1..]);
                assert_eq!(parse(&b), Err(ParseError::BadCompactU16), "at {at}");
                assert!(!sdk_accepts(&b));
            }
        }
    }
}

#[test]
fn compact_u16_matches_short_vec_on_every_short_input() {
    let mut buf = [0u8; 3];
    for len in 0..=3usize {
        let total = 1u32 << (8 * len);
        for x in 0..total {
            for (i, byte) in buf.iter_mut().enumerate().take(len) {
                *byte = (x >> (8 * i)) as u8;
            }
            let input = &buf[..len];
            let ours = decode_compact_u16(input).map(|(v, n)| (usize::from(v), n));
            let theirs = decode_shortu16_len(input);
            assert_eq!(ours.ok(), theirs.ok(), "{input:02x?}");
        }
    }
}

#[test]
fn compact_u16_matches_short_vec_serde_decoder() {
    // Every two-byte input, and every three-byte input whose first two bytes continue
    // (the others are decided by their first one or two bytes).
    let mut inputs: Vec<Vec<u8>> = (0..=u16::MAX).map(|x| x.to_le_bytes().to_vec()).collect();
    for a in 0x80..=0xffu8 {
        for b in 0x80..=0xffu8 {
            for c in 0..=0xffu8 {
                inputs.push(vec![a, b, c]);
            }
        }
    }
    for input in inputs {
        let ours = decode_compact_u16(&input).ok().map(|(v, _)| v);
        let theirs = bincode::deserialize::<ShortU16>(&input).ok().map(|s| s.0);
        assert_eq!(ours, theirs, "{input:02x?}");
    }
}

#[test]
fn generated_traffic_is_what_the_sdk_reads() {
    for g in wirespeed_sigverify::gen::generate(300, 0.1, 0.2, 9) {
        let tx: VersionedTransaction = bincode::deserialize(&g.bytes).unwrap();
        assert!(sdk_accepts(&g.bytes));
        assert!(matches!(tx.message, VersionedMessage::Legacy(_)));
        let ours = parse(&g.bytes).unwrap();
        assert_eq!(ours.message, &tx.message.serialize()[..]);
        assert_eq!(&g.txn_id[..], tx.signatures[0].as_ref());
    }
}

/// A transaction assembled field by field (no signing: all-zero signatures), to reach
/// the sanitization edges.
struct Raw {
    sigs: usize,
    header: (u8, u8, u8),
    keys: u8,
    ixs: Vec<(u8, Vec<u8>)>,
    /// `None`: legacy; `Some(lookups)`: v0 with (writable, readonly) index counts.
    lookups: Option<Vec<(u8, u8)>>,
}

impl Raw {
    fn bytes(&self) -> Vec<u8> {
        use solana_message::compiled_instruction::CompiledInstruction;
        use solana_message::v0::MessageAddressTableLookup;
        use solana_message::MessageHeader;
        use solana_transaction::Signature;
        let header = MessageHeader {
            num_required_signatures: self.header.0,
            num_readonly_signed_accounts: self.header.1,
            num_readonly_unsigned_accounts: self.header.2,
        };
        let account_keys: Vec<Pubkey> = (0..self.keys)
            .map(|i| Pubkey::new_from_array([i + 1; 32]))
            .collect();
        let instructions: Vec<CompiledInstruction> = self
            .ixs
            .iter()
            .map(|(p, a)| CompiledInstruction::new_from_raw_parts(*p, vec![1, 2], a.clone()))
            .collect();
        let recent_blockhash = Hash::new_from_array([9; 32]);
        let message = match &self.lookups {
            None => VersionedMessage::Legacy(Message {
                header,
                account_keys,
                recent_blockhash,
                instructions,
            }),
            Some(l) => VersionedMessage::V0(v0::Message {
                header,
                account_keys,
                recent_blockhash,
                instructions,
                address_table_lookups: l
                    .iter()
                    .map(|&(w, r)| MessageAddressTableLookup {
                        account_key: Pubkey::new_from_array([0x77; 32]),
                        writable_indexes: (0..w).collect(),
                        readonly_indexes: (0..r).collect(),
                    })
                    .collect(),
            }),
        };
        let tx = VersionedTransaction {
            signatures: vec![Signature::default(); self.sigs],
            message,
        };
        bincode::serialize(&tx).unwrap()
    }
}

#[test]
fn sanitization_edges_agree_with_sdk() {
    use ParseError::*;
    let ok = || Raw {
        sigs: 1,
        header: (1, 0, 1),
        keys: 3,
        ixs: vec![(2, vec![0, 1])],
        lookups: None,
    };
    let v0 = |lookups: Vec<(u8, u8)>, ixs: Vec<(u8, Vec<u8>)>| Raw {
        lookups: Some(lookups),
        ixs,
        ..ok()
    };
    let cases: Vec<(&str, Raw, Result<(), ParseError>)> = vec![
        ("baseline legacy", ok(), Ok(())),
        ("baseline v0", v0(vec![], vec![(2, vec![0, 1])]), Ok(())),
        (
            "no instructions",
            Raw {
                ixs: vec![],
                ..ok()
            },
            Ok(()),
        ),
        (
            "no signatures",
            Raw {
                sigs: 0,
                header: (0, 0, 0),
                ..ok()
            },
            Err(NoSignatures),
        ),
        (
            "fewer signatures",
            Raw {
                sigs: 1,
                header: (2, 0, 1),
                ..ok()
            },
            Err(SignatureCountMismatch),
        ),
        (
            "more signatures",
            Raw { sigs: 2, ..ok() },
            Err(SignatureCountMismatch),
        ),
        (
            "signers past keys",
            Raw {
                sigs: 2,
                header: (2, 0, 2),
                ..ok()
            },
            Err(TooFewAccounts),
        ),
        (
            "all keys signers",
            Raw {
                sigs: 3,
                header: (3, 0, 0),
                ixs: vec![],
                ..ok()
            },
            Ok(()),
        ),
        (
            "read-only payer",
            Raw {
                header: (1, 1, 1),
                ..ok()
            },
            Err(ReadonlyFeePayer),
        ),
        (
            "payer as program",
            Raw {
                ixs: vec![(0, vec![])],
                ..ok()
            },
            Err(BadProgramIndex),
        ),
        (
            "program past keys",
            Raw {
                ixs: vec![(3, vec![])],
                ..ok()
            },
            Err(BadProgramIndex),
        ),
        (
            "account past keys",
            Raw {
                ixs: vec![(2, vec![3])],
                ..ok()
            },
            Err(AccountIndexOutOfRange),
        ),
        (
            "looked-up account",
            v0(vec![(1, 0)], vec![(2, vec![3])]),
            Ok(()),
        ),
        (
            "past looked-up",
            v0(vec![(1, 0)], vec![(2, vec![4])]),
            Err(AccountIndexOutOfRange),
        ),
        (
            "looked-up program",
            v0(vec![(1, 0)], vec![(3, vec![])]),
            Err(BadProgramIndex),
        ),
        (
            "empty lookup",
            v0(vec![(1, 0), (0, 0)], vec![]),
            Err(EmptyLookup),
        ),
        (
            "256 accounts",
            v0(vec![(127, 126)], vec![(2, vec![255])]),
            Ok(()),
        ),
        (
            "257 accounts",
            v0(vec![(127, 127)], vec![]),
            Err(TooManyAccounts),
        ),
    ];
    for (name, raw, want) in cases {
        let b = raw.bytes();
        assert_eq!(parse(&b).map(|_| ()), want, "{name}");
        assert_eq!(sdk_accepts(&b), want.is_ok(), "SDK on {name}");
    }

    // Message versions: only 0 is known (the SDK also reads 1, a format this parser
    // does not take, and refuses 127, the off-chain message prefix).
    let mut b = v0(vec![], vec![(2, vec![0])]).bytes();
    let at = 1 + 64;
    assert_eq!(b[at], 0x80);
    for version in [0x81u8, 0x82, 0xff] {
        b[at] = version;
        assert_eq!(parse(&b), Err(UnknownVersion));
        assert!(!sdk_accepts(&b));
    }
}

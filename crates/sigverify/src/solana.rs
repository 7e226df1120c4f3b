//! Solana wire-format transactions: a zero-copy parser and the compact-u16 codec.
//!
//! Layout (all lengths are compact-u16, see [`decode_compact_u16`]):
//!
//! ```text
//! transaction = sig_count | signature[64] * sig_count | message
//! message     = [0x80 | version]            (v0 only; legacy has no prefix)
//!               num_required_signatures u8 | num_readonly_signed u8 | num_readonly_unsigned u8
//!               key_count | key[32] * key_count | recent_blockhash[32]
//!               ix_count | (program_id_index u8 | n | account_index u8 * n | len | data[len]) * ix_count
//!               lookup_count | (table_key[32] | n | writable u8 * n | m | readonly u8 * m) * lookup_count   (v0 only)
//! ```
//!
//! The signed bytes are exactly `message`: everything after the signatures. [`parse`]
//! checks the wire format (lengths, compact-u16 canonical form, no trailing bytes, at most
//! [`PACKET_DATA_SIZE`] bytes) and the message sanitization rules that Solana applies
//! before any account is loaded (the signature count equals `num_required_signatures`,
//! the header fits the static keys, the fee payer is writable, program ids are static
//! non-payer keys, account indices are in range, every lookup table loads an account, at
//! most 256 accounts in all). It never allocates and never panics; every length is
//! checked against the bytes left before it is used.

use std::fmt;

use wirespeed_ed25519::Item;

/// Largest transaction accepted, in bytes (Solana's `PACKET_DATA_SIZE`: an IPv6 minimum
/// MTU of 1280 less 40 bytes of IPv6 header and 8 of UDP header).
pub const PACKET_DATA_SIZE: usize = 1232;
/// Length of an Ed25519 signature.
pub const SIGNATURE_LEN: usize = 64;
/// Length of an account key (an Ed25519 public key for signers).
pub const PUBKEY_LEN: usize = 32;
/// Length of the recent blockhash.
pub const HASH_LEN: usize = 32;
/// Most accounts (static plus looked up) a message may name: indices are one byte.
pub const MAX_ACCOUNTS: usize = 256;
/// The bit that marks a versioned message in the first message byte.
pub const VERSION_PREFIX: u8 = 0x80;

/// Why bytes are not a well-formed transaction. One variant per reason, in the order the
/// parser meets them; [`ParseError::reason`] gives a short name for counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParseError {
    /// The input ended inside a field.
    TooShort,
    /// The input is longer than [`PACKET_DATA_SIZE`].
    TooLong,
    /// A compact-u16 is not canonical: longer than 3 bytes, a zero final byte after the
    /// first (an alias of a shorter encoding), or a value above `u16::MAX`.
    BadCompactU16,
    /// The signature count is zero.
    NoSignatures,
    /// A versioned message whose version is not 0.
    UnknownVersion,
    /// The signature count differs from the header's `num_required_signatures`.
    SignatureCountMismatch,
    /// The header names more signer and read-only unsigned accounts than there are
    /// static account keys.
    TooFewAccounts,
    /// `num_readonly_signed >= num_required_signatures`: no writable fee payer.
    ReadonlyFeePayer,
    /// An instruction's program id index is 0 (the fee payer) or not a static key.
    BadProgramIndex,
    /// An instruction names an account index past the last account.
    AccountIndexOutOfRange,
    /// An address table lookup that loads no account.
    EmptyLookup,
    /// More than [`MAX_ACCOUNTS`] accounts, static and looked up together.
    TooManyAccounts,
    /// Bytes left over after the message.
    TrailingBytes,
}

impl ParseError {
    /// Every reason, in declaration order (`ALL[e.index()] == e`).
    pub const ALL: [ParseError; 13] = [
        ParseError::TooShort,
        ParseError::TooLong,
        ParseError::BadCompactU16,
        ParseError::NoSignatures,
        ParseError::UnknownVersion,
        ParseError::SignatureCountMismatch,
        ParseError::TooFewAccounts,
        ParseError::ReadonlyFeePayer,
        ParseError::BadProgramIndex,
        ParseError::AccountIndexOutOfRange,
        ParseError::EmptyLookup,
        ParseError::TooManyAccounts,
        ParseError::TrailingBytes,
    ];

    /// A short snake_case name, for counters and logs.
    pub fn reason(&self) -> &'static str {
        match self {
            ParseError::TooShort => "too_short",
            ParseError::TooLong => "too_long",
            ParseError::BadCompactU16 => "bad_compact_u16",
            ParseError::NoSignatures => "no_signatures",
            ParseError::UnknownVersion => "unknown_version",
            ParseError::SignatureCountMismatch => "signature_count_mismatch",
            ParseError::TooFewAccounts => "too_few_accounts",
            ParseError::ReadonlyFeePayer => "readonly_fee_payer",
            ParseError::BadProgramIndex => "bad_program_index",
            ParseError::AccountIndexOutOfRange => "account_index_out_of_range",
            ParseError::EmptyLookup => "empty_lookup",
            ParseError::TooManyAccounts => "too_many_accounts",
            ParseError::TrailingBytes => "trailing_bytes",
        }
    }

    /// This reason's position in [`ParseError::ALL`], for counter arrays.
    pub fn index(&self) -> usize {
        *self as usize
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ParseError::TooShort => "transaction truncated",
            ParseError::TooLong => "transaction longer than 1232 bytes",
            ParseError::BadCompactU16 => "non-canonical compact-u16 length",
            ParseError::NoSignatures => "transaction has no signatures",
            ParseError::UnknownVersion => "unknown message version",
            ParseError::SignatureCountMismatch => {
                "signature count differs from num_required_signatures"
            }
            ParseError::TooFewAccounts => "header names more accounts than the message has",
            ParseError::ReadonlyFeePayer => "no writable fee payer",
            ParseError::BadProgramIndex => "program id index is the fee payer or not static",
            ParseError::AccountIndexOutOfRange => "instruction account index out of range",
            ParseError::EmptyLookup => "address table lookup loads no account",
            ParseError::TooManyAccounts => "more than 256 accounts",
            ParseError::TrailingBytes => "trailing bytes after the message",
        };
        f.write_str(s)
    }
}

impl std::error::Error for ParseError {}

/// The message format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// No version prefix.
    Legacy,
    /// Version 0 (prefix byte 0x80), with address table lookups.
    V0,
}

/// The three header counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MessageHeader {
    /// Signatures required; the first this many account keys are the signers.
    pub num_required_signatures: u8,
    /// The last this many signers are read-only.
    pub num_readonly_signed: u8,
    /// The last this many static non-signer keys are read-only.
    pub num_readonly_unsigned: u8,
}

/// A parsed transaction: borrowed views into the input bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transaction<'a> {
    /// The message format.
    pub version: Version,
    /// The signatures, one per signer, in signer order (never empty).
    pub signatures: &'a [[u8; SIGNATURE_LEN]],
    /// The signed bytes: everything after the signatures.
    pub message: &'a [u8],
    /// The header counts.
    pub header: MessageHeader,
    /// The static account keys.
    pub account_keys: &'a [[u8; PUBKEY_LEN]],
    /// The signers' keys: the first `num_required_signatures` static keys (as many as
    /// there are signatures).
    pub signers: &'a [[u8; PUBKEY_LEN]],
    /// The recent blockhash.
    pub recent_blockhash: &'a [u8; HASH_LEN],
    /// Number of instructions.
    pub num_instructions: u16,
    /// Number of address table lookups (0 for legacy).
    pub num_lookups: u16,
    /// Accounts loaded through lookups (writable plus read-only indexes; 0 for legacy).
    pub num_lookup_accounts: u16,
}

impl<'a> Transaction<'a> {
    /// The transaction id: the first signature.
    pub fn txn_id(&self) -> [u8; SIGNATURE_LEN] {
        txn_id(self)
    }

    /// One verifier item per signature: (message, signature, signer key).
    pub fn items(&self) -> impl ExactSizeIterator<Item = Item<'a>> + 'a {
        let msg = self.message;
        self.signatures
            .iter()
            .zip(self.signers.iter())
            .map(move |(sig, pk)| Item {
                msg,
                sig: sig.as_slice(),
                pk: pk.as_slice(),
            })
    }

    /// Static plus looked-up accounts.
    pub fn num_accounts(&self) -> usize {
        self.account_keys.len() + usize::from(self.num_lookup_accounts)
    }
}

/// Solana's transaction id, used for deduplication: the first signature.
pub fn txn_id(tx: &Transaction<'_>) -> [u8; SIGNATURE_LEN] {
    // `parse` never returns a transaction without signatures; a hand-built one gets zeros.
    tx.signatures.first().copied().unwrap_or([0; SIGNATURE_LEN])
}

/// The first signature of a packet without parsing the rest: for any packet [`parse`]
/// accepts this equals its [`txn_id`] (a cheap id for stages after the parser).
pub fn first_signature(bytes: &[u8]) -> Option<[u8; SIGNATURE_LEN]> {
    let (count, at) = decode_compact_u16(bytes).ok()?;
    if count == 0 {
        return None;
    }
    bytes.get(at..at + SIGNATURE_LEN)?.try_into().ok()
}

/// Decodes a compact-u16 ("short_vec" length) at the start of `bytes`: 7 bits per byte,
/// least significant first, the high bit set on every byte but the last. Returns the
/// value and the bytes used. Exactly Solana's `decode_shortu16_len` rules: at most 3
/// bytes, the third byte may not continue, a byte after the first may not be 0 (that
/// would alias a shorter encoding), and the value must fit in 16 bits.
/// [`ParseError::TooShort`] if `bytes` ends before the last byte.
pub fn decode_compact_u16(bytes: &[u8]) -> Result<(u16, usize), ParseError> {
    let mut val: u32 = 0;
    for nth in 0..3 {
        let Some(&b) = bytes.get(nth) else {
            return Err(ParseError::TooShort);
        };
        if b == 0 && nth != 0 {
            return Err(ParseError::BadCompactU16);
        }
        val |= u32::from(b & 0x7f) << (7 * nth);
        if b & 0x80 == 0 {
            let v = u16::try_from(val).map_err(|_| ParseError::BadCompactU16)?;
            return Ok((v, nth + 1));
        }
    }
    Err(ParseError::BadCompactU16)
}

/// Appends the canonical compact-u16 encoding of `v` (1 to 3 bytes).
pub fn encode_compact_u16(v: u16, out: &mut Vec<u8>) {
    let mut v = v;
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A bounds-checked reader over the input.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ParseError> {
        let end = self.pos.checked_add(n).ok_or(ParseError::TooShort)?;
        let s = self.buf.get(self.pos..end).ok_or(ParseError::TooShort)?;
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, ParseError> {
        let b = *self.buf.get(self.pos).ok_or(ParseError::TooShort)?;
        self.pos += 1;
        Ok(b)
    }

    fn compact_u16(&mut self) -> Result<u16, ParseError> {
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        let (v, n) = decode_compact_u16(rest)?;
        self.pos += n;
        Ok(v)
    }

    fn arrays<const N: usize>(&mut self, count: usize) -> Result<&'a [[u8; N]], ParseError> {
        let len = count.checked_mul(N).ok_or(ParseError::TooShort)?;
        let (arrays, rest) = self.take(len)?.as_chunks::<N>();
        debug_assert!(rest.is_empty());
        Ok(arrays)
    }

    fn array<const N: usize>(&mut self) -> Result<&'a [u8; N], ParseError> {
        self.take(N)?.try_into().map_err(|_| ParseError::TooShort)
    }

    /// A compact-u16 count followed by that many bytes.
    fn byte_list(&mut self) -> Result<&'a [u8], ParseError> {
        let n = self.compact_u16()?;
        self.take(usize::from(n))
    }
}

/// Parses one transaction that must fill `bytes` exactly. See the module docs for the
/// rules; the first rule broken is reported.
pub fn parse(bytes: &[u8]) -> Result<Transaction<'_>, ParseError> {
    if bytes.len() > PACKET_DATA_SIZE {
        return Err(ParseError::TooLong);
    }
    let mut c = Cursor { buf: bytes, pos: 0 };

    let sig_count = c.compact_u16()?;
    if sig_count == 0 {
        return Err(ParseError::NoSignatures);
    }
    let signatures = c.arrays::<SIGNATURE_LEN>(usize::from(sig_count))?;
    let message_start = c.pos;

    let first = c.u8()?;
    let (version, num_required_signatures) = if first & VERSION_PREFIX != 0 {
        if first & !VERSION_PREFIX != 0 {
            return Err(ParseError::UnknownVersion);
        }
        (Version::V0, c.u8()?)
    } else {
        (Version::Legacy, first)
    };
    let header = MessageHeader {
        num_required_signatures,
        num_readonly_signed: c.u8()?,
        num_readonly_unsigned: c.u8()?,
    };
    if sig_count != u16::from(header.num_required_signatures) {
        return Err(ParseError::SignatureCountMismatch);
    }

    let key_count = usize::from(c.compact_u16()?);
    let account_keys = c.arrays::<PUBKEY_LEN>(key_count)?;
    let signer_count = usize::from(header.num_required_signatures);
    if signer_count + usize::from(header.num_readonly_unsigned) > key_count {
        return Err(ParseError::TooFewAccounts);
    }
    if header.num_readonly_signed >= header.num_required_signatures {
        return Err(ParseError::ReadonlyFeePayer);
    }
    let signers = account_keys
        .get(..signer_count)
        .ok_or(ParseError::TooFewAccounts)?;
    let recent_blockhash = c.array::<HASH_LEN>()?;

    let num_instructions = c.compact_u16()?;
    // The largest account index named by any instruction; checked once lookups are known.
    let mut max_account_index: Option<u8> = None;
    for _ in 0..num_instructions {
        let program = c.u8()?;
        if program == 0 || usize::from(program) >= key_count {
            return Err(ParseError::BadProgramIndex);
        }
        let accounts = c.byte_list()?;
        if let Some(&m) = accounts.iter().max() {
            max_account_index = max_account_index.max(Some(m));
        }
        c.byte_list()?; // instruction data
    }

    let mut num_lookups = 0u16;
    let mut lookup_accounts = 0usize;
    if version == Version::V0 {
        num_lookups = c.compact_u16()?;
        for _ in 0..num_lookups {
            c.array::<PUBKEY_LEN>()?; // table address
            let writable = c.byte_list()?.len();
            let readonly = c.byte_list()?.len();
            if writable + readonly == 0 {
                return Err(ParseError::EmptyLookup);
            }
            lookup_accounts += writable + readonly;
        }
    }

    let total = key_count + lookup_accounts;
    if total > MAX_ACCOUNTS {
        return Err(ParseError::TooManyAccounts);
    }
    if let Some(m) = max_account_index {
        if usize::from(m) >= total {
            return Err(ParseError::AccountIndexOutOfRange);
        }
    }
    if c.pos != bytes.len() {
        return Err(ParseError::TrailingBytes);
    }

    Ok(Transaction {
        version,
        signatures,
        message: bytes.get(message_start..).unwrap_or(&[]),
        header,
        account_keys,
        signers,
        recent_blockhash,
        num_instructions,
        num_lookups,
        // total <= 256 here.
        num_lookup_accounts: u16::try_from(lookup_accounts).unwrap_or(u16::MAX),
    })
}

/// One instruction of a message to encode, with indices into the account keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompiledInstruction<'a> {
    /// Index of the program's account key.
    pub program_id_index: u8,
    /// Indices of the accounts the instruction uses.
    pub accounts: &'a [u8],
    /// The instruction data.
    pub data: &'a [u8],
}

/// A list with more than `u16::MAX` entries: its length has no compact-u16 encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LengthOverflow;

impl fmt::Display for LengthOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("list longer than 65535 entries")
    }
}

impl std::error::Error for LengthOverflow {}

fn put_len(n: usize, out: &mut Vec<u8>) -> Result<(), LengthOverflow> {
    encode_compact_u16(u16::try_from(n).map_err(|_| LengthOverflow)?, out);
    Ok(())
}

/// Appends a legacy message. Only the encoding is done here: whether the message
/// follows the rules [`parse`] checks is the caller's business.
pub fn encode_legacy_message(
    header: MessageHeader,
    account_keys: &[[u8; PUBKEY_LEN]],
    recent_blockhash: &[u8; HASH_LEN],
    instructions: &[CompiledInstruction<'_>],
    out: &mut Vec<u8>,
) -> Result<(), LengthOverflow> {
    out.extend_from_slice(&[
        header.num_required_signatures,
        header.num_readonly_signed,
        header.num_readonly_unsigned,
    ]);
    put_len(account_keys.len(), out)?;
    for k in account_keys {
        out.extend_from_slice(k);
    }
    out.extend_from_slice(recent_blockhash);
    put_len(instructions.len(), out)?;
    for ix in instructions {
        out.push(ix.program_id_index);
        put_len(ix.accounts.len(), out)?;
        out.extend_from_slice(ix.accounts);
        put_len(ix.data.len(), out)?;
        out.extend_from_slice(ix.data);
    }
    Ok(())
}

/// A transaction on the wire: the signatures, then the signed message bytes.
pub fn encode_transaction(
    signatures: &[[u8; SIGNATURE_LEN]],
    message: &[u8],
) -> Result<Vec<u8>, LengthOverflow> {
    let mut out = Vec::with_capacity(3 + signatures.len() * SIGNATURE_LEN + message.len());
    put_len(signatures.len(), &mut out)?;
    for s in signatures {
        out.extend_from_slice(s);
    }
    out.extend_from_slice(message);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_signature_is_the_txn_id_of_every_parsed_packet() {
        let traffic = crate::gen::generate(300, 0.1, 0.1, 7);
        for g in &traffic {
            let t = parse(&g.bytes).expect("generated packets parse");
            assert_eq!(first_signature(&g.bytes), Some(t.txn_id()));
        }
        // Truncations and garbage: no panic, and None where there is no signature.
        let p = &traffic[0].bytes;
        for cut in 0..70 {
            let got = first_signature(&p[..cut]);
            assert_eq!(got.is_some(), cut >= 65, "cut {cut}");
        }
        assert_eq!(first_signature(&[0]), None);
        assert_eq!(first_signature(&[0x80, 0x80, 0x80, 0x80]), None);
    }

    #[test]
    fn encoder_output_parses() {
        let keys = [[1u8; 32], [2; 32], [3; 32]];
        let ixs = [CompiledInstruction {
            program_id_index: 2,
            accounts: &[0, 1],
            data: &[9; 200],
        }];
        let header = MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed: 0,
            num_readonly_unsigned: 1,
        };
        let mut msg = Vec::new();
        encode_legacy_message(header, &keys, &[7; 32], &ixs, &mut msg).unwrap();
        let tx_bytes = encode_transaction(&[[5; 64]], &msg).unwrap();
        let tx = parse(&tx_bytes).unwrap();
        assert_eq!(tx.message, &msg[..]);
        assert_eq!(tx.header, header);
        assert_eq!(tx.account_keys, &keys);
        assert_eq!(tx.signers, &keys[..1]);
    }

    #[test]
    fn compact_u16_known_encodings() {
        let cases: [(u16, &[u8]); 9] = [
            (0x0000, &[0x00]),
            (0x007f, &[0x7f]),
            (0x0080, &[0x80, 0x01]),
            (0x00ff, &[0xff, 0x01]),
            (0x0100, &[0x80, 0x02]),
            (0x07ff, &[0xff, 0x0f]),
            (0x3fff, &[0xff, 0x7f]),
            (0x4000, &[0x80, 0x80, 0x01]),
            (0xffff, &[0xff, 0xff, 0x03]),
        ];
        for (v, enc) in cases {
            assert_eq!(decode_compact_u16(enc), Ok((v, enc.len())), "{v:#x}");
            let mut out = Vec::new();
            encode_compact_u16(v, &mut out);
            assert_eq!(out, enc);
        }
    }

    #[test]
    fn compact_u16_rejects_aliases_overflow_and_length() {
        let bad: [&[u8]; 12] = [
            &[0x80, 0x00],
            &[0x80, 0x80, 0x00],
            &[0xff, 0x00],
            &[0xff, 0x80, 0x00],
            &[0x80, 0x81, 0x00],
            &[0xff, 0x81, 0x00],
            &[0x80, 0x82, 0x00],
            &[0xff, 0x8f, 0x00],
            &[0xff, 0xff, 0x00],
            &[0x80, 0x80, 0x80, 0x00],
            &[0x80, 0x80, 0x04],
            &[0x80, 0x80, 0x06],
        ];
        for b in bad {
            assert_eq!(
                decode_compact_u16(b),
                Err(ParseError::BadCompactU16),
                "{b:02x?}"
            );
        }
        assert_eq!(decode_compact_u16(&[]), Err(ParseError::TooShort));
        assert_eq!(decode_compact_u16(&[0x80]), Err(ParseError::TooShort));
        assert_eq!(decode_compact_u16(&[0xff, 0xff]), Err(ParseError::TooShort));
    }

    #[test]
    fn compact_u16_roundtrips_every_value() {
        let mut out = Vec::with_capacity(3);
        for v in 0..=u16::MAX {
            out.clear();
            encode_compact_u16(v, &mut out);
            out.push(0xaa); // a following byte is not consumed
            assert_eq!(decode_compact_u16(&out), Ok((v, out.len() - 1)));
        }
    }

    #[test]
    fn reasons_are_distinct_and_indexed() {
        for (i, e) in ParseError::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
            assert!(!e.to_string().is_empty());
        }
        let mut names: Vec<_> = ParseError::ALL.iter().map(|e| e.reason()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ParseError::ALL.len());
    }

    #[test]
    fn minimal_legacy_transaction() {
        // 1 signature, header (1, 0, 1), keys [payer, program], blockhash, 1 instruction
        // with program 1, accounts [0], data [7].
        let mut b = vec![1u8];
        b.extend_from_slice(&[0x11; 64]);
        b.extend_from_slice(&[1, 0, 1, 2]);
        b.extend_from_slice(&[0xaa; 32]);
        b.extend_from_slice(&[0xbb; 32]);
        b.extend_from_slice(&[0xcc; 32]);
        b.extend_from_slice(&[1, 1, 1, 0, 1, 7]);
        let tx = parse(&b).unwrap();
        assert_eq!(tx.version, Version::Legacy);
        assert_eq!(tx.signatures, &[[0x11; 64]]);
        assert_eq!(tx.signers, &[[0xaa; 32]]);
        assert_eq!(tx.account_keys.len(), 2);
        assert_eq!(tx.recent_blockhash, &[0xcc; 32]);
        assert_eq!(tx.message, &b[65..]);
        assert_eq!(tx.num_instructions, 1);
        assert_eq!(txn_id(&tx), [0x11; 64]);
        assert_eq!(tx.items().len(), 1);

        let mut t = b.clone();
        t.push(0);
        assert_eq!(parse(&t), Err(ParseError::TrailingBytes));
        let mut t = b.clone();
        t[b.len() - 6 + 1] = 0; // program id index 0 is the payer
        assert_eq!(parse(&t), Err(ParseError::BadProgramIndex));
        let mut t = b.clone();
        t[b.len() - 6 + 3] = 2; // account index 2 of 2 accounts
        assert_eq!(parse(&t), Err(ParseError::AccountIndexOutOfRange));
        let mut t = b.clone();
        t[66] = 1; // one read-only signer of one: no writable payer
        assert_eq!(parse(&t), Err(ParseError::ReadonlyFeePayer));
        let mut t = b.clone();
        t[67] = 2; // 1 signer + 2 read-only unsigned > 2 keys
        assert_eq!(parse(&t), Err(ParseError::TooFewAccounts));
        let mut t = b.clone();
        t[65] = 2; // header wants 2 signatures, 1 present
        assert_eq!(parse(&t), Err(ParseError::SignatureCountMismatch));
        let mut t = b.clone();
        t[0] = 0;
        assert_eq!(parse(&t), Err(ParseError::NoSignatures));
        let mut t = b.clone();
        t.insert(65, 0x81); // version 1
        assert_eq!(parse(&t), Err(ParseError::UnknownVersion));
        assert_eq!(
            parse(&[0u8; PACKET_DATA_SIZE + 1]),
            Err(ParseError::TooLong)
        );
    }
}

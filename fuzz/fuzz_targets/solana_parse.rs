//! The Solana transaction parser on arbitrary bytes: never panics; an accepted
//! transaction is consistent (signatures and signers agree with the header, the signed
//! message is the input's tail right after the signatures); every strict prefix of an
//! accepted transaction is `TooShort` and one more byte is `TrailingBytes` (or
//! `TooLong`); compact-u16 decoding round-trips through the encoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_sigverify::solana::{
    decode_compact_u16, encode_compact_u16, parse, ParseError, PACKET_DATA_SIZE,
};

fuzz_target!(|data: &[u8]| {
    if let Ok((v, n)) = decode_compact_u16(data) {
        let mut enc = Vec::new();
        encode_compact_u16(v, &mut enc);
        assert_eq!(&enc[..], &data[..n], "canonical encodings only");
    }

    let Ok(tx) = parse(data) else {
        return;
    };
    let n = tx.signatures.len();
    assert!(n >= 1 && n == usize::from(tx.header.num_required_signatures));
    assert_eq!(tx.signers, &tx.account_keys[..n]);
    let sig_end = data.len() - tx.message.len();
    assert_eq!(&data[sig_end..], tx.message);
    assert_eq!(
        &data[sig_end - 64 * n..sig_end],
        tx.signatures.as_flattened()
    );
    assert!(tx.num_accounts() <= 256);
    assert_eq!(tx.txn_id(), tx.signatures[0]);

    assert_eq!(parse(&data[..data.len() - 1]), Err(ParseError::TooShort));
    let mut longer = data.to_vec();
    longer.push(0);
    let want = if longer.len() > PACKET_DATA_SIZE {
        ParseError::TooLong
    } else {
        ParseError::TrailingBytes
    };
    assert_eq!(parse(&longer), Err(want));
});

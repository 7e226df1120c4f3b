//! Redis's cluster bus codec on arbitrary bytes (what anyone who reaches the bus port
//! can send): never panics, never reads past the message; the bytes are tried as they
//! come and behind a valid header (so every type's data is reached). A message that
//! decodes encodes back to the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_kvs::cluster::redis_bus::{decode, encode, HEADER_LEN, SIG, VERSION};

fn check(buf: &[u8]) {
    if let Ok((m, n)) = decode(buf) {
        assert!(n <= buf.len());
        let again = encode(&m);
        let (back, _) = decode(&again).expect("a message encoded here decodes");
        assert_eq!(back, m);
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    // A header that holds: the signature, the length of what follows, version 1; the
    // type, count and the rest from the input.
    let mut msg = vec![0u8; HEADER_LEN];
    msg[..4].copy_from_slice(SIG);
    msg[8..10].copy_from_slice(&VERSION.to_be_bytes());
    let head = data.len().min(HEADER_LEN - 12);
    msg[12..12 + head].copy_from_slice(&data[..head]);
    msg.extend_from_slice(&data[head..]);
    let total = msg.len() as u32;
    msg[4..8].copy_from_slice(&total.to_be_bytes());
    check(&msg);
});

//! RESTORE's payload decoder on arbitrary bytes: never panics; the bytes taken as a
//! value's serialization (sealed with the RDB version and checksum, so the decoder
//! itself is reached) give a value that DUMPs and restores to itself, or "Bad data
//! format"; taken as a whole payload they rarely pass the checksum and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_kvs::cmd::dump::{crc64, deserialize, serialize, RestoreError};

fuzz_target!(|data: &[u8]| {
    let _ = deserialize(data);
    let mut sealed = data.to_vec();
    sealed.extend_from_slice(&11u16.to_le_bytes());
    let crc = crc64(&sealed);
    sealed.extend_from_slice(&crc.to_le_bytes());
    match deserialize(&sealed) {
        Ok(v) => assert_eq!(deserialize(&serialize(&v)), Ok(v)),
        Err(e) => assert_eq!(e, RestoreError::Format),
    }
});

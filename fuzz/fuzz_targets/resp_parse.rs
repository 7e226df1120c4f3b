//! The RESP request parser on arbitrary bytes: never panics, stays inside the buffer,
//! and gives the same answer whether the bytes arrive whole or in two pieces.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_kvs::resp::{parse, Limits};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_bulk: 1 << 16,
        max_multibulk: 1 << 10,
        max_inline: 1 << 12,
    };
    // The parser resolves inline escapes in place: each parse gets its own copy.
    let mut args = Vec::new();
    let whole = parse(&mut data.to_vec(), &limits, &mut args);
    if let Ok(Some(len)) = whole {
        assert!(len <= data.len() && len > 0);
        for r in &args {
            assert!(r.start <= r.end && r.end <= len);
        }
        // Any strict prefix is incomplete or the same error class: never a different
        // complete request.
        let cut = data.len() / 2;
        if cut < len {
            let mut a2 = Vec::new();
            match parse(&mut data[..cut].to_vec(), &limits, &mut a2) {
                Ok(Some(l)) => panic!("prefix of {cut} bytes parsed as a request of {l}"),
                Ok(None) | Err(_) => {}
            }
        }
    }
});

//! The RESP request parser on arbitrary bytes: never panics, stays inside the buffer,
//! and gives the same answer whether the bytes arrive whole or in two pieces; the
//! server's incremental parser (`input::Input`), fed the bytes in pieces whose sizes
//! come from the data, gives the whole-buffer parser's answer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_kvs::input::Input;
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
    // The incremental parser, fed pieces of 1 to 8 bytes (sizes from the data).
    let mut input = Input::default();
    let mut incremental = Ok(None);
    let mut at = 0;
    while at < data.len() {
        let to = (at + 1 + usize::from(data[at] % 8)).min(data.len());
        input.extend(&data[at..to]);
        at = to;
        incremental = input.parse(&limits, true);
        if !matches!(incremental, Ok(None)) {
            break;
        }
    }
    match (&whole, &incremental) {
        (Ok(Some(a)), Ok(Some(b))) => {
            assert_eq!(a, b);
            let (bytes, ranges) = input.request();
            let mut copy = data.to_vec();
            let mut again = Vec::new();
            let _ = parse(&mut copy, &limits, &mut again);
            assert_eq!(ranges.len(), again.len());
            for (r, s) in ranges.iter().zip(&again) {
                assert_eq!(bytes[r.clone()], copy[s.clone()]);
            }
        }
        (w, i) => assert_eq!(w, i),
    }
});

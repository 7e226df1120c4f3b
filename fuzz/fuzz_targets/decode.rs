//! Point decoding on arbitrary 32 bytes: never panics; agrees with curve25519-dalek on
//! whether the bytes decode and to which point; a canonical encoding round-trips through
//! compress, and a non-canonical one re-encodes to a canonical encoding of the same point.

#![no_main]

use curve25519_dalek::edwards::CompressedEdwardsY;
use libfuzzer_sys::fuzz_target;
use wirespeed_ed25519::serial::vartime_decompress;

fuzz_target!(|data: &[u8]| {
    let mut b = [0u8; 32];
    let n = data.len().min(32);
    b[..n].copy_from_slice(&data[..n]);

    let ours = vartime_decompress(&b);
    let theirs = CompressedEdwardsY(b).decompress();
    assert_eq!(ours.is_some(), theirs.is_some(), "decodes? {b:02x?}");
    let (Some(d), Some(t)) = (ours, theirs) else {
        return;
    };
    let canon = d.point.compress();
    assert_eq!(canon, t.compress().to_bytes(), "same point {b:02x?}");
    assert_eq!(d.point.is_small_order(), t.is_small_order());
    if d.is_canonical() {
        assert_eq!(canon, b, "canonical encodings round-trip");
    } else {
        assert_ne!(canon, b, "non-canonical encodings re-encode differently");
        let again = vartime_decompress(&canon).expect("a canonical encoding decodes");
        assert!(again.is_canonical());
        assert_eq!(again.point.compress(), canon);
    }
});

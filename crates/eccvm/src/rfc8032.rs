//! The compiled RFC 8032 programs of `python/wirespeed_trace/rfc8032.py`
//! (docs/trace-format.md section 7), embedded. The files under `crates/eccvm/programs/`
//! are the output of
//!
//! ```text
//! PYTHONPATH=python python3 -m wirespeed_trace rfc8032 --out-dir DIR
//! ```
//!
//! (the `.wtp` files); a test regenerates them and fails if they differ.
//!
//! Each `decode-MODE-ROLE` program takes one point encoding and returns `ok` (bool), `x`
//! and `y` (field): ok iff the encoding decodes and passes the mode's rules for that
//! point (A, the public key, or R, the signature's first half); y reduced mod p, x with
//! the sign bit applied; both 0 when ok is false.

macro_rules! programs {
    ($($stem:literal),* $(,)?) => {
        /// Every embedded program: (file stem, bytes).
        pub const ALL: &[(&str, &[u8])] = &[
            $(($stem, include_bytes!(concat!("../programs/", $stem, ".wtp")))),*
        ];
    };
}

programs!(
    "decode-strict-a",
    "decode-strict-r",
    "decode-zip215-a",
    "decode-zip215-r",
    "decode-cofactored-strict-a",
    "decode-cofactored-strict-r",
    "decode-libsodium-a",
    "decode-libsodium-r",
    "scalar-range",
    "checks-strict",
    "checks-zip215",
    "checks-cofactored-strict",
    "checks-libsodium",
);

/// The rule modes, by the names the programs use (those of `wirespeed_ed25519::Mode`).
pub const MODES: [&str; 4] = ["strict", "zip215", "cofactored-strict", "libsodium"];

/// The bytes of the program with this file stem (`decode-strict-a`, `scalar-range`, ...).
pub fn program(stem: &str) -> Option<&'static [u8]> {
    ALL.iter().find(|(s, _)| *s == stem).map(|(_, b)| *b)
}

/// The decoding program of point `role` ('A' or 'R', either case) under `mode` (one of
/// [`MODES`]).
pub fn decode_program(mode: &str, role: char) -> Option<&'static [u8]> {
    let role = role.to_ascii_lowercase();
    if !matches!(role, 'a' | 'r') {
        return None;
    }
    ALL.iter()
        .find(|(s, _)| {
            s.strip_prefix("decode-").and_then(|r| r.strip_suffix(role))
                == Some(&format!("{mode}-"))
        })
        .map(|(_, b)| *b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_loads() {
        for (stem, bytes) in ALL {
            let p = crate::Program::parse(bytes).unwrap_or_else(|e| panic!("{stem}: {e}"));
            assert_eq!(p.to_bytes(), *bytes, "{stem}");
        }
    }

    #[test]
    fn decode_programs_by_mode_and_role() {
        for mode in MODES {
            for role in ['a', 'R'] {
                let want = format!("decode-{mode}-{}", role.to_ascii_lowercase());
                assert_eq!(decode_program(mode, role), program(&want), "{want}");
                assert!(decode_program(mode, role).is_some());
            }
        }
        assert!(decode_program("strict", 'x').is_none());
        assert!(decode_program("nope", 'a').is_none());
    }
}

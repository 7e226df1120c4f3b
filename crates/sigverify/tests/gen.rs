//! Generated Solana traffic: every transaction parses; valid ones and duplicates verify,
//! corrupted ones do not; counts follow the fractions; the output depends only on the
//! arguments.

use std::collections::HashSet;

use wirespeed_ed25519::{verify, verify_many, Item, Mode};
use wirespeed_sigverify::gen::{counts, generate, Expect};
use wirespeed_sigverify::solana::parse;

#[test]
fn every_item_parses_and_verifies_as_expected() {
    let items = generate(2000, 0.1, 0.15, 42);
    assert_eq!(items.len(), 2000);
    let parsed: Vec<_> = items.iter().map(|g| parse(&g.bytes).unwrap()).collect();

    let all: Vec<Item<'_>> = parsed.iter().flat_map(|t| t.items()).collect();
    let mut verdicts = verify_many(&all, Mode::Strict).into_iter();
    let mut signer_counts = [0usize; 3];
    for (g, tx) in items.iter().zip(&parsed) {
        assert_eq!(tx.txn_id(), g.txn_id);
        signer_counts[tx.signers.len()] += 1;
        let ok: Vec<bool> = (0..tx.signatures.len())
            .map(|_| verdicts.next().unwrap().is_ok())
            .collect();
        match g.expect {
            Expect::Valid | Expect::Duplicate => assert!(ok.iter().all(|&v| v)),
            Expect::BadSignature => assert!(ok.iter().any(|&v| !v)),
        }
    }
    assert!(verdicts.next().is_none());
    assert!(
        signer_counts[1] > 500 && signer_counts[2] > 500,
        "{signer_counts:?}"
    );

    // Single verification agrees on a sample.
    for (g, tx) in items.iter().zip(&parsed).take(100) {
        let ok = tx
            .items()
            .all(|it| verify(it.msg, it.sig, it.pk, Mode::Strict).is_ok());
        assert_eq!(ok, g.expect != Expect::BadSignature);
    }
}

#[test]
fn counts_match_the_fractions() {
    for (n, dup, bad) in [
        (1000, 0.1, 0.2),
        (999, 0.333, 0.0),
        (10, 0.0, 0.55),
        (7, 0.5, 0.5),
    ] {
        let items = generate(n, dup, bad, 3);
        let count = |e| items.iter().filter(|g| g.expect == e).count();
        let (want_dup, want_bad) = counts(n, dup, bad);
        assert_eq!(count(Expect::Duplicate), want_dup);
        assert_eq!(count(Expect::BadSignature), want_bad);
        if dup + bad < 1.0 {
            // Within rounding, unless the fractions leave no valid item to copy.
            assert!(want_dup.abs_diff((n as f64 * dup).round() as usize) <= 1);
        } else {
            assert_eq!(want_dup, n - want_bad - 1);
        }
        assert_eq!(want_bad, (n as f64 * bad).round() as usize);
        assert_eq!(count(Expect::Valid), n - want_dup - want_bad);
    }
}

#[test]
fn duplicates_copy_earlier_valid_items_and_other_ids_are_unique() {
    let items = generate(3000, 0.3, 0.2, 8);
    let mut valid: HashSet<([u8; 64], Vec<u8>)> = HashSet::new();
    let mut ids = HashSet::new();
    for g in &items {
        match g.expect {
            Expect::Duplicate => {
                assert!(valid.contains(&(g.txn_id, g.bytes.clone())));
            }
            Expect::Valid => {
                valid.insert((g.txn_id, g.bytes.clone()));
                assert!(ids.insert(g.txn_id));
            }
            Expect::BadSignature => assert!(ids.insert(g.txn_id)),
        }
    }
    // The ids a correct pipeline accepts: exactly the valid ones.
    let accepted: HashSet<_> = items
        .iter()
        .filter(|g| g.expect == Expect::Valid)
        .map(|g| g.txn_id)
        .collect();
    assert_eq!(accepted.len(), valid.len());
}

#[test]
fn deterministic_per_seed() {
    assert_eq!(generate(300, 0.1, 0.1, 5), generate(300, 0.1, 0.1, 5));
    assert_ne!(generate(300, 0.1, 0.1, 5), generate(300, 0.1, 0.1, 6));
}

#[test]
fn edge_sizes() {
    assert!(generate(0, 0.5, 0.5, 1).is_empty());
    let one = generate(1, 1.0, 0.0, 1);
    assert_eq!(one[0].expect, Expect::Valid);
    let all_bad = generate(20, 0.5, 1.0, 1);
    assert!(all_bad.iter().all(|g| g.expect == Expect::BadSignature));
    let mostly_dup = generate(20, 1.0, 0.0, 1);
    assert_eq!(mostly_dup[0].expect, Expect::Valid);
    assert_eq!(
        mostly_dup
            .iter()
            .filter(|g| g.expect == Expect::Duplicate)
            .count(),
        19
    );
}

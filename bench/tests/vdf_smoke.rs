//! The VDF benchmark's logic on tiny inputs: every contender reaches the same squaring
//! chain result (the run fails otherwise) and the three proofs verify. No timing assertions.

#[test]
fn contenders_agree_on_short_chains() {
    let r = wirespeed_bench::vdf::squaring_row::<16>(37, 1).expect("1024-bit chain");
    assert_eq!(r.bits, 1024);
    let r = wirespeed_bench::vdf::squaring_row::<32>(11, 1).expect("2048-bit chain");
    assert_eq!(r.bits, 2048);
    assert!(
        r.wirespeed > 0.0
            && r.gmp > 0.0
            && r.openssl > 0.0
            && r.openssl_mont > 0.0
            && r.num_bigint > 0.0
    );
}

#[test]
fn proofs_verify_in_the_overhead_measurement() {
    let rows = wirespeed_bench::vdf::proof_rows(100).expect("proofs");
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.t == 100 && r.verify_ms >= 0.0));
}

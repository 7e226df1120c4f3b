//! Runs the Ed25519 harness on a tiny input: every contender must accept every valid
//! signature (the harness fails the run otherwise) and reject corrupted ones. No timing
//! assertions.

use wirespeed_bench::ed25519::{
    measure, render_json, render_markdown, BenchArgs, Config, Contender, Dataset,
};
use wirespeed_sigdata::gen;

#[test]
fn tiny_run_every_contender_accepts_every_signature() {
    let cfg = Config {
        counts: vec![64],
        msg_lens: vec![128],
        threads: vec![1, 2],
        reps: 1,
        latency_samples: 16,
        seed: 7,
        narya: None,
    };
    let report = measure(&cfg, "wirespeed bench ed25519 (smoke)", false)
        .expect("every contender accepts every valid signature");
    assert_eq!(report.throughput.len(), Contender::ALL.len() * 2);
    assert_eq!(report.latency.len(), Contender::LATENCY.len());
    assert!(report.throughput.iter().all(|r| r.median_s > 0.0));
    assert!(report
        .latency
        .iter()
        .all(|r| r.samples == 16 && r.p99_ns >= r.p50_ns));

    let md = render_markdown(&report);
    for c in Contender::ALL {
        assert!(
            md.contains(c.label()),
            "{} missing from the table",
            c.label()
        );
    }
    let json = render_json(&report);
    assert_eq!(json["throughput"].as_array().map(Vec::len), Some(22));
    assert_eq!(json["latency"].as_array().map(Vec::len), Some(5));
}

#[test]
fn every_contender_rejects_corrupted_signatures() {
    // bad_frac 1.0: every record has one bit flipped in the message, R, S or the key.
    let records = gen::generate(64, 128, 11, 1.0);
    let data = Dataset::new(&records);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for c in Contender::ALL {
        assert_eq!(pool.install(|| c.count_valid(&data)), 0, "{}", c.label());
    }
}

#[test]
fn every_contender_accepts_valid_signatures_one_at_a_time() {
    let records = gen::generate(16, 1232, 3, 0.0);
    let data = Dataset::new(&records);
    for c in Contender::ALL {
        for it in &data.items {
            assert!(c.verify_one(it), "{}", c.label());
        }
    }
}

#[test]
fn quick_args_resolve() {
    let args = BenchArgs {
        quick: true,
        ..Default::default()
    };
    let cfg = Config::from_args(&args).unwrap();
    assert_eq!(
        (cfg.counts.as_slice(), cfg.msg_lens.as_slice()),
        (&[1_000][..], &[128][..])
    );
    assert_eq!(args.command_line(), "wirespeed bench ed25519 --quick");
}

//! End to end: generated traffic with known duplicates, bad signatures and malformed
//! packets yields exactly the expected accepted ids (in arrival order when reordering
//! is on), from memory and through a pcap file; a slow link sheds with a count; with the
//! parse tile beside a verify tile (dealt by backlog), every packet is verified exactly
//! once and the verdicts come out in order.

use std::sync::atomic::AtomicBool;

use wirespeed_disco::metrics::Counter;
use wirespeed_disco::Policy;
use wirespeed_engine::Backend;
use wirespeed_sigverify::gen::{generate, Expect, Generated};
use wirespeed_sigverify::pcap::{write_pcap, UdpReader};
use wirespeed_sigverify::pipeline::{run, Config, Placement};
use wirespeed_sigverify::tiles::Input;

fn config(tag: &str) -> Config {
    Config {
        collect_ids: true,
        metrics_path: std::env::temp_dir().join(format!("ws-sv-{tag}-{}", std::process::id())),
        ..Config::default()
    }
}

/// The ids the pipeline should accept, in arrival order.
fn valid_ids(traffic: &[Generated]) -> Vec<[u8; 64]> {
    traffic
        .iter()
        .filter(|g| g.expect == Expect::Valid)
        .map(|g| g.txn_id)
        .collect()
}

#[test]
fn known_traffic_yields_exactly_the_valid_ids_in_order() {
    let traffic = generate(3_000, 0.1, 0.1, 7);
    let want = valid_ids(&traffic);
    let mut packets: Vec<(bool, Vec<u8>)> = Vec::new();
    for (i, g) in traffic.iter().enumerate() {
        packets.push((false, g.bytes.clone()));
        if i % 500 == 0 {
            // Malformed packets in between: truncated and garbage.
            packets.push((false, g.bytes[..g.bytes.len() / 2].to_vec()));
            packets.push((false, vec![0xff; 40]));
        }
    }
    // The verify tiles on the CPU lanes, through the GPU crate's dispatch (`auto`: the
    // CPU at these batch sizes), and on the GPU where there is one.
    let mut backends = vec![Backend::CPU, Backend::Auto];
    if Backend::Gpu.choose(1, 1).is_ok() {
        backends.push(Backend::Gpu);
    }
    for backend in backends {
        let c = Config {
            backend,
            ..config(&format!("mem-{backend}"))
        };
        let s = run(
            &c,
            Input::Memory(packets.clone().into_iter()),
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.ids.len(), 1);
        let got = &s.ids[0];
        let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
        assert!(
            got.len() == want.len() && first_diff.is_none(),
            "every valid id once, in arrival order: got {} want {}, first difference at {first_diff:?}",
            got.len(),
            want.len()
        );
        let bad = traffic
            .iter()
            .filter(|g| g.expect == Expect::BadSignature)
            .count() as u64;
        let dup = traffic
            .iter()
            .filter(|g| g.expect == Expect::Duplicate)
            .count() as u64;
        assert_eq!(s.bad_signature, bad);
        assert_eq!(s.duplicates, dup);
        assert_eq!(s.malformed.iter().map(|(_, n)| n).sum::<u64>(), 12);
        assert_eq!(s.ingested, 3_012);
        assert_eq!(s.latency.len(), want.len() as u64);
        let _ = std::fs::remove_file(&c.metrics_path);
    }
}

#[test]
fn dealt_packets_are_verified_exactly_once_and_delivered_in_order() {
    let traffic = generate(4_000, 0.1, 0.1, 23);
    let want = valid_ids(&traffic);
    // Parse pinned beside the first verify tile, whatever the machine: the parse tile
    // deals the packets (runs of one batch, revised by backlog), including batches
    // smaller than a run of the source and more verify tiles than cores.
    for (tiles, batch) in [(2, 64), (3, 8), (2, 1)] {
        let mut c = config(&format!("deal-{tiles}-{batch}"));
        c.verify_tiles = tiles;
        c.batch = batch;
        c.cores = Placement {
            source: Some(0),
            parse: Some(0),
            verify: Some(0),
            ..Placement::default()
        };
        let packets: Vec<(bool, Vec<u8>)> =
            traffic.iter().map(|g| (false, g.bytes.clone())).collect();
        let s = run(
            &c,
            Input::Memory(packets.into_iter()),
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let verified: Vec<u64> = s
            .metrics
            .tiles
            .iter()
            .filter(|t| t.name.starts_with("verify"))
            .map(|t| t.get(Counter::In))
            .collect();
        assert_eq!(verified.len(), tiles);
        assert_eq!(
            verified.iter().sum::<u64>(),
            4_000,
            "{tiles} tiles, batch {batch}: {verified:?}"
        );
        let reorder = s.metrics.tiles.iter().find(|t| t.name == "reorder");
        let given_up = reorder
            .and_then(|t| t.custom.iter().find(|(k, _)| k == "given_up"))
            .map_or(0, |(_, v)| *v);
        assert_eq!(given_up, 0, "no ticket missing");
        assert_eq!(s.ids.len(), 1);
        assert!(s.ids[0] == want, "{tiles} tiles, batch {batch}: ids differ");
        let _ = std::fs::remove_file(&c.metrics_path);
    }
}

#[test]
fn a_capture_with_two_sinks_and_no_reordering_accepts_the_same_set() {
    let traffic = generate(1_500, 0.2, 0.05, 11);
    let path = std::env::temp_dir().join(format!("ws-sv-{}.pcap", std::process::id()));
    write_pcap(&path, traffic.iter().map(|g| g.bytes.as_slice())).unwrap_or_else(|e| panic!("{e}"));
    let mut c = config("pcap");
    c.sinks = 2;
    c.ordered = false;
    c.verify_tiles = 3;
    let reader = UdpReader::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let s = run(&c, Input::Pcap(Box::new(reader)), &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut got: Vec<[u8; 64]> = s.ids.concat();
    let mut want: Vec<[u8; 64]> = traffic
        .iter()
        .filter(|g| g.expect == Expect::Valid)
        .map(|g| g.txn_id)
        .collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(s.accepted.len(), 2);
    assert!(s.accepted.iter().all(|&n| n > 0), "both destinations used");
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&c.metrics_path);
}

#[test]
fn a_shedding_link_counts_what_it_drops() {
    let traffic = generate(4_000, 0.0, 0.0, 3);
    let mut c = config("shed");
    // A tiny parse -> verify ring that sheds: the verifiers cannot keep up with parsing.
    c.links[1] = (64, Policy::Shed);
    c.batch = 64;
    let packets = traffic
        .iter()
        .map(|g| (false, g.bytes.clone()))
        .collect::<Vec<_>>();
    let s = run(
        &c,
        Input::Memory(packets.into_iter()),
        &AtomicBool::new(false),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.accepted_total() + s.shed,
        4_000,
        "every transaction accepted or counted as shed"
    );
    let _ = std::fs::remove_file(&c.metrics_path);
}

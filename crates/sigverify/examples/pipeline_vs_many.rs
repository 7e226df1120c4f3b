//! The pipeline's throughput against `verify_many` alone on the same transactions and
//! cores: `cargo run --release -p wirespeed-sigverify --example pipeline_vs_many [N]
//! [ROUNDS]`. Prints signatures per second of both and their ratio, per round, each
//! tile's busy time and rounds per transaction (where the pipeline's time goes), and the
//! packets and batches of each verify tile (how they were dealt).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use wirespeed_disco::metrics::{Counter, TileSnapshot};
use wirespeed_ed25519::{verify_many, Item, Mode};
use wirespeed_sigverify::gen::generate;
use wirespeed_sigverify::pipeline::{run, Config};
use wirespeed_sigverify::solana::parse;
use wirespeed_sigverify::tiles::Input;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let traffic = generate(n, 0.05, 0.05, 1);
    let txns: Vec<_> = traffic
        .iter()
        .filter_map(|g| parse(&g.bytes).ok())
        .collect();
    let items: Vec<Item<'_>> = txns.iter().flat_map(|t| t.items()).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{n} transactions, {} signatures, {threads} threads (verify_many) / {threads} verify tiles",
        items.len()
    );
    for round in 1..=rounds {
        let t = Instant::now();
        let v = verify_many(&items, Mode::Strict);
        let many = items.len() as f64 / t.elapsed().as_secs_f64();
        assert_eq!(v.len(), items.len());
        let config = Config {
            verify_tiles: threads,
            metrics_path: std::env::temp_dir().join("ws-pipeline-vs-many.metrics"),
            ..Config::default()
        };
        let packets: Vec<(bool, Vec<u8>)> =
            traffic.iter().map(|g| (false, g.bytes.clone())).collect();
        let s = run(
            &config,
            Input::Memory(packets.into_iter()),
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let pipe = items.len() as f64 / s.secs;
        println!(
            "round {round}: verify_many {many:.0} sig/s, pipeline {pipe:.0} sig/s ({:.0} tx/s), ratio {:.2}; p50 {:.0} us p99 {:.0} us",
            n as f64 / s.secs,
            pipe / many,
            s.latency.value_at_quantile(0.5) as f64 / 1e3,
            s.latency.value_at_quantile(0.99) as f64 / 1e3,
        );
        let tiles = &s.metrics.tiles;
        let line = |f: &dyn Fn(&TileSnapshot) -> Option<String>| {
            tiles.iter().filter_map(f).collect::<Vec<_>>().join(", ")
        };
        let per_tx = |v: u64| v as f64 / n as f64;
        println!(
            "  busy us per transaction: {}",
            line(&|t| Some(format!(
                "{} {:.2}",
                t.name,
                per_tx(t.get(Counter::BusyNs)) / 1e3
            )))
        );
        println!(
            "  rounds per transaction: {}",
            line(&|t| Some(format!("{} {:.1}", t.name, per_tx(t.get(Counter::Rounds)))))
        );
        println!(
            "  {}",
            line(&|t| {
                let batches = t.custom.iter().find(|(k, _)| k == "batches")?;
                Some(format!(
                    "{} {} packets in {} batches",
                    t.name,
                    t.get(Counter::In),
                    batches.1
                ))
            })
        );
    }
}

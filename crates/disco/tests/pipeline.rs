//! Tiles on links: everything arrives exactly once with backpressure (also when a
//! producer and its consumer share a thread), shedding is counted, a panicking tile
//! stops the pipeline with its name, and the metrics file tells the story.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use wirespeed_disco::metrics::{self, Counter};
use wirespeed_disco::run::Ended;
use wirespeed_disco::{Claim, Ctx, Input, Metrics, Pipeline, Policy, RunError, Tile, TileSpec};
use wirespeed_tango::{link, Meta};

/// Emits 0..n as 8-byte payloads, then finishes.
struct Source {
    next: u64,
    n: u64,
}

impl Tile for Source {
    fn name(&self) -> String {
        "source".into()
    }
    fn on_fragment(&mut self, _: &mut Ctx, _: usize, _: &Meta, _: &[u8]) {}
    fn on_idle(&mut self, ctx: &mut Ctx) -> bool {
        if self.next == self.n {
            ctx.finish();
            return false;
        }
        ctx.publish(0, &self.next.to_le_bytes(), self.next, 0, 0);
        self.next += 1;
        true
    }
}

/// Passes fragments on (optionally panicking at one value).
struct Relay {
    id: usize,
    panic_at: Option<u64>,
}

impl Tile for Relay {
    fn name(&self) -> String {
        format!("relay{}", self.id)
    }
    fn on_fragment(&mut self, ctx: &mut Ctx, _: usize, meta: &Meta, payload: &[u8]) {
        if Some(meta.sig) == self.panic_at {
            panic!("relay saw {}", meta.sig);
        }
        ctx.publish(0, payload, meta.sig, 0, meta.tsorig);
    }
}

/// Collects values; sleeps a little per fragment when slow.
struct Sink {
    got: Arc<Mutex<Vec<u64>>>,
    slow: bool,
}

impl Tile for Sink {
    fn name(&self) -> String {
        "sink".into()
    }
    fn on_fragment(&mut self, _: &mut Ctx, _: usize, _: &Meta, payload: &[u8]) {
        let mut b = [0u8; 8];
        b.copy_from_slice(&payload[..8]);
        self.got
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(u64::from_le_bytes(b));
        if self.slow {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }
}

fn metrics_file(tag: &str, names: &[&str]) -> (Arc<Metrics>, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!("ws-disco-{tag}-{}", std::process::id()));
    (
        Metrics::create(&path, names).unwrap_or_else(|e| panic!("{e}")),
        path,
    )
}

/// source -> relay x2 (sharing the work by sequence number) -> sink, threads as given.
fn build(
    n: u64,
    threads: [usize; 4],
    policy: Policy,
    slow: bool,
    panic_at: Option<u64>,
    tag: &str,
) -> (Pipeline, Arc<Mutex<Vec<u64>>>, std::path::PathBuf) {
    build_with(n, threads, policy, slow, panic_at, tag, false)
}

/// As [`build`]; with `claimed`, the relays share the work through a claim counter.
fn build_with(
    n: u64,
    threads: [usize; 4],
    policy: Policy,
    slow: bool,
    panic_at: Option<u64>,
    tag: &str,
    claimed: bool,
) -> (Pipeline, Arc<Mutex<Vec<u64>>>, std::path::PathBuf) {
    let claim = Claim::new();
    let share = |c, i| {
        if claimed {
            Input::claimed(c, claim.clone())
        } else {
            Input::shared(c, i, 2)
        }
    };
    let (p0, mut c0) = link(64, 8, 2).unwrap_or_else(|e| panic!("{e}"));
    let (p1, mut c1) = link(64, 8, 1).unwrap_or_else(|e| panic!("{e}"));
    let (p2, mut c2) = link(64, 8, 1).unwrap_or_else(|e| panic!("{e}"));
    let got = Arc::new(Mutex::new(Vec::new()));
    let (m, path) = metrics_file(tag, &["source", "relay0", "relay1", "sink"]);
    let pop = |v: &mut Vec<_>| v.pop().unwrap_or_else(|| panic!("consumer"));
    let (r1in, r0in) = (pop(&mut c0), pop(&mut c0));
    let (sink_a, sink_b) = (pop(&mut c1), pop(&mut c2));
    let tiles = vec![
        TileSpec {
            tile: Box::new(Source { next: 0, n }),
            inputs: vec![],
            outputs: vec![(p0, Policy::Backpressure)],
            thread: threads[0],
            core: None,
        },
        TileSpec {
            tile: Box::new(Relay { id: 0, panic_at }),
            inputs: vec![share(r0in, 0)],
            outputs: vec![(p1, policy)],
            thread: threads[1],
            core: None,
        },
        TileSpec {
            tile: Box::new(Relay { id: 1, panic_at }),
            inputs: vec![share(r1in, 1)],
            outputs: vec![(p2, policy)],
            thread: threads[2],
            core: None,
        },
        TileSpec {
            tile: Box::new(Sink {
                got: got.clone(),
                slow,
            }),
            inputs: vec![Input::all(sink_a), Input::all(sink_b)],
            outputs: vec![],
            thread: threads[3],
            core: None,
        },
    ];
    (Pipeline::new(tiles, m), got, path)
}

#[test]
fn everything_arrives_once_on_one_thread_or_four() {
    for (threads, tag) in [([0, 0, 0, 0], "one"), ([0, 1, 2, 3], "four")] {
        let (p, got, path) = build(50_000, threads, Policy::Backpressure, false, None, tag);
        let stop = AtomicBool::new(false);
        assert_eq!(p.run(&stop), Ok(Ended::Drained));
        let mut got = got.lock().unwrap_or_else(|e| e.into_inner()).clone();
        got.sort_unstable();
        assert_eq!(got, (0..50_000).collect::<Vec<u64>>(), "{tag}");
        let s = metrics::read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.state, 1);
        assert_eq!(s.tiles[0].get(Counter::Out), 50_000);
        assert_eq!(
            s.tiles[1].get(Counter::In) + s.tiles[2].get(Counter::In),
            50_000
        );
        assert_eq!(s.tiles[3].get(Counter::In), 50_000);
        assert!(s.tiles.iter().all(|t| t.get(Counter::State) == 1));
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn claimed_work_arrives_once_on_one_thread_or_four() {
    for (threads, tag) in [([0, 0, 0, 0], "claim-one"), ([0, 1, 2, 3], "claim-four")] {
        let (p, got, path) = build_with(
            50_000,
            threads,
            Policy::Backpressure,
            false,
            None,
            tag,
            true,
        );
        assert_eq!(p.run(&AtomicBool::new(false)), Ok(Ended::Drained));
        let mut got = got.lock().unwrap_or_else(|e| e.into_inner()).clone();
        got.sort_unstable();
        assert_eq!(got, (0..50_000).collect::<Vec<u64>>(), "{tag}");
        let s = metrics::read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.tiles[1].get(Counter::In) + s.tiles[2].get(Counter::In),
            50_000,
            "{tag}: each fragment taken by one relay"
        );
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn a_slow_sink_causes_backpressure_not_loss() {
    let (p, got, path) = build(
        3_000,
        [0, 1, 1, 2],
        Policy::Backpressure,
        true,
        None,
        "slow",
    );
    assert_eq!(p.run(&AtomicBool::new(false)), Ok(Ended::Drained));
    assert_eq!(got.lock().unwrap_or_else(|e| e.into_inner()).len(), 3_000);
    let s = metrics::read(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        s.tiles[0].get(Counter::BackpressureNs) > 0,
        "the source waited"
    );
    assert_eq!(s.tiles.iter().map(|t| t.get(Counter::Shed)).sum::<u64>(), 0);
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_shedding_link_counts_every_drop() {
    let (p, got, path) = build(3_000, [0, 1, 1, 2], Policy::Shed, true, None, "shed");
    assert_eq!(p.run(&AtomicBool::new(false)), Ok(Ended::Drained));
    let delivered = got.lock().unwrap_or_else(|e| e.into_inner()).len() as u64;
    let s = metrics::read(&path).unwrap_or_else(|e| panic!("{e}"));
    let shed = s.tiles[1].get(Counter::Shed) + s.tiles[2].get(Counter::Shed);
    assert!(shed > 0, "a slow sink behind shedding links drops");
    assert_eq!(delivered + shed, 3_000, "no silent loss");
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_panicking_tile_stops_the_pipeline_with_its_name() {
    let (p, _, path) = build(
        10_000,
        [0, 1, 2, 3],
        Policy::Backpressure,
        false,
        Some(777),
        "panic",
    );
    match p.run(&AtomicBool::new(false)) {
        Err(RunError::Panicked { tile, message }) => {
            // Value 777 travels as fragment 778: an even sequence number, relay0's share.
            assert_eq!(tile, "relay0");
            assert!(message.contains("relay saw 777"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let s = metrics::read(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.state, 2);
    assert_eq!(s.tiles[1].get(Counter::State), 2);
    let _ = std::fs::remove_file(path);
}

//! The verification pipeline: builds the tiles and links of [`crate::tiles`] from a
//! [`Config`] (or a TOML topology), runs them and sums up what happened, including, for
//! a UDP source, the datagrams the kernel dropped before the source could read them
//! ([`Summary::udp_kernel_drops`], read once more after the tiles have stopped).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use wirespeed_disco::metrics::{Counter, MetricsError, Snapshot};
use wirespeed_disco::run::Ended;
use wirespeed_disco::topology::Topology;
use wirespeed_disco::{
    Claim, Input as LinkInput, Metrics, Pipeline, Policy, RunError, Tile, TileSpec,
};
use wirespeed_ed25519::Mode;
use wirespeed_tango::{link, TangoError};

use crate::counters::SourceCounter;
use crate::solana::PACKET_DATA_SIZE;
use crate::tiles::{DedupTile, Input, Parse, Reorder, Sink, Source, Verify, MAX_DEST};
use crate::udp::KernelDrops;

/// The built-in topology (what `--topology` files follow).
pub const DEFAULT_TOPOLOGY: &str = r#"# source -> parse -> verify x N -> reorder -> dedup -> sink x D
[[tile]]
name = "source"
kind = "source"

[[tile]]
name = "parse"
kind = "parse"

[[tile]]
name = "verify"
kind = "verify"
count = 2
params = { batch = 64, budget_us = 0, key_cache = 16384 }

[[tile]]
name = "reorder"
kind = "reorder"
params = { ordered = true }

[[tile]]
name = "dedup"
kind = "dedup"
params = { horizon = 1048576 }

[[tile]]
name = "sink"
kind = "sink"

[[link]]
from = "source"
to = "parse"
depth = 4096

[[link]]
from = "parse"
to = "verify"
depth = 4096

[[link]]
from = "verify"
to = "reorder"
depth = 4096

[[link]]
from = "reorder"
to = "dedup"
depth = 4096

[[link]]
from = "dedup"
to = "sink"
depth = 4096
"#;

/// The five links, in pipeline order.
pub const LINKS: [(&str, &str); 5] = [
    ("source", "parse"),
    ("parse", "verify"),
    ("verify", "reorder"),
    ("reorder", "dedup"),
    ("dedup", "sink"),
];

/// Everything a run needs besides its input.
#[derive(Clone, Debug)]
pub struct Config {
    /// Verify tiles.
    pub verify_tiles: usize,
    /// Destinations (sink tiles).
    pub sinks: usize,
    /// Rule mode of the verifier.
    pub mode: Mode,
    /// Packets per verify batch.
    pub batch: usize,
    /// Longest wait of a packet for its batch.
    pub budget: Duration,
    /// Public keys the verify tiles' shared cache of decoded keys holds (the verify
    /// tile's `key_cache` parameter; 0: no cache). Verdicts are the same either way.
    pub key_cache: usize,
    /// Where the verify tiles verify: the CPU lanes on their own thread (`cpu`, the
    /// default), the GPU (`gpu`), or the GPU for batches large enough (`auto`).
    pub backend: wirespeed_engine::Backend,
    /// Dedup horizon (transaction ids remembered).
    pub dedup_horizon: usize,
    /// Deliver in arrival order.
    pub ordered: bool,
    /// Depth and policy of each of [`LINKS`].
    pub links: [(usize, Policy); 5],
    /// Where the tiles run (cores named in the topology; the rest placed by
    /// [`threads_for`]).
    pub cores: Placement,
    /// Source rate in packets per second (None: as fast as taken).
    pub rate: Option<f64>,
    /// Stop the source after this many packets.
    pub limit: Option<u64>,
    /// Keep the accepted transaction ids (for checks).
    pub collect_ids: bool,
    /// Fault injection: every sink panics on its transaction after this many (the
    /// topology's sink parameter `fail_after`), to exercise the failure path.
    pub sink_fail_after: Option<u64>,
    /// Shared-memory metrics file (the monitor reads it).
    pub metrics_path: PathBuf,
}

/// The default metrics file.
pub fn default_metrics_path() -> PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    dir.join("wirespeed-pipeline.metrics")
}

impl Default for Config {
    fn default() -> Config {
        Config::from_topology(DEFAULT_TOPOLOGY).unwrap_or_else(|e| unreachable!("{e}"))
    }
}

fn param<T: TryFrom<i64>>(t: &Topology, tile: &str, name: &str, def: T) -> Result<T, String> {
    match t.tile(tile).and_then(|d| d.params.get(name)) {
        None => Ok(def),
        Some(v) => v
            .as_integer()
            .and_then(|i| T::try_from(i).ok())
            .ok_or_else(|| format!("tile '{tile}': {name} must be a non-negative integer")),
    }
}

impl Config {
    /// A configuration from a topology file's text: the tiles of [`DEFAULT_TOPOLOGY`]
    /// (names and kinds), each link of [`LINKS`] once; counts, cores, depths, policies
    /// and the parameters may differ.
    pub fn from_topology(text: &str) -> Result<Config, String> {
        let t = Topology::parse(text)?;
        for name in ["source", "parse", "verify", "reorder", "dedup", "sink"] {
            match t.tile(name) {
                Some(d) if d.kind == name => {}
                Some(d) => {
                    return Err(format!(
                        "tile '{name}' must be of kind '{name}', not '{}'",
                        d.kind
                    ))
                }
                None => return Err(format!("the pipeline needs a tile named '{name}'")),
            }
        }
        if t.tile.len() != 6 {
            return Err(
                "the pipeline has exactly the tiles source, parse, verify, reorder, dedup, sink"
                    .into(),
            );
        }
        for n in ["source", "parse", "dedup", "reorder"] {
            if t.tile(n).map(|d| d.count) != Some(1) {
                return Err(format!("tile '{n}' runs once (count = 1)"));
            }
        }
        let mut links = [(0, Policy::Backpressure); 5];
        for (i, (from, to)) in LINKS.iter().enumerate() {
            let found: Vec<_> = t
                .link
                .iter()
                .filter(|l| l.from == *from && l.to == *to)
                .collect();
            let [l] = found.as_slice() else {
                return Err(format!("the pipeline needs one link {from} -> {to}"));
            };
            if l.mtu < PACKET_DATA_SIZE {
                return Err(format!(
                    "link {from} -> {to}: mtu below a packet ({PACKET_DATA_SIZE})"
                ));
            }
            links[i] = (l.depth, l.policy());
        }
        if t.link.len() != LINKS.len() {
            return Err("the pipeline has exactly the five links of the built-in topology".into());
        }
        let verify = t.tile("verify").map_or(1, |d| d.count);
        let sinks = t.tile("sink").map_or(1, |d| d.count);
        if sinks > MAX_DEST {
            return Err(format!("at most {MAX_DEST} sinks"));
        }
        let backend = match t.tile("verify").and_then(|d| d.params.get("backend")) {
            None => wirespeed_engine::Backend::CPU,
            Some(v) => v
                .as_str()
                .and_then(|s| wirespeed_engine::Backend::parse_device(s).ok())
                .ok_or("tile 'verify': backend must be \"cpu\", \"gpu\" or \"auto\"")?,
        };
        // GPU batches may be larger: a launch pays off only for thousands of signatures.
        let max_batch = if matches!(backend, wirespeed_engine::Backend::Cpu(_)) {
            1024
        } else {
            1 << 16
        };
        let batch: usize = param(&t, "verify", "batch", 64)?;
        if !(1..=max_batch).contains(&batch) || links[1].0 < batch || links[2].0 < batch {
            return Err(format!(
                "verify batch must be 1 to {max_batch} and at most the depth of its links"
            ));
        }
        let ordered = match t.tile("reorder").and_then(|d| d.params.get("ordered")) {
            None => true,
            Some(v) => v
                .as_bool()
                .ok_or("tile 'reorder': ordered must be true or false")?,
        };
        let core = |name: &str| t.tile(name).and_then(|d| d.core);
        let cores = Placement {
            source: core("source"),
            parse: core("parse"),
            verify: core("verify"),
            reorder: core("reorder"),
            dedup: core("dedup"),
            sink: core("sink"),
        };
        Ok(Config {
            verify_tiles: verify,
            sinks,
            mode: Mode::Strict,
            batch,
            budget: Duration::from_micros(param(&t, "verify", "budget_us", 0)?),
            key_cache: param(&t, "verify", "key_cache", 0)?,
            backend,
            dedup_horizon: param(&t, "dedup", "horizon", 1 << 20)?,
            ordered,
            links,
            cores,
            rate: None,
            limit: None,
            collect_ids: false,
            sink_fail_after: match t.tile("sink").and_then(|d| d.params.get("fail_after")) {
                None => None,
                Some(_) => Some(param(&t, "sink", "fail_after", 0u64)?),
            },
            metrics_path: default_metrics_path(),
        })
    }
}

/// The first core of each stage's tiles (instances of a stage take consecutive cores,
/// modulo the machine's); `None` leaves the stage to automatic placement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The source tile.
    pub source: Option<usize>,
    /// The parse tile.
    pub parse: Option<usize>,
    /// The first verify tile.
    pub verify: Option<usize>,
    /// The reorder tile.
    pub reorder: Option<usize>,
    /// The dedup tile.
    pub dedup: Option<usize>,
    /// The first sink.
    pub sink: Option<usize>,
}

/// Where one tile runs: tiles with the same `thread` share a thread, pinned to `core`
/// when there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Home {
    /// Thread key.
    pub thread: usize,
    /// Core the thread is pinned to.
    pub core: Option<usize>,
}

/// The homes of the tiles, in pipeline order: source, parse, the verify tiles,
/// reorder, dedup, the sinks. Tiles pinned to the same core share one thread pinned
/// there. An unpinned verify tile gets a thread of its own. The unpinned I/O tiles
/// (everything but verify) share one more thread when the machine has a core to spare
/// for it (`cores > verify tiles`); otherwise they join the verify threads, source and
/// parse with the first, reorder, dedup and sinks with the last, so the pipeline runs
/// one spinning thread per core rather than more threads than cores.
pub fn threads_for(p: &Placement, n_verify: usize, n_sinks: usize, cores: usize) -> Vec<Home> {
    let cores = cores.max(1);
    let pinned = |first: Option<usize>, i: usize| {
        first.map(|c| Home {
            thread: (c + i) % cores,
            core: Some((c + i) % cores),
        })
    };
    let verify: Vec<Home> = (0..n_verify)
        .map(|i| {
            pinned(p.verify, i).unwrap_or(Home {
                thread: cores + 1 + i,
                core: None,
            })
        })
        .collect();
    let spare = cores > n_verify;
    let io = |at_end: bool| {
        if spare || verify.is_empty() {
            Home {
                thread: cores,
                core: None,
            }
        } else if at_end {
            verify[verify.len() - 1]
        } else {
            verify[0]
        }
    };
    let mut homes = vec![
        pinned(p.source, 0).unwrap_or(io(false)),
        pinned(p.parse, 0).unwrap_or(io(false)),
    ];
    homes.extend(verify.iter().copied());
    homes.push(pinned(p.reorder, 0).unwrap_or(io(true)));
    homes.push(pinned(p.dedup, 0).unwrap_or(io(true)));
    homes.extend((0..n_sinks).map(|i| pinned(p.sink, i).unwrap_or(io(true))));
    homes
}

/// Why a run could not happen or did not finish.
#[derive(Debug)]
pub enum PipelineError {
    /// A ring could not be built.
    Ring(TangoError),
    /// The metrics file could not be created or read back.
    Metrics(MetricsError),
    /// A tile failed.
    Tile(RunError),
    /// The input was malformed part way.
    Input(String),
    /// The verify tiles were configured for the GPU and there is none.
    Gpu(wirespeed_engine::GpuError),
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineError::Ring(e) => write!(f, "{e}"),
            PipelineError::Metrics(e) => write!(f, "metrics file: {e}"),
            PipelineError::Tile(e) => write!(f, "{e}"),
            PipelineError::Input(e) => write!(f, "input: {e}"),
            PipelineError::Gpu(e) => write!(f, "verify backend gpu: {e}"),
        }
    }
}

impl std::error::Error for PipelineError {}

/// What a run did.
#[derive(Debug)]
pub struct Summary {
    /// Packets read.
    pub ingested: u64,
    /// Packets that did not parse, by reason (reasons with a count only).
    pub malformed: Vec<(String, u64)>,
    /// Transactions with a bad signature.
    pub bad_signature: u64,
    /// Duplicates dropped.
    pub duplicates: u64,
    /// Transactions delivered, per sink.
    pub accepted: Vec<u64>,
    /// Dropped by shedding links.
    pub shed: u64,
    /// Datagrams the kernel dropped for a UDP source's socket (its receive buffer was
    /// full), from the socket's creation to the end of the run; None for other sources
    /// and where the kernel's count cannot be read (no /proc).
    pub udp_kernel_drops: Option<u64>,
    /// Accepted ids in delivery order, sink by sink (when collected).
    pub ids: Vec<Vec<[u8; 64]>>,
    /// Ingest-to-verdict latency of accepted transactions, ns.
    pub latency: Histogram<u64>,
    /// Wall-clock seconds.
    pub secs: f64,
    /// Drained or stopped.
    pub ended: Ended,
    /// The last metrics snapshot.
    pub metrics: Snapshot,
}

impl Summary {
    /// Accepted in total.
    pub fn accepted_total(&self) -> u64 {
        self.accepted.iter().sum()
    }
}

/// Runs the pipeline over `input` until it ends or `stop` is raised.
pub fn run(config: &Config, input: Input, stop: &AtomicBool) -> Result<Summary, PipelineError> {
    if config.backend == wirespeed_engine::Backend::Gpu {
        // Before any thread starts: `gpu` without one is an error, not a slow CPU run.
        wirespeed_engine::Backend::Gpu
            .choose(1, 1)
            .map_err(PipelineError::Gpu)?;
    }
    let ring = PipelineError::Ring;
    let mtu = crate::tiles::MAX_PACKET;
    let n_verify = config.verify_tiles.max(1);
    let n_sinks = config.sinks.clamp(1, MAX_DEST);
    let (l0, l1, l2, l3, l4) = (
        config.links[0],
        config.links[1],
        config.links[2],
        config.links[3],
        config.links[4],
    );
    let (p_src, mut c_src) = link(l0.0, mtu, 1).map_err(ring)?;
    // Parsed packets carry their descriptor after the payload.
    let (p_parse, c_parse) = link(l1.0, mtu + crate::desc::DESC_LEN, n_verify).map_err(ring)?;
    let mut to_reorder = Vec::new();
    let mut reorder_in = Vec::new();
    for _ in 0..n_verify {
        let (p, mut c) = link(l2.0, mtu, 1).map_err(ring)?;
        to_reorder.push(p);
        reorder_in.extend(c.pop());
    }
    let (p_reorder, mut c_reorder) = link(l3.0, mtu, 1).map_err(ring)?;
    let mut to_sink = Vec::new();
    let mut sink_in = Vec::new();
    for _ in 0..n_sinks {
        let (p, mut c) = link(l4.0, mtu, 1).map_err(ring)?;
        to_sink.push((p, l4.1));
        sink_in.extend(c.pop());
    }
    let error = Arc::new(Mutex::new(None));
    let mut names = vec!["source".to_string(), "parse".to_string()];
    names.extend((0..n_verify).map(|i| format!("verify{i}")));
    names.extend(["reorder".to_string(), "dedup".to_string()]);
    names.extend((0..n_sinks).map(|i| format!("sink{i}")));
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let metrics =
        Metrics::create(&config.metrics_path, &name_refs).map_err(PipelineError::Metrics)?;
    // Before the socket goes to the source tile: the reader keeps its own handle, for
    // the last read after the tiles have stopped.
    let kernel_drops = match &input {
        Input::Udp(sock) => KernelDrops::of(sock).ok().map(Arc::new),
        _ => None,
    };
    let mut source = Source::new(input, config.rate, config.limit, error.clone());
    if let Some(d) = &kernel_drops {
        source = source.with_kernel_drops(d.clone());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let homes = threads_for(&config.cores, n_verify, n_sinks, cores);
    // With the parse tile on a thread of its own, the verify tiles divide its packets
    // dynamically (each takes what it reaches first, so a slower one takes fewer).
    // When parse shares a verify tile's thread, that tile would take every packet as
    // soon as it is parsed and leave the others idle while it verifies (nothing is
    // parsed meanwhile), so the parse tile deals the packets instead, with a share for
    // the tile beside it that follows the backlogs (`crate::deal`: each thread gets
    // what it can do beside its other tiles); past `deal::MAX_LANES` verify tiles, by
    // sequence number.
    let parse_home = homes[1];
    let dynamic = !homes[2..2 + n_verify].contains(&parse_home);
    let deal =
        (!dynamic && n_verify <= crate::deal::MAX_LANES).then(|| crate::deal::Deal::new(n_verify));
    let local = homes[2..2 + n_verify]
        .iter()
        .position(|h| *h == parse_home)
        .unwrap_or(0);
    let mut next_home = homes.into_iter();
    let mut spec = |tile: Box<dyn Tile>, inputs, outputs| {
        let home = next_home.next().unwrap_or(Home {
            thread: 0,
            core: None,
        });
        TileSpec {
            tile,
            inputs,
            outputs,
            thread: home.thread,
            core: home.core,
        }
    };
    let pop = |v: &mut Vec<_>| v.pop().ok_or(PipelineError::Ring(TangoError::Depth(0)));
    let mut parse = Parse::new(n_sinks);
    if let Some(d) = &deal {
        parse = parse.dealing(crate::deal::Dealer::new(d.clone(), local, config.batch));
    }
    let mut tiles = vec![
        spec(Box::new(source), vec![], vec![(p_src, l0.1)]),
        spec(
            Box::new(parse),
            vec![LinkInput::all(pop(&mut c_src)?)],
            vec![(p_parse, l1.1)],
        ),
    ];
    let claim = Claim::new();
    let key_cache = (config.key_cache > 0)
        .then(|| Arc::new(wirespeed_ed25519::KeyCache::new(config.key_cache)));
    for (i, (c, p)) in c_parse.into_iter().zip(to_reorder).enumerate() {
        let mut verify = Verify::new(i, config.batch, config.budget, config.mode)
            .on(config.backend)
            .caching(key_cache.clone());
        let input = if let Some(d) = &deal {
            verify = verify.reporting(d.clone());
            LinkInput::routed(c, crate::deal::LANE_MASK, crate::deal::Dealer::lane_bits(i))
        } else if dynamic {
            LinkInput::claimed(c, claim.clone())
        } else {
            LinkInput::shared(c, i as u64, n_verify as u64)
        };
        tiles.push(spec(Box::new(verify), vec![input], vec![(p, l2.1)]));
    }
    tiles.push(spec(
        // The window covers what can be in flight: the parse -> verify ring, every
        // batch, and the verify -> reorder rings.
        Box::new(Reorder::new(
            config.ordered,
            l1.0 + n_verify * (l2.0 + config.batch) + config.batch,
        )),
        reorder_in.into_iter().map(LinkInput::all).collect(),
        vec![(p_reorder, l3.1)],
    ));
    tiles.push(spec(
        Box::new(DedupTile::new(config.dedup_horizon)),
        vec![LinkInput::all(pop(&mut c_reorder)?)],
        to_sink,
    ));
    let mut reports = Vec::new();
    for (i, c) in sink_in.into_iter().enumerate() {
        let (mut sink, report) = Sink::new(i, config.collect_ids);
        sink.fail_after = config.sink_fail_after;
        reports.push(report);
        tiles.push(spec(Box::new(sink), vec![LinkInput::all(c)], vec![]));
    }
    let started = Instant::now();
    let ended = Pipeline::new(tiles, metrics.clone())
        .run(stop)
        .map_err(PipelineError::Tile)?;
    let secs = started.elapsed().as_secs_f64();
    if let Some(e) = error.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(PipelineError::Input(e));
    }
    // The source's last read may be up to a second old: read the kernel's count once
    // more (every tile thread has ended, so this thread is the counter's only writer).
    let udp_kernel_drops = kernel_drops.map(|d| {
        let source = metrics.tile(0);
        let last = source.get_count(SourceCounter::UdpKernelDrops);
        let total = d.total(last).unwrap_or(last);
        source.set_count(SourceCounter::UdpKernelDrops, total);
        total
    });
    let snap = metrics
        .snapshot()
        .map_err(|e| PipelineError::Metrics(e.into()))?;
    let tile = |name: &str| snap.tiles.iter().find(|t| t.name == name);
    let custom = |name: &str, key: &str| {
        tile(name)
            .and_then(|t| t.custom.iter().find(|(k, _)| k == key).map(|(_, v)| *v))
            .unwrap_or(0)
    };
    let mut latency = Histogram::new_with_bounds(1, 60_000_000_000, 3)
        .unwrap_or_else(|_| unreachable!("constant bounds"));
    let mut ids = Vec::new();
    for r in &reports {
        let mut r = r.lock().unwrap_or_else(|p| p.into_inner());
        let _ = latency.add(&r.latency);
        ids.push(std::mem::take(&mut r.ids));
    }
    Ok(Summary {
        ingested: tile("source").map_or(0, |t| t.get(Counter::Out) + t.get(Counter::Shed)),
        malformed: tile("parse")
            .map(|t| t.custom.iter().filter(|(_, v)| *v > 0).cloned().collect())
            .unwrap_or_default(),
        bad_signature: custom("dedup", "bad_signature"),
        duplicates: custom("dedup", "duplicate"),
        accepted: (0..n_sinks)
            .map(|i| tile(&format!("sink{i}")).map_or(0, |t| t.get(Counter::In)))
            .collect(),
        shed: snap.tiles.iter().map(|t| t.get(Counter::Shed)).sum(),
        udp_kernel_drops,
        ids,
        latency,
        secs,
        ended,
        metrics: snap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threads(h: &[Home]) -> usize {
        let mut t: Vec<usize> = h.iter().map(|h| h.thread).collect();
        t.sort_unstable();
        t.dedup();
        t.len()
    }

    #[test]
    fn placement_runs_one_thread_per_core_when_cores_are_short() {
        // 2 cores, 2 verify tiles: source and parse join verify0, the rest verify1.
        let h = threads_for(&Placement::default(), 2, 1, 2);
        assert_eq!(h.len(), 7);
        assert_eq!(threads(&h), 2);
        assert_eq!((h[0], h[1]), (h[2], h[2]));
        assert_eq!((h[4], h[5], h[6]), (h[3], h[3], h[3]));
        assert_ne!(h[2], h[3]);
        // A spare core: the I/O tiles get their own thread.
        let h = threads_for(&Placement::default(), 2, 2, 8);
        assert_eq!(threads(&h), 3);
        assert!(h.iter().all(|h| h.core.is_none()));
        assert_eq!(h[0], h[7]);
        // One core, one verify tile: everything on one thread.
        assert_eq!(threads(&threads_for(&Placement::default(), 1, 1, 1)), 1);
    }

    #[test]
    fn pinned_tiles_share_their_core_thread() {
        let p = Placement {
            verify: Some(1),
            parse: Some(0),
            ..Placement::default()
        };
        let h = threads_for(&p, 3, 1, 3);
        // verify tiles on cores 1, 2 and 0 (wrapping); parse on 0 shares verify2's
        // thread; the unpinned I/O tiles join the first or last verify thread (no
        // spare core).
        assert_eq!(
            h[2..5].iter().map(|h| h.core).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(0)]
        );
        assert_eq!(h[1], h[4]);
        assert_eq!(h[0], h[2]);
        assert_eq!(h[5], h[4]);
        assert_eq!(threads(&h), 3);
        // Instances wrap around the machine's cores.
        let h = threads_for(
            &Placement {
                verify: Some(1),
                ..Placement::default()
            },
            2,
            1,
            2,
        );
        assert_eq!((h[2].core, h[3].core), (Some(1), Some(0)));
    }

    #[test]
    fn verify_backend_comes_from_the_topology() {
        let with = |params: &str| {
            Config::from_topology(&DEFAULT_TOPOLOGY.replace(
                "params = { batch = 64, budget_us = 0, key_cache = 16384 }",
                params,
            ))
        };
        assert_eq!(Config::default().backend, wirespeed_engine::Backend::CPU);
        let c = with("params = { batch = 4096, backend = \"gpu\" }").unwrap();
        assert_eq!((c.backend, c.batch), (wirespeed_engine::Backend::Gpu, 4096));
        assert_eq!(
            with("params = { backend = \"auto\" }").unwrap().backend,
            wirespeed_engine::Backend::Auto
        );
        // CPU batches stay at most 1024; names are checked.
        assert!(with("params = { batch = 4096 }").is_err());
        let e = with("params = { backend = \"cuda\" }").unwrap_err();
        assert!(e.contains("backend"), "{e}");
        // The key cache: on in the built-in topology, off where a topology leaves it out.
        assert_eq!(Config::default().key_cache, 16384);
        assert_eq!(with("params = { batch = 64 }").unwrap().key_cache, 0);
        assert_eq!(with("params = { key_cache = 5 }").unwrap().key_cache, 5);
    }

    #[test]
    fn topology_cores_reach_the_placement() {
        let text = DEFAULT_TOPOLOGY
            .replace(
                "name = \"parse\"\nkind = \"parse\"",
                "name = \"parse\"\nkind = \"parse\"\ncore = 1",
            )
            .replace(
                "name = \"dedup\"\nkind = \"dedup\"",
                "name = \"dedup\"\nkind = \"dedup\"\ncore = 0",
            );
        let c = Config::from_topology(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.cores.parse, Some(1));
        assert_eq!(c.cores.dedup, Some(0));
        assert_eq!(c.cores.source, None);
        assert_eq!(Config::default().cores, Placement::default());
        assert_eq!(Config::default().budget, Duration::ZERO);
    }
}

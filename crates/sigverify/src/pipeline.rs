//! The verification pipeline: builds the tiles and links of [`crate::tiles`] from a
//! [`Config`] (or a TOML topology), runs them and sums up what happened.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use wirespeed_disco::metrics::{Counter, Snapshot};
use wirespeed_disco::run::Ended;
use wirespeed_disco::topology::Topology;
use wirespeed_disco::{Input as LinkInput, Metrics, Pipeline, Policy, RunError, Tile, TileSpec};
use wirespeed_ed25519::Mode;
use wirespeed_tango::{link, TangoError};

use crate::solana::PACKET_DATA_SIZE;
use crate::tiles::{DedupTile, Input, Parse, Reorder, Sink, Source, Verify, MAX_DEST};

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
params = { batch = 64, budget_us = 100 }

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
    /// Dedup horizon (transaction ids remembered).
    pub dedup_horizon: usize,
    /// Deliver in arrival order.
    pub ordered: bool,
    /// Depth and policy of each of [`LINKS`].
    pub links: [(usize, Policy); 5],
    /// Cores of the verify tiles (None: unpinned).
    pub verify_cores: Option<Vec<usize>>,
    /// Source rate in packets per second (None: as fast as taken).
    pub rate: Option<f64>,
    /// Stop the source after this many packets.
    pub limit: Option<u64>,
    /// Keep the accepted transaction ids (for checks).
    pub collect_ids: bool,
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
        let batch: usize = param(&t, "verify", "batch", 64)?;
        if !(1..=1024).contains(&batch) || links[1].0 < batch || links[2].0 < batch {
            return Err("verify batch must be 1 to 1024 and at most the depth of its links".into());
        }
        let ordered = match t.tile("reorder").and_then(|d| d.params.get("ordered")) {
            None => true,
            Some(v) => v
                .as_bool()
                .ok_or("tile 'reorder': ordered must be true or false")?,
        };
        let verify_cores = t.tile("verify").and_then(|d| d.core).map(|c| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            (0..verify).map(|i| (c + i) % n).collect()
        });
        Ok(Config {
            verify_tiles: verify,
            sinks,
            mode: Mode::Strict,
            batch,
            budget: Duration::from_micros(param(&t, "verify", "budget_us", 100)?),
            dedup_horizon: param(&t, "dedup", "horizon", 1 << 20)?,
            ordered,
            links,
            verify_cores,
            rate: None,
            limit: None,
            collect_ids: false,
            metrics_path: default_metrics_path(),
        })
    }
}

/// Why a run could not happen or did not finish.
#[derive(Debug)]
pub enum PipelineError {
    /// A ring could not be built.
    Ring(TangoError),
    /// The metrics file could not be created.
    Metrics(std::io::Error),
    /// A tile failed.
    Tile(RunError),
    /// The input was malformed part way.
    Input(String),
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineError::Ring(e) => write!(f, "{e}"),
            PipelineError::Metrics(e) => write!(f, "metrics file: {e}"),
            PipelineError::Tile(e) => write!(f, "{e}"),
            PipelineError::Input(e) => write!(f, "input: {e}"),
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
    let (p_parse, c_parse) = link(l1.0, mtu, n_verify).map_err(ring)?;
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
    let spec = |tile: Box<dyn Tile>, inputs, outputs, thread, core| TileSpec {
        tile,
        inputs,
        outputs,
        thread,
        core,
    };
    let pop = |v: &mut Vec<_>| v.pop().ok_or(PipelineError::Ring(TangoError::Depth(0)));
    let mut tiles = vec![
        spec(
            Box::new(Source::new(input, config.rate, config.limit, error.clone())),
            vec![],
            vec![(p_src, l0.1)],
            0,
            None,
        ),
        spec(
            Box::new(Parse::new(n_sinks)),
            vec![LinkInput::all(pop(&mut c_src)?)],
            vec![(p_parse, l1.1)],
            0,
            None,
        ),
    ];
    for (i, (c, p)) in c_parse.into_iter().zip(to_reorder).enumerate() {
        let core = config.verify_cores.as_ref().and_then(|v| v.get(i).copied());
        tiles.push(spec(
            Box::new(Verify::new(i, config.batch, config.budget, config.mode)),
            vec![LinkInput::shared(c, i as u64, n_verify as u64)],
            vec![(p, l2.1)],
            1 + i,
            core,
        ));
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
        0,
        None,
    ));
    tiles.push(spec(
        Box::new(DedupTile::new(config.dedup_horizon)),
        vec![LinkInput::all(pop(&mut c_reorder)?)],
        to_sink,
        0,
        None,
    ));
    let mut reports = Vec::new();
    for (i, c) in sink_in.into_iter().enumerate() {
        let (sink, report) = Sink::new(i, config.collect_ids);
        reports.push(report);
        tiles.push(spec(
            Box::new(sink),
            vec![LinkInput::all(c)],
            vec![],
            0,
            None,
        ));
    }
    let started = Instant::now();
    let ended = Pipeline::new(tiles, metrics.clone())
        .run(stop)
        .map_err(PipelineError::Tile)?;
    let secs = started.elapsed().as_secs_f64();
    if let Some(e) = error.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(PipelineError::Input(e));
    }
    let snap = metrics.snapshot().map_err(PipelineError::Metrics)?;
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
        ids,
        latency,
        secs,
        ended,
        metrics: snap,
    })
}

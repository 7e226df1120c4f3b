//! Tile metrics in shared memory: a file (under /dev/shm by default) mapped by the
//! pipeline for writing and by monitors, in other processes, for reading.
//!
//! Layout, all little-endian u64 words: a header of [`HEADER_WORDS`] (magic, version,
//! tile count, words per tile, pid, heartbeat in ns since the epoch, state), then one
//! block of [`TILE_WORDS`] per tile: name ([`NAME_MAX`] bytes), the [`Counter`]s, 16
//! named custom counters ([`NAME_MAX`]-byte names), and a latency histogram of
//! [`HIST_BUCKETS`] power-of-two buckets of nanoseconds (bucket i counts values in
//! [2^i, 2^(i+1))). Each word has one writer (its tile's thread); readers load words
//! individually (relaxed), so a snapshot is per-word consistent, which is what rates
//! and percentiles need.
//!
//! Names are never cut: a tile or counter name longer than [`NAME_MAX`] bytes (or
//! empty, or holding a NUL byte, which would end it early) is refused with a
//! [`MetricsError`] when it is registered, so what a reader shows is the whole name.
//! Version 1 of the layout kept 24-byte counter names and cut longer ones; a reader
//! refuses a region of another [`VERSION`] (or block size) with an error naming both,
//! and readers of version 1 refuse this one the same way.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::{Mmap, MmapMut};

/// "wsdisco" and a format number.
pub const MAGIC: u64 = 0x7773_6469_7363_6f01;
/// Layout version (2: 64-byte names and 256-word tile blocks; 1 had 24-byte counter
/// names in 128-word blocks).
pub const VERSION: u64 = 2;
/// Header words.
pub const HEADER_WORDS: usize = 8;
/// Words per tile.
pub const TILE_WORDS: usize = 256;
/// Latency histogram buckets.
pub const HIST_BUCKETS: usize = 32;
/// Custom counters per tile.
pub const CUSTOM: usize = 16;
/// Most tiles in one region.
pub const MAX_TILES: usize = 256;

/// Longest tile or counter name, in bytes (UTF-8).
pub const NAME_MAX: usize = NAME_WORDS * 8;

const NAME_WORDS: usize = 8;
const COUNTERS: usize = 10;
const CUSTOM_NAME_WORDS: usize = NAME_WORDS;
const OFF_COUNTERS: usize = NAME_WORDS;
const OFF_CUSTOM_NAMES: usize = OFF_COUNTERS + COUNTERS;
const OFF_CUSTOM: usize = OFF_CUSTOM_NAMES + CUSTOM * CUSTOM_NAME_WORDS;
const OFF_HIST: usize = OFF_CUSTOM + CUSTOM;
const _: () = assert!(OFF_HIST + HIST_BUCKETS <= TILE_WORDS);

/// The fixed counters of every tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// Fragments taken from inputs.
    In = 0,
    /// Fragments published.
    Out,
    /// Fragments dropped by a shedding output (full link).
    Shed,
    /// Fragments the tile rejected by its own rule (bad signature, duplicate, ...).
    Rejected,
    /// Fragments lost to overrun on an unreliable input.
    Overrun,
    /// Nanoseconds spent waiting for output credits.
    BackpressureNs,
    /// Nanoseconds in tile callbacks that did work.
    BusyNs,
    /// Nanoseconds in loop rounds that found nothing to do.
    IdleNs,
    /// Loop rounds.
    Rounds,
    /// 1 once the tile has finished (end of stream), 2 if it failed.
    State,
}

/// Every fixed counter, in layout order, with its name.
pub const COUNTER_NAMES: [(Counter, &str); COUNTERS] = [
    (Counter::In, "in"),
    (Counter::Out, "out"),
    (Counter::Shed, "shed"),
    (Counter::Rejected, "rejected"),
    (Counter::Overrun, "overrun"),
    (Counter::BackpressureNs, "backpressure_ns"),
    (Counter::BusyNs, "busy_ns"),
    (Counter::IdleNs, "idle_ns"),
    (Counter::Rounds, "rounds"),
    (Counter::State, "state"),
];

fn words(bytes: &[u8]) -> &[AtomicU64] {
    // SAFETY: the mapping is page-aligned and a whole number of words long (checked by
    // the callers' size computations); AtomicU64 has the size and alignment of u64, and
    // all access to the words goes through atomics.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<AtomicU64>(), bytes.len() / 8) }
}

/// Why a region could not be created or a name registered.
#[derive(Debug)]
pub enum MetricsError {
    /// The file could not be created, sized or mapped.
    Io(io::Error),
    /// A region holds 1 to [`MAX_TILES`] tiles.
    TileCount(usize),
    /// A tile or counter name longer than [`NAME_MAX`] bytes (refused, not cut: two
    /// cut names could read the same).
    NameTooLong {
        /// The whole name.
        name: String,
    },
    /// An empty name (a reader takes an empty slot for an unnamed one) or one holding
    /// a NUL byte (a reader would end it there).
    BadName {
        /// The name.
        name: String,
    },
    /// A custom counter slot at or past [`CUSTOM`].
    NoSuchSlot {
        /// The slot asked for.
        slot: usize,
        /// The counter's name.
        name: String,
    },
}

impl std::fmt::Display for MetricsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricsError::Io(e) => write!(f, "{e}"),
            MetricsError::TileCount(n) => {
                write!(f, "a metrics region holds 1 to {MAX_TILES} tiles, not {n}")
            }
            MetricsError::NameTooLong { name } => write!(
                f,
                "name '{name}' is {} bytes; the metrics region holds names of up to {NAME_MAX}",
                name.len()
            ),
            MetricsError::BadName { name } => {
                write!(f, "name {name:?} is empty or holds a NUL byte")
            }
            MetricsError::NoSuchSlot { slot, name } => write!(
                f,
                "counter '{name}' at slot {slot}; a tile has custom slots 0 to {}",
                CUSTOM - 1
            ),
        }
    }
}

impl std::error::Error for MetricsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MetricsError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for MetricsError {
    fn from(e: io::Error) -> MetricsError {
        MetricsError::Io(e)
    }
}

/// Checks that `name` fits a name slot whole (see [`MetricsError`]).
pub fn check_name(name: &str) -> Result<(), MetricsError> {
    if name.len() > NAME_MAX {
        return Err(MetricsError::NameTooLong { name: name.into() });
    }
    if name.is_empty() || name.contains('\0') {
        return Err(MetricsError::BadName { name: name.into() });
    }
    Ok(())
}

/// Writes `name` into a slot of `w` (checked by [`check_name`] first, so it fits).
fn put_name(w: &[AtomicU64], name: &str) {
    let mut b = [0u8; NAME_MAX];
    let n = name.len().min(NAME_MAX);
    b[..n].copy_from_slice(&name.as_bytes()[..n]);
    for (slot, c) in w.iter().zip(b.chunks_exact(8)) {
        let mut x = [0u8; 8];
        x.copy_from_slice(c);
        slot.store(u64::from_le_bytes(x), Ordering::Relaxed);
    }
}

fn get_name(w: &[AtomicU64]) -> String {
    let b: Vec<u8> = w
        .iter()
        .flat_map(|x| x.load(Ordering::Relaxed).to_le_bytes())
        .take_while(|&c| c != 0)
        .collect();
    String::from_utf8_lossy(&b).into_owned()
}

/// A tile's own counters, declared once as an enum: each value names one of the
/// [`CUSTOM`] slots, so a tile counts `Dedup::Duplicate`, never slot 1, and the monitor
/// shows the name. A tile calls [`TileMetrics::declare`] in `on_start` and
/// [`TileMetrics::count`] where the event happens.
pub trait CustomCounter: Copy + 'static {
    /// Every counter of the tile, each with its own slot.
    const ALL: &'static [Self];
    /// Its slot, below [`CUSTOM`] (a slot past it is refused by
    /// [`TileMetrics::declare`] and ignored by [`TileMetrics::add_custom`]).
    fn slot(self) -> usize;
    /// Its name, as the monitor shows it: at most [`NAME_MAX`] bytes, or
    /// [`TileMetrics::declare`] refuses it.
    fn name(self) -> &'static str;
}

/// The writable region, owned by the pipeline.
#[derive(Debug)]
pub struct Metrics {
    map: MmapMut,
    tiles: usize,
}

/// One tile's block.
#[derive(Debug, Clone)]
pub struct TileMetrics {
    m: Arc<Metrics>,
    base: usize,
}

impl Metrics {
    /// Creates (or truncates) `path` with a block for each of `names` (each at most
    /// [`NAME_MAX`] bytes; checked before the file is touched).
    pub fn create(path: &Path, names: &[&str]) -> Result<Arc<Metrics>, MetricsError> {
        if names.is_empty() || names.len() > MAX_TILES {
            return Err(MetricsError::TileCount(names.len()));
        }
        for name in names {
            check_name(name)?;
        }
        let len = (HEADER_WORDS + names.len() * TILE_WORDS) * 8;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        file.set_len(len as u64)?;
        // SAFETY: the file was just sized by us; other processes only read it.
        let map = unsafe { MmapMut::map_mut(&file)? };
        let m = Metrics {
            map,
            tiles: names.len(),
        };
        let w = m.words();
        for (i, name) in names.iter().enumerate() {
            let base = HEADER_WORDS + i * TILE_WORDS;
            put_name(&w[base..base + NAME_WORDS], name);
        }
        w[1].store(VERSION, Ordering::Relaxed);
        w[2].store(names.len() as u64, Ordering::Relaxed);
        w[3].store(TILE_WORDS as u64, Ordering::Relaxed);
        w[4].store(u64::from(std::process::id()), Ordering::Relaxed);
        // The magic last: a reader that sees it sees a complete header.
        w[0].store(MAGIC, Ordering::Release);
        Ok(Arc::new(m))
    }

    fn words(&self) -> &[AtomicU64] {
        words(&self.map)
    }

    /// Number of tiles.
    pub fn tiles(&self) -> usize {
        self.tiles
    }

    /// Tile `i`'s block.
    pub fn tile(self: &Arc<Self>, i: usize) -> TileMetrics {
        assert!(i < self.tiles, "tile {i} of {}", self.tiles);
        TileMetrics {
            m: self.clone(),
            base: HEADER_WORDS + i * TILE_WORDS,
        }
    }

    /// Marks the pipeline alive now (monitors show the age of this).
    pub fn heartbeat(&self, state: u64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        self.words()[5].store(now, Ordering::Relaxed);
        self.words()[6].store(state, Ordering::Relaxed);
    }
}

impl TileMetrics {
    fn w(&self, off: usize) -> &AtomicU64 {
        &self.m.words()[self.base + off]
    }

    /// Adds `n` to a counter (single writer: a load and a store, no locked add).
    #[inline]
    pub fn add(&self, c: Counter, n: u64) {
        let w = self.w(OFF_COUNTERS + c as usize);
        w.store(w.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// Sets a counter.
    pub fn set(&self, c: Counter, v: u64) {
        self.w(OFF_COUNTERS + c as usize)
            .store(v, Ordering::Relaxed);
    }

    /// A counter's value.
    pub fn get(&self, c: Counter) -> u64 {
        self.w(OFF_COUNTERS + c as usize).load(Ordering::Relaxed)
    }

    /// Names custom counter `i` (below [`CUSTOM`]; a name of at most [`NAME_MAX`]
    /// bytes, refused otherwise, never cut).
    pub fn name_custom(&self, i: usize, name: &str) -> Result<(), MetricsError> {
        if i >= CUSTOM {
            return Err(MetricsError::NoSuchSlot {
                slot: i,
                name: name.into(),
            });
        }
        check_name(name)?;
        let at = self.base + OFF_CUSTOM_NAMES + i * CUSTOM_NAME_WORDS;
        put_name(&self.m.words()[at..at + CUSTOM_NAME_WORDS], name);
        Ok(())
    }

    /// Adds `n` to custom counter `i`.
    #[inline]
    pub fn add_custom(&self, i: usize, n: u64) {
        if i < CUSTOM {
            let w = self.w(OFF_CUSTOM + i);
            w.store(w.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
        }
    }

    /// Names every counter of `C` (the tile's declaration, once in `on_start`); the
    /// first name that does not fit its slot is refused.
    pub fn declare<C: CustomCounter>(&self) -> Result<(), MetricsError> {
        C::ALL.iter().try_for_each(|&c| self.declare_one(c))
    }

    /// Names one counter (for a counter that exists only in some configurations).
    pub fn declare_one<C: CustomCounter>(&self, c: C) -> Result<(), MetricsError> {
        self.name_custom(c.slot(), c.name())
    }

    /// Adds `n` to the named counter `c`.
    #[inline]
    pub fn count<C: CustomCounter>(&self, c: C, n: u64) {
        self.add_custom(c.slot(), n);
    }

    /// The named counter `c`'s value.
    pub fn get_count<C: CustomCounter>(&self, c: C) -> u64 {
        if c.slot() < CUSTOM {
            self.w(OFF_CUSTOM + c.slot()).load(Ordering::Relaxed)
        } else {
            0
        }
    }

    /// Sets the named counter `c` to `v` (a count kept elsewhere, such as the
    /// kernel's, copied in whole).
    pub fn set_count<C: CustomCounter>(&self, c: C, v: u64) {
        if c.slot() < CUSTOM {
            self.w(OFF_CUSTOM + c.slot()).store(v, Ordering::Relaxed);
        }
    }

    /// Records one latency sample in nanoseconds.
    #[inline]
    pub fn record_ns(&self, ns: u64) {
        let b = (63 - ns.max(1).leading_zeros() as usize).min(HIST_BUCKETS - 1);
        let w = self.w(OFF_HIST + b);
        w.store(w.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }
}

/// One tile as a reader sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileSnapshot {
    /// Tile name.
    pub name: String,
    /// The fixed counters, in [`COUNTER_NAMES`] order.
    pub counters: [u64; COUNTERS],
    /// Named custom counters (unnamed ones left out).
    pub custom: Vec<(String, u64)>,
    /// Latency histogram (power-of-two nanosecond buckets).
    pub hist: [u64; HIST_BUCKETS],
}

impl TileSnapshot {
    /// A fixed counter.
    pub fn get(&self, c: Counter) -> u64 {
        self.counters[c as usize]
    }

    /// Latency at quantile `q` (0..=1) in nanoseconds: the upper edge of the bucket
    /// holding it (None without samples).
    pub fn latency_ns(&self, q: f64) -> Option<u64> {
        let total: u64 = self.hist.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.hist.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some((2u64 << i) - 1);
            }
        }
        None
    }
}

/// A whole region as a reader sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Pipeline process id.
    pub pid: u64,
    /// Last heartbeat, ns since the epoch.
    pub heartbeat_ns: u64,
    /// Pipeline state: 0 running, 1 finished, 2 failed.
    pub state: u64,
    /// Every tile.
    pub tiles: Vec<TileSnapshot>,
}

fn parse(w: &[AtomicU64]) -> io::Result<Snapshot> {
    let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidData, m.to_string());
    if w.len() < HEADER_WORDS || w[0].load(Ordering::Acquire) != MAGIC {
        return Err(bad("not a wirespeed metrics file (bad magic)"));
    }
    let (version, tile_words) = (w[1].load(Ordering::Relaxed), w[3].load(Ordering::Relaxed));
    if version != VERSION || tile_words != TILE_WORDS as u64 {
        return Err(bad(&format!(
            "metrics file of layout version {version} ({tile_words} words per tile); this \
             build reads version {VERSION} ({TILE_WORDS} words per tile): use a monitor of \
             the pipeline's own build"
        )));
    }
    let tiles = w[2].load(Ordering::Relaxed) as usize;
    if tiles == 0 || tiles > MAX_TILES || w.len() < HEADER_WORDS + tiles * TILE_WORDS {
        return Err(bad("metrics file truncated or with a bad tile count"));
    }
    let mut out = Snapshot {
        pid: w[4].load(Ordering::Relaxed),
        heartbeat_ns: w[5].load(Ordering::Relaxed),
        state: w[6].load(Ordering::Relaxed),
        tiles: Vec::with_capacity(tiles),
    };
    for t in 0..tiles {
        let b = &w[HEADER_WORDS + t * TILE_WORDS..HEADER_WORDS + (t + 1) * TILE_WORDS];
        let mut s = TileSnapshot {
            name: get_name(&b[..NAME_WORDS]),
            ..TileSnapshot::default()
        };
        for (i, c) in s.counters.iter_mut().enumerate() {
            *c = b[OFF_COUNTERS + i].load(Ordering::Relaxed);
        }
        for i in 0..CUSTOM {
            let at = OFF_CUSTOM_NAMES + i * CUSTOM_NAME_WORDS;
            let name = get_name(&b[at..at + CUSTOM_NAME_WORDS]);
            if !name.is_empty() {
                s.custom
                    .push((name, b[OFF_CUSTOM + i].load(Ordering::Relaxed)));
            }
        }
        for (i, h) in s.hist.iter_mut().enumerate() {
            *h = b[OFF_HIST + i].load(Ordering::Relaxed);
        }
        out.tiles.push(s);
    }
    Ok(out)
}

/// Reads the region at `path` (from this or another process).
pub fn read(path: &Path) -> io::Result<Snapshot> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let max = ((HEADER_WORDS + MAX_TILES * TILE_WORDS) * 8) as u64;
    if len < (HEADER_WORDS * 8) as u64 || len > max || len % 8 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a wirespeed metrics file (size)",
        ));
    }
    // SAFETY: read-only mapping of a file the pipeline keeps at a fixed size; values
    // are read as atomics word by word.
    let map = unsafe { Mmap::map(&file)? };
    parse(words(&map))
}

impl Metrics {
    /// This region as a reader would see it.
    pub fn snapshot(&self) -> io::Result<Snapshot> {
        parse(self.words())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_names_and_histograms_round_trip_through_the_file() {
        let dir = std::env::temp_dir().join(format!("ws-disco-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join("m");
        let long = "a tile name of sixty-four bytes, every one of them kept: 64 ok!!";
        assert_eq!(long.len(), NAME_MAX);
        let m = Metrics::create(&path, &["parse", long]).unwrap_or_else(|e| panic!("{e}"));
        let t = m.tile(1);
        t.add(Counter::In, 5);
        t.add(Counter::In, 2);
        t.name_custom(3, "bad_sig")
            .unwrap_or_else(|e| panic!("{e}"));
        t.add_custom(3, 9);
        for ns in [1, 1000, 1000, 5_000_000] {
            t.record_ns(ns);
        }
        m.heartbeat(1);
        let s = read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.pid, u64::from(std::process::id()));
        assert_eq!(s.state, 1);
        assert_eq!(s.tiles.len(), 2);
        assert_eq!(s.tiles[0].name, "parse");
        assert_eq!(s.tiles[1].name, long);
        assert_eq!(s.tiles[1].get(Counter::In), 7);
        assert_eq!(s.tiles[1].custom, vec![("bad_sig".to_string(), 9)]);
        assert_eq!(s.tiles[1].latency_ns(0.5), Some(1023));
        assert_eq!(s.tiles[1].latency_ns(1.0), Some((1 << 23) - 1));
        assert_eq!(s.tiles[0].latency_ns(0.5), None);
        assert_eq!(m.snapshot().ok(), Some(s));
        drop(t);
        drop(m);
        std::fs::write(&path, [0u8; 64]).unwrap_or_else(|e| panic!("{e}"));
        assert!(read(&path).is_err(), "bad magic");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Seen {
        Kept,
        Dropped,
    }

    impl CustomCounter for Seen {
        const ALL: &'static [Seen] = &[Seen::Kept, Seen::Dropped];
        fn slot(self) -> usize {
            self as usize
        }
        fn name(self) -> &'static str {
            match self {
                Seen::Kept => "kept",
                Seen::Dropped => "dropped",
            }
        }
    }

    #[test]
    fn declared_counters_are_counted_by_name() {
        let dir = std::env::temp_dir().join(format!("ws-disco-custom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join("m");
        let m = Metrics::create(&path, &["a", "b"]).unwrap_or_else(|e| panic!("{e}"));
        let (a, b) = (m.tile(0), m.tile(1));
        a.declare::<Seen>().unwrap_or_else(|e| panic!("{e}"));
        b.declare_one(Seen::Dropped)
            .unwrap_or_else(|e| panic!("{e}"));
        a.count(Seen::Dropped, 3);
        a.count(Seen::Kept, 1);
        a.count(Seen::Dropped, 2);
        b.count(Seen::Dropped, 4);
        let s = m.snapshot().unwrap_or_else(|e| panic!("{e}"));
        let named = |v: &[(&str, u64)]| -> Vec<(String, u64)> {
            v.iter().map(|&(k, n)| (k.to_string(), n)).collect()
        };
        assert_eq!(s.tiles[0].custom, named(&[("kept", 1), ("dropped", 5)]));
        // Only the declared one is shown (slot 0 stays unnamed).
        assert_eq!(s.tiles[1].custom, named(&[("dropped", 4)]));
        // A count kept elsewhere is copied in whole.
        b.set_count(Seen::Dropped, 11);
        assert_eq!(b.get_count(Seen::Dropped), 11);
        let s = m.snapshot().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.tiles[1].custom, named(&[("dropped", 11)]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_are_kept_whole_or_refused() {
        let dir = std::env::temp_dir().join(format!("ws-disco-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join("m");
        // Counter names past the 24 bytes version 1 kept come back whole.
        let m = Metrics::create(&path, &["parse"]).unwrap_or_else(|e| panic!("{e}"));
        let t = m.tile(0);
        let long = "account_index_out_of_range";
        let longest = "x".repeat(NAME_MAX);
        t.name_custom(0, long).unwrap_or_else(|e| panic!("{e}"));
        t.name_custom(1, &longest).unwrap_or_else(|e| panic!("{e}"));
        // Refused, not cut; the slot stays unnamed.
        let over = "y".repeat(NAME_MAX + 1);
        let e = t.name_custom(2, &over).err();
        assert!(
            matches!(&e, Some(MetricsError::NameTooLong { name }) if *name == over),
            "{e:?}"
        );
        assert!(e.is_some_and(|e| e.to_string().contains(&format!("{}", NAME_MAX + 1))));
        for bad in ["", "nul\0inside"] {
            let e = t.name_custom(3, bad).err();
            assert!(matches!(e, Some(MetricsError::BadName { .. })), "{e:?}");
        }
        let e = t.name_custom(CUSTOM, "past").err();
        assert!(
            matches!(e, Some(MetricsError::NoSuchSlot { slot, .. }) if slot == CUSTOM),
            "{e:?}"
        );
        let s = read(&path).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = s.tiles[0].custom.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, [long, longest.as_str()]);
        drop(t);
        drop(m);
        // A tile name that does not fit is refused before the file is touched.
        let e = Metrics::create(&dir.join("other"), &["ok", &over]).err();
        assert!(matches!(e, Some(MetricsError::NameTooLong { .. })), "{e:?}");
        assert!(!dir.join("other").exists());
        assert!(matches!(
            Metrics::create(&dir.join("none"), &[]).err(),
            Some(MetricsError::TileCount(0))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_region_of_another_layout_version_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("ws-disco-version-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join("m");
        // A version 1 region: its header, one 128-word tile block.
        let mut old = vec![0u8; (HEADER_WORDS + 128) * 8];
        for (i, w) in [MAGIC, 1, 1, 128].iter().enumerate() {
            old[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        std::fs::write(&path, &old).unwrap_or_else(|e| panic!("{e}"));
        let e = read(&path).err();
        assert_eq!(
            e.as_ref().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
        let text = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains("layout version 1") && text.contains(&format!("version {VERSION}")),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! The scripting engine and what the event loops share for it: the script cache (bodies
//! by SHA1), the function libraries ([`library`]), and the running script's state
//! ([`Busy`]). Each loop has its own Lua interpreter ([`engine`]), which runs a script
//! with a command runner handed to it; the commands (EVAL, SCRIPT, FUNCTION, FCALL)
//! and the way a script's `redis.call` reaches the command table are in
//! `crate::cmd::scripting`.

pub mod engine;
pub mod library;
pub mod libs;
pub mod msgpack;
pub mod reply;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
/// SHA1 of `data` in lower-case hex.
pub fn sha1_hex(data: &[u8]) -> String {
    sha1_smol::Sha1::from(data).digest().to_string()
}

/// The state of the script running now (at most one at a time: it holds every shard).
#[derive(Debug, Default)]
pub struct Busy {
    /// When it started, ms since the epoch (0: none runs).
    since: AtomicU64,
    /// SCRIPT KILL asked it to stop.
    kill: AtomicBool,
    /// It has run a write command (it can no longer be killed).
    wrote: AtomicBool,
    /// It is a function (FCALL): FUNCTION KILL stops it, and BUSY names it.
    function: AtomicBool,
    /// The busy threshold as of its start, ms.
    threshold: AtomicU64,
    /// The client running it.
    client: AtomicU64,
    /// A function's name and the command that called it (FUNCTION STATS).
    running: std::sync::Mutex<Option<(String, Vec<Vec<u8>>)>>,
    /// What answers the running loop's other clients while a script is past the
    /// threshold (the server sets it; without it they wait for the script).
    pump: std::sync::OnceLock<fn()>,
}

impl Busy {
    /// When the running script started, ms since the epoch (0: none runs).
    pub fn since(&self) -> u64 {
        self.since.load(Ordering::Acquire)
    }

    /// A script starts: `function` for FCALL, the busy threshold as of now, the client.
    pub(crate) fn begin(&self, function: bool, threshold: u64, client: u64) {
        self.kill.store(false, Ordering::Relaxed);
        self.wrote.store(false, Ordering::Relaxed);
        self.function.store(function, Ordering::Relaxed);
        self.threshold.store(threshold, Ordering::Relaxed);
        self.client.store(client, Ordering::Relaxed);
        self.since
            .store(wirespeed_util::time::unix_ms().max(1), Ordering::Release);
    }

    /// Sets what answers a loop's other clients while its script runs too long.
    pub fn set_pump(&self, pump: fn()) {
        let _ = self.pump.set(pump);
    }

    /// Answers the running loop's other clients (from the script's hook).
    pub(crate) fn pump(&self) {
        if let Some(p) = self.pump.get() {
            p();
        }
    }

    /// The running script ended.
    pub(crate) fn end(&self) {
        self.since.store(0, Ordering::Release);
    }

    /// True once the running script has run a write command.
    pub fn wrote(&self) -> bool {
        self.wrote.load(Ordering::Relaxed)
    }

    /// The running script runs a write command (it can no longer be killed).
    pub(crate) fn mark_wrote(&self) {
        self.wrote.store(true, Ordering::Relaxed);
    }

    /// Sets the kill flag of the running script (of the kind `function` names), or the
    /// error saying why not (SCRIPT KILL, FUNCTION KILL): the other kind's kill gets
    /// the `-BUSY` error, as in Redis.
    pub(crate) fn kill(&self, function: bool) -> Result<(), String> {
        if self.since() == 0 {
            return Err("NOTBUSY No scripts in execution right now.".into());
        }
        if self.wrote() {
            return Err(
                "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.".into(),
            );
        }
        if self.function.load(Ordering::Relaxed) != function {
            return Err(busy_error(self));
        }
        self.kill.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The running function's name and command (FUNCTION STATS), when a function runs.
    pub fn running_function(&self) -> Option<(String, Vec<Vec<u8>>, u64)> {
        let since = self.since();
        if since == 0 || !self.function.load(Ordering::Relaxed) {
            return None;
        }
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let (name, command) = running.clone()?;
        Some((
            name,
            command,
            wirespeed_util::time::unix_ms().saturating_sub(since),
        ))
    }

    /// Notes the running function's name and command, for FUNCTION STATS.
    pub(crate) fn set_running(&self, running: Option<(String, Vec<Vec<u8>>)>) {
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) = running;
    }

    /// True once the running script was asked to stop.
    pub fn killed(&self) -> bool {
        self.kill.load(Ordering::Relaxed)
    }

    /// True when a script runs and has run for the busy threshold.
    pub fn past_threshold(&self) -> bool {
        let since = self.since.load(Ordering::Acquire);
        since != 0
            && wirespeed_util::time::unix_ms().saturating_sub(since)
                >= self.threshold.load(Ordering::Relaxed)
    }
}

/// The `-BUSY` error while `busy` runs.
pub(crate) fn busy_error(busy: &Busy) -> String {
    let what = if busy.function.load(Ordering::Relaxed) {
        "FUNCTION"
    } else {
        "SCRIPT"
    };
    format!(
        "BUSY Redis is busy running a script. You can only call {what} KILL or SHUTDOWN NOSAVE."
    )
}

/// The most scripts brought by EVAL (not SCRIPT LOAD) the cache keeps (Redis 7.4's).
pub const MAX_EVAL_SCRIPTS: usize = 500;

/// The script bodies by SHA1, with the EVAL-only ones in least-recently-used order.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    scripts: HashMap<String, Cached>,
    /// EVAL-only scripts by the tick of their last use.
    lru: std::collections::BTreeMap<u64, String>,
    tick: u64,
    /// What the entries hold (bytes): [`Cache::entry_bytes`] each.
    bytes: usize,
}

#[derive(Debug)]
struct Cached {
    body: Arc<[u8]>,
    /// Brought by SCRIPT LOAD (never dropped but by SCRIPT FLUSH).
    loaded: bool,
    /// Its key in `lru` (EVAL-only scripts).
    used: u64,
}

impl Cache {
    /// The body of `sha`, marked as used now.
    pub(crate) fn get(&mut self, sha: &str) -> Option<Arc<[u8]>> {
        self.tick += 1;
        let tick = self.tick;
        let c = self.scripts.get_mut(sha)?;
        if !c.loaded {
            self.lru.remove(&c.used);
            self.lru.insert(tick, sha.to_string());
            c.used = tick;
        }
        Some(c.body.clone())
    }

    pub(crate) fn contains(&self, sha: &str) -> bool {
        self.scripts.contains_key(sha)
    }

    fn len(&self) -> usize {
        self.scripts.len()
    }

    fn clear(&mut self) {
        self.scripts.clear();
        self.lru.clear();
        self.bytes = 0;
    }

    /// What one entry holds: the body, its SHA1 (the key, and the LRU order's for an
    /// EVAL-only script) and the record.
    fn entry_bytes(sha: &str, c: &Cached) -> usize {
        std::mem::size_of::<Cached>() + 2 * sha.len() + c.body.len()
    }

    /// Keeps `body` under `sha`; `loaded` for SCRIPT LOAD (which also keeps an
    /// EVAL-only script for good).
    pub(crate) fn add(&mut self, sha: &str, body: Arc<[u8]>, loaded: bool) {
        self.tick += 1;
        let tick = self.tick;
        match self.scripts.get_mut(sha) {
            Some(c) => {
                if loaded && !c.loaded {
                    self.lru.remove(&c.used);
                    c.loaded = true;
                } else if !c.loaded {
                    self.lru.remove(&c.used);
                    self.lru.insert(tick, sha.to_string());
                    c.used = tick;
                }
            }
            None => {
                if !loaded {
                    self.lru.insert(tick, sha.to_string());
                }
                let c = Cached {
                    body,
                    loaded,
                    used: tick,
                };
                self.bytes += Cache::entry_bytes(sha, &c);
                self.scripts.insert(sha.to_string(), c);
            }
        }
        while self.lru.len() > MAX_EVAL_SCRIPTS {
            if let Some((_, old)) = self.lru.pop_first() {
                if let Some(c) = self.scripts.remove(&old) {
                    self.bytes = self.bytes.saturating_sub(Cache::entry_bytes(&old, &c));
                }
            }
        }
    }
}

/// Identities of [`Scripts`] caches, so an interpreter knows which one it follows.
static NEXT_CACHE: AtomicU64 = AtomicU64::new(1);

/// What the event loops share for scripting: the script cache, the function
/// libraries, and the running script's state.
#[derive(Debug)]
pub struct Scripts {
    pub(crate) id: u64,
    bodies: Mutex<Cache>,
    /// Moves at every SCRIPT FLUSH.
    generation: AtomicU64,
    /// The running script.
    pub busy: Arc<Busy>,
    /// The function libraries (FUNCTION LOAD).
    pub libraries: library::Libraries,
    /// A script has run (the event loops then lend their connections to the busy
    /// pump while they serve one).
    used: AtomicBool,
}

impl Default for Scripts {
    fn default() -> Scripts {
        Scripts {
            id: NEXT_CACHE.fetch_add(1, Ordering::Relaxed),
            bodies: Mutex::new(Cache::default()),
            generation: AtomicU64::new(0),
            busy: Arc::new(Busy::default()),
            libraries: library::Libraries::default(),
            used: AtomicBool::new(false),
        }
    }
}

impl Scripts {
    /// Marks that a script or function has run on this server.
    pub(crate) fn mark_used(&self) {
        self.used.store(true, Ordering::Relaxed);
    }

    /// Empties the script cache (SCRIPT FLUSH): every interpreter drops its compiled
    /// scripts at its next run.
    pub(crate) fn flush(&self) {
        self.bodies().clear();
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The event loop whose client runs a script past the busy threshold, if any.
    pub fn busy_loop(&self, hub: &crate::hub::Hub) -> Option<usize> {
        if !self.busy.past_threshold() {
            return None;
        }
        hub.loop_of(self.busy.client.load(Ordering::Relaxed))
    }

    pub(crate) fn bodies(&self) -> MutexGuard<'_, Cache> {
        self.bodies.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn owner(&self) -> (u64, u64) {
        (self.id, self.generation.load(Ordering::Acquire))
    }

    /// True once a script or function has run on this server.
    pub fn used(&self) -> bool {
        self.used.load(Ordering::Relaxed)
    }

    /// Number of cached scripts (INFO `number_of_cached_scripts`).
    pub fn cached(&self) -> usize {
        self.bodies().len()
    }

    /// What the scripts hold (bytes): the script cache, the function libraries and
    /// these structures, which `used_memory` counts and `maxmemory` limits, as Redis
    /// counts its scripts' memory.
    pub fn memory(&self) -> usize {
        std::mem::size_of::<Scripts>() + self.bodies().bytes + self.libraries.memory()
    }
}

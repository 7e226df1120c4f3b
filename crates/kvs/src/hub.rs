//! What the event loops tell each other about clients: pub/sub messages, MONITOR
//! lines ([`crate::cmd::monitor`]) and the replies of clients blocked on keys (BLPOP
//! and the like). A client belongs to the
//! loop `id % loops` (the acceptor deals connections that way); anything for it goes
//! into that loop's inbox, and the loop is woken. The loop drains its inbox at the top
//! of each round, before it runs commands, so messages reach a client in the order
//! they were sent.
//!
//! - [`Subscriptions`]: channel, pattern and shard-channel subscribers. PUBLISH looks
//!   the subscribers up under one lock and hands each a shared copy of the message;
//!   the subscriber's loop encodes it in the client's protocol (RESP2 array or RESP3
//!   push) and drops it if the client unsubscribed meanwhile.
//! - [`Waiting`]: blocked clients, each with its command and the keys it waits on,
//!   first come first served per key. A client registers while it still holds the
//!   locks of the keys it found empty, and a write checks for waiters after it changed
//!   a key, so no wake-up is lost between the two. The loop that made a waited key
//!   ready runs the waiter's command again (as Redis 7.2 re-runs it), and sends the
//!   reply to the waiter's loop; a command that still finds nothing is put back at the
//!   head of its queues. A waiter leaves the registry exactly once: served, timed out
//!   or unblocked, or gone with its connection, whichever claims it first.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mio::Waker;

use crate::resp::Proto;

/// A published message, shared by its receivers.
#[derive(Debug)]
pub struct Published {
    /// The channel.
    pub channel: Vec<u8>,
    /// The payload.
    pub payload: Vec<u8>,
}

/// Which kind of subscription a message came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// SUBSCRIBE: `message`.
    Channel,
    /// PSUBSCRIBE: `pmessage`.
    Pattern,
    /// SSUBSCRIBE: `smessage`.
    Shard,
}

/// Something for one client.
#[derive(Debug)]
pub enum Msg {
    /// A message on a channel it subscribed to (`via`: the pattern, for a pattern
    /// subscription).
    Message {
        /// How it subscribed.
        kind: Kind,
        /// The pattern that matched (Kind::Pattern), else empty.
        via: Arc<[u8]>,
        /// The message.
        msg: Arc<Published>,
    },
    /// CLIENT KILL: close the connection now.
    Kill,
    /// A MONITOR line, ready to send.
    Monitor(Arc<[u8]>),
    /// Client-side caching: keys to drop from the client's cache (None: all of them);
    /// `redirected`: on behalf of another client (see [`crate::tracking`]).
    Invalidate {
        /// The keys.
        keys: crate::tracking::Keys,
        /// Sent on behalf of a client that redirects here.
        redirected: bool,
    },
    /// The client that this one's invalidations go to is gone (its id).
    RedirBroken(u64),
    /// The client was blocked: here is its reply, which waits for log record `seq`.
    Unblocked {
        /// The encoded reply.
        reply: Vec<u8>,
        /// The log record its effects went into (0: none).
        seq: u64,
    },
}

#[derive(Debug)]
struct Inbox {
    queue: Mutex<Vec<(u64, Msg)>>,
    waker: Option<Waker>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The loops' inboxes and the registries of subscribers and blocked clients.
#[derive(Debug)]
pub struct Hub {
    inboxes: Box<[Inbox]>,
    subs: Mutex<Subscriptions>,
    waiting: Mutex<Waiting>,
    /// Number of blocked clients (a write checks for waiters only when non-zero).
    blocked: AtomicUsize,
    /// Every connection's listed facts (CLIENT LIST), by id.
    clients: Mutex<std::collections::BTreeMap<u64, Arc<ClientMeta>>>,
    /// Client-side caching (CLIENT TRACKING).
    pub tracking: crate::tracking::Tracking,
}

impl Hub {
    /// A hub for loops woken by `wakers` (none: messages are dropped, for tests that
    /// run commands without loops).
    pub fn new(wakers: Vec<Waker>) -> Hub {
        Hub {
            inboxes: wakers
                .into_iter()
                .map(|w| Inbox {
                    queue: Mutex::new(Vec::new()),
                    waker: Some(w),
                })
                .collect(),
            subs: Mutex::new(Subscriptions::default()),
            waiting: Mutex::new(Waiting::default()),
            blocked: AtomicUsize::new(0),
            clients: Mutex::new(Default::default()),
            tracking: Default::default(),
        }
    }

    /// True when connection `id` is open.
    pub fn has_client(&self, id: u64) -> bool {
        lock(&self.clients).contains_key(&id)
    }

    /// A new connection.
    pub fn register(&self, meta: Arc<ClientMeta>) {
        lock(&self.clients).insert(meta.id, meta);
    }

    /// A connection gone.
    pub fn unregister(&self, id: u64) {
        lock(&self.clients).remove(&id);
    }

    /// Every connection, by id.
    pub fn clients(&self) -> Vec<Arc<ClientMeta>> {
        lock(&self.clients).values().cloned().collect()
    }

    /// Number of event loops.
    pub fn loops(&self) -> usize {
        self.inboxes.len()
    }

    /// Wakes loop `i` (a new connection in its mailbox).
    pub fn wake(&self, i: usize) {
        if let Some(w) = self.inboxes.get(i).and_then(|b| b.waker.as_ref()) {
            let _ = w.wake();
        }
    }

    /// The loop that serves client `id`.
    pub fn loop_of(&self, id: u64) -> Option<usize> {
        (!self.inboxes.is_empty()).then(|| (id % self.inboxes.len() as u64) as usize)
    }

    /// Sends messages, grouped by loop: one lock and one wake-up per loop.
    pub fn deliver(&self, msgs: Vec<(u64, Msg)>) {
        if self.inboxes.is_empty() || msgs.is_empty() {
            return;
        }
        let mut by_loop: Vec<Vec<(u64, Msg)>> =
            (0..self.inboxes.len()).map(|_| Vec::new()).collect();
        for (id, m) in msgs {
            if let Some(i) = self.loop_of(id) {
                by_loop[i].push((id, m));
            }
        }
        for (i, msgs) in by_loop.into_iter().enumerate() {
            if msgs.is_empty() {
                continue;
            }
            lock(&self.inboxes[i].queue).extend(msgs);
            self.wake(i);
        }
    }

    /// What is waiting for loop `i`'s clients, oldest first.
    pub fn drain(&self, i: usize, into: &mut Vec<(u64, Msg)>) {
        if let Some(b) = self.inboxes.get(i) {
            let mut q = lock(&b.queue);
            if !q.is_empty() {
                into.append(&mut q);
            }
        }
    }

    /// The subscriber registry.
    pub fn subs(&self) -> MutexGuard<'_, Subscriptions> {
        lock(&self.subs)
    }

    /// True when some client is blocked (one atomic load).
    #[inline]
    pub fn any_blocked(&self) -> bool {
        self.blocked.load(Ordering::Acquire) != 0
    }

    /// Registers blocked client `id`, behind the clients already waiting on its keys
    /// (`front`: ahead of them, for a client served too early that must wait again).
    pub fn block(&self, id: u64, waiter: Waiter, front: bool) {
        let mut w = lock(&self.waiting);
        for k in &waiter.keys {
            let q = w.keys.entry((waiter.db, k.clone())).or_default();
            if front {
                q.push_front(id);
            } else {
                q.push_back(id);
            }
        }
        if w.clients.insert(id, waiter).is_none() {
            self.blocked.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Takes client `id` out of the registry: None when it is not there (never
    /// blocked, or claimed already).
    pub fn claim(&self, id: u64) -> Option<Waiter> {
        let mut w = lock(&self.waiting);
        let waiter = w.clients.remove(&id)?;
        self.blocked.fetch_sub(1, Ordering::AcqRel);
        for k in &waiter.keys {
            let k = (waiter.db, k.clone());
            if let Some(q) = w.keys.get_mut(&k) {
                q.retain(|&x| x != id);
                if q.is_empty() {
                    w.keys.remove(&k);
                }
            }
        }
        Some(waiter)
    }

    /// Among `keys` of database `db`, those some client waits on.
    pub fn waited(&self, db: usize, keys: &[&[u8]]) -> Vec<Vec<u8>> {
        let w = lock(&self.waiting);
        let mut out: Vec<Vec<u8>> = Vec::new();
        for k in keys {
            if w.keys.contains_key(&(db, k.to_vec())) && !out.iter().any(|o| o == k) {
                out.push(k.to_vec());
            }
        }
        out
    }

    /// The keys of database `db` some client waits on.
    pub fn waited_in(&self, db: usize) -> Vec<Vec<u8>> {
        let w = lock(&self.waiting);
        w.keys
            .keys()
            .filter(|(d, _)| *d == db)
            .map(|(_, k)| k.clone())
            .collect()
    }

    /// Claims the first client waiting on `key` whose command `wants` (the key's
    /// type now): a client waiting for a list is not woken by a string put there.
    pub fn next_waiter(
        &self,
        db: usize,
        key: &[u8],
        wants: impl Fn(&Waiter) -> bool,
    ) -> Option<(u64, Waiter)> {
        let key = (db, key.to_vec());
        loop {
            let id = {
                let w = lock(&self.waiting);
                let q = w.keys.get(&key)?;
                *q.iter().find(|id| w.clients.get(id).is_some_and(&wants))?
            };
            // Another loop may claim it between the two locks: then look again.
            if let Some(waiter) = self.claim(id) {
                return Some((id, waiter));
            }
        }
    }

    /// The keys clients wait on, and those among them that an XREADGROUP waits on
    /// (INFO `total_blocking_keys`, `total_blocking_keys_on_nokey`: such a client is
    /// also woken when its key goes).
    pub fn blocking_keys(&self) -> (usize, usize) {
        let w = lock(&self.waiting);
        let nokey = w
            .keys
            .values()
            .filter(|q| {
                q.iter()
                    .any(|id| w.clients.get(id).is_some_and(Waiter::on_any_change))
            })
            .count();
        (w.keys.len(), nokey)
    }

    /// Number of blocked clients (INFO `blocked_clients`).
    pub fn blocked_count(&self) -> usize {
        self.blocked.load(Ordering::Acquire)
    }
}

/// A blocked client's command, re-run when one of its keys changes.
#[derive(Debug, Clone)]
pub struct Waiter {
    /// The command, name first.
    pub argv: Vec<Vec<u8>>,
    /// The keys it waits on.
    pub keys: Vec<Vec<u8>>,
    /// Their database.
    pub db: usize,
    /// The client's protocol (the reply's encoding).
    pub proto: Proto,
    /// The client's ACL user (None: `default`): the command is checked again when run.
    pub user: Option<Arc<[u8]>>,
}

impl Waiter {
    /// The type of value it waits for: `zset` for BZPOPMIN, BZPOPMAX and BZMPOP,
    /// `stream` for XREAD and XREADGROUP, else `list`.
    pub fn wants(&self) -> &'static str {
        let name = self.argv.first().map_or(&[][..], |n| &n[..]);
        if name.len() > 2 && name[..2].eq_ignore_ascii_case(b"bz") {
            "zset"
        } else if name.len() > 1 && name[0].eq_ignore_ascii_case(&b'x') {
            "stream"
        } else {
            "list"
        }
    }
}

impl Waiter {
    /// True for a command woken by any change to its keys, not only by data of its
    /// type (XREADGROUP: a deleted key or group is an error it must answer).
    pub fn on_any_change(&self) -> bool {
        self.argv
            .first()
            .is_some_and(|n| n.eq_ignore_ascii_case(b"xreadgroup"))
    }
}

/// Blocked clients by key, first come first served.
#[derive(Debug, Default)]
pub struct Waiting {
    keys: HashMap<(usize, Vec<u8>), VecDeque<u64>>,
    clients: HashMap<u64, Waiter>,
}

/// A pattern (shared by the messages it matched) and its subscribers.
type Subscribers = (Arc<[u8]>, Vec<u64>);

/// Subscribers of channels, patterns and shard channels, in subscription order.
#[derive(Debug, Default)]
pub struct Subscriptions {
    channels: HashMap<Vec<u8>, Vec<u64>>,
    patterns: HashMap<Vec<u8>, Subscribers>,
    shard: HashMap<Vec<u8>, Vec<u64>>,
}

impl Subscriptions {
    /// Adds `id` to the subscribers of `name`.
    pub fn add(&mut self, kind: Kind, name: &[u8], id: u64) {
        let ids = match kind {
            Kind::Channel => self.channels.entry(name.to_vec()).or_default(),
            Kind::Shard => self.shard.entry(name.to_vec()).or_default(),
            Kind::Pattern => {
                &mut self
                    .patterns
                    .entry(name.to_vec())
                    .or_insert_with(|| (Arc::from(name), Vec::new()))
                    .1
            }
        };
        if !ids.contains(&id) {
            ids.push(id);
        }
    }

    /// Removes `id` from the subscribers of `name`.
    pub fn remove(&mut self, kind: Kind, name: &[u8], id: u64) {
        fn drop_id(ids: &mut Vec<u64>, id: u64) -> bool {
            ids.retain(|&x| x != id);
            ids.is_empty()
        }
        match kind {
            Kind::Channel => {
                if self.channels.get_mut(name).is_some_and(|v| drop_id(v, id)) {
                    self.channels.remove(name);
                }
            }
            Kind::Shard => {
                if self.shard.get_mut(name).is_some_and(|v| drop_id(v, id)) {
                    self.shard.remove(name);
                }
            }
            Kind::Pattern => {
                if self
                    .patterns
                    .get_mut(name)
                    .is_some_and(|v| drop_id(&mut v.1, id))
                {
                    self.patterns.remove(name);
                }
            }
        }
    }

    /// The messages for a publication on `channel` (shard channels: `shard`), one per
    /// receiver.
    pub fn publish(&self, shard: bool, channel: &[u8], payload: &[u8]) -> Vec<(u64, Msg)> {
        let msg = Arc::new(Published {
            channel: channel.to_vec(),
            payload: payload.to_vec(),
        });
        let none: Arc<[u8]> = Arc::from(&b""[..]);
        let mut out = Vec::new();
        let (table, kind) = if shard {
            (&self.shard, Kind::Shard)
        } else {
            (&self.channels, Kind::Channel)
        };
        for &id in table.get(channel).into_iter().flatten() {
            out.push((
                id,
                Msg::Message {
                    kind,
                    via: none.clone(),
                    msg: msg.clone(),
                },
            ));
        }
        if !shard {
            for (pattern, ids) in self.patterns.values() {
                if crate::glob::glob(pattern, channel) {
                    for &id in ids {
                        out.push((
                            id,
                            Msg::Message {
                                kind: Kind::Pattern,
                                via: pattern.clone(),
                                msg: msg.clone(),
                            },
                        ));
                    }
                }
            }
        }
        out
    }

    /// Channels (or shard channels) with at least one subscriber, matching `pattern`.
    pub fn channels(&self, shard: bool, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        let table = if shard { &self.shard } else { &self.channels };
        table
            .keys()
            .filter(|c| pattern.is_none_or(|p| crate::glob::glob(p, c)))
            .cloned()
            .collect()
    }

    /// Subscribers of `channel`.
    pub fn count(&self, shard: bool, channel: &[u8]) -> usize {
        let table = if shard { &self.shard } else { &self.channels };
        table.get(channel).map_or(0, Vec::len)
    }

    /// Clients with at least one subscription (INFO `pubsub_clients`).
    pub fn clients(&self) -> usize {
        let mut ids: Vec<u64> = self
            .channels
            .values()
            .chain(self.shard.values())
            .chain(self.patterns.values().map(|(_, ids)| ids))
            .flatten()
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    /// Patterns with at least one subscriber.
    pub fn patterns(&self) -> usize {
        self.patterns.len()
    }

    /// Calls `f` with each subscription: its kind, channel or pattern, and client.
    pub fn each(&self, mut f: impl FnMut(Kind, &[u8], u64)) {
        for (name, ids) in &self.channels {
            ids.iter().for_each(|&id| f(Kind::Channel, name, id));
        }
        for (name, ids) in &self.shard {
            ids.iter().for_each(|&id| f(Kind::Shard, name, id));
        }
        for (name, (_, ids)) in &self.patterns {
            ids.iter().for_each(|&id| f(Kind::Pattern, name, id));
        }
    }
}

/// What the server lists of one connection.
#[derive(Debug, Default)]
pub struct ClientMeta {
    /// CLIENT ID.
    pub id: u64,
    /// The peer's address (`ip:port`).
    pub addr: String,
    /// The local address it connected to.
    pub laddr: String,
    /// When it connected, ms since the epoch.
    pub created_ms: u64,
    /// Its last command's end, ms since the epoch.
    pub last_ms: AtomicU64,
    /// Its last command's row in the command table, plus one (0: none yet).
    pub last_cmd: AtomicUsize,
    /// CLIENT SETNAME.
    pub name: Mutex<Option<Vec<u8>>>,
    /// Channel, pattern and shard-channel subscriptions.
    pub subs: [AtomicUsize; 3],
    /// Speaks RESP3.
    pub resp3: AtomicBool,
    /// CLIENT NO-EVICT on.
    pub no_evict: AtomicBool,
    /// Pending reply bytes, as of its loop's last round.
    pub omem: AtomicUsize,
    /// The selected database.
    pub db: AtomicUsize,
    /// In MONITOR mode.
    pub monitor: AtomicBool,
    /// A replica's connection (after PSYNC).
    pub replica: AtomicBool,
    /// CLIENT SETINFO LIB-NAME and LIB-VER.
    pub lib: Mutex<(String, String)>,
    /// Its ACL user (None: `default`).
    pub user: Mutex<Option<Arc<[u8]>>>,
}

impl ClientMeta {
    /// A new connection's facts.
    pub fn new(id: u64, addr: String, laddr: String, now: u64) -> ClientMeta {
        ClientMeta {
            id,
            addr,
            laddr,
            created_ms: now,
            last_ms: AtomicU64::new(now),
            ..ClientMeta::default()
        }
    }
}

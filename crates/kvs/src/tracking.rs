//! Client-side caching (CLIENT TRACKING), with Redis 7's replies and messages.
//!
//! Two ways to track:
//! - default mode: the keys a tracking client reads (the key positions of the
//!   read-only commands it runs; with OPTIN only after CLIENT CACHING YES, with OPTOUT
//!   unless CLIENT CACHING NO) go into one table, key to client ids. A change to a key
//!   takes it out of the table and sends each of its clients one invalidation.
//! - BCAST: a client registers prefixes (none: the empty one, every key); a change to
//!   a key that starts with one of them goes to its clients. The keys a command
//!   changed are sent together, one message per prefix.
//!
//! The keys a command changed are the ones its log effects name (effects are recorded
//! while any client tracks); keys that expire or are evicted come the way keyspace
//! notifications learn of them. Messages go through the [`Hub`] to the loop of the
//! receiving client, which encodes them for its protocol: a RESP3 push `invalidate`,
//! or for a RESP2 client that others redirect to and that subscribed, a `message` on
//! `__redis__:invalidate`. A client that redirects to a connection gone gets a
//! `tracking-redir-broken` push instead.
//!
//! Costs: a server where nobody tracks pays one atomic load per command
//! ([`Tracking::any`]). The table is bounded by `tracking-table-max-keys`: past it,
//! the oldest keys are forgotten (their clients invalidated), after the read that
//! added keys and, when the setting is lowered, a bounded number per loop round. Once
//! no client tracks, the table is emptied.
//! Messages to a client count against its output buffer limit like any reply.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::aof::Effect;
use crate::hub::{Hub, Msg};
use crate::resp::Proto;

/// The pub/sub channel of invalidations for RESP2 clients.
pub const CHANNEL: &[u8] = b"__redis__:invalidate";

/// One client's tracking settings (CLIENT TRACKING ON ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mode {
    /// REDIRECT: the client that receives the invalidations (0: this one).
    pub redirect: u64,
    /// BCAST: by prefix rather than by the keys read.
    pub bcast: bool,
    /// OPTIN: keys are tracked only after CLIENT CACHING YES.
    pub optin: bool,
    /// OPTOUT: keys are tracked unless after CLIENT CACHING NO.
    pub optout: bool,
    /// NOLOOP: not for the client's own changes.
    pub noloop: bool,
    /// BCAST prefixes, in order.
    pub prefixes: Vec<Vec<u8>>,
    /// CLIENT CACHING was given, for the next command.
    pub caching: bool,
}

/// What the senders need to know of a tracking client.
#[derive(Debug, Clone, Copy)]
struct Sender {
    redirect: u64,
    bcast: bool,
    noloop: bool,
}

#[derive(Debug, Default)]
struct Table {
    /// Default mode: key to the clients that read it.
    keys: HashMap<Vec<u8>, Vec<u64>>,
    /// The keys in the order they entered, the first evicted past the bound (may
    /// name keys gone since: skipped; rebuilt when it outgrows the table).
    order: VecDeque<Vec<u8>>,
    /// Sum of the clients over the keys.
    items: usize,
    /// Tracking clients.
    clients: HashMap<u64, Sender>,
    /// BCAST: prefix to its clients.
    prefixes: HashMap<Vec<u8>, Vec<u64>>,
    /// The longest prefix registered.
    longest: usize,
}

/// The server's tracking state (one, in the [`Hub`]).
#[derive(Debug, Default)]
pub struct Tracking {
    /// Tracking clients: zero means nothing to do.
    active: AtomicUsize,
    table: Mutex<Table>,
}

/// An invalidation: the keys (None: every key, after a flush).
pub type Keys = Option<Arc<Vec<Vec<u8>>>>;

impl Tracking {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True when some client tracks (one atomic load).
    #[inline]
    pub fn any(&self) -> bool {
        self.active.load(Ordering::Relaxed) != 0
    }

    /// Client `id` tracks with `mode` (replacing its settings; BCAST prefixes add to
    /// those it had).
    pub fn enable(&self, id: u64, mode: &Mode) {
        let mut t = self.lock();
        let s = Sender {
            redirect: mode.redirect,
            bcast: mode.bcast,
            noloop: mode.noloop,
        };
        t.clients.insert(id, s);
        for p in &mode.prefixes {
            let ids = t.prefixes.entry(p.clone()).or_default();
            if !ids.contains(&id) {
                ids.push(id);
            }
            t.longest = t.longest.max(p.len());
        }
        self.active.store(t.clients.len(), Ordering::Relaxed);
    }

    /// Client `id` stops tracking (CLIENT TRACKING OFF, or it disconnected). Keys it
    /// read stay until changed or evicted (nothing is sent for them), or until no
    /// client tracks.
    pub fn disable(&self, id: u64, prefixes: &[Vec<u8>]) {
        let mut t = self.lock();
        if t.clients.remove(&id).is_none() {
            return;
        }
        for p in prefixes {
            if let Some(ids) = t.prefixes.get_mut(p) {
                ids.retain(|&x| x != id);
                if ids.is_empty() {
                    t.prefixes.remove(p);
                }
            }
        }
        if t.prefixes.is_empty() {
            t.longest = 0;
        }
        if t.clients.is_empty() {
            // Nobody tracks: the keys read are forgotten (nothing would be sent for
            // them, and no change is watched for them any more).
            t.keys = HashMap::new();
            t.order = VecDeque::new();
            t.items = 0;
        }
        self.active.store(t.clients.len(), Ordering::Relaxed);
    }

    /// INFO: tracking clients, keys, items (key and client pairs) and prefixes.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let t = self.lock();
        (t.clients.len(), t.keys.len(), t.items, t.prefixes.len())
    }

    /// Client `id` read `keys` (default mode); past `max` keys (0: no bound) others
    /// are forgotten and invalidated.
    pub fn remember(&self, hub: &Hub, id: u64, keys: &[&[u8]], max: usize) {
        let mut t = self.lock();
        for k in keys {
            let added = match t.keys.get_mut(*k) {
                Some(ids) if ids.contains(&id) => false,
                Some(ids) => {
                    ids.push(id);
                    true
                }
                None => {
                    t.keys.insert(k.to_vec(), vec![id]);
                    t.order.push_back(k.to_vec());
                    true
                }
            };
            t.items += added as usize;
        }
        if t.order.len() > 2 * t.keys.len() + 1024 {
            t.order = t.keys.keys().cloned().collect();
        }
        if max == 0 || t.keys.len() <= max {
            return;
        }
        let mut out = Vec::new();
        t.evict(max, usize::MAX, &mut out);
        drop(t);
        hub.deliver(messages(hub, out));
    }

    /// Brings the table within `max` keys (0: no bound; the setting was lowered),
    /// a bounded number per call (the loops call it each round while some client
    /// tracks), invalidating the keys forgotten.
    pub fn limit(&self, hub: &Hub, max: usize) {
        let mut t = self.lock();
        if max == 0 || t.keys.len() <= max {
            return;
        }
        let mut out = Vec::new();
        t.evict(max, EVICT_PER_ROUND, &mut out);
        drop(t);
        hub.deliver(messages(hub, out));
    }

    /// Invalidates the keys that `writer` (0: the server itself) changed: the clients
    /// that read them, and the BCAST clients of their prefixes.
    pub fn invalidate(&self, hub: &Hub, writer: u64, keys: &[&[u8]]) {
        let mut msgs = Vec::new();
        self.invalidate_into(hub, writer, keys, &mut msgs);
        hub.deliver(msgs);
    }

    /// [`Tracking::invalidate`], its messages added to `msgs` for the caller to deliver.
    fn invalidate_into(&self, hub: &Hub, writer: u64, keys: &[&[u8]], msgs: &mut Vec<(u64, Msg)>) {
        let mut t = self.lock();
        let mut out = Vec::new();
        for k in keys {
            if t.keys.contains_key(*k) {
                t.take_key(k, writer, &mut out);
            }
        }
        if !t.prefixes.is_empty() {
            // Per prefix, the keys under it; then per client of the prefix, those it
            // is told of.
            let mut by_prefix: Vec<(&[u8], Vec<Vec<u8>>)> = Vec::new();
            for k in keys {
                for n in 0..=k.len().min(t.longest) {
                    let Some((p, _)) = t.prefixes.get_key_value(&k[..n]) else {
                        continue;
                    };
                    match by_prefix.iter_mut().find(|(q, _)| *q == p.as_slice()) {
                        Some((_, ks)) => {
                            if !ks.iter().any(|x| x == k) {
                                ks.push(k.to_vec());
                            }
                        }
                        None => by_prefix.push((p.as_slice(), vec![k.to_vec()])),
                    }
                }
            }
            for (p, ks) in by_prefix {
                let ks = Arc::new(ks);
                for &id in t.prefixes.get(p).into_iter().flatten() {
                    let Some(s) = t.clients.get(&id) else {
                        continue;
                    };
                    if s.noloop && id == writer {
                        continue;
                    }
                    out.push((id, *s, Some(ks.clone())));
                }
            }
        }
        drop(t);
        msgs.extend(messages(hub, out));
    }

    /// A flush: every tracking client is told (a null invalidation) and the table is
    /// emptied.
    pub fn flush(&self, hub: &Hub) {
        let mut msgs = Vec::new();
        self.flush_into(hub, &mut msgs);
        hub.deliver(msgs);
    }

    fn flush_into(&self, hub: &Hub, msgs: &mut Vec<(u64, Msg)>) {
        let mut t = self.lock();
        t.keys = HashMap::new();
        t.order = VecDeque::new();
        t.items = 0;
        let out = t.clients.iter().map(|(&id, &s)| (id, s, None)).collect();
        drop(t);
        msgs.extend(messages(hub, out));
    }

    /// The invalidations of a command's effects, `writer` the client that ran it.
    pub fn after_effects(&self, hub: &Hub, writer: u64, effects: &[Effect]) {
        let mut msgs = Vec::new();
        self.after_effects_into(hub, writer, effects, &mut msgs);
        hub.deliver(msgs);
    }

    /// [`Tracking::after_effects`], its messages added to `msgs` (after a blocked
    /// client's reply, which must reach it first).
    pub fn after_effects_into(
        &self,
        hub: &Hub,
        writer: u64,
        effects: &[Effect],
        msgs: &mut Vec<(u64, Msg)>,
    ) {
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut flushed = false;
        collect(effects, &mut keys, &mut flushed);
        if flushed {
            self.flush_into(hub, msgs);
        }
        if !keys.is_empty() {
            keys.sort_unstable();
            keys.dedup();
            self.invalidate_into(hub, writer, &keys, msgs);
        }
    }
}

impl Table {
    /// Forgets the oldest keys until at most `max` remain (at most `budget` of them).
    fn evict(&mut self, max: usize, budget: usize, out: &mut Vec<Outgoing>) {
        let mut n = 0;
        while self.keys.len() > max && n < budget {
            let Some(k) = self.order.pop_front() else {
                self.order = self.keys.keys().cloned().collect();
                if self.order.is_empty() {
                    break;
                }
                continue;
            };
            if self.keys.contains_key(&k) {
                self.take_key(&k, 0, out);
                n += 1;
            }
        }
    }

    /// Takes `key` out of the default-mode table, for its clients' invalidations.
    fn take_key(&mut self, key: &[u8], writer: u64, out: &mut Vec<Outgoing>) {
        let Some(ids) = self.keys.remove(key) else {
            return;
        };
        self.items -= ids.len();
        let ks = Arc::new(vec![key.to_vec()]);
        for id in ids {
            let Some(s) = self.clients.get(&id) else {
                continue;
            };
            if s.bcast || (s.noloop && id == writer) {
                continue;
            }
            out.push((id, *s, Some(ks.clone())));
        }
    }
}

/// The keys a list of effects changes, and whether one is a flush.
fn collect<'e>(effects: &'e [Effect], keys: &mut Vec<&'e [u8]>, flushed: &mut bool) {
    for e in effects {
        match e {
            Effect::Batch(inner) => collect(inner, keys, flushed),
            Effect::Clear => *flushed = true,
            Effect::Db { effect, .. } if matches!(**effect, Effect::Clear) => *flushed = true,
            Effect::SwapDb { .. } => *flushed = true,
            e => {
                if let Some(k) = e.key() {
                    keys.push(k);
                }
            }
        }
    }
}

/// An invalidation for tracking client `id` (with its settings).
type Outgoing = (u64, Sender, Keys);

/// Keys forgotten per call of [`Tracking::limit`].
const EVICT_PER_ROUND: usize = 10_000;

/// The messages of invalidations: to the client, or to the one it redirects to; to a
/// client whose redirect is gone, `tracking-redir-broken`.
fn messages(hub: &Hub, out: Vec<Outgoing>) -> Vec<(u64, Msg)> {
    if out.is_empty() {
        return Vec::new();
    }
    let mut msgs = Vec::with_capacity(out.len());
    let mut known: Vec<(u64, bool)> = Vec::new();
    for (id, s, keys) in out {
        if s.redirect == 0 {
            msgs.push((
                id,
                Msg::Invalidate {
                    keys,
                    redirected: false,
                },
            ));
            continue;
        }
        let alive = match known.iter().find(|(r, _)| *r == s.redirect) {
            Some(&(_, a)) => a,
            None => {
                let a = hub.has_client(s.redirect);
                known.push((s.redirect, a));
                a
            }
        };
        if alive {
            msgs.push((
                s.redirect,
                Msg::Invalidate {
                    keys,
                    redirected: true,
                },
            ));
        } else {
            msgs.push((id, Msg::RedirBroken(s.redirect)));
        }
    }
    msgs
}

/// Encodes a tracking message for a client speaking `proto` (`subscribed`: it has a
/// pub/sub subscription); false when the client is not sent it.
pub fn encode(out: &mut Vec<u8>, proto: Proto, subscribed: bool, msg: &Msg) -> bool {
    let resp3 = proto == Proto::Resp3;
    let mut w = crate::resp::Writer::new(out, proto);
    match msg {
        Msg::Invalidate { keys, redirected } => {
            if resp3 {
                w.raw(b">2\r\n");
                w.bulk(b"invalidate");
            } else if *redirected && subscribed {
                w.array(3);
                w.bulk(b"message");
                w.bulk(CHANNEL);
            } else {
                return false;
            }
            match keys {
                Some(ks) => {
                    w.array(ks.len());
                    for k in ks.iter() {
                        w.bulk(k);
                    }
                }
                None => w.null_array(),
            }
            true
        }
        Msg::RedirBroken(id) if resp3 => {
            w.raw(b">2\r\n");
            w.bulk(b"tracking-redir-broken");
            w.int(*id as i64);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_mode_sends_once_and_forgets() {
        let hub = Hub::new(Vec::new());
        let t = &hub.tracking;
        assert!(!t.any());
        t.enable(7, &Mode::default());
        assert!(t.any());
        t.remember(&hub, 7, &[b"a", b"b"], 0);
        t.remember(&hub, 7, &[b"a"], 0);
        assert_eq!(t.counts(), (1, 2, 2, 0));
        t.invalidate(&hub, 0, &[b"a"]);
        assert_eq!(t.counts(), (1, 1, 1, 0));
        t.flush(&hub);
        assert_eq!(t.counts(), (1, 0, 0, 0));
        t.disable(7, &[]);
        assert!(!t.any());
    }

    #[test]
    fn table_is_bounded() {
        let hub = Hub::new(Vec::new());
        let t = &hub.tracking;
        t.enable(1, &Mode::default());
        for i in 0..100u32 {
            t.remember(&hub, 1, &[&i.to_be_bytes()], 10);
        }
        assert_eq!(t.counts().1, 10);
    }

    #[test]
    fn encodes_as_redis() {
        let keys: Keys = Some(Arc::new(vec![b"k".to_vec()]));
        let m = Msg::Invalidate {
            keys,
            redirected: true,
        };
        let mut out = Vec::new();
        assert!(encode(&mut out, Proto::Resp3, false, &m));
        assert_eq!(out, b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
        out.clear();
        assert!(encode(&mut out, Proto::Resp2, true, &m));
        assert!(out.starts_with(b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"));
        out.clear();
        assert!(!encode(&mut out, Proto::Resp2, false, &m));
        let none = Msg::Invalidate {
            keys: None,
            redirected: false,
        };
        assert!(encode(&mut out, Proto::Resp3, false, &none));
        assert!(out.ends_with(b"_\r\n") || out.ends_with(b"*-1\r\n"));
    }
}

//! Redis Cluster mode (`cluster-enabled yes`): this node's view of the cluster — the
//! nodes it knows, which primary serves each of the 16384 hash slots, the epochs —
//! persisted in `cluster-config-file` (Redis's `nodes.conf` lines, written atomically),
//! and the routing of keyed commands (MOVED, CROSSSLOT, CLUSTERDOWN, READONLY
//! replicas).
//!
//! The nodes talk over the cluster bus ([`bus`], the client port plus 10000), with this
//! server's own messages: each node tells every node it knows, a few times a second,
//! its id, address, role, primary, config epoch, current epoch and slots, and what it
//! knows of the others (gossip), so that nodes met through one (`CLUSTER MEET`) meet
//! the rest. A slot belongs to the primary that claims it with the highest config
//! epoch, as in Redis. The tools talk to the client port only (`redis-cli --cluster`,
//! cluster clients), with Redis's commands and replies; a real Redis node cannot join
//! (its bus speaks Redis's binary protocol).

pub mod bus;
pub mod conf;
pub mod failover;
pub mod redis_bus;
pub mod route;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Hash slots.
pub const SLOTS: usize = 16384;
/// An unassigned slot in the owner table.
const NONE: u32 = u32::MAX;
/// A slot this node moves out.
const MIGRATING: u8 = 1;
/// A slot this node takes in.
const IMPORTING: u8 = 2;
/// `cluster-config-file` by default.
pub const DEFAULT_FILE: &str = "nodes.conf";
/// `cluster-node-timeout` by default (ms).
pub const DEFAULT_TIMEOUT: u64 = 15_000;
/// The largest epoch (current, config, vote, slot floor) a node takes from a message,
/// a file or a command: 2^48, a failover a millisecond for 8,900 years. A claim past
/// it is refused (one at 2^64 - 1 would wrap the next election's epoch to 0).
pub const MAX_EPOCH: u64 = 1 << 48;

/// The next epoch after `e`, or None at [`MAX_EPOCH`] (epochs never wrap).
pub fn next_epoch(e: u64) -> Option<u64> {
    e.checked_add(1).filter(|&n| n <= MAX_EPOCH)
}

/// The bus port is the client port plus this.
pub const BUS_OFFSET: u16 = 10000;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A node as this one knows it. Index 0 of [`State::nodes`] is this node.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// 40 hex digits (a random one while in handshake).
    pub id: String,
    /// Address clients use.
    pub ip: String,
    /// Client port.
    pub port: u16,
    /// TLS client port (`tls-port`; 0: none).
    pub tls_port: u16,
    /// Bus port.
    pub cport: u16,
    /// A replica (of `master`), else a primary.
    pub replica: bool,
    /// Its primary's id, for a replica.
    pub master: Option<String>,
    /// Config epoch (its claim on its slots).
    pub config_epoch: u64,
    /// Met by address, its id not yet known (CLUSTER MEET, or gossip).
    pub handshake: bool,
    /// When the last message was sent to it / came from it, ms since the epoch.
    pub ping_sent: u64,
    /// See `ping_sent`.
    pub pong_recv: u64,
    /// A bus connection to it is up.
    pub link: bool,
    /// Silent for longer than the node timeout.
    pub pfail: bool,
    /// Removed (CLUSTER FORGET): its index stays, unused.
    pub gone: bool,
    /// Failed: a majority of the primaries found it silent (`fail`).
    pub fail: bool,
    /// Its replication offset, as it last said.
    pub offset: u64,
    /// Primaries that said it is silent, with when.
    pub reports: Vec<(String, u64)>,
}

impl Node {
    /// The client port for a TLS client or a plain one (Redis's choice: a TLS client
    /// gets the TLS port, even 0 when the node has none).
    pub fn client_port(&self, tls: bool) -> u16 {
        if tls {
            self.tls_port
        } else {
            self.port
        }
    }

    /// Redis's flags field of CLUSTER NODES.
    fn flags(&self, myself: bool) -> String {
        let mut f = Vec::new();
        if myself {
            f.push("myself");
        }
        if self.handshake {
            f.push("handshake");
        } else {
            f.push(if self.replica { "slave" } else { "master" });
        }
        if self.fail {
            f.push("fail");
        } else if self.pfail {
            f.push("fail?");
        }
        f.join(",")
    }
}

/// What a node knows, under one lock.
#[derive(Debug, Default)]
pub struct State {
    /// Every node known; 0 is this one.
    pub nodes: Vec<Node>,
    /// The highest epoch seen.
    pub current_epoch: u64,
    /// The last epoch this node voted in (kept for the file; elections are not run).
    pub last_vote_epoch: u64,
    /// Slots this node is moving out (MIGRATING), to the node with this id.
    pub migrating: std::collections::BTreeMap<u16, String>,
    /// Slots this node is taking in (IMPORTING), from the node with this id.
    pub importing: std::collections::BTreeMap<u16, String>,
    /// Slots given to a node by CLUSTER SETSLOT NODE, with the highest epoch this node
    /// knew then: a claim by gossip must be newer to move such a slot again (a message
    /// the old owner sent before it let go must not undo the move). Kept in the
    /// cluster-config-file, so a restart keeps them.
    pub slot_floor: std::collections::HashMap<u16, u64>,
    /// This node's replication offset (for the messages it sends).
    pub my_offset: u64,
    /// Messages for one node each (votes), sent with the next round: (node id, line).
    pub outbox: Vec<(String, String)>,
    /// This replica's election: its epoch, the primaries that voted, when it started.
    pub election: Option<(u64, Vec<String>, u64)>,
    /// When this replica may start an election for its failed primary (0: none yet).
    pub failover_at: u64,
    /// This replica's manual failover (CLUSTER FAILOVER): when it gives up, and its
    /// primary's offset once the primary holds writes (from its MFACK).
    pub manual: Option<(u64, Option<u64>)>,
    /// This primary holds writes for a replica's manual failover until then (ms).
    pub paused_for_failover: u64,
    /// When this node last voted for a replica of each primary (by the primary's id).
    pub voted: std::collections::HashMap<String, u64>,
    /// Bus messages sent and received.
    pub sent: u64,
    /// See `sent`.
    pub received: u64,
}

impl State {
    /// The index of the node with this id.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| !n.gone && n.id == id)
    }
}

/// The cluster as this node sees it.
#[derive(Debug)]
pub struct Cluster {
    state: Mutex<State>,
    /// Per slot: the index of the node serving it in [`State::nodes`], or [`NONE`]
    /// (read without the lock by routing).
    owner: Box<[AtomicU32]>,
    /// The index of this node's primary when it is a replica, else [`NONE`].
    my_master: AtomicU32,
    /// Per slot: [`MIGRATING`], [`IMPORTING`] or 0 (read without the lock by routing).
    moving: Box<[std::sync::atomic::AtomicU8]>,
    /// Every slot has an owner (`cluster_state:ok`).
    covered: AtomicBool,
    /// The state changed since the file was written.
    dirty: AtomicBool,
    /// `cluster-config-file`.
    pub file: std::path::PathBuf,
    /// `cluster-node-timeout`, ms.
    pub node_timeout: u64,
    /// Bumped when the node set or the slots change (the bus re-reads its peers).
    pub version: AtomicU64,
    /// `tls-cluster yes`: the bus speaks TLS, and the TLS port is the one the file
    /// and CLUSTER MEET name first, as in Redis.
    pub tls_cluster: bool,
    /// `tls-replication yes`: a replica follows its primary's TLS port.
    pub tls_replication: bool,
}

/// This node's ports and which of them the cluster uses.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ports {
    /// Client port.
    pub port: u16,
    /// TLS client port (0: none).
    pub tls_port: u16,
    /// Bus port (`cluster-port`; 0: the client port plus [`BUS_OFFSET`], the TLS
    /// port's with `tls-cluster`).
    pub cport: u16,
    /// `tls-cluster yes`.
    pub tls_cluster: bool,
    /// `tls-replication yes`.
    pub tls_replication: bool,
}

/// Where a keyed command goes.
#[derive(Debug, PartialEq, Eq)]
pub enum Route {
    /// Served here.
    Here,
    /// Redis's error reply for it.
    Error(String),
    /// The slot is moving out: here when the keys are (all) here, else this ASK.
    AskIfMissing(String),
}

impl Cluster {
    /// The address of this node's primary, when the file says it is a replica.
    pub fn primary_addr(&self) -> Option<(String, u16)> {
        let st = self.state();
        let m = st.nodes[0]
            .master
            .as_deref()
            .filter(|_| st.nodes[0].replica)?;
        let n = &st.nodes[st.find(m)?];
        Some((n.ip.clone(), self.repl_port(n)))
    }

    /// The port a replica of `n` connects to (its TLS port with `tls-replication`).
    pub fn repl_port(&self, n: &Node) -> u16 {
        n.client_port(self.tls_replication)
    }

    /// This node alone, with a new id, or what `file` holds when it exists.
    pub fn open(
        file: std::path::PathBuf,
        ip: &str,
        ports: Ports,
        node_timeout: u64,
    ) -> Result<Cluster, String> {
        let Ports { port, tls_port, .. } = ports;
        let cport = match ports.cport {
            0 if ports.tls_cluster => tls_port.saturating_add(BUS_OFFSET),
            0 => port.saturating_add(BUS_OFFSET),
            c => c,
        };
        let owner: Box<[AtomicU32]> = (0..SLOTS).map(|_| AtomicU32::new(NONE)).collect();
        let c = Cluster {
            state: Mutex::new(State::default()),
            owner,
            my_master: AtomicU32::new(NONE),
            moving: (0..SLOTS)
                .map(|_| std::sync::atomic::AtomicU8::new(0))
                .collect(),
            covered: AtomicBool::new(false),
            dirty: AtomicBool::new(false),
            file,
            node_timeout,
            version: AtomicU64::new(0),
            tls_cluster: ports.tls_cluster,
            tls_replication: ports.tls_replication,
        };
        let loaded = match std::fs::read(&c.file) {
            Ok(text) => Some(
                conf::parse(&String::from_utf8_lossy(&text))
                    .map_err(|e| format!("{}: {e}", c.file.display()))?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{}: {e}", c.file.display())),
        };
        {
            let mut st = lock(&c.state);
            match loaded {
                Some(l) => {
                    st.current_epoch = l.current_epoch;
                    st.last_vote_epoch = l.last_vote_epoch;
                    st.nodes = l.nodes;
                    // This node's address is what it is started with now.
                    st.nodes[0].ip = ip.to_string();
                    st.nodes[0].port = port;
                    st.nodes[0].tls_port = tls_port;
                    st.nodes[0].cport = cport;
                    for (slot, i) in l.slots {
                        c.owner[slot as usize].store(i as u32, Ordering::Relaxed);
                    }
                    st.slot_floor = l.slot_floors.into_iter().collect();
                }
                None => {
                    st.nodes.push(Node {
                        id: crate::repl::new_replid(),
                        ip: ip.to_string(),
                        port,
                        tls_port,
                        cport,
                        ..Node::default()
                    });
                    c.dirty.store(true, Ordering::Relaxed);
                }
            }
            c.refresh(&st);
        }
        Ok(c)
    }

    /// The state, locked.
    pub fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// This node's id.
    pub fn my_id(&self) -> String {
        self.state().nodes[0].id.clone()
    }

    /// Re-derives the lock-free views after a change (with the lock held).
    fn refresh(&self, st: &State) {
        let me = &st.nodes[0];
        let master = if me.replica {
            me.master
                .as_deref()
                .and_then(|m| st.find(m))
                .map_or(NONE, |i| i as u32)
        } else {
            NONE
        };
        self.my_master.store(master, Ordering::Release);
        let covered = self.owner.iter().all(|o| o.load(Ordering::Relaxed) != NONE);
        self.covered.store(covered, Ordering::Release);
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Notes a change: the file is written by the bus's next round.
    pub fn changed(&self, st: &State) {
        self.refresh(st);
        self.dirty.store(true, Ordering::Release);
    }

    /// The owner index of `slot`.
    pub fn owner_of(&self, slot: u16) -> Option<usize> {
        match self.owner[slot as usize].load(Ordering::Acquire) {
            NONE => None,
            i => Some(i as usize),
        }
    }

    /// Sets the owner of `slot` (with the state's lock held).
    pub fn set_owner(&self, slot: u16, owner: Option<usize>) {
        self.owner[slot as usize].store(owner.map_or(NONE, |i| i as u32), Ordering::Release);
    }

    /// The slots `node` serves, ascending.
    pub fn slots_of(&self, node: usize) -> Vec<u16> {
        (0..SLOTS as u16)
            .filter(|&s| self.owner_of(s) == Some(node))
            .collect()
    }

    /// Where a command with keys in `slots` goes. `read_ok`: a read from a client that
    /// sent READONLY (a replica serves its primary's slots to it).
    /// `asking`: the client sent ASKING (a slot being imported is served to it).
    /// `tls`: the client came on the TLS port (MOVED and ASK name TLS ports).
    pub fn route(
        &self,
        mut slots: impl Iterator<Item = u16>,
        read_ok: bool,
        asking: bool,
        tls: bool,
    ) -> Route {
        let Some(slot) = slots.next() else {
            return Route::Here;
        };
        if slots.any(|s| s != slot) {
            return Route::Error("CROSSSLOT Keys in request don't hash to the same slot".into());
        }
        if !self.covered.load(Ordering::Acquire) {
            return Route::Error("CLUSTERDOWN Hash slot not served".into());
        }
        let owner = self.owner[slot as usize].load(Ordering::Acquire);
        let moving = self.moving[slot as usize].load(Ordering::Acquire);
        if owner == 0 && self.my_master.load(Ordering::Acquire) == NONE {
            if moving == MIGRATING {
                let st = self.state();
                if let Some(n) = st.migrating.get(&slot).and_then(|id| st.find(id)) {
                    let n = &st.nodes[n];
                    return Route::AskIfMissing(format!(
                        "ASK {slot} {}:{}",
                        n.ip,
                        n.client_port(tls)
                    ));
                }
            }
            return Route::Here;
        }
        if moving == IMPORTING && asking {
            return Route::Here;
        }
        if owner == NONE {
            return Route::Error("CLUSTERDOWN Hash slot not served".into());
        }
        if read_ok && owner == self.my_master.load(Ordering::Acquire) {
            return Route::Here;
        }
        let st = self.state();
        match st.nodes.get(owner as usize) {
            Some(n) => Route::Error(format!("MOVED {slot} {}:{}", n.ip, n.client_port(tls))),
            None => Route::Error("CLUSTERDOWN Hash slot not served".into()),
        }
    }

    /// CLUSTER SETSLOT slot MIGRATING/IMPORTING id (`to`: migrating) or STABLE (None);
    /// with the state's lock held.
    pub fn set_moving(&self, st: &mut State, slot: u16, to: Option<(bool, String)>) {
        st.migrating.remove(&slot);
        st.importing.remove(&slot);
        let flag = match to {
            Some((true, id)) => {
                st.migrating.insert(slot, id);
                MIGRATING
            }
            Some((false, id)) => {
                st.importing.insert(slot, id);
                IMPORTING
            }
            None => 0,
        };
        self.moving[slot as usize].store(flag, Ordering::Release);
    }

    /// Writes the file if the state changed (atomically: a new file, synced, renamed).
    pub fn save_if_dirty(&self) -> std::io::Result<()> {
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let text = {
            let st = self.state();
            conf::render(self, &st)
        };
        let r = wirespeed_util::fs::replace(&self.file, text.as_bytes());
        if r.is_err() {
            self.dirty.store(true, Ordering::Release);
        }
        r
    }

    /// `cluster_state:ok`: every slot served.
    pub fn ok(&self) -> bool {
        self.covered.load(Ordering::Acquire)
    }

    /// CLUSTER NODES, one line per node (`tls`: for a TLS client, with TLS ports).
    pub fn nodes_text(&self, now: u64, tls: bool) -> String {
        let st = self.state();
        let mut out = String::new();
        for (i, n) in st.nodes.iter().enumerate() {
            if n.gone {
                continue;
            }
            out.push_str(&self.node_line(&st, i, now, Some(tls)));
            out.push('\n');
        }
        out
    }

    /// One CLUSTER NODES line (without its line end): for a client (`Some(tls)`: with
    /// the port of its kind), or for the file (None: the TLS port first with
    /// `tls-cluster`, the other one after the address as Redis 7.2 writes it,
    /// `,,tls-port=N` or `,,tcp-port=N`).
    pub fn node_line(&self, st: &State, i: usize, _now: u64, client: Option<bool>) -> String {
        let n = &st.nodes[i];
        let master = n.master.as_deref().unwrap_or("-");
        let epoch = if n.replica {
            n.master
                .as_deref()
                .and_then(|m| st.find(m))
                .map_or(n.config_epoch, |m| st.nodes[m].config_epoch)
        } else {
            n.config_epoch
        };
        let connected = i == 0 || n.link;
        let tls = client.unwrap_or(self.tls_cluster);
        let aux = match client {
            Some(_) => String::new(),
            None if tls => format!(",,tcp-port={}", n.port),
            None if n.tls_port != 0 => format!(",,tls-port={}", n.tls_port),
            None => String::new(),
        };
        let mut line = format!(
            "{} {}:{}@{}{aux} {} {master} {} {} {epoch} {}",
            n.id,
            n.ip,
            n.client_port(tls),
            n.cport,
            n.flags(i == 0),
            if i == 0 { 0 } else { n.ping_sent },
            if i == 0 { 0 } else { n.pong_recv },
            if connected {
                "connected"
            } else {
                "disconnected"
            },
        );
        for (a, b) in ranges(&self.slots_of(i)) {
            if a == b {
                line.push_str(&format!(" {a}"));
            } else {
                line.push_str(&format!(" {a}-{b}"));
            }
        }
        if i == 0 {
            for (slot, to) in &st.migrating {
                line.push_str(&format!(" [{slot}->-{to}]"));
            }
            for (slot, from) in &st.importing {
                line.push_str(&format!(" [{slot}-<-{from}]"));
            }
        }
        line
    }
}

/// Contiguous runs of ascending `slots`, as (first, last).
pub fn ranges(slots: &[u16]) -> Vec<(u16, u16)> {
    let mut out: Vec<(u16, u16)> = Vec::new();
    for &s in slots {
        match out.last_mut() {
            Some((_, b)) if *b + 1 == s => *b = s,
            _ => out.push((s, s)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_join_runs() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), vec![(0, 2), (5, 5), (7, 8)]);
        assert!(ranges(&[]).is_empty());
    }

    #[test]
    fn routing_follows_the_owner_table() {
        let dir = std::env::temp_dir().join(format!("ws-cluster-route-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let c = Cluster::open(
            dir.clone(),
            "127.0.0.1",
            Ports {
                port: 7000,
                ..Ports::default()
            },
            15000,
        )
        .unwrap();
        // Nothing assigned: down.
        assert!(
            matches!(c.route([5u16].into_iter(), false, false, false), Route::Error(e) if e.starts_with("CLUSTERDOWN"))
        );
        {
            let mut st = c.state();
            st.nodes.push(Node {
                id: "b".repeat(40),
                ip: "127.0.0.1".into(),
                port: 7001,
                tls_port: 7101,
                cport: 17001,
                ..Node::default()
            });
            for s in 0..SLOTS as u16 {
                c.set_owner(s, Some(usize::from(s >= 8192)));
            }
            c.changed(&st);
        }
        assert_eq!(
            c.route([5u16, 5].into_iter(), false, false, false),
            Route::Here
        );
        assert_eq!(
            c.route(std::iter::empty(), false, false, false),
            Route::Here
        );
        assert_eq!(
            c.route([9000u16].into_iter(), false, false, false),
            Route::Error("MOVED 9000 127.0.0.1:7001".into())
        );
        // A client on the TLS port is sent to the TLS port.
        assert_eq!(
            c.route([9000u16].into_iter(), false, false, true),
            Route::Error("MOVED 9000 127.0.0.1:7101".into())
        );
        assert!(
            matches!(c.route([5u16, 9000].into_iter(), false, false, false), Route::Error(e) if e.starts_with("CROSSSLOT"))
        );
        // Slot 5 moving out to node 1: ASK unless the keys are here; slot 9000 coming
        // in from node 1: served to a client that sent ASKING.
        {
            let mut st = c.state();
            c.set_moving(&mut st, 5, Some((true, "b".repeat(40))));
            c.set_moving(&mut st, 9000, Some((false, "b".repeat(40))));
        }
        assert_eq!(
            c.route([5u16].into_iter(), false, false, false),
            Route::AskIfMissing("ASK 5 127.0.0.1:7001".into())
        );
        assert_eq!(
            c.route([5u16].into_iter(), false, false, true),
            Route::AskIfMissing("ASK 5 127.0.0.1:7101".into())
        );
        assert_eq!(
            c.route([9000u16].into_iter(), false, true, false),
            Route::Here
        );
        assert!(
            matches!(c.route([9000u16].into_iter(), false, false, false), Route::Error(e) if e.starts_with("MOVED"))
        );
        {
            let mut st = c.state();
            c.set_moving(&mut st, 5, None);
        }
        assert_eq!(
            c.route([5u16].into_iter(), false, false, false),
            Route::Here
        );
        let _ = std::fs::remove_file(&dir);
    }
}

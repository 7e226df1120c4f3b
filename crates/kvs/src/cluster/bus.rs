//! The cluster bus: this server's own messages on the client port plus 10000.
//!
//! A message is one line of space-separated fields:
//! `MEET|PING|AUTHREQ|AUTHACK|MFSTART|MFACK id ip port tls-port cport m|s master|-
//! config-epoch current-epoch offset slots|- n`
//! followed by `n` gossip entries `id ip port tls-port cport m|s master|- health` about
//! other nodes (`tls-port` 0: none);
//! `slots` is comma-separated ranges (`0-5460,6000`). Every 100 ms each node sends one
//! to every node it knows (MEET to those met by address and not yet heard from) over
//! a connection of its own; what comes in on accepted connections is read by one
//! thread for all of them (at most [`MAX_INBOUND`] at once; one that sends nothing
//! whole for twice the node timeout is closed). Lines are bounded (1 MiB) and a line
//! that does not parse is dropped with its connection. With `tls-cluster yes` every
//! connection is TLS, both ends presenting a certificate from the cluster's
//! authorities ([`crate::tls`]); a peer without one never gets a line read.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::failover::{act, Action};
use super::{ranges, Cluster, Node, State, SLOTS};
use crate::state::Shared;
use crate::tls::{Sock, Stream};
use wirespeed_util::time::unix_ms as now_ms;

/// Longest message line read.
const MAX_LINE: u64 = 1 << 20;
/// How often a node tells the others (ms).
const PERIOD_MS: u64 = 100;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The receiver adds an unknown sender.
    Meet,
    /// The sender's state, a few times a second.
    Ping,
    /// A replica whose primary failed asks for a vote (its current epoch is the
    /// election's).
    AuthReq,
    /// A primary's vote for the sender's election (its current epoch).
    AuthAck,
    /// A replica asks its primary to hold writes for its manual failover.
    MfStart,
    /// The primary holds writes now; its offset is the one the replica must reach.
    MfAck,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Meet => "MEET",
            Kind::Ping => "PING",
            Kind::AuthReq => "AUTHREQ",
            Kind::AuthAck => "AUTHACK",
            Kind::MfStart => "MFSTART",
            Kind::MfAck => "MFACK",
        }
    }
}

/// One node's description in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct About {
    /// Node id.
    pub id: String,
    /// Client address.
    pub ip: String,
    /// Client port.
    pub port: u16,
    /// TLS client port (0: none).
    pub tls_port: u16,
    /// Bus port.
    pub cport: u16,
    /// A replica.
    pub replica: bool,
    /// Its primary, for a replica.
    pub master: Option<String>,
    /// In gossip, how the sender sees it: 0 reachable, 1 silent past the node timeout
    /// (`fail?`), 2 failed (`fail`).
    pub health: u8,
}

/// A bus message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// What it is.
    pub kind: Kind,
    /// The sender.
    pub from: About,
    /// The sender's config epoch.
    pub config_epoch: u64,
    /// The sender's current epoch.
    pub current_epoch: u64,
    /// The sender's replication offset.
    pub offset: u64,
    /// The slots the sender serves (a primary).
    pub slots: Vec<u16>,
    /// Other nodes the sender knows.
    pub gossip: Vec<About>,
}

fn about_fields(a: &About, out: &mut String, health: bool) {
    out.push_str(&format!(
        " {} {} {} {} {} {} {}",
        a.id,
        if a.ip.is_empty() { "-" } else { &a.ip },
        a.port,
        a.tls_port,
        a.cport,
        if a.replica { "s" } else { "m" },
        a.master.as_deref().unwrap_or("-")
    ));
    if health {
        out.push_str(&format!(" {}", a.health));
    }
}

impl Msg {
    /// The message as a line (with its line end).
    pub fn encode(&self) -> String {
        let mut out = String::from(self.kind.name());
        about_fields(&self.from, &mut out, false);
        out.push_str(&format!(
            " {} {} {} ",
            self.config_epoch, self.current_epoch, self.offset
        ));
        let r = ranges(&self.slots);
        if r.is_empty() {
            out.push('-');
        } else {
            let parts: Vec<String> = r
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect();
            out.push_str(&parts.join(","));
        }
        out.push_str(&format!(" {}", self.gossip.len()));
        for g in &self.gossip {
            about_fields(g, &mut out, true);
        }
        out.push('\n');
        out
    }

    /// Reads a line; None when it is not a message.
    pub fn decode(line: &str) -> Option<Msg> {
        let mut w = line.split_ascii_whitespace();
        let kind = match w.next()? {
            "MEET" => Kind::Meet,
            "PING" => Kind::Ping,
            "AUTHREQ" => Kind::AuthReq,
            "AUTHACK" => Kind::AuthAck,
            "MFSTART" => Kind::MfStart,
            "MFACK" => Kind::MfAck,
            _ => return None,
        };
        let about = |w: &mut std::str::SplitAsciiWhitespace, health: bool| -> Option<About> {
            let id = w.next()?.to_string();
            if id.len() != 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let ip = w.next()?;
            Some(About {
                id,
                ip: if ip == "-" {
                    String::new()
                } else {
                    ip.to_string()
                },
                port: w.next()?.parse().ok()?,
                tls_port: w.next()?.parse().ok()?,
                cport: w.next()?.parse().ok()?,
                replica: match w.next()? {
                    "s" => true,
                    "m" => false,
                    _ => return None,
                },
                master: match w.next()? {
                    "-" => None,
                    m => Some(m.to_string()),
                },
                health: if health {
                    w.next()?.parse().ok().filter(|&h: &u8| h <= 2)?
                } else {
                    0
                },
            })
        };
        let from = about(&mut w, false)?;
        let config_epoch: u64 = w.next()?.parse().ok()?;
        let current_epoch: u64 = w.next()?.parse().ok()?;
        // No epoch past the bound; a node's config epoch never exceeds its current one.
        if current_epoch > super::MAX_EPOCH || config_epoch > current_epoch {
            return None;
        }
        let offset = w.next()?.parse().ok()?;
        let mut slots = Vec::new();
        let defs = w.next()?;
        if defs != "-" {
            for d in defs.split(',') {
                let (a, b) = match d.split_once('-') {
                    Some((a, b)) => (a.parse::<u16>().ok()?, b.parse::<u16>().ok()?),
                    None => {
                        let a = d.parse::<u16>().ok()?;
                        (a, a)
                    }
                };
                if a > b || b as usize >= SLOTS {
                    return None;
                }
                slots.extend(a..=b);
            }
        }
        let n: usize = w.next()?.parse().ok()?;
        if n > 10_000 {
            return None;
        }
        let mut gossip = Vec::with_capacity(n);
        for _ in 0..n {
            gossip.push(about(&mut w, true)?);
        }
        w.next().is_none().then_some(Msg {
            kind,
            from,
            config_epoch,
            current_epoch,
            offset,
            slots,
            gossip,
        })
    }
}

fn about(n: &Node) -> About {
    About {
        id: n.id.clone(),
        ip: n.ip.clone(),
        port: n.port,
        tls_port: n.tls_port,
        cport: n.cport,
        replica: n.replica,
        master: n.master.clone(),
        health: if n.fail { 2 } else { u8::from(n.pfail) },
    }
}

impl Cluster {
    /// A message from this node.
    pub(super) fn message(&self, st: &State, kind: Kind) -> Msg {
        let me = &st.nodes[0];
        Msg {
            kind,
            from: about(me),
            config_epoch: me.config_epoch,
            current_epoch: st.current_epoch,
            offset: st.my_offset,
            slots: if me.replica {
                Vec::new()
            } else {
                self.slots_of(0)
            },
            gossip: st.nodes[1..]
                .iter()
                .filter(|n| !n.gone && !n.handshake)
                .map(about)
                .collect(),
        }
    }

    /// Takes in a message that came from `peer_ip`; what this node must do about it
    /// once the state is unlocked (follow a new primary).
    pub fn receive(&self, msg: Msg, peer_ip: &str) -> Option<Action> {
        let now = now_ms();
        let mut st = self.state();
        st.received += 1;
        if msg.from.id == st.nodes[0].id {
            return None;
        }
        let ip = if msg.from.ip.is_empty() || msg.from.ip == "0.0.0.0" {
            peer_ip.to_string()
        } else {
            msg.from.ip.clone()
        };
        let mut changed = false;
        let i = match st.find(&msg.from.id) {
            Some(i) => i,
            None => {
                let met = st.nodes.iter().position(|n| {
                    n.handshake && !n.gone && n.ip == ip && n.cport == msg.from.cport
                });
                match met {
                    Some(i) => i,
                    None if msg.kind == Kind::Meet => {
                        // Untrusted until its handshake completes (below).
                        st.nodes.push(Node {
                            handshake: true,
                            ping_sent: now,
                            ..Node::default()
                        });
                        st.nodes.len() - 1
                    }
                    None => return None,
                }
            }
        };
        {
            let n = &mut st.nodes[i];
            let before = (
                n.id.clone(),
                n.ip.clone(),
                (n.port, n.tls_port),
                n.cport,
                n.replica,
                n.master.clone(),
                n.config_epoch,
                n.handshake,
            );
            n.id = msg.from.id.clone();
            n.ip = ip.clone();
            n.port = msg.from.port;
            n.tls_port = msg.from.tls_port;
            n.cport = msg.from.cport;
            n.replica = msg.from.replica;
            n.master = msg.from.master.clone();
            n.config_epoch = msg.config_epoch;
            // A node met by address, learned by gossip or that sent a MEET completes
            // its handshake once this node's own link to the address it announces
            // works (a made-up node never does, and is dropped after the timeout).
            n.handshake = n.handshake && !n.link;
            n.pong_recv = now;
            n.pfail = false;
            n.offset = msg.offset;
            if n.fail {
                n.fail = false;
                changed = true;
            }
            changed |= before
                != (
                    n.id.clone(),
                    n.ip.clone(),
                    (n.port, n.tls_port),
                    n.cport,
                    n.replica,
                    n.master.clone(),
                    n.config_epoch,
                    n.handshake,
                );
        }
        // Another entry met by the same address (a MEET and a gossip crossed) goes.
        for (j, n) in st.nodes.iter_mut().enumerate() {
            if j != i && n.handshake && !n.gone && n.ip == ip && n.cport == msg.from.cport {
                n.gone = true;
                changed = true;
            }
        }
        if st.nodes[i].handshake {
            // Until then nothing it says counts: no epoch, slot claim, failure report,
            // vote or node it tells of.
            if changed {
                self.changed(&st);
            }
            return None;
        }
        if msg.current_epoch > st.current_epoch {
            st.current_epoch = msg.current_epoch;
            changed = true;
        }
        // Whose slots this node follows: its own, or its primary's.
        let mine = if st.nodes[0].replica {
            st.nodes[0].master.as_deref().and_then(|m| st.find(m))
        } else {
            Some(0)
        };
        let had = mine.map_or(0, |m| self.slots_of(m).len());
        if !msg.from.replica {
            // A slot goes to the primary that claims it with the higher config epoch.
            for &slot in &msg.slots {
                let owner = self.owner_of(slot);
                if owner == Some(i) {
                    continue;
                }
                let newer = st
                    .slot_floor
                    .get(&slot)
                    .is_none_or(|&f| msg.config_epoch > f);
                let take =
                    newer && owner.is_none_or(|o| st.nodes[o].config_epoch < msg.config_epoch);
                if take {
                    if owner == Some(0) {
                        // Lost to a newer claim: no longer moving it out.
                        self.set_moving(&mut st, slot, None);
                    }
                    self.set_owner(slot, Some(i));
                    changed = true;
                }
            }
        }
        let my_id = st.nodes[0].id.clone();
        changed |= self.take_reports(&mut st, i, &msg.gossip, now);
        let mut action = match msg.kind {
            Kind::AuthReq => self.maybe_vote(&mut st, i, &msg, now),
            Kind::AuthAck => {
                self.count_vote(&mut st, i, msg.current_epoch);
                None
            }
            Kind::MfStart => {
                // Only from a replica of this primary.
                let mine = st.nodes[i].replica && st.nodes[i].master.as_deref() == Some(&my_id);
                (mine && !st.nodes[0].replica).then(|| Action::PauseForFailover {
                    replica: st.nodes[i].id.clone(),
                })
            }
            Kind::MfAck => {
                let from_master = st.nodes[0].master.as_deref() == Some(&st.nodes[i].id);
                if let Some(mf) = st.manual.as_mut().filter(|_| from_master) {
                    mf.1 = Some(msg.offset);
                }
                None
            }
            Kind::Meet | Kind::Ping => None,
        };
        // The primary this node follows (or this node) lost its last slot to the sender:
        // the sender took over (a failover), so this node follows it, as in Redis.
        if let Some(m) = mine {
            if had > 0 && self.slots_of(m).is_empty() && !msg.from.replica {
                st.nodes[0].replica = true;
                st.nodes[0].master = Some(st.nodes[i].id.clone());
                changed = true;
                action = Some(Action::Follow {
                    host: st.nodes[i].ip.clone(),
                    port: self.repl_port(&st.nodes[i]),
                });
            }
        }
        for g in msg.gossip {
            if g.id == my_id || st.find(&g.id).is_some() || g.ip.is_empty() {
                continue;
            }
            let known = st
                .nodes
                .iter()
                .any(|n| !n.gone && n.ip == g.ip && n.cport == g.cport);
            if !known {
                st.nodes.push(Node {
                    id: g.id,
                    ip: g.ip,
                    port: g.port,
                    tls_port: g.tls_port,
                    cport: g.cport,
                    replica: g.replica,
                    master: g.master,
                    handshake: true,
                    ping_sent: now,
                    ..Node::default()
                });
                changed = true;
            }
        }
        if changed {
            self.changed(&st);
        }
        action
    }

    /// Once a round: nodes silent past the node timeout are flagged `fail?`, nodes met
    /// by address that never answered are dropped after it; then failure agreement
    /// and this replica's failover ([`Cluster::failover_tick`]).
    fn tick(&self, now: u64) -> Option<Action> {
        let mut st = self.state();
        let timeout = self.node_timeout.max(PERIOD_MS * 5);
        let mut changed = false;
        for n in st.nodes.iter_mut().skip(1).filter(|n| !n.gone) {
            if n.handshake {
                if now.saturating_sub(n.ping_sent) > timeout {
                    n.gone = true;
                    changed = true;
                }
                continue;
            }
            if n.pong_recv == 0 {
                // Known (from the file) but not heard from yet: the clock starts now.
                n.pong_recv = now;
            }
            n.pfail = now.saturating_sub(n.pong_recv) > timeout;
        }
        let action = match self.manual_tick(&mut st, now) {
            Some(a) => Some(a),
            None => self.failover_tick(&mut st, now, timeout, &mut changed),
        };
        if changed {
            self.changed(&st);
        }
        action
    }
}

/// Runs the bus until `stop` or SHUTDOWN: one thread accepting and reading every
/// inbound connection, and this thread sending every 100 ms.
pub fn run(shared: &Shared, stop: &AtomicBool) {
    let Some(c) = shared.cluster.as_ref() else {
        return;
    };
    let stopped = || stop.load(Ordering::Relaxed) || shared.shutdown.load(Ordering::Relaxed);
    let (bind, cport) = {
        let st = c.state();
        (shared.config().0.bind.clone(), st.nodes[0].cport)
    };
    let listener = match TcpListener::bind((bind.as_str(), cport)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("kvs: the cluster bus cannot listen on {bind}:{cport}: {e}");
            return;
        }
    };
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    std::thread::scope(|scope| {
        scope.spawn(|| {
            if let Err(e) = read_inbound(shared, c, listener, &stopped) {
                eprintln!("kvs: the cluster bus stopped reading: {e}");
            }
        });
        let connect = shared
            .tls
            .as_ref()
            .and_then(|t| t.bus.as_ref())
            .map(|b| b.1.clone());
        let mut links: HashMap<(String, u16), Stream> = HashMap::new();
        while !stopped() {
            let now = now_ms();
            let (meet, ping, targets, outbox) = {
                let mut st = c.state();
                st.my_offset = shared.repl.offset();
                let meet = c.message(&st, Kind::Meet).encode();
                let ping = c.message(&st, Kind::Ping).encode();
                let outbox: Vec<((String, u16), String)> = std::mem::take(&mut st.outbox)
                    .into_iter()
                    .filter_map(|(id, line)| {
                        let n = &st.nodes[st.find(&id)?];
                        Some(((n.ip.clone(), n.cport), line))
                    })
                    .collect();
                let mut targets = Vec::new();
                for n in st.nodes.iter_mut().skip(1).filter(|n| !n.gone) {
                    if n.ping_sent == 0 {
                        n.ping_sent = now;
                    }
                    targets.push((n.id.clone(), n.ip.clone(), n.cport, n.handshake));
                }
                (meet, ping, targets, outbox)
            };
            for (key, line) in outbox {
                send(&mut links, &connect, key, &line);
            }
            let mut sent = Vec::new();
            for (id, ip, cport, handshake) in targets {
                let key = (ip.clone(), cport);
                let line = if handshake { &meet } else { &ping };
                let ok = send(&mut links, &connect, key, line);
                sent.push((id, ok));
            }
            {
                let mut st = c.state();
                for (id, ok) in sent {
                    if let Some(n) = st.nodes.iter_mut().find(|n| n.id == id && !n.gone) {
                        n.link = ok;
                        if ok && !n.handshake {
                            n.ping_sent = now;
                        }
                    }
                    st.sent += u64::from(ok);
                }
            }
            if let Some(a) = c.tick(now) {
                act(shared, a);
            }
            if let Err(e) = c.save_if_dirty() {
                eprintln!("kvs: cannot write {}: {e}", c.file.display());
            }
            std::thread::sleep(Duration::from_millis(PERIOD_MS));
        }
    });
    let _ = c.save_if_dirty();
}

/// Sends `line` on the link to `key` (connecting first if needed, with TLS when
/// `tls` is given); false on failure (the link is dropped, to connect again next time).
fn send(
    links: &mut HashMap<(String, u16), Stream>,
    tls: &Option<std::sync::Arc<rustls::ClientConfig>>,
    key: (String, u16),
    line: &str,
) -> bool {
    if !links.contains_key(&key) {
        let Some(addr) = (key.0.as_str(), key.1)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
        else {
            return false;
        };
        match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                let _ = s.set_write_timeout(Some(Duration::from_millis(500)));
                // The TLS handshake reads the peer's answers.
                let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
                match Stream::over(s, tls.clone(), &key.0) {
                    Ok(s) => {
                        links.insert(key.clone(), s);
                    }
                    Err(_) => return false,
                }
            }
            Err(_) => return false,
        }
    }
    let ok = links
        .get_mut(&key)
        .is_some_and(|s| s.write_all(line.as_bytes()).and_then(|_| s.flush()).is_ok());
    if !ok {
        links.remove(&key);
    }
    ok
}

/// Inbound bus connections read at once; more are closed as they come.
pub const MAX_INBOUND: usize = 512;

/// An accepted connection: its socket, the peer's address, the bytes of a line not
/// yet whole, and when it last delivered a message.
struct Inbound {
    sock: Sock,
    peer_ip: String,
    line: Vec<u8>,
    last: u64,
}

/// Accepts and reads every inbound connection on one thread (mio): at most
/// [`MAX_INBOUND`] at once, each closed when it sends a line that does not parse, a
/// line longer than any message, or nothing whole for twice the node timeout (at least
/// 10 s; a node sends every 100 ms).
fn read_inbound(
    shared: &Shared,
    c: &Cluster,
    listener: TcpListener,
    stopped: &dyn Fn() -> bool,
) -> std::io::Result<()> {
    use mio::{Events, Interest, Poll, Token};
    const LISTENER: Token = Token(usize::MAX);
    let mut poll = Poll::new()?;
    let mut listener = mio::net::TcpListener::from_std(listener);
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut events = Events::with_capacity(256);
    let mut conns: HashMap<usize, Inbound> = HashMap::new();
    let mut next = 0usize;
    let idle_ms = (2 * c.node_timeout).max(10_000);
    let accept_tls = shared
        .tls
        .as_ref()
        .and_then(|t| t.bus.as_ref())
        .map(|b| b.0.clone());
    let (mut refused, mut said_refused) = (0u64, 0u64);
    let mut buf = vec![0u8; 64 * 1024];
    while !stopped() {
        poll.poll(&mut events, Some(Duration::from_millis(200)))?;
        let now = now_ms();
        let mut gone: Vec<usize> = Vec::new();
        for ev in events.iter() {
            if ev.token() == LISTENER {
                loop {
                    match listener.accept() {
                        Ok((sock, peer)) => {
                            if conns.len() >= MAX_INBOUND {
                                refused += 1;
                                continue;
                            }
                            let sock = match &accept_tls {
                                None => Ok(Sock::plain(sock)),
                                Some(config) => Sock::tls(sock, config),
                            };
                            let Ok(mut sock) = sock else { continue };
                            next = next.wrapping_add(1) % (usize::MAX - 1);
                            if poll
                                .registry()
                                .register(&mut sock, Token(next), Interest::READABLE)
                                .is_ok()
                            {
                                conns.insert(
                                    next,
                                    Inbound {
                                        sock,
                                        peer_ip: peer.ip().to_string(),
                                        line: Vec::new(),
                                        last: now,
                                    },
                                );
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(_) => break,
                    }
                }
                continue;
            }
            let id = ev.token().0;
            let Some(conn) = conns.get_mut(&id) else {
                continue;
            };
            // TLS: the handshake's replies the socket did not take at once.
            if !read_messages(shared, c, conn, &mut buf, now) || conn.sock.flush_pending().is_err()
            {
                gone.push(id);
            }
        }
        if refused > said_refused {
            eprintln!(
                "kvs: cluster bus: {} connection(s) refused: {MAX_INBOUND} inbound connections are open",
                refused - said_refused
            );
            said_refused = refused;
        }
        gone.extend(
            conns
                .iter()
                .filter(|(_, x)| now.saturating_sub(x.last) > idle_ms)
                .map(|(&id, _)| id),
        );
        for id in gone {
            if let Some(mut x) = conns.remove(&id) {
                let _ = poll.registry().deregister(&mut x.sock);
            }
        }
    }
    Ok(())
}

/// Reads what `conn` has sent and handles each whole message; false when the
/// connection is to be closed (closed by the peer, an error, a malformed or overlong
/// line).
fn read_messages(
    shared: &Shared,
    c: &Cluster,
    conn: &mut Inbound,
    buf: &mut [u8],
    now: u64,
) -> bool {
    loop {
        let n = match conn.sock.read(buf) {
            Ok(0) => return false,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        };
        let mut rest = &buf[..n];
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            conn.line.extend_from_slice(&rest[..=end]);
            rest = &rest[end + 1..];
            if conn.line.len() as u64 > MAX_LINE {
                return false;
            }
            let text = String::from_utf8_lossy(&conn.line);
            match Msg::decode(&text) {
                Some(m) => {
                    conn.last = now;
                    if let Some(a) = c.receive(m, &conn.peer_ip) {
                        act(shared, a);
                    }
                }
                None => {
                    eprintln!(
                        "kvs: cluster bus: a malformed message from {} (or an epoch past {}); connection closed",
                        conn.peer_ip,
                        super::MAX_EPOCH
                    );
                    return false;
                }
            }
            conn.line.clear();
        }
        conn.line.extend_from_slice(rest);
        // A line longer than any message.
        if conn.line.len() as u64 >= MAX_LINE {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_junk_is_refused() {
        let a = About {
            id: "a".repeat(40),
            ip: "127.0.0.1".into(),
            port: 7000,
            tls_port: 0,
            cport: 17000,
            replica: false,
            master: None,
            health: 0,
        };
        let b = About {
            id: "b".repeat(40),
            ip: "10.0.0.2".into(),
            port: 7001,
            tls_port: 7101,
            cport: 17001,
            replica: true,
            master: Some("a".repeat(40)),
            health: 1,
        };
        let m = Msg {
            kind: Kind::Meet,
            from: a,
            config_epoch: 3,
            current_epoch: 9,
            offset: 12345,
            slots: (0..=5460).chain([6000, 16383]).collect(),
            gossip: vec![b],
        };
        let line = m.encode();
        assert!(line.contains(" 0-5460,6000,16383 "), "{line}");
        assert_eq!(Msg::decode(&line), Some(m.clone()));
        assert_eq!(Msg::decode("HELLO"), None);
        assert_eq!(Msg::decode(&line.replace("16383", "16384")), None);
        // Epochs: past the bound, or a config epoch past the current one.
        let mut big = m.clone();
        big.current_epoch = u64::MAX;
        assert_eq!(Msg::decode(&big.encode()), None);
        big.current_epoch = super::super::MAX_EPOCH + 1;
        assert_eq!(Msg::decode(&big.encode()), None);
        big.current_epoch = super::super::MAX_EPOCH;
        assert!(Msg::decode(&big.encode()).is_some());
        big.config_epoch = big.current_epoch + 1;
        assert_eq!(Msg::decode(&big.encode()), None);
        assert_eq!(Msg::decode(&line.replace(" 1 ", " 2 ")), None);
        assert_eq!(Msg::decode(&format!("{} extra", line.trim_end())), None);
    }
}

//! The Redis Cluster side of a load run: the slot map read from `CLUSTER SLOTS`, each
//! key's node (its slot by [`wirespeed_util::keyslot::key_slot`]), the `-MOVED` and
//! `-ASK` redirections, and the cluster-aware preload.

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};

use wirespeed_util::keyslot::{key_slot, SLOTS};

use crate::wire::{authenticate, bad_reply, key_bytes, push_request, read_reply};
use crate::{Protocol, ValueSize, IO_TIMEOUT};

/// Most nodes one run may talk to (a connection's links are numbered below it).
pub(crate) const MAX_NODES: usize = 1024;

/// A slot nobody serves.
const NONE: u16 = u16::MAX;

/// Which node serves each slot; nodes are numbered in the order they were first seen
/// and keep their number when the map changes.
#[derive(Clone, Debug)]
pub(crate) struct SlotMap {
    pub(crate) nodes: Vec<SocketAddr>,
    slots: Vec<u16>,
}

/// A `-MOVED` or `-ASK` reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// `-ASK` (a slot being migrated: ask that node once) rather than `-MOVED`.
    pub(crate) ask: bool,
    pub(crate) slot: u16,
    pub(crate) addr: SocketAddr,
}

/// A RESP value, as far as `CLUSTER SLOTS` needs one.
#[derive(Debug)]
enum Resp {
    Int(i64),
    Str(Vec<u8>),
    Error(String),
    Nil,
    Array(Vec<Resp>),
}

fn parse(buf: &[u8], at: &mut usize) -> io::Result<Resp> {
    let rest = &buf[*at..];
    let nl = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad_reply("a truncated CLUSTER SLOTS reply"))?;
    let line = String::from_utf8_lossy(&rest[1..nl]).trim_end().to_string();
    *at += nl + 1;
    let number = || -> io::Result<i64> {
        line.parse()
            .map_err(|_| bad_reply("a malformed CLUSTER SLOTS reply"))
    };
    match rest.first() {
        Some(b':') => Ok(Resp::Int(number()?)),
        Some(b'+') => Ok(Resp::Str(line.into_bytes())),
        Some(b'-') => Ok(Resp::Error(line)),
        Some(b'_') => Ok(Resp::Nil),
        Some(b'$') => match number()? {
            n if n < 0 => Ok(Resp::Nil),
            n => {
                let end = *at + n as usize;
                let s = buf
                    .get(*at..end)
                    .ok_or_else(|| bad_reply("a truncated CLUSTER SLOTS reply"))?
                    .to_vec();
                *at = end + 2;
                Ok(Resp::Str(s))
            }
        },
        Some(b'*') => match number()? {
            n if n < 0 => Ok(Resp::Nil),
            n => (0..n)
                .map(|_| parse(buf, at))
                .collect::<io::Result<_>>()
                .map(Resp::Array),
        },
        _ => Err(bad_reply("an unexpected CLUSTER SLOTS reply")),
    }
}

/// `host:port` as a socket address; an empty host (a node that does not know its own
/// address) is `fallback`'s.
fn resolve(host: &str, port: u16, fallback: IpAddr) -> io::Result<SocketAddr> {
    if host.is_empty() || host == "?" {
        return Ok(SocketAddr::new(fallback, port));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::other(format!("{host}: no address")))
}

/// A blocking connection to a node (with `AUTH` where a password is given).
pub(crate) fn connect_blocking(addr: SocketAddr, password: Option<&str>) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    if let Some(pw) = password {
        authenticate(&mut s, pw)?;
    }
    Ok(s)
}

impl SlotMap {
    /// The map `node` answers to `CLUSTER SLOTS` (primaries only).
    pub(crate) fn fetch(node: SocketAddr, password: Option<&str>) -> io::Result<SlotMap> {
        let mut map = SlotMap {
            nodes: Vec::new(),
            slots: vec![NONE; SLOTS],
        };
        map.refresh(node, password)?;
        Ok(map)
    }

    /// Reads the map again from `node`; slots it does not list keep their node.
    pub(crate) fn refresh(&mut self, node: SocketAddr, password: Option<&str>) -> io::Result<()> {
        let mut s = connect_blocking(node, password)?;
        s.write_all(b"*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n")?;
        let raw = read_reply(Protocol::Resp, &mut s, &mut Vec::new())?;
        let ranges = match parse(&raw, &mut 0)? {
            Resp::Array(r) => r,
            Resp::Error(e) => {
                return Err(io::Error::other(format!(
                    "{node}: CLUSTER SLOTS: {e} (is it a cluster node?)"
                )))
            }
            _ => return Err(bad_reply("CLUSTER SLOTS: not an array")),
        };
        for r in ranges {
            let malformed = || bad_reply("CLUSTER SLOTS: a malformed range");
            let Resp::Array(r) = r else {
                return Err(malformed());
            };
            let (Some(Resp::Int(lo)), Some(Resp::Int(hi)), Some(Resp::Array(primary))) =
                (r.first(), r.get(1), r.get(2))
            else {
                return Err(malformed());
            };
            let (Some(Resp::Str(host)), Some(Resp::Int(port))) = (primary.first(), primary.get(1))
            else {
                return Err(malformed());
            };
            let (lo, hi) = (*lo as usize, *hi as usize);
            if lo > hi || hi >= SLOTS || !(1..=65535).contains(port) {
                return Err(malformed());
            }
            let addr = resolve(&String::from_utf8_lossy(host), *port as u16, node.ip())?;
            let n = self.node(addr)?;
            self.slots[lo..=hi].fill(n);
        }
        Ok(())
    }

    /// The number of node `addr`, added if it is new.
    pub(crate) fn node(&mut self, addr: SocketAddr) -> io::Result<u16> {
        if let Some(i) = self.nodes.iter().position(|&a| a == addr) {
            return Ok(i as u16);
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(io::Error::other(format!(
                "more than {MAX_NODES} cluster nodes"
            )));
        }
        self.nodes.push(addr);
        Ok(self.nodes.len() as u16 - 1)
    }

    /// Slot `slot` is served by node `n` from now on.
    pub(crate) fn set(&mut self, slot: u16, n: u16) {
        self.slots[usize::from(slot) % SLOTS] = n;
    }

    /// The nodes that serve at least one slot.
    pub(crate) fn primaries(&self) -> Vec<usize> {
        let mut serve = vec![false; self.nodes.len()];
        for &n in &self.slots {
            if n != NONE {
                serve[usize::from(n)] = true;
            }
        }
        (0..self.nodes.len()).filter(|&n| serve[n]).collect()
    }

    /// The node serving key `k` (the load generator's key of that index).
    pub(crate) fn node_of_key(&self, k: u64) -> io::Result<usize> {
        let slot = key_slot(&key_bytes(k));
        match self.slots[usize::from(slot)] {
            NONE => Err(io::Error::other(format!(
                "slot {slot} (key {}) is served by no node",
                crate::key_of(k)
            ))),
            n => Ok(usize::from(n)),
        }
    }
}

/// The redirection in `reply` (`-MOVED slot host:port` or `-ASK slot host:port`), if it
/// is one; an empty host is `from`'s (the node that answered).
pub(crate) fn redirect(reply: &[u8], from: SocketAddr) -> Option<Redirect> {
    let (ask, rest) = if let Some(r) = reply.strip_prefix(b"-MOVED ") {
        (false, r)
    } else {
        (true, reply.strip_prefix(b"-ASK ")?)
    };
    let text = std::str::from_utf8(rest).ok()?.trim_end();
    let (slot, target) = text.split_once(' ')?;
    let slot: u16 = slot.parse().ok().filter(|&s| usize::from(s) < SLOTS)?;
    let (host, port) = target.rsplit_once(':')?;
    let addr = resolve(host, port.parse().ok()?, from.ip()).ok()?;
    Some(Redirect { ask, slot, addr })
}

/// `ASKING`, sent before a command to the node an `-ASK` names.
pub(crate) const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";

/// [`crate::preload_with`] on a cluster: every key SET on the node that serves it (256
/// pipelined per node at a time), following `-MOVED` (the key is sent again on the
/// next pass, to its new node) and `-ASK` (`ASKING` and the SET on the node named).
pub(crate) fn preload(
    seed: SocketAddr,
    keys: u64,
    value_size: &ValueSize,
    password: Option<&str>,
) -> io::Result<()> {
    let mut map = SlotMap::fetch(seed, password)?;
    let mut conns: Vec<Option<TcpStream>> = Vec::new();
    let mut todo: Vec<u64> = (0..keys).collect();
    let mut out = Vec::new();
    let mut pending = Vec::new();
    for _pass in 0..16 {
        if todo.is_empty() {
            return Ok(());
        }
        let mut by_node: Vec<Vec<u64>> = vec![Vec::new(); map.nodes.len()];
        for &k in &todo {
            by_node[map.node_of_key(k)?].push(k);
        }
        let mut again = Vec::new();
        for (n, ks) in by_node.iter().enumerate() {
            for chunk in ks.chunks(256) {
                if conns.len() <= n {
                    conns.resize_with(n + 1, || None);
                }
                let s = match &mut conns[n] {
                    Some(s) => s,
                    slot => slot.insert(connect_blocking(map.nodes[n], password)?),
                };
                out.clear();
                for &k in chunk {
                    push_request(Protocol::Resp, &mut out, k, false, value_size.of(k));
                }
                s.write_all(&out)?;
                let mut asks = Vec::new();
                for &k in chunk {
                    let got = read_reply(Protocol::Resp, s, &mut pending)?;
                    if got == b"+OK\r\n" {
                        continue;
                    }
                    match redirect(&got, map.nodes[n]) {
                        Some(r) if r.ask => asks.push((k, r.addr)),
                        Some(r) => {
                            let to = map.node(r.addr)?;
                            map.set(r.slot, to);
                            again.push(k);
                        }
                        None => {
                            return Err(io::Error::other(format!(
                                "preload: SET {} was answered {:?}",
                                crate::key_of(k),
                                String::from_utf8_lossy(&got).trim_end()
                            )))
                        }
                    }
                }
                for (k, addr) in asks {
                    let mut t = connect_blocking(addr, password)?;
                    out.clear();
                    out.extend_from_slice(ASKING);
                    push_request(Protocol::Resp, &mut out, k, false, value_size.of(k));
                    t.write_all(&out)?;
                    let mut tp = Vec::new();
                    let asked = read_reply(Protocol::Resp, &mut t, &mut tp)?;
                    let got = read_reply(Protocol::Resp, &mut t, &mut tp)?;
                    if asked != b"+OK\r\n" || got != b"+OK\r\n" {
                        // The migration ended meanwhile: the slot's new owner takes it.
                        again.push(k);
                    }
                }
            }
        }
        if !again.is_empty() {
            map.refresh(seed, password)?;
        }
        todo = again;
    }
    Err(io::Error::other(format!(
        "preload: {} keys still redirected after 16 passes",
        todo.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirections_parse() {
        let from: SocketAddr = "10.0.0.1:7000".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            redirect(b"-MOVED 3999 127.0.0.1:6381\r\n", from),
            Some(Redirect {
                ask: false,
                slot: 3999,
                addr: "127.0.0.1:6381".parse().unwrap_or_else(|e| panic!("{e}")),
            })
        );
        assert_eq!(
            redirect(b"-ASK 12 :6390\r\n", from),
            Some(Redirect {
                ask: true,
                slot: 12,
                addr: "10.0.0.1:6390".parse().unwrap_or_else(|e| panic!("{e}")),
            })
        );
        assert_eq!(redirect(b"-ERR MOVED 1 x:1\r\n", from), None);
        assert_eq!(redirect(b"-MOVED 16384 127.0.0.1:1\r\n", from), None);
        assert_eq!(redirect(b"+OK\r\n", from), None);
    }

    #[test]
    fn cluster_slots_replies_parse() {
        let raw = b"*2\r\n*3\r\n:0\r\n:8191\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n\
*4\r\n:8192\r\n:16383\r\n*2\r\n$0\r\n\r\n:7001\r\n*2\r\n$9\r\n127.0.0.1\r\n:7002\r\n";
        let Ok(Resp::Array(ranges)) = parse(raw, &mut 0) else {
            panic!("not parsed")
        };
        assert_eq!(ranges.len(), 2);
        let from: IpAddr = "10.0.0.1".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            resolve("", 7001, from).ok(),
            Some(SocketAddr::new(from, 7001))
        );
    }
}

//! CLUSTER in cluster mode (see [`crate::cluster`]): what `redis-cli --cluster` and
//! cluster clients send — INFO, NODES, MYID, SLOTS, SHARDS, KEYSLOT, COUNTKEYSINSLOT,
//! GETKEYSINSLOT, ADDSLOTS[RANGE], DELSLOTS[RANGE], FLUSHSLOTS, MEET, FORGET,
//! REPLICATE, REPLICAS, SET-CONFIG-EPOCH, BUMPEPOCH, SAVECONFIG, RESET,
//! COUNT-FAILURE-REPORTS, LINKS, HELP — with Redis's replies and errors; READONLY and
//! READWRITE (the routing of keyed commands is [`crate::cluster::route`]).

use super::cluster::key_slot;
use super::{eq, parse_i64, Ctx};
use crate::cluster::{Cluster, Node, SLOTS};
use crate::resp::Writer;

/// ASKING: the next command may use a slot this node is importing.
pub fn asking(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    if ctx.shared.cluster.is_none() {
        return w.error("ERR This instance has cluster support disabled");
    }
    ctx.session.asking = true;
    w.simple("OK");
}

/// READONLY: this connection may read a replica's slots from it.
pub fn readonly(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    if ctx.shared.cluster.is_none() {
        return w.error("ERR This instance has cluster support disabled");
    }
    ctx.session.cluster_readonly = true;
    w.simple("OK");
}

/// READWRITE: back to redirections for every keyed command on a replica.
pub fn readwrite(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    if ctx.shared.cluster.is_none() {
        return w.error("ERR This instance has cluster support disabled");
    }
    ctx.session.cluster_readonly = false;
    w.simple("OK");
}

fn slot_arg(a: &[u8]) -> Result<u16, String> {
    match parse_i64(a) {
        Some(n) if (0..SLOTS as i64).contains(&n) => Ok(n as u16),
        _ => Err("ERR Invalid or out of range slot".into()),
    }
}

/// The slots named by ADDSLOTS/DELSLOTS (`range`: pairs of ADDSLOTSRANGE).
fn slot_list(args: &[&[u8]], range: bool) -> Result<Vec<u16>, String> {
    let mut slots = Vec::new();
    if range {
        if !args.len().is_multiple_of(2) {
            return Err("ERR wrong number of arguments for 'cluster|addslotsrange' command".into());
        }
        for p in args.chunks(2) {
            let (a, b) = (slot_arg(p[0])?, slot_arg(p[1])?);
            if a > b {
                return Err(format!(
                    "ERR start slot number {a} is greater than end slot number {b}"
                ));
            }
            slots.extend(a..=b);
        }
    } else {
        for a in args {
            slots.push(slot_arg(a)?);
        }
    }
    let mut seen = vec![false; SLOTS];
    for &s in &slots {
        if std::mem::replace(&mut seen[s as usize], true) {
            return Err(format!("ERR Slot {s} specified multiple times"));
        }
    }
    Ok(slots)
}

fn node_by_id(st: &crate::cluster::State, id: &[u8]) -> Option<usize> {
    let id = std::str::from_utf8(id).ok()?;
    st.nodes.iter().position(|n| !n.gone && n.id == id)
}

/// Keys in database 0 (cluster mode has that one only).
fn dataset_empty(ctx: &mut Ctx) -> bool {
    ctx.keys.select(0);
    ctx.keys.is_empty()
}

/// CLUSTER ... in cluster mode.
pub fn cluster(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let shared = ctx.shared;
    let Some(c) = shared.cluster.as_ref() else {
        return;
    };
    let sub = String::from_utf8_lossy(args[1]).to_ascii_lowercase();
    let rest = &args[2..];
    let arity = |w: &mut Writer| {
        w.error(&format!(
            "ERR wrong number of arguments for 'cluster|{sub}' command"
        ))
    };
    match sub.as_str() {
        "info" => w.verbatim(info(c).as_bytes()),
        "myid" => w.bulk(c.my_id().as_bytes()),
        "myshardid" => {
            let st = c.state();
            let me = &st.nodes[0];
            let shard = if me.replica {
                me.master.clone().unwrap_or_default()
            } else {
                me.id.clone()
            };
            w.bulk(shard.as_bytes())
        }
        "nodes" => w.verbatim(c.nodes_text(ctx.now, ctx.session.tls).as_bytes()),
        "slots" => slots(c, w, ctx.session.tls),
        "shards" => shards(c, w),
        "keyslot" if rest.len() == 1 => w.int(key_slot(rest[0]) as i64),
        "countkeysinslot" if rest.len() == 1 => match slot_arg(rest[0]) {
            Ok(slot) => {
                let mut n = 0;
                ctx.keys.select(0);
                // A slot's keys are all in one shard in cluster mode.
                let shard = slot as usize % ctx.keys.shards();
                ctx.keys
                    .for_each_key_in_shard(shard, ctx.now, |k| n += i64::from(key_slot(k) == slot));
                w.int(n)
            }
            Err(e) => w.error(&e),
        },
        "getkeysinslot" if rest.len() == 2 => {
            let slot = match slot_arg(rest[0]) {
                Ok(s) => s,
                Err(e) => return w.error(&e),
            };
            let Some(count) = parse_i64(rest[1]).filter(|&n| n >= 0) else {
                return w.error("ERR Invalid number of keys");
            };
            let mut keys = Vec::new();
            ctx.keys.select(0);
            let shard = slot as usize % ctx.keys.shards();
            ctx.keys.for_each_key_in_shard(shard, ctx.now, |k| {
                if (keys.len() as i64) < count && key_slot(k) == slot {
                    keys.push(k.to_vec());
                }
            });
            w.array(keys.len());
            for k in keys {
                w.bulk(&k);
            }
        }
        "addslots" | "addslotsrange" | "delslots" | "delslotsrange" if !rest.is_empty() => {
            let list = match slot_list(rest, sub.ends_with("range")) {
                Ok(l) => l,
                Err(e) => return w.error(&e),
            };
            let st = c.state();
            let add = sub.starts_with("add");
            for &s in &list {
                match (add, c.owner_of(s)) {
                    (true, Some(_)) => return w.error(&format!("ERR Slot {s} is already busy")),
                    (false, None) => {
                        return w.error(&format!("ERR Slot {s} is already unassigned"))
                    }
                    _ => {}
                }
            }
            for &s in &list {
                c.set_owner(s, add.then_some(0));
            }
            c.changed(&st);
            w.simple("OK")
        }
        "flushslots" if rest.is_empty() => {
            if !dataset_empty(ctx) {
                return w.error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
            }
            let st = c.state();
            for s in c.slots_of(0) {
                c.set_owner(s, None);
            }
            c.changed(&st);
            w.simple("OK")
        }
        "meet" if rest.len() == 2 || rest.len() == 3 => meet(c, rest, w),
        "forget" if rest.len() == 1 => {
            let mut st = c.state();
            match node_by_id(&st, rest[0]) {
                Some(0) => w.error("ERR I tried hard but I can't forget myself..."),
                Some(i) if st.nodes[0].master.as_deref() == Some(st.nodes[i].id.as_str()) => {
                    w.error("ERR Can't forget my master!")
                }
                Some(i) => {
                    st.nodes[i].gone = true;
                    for s in c.slots_of(i) {
                        c.set_owner(s, None);
                    }
                    c.changed(&st);
                    w.simple("OK")
                }
                None => w.error(&format!(
                    "ERR Unknown node {}",
                    String::from_utf8_lossy(rest[0])
                )),
            }
        }
        "replicate" if rest.len() == 1 => replicate(ctx, rest[0], w),
        "replicas" | "slaves" if rest.len() == 1 => {
            let st = c.state();
            let Some(i) = node_by_id(&st, rest[0]) else {
                return w.error(&format!(
                    "ERR Unknown node {}",
                    String::from_utf8_lossy(rest[0])
                ));
            };
            if st.nodes[i].replica {
                return w.error("ERR The specified node is not a master");
            }
            let id = st.nodes[i].id.clone();
            let lines: Vec<String> = (0..st.nodes.len())
                .filter(|&j| {
                    !st.nodes[j].gone && st.nodes[j].master.as_deref() == Some(id.as_str())
                })
                .map(|j| c.node_line(&st, j, ctx.now, Some(ctx.session.tls)))
                .collect();
            w.array(lines.len());
            for l in lines {
                w.bulk(l.as_bytes());
            }
        }
        "set-config-epoch" if rest.len() == 1 => {
            let Some(epoch) =
                parse_i64(rest[0]).filter(|&e| e >= 0 && e as u64 <= crate::cluster::MAX_EPOCH)
            else {
                return w.error(&format!(
                    "ERR Invalid config epoch specified: {}",
                    String::from_utf8_lossy(rest[0])
                ));
            };
            let mut st = c.state();
            if st.nodes.iter().skip(1).any(|n| !n.gone) {
                return w.error(
                    "ERR The user can assign a config epoch only when the node does not know any other node.",
                );
            }
            if st.nodes[0].config_epoch != 0 {
                return w.error("ERR Node config epoch is already non-zero");
            }
            st.nodes[0].config_epoch = epoch as u64;
            st.current_epoch = st.current_epoch.max(epoch as u64);
            c.changed(&st);
            w.simple("OK")
        }
        "bumpepoch" if rest.is_empty() => {
            let mut st = c.state();
            let max = st.nodes.iter().map(|n| n.config_epoch).max().unwrap_or(0);
            if st.nodes[0].config_epoch == 0 || st.nodes[0].config_epoch != max {
                let Some(next) = crate::cluster::next_epoch(st.current_epoch) else {
                    return w.error("ERR the current epoch is at its bound");
                };
                st.current_epoch = next;
                st.nodes[0].config_epoch = st.current_epoch;
                c.changed(&st);
                w.simple(&format!("BUMPED {}", st.nodes[0].config_epoch))
            } else {
                w.simple(&format!("STILL {}", st.nodes[0].config_epoch))
            }
        }
        "saveconfig" if rest.is_empty() => {
            {
                let st = c.state();
                c.changed(&st);
            }
            match c.save_if_dirty() {
                Ok(()) => w.simple("OK"),
                Err(e) => w.error(&format!("ERR error saving the cluster node config: {e}")),
            }
        }
        "count-failure-reports" if rest.len() == 1 => {
            let st = c.state();
            match node_by_id(&st, rest[0]) {
                Some(i) => {
                    let window = 2 * c.node_timeout;
                    let now = ctx.now;
                    let n = st.nodes[i]
                        .reports
                        .iter()
                        .filter(|(_, t)| now.saturating_sub(*t) <= window)
                        .count();
                    w.int(n as i64)
                }
                None => w.error(&format!(
                    "ERR Unknown node {}",
                    String::from_utf8_lossy(rest[0])
                )),
            }
        }
        "links" if rest.is_empty() => {
            let st = c.state();
            let peers: Vec<&Node> = st
                .nodes
                .iter()
                .skip(1)
                .filter(|n| !n.gone && n.link)
                .collect();
            w.array(peers.len());
            for n in peers {
                w.map(2);
                w.bulk(b"node");
                w.bulk(n.id.as_bytes());
                w.bulk(b"dir");
                w.bulk(b"to");
            }
        }
        "reset" if rest.len() <= 1 => reset(ctx, rest, w),
        "setslot" if rest.len() == 2 || rest.len() == 3 => setslot(c, rest, w),
        "failover" if rest.len() <= 1 => {
            if let Some(m) = rest.first() {
                if !eq(m, "force") && !eq(m, "takeover") {
                    return w.error(super::SYNTAX);
                }
            }
            if rest.is_empty() {
                // The manual failover: the primary holds writes until this replica has
                // caught up; it completes on the bus's rounds.
                return match c.start_manual(wirespeed_util::time::unix_ms()) {
                    Ok(()) => w.simple("OK"),
                    Err(e) => w.error(e),
                };
            }
            match c.take_over() {
                Ok(a) => {
                    crate::cluster::failover::act(shared, a);
                    w.simple("OK")
                }
                Err(e) => w.error(e),
            }
        }
        "help" => super::help(
            w,
            &[
                "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "ADDSLOTS <slot> [<slot> ...]",
                "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
                "BUMPEPOCH",
                "COUNT-FAILURE-REPORTS <node-id>",
                "COUNTKEYSINSLOT <slot>",
                "FAILOVER [FORCE|TAKEOVER]",
                "DELSLOTS <slot> [<slot> ...]",
                "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
                "FLUSHSLOTS",
                "FORGET <node-id>",
                "GETKEYSINSLOT <slot> <count>",
                "INFO",
                "KEYSLOT <key>",
                "LINKS",
                "MEET <ip> <port> [<bus-port>]",
                "MYID",
                "MYSHARDID",
                "NODES",
                "REPLICATE <node-id>",
                "RESET [HARD|SOFT]",
                "SET-CONFIG-EPOCH <epoch>",
                "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
                "SAVECONFIG",
                "REPLICAS <node-id>",
                "SHARDS",
                "SLOTS",
            ],
        ),
        "keyslot"
        | "countkeysinslot"
        | "getkeysinslot"
        | "addslots"
        | "addslotsrange"
        | "delslots"
        | "delslotsrange"
        | "flushslots"
        | "meet"
        | "forget"
        | "replicate"
        | "replicas"
        | "slaves"
        | "set-config-epoch"
        | "bumpepoch"
        | "saveconfig"
        | "count-failure-reports"
        | "links"
        | "reset" => arity(w),
        _ => w.error(&format!(
            "ERR unknown subcommand '{}'. Try CLUSTER HELP.",
            String::from_utf8_lossy(args[1])
        )),
    }
}

/// CLUSTER INFO's text.
fn info(c: &Cluster) -> String {
    let st = c.state();
    let mut assigned = 0;
    let mut pfail = 0;
    let mut size = std::collections::BTreeSet::new();
    for s in 0..SLOTS as u16 {
        if let Some(o) = c.owner_of(s) {
            assigned += 1;
            size.insert(o);
            if st.nodes[o].pfail {
                pfail += 1;
            }
        }
    }
    let me = &st.nodes[0];
    let my_epoch = if me.replica {
        me.master
            .as_deref()
            .and_then(|m| st.nodes.iter().find(|n| n.id == m))
            .map_or(0, |n| n.config_epoch)
    } else {
        me.config_epoch
    };
    format!(
        "cluster_enabled:1\r\ncluster_state:{}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{}\r\ncluster_slots_pfail:{pfail}\r\ncluster_slots_fail:0\r\ncluster_known_nodes:{}\r\ncluster_size:{}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{my_epoch}\r\ncluster_stats_messages_sent:{}\r\ncluster_stats_messages_received:{}\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n",
        if c.ok() { "ok" } else { "fail" },
        assigned - pfail,
        st.nodes.iter().filter(|n| !n.gone).count(),
        size.len(),
        st.current_epoch,
        st.sent,
        st.received,
    )
}

/// A primary serving slots: it, its slot ranges, its replicas.
type Shard = (Node, Vec<(u16, u16)>, Vec<Node>);

/// The primaries serving slots, each with its slot ranges and its replicas.
fn layout(c: &Cluster) -> Vec<Shard> {
    let st = c.state();
    let mut out = Vec::new();
    for (i, n) in st.nodes.iter().enumerate() {
        if n.gone || n.replica || n.handshake {
            continue;
        }
        let r = crate::cluster::ranges(&c.slots_of(i));
        if r.is_empty() {
            continue;
        }
        let replicas = st
            .nodes
            .iter()
            .filter(|m| !m.gone && m.replica && m.master.as_deref() == Some(n.id.as_str()))
            .cloned()
            .collect();
        out.push((n.clone(), r, replicas));
    }
    out
}

fn slot_node(w: &mut Writer, n: &Node, tls: bool) {
    w.array(4);
    w.bulk(n.ip.as_bytes());
    w.int(n.client_port(tls) as i64);
    w.bulk(n.id.as_bytes());
    w.map(0);
}

/// CLUSTER SLOTS: each range with its primary and replicas, ascending (`tls`: the
/// client came on the TLS port, and gets TLS ports).
fn slots(c: &Cluster, w: &mut Writer, tls: bool) {
    let mut rows = Vec::new();
    for (n, ranges, replicas) in layout(c) {
        for (a, b) in ranges {
            rows.push((a, b, n.clone(), replicas.clone()));
        }
    }
    rows.sort_by_key(|r| r.0);
    w.array(rows.len());
    for (a, b, n, replicas) in rows {
        w.array(3 + replicas.len());
        w.int(a as i64);
        w.int(b as i64);
        slot_node(w, &n, tls);
        for r in &replicas {
            slot_node(w, r, tls);
        }
    }
}

/// One node of CLUSTER SHARDS: `port` and, when it has one, `tls-port`, as Redis.
fn shard_node(w: &mut Writer, n: &Node, role: &str) {
    w.map(7 + usize::from(n.tls_port != 0));
    for (k, v) in [("id", &n.id), ("ip", &n.ip), ("endpoint", &n.ip)] {
        w.bulk(k.as_bytes());
        w.bulk(v.as_bytes());
    }
    w.bulk(b"port");
    w.int(n.port as i64);
    if n.tls_port != 0 {
        w.bulk(b"tls-port");
        w.int(n.tls_port as i64);
    }
    w.bulk(b"role");
    w.bulk(role.as_bytes());
    w.bulk(b"replication-offset");
    w.int(0);
    w.bulk(b"health");
    w.bulk(if n.pfail {
        b"fail".as_slice()
    } else {
        b"online"
    });
}

/// CLUSTER SHARDS: each primary's slots and nodes.
fn shards(c: &Cluster, w: &mut Writer) {
    let layout = layout(c);
    w.array(layout.len());
    for (n, ranges, replicas) in layout {
        w.map(2);
        w.bulk(b"slots");
        w.array(ranges.len() * 2);
        for (a, b) in ranges {
            w.int(a as i64);
            w.int(b as i64);
        }
        w.bulk(b"nodes");
        w.array(1 + replicas.len());
        shard_node(w, &n, "master");
        for r in &replicas {
            shard_node(w, r, "replica");
        }
    }
}

/// CLUSTER MEET ip port [bus-port]. The port is the node's TLS port with
/// `tls-cluster` (as in Redis); the node's own message corrects both soon after.
fn meet(c: &Cluster, rest: &[&[u8]], w: &mut Writer) {
    let ip = String::from_utf8_lossy(rest[0]).into_owned();
    let port = parse_i64(rest[1]).filter(|p| (1..=65535).contains(p));
    let cport = match rest.get(2) {
        Some(a) => parse_i64(a).filter(|p| (1..=65535).contains(p)),
        None => port
            .map(|p| p + crate::cluster::BUS_OFFSET as i64)
            .filter(|&p| p <= 65535),
    };
    let (Some(port), Some(cport), Ok(_)) = (port, cport, ip.parse::<std::net::IpAddr>()) else {
        return w.error(&format!(
            "ERR Invalid node address specified: {ip}:{}",
            String::from_utf8_lossy(rest[1])
        ));
    };
    let mut st = c.state();
    let known = st
        .nodes
        .iter()
        .any(|n| !n.gone && n.ip == ip && n.cport == cport as u16);
    if !known {
        st.nodes.push(Node {
            id: crate::repl::new_replid(),
            ip,
            port: if c.tls_cluster { 0 } else { port as u16 },
            tls_port: if c.tls_cluster { port as u16 } else { 0 },
            cport: cport as u16,
            handshake: true,
            ping_sent: wirespeed_util::time::unix_ms(),
            ..Node::default()
        });
        c.changed(&st);
    }
    w.simple("OK");
}

/// CLUSTER REPLICATE node-id: this node becomes a replica of that primary.
fn replicate(ctx: &mut Ctx, id: &[u8], w: &mut Writer) {
    let empty = dataset_empty(ctx);
    let shared = ctx.shared;
    let Some(c) = shared.cluster.as_ref() else {
        return;
    };
    let (host, port) = {
        let mut st = c.state();
        let Some(i) = node_by_id(&st, id) else {
            return w.error(&format!("ERR Unknown node {}", String::from_utf8_lossy(id)));
        };
        if i == 0 {
            return w.error("ERR Can't replicate myself");
        }
        if st.nodes[i].replica {
            return w.error("ERR I can only replicate a master, not a replica.");
        }
        if !st.nodes[0].replica && (!c.slots_of(0).is_empty() || !empty) {
            return w
                .error("ERR To set a master the node must be empty and without assigned slots.");
        }
        let (host, port) = (st.nodes[i].ip.clone(), c.repl_port(&st.nodes[i]));
        st.nodes[0].replica = true;
        st.nodes[0].master = Some(st.nodes[i].id.clone());
        c.changed(&st);
        (host, port)
    };
    crate::repl::replica::start(shared, host, port);
    w.simple("OK");
}

/// CLUSTER RESET [HARD|SOFT]: forgets every other node and this node's slots, stops
/// replicating; HARD also takes a new id and zeroes the epochs.
fn reset(ctx: &mut Ctx, rest: &[&[u8]], w: &mut Writer) {
    let hard = match rest.first() {
        None => false,
        Some(a) if eq(a, "soft") => false,
        Some(a) if eq(a, "hard") => true,
        Some(_) => return w.error(super::SYNTAX),
    };
    let empty = dataset_empty(ctx);
    let shared = ctx.shared;
    let Some(c) = shared.cluster.as_ref() else {
        return;
    };
    {
        let st = c.state();
        if !st.nodes[0].replica && !empty {
            return w.error("ERR CLUSTER RESET can't be called with master nodes containing keys");
        }
    }
    if shared.repl.is_replica() {
        shared.repl.unfollow();
        ctx.keys.select(0);
        ctx.keys.clear();
    }
    let mut st = c.state();
    for s in 0..SLOTS as u16 {
        c.set_owner(s, None);
    }
    for n in st.nodes.iter_mut().skip(1) {
        n.gone = true;
    }
    st.nodes[0].replica = false;
    st.nodes[0].master = None;
    if hard {
        st.nodes[0].id = crate::repl::new_replid();
        st.nodes[0].config_epoch = 0;
        st.current_epoch = 0;
        st.last_vote_epoch = 0;
    }
    c.changed(&st);
    w.simple("OK");
}

/// CLUSTER SETSLOT slot IMPORTING id | MIGRATING id | STABLE | NODE id.
fn setslot(c: &Cluster, rest: &[&[u8]], w: &mut Writer) {
    let slot = match slot_arg(rest[0]) {
        Ok(s) => s,
        Err(e) => return w.error(&e),
    };
    let mut st = c.state();
    if st.nodes[0].replica {
        return w.error("ERR Please use SETSLOT only with masters.");
    }
    let what = rest[1];
    let node = match rest.get(2) {
        Some(id) => match node_by_id(&st, id) {
            Some(i) => Some(i),
            None => {
                return w.error(&format!(
                    "ERR I don't know about node {}",
                    String::from_utf8_lossy(id)
                ))
            }
        },
        None => None,
    };
    let owner = c.owner_of(slot);
    match (node, rest.len()) {
        (Some(i), 3) if eq(what, "migrating") => {
            if owner != Some(0) {
                return w.error(&format!("ERR I'm not the owner of hash slot {slot}"));
            }
            if st.nodes[i].replica {
                return w.error("ERR Target node is not a master");
            }
            let id = st.nodes[i].id.clone();
            c.set_moving(&mut st, slot, Some((true, id)));
        }
        (Some(i), 3) if eq(what, "importing") => {
            if owner == Some(0) {
                return w.error(&format!("ERR I'm already the owner of hash slot {slot}"));
            }
            if st.nodes[i].replica {
                return w.error("ERR Target node is not a master");
            }
            let id = st.nodes[i].id.clone();
            c.set_moving(&mut st, slot, Some((false, id)));
        }
        (None, 2) if eq(what, "stable") => c.set_moving(&mut st, slot, None),
        (Some(i), 3) if eq(what, "node") => {
            if st.nodes[i].replica {
                return w.error("ERR Target node is not a master");
            }
            let was_importing = st.importing.contains_key(&slot);
            c.set_moving(&mut st, slot, None);
            c.set_owner(slot, Some(i));
            let known = st.nodes.iter().map(|n| n.config_epoch).max().unwrap_or(0);
            let floor = known.max(st.current_epoch);
            st.slot_floor.insert(slot, floor);
            if i == 0 && was_importing {
                // The slot is this node's now: a config epoch above every other
                // node's, so the claim wins everywhere (Redis does the same).
                let max = st.nodes.iter().map(|n| n.config_epoch).max().unwrap_or(0);
                let Some(next) = crate::cluster::next_epoch(st.current_epoch.max(max)) else {
                    return w.error("ERR the current epoch is at its bound");
                };
                st.current_epoch = next;
                st.nodes[0].config_epoch = st.current_epoch;
                st.slot_floor.remove(&slot);
            }
        }
        _ => {
            return w.error(
                "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP",
            )
        }
    }
    c.changed(&st);
    w.simple("OK");
}

//! `cluster-config-file`: Redis's `nodes.conf` form — one CLUSTER NODES line per node
//! (this node's flagged `myself`), then `vars currentEpoch N lastVoteEpoch M`, and, when
//! slots were given by CLUSTER SETSLOT NODE, `slotFloors` with their floors (the epoch
//! a claim must exceed to move them again): `A-B:E` or `S:E` items joined by commas
//! (Redis skips a variable it does not know).

use std::collections::HashMap;

use super::{Cluster, Node, State, MAX_EPOCH, SLOTS};

/// What a file holds: the nodes (this node first), slot owners by node index, epochs.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Nodes; index 0 is this node.
    pub nodes: Vec<Node>,
    /// (slot, node index) for every assigned slot.
    pub slots: Vec<(u16, usize)>,
    /// `currentEpoch`.
    pub current_epoch: u64,
    /// `lastVoteEpoch`.
    pub last_vote_epoch: u64,
    /// `slotFloors`: (slot, floor epoch).
    pub slot_floors: Vec<(u16, u64)>,
}

/// The floors as `A-B:E` (a run of slots with one floor) or `S:E` items, joined by
/// commas, in slot order.
pub fn render_floors(floors: &std::collections::HashMap<u16, u64>) -> String {
    let mut all: Vec<(u16, u64)> = floors.iter().map(|(&s, &e)| (s, e)).collect();
    all.sort_unstable();
    let mut items: Vec<String> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let (a, e) = all[i];
        let mut b = a;
        while i + 1 < all.len() && all[i + 1] == (b + 1, e) {
            b += 1;
            i += 1;
        }
        items.push(if a == b {
            format!("{a}:{e}")
        } else {
            format!("{a}-{b}:{e}")
        });
        i += 1;
    }
    items.join(",")
}

/// Reads what [`render_floors`] writes.
fn parse_floors(text: &str) -> Option<Vec<(u16, u64)>> {
    let mut out = Vec::new();
    for item in text.split(',').filter(|t| !t.is_empty()) {
        let (range, epoch) = item.split_once(':')?;
        let epoch: u64 = epoch.parse().ok()?;
        let (a, b) = match range.split_once('-') {
            Some((a, b)) => (a.parse::<u16>().ok()?, b.parse::<u16>().ok()?),
            None => (range.parse().ok()?, range.parse().ok()?),
        };
        if a > b || usize::from(b) >= SLOTS {
            return None;
        }
        out.extend((a..=b).map(|s| (s, epoch)));
    }
    Some(out)
}

/// The file's text for the state `st`.
pub fn render(c: &Cluster, st: &State) -> String {
    let mut out = String::new();
    for (i, n) in st.nodes.iter().enumerate() {
        if n.gone || n.handshake {
            continue;
        }
        out.push_str(&c.node_line(st, i, 0, None));
        out.push('\n');
    }
    out.push_str(&format!(
        "vars currentEpoch {} lastVoteEpoch {}",
        st.current_epoch, st.last_vote_epoch
    ));
    if !st.slot_floor.is_empty() {
        out.push_str(" slotFloors ");
        out.push_str(&render_floors(&st.slot_floor));
    }
    out.push('\n');
    out
}

/// Reads a file's text; the error names the line.
pub fn parse(text: &str) -> Result<Loaded, String> {
    let mut out = Loaded::default();
    let mut me: Option<(Node, Vec<u16>)> = None;
    let mut others: Vec<(Node, Vec<u16>)> = Vec::new();
    // Line numbers of `me` and `others`, for the checks across lines.
    let mut me_line = 0;
    let mut other_lines: Vec<usize> = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let bad = |what: &str| format!("line {}: {what}", no + 1);
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if words[0] == "vars" {
            for pair in words[1..].chunks(2) {
                let value = pair
                    .get(1)
                    .ok_or_else(|| bad("a vars name without a value"))?;
                let number = || {
                    value
                        .parse::<u64>()
                        .ok()
                        .filter(|&e| e <= MAX_EPOCH)
                        .ok_or_else(|| bad("a bad vars value (an epoch from 0 to 2^48)"))
                };
                match pair[0] {
                    "currentEpoch" => out.current_epoch = number()?,
                    "lastVoteEpoch" => out.last_vote_epoch = number()?,
                    "slotFloors" => {
                        out.slot_floors =
                            parse_floors(value).ok_or_else(|| bad("a bad slotFloors value"))?
                    }
                    _ => {}
                }
            }
            continue;
        }
        if words.len() < 8 {
            return Err(bad("fewer than 8 fields"));
        }
        let id = words[0];
        if id.len() != 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("a node id is 40 hex digits"));
        }
        let (ip, port, tls_port, cport) =
            parse_addr(words[1]).ok_or_else(|| bad("a bad address"))?;
        let flags: Vec<&str> = words[2].split(',').collect();
        let master = (words[3] != "-").then(|| words[3].to_string());
        let config_epoch = words[6]
            .parse::<u64>()
            .ok()
            .filter(|&e| e <= MAX_EPOCH)
            .ok_or_else(|| bad("a bad config epoch (0 to 2^48)"))?;
        let mut slots = Vec::new();
        for def in &words[8..] {
            if def.starts_with('[') {
                continue;
            }
            let (a, b) = match def.split_once('-') {
                Some((a, b)) => (a.parse::<u16>(), b.parse::<u16>()),
                None => (def.parse::<u16>(), def.parse::<u16>()),
            };
            match (a, b) {
                (Ok(a), Ok(b)) if a <= b && (b as usize) < SLOTS => slots.extend(a..=b),
                _ => return Err(bad("a bad slot range")),
            }
        }
        let node = Node {
            id: id.to_string(),
            ip,
            port,
            tls_port,
            cport,
            replica: flags.contains(&"slave"),
            master,
            config_epoch,
            ..Node::default()
        };
        if flags.contains(&"myself") {
            if me.is_some() {
                return Err(bad("a second node flagged myself"));
            }
            me = Some((node, slots));
            me_line = no + 1;
        } else if !flags.contains(&"handshake") {
            others.push((node, slots));
            other_lines.push(no + 1);
        }
    }
    let Some(me) = me else {
        return Err("no node is flagged myself".into());
    };
    let mut owner: HashMap<u16, usize> = HashMap::new();
    for (i, ((node, slots), line)) in std::iter::once(me)
        .chain(others)
        .zip(std::iter::once(me_line).chain(other_lines))
        .enumerate()
    {
        let bad = |what: String| format!("line {line}: {what}");
        if out.nodes.iter().any(|n: &Node| n.id == node.id) {
            return Err(bad(format!("node {} is listed twice", node.id)));
        }
        if node.master.as_deref() == Some(node.id.as_str()) {
            return Err(bad(format!("node {} replicates itself", node.id)));
        }
        if node.config_epoch > out.current_epoch {
            return Err(bad(format!(
                "config epoch {} is past currentEpoch {}",
                node.config_epoch, out.current_epoch
            )));
        }
        for &s in &slots {
            if let Some(&other) = owner.get(&s) {
                return Err(bad(format!(
                    "slot {s} is claimed by node {} too",
                    out.nodes[other].id
                )));
            }
            owner.insert(s, i);
        }
        out.slots.extend(slots.into_iter().map(|s| (s, i)));
        out.nodes.push(node);
    }
    // This node's primary must be one of the file's nodes.
    if let Some(m) = out.nodes[0].master.as_deref() {
        if out.nodes[0].replica && !out.nodes.iter().any(|n| n.id == m) {
            return Err(format!(
                "line {me_line}: this node's primary {m} is not in the file"
            ));
        }
    }
    if out.last_vote_epoch > out.current_epoch {
        return Err(format!(
            "lastVoteEpoch {} is past currentEpoch {}",
            out.last_vote_epoch, out.current_epoch
        ));
    }
    Ok(out)
}

/// `ip:port@cport` with an optional `,hostname` and Redis 7.2's `,name=value` fields
/// after it: `tls-port=N` (the other port is the TLS port), or `tcp-port=N` (the
/// first port is the TLS port and this the plain one, with `tls-cluster`). Returns
/// (ip, port, TLS port, bus port).
pub fn parse_addr(a: &str) -> Option<(String, u16, u16, u16)> {
    let mut parts = a.split(',');
    let (host, rest) = parts.next()?.rsplit_once(':')?;
    let (first, cport) = rest.split_once('@')?;
    let (first, cport): (u16, u16) = (first.parse().ok()?, cport.parse().ok()?);
    let (mut port, mut tls_port) = (first, 0);
    for field in parts.skip(1) {
        match field.split_once('=') {
            Some(("tls-port", n)) => tls_port = n.parse().ok()?,
            Some(("tcp-port", n)) => (port, tls_port) = (n.parse().ok()?, first),
            _ => {}
        }
    }
    Some((host.to_string(), port, tls_port, cport))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_port_after_the_address_reads_back() {
        // Redis 7.2's forms: the plain port first with `tls-port=`, or (tls-cluster)
        // the TLS port first with `tcp-port=`.
        assert_eq!(
            parse_addr("127.0.0.1:30001@40001,,tls-port=31001,shard-id=ab"),
            Some(("127.0.0.1".into(), 30001, 31001, 40001))
        );
        assert_eq!(
            parse_addr("127.0.0.1:31001@41001,,tcp-port=30001"),
            Some(("127.0.0.1".into(), 30001, 31001, 41001))
        );
        assert_eq!(
            parse_addr("10.0.0.1:30001@40001,host.example"),
            Some(("10.0.0.1".into(), 30001, 0, 40001))
        );
        assert_eq!(parse_addr("127.0.0.1:30001@40001,,tls-port=x"), None);
        assert_eq!(parse_addr("127.0.0.1:30001@40001,,tls-port=70000"), None);
    }

    #[test]
    fn a_nodes_file_reads_back() {
        let text = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460 6000
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [16383->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]
vars currentEpoch 6 lastVoteEpoch 2
";
        let l = parse(text).unwrap();
        assert_eq!(l.nodes.len(), 3);
        assert_eq!(l.nodes[0].id, "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca");
        assert_eq!(l.nodes[0].port, 30001);
        assert_eq!(l.nodes[0].cport, 31001);
        assert!(l.nodes[1].replica);
        assert_eq!(
            l.nodes[1].master.as_deref(),
            Some("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca")
        );
        assert_eq!(l.slots.iter().filter(|(_, i)| *i == 0).count(), 5462);
        assert_eq!(l.slots.iter().filter(|(_, i)| *i == 2).count(), 5461);
        assert_eq!((l.current_epoch, l.last_vote_epoch), (6, 2));
        assert!(parse("vars currentEpoch 1\n").is_err());
        assert!(parse(&text.replace("lastVoteEpoch 2", "lastVoteEpoch x")).is_err());
        assert!(parse("xyz 1:2@3 myself,master - 0 0 1 connected\n").is_err());
        assert!(parse(&text.replace("0-5460", "0-99999")).is_err());
    }

    #[test]
    fn slot_floors_read_back() {
        let floors: std::collections::HashMap<u16, u64> =
            [(5, 7), (6, 7), (7, 7), (8, 9), (100, 3), (16383, 12)]
                .into_iter()
                .collect();
        let text = render_floors(&floors);
        assert_eq!(text, "5-7:7,8:9,100:3,16383:12");
        let mut back = parse_floors(&text).unwrap();
        back.sort_unstable();
        let mut want: Vec<(u16, u64)> = floors.into_iter().collect();
        want.sort_unstable();
        assert_eq!(back, want);
        let file = "\
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
vars currentEpoch 6 lastVoteEpoch 2 slotFloors 5-7:7,8:9
";
        let l = parse(file).unwrap();
        assert_eq!(l.current_epoch, 6);
        assert_eq!(l.slot_floors, vec![(5, 7), (6, 7), (7, 7), (8, 9)]);
        for bad in ["5-4:1", "16384:1", "5", "5:x", "a-b:1"] {
            assert!(parse(&file.replace("5-7:7,8:9", bad)).is_err(), "{bad}");
        }
        // A file without floors (Redis's, or an older one) reads as before.
        assert!(parse(&file.replace(" slotFloors 5-7:7,8:9", ""))
            .unwrap()
            .slot_floors
            .is_empty());
    }

    #[test]
    fn damaged_files_are_refused_with_the_line_and_the_problem() {
        let good = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383
vars currentEpoch 6 lastVoteEpoch 2
";
        assert!(parse(good).is_ok());
        let cases = [
            // A flipped config-epoch digit (3 -> 8) past currentEpoch.
            (
                good.replace("1426238318243 3 connected", "1426238318243 8 connected"),
                "line 3: config epoch 8 is past currentEpoch 6",
            ),
            // A changed id digit that makes two nodes one.
            (
                good.replace(
                    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f",
                    "07c37dfeb235213a872192d90877d0cd55635b91",
                ),
                "line 3: node 07c37dfeb235213a872192d90877d0cd55635b91 is listed twice",
            ),
            (
                good.replace("currentEpoch 6", "currentEpoch 18446744073709551615"),
                "line 4: a bad vars value",
            ),
            (
                good.replace(
                    "myself,master - 0 0 1",
                    "myself,slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 0 1",
                ),
                "line 2: node e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca replicates itself",
            ),
            (
                good.replace("connected 10923-16383", "connected 5000-16383"),
                "slot 5000 is claimed by node e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca too",
            ),
            (
                good.replace("lastVoteEpoch 2", "lastVoteEpoch 7"),
                "lastVoteEpoch 7 is past currentEpoch 6",
            ),
            (
                good.replace(
                    "myself,master - 0 0 1",
                    "myself,slave 1111111111111111111111111111111111111111 0 0 1",
                )
                .replace("connected 0-5460", "connected"),
                "line 2: this node's primary 1111111111111111111111111111111111111111 is not in the file",
            ),
        ];
        for (text, want) in cases {
            let Err(e) = parse(&text) else {
                panic!("accepted: {want}");
            };
            assert!(e.contains(want), "{e} (wanted {want})");
        }
        // The epoch bound itself is accepted.
        assert!(parse(&good.replace("currentEpoch 6", "currentEpoch 281474976710656")).is_ok());
        assert!(parse(&good.replace("currentEpoch 6", "currentEpoch 281474976710657")).is_err());
    }
}

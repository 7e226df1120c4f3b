//! `cluster-config-file`: Redis's `nodes.conf` form — one CLUSTER NODES line per node
//! (this node's flagged `myself`), then `vars currentEpoch N lastVoteEpoch M`, and, when
//! slots were given by CLUSTER SETSLOT NODE, `slotFloors` with their floors (the epoch
//! a claim must exceed to move them again): `A-B:E` or `S:E` items joined by commas
//! (Redis skips a variable it does not know).

use super::{Cluster, Node, State, SLOTS};

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
        out.push_str(&c.node_line(st, i, 0));
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
                let number = || value.parse::<u64>().map_err(|_| bad("a bad vars value"));
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
        let (ip, port, cport) = parse_addr(words[1]).ok_or_else(|| bad("a bad address"))?;
        let flags: Vec<&str> = words[2].split(',').collect();
        let master = (words[3] != "-").then(|| words[3].to_string());
        let config_epoch = words[6].parse().map_err(|_| bad("a bad config epoch"))?;
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
        } else if !flags.contains(&"handshake") {
            others.push((node, slots));
        }
    }
    let Some(me) = me else {
        return Err("no node is flagged myself".into());
    };
    for (i, (node, slots)) in std::iter::once(me).chain(others).enumerate() {
        out.slots.extend(slots.into_iter().map(|s| (s, i)));
        out.nodes.push(node);
    }
    Ok(out)
}

/// `ip:port@cport` (with an optional `,hostname`).
pub fn parse_addr(a: &str) -> Option<(String, u16, u16)> {
    let a = a.split(',').next()?;
    let (host, rest) = a.rsplit_once(':')?;
    let (port, cport) = rest.split_once('@')?;
    Some((host.to_string(), port.parse().ok()?, cport.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

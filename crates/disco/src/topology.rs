//! Pipeline topologies in TOML: tiles (kind, count, core, parameters) and links
//! (from, to, depth, MTU, overload policy). The kinds and their parameters belong to
//! the application (sigverify); this module checks the structure: unique names, links
//! between declared tiles, power-of-two depths, known policies, bounded counts.
//!
//! ```toml
//! [[tile]]
//! name = "parse"
//! kind = "parse"
//! core = 0
//!
//! [[tile]]
//! name = "verify"
//! kind = "verify"
//! count = 2          # two tiles sharing the link's work
//!
//! [[link]]
//! from = "parse"
//! to = "verify"
//! depth = 1024
//! mtu = 1232
//! policy = "backpressure"
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::tile::Policy;

/// Most tiles (counting each instance of a `count`).
pub const MAX_TILES: usize = 64;

/// One `[[tile]]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TileDecl {
    /// Unique name.
    pub name: String,
    /// What it does (the application's tile kinds).
    pub kind: String,
    /// Instances sharing the work of their input links (default 1).
    #[serde(default = "one")]
    pub count: usize,
    /// Core to pin to (instances take consecutive cores, modulo the machine's).
    pub core: Option<usize>,
    /// Kind-specific settings.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
}

fn one() -> usize {
    1
}

fn depth_default() -> usize {
    1024
}

fn mtu_default() -> usize {
    1232
}

/// One `[[link]]`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LinkDecl {
    /// Producing tile.
    pub from: String,
    /// Consuming tile.
    pub to: String,
    /// Ring depth (power of two; default 1024).
    #[serde(default = "depth_default")]
    pub depth: usize,
    /// Largest payload in bytes (default 1232, a Solana packet).
    #[serde(default = "mtu_default")]
    pub mtu: usize,
    /// `backpressure` (default) or `shed`.
    #[serde(default)]
    pub policy: String,
}

impl LinkDecl {
    /// The overload policy.
    pub fn policy(&self) -> Policy {
        self.policy.parse().unwrap_or_default()
    }
}

/// A whole topology.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// The tiles.
    #[serde(default)]
    pub tile: Vec<TileDecl>,
    /// The links.
    #[serde(default)]
    pub link: Vec<LinkDecl>,
}

impl Topology {
    /// Parses and checks a topology.
    pub fn parse(text: &str) -> Result<Topology, String> {
        let t: Topology = toml::from_str(text).map_err(|e| e.message().to_string())?;
        t.check()?;
        Ok(t)
    }

    /// Checks the structure (see the module docs).
    pub fn check(&self) -> Result<(), String> {
        let mut total = 0;
        for (i, t) in self.tile.iter().enumerate() {
            if self.tile[..i].iter().any(|u| u.name == t.name) {
                return Err(format!("tile '{}' is declared twice", t.name));
            }
            if t.count == 0 {
                return Err(format!("tile '{}': count must be at least 1", t.name));
            }
            total += t.count;
        }
        if total == 0 || total > MAX_TILES {
            return Err(format!(
                "a topology has 1 to {MAX_TILES} tiles, not {total}"
            ));
        }
        for l in &self.link {
            for end in [&l.from, &l.to] {
                if !self.tile.iter().any(|t| &t.name == end) {
                    return Err(format!("link {} -> {}: no tile '{end}'", l.from, l.to));
                }
            }
            if l.from == l.to {
                return Err(format!(
                    "link {} -> {}: a tile cannot feed itself",
                    l.from, l.to
                ));
            }
            if !l.depth.is_power_of_two() || !(2..=1 << 20).contains(&l.depth) {
                return Err(format!(
                    "link {} -> {}: depth {} is not a power of two from 2 to 2^20",
                    l.from, l.to, l.depth
                ));
            }
            if l.mtu == 0 || l.mtu > 1 << 16 {
                return Err(format!(
                    "link {} -> {}: mtu must be 1 to 65536",
                    l.from, l.to
                ));
            }
            if !l.policy.is_empty() {
                l.policy
                    .parse::<Policy>()
                    .map_err(|e| format!("link {} -> {}: {e}", l.from, l.to))?;
            }
        }
        Ok(())
    }

    /// The tile named `name`.
    pub fn tile(&self, name: &str) -> Option<&TileDecl> {
        self.tile.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topology_parses_and_bad_ones_say_why() {
        let t = Topology::parse(
            "[[tile]]\nname='a'\nkind='source'\ncore=0\n[[tile]]\nname='b'\nkind='verify'\ncount=2\n\
             params={ batch = 8 }\n[[link]]\nfrom='a'\nto='b'\ndepth=256\npolicy='shed'\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.tile.len(), 2);
        assert_eq!(t.tile("b").map(|b| b.count), Some(2));
        assert_eq!(t.link[0].policy(), Policy::Shed);
        assert_eq!(t.link[0].mtu, 1232);
        for (text, says) in [
            ("[[tile]]\nname='a'\nkind='x'\n[[tile]]\nname='a'\nkind='y'\n", "twice"),
            ("[[tile]]\nname='a'\nkind='x'\n[[link]]\nfrom='a'\nto='z'\n", "no tile 'z'"),
            ("[[tile]]\nname='a'\nkind='x'\n[[tile]]\nname='b'\nkind='x'\n[[link]]\nfrom='a'\nto='b'\ndepth=100\n", "power of two"),
            ("[[tile]]\nname='a'\nkind='x'\n[[tile]]\nname='b'\nkind='x'\n[[link]]\nfrom='a'\nto='b'\npolicy='drop'\n", "backpressure or shed"),
            ("[[tile]]\nname='a'\nkind='x'\nbogus=1\n", "unknown field"),
            ("", "1 to 64 tiles"),
            ("[[tile]]\nname='a'\nkind='x'\ncount=0\n", "at least 1"),
        ] {
            let e = Topology::parse(text).err().unwrap_or_default();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}

//! The tree against std's `BTreeSet` as a model, with its shape checked after changes.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

/// Checks the tree's shape: order, sizes, equal leaf depths, node counts, capacities,
/// and that `heap` is the sum of the blocks the nodes hold.
fn check<K: Ord + Clone + fmt::Debug>(t: &OsTree<K>) {
    fn walk<K: Ord>(
        n: &Node<K>,
        root: bool,
        depth: usize,
        leaf_depth: &mut Option<usize>,
        nodes: &mut Nodes,
        heap: &mut usize,
    ) -> usize {
        assert!(n.keys.len() <= CAP, "a node over capacity");
        assert!(root || !n.keys.is_empty(), "an empty node below the root");
        assert!(n.keys.windows(2).all(|w| w[0] < w[1]), "keys out of order");
        *heap += block(std::mem::size_of::<Node<K>>())
            + block(n.keys.capacity() * std::mem::size_of::<K>())
            + block(n.kids.capacity() * std::mem::size_of::<Kid<K>>());
        if !root {
            assert_eq!(n.keys.capacity(), SLOTS);
        }
        if n.is_leaf() {
            nodes.leaves += 1;
            match leaf_depth {
                Some(d) => assert_eq!(*d, depth, "leaves at different depths"),
                None => *leaf_depth = Some(depth),
            }
            return n.keys.len();
        }
        nodes.inners += 1;
        assert_eq!(n.kids.len(), n.keys.len() + 1);
        assert_eq!(n.kids.capacity(), n.keys.capacity() + 1);
        for (j, kid) in n.kids.iter().enumerate() {
            // Keys of a child lie between the keys beside it.
            if let (Some(first), Some(last)) = (kid.node.keys.first(), kid.node.keys.last()) {
                assert!(j == 0 || n.keys[j - 1] < *first);
                assert!(j == n.keys.len() || *last < n.keys[j]);
            }
            let size = walk(&kid.node, false, depth + 1, leaf_depth, nodes, heap);
            assert_eq!(size, kid.size, "a stale size");
        }
        n.size()
    }
    let (mut depth, mut nodes, mut heap) = (None, Nodes::default(), 0);
    let len = match &t.root {
        None => 0,
        Some(r) => walk(r, true, 1, &mut depth, &mut nodes, &mut heap),
    };
    assert_eq!(len, t.len);
    assert_eq!(depth.unwrap_or(0), t.height);
    assert_eq!(nodes, t.nodes);
    assert_eq!(heap, t.heap());
    if let Some(r) = &t.root {
        assert!(!r.keys.is_empty());
    }
}

/// Compares every query with the model.
fn same(t: &OsTree<u32>, m: &BTreeSet<u32>, probes: &[u32]) {
    assert_eq!(t.len(), m.len());
    assert!(t.iter().eq(m.iter()));
    assert!(t.iter().rev().eq(m.iter().rev()));
    for &p in probes {
        let rank = m.range(..p).count();
        assert_eq!(t.partition_point(|k| *k < p), rank);
        assert_eq!(t.partition_point(|k| *k <= p), m.range(..=p).count());
        assert_eq!(t.get(rank), m.range(p..).next());
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    Remove(u32),
    Rank(u32),
    Select(usize),
    /// Indexes, and which way to read (bit i of the mask: step i from the back).
    Range(usize, usize, u64),
}

fn op(keys: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..keys).prop_map(Op::Insert),
        3 => (0..keys).prop_map(Op::Remove),
        1 => (0..keys).prop_map(Op::Rank),
        1 => (0..keys as usize + 2).prop_map(Op::Select),
        1 => (0..keys as usize + 2, 0..keys as usize + 2, any::<u64>())
            .prop_map(|(a, b, m)| Op::Range(a, b, m)),
    ]
}

fn apply(t: &mut OsTree<u32>, m: &mut BTreeSet<u32>, op: &Op) {
    match *op {
        Op::Insert(k) => assert_eq!(t.insert(k), m.insert(k)),
        Op::Remove(k) => assert_eq!(t.remove(&k), m.remove(&k)),
        Op::Rank(k) => assert_eq!(t.partition_point(|x| *x < k), m.range(..k).count()),
        Op::Select(i) => assert_eq!(t.get(i), m.iter().nth(i)),
        Op::Range(a, b, mask) => {
            let want: Vec<u32> = m
                .iter()
                .copied()
                .skip(a)
                .take(b.saturating_sub(a))
                .collect();
            let mut it = t.range(a, b);
            assert_eq!(it.len(), want.len());
            // Read from both ends at once, as the mask says.
            let (mut front, mut back) = (Vec::new(), Vec::new());
            for step in 0.. {
                let x = if mask >> (step % 64) & 1 == 1 {
                    it.next_back().map(|k| back.push(*k))
                } else {
                    it.next().map(|k| front.push(*k))
                };
                if x.is_none() {
                    break;
                }
            }
            assert_eq!(it.next(), None);
            back.reverse();
            front.extend(back);
            assert_eq!(front, want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn agrees_with_a_btreeset(ops in prop::collection::vec(op(600), 1..1500)) {
        let (mut t, mut m) = (OsTree::new(), BTreeSet::new());
        for o in &ops {
            apply(&mut t, &mut m, o);
        }
        check(&t);
        same(&t, &m, &[0, 1, 299, 300, 599, 600]);
        // Empty it and check the shape on the way down.
        let keys: Vec<u32> = m.iter().copied().collect();
        for (n, k) in keys.iter().enumerate() {
            prop_assert!(t.remove(k));
            if n % 37 == 0 {
                check(&t);
            }
        }
        check(&t);
        prop_assert_eq!(t.heap(), 0);
    }
}

/// xorshift64*: reproducible draws without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Many operations on trees several levels deep, keys drawn four ways (uniform,
/// ascending, descending, and runs in the middle), queries checked as they go.
#[test]
fn agrees_with_a_btreeset_at_depth() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for pattern in 0..4 {
        let (mut t, mut m) = (OsTree::new(), BTreeSet::new());
        let mut counter = 0u32;
        for step in 0..60_000u32 {
            let k = match pattern {
                0 => r.below(20_000) as u32,
                1 => step,
                2 => u32::MAX - step,
                _ => {
                    if step % 500 == 0 {
                        counter = r.below(1_000_000) as u32;
                    }
                    counter += 1;
                    counter
                }
            };
            let o = match r.below(10) {
                0..=5 => Op::Insert(k),
                // A key that is there, mostly (the tree picks it; the model checks).
                6 | 7 => Op::Remove(*t.get(r.below(m.len() as u64 + 1) as usize).unwrap_or(&k)),
                8 => Op::Rank(r.below(u32::MAX as u64) as u32),
                _ => {
                    let a = r.below(m.len() as u64 + 2) as usize;
                    Op::Range(a, a + r.below(70) as usize, r.next())
                }
            };
            apply(&mut t, &mut m, &o);
            if step % 5_000 == 0 {
                check(&t);
                assert_eq!(t.get(m.len() / 2), m.iter().nth(m.len() / 2));
            }
        }
        check(&t);
        assert!(t.height >= 3, "pattern {pattern}: height {}", t.height);
        same(&t, &m, &[0, 5, 19_999, 1_000_000, u32::MAX - 1]);
        // Empty it from the middle out.
        while !m.is_empty() {
            let k = *t.get(m.len() / 2).expect("non-empty");
            assert!(t.remove(&k) && m.remove(&k));
            assert!(!t.remove(&k));
            if m.len() % 3_001 == 0 {
                check(&t);
                same(&t, &m, &[k]);
            }
        }
        check(&t);
        assert_eq!((t.len(), t.heap(), t.height), (0, 0, 0));
    }
}

#[test]
fn ordered_inserts_fill_nodes() {
    for rev in [false, true] {
        let mut t = OsTree::new();
        for i in 0..100_000u32 {
            assert!(t.insert(if rev { u32::MAX - i } else { i }));
        }
        check(&t);
        // 30 of 31 keys a leaf, against half when a full node splits in the middle.
        let per_leaf = t.len() as f64 / t.nodes.leaves as f64;
        assert!(per_leaf > 29.0, "{per_leaf} keys a leaf");
    }
}

#[test]
fn a_root_grows_by_doubling() {
    let mut t = OsTree::new();
    assert_eq!(t.heap(), 0);
    let node = block(std::mem::size_of::<Node<u64>>());
    // (height, key slots of the root) as keys come in order.
    let mut seen = Vec::new();
    let mut i = 0u64;
    while t.height < 3 {
        t.insert(i);
        i += 1;
        let slots = t.root.as_ref().map_or(0, |r| r.keys.capacity());
        if seen.last() != Some(&(t.height, slots)) {
            seen.push((t.height, slots));
            check(&t);
        }
        if t.height == 1 {
            assert_eq!(t.heap(), node + block(slots * 8));
        }
    }
    let grown = [4, 8, 16, 32];
    let want: Vec<(usize, usize)> = (1..=2)
        .flat_map(|h| grown.iter().map(move |&s| (h, s)))
        .chain([(3, 4)])
        .collect();
    assert_eq!(seen, want);
    check(&t);
}

#[test]
fn clones_equal_and_keep_their_blocks() {
    let mut t = OsTree::new();
    for i in (0..5_000u32).rev().step_by(3) {
        t.insert(i);
    }
    let c = t.clone();
    check(&c);
    assert_eq!(c, t);
    assert_eq!(c.heap(), t.heap());
    let mut d = OsTree::new();
    for k in t.iter() {
        d.insert(*k);
    }
    assert_eq!(d, t, "equal keys, other shapes");
    assert!(d.remove(&4) && d.remove(&4999));
    assert!(d != t);
    assert_eq!(format!("{:?}", OsTree::<u8>::new()), "{}");
}

#[test]
fn nth_skips_by_seeking() {
    let mut t = OsTree::new();
    for i in 0..10_000u32 {
        t.insert(i);
    }
    let mut it = t.range(100, 9_000);
    assert_eq!(it.nth(1), Some(&101));
    assert_eq!(it.nth(5_000), Some(&5_102));
    assert_eq!(it.next_back(), Some(&8_999));
    assert_eq!(it.nth(10_000), None);
    assert_eq!(it.next_back(), None);
    assert_eq!(t.range(20, 10).count(), 0);
    assert_eq!(t.range(9_990, 20_000).count(), 10);
}

//! An order-statistic tree: a B-tree that counts, so a key's rank and the key at a
//! rank are found in O(log n), as Redis's skiplist with spans finds them.
//!
//! # Structure
//!
//! A B-tree of order 32: every node holds up to [`CAP`] (31) keys in order; an inner
//! node holds one more child than keys, and beside each child the number of keys in
//! that child's subtree (its *size*). All leaves are at the same depth. Keys live in
//! inner nodes too (a classic B-tree, not a B+ tree), so no key is stored twice.
//!
//! - rank (how many keys come before a probe, [`OsTree::partition_point`]): one binary
//!   search per level, plus the sizes of the children left of the path: O(log n).
//! - select (the key at index `i`, [`OsTree::get`]): one walk down, subtracting sizes:
//!   O(log n).
//! - insert / remove: one walk down and back up; a full node (a 32nd key) splits, a node
//!   left with fewer than [`MIN`] keys takes one from a sibling or merges with it; the
//!   sizes on the path are updated on the way back: O(log n), with moves of at most 32
//!   keys per level.
//! - iteration ([`OsTree::range`]): a cursor (the path from the root) placed at an
//!   index in O(log n), then O(1) amortized per step, both ways.
//!
//! A node splits in the middle, except when the new key is its first or last: then the
//! old keys stay together in one node and the new key starts the other, so keys added
//! in ascending (or descending) order fill nodes to 30 of 31 instead of half.
//!
//! # Memory
//!
//! A node is a 48-byte box (two vectors) with a key array of 32 slots (one spare, so a
//! node can hold a 32nd key for the moment before it splits); an inner node adds an
//! array of 33 children (pointer and size, 16 bytes each). With 24-byte keys (a score
//! and a boxed member) a leaf costs 48 + 768 bytes. Measured over 1,000,000 keys, inner
//! nodes included: 27.9 bytes a key added in order (31 keys a leaf), 41.5 in random
//! order (21.4 a leaf, the 69% a B-tree holds); std's `BTreeSet` takes about 55 and 44
//! (11-key leaves of 280 bytes, half full after ordered inserts). The root's arrays grow
//! 4, 8, 16, 32 slots as it fills, so a small set does not pay for a whole node.
//! [`OsTree::heap`] is the exact sum of these blocks (each rounded by [`block`]), kept
//! in O(1) from node counts.

use std::cmp::Ordering;
use std::fmt;
use std::iter::FusedIterator;

use crate::store::block;

/// Most keys a node keeps (it holds one more only for the moment before it splits).
pub const CAP: usize = 31;
/// Fewest keys a node other than the root keeps after a removal (a split may leave a
/// node with fewer: the first or last key of an ordered run; it is fixed when a removal
/// reaches it).
pub const MIN: usize = CAP / 2;
/// Key slots of a node: [`CAP`] and one for the key that makes it split.
const SLOTS: usize = CAP + 1;
/// Key slots of a root when it is made (they double up to [`SLOTS`] as it fills; every
/// other node has [`SLOTS`], as a node splits only when full).
const FIRST_SLOTS: usize = 4;

/// A node: keys in order; for an inner node, `keys.len() + 1` children.
struct Node<K> {
    keys: Vec<K>,
    /// Empty in a leaf.
    kids: Vec<Kid<K>>,
}

/// A child and the number of keys in its subtree.
struct Kid<K> {
    size: usize,
    node: Box<Node<K>>,
}

impl<K> Node<K> {
    fn leaf(slots: usize) -> Self {
        Node {
            keys: Vec::with_capacity(slots),
            kids: Vec::new(),
        }
    }

    fn is_leaf(&self) -> bool {
        self.kids.is_empty()
    }

    /// Keys in this subtree (O(node) from the children's sizes).
    fn size(&self) -> usize {
        self.keys.len() + self.kids.iter().map(|k| k.size).sum::<usize>()
    }
}

impl<K: Clone> Clone for Node<K> {
    fn clone(&self) -> Self {
        // Same capacities as the original, so the clone's blocks are the same.
        let mut keys = Vec::with_capacity(self.keys.capacity());
        keys.extend(self.keys.iter().cloned());
        let mut kids = Vec::with_capacity(self.kids.capacity());
        kids.extend(self.kids.iter().map(|k| Kid {
            size: k.size,
            node: Box::new((*k.node).clone()),
        }));
        Node { keys, kids }
    }
}

/// How many nodes of each kind a tree holds (for [`OsTree::heap`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Nodes {
    leaves: usize,
    inners: usize,
}

impl Nodes {
    fn add(&mut self, leaf: bool) {
        if leaf {
            self.leaves += 1
        } else {
            self.inners += 1
        }
    }

    fn sub(&mut self, leaf: bool) {
        if leaf {
            self.leaves -= 1
        } else {
            self.inners -= 1
        }
    }
}

/// An ordered set of keys with rank and select in O(log n) (see the module's notes).
pub struct OsTree<K> {
    root: Option<Box<Node<K>>>,
    len: usize,
    /// Levels: 0 when empty, 1 for a lone leaf.
    height: usize,
    nodes: Nodes,
}

impl<K> Default for OsTree<K> {
    fn default() -> Self {
        OsTree {
            root: None,
            len: 0,
            height: 0,
            nodes: Nodes::default(),
        }
    }
}

impl<K: Clone> Clone for OsTree<K> {
    fn clone(&self) -> Self {
        OsTree {
            root: self.root.as_ref().map(|r| Box::new((**r).clone())),
            len: self.len,
            height: self.height,
            nodes: self.nodes,
        }
    }
}

impl<K: fmt::Debug> fmt::Debug for OsTree<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Two trees are equal when they hold the same keys (their shapes may differ).
impl<K: PartialEq> PartialEq for OsTree<K> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<K: Eq> Eq for OsTree<K> {}

/// What an insert below a node hands back up.
enum Up<K> {
    /// The key was there already: nothing changed.
    Dup,
    /// Inserted; the node did not split.
    Done,
    /// Inserted; the node split: the middle key and the new right node (and its size)
    /// go into the parent beside it.
    Split(K, Box<Node<K>>, usize),
}

impl<K> OsTree<K> {
    /// An empty tree (no allocation).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no key.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes the nodes take, each block rounded by [`block`]: exact, in O(1).
    pub fn heap(&self) -> usize {
        let Some(root) = &self.root else { return 0 };
        let node = block(std::mem::size_of::<Node<K>>());
        let keys = block(SLOTS * std::mem::size_of::<K>());
        let kids = block((SLOTS + 1) * std::mem::size_of::<Kid<K>>());
        // The root's arrays may be shorter; every other node's are full size.
        let mut rest = self.nodes;
        rest.sub(root.is_leaf());
        node + block(root.keys.capacity() * std::mem::size_of::<K>())
            + block(root.kids.capacity() * std::mem::size_of::<Kid<K>>())
            + rest.leaves * (node + keys)
            + rest.inners * (node + keys + kids)
    }

    /// The number of keys for which `pred` holds, which must hold for a prefix of the
    /// order and not after (as `slice::partition_point`): the rank of the first key
    /// for which it fails. O(log n).
    pub fn partition_point(&self, mut pred: impl FnMut(&K) -> bool) -> usize {
        let mut acc = 0;
        let Some(mut node) = self.root.as_deref() else {
            return 0;
        };
        loop {
            let p = node.keys.partition_point(&mut pred);
            if node.is_leaf() {
                return acc + p;
            }
            acc += p + node.kids[..p].iter().map(|k| k.size).sum::<usize>();
            node = &node.kids[p].node;
        }
    }

    /// The key at index `i` (0 is the least), if `i < len`. O(log n).
    pub fn get(&self, mut i: usize) -> Option<&K> {
        if i >= self.len {
            return None;
        }
        let mut node = self.root.as_deref()?;
        loop {
            if node.is_leaf() {
                return node.keys.get(i);
            }
            let mut next = None;
            for (j, kid) in node.kids.iter().enumerate() {
                match i.cmp(&kid.size) {
                    Ordering::Less => {
                        next = Some(&*kid.node);
                        break;
                    }
                    Ordering::Equal => return node.keys.get(j),
                    Ordering::Greater => i -= kid.size + 1,
                }
            }
            node = next?;
        }
    }

    /// The keys at indexes `start..end` (clamped to `len`), in order; reversible.
    pub fn range(&self, start: usize, end: usize) -> Iter<'_, K> {
        let end = end.min(self.len);
        Iter {
            tree: self,
            lo: start.min(end),
            hi: end,
            front: None,
            back: None,
        }
    }

    /// All keys, in order; reversible.
    pub fn iter(&self) -> Iter<'_, K> {
        self.range(0, self.len)
    }

    /// Removes the key for which `cmp` answers `Equal` (`cmp` tells how a key compares
    /// with the one sought, and must agree with the order); returns it.
    pub fn remove_by(&mut self, mut cmp: impl FnMut(&K) -> Ordering) -> Option<K> {
        let root = self.root.as_deref_mut()?;
        let out = remove(root, &mut cmp, &mut self.nodes)?;
        self.len -= 1;
        if root.keys.is_empty() {
            if root.is_leaf() {
                self.root = None;
                self.nodes = Nodes::default();
            } else {
                // An inner root left with one child: the child is the root.
                let kid = root.kids.pop().map(|k| k.node);
                self.root = kid;
                self.nodes.inners -= 1;
            }
            self.height -= 1;
        }
        Some(out)
    }

    /// A cursor at index `i < len`.
    fn seek(&self, mut i: usize) -> Cursor<'_, K> {
        let mut path = Vec::with_capacity(self.height);
        let mut node = self.root.as_deref().expect("seek in an empty tree");
        loop {
            if node.is_leaf() {
                path.push((node, i));
                return Cursor { path };
            }
            let mut j = 0;
            loop {
                let size = node.kids[j].size;
                if i < size {
                    path.push((node, j));
                    node = &node.kids[j].node;
                    break;
                }
                if i == size {
                    path.push((node, j));
                    return Cursor { path };
                }
                i -= size + 1;
                j += 1;
            }
        }
    }
}

impl<K: Ord> OsTree<K> {
    /// Adds `k`; false (and `k` dropped) when an equal key is there.
    pub fn insert(&mut self, k: K) -> bool {
        let root = self
            .root
            .get_or_insert_with(|| Box::new(Node::leaf(FIRST_SLOTS)));
        if self.height == 0 {
            self.height = 1;
            self.nodes.leaves = 1;
        }
        match insert(root, k, &mut self.nodes) {
            Up::Dup => return false,
            Up::Done => {}
            Up::Split(mid, right, right_size) => {
                let left = self.root.take().expect("the root split");
                let left_size = self.len - right_size;
                let mut top = Node {
                    keys: Vec::with_capacity(FIRST_SLOTS),
                    kids: Vec::with_capacity(FIRST_SLOTS + 1),
                };
                top.keys.push(mid);
                top.kids.push(Kid {
                    size: left_size,
                    node: left,
                });
                top.kids.push(Kid {
                    size: right_size,
                    node: right,
                });
                self.root = Some(Box::new(top));
                self.nodes.inners += 1;
                self.height += 1;
            }
        }
        self.len += 1;
        true
    }

    /// Removes `k`; true when it was there.
    pub fn remove(&mut self, k: &K) -> bool {
        self.remove_by(|x| x.cmp(k)).is_some()
    }
}

/// Inserts `k` below `node`.
fn insert<K: Ord>(node: &mut Node<K>, k: K, nodes: &mut Nodes) -> Up<K> {
    let p = match node.keys.binary_search(&k) {
        Ok(_) => return Up::Dup,
        Err(p) => p,
    };
    if node.is_leaf() {
        grow(node);
        node.keys.insert(p, k);
    } else {
        match insert(&mut node.kids[p].node, k, nodes) {
            Up::Dup => return Up::Dup,
            Up::Done => {
                node.kids[p].size += 1;
                return Up::Done;
            }
            Up::Split(mid, right, right_size) => {
                // The child gained a key and gave `mid` and `right` away.
                node.kids[p].size -= right_size;
                grow(node);
                node.keys.insert(p, mid);
                node.kids.insert(
                    p + 1,
                    Kid {
                        size: right_size,
                        node: right,
                    },
                );
            }
        }
    }
    if node.keys.len() <= CAP {
        return Up::Done;
    }
    // Split: the middle, or keep the old keys together when the new one is an end.
    let at = match p {
        0 => 1,
        CAP => CAP - 1,
        _ => SLOTS / 2,
    };
    let leaf = node.is_leaf();
    let mut right = Node {
        keys: Vec::with_capacity(SLOTS),
        kids: Vec::new(),
    };
    right.keys.extend(node.keys.drain(at + 1..));
    if !leaf {
        right.kids = Vec::with_capacity(SLOTS + 1);
        right.kids.extend(node.kids.drain(at + 1..));
    }
    let mid = node.keys.pop().expect("a split node has keys");
    nodes.add(leaf);
    let size = right.size();
    Up::Split(mid, Box::new(right), size)
}

/// Makes room for one more key (and child) in a root whose arrays are full: doubles
/// them, up to [`SLOTS`] (other nodes always have room).
fn grow<K>(node: &mut Node<K>) {
    if node.keys.len() < node.keys.capacity() {
        return;
    }
    let slots = (2 * node.keys.len()).clamp(FIRST_SLOTS, SLOTS);
    let mut keys = Vec::with_capacity(slots);
    keys.append(&mut node.keys);
    node.keys = keys;
    if !node.is_leaf() {
        let mut kids = Vec::with_capacity(slots + 1);
        kids.append(&mut node.kids);
        node.kids = kids;
    }
}

/// Removes the key `cmp` finds below `node`; the caller fixes `node` if it is left
/// with fewer than [`MIN`] keys.
fn remove<K>(
    node: &mut Node<K>,
    cmp: &mut impl FnMut(&K) -> Ordering,
    nodes: &mut Nodes,
) -> Option<K> {
    let found = node.keys.binary_search_by(&mut *cmp);
    if node.is_leaf() {
        return found.ok().map(|i| node.keys.remove(i));
    }
    let (i, out) = match found {
        Ok(i) => {
            // Replace it with its predecessor, the last key of the left subtree.
            let pred = remove_last(&mut node.kids[i].node, nodes);
            (i, std::mem::replace(&mut node.keys[i], pred))
        }
        Err(i) => (i, remove(&mut node.kids[i].node, cmp, nodes)?),
    };
    node.kids[i].size -= 1;
    if node.kids[i].node.keys.len() < MIN {
        fix(node, i, nodes);
    }
    Some(out)
}

/// Removes the last key below `node` (which has one).
fn remove_last<K>(node: &mut Node<K>, nodes: &mut Nodes) -> K {
    if node.is_leaf() {
        return node.keys.pop().expect("a non-empty subtree");
    }
    let i = node.kids.len() - 1;
    let out = remove_last(&mut node.kids[i].node, nodes);
    node.kids[i].size -= 1;
    if node.kids[i].node.keys.len() < MIN {
        fix(node, i, nodes);
    }
    out
}

/// Child `i` of `node` has fewer than [`MIN`] keys: it takes one through `node` from a
/// sibling that has more than [`MIN`], or else merges with a sibling (which has at most
/// [`MIN`], so the two and the key between them fit in [`CAP`]).
fn fix<K>(node: &mut Node<K>, i: usize, nodes: &mut Nodes) {
    if i > 0 && node.kids[i - 1].node.keys.len() > MIN {
        let (l, r) = node.kids.split_at_mut(i);
        let (left, right) = (&mut l[i - 1], &mut r[0]);
        let k = left.node.keys.pop().expect("a sibling with keys");
        right
            .node
            .keys
            .insert(0, std::mem::replace(&mut node.keys[i - 1], k));
        let mut moved = 1;
        if let Some(kid) = left.node.kids.pop() {
            moved += kid.size;
            right.node.kids.insert(0, kid);
        }
        left.size -= moved;
        right.size += moved;
    } else if i + 1 < node.kids.len() && node.kids[i + 1].node.keys.len() > MIN {
        let (l, r) = node.kids.split_at_mut(i + 1);
        let (left, right) = (&mut l[i], &mut r[0]);
        let k = right.node.keys.remove(0);
        left.node.keys.push(std::mem::replace(&mut node.keys[i], k));
        let mut moved = 1;
        if !right.node.is_leaf() {
            let kid = right.node.kids.remove(0);
            moved += kid.size;
            left.node.kids.push(kid);
        }
        left.size += moved;
        right.size -= moved;
    } else {
        let l = if i > 0 { i - 1 } else { i };
        let key = node.keys.remove(l);
        let right = node.kids.remove(l + 1);
        let left = &mut node.kids[l];
        nodes.sub(right.node.is_leaf());
        let Node { keys, kids } = *right.node;
        left.node.keys.push(key);
        left.node.keys.extend(keys);
        left.node.kids.extend(kids);
        left.size += 1 + right.size;
    }
}

/// A position in a tree: the path from the root. In every node but the last the index
/// is the child the path goes down to; in the last it is the key the cursor is at.
struct Cursor<'a, K> {
    path: Vec<(&'a Node<K>, usize)>,
}

impl<'a, K> Cursor<'a, K> {
    fn key(&self) -> &'a K {
        let (node, i) = *self.path.last().expect("a placed cursor");
        &node.keys[i]
    }

    /// Moves to the next key (there is one).
    fn next(&mut self) {
        let last = self.path.len() - 1;
        let (node, i) = self.path[last];
        if node.is_leaf() {
            if i + 1 < node.keys.len() {
                self.path[last].1 = i + 1;
                return;
            }
            // Up to the first ancestor with a key after the child we were in.
            self.path.pop();
            while let Some(&(node, i)) = self.path.last() {
                if i < node.keys.len() {
                    return;
                }
                self.path.pop();
            }
        } else {
            // Down the child after the key, to its first key.
            self.path[last].1 = i + 1;
            let mut n: &'a Node<K> = &node.kids[i + 1].node;
            while !n.is_leaf() {
                self.path.push((n, 0));
                n = &n.kids[0].node;
            }
            self.path.push((n, 0));
        }
    }

    /// Moves to the previous key (there is one).
    fn prev(&mut self) {
        let last = self.path.len() - 1;
        let (node, i) = self.path[last];
        if node.is_leaf() {
            if i > 0 {
                self.path[last].1 = i - 1;
                return;
            }
            // Up to the first ancestor with a key before the child we were in.
            self.path.pop();
            while let Some((_, i)) = self.path.last_mut() {
                if *i > 0 {
                    *i -= 1;
                    return;
                }
                self.path.pop();
            }
        } else {
            // Down the child before the key, to its last key.
            let mut n: &'a Node<K> = &node.kids[i].node;
            while !n.is_leaf() {
                let j = n.kids.len() - 1;
                self.path.push((n, j));
                n = &n.kids[j].node;
            }
            self.path.push((n, n.keys.len() - 1));
        }
    }
}

/// Keys of an index range of an [`OsTree`], in order either way
/// ([`OsTree::range`]). Each end is placed on its first use (O(log n)); each step
/// after is O(1) amortized.
pub struct Iter<'a, K> {
    tree: &'a OsTree<K>,
    /// The indexes not yet yielded: `lo..hi`.
    lo: usize,
    hi: usize,
    /// At `lo` once placed.
    front: Option<Cursor<'a, K>>,
    /// At `hi - 1` once placed.
    back: Option<Cursor<'a, K>>,
}

impl<K> fmt::Debug for Iter<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("lo", &self.lo)
            .field("hi", &self.hi)
            .finish()
    }
}

impl<'a, K> Iterator for Iter<'a, K> {
    type Item = &'a K;

    fn next(&mut self) -> Option<&'a K> {
        if self.lo >= self.hi {
            return None;
        }
        let (tree, lo) = (self.tree, self.lo);
        let c = self.front.get_or_insert_with(|| tree.seek(lo));
        let k = c.key();
        self.lo += 1;
        if self.lo < self.hi {
            c.next();
        }
        Some(k)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.hi - self.lo;
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<&'a K> {
        // Skipping far is a new seek, not n steps.
        if n > 0 {
            self.lo = self.lo.saturating_add(n).min(self.hi);
            self.front = None;
        }
        self.next()
    }
}

impl<'a, K> DoubleEndedIterator for Iter<'a, K> {
    fn next_back(&mut self) -> Option<&'a K> {
        if self.lo >= self.hi {
            return None;
        }
        let (tree, last) = (self.tree, self.hi - 1);
        let c = self.back.get_or_insert_with(|| tree.seek(last));
        let k = c.key();
        self.hi -= 1;
        if self.lo < self.hi {
            c.prev();
        }
        Some(k)
    }
}

impl<K> ExactSizeIterator for Iter<'_, K> {}

impl<K> FusedIterator for Iter<'_, K> {}

#[cfg(test)]
mod tests;

//! Recently seen transactions: a bounded set of the last `horizon` transaction ids.
//!
//! Each id (a transaction's first signature) is reduced to a 64-bit tag with SipHash
//! under a per-process random key, so senders cannot aim two different ids at one tag
//! (with plain signature bytes, a signer could grind its nonce to make a victim's
//! transaction look like a duplicate). Two different ids share a tag with probability
//! 2^-64 per pair: over a horizon of 2^20 ids, about 2^-44 per lookup.
//!
//! Tags live in an open-addressing table (linear probing, twice the horizon, so probes
//! stay short) and in a ring in arrival order; inserting the (horizon+1)-th id evicts the
//! oldest one from the table (backward-shift deletion, no tombstones). Constant time per
//! id, no allocation after construction.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

/// Largest horizon.
pub const MAX_HORIZON: usize = 1 << 24;

/// The set.
#[derive(Debug)]
pub struct Dedup {
    table: Box<[u64]>,
    mask: usize,
    ring: Box<[u64]>,
    next: usize,
    len: usize,
    hasher: RandomState,
}

impl Dedup {
    /// Remembers the last `horizon` ids (1 to 2^24).
    pub fn new(horizon: usize) -> Dedup {
        let horizon = horizon.clamp(1, MAX_HORIZON);
        let size = (horizon * 2).next_power_of_two();
        let mut table = vec![0; size].into_boxed_slice();
        let mut ring = vec![0; horizon].into_boxed_slice();
        // Zeroed allocations are mapped lazily: touch every page now, at construction,
        // rather than fault them in one by one on the first inserts at full rate.
        for words in [&mut table, &mut ring] {
            for w in words.iter_mut().step_by(512) {
                *w = std::hint::black_box(0);
            }
        }
        Dedup {
            table,
            mask: size - 1,
            ring,
            next: 0,
            len: 0,
            hasher: RandomState::new(),
        }
    }

    fn tag(&self, id: &[u8]) -> u64 {
        // 0 marks an empty slot.
        self.hasher.hash_one(id).max(1)
    }

    fn find(&self, tag: u64) -> Result<usize, usize> {
        let mut i = tag as usize & self.mask;
        loop {
            match self.table[i] {
                0 => return Err(i),
                t if t == tag => return Ok(i),
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    fn remove(&mut self, tag: u64) {
        let Ok(mut hole) = self.find(tag) else {
            return;
        };
        // Backward shift: move later entries of the cluster into the hole when their
        // home slot is not between the hole and them.
        let mut i = (hole + 1) & self.mask;
        while self.table[i] != 0 {
            let home = self.table[i] as usize & self.mask;
            let dist_i = i.wrapping_sub(home) & self.mask;
            let dist_hole = hole.wrapping_sub(home) & self.mask;
            if dist_hole <= dist_i {
                self.table[hole] = self.table[i];
                hole = i;
            }
            i = (i + 1) & self.mask;
        }
        self.table[hole] = 0;
    }

    /// Records `id`; true when it was not among the last `horizon` ids (a new
    /// transaction), false for a duplicate (which does not count as a new arrival).
    pub fn insert(&mut self, id: &[u8]) -> bool {
        let tag = self.tag(id);
        let slot = match self.find(tag) {
            Ok(_) => return false,
            Err(slot) => slot,
        };
        if self.len == self.ring.len() {
            let old = self.ring[self.next];
            self.remove(old);
            self.len -= 1;
            // The slot found above may have moved: look again.
            let slot = self.find(tag).err().unwrap_or(slot);
            self.table[slot] = tag;
        } else {
            self.table[slot] = tag;
        }
        self.ring[self.next] = tag;
        self.next = (self.next + 1) % self.ring.len();
        self.len += 1;
        true
    }

    /// Ids remembered now.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashSet, VecDeque};

    #[test]
    fn agrees_with_a_window_of_the_last_ids() {
        for horizon in [1usize, 2, 7, 64, 1000] {
            let mut d = Dedup::new(horizon);
            let mut window: VecDeque<u64> = VecDeque::new();
            let mut set: HashSet<u64> = HashSet::new();
            let mut r = 0x2545_f491_4f6c_dd1du64;
            for _ in 0..50_000 {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                // Ids from a space about twice the horizon: many repeats inside and
                // outside the window.
                let id = r % (2 * horizon as u64 + 3);
                let fresh = !set.contains(&id);
                assert_eq!(d.insert(&id.to_le_bytes()), fresh, "horizon {horizon}");
                if fresh {
                    if window.len() == horizon {
                        if let Some(old) = window.pop_front() {
                            set.remove(&old);
                        }
                    }
                    window.push_back(id);
                    set.insert(id);
                }
                assert_eq!(d.len(), window.len());
            }
        }
    }
}

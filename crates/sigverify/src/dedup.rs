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
//!
//! The table (16 MiB at the default horizon of 2^20) is probed at random, one cache
//! line and, on 4 KiB pages, one TLB miss per id; on Linux it sits in a window aligned
//! to 2 MiB that the kernel is asked to back with huge pages (`MADV_HUGEPAGE`: 8
//! translations for the whole table instead of 4,096). Where the kernel declines, the
//! table works the same on small pages.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

/// Largest horizon.
pub const MAX_HORIZON: usize = 1 << 24;

/// The set.
#[derive(Debug)]
pub struct Dedup {
    /// The table is `table[base..base + mask + 1]` (the rest aligns it).
    table: Box<[u64]>,
    base: usize,
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
        let (mut table, base) = huge_page_table(size);
        let mut ring = vec![0; horizon].into_boxed_slice();
        // Zeroed allocations are mapped lazily: touch every page now, at construction,
        // rather than fault them in one by one on the first inserts at full rate.
        for words in [&mut table[base..base + size], &mut ring] {
            for w in words.iter_mut().step_by(512) {
                *w = std::hint::black_box(0);
            }
        }
        Dedup {
            table,
            base,
            mask: size - 1,
            ring,
            next: 0,
            len: 0,
            hasher: RandomState::new(),
        }
    }

    /// Whether the table lies in a 2 MiB-aligned window (for the huge pages).
    pub fn table_is_aligned(&self) -> bool {
        (self.table[self.base..].as_ptr() as usize).is_multiple_of(HUGE_PAGE)
            || self.mask + 1 < HUGE_PAGE / 8
    }

    fn tag(&self, id: &[u8]) -> u64 {
        // 0 marks an empty slot.
        self.hasher.hash_one(id).max(1)
    }

    fn find(&self, tag: u64) -> Result<usize, usize> {
        let mut i = tag as usize & self.mask;
        loop {
            match self.table[self.base + i] {
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
        while self.table[self.base + i] != 0 {
            let home = self.table[self.base + i] as usize & self.mask;
            let dist_i = i.wrapping_sub(home) & self.mask;
            let dist_hole = hole.wrapping_sub(home) & self.mask;
            if dist_hole <= dist_i {
                self.table[self.base + hole] = self.table[self.base + i];
                hole = i;
            }
            i = (i + 1) & self.mask;
        }
        self.table[self.base + hole] = 0;
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
            self.table[self.base + slot] = tag;
        } else {
            self.table[self.base + slot] = tag;
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

/// The huge-page size of x86-64 and (4 KiB granule) aarch64.
const HUGE_PAGE: usize = 2 << 20;

/// Zeroed storage for a table of `size` words, and where the table starts in it: at a
/// 2 MiB boundary, advised for huge pages, when the table is at least one huge page.
fn huge_page_table(size: usize) -> (Box<[u64]>, usize) {
    if size < HUGE_PAGE / 8 {
        return (vec![0; size].into_boxed_slice(), 0);
    }
    let storage = vec![0u64; size + HUGE_PAGE / 8].into_boxed_slice();
    let addr = storage.as_ptr() as usize;
    let base = (addr.next_multiple_of(HUGE_PAGE) - addr) / 8;
    advise_huge_pages(&storage[base..base + size]);
    (storage, base)
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(words: &[u64]) {
    // SAFETY: madvise only advises the kernel about pages of `words`, a live allocation
    // this thread owns; MADV_HUGEPAGE changes no contents and no mapping rights. A
    // refusal (no transparent huge pages) leaves small pages, which work the same.
    unsafe {
        libc::madvise(
            words.as_ptr() as *mut libc::c_void,
            std::mem::size_of_val(words),
            libc::MADV_HUGEPAGE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: &[u64]) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashSet, VecDeque};

    #[test]
    fn a_large_table_sits_on_a_huge_page_boundary() {
        for horizon in [1usize, 1000, 1 << 17, 1 << 20] {
            let mut d = Dedup::new(horizon);
            assert!(d.table_is_aligned(), "horizon {horizon}");
            assert!(d.insert(b"a") && !d.insert(b"a"));
        }
    }

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

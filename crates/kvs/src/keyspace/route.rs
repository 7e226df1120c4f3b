//! Which shard a key lives in, and a SCAN cursor over the shards.

/// The shard of `key` among `shards` (a power of two).
#[inline]
pub fn shard_index(key: &[u8], shards: usize) -> usize {
    if shards <= 1 {
        return 0;
    }
    (route_hash(key) >> 32) as usize & (shards - 1)
}

/// The shard of `key` among `shards` (a power of two) by its cluster hash slot (cluster
/// mode: a slot's keys are then all in one shard, so GETKEYSINSLOT scans that one).
#[inline]
pub fn slot_shard(key: &[u8], shards: usize) -> usize {
    wirespeed_util::keyslot::key_slot(key) as usize & (shards.max(1) - 1)
}

/// [`slot_shard`] when `by_slot`, else [`shard_index`].
#[inline]
pub fn shard_for(key: &[u8], shards: usize, by_slot: bool) -> usize {
    if by_slot {
        slot_shard(key, shards)
    } else {
        shard_index(key, shards)
    }
}

/// A SCAN step over `shards` shards: the cursor holds the shard in its low bits and
/// that shard's table cursor above them. `step(shard, table cursor, budget)` scans
/// about `budget` keys of one shard and returns its next table cursor (0: that shard
/// is done) and the keys it saw; the scan goes on to the next shards, in ascending
/// order, while fewer than `count` keys were seen. Returns the next cursor (0: the scan
/// is complete). Every key present in a shard for the whole scan is returned at least
/// once, as each shard's table cursor guarantees for its keys.
pub fn scan_shards(
    shards: usize,
    cursor: u64,
    count: usize,
    mut step: impl FnMut(usize, u64, usize) -> (u64, usize),
) -> u64 {
    let bits = shards.trailing_zeros();
    let mut shard = (cursor & (shards as u64 - 1)) as usize;
    let mut table = cursor >> bits;
    let mut budget = count.max(1);
    loop {
        let (next, seen) = step(shard, table, budget);
        if next != 0 {
            return (next << bits) | shard as u64;
        }
        shard += 1;
        if shard == shards {
            return 0;
        }
        table = 0;
        budget = budget.saturating_sub(seen);
        if budget == 0 {
            return shard as u64;
        }
    }
}

/// A fast hash for routing keys to shards (not the tables' keyed hash: a client that
/// aims keys at one shard only makes that shard busier, and the table inside it hashes
/// with its own random key).
#[inline]
fn route_hash(key: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (key.len() as u64).wrapping_mul(K);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    h ^= h >> 31;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 29)
}

#[cfg(test)]
mod slot_tests {
    use super::*;

    #[test]
    fn a_slots_keys_share_one_shard_and_slots_spread_over_all() {
        for shards in [1usize, 2, 16, 64] {
            for k in ["foo", "{user1}.a", "{user1}.b", "k42", ""] {
                let slot = wirespeed_util::keyslot::key_slot(k.as_bytes()) as usize;
                assert_eq!(slot_shard(k.as_bytes(), shards), slot % shards);
                assert_eq!(shard_for(k.as_bytes(), shards, true), slot % shards);
                assert_eq!(
                    shard_for(k.as_bytes(), shards, false),
                    shard_index(k.as_bytes(), shards)
                );
            }
        }
        let mut seen = [false; 16];
        for i in 0..1000 {
            seen[slot_shard(format!("key:{i}").as_bytes(), 16)] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}

//! The payload buffer beside an mcache: 64-byte chunks written in order by the producer,
//! wrapped compactly (a payload never straddles the end).
//!
//! Size: `(depth + 2) * ceil(mtu / 64)` chunks for a ring of `depth` slots. Every
//! payload takes at most `m = ceil(mtu / 64)` chunks and a wrap wastes fewer than `m`,
//! so between writing fragment `s` and overwriting any of its chunks the producer
//! publishes at least `depth + 1` other fragments; publishing `s + depth` already
//! reclaimed `s`'s slot. Hence a consumer that copies `s`'s payload and then finds
//! `s` still in its mcache slot ([`crate::mcache::Mcache::still_holds`]) has an intact
//! copy. Words are atomics (relaxed): a copy racing with the producer is detected by
//! that check, never undefined behaviour.

use crate::sync::{AtomicU64, Ordering};
use crate::{check_depth, TangoError};

/// Chunk size in bytes.
pub const CHUNK: usize = 64;
const WORDS: usize = CHUNK / 8;

/// Largest dcache, bytes.
pub const MAX_BYTES: usize = 1 << 30;

/// The payload buffer.
#[derive(Debug)]
pub struct Dcache {
    words: Box<[AtomicU64]>,
    chunks: u32,
    mtu: usize,
    mtu_chunks: u32,
}

impl Dcache {
    /// A buffer for payloads of up to `mtu` bytes beside a ring of `depth` slots.
    pub fn new(mtu: usize, depth: usize) -> Result<Dcache, TangoError> {
        check_depth(depth)?;
        if mtu == 0 || mtu > 1 << 16 {
            return Err(TangoError::Mtu(mtu));
        }
        let mtu_chunks = mtu.div_ceil(CHUNK);
        let chunks = (depth + 2) * mtu_chunks;
        if chunks * CHUNK > MAX_BYTES {
            return Err(TangoError::Mtu(mtu));
        }
        let words = (0..chunks * WORDS).map(|_| AtomicU64::new(0)).collect();
        Ok(Dcache {
            words,
            chunks: chunks as u32,
            mtu,
            mtu_chunks: mtu_chunks as u32,
        })
    }

    /// Largest payload.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Writes `data` (at most `mtu` bytes) from `chunk` on. Producer only.
    pub(crate) fn write(&self, chunk: u32, data: &[u8]) {
        let base = chunk as usize * WORDS;
        let mut words = data.chunks_exact(8);
        let mut i = base;
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.words[i].store(u64::from_le_bytes(b), Ordering::Relaxed);
            i += 1;
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            let mut b = [0u8; 8];
            b[..tail.len()].copy_from_slice(tail);
            self.words[i].store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
    }

    /// Copies `sz` bytes from `chunk` on into `out` (replacing its contents). The copy is
    /// valid only if the fragment's slot still holds it afterwards. A location outside
    /// the buffer (a corrupt descriptor) gives an empty copy.
    pub fn read(&self, chunk: u32, sz: usize, out: &mut Vec<u8>) {
        out.clear();
        let base = chunk as usize * WORDS;
        let n = sz.div_ceil(8);
        if sz > self.mtu || base + n > self.words.len() {
            return;
        }
        for w in &self.words[base..base + n] {
            out.extend_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        out.truncate(sz);
    }

    /// Where the payload after one of `sz` bytes at `chunk` goes.
    pub(crate) fn next(&self, chunk: u32, sz: usize) -> u32 {
        let next = chunk + sz.div_ceil(CHUNK) as u32;
        if next + self.mtu_chunks > self.chunks {
            0
        } else {
            next
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_wrap_compactly() {
        let d = Dcache::new(100, 4).unwrap_or_else(|e| panic!("{e}"));
        // 2 chunks per mtu, (4 + 2) * 2 = 12 chunks.
        let mut at = 0;
        let mut seen = Vec::new();
        for i in 0..20u8 {
            let data: Vec<u8> = (0..=i * 5).map(|k| k ^ i).collect();
            let data = &data[..data.len().min(100)];
            d.write(at, data);
            let mut out = Vec::new();
            d.read(at, data.len(), &mut out);
            assert_eq!(out, data);
            seen.push(at);
            at = d.next(at, data.len());
            assert!(at + 2 <= 12, "a payload never straddles the end");
        }
        assert!(seen.contains(&0) && seen.iter().filter(|&&c| c == 0).count() > 1);
        let mut out = vec![1];
        d.read(11, 100, &mut out);
        assert!(out.is_empty(), "out of bounds: empty");
        assert_eq!(Dcache::new(0, 4).err(), Some(TangoError::Mtu(0)));
        assert_eq!(Dcache::new(70_000, 4).err(), Some(TangoError::Mtu(70_000)));
    }
}

//! LZF, for the compressed strings of RDB payloads.
//!
//! The stream is a run of items, each opened by a control byte `c`: below 32, a
//! literal of `c + 1` bytes follows; otherwise a back reference of `(c >> 5) + 2`
//! bytes (when `c >> 5` is 7, a next byte adds to the length) copied from
//! `((c & 31) << 8 | next byte) + 1` bytes back in the output, overlapping allowed.
//!
//! The largest item output per input byte is a long back reference: 3 bytes making
//! 264, so a claimed size above 88 times the input cannot be honest and is refused
//! before anything is allocated.
//!
//! The compressor finds earlier occurrences of each 3-byte sequence through a table
//! of the last position seen per hash (no chains), within the 8 KiB a back reference
//! reaches; it is what DUMP uses for strings longer than 20 bytes, as Redis does.

use super::decode::{Malformed, Res};

/// Most output bytes per input byte.
const MAX_RATIO: u64 = 88;

/// The `out_len` bytes that `input` expands to; refused unless it makes exactly that.
pub(super) fn decompress(input: &[u8], out_len: u64) -> Res<Vec<u8>> {
    if out_len == 0 || out_len > input.len() as u64 * MAX_RATIO {
        return Err(Malformed);
    }
    let out_len = out_len as usize;
    let mut out = Vec::with_capacity(out_len);
    let mut i = 0;
    let next = |i: &mut usize| -> Res<usize> {
        let b = *input.get(*i).ok_or(Malformed)?;
        *i += 1;
        Ok(usize::from(b))
    };
    while i < input.len() {
        let c = next(&mut i)?;
        if c < 32 {
            let lit = input.get(i..i + c + 1).ok_or(Malformed)?;
            if out.len() + lit.len() > out_len {
                return Err(Malformed);
            }
            out.extend_from_slice(lit);
            i += c + 1;
            continue;
        }
        let mut len = c >> 5;
        if len == 7 {
            len += next(&mut i)?;
        }
        let back = ((c & 31) << 8 | next(&mut i)?) + 1;
        len += 2;
        if back > out.len() || out.len() + len > out_len {
            return Err(Malformed);
        }
        let from = out.len() - back;
        if back >= len {
            out.extend_from_within(from..from + len);
        } else {
            // Overlapping: each byte copied may be one this reference wrote.
            for k in 0..len {
                out.push(out[from + k]);
            }
        }
    }
    if out.len() != out_len {
        return Err(Malformed);
    }
    Ok(out)
}

/// Bytes a back reference can reach, and the longest match it can copy.
const WINDOW: usize = 1 << 13;
const MAX_MATCH: usize = 7 + 255 + 2;
/// Bits of the hash table at most (16,384 entries); a short input gets one about its
/// own size, so compressing many small strings (an RDB file of them) does not clear
/// a large table for each.
const HASH_BITS: u32 = 14;

fn hash(b: &[u8], bits: u32) -> usize {
    let v = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
    (v.wrapping_mul(0x9e37_79b1) >> (32 - bits)) as usize
}

/// Literal items for `lit`, 32 bytes at most each.
fn literals(out: &mut Vec<u8>, lit: &[u8]) {
    for chunk in lit.chunks(32) {
        out.push((chunk.len() - 1) as u8);
        out.extend_from_slice(chunk);
    }
}

/// `input` compressed, when that makes it at least `saving` bytes shorter.
pub(super) fn compress(input: &[u8], saving: usize) -> Option<Vec<u8>> {
    let limit = input.len().checked_sub(saving)?;
    let mut out = Vec::with_capacity(limit + 64);
    // Last position + 1 of each hashed 3-byte sequence (0: none).
    let bits = input
        .len()
        .next_power_of_two()
        .trailing_zeros()
        .clamp(6, HASH_BITS);
    let mut table = vec![0u32; 1 << bits];
    let (mut i, mut lit) = (0, 0);
    while i + 3 <= input.len() && out.len() <= limit {
        let h = hash(&input[i..], bits);
        // Positions past 4 GiB wrap: a stale entry fails the byte check below.
        let seen = std::mem::replace(&mut table[h], (i + 1) as u32) as usize;
        let from = seen.wrapping_sub(1);
        if seen == 0 || from >= i || i - from > WINDOW || input[from..from + 3] != input[i..i + 3] {
            i += 1;
            continue;
        }
        let most = (input.len() - i).min(MAX_MATCH);
        let mut len = 3;
        while len < most && input[from + len] == input[i + len] {
            len += 1;
        }
        literals(&mut out, &input[lit..i]);
        let (back, l) = (i - from - 1, len - 2);
        if l < 7 {
            out.push((l << 5 | back >> 8) as u8);
        } else {
            out.extend_from_slice(&[(7 << 5 | back >> 8) as u8, (l - 7) as u8]);
        }
        out.push(back as u8);
        i += len;
        lit = i;
    }
    literals(&mut out, &input[lit..]);
    (out.len() <= limit).then_some(out)
}

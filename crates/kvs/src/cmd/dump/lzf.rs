//! LZF decompression, for the compressed strings of RDB payloads.
//!
//! The stream is a run of items, each opened by a control byte `c`: below 32, a
//! literal of `c + 1` bytes follows; otherwise a back reference of `(c >> 5) + 2`
//! bytes (when `c >> 5` is 7, a next byte adds to the length) copied from
//! `((c & 31) << 8 | next byte) + 1` bytes back in the output, overlapping allowed.
//!
//! The largest item output per input byte is a long back reference: 3 bytes making
//! 264, so a claimed size above 88 times the input cannot be honest and is refused
//! before anything is allocated.

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
        for k in 0..len {
            out.push(out[from + k]);
        }
    }
    if out.len() != out_len {
        return Err(Malformed);
    }
    Ok(out)
}

//! Rings between pipeline tiles, after Firedancer's tango layer.
//!
//! - [`mcache`]: the metadata ring. One producer publishes fragment descriptors
//!   (sequence number, signature, payload chunk and size, control bits, timestamps) into
//!   a power-of-two array of slots; any number of consumers read them. Each slot carries
//!   the sequence number of what it holds, so a consumer that falls a whole ring behind
//!   learns it was *overrun* (and by how much) instead of reading stale or torn data.
//!   A slot is written and read like a seqlock (Boehm's fence pattern), with atomics only.
//! - [`dcache`]: the payload buffer beside it, in 64-byte chunks, filled by the producer
//!   in order and wrapped compactly. It is sized so that a chunk is rewritten only after
//!   its metadata slot has been reclaimed, so a consumer that copies a payload and then
//!   finds its slot unchanged has a consistent copy.
//! - [`link`]: a producer and its consumers over an mcache and a dcache, with flow
//!   control by *credits*: each reliable consumer publishes how far it has read (its
//!   `fseq`), and the producer publishes only while it is less than a ring ahead of the
//!   slowest one, so reliable consumers are never overrun and nothing is queued without
//!   bound. Unreliable consumers (monitors) are not waited for and may be overrun.
//! - [`spsc`]: a plain bounded single-producer single-consumer queue of values, for
//!   links that need nothing more.
//!
//! Everything is lock-free and allocation-free after construction. The ordering rules
//! are model-checked with loom (`RUSTFLAGS="--cfg loom" cargo test -p wirespeed-tango
//! --test loom --release`) and stress-tested with threads on different cores.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod dcache;
pub mod link;
pub mod mcache;
pub mod spsc;
mod sync;

pub use sync::spin;

pub use link::{link, Consumer, Producer, Recv};
pub use mcache::Meta;

/// A ring that cannot be built as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TangoError {
    /// Depth is not a power of two between 2 and 2^24.
    Depth(usize),
    /// Largest payload is zero or above 64 KiB.
    Mtu(usize),
    /// A payload larger than the link's MTU.
    TooBig {
        /// Bytes offered.
        size: usize,
        /// The link's largest payload.
        mtu: usize,
    },
}

impl std::fmt::Display for TangoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TangoError::Depth(d) => {
                write!(f, "ring depth {d} is not a power of two from 2 to 2^24")
            }
            TangoError::Mtu(m) => write!(f, "largest payload {m} is not 1 to 65,536 bytes"),
            TangoError::TooBig { size, mtu } => {
                write!(f, "payload of {size} bytes over the link's {mtu}")
            }
        }
    }
}

impl std::error::Error for TangoError {}

/// Largest ring depth.
pub const MAX_DEPTH: usize = 1 << 24;

/// Checks a ring depth.
pub(crate) fn check_depth(depth: usize) -> Result<(), TangoError> {
    if depth.is_power_of_two() && (2..=MAX_DEPTH).contains(&depth) {
        Ok(())
    } else {
        Err(TangoError::Depth(depth))
    }
}

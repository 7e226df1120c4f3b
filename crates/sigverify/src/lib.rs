//! The front end of signature verification: turning bytes from a file or a capture into
//! (message, signature, key) triples for the verifier.
//!
//! - [`solana`]: a zero-copy parser for Solana wire-format transactions (legacy and v0),
//!   with one typed error per reason a transaction is malformed.
//! - [`pcap`]: UDP payloads from pcap and pcapng captures (Ethernet, 802.1Q, Linux
//!   cooked v1/v2, raw IP, BSD loopback), and a writer that wraps payloads in
//!   Ethernet/IPv4/UDP.
//! - [`counters`]: each tile's own counters, an enum per tile, named once.
//! - [`deal`]: how the parse tile deals packets to the verify tiles (to the smallest
//!   backlog) when it shares a thread with one of them.
//! - [`dedup`]: a bounded set of recently seen transaction ids (keyed 64-bit tags).
//! - [`desc`]: the descriptor the parse tile sends with each packet (offsets of its
//!   signatures, keys and message), so the verify tiles do not parse it again.
//! - [`gen`]: deterministic Solana-format test traffic with known valid, corrupted and
//!   duplicate transactions.
//! - [`tiles`]: the pipeline's tiles (source, parse, verify, dedup, reorder, sink); the
//!   verify tile verifies its micro-batches through the engine
//!   (`wirespeed_engine::ed25519::verify_many_here`: the CPU lanes on the tile's own
//!   thread, or the GPU with every failed batch answered on the CPU and counted as
//!   `gpu_fallbacks`).
//! - [`udp`]: the kernel's count of datagrams it dropped for the UDP source's socket
//!   (its receive buffer was full), read from /proc and shown as the source's
//!   `udp_kernel_drops`.
//! - [`pipeline`]: the topology (links, tile counts, cores, the verify tiles' backend)
//!   and the run that wires the tiles together.
//!
//! Hardware is chosen only through `wirespeed-engine` (`--backend`/topology
//! `backend = "cpu" | "gpu" | "auto"`); this crate does not depend on the GPU crate.
//!
//! Nothing here panics on input: every length read from the input is checked against
//! what is left before it is used, and no allocation is sized by an untrusted length.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod counters;
pub mod deal;
pub mod dedup;
pub mod desc;
pub mod gen;
pub mod pcap;
pub mod pipeline;
pub mod solana;
pub mod tiles;
pub mod udp;

pub use solana::{parse, txn_id, ParseError, Transaction};

//! The front end of signature verification: turning bytes from a file or a capture into
//! (message, signature, key) triples for the verifier.
//!
//! - [`solana`]: a zero-copy parser for Solana wire-format transactions (legacy and v0),
//!   with one typed error per reason a transaction is malformed.
//! - [`pcap`]: UDP payloads from pcap and pcapng captures (Ethernet, 802.1Q, Linux
//!   cooked v1/v2, raw IP, BSD loopback), and a writer that wraps payloads in
//!   Ethernet/IPv4/UDP.
//! - [`dedup`]: a bounded set of recently seen transaction ids (keyed 64-bit tags).
//! - [`gen`]: deterministic Solana-format test traffic with known valid, corrupted and
//!   duplicate transactions.
//!
//! Nothing here panics on input: every length read from the input is checked against
//! what is left before it is used, and no allocation is sized by an untrusted length.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod dedup;
pub mod gen;
pub mod pcap;
pub mod pipeline;
pub mod solana;
pub mod tiles;

pub use solana::{parse, txn_id, ParseError, Transaction};

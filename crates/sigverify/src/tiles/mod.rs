//! The stages of the verification pipeline, as [`wirespeed_disco::Tile`]s.
//!
//! Fragments between tiles: the payload is the packet (a Solana transaction, or a raw
//! record `pk(32) || sig(64) || msg`); `meta.sig` carries the packet's *ticket* (its
//! rank among well-formed packets, from 1, assigned by the parse tile) and `meta.tsorig`
//! its ingest time; `meta.ctl` carries the kind, the verdict and the destination (and,
//! from the parse tile to the verify tiles, the verify tile that takes it:
//! [`crate::deal`]). The packet is parsed once: on the parse -> verify link it is followed by a
//! [`TxnDesc`](crate::desc::TxnDesc) (where its signatures, keys and message lie), which
//! the verify tiles read instead of parsing again and do not pass on.
//!
//! ```text
//! source -> parse -> verify x N -> reorder -> dedup -> sink x D
//! ```
//!
//! Every ticket yields exactly one verdict at the reorder tile (valid or bad signature),
//! so it can put them back in arrival order without waiting for tickets that will never
//! come; malformed packets never get a ticket (the parse tile counts them by reason).
//! Dedup comes after reordering so that the first copy to *arrive* is the one kept (the
//! verifiers finish out of order; deduplicating before reordering would keep whichever
//! copy a verifier finished first, and deliver it at the later copy's place).

mod dedup;
mod parse;
mod reorder;
mod sink;
mod source;
mod verify;

pub use dedup::DedupTile;
pub use parse::Parse;
pub use reorder::{Reorder, REORDER_BURST};
pub use sink::{Sink, SinkReport};
pub use source::{Input, Source, KERNEL_DROPS_EVERY, SOURCE_BURST};
pub use verify::Verify;

use std::io::BufRead;
use std::net::UdpSocket;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use wirespeed_disco::{Counter, Ctx, Tile};
use wirespeed_ed25519::{Item, KeyCache, Mode, VerifyError};
use wirespeed_engine::ed25519::verify_many_here_cached;
use wirespeed_tango::link::now_ns32;
use wirespeed_tango::Meta;

use crate::counters::declared;
pub use crate::counters::{
    DedupCounter, ParseCounter, ReorderCounter, SourceCounter, VerifyCounter,
};
use crate::deal::{Deal, Dealer};
use crate::dedup::Dedup;
use crate::desc::TxnDesc;
use crate::pcap::UdpReader;
use crate::solana::{self, ParseError};
use crate::udp::KernelDrops;

/// Kind bit: a raw record (else a Solana transaction).
pub const KIND_RAW: u16 = 1;
/// Verdict bits (2 bits at 1..3).
pub const VERDICT_MASK: u16 = 0b110;
/// Every signature verified.
pub const VALID: u16 = 1 << 1;
/// A signature failed (or a key or signature was malformed).
pub const BAD_SIG: u16 = 2 << 1;
/// Seen within the dedup horizon.
pub const DUPLICATE: u16 = 3 << 1;
/// The verify tile a packet is dealt to, on the parse -> verify link: 5 bits at 3..8
/// ([`crate::deal::LANE_MASK`]; cleared by the verify tile).
pub use crate::deal::LANE_MASK;
/// Destination: 4 bits at 8..12.
pub const DEST_SHIFT: u16 = 8;
/// Most destinations.
pub const MAX_DEST: usize = 16;

/// Largest packet carried (a Solana packet is at most 1232 bytes; a raw record may
/// carry a message of up to 1952 bytes). Longer packets are counted (`oversize`) and
/// dropped by the source.
pub const MAX_PACKET: usize = 2048;

/// Smallest raw record: key and signature, empty message.
const RAW_HEADER: usize = 96;

/// A raw record packet.
pub fn raw_packet(pk: &[u8], sig: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(RAW_HEADER + msg.len());
    p.extend_from_slice(pk);
    p.extend_from_slice(sig);
    p.extend_from_slice(msg);
    p
}

/// The transaction id of a packet: its first signature. Read straight from the bytes
/// (no parse): stages after the parse tile see well-formed packets only.
pub fn packet_id(kind_raw: bool, packet: &[u8]) -> Option<[u8; 64]> {
    if kind_raw {
        packet.get(32..96)?.try_into().ok()
    } else {
        solana::first_signature(packet)
    }
}

/// The record reader behind [`Input::Records`].
pub mod sigdata_reader {
    /// A streaming reader of signature records.
    pub type Reader = wirespeed_sigdata::format::RecordReader<std::io::BufReader<std::fs::File>>;
}

/// Reads signature records for [`Input::Records`].
pub fn open_records(path: &std::path::Path) -> std::io::Result<sigdata_reader::Reader> {
    let format = wirespeed_sigdata::format::Format::from_path(path);
    let file = std::fs::File::open(path)?;
    let reader = std::io::BufReader::new(file);
    let _: &dyn BufRead = &reader;
    Ok(wirespeed_sigdata::format::RecordReader::new(reader, format))
}

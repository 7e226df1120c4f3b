//! The tiles' own counters, declared once as enums ([`CustomCounter`]): each tile
//! names its counters in `on_start` and counts them by name, and the monitor shows the
//! names (`wirespeed monitor`, the pipeline's summary). Every name fits the metrics
//! region's name slot whole (checked by this module's tests), so a declaration is never
//! refused; if one ever were, [`declared`] fails the tile (the runner reports it by name
//! and stops the pipeline) rather than run with a counter unnamed.

use wirespeed_disco::{CustomCounter, MetricsError};

use crate::solana::ParseError;

/// Ends a tile's `on_start` declaration: a refused name is a bug in this crate (every
/// name is checked to fit by the tests below), so it fails the tile, loudly, with the
/// reason.
pub(crate) fn declared(r: Result<(), MetricsError>) {
    if let Err(e) = r {
        panic!("declaring the tile's counters: {e}");
    }
}

/// The source tile's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceCounter {
    /// Packets longer than [`MAX_PACKET`](crate::tiles::MAX_PACKET), dropped.
    Oversize,
    /// Datagrams the kernel dropped for the source's UDP socket, nearly always because
    /// its receive buffer was full (the pipeline did not read fast enough): the
    /// kernel's own count for the socket ([`crate::udp::KernelDrops`]), read about once
    /// a second and at the end of the run. Named only for a UDP source whose count can
    /// be read.
    UdpKernelDrops,
}

impl CustomCounter for SourceCounter {
    const ALL: &'static [SourceCounter] = &[SourceCounter::Oversize];
    fn slot(self) -> usize {
        self as usize
    }
    fn name(self) -> &'static str {
        match self {
            SourceCounter::Oversize => "oversize",
            SourceCounter::UdpKernelDrops => "udp_kernel_drops",
        }
    }
}

/// The parse tile's counters: malformed packets by reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseCounter {
    /// A transaction the parser refused, by its reason.
    Malformed(ParseError),
    /// A raw record shorter than a key and a signature.
    RawTooShort,
}

impl CustomCounter for ParseCounter {
    const ALL: &'static [ParseCounter] = &{
        let mut all = [ParseCounter::RawTooShort; ParseError::ALL.len() + 1];
        let mut i = 0;
        while i < ParseError::ALL.len() {
            all[i] = ParseCounter::Malformed(ParseError::ALL[i]);
            i += 1;
        }
        all
    };
    fn slot(self) -> usize {
        match self {
            ParseCounter::Malformed(e) => e.index(),
            ParseCounter::RawTooShort => ParseError::ALL.len(),
        }
    }
    fn name(self) -> &'static str {
        match self {
            ParseCounter::Malformed(e) => e.reason(),
            ParseCounter::RawTooShort => "raw_too_short",
        }
    }
}

/// The verify tile's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyCounter {
    /// Batches verified.
    Batches,
    /// Batches the GPU failed on, answered on the CPU (named only when the tile may
    /// use the GPU).
    GpuFallbacks,
    /// Fragments without a consistent descriptor (never, from the parse tile).
    BadDescriptor,
}

impl CustomCounter for VerifyCounter {
    const ALL: &'static [VerifyCounter] = &[
        VerifyCounter::Batches,
        VerifyCounter::GpuFallbacks,
        VerifyCounter::BadDescriptor,
    ];
    fn slot(self) -> usize {
        self as usize
    }
    fn name(self) -> &'static str {
        match self {
            VerifyCounter::Batches => "batches",
            VerifyCounter::GpuFallbacks => "gpu_fallbacks",
            VerifyCounter::BadDescriptor => "bad_descriptor",
        }
    }
}

/// The dedup tile's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DedupCounter {
    /// Verdicts of a bad signature (nothing delivered).
    BadSignature,
    /// Valid transactions seen within the horizon (not delivered again).
    Duplicate,
}

impl CustomCounter for DedupCounter {
    const ALL: &'static [DedupCounter] = &[DedupCounter::BadSignature, DedupCounter::Duplicate];
    fn slot(self) -> usize {
        self as usize
    }
    fn name(self) -> &'static str {
        match self {
            DedupCounter::BadSignature => "bad_signature",
            DedupCounter::Duplicate => "duplicate",
        }
    }
}

/// The reorder tile's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReorderCounter {
    /// Tickets given up on (the window overflowed before they came).
    GivenUp,
}

impl CustomCounter for ReorderCounter {
    const ALL: &'static [ReorderCounter] = &[ReorderCounter::GivenUp];
    fn slot(self) -> usize {
        self as usize
    }
    fn name(self) -> &'static str {
        "given_up"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirespeed_disco::metrics::{check_name, CUSTOM};

    fn check_all<C: CustomCounter + std::fmt::Debug>(all: &[C], want: &[&str]) {
        let slots: Vec<usize> = all.iter().map(|c| c.slot()).collect();
        let names: Vec<&str> = all.iter().map(|c| c.name()).collect();
        assert_eq!(names, want);
        for (i, &s) in slots.iter().enumerate() {
            assert!(s < CUSTOM, "{:?} at slot {s}", all[i]);
            assert!(!slots[..i].contains(&s), "{:?} shares slot {s}", all[i]);
            // Whole names: the region refuses one that does not fit.
            assert!(check_name(names[i]).is_ok(), "{:?} does not fit", all[i]);
            assert!(!names[..i].contains(&names[i]), "{:?} named twice", all[i]);
        }
    }

    fn check<C: CustomCounter + std::fmt::Debug>(want: &[&str]) {
        check_all(C::ALL, want);
    }

    #[test]
    fn every_tile_names_distinct_slots_with_the_monitors_names() {
        check::<SourceCounter>(&["oversize"]);
        // Declared alone, for a UDP source.
        check_all(
            &[SourceCounter::Oversize, SourceCounter::UdpKernelDrops],
            &["oversize", "udp_kernel_drops"],
        );
        let mut parse: Vec<&str> = ParseError::ALL.iter().map(|e| e.reason()).collect();
        parse.push("raw_too_short");
        check::<ParseCounter>(&parse);
        check::<VerifyCounter>(&["batches", "gpu_fallbacks", "bad_descriptor"]);
        check::<DedupCounter>(&["bad_signature", "duplicate"]);
        check::<ReorderCounter>(&["given_up"]);
        for e in ParseError::ALL {
            assert_eq!(ParseCounter::Malformed(e).slot(), e.index());
        }
    }
}

//! Pipeline tiles on top of the [`wirespeed_tango`] rings, after Firedancer's disco
//! layer.
//!
//! - [`tile`]: the [`Tile`] trait (on-start, on-fragment, on-idle, housekeeping) and
//!   the context a tile publishes through, with a per-link overload policy
//!   ([`Policy::Backpressure`] or [`Policy::Shed`], counted, never silent).
//! - [`run`]: one shared loop runs one or more tiles on a thread, pinned to a core
//!   when asked; a tile runs only when its backpressured outputs have credits for a
//!   burst, so tiles sharing a core never deadlock; end of stream flows down the links;
//!   a panicking tile is reported and stops the pipeline.
//! - [`metrics`]: per-tile counters and latency histograms in a shared-memory file that
//!   another process (the monitor) maps read-only; a tile's own counters are an enum
//!   ([`CustomCounter`]), named once and counted by name.
//! - [`topology`]: tiles, links, depths and cores described in a TOML file.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod metrics;
pub mod run;
pub mod tile;
pub mod topology;

pub use metrics::{Counter, CustomCounter, Metrics, MetricsError, Snapshot, TileMetrics};
pub use run::{Pipeline, RunError, TileSpec};
pub use tile::{Claim, Ctx, Input, Policy, Tile, CTL_EOS};

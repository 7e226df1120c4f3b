//! The CPU features and lane widths this crate's lane backends are chosen by, as the
//! one detection of the CPU defines them ([`CpuFeatures`], in `wirespeed-util`). This
//! crate never probes the CPU: its callers pass features or lanes down, and check
//! [`Lanes::available_on`] before entering a lane backend's `unsafe` functions
//! ([`crate::avx2`] needs [`CpuFeatures::avx2`], [`crate::ifma`]'s 8-lane forms
//! [`CpuFeatures::ifma`] and its 4-lane forms [`CpuFeatures::ifma_vl`]).

pub use wirespeed_util::cpu::CpuFeatures;
/// The one description of the CPU's lane widths, for the crates above this one.
pub use wirespeed_util::lanes::Lanes;

//! The one place that chooses the hardware. Every public operation of wirespeed that can
//! run on more than one kind of hardware dispatches through [`Backend::select`] (as
//! curve25519-dalek's operations go through its `get_selected_backend()`), and every
//! GPU-to-CPU fallback goes through [`fallback::dispatch`].
//!
//! - [`backend`]: [`Backend`] `{ Auto, Cpu(Lanes), Gpu }` (parsed from the
//!   `--backend auto|cpu|gpu|<lanes>` names), [`Lanes`] (the CPU's lane widths, checked
//!   against `wirespeed_util::cpu::CpuFeatures`), [`Op`] with the size thresholds of
//!   `auto`, and [`Chosen`].
//! - [`fallback`]: the fallback rules (`auto` falls back, `gpu` is an error for one call
//!   and falls back for a long-running service), counted by [`fallback::Reason`].
//! - [`ed25519`]: verify, verify_many (all cores or the calling thread), and a stream of
//!   micro-batches.
//! - [`msm`]: BLS12-377 G1 MSM, one-shot or against prepared bases.
//! - [`rsa`]: RSA private operations, batch signing, public modexp and modmul batches,
//!   and keys parsed with their contexts built for this CPU's features.
//! - [`eccvm`]: the lane VM.
//!
//! Below this crate, the CPU crates (ed25519, msm, rsa, eccvm, vdf) take their lanes or
//! CPU features as arguments and `wirespeed-gpu` holds only the device (runtime, kernels, device entry
//! points that return `GpuError`). Above it, `sigverify` and the CLI call only this
//! crate for hardware choice.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod backend;
pub mod eccvm;
pub mod ed25519;
pub mod fallback;
pub mod msm;
pub mod rsa;

pub use backend::{Backend, Chosen, Lanes, Op, UnknownBackend};
pub use fallback::{fallbacks, Fallbacks, Reason};
pub use wirespeed_gpu::{Gpu, GpuError};

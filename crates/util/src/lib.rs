//! The bottom floor of wirespeed, below every arithmetic crate: what the CPU can do,
//! detected once ([`cpu::CpuFeatures`]), so that each crate's kernel choice reads one
//! description instead of probing the CPU itself.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod cpu;

//! The bottom floor of wirespeed, below every arithmetic crate: what the CPU can do,
//! detected once ([`cpu::CpuFeatures`]), so that each crate's kernel choice reads one
//! description instead of probing the CPU itself; and the small helpers that several
//! crates need, written once:
//!
//! - [`hex`]: bytes to and from hex;
//! - [`digits`]: counts with thousands separators;
//! - [`fs`]: files replaced whole or not at all (temporary file, sync, rename, directory
//!   sync);
//! - [`io`]: file and stream reads bounded before they allocate;
//! - [`keyslot`]: Redis Cluster's key slot (CRC16/XMODEM of the key or its hash tag);
//! - [`lanes`]: the CPU's lane widths ([`lanes::Lanes`]), one description for every
//!   operation, checked against [`cpu::CpuFeatures`];
//! - [`proc`]: readers of Linux's `/proc` (CPU time, status fields, cpuinfo);
//! - [`time`]: UTC calendar time from the system clock (RFC 3339 and file-name stamps).

#![cfg_attr(not(test), warn(missing_docs))]

pub mod cpu;
pub mod digits;
pub mod fs;
pub mod hex;
pub mod io;
pub mod keyslot;
pub mod lanes;
pub mod proc;
pub mod time;

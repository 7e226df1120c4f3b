//! A lane VM for traced field-arithmetic programs.
//!
//! `python/wirespeed_trace` compiles Python reference code into straight-line programs
//! (format and semantics: docs/trace-format.md). This crate loads such a program with
//! every validation rule of the format enforced ([`Program::parse`]: a bad program is a
//! typed [`ProgramError`], never a panic) and runs it over many input sets at once:
//!
//! - [`Lanes::Serial`]: one set at a time on `wirespeed_field::Fe51`;
//! - [`Lanes::Avx2`]: four sets per step on `wirespeed_field::avx2::Fe26x4`;
//! - [`Lanes::Ifma`] (and [`Lanes::Ifma4`], run the same way): eight sets per step on
//!   `wirespeed_field::ifma::Fe51x8`;
//! - [`Lanes::Auto`]: the widest the CPU features passed in support
//!   ([`Program::run_sets_with`]; the `run*` forms without features are convenience
//!   wrappers over the process's one detection, `wirespeed_util::cpu::CpuFeatures`).
//!
//! Every backend returns the same outputs as the reference interpreter
//! (`python/wirespeed_trace/interp.py`): field slots as canonical 32-byte encodings,
//! bool slots as `bool`. The VM runs field 1, GF(2^255 - 19).
//!
//! ```
//! use wirespeed_eccvm::{rfc8032, Lanes, Program, Value};
//!
//! let prog = Program::parse(rfc8032::decode_program("strict", 'A').unwrap()).unwrap();
//! let base = {
//!     let mut b = [0x66u8; 32];
//!     b[0] = 0x58;
//!     b
//! };
//! let out = prog.run(Lanes::Auto, &[base]).unwrap();
//! assert_eq!(out.set(0)[0], Value::Bool(true)); // the base point decodes
//! ```
//!
//! Execution handles public data and is variable time.

#![cfg_attr(not(test), warn(missing_docs))]

mod code;
mod error;
mod exec;
mod lanes;
mod program;
pub mod rfc8032;
/// Program generators and edge values for differential tests (this crate's tests, the
/// GPU kernels' host tests and `wirespeed bench gpu`); only with the `test-support`
/// feature, so production builds carry no test harness.
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod testing;

pub use error::{ProgramError, RunError};
pub use exec::{format_line, Outputs, Value};
pub use lanes::Lanes;
pub use program::{Instruction, Kind, Opcode, Program, Stats, FIELD_25519, VERSION};

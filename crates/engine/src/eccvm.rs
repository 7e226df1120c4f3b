//! The lane VM through the engine: crates/eccvm programs on every input set, on the
//! CPU lanes or the GPU (one thread per set), on the backend [`Backend::select`] picks
//! for [`Op::LaneVm`]. Both give the same outputs; a GPU failure under `auto` falls
//! back by the rules of [`crate::fallback`].
//!
//! Lanes: `Auto`, `Serial`, `Avx2` and `Ifma` are the VM's backends of those names;
//! `Ifma4` runs as `Ifma` (the VM has no 4-lane IFMA form; both need IFMA).

use std::fmt;

use wirespeed_eccvm::{Program, RunError, Value};
use wirespeed_gpu::GpuError;

use crate::backend::{cpu, Backend, Lanes, Op};
use crate::fallback::{dispatch, Policy};

/// The lanes the VM has, for `--backend` lists.
pub const LANES: [Lanes; 3] = [Lanes::Serial, Lanes::Avx2, Lanes::Ifma];

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The inputs do not fit the program (as the CPU VM reports it).
    Run(RunError),
    /// The GPU backend could not run.
    Gpu(GpuError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Run(e) => write!(f, "{e}"),
            Error::Gpu(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

/// Runs `program` on every input set (set i is `inputs[i * n .. (i + 1) * n]`, n the
/// program's input count) on the chosen backend; returns the outputs set-major, as
/// [`wirespeed_eccvm::Outputs::values`] does.
pub fn run(backend: Backend, program: &Program, inputs: &[[u8; 32]]) -> Result<Vec<Value>, Error> {
    let sets = wirespeed_gpu::eccvm::Packed::new(program)
        .sets(inputs)
        .map_err(Error::Run)?;
    run_sets(backend, program, sets, inputs)
}

/// [`run`] for an explicit number of sets (`inputs` must hold `sets` times the program's
/// input count), as [`Program::run_sets`].
pub fn run_sets(
    backend: Backend,
    program: &Program,
    sets: usize,
    inputs: &[[u8; 32]],
) -> Result<Vec<Value>, Error> {
    let per_set = program.inputs();
    if sets.checked_mul(per_set) != Some(inputs.len()) {
        return Err(Error::Run(RunError::InputCount {
            given: inputs.len(),
            per_set,
            sets,
        }));
    }
    // Dispatched before the empty case, so that `gpu` without a device fails even on no
    // input.
    let ran = dispatch(
        backend,
        Op::LaneVm,
        sets,
        Policy::Call,
        |l| {
            if sets == 0 {
                return Ok(Vec::new());
            }
            program
                .run_sets_with(l, cpu(), sets, inputs)
                .map(|o| o.values().to_vec())
        },
        |g| wirespeed_gpu::eccvm::run_sets(g, program, sets, inputs).map(Ok),
    )
    .map_err(Error::Gpu)?;
    ran.value.map_err(Error::Run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_backend_matches_the_vm_and_counts_are_checked() {
        let bytes = wirespeed_eccvm::rfc8032::decode_program("strict", 'a').unwrap();
        let p = Program::parse(bytes).unwrap();
        let inputs: Vec<[u8; 32]> = (0..5u8).map(|i| [i; 32]).collect();
        let got = run(Backend::CPU, &p, &inputs).unwrap();
        let want = p.run(Lanes::Serial, &inputs).unwrap();
        assert_eq!(got, want.values());
        if p.inputs() > 1 {
            assert!(matches!(
                run(Backend::CPU, &p, &inputs[..1]),
                Err(Error::Run(_))
            ));
        }
    }
}

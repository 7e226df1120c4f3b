//! The BLS12-377 MSM section of `wirespeed bench gpu`.

use rand_chacha::ChaCha20Rng;

use super::{Options, Report};
use crate::runtime::GpuError;

/// Checks, then benchmarks.
pub(super) fn run(
    _opts: &Options,
    _rng: &mut ChaCha20Rng,
    _report: &mut Report,
) -> Result<(), GpuError> {
    Err(GpuError::Unsupported(
        "this section is not written yet".into(),
    ))
}

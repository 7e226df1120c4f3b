//! Side-by-side benchmarks: wirespeed beside peer libraries, measured in the same run and
//! reported as ratios.

pub mod ed25519;
pub mod gpu;
pub mod machine;
pub mod msm;
pub mod rsa;
pub mod vdf;

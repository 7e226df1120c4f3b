//! Side-by-side benchmarks: wirespeed beside peer libraries, measured in the same run and
//! reported as ratios (`ed25519`, `msm`, `rsa`, `vdf`: the `peers` feature, on by
//! default), and the GPU differential checks and benchmarks (`gpu`, always built).
//! Harness code lives here, never in a production crate.

#[cfg(feature = "peers")]
pub mod ed25519;
pub mod gpu;
pub mod machine;
#[cfg(feature = "peers")]
pub mod msm;
#[cfg(feature = "peers")]
pub mod rsa;
#[cfg(feature = "peers")]
pub mod vdf;

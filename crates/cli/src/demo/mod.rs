//! `wirespeed demo`: each system's main job on built-in inputs, one section per system,
//! printed as aligned tables and checked for correctness.
//!
//! A system joins the demo by adding a module here with a [`Section`] constant and listing
//! it in [`SECTIONS`]. A section prints its own tables and returns `CliError::Check` when
//! its results do not match what it expected.

mod ed25519;
mod gpu;
mod kvs;
mod msm;
mod pipeline;
mod rsa;
mod vdf;

use std::io::Write;
use std::time::Instant;

use clap::Args;

use crate::error::CliError;

/// Options every section receives.
#[derive(Clone, Copy, Debug)]
pub struct DemoOptions {
    /// Use inputs about ten times smaller (a smoke test rather than a measurement).
    pub quick: bool,
}

/// One system's part of the demo.
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// The name `--only` selects.
    pub name: &'static str,
    /// The heading printed above the section.
    pub title: &'static str,
    /// Runs the section, writing its report to `out`.
    pub run: fn(&DemoOptions, &mut dyn Write) -> Result<(), CliError>,
}

/// All sections, in the order they run.
pub const SECTIONS: &[Section] = &[
    ed25519::SECTION,
    vdf::SECTION,
    msm::SECTION,
    rsa::SECTION,
    kvs::SECTION,
    pipeline::SECTION,
    gpu::SECTION,
];

/// Arguments of `wirespeed demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Run only this section (repeatable); sections: ed25519, vdf, msm, rsa, kvs, pipeline, gpu
    #[arg(long, value_name = "SECTION")]
    pub only: Vec<String>,

    /// Smaller inputs: a quick smoke test rather than a measurement
    #[arg(long)]
    pub quick: bool,
}

/// Runs `wirespeed demo`.
pub fn run(args: &DemoArgs) -> Result<(), CliError> {
    for name in &args.only {
        if !SECTIONS.iter().any(|s| s.name == name) {
            let known: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
            return Err(CliError::Invalid(format!(
                "unknown demo section '{name}' (expected {})",
                known.join(", ")
            )));
        }
    }
    let opts = DemoOptions { quick: args.quick };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let selected = SECTIONS
        .iter()
        .filter(|s| args.only.is_empty() || args.only.iter().any(|n| n == s.name));
    for section in selected {
        let start = Instant::now();
        writeln!(out, "== {} ({}) ==", section.title, section.name).map_err(CliError::Stdout)?;
        (section.run)(&opts, &mut out)?;
        writeln!(
            out,
            "{} done in {:.1} s\n",
            section.name,
            start.elapsed().as_secs_f64()
        )
        .map_err(CliError::Stdout)?;
    }
    Ok(())
}

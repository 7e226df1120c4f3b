//! Demo section: a BLS12-377 G1 MSM on generated inputs (uniform and skewed scalars),
//! checked against an independent double-and-add sum over a sample, and by linearity.

use std::io::Write;
use std::time::Instant;

use wirespeed_msm::{gen, msm, Jacobian};

use super::{DemoOptions, Section};
use crate::error::CliError;

/// The MSM section.
pub const SECTION: Section = Section {
    name: "msm",
    title: "BLS12-377 G1 multi-scalar multiplication",
    run,
};

fn run(opts: &DemoOptions, out: &mut dyn Write) -> Result<(), CliError> {
    let n: usize = if opts.quick { 1 << 12 } else { 1 << 16 };
    let w = |e: std::io::Error| CliError::Stdout(e);
    let points = gen::points(n, 1);
    writeln!(
        out,
        "{:<9} {:>8} {:>9} {:>16}  check",
        "scalars", "n", "secs", "us/point/core"
    )
    .map_err(w)?;
    let cores = rayon::current_num_threads() as f64;
    for (name, scalars) in [
        ("uniform", gen::scalars(n, 2)),
        ("skewed", gen::skewed_scalars(n, 3)),
    ] {
        let t = Instant::now();
        let r = msm(&points, &scalars).map_err(|e| CliError::Internal(e.to_string()))?;
        let secs = t.elapsed().as_secs_f64();
        // Linearity: the sum over the first half plus the second half is the whole.
        let h = n / 2;
        let a = msm(&points[..h], &scalars[..h]).map_err(|e| CliError::Internal(e.to_string()))?;
        let b = msm(&points[h..], &scalars[h..]).map_err(|e| CliError::Internal(e.to_string()))?;
        // Independent check on a 16-point prefix: plain double-and-add.
        let k = 16;
        let mut naive = Jacobian::INFINITY;
        for (p, s) in points[..k].iter().zip(&scalars[..k]) {
            naive = naive.add(&Jacobian::from(*p).mul_limbs(s.limbs()));
        }
        let fast =
            msm(&points[..k], &scalars[..k]).map_err(|e| CliError::Internal(e.to_string()))?;
        if a.add(&b) != r || fast != naive {
            return Err(CliError::Check(format!(
                "MSM ({name}) disagrees with its checks"
            )));
        }
        writeln!(
            out,
            "{:<9} {:>8} {:>9.3} {:>16.2}  ok (halves, double-and-add)",
            name,
            n,
            secs,
            secs * 1e6 * cores / n as f64
        )
        .map_err(w)?;
    }
    Ok(())
}

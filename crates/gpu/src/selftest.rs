//! The smoke kernel (kernels/selftest.cu): a * b + c for every triple, through the carry
//! helpers every kernel uses. A device that gets this wrong cannot be trusted with the
//! others; `wirespeed bench gpu` runs it first and checks it against the host.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::runtime::{Gpu, GpuError};

/// a\[i\] * b\[i\] + c\[i\] for every i on the device, as two words each (low, high). The
/// three lists must be of one length, below 2^32.
pub fn mul_add(g: &Gpu, a: &[u32], b: &[u32], c: &[u32]) -> Result<Vec<u32>, GpuError> {
    let n = a.len();
    if b.len() != n || c.len() != n || n >= 1 << 31 {
        return Err(GpuError::Unsupported(format!(
            "smoke kernel on {n}, {} and {} values",
            b.len(),
            c.len()
        )));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    let f = g.function("selftest.cu", "ws_selftest")?;
    let s = g.stream()?;
    let (da, db, dc) = (s.clone_htod(a)?, s.clone_htod(b)?, s.clone_htod(c)?);
    // Poisoned output: every word must be written.
    let mut out = s.clone_htod(&vec![0xdead_beefu32; 2 * n])?;
    let n32 = n as u32;
    let mut l = s.launch_builder(&f);
    l.arg(&da).arg(&db).arg(&dc).arg(&mut out).arg(&n32);
    // SAFETY: the kernel reads n words of a, b, c and writes 2n words of out.
    unsafe { l.launch(LaunchConfig::for_num_elems(n32)) }?;
    let got = s.clone_dtoh(&out)?;
    s.synchronize()?;
    Ok(got)
}

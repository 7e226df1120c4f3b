//! BLS12-377 G1 multi-scalar multiplication through the engine: one-shot ([`msm`]) or
//! against a point set prepared once ([`Prepared`]: precomputed multiples on the CPU,
//! or the points resident on the device), on the backend [`Backend::select`] picks for
//! [`Op::Msm`]. Every result equals `wirespeed_msm::msm`'s; a GPU failure falls back by
//! the rules of [`crate::fallback`].
//!
//! Lanes: the CPU path gets this CPU's features narrowed to the lanes asked for
//! (`CpuFeatures::limited_to`): IFMA bucket lanes with `Auto`, `Ifma` or `Ifma4`,
//! 64-bit buckets otherwise (`mulx`/`adx` window sums except with `Serial`).

use std::sync::Mutex;

use wirespeed_gpu::msm::DeviceMsm;
use wirespeed_gpu::GpuError;
use wirespeed_msm::{Affine, Jacobian, Precomputed, Scalar};

use crate::backend::{cpu, Backend, Chosen, Lanes, Op};
use crate::fallback::{dispatch, dispatch_on, Policy};

fn length_error(points: usize, scalars: usize) -> GpuError {
    GpuError::Unsupported(format!("{points} points but {scalars} scalars"))
}

fn cpu_error(e: wirespeed_msm::MsmError) -> GpuError {
    GpuError::Unsupported(e.to_string())
}

/// `sum_i scalars[i] points[i]` on the backend chosen for this size (the GPU from
/// [`Op::Msm`]'s threshold on under `auto`, which falls back to the CPU when the GPU run
/// fails, e.g. for lack of memory). The result equals `wirespeed_msm::msm`'s.
pub fn msm(backend: Backend, points: &[Affine], scalars: &[Scalar]) -> Result<Jacobian, GpuError> {
    if points.len() != scalars.len() {
        return Err(length_error(points.len(), scalars.len()));
    }
    dispatch(
        backend,
        Op::Msm,
        points.len(),
        Policy::Call,
        |l: Lanes| wirespeed_msm::msm_with(points, scalars, l, cpu()).map_err(cpu_error),
        |g| wirespeed_gpu::msm::msm(g, points, scalars).map(Ok),
    )?
    .value
}

/// A point set prepared once for many MSMs: on the GPU, the points (and K - 1 shifted
/// copies) resident in device memory with the run buffers allocated; on the CPU,
/// `wirespeed_msm::Precomputed`.
pub struct Prepared {
    n: usize,
    inner: Inner,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("points", &self.n)
            .field("backend", &self.backend_name())
            .finish()
    }
}

enum Inner {
    Cpu(Box<Precomputed>),
    Gpu(Mutex<Box<DeviceMsm>>),
    Empty,
}

impl Prepared {
    /// Prepares `points` with K = `groups` (1 to 64; 1 keeps only the points) on the
    /// backend chosen for their number.
    pub fn new(backend: Backend, points: &[Affine], groups: usize) -> Result<Prepared, GpuError> {
        let n = points.len();
        let groups = groups.clamp(1, 64);
        let on_cpu =
            |l: Lanes| Inner::Cpu(Box::new(Precomputed::new_with(points, groups, l, cpu())));
        let chosen = backend.select(Op::Msm, n)?;
        let inner = match chosen {
            Chosen::Gpu(_) if n == 0 => Inner::Empty,
            _ => {
                let gpu = |g| {
                    DeviceMsm::new(g, points, groups).map(|d| Inner::Gpu(Mutex::new(Box::new(d))))
                };
                dispatch_on(chosen, backend, Policy::Call, on_cpu, gpu)?.value
            }
        };
        Ok(Prepared { n, inner })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when there are no points.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// "gpu" or "cpu": where the MSMs run.
    pub fn backend_name(&self) -> &'static str {
        match self.inner {
            Inner::Cpu(_) => "cpu",
            _ => "gpu",
        }
    }

    /// Bytes of the CPU's precomputed table (None on the device).
    pub fn table_bytes(&self) -> Option<usize> {
        match &self.inner {
            Inner::Cpu(p) => Some(p.table_bytes()),
            _ => None,
        }
    }

    /// `sum_i scalars[i] P_i` over the prepared points.
    pub fn msm(&self, scalars: &[Scalar]) -> Result<Jacobian, GpuError> {
        if scalars.len() != self.n {
            return Err(length_error(self.n, scalars.len()));
        }
        match &self.inner {
            Inner::Cpu(p) => p.msm(scalars).map_err(cpu_error),
            Inner::Gpu(d) => d.lock().unwrap_or_else(|p| p.into_inner()).run(scalars),
            Inner::Empty => Ok(Jacobian::INFINITY),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirespeed_msm::gen;

    #[test]
    fn cpu_backend_matches_wirespeed_msm() {
        let points = gen::points(300, 1);
        let scalars = gen::scalars(300, 2);
        let want = wirespeed_msm::msm(&points, &scalars).unwrap();
        assert_eq!(msm(Backend::CPU, &points, &scalars).unwrap(), want);
        let pre = Prepared::new(Backend::CPU, &points, 3).unwrap();
        assert_eq!(pre.backend_name(), "cpu");
        assert_eq!(pre.msm(&scalars).unwrap(), want);
        assert!(pre.msm(&scalars[1..]).is_err());
        assert!(msm(Backend::CPU, &points, &scalars[1..]).is_err());
    }

    #[test]
    fn gpu_matches_wirespeed_msm_where_there_is_one() {
        if Backend::Gpu.choose(1, 1).is_err() {
            eprintln!("skipped: no usable GPU");
            return;
        }
        for n in [1usize, 100, 1 << 12] {
            let points = gen::points(n, 3);
            let scalars = gen::skewed_scalars(n, 4);
            let want = wirespeed_msm::msm(&points, &scalars).unwrap();
            assert_eq!(
                msm(Backend::Gpu, &points, &scalars).unwrap(),
                want,
                "n = {n}"
            );
            let pre = Prepared::new(Backend::Gpu, &points, 2).unwrap();
            assert_eq!(pre.msm(&scalars).unwrap(), want, "n = {n}, K = 2");
            let s2 = gen::scalars(n, 5);
            let want2 = wirespeed_msm::msm(&points, &s2).unwrap();
            assert_eq!(pre.msm(&s2).unwrap(), want2, "n = {n}, second set");
        }
    }
}

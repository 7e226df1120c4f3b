//! Fallback from the GPU to the CPU, in one place: [`dispatch`] runs an operation where
//! [`Backend::select`] puts it and, when the GPU run fails where the caller allows it,
//! runs the CPU path instead and counts the [`Reason`].
//!
//! The rules (the same for every operation):
//! - `cpu`: the CPU path, nothing else.
//! - `auto`: the GPU from the operation's threshold on when one is usable; if the GPU
//!   run fails (too little memory, an input its kernels do not take, a failed launch)
//!   the CPU answers instead, and the reason is counted.
//! - `gpu`, one call ([`Policy::Call`]): the GPU or its error, never a silent CPU run.
//! - `gpu`, a long-running service ([`Policy::Service`]: the verification stream, the
//!   pipeline's verify tiles): the device was checked at start; a batch the GPU fails on
//!   is answered on the CPU (the answers are the same), counted, so every item still
//!   gets one.
//!
//! The counts are process-wide ([`fallbacks`]); each call also returns its own reason
//! ([`Ran::fallback`]) for callers that keep their own metric.

use std::sync::atomic::{AtomicU64, Ordering};

use wirespeed_gpu::{Gpu, GpuError};

use crate::backend::{Backend, Chosen, Lanes, Op};

/// Why a GPU run was answered on the CPU instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// No usable device (no driver, no device, no NVRTC, or disabled).
    NoDevice,
    /// The job needed more device memory than was free.
    OutOfMemory,
    /// The kernels do not take this input (a key size or modulus width without a
    /// kernel, a job too large for one launch).
    Unsupported,
    /// A driver call, a kernel compile or a launch failed.
    Failed,
}

impl Reason {
    /// Every reason, in the order of [`Fallbacks`]' fields.
    pub const ALL: [Reason; 4] = [
        Reason::NoDevice,
        Reason::OutOfMemory,
        Reason::Unsupported,
        Reason::Failed,
    ];

    /// The reason a GPU error falls under.
    pub fn of(e: &GpuError) -> Reason {
        match e {
            GpuError::Disabled | GpuError::NoDriver | GpuError::NoDevice(_) | GpuError::NoNvrtc => {
                Reason::NoDevice
            }
            GpuError::OutOfMemory { .. } => Reason::OutOfMemory,
            GpuError::Unsupported(_) => Reason::Unsupported,
            GpuError::Driver(_) | GpuError::Compile { .. } => Reason::Failed,
        }
    }

    /// A short name for metrics ("no_device", "out_of_memory", ...).
    pub fn name(&self) -> &'static str {
        match self {
            Reason::NoDevice => "no_device",
            Reason::OutOfMemory => "out_of_memory",
            Reason::Unsupported => "unsupported",
            Reason::Failed => "failed",
        }
    }
}

static COUNTS: [AtomicU64; 4] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

/// Counts a fallback for `e` and returns its reason.
pub(crate) fn record(e: &GpuError) -> Reason {
    let r = Reason::of(e);
    let i = Reason::ALL.iter().position(|x| *x == r).unwrap_or(3);
    COUNTS[i].fetch_add(1, Ordering::Relaxed);
    r
}

/// Fallbacks since the process started, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fallbacks {
    /// [`Reason::NoDevice`].
    pub no_device: u64,
    /// [`Reason::OutOfMemory`].
    pub out_of_memory: u64,
    /// [`Reason::Unsupported`].
    pub unsupported: u64,
    /// [`Reason::Failed`].
    pub failed: u64,
}

impl Fallbacks {
    /// Every fallback, whatever its reason.
    pub fn total(&self) -> u64 {
        self.no_device + self.out_of_memory + self.unsupported + self.failed
    }
}

/// The process-wide fallback counts.
pub fn fallbacks() -> Fallbacks {
    let c = |i: usize| COUNTS[i].load(Ordering::Relaxed);
    Fallbacks {
        no_device: c(0),
        out_of_memory: c(1),
        unsupported: c(2),
        failed: c(3),
    }
}

/// How a failed GPU run under `gpu` is treated (under `auto` it always falls back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// One call: `gpu` returns the GPU's error.
    Call,
    /// A long-running service: every batch gets answers, on the CPU if the GPU fails.
    Service,
}

/// What one dispatched call did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran<T> {
    /// The answer.
    pub value: T,
    /// "cpu" or "gpu": where the answer was computed.
    pub on: &'static str,
    /// Why the GPU's run was replaced by the CPU's, if it was.
    pub fallback: Option<Reason>,
}

/// Runs `op` on `work` items where `backend` puts it: `cpu(lanes)` on the CPU,
/// `gpu(device)` on the GPU, with the fallback rules of this module. The error is the
/// GPU's, only where the rules return it.
pub fn dispatch<T>(
    backend: Backend,
    op: Op,
    work: usize,
    policy: Policy,
    cpu: impl FnOnce(Lanes) -> T,
    gpu: impl FnOnce(&'static Gpu) -> Result<T, GpuError>,
) -> Result<Ran<T>, GpuError> {
    match (backend.select(op, work), policy) {
        (Ok(chosen), _) => dispatch_on(chosen, backend, policy, cpu, gpu),
        (Err(e), Policy::Service) => Ok(Ran {
            value: cpu(Lanes::Auto),
            on: "cpu",
            fallback: Some(record(&e)),
        }),
        (Err(e), Policy::Call) => Err(e),
    }
}

/// [`dispatch`] where the choice was made before (a stream chooses once for all its
/// batches): `backend` is what the caller asked for, which decides whether a failed GPU
/// run falls back.
pub fn dispatch_on<T>(
    chosen: Chosen,
    backend: Backend,
    policy: Policy,
    cpu: impl FnOnce(Lanes) -> T,
    gpu: impl FnOnce(&'static Gpu) -> Result<T, GpuError>,
) -> Result<Ran<T>, GpuError> {
    match chosen {
        Chosen::Cpu(l) => Ok(Ran {
            value: cpu(l),
            on: "cpu",
            fallback: None,
        }),
        Chosen::Gpu(g) => match gpu(g) {
            Ok(value) => Ok(Ran {
                value,
                on: "gpu",
                fallback: None,
            }),
            Err(e) if backend == Backend::Auto || policy == Policy::Service => Ok(Ran {
                value: cpu(Lanes::Auto),
                on: "cpu",
                fallback: Some(record(&e)),
            }),
            Err(e) => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_cover_every_gpu_error() {
        assert_eq!(Reason::of(&GpuError::NoDriver), Reason::NoDevice);
        assert_eq!(Reason::of(&GpuError::NoNvrtc), Reason::NoDevice);
        assert_eq!(
            Reason::of(&GpuError::OutOfMemory {
                what: "x".into(),
                need: 2,
                free: 1
            }),
            Reason::OutOfMemory
        );
        assert_eq!(
            Reason::of(&GpuError::Unsupported("x".into())),
            Reason::Unsupported
        );
        assert_eq!(Reason::of(&GpuError::Driver("x".into())), Reason::Failed);
    }

    #[test]
    fn cpu_never_touches_the_gpu_path() {
        let r = dispatch(
            Backend::Cpu(Lanes::Serial),
            Op::Msm,
            1 << 30,
            Policy::Call,
            |l| l,
            |_| panic!("the GPU path ran under cpu"),
        )
        .unwrap();
        assert_eq!((r.value, r.on, r.fallback), (Lanes::Serial, "cpu", None));
    }

    #[test]
    fn a_failed_gpu_run_falls_back_under_auto_and_service_only() {
        if wirespeed_gpu::usable().is_err() {
            // No device: auto stays on the CPU without a fallback; gpu is an error for
            // one call and a counted fallback for a service.
            let r = dispatch(
                Backend::Auto,
                Op::Msm,
                1 << 30,
                Policy::Call,
                |_| 1,
                |_| Ok(2),
            );
            assert_eq!(r.unwrap().fallback, None);
            assert!(dispatch(Backend::Gpu, Op::Msm, 1, Policy::Call, |_| 1, |_| Ok(2)).is_err());
            let before = fallbacks().no_device;
            let r = dispatch(Backend::Gpu, Op::Msm, 1, Policy::Service, |_| 1, |_| Ok(2));
            let r = r.unwrap();
            assert_eq!((r.value, r.fallback), (1, Some(Reason::NoDevice)));
            assert!(fallbacks().no_device > before);
            return;
        }
        let fail = |_: &'static Gpu| Err::<i32, _>(GpuError::Driver("injected".into()));
        let before = fallbacks().failed;
        let r = dispatch(Backend::Auto, Op::Msm, 1 << 30, Policy::Call, |_| 1, fail).unwrap();
        assert_eq!(
            (r.value, r.on, r.fallback),
            (1, "cpu", Some(Reason::Failed))
        );
        assert!(fallbacks().failed > before);
        assert!(dispatch(Backend::Gpu, Op::Msm, 1, Policy::Call, |_| 1, fail).is_err());
        let r = dispatch(Backend::Gpu, Op::Msm, 1, Policy::Service, |_| 1, fail).unwrap();
        assert_eq!(r.fallback, Some(Reason::Failed));
    }
}

//! The CUDA runtime: the driver API and NVRTC, both loaded at run time (cudarc with
//! dynamic loading), so the project builds and runs on machines without CUDA.
//!
//! [`gpu()`] opens device 0 once per process. Kernels are compiled by NVRTC at first use
//! for the device's architecture and cached on disk under the SHA-256 of their inlined
//! source, the architecture and the options ([`crate::source::cache_key`]).

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::{CompileOptions, Ptx};

use crate::source;

/// Why the GPU backend cannot run, or what went wrong on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// WIRESPEED_GPU=off is set.
    Disabled,
    /// libcuda (the NVIDIA driver) could not be loaded.
    NoDriver,
    /// The driver loaded but reports no CUDA device (or failed to initialise).
    NoDevice(String),
    /// libnvrtc could not be loaded, so kernels cannot be compiled.
    NoNvrtc,
    /// A driver call failed.
    Driver(String),
    /// NVRTC rejected a kernel.
    Compile {
        /// The kernel file.
        kernel: String,
        /// The compiler's log.
        log: String,
    },
    /// The job needs more device memory than is free.
    OutOfMemory {
        /// What was being sized.
        what: String,
        /// Bytes needed.
        need: usize,
        /// Bytes free on the device.
        free: usize,
    },
    /// The input cannot be run on this backend (too large for one launch, bad shape).
    Unsupported(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::Disabled => write!(f, "the GPU backend is disabled (WIRESPEED_GPU=off)"),
            GpuError::NoDriver => write!(
                f,
                "no CUDA driver: libcuda.so could not be loaded (no NVIDIA GPU or driver on this machine)"
            ),
            GpuError::NoDevice(why) => write!(f, "no CUDA device: {why}"),
            GpuError::NoNvrtc => write!(
                f,
                "NVRTC (libnvrtc.so) could not be loaded: the GPU kernels cannot be compiled; \
                 install the CUDA toolkit or put libnvrtc on LD_LIBRARY_PATH"
            ),
            GpuError::Driver(e) => write!(f, "CUDA driver error: {e}"),
            GpuError::Compile { kernel, log } => {
                write!(f, "NVRTC failed to compile {kernel}:\n{log}")
            }
            GpuError::OutOfMemory { what, need, free } => write!(
                f,
                "{what} needs {} MiB of device memory but only {} MiB are free",
                need >> 20,
                free >> 20
            ),
            GpuError::Unsupported(why) => write!(f, "not supported on the GPU backend: {why}"),
        }
    }
}

impl std::error::Error for GpuError {}

impl From<cudarc::driver::DriverError> for GpuError {
    fn from(e: cudarc::driver::DriverError) -> GpuError {
        GpuError::Driver(format!("{e:?}"))
    }
}

/// True when libnvrtc can be loaded (kernels can be compiled, with or without a GPU).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library; no function is called.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// An open CUDA device: context, default stream and the modules compiled so far.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    /// Device name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub capability: (i32, i32),
    /// The CUDA version the driver supports, e.g. 13000 for 13.0.
    pub driver_cuda_version: i32,
    /// Streaming multiprocessors.
    pub sm_count: i32,
    arch: &'static str,
    modules: Mutex<HashMap<String, Arc<CudaModule>>>,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("name", &self.name)
            .field("capability", &self.capability)
            .finish()
    }
}

/// Device 0, opened once per process; the error says why there is none.
pub fn gpu() -> Result<&'static Gpu, GpuError> {
    static GPU: OnceLock<Result<Gpu, GpuError>> = OnceLock::new();
    GPU.get_or_init(open).as_ref().map_err(Clone::clone)
}

/// The NVRTC architecture name for a compute capability ("sm_90").
pub fn arch_name(cap: (i32, i32)) -> &'static str {
    // Leaked once per distinct capability (there is one device per process).
    static NAMES: OnceLock<Mutex<HashMap<(i32, i32), &'static str>>> = OnceLock::new();
    let mut m = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    m.entry(cap)
        .or_insert_with(|| Box::leak(format!("sm_{}{}", cap.0, cap.1).into_boxed_str()))
}

fn open() -> Result<Gpu, GpuError> {
    if std::env::var("WIRESPEED_GPU").is_ok_and(|v| v == "off" || v == "0") {
        return Err(GpuError::Disabled);
    }
    // SAFETY: only tries to dlopen the library; creating a context without it panics
    // inside cudarc, so this check must come first.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(GpuError::NoDriver);
    }
    let n = CudaContext::device_count().map_err(|e| GpuError::NoDevice(format!("{e:?}")))?;
    if n < 1 {
        return Err(GpuError::NoDevice("the driver reports 0 devices".into()));
    }
    let ctx = CudaContext::new(0).map_err(|e| GpuError::NoDevice(format!("{e:?}")))?;
    use cudarc::driver::sys::CUdevice_attribute as A;
    let sm_count = ctx.attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    let capability = ctx.compute_capability()?;
    let mut v = 0;
    // SAFETY: the driver is loaded (checked above); v is a valid out pointer.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    Ok(Gpu {
        name: ctx.name()?,
        capability,
        driver_cuda_version: v,
        sm_count,
        arch: arch_name(capability),
        ctx,
        modules: Mutex::new(HashMap::new()),
    })
}

/// Where compiled PTX is kept: $WIRESPEED_KERNEL_CACHE, else $XDG_CACHE_HOME/wirespeed/ptx,
/// else ~/.cache/wirespeed/ptx.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("WIRESPEED_KERNEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("wirespeed").join("ptx"))
}

/// NVRTC options every kernel is compiled with.
pub fn compile_options() -> Vec<String> {
    vec!["-std=c++17".into(), "-default-device".into()]
}

/// Compiles one kernel file for `arch` ("sm_90") to PTX text, through the disk cache.
/// Needs only NVRTC, not a GPU. Returns the PTX and whether it came from the cache.
pub fn compile(kernel: &str, arch: &'static str) -> Result<(String, bool), GpuError> {
    let src = source::inline(kernel).map_err(GpuError::Unsupported)?;
    let opts = compile_options();
    let key = source::cache_key(&src, arch, &opts);
    let path = cache_dir().map(|d| d.join(format!("{key}.ptx")));
    if let Some(p) = &path {
        if let Ok(ptx) = std::fs::read_to_string(p) {
            return Ok((ptx, true));
        }
    }
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    let co = CompileOptions {
        arch: Some(arch),
        options: opts,
        name: Some(kernel.to_string()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(&src, co).map_err(|e| match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => GpuError::Compile {
            kernel: kernel.to_string(),
            log: log.to_string_lossy().into_owned(),
        },
        other => GpuError::Compile {
            kernel: kernel.to_string(),
            log: format!("{other:?}"),
        },
    })?;
    let text = ptx.to_src();
    if let Some(p) = &path {
        // A cache that cannot be written only costs a recompile next time.
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        if p.parent()
            .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
            && std::fs::write(&tmp, &text).is_ok()
        {
            let _ = std::fs::rename(&tmp, p);
        }
    }
    Ok((text, false))
}

impl Gpu {
    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// A new stream on this device.
    pub fn stream(&self) -> Result<Arc<CudaStream>, GpuError> {
        Ok(self.ctx.new_stream()?)
    }

    /// The NVRTC target for this device ("sm_90").
    pub fn arch(&self) -> &'static str {
        self.arch
    }

    /// A kernel function, compiling and loading its module at first use.
    pub fn function(&self, kernel: &str, name: &str) -> Result<CudaFunction, GpuError> {
        let module = {
            let mut m = self.modules.lock().unwrap_or_else(|p| p.into_inner());
            match m.get(kernel) {
                Some(x) => x.clone(),
                None => {
                    let (ptx, _) = compile(kernel, self.arch)?;
                    let module = self.ctx.load_module(Ptx::from_src(ptx))?;
                    m.insert(kernel.to_string(), module.clone());
                    module
                }
            }
        };
        Ok(module.load_function(name)?)
    }

    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize), GpuError> {
        Ok(self.ctx.mem_get_info()?)
    }

    /// Fails with [`GpuError::OutOfMemory`] unless `need` bytes fit in 90% of the free
    /// device memory (the rest is headroom for the driver and other users).
    pub fn check_memory(&self, what: &str, need: usize) -> Result<(), GpuError> {
        let (free, _) = self.memory()?;
        check_fits(what, need, free)
    }
}

/// The rule behind [`Gpu::check_memory`], separate so it is testable without a device.
pub fn check_fits(what: &str, need: usize, free: usize) -> Result<(), GpuError> {
    if need <= free / 10 * 9 {
        Ok(())
    } else {
        Err(GpuError::OutOfMemory {
            what: what.to_string(),
            need,
            free,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_rule_keeps_headroom() {
        assert!(check_fits("x", 900, 1000).is_ok());
        let e = check_fits("MSM of 2^26 points", 901 << 20, 1000 << 20).unwrap_err();
        assert!(e.to_string().contains("MSM of 2^26 points needs 901 MiB"));
    }

    #[test]
    fn arch_names() {
        assert_eq!(arch_name((9, 0)), "sm_90");
        assert_eq!(arch_name((8, 6)), "sm_86");
    }
}

//! The CUDA runtime: the driver API and NVRTC, both loaded at run time (cudarc with
//! dynamic loading), so the project builds and runs on machines without CUDA.
//!
//! [`gpu()`] opens device 0 once per process. Kernels are compiled by NVRTC at first use
//! to a CUBIN for the device's architecture and cached on disk under the SHA-256 of
//! their inlined source, the architecture, the options and the NVRTC version
//! ([`crate::source::cache_key`]).

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;

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
    /// Each kernel file's module, or why it could not be compiled or loaded (kept, so a
    /// failing kernel costs one compile per process, not one per call).
    modules: Mutex<HashMap<String, Result<Arc<CudaModule>, GpuError>>>,
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

/// Device 0 if it is there and its kernels can be compiled (driver, device and NVRTC);
/// the error names what is missing.
pub fn usable() -> Result<&'static Gpu, GpuError> {
    let g = gpu()?;
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    Ok(g)
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
    let r = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        return Err(GpuError::Driver(format!("cuDriverGetVersion: {r:?}")));
    }
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

/// NVRTC options every kernel is compiled with (besides the architecture); ptxas's
/// resource report goes to the log.
pub fn compile_options() -> Vec<String> {
    vec![
        "-std=c++17".into(),
        "-default-device".into(),
        "--ptxas-options=-v".into(),
    ]
}

/// The NVRTC library's version, "13.5" (None where it cannot be loaded or answer).
pub fn nvrtc_version() -> Option<String> {
    if !nvrtc_present() {
        return None;
    }
    let (mut maj, mut min) = (0, 0);
    // SAFETY: the library is present; both are valid out pointers.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut maj, &mut min) };
    (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("{maj}.{min}"))
}

/// A compiled kernel file: the PTX (kept for inspection and the CI check) and the
/// CUBIN (machine code for one architecture, what the driver loads: no JIT at load
/// time, and no dependence on the driver accepting this NVRTC's PTX version).
#[derive(Clone, Debug)]
pub struct Compiled {
    /// PTX text (empty when the CUBIN came from the cache).
    pub ptx: String,
    /// The CUBIN (an ELF image).
    pub cubin: Vec<u8>,
    /// True when the CUBIN came from the disk cache.
    pub cached: bool,
    /// The compiler's log: ptxas's resource report per kernel (registers, spills,
    /// local memory); empty when cached.
    pub log: String,
}

/// The cache file of one kernel for `arch`: keyed by source, architecture, options and
/// NVRTC version.
fn cache_path(src: &str, arch: &str) -> Option<PathBuf> {
    let mut opts = compile_options();
    opts.push(format!("nvrtc {}", nvrtc_version().unwrap_or_default()));
    let key = source::cache_key(src, arch, &opts);
    cache_dir().map(|d| d.join(format!("{key}.cubin")))
}

/// Compiles one kernel file for `arch` ("sm_90"), through the disk cache unless `fresh`.
/// Needs only NVRTC, not a GPU.
pub fn compile(kernel: &str, arch: &str) -> Result<Compiled, GpuError> {
    compile_with(kernel, arch, false)
}

fn compile_with(kernel: &str, arch: &str, fresh: bool) -> Result<Compiled, GpuError> {
    let src = source::inline(kernel).map_err(GpuError::Unsupported)?;
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    let path = cache_path(&src, arch);
    if let (Some(p), false) = (&path, fresh) {
        if let Ok(cubin) = std::fs::read(p) {
            if cubin.starts_with(b"\x7fELF") {
                return Ok(Compiled {
                    ptx: String::new(),
                    cubin,
                    cached: true,
                    log: String::new(),
                });
            }
        }
    }
    let (ptx, cubin, log) = nvrtc_compile(kernel, &src, arch)?;
    if let Some(p) = &path {
        // A cache that cannot be written only costs a recompile next time.
        if p.parent()
            .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
        {
            let _ = wirespeed_util::fs::replace(p, &cubin);
        }
    }
    Ok(Compiled {
        ptx,
        cubin,
        cached: false,
        log,
    })
}

/// The text of a NUL-terminated C string buffer (up to the first NUL).
fn c_text(v: &[std::ffi::c_char]) -> String {
    let b: Vec<u8> = v
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&b).into_owned()
}

/// One NVRTC compilation to PTX and CUBIN.
fn nvrtc_compile(
    kernel: &str,
    src: &str,
    arch: &str,
) -> Result<(String, Vec<u8>, String), GpuError> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::CString;
    let fail = |log: String| GpuError::Compile {
        kernel: kernel.to_string(),
        log,
    };
    let csrc = CString::new(src).map_err(|_| fail("the source contains a NUL byte".into()))?;
    let cname = CString::new(kernel).map_err(|_| fail("bad kernel name".into()))?;
    let prog = result::create_program(&csrc, Some(&cname)).map_err(|e| fail(format!("{e:?}")))?;
    struct Destroy(sys::nvrtcProgram);
    impl Drop for Destroy {
        fn drop(&mut self) {
            // SAFETY: created above and destroyed only here.
            let _ = unsafe { result::destroy_program(self.0) };
        }
    }
    let prog = Destroy(prog);
    let mut options = compile_options();
    options.push(format!("--gpu-architecture={arch}"));
    // SAFETY: `prog` is a live program (destroyed only by the guard).
    if let Err(e) = unsafe { result::compile_program(prog.0, &options) } {
        // SAFETY: as above.
        let log = unsafe { result::get_program_log(prog.0) }
            .map(|l| c_text(&l))
            .unwrap_or_default();
        return Err(fail(format!("{e:?}\n{log}")));
    }
    // SAFETY: a live program, compiled successfully.
    let ptx = unsafe { result::get_ptx(prog.0) }
        .map(|p| c_text(&p))
        .map_err(|e| fail(format!("{e:?}")))?;
    let mut size = 0usize;
    // SAFETY: live, compiled program; valid out pointer.
    let r = unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return Err(fail(format!("no CUBIN for {arch} ({r:?})")));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: the buffer holds the `size` bytes NVRTC reported.
    let r = unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(fail(format!("CUBIN copy failed ({r:?})")));
    }
    // SAFETY: a live program, compiled successfully.
    let log = unsafe { result::get_program_log(prog.0) }
        .map(|l| c_text(&l))
        .unwrap_or_default();
    Ok((ptx, cubin, log))
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

    /// A kernel function, compiling and loading its module at first use. A module that
    /// failed to compile or load keeps failing with the same error in this process.
    pub fn function(&self, kernel: &str, name: &str) -> Result<CudaFunction, GpuError> {
        let module = {
            let mut m = self.modules.lock().unwrap_or_else(|p| p.into_inner());
            m.entry(kernel.to_string())
                .or_insert_with(|| self.load(kernel))
                .clone()?
        };
        Ok(module.load_function(name)?)
    }

    /// Compiles (or takes from the cache) and loads one kernel file.
    fn load(&self, kernel: &str) -> Result<Arc<CudaModule>, GpuError> {
        let c = compile(kernel, self.arch)?;
        match self.ctx.load_module(Ptx::from_binary(c.cubin)) {
            Ok(m) => Ok(m),
            // A cached image the driver refuses (damaged, or from another driver's
            // toolchain): compile afresh, overwrite, retry once.
            Err(_) if c.cached => {
                let c = compile_with(kernel, self.arch, true)?;
                Ok(self.ctx.load_module(Ptx::from_binary(c.cubin))?)
            }
            Err(e) => Err(GpuError::Driver(format!(
                "loading {kernel} (NVRTC {} for {}, driver CUDA {}.{}): {e:?}",
                nvrtc_version().unwrap_or_else(|| "?".into()),
                self.arch,
                self.driver_cuda_version / 1000,
                self.driver_cuda_version % 1000 / 10
            ))),
        }
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
    fn a_compile_error_carries_the_compilers_log() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found");
            return;
        }
        let e = nvrtc_compile(
            "bad.cu",
            "extern \"C\" __global__ void k() { no_such_function(); }",
            "sm_90",
        )
        .unwrap_err();
        match e {
            GpuError::Compile { kernel, log } => {
                assert_eq!(kernel, "bad.cu");
                assert!(log.contains("no_such_function"), "{log}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn arch_names() {
        assert_eq!(arch_name((9, 0)), "sm_90");
        assert_eq!(arch_name((8, 6)), "sm_86");
    }
}

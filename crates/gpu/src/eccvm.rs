//! The lane VM's GPU backend: crates/eccvm programs run one thread per input set
//! (kernels/eccvm.cuh), with the CPU backends as fallback. Both give the same outputs.

use std::fmt;

use cudarc::driver::{LaunchConfig, PushKernelArg};
use wirespeed_eccvm::{Kind, Program, RunError, Value};

use crate::backend::{Backend, Chosen};
use crate::runtime::{Gpu, GpuError};

/// Input sets below which `auto` stays on the CPU (a launch and two copies cost more
/// than the CPU lanes need for a few thousand sets of a short program).
pub const MIN_GPU_SETS: usize = 1 << 14;

/// Input sets per launch: bounds the register scratch (registers x 32 bytes per set).
const SETS_PER_LAUNCH: usize = 1 << 20;

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The inputs do not fit the program (as the CPU VM reports it).
    Run(RunError),
    /// The GPU backend could not run.
    Gpu(GpuError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Run(e) => write!(f, "{e}"),
            Error::Gpu(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

/// A validated program in the kernel's layout: two words per instruction
/// (`op | dst << 8 | a << 16`, `b | c << 16`) and eight words per constant.
#[derive(Clone, Debug)]
pub struct Packed {
    /// The instructions.
    pub code: Vec<u32>,
    /// The constant pool, raw.
    pub consts: Vec<u32>,
    /// Instruction count.
    pub instructions: u32,
    /// Registers.
    pub registers: usize,
    /// Inputs per set.
    pub inputs: usize,
    /// Output slot kinds.
    pub kinds: Vec<Kind>,
}

/// 32 little-endian bytes as eight little-endian words.
pub fn words(b: &[u8; 32]) -> [u32; 8] {
    std::array::from_fn(|i| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

impl Packed {
    /// Packs a program (already validated by its loader).
    pub fn new(p: &Program) -> Packed {
        let mut code = Vec::with_capacity(2 * p.instructions().len());
        for i in p.instructions() {
            code.push(i.op.code() as u32 | (i.dst as u32) << 8 | (i.a as u32) << 16);
            code.push(i.b as u32 | (i.c as u32) << 16);
        }
        Packed {
            code,
            consts: p.constants().iter().flat_map(words).collect(),
            instructions: p.instructions().len() as u32,
            registers: p.registers(),
            inputs: p.inputs(),
            kinds: p.output_kinds().to_vec(),
        }
    }

    /// Input sets for `inputs` values (a program without inputs runs once).
    pub fn sets(&self, inputs: &[[u8; 32]]) -> Result<usize, RunError> {
        let sets = match self.inputs {
            0 => 1,
            n => inputs.len() / n,
        };
        if sets * self.inputs == inputs.len() {
            Ok(sets)
        } else {
            Err(RunError::InputCount {
                given: inputs.len(),
                per_set: self.inputs,
                sets,
            })
        }
    }

    /// The kernel's output words (eight per slot, set-major) as values.
    pub fn values(&self, out: &[u32]) -> Vec<Value> {
        out.chunks_exact(8)
            .zip(self.kinds.iter().cycle())
            .map(|(w, k)| match k {
                Kind::Bool => Value::Bool(w[0] != 0),
                Kind::Field => {
                    let mut b = [0u8; 32];
                    for (i, x) in w.iter().enumerate() {
                        b[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
                    }
                    Value::Field(b)
                }
            })
            .collect()
    }

    /// Device bytes for a launch of `sets` sets: program, inputs, outputs, registers.
    pub fn device_bytes(&self, sets: usize) -> usize {
        4 * (self.code.len() + self.consts.len())
            + sets * 32 * (self.inputs + self.kinds.len() + self.registers)
    }
}

/// Runs `program` on every input set (set i is `inputs[i * n .. (i + 1) * n]`, n the
/// program's input count) on the chosen backend; returns the outputs set-major, as
/// [`wirespeed_eccvm::Outputs::values`] does.
pub fn run(backend: Backend, program: &Program, inputs: &[[u8; 32]]) -> Result<Vec<Value>, Error> {
    let sets = Packed::new(program).sets(inputs).map_err(Error::Run)?;
    run_sets(backend, program, sets, inputs)
}

/// [`run`] for an explicit number of sets (`inputs` must hold `sets` times the program's
/// input count), as [`Program::run_sets`].
pub fn run_sets(
    backend: Backend,
    program: &Program,
    sets: usize,
    inputs: &[[u8; 32]],
) -> Result<Vec<Value>, Error> {
    let packed = Packed::new(program);
    if sets.checked_mul(packed.inputs) != Some(inputs.len()) {
        return Err(Error::Run(RunError::InputCount {
            given: inputs.len(),
            per_set: packed.inputs,
            sets,
        }));
    }
    // Chosen first, so that `gpu` without a device fails even on no input.
    let chosen = backend.choose(sets, MIN_GPU_SETS).map_err(Error::Gpu)?;
    if sets == 0 {
        return Ok(Vec::new());
    }
    match chosen {
        Chosen::Cpu => program
            .run_sets(wirespeed_eccvm::Backend::Auto, sets, inputs)
            .map(|o| o.values().to_vec())
            .map_err(Error::Run),
        Chosen::Gpu(g) => run_gpu(g, &packed, sets, inputs).map_err(Error::Gpu),
    }
}

fn run_gpu(g: &Gpu, p: &Packed, sets: usize, inputs: &[[u8; 32]]) -> Result<Vec<Value>, GpuError> {
    let per_launch = sets.clamp(1, SETS_PER_LAUNCH);
    g.check_memory("the lane VM's buffers", p.device_bytes(per_launch))?;
    let f = g.function("eccvm.cu", "ws_eccvm_run")?;
    let s = g.stream()?;
    let code = s.clone_htod(&p.code)?;
    // A program may have no constants: keep the buffer non-empty.
    let consts = s.clone_htod(if p.consts.is_empty() {
        &[0u32; 8][..]
    } else {
        &p.consts
    })?;
    let nout = p.kinds.len();
    let mut regs = s.alloc_zeros::<u32>(p.registers * 8 * per_launch)?;
    let mut out_words = Vec::with_capacity(sets * nout * 8);
    let mut done = 0;
    while done < sets {
        let n = (sets - done).min(per_launch);
        let input_words: Vec<u32> = inputs[done * p.inputs..(done + n) * p.inputs]
            .iter()
            .flat_map(words)
            .collect();
        let din = s.clone_htod(if input_words.is_empty() {
            &[0u32; 8][..]
        } else {
            &input_words
        })?;
        let mut dout = s.alloc_zeros::<u32>(n * nout * 8)?;
        let (ninstr, ninputs, noutputs, n32) =
            (p.instructions, p.inputs as u32, nout as u32, n as u32);
        let mut l = s.launch_builder(&f);
        l.arg(&code)
            .arg(&ninstr)
            .arg(&consts)
            .arg(&din)
            .arg(&ninputs)
            .arg(&mut regs)
            .arg(&mut dout)
            .arg(&noutputs)
            .arg(&n32);
        let cfg = LaunchConfig {
            grid_dim: (n32.div_ceil(128), 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the program passed the loader (every index in range); the buffers hold
        // n sets of inputs, outputs and registers, as the kernel indexes them.
        unsafe { l.launch(cfg) }?;
        out_words.extend(s.clone_dtoh(&dout)?);
        done += n;
    }
    s.synchronize()?;
    Ok(p.values(&out_words))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_backend_matches_the_vm_and_counts_are_checked() {
        let bytes = wirespeed_eccvm::rfc8032::decode_program("strict", 'a').unwrap();
        let p = Program::parse(bytes).unwrap();
        let inputs: Vec<[u8; 32]> = (0..5u8).map(|i| [i; 32]).collect();
        let got = run(Backend::Cpu, &p, &inputs).unwrap();
        let want = p.run(wirespeed_eccvm::Backend::Serial, &inputs).unwrap();
        assert_eq!(got, want.values());
        if p.inputs() > 1 {
            assert!(matches!(
                run(Backend::Cpu, &p, &inputs[..1]),
                Err(Error::Run(_))
            ));
        }
    }
}

//! The lane VM on the device: crates/eccvm programs run one thread per input set
//! (kernels/eccvm.cuh), giving the outputs of the CPU backends. Choosing between them
//! and falling back is the engine's (crates/engine).

use cudarc::driver::{LaunchConfig, PushKernelArg};
use wirespeed_eccvm::{Kind, Program, RunError, Value};

use crate::runtime::{Gpu, GpuError};

/// Input sets per launch: bounds the register scratch (registers x 32 bytes per set).
const SETS_PER_LAUNCH: usize = 1 << 20;

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

/// Runs `program` on `sets` input sets on the device (set i is
/// `inputs[i * n .. (i + 1) * n]`, n the program's input count; `inputs` must hold
/// exactly `sets * n` values); returns the outputs set-major, as
/// [`wirespeed_eccvm::Outputs::values`] does.
pub fn run_sets(
    g: &Gpu,
    program: &Program,
    sets: usize,
    inputs: &[[u8; 32]],
) -> Result<Vec<Value>, GpuError> {
    let packed = Packed::new(program);
    if sets.checked_mul(packed.inputs) != Some(inputs.len()) {
        return Err(GpuError::Unsupported(format!(
            "{} input values for {sets} sets of {}",
            inputs.len(),
            packed.inputs
        )));
    }
    if sets == 0 {
        return Ok(Vec::new());
    }
    run_gpu(g, &packed, sets, inputs)
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

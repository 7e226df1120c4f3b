//! The interpreter: runs a validated program over many input sets, N sets per step on an
//! N-lane backend. Every lane runs the same pre-decoded operations in lockstep on its own
//! inputs; a last group with fewer than N sets fills its spare lanes with copies of its
//! last set and drops their results.
//!
//! Field elements stay in the backend's representation (reduced limbs); input bytes are
//! converted on `load`, and canonical encodings are computed only where an instruction
//! needs a canonical value (`eq`, `iszero`, `parity`, `outf`). The program was validated
//! at load time, so the loop needs no kind or range checks: registers are `u8` indices
//! into files of 256 entries.

use std::fmt;

use wirespeed_field::cpu::CpuFeatures;
use wirespeed_field::Fe51;

use crate::code::Op;
use crate::error::RunError;
use crate::lanes::{LaneField, Lanes};
use crate::program::{lt_le, Kind, Program};

/// One output of one input set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A field slot: the canonical 32-byte little-endian encoding.
    Field([u8; 32]),
    /// A bool slot.
    Bool(bool),
}

impl Value {
    /// The kind of slot this value fills.
    pub fn kind(&self) -> Kind {
        match self {
            Value::Field(_) => Kind::Field,
            Value::Bool(_) => Kind::Bool,
        }
    }
}

impl fmt::Display for Value {
    /// As `python3 -m wirespeed_trace run` prints it: 64 hex digits (the little-endian
    /// bytes in order) or `00`/`01`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Field(b) => b.iter().try_for_each(|x| write!(f, "{x:02x}")),
            Value::Bool(v) => f.write_str(if *v { "01" } else { "00" }),
        }
    }
}

/// The outputs of a run: for each input set, one [`Value`] per output slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outputs {
    per_set: usize,
    values: Vec<Value>,
}

impl Outputs {
    /// Input sets run.
    pub fn sets(&self) -> usize {
        self.values.len() / self.per_set
    }

    /// The outputs of set `i`, in slot order (panics if `i >= sets()`, like indexing).
    pub fn set(&self, i: usize) -> &[Value] {
        &self.values[i * self.per_set..(i + 1) * self.per_set]
    }

    /// The outputs set by set.
    pub fn iter(&self) -> impl Iterator<Item = &[Value]> {
        self.values.chunks_exact(self.per_set)
    }

    /// All values, set-major.
    pub fn values(&self) -> &[Value] {
        &self.values
    }
}

/// One line of `python3 -m wirespeed_trace run` output: the values separated by spaces.
pub fn format_line(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Program {
    /// Runs the program on `inputs.len() / inputs()` input sets (set i is
    /// `inputs[i * n .. (i + 1) * n]` with n = [`Program::inputs`]). A program without
    /// inputs runs once per call of [`Program::run_sets`] instead.
    pub fn run(&self, backend: Lanes, inputs: &[[u8; 32]]) -> Result<Outputs, RunError> {
        let sets = match self.inputs() {
            0 => 1,
            n => inputs.len() / n,
        };
        self.run_sets(backend, sets, inputs)
    }

    /// Runs the program on `sets` input sets; `inputs` must hold exactly
    /// `sets * inputs()` values.
    ///
    /// Convenience wrapper: [`Program::run_sets_with`] this process's detected features.
    pub fn run_sets(
        &self,
        backend: Lanes,
        sets: usize,
        inputs: &[[u8; 32]],
    ) -> Result<Outputs, RunError> {
        self.run_sets_with(backend, CpuFeatures::get(), sets, inputs)
    }

    /// [`Program::run_sets`] with the backend checked against (and `Auto` resolved on)
    /// the CPU features `cpu` instead of this process's detection.
    pub fn run_sets_with(
        &self,
        backend: Lanes,
        cpu: &CpuFeatures,
        sets: usize,
        inputs: &[[u8; 32]],
    ) -> Result<Outputs, RunError> {
        let per_set = self.output_kinds().len();
        let total = sets
            .checked_mul(per_set)
            .ok_or(RunError::TooManySets(sets))?;
        // Checked before allocating: `inputs` must match `sets` (unless the program
        // takes no inputs, the caller's memory bounds `sets` through `inputs`).
        self.check_inputs(sets, inputs)?;
        let mut values = vec![Value::Bool(false); total];
        self.run_into_with(backend, cpu, sets, inputs, &mut values)?;
        Ok(Outputs { per_set, values })
    }

    fn check_inputs(&self, sets: usize, inputs: &[[u8; 32]]) -> Result<(), RunError> {
        let ok = sets
            .checked_mul(self.inputs())
            .is_some_and(|n| n == inputs.len());
        if ok {
            Ok(())
        } else {
            Err(RunError::InputCount {
                given: inputs.len(),
                per_set: self.inputs(),
                sets,
            })
        }
    }

    /// [`Program::run_sets`] into a caller's buffer of exactly `sets * outputs` values
    /// (set-major); no allocation besides the register file.
    ///
    /// Convenience wrapper: [`Program::run_into_with`] this process's detected features.
    pub fn run_into(
        &self,
        backend: Lanes,
        sets: usize,
        inputs: &[[u8; 32]],
        out: &mut [Value],
    ) -> Result<(), RunError> {
        self.run_into_with(backend, CpuFeatures::get(), sets, inputs, out)
    }

    /// [`Program::run_into`] with the backend checked against (and `Auto` resolved on)
    /// the CPU features `cpu`: a backend `cpu` lacks is
    /// [`RunError::BackendUnavailable`], never an unsupported instruction.
    pub fn run_into_with(
        &self,
        backend: Lanes,
        cpu: &CpuFeatures,
        sets: usize,
        inputs: &[[u8; 32]],
        out: &mut [Value],
    ) -> Result<(), RunError> {
        self.check_inputs(sets, inputs)?;
        let per_set = self.output_kinds().len();
        let needed = sets
            .checked_mul(per_set)
            .ok_or(RunError::TooManySets(sets))?;
        if needed != out.len() {
            return Err(RunError::OutputLen {
                given: out.len(),
                needed,
            });
        }
        if !backend.available_on(cpu) {
            return Err(RunError::BackendUnavailable(backend));
        }
        let job = Job {
            code: &self.code,
            constants: self.constants(),
            n_in: self.inputs(),
            n_out: per_set,
            inputs,
            sets,
        };
        match backend.resolve_on(cpu) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `available_on(cpu)` (or `resolve_on(cpu)`) confirmed AVX2, and
            // `cpu` never claims more than this CPU has.
            Lanes::Avx2 => unsafe { run_avx2(&job, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `available_on(cpu)` (or `resolve_on(cpu)`) confirmed AVX-512F,
            // IFMA and DQ, and `cpu` never claims more than this CPU has.
            Lanes::Ifma | Lanes::Ifma4 => unsafe { run_ifma(&job, out) },
            // SAFETY: the serial backend needs no special instructions.
            _ => unsafe { run_all::<Fe51>(&job, out) },
        }
        Ok(())
    }
}

/// What a run needs, borrowed from the program and the caller.
struct Job<'a> {
    code: &'a [Op],
    constants: &'a [[u8; 32]],
    n_in: usize,
    n_out: usize,
    inputs: &'a [[u8; 32]],
    sets: usize,
}

/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2(job: &Job<'_>, out: &mut [Value]) {
    // SAFETY: AVX2 is enabled here and present (caller's contract).
    unsafe { run_all::<wirespeed_field::avx2::Fe26x4>(job, out) }
}

/// # Safety
/// The CPU must support AVX-512F, AVX-512 IFMA and AVX-512DQ.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512dq")]
unsafe fn run_ifma(job: &Job<'_>, out: &mut [Value]) {
    // SAFETY: the features are enabled here and present (caller's contract).
    unsafe { run_all::<wirespeed_field::ifma::Fe51x8>(job, out) }
}

/// The most lanes any backend has.
const MAX_LANES: usize = 8;

/// low(raw, nbits) mod p as a reduced [`Fe51`]: bits 0..254 load directly (limbs
/// < 2^51); with nbits = 256, bit 255 adds 2^255 = 19 (mod p).
#[inline]
fn load_fe(raw: &[u8; 32], nbits: u16) -> Fe51 {
    let m = masked(raw, nbits);
    let mut fe = Fe51::from_bytes(&m);
    if m[31] >> 7 == 1 {
        fe.0[0] += 19;
    }
    fe
}

/// raw mod 2^nbits (1 <= nbits <= 256).
#[inline]
fn masked(raw: &[u8; 32], nbits: u16) -> [u8; 32] {
    let mut m = *raw;
    let n = nbits as usize;
    for (i, byte) in m.iter_mut().enumerate() {
        let lo = 8 * i;
        if lo >= n {
            *byte = 0;
        } else if n - lo < 8 {
            *byte &= (1u8 << (n - lo)) - 1;
        }
    }
    m
}

/// Runs every group of `F::N` sets.
///
/// # Safety
/// The CPU must support `F`'s instruction set.
#[inline(always)]
unsafe fn run_all<F: LaneField>(job: &Job<'_>, out: &mut [Value]) {
    if job.sets == 0 {
        return;
    }
    let zeros = [Fe51::ZERO; MAX_LANES];
    // SAFETY: forwarded contract.
    let zero = unsafe { F::pack(&zeros[..F::N]) };
    let consts: Vec<F> = job
        .constants
        .iter()
        .map(|k| {
            // Only `const` reads these, and only entries below p (validated); others
            // load as some element and are never read.
            let v = [Fe51::from_bytes(k); MAX_LANES];
            // SAFETY: forwarded contract.
            unsafe { F::pack(&v[..F::N]) }
        })
        .collect();
    let mut regs: Box<[F; 256]> = match vec![zero; 256].into_boxed_slice().try_into() {
        Ok(b) => b,
        Err(_) => unreachable!("a vector of 256 entries converts"),
    };
    let mut bregs = [0u8; 256];
    let mut first = 0;
    while first < job.sets {
        let lanes = (job.sets - first).min(F::N);
        // SAFETY: forwarded contract.
        unsafe { run_group(job, &consts, &mut regs, &mut bregs, first, lanes, out) };
        first += lanes;
    }
}

/// Runs the program once on sets `first .. first + lanes` (lanes <= N; spare lanes
/// repeat the last set).
///
/// # Safety
/// The CPU must support `F`'s instruction set.
#[inline(always)]
unsafe fn run_group<F: LaneField>(
    job: &Job<'_>,
    consts: &[F],
    regs: &mut [F; 256],
    bregs: &mut [u8; 256],
    first: usize,
    lanes: usize,
    out: &mut [Value],
) {
    let n = F::N;
    let full: u8 = ((1u16 << n) - 1) as u8;
    let raw = |j: usize, input: u16| -> &[u8; 32] {
        let set = first + j.min(lanes - 1);
        &job.inputs[set * job.n_in + input as usize]
    };
    let mut buf = [Fe51::ZERO; MAX_LANES];
    // The canonical encodings of a register's lanes.
    let canon = |x: &F, buf: &mut [Fe51; MAX_LANES]| -> [[u8; 32]; MAX_LANES] {
        x.unpack(&mut buf[..n]);
        let mut enc = [[0u8; 32]; MAX_LANES];
        for j in 0..n {
            enc[j] = buf[j].to_bytes();
        }
        enc
    };
    let lane_mask = |f: &dyn Fn(usize) -> bool| -> u8 {
        let mut m = 0u8;
        for j in 0..n {
            m |= (f(j) as u8) << j;
        }
        m
    };
    for op in job.code {
        match *op {
            Op::SqrN { dst, a, n: k } => {
                let mut x = regs[a as usize];
                for _ in 0..k {
                    x = x.sqr_r();
                }
                regs[dst as usize] = x;
            }
            Op::Sqr { dst, a } => regs[dst as usize] = regs[a as usize].sqr_r(),
            Op::Mul { dst, a, b } => regs[dst as usize] = regs[a as usize].mul_r(&regs[b as usize]),
            Op::Add { dst, a, b } => regs[dst as usize] = regs[a as usize].add_r(&regs[b as usize]),
            Op::Sub { dst, a, b } => regs[dst as usize] = regs[a as usize].sub_r(&regs[b as usize]),
            Op::Neg { dst, a } => regs[dst as usize] = regs[a as usize].neg_r(),
            Op::Load { dst, input, nbits } => {
                for j in 0..n {
                    buf[j] = load_fe(raw(j, input), nbits);
                }
                // SAFETY: forwarded contract.
                regs[dst as usize] = unsafe { F::pack(&buf[..n]) };
            }
            Op::Bit { dst, input, bit } => {
                let (byte, shift) = ((bit / 8) as usize, bit % 8);
                bregs[dst as usize] = lane_mask(&|j| (raw(j, input)[byte] >> shift) & 1 == 1);
            }
            Op::RawLt {
                dst,
                input,
                konst,
                nbits,
            } => {
                let k = &job.constants[konst as usize];
                bregs[dst as usize] = lane_mask(&|j| lt_le(&masked(raw(j, input), nbits), k));
            }
            Op::Const { dst, konst } => regs[dst as usize] = consts[konst as usize],
            Op::BConst { dst, value } => bregs[dst as usize] = if value { full } else { 0 },
            Op::Eq { dst, a, b } => {
                let x = canon(&regs[a as usize], &mut buf);
                let y = canon(&regs[b as usize], &mut buf);
                bregs[dst as usize] = lane_mask(&|j| x[j] == y[j]);
            }
            Op::IsZero { dst, a } => {
                let x = canon(&regs[a as usize], &mut buf);
                bregs[dst as usize] = lane_mask(&|j| x[j] == [0u8; 32]);
            }
            Op::Parity { dst, a } => {
                let x = canon(&regs[a as usize], &mut buf);
                bregs[dst as usize] = lane_mask(&|j| x[j][0] & 1 == 1);
            }
            Op::And { dst, a, b } => bregs[dst as usize] = bregs[a as usize] & bregs[b as usize],
            Op::Or { dst, a, b } => bregs[dst as usize] = bregs[a as usize] | bregs[b as usize],
            Op::Xor { dst, a, b } => bregs[dst as usize] = bregs[a as usize] ^ bregs[b as usize],
            Op::Not { dst, a } => bregs[dst as usize] = !bregs[a as usize] & full,
            Op::Select { dst, cond, a, b } => {
                regs[dst as usize] =
                    F::select(bregs[cond as usize], &regs[a as usize], &regs[b as usize])
            }
            Op::OutF { src, slot } => {
                let x = canon(&regs[src as usize], &mut buf);
                for j in 0..lanes {
                    out[(first + j) * job.n_out + slot as usize] = Value::Field(x[j]);
                }
            }
            Op::OutB { src, slot } => {
                let m = bregs[src as usize];
                for j in 0..lanes {
                    out[(first + j) * job.n_out + slot as usize] = Value::Bool((m >> j) & 1 == 1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_errors_are_typed() {
        let p = Program::parse(crate::rfc8032::program("checks-strict").unwrap()).unwrap();
        assert_eq!(
            p.run(Lanes::Serial, &[[0; 32]; 4]).unwrap_err(),
            RunError::InputCount {
                given: 4,
                per_set: 3,
                sets: 1
            }
        );
        let mut out = vec![Value::Bool(false); 7];
        assert_eq!(
            p.run_into(Lanes::Serial, 1, &[[0; 32]; 3], &mut out)
                .unwrap_err(),
            RunError::OutputLen {
                given: 7,
                needed: 8
            }
        );
        assert_eq!(p.run(Lanes::Auto, &[]).unwrap().sets(), 0);
        let o = p.run(Lanes::Auto, &[[0; 32]; 6]).unwrap();
        assert_eq!(o.sets(), 2);
        assert_eq!(o.set(1).len(), 8);
        assert_eq!(format_line(&o.set(0)[..2]), "00 00");
    }

    #[test]
    fn masking_keeps_the_low_bits() {
        let raw = [0xffu8; 32];
        for n in 1..=256u16 {
            let m = masked(&raw, n);
            let ones: u32 = m.iter().map(|b| b.count_ones()).sum();
            assert_eq!(ones, n as u32);
        }
    }

    #[test]
    fn load_256_bits_folds_the_top_bit() {
        // 2^255 = 19 (mod p).
        let mut raw = [0u8; 32];
        raw[31] = 0x80;
        let mut nineteen = [0u8; 32];
        nineteen[0] = 19;
        assert_eq!(load_fe(&raw, 256).to_bytes(), nineteen);
        assert_eq!(load_fe(&raw, 255).to_bytes(), [0u8; 32]);
        // 2^256 - 1 = 2^255 - 1 + 2^255 = (p + 18) + (p + 19) = 37 (mod p).
        let mut t = [0u8; 32];
        t[0] = 37;
        assert_eq!(load_fe(&[0xff; 32], 256).to_bytes(), t);
    }
}

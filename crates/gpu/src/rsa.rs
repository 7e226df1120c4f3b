//! RSA on the device: batched private operations for one key (CRT, constant time, the
//! kernels of kernels/rsa.cu) and batched powers and products modulo a public modulus
//! (the group operations of VDF proof generation), each giving the bytes the CPU path
//! gives. Choosing between the two and falling back is the engine's (crates/engine).
//!
//! Private operations follow `wirespeed_rsa::PrivateKey::raw` exactly: inputs longer
//! than the modulus or not below it fail with [`ItemError::OutOfRange`] (checked on the
//! host, before anything is sent), and every result from the GPU is raised to the public
//! exponent and compared with its input before it is released, as the CPU path does
//! (a mismatch is [`ItemError::FaultDetected`] for that item). The key comes as a
//! [`CrtKey`] (its numbers only; the engine builds it from a `wirespeed_rsa`
//! key), so this crate depends on no RSA crate.
//!
//! Transfers: items are packed limb-major (limb j of item i at `j * stride + i`, so the
//! threads of a warp read neighbouring words) into pinned host buffers, and chunks of
//! [`CHUNK`] items alternate between two streams, so one chunk's copies overlap the
//! other's kernel.

use cudarc::driver::{CudaSlice, LaunchConfig, PinnedHostSlice, PushKernelArg};
use num_bigint::BigUint;
use rayon::prelude::*;

use crate::{Gpu, GpuError};

/// A private key as the kernels take it: the public modulus and exponent (to check
/// every result before it is released) and the CRT parameters (secret).
#[derive(Clone)]
pub struct CrtKey {
    /// The modulus n = p q.
    pub n: BigUint,
    /// The public exponent.
    pub e: BigUint,
    /// The first prime (the one the CRT recombination reduces modulo).
    pub p: BigUint,
    /// The second prime.
    pub q: BigUint,
    /// d mod (p - 1).
    pub dp: BigUint,
    /// d mod (q - 1).
    pub dq: BigUint,
    /// q^(-1) mod p.
    pub qinv: BigUint,
}

impl std::fmt::Debug for CrtKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CrtKey {{ {}-bit n, .. }}", self.n.bits())
    }
}

impl CrtKey {
    /// Modulus size in bits.
    pub fn bits(&self) -> usize {
        self.n.bits() as usize
    }

    /// Modulus size in bytes (the length of every result).
    pub fn size(&self) -> usize {
        self.bits().div_ceil(8)
    }
}

/// Why one input of a private batch has no result (the CPU path's errors of the same
/// names: `wirespeed_rsa::RsaError::OutOfRange` and `FaultDetected`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemError {
    /// The input is longer than the modulus or not below it.
    OutOfRange,
    /// The result failed its check against the public key (nothing is released).
    FaultDetected,
}

/// Fewest items per kernel launch; consecutive chunks alternate between two streams.
/// A launch is sized to the device ([`chunk_items`]) so that it fills every SM.
pub const CHUNK: usize = 8192;

/// Items per launch on a device with `sm_count` SMs: 1024 per SM (several waves of
/// 64-thread blocks at the occupancy these register-heavy kernels reach), at least
/// [`CHUNK`].
pub fn chunk_items(sm_count: i32) -> usize {
    (sm_count.max(1) as usize * 1024).max(CHUNK)
}

/// Threads per block (one item per thread).
const THREADS: u32 = 64;

/// The kernel file.
const KERNEL_FILE: &str = "rsa.cu";

/// Limbs (32-bit) of one CRT half for a modulus size: 32, 48, 64 for RSA-2048, 3072,
/// 4096; the kernels exist for these only.
pub fn half_limbs(bits: usize) -> Option<usize> {
    match bits {
        2048 => Some(32),
        3072 => Some(48),
        4096 => Some(64),
        _ => None,
    }
}

/// x as `n` little-endian 32-bit limbs (x must fit).
pub(crate) fn limbs(x: &BigUint, n: usize) -> Vec<u32> {
    let mut v = x.to_u32_digits();
    debug_assert!(v.len() <= n, "value wider than {n} limbs");
    v.resize(n, 0);
    v
}

/// Big-endian bytes of little-endian limbs, the last `len` bytes of the full width.
pub(crate) fn limbs_to_be(l: &[u32], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 * l.len());
    for w in l.iter().rev() {
        out.extend_from_slice(&w.to_be_bytes());
    }
    out.split_off(out.len().saturating_sub(len))
}

/// R^2 mod m for R = 2^(32 n): the one constant the kernels' Montgomery arithmetic needs.
pub(crate) fn r2_mod(m: &BigUint, n: usize) -> BigUint {
    (BigUint::from(1u8) << (64 * n)) % m
}

/// The key block of kernels/rsa.cuh: p, q, dp, dq, qinv, R^2 mod p, R^2 mod q, `n`
/// limbs each.
pub(crate) fn key_block(k: &CrtKey, n: usize) -> Vec<u32> {
    let mut v = Vec::with_capacity(7 * n);
    for x in [&k.p, &k.q, &k.dp, &k.dq, &k.qinv] {
        v.extend(limbs(x, n));
    }
    v.extend(limbs(&r2_mod(&k.p, n), n));
    v.extend(limbs(&r2_mod(&k.q, n), n));
    v
}

/// Item-major words (`words` per item) to limb-major with this stride (>= the item
/// count; the padding items are zero).
pub(crate) fn to_limb_major(items: &[u32], words: usize, stride: usize, dst: &mut [u32]) {
    let count = items.len() / words;
    debug_assert!(count <= stride && dst.len() >= words * stride);
    for j in 0..words {
        let row = &mut dst[j * stride..(j + 1) * stride];
        for (i, d) in row.iter_mut().enumerate() {
            *d = if i < count { items[i * words + j] } else { 0 };
        }
    }
}

/// The first `count` items of a limb-major buffer, appended item-major to `out`.
pub(crate) fn from_limb_major(
    src: &[u32],
    words: usize,
    stride: usize,
    count: usize,
    out: &mut Vec<u32>,
) {
    for i in 0..count {
        out.extend((0..words).map(|j| src[j * stride + i]));
    }
}

/// The host side of a batch of private operations: the inputs checked and packed.
pub(crate) struct CrtBatch {
    /// Limbs of one CRT half.
    pub n: usize,
    /// The key block (secret).
    pub key: Vec<u32>,
    /// The valid inputs, 2n limbs each, item-major.
    pub items: Vec<u32>,
    /// Per input: its index among the valid ones, or its error.
    pub slots: Vec<Result<usize, ItemError>>,
}

impl Drop for CrtBatch {
    fn drop(&mut self) {
        // The key block holds the secret exponents; do not leave it in freed memory.
        for w in self.key.iter_mut() {
            // SAFETY: `w` is a valid, aligned, exclusive reference.
            unsafe { std::ptr::write_volatile(w, 0) };
        }
    }
}

/// Checks every input as `PrivateKey::raw` does and packs the valid ones.
pub(crate) fn crt_prepare(key: &CrtKey, inputs: &[&[u8]]) -> Result<CrtBatch, GpuError> {
    let n = half_limbs(key.bits())
        .ok_or_else(|| GpuError::Unsupported(format!("{}-bit RSA modulus", key.bits())))?;
    let crt = key;
    // The kernels hold each prime in n limbs (Montgomery radix 2^(32 n)): a key with
    // unbalanced primes does not fit them.
    if crt.p.bits() > 32 * n as u64 || crt.q.bits() > 32 * n as u64 {
        return Err(GpuError::Unsupported(format!(
            "RSA-{} key with a {}-bit and a {}-bit prime (the kernels take primes of at most {} bits)",
            key.bits(),
            crt.p.bits(),
            crt.q.bits(),
            32 * n
        )));
    }
    let mut items = Vec::new();
    let mut valid = 0;
    let slots = inputs
        .iter()
        .map(|m| {
            let v = BigUint::from_bytes_be(m);
            if m.len() > key.size() || v >= key.n {
                return Err(ItemError::OutOfRange);
            }
            items.extend(limbs(&v, 2 * n));
            valid += 1;
            Ok(valid - 1)
        })
        .collect();
    Ok(CrtBatch {
        n,
        key: key_block(crt, n),
        items,
        slots,
    })
}

/// Unpacks the results (2n limbs per valid input, item-major) and checks each against
/// the public key: s^e must give the input back, else nothing is released for it.
pub(crate) fn crt_finish(
    key: &CrtKey,
    inputs: &[&[u8]],
    batch: &CrtBatch,
    results: &[u32],
) -> Vec<Result<Vec<u8>, ItemError>> {
    let words = 2 * batch.n;
    batch
        .slots
        .par_iter()
        .zip(inputs.par_iter())
        .map(|(slot, m)| {
            let k = (*slot)?;
            let s = limbs_to_be(&results[k * words..(k + 1) * words], key.size());
            // s^e mod n, variable time (public data), must give the input back.
            let v = BigUint::from_bytes_be(&s);
            if v < key.n && v.modpow(&key.e, &key.n) == BigUint::from_bytes_be(m) {
                Ok(s)
            } else {
                Err(ItemError::FaultDetected)
            }
        })
        .collect()
}

/// m^d mod n for every input on the device, as `wirespeed_rsa::PrivateKey::raw` would
/// give it: one result per input, in order, each exactly [`CrtKey::size`] bytes or the
/// error the CPU path gives (inputs not below n: [`ItemError::OutOfRange`]; a result
/// failing its check against the public key: [`ItemError::FaultDetected`]). The outer error is the
/// GPU's, also for keys its kernels do not take (sizes other than 2048, 3072, 4096 bits,
/// unbalanced primes).
pub fn private_many(
    g: &Gpu,
    key: &CrtKey,
    inputs: &[&[u8]],
) -> Result<Vec<Result<Vec<u8>, ItemError>>, GpuError> {
    let batch = crt_prepare(key, inputs)?;
    let count = batch.items.len() / (2 * batch.n);
    let job = Job {
        kernel: format!("ws_rsa_crt_{}", batch.n),
        what: format!("{count} RSA-{} private operations", 64 * batch.n),
        consts: &batch.key,
        secret_consts: true,
        in_words: 2 * batch.n,
        out_words: 2 * batch.n,
        n: batch.n,
        params: Vec::new(),
    };
    let out = run_batch(g, &job, &batch.items)?;
    Ok(crt_finish(key, inputs, &batch, &out))
}

/// Widest modulus of the GPU's public kernels (64 limbs of 32 bits).
pub const GPU_MAX_MODULUS_BITS: usize = 2048;

/// Checks that the kernels take modulus `m` (odd, 3 to [`GPU_MAX_MODULUS_BITS`] bits);
/// returns its width in bits.
fn public_modulus(m: &BigUint) -> Result<usize, GpuError> {
    let bits = m.bits() as usize;
    if !m.bit(0) || bits < 2 {
        return Err(GpuError::Unsupported(
            "an even modulus or one below 3".into(),
        ));
    }
    if bits > GPU_MAX_MODULUS_BITS {
        return Err(GpuError::Unsupported(format!(
            "{bits}-bit modulus (the GPU kernels take up to {GPU_MAX_MODULUS_BITS} bits)"
        )));
    }
    Ok(bits)
}

/// The GPU kernel width (32-bit limbs) for a modulus of `bits` bits: 32, 48 or 64.
fn gpu_limbs(bits: usize) -> usize {
    match bits {
        0..=1024 => 32,
        1025..=1536 => 48,
        _ => 64,
    }
}

/// The modulus block of kernels/modexp.cuh: m, then R^2 mod m.
fn modulus_block(m: &BigUint, n: usize) -> Vec<u32> {
    let mut v = limbs(m, n);
    v.extend(limbs(&r2_mod(m, n), n));
    v
}

/// bases\[i\]^exponents\[i\] mod m for every i on the device (bases big-endian, of any
/// length, reduced modulo m here; x^0 = 1), each result exactly as many bytes as m.
/// Every item runs over the longest exponent's bits. The lists must be of one length.
pub fn modexp_many(
    g: &Gpu,
    m: &BigUint,
    bases: &[&[u8]],
    exps: &[BigUint],
) -> Result<Vec<Vec<u8>>, GpuError> {
    if bases.len() != exps.len() {
        return Err(GpuError::Unsupported(format!(
            "{} bases but {} exponents",
            bases.len(),
            exps.len()
        )));
    }
    let bits = public_modulus(m)?;
    let n = gpu_limbs(bits);
    let ebits = exps.iter().map(|e| e.bits() as usize).max().unwrap_or(0);
    let elimbs = ebits.div_ceil(32).max(1);
    let mut items = Vec::with_capacity(bases.len() * (n + elimbs));
    for (b, e) in bases.iter().zip(exps) {
        items.extend(limbs(&(BigUint::from_bytes_be(b) % m), n));
        items.extend(limbs(e, elimbs));
    }
    let consts = modulus_block(m, n);
    let job = Job {
        kernel: format!("ws_modexp_{n}"),
        what: format!("{} modular powers", bases.len()),
        consts: &consts,
        secret_consts: false,
        in_words: n + elimbs,
        out_words: n,
        n,
        params: vec![elimbs as u32, ebits as u32],
    };
    let len = bits.div_ceil(8);
    Ok(run_batch(g, &job, &items)?
        .chunks(n)
        .map(|r| limbs_to_be(r, len))
        .collect())
}

/// a\[i\] b\[i\] mod m for every i on the device (big-endian, of any length, reduced
/// modulo m here), each result exactly as many bytes as m. The lists must be of one
/// length.
pub fn modmul_many(
    g: &Gpu,
    m: &BigUint,
    a: &[&[u8]],
    b: &[&[u8]],
) -> Result<Vec<Vec<u8>>, GpuError> {
    if a.len() != b.len() {
        return Err(GpuError::Unsupported(format!(
            "{} left operands but {} right operands",
            a.len(),
            b.len()
        )));
    }
    let bits = public_modulus(m)?;
    let n = gpu_limbs(bits);
    let mut items = Vec::with_capacity(a.len() * 2 * n);
    for (x, y) in a.iter().zip(b) {
        items.extend(limbs(&(BigUint::from_bytes_be(x) % m), n));
        items.extend(limbs(&(BigUint::from_bytes_be(y) % m), n));
    }
    let consts = modulus_block(m, n);
    let job = Job {
        kernel: format!("ws_modmul_{n}"),
        what: format!("{} modular products", a.len()),
        consts: &consts,
        secret_consts: false,
        in_words: 2 * n,
        out_words: n,
        n,
        params: Vec::new(),
    };
    let len = bits.div_ceil(8);
    Ok(run_batch(g, &job, &items)?
        .chunks(n)
        .map(|r| limbs_to_be(r, len))
        .collect())
}

/// One batched launch sequence on kernels/rsa.cu.
struct Job<'a> {
    /// The entry point, e.g. "ws_rsa_crt_32".
    kernel: String,
    /// What the batch is, for memory errors.
    what: String,
    /// The block shared by every item (key or modulus), its first argument.
    consts: &'a [u32],
    /// Whether `consts` is secret (zeroed on the device after use).
    secret_consts: bool,
    /// Words per item in and out.
    in_words: usize,
    out_words: usize,
    /// The kernel's limb count (sizes its local memory).
    n: usize,
    /// Arguments after (consts, in, out, count, stride).
    params: Vec<u32>,
}

/// The buffers of one stream.
struct Lane {
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
    host_in: PinnedHostSlice<u32>,
    host_out: PinnedHostSlice<u32>,
    dev_in: CudaSlice<u32>,
    dev_out: CudaSlice<u32>,
    /// The item range whose results are on their way to `host_out`.
    pending: Option<std::ops::Range<usize>>,
}

/// Runs `items` (item-major, `job.in_words` each) through the kernel in chunks of
/// [`CHUNK`] on two streams; returns the results item-major (`job.out_words` each).
fn run_batch(g: &Gpu, job: &Job, items: &[u32]) -> Result<Vec<u32>, GpuError> {
    let count = items.len() / job.in_words;
    let mut out = Vec::with_capacity(count * job.out_words);
    if count == 0 {
        return Ok(out);
    }
    if count > u32::MAX as usize / 2 {
        return Err(GpuError::Unsupported(format!("{count} items in one batch")));
    }
    let f = g.function(KERNEL_FILE, &job.kernel)?;
    let chunk = chunk_items(g.sm_count).min(count);
    let lanes_n = if count > chunk { 2 } else { 1 };
    // Device memory: the shared block, each lane's input and output, and the local
    // memory (the window table and operands, about 28 n words a thread) the driver
    // reserves for every thread that can be resident.
    let resident = g.sm_count.max(1) as usize * 2048;
    let need = 4
        * (job.consts.len()
            + lanes_n * chunk * (job.in_words + job.out_words)
            + resident * 28 * job.n);
    g.check_memory(&job.what, need)?;
    let ctx = g.context();
    let mut lanes = Vec::with_capacity(lanes_n);
    for _ in 0..lanes_n {
        let stream = g.stream()?;
        // SAFETY: both host buffers are written in full (input) or by a device copy
        // (output) before they are read.
        let (host_in, host_out) = unsafe {
            (
                ctx.alloc_pinned::<u32>(chunk * job.in_words)?,
                ctx.alloc_pinned_with_flags::<u32>(chunk * job.out_words, 0)?,
            )
        };
        lanes.push(Lane {
            dev_in: stream.alloc_zeros::<u32>(chunk * job.in_words)?,
            dev_out: stream.alloc_zeros::<u32>(chunk * job.out_words)?,
            stream,
            host_in,
            host_out,
            pending: None,
        });
    }
    let mut consts = lanes[0].stream.clone_htod(job.consts)?;
    let result = run_chunks(&f, job, items, chunk, &mut lanes, &consts, &mut out);
    // Whatever happened, every lane finishes before the shared block is wiped (when it
    // is secret) and freed: no kernel still reads it, and no key material is left in
    // device memory that the next allocation could hand out.
    let mut first_err = result.err();
    for l in &lanes {
        if let Err(e) = l.stream.synchronize() {
            first_err.get_or_insert(e.into());
        }
    }
    if job.secret_consts {
        let wiped = lanes[0]
            .stream
            .memset_zeros(&mut consts)
            .and_then(|_| lanes[0].stream.synchronize());
        if let Err(e) = wiped {
            first_err.get_or_insert(e.into());
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The chunk loop of [`run_batch`]: each chunk is packed into its lane's pinned buffer,
/// copied, run and copied back on the lane's stream; results are collected in order.
fn run_chunks(
    f: &cudarc::driver::CudaFunction,
    job: &Job,
    items: &[u32],
    chunk: usize,
    lanes: &mut [Lane],
    consts: &CudaSlice<u32>,
    out: &mut Vec<u32>,
) -> Result<(), GpuError> {
    let count = items.len() / job.in_words;
    let lanes_n = lanes.len();
    // Every lane's kernels read the shared block: finish its copy before any starts.
    lanes[0].stream.synchronize()?;
    let stride = chunk as u32;
    for (k, start) in (0..count).step_by(chunk).enumerate() {
        let lane = &mut lanes[k % lanes_n];
        collect(lane, job.out_words, chunk, out)?;
        let end = (start + chunk).min(count);
        to_limb_major(
            &items[start * job.in_words..end * job.in_words],
            job.in_words,
            chunk,
            lane.host_in.as_mut_slice()?,
        );
        lane.stream.memcpy_htod(&lane.host_in, &mut lane.dev_in)?;
        let n = (end - start) as u32;
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(THREADS), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = lane.stream.launch_builder(f);
        b.arg(consts)
            .arg(&lane.dev_in)
            .arg(&mut lane.dev_out)
            .arg(&n)
            .arg(&stride);
        for p in &job.params {
            b.arg(p);
        }
        // SAFETY: the argument list matches the kernel's signature in rsa.cu (three
        // buffers, count, stride, then `params`), and every buffer holds `stride` items
        // of its width, of which the kernel touches the first `n`.
        unsafe { b.launch(cfg) }?;
        lane.stream.memcpy_dtoh(&lane.dev_out, &mut lane.host_out)?;
        lane.pending = Some(start..end);
    }
    // Chunks finish in order: lane k % lanes_n holds chunk k.
    let first = count.div_ceil(chunk) % lanes_n;
    for i in 0..lanes_n {
        collect(&mut lanes[(first + i) % lanes_n], job.out_words, chunk, out)?;
    }
    Ok(())
}

/// Appends a lane's finished chunk (if any) to `out`, waiting for all of the lane's work
/// (so its pinned buffers are free to reuse afterwards).
fn collect(
    lane: &mut Lane,
    words: usize,
    stride: usize,
    out: &mut Vec<u32>,
) -> Result<(), GpuError> {
    if let Some(r) = lane.pending.take() {
        lane.stream.synchronize()?;
        from_limb_major(lane.host_out.as_slice()?, words, stride, r.len(), out);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh key of `bits` bits (OpenSSL's generator, for tests).
    fn key(bits: u32) -> CrtKey {
        let k = openssl::rsa::Rsa::generate(bits).expect("keygen");
        let b = |x: &openssl::bn::BigNumRef| BigUint::from_bytes_be(&x.to_vec());
        let need = |x: Option<&openssl::bn::BigNumRef>| b(x.expect("CRT parameter"));
        CrtKey {
            n: b(k.n()),
            e: b(k.e()),
            p: need(k.p()),
            q: need(k.q()),
            dp: need(k.dmp1()),
            dq: need(k.dmq1()),
            qinv: need(k.iqmp()),
        }
    }

    #[test]
    fn limb_major_round_trip() {
        let items: Vec<u32> = (0..15).collect(); // 5 items of 3 words
        let mut lm = vec![7u32; 3 * 8];
        to_limb_major(&items, 3, 8, &mut lm);
        assert_eq!(&lm[..8], &[0, 3, 6, 9, 12, 0, 0, 0]);
        let mut back = Vec::new();
        from_limb_major(&lm, 3, 8, 5, &mut back);
        assert_eq!(back, items);
    }

    #[test]
    fn bytes_and_limbs() {
        let x = BigUint::from(0x0102_0304_0506u64);
        let l = limbs(&x, 4);
        assert_eq!(l, vec![0x0304_0506, 0x0102, 0, 0]);
        assert_eq!(limbs_to_be(&l, 8), vec![0, 0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(
            r2_mod(&BigUint::from(7u8), 1),
            BigUint::from((1u128 << 64) % 7)
        );
    }

    #[test]
    fn crt_params_match_the_key() {
        let c = key(2048);
        assert_eq!(&c.p * &c.q, c.n);
        assert_eq!((&c.qinv * &c.q) % &c.p, BigUint::from(1u8));
        assert!(format!("{c:?}").contains(".."));
        assert_eq!((c.bits(), c.size()), (2048, 256));
    }
}

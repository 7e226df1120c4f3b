//! Ed25519 verification on the device (kernels/ed25519_verify.cu, one thread per
//! signature). It gives the verdict and the rejection reason of
//! [`wirespeed_ed25519::verify`] for every input in every [`Mode`]; choosing between it
//! and the CPU, and falling back, is the engine's (crates/engine).
//!
//! - [`verify_many`]: one batch on the process's cached [`Verifier`]. The batch is split
//!   into chunks that alternate between two streams, so that packing one chunk on the
//!   host, its copy to the device, the kernel of another and the copy back of a third
//!   overlap.
//! - [`Verifier`]: the kernel, the base table and the buffers kept between batches (a
//!   stream of micro-batches keeps one).
//!
//! Signatures whose lengths are wrong are answered on the host (`BadLength`); only
//! well-formed records reach the device.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use wirespeed_ed25519::{serial, Item, Mode, VerifyError};

use crate::runtime::{Gpu, GpuError};

/// The kernel file.
pub const KERNEL_FILE: &str = "ed25519_verify.cu";
/// The kernel entry point.
pub const KERNEL_NAME: &str = "ws_ed25519_verify";

/// Bytes per device record: R (32), S (32), A (32).
pub const RECORD_BYTES: usize = 96;

/// Signatures per chunk (one kernel launch).
const CHUNK_SIGS: usize = 1 << 16;
/// Message bytes per chunk (a single longer message gets a chunk of its own).
const CHUNK_MSG_BYTES: usize = 32 << 20;
/// Streams the chunks alternate between.
const STREAMS: usize = 2;
/// Threads per block.
const BLOCK: u32 = 128;

/// Words in the base-point table the kernel reads: 64 entries of three coordinates of
/// eight 32-bit words (`WS_ED_BASE_TABLE_WORDS` in kernels/ed25519.cuh).
pub const BASE_TABLE_WORDS: usize = 64 * 24;

/// The status byte the kernel writes for a verdict. The one table of codes, shared with
/// `WS_ED_*` in kernels/ed25519.cuh: 0 valid, 1..=9 the [`VerifyError`] variants in
/// declaration order.
pub fn status_code(verdict: Result<(), VerifyError>) -> u8 {
    match verdict {
        Ok(()) => 0,
        Err(VerifyError::BadLength) => 1,
        Err(VerifyError::ScalarOutOfRange) => 2,
        Err(VerifyError::InvalidPointA) => 3,
        Err(VerifyError::InvalidPointR) => 4,
        Err(VerifyError::NonCanonicalA) => 5,
        Err(VerifyError::NonCanonicalR) => 6,
        Err(VerifyError::SmallOrderA) => 7,
        Err(VerifyError::SmallOrderR) => 8,
        Err(VerifyError::EquationFailed) => 9,
    }
}

/// The verdict for a status byte (the inverse of [`status_code`]); None for a byte
/// that is no code.
pub fn verdict(code: u8) -> Option<Result<(), VerifyError>> {
    Some(match code {
        0 => Ok(()),
        1 => Err(VerifyError::BadLength),
        2 => Err(VerifyError::ScalarOutOfRange),
        3 => Err(VerifyError::InvalidPointA),
        4 => Err(VerifyError::InvalidPointR),
        5 => Err(VerifyError::NonCanonicalA),
        6 => Err(VerifyError::NonCanonicalR),
        7 => Err(VerifyError::SmallOrderA),
        8 => Err(VerifyError::SmallOrderR),
        9 => Err(VerifyError::EquationFailed),
        _ => return None,
    })
}

/// The kernel's mode number (`WS_ED_MODE_*`): the position in [`Mode::ALL`].
pub fn mode_code(mode: Mode) -> u32 {
    match mode {
        Mode::Strict => 0,
        Mode::Zip215 => 1,
        Mode::CofactoredStrict => 2,
        Mode::Libsodium => 3,
    }
}

/// The base-point table the kernel reads: for i in 0..64, [2i+1]B as (y+x, y-x, 2dxy)
/// in affine coordinates, each the canonical value as eight little-endian 32-bit words.
/// Built once from [`serial::base_naf_table`].
pub fn base_table() -> &'static [u32] {
    static T: OnceLock<Vec<u32>> = OnceLock::new();
    T.get_or_init(|| {
        let mut out = Vec::with_capacity(BASE_TABLE_WORDS);
        for e in serial::base_naf_table() {
            for fe in [&e.y_plus_x, &e.y_minus_x, &e.xy2d] {
                for w in fe.to_bytes().chunks_exact(4) {
                    out.push(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
                }
            }
        }
        out
    })
}

/// True when the lengths allow the signature onto the device (64-byte signature,
/// 32-byte key).
fn well_formed(it: &Item<'_>) -> bool {
    it.sig.len() == 64 && it.pk.len() == 32
}

/// Splits the items listed in `idx` into chunks of at most `max_sigs` signatures and,
/// unless one message alone is longer, at most `max_bytes` message bytes.
fn plan_chunks(
    items: &[Item<'_>],
    idx: &[usize],
    max_sigs: usize,
    max_bytes: usize,
) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0usize;
    for (j, &i) in idx.iter().enumerate() {
        let len = items[i].msg.len();
        if j > start && (j - start == max_sigs || bytes + len > max_bytes) {
            out.push(start..j);
            start = j;
            bytes = 0;
        }
        bytes += len;
    }
    if start < idx.len() {
        out.push(start..idx.len());
    }
    out
}

/// Message bytes of a chunk.
fn chunk_bytes(items: &[Item<'_>], idx: &[usize]) -> usize {
    idx.iter().map(|&i| items[i].msg.len()).sum()
}

/// Packs the items listed in `idx` into device layout: records (R || S || A), the
/// messages back to back, and each message's offset and length. Returns the message
/// bytes written. The buffers must be large enough; a chunk's message bytes fit in u32
/// (checked by the caller).
fn pack(
    items: &[Item<'_>],
    idx: &[usize],
    rec: &mut [u8],
    msg: &mut [u8],
    off: &mut [u32],
    len: &mut [u32],
) -> usize {
    let mut pos = 0usize;
    for (j, &i) in idx.iter().enumerate() {
        let it = &items[i];
        let r = &mut rec[RECORD_BYTES * j..RECORD_BYTES * (j + 1)];
        r[..64].copy_from_slice(it.sig);
        r[64..].copy_from_slice(it.pk);
        msg[pos..pos + it.msg.len()].copy_from_slice(it.msg);
        off[j] = pos as u32;
        len[j] = it.msg.len() as u32;
        pos += it.msg.len();
    }
    pos
}

/// Verifies every item on the device; the i-th verdict belongs to the i-th item.
/// Signatures of the wrong length are answered on the host. The error is about the GPU
/// (too little memory, a failed launch), never about a signature.
pub fn verify_many(
    g: &'static Gpu,
    items: &[Item<'_>],
    mode: Mode,
) -> Result<Vec<Result<(), VerifyError>>, GpuError> {
    with_verifier(g, |v| v.verify_many(items, mode))
}

/// Runs `f` on the process's cached verifier (kernel, base table, pinned buffers and
/// streams are set up once, not per call), or on a new one while another call holds it.
/// A verifier that saw an error is dropped, so the next call starts clean.
fn with_verifier<T>(
    g: &'static Gpu,
    f: impl FnOnce(&mut Verifier) -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    static CACHE: std::sync::Mutex<Option<Verifier>> = std::sync::Mutex::new(None);
    let cached = CACHE.lock().unwrap_or_else(|p| p.into_inner()).take();
    let mut v = match cached {
        Some(v) => v,
        None => Verifier::new(g)?,
    };
    let r = f(&mut v);
    if r.is_ok() {
        *CACHE.lock().unwrap_or_else(|p| p.into_inner()) = Some(v);
    }
    r
}

/// Host and device buffers of one stream, for chunks of up to `sigs` signatures and
/// `bytes` message bytes.
struct Slot {
    stream: Arc<CudaStream>,
    h_rec: PinnedHostSlice<u8>,
    h_msg: PinnedHostSlice<u8>,
    h_off: PinnedHostSlice<u32>,
    h_len: PinnedHostSlice<u32>,
    h_status: PinnedHostSlice<u8>,
    d_rec: CudaSlice<u8>,
    d_msg: CudaSlice<u8>,
    d_off: CudaSlice<u32>,
    d_len: CudaSlice<u32>,
    d_status: CudaSlice<u8>,
    /// The chunk (index into the plan) whose results this slot's stream will deliver.
    pending: Option<usize>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Copies may still be reading or writing the pinned buffers (after an error
        // part-way through a batch): let them finish before the memory is freed.
        let _ = self.stream.synchronize();
    }
}

/// Device bytes one slot needs.
fn slot_bytes(sigs: usize, bytes: usize) -> usize {
    sigs * (RECORD_BYTES + 4 + 4 + 1) + bytes.max(1)
}

/// Page-locked host memory of `len` elements, zeroed. `write_combined` for buffers the
/// host only writes (faster to copy from, slow to read back).
fn pinned<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    g: &Gpu,
    len: usize,
    write_combined: bool,
) -> Result<PinnedHostSlice<T>, GpuError> {
    let flags = if write_combined {
        cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED
    } else {
        0
    };
    // SAFETY: the allocation is uninitialised; it is zeroed below through the raw
    // pointer before any slice of it is formed.
    let mut h = unsafe { g.context().alloc_pinned_with_flags::<T>(len.max(1), flags) }?;
    let p = h.as_mut_ptr()?;
    // SAFETY: `p` points to `len.max(1)` elements just allocated; all-zero bits are a
    // valid T (ValidAsZeroBits).
    unsafe { std::ptr::write_bytes(p, 0, len.max(1)) };
    Ok(h)
}

impl Slot {
    fn new(g: &Gpu, sigs: usize, bytes: usize) -> Result<Slot, GpuError> {
        let stream = g.stream()?;
        Ok(Slot {
            h_rec: pinned(g, sigs * RECORD_BYTES, true)?,
            h_msg: pinned(g, bytes, true)?,
            h_off: pinned(g, sigs, true)?,
            h_len: pinned(g, sigs, true)?,
            h_status: pinned(g, sigs, false)?,
            d_rec: stream.alloc_zeros(sigs.max(1) * RECORD_BYTES)?,
            d_msg: stream.alloc_zeros(bytes.max(1))?,
            d_off: stream.alloc_zeros(sigs.max(1))?,
            d_len: stream.alloc_zeros(sigs.max(1))?,
            d_status: stream.alloc_zeros(sigs.max(1))?,
            stream,
            pending: None,
        })
    }
}

/// A GPU verifier: the compiled kernel, the base table on the device and the buffers of
/// two streams, kept between batches (a stream of micro-batches reuses one).
pub struct Verifier {
    g: &'static Gpu,
    func: CudaFunction,
    // Declared before `table`, so dropped first: each slot's drop waits for its stream,
    // and only then is the table (read by every slot's kernels) freed.
    slots: Vec<Slot>,
    table: CudaSlice<u32>,
    cap_sigs: usize,
    cap_bytes: usize,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("device", &self.g.name)
            .field("cap_sigs", &self.cap_sigs)
            .finish()
    }
}

impl Verifier {
    /// Compiles (or loads) the kernel and uploads the base table.
    pub fn new(g: &'static Gpu) -> Result<Verifier, GpuError> {
        let func = g.function(KERNEL_FILE, KERNEL_NAME)?;
        let stream = g.stream()?;
        let table = stream.clone_htod(base_table())?;
        stream.synchronize()?;
        Ok(Verifier {
            g,
            func,
            slots: Vec::new(),
            table,
            cap_sigs: 0,
            cap_bytes: 0,
        })
    }

    /// Makes every slot hold chunks of `sigs` signatures and `bytes` message bytes.
    fn reserve(&mut self, sigs: usize, bytes: usize) -> Result<(), GpuError> {
        if self.slots.len() == STREAMS && sigs <= self.cap_sigs && bytes <= self.cap_bytes {
            return Ok(());
        }
        let sigs = sigs.max(self.cap_sigs);
        let bytes = bytes.max(self.cap_bytes);
        for s in &self.slots {
            s.stream.synchronize()?;
        }
        self.slots.clear();
        let need = STREAMS * slot_bytes(sigs, bytes) + BASE_TABLE_WORDS * 4;
        self.g.check_memory(
            &format!("Ed25519 verification in chunks of {sigs} signatures"),
            need,
        )?;
        for _ in 0..STREAMS {
            self.slots.push(Slot::new(self.g, sigs, bytes)?);
        }
        self.cap_sigs = sigs;
        self.cap_bytes = bytes;
        Ok(())
    }

    /// Verifies one batch; the i-th verdict belongs to the i-th item.
    pub fn verify_many(
        &mut self,
        items: &[Item<'_>],
        mode: Mode,
    ) -> Result<Vec<Result<(), VerifyError>>, GpuError> {
        let mut out = vec![Err(VerifyError::BadLength); items.len()];
        let good: Vec<usize> = (0..items.len())
            .filter(|&i| well_formed(&items[i]))
            .collect();
        if good.is_empty() {
            return Ok(out);
        }
        let chunks = plan_chunks(items, &good, CHUNK_SIGS, CHUNK_MSG_BYTES);
        let max_sigs = chunks.iter().map(|c| c.len()).max().unwrap_or(0);
        let max_bytes = chunks
            .iter()
            .map(|c| chunk_bytes(items, &good[c.clone()]))
            .max()
            .unwrap_or(0);
        if max_bytes > u32::MAX as usize {
            return Err(GpuError::Unsupported(
                "an Ed25519 message of 4 GiB or more".into(),
            ));
        }
        self.reserve(max_sigs, max_bytes)?;
        let mode = mode_code(mode);
        for (ci, chunk) in chunks.iter().enumerate() {
            let slot = ci % STREAMS;
            self.collect(slot, &chunks, &good, &mut out)?;
            self.launch(slot, items, &good[chunk.clone()], mode)?;
            self.slots[slot].pending = Some(ci);
        }
        for slot in 0..STREAMS {
            self.collect(slot, &chunks, &good, &mut out)?;
        }
        Ok(out)
    }

    /// Packs one chunk into a slot's pinned buffers and queues copy in, kernel and copy
    /// out on its stream.
    fn launch(
        &mut self,
        slot: usize,
        items: &[Item<'_>],
        idx: &[usize],
        mode: u32,
    ) -> Result<(), GpuError> {
        let s = &mut self.slots[slot];
        let n = idx.len();
        let bytes = pack(
            items,
            idx,
            s.h_rec.as_mut_slice()?,
            s.h_msg.as_mut_slice()?,
            s.h_off.as_mut_slice()?,
            s.h_len.as_mut_slice()?,
        );
        let st = &s.stream;
        st.memcpy_htod(
            &s.h_rec.as_slice()?[..n * RECORD_BYTES],
            &mut s.d_rec.slice_mut(..n * RECORD_BYTES),
        )?;
        if bytes > 0 {
            st.memcpy_htod(
                &s.h_msg.as_slice()?[..bytes],
                &mut s.d_msg.slice_mut(..bytes),
            )?;
        }
        st.memcpy_htod(&s.h_off.as_slice()?[..n], &mut s.d_off.slice_mut(..n))?;
        st.memcpy_htod(&s.h_len.as_slice()?[..n], &mut s.d_len.slice_mut(..n))?;
        // Poisoned status bytes (0xff is no status): a thread that never writes its
        // verdict shows as an error in `collect`, not as a stale or zero ("valid") byte.
        // The slot's previous chunk was collected (its stream synchronised) before this.
        s.h_status.as_mut_slice()?[..n].fill(0xff);
        st.memcpy_htod(&s.h_status.as_slice()?[..n], &mut s.d_status.slice_mut(..n))?;
        let n32 = n as u32;
        let cfg = LaunchConfig {
            grid_dim: (n32.div_ceil(BLOCK), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = st.launch_builder(&self.func);
        b.arg(&s.d_rec)
            .arg(&s.d_msg)
            .arg(&s.d_off)
            .arg(&s.d_len)
            .arg(&self.table)
            .arg(&n32)
            .arg(&mode)
            .arg(&mut s.d_status);
        // SAFETY: the arguments match ws_ed25519_verify's parameters in order and type
        // (three byte/word buffers of at least n records, messages covering every
        // offset + length, the 1536-word table, n, the mode, n status bytes).
        unsafe { b.launch(cfg) }?;
        st.memcpy_dtoh(&s.d_status.slice(..n), &mut s.h_status.as_mut_slice()?[..n])?;
        Ok(())
    }

    /// Waits for a slot's pending chunk, if any, and stores its verdicts.
    fn collect(
        &mut self,
        slot: usize,
        chunks: &[Range<usize>],
        good: &[usize],
        out: &mut [Result<(), VerifyError>],
    ) -> Result<(), GpuError> {
        let s = &mut self.slots[slot];
        let Some(ci) = s.pending.take() else {
            return Ok(());
        };
        s.stream.synchronize()?;
        let idx = &good[chunks[ci].clone()];
        let status = &s.h_status.as_slice()?[..idx.len()];
        for (&i, &c) in idx.iter().zip(status) {
            out[i] = verdict(c).ok_or_else(|| {
                GpuError::Driver(format!("the Ed25519 kernel wrote an unknown status {c}"))
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use wirespeed_field::FieldOps;

    #[test]
    fn status_codes_round_trip_and_are_stable() {
        assert_eq!(status_code(Ok(())), 0);
        for c in 0..=9u8 {
            let v = verdict(c).unwrap();
            assert_eq!(status_code(v), c);
        }
        assert_eq!(verdict(10), None);
        assert_eq!(status_code(Err(VerifyError::EquationFailed)), 9);
        for (i, m) in Mode::ALL.iter().enumerate() {
            assert_eq!(mode_code(*m), i as u32);
        }
    }

    #[test]
    fn base_table_has_the_kernel_layout() {
        let t = base_table();
        assert_eq!(t.len(), BASE_TABLE_WORDS);
        // Entry 0 is B (Z = 1 after decoding): y + x first, canonical, as words.
        let b = serial::basepoint();
        let ypx = b.y.add(&b.x).to_bytes();
        for (i, w) in ypx.chunks_exact(4).enumerate() {
            assert_eq!(t[i], u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        }
    }

    /// Messages of random lengths, some signatures malformed.
    fn sample(n: usize, seed: u64) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sk = SigningKey::from_bytes(&rng.gen());
        (0..n)
            .map(|i| {
                let mut msg = vec![0u8; rng.gen_range(0..200)];
                rng.fill(&mut msg[..]);
                let mut sig = sk.sign(&msg).to_bytes().to_vec();
                let mut pk = sk.verifying_key().to_bytes().to_vec();
                match i % 7 {
                    3 => sig[rng.gen_range(0..64)] ^= 1 << rng.gen_range(0..8),
                    4 => msg.push(1),
                    5 => {
                        pk.pop();
                    }
                    6 => sig.push(0),
                    _ => {}
                }
                (msg, sig, pk)
            })
            .collect()
    }

    fn as_items(v: &[(Vec<u8>, Vec<u8>, Vec<u8>)]) -> Vec<Item<'_>> {
        v.iter()
            .map(|(m, s, p)| Item {
                msg: m,
                sig: s,
                pk: p,
            })
            .collect()
    }

    #[test]
    fn chunks_respect_both_caps_and_cover_everything() {
        let data = sample(50, 1);
        let items = as_items(&data);
        let idx: Vec<usize> = (0..items.len())
            .filter(|&i| well_formed(&items[i]))
            .collect();
        for (sigs, bytes) in [(1, 1), (7, 300), (1000, 1 << 20), (3, 0)] {
            let plan = plan_chunks(&items, &idx, sigs, bytes);
            let mut next = 0;
            for c in &plan {
                assert_eq!(c.start, next);
                assert!(!c.is_empty() && c.len() <= sigs);
                let b = chunk_bytes(&items, &idx[c.clone()]);
                assert!(b <= bytes || c.len() == 1, "{b} > {bytes}");
                next = c.end;
            }
            assert_eq!(next, idx.len());
        }
    }

    #[test]
    fn packing_lays_out_records_and_messages() {
        let data = sample(20, 2);
        let items = as_items(&data);
        let idx: Vec<usize> = (0..items.len())
            .filter(|&i| well_formed(&items[i]))
            .collect();
        let n = idx.len();
        let total = chunk_bytes(&items, &idx);
        let (mut rec, mut msg) = (vec![0u8; n * RECORD_BYTES], vec![0u8; total]);
        let (mut off, mut len) = (vec![0u32; n], vec![0u32; n]);
        assert_eq!(
            pack(&items, &idx, &mut rec, &mut msg, &mut off, &mut len),
            total
        );
        for (j, &i) in idx.iter().enumerate() {
            let r = &rec[RECORD_BYTES * j..RECORD_BYTES * (j + 1)];
            assert_eq!(&r[..64], items[i].sig);
            assert_eq!(&r[64..], items[i].pk);
            let (o, l) = (off[j] as usize, len[j] as usize);
            assert_eq!(&msg[o..o + l], items[i].msg);
        }
    }

    #[test]
    fn gpu_backend_matches_verify_where_present() {
        let data = sample(300, 4);
        let items = as_items(&data);
        match crate::usable().and_then(|g| verify_many(g, &items, Mode::Zip215)) {
            Err(e) => eprintln!("skipped: no GPU ({e})"),
            Ok(got) => {
                for (it, g) in items.iter().zip(&got) {
                    assert_eq!(
                        *g,
                        wirespeed_ed25519::verify(it.msg, it.sig, it.pk, Mode::Zip215)
                    );
                }
            }
        }
    }
}

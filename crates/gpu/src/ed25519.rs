//! Ed25519 verification on the GPU (kernels/ed25519_verify.cu, one thread per
//! signature), with the CPU ([`wirespeed_ed25519::verify_many`]) as the other backend.
//! Both give the verdict and the rejection reason of [`wirespeed_ed25519::verify`] for
//! every input in every [`Mode`].
//!
//! - [`verify_many`]: one batch. On the GPU the batch is split into chunks that
//!   alternate between two streams, so that packing one chunk on the host, its copy to
//!   the device, the kernel of another and the copy back of a third overlap.
//! - [`Stream`]: signatures arrive one at a time; they are grouped into micro-batches
//!   closed by size or by the age of their oldest signature, and the verdicts come back
//!   in order with the caller's ids.
//!
//! Signatures whose lengths are wrong are answered on the host (`BadLength`); only
//! well-formed records reach the device.

use std::fmt;
use std::ops::Range;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use wirespeed_ed25519::{serial, Item, Mode, VerifyError};

use crate::backend::{Backend, Chosen};
use crate::runtime::{Gpu, GpuError};

/// The kernel file.
pub const KERNEL_FILE: &str = "ed25519_verify.cu";
/// The kernel entry point.
pub const KERNEL_NAME: &str = "ws_ed25519_verify";

/// The smallest batch for which [`Backend::Auto`] sends the work to the GPU: below it
/// the transfers and the launch cost more than the CPU's lanes and cores need.
pub const MIN_GPU_BATCH: usize = 4096;

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

/// Verifies every item on the chosen backend; the i-th verdict belongs to the i-th
/// item. [`Backend::Auto`] uses the GPU from [`MIN_GPU_BATCH`] items on, where one is
/// present. The error is about the GPU (none where one was demanded, too little memory,
/// a failed launch), never about a signature.
pub fn verify_many(
    backend: Backend,
    items: &[Item<'_>],
    mode: Mode,
) -> Result<Vec<Result<(), VerifyError>>, GpuError> {
    match backend.choose(items.len(), MIN_GPU_BATCH)? {
        Chosen::Cpu => Ok(wirespeed_ed25519::verify_many(items, mode)),
        Chosen::Gpu(g) => match (with_verifier(g, |v| v.verify_many(items, mode)), backend) {
            // `auto` answers on the CPU when the GPU run fails (memory, a failed launch).
            (Err(_), Backend::Auto) => Ok(wirespeed_ed25519::verify_many(items, mode)),
            (r, _) => r,
        },
    }
}

/// Runs `f` on the process's cached verifier (kernel, base table, pinned buffers and
/// streams are set up once, not per call), or on a new one while another call holds it.
/// A verifier that saw an error is dropped, so the next call starts clean.
fn with_verifier<T>(
    g: &'static Gpu,
    f: impl FnOnce(&mut GpuVerifier) -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    static CACHE: std::sync::Mutex<Option<GpuVerifier>> = std::sync::Mutex::new(None);
    let cached = CACHE.lock().unwrap_or_else(|p| p.into_inner()).take();
    let mut v = match cached {
        Some(v) => v,
        None => GpuVerifier::new(g)?,
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
/// two streams, kept between batches (the streaming mode reuses one).
struct GpuVerifier {
    g: &'static Gpu,
    func: CudaFunction,
    // Declared before `table`, so dropped first: each slot's drop waits for its stream,
    // and only then is the table (read by every slot's kernels) freed.
    slots: Vec<Slot>,
    table: CudaSlice<u32>,
    cap_sigs: usize,
    cap_bytes: usize,
}

impl GpuVerifier {
    fn new(g: &'static Gpu) -> Result<GpuVerifier, GpuError> {
        let func = g.function(KERNEL_FILE, KERNEL_NAME)?;
        let stream = g.stream()?;
        let table = stream.clone_htod(base_table())?;
        stream.synchronize()?;
        Ok(GpuVerifier {
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

    fn verify_many(
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

// ---------------------------------------------------------------------------------------
// Streaming.
// ---------------------------------------------------------------------------------------

/// Settings of a [`Stream`].
#[derive(Clone, Copy, Debug)]
pub struct StreamConfig {
    /// Rules to verify by.
    pub mode: Mode,
    /// Where micro-batches run. `Auto` picks the GPU only when `max_batch` reaches
    /// [`MIN_GPU_BATCH`].
    pub backend: Backend,
    /// A micro-batch is closed when it holds this many signatures...
    pub max_batch: usize,
    /// ...or when its oldest signature has waited this long since it was submitted.
    pub deadline: Duration,
}

impl Default for StreamConfig {
    fn default() -> StreamConfig {
        StreamConfig {
            mode: Mode::Strict,
            backend: Backend::Auto,
            max_batch: 1024,
            deadline: Duration::from_micros(100),
        }
    }
}

/// The verdict on one submitted signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The id given to [`Stream::submit`].
    pub id: u64,
    /// What [`wirespeed_ed25519::verify`] says of it.
    pub result: Result<(), VerifyError>,
    /// How many signatures its micro-batch held.
    pub batch_len: usize,
}

/// One signature owned by the stream.
struct Pending {
    id: u64,
    msg: Vec<u8>,
    sig: Vec<u8>,
    pk: Vec<u8>,
    at: Instant,
}

/// The stream has stopped (its worker ended); the signature was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamClosed;

impl fmt::Display for StreamClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the verification stream has stopped")
    }
}

impl std::error::Error for StreamClosed {}

/// Streaming verification: producers submit signatures one at a time, a worker thread
/// groups them into micro-batches (closed at [`StreamConfig::max_batch`] signatures or
/// when the oldest has waited [`StreamConfig::deadline`]), verifies each batch on the
/// chosen backend and hands the verdicts, in submission order, to a callback or a
/// channel. Dropping the stream (or [`Stream::close`]) verifies what is pending and
/// stops the worker.
///
/// Should the GPU fail during a batch, that batch is verified on the CPU instead (the
/// verdicts are the same) and [`Stream::gpu_failures`] counts it.
pub struct Stream {
    tx: Option<Sender<Pending>>,
    worker: Option<JoinHandle<()>>,
    backend: &'static str,
    failures: Arc<std::sync::atomic::AtomicU64>,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("backend", &self.backend)
            .field("open", &self.tx.is_some())
            .finish()
    }
}

impl Stream {
    /// A stream whose verdicts arrive on the returned channel.
    pub fn new(cfg: StreamConfig) -> Result<(Stream, Receiver<Verdict>), GpuError> {
        let (tx, rx) = mpsc::channel();
        let s = Stream::with_callback(cfg, move |v| {
            // A dropped receiver only means nobody listens any more.
            let _ = tx.send(v);
        })?;
        Ok((s, rx))
    }

    /// A stream that calls `on_verdict` (on its worker thread) for every verdict.
    pub fn with_callback<F>(cfg: StreamConfig, on_verdict: F) -> Result<Stream, GpuError>
    where
        F: FnMut(Verdict) + Send + 'static,
    {
        let max_batch = cfg.max_batch.max(1);
        let chosen = cfg.backend.choose(max_batch, MIN_GPU_BATCH)?;
        let (tx, rx) = mpsc::channel::<Pending>();
        let failures = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let fails = failures.clone();
        let worker = std::thread::Builder::new()
            .name("ed25519-stream".into())
            .spawn(move || {
                worker(
                    rx,
                    chosen,
                    cfg.mode,
                    max_batch,
                    cfg.deadline,
                    on_verdict,
                    &fails,
                )
            })
            .map_err(|e| GpuError::Unsupported(format!("cannot start the stream worker: {e}")))?;
        Ok(Stream {
            tx: Some(tx),
            worker: Some(worker),
            backend: chosen.name(),
            failures,
        })
    }

    /// Queues one signature; its verdict carries `id`.
    pub fn submit(&self, id: u64, msg: &[u8], sig: &[u8], pk: &[u8]) -> Result<(), StreamClosed> {
        let p = Pending {
            id,
            msg: msg.to_vec(),
            sig: sig.to_vec(),
            pk: pk.to_vec(),
            at: Instant::now(),
        };
        self.tx
            .as_ref()
            .ok_or(StreamClosed)?
            .send(p)
            .map_err(|_| StreamClosed)
    }

    /// "cpu" or "gpu": where the micro-batches run.
    pub fn backend(&self) -> &'static str {
        self.backend
    }

    /// Batches the GPU failed on (verified on the CPU instead).
    pub fn gpu_failures(&self) -> u64 {
        self.failures.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Verifies what is pending, delivers every verdict and stops the worker.
    pub fn close(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.tx = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The worker: gathers a micro-batch, verifies it, delivers, repeats until the senders
/// are gone and nothing is pending.
fn worker<F: FnMut(Verdict)>(
    rx: Receiver<Pending>,
    chosen: Chosen,
    mode: Mode,
    max_batch: usize,
    deadline: Duration,
    mut on_verdict: F,
    failures: &std::sync::atomic::AtomicU64,
) {
    let mut gpu: Option<GpuVerifier> = None;
    let mut batch: Vec<Pending> = Vec::with_capacity(max_batch);
    let mut open = true;
    while open || !batch.is_empty() {
        // Fill until the size cap, the oldest signature's deadline, or the end.
        while open && batch.len() < max_batch {
            let next = match batch.first() {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                // Past the deadline (the previous batch took longer than it): close the
                // batch with what is already queued, up to the cap, so that a backlog is
                // not verified one signature at a time.
                Some(first) if Instant::now() >= first.at + deadline => match rx.try_recv() {
                    Ok(p) => Ok(p),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                },
                Some(first) => {
                    let due = first.at + deadline;
                    match due.checked_duration_since(Instant::now()) {
                        Some(wait) if !wait.is_zero() => rx.recv_timeout(wait),
                        _ => break,
                    }
                }
            };
            match next {
                Ok(p) => batch.push(p),
                // Re-examine the deadline (a timed wait may end a little early).
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
        }
        if batch.is_empty() {
            continue;
        }
        let items: Vec<Item<'_>> = batch
            .iter()
            .map(|p| Item {
                msg: &p.msg,
                sig: &p.sig,
                pk: &p.pk,
            })
            .collect();
        let results = match chosen {
            Chosen::Cpu => wirespeed_ed25519::verify_many(&items, mode),
            Chosen::Gpu(g) => {
                let r = match gpu.as_mut() {
                    Some(v) => v.verify_many(&items, mode),
                    None => GpuVerifier::new(g).and_then(|v| {
                        let v = gpu.insert(v);
                        v.verify_many(&items, mode)
                    }),
                };
                r.unwrap_or_else(|_| {
                    failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    gpu = None;
                    wirespeed_ed25519::verify_many(&items, mode)
                })
            }
        };
        let n = batch.len();
        drop(items);
        for (p, result) in batch.drain(..).zip(results) {
            on_verdict(Verdict {
                id: p.id,
                result,
                batch_len: n,
            });
        }
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
    fn cpu_backend_matches_verify() {
        let data = sample(64, 3);
        let items = as_items(&data);
        for mode in Mode::ALL {
            let got = verify_many(Backend::Cpu, &items, mode).unwrap();
            for (it, g) in items.iter().zip(&got) {
                assert_eq!(*g, wirespeed_ed25519::verify(it.msg, it.sig, it.pk, mode));
            }
        }
    }

    #[test]
    fn gpu_backend_matches_verify_where_present() {
        let data = sample(300, 4);
        let items = as_items(&data);
        match verify_many(Backend::Gpu, &items, Mode::Zip215) {
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

    #[test]
    fn stream_trickle_meets_the_deadline() {
        let data = sample(12, 5);
        let deadline = Duration::from_millis(2);
        let cfg = StreamConfig {
            mode: Mode::Strict,
            backend: Backend::Cpu,
            max_batch: 1000,
            deadline,
        };
        let (s, rx) = Stream::new(cfg).unwrap();
        assert_eq!(s.backend(), "cpu");
        for (i, (m, sg, p)) in data.iter().enumerate() {
            let t0 = Instant::now();
            s.submit(i as u64, m, sg, p).unwrap();
            // The batch cap is never reached: only the deadline can release it.
            let v = rx.recv_timeout(Duration::from_secs(10)).unwrap();
            let waited = t0.elapsed();
            assert_eq!(v.id, i as u64);
            assert_eq!(v.batch_len, 1);
            assert_eq!(v.result, wirespeed_ed25519::verify(m, sg, p, Mode::Strict));
            assert!(
                waited >= deadline,
                "released before its deadline: {waited:?}"
            );
            // Deadline plus one verification, with ample room for a loaded machine.
            assert!(waited < deadline + Duration::from_millis(500), "{waited:?}");
        }
        s.close();
    }

    #[test]
    fn stream_batches_a_burst_in_order() {
        let data = sample(300, 6);
        let cfg = StreamConfig {
            mode: Mode::Zip215,
            backend: Backend::Cpu,
            max_batch: 64,
            deadline: Duration::from_secs(30),
        };
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = got.clone();
        let s = Stream::with_callback(cfg, move |v| sink.lock().unwrap().push(v)).unwrap();
        for (i, (m, sg, p)) in data.iter().enumerate() {
            s.submit(1000 + i as u64, m, sg, p).unwrap();
        }
        // Closing flushes the last, partial batch without waiting for its deadline.
        let t0 = Instant::now();
        s.close();
        assert!(t0.elapsed() < Duration::from_secs(20));
        let got = got.lock().unwrap();
        assert_eq!(got.len(), data.len());
        for (i, v) in got.iter().enumerate() {
            assert_eq!(v.id, 1000 + i as u64);
            let (m, sg, p) = &data[i];
            assert_eq!(v.result, wirespeed_ed25519::verify(m, sg, p, Mode::Zip215));
            assert!(v.batch_len <= 64);
        }
        // The burst was batched: the full batches precede the remainder.
        assert!(got[..256].iter().all(|v| v.batch_len == 64));
        assert_eq!(got[299].batch_len, 300 - 256);
    }

    #[test]
    fn stream_drains_a_backlog_in_full_batches() {
        // The first verdict's callback holds the worker until the rest are queued: by
        // then the oldest has long passed its deadline, and the backlog must still go
        // out in full batches, not one signature at a time.
        let data = sample(300, 7);
        let cfg = StreamConfig {
            mode: Mode::Strict,
            backend: Backend::Cpu,
            max_batch: 64,
            deadline: Duration::from_millis(1),
        };
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let (held_tx, held_rx) = mpsc::channel::<()>();
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = got.clone();
        let s = Stream::with_callback(cfg, move |v| {
            if v.id == 0 {
                let _ = held_tx.send(());
                let _ = go_rx.recv_timeout(Duration::from_secs(20));
                std::thread::sleep(Duration::from_millis(5));
            }
            sink.lock().unwrap().push(v);
        })
        .unwrap();
        let (m, sg, p) = &data[0];
        s.submit(0, m, sg, p).unwrap();
        held_rx.recv_timeout(Duration::from_secs(20)).unwrap();
        for (i, (m, sg, p)) in data.iter().enumerate().skip(1) {
            s.submit(i as u64, m, sg, p).unwrap();
        }
        go_tx.send(()).unwrap();
        s.close();
        let got = got.lock().unwrap();
        assert_eq!(got.len(), data.len());
        assert_eq!(got[0].batch_len, 1);
        for (i, v) in got.iter().enumerate() {
            assert_eq!(v.id, i as u64);
        }
        // 299 queued: four full batches, then the rest.
        let lens: Vec<usize> = got[1..].iter().map(|v| v.batch_len).collect();
        assert!(lens[..256].iter().all(|&l| l == 64), "{lens:?}");
        assert!(lens[256..].iter().all(|&l| l == 299 - 256), "{lens:?}");
    }
}

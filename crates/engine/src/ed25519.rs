//! Ed25519 verification through the engine: one signature ([`verify`], always the
//! CPU: latency), a batch ([`verify_many`], [`verify_many_here`]) and a stream of
//! micro-batches ([`Stream`]) on the backend [`Backend::select`] picks for
//! [`Op::Ed25519`]. Every path gives the verdict and the rejection reason of
//! [`wirespeed_ed25519::verify`] for every input in every [`Mode`]; a GPU failure falls
//! back by the rules of [`crate::fallback`].
//!
//! Lanes: the ed25519 crate takes the one lane description ([`Lanes`]) as the caller
//! chose it, with the CPU's features from [`crate::backend::cpu`], and resolves `Auto`
//! on them (as every crate's `_with` entry point does).
//!
//! [`Stream`]: signatures arrive one at a time; they are grouped into micro-batches
//! closed by size or by the age of their oldest signature, and the verdicts come back in
//! order with the caller's ids.

use std::fmt;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wirespeed_ed25519::{Item, KeyCache, Mode, VerifyError};
use wirespeed_gpu::ed25519::Verifier;
use wirespeed_gpu::{Gpu, GpuError};

use crate::backend::{cpu, Backend, Chosen, Lanes, Op};
use crate::fallback::{dispatch, dispatch_on, Policy, Reason};

/// The lanes [`verify`] runs on this CPU.
pub fn verify_backend() -> Lanes {
    wirespeed_ed25519::verify_backend_on(cpu())
}

/// One signature, on the CPU (the latency path; a launch would cost more than the
/// verification).
pub fn verify(msg: &[u8], sig: &[u8], pk: &[u8], mode: Mode) -> Result<(), VerifyError> {
    wirespeed_ed25519::verify_with(msg, sig, pk, mode, cpu())
}

/// Verifies every item on the chosen backend (the CPU's lanes on all cores, or the
/// GPU); the i-th verdict belongs to the i-th item. `auto` uses the GPU from
/// [`Op::Ed25519`]'s threshold on, where one is present, and answers on the CPU if the
/// GPU run fails. The error is about the GPU (none where `gpu` was demanded, too little
/// memory, a failed launch), never about a signature.
pub fn verify_many(
    backend: Backend,
    items: &[Item<'_>],
    mode: Mode,
) -> Result<Vec<Result<(), VerifyError>>, GpuError> {
    dispatch(
        backend,
        Op::Ed25519,
        items.len(),
        Policy::Call,
        |l| wirespeed_ed25519::verify_many_with(items, mode, l, cpu()),
        |g| wirespeed_gpu::ed25519::verify_many(g, items, mode),
    )
    .map(|r| r.value)
}

/// A batch for a long-running caller (a pipeline tile on its own core): the CPU path
/// runs on the calling thread with the widest lanes (no thread pool), the GPU path as in
/// [`verify_many`], and every GPU failure (with `gpu` too) is answered on the CPU.
/// `out` receives one verdict per item; the return value is the fallback's reason, if
/// the GPU's run was replaced.
pub fn verify_many_here(
    backend: Backend,
    items: &[Item<'_>],
    mode: Mode,
    out: &mut Vec<Result<(), VerifyError>>,
) -> Option<Reason> {
    verify_many_here_cached(backend, items, mode, None, out)
}

/// [`verify_many_here`] with a key cache for the CPU path (the GPU decodes every key
/// itself): verdicts as without it (`wirespeed_ed25519::KeyCache`).
pub fn verify_many_here_cached(
    backend: Backend,
    items: &[Item<'_>],
    mode: Mode,
    cache: Option<&KeyCache>,
    out: &mut Vec<Result<(), VerifyError>>,
) -> Option<Reason> {
    let run = |l: Lanes, out: &mut [Result<(), VerifyError>]| match cache {
        Some(c) => wirespeed_ed25519::verify_many_here_cached_with(items, mode, l, cpu(), c, out),
        None => wirespeed_ed25519::verify_many_here_with(items, mode, l, cpu(), out),
    };
    let here = |_: Lanes| {
        let mut v = vec![Ok(()); items.len()];
        run(Lanes::Auto, &mut v);
        v
    };
    match backend {
        // The CPU path writes into `out` without a detour.
        Backend::Cpu(l) => {
            out.clear();
            out.resize(items.len(), Ok(()));
            run(l, out);
            None
        }
        _ => {
            let gpu = |g| wirespeed_gpu::ed25519::verify_many(g, items, mode);
            match dispatch(
                backend,
                Op::Ed25519,
                items.len(),
                Policy::Service,
                here,
                gpu,
            ) {
                Ok(ran) => {
                    *out = ran.value;
                    ran.fallback
                }
                // The service policy answers every batch; kept total all the same.
                Err(e) => {
                    *out = here(Lanes::Auto);
                    Some(Reason::of(&e))
                }
            }
        }
    }
}

/// Settings of a [`Stream`].
#[derive(Clone, Copy, Debug)]
pub struct StreamConfig {
    /// Rules to verify by.
    pub mode: Mode,
    /// Where micro-batches run. `Auto` picks the GPU only when `max_batch` reaches
    /// [`Op::Ed25519`]'s threshold.
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
/// verdicts are the same; [`crate::fallback`]'s service rule) and
/// [`Stream::gpu_failures`] counts it.
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
        let chosen = cfg.backend.select(Op::Ed25519, max_batch)?;
        let (tx, rx) = mpsc::channel::<Pending>();
        let failures = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let fails = failures.clone();
        let worker = std::thread::Builder::new()
            .name("ed25519-stream".into())
            .spawn(move || {
                worker(
                    rx,
                    (chosen, cfg.backend),
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
    (chosen, backend): (Chosen, Backend),
    mode: Mode,
    max_batch: usize,
    deadline: Duration,
    mut on_verdict: F,
    failures: &std::sync::atomic::AtomicU64,
) {
    let mut gpu: Option<Verifier> = None;
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
        let on_cpu = |l: Lanes| wirespeed_ed25519::verify_many_with(&items, mode, l, cpu());
        let on_gpu = |g: &'static Gpu| {
            let v = match gpu.take() {
                Some(v) => v,
                None => Verifier::new(g)?,
            };
            let v = gpu.insert(v);
            let r = v.verify_many(&items, mode);
            if r.is_err() {
                // A verifier that saw an error is dropped; the next batch starts clean.
                gpu = None;
            }
            r
        };
        let results = match dispatch_on(chosen, backend, Policy::Service, on_cpu, on_gpu) {
            Ok(ran) => {
                if ran.fallback.is_some() {
                    failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                ran.value
            }
            // The service policy answers every batch; an error cannot come back.
            Err(_) => wirespeed_ed25519::verify_many_with(&items, mode, Lanes::Auto, cpu()),
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
    fn cpu_backend_matches_verify() {
        let data = sample(64, 3);
        let items = as_items(&data);
        for mode in Mode::ALL {
            let got = verify_many(Backend::CPU, &items, mode).unwrap();
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
            backend: Backend::CPU,
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
            backend: Backend::CPU,
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
            backend: Backend::CPU,
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

    #[test]
    fn every_available_lane_width_gives_the_verify_verdicts() {
        let data = sample(90, 8);
        let items = as_items(&data);
        for l in Lanes::ALL.into_iter().filter(Lanes::available) {
            let got = verify_many(Backend::Cpu(l), &items, Mode::Zip215).unwrap();
            for (it, g) in items.iter().zip(&got) {
                assert_eq!(
                    *g,
                    wirespeed_ed25519::verify(it.msg, it.sig, it.pk, Mode::Zip215),
                    "{l}"
                );
            }
        }
    }

    #[test]
    fn here_answers_every_batch_and_counts_a_service_fallback() {
        let data = sample(100, 9);
        let items = as_items(&data);
        let want = wirespeed_ed25519::verify_many(&items, Mode::Strict);
        let mut out = vec![Ok(()); 3];
        assert_eq!(
            verify_many_here(Backend::CPU, &items, Mode::Strict, &mut out),
            None
        );
        assert_eq!(out, want);
        let before = crate::fallbacks();
        let reason = verify_many_here(Backend::Gpu, &items, Mode::Strict, &mut out);
        // With or without a device, every item has its verdict.
        assert_eq!(out, want);
        if wirespeed_gpu::usable().is_err() {
            // `gpu` in a service: no device is a counted fallback, not an error.
            assert_eq!(reason, Some(Reason::NoDevice));
            assert!(crate::fallbacks().no_device > before.no_device);
            // `auto` without a device is the CPU's choice, not a fallback.
            assert_eq!(
                verify_many_here(Backend::Auto, &items, Mode::Strict, &mut out),
                None
            );
            assert_eq!(out, want);
        }
    }
}

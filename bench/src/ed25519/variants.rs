//! `wirespeed bench ed25519`'s variant table: `verify_many` on every lane backend this
//! CPU runs, in every rule mode, and with the key cache, on signatures with a fresh key
//! each (cold) and on keys drawn by a Zipf law (repeat traffic), in the same run.

use std::time::Instant;

use wirespeed_ed25519::{
    verify_many_cached_with, verify_many_with, Item, KeyCache, Lanes, Mode, VerifyError,
};
use wirespeed_engine::backend::cpu;
use wirespeed_sigdata::gen::{generate_keyed, Keys};

/// Distinct keys of the Zipf traffic.
pub const ZIPF_KEYS: usize = 10_000;
/// Keys the cache holds in the table (more than the Zipf traffic's distinct keys).
pub const CACHE_KEYS: usize = 1 << 16;

/// One row: a variant on one traffic at one thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantRow {
    /// `cold` (a key per signature) or `zipf` (ZIPF_KEYS keys, exponent 1).
    pub traffic: &'static str,
    /// Lane backend (`auto` resolved to its name).
    pub backend: String,
    /// Rule mode.
    pub mode: Mode,
    /// With the key cache (warmed by the warm-up pass).
    pub cached: bool,
    /// Threads.
    pub threads: usize,
    /// Signatures per second, all threads together (median of the passes).
    pub per_s: f64,
    /// The cache's hit rate over the timed passes (None without it).
    pub hit_rate: Option<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Times `run` (a warm-up pass, then `reps` passes); every pass must accept all `n`.
fn time(
    pool: &rayon::ThreadPool,
    n: usize,
    reps: usize,
    label: &str,
    run: impl Fn() -> Vec<Result<(), VerifyError>> + Sync,
) -> Result<f64, String> {
    let mut rates = vec![];
    for pass in 0..=reps {
        let t = Instant::now();
        let v = pool.install(&run);
        let secs = t.elapsed().as_secs_f64();
        let ok = v.iter().filter(|r| r.is_ok()).count();
        if ok != n {
            return Err(format!("{label}: accepted {ok} of {n} valid signatures"));
        }
        if pass > 0 {
            rates.push(n as f64 / secs);
        }
    }
    Ok(median(rates))
}

/// Measures the variant table on `count` signatures of `msg_len` bytes.
pub fn measure(
    count: usize,
    msg_len: usize,
    threads: &[usize],
    reps: usize,
    seed: u64,
) -> Result<Vec<VariantRow>, String> {
    let cold = generate_keyed(count, msg_len, seed, Keys::PerRecord);
    let zipf = generate_keyed(
        count,
        msg_len,
        seed,
        Keys::Zipf {
            distinct: ZIPF_KEYS,
            exponent: 1.0,
        },
    );
    let traffic: [(&'static str, Vec<Item<'_>>); 2] = [
        ("cold", wirespeed_sigdata::items(&cold)),
        ("zipf", wirespeed_sigdata::items(&zipf)),
    ];
    let backends: Vec<Lanes> = Lanes::ALL
        .into_iter()
        .filter(|b| *b != Lanes::Auto && b.available_on(cpu()))
        .collect();
    let auto = Lanes::Auto.resolve_on(cpu());
    let mut rows = vec![];
    for &t in threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| e.to_string())?;
        for (name, items) in &traffic {
            let n = items.len();
            let mut push = |backend: Lanes, mode: Mode, cached: bool| -> Result<(), String> {
                let label = format!("{name} {backend} {mode} cached={cached}");
                let (per_s, hit_rate) = if cached {
                    // Zipf traffic keeps one cache (warmed by the warm-up pass, as a
                    // long-running verifier's is); cold traffic starts every pass with
                    // an empty one, so every lookup misses and the row shows the
                    // cache's cost where it cannot help.
                    let shared = KeyCache::new(CACHE_KEYS);
                    let last = std::sync::Mutex::new(None);
                    let per_s = time(&pool, n, reps, &label, || {
                        if *name == "cold" {
                            let fresh = KeyCache::new(CACHE_KEYS);
                            let v = verify_many_cached_with(items, mode, backend, cpu(), &fresh);
                            *last.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh.stats());
                            v
                        } else {
                            verify_many_cached_with(items, mode, backend, cpu(), &shared)
                        }
                    })?;
                    let st = last
                        .into_inner()
                        .unwrap_or_else(|p| p.into_inner())
                        .unwrap_or_else(|| shared.stats());
                    let hits = st.hits as f64 / (st.hits + st.misses).max(1) as f64;
                    (per_s, Some(hits))
                } else {
                    let per_s = time(&pool, n, reps, &label, || {
                        verify_many_with(items, mode, backend, cpu())
                    })?;
                    (per_s, None)
                };
                rows.push(VariantRow {
                    traffic: name,
                    backend: backend.to_string(),
                    mode,
                    cached,
                    threads: t,
                    per_s,
                    hit_rate,
                });
                Ok(())
            };
            for &b in &backends {
                push(b, Mode::Strict, false)?;
            }
            for mode in Mode::ALL.into_iter().filter(|m| *m != Mode::Strict) {
                push(auto, mode, false)?;
            }
            push(auto, Mode::Strict, true)?;
        }
    }
    Ok(rows)
}

/// The table as markdown, each row beside the strict, uncached, widest-lane figure on
/// the same traffic and threads.
pub fn render_markdown(rows: &[VariantRow]) -> String {
    let auto = Lanes::Auto.resolve_on(cpu()).to_string();
    let mut s = String::new();
    s += &format!(
        "\n### verify_many variants: lane backends, modes, key cache\n\n- cold: a fresh key per signature; zipf: {ZIPF_KEYS} keys drawn by a Zipf law (exponent 1); key cache of {CACHE_KEYS} keys: for zipf one cache warmed by the warm-up pass (hit rate over all passes), for cold an empty cache every pass (hit rate of the last)\n- ratio: against `verify_many` (strict, {auto}, no cache) on the same traffic and threads\n\n"
    );
    s += "| traffic | threads | backend | mode | key cache | sigs/s | per core | ratio | hit rate |\n";
    s += "|---|---:|---|---|---|---:|---:|---:|---:|\n";
    for r in rows {
        let base = rows
            .iter()
            .find(|b| {
                b.traffic == r.traffic
                    && b.threads == r.threads
                    && b.backend == auto
                    && b.mode == Mode::Strict
                    && !b.cached
            })
            .map_or(f64::NAN, |b| b.per_s);
        s += &format!(
            "| {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.2} | {} |\n",
            r.traffic,
            r.threads,
            r.backend,
            r.mode,
            if r.cached { "yes" } else { "no" },
            r.per_s,
            r.per_s / r.threads as f64,
            r.per_s / base,
            r.hit_rate
                .map_or("".to_string(), |h| format!("{:.1}%", 100.0 * h))
        );
    }
    s
}

/// The table as JSON rows.
pub fn render_json(rows: &[VariantRow]) -> serde_json::Value {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "traffic": r.traffic,
                "threads": r.threads,
                "backend": r.backend,
                "mode": r.mode.name(),
                "key_cache": r.cached,
                "sigs_per_s": r.per_s,
                "hit_rate": r.hit_rate,
            })
        })
        .collect()
}

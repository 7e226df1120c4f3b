//! `wirespeed kvs serve` under `--maxmemory`: with allkeys-lru, writing ten times the
//! limit keeps the dataset estimate (INFO `used_memory`) under the limit and the
//! process's resident size within 1.5 x the limit plus a fixed allowance, for values of
//! one size each from 1 byte to 1 MiB and for a skewed mix of sizes; with noeviction,
//! writes past the limit get Redis's OOM error while reads and deletes still work.
//! The other policies, each filling past a 2 MiB limit: the `volatile-*` ones evict
//! only keys with a deadline (volatile-ttl the nearest first) and then refuse writes
//! as noeviction does; allkeys-random evicts old and new keys alike; the LFU ones
//! keep keys read often over keys read once; OBJECT FREQ, CONFIG SET of the policy
//! names and RESTORE ... FREQ as in Redis.
//!
//! Linux only for the resident size (`/proc/PID/status`); elsewhere those checks are
//! skipped with a line saying so.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use common::kvs_serve;

const MIB: usize = 1 << 20;
const KIB: usize = 1 << 10;

/// Resident size allowed beyond 1.5 x `maxmemory` (see [`rss_limit`]).
///
/// What it covers, as measured (x86-64 Linux): the idle server is about 8 MiB resident
/// (code, thread stacks, the allocator's own tables); one pipelined batch of at most
/// [`BATCH_BYTES`] sits in the connection's input buffer while its values are copied
/// into the store, and the largest value, 1 MiB, may be in both at once; the
/// allocator keeps some freed pages for reuse before giving them back. Measured
/// (debug build, jemalloc): the churn tests peaked at 26.8-28.8 MiB with a 16 MiB
/// limit, at most 4.8 MiB over 1.5 x the limit, so 16 MiB leaves about 11 MiB of
/// margin; the old table reached 84.1 MiB with 1-byte values. The 0.5 x `maxmemory`
/// covers what the allocator cannot give back: holes among live blocks left by
/// evicted keys.
const RSS_FIXED: usize = 16 * MIB;

fn rss_limit(maxmemory: usize) -> usize {
    maxmemory + maxmemory / 2 + RSS_FIXED
}

/// The limit is applied before each write, so the dataset may end a write above it by
/// that write's cost (each batch ends with a one-byte SET: a 64-byte node and two small
/// blocks, under 128 bytes). The client buffers count against the limit too, but they
/// are measured at the end of a round, so INFO (a later request) may see them grown by
/// the batch's replies: the check is on `used_memory` less `mem_clients_normal`, both of
/// one INFO.
const SETTLE_SLACK: usize = 128;

/// INFO memory's `used_memory`, and the same less `mem_clients_normal` (one INFO).
fn used_and_dataset(con: &mut redis::Connection) -> (usize, usize) {
    let m = info(con, "memory");
    let num = |k: &str| -> usize {
        m.get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("INFO memory has no {k}: {m:?}"))
    };
    let used = num("used_memory");
    (used, used - num("mem_clients_normal"))
}

/// Bytes of values written in all (allkeys-lru test).
const TOTAL: usize = 200 * MIB;
/// Bytes of values in one pipelined batch.
const BATCH_BYTES: usize = 2 * MIB;
/// Most SETs in one pipelined batch.
const BATCH_SETS: usize = 20_000;
/// Keys are drawn from this many.
const KEY_SPACE: u64 = 10_000_000;
const MAX_VALUE: usize = MIB;

/// SplitMix64: a small deterministic generator (the same data on every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in lo..=hi.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    /// A value size: 90% 100-1000 bytes, 9% 10-100 KiB, 1% 300 KiB-1 MiB.
    fn value_len(&mut self) -> usize {
        match self.next() % 100 {
            0..=89 => self.range(100, 1000),
            90..=98 => self.range(10 * KIB, 100 * KIB),
            _ => self.range(300 * KIB, MAX_VALUE),
        }
    }
}

fn connect(addr: &str) -> redis::Connection {
    redis::Client::open(format!("redis://{addr}/"))
        .and_then(|c| c.get_connection())
        .expect("connect")
}

/// One INFO section as name -> value.
fn info(con: &mut redis::Connection, section: &str) -> HashMap<String, String> {
    let text: String = redis::cmd("INFO").arg(section).query(con).expect("INFO");
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

fn info_num(con: &mut redis::Connection, section: &str, field: &str) -> usize {
    let s = info(con, section);
    s.get(field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("INFO {section} has no number {field}: {s:?}"))
}

/// A `/proc/PID/status` size field (VmRSS, VmHWM) in bytes; None off Linux.
fn proc_status(pid: u32, field: &str) -> Option<usize> {
    let s = wirespeed_util::proc::read_status(Some(pid)).ok()?;
    let bytes = wirespeed_util::proc::status_bytes(&s, field.trim_end_matches(':'))?;
    usize::try_from(bytes).ok()
}

fn mib(b: usize) -> String {
    format!("{:.1} MiB", b as f64 / MIB as f64)
}

/// A line that shows in `cargo test` output (past the harness's capture).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Checks the server's resident size, from /proc and from INFO, against `limit`.
fn check_rss(con: &mut redis::Connection, pid: u32, maxmemory: usize, what: &str) {
    let limit = rss_limit(maxmemory);
    let Some(rss) = proc_status(pid, "VmRSS:") else {
        say("skipped: no /proc/PID/status here, resident size not checked");
        return;
    };
    let peak = proc_status(pid, "VmHWM:").unwrap_or(0);
    let info_rss = info_num(con, "memory", "used_memory_rss");
    let used = info_num(con, "memory", "used_memory");
    say(&format!(
        "{what}: maxmemory {}, used_memory {}, VmRSS {}, used_memory_rss {}, VmHWM {}, limit {}",
        mib(maxmemory),
        mib(used),
        mib(rss),
        mib(info_rss),
        mib(peak),
        mib(limit)
    ));
    assert!(
        rss <= limit,
        "{what}: VmRSS {} over maxmemory {} + allowance = {}",
        mib(rss),
        mib(maxmemory),
        mib(limit)
    );
    assert!(
        info_rss <= limit,
        "{what}: INFO used_memory_rss {} over {}",
        mib(info_rss),
        mib(limit)
    );
    assert!(info_rss > 0, "INFO used_memory_rss is 0");
}

/// Writes ten times `maxmemory` of SETs with values of `size` bytes to random keys
/// (16 bytes, out of ten times as many as fit), under allkeys-lru, in pipelined
/// batches; after each batch checks INFO `used_memory` against the limit and records
/// VmRSS. Returns the highest VmRSS after a batch (0 off Linux).
fn churn(size: usize, maxmemory: usize) -> usize {
    let (server, addr) = kvs_serve(&[
        "--port",
        "0",
        "--maxmemory",
        &format!("{}mb", maxmemory / MIB),
        "--maxmemory-policy",
        "allkeys-lru",
    ]);
    let pid = server.0.id();
    let mut con = connect(&addr);
    let idle = proc_status(pid, "VmRSS:").unwrap_or(0);
    // What a key costs in the store at the least: key, value and 72 bytes.
    let cost = 16 + size + 72;
    let fit = (maxmemory / cost).max(1) as u64;
    let value = vec![b'v'; size];
    let per_batch = (BATCH_BYTES / size).clamp(1, BATCH_SETS);
    let mut rng = Rng(0x5eed ^ size as u64);
    let start = Instant::now();
    let (mut written, mut batches, mut top_used, mut top_rss) = (0, 0, 0, 0);
    while written < 10 * maxmemory {
        let mut pipe = redis::pipe();
        for _ in 0..per_batch {
            let key = format!("key:{:012}", rng.next() % (10 * fit));
            pipe.cmd("SET").arg(key).arg(&value).ignore();
        }
        pipe.cmd("SET").arg("settle").arg("x").ignore();
        pipe.query::<()>(&mut con).expect("a SET batch");
        written += per_batch * cost;
        batches += 1;
        let (used, dataset) = used_and_dataset(&mut con);
        assert!(
            dataset <= maxmemory + SETTLE_SLACK,
            "values of {size} B, after {} written: used_memory {used}, less the client \
             buffers {dataset}, over maxmemory {maxmemory}",
            mib(written)
        );
        top_used = top_used.max(used);
        top_rss = top_rss.max(proc_status(pid, "VmRSS:").unwrap_or(0));
    }
    let evicted: u64 = info(&mut con, "stats")
        .get("evicted_keys")
        .and_then(|v| v.parse().ok())
        .expect("INFO stats evicted_keys");
    let keys: usize = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    say(&format!(
        "values of {size} B: {} written in {batches} batches in {:.2} s; {keys} keys, \
         {evicted} evicted; idle VmRSS {}, highest used_memory {}, highest VmRSS after a \
         batch {} ({:.2} x maxmemory {}), limit {}",
        mib(written),
        start.elapsed().as_secs_f64(),
        mib(idle),
        mib(top_used),
        mib(top_rss),
        top_rss as f64 / maxmemory as f64,
        mib(maxmemory),
        mib(rss_limit(maxmemory))
    ));
    assert!(evicted > 0, "values of {size} B: nothing evicted");
    assert!(
        top_used >= maxmemory / 2,
        "values of {size} B: used_memory reached only {top_used}"
    );
    if proc_status(pid, "VmRSS:").is_none() {
        say("skipped: no /proc/PID/status here, resident size not checked");
    }
    top_rss
}

/// [`churn`] with values of `size` bytes into 16 MiB: the highest VmRSS after a batch
/// is within [`rss_limit`].
fn churn_stays_within_the_limit(size: usize) {
    let maxmemory = 16 * MIB;
    let top = churn(size, maxmemory);
    assert!(
        top <= rss_limit(maxmemory),
        "values of {size} B: VmRSS reached {} ({:.2} x maxmemory {}), over 1.5 x + {} = {}",
        mib(top),
        top as f64 / maxmemory as f64,
        mib(maxmemory),
        mib(RSS_FIXED),
        mib(rss_limit(maxmemory))
    );
}

#[test]
fn churn_of_1_byte_values_stays_within_one_and_a_half_maxmemory() {
    churn_stays_within_the_limit(1);
}

#[test]
fn churn_of_16_byte_values_stays_within_one_and_a_half_maxmemory() {
    churn_stays_within_the_limit(16);
}

#[test]
fn churn_of_1_kib_values_stays_within_one_and_a_half_maxmemory() {
    churn_stays_within_the_limit(KIB);
}

#[test]
fn churn_of_64_kib_values_stays_within_one_and_a_half_maxmemory() {
    churn_stays_within_the_limit(64 * KIB);
}

#[test]
fn churn_of_1_mib_values_stays_within_one_and_a_half_maxmemory() {
    churn_stays_within_the_limit(MIB);
}

#[test]
fn allkeys_lru_keeps_the_dataset_and_the_process_near_maxmemory() {
    let maxmemory = 32 * MIB;
    let (server, addr) = kvs_serve(&[
        "--port",
        "0",
        "--maxmemory",
        "32mb",
        "--maxmemory-policy",
        "allkeys-lru",
    ]);
    let pid = server.0.id();
    let mut con = connect(&addr);
    let data: Vec<u8> = (0..MAX_VALUE).map(|i| (i % 251) as u8).collect();
    let mut rng = Rng(0x5eed);
    let start = Instant::now();
    let (mut written, mut sets, mut batches, mut top_used, mut top_rss) = (0, 0, 0, 0, 0);
    while written < TOTAL {
        let mut pipe = redis::pipe();
        let mut bytes = 0;
        while bytes < BATCH_BYTES {
            let len = rng.value_len();
            let key = format!("key:{}", rng.next() % KEY_SPACE);
            pipe.cmd("SET").arg(key).arg(&data[..len]).ignore();
            bytes += len;
            sets += 1;
        }
        pipe.cmd("SET").arg("settle").arg("x").ignore();
        pipe.query::<()>(&mut con).expect("a SET batch");
        written += bytes;
        batches += 1;
        let (used, dataset) = used_and_dataset(&mut con);
        assert!(
            dataset <= maxmemory + SETTLE_SLACK,
            "after {} written: used_memory {used}, less the client buffers {dataset}, over \
             maxmemory {maxmemory}",
            mib(written)
        );
        if written >= 2 * maxmemory {
            assert!(
                used >= maxmemory / 2,
                "used_memory {used}: eviction went far below the limit"
            );
        }
        top_used = top_used.max(used);
        top_rss = top_rss.max(proc_status(pid, "VmRSS:").unwrap_or(0));
    }
    let secs = start.elapsed().as_secs_f64();
    let stats = info(&mut con, "stats");
    let evicted: u64 = stats
        .get("evicted_keys")
        .and_then(|v| v.parse().ok())
        .expect("INFO stats evicted_keys");
    let keys: usize = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    say(&format!(
        "allkeys-lru: {} in {sets} SETs ({batches} batches) in {secs:.2} s; {keys} keys left, \
         {evicted} evicted; highest used_memory {}, highest VmRSS after a batch {}",
        mib(written),
        mib(top_used),
        mib(top_rss)
    ));
    assert!(evicted > 0, "nothing evicted: {stats:?}");
    assert!(
        keys > 0 && (keys as u64) < sets,
        "{keys} keys after {sets} SETs"
    );
    assert!(
        top_rss <= rss_limit(maxmemory),
        "VmRSS reached {} after a batch, over {}",
        mib(top_rss),
        mib(rss_limit(maxmemory))
    );
    // The most recent writes are still there (LRU evicts the cold ones first).
    let v: Vec<u8> = redis::cmd("GET")
        .arg("settle")
        .query(&mut con)
        .expect("GET");
    assert_eq!(v, b"x");
    check_rss(&mut con, pid, maxmemory, "allkeys-lru");
}

fn is_oom(e: &redis::RedisError) -> bool {
    let s = e.to_string();
    s.contains("OOM") && s.contains("command not allowed")
}

#[test]
fn noeviction_refuses_writes_past_the_limit_but_serves_reads_and_deletes() {
    let maxmemory = 8 * MIB;
    let (server, addr) = kvs_serve(&["--port", "0", "--maxmemory", "8mb"]);
    let pid = server.0.id();
    let mut con = connect(&addr);
    let value = vec![7u8; 64 * KIB];
    // The limit applies to the dataset's heap blocks (allocator rounding included, as
    // INFO's `used_memory` counts them) plus the clients' buffers: a 64 KiB value
    // costs at most 4 KiB over its bytes.
    let write_cost = 68 * KIB + 16 + 72;
    // Fill until the first refusal.
    let mut stored = 0;
    let refused = loop {
        let r: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("key:{stored}"))
            .arg(&value)
            .query(&mut con);
        match r {
            Ok(()) => stored += 1,
            Err(e) => break e,
        }
        assert!(stored < 1000, "8mb never filled");
    };
    assert!(is_oom(&refused), "{refused}");
    let used = info_num(&mut con, "memory", "used_memory");
    assert!(
        used > maxmemory - write_cost && used <= maxmemory + write_cost,
        "refused after {stored} values of 64 KiB at used_memory {used}"
    );
    // Writes that may add memory are refused now, large ones included. The request
    // buffer a 1 MiB SET grows is given back after it, which may leave room under the
    // limit for one more write; never for two.
    let big = vec![9u8; MIB];
    let mut accepted = Vec::new();
    for i in 0..40 {
        let r: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("big:{i}"))
            .arg(&big)
            .query(&mut con);
        match r {
            Ok(()) => accepted.push(format!("big:{i}")),
            Err(e) => assert!(is_oom(&e), "SET big:{i}: {e}"),
        }
    }
    assert!(accepted.len() <= 1, "accepted {accepted:?}");
    let used = info_num(&mut con, "memory", "used_memory");
    assert!(used <= maxmemory + MIB + write_cost, "used_memory {used}");
    for cmd in [
        redis::cmd("APPEND").arg("key:0").arg("x").clone(),
        redis::cmd("INCR").arg("n").clone(),
        redis::cmd("MSET").arg("a").arg("1").clone(),
        redis::cmd("SETNX").arg("b").arg("1").clone(),
    ] {
        let r: redis::RedisResult<redis::Value> = cmd.query(&mut con);
        assert!(r.as_ref().is_err_and(is_oom), "{r:?}");
    }
    // Reads, deletes and the rest still work.
    let got: Vec<u8> = redis::cmd("GET").arg("key:1").query(&mut con).expect("GET");
    assert_eq!(got, value);
    let n: usize = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    assert_eq!(n, stored + accepted.len());
    let e: i64 = redis::cmd("EXPIRE")
        .arg("key:2")
        .arg(100)
        .query(&mut con)
        .expect("EXPIRE");
    assert_eq!(e, 1);
    check_rss(&mut con, pid, maxmemory, "noeviction at the limit");
    // The 1 MiB requests grew this connection's query buffer, which counts against
    // the limit until the server gives it back (within two seconds of small requests).
    let start = Instant::now();
    while info_num(&mut con, "memory", "mem_clients_normal") >= 256 * KIB {
        assert!(start.elapsed().as_secs() < 5, "the query buffer was kept");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Deletes make room: writes are accepted again (after the big value, if one got
    // in, at most two 64 KiB values).
    for k in &accepted {
        let _: i64 = redis::cmd("DEL").arg(k).query(&mut con).expect("DEL");
    }
    let mut deleted = 0;
    loop {
        let r: redis::RedisResult<()> = redis::cmd("SET").arg("again").arg("v").query(&mut con);
        match r {
            Ok(()) => break,
            Err(e) => assert!(is_oom(&e), "{e}"),
        }
        let d: i64 = redis::cmd("DEL")
            .arg(format!("key:{deleted}"))
            .query(&mut con)
            .expect("DEL");
        assert_eq!(d, 1);
        deleted += 1;
        assert!(deleted <= 2, "{deleted} deletes and SET is still refused");
    }
    check_rss(&mut con, pid, maxmemory, "noeviction after deletes");
}

/// A server with `maxmemory` 2mb and `policy`, set by CONFIG SET.
fn serve_with_policy(policy: &str) -> (common::Killed, redis::Connection) {
    let (server, addr) = kvs_serve(&["--port", "0", "--maxmemory", "2mb"]);
    let mut con = connect(&addr);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg(policy)
        .query(&mut con)
        .expect("CONFIG SET maxmemory-policy");
    (server, con)
}

fn exists(con: &mut redis::Connection, key: &str) -> bool {
    redis::cmd("EXISTS")
        .arg(key)
        .query::<i64>(con)
        .expect("EXISTS")
        == 1
}

/// SETs `key` to a 1 KiB value (with a deadline `ex` seconds away, unless 0).
fn set_kib(con: &mut redis::Connection, key: &str, ex: u64) -> redis::RedisResult<()> {
    let mut c = redis::cmd("SET");
    c.arg(key).arg(vec![b'x'; KIB]);
    if ex != 0 {
        c.arg("EX").arg(ex);
    }
    c.query(con)
}

#[test]
fn volatile_policies_evict_only_keys_with_a_deadline_then_refuse_writes() {
    for policy in [
        "volatile-lru",
        "volatile-random",
        "volatile-ttl",
        "volatile-lfu",
    ] {
        let (_server, mut con) = serve_with_policy(policy);
        // 400 persistent keys (about a quarter of the limit), then three times the
        // limit of keys with deadlines, the later ones further away.
        for i in 0..400 {
            set_kib(&mut con, &format!("p:{i}"), 0).expect("SET p");
        }
        let n = 4000;
        for i in 0..n {
            set_kib(&mut con, &format!("v:{i}"), 10_000 + i).expect("SET v");
        }
        let evicted = info_num(&mut con, "stats", "evicted_keys");
        let left: Vec<u64> = (0..n)
            .filter(|i| exists(&mut con, &format!("v:{i}")))
            .collect();
        say(&format!(
            "{policy}: {evicted} evicted, {} of {n} keys with a deadline left",
            left.len()
        ));
        assert!(evicted > 0, "{policy}: nothing evicted");
        assert_eq!(evicted as u64 + left.len() as u64, n, "{policy}");
        for i in 0..400 {
            assert!(
                exists(&mut con, &format!("p:{i}")),
                "{policy}: p:{i} evicted"
            );
        }
        if policy == "volatile-ttl" {
            // The nearest deadlines went first: the survivors are mostly the last
            // written (sampled, so not strictly).
            let late = left
                .iter()
                .filter(|&&i| i >= n - left.len() as u64 * 2)
                .count();
            assert!(
                late * 10 >= left.len() * 9,
                "{policy}: {late} of {} survivors among the latest deadlines",
                left.len()
            );
        }
        // Persistent keys push the others out; once none with a deadline is left,
        // writes are refused as under noeviction.
        let mut i = 400;
        let refused = loop {
            match set_kib(&mut con, &format!("p:{i}"), 0) {
                Ok(()) => i += 1,
                Err(e) => break e,
            }
            assert!(i < 10_000, "{policy}: writes never refused");
        };
        assert!(is_oom(&refused), "{policy}: {refused}");
        let volatile = (0..n)
            .filter(|i| exists(&mut con, &format!("v:{i}")))
            .count();
        assert_eq!(volatile, 0, "{policy}: refused with keys to evict");
        let keys: usize = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
        assert_eq!(keys, i, "{policy}: a persistent key was evicted");
        let evicted = info_num(&mut con, "stats", "evicted_keys");
        assert_eq!(evicted as u64, n, "{policy}");
        // Reads still work.
        let v: Vec<u8> = redis::cmd("GET").arg("p:0").query(&mut con).expect("GET");
        assert_eq!(v.len(), KIB);
    }
}

#[test]
fn allkeys_random_evicts_old_and_new_keys_alike() {
    let (_server, mut con) = serve_with_policy("allkeys-random");
    let n = 5000;
    for i in 0..n {
        set_kib(
            &mut con,
            &format!("k:{i}"),
            if i % 2 == 0 { 0 } else { 100_000 },
        )
        .expect("SET");
    }
    let left: Vec<usize> = (0..n)
        .filter(|i| exists(&mut con, &format!("k:{i}")))
        .collect();
    let evicted = info_num(&mut con, "stats", "evicted_keys");
    say(&format!(
        "allkeys-random: {evicted} evicted, {} left",
        left.len()
    ));
    assert_eq!(evicted + left.len(), n);
    // Unlike LRU, keys of the last fifth written were evicted too, and some of the
    // first fifth are still there; keys with and without deadlines alike.
    let last = (4 * n / 5..n).filter(|i| !left.contains(i)).count();
    let first = left.iter().filter(|&&i| i < n / 5).count();
    assert!(last > 20, "only {last} of the last fifth evicted");
    assert!(first > 20, "only {first} of the first fifth left");
    let persistent = left.iter().filter(|&&i| i % 2 == 0).count();
    assert!(
        persistent * 3 > left.len() && persistent * 3 < 2 * left.len(),
        "{persistent} persistent of {} left",
        left.len()
    );
}

#[test]
fn allkeys_lfu_keeps_frequently_read_keys_over_keys_read_once() {
    for policy in ["allkeys-lfu", "volatile-lfu"] {
        let (_server, mut con) = serve_with_policy(policy);
        let ex = if policy == "volatile-lfu" { 100_000 } else { 0 };
        // 200 keys read 100 times each, written first (LRU would evict them first).
        // With lfu-log-factor 10, 100 reads raise a counter from 5 to about 13, and
        // leave it at 6 (as one read does) with probability (10/11)^99, about 1e-4.
        for i in 0..200 {
            set_kib(&mut con, &format!("hot:{i}"), ex).expect("SET hot");
        }
        for _ in 0..100 {
            let mut pipe = redis::pipe();
            for i in 0..200 {
                pipe.cmd("GET").arg(format!("hot:{i}")).ignore();
            }
            pipe.query::<()>(&mut con).expect("GETs");
        }
        // Then four times the limit of keys, each read once.
        let n = 8000;
        for i in 0..n {
            let key = format!("cold:{i}");
            set_kib(&mut con, &key, ex).expect("SET cold");
            let _: Option<Vec<u8>> = redis::cmd("GET").arg(&key).query(&mut con).expect("GET");
        }
        let hot = (0..200)
            .filter(|i| exists(&mut con, &format!("hot:{i}")))
            .count();
        let cold = (0..n)
            .filter(|i| exists(&mut con, &format!("cold:{i}")))
            .count();
        let evicted = info_num(&mut con, "stats", "evicted_keys");
        say(&format!(
            "{policy}: {hot} of 200 frequently read keys and {cold} of {n} read once left, \
             {evicted} evicted"
        ));
        assert_eq!(evicted + hot + cold, n + 200, "{policy}");
        // A frequent key goes only when all 5 samples are frequent ones (about 10% of
        // the keys): rare. A wide margin for the sampling.
        assert!(
            hot >= 190,
            "{policy}: only {hot} of 200 frequently read keys left"
        );
        assert!(cold < n / 2, "{policy}: {cold} read-once keys left");
    }
}

#[test]
fn object_freq_counts_under_an_lfu_policy_only() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut con = connect(&addr);
    let err = |con: &mut redis::Connection, args: &[&str]| -> String {
        let r: redis::RedisResult<redis::Value> = redis::cmd(args[0]).arg(&args[1..]).query(con);
        r.expect_err(&format!("{args:?} succeeded")).to_string()
    };
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("hello")
        .query(&mut con)
        .expect("SET");
    let e = err(&mut con, &["OBJECT", "FREQ", "k"]);
    assert!(
        e.contains("An LFU maxmemory policy is not selected, access frequency not tracked"),
        "{e}"
    );
    let set = |con: &mut redis::Connection, k: &str, v: &str| {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(k)
            .arg(v)
            .query(con)
            .expect("CONFIG SET");
    };
    // Every policy by its name, any case; others get Redis's error.
    for p in [
        "noeviction",
        "allkeys-lru",
        "volatile-lru",
        "allkeys-random",
        "volatile-random",
        "volatile-ttl",
        "volatile-lfu",
        "ALLKEYS-LFU",
    ] {
        set(&mut con, "maxmemory-policy", p);
        let got: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("maxmemory-policy")
            .query(&mut con)
            .expect("CONFIG GET");
        assert_eq!(got[1], p.to_ascii_lowercase());
    }
    let e = err(&mut con, &["CONFIG", "SET", "maxmemory-policy", "lru"]);
    assert!(
        e.contains(
            "CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) \
             must be one of the following: volatile-lru, volatile-lfu, volatile-random, \
             volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"
        ),
        "{e}"
    );
    let e = err(&mut con, &["CONFIG", "SET", "lfu-log-factor", "-1"]);
    assert!(
        e.contains("argument must be between 0 and 2147483647 inclusive"),
        "{e}"
    );
    // allkeys-lfu: a new key starts at 5; with lfu-log-factor 0 every read adds one.
    let freq = |con: &mut redis::Connection, k: &str| -> Option<i64> {
        redis::cmd("OBJECT")
            .arg("FREQ")
            .arg(k)
            .query(con)
            .expect("OBJECT FREQ")
    };
    let _: () = redis::cmd("SET")
        .arg("n")
        .arg("hello")
        .query(&mut con)
        .expect("SET");
    assert_eq!(freq(&mut con, "n"), Some(5));
    assert_eq!(freq(&mut con, "nosuchkey"), None);
    set(&mut con, "lfu-log-factor", "0");
    for _ in 0..10 {
        let _: Vec<u8> = redis::cmd("GET").arg("n").query(&mut con).expect("GET");
    }
    // OBJECT, TYPE, EXISTS and TTL are not uses.
    let _: String = redis::cmd("TYPE").arg("n").query(&mut con).expect("TYPE");
    let _: i64 = redis::cmd("EXISTS")
        .arg("n")
        .query(&mut con)
        .expect("EXISTS");
    assert_eq!(freq(&mut con, "n"), Some(15));
    assert_eq!(freq(&mut con, "n"), Some(15));
    let e = err(&mut con, &["OBJECT", "IDLETIME", "n"]);
    assert!(
        e.contains("An LFU maxmemory policy is selected, idle time not tracked"),
        "{e}"
    );
    // RESTORE ... FREQ sets the counter.
    let dump: Vec<u8> = redis::cmd("DUMP").arg("n").query(&mut con).expect("DUMP");
    let _: () = redis::cmd("RESTORE")
        .arg("r")
        .arg(0)
        .arg(dump)
        .arg("FREQ")
        .arg(100)
        .query(&mut con)
        .expect("RESTORE");
    assert_eq!(freq(&mut con, "r"), Some(100));
    // Back to an LRU policy: IDLETIME answers, FREQ is refused.
    set(&mut con, "maxmemory-policy", "volatile-lru");
    let idle: i64 = redis::cmd("OBJECT")
        .arg("IDLETIME")
        .arg("n")
        .query(&mut con)
        .expect("OBJECT IDLETIME");
    assert!(idle < 5, "{idle}");
    assert!(err(&mut con, &["OBJECT", "FREQ", "n"]).contains("not selected"));
}

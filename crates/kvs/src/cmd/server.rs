//! Server commands: INFO, DBSIZE, FLUSHALL/FLUSHDB, BGREWRITEAOF, MEMORY USAGE, SHUTDOWN.

use super::table::COMMANDS;
use super::{eq, Ctx};
use crate::aof::Effect;
use crate::resp::Writer;
use crate::state::cmdstats::{Counts, Local, Totals};

/// DBSIZE.
pub fn dbsize(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    w.int(ctx.keys.len() as i64);
}

/// FLUSHALL [ASYNC | SYNC]: every database.
/// With a `save` schedule the RDB file is written at once (empty), as Redis does, so
/// that a restart does not bring the keys back from the last save.
pub fn flushall(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let all: Vec<usize> = (0..=ctx.shared.keyspace.max_used()).collect();
    let at = w.position();
    flush(ctx, args, &all, w);
    if w.byte_at(at) != Some(b'-')
        && !crate::snapshot::schedule(ctx.config).is_empty()
        && !ctx
            .shared
            .rdb
            .in_progress
            .load(std::sync::atomic::Ordering::Acquire)
    {
        let now = wirespeed_util::time::unix_ms();
        if let Err(e) = crate::snapshot::save(ctx.shared, ctx.keys, ctx.config, now) {
            eprintln!("kvs: FLUSHALL could not write the empty RDB file: {e}");
        }
    }
}

/// FLUSHDB [ASYNC | SYNC]: the selected database.
pub fn flushdb(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    flush(ctx, args, &[ctx.keys.db()], w);
}

fn flush(ctx: &mut Ctx, args: &[&[u8]], dbs: &[usize], w: &mut Writer) {
    // ASYNC (or no option with `lazyfree-lazy-user-flush yes`) frees the keys in the
    // background; they are gone at once either way.
    let lazy = match args.get(1..).unwrap_or_default() {
        [] => ctx
            .config
            .compat
            .get("lazyfree-lazy-user-flush")
            .is_some_and(|v| v == "yes"),
        [m] if eq(m, "async") => true,
        [m] if eq(m, "sync") => false,
        _ => return w.error(super::SYNTAX),
    };
    let pairs: Vec<(usize, Option<usize>)> = dbs.iter().map(|&d| (d, None)).collect();
    super::multi::touch_dbs(ctx, &pairs);
    ctx.keys.lock_dbs(dbs);
    for &db in dbs {
        ctx.in_db(db, |ctx| {
            if lazy {
                ctx.keys.clear_lazily();
            } else {
                ctx.keys.clear();
            }
            if ctx.logging {
                ctx.push_effect(Effect::Clear);
            }
        });
    }
    // Clients blocked on keys that went are looked at again (XREADGROUP answers that
    // its group is gone).
    let hub = &ctx.shared.hub;
    if hub.any_blocked() {
        for &db in dbs {
            let keys = hub.waited_in(db);
            ctx.ready.extend(keys.into_iter().map(|k| (db, k)));
        }
    }
    w.simple("OK");
}

/// BGREWRITEAOF.
pub fn bgrewriteaof(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    if ctx.logging && ctx.shared.log.is_some() {
        ctx.shared
            .rewrite_requested
            .store(true, std::sync::atomic::Ordering::Relaxed);
        w.simple("Background append only file rewriting started");
    } else {
        w.error("ERR the append-only log is off (start the server with --aof FILE)");
    }
}

/// INFO [section ...].
pub fn info(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let want = |s: &str| {
        args.len() < 2
            || args[1..]
                .iter()
                .any(|a| eq(a, s) || eq(a, "all") || eq(a, "everything") || eq(a, "default"))
    };
    let st = &ctx.shared.stats.total(ctx.stats);
    let mut out = String::new();
    if want("server") {
        out.push_str(&format!(
            "# Server\r\nredis_version:7.2.0\r\nwirespeed_version:{}\r\nredis_mode:standalone\r\nprocess_id:{}\r\nrun_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::process::id(),
            ctx.shared.repl.run_id,
            ctx.config.port,
            ctx.now.saturating_sub(st.started_ms) / 1000
        ));
    }
    if want("clients") {
        let (bk, bn) = ctx.shared.hub.blocking_keys();
        out.push_str(&format!(
            "# Clients\r\nconnected_clients:{}\r\nblocked_clients:{}\r\ntracking_clients:{}\r\npubsub_clients:{}\r\ntotal_blocking_keys:{bk}\r\ntotal_blocking_keys_on_nokey:{bn}\r\n\r\n",
            st.connected,
            ctx.shared.hub.blocked_count() + ctx.shared.pause.held(),
            ctx.shared.hub.tracking.counts().0,
            ctx.shared.hub.subs().clients()
        ));
    }
    if want("memory") {
        let clients = ctx.shared.stats.client_buffers();
        out.push_str(&format!(
            "# Memory\r\nused_memory:{}\r\nused_memory_rss:{}\r\nmem_clients_normal:{clients}\r\nused_memory_dataset:{}\r\nmaxmemory:{}\r\nmaxmemory_policy:{}\r\nnumber_of_cached_scripts:{}\r\nlazyfree_pending_objects:{}\r\nmem_not_counted_for_evict:0\r\n\r\n",
            ctx.keys.memory() + clients + ctx.shared.scripts.memory(),
            rss_bytes(),
            ctx.keys.payload_bytes(),
            ctx.config.maxmemory,
            ctx.config.policy.name(),
            ctx.shared.scripts.cached(),
            crate::lazyfree::counts().0
        ));
    }
    if want("stats") {
        let (_, tk, ti, tp) = ctx.shared.hub.tracking.counts();
        let [da, dc, dk, dch] = ctx.shared.acl_log.counts();
        let lf = crate::lazyfree::counts().1;
        out.push_str(&format!(
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nexpired_keys:{}\r\nevicted_keys:{}\r\nlazyfreed_objects:{lf}\r\nmigrate_cached_sockets:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\nclient_output_buffer_limit_disconnections:{}\r\nacl_access_denied_auth:{da}\r\nacl_access_denied_cmd:{dc}\r\nacl_access_denied_key:{dk}\r\nacl_access_denied_channel:{dch}\r\ntracking_total_keys:{tk}\r\ntracking_total_items:{ti}\r\ntracking_total_prefixes:{tp}\r\ntotal_error_replies:{}\r\n{}\r\n",
            st.connections, st.commands, st.expired, st.evicted,
            super::migrate::cached_sockets(),
            st.hits, st.misses,
            ctx.shared.stats.output_limit_kills(),
            ctx.shared.stats.errors().0,
            ctx.shared.repl.sync_stats(),
        ));
    }
    let explicit = |s: &str| {
        args[1..]
            .iter()
            .any(|a| eq(a, s) || eq(a, "all") || eq(a, "everything"))
    };
    if want("persistence") {
        let shared = ctx.shared;
        let (on, rewriting, size) = match &shared.log {
            Some(l) => (1, l.rewriting() as u8, l.size()),
            None => (0, 0, 0),
        };
        let r = &shared.rdb;
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        let bg = r.in_progress.load(relaxed);
        let current = if bg {
            (ctx.now.saturating_sub(r.started_ms.load(relaxed)) / 1000) as i64
        } else {
            -1
        };
        out.push_str(&format!(
            "# Persistence\r\nloading:0\r\nasync_loading:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{current}\r\nrdb_saves:{}\r\naof_enabled:{on}\r\naof_rewrite_in_progress:{rewriting}\r\naof_rewrite_scheduled:{}\r\naof_last_bgrewrite_status:ok\r\naof_last_write_status:{}\r\naof_current_size:{size}\r\n\r\n",
            r.dirty.load(relaxed) + ctx.stats.dirty,
            bg as u8,
            r.last_save.load(relaxed),
            if r.last_ok.load(relaxed) { "ok" } else { "err" },
            r.last_secs.load(relaxed),
            r.saves.load(relaxed),
            shared.rewrite_requested.load(std::sync::atomic::Ordering::Relaxed) as u8,
            if shared.log.as_ref().is_some_and(|l| l.failing()) { "err" } else { "ok" },
        ));
    }
    if want("replication") {
        let priority = ctx
            .config
            .compat
            .get("replica-priority")
            .map_or("100", String::as_str);
        out.push_str(&ctx.shared.repl.info(ctx.now, priority));
    }
    if want("cluster") {
        let on = u8::from(ctx.shared.cluster.is_some());
        out.push_str(&format!("# Cluster\r\ncluster_enabled:{on}\r\n\r\n"));
    }
    if want("cpu") {
        let [user, sys, cuser, csys] = cpu_seconds();
        out.push_str(&format!(
            "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:{csys:.6}\r\nused_cpu_user_children:{cuser:.6}\r\n\r\n"
        ));
    }
    if want("errorstats") {
        out.push_str("# Errorstats\r\n");
        for (code, n) in ctx.shared.stats.errors().1 {
            out.push_str(&format!("errorstat_{code}:count={n}\r\n"));
        }
        out.push_str("\r\n");
    }
    if explicit("commandstats") {
        let shared = &ctx.shared.stats.per_command;
        out.push_str(&commandstats(shared, &ctx.stats.per_command));
    }
    if explicit("latencystats") {
        out.push_str(&latencystats(ctx));
    }
    if want("keyspace") {
        out.push_str("# Keyspace\r\n");
        for db in 0..=ctx.shared.keyspace.max_used() {
            let now = ctx.now;
            ctx.in_db(db, |ctx| {
                let keys = ctx.keys.len();
                if keys > 0 {
                    let (expires, avg_ttl) = ctx.keys.volatile(now);
                    out.push_str(&format!(
                        "db{db}:keys={keys},expires={expires},avg_ttl={avg_ttl}\r\n"
                    ));
                }
            });
        }
    }
    w.verbatim(out.as_bytes());
}

/// CPU seconds of this process: user, system, and those of its waited-for children
/// (Linux `/proc/self/stat`, in clock ticks of 1/100 s; zeros where unavailable).
fn cpu_seconds() -> [f64; 4] {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which may hold spaces, in parentheses).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|t| t.parse::<f64>().unwrap_or(0.0) / 100.0)
        .collect();
    let mut out = [0.0; 4];
    out.iter_mut().zip(f).for_each(|(o, v)| *o = v);
    out
}

/// Resident set size of this process in bytes (Linux `/proc/self/status`; 0 where
/// unavailable).
pub fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
            kb.checked_mul(1024)
        })
        .unwrap_or(0)
}

/// MEMORY USAGE key [SAMPLES count] | MEMORY HELP: the heap bytes a key takes, as
/// `maxmemory` counts them.
pub fn memory(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    if eq(sub, "help") && args.len() == 2 {
        return super::help(
            w,
            &[
                "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "USAGE <key> [SAMPLES <count>]",
                "    Return memory in bytes used by <key> and its value.",
            ],
        );
    }
    if !eq(sub, "usage") {
        return w.error(&format!(
            "ERR unknown subcommand '{}'. Try MEMORY HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
    match args.len() {
        3 => {}
        5 if eq(args[3], "samples") && super::parse_i64(args[4]).is_some() => {}
        3.. if args.len() % 2 == 1 => return w.error(super::SYNTAX),
        _ => return super::arity(w, b"memory|usage"),
    }
    match ctx.keys.get(args[2], ctx.now) {
        Some(e) => w.int(crate::store::Store::entry_cost(args[2].len(), &e.value) as i64),
        None => w.null(),
    }
}

/// SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]: the server stops (every loop within
/// 100 ms) after flushing the log, as on SIGTERM; the caller's connection closes
/// without a reply, as Redis's does. Once the loops have stopped the RDB file is
/// written when SAVE says so, or when a `save` schedule is set and NOSAVE does not say
/// otherwise (as Redis).
pub fn shutdown(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let mut on_exit = crate::snapshot::ON_EXIT_SCHEDULE;
    for a in &args[1..] {
        if eq(a, "abort") {
            return w.error("ERR No shutdown in progress.");
        }
        if !["nosave", "save", "now", "force"].iter().any(|o| eq(a, o)) {
            return w.error(super::SYNTAX);
        }
        if eq(a, "save") {
            on_exit = crate::snapshot::ON_EXIT_SAVE;
        } else if eq(a, "nosave") {
            on_exit = crate::snapshot::ON_EXIT_NOSAVE;
        }
    }
    if args[1..].iter().any(|a| eq(a, "save")) && args[1..].iter().any(|a| eq(a, "nosave")) {
        return w.error(super::SYNTAX);
    }
    ctx.shared
        .rdb
        .on_exit
        .store(on_exit, std::sync::atomic::Ordering::Relaxed);
    ctx.shared
        .shutdown
        .store(true, std::sync::atomic::Ordering::Relaxed);
    ctx.session.quit = true;
}

/// The INFO latencystats section: per command and subcommand with measured calls
/// (`crate::state::histogram`), the `latency-tracking-info-percentiles` of its
/// latency in microseconds, as Redis writes them
/// (`latency_percentiles_usec_get:p50=8.255,p99=16.511,p99.9=16.511`); only the
/// header with `latency-tracking no`.
fn latencystats(ctx: &Ctx) -> String {
    let mut out = String::from("# Latencystats\r\n");
    if ctx.config.latency_tracking {
        let cat = crate::acl::catalog::catalog();
        let names: Vec<String> = ctx
            .config
            .latency_percentiles
            .iter()
            .map(|&p| crate::config::percentile_text(p))
            .collect();
        for id in 0..cat.entries().len() as u16 {
            let h = ctx.shared.stats.histograms.get(id, &ctx.stats.histograms);
            if h.percentile_usec(100.0).is_none() {
                continue;
            }
            let values: Vec<String> = ctx
                .config
                .latency_percentiles
                .iter()
                .zip(&names)
                .map(|(&p, name)| format!("p{name}={:.3}", h.percentile_usec(p).unwrap_or(0.0)))
                .collect();
            out.push_str(&format!(
                "latency_percentiles_usec_{}:{}\r\n",
                cat.entry(id).name,
                values.join(",")
            ));
        }
    }
    out.push_str("\r\n");
    out
}

/// The INFO commandstats section.
fn commandstats(totals: &Totals, local: &Local) -> String {
    let mut out = String::from("# Commandstats\r\n");
    for (i, cmd) in COMMANDS.iter().enumerate() {
        let c = totals.get(i, local);
        if c == Counts::default() {
            continue;
        }
        let per = if c.calls > 0 {
            c.usec as f64 / c.calls as f64
        } else {
            0.0
        };
        out.push_str(&format!(
            "cmdstat_{}:calls={},usec={},usec_per_call={per:.2},rejected_calls={},failed_calls={}\r\n",
            cmd.name, c.calls, c.usec, c.rejected, c.failed
        ));
    }
    out.push_str("\r\n");
    out
}

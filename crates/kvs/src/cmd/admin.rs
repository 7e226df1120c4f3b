//! Administration: SAVE, BGSAVE, LASTSAVE (the append-only log is this server's only
//! persistence, so a save is a rewrite of the log), SLOWLOG, DEBUG SLEEP
//! (LATENCY is [`super::latency`]).
//!
//! The slow log keeps the commands that ran at least `slowlog-log-slower-than`
//! microseconds (negative: none; 0: every command), the newest first, at most
//! `slowlog-max-len` of them, with Redis's trimming of long argument lists (32
//! arguments, 128 bytes each). Commands flagged `skip_slowlog` (EXEC, AUTH, ...) are not
//! logged. At the default threshold (10 ms) fast commands are timed one call in 16 (see
//! [`crate::state::cmdstats`]); a lower threshold, or the latency monitor on, times
//! every command.

use std::sync::atomic::Ordering;

use super::{eq, parse_i64, Ctx};
use crate::aof::Effect;
use crate::resp::Writer;

/// SLOWLOG GET [count] | LEN | RESET | HELP.
pub fn slowlog(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    let log = &ctx.shared.slowlog;
    if eq(sub, "get") && args.len() <= 3 {
        let count = match args.get(2).map(|a| parse_i64(a)) {
            None => 10,
            Some(Some(-1)) => usize::MAX,
            Some(Some(n)) if n >= 0 => n as usize,
            Some(_) => return w.error("ERR count should be greater than or equal to -1"),
        };
        let g = log.lock();
        let n = g.0.len().min(count);
        w.array(n);
        for e in g.0.iter().take(n) {
            w.array(6);
            w.int(e.id as i64);
            w.int(e.time_secs as i64);
            w.int(e.micros as i64);
            w.array(e.argv.len());
            e.argv.iter().for_each(|a| w.bulk(a));
            w.bulk(e.addr.as_bytes());
            w.bulk(e.name.as_bytes());
        }
    } else if eq(sub, "len") && args.len() == 2 {
        w.int(log.lock().0.len() as i64);
    } else if eq(sub, "reset") && args.len() == 2 {
        log.lock().0.clear();
        w.simple("OK");
    } else if eq(sub, "help") && args.len() == 2 {
        super::help(
            w,
            &[
                "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "GET [<count>]",
                "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                "    Entries are made of:",
                "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                "    client name",
                "LEN",
                "    Return the length of the slowlog.",
                "RESET",
                "    Reset the slowlog.",
            ],
        );
    } else {
        unknown_sub(w, sub, "SLOWLOG");
    }
}

fn unknown_sub(w: &mut Writer, sub: &[u8], container: &str) {
    w.error(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {container} HELP.",
        String::from_utf8_lossy(sub)
    ));
}

/// SAVE: the RDB file (`dir`/`dbfilename`) written now, with every shard locked
/// meanwhile (see [`crate::snapshot`]); OK once it is on the disk.
pub fn save(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let now = wirespeed_util::time::unix_ms();
    match crate::snapshot::save(ctx.shared, ctx.keys, ctx.config, now) {
        Ok(_) => w.simple("OK"),
        Err(e) => w.error(&e),
    }
}

/// BGSAVE [SCHEDULE]: the keyspace copied now and written to the RDB file on a thread
/// of its own.
pub fn bgsave(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() > 2 || args.get(1).is_some_and(|a| !eq(a, "schedule")) {
        return w.error(super::SYNTAX);
    }
    let now = wirespeed_util::time::unix_ms();
    match crate::snapshot::bgsave(ctx.shared, ctx.keys, ctx.config, now) {
        Ok(()) => w.simple("Background saving started"),
        Err(e) => w.error(&e),
    }
}

/// LASTSAVE: when the RDB file was last written (or the server started).
pub fn lastsave(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    w.int(ctx.shared.rdb.last_save.load(Ordering::Relaxed) as i64);
}

/// DEBUG refused by `enable-debug-command` (Redis's text).
pub const DEBUG_REFUSED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// DEBUG SLEEP seconds | RELOAD | PANIC | HELP (the other DEBUG subcommands are not
/// served),
/// for the clients `enable-debug-command` allows.
pub fn debug(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let peer = ctx.session.meta.as_ref().map(|m| m.addr.as_str());
    if !ctx.config.debug_command.allows(peer) {
        return w.error(DEBUG_REFUSED);
    }
    let sub = args[1];
    if eq(sub, "sleep") && args.len() == 3 {
        let secs: f64 = match std::str::from_utf8(args[2])
            .ok()
            .and_then(|s| s.parse().ok())
        {
            Some(s) if (0.0..=3600.0).contains(&s) => s,
            _ => return w.error("ERR value is not a valid float"),
        };
        // As Redis, this connection's loop does nothing else meanwhile; the shards are
        // let go first so that the other loops go on.
        ctx.keys.unlock();
        std::thread::sleep(std::time::Duration::from_secs_f64(secs));
        w.simple("OK");
    } else if eq(sub, "reload") {
        reload(ctx, &args[2..], w);
    } else if eq(sub, "panic") && args.len() == 2 {
        // The supervisor's view of a bug: the process ends with a message (the
        // server's panic rule, crate::server::on_panic), it never goes deaf.
        panic!("DEBUG PANIC called by client {}", ctx.session.id);
    } else if eq(sub, "help") && args.len() == 2 {
        super::help(
            w,
            &[
                "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "SLEEP <seconds>",
                "    Stop the server for <seconds>. Decimals allowed.",
                "PANIC",
                "    Crash the server simulating a panic.",
                "RELOAD [MERGE] [NOFLUSH] [NOSAVE]",
                "    Save the RDB on disk and reload it back to memory. By default it will",
                "    save the RDB file and load it back.",
                "    * MERGE: keys in the file replace those in memory, the others stay.",
                "    * NOFLUSH: do not empty the databases before loading.",
                "    * NOSAVE: load the file as it is on disk, without saving first.",
            ],
        );
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: the RDB file saved (unless NOSAVE), then
/// read whole and parsed before anything changes (a file that cannot be loaded leaves
/// the keyspace as it was and answers an error), then the databases emptied (unless
/// NOFLUSH) and the file's keys and libraries put in; every shard held throughout, the
/// result logged and streamed as state. NOFLUSH without MERGE refuses a key that is
/// already there (Redis's rule), before anything changes.
fn reload(ctx: &mut Ctx, opts: &[&[u8]], w: &mut Writer) {
    const FAILED: &str = "ERR Error trying to load the RDB dump, check server logs.";
    let (mut save, mut flush, mut merge) = (true, true, false);
    for o in opts {
        if eq(o, "nosave") {
            save = false;
        } else if eq(o, "noflush") {
            flush = false;
        } else if eq(o, "merge") {
            merge = true;
        } else {
            return w.error(super::SYNTAX);
        }
    }
    ctx.keys.lock_every_db();
    if save {
        if let Err(e) = crate::snapshot::save(ctx.shared, ctx.keys, ctx.config, ctx.now) {
            return w.error(&e);
        }
    }
    let path = crate::snapshot::path(ctx.config);
    let dbs = ctx.shared.keyspace.dbs();
    let mut loaded = Vec::new();
    let read = std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|buf| {
            crate::cmd::dump::rdb::read(&buf, dbs, |k| loaded.push(k)).map_err(|e| e.to_string())
        });
    let summary = match read {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kvs: DEBUG RELOAD: {}: {e}", path.display());
            return w.error(FAILED);
        }
    };
    let now = ctx.now;
    if !flush && !merge {
        let mine = ctx.keys.db();
        for k in &loaded {
            ctx.keys.select(k.db);
            if ctx.keys.contains(&k.key, now) {
                ctx.keys.select(mine);
                eprintln!(
                    "kvs: DEBUG RELOAD: duplicate key '{}' in database {}",
                    String::from_utf8_lossy(&k.key),
                    k.db
                );
                return w.error(FAILED);
            }
        }
        ctx.keys.select(mine);
    }
    let libraries = &ctx.shared.scripts.libraries;
    let mut changes: Vec<Vec<Vec<u8>>> = Vec::new();
    if flush {
        let all: Vec<(usize, Option<usize>)> = (0..dbs).map(|d| (d, None)).collect();
        super::multi::touch_dbs(ctx, &all);
        let mine = ctx.keys.db();
        for db in 0..dbs {
            ctx.keys.select(db);
            ctx.keys.clear();
            if ctx.logging {
                ctx.effects.push(Effect::in_db(db, Effect::Clear));
            }
        }
        ctx.keys.select(mine);
        changes.push(vec![b"FUNCTION".to_vec(), b"FLUSH".to_vec()]);
    }
    for code in summary.functions {
        changes.push(vec![
            b"FUNCTION".to_vec(),
            b"LOAD".to_vec(),
            b"REPLACE".to_vec(),
            code,
        ]);
    }
    for argv in changes {
        let _ = crate::script::library::replay(libraries, &argv);
        if ctx.logging {
            ctx.effects.push(Effect::Function(argv));
        }
    }
    for k in loaded {
        if k.expires_at != 0 && k.expires_at <= now {
            continue;
        }
        let store = ctx.keys.store_in(k.db, &k.key);
        store.put(&k.key, k.value, k.expires_at, now);
        if let Some(s) = k.idle_s {
            store.set_idle(&k.key, now, s.saturating_mul(1000));
        }
        if ctx.logging {
            if let Some(e) = store.get_quiet(&k.key, now) {
                let mut dump = vec![Effect::Del { key: k.key.clone() }];
                dump.extend(crate::aof::dump(&k.key, e));
                ctx.effects
                    .extend(dump.into_iter().map(|x| Effect::in_db(k.db, x)));
            }
        }
    }
    w.simple("OK");
}

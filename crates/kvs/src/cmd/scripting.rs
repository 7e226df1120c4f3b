//! Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, with Redis 7's
//! semantics (the functions API, FUNCTION and FCALL, is in [`functions`]).
//!
//! - **Atomic.** A script locks every shard of the keyspace before it runs (as EXEC
//!   does) and holds them until it returns, so no command of another client, on any
//!   event loop, runs in between. Every change it made is written to the log as one
//!   record ([`Effect::Batch`]), so a crash never replays half a script.
//! - **Commands.** `redis.call` runs a command through the command table as a client's
//!   would (unknown name, arity, `maxmemory`, WRONGTYPE and every handler's check),
//!   with the caller's session; a command whose row has the `noscript` flag is
//!   refused, and a read-only script (EVAL_RO, EVALSHA_RO, a function flagged
//!   `no-writes`) is refused every `write` command. The handler's reply is read back
//!   and converted to a Lua value ([`reply`]).
//! - **Flags.** A script that declares its flags (a shebang line; every function
//!   does) is checked before it runs as Redis checks the command that runs it: unless
//!   `no-writes`, it needs enough good replicas and a server that is no replica, and
//!   unless also `allow-oom`, memory within `maxmemory`. With `allow-oom` its commands
//!   run over `maxmemory`; without, a command that may add memory is refused there
//!   until the script's first write.
//! - **Cache.** Every script EVAL or SCRIPT LOAD sees is kept under its SHA1 (shared by
//!   the event loops); EVALSHA of a SHA1 not there is NOSCRIPT. As in Redis 7.4, the
//!   scripts only EVAL brought are bounded: past [`MAX_EVAL_SCRIPTS`] the least
//!   recently used of them is dropped (a client that sent millions of distinct EVALs
//!   would otherwise grow the cache without limit); SCRIPT LOAD's stay until SCRIPT
//!   FLUSH. The cache holds the bodies; each loop's interpreter compiles a body once
//!   ([`engine`]).
//! - **Time.** While a script runs, its start and kill flag are published ([`Busy`]).
//!   A command from another event loop waits for it, and once the script has run for
//!   `busy-reply-threshold` (alias `lua-time-limit`, 5000 ms by default) it is answered
//!   `-BUSY` instead; SCRIPT KILL and FUNCTION KILL (and the commands flagged
//!   `allow_busy`) are served meanwhile. SCRIPT KILL stops a script that has not
//!   written (the interpreter's instruction hook checks the flag); one that wrote
//!   cannot be killed (`-UNKILLABLE`), as in Redis, since half its writes would stay.
//!   The other clients of the script's own loop are answered from the script's
//!   instruction hook ([`crate::busy`]). Limit: a command from another loop that
//!   passed the check an instant before a script locked the keyspace waits for the
//!   script to end.

pub mod functions;

use std::sync::Arc;

use super::table::{self, Command, ALLOW_BUSY, DENYOOM, NOSCRIPT, WRITE};
use super::{eq, parse_i64, Ctx};
use crate::aof::Effect;
use crate::resp::{Proto, Writer};
use crate::script::engine::{with_engine, Ask, Ended};
use crate::script::{busy_error, sha1_hex, Busy};

const NOSCRIPT_ERR: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// The checks before a command runs while a script may be running on another event
/// loop: waits for it to end (the shards this loop kept from earlier commands of its
/// batch are let go first, so the script can lock them), or, once it has run for the
/// busy threshold, the `-BUSY` error. Commands flagged `allow_busy`, SCRIPT KILL and
/// FUNCTION KILL go on at once.
pub(crate) fn wait_busy(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]]) -> Result<(), String> {
    let busy = ctx.shared.scripts.busy.clone();
    if busy.since() == 0 || cmd.has(ALLOW_BUSY) {
        return Ok(());
    }
    let kill = matches!(cmd.name, "script" | "function")
        && args.get(1).is_some_and(|a| eq(a, "kill"))
        || cmd.name == "function" && args.get(1).is_some_and(|a| eq(a, "stats"));
    let shutdown_nosave = cmd.name == "shutdown" && args.iter().skip(1).any(|a| eq(a, "nosave"));
    if kill || shutdown_nosave {
        return Ok(());
    }
    ctx.keys.unlock();
    let threshold = busy_threshold(ctx);
    loop {
        let since = busy.since();
        if since == 0 {
            return Ok(());
        }
        if wirespeed_util::time::unix_ms().saturating_sub(since) >= threshold {
            return Err(busy_error(&busy));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// `busy-reply-threshold` (or its old name `lua-time-limit`, whichever is lower), ms.
fn busy_threshold(ctx: &Ctx) -> u64 {
    ["busy-reply-threshold", "lua-time-limit"]
        .iter()
        .filter_map(|k| ctx.config.compat.get(k).and_then(|v| v.parse::<u64>().ok()))
        .min()
        .unwrap_or(5000)
}

/// The reply to a command refused over `maxmemory`.
const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// The checks before a script that declares its flags (a shebang line, or a function)
/// runs, as Redis applies them to the command that runs it, in its order and texts:
/// unless it declares `allow-oom` or `no-writes`, `maxmemory`; unless `no-writes`,
/// enough good replicas (`min-replicas-to-write`) and a server that is no replica.
fn declared_admit(ctx: &mut Ctx, flags: &[String]) -> Result<(), String> {
    let flagged = |name: &str| flags.iter().any(|f| f == name);
    if !flagged("no-writes") && !flagged("allow-oom") && !super::evict(ctx) {
        return Err(OOM.into());
    }
    if !flagged("no-writes") {
        let repl = &ctx.shared.repl;
        let min = ctx.config.min_replicas;
        if min > 0 && repl.good_replicas(ctx.now, ctx.config.min_replicas_lag) < min as usize {
            return Err("NOREPLICAS Not enough good replicas to write.".into());
        }
        if repl.is_replica() {
            return Err("READONLY You can't write against a read only replica.".into());
        }
    }
    Ok(())
}

/// The number of keys of an EVAL-like command (`args[2]`) checked against the
/// arguments after it.
fn numkeys(args: &[&[u8]]) -> Result<usize, &'static str> {
    numkeys_checked(parse_i64(args[2]).ok_or(super::NOT_INT)?, args)
}

/// `n`, the number of keys of an EVAL-like command, checked against its arguments.
fn numkeys_checked(n: i64, args: &[&[u8]]) -> Result<usize, &'static str> {
    if n < 0 {
        return Err("ERR Number of keys can't be negative");
    }
    if n as usize > args.len() - 3 {
        return Err("ERR Number of keys can't be greater than number of args");
    }
    Ok(n as usize)
}

/// EVAL script numkeys [key ...] [arg ...].
pub fn eval(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    eval_generic(ctx, args, w, false, false)
}

/// EVAL_RO: EVAL whose script may not write.
pub fn eval_ro(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    eval_generic(ctx, args, w, false, true)
}

/// EVALSHA sha1 numkeys [key ...] [arg ...].
pub fn evalsha(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    eval_generic(ctx, args, w, true, false)
}

/// EVALSHA_RO.
pub fn evalsha_ro(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    eval_generic(ctx, args, w, true, true)
}

fn eval_generic(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer, by_sha: bool, readonly: bool) {
    let n = match numkeys(args) {
        Ok(n) => n,
        Err(e) => return w.error(e),
    };
    let scripts = &ctx.shared.scripts;
    let (sha, body) = if by_sha {
        let sha = String::from_utf8_lossy(args[1]).to_ascii_lowercase();
        match scripts.bodies().get(&sha) {
            Some(b) => (sha, b),
            None => return w.error(NOSCRIPT_ERR),
        }
    } else {
        let body: Arc<[u8]> = args[1].into();
        let sha = sha1_hex(&body);
        (sha, body)
    };
    let (code, flags) = match shebang(&body) {
        Ok(v) => v,
        Err(e) => return w.error(&e),
    };
    if code.is_some() {
        if let Err(e) = declared_admit(ctx, &flags) {
            return w.error(&e);
        }
        if readonly && !flags.iter().any(|f| f == "no-writes") {
            return w.error("ERR Can not execute a script with write flag using *_ro command.");
        }
    }
    let readonly = readonly || flags.iter().any(|f| f == "no-writes");
    let allow_oom = flags.iter().any(|f| f == "no-writes" || f == "allow-oom");
    let scripts = &ctx.shared.scripts;
    let owner = scripts.owner();
    let compiled = with_engine(|e| {
        e.follow(owner);
        e.script(&sha, code.as_deref().unwrap_or(&body))
    });
    let f = match compiled {
        Err(e) | Ok(Err(e)) => {
            return w.error(&format!("ERR Error compiling script (new function): {e}"))
        }
        Ok(Ok(f)) => f,
    };
    if !by_sha {
        scripts.bodies().add(&sha, body, false);
    }
    let (keys, argv) = args[3..].split_at(n);
    let origin = Origin {
        name: sha,
        chunk: "@user_script",
        function: false,
        allow_oom,
    };
    run(ctx, &f, false, keys, argv, readonly, &origin, w);
}

/// Whether the script of an EVAL or EVALSHA, or the function of an FCALL, declares
/// `no-writes` (a WRITE pause lets it run, as Redis does). A script without a
/// shebang line may write.
pub(crate) fn declares_no_writes(
    shared: &crate::state::Shared,
    name: &str,
    argv: &[&[u8]],
) -> bool {
    let Some(&target) = argv.get(1) else {
        return false;
    };
    let flags = match name {
        "eval" => shebang(target).ok().map(|(_, f)| f),
        "evalsha" => {
            let sha = String::from_utf8_lossy(target).to_ascii_lowercase();
            let body = shared.scripts.bodies().get(&sha);
            body.and_then(|b| shebang(&b).ok()).map(|(_, f)| f)
        }
        "fcall" => functions::flags_of(&shared.scripts, &String::from_utf8_lossy(target)),
        _ => None,
    };
    flags.is_some_and(|f| f.iter().any(|x| x == "no-writes"))
}

/// The flags a script's first line declares (`#!lua flags=no-writes,allow-oom`), as
/// Redis 7 reads them, and the code to compile (that line blanked, so line numbers
/// stay; None without such a line). `no-writes` and `allow-oom` change what the script
/// may do here; the others are accepted.
fn shebang(body: &[u8]) -> Result<(Option<Vec<u8>>, Vec<String>), String> {
    if !body.starts_with(b"#!") {
        return Ok((None, Vec::new()));
    }
    let nl = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
    let line = String::from_utf8_lossy(&body[2..nl]);
    let mut words = line.split_whitespace();
    let engine = words.next().unwrap_or("");
    if engine != "lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {engine}"));
    }
    let mut flags = Vec::new();
    for w in words {
        let Some(list) = w.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {w}"));
        };
        for f in list.split(',').filter(|f| !f.is_empty()) {
            if !crate::script::library::FLAGS.contains(&f) {
                return Err(format!("ERR Unexpected flag in script shebang: {f}"));
            }
            flags.push(f.to_string());
        }
    }
    Ok((Some(body[nl..].to_vec()), flags))
}

/// Where a script came from, for its error messages.
pub(crate) struct Origin {
    /// The SHA1 of a script, the name of a function.
    pub(crate) name: String,
    /// `@user_script` or `@user_function`.
    pub(crate) chunk: &'static str,
    /// A function (FCALL).
    pub(crate) function: bool,
    /// Its flags let it run any command over `maxmemory` (`allow-oom`, or `no-writes`,
    /// which allows no command that needs memory).
    pub(crate) allow_oom: bool,
}

/// Runs a compiled script or function atomically (see the module note) and writes its
/// reply.
pub(crate) fn run(
    ctx: &mut Ctx,
    f: &mlua::Function,
    as_function: bool,
    keys: &[&[u8]],
    argv: &[&[u8]],
    readonly: bool,
    origin: &Origin,
    w: &mut Writer,
) {
    let busy = ctx.shared.scripts.busy.clone();
    ctx.shared.scripts.mark_used();
    busy.set_running(origin.function.then(|| {
        let mut command: Vec<Vec<u8>> = vec![b"fcall".to_vec(), origin.name.clone().into_bytes()];
        command.push(keys.len().to_string().into_bytes());
        command.extend(keys.iter().chain(argv).map(|a| a.to_vec()));
        (origin.name.clone(), command)
    }));
    busy.begin(origin.function, busy_threshold(ctx), ctx.session.id);
    // From here to the end no other command touches the keyspace.
    ctx.keys.lock_atomic();
    // A SELECT inside the script changes its own database, not its caller's.
    let db = ctx.session.db;
    let start = ctx.effects.len();
    // Blocking commands answer at once inside a script, as in Redis.
    let could_block = std::mem::replace(&mut ctx.can_block, false);
    let resp3 = w.proto() == Proto::Resp3;
    let maxmemory = ctx.config.maxmemory;
    let allow_oom = origin.allow_oom;
    let mut call = |argv: &[Vec<u8>], ask: Ask| -> Vec<u8> {
        let mut out = Vec::new();
        let proto = if ask == (Ask::Run { resp3: true }) {
            Proto::Resp3
        } else {
            Proto::Resp2
        };
        let mut cw = Writer::new(&mut out, proto);
        let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        match ask {
            Ask::Run { .. } => call_command(ctx, &args, readonly, allow_oom, &busy, &mut cw),
            Ask::AclCheck => acl_check(ctx, &args, &mut cw),
        }
        out
    };
    let _ = resp3;
    let ended = with_engine(|e| {
        e.bound_memory(maxmemory);
        e.run(f, as_function, keys, argv, &busy, &mut call, w)
    });
    busy.end();
    match ended {
        Ok(Ended::Done) => {}
        Ok(Ended::Error(msg, line)) => w.error(&format!(
            "{msg} script: {}, on {}:{line}.",
            origin.name, origin.chunk
        )),
        Ok(Ended::Killed) => w.error("ERR Script killed by user with SCRIPT KILL..."),
        Err(e) => w.error(&e),
    }
    ctx.can_block = could_block;
    ctx.session.db = db;
    ctx.keys.select(db);
    // The script's changes are one record of the log.
    if ctx.effects.len() - start > 1 {
        let batch = ctx.effects.split_off(start);
        ctx.effects.push(Effect::Batch(batch));
    }
}

/// The CLUSTER subcommands Redis flags `noscript` (the ones that change the cluster).
const CLUSTER_NOSCRIPT: &[&str] = &[
    "addslots",
    "addslotsrange",
    "delslots",
    "delslotsrange",
    "meet",
    "forget",
    "reset",
    "failover",
    "replicate",
    "setslot",
    "saveconfig",
    "bumpepoch",
    "flushslots",
    "set-config-epoch",
];

/// `redis.acl_check_cmd(...)`: whether the caller's user may run the command line
/// `args` (its keys and channels as well; arity is not checked, nothing is logged), as
/// 1 or 0; an error when it names no command or no subcommand of a container.
fn acl_check(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some((cmd, _, _)) = table::lookup_call(args) else {
        return w.error("ERR Invalid command passed to redis.acl_check_cmd()");
    };
    w.int(i64::from(crate::acl::allows(ctx, cmd, args)));
}

/// One `redis.call` from a script: the command table's checks in Redis's order and
/// texts for scripts, then the handler, its reply into `w`.
fn call_command(
    ctx: &mut Ctx,
    args: &[&[u8]],
    readonly: bool,
    allow_oom: bool,
    busy: &Busy,
    w: &mut Writer,
) {
    let Some(cmd) = table::lookup(args[0]) else {
        return w.error("ERR Unknown Redis command called from script");
    };
    if !cmd.arity_ok(args.len()) {
        return w.error("ERR Wrong number of args calling Redis command from script");
    }
    // The containers whose subcommands all have the flag in Redis (the table has one
    // row per container).
    let reset = cmd.name == "cluster"
        && args
            .get(1)
            .is_some_and(|a| CLUSTER_NOSCRIPT.iter().any(|s| eq(a, s)));
    if cmd.has(NOSCRIPT) || matches!(cmd.name, "script" | "function" | "client" | "acl") || reset {
        return w.error("ERR This Redis command is not allowed from script");
    }
    // As the caller's user (`crate::acl`), after the checks above as in Redis.
    if !crate::acl::open(ctx) {
        if let Err(e) = crate::acl::admit_script(ctx, cmd, args) {
            ctx.stats.per_command.rejected(table::row(cmd));
            return w.error(&e);
        }
    }
    if (cmd.has(WRITE) || cmd.may_replicate()) && readonly {
        return w.error("ERR Write commands are not allowed from read-only scripts.");
    }
    if cmd.has(WRITE) || cmd.has(DENYOOM) {
        // Only before the script's first write: once it wrote, it must be able to
        // finish (Redis's rule, so that a script is never stopped half-way by memory).
        // A script flagged `allow-oom` is not held to `maxmemory` at all.
        if !busy.wrote() {
            if let Err(e) = super::admit_with(ctx, cmd, !allow_oom) {
                return w.error(&e);
            }
        }
    }
    if cmd.has(WRITE) {
        busy.mark_wrote();
        if ctx.shared.hub.any_blocked() {
            // Clients blocked on what the script writes are served after it.
            let db = ctx.keys.db();
            ctx.ready.extend(args[1..].iter().map(|a| (db, a.to_vec())));
        }
    }
    super::monitor::scripted(|| super::run(ctx, cmd, args, w));
}

/// SCRIPT LOAD | EXISTS | FLUSH | KILL | HELP.
pub fn script(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    let rest = &args[2..];
    let scripts = &ctx.shared.scripts;
    if eq(sub, "load") && rest.len() == 1 {
        let sha = sha1_hex(rest[0]);
        if !scripts.bodies().contains(&sha) {
            // A shebang line is read as EVAL reads it (and blanked for the compiler).
            let code = match shebang(rest[0]) {
                Ok((code, _)) => code,
                Err(e) => return w.error(&e),
            };
            let owner = scripts.owner();
            let compiled = with_engine(|e| {
                e.follow(owner);
                e.script(&sha, code.as_deref().unwrap_or(rest[0]))
                    .map(|_| ())
            });
            if let Err(e) | Ok(Err(e)) = compiled {
                return w.error(&format!("ERR Error compiling script (new function): {e}"));
            }
        }
        scripts.bodies().add(&sha, rest[0].into(), true);
        w.bulk(sha.as_bytes());
    } else if eq(sub, "exists") && !rest.is_empty() {
        let bodies = scripts.bodies();
        w.array(rest.len());
        for s in rest {
            let sha = String::from_utf8_lossy(s).to_ascii_lowercase();
            w.int(bodies.contains(&sha) as i64);
        }
    } else if eq(sub, "flush") && rest.len() <= 1 {
        if let Some(m) = rest.first() {
            if !eq(m, "async") && !eq(m, "sync") {
                return w.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            }
        }
        scripts.flush();
        w.simple("OK");
    } else if eq(sub, "kill") && rest.is_empty() {
        kill(ctx, false, w);
    } else if eq(sub, "help") && rest.is_empty() {
        super::help(
            w,
            &[
                "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "EXISTS <sha1> [<sha1> ...]",
                "    Return information about the existence of the scripts in the script cache.",
                "FLUSH [ASYNC|SYNC]",
                "    Flush the Lua scripts cache. Very dangerous on replicas.",
                "    When called without the optional mode argument, the behavior is determined by the",
                "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                "    * ASYNC: Asynchronously flush the scripts cache.",
                "    * SYNC: Synchronously flush the scripts cache.",
                "KILL",
                "    Kill the currently executing Lua script.",
                "LOAD <script>",
                "    Load a script into the scripts cache without executing it.",
            ],
        );
    } else if ["load", "exists", "flush", "kill", "help"]
        .iter()
        .any(|s| eq(sub, s))
    {
        super::arity(w, format!("script|{}", super::lower(sub)).as_bytes());
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try SCRIPT HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// SCRIPT KILL / FUNCTION KILL: asks the running script to stop.
pub(crate) fn kill(ctx: &mut Ctx, function: bool, w: &mut Writer) {
    match ctx.shared.scripts.busy.kill(function) {
        Ok(()) => w.simple("OK"),
        Err(e) => w.error(&e),
    }
}

//! The functions API: FUNCTION LOAD | DELETE | FLUSH | LIST | KILL | STATS | HELP and
//! FCALL / FCALL_RO, with Redis 7's texts.
//!
//! A library is Lua code starting with `#!lua name=<library>`; loading runs it once
//! with `redis.register_function(name, callback)` (or the table form with `flags`,
//! `description`), `redis.log` and the version all it may use (see
//! `crate::script::library`). The libraries (their code and the names
//! and flags of their functions) are shared by the event loops, with a generation that
//! moves at every change; each loop's interpreter runs every library's code again
//! when it sees a new generation, so its functions are the shared ones. A function
//! flagged `no-writes` runs as a read-only script and is the only kind FCALL_RO runs.
//! Functions run like EVAL scripts ([`super::run`]): atomic, one log record. FCALL
//! finds a function ignoring case, as Redis does. Over `maxmemory`, FUNCTION LOAD and
//! RESTORE are refused, and so is FCALL of a function that may write and does not
//! declare `allow-oom` (one that does may run any command).

use super::{declared_admit, numkeys_checked, run, Origin, OOM};
use crate::aof::Effect;
use crate::cmd::{eq, glob, Ctx};
use crate::resp::Writer;
use crate::script::engine::with_engine;
use crate::script::library::{self, load_library, sync, Libraries, Library, Policy};

/// Records a change to the libraries for the log: `FUNCTION <args>`.
fn log(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.logging {
        let mut argv = vec![b"FUNCTION".to_vec()];
        argv.extend(args.iter().map(|a| a.to_vec()));
        ctx.effects.push(Effect::Function(argv));
    }
}

/// FCALL function numkeys [key ...] [arg ...].
pub fn fcall(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    fcall_generic(ctx, args, w, false)
}

/// FCALL_RO: FCALL of a function flagged `no-writes`.
pub fn fcall_ro(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    fcall_generic(ctx, args, w, true)
}

/// FUNCTION STATS: the running function (name, command, how long it has run) and the
/// libraries' counts; served while a script is busy, as in Redis.
pub(crate) fn stats(scripts: &crate::script::Scripts, w: &mut Writer) {
    let libs = &scripts.libraries;
    let count: usize = libs.lock().values().map(|l| l.functions.len()).sum();
    let n = libs.lock().len();
    w.map(2);
    w.bulk(b"running_script");
    match scripts.busy.running_function() {
        None => w.null(),
        Some((name, command, ms)) => {
            w.map(3);
            w.bulk(b"name");
            w.bulk(name.as_bytes());
            w.bulk(b"command");
            w.array(command.len());
            for a in &command {
                w.bulk(a);
            }
            w.bulk(b"duration_ms");
            w.int(ms as i64);
        }
    }
    w.bulk(b"engines");
    w.map(1);
    w.bulk(b"LUA");
    w.map(2);
    w.bulk(b"libraries_count");
    w.int(n as i64);
    w.bulk(b"functions_count");
    w.int(count as i64);
}

/// The flags of the function `name` (ignoring case), None when there is none.
pub(crate) fn flags_of(scripts: &crate::script::Scripts, name: &str) -> Option<Vec<String>> {
    library::find(&scripts.libraries, name.as_bytes()).map(|r| r.flags)
}

/// The number of keys of an FCALL (`args[2]`) checked against the arguments after it,
/// with FCALL's texts.
fn fcall_numkeys(args: &[&[u8]]) -> Result<usize, &'static str> {
    let n = crate::cmd::parse_i64(args[2]).ok_or("ERR Bad number of keys provided")?;
    numkeys_checked(n, args)
}

fn fcall_generic(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer, ro: bool) {
    let scripts = &ctx.shared.scripts;
    let Some(found) = library::find(&scripts.libraries, args[1]) else {
        return w.error("ERR Function not found");
    };
    let (name, flags) = (found.name, found.flags);
    let readonly = flags.iter().any(|f| f == "no-writes");
    // Before its arguments are looked at: Redis refuses the command.
    if let Err(e) = declared_admit(ctx, &flags) {
        return w.error(&e);
    }
    let allow_oom = readonly || flags.iter().any(|f| f == "allow-oom");
    let n = match fcall_numkeys(args) {
        Ok(n) => n,
        Err(e) => return w.error(e),
    };
    if ro && !readonly {
        return w.error("ERR Can not execute a script with write flag using *_ro command.");
    }
    let scripts = &ctx.shared.scripts;
    let id = scripts.id;
    let f = with_engine(|e| {
        sync(e, &scripts.libraries, id);
        e.function(&name)
    });
    let f = match f {
        Ok(Some(f)) => f,
        Ok(None) => return w.error("ERR Function not found"),
        Err(e) => return w.error(&e),
    };
    let (keys, argv) = args[3..].split_at(n);
    let origin = Origin {
        name,
        chunk: "@user_function",
        function: true,
        allow_oom,
    };
    run(ctx, &f, true, keys, argv, readonly, &origin, w);
}

/// FUNCTION LOAD | DELETE | FLUSH | LIST | KILL | STATS | HELP.
pub fn function(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    let rest = &args[2..];
    if (eq(sub, "load") || eq(sub, "restore")) && !rest.is_empty() && !crate::cmd::evict(ctx) {
        // Both may add memory: refused over maxmemory, as Redis's denyoom commands.
        return w.error(OOM);
    }
    let libs = &ctx.shared.scripts.libraries;
    if eq(sub, "load") && !rest.is_empty() {
        let (code, options) = rest.split_last().expect("not empty");
        if let Some(o) = options.iter().find(|o| !eq(o, "replace")) {
            return w.error(&format!(
                "ERR Unknown option given: {}",
                String::from_utf8_lossy(o)
            ));
        }
        let replace = !options.is_empty();
        match load_library(libs, code, replace) {
            Ok(name) => {
                log(ctx, &[b"LOAD", b"REPLACE", code]);
                w.bulk(name.as_bytes());
            }
            Err(e) => w.error(&e),
        }
    } else if eq(sub, "delete") && rest.len() == 1 {
        let name = String::from_utf8_lossy(rest[0]).into_owned();
        if libs.lock().remove(&name).is_none() {
            return w.error("ERR Library not found");
        }
        libs.changed();
        log(ctx, &[b"DELETE", rest[0]]);
        w.simple("OK");
    } else if (eq(sub, "flush") && rest.len() > 1) || (eq(sub, "restore") && rest.len() > 2) {
        w.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
            String::from_utf8_lossy(sub)
        ));
    } else if eq(sub, "flush") {
        if let Some(m) = rest.first() {
            if !eq(m, "async") && !eq(m, "sync") {
                return w.error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
            }
        }
        libs.lock().clear();
        libs.changed();
        log(ctx, &[b"FLUSH"]);
        w.simple("OK");
    } else if eq(sub, "dump") && rest.is_empty() {
        let codes = library::codes(libs);
        w.bulk(&crate::cmd::dump::function_payload(
            codes.iter().map(|c| &c[..]),
        ));
    } else if eq(sub, "restore") && !rest.is_empty() {
        let policy = match rest.get(1) {
            None => Policy::Append,
            Some(p) if eq(p, "append") => Policy::Append,
            Some(p) if eq(p, "replace") => Policy::Replace,
            Some(p) if eq(p, "flush") => Policy::Flush,
            Some(_) => return w.error(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ),
        };
        let restored = crate::cmd::dump::function_codes(rest[0])
            .and_then(|codes| library::restore(libs, &codes, policy));
        match restored {
            Ok(()) => {
                // Logged as the libraries now loaded, so replay rebuilds them whatever
                // the order of replacements was.
                log(ctx, &[b"FLUSH"]);
                for code in library::codes(&ctx.shared.scripts.libraries) {
                    log(ctx, &[b"LOAD", b"REPLACE", &code]);
                }
                w.simple("OK");
            }
            Err(e) => w.error(&e),
        }
    } else if eq(sub, "list") {
        list(libs, rest, w);
    } else if eq(sub, "kill") && rest.is_empty() {
        super::kill(ctx, true, w);
    } else if eq(sub, "stats") && rest.is_empty() {
        stats(&ctx.shared.scripts, w);
    } else if eq(sub, "help") && rest.is_empty() {
        crate::cmd::help(
            w,
            &[
                "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "LOAD [REPLACE] <FUNCTION CODE>",
                "    Create a new library with the given library name and code.",
                "DELETE <LIBRARY NAME>",
                "    Delete the given library.",
                "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
                "    Return general information on all the libraries.",
                "DUMP",
                "    Return a serialized payload representing the current libraries.",
                "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
                "    Restore the libraries represented by the given payload (APPEND by default).",
                "KILL",
                "    Kill the current running function.",
                "FLUSH [ASYNC|SYNC]",
                "    Delete all the libraries.",
                "STATS",
                "    Return information about the current function running.",
            ],
        );
    } else if [
        "load", "delete", "flush", "kill", "stats", "help", "dump", "restore",
    ]
    .iter()
    .any(|s| eq(sub, s))
    {
        crate::cmd::arity(w, format!("function|{}", crate::cmd::lower(sub)).as_bytes());
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try FUNCTION HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
fn list(libs: &Libraries, rest: &[&[u8]], w: &mut Writer) {
    let mut code = false;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 0;
    while i < rest.len() {
        // Each option once, as Redis reads them: a second is an unknown argument.
        if !code && eq(rest[i], "withcode") {
            code = true;
        } else if pattern.is_none() && eq(rest[i], "libraryname") {
            let Some(p) = rest.get(i + 1) else {
                return w.error("ERR library name argument was not given");
            };
            pattern = Some(p);
            i += 1;
        } else {
            return w.error(&format!(
                "ERR Unknown argument {}",
                String::from_utf8_lossy(rest[i])
            ));
        }
        i += 1;
    }
    let all = libs.lock();
    let shown: Vec<(&String, &Library)> = all
        .iter()
        .filter(|(n, _)| pattern.is_none_or(|p| glob(p, n.as_bytes())))
        .collect();
    w.array(shown.len());
    for (name, lib) in shown {
        w.map(if code { 4 } else { 3 });
        w.bulk(b"library_name");
        w.bulk(name.as_bytes());
        w.bulk(b"engine");
        w.bulk(b"LUA");
        w.bulk(b"functions");
        w.array(lib.functions.len());
        for f in &lib.functions {
            w.map(3);
            w.bulk(b"name");
            w.bulk(f.name.as_bytes());
            w.bulk(b"description");
            match &f.description {
                Some(d) => w.bulk(d.as_bytes()),
                None => w.null(),
            }
            w.bulk(b"flags");
            w.set(f.flags.len());
            for fl in &f.flags {
                w.simple(fl);
            }
        }
        if code {
            w.bulk(b"library_code");
            w.bulk(&lib.code);
        }
    }
}

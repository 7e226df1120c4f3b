//! The functions API: FUNCTION LOAD | DELETE | FLUSH | LIST | KILL | STATS | HELP and
//! FCALL / FCALL_RO, with Redis 7's texts.
//!
//! A library is Lua code starting with `#!lua name=<library>`; loading runs it once
//! with `redis.register_function(name, callback)` (or the table form with `flags`,
//! `description`), which is all it may call. The libraries (their code and the names
//! and flags of their functions) are shared by the event loops, with a generation that
//! moves at every change; each loop's interpreter runs every library's code again
//! when it sees a new generation, so its functions are the shared ones. A function
//! flagged `no-writes` runs as a read-only script and is the only kind FCALL_RO runs.
//! Functions run like EVAL scripts ([`super::run`]): atomic, one log record.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mlua::{Function, Table, Value};

use super::engine::{with_engine, Engine};
use super::{numkeys, run, Origin};
use crate::aof::Effect;
use crate::cmd::{eq, glob, Ctx};
use crate::resp::Writer;

/// Flags a function may be registered with.
pub(crate) const FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// One registered function.
#[derive(Clone, Debug)]
struct Registered {
    name: String,
    flags: Vec<String>,
    description: Option<String>,
}

#[derive(Clone, Debug)]
struct Library {
    code: Arc<[u8]>,
    functions: Vec<Registered>,
}

/// The loaded libraries, shared by the event loops.
#[derive(Debug, Default)]
pub struct Libraries {
    libs: Mutex<BTreeMap<String, Library>>,
    generation: AtomicU64,
}

impl Libraries {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Library>> {
        self.libs.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// The library's name from its first line (`#!lua name=<name>`), and the code with
/// that line blanked (line numbers stay those of the text given).
fn parse_header(code: &[u8]) -> Result<(String, Vec<u8>), String> {
    let Some(nl) = code.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid library metadata".into());
    };
    let first = String::from_utf8_lossy(&code[..nl]);
    let Some(header) = first.strip_prefix("#!") else {
        return Err("ERR Missing library metadata".into());
    };
    let mut words = header.split_whitespace();
    let engine = words.next().unwrap_or("");
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("ERR Engine '{engine}' not found"));
    }
    let mut name = None;
    for w in words {
        match w.strip_prefix("name=") {
            Some(n) => name = Some(n.to_string()),
            None => return Err(format!("ERR Invalid metadata value given: {w}")),
        }
    }
    let name = name.ok_or("ERR Library name was not given")?;
    if !valid_name(&name) {
        return Err("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".into());
    }
    let mut body = vec![b'\n'];
    body.extend_from_slice(&code[nl + 1..]);
    Ok((name, body))
}

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Runs a library's code in `e` (for at most [`super::engine::LOAD_TIMEOUT_MS`]),
/// collecting what it registers: the registrations, and a table of their callbacks by
/// name (a table, so a library of any size holds one Rust handle).
fn load(e: &Engine, body: &[u8]) -> Result<(Vec<Registered>, Table), String> {
    let f = e
        .compile(body, "@user_function")
        .map_err(|m| format!("ERR Error compiling function: {m}"))?;
    let lua = e.lua();
    let callbacks = lua.create_table().map_err(|e| format!("ERR {e}"))?;
    let mut found: Vec<Registered> = Vec::new();
    let result = lua.scope(|scope| {
        let register = scope.create_function_mut(|_, args: mlua::MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            let (name, cb, flags, description) = match args.as_slice() {
                [Value::String(n), Value::Function(f)] => (n.to_str()?.to_string(), f.clone(), vec![], None),
                [Value::Table(t)] => registration(t)?,
                _ => return Err(mlua::Error::runtime("wrong number of arguments to redis.register_function")),
            };
            if !valid_name(&name) {
                return Err(mlua::Error::runtime("Function names can only contain letters, numbers, or underscores(_) and must be at least one character long"));
            }
            if found.iter().any(|r| r.name == name) {
                return Err(mlua::Error::runtime("Function already exists in the library"));
            }
            callbacks.raw_set(name.as_str(), cb)?;
            found.push(Registered { name, flags, description });
            Ok(())
        })?;
        e.set_bridge("register", Value::Function(register))?;
        let run: Function = e.bridge_run()?;
        let (ok, err): (bool, Value) = e.loading(|| run.call((f,)))?;
        e.set_bridge("register", Value::Nil)?;
        if ok {
            return Ok(Ok(()));
        }
        let msg = match err {
            Value::Table(t) => t.raw_get::<Option<String>>("err")?.unwrap_or_default(),
            other => format!("{other:?}"),
        };
        let msg = msg.trim_start_matches("ERR ").trim_start_matches("runtime error: ");
        Ok(Err(format!("ERR Error registering functions: {msg}")))
    });
    let _ = e.set_bridge("register", Value::Nil);
    match result {
        Ok(Ok(())) if found.is_empty() => Err("ERR No functions registered".into()),
        Ok(Ok(())) => Ok((found, callbacks)),
        Ok(Err(m)) => Err(m),
        Err(e) => Err(format!("ERR Error registering functions: {e}")),
    }
}

/// The table form of `redis.register_function`.
fn registration(t: &Table) -> mlua::Result<(String, Function, Vec<String>, Option<String>)> {
    let name: Option<String> = t.raw_get("function_name")?;
    let cb: Option<Function> = t.raw_get("callback")?;
    let (Some(name), Some(cb)) = (name, cb) else {
        return Err(mlua::Error::runtime(
            "redis.register_function must get a function name argument and a callback argument",
        ));
    };
    let mut flags = Vec::new();
    if let Some(list) = t.raw_get::<Option<Table>>("flags")? {
        for f in list.sequence_values::<String>() {
            let f = f?;
            if !FLAGS.contains(&f.as_str()) {
                return Err(mlua::Error::runtime("unknown flag given"));
            }
            flags.push(f);
        }
    }
    let description: Option<String> = t.raw_get("description")?;
    Ok((name, cb, flags, description))
}

/// Loads (or with `replace`, replaces) the library `code` (its `#!lua name=` header
/// first); returns its name.
fn load_library(libs: &Libraries, code: &[u8], replace: bool) -> Result<String, String> {
    let (name, body) = parse_header(code)?;
    if !replace && libs.lock().contains_key(&name) {
        return Err(format!("ERR Library '{name}' already exists"));
    }
    let found = with_engine(|e| load(e, &body)).and_then(|r| r)?;
    let mut all = libs.lock();
    for r in &found.0 {
        let clash = all
            .iter()
            .filter(|(l, _)| **l != name)
            .any(|(_, lib)| lib.functions.iter().any(|x| x.name == r.name));
        if clash {
            return Err(format!("ERR Function {} already exists", r.name));
        }
    }
    let functions = found.0;
    all.insert(
        name.clone(),
        Library {
            code: code.into(),
            functions,
        },
    );
    drop(all);
    libs.changed();
    Ok(name)
}

/// Records a change to the libraries for the log: `FUNCTION <args>`.
fn log(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.logging {
        let mut argv = vec![b"FUNCTION".to_vec()];
        argv.extend(args.iter().map(|a| a.to_vec()));
        ctx.effects.push(Effect::Function(argv));
    }
}

/// Applies a logged change to the libraries (replay of the log); an error is the
/// reason the record was not applied.
pub fn replay(libs: &Libraries, argv: &[Vec<u8>]) -> Result<(), String> {
    match argv {
        [_, sub, _, code] if eq(sub, "load") => load_library(libs, code, true).map(|_| ()),
        [_, sub, name] if eq(sub, "delete") => {
            libs.lock().remove(&*String::from_utf8_lossy(name));
            libs.changed();
            Ok(())
        }
        [_, sub] if eq(sub, "flush") => {
            libs.lock().clear();
            libs.changed();
            Ok(())
        }
        _ => Err("not a change to the function libraries".into()),
    }
}

/// The records that load every library again (the log rewrite's first records).
pub fn records(libs: &Libraries) -> Vec<Effect> {
    libs.lock()
        .values()
        .map(|l| {
            Effect::Function(vec![
                b"FUNCTION".to_vec(),
                b"LOAD".to_vec(),
                b"REPLACE".to_vec(),
                l.code.to_vec(),
            ])
        })
        .collect()
}

/// Makes the interpreter's functions the shared libraries' (when they changed).
fn sync(e: &mut Engine, libs: &Libraries, id: u64) {
    let owner = (id, libs.generation.load(Ordering::Acquire));
    if e.functions_owner == owner {
        return;
    }
    let codes: Vec<Arc<[u8]>> = libs.lock().values().map(|l| l.code.clone()).collect();
    if e.clear_functions().is_err() {
        return;
    }
    for code in codes {
        if let Ok((_, body)) = parse_header(&code) {
            if let Ok((found, callbacks)) = load(e, &body) {
                for r in found {
                    if let Ok(f) = callbacks.raw_get::<Function>(r.name.as_str()) {
                        let _ = e.add_function(&r.name, f);
                    }
                }
            }
        }
    }
    e.functions_owner = owner;
}

/// FCALL function numkeys [key ...] [arg ...].
pub fn fcall(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    fcall_generic(ctx, args, w, false)
}

/// FCALL_RO: FCALL of a function flagged `no-writes`.
pub fn fcall_ro(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    fcall_generic(ctx, args, w, true)
}

fn fcall_generic(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer, ro: bool) {
    let scripts = &ctx.shared.scripts;
    let name = String::from_utf8_lossy(args[1]).into_owned();
    let flags = scripts
        .libraries
        .lock()
        .values()
        .flat_map(|l| l.functions.iter())
        .find(|r| r.name == name)
        .map(|r| r.flags.clone());
    let Some(flags) = flags else {
        return w.error("ERR Function not found");
    };
    let n = match numkeys(args) {
        Ok(n) => n,
        Err(e) => return w.error(e),
    };
    let readonly = flags.iter().any(|f| f == "no-writes");
    if ro && !readonly {
        return w.error("ERR Can not execute a script with write flag using *_ro command.");
    }
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
    };
    run(ctx, &f, true, keys, argv, readonly, &origin, w);
}

/// FUNCTION LOAD | DELETE | FLUSH | LIST | KILL | STATS | HELP.
pub fn function(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    let rest = &args[2..];
    let scripts = &ctx.shared.scripts;
    let libs = &scripts.libraries;
    if eq(sub, "load") && !rest.is_empty() && rest.len() <= 2 {
        let replace = rest.len() == 2;
        if replace && !eq(rest[0], "replace") {
            return w.error(&format!(
                "ERR Unknown option given: {}",
                String::from_utf8_lossy(rest[0])
            ));
        }
        let code = rest[rest.len() - 1];
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
    } else if eq(sub, "flush") && rest.len() <= 1 {
        if let Some(m) = rest.first() {
            if !eq(m, "async") && !eq(m, "sync") {
                return w.error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
            }
        }
        libs.lock().clear();
        libs.changed();
        log(ctx, &[b"FLUSH"]);
        w.simple("OK");
    } else if eq(sub, "list") {
        list(libs, rest, w);
    } else if eq(sub, "kill") && rest.is_empty() {
        super::kill(ctx, true, w);
    } else if eq(sub, "stats") && rest.is_empty() {
        let count: usize = libs.lock().values().map(|l| l.functions.len()).sum();
        let n = libs.lock().len();
        w.map(2);
        w.bulk(b"running_script");
        w.null();
        w.bulk(b"engines");
        w.map(1);
        w.bulk(b"LUA");
        w.map(2);
        w.bulk(b"libraries_count");
        w.int(n as i64);
        w.bulk(b"functions_count");
        w.int(count as i64);
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
                "KILL",
                "    Kill the current running function.",
                "FLUSH [ASYNC|SYNC]",
                "    Delete all the libraries.",
                "STATS",
                "    Return information about the current function running.",
            ],
        );
    } else if ["load", "delete", "flush", "kill", "stats", "help"]
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
        if eq(rest[i], "withcode") {
            code = true;
        } else if eq(rest[i], "libraryname") && i + 1 < rest.len() {
            pattern = Some(rest[i + 1]);
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

//! The function libraries (FUNCTION LOAD) shared by the event loops, and how each
//! loop's interpreter follows them.
//!
//! A library is Lua code starting with `#!lua name=<library>`; loading runs it once
//! with `redis.register_function(name, callback)` (or the table form with `flags`,
//! `description`), which is all it may call. The libraries (their code and the names
//! and flags of their functions) have a generation that moves at every change; each
//! loop's interpreter runs every library's code again when it sees a new generation,
//! so its functions are the shared ones. The commands are `crate::cmd::scripting::functions`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mlua::{Function, Table, Value};

use super::engine::{with_engine, Engine};
use crate::aof::Effect;

fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

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
pub(crate) struct Registered {
    pub(crate) name: String,
    pub(crate) flags: Vec<String>,
    pub(crate) description: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Library {
    pub(crate) code: Arc<[u8]>,
    pub(crate) functions: Vec<Registered>,
}

/// The loaded libraries, shared by the event loops.
#[derive(Debug, Default)]
pub struct Libraries {
    libs: Mutex<BTreeMap<String, Library>>,
    generation: AtomicU64,
}

impl Libraries {
    pub(crate) fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Library>> {
        self.libs.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn changed(&self) {
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
pub(crate) fn load_library(libs: &Libraries, code: &[u8], replace: bool) -> Result<String, String> {
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
pub(crate) fn sync(e: &mut Engine, libs: &Libraries, id: u64) {
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

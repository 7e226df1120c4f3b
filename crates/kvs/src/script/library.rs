//! The function libraries (FUNCTION LOAD) shared by the event loops, and how each
//! loop's interpreter follows them.
//!
//! A library is Lua code starting with `#!lua name=<library>`; loading runs it once
//! with `redis.register_function(name, callback)` (or the table form with `flags`,
//! `description`). As in Redis 7 it runs in an environment of its own: its only global
//! is `redis`, with `register_function`, `log`, the log levels and the version, and
//! reading anything else is the nonexistent-global error (`prelude.lua`); the errors
//! and their texts are Redis's. Function names are told apart ignoring case across
//! libraries (FCALL finds them so). The libraries (their code and the names
//! and flags of their functions) have a generation that moves at every change; each
//! loop's interpreter runs every library's code again when it sees a new generation,
//! so its functions are the shared ones. The commands are `crate::cmd::scripting::functions`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    /// What the libraries hold (bytes), as of their last change.
    bytes: AtomicUsize,
}

impl Libraries {
    pub(crate) fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Library>> {
        self.libs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The libraries changed (called with them unlocked).
    pub(crate) fn changed(&self) {
        let bytes = self
            .lock()
            .iter()
            .map(|(name, l)| {
                let functions: usize = l
                    .functions
                    .iter()
                    .map(|r| {
                        std::mem::size_of::<Registered>()
                            + r.name.len()
                            + r.description.as_ref().map_or(0, String::len)
                    })
                    .sum();
                std::mem::size_of::<Library>() + name.len() + l.code.len() + functions
            })
            .sum();
        self.bytes.store(bytes, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// What the libraries hold: their code, names and descriptions, and the records
    /// of them (bytes).
    pub(crate) fn memory(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// The library's name from its first line (`#!lua name=<name>`, split into words as
/// Redis splits a command line, so the name may be quoted), and the code with that
/// line blanked (line numbers stay those of the text given). The checks and their
/// texts are Redis's, in its order: the metadata, the name, the engine.
fn parse_header(code: &[u8]) -> Result<(String, Vec<u8>), String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let Some(nl) = code.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid library metadata".into());
    };
    let words = match split_args(&code[..nl]) {
        Some(w) if !w.is_empty() => w,
        _ => return Err("ERR Invalid library metadata".into()),
    };
    let engine = String::from_utf8_lossy(&words[0][2.min(words[0].len())..]).into_owned();
    let mut name: Option<Vec<u8>> = None;
    for w in &words[1..] {
        if w.len() >= 5 && w[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "ERR Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(w[5..].to_vec());
        } else {
            return Err(format!(
                "ERR Invalid metadata value given: {}",
                String::from_utf8_lossy(w)
            ));
        }
    }
    let name = name.ok_or("ERR Library name was not given")?;
    if !valid_name(&name) {
        return Err(format!("ERR {BAD_NAME}"));
    }
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("ERR Engine '{engine}' not found"));
    }
    let mut body = vec![b'\n'];
    body.extend_from_slice(&code[nl + 1..]);
    Ok((String::from_utf8_lossy(&name).into_owned(), body))
}

/// Splits a line into words as Redis splits an inline command: blanks separate words;
/// "double quotes" take the escapes \n \r \t \b \a \xHH (any other escaped character
/// stands for itself), 'single quotes' only \'. None when a quote is not closed or is
/// followed by more than a blank.
fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == line.len() {
            return Some(words);
        }
        let mut word = Vec::new();
        let mut quote: Option<u8> = None;
        loop {
            let Some(&c) = line.get(i) else {
                if quote.is_some() {
                    return None;
                }
                break;
            };
            match quote {
                Some(b'"') => {
                    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
                    if c == b'\\' && i + 3 < line.len() && line[i + 1] == b'x' {
                        if let (Some(h), Some(l)) = (hex(line[i + 2]), hex(line[i + 3])) {
                            word.push(h * 16 + l);
                            i += 4;
                            continue;
                        }
                    }
                    if c == b'\\' && i + 1 < line.len() {
                        word.push(match line[i + 1] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 8,
                            b'a' => 7,
                            other => other,
                        });
                        i += 2;
                        continue;
                    }
                    if c == b'"' {
                        if line.get(i + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    word.push(c);
                }
                Some(_) => {
                    if c == b'\\' && line.get(i + 1) == Some(&b'\'') {
                        word.push(b'\'');
                        i += 2;
                        continue;
                    }
                    if c == b'\'' {
                        if line.get(i + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    word.push(c);
                }
                None => match c {
                    b'"' | b'\'' => quote = Some(c),
                    c if c.is_ascii_whitespace() => break,
                    c => word.push(c),
                },
            }
            i += 1;
        }
        words.push(word);
    }
}

fn valid_name(n: &[u8]) -> bool {
    !n.is_empty() && n.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// What the Lua side of `redis.register_function` hands over: the name, the callback,
/// the flags (known ones) and the description.
type Registration = (mlua::String, Function, Table, Option<mlua::String>);

/// Runs a library's code in `e` (for at most [`super::engine::LOAD_TIMEOUT_MS`], in
/// the library environment: see `prelude.lua`), collecting what it registers: the
/// registrations, and a table of their callbacks by name (a table, so a library of any
/// size holds one Rust handle). `redis.register_function` checks its arguments in Lua
/// and hands them here ([`Registration`]).
fn load(e: &Engine, body: &[u8]) -> Result<(Vec<Registered>, Table), String> {
    let f = e
        .compile(body, "@user_function")
        .map_err(|m| format!("ERR Error compiling function: {m}"))?;
    let lua = e.lua();
    let callbacks = lua.create_table().map_err(|e| format!("ERR {e}"))?;
    let mut found: Vec<Registered> = Vec::new();
    let result = lua.scope(|scope| {
        let register =
            scope.create_function_mut(|_, (name, cb, flags, description): Registration| {
                let name = name.as_bytes().to_vec();
                if !valid_name(&name) {
                    return Ok(Some(BAD_NAME.to_string()));
                }
                let name = String::from_utf8_lossy(&name).into_owned();
                if found.iter().any(|r| r.name == name) {
                    return Ok(Some("Function already exists in the library".to_string()));
                }
                let flags = flags
                    .sequence_values::<String>()
                    .collect::<mlua::Result<_>>()?;
                let description =
                    description.map(|d| String::from_utf8_lossy(&d.as_bytes()).into_owned());
                callbacks.raw_set(name.as_str(), cb)?;
                found.push(Registered {
                    name,
                    flags,
                    description,
                });
                Ok(None)
            })?;
        e.set_bridge("register", Value::Function(register))?;
        let run: Function = e.bridge_load()?;
        let (ok, err): (bool, Value) = e.loading(|| run.call((f,)))?;
        e.set_bridge("register", Value::Nil)?;
        if ok {
            return Ok(Ok(()));
        }
        // As Redis has it: the error's text (an error of Lua's is "ERR " and its
        // message) after "Error registering functions: ".
        let msg = match err {
            Value::Table(t) => t
                .raw_get::<Option<mlua::String>>("err")?
                .map(|s| String::from_utf8_lossy(&s.as_bytes()).into_owned())
                .unwrap_or_default(),
            Value::String(s) => format!("ERR {}", s.to_string_lossy()),
            other => format!("ERR {other:?}"),
        };
        // The load time limit is raised from Rust, which names it a runtime error.
        let msg = match msg.strip_prefix("ERR runtime error: ") {
            Some(m) => format!("ERR {m}"),
            None => msg,
        };
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

/// Loads (or with `replace`, replaces) the library `code` (its `#!lua name=` header
/// first); returns its name.
pub(crate) fn load_library(libs: &Libraries, code: &[u8], replace: bool) -> Result<String, String> {
    let (name, body) = parse_header(code)?;
    if !replace && libs.lock().contains_key(&name) {
        return Err(format!("ERR Library '{name}' already exists"));
    }
    let lib = compile(code, &body)?;
    let mut all = libs.lock();
    if let Some(f) = clash(&all, &name, &lib) {
        return Err(format!("ERR Function {f} already exists"));
    }
    all.insert(name.clone(), lib);
    drop(all);
    libs.changed();
    Ok(name)
}

/// Runs a library's code (its header already parsed into `body`) to learn its
/// functions.
fn compile(code: &[u8], body: &[u8]) -> Result<Library, String> {
    let found = with_engine(|e| load(e, body)).and_then(|r| r)?;
    Ok(Library {
        code: code.into(),
        functions: found.0,
    })
}

/// A function of `lib` (to be named `name`) that a library of `all` other than `name`
/// registers already (function names are told apart ignoring case, as in Redis).
fn clash(all: &BTreeMap<String, Library>, name: &str, lib: &Library) -> Option<String> {
    lib.functions
        .iter()
        .map(|r| &r.name)
        .find(|f| {
            all.iter().filter(|(l, _)| *l != name).any(|(_, other)| {
                other
                    .functions
                    .iter()
                    .any(|x| x.name.eq_ignore_ascii_case(f))
            })
        })
        .cloned()
}

/// The function `name` (ignoring case), if a library registers it.
pub(crate) fn find(libs: &Libraries, name: &[u8]) -> Option<Registered> {
    libs.lock()
        .values()
        .flat_map(|l| l.functions.iter())
        .find(|r| r.name.as_bytes().eq_ignore_ascii_case(name))
        .cloned()
}

/// What FUNCTION RESTORE does with libraries already loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Policy {
    /// Keep them; a library of the same name is an error.
    Append,
    /// Libraries of the same name are replaced.
    Replace,
    /// Drop them all first.
    Flush,
}

/// FUNCTION RESTORE: loads every library of `codes` by `policy`, all or none.
pub(crate) fn restore(libs: &Libraries, codes: &[Vec<u8>], policy: Policy) -> Result<(), String> {
    let mut new: BTreeMap<String, Library> = BTreeMap::new();
    for code in codes {
        let (name, body) = parse_header(code)?;
        if new.contains_key(&name) {
            return Err(format!("ERR Library {name} already exists"));
        }
        let lib = compile(code, &body)?;
        if let Some(f) = clash(&new, &name, &lib) {
            return Err(format!("ERR Function {f} already exists"));
        }
        new.insert(name, lib);
    }
    let mut all = libs.lock();
    let mut next = if policy == Policy::Flush {
        BTreeMap::new()
    } else {
        all.clone()
    };
    for name in new.keys() {
        if next.contains_key(name) {
            if policy == Policy::Append {
                return Err(format!("ERR Library {name} already exists"));
            }
            next.remove(name);
        }
    }
    for (name, lib) in &new {
        if let Some(f) = clash(&next, name, lib) {
            return Err(format!("ERR Function {f} already exists"));
        }
    }
    next.extend(new);
    *all = next;
    drop(all);
    libs.changed();
    Ok(())
}

/// The codes of the loaded libraries, by name (FUNCTION DUMP).
pub(crate) fn codes(libs: &Libraries) -> Vec<Arc<[u8]>> {
    libs.lock().values().map(|l| l.code.clone()).collect()
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

#[cfg(test)]
mod tests {
    use super::{parse_header, split_args};

    fn words(line: &str) -> Option<Vec<String>> {
        split_args(line.as_bytes()).map(|w| {
            w.into_iter()
                .map(|x| String::from_utf8_lossy(&x).into_owned())
                .collect()
        })
    }

    #[test]
    fn the_metadata_line_splits_as_a_command_line() {
        assert_eq!(
            words("#!lua  name=a\t x"),
            Some(vec!["#!lua".into(), "name=a".into(), "x".into()])
        );
        assert_eq!(
            words(r#"name="a b" 'c\'d'"#),
            Some(vec!["name=a b".into(), "c'd".into()])
        );
        assert_eq!(words(r#""\x41\n""#), Some(vec!["A\n".into()]));
        assert_eq!(words(r#"name="a"#), None);
        assert_eq!(words(r#""a"b"#), None);
        assert_eq!(words("   "), Some(vec![]));
    }

    #[test]
    fn library_metadata_errors_are_the_script_engines() {
        let err = |code: &str| parse_header(code.as_bytes()).unwrap_err();
        assert_eq!(err("lua name=a\n"), "ERR Missing library metadata");
        assert_eq!(err("#!lua name=a"), "ERR Invalid library metadata");
        assert_eq!(err("#!lua name=\"a\n"), "ERR Invalid library metadata");
        assert_eq!(err("#! name=a\n"), "ERR Engine '' not found");
        assert_eq!(err("#!js name=a\n"), "ERR Engine 'js' not found");
        assert_eq!(err("#!lua\n"), "ERR Library name was not given");
        assert_eq!(
            err("#!lua name=a x=1\n"),
            "ERR Invalid metadata value given: x=1"
        );
        assert_eq!(
            err("#!lua name=a NAME=b\n"),
            "ERR Invalid metadata value, name argument was given multiple times"
        );
        assert!(err("#!nope name=a-b\n").starts_with("ERR Library names can only contain"));
        let (name, body) = parse_header(b"#!LUA name=\"lib_1\"\nreturn 1").unwrap();
        assert_eq!((name.as_str(), &body[..]), ("lib_1", &b"\nreturn 1"[..]));
    }
}

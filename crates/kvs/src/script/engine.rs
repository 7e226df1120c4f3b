//! One event loop's Lua 5.1 interpreter: the sandbox scripts run in, the scripts it
//! has compiled, and the run of one script with its `redis.call` bridge.
//!
//! Each event-loop thread has its own interpreter ([`with_engine`], made on first use),
//! because a Lua state cannot be shared between threads; the script cache that EVALSHA
//! reads is shared ([`super::Scripts`]) and each interpreter compiles a script the
//! first time it runs it, keeping the compiled function under the script's SHA1 until
//! SCRIPT FLUSH (the shared cache's generation moves, and every interpreter drops its
//! compiled scripts at its next run).
//!
//! The sandbox (`prelude.lua`): the base, table, string and math libraries, `cjson`,
//! `cmsgpack` and `bit`; no `os`, `io`, `loadfile`, `dofile`, `print`, `require`; scripts run in an
//! environment that refuses every global write ("Attempt to modify a readonly table")
//! and every read of an undefined global ("Script attempted to access nonexistent
//! global variable"), as Redis 7 does. `math.random` is a generator of this
//! interpreter's own (xorshift), seeded from the clock when the interpreter is made and
//! by `math.randomseed`, not reset per script: Redis 7's scripts see random numbers
//! too, and only the seeded sequence is reproducible.
//!
//! A run ([`Engine::run`]) installs the call bridge for its duration only (a scoped
//! function borrowing the command context), so nothing of one run's context can be
//! reached after it. Errors never unwind through Rust: a command's error comes back
//! to Lua as a value, and the Lua side raises it.
//!
//! Time limit: an instruction-count hook (every [`HOOK_EVERY`] instructions) checks the
//! kill flag of the running script ([`super::Busy`]); once set, it raises an error at
//! every check, and `pcall` and `xpcall` raise it again when they catch it, so a
//! script that catches it still ends. A library's top-level code (FUNCTION LOAD) may
//! run [`LOAD_TIMEOUT_MS`] and is then stopped the same way.
//!
//! Memory: the interpreter's allocations are bounded ([`memory_limit`]); an allocation
//! past the bound is the Lua error "not enough memory" (the script ends, the server
//! goes on), never a failed allocation that aborts the process.
//!
//! Handles: compiled scripts and library functions are held in Lua tables (one
//! registry reference each), not as one Rust handle per script: Lua 5.1 keeps those
//! handles on a stack of at most 8,000 slots, and the 8,000th script would have made
//! the interpreter panic. The compiled scripts are bounded too ([`MAX_COMPILED`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use mlua::{ChunkMode, Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value};

use super::libs;
use super::reply::{self, Reply};
use super::Busy;
use crate::resp::Writer;

/// Instructions between two checks of the kill flag.
pub const HOOK_EVERY: u32 = 10_000;

/// How long a library's top-level code may run in FUNCTION LOAD (as in Redis).
pub const LOAD_TIMEOUT_MS: u64 = 500;

/// Compiled scripts an interpreter keeps; past it they are dropped and compiled again
/// from the shared cache when next run.
pub const MAX_COMPILED: usize = 10_000;

/// The bound on one interpreter's memory: 1 GiB, or `maxmemory` (at least 64 MiB)
/// where that is lower.
pub fn memory_limit(maxmemory: u64) -> usize {
    const GIB: u64 = 1 << 30;
    let limit = if maxmemory == 0 {
        GIB
    } else {
        maxmemory.clamp(64 << 20, GIB)
    };
    limit as usize
}

/// What a script asks of the server with a command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ask {
    /// Run it (`redis.call`, `redis.pcall`), its reply in RESP3 when asked for
    /// (`redis.setresp(3)`).
    Run {
        /// RESP3 reply.
        resp3: bool,
    },
    /// Whether the caller's user may run it (`redis.acl_check_cmd`): an integer reply
    /// (1 or 0), or an error when it names no command.
    AclCheck,
}

/// What a script's `redis.call` (and `redis.acl_check_cmd`) runs: the arguments and
/// what is asked; the reply's bytes come back.
pub(crate) type Call<'a> = dyn FnMut(&[Vec<u8>], Ask) -> Vec<u8> + 'a;

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The script returned; its reply is written.
    Done,
    /// It raised an error: the message and the script line.
    Error(String, i64),
    /// It was killed (SCRIPT KILL / FUNCTION KILL).
    Killed,
}

/// A thread's interpreter.
pub(crate) struct Engine {
    lua: Lua,
    globals: Table,
    env: Table,
    bridge: Table,
    run: Function,
    /// Compiled scripts by SHA1 (lower-case hex), and how many.
    compiled: Table,
    compiled_count: usize,
    /// The shared cache (its identity and generation) `compiled` follows.
    owner: (u64, u64),
    /// The running script's kill flag, read by the hook.
    busy: Rc<RefCell<Option<Arc<Busy>>>>,
    /// When the library code being loaded must stop (FUNCTION LOAD), if one is.
    deadline: Rc<Cell<Option<Instant>>>,
    /// The memory bound in force (bytes).
    limit: Rc<Cell<usize>>,
    /// Libraries' functions by name, with the function generation they were made at.
    functions: Table,
    pub(crate) functions_owner: (u64, u64),
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("compiled", &self.compiled_count)
            .finish()
    }
}

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's interpreter (made now if not yet); an error if it
/// cannot be made or is already in use (a script's command running a script, which
/// the `noscript` flag prevents).
pub(crate) fn with_engine<R>(f: impl FnOnce(&mut Engine) -> R) -> Result<R, String> {
    ENGINE.with(|cell| {
        let mut slot = cell
            .try_borrow_mut()
            .map_err(|_| "ERR scripting engine busy".to_string())?;
        if slot.is_none() {
            *slot = Some(Engine::new().map_err(|e| format!("ERR cannot start Lua: {e}"))?);
        }
        match slot.as_mut() {
            Some(e) => Ok(f(e)),
            None => Err("ERR cannot start Lua".into()),
        }
    })
}

impl Engine {
    fn new() -> mlua::Result<Engine> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH;
        let lua = Lua::new_with(libs, LuaOptions::default())?;
        lua.set_memory_limit(memory_limit(0))?;
        let globals = lua.globals();
        libs::install(&lua, &globals)?;
        let bridge = lua.create_table()?;
        let helpers = lua.create_table()?;
        helpers.raw_set(
            "where",
            lua.create_function(|lua, ()| Ok(script_line(lua)))?,
        )?;
        helpers.raw_set("redis", libs::redis_helpers(&lua)?)?;
        helpers.raw_set("pattern", libs::pattern_check(&lua)?)?;
        let limit = Rc::new(Cell::new(memory_limit(0)));
        let seen_limit = limit.clone();
        helpers.raw_set(
            "memory",
            lua.create_function(move |_, ()| Ok(seen_limit.get() as f64))?,
        )?;
        let busy: Rc<RefCell<Option<Arc<Busy>>>> = Rc::new(RefCell::new(None));
        let deadline: Rc<Cell<Option<Instant>>> = Rc::new(Cell::new(None));
        let (killed, load_over) = (busy.clone(), deadline.clone());
        helpers.raw_set(
            "killed",
            lua.create_function(move |_, ()| {
                Ok(killed.borrow().as_ref().is_some_and(|b| b.killed())
                    || load_over.get().is_some_and(|d| Instant::now() >= d))
            })?,
        )?;
        let env: Table = lua
            .load(include_str!("prelude.lua"))
            .set_name("=prelude")
            .call((globals.clone(), bridge.clone(), helpers))?;
        // Chunks made by scripts: text only, in the scripts' environment. Binary
        // chunks are refused here, in Rust, where no script can reach the check.
        let chunk_env = env.clone();
        let loader = lua.create_function(
            move |lua, (code, name): (mlua::String, Option<mlua::String>)| {
                let bytes = code.as_bytes();
                if bytes.first() == Some(&0x1b) {
                    return Ok((
                        Value::Nil,
                        Some("binary chunks are not allowed".to_string()),
                    ));
                }
                // As Lua's own: the name given, else the code itself (shown as
                // `[string "..."]`, cut short by Lua).
                let name = match &name {
                    Some(n) => String::from_utf8_lossy(&n.as_bytes()).into_owned(),
                    None => String::from_utf8_lossy(&bytes).into_owned(),
                };
                let loaded = lua
                    .load(&bytes[..])
                    .set_name(name.replace('\0', "?"))
                    .set_mode(ChunkMode::Text)
                    .set_environment(chunk_env.clone())
                    .into_function();
                Ok(match loaded {
                    Ok(f) => (Value::Function(f), None),
                    Err(mlua::Error::SyntaxError { message, .. }) => (Value::Nil, Some(message)),
                    Err(e) => (Value::Nil, Some(e.to_string())),
                })
            },
        )?;
        globals.raw_set("loadstring", loader)?;
        let run: Function = bridge.raw_get("run")?;
        let (hook_busy, hook_deadline) = (busy.clone(), deadline.clone());
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |_, _| {
                if let Some(d) = hook_deadline.get() {
                    if Instant::now() >= d {
                        return Err(mlua::Error::runtime("FUNCTION LOAD timeout"));
                    }
                }
                if let Some(b) = hook_busy.borrow().as_ref() {
                    if b.killed() {
                        return Err(mlua::Error::runtime("Script killed by user"));
                    }
                    if b.past_threshold() {
                        // The loop's other clients get BUSY (or may kill this).
                        b.pump();
                        if b.killed() {
                            return Err(mlua::Error::runtime("Script killed by user"));
                        }
                    }
                }
                Ok(mlua::VmState::Continue)
            },
        )?;
        Ok(Engine {
            compiled: lua.create_table()?,
            compiled_count: 0,
            functions: lua.create_table()?,
            lua,
            globals,
            env,
            bridge,
            run,
            owner: (0, 0),
            busy,
            deadline,
            limit,
            functions_owner: (0, 0),
        })
    }

    /// Sets the memory bound for `maxmemory` ([`memory_limit`]).
    pub(crate) fn bound_memory(&self, maxmemory: usize) {
        let limit = memory_limit(maxmemory as u64);
        if self.limit.get() != limit && self.lua.set_memory_limit(limit).is_ok() {
            self.limit.set(limit);
        }
    }

    /// Runs `f` with library code limited to [`LOAD_TIMEOUT_MS`].
    pub(crate) fn loading<R>(&self, f: impl FnOnce() -> R) -> R {
        let until = Instant::now() + std::time::Duration::from_millis(LOAD_TIMEOUT_MS);
        self.deadline.set(Some(until));
        let r = f();
        self.deadline.set(None);
        r
    }

    /// The library function `name` (ignoring case, as Redis finds functions), if this
    /// interpreter has it.
    pub(crate) fn function(&self, name: &str) -> Option<Function> {
        self.functions
            .raw_get::<Option<Function>>(name.to_ascii_lowercase())
            .ok()
            .flatten()
    }

    /// Drops this interpreter's library functions.
    pub(crate) fn clear_functions(&mut self) -> mlua::Result<()> {
        self.functions = self.lua.create_table()?;
        Ok(())
    }

    /// Keeps `f` as the library function `name` (the first of names that differ only
    /// in case stays).
    pub(crate) fn add_function(&self, name: &str, f: Function) -> mlua::Result<()> {
        let key = name.to_ascii_lowercase();
        if self.functions.raw_get::<Value>(key.as_str())?.is_nil() {
            self.functions.raw_set(key, f)?;
        }
        Ok(())
    }

    /// The interpreter.
    pub(crate) fn lua(&self) -> &Lua {
        &self.lua
    }

    /// Drops the compiled scripts when the shared cache (`owner`: its identity and
    /// generation) is not the one they were compiled for.
    pub(crate) fn follow(&mut self, owner: (u64, u64)) {
        if self.owner != owner {
            self.drop_compiled();
            self.owner = owner;
        }
    }

    /// Collects the garbage once the interpreter holds over half its bound: Lua 5.1
    /// does not collect before it reports an allocation failure, so what a script
    /// left behind (all of it garbage once the script ended) would otherwise make the
    /// next script fail.
    pub(crate) fn reclaim(&self) {
        if self.lua.used_memory() > self.limit.get() / 2 {
            let _ = self.lua.gc_collect();
        }
    }

    /// Compiles `body` under the name `chunk` (`@user_script`, or `@user_function` for
    /// libraries) in the sandbox's environment. The error is Lua's message.
    pub(crate) fn compile(&self, body: &[u8], chunk: &str) -> Result<Function, String> {
        self.reclaim();
        self.lua
            .load(body)
            .set_name(chunk)
            .set_mode(ChunkMode::Text)
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| match e {
                mlua::Error::SyntaxError { message, .. } => message,
                other => other.to_string(),
            })
    }

    /// The compiled script `sha`, compiling `body` if this interpreter has not yet.
    pub(crate) fn script(&mut self, sha: &str, body: &[u8]) -> Result<Function, String> {
        if let Ok(Some(f)) = self.compiled.raw_get::<Option<Function>>(sha) {
            return Ok(f);
        }
        let f = self.compile(body, "@user_script")?;
        if self.compiled_count >= MAX_COMPILED {
            self.drop_compiled();
        }
        self.compiled
            .raw_set(sha, f.clone())
            .map_err(|e| e.to_string())?;
        self.compiled_count += 1;
        Ok(f)
    }

    fn drop_compiled(&mut self) {
        if self.compiled_count > 0 {
            if let Ok(t) = self.lua.create_table() {
                self.compiled = t;
                self.compiled_count = 0;
            }
        }
    }

    /// Runs `f` (a compiled script, with KEYS and ARGV as globals; or, `as_function`,
    /// a library function called with them), its `redis.call` served by `call`, and
    /// writes what it returns to `w` unless it failed.
    pub(crate) fn run(
        &mut self,
        f: &Function,
        as_function: bool,
        keys: &[&[u8]],
        argv: &[&[u8]],
        busy: &Arc<Busy>,
        call: &mut Call,
        w: &mut Writer,
    ) -> Ended {
        *self.busy.borrow_mut() = Some(busy.clone());
        let result = self.run_inner(f, as_function, keys, argv, call, w);
        *self.busy.borrow_mut() = None;
        self.reclaim();
        if busy.killed() {
            return Ended::Killed;
        }
        result.unwrap_or_else(|e| Ended::Error(format!("ERR {e}"), 0))
    }

    fn run_inner(
        &mut self,
        f: &Function,
        as_function: bool,
        keys: &[&[u8]],
        argv: &[&[u8]],
        call: &mut Call,
        w: &mut Writer,
    ) -> mlua::Result<Ended> {
        let lua = &self.lua;
        let list = |items: &[&[u8]]| -> mlua::Result<Table> {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, a) in items.iter().enumerate() {
                t.raw_set(i + 1, lua.create_string(a)?)?;
            }
            Ok(t)
        };
        let (keys, argv) = (list(keys)?, list(argv)?);
        let bridge = self.bridge.clone();
        let run = self.run.clone();
        let globals = self.globals.clone();
        // Both bridge functions run commands through `call`, one at a time (a command
        // run from a script runs no script).
        let call = RefCell::new(call);
        lua.scope(|scope| {
            let resp_of = bridge.clone();
            let call_ref = &call;
            let bridged = scope.create_function_mut(move |lua, args: Table| {
                let resp3 = matches!(resp_of.raw_get::<Value>("resp"), Ok(Value::Integer(3)))
                    || matches!(resp_of.raw_get::<Value>("resp"), Ok(Value::Number(n)) if n == 3.0);
                let argv = match arguments(args) {
                    Ok(a) => a,
                    Err(msg) => return error_value(lua, msg),
                };
                let Ok(mut call) = call_ref.try_borrow_mut() else {
                    return error_value(lua, "ERR a command is already running");
                };
                let out = call(&argv, Ask::Run { resp3 });
                let r = reply::read(&out)
                    .unwrap_or(Reply::Error(b"ERR reply could not be read back".to_vec()));
                let failed = matches!(r, Reply::Error(_));
                Ok((reply::to_lua(lua, r)?, failed))
            })?;
            // `redis.acl_check_cmd`: true or false, or an error table marked as failed.
            let acl_check = scope.create_function_mut(move |lua, args: Table| {
                let argv = match arguments(args) {
                    Ok(a) => a,
                    Err(msg) => return error_value(lua, msg),
                };
                let Ok(mut call) = call_ref.try_borrow_mut() else {
                    return error_value(lua, "ERR a command is already running");
                };
                match reply::read(&call(&argv, Ask::AclCheck)) {
                    Some(Reply::Int(n)) => Ok((Value::Boolean(n != 0), false)),
                    Some(Reply::Error(e)) => error_value(lua, &String::from_utf8_lossy(&e)),
                    _ => error_value(lua, "ERR reply could not be read back"),
                }
            })?;
            bridge.raw_set("call", bridged)?;
            bridge.raw_set("acl_check", acl_check)?;
            bridge.raw_set("resp", 2)?;
            let (ok, value): (bool, Value) = if as_function {
                run.call((f.clone(), keys, argv))?
            } else {
                globals.raw_set("KEYS", keys)?;
                globals.raw_set("ARGV", argv)?;
                run.call((f.clone(),))?
            };
            bridge.raw_set("call", Value::Nil)?;
            bridge.raw_set("acl_check", Value::Nil)?;
            if ok {
                reply::write_value(&value, w, 0);
                return Ok(Ended::Done);
            }
            let (msg, line) = match &value {
                Value::Table(t) => (
                    t.raw_get::<Option<mlua::String>>("err")?
                        .map(|s| String::from_utf8_lossy(&s.as_bytes()).into_owned())
                        .unwrap_or_else(|| "ERR unknown error".into()),
                    t.raw_get::<Option<i64>>("line")?.unwrap_or(0),
                ),
                // Lua calls no handler for a memory error: the message comes as is.
                Value::String(m) => (format!("ERR {}", m.to_string_lossy()), 0),
                other => (format!("ERR {other:?}"), 0),
            };
            Ok(Ended::Error(msg, line))
        })
    }

    /// Sets `name` in the bridge table (the functions FUNCTION LOAD gives libraries).
    pub(crate) fn set_bridge(&self, name: &str, v: Value) -> mlua::Result<()> {
        self.bridge.raw_set(name, v)
    }

    /// The library loader (`bridge.load`: a library's compiled code under `xpcall`, in
    /// the library environment).
    pub(crate) fn bridge_load(&self) -> mlua::Result<Function> {
        self.bridge.raw_get("load")
    }
}

/// The arguments of a `redis.call` (the table `{n=count, ...}` the Lua side packs):
/// strings, and numbers written as Redis writes them (`%.17g`, so integers up to 2^53
/// keep every digit); an error text for anything else or for none.
fn arguments(args: Table) -> Result<Vec<Vec<u8>>, &'static str> {
    let n: usize = args
        .raw_get::<Option<usize>>("n")
        .ok()
        .flatten()
        .unwrap_or(0);
    if n == 0 {
        return Err("ERR Please specify at least one argument for this redis lib call");
    }
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        match args.raw_get::<Value>(i) {
            Ok(Value::String(s)) => out.push(s.as_bytes().to_vec()),
            Ok(Value::Integer(v)) => out.push(v.to_string().into_bytes()),
            Ok(Value::Number(v)) => out.push(libs::fmt_g(v, 17).into_bytes()),
            _ => return Err(BAD_ARG),
        }
    }
    Ok(out)
}

const BAD_ARG: &str = "ERR Lua redis lib command arguments must be strings or integers";

/// An error table `{err=msg}` marked as failed, as the bridge returns it.
fn error_value(lua: &Lua, msg: &str) -> mlua::Result<(Value, bool)> {
    let t = lua.create_table()?;
    t.raw_set("err", msg)?;
    Ok((Value::Table(t), true))
}

/// The current line of the innermost frame of a script or library function (what an
/// error message names). A tail call (`return redis.call(...)`) leaves no frame of the
/// script to read (Lua 5.1 reuses it for the callee); the line is then given as 1.
fn script_line(lua: &Lua) -> i64 {
    for level in 0..64 {
        let found = lua.inspect_stack(level, |d| {
            let src = d.source();
            let user = src
                .source
                .as_deref()
                .is_some_and(|s| s.starts_with("@user_"));
            (user, d.current_line())
        });
        match found {
            None => break,
            Some((true, Some(line))) => return line as i64,
            _ => {}
        }
    }
    1
}

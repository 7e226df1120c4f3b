//! Lua scripting through the real binary with the `redis` crate: EVAL with keys and
//! arguments, the conversions both ways, the script cache (EVALSHA, NOSCRIPT, SCRIPT
//! LOAD/EXISTS/FLUSH), redis.call against redis.pcall, the sandbox's refusals, read-only
//! scripts, functions (FUNCTION LOAD, FCALL), a script's writes surviving `kill -9`
//! whole, and SCRIPT KILL of a script that runs too long, from another event loop.

mod common;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use common::{bulk, cmd, connect, durable_args, fresh_log, kvs_serve, temp, try_cmd};
use redis::{Connection, Value};

fn err(con: &mut Connection, args: &[&str]) -> String {
    match try_cmd(con, args) {
        Ok(v) => panic!("{args:?}: expected an error, got {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn eval(con: &mut Connection, script: &str, keys: &[&str], argv: &[&str]) -> Value {
    let n = keys.len().to_string();
    let mut args = vec!["EVAL", script, &n];
    args.extend_from_slice(keys);
    args.extend_from_slice(argv);
    cmd(con, &args)
}

#[test]
fn eval_sees_keys_and_args_and_converts_both_ways() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    assert_eq!(
        eval(
            &mut c,
            "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}",
            &["k1", "k2"],
            &["a1", "a2"],
        ),
        Value::Array(vec![
            bulk("k1"),
            bulk("k2"),
            bulk("a1"),
            bulk("a2"),
            Value::Int(2),
            Value::Int(2)
        ])
    );
    // Lua to reply: numbers truncate, true is 1, false and nil are null, a table stops
    // at its first nil, {ok=} is a status and {err=} an error.
    assert_eq!(eval(&mut c, "return 100.9", &[], &[]), Value::Int(100));
    assert_eq!(eval(&mut c, "return -2.5", &[], &[]), Value::Int(-2));
    assert_eq!(eval(&mut c, "return true", &[], &[]), Value::Int(1));
    assert_eq!(eval(&mut c, "return false", &[], &[]), Value::Nil);
    assert_eq!(eval(&mut c, "return nil", &[], &[]), Value::Nil);
    assert_eq!(
        eval(&mut c, "return {1, 'two', {3}, nil, 5}", &[], &[]),
        Value::Array(vec![
            Value::Int(1),
            bulk("two"),
            Value::Array(vec![Value::Int(3)])
        ])
    );
    assert_eq!(
        eval(&mut c, "return {ok='FINE'}", &[], &[]),
        Value::SimpleString("FINE".into())
    );
    let e = err(&mut c, &["EVAL", "return {err='MYERR custom'}", "0"]);
    assert!(e.contains("MYERR") && e.contains("custom"), "{e}");
    // Reply to Lua: each type as its Lua value, seen from inside the script.
    cmd(&mut c, &["SET", "s", "text"]);
    cmd(&mut c, &["RPUSH", "l", "a", "b"]);
    let types = eval(
        &mut c,
        "local r = {}
         r[1] = type(redis.call('INCR', 'n'))
         r[2] = type(redis.call('GET', 's'))
         r[3] = tostring(redis.call('GET', 'nosuch'))
         r[4] = type(redis.call('LRANGE', 'l', 0, -1))
         r[5] = redis.call('SET', 'x', 1).ok
         r[6] = redis.pcall('INCR', 's').err
         r[7] = redis.call('LRANGE', 'l', 0, -1)[2]
         return r",
        &[],
        &[],
    );
    assert_eq!(
        types,
        Value::Array(vec![
            bulk("number"),
            bulk("string"),
            bulk("false"),
            bulk("table"),
            bulk("OK"),
            bulk("ERR value is not an integer or out of range"),
            bulk("b"),
        ])
    );
    // Numbers given to redis.call are written as Lua writes them.
    assert_eq!(
        eval(
            &mut c,
            "redis.call('SET', KEYS[1], 3.5) return redis.call('GET', KEYS[1])",
            &["f"],
            &[]
        ),
        bulk("3.5")
    );
    assert_eq!(
        eval(&mut c, "return cjson.encode({1, 'a', {b=true}})", &[], &[]),
        bulk(r#"[1,"a",{"b":true}]"#)
    );
    assert_eq!(
        eval(
            &mut c,
            "return cjson.decode(ARGV[1]).k[2]",
            &[],
            &[r#"{"k":[10,20]}"#]
        ),
        Value::Int(20)
    );
    assert_eq!(
        eval(&mut c, "return bit.band(0xff, 0x0f)", &[], &[]),
        Value::Int(15)
    );
    // cmsgpack: lua-cmsgpack's encodings (a double that a float cannot hold, the
    // smallest integer form) and a round trip.
    assert_eq!(
        eval(
            &mut c,
            "local e = cmsgpack.pack(0.1, -1099511627776) local h = ''
             for i = 1, #e do h = h .. string.format('%02x', string.byte(e, i)) end
             return h",
            &[],
            &[]
        ),
        bulk("cb3fb999999999999ad3ffffff0000000000")
    );
    assert_eq!(
        eval(
            &mut c,
            "local t = cmsgpack.unpack(cmsgpack.pack({a={1, 'x'}, b=true})) return {t.a[2], tostring(t.b)}",
            &[],
            &[]
        ),
        Value::Array(vec![bulk("x"), bulk("true")])
    );
    assert_eq!(
        eval(&mut c, "return redis.sha1hex('')", &[], &[]),
        bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709")
    );
    // numkeys is checked.
    assert!(err(&mut c, &["EVAL", "return 1", "-1"]).contains("can't be negative"));
    assert!(err(&mut c, &["EVAL", "return 1", "2", "a"]).contains("greater than number of args"));
    assert!(err(&mut c, &["EVAL", "return 1", "x"]).contains("not an integer"));
}

#[test]
fn the_script_cache_serves_evalsha_until_flushed() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let body = "return ARGV[1] .. '!'";
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(body)
        .query(&mut c)
        .unwrap();
    assert!(
        sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
        "{sha}"
    );
    assert_eq!(cmd(&mut c, &["EVALSHA", &sha, "0", "hi"]), bulk("hi!"));
    // Any case of the digest.
    assert_eq!(
        cmd(&mut c, &["EVALSHA", &sha.to_uppercase(), "0", "yo"]),
        bulk("yo!")
    );
    let exists: Vec<i64> = redis::cmd("SCRIPT")
        .arg(&["EXISTS", &sha, "0000000000000000000000000000000000000000"])
        .query(&mut c)
        .unwrap();
    assert_eq!(exists, [1, 0]);
    assert_eq!(cmd(&mut c, &["SCRIPT", "FLUSH"]), Value::Okay);
    let e = err(&mut c, &["EVALSHA", &sha, "0", "hi"]);
    // (The redis crate names the NOSCRIPT code by its own word.)
    assert!(e.contains("No matching script. Please use EVAL."), "{e}");
    // EVAL caches what it runs: EVALSHA of its digest works after it, on another
    // connection too.
    eval(&mut c, body, &[], &["x"]);
    let mut other = connect(&addr);
    assert_eq!(cmd(&mut other, &["EVALSHA", &sha, "0", "z"]), bulk("z!"));
    assert!(err(&mut c, &["SCRIPT", "FLUSH", "MAYBE"]).contains("SYNC|ASYNC"));
    assert_eq!(cmd(&mut c, &["SCRIPT", "FLUSH", "ASYNC"]), Value::Okay);
}

#[test]
fn call_raises_pcall_returns_and_the_sandbox_refuses() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    cmd(&mut c, &["SET", "s", "abc"]);
    // redis.call: the command's error ends the script, with where it was raised.
    let e = err(&mut c, &["EVAL", "return redis.call('INCR', 's')", "0"]);
    assert!(e.contains("value is not an integer"), "{e}");
    assert!(e.contains("@user_script:1"), "{e}");
    // redis.pcall: the same error is a value the script may return or inspect.
    let e = err(&mut c, &["EVAL", "return redis.pcall('INCR', 's')", "0"]);
    assert!(e.contains("value is not an integer"), "{e}");
    assert!(!e.contains("user_script"), "{e}");
    assert_eq!(
        eval(
            &mut c,
            "local ok, e = pcall(redis.call, 'INCR', 's') return {tostring(ok), e}",
            &[],
            &[]
        ),
        Value::Array(vec![
            bulk("false"),
            bulk("ERR value is not an integer or out of range")
        ])
    );
    // Unknown commands, arity, commands refused in scripts.
    assert!(err(&mut c, &["EVAL", "return redis.call('nosuch')", "0"])
        .contains("Unknown Redis command called from script"));
    assert!(err(&mut c, &["EVAL", "return redis.call('GET')", "0"])
        .contains("Wrong number of args calling Redis command from script"));
    for refused in [
        "'MULTI'",
        "'EXEC'",
        "'WATCH', 'x'",
        "'EVAL', 'return 1', '0'",
    ] {
        let script = format!("return redis.call({refused})");
        let e = err(&mut c, &["EVAL", &script, "0"]);
        assert!(e.contains("not allowed from script"), "{refused}: {e}");
    }
    // Globals: no new ones, no reads of undefined ones, no way around it.
    let e = err(&mut c, &["EVAL", "x = 1", "0"]);
    assert!(e.contains("Attempt to modify a readonly table"), "{e}");
    let e = err(&mut c, &["EVAL", "return undefined_name", "0"]);
    assert!(
        e.contains("Script attempted to access nonexistent global variable 'undefined_name'"),
        "{e}"
    );
    for trick in [
        "setmetatable(_G, {})",
        "_G.x = 1",
        "redis.call = nil",
        "cjson.encode = nil",
        "rawset(_G, 'x', 1)",
    ] {
        let e = err(&mut c, &["EVAL", trick, "0"]);
        assert!(
            e.contains("Attempt to modify a readonly table"),
            "{trick}: {e}"
        );
    }
    for absent in ["os", "io", "loadfile", "dofile", "require", "print"] {
        let e = err(&mut c, &["EVAL", &format!("return {absent}"), "0"]);
        assert!(e.contains("nonexistent global variable"), "{absent}: {e}");
    }
    // Locals are fine, and nothing leaks from one script to the next.
    assert_eq!(
        eval(&mut c, "local x = 41 return x + 1", &[], &[]),
        Value::Int(42)
    );
    let e = err(&mut c, &["EVAL", "syntax error here", "0"]);
    assert!(e.contains("Error compiling script"), "{e}");
    // error() with a string, and with an error table.
    let e = err(&mut c, &["EVAL", "error('boom')", "0"]);
    assert!(
        e.starts_with("ERR") || e.contains("user_script:1: boom"),
        "{e}"
    );
    let e = err(
        &mut c,
        &["EVAL", "return redis.error_reply('MY_CODE message')", "0"],
    );
    assert!(e.contains("MY_CODE") && e.contains("message"), "{e}");
}

#[test]
fn acl_check_cmd_answers_for_the_callers_user() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut admin = connect(&addr);
    cmd(
        &mut admin,
        &[
            "ACL",
            "SETUSER",
            "u",
            "on",
            "nopass",
            "+@all",
            "-hset",
            "-config|set",
            "~x*",
            "&*",
        ],
    );
    let mut c = connect(&addr);
    cmd(&mut c, &["AUTH", "u", "any"]);
    let check = |c: &mut Connection, script: &str| eval(c, script, &[], &[]);
    // As redis-server 7.0 answers (true: 1, false: nil).
    for (script, want) in [
        ("return redis.acl_check_cmd('set','xx',1)", Value::Int(1)),
        (
            "return redis.acl_check_cmd('SET','xx','v','GET')",
            Value::Int(1),
        ),
        ("return redis.acl_check_cmd('hset','xx','f',1)", Value::Nil),
        // A key the user may not touch, though the script did not declare it.
        ("return redis.acl_check_cmd('set','yy',1)", Value::Nil),
        (
            "return redis.acl_check_cmd('mset','xa','1','yb','2')",
            Value::Nil,
        ),
        (
            "return redis.acl_check_cmd('config','set','a','b')",
            Value::Nil,
        ),
        (
            "return redis.acl_check_cmd('config','get','a')",
            Value::Int(1),
        ),
        ("return redis.acl_check_cmd('config')", Value::Int(1)),
        // Arity is not checked; keys are found as the command finds them.
        ("return redis.acl_check_cmd('get')", Value::Int(1)),
        ("return redis.acl_check_cmd('get','a','b')", Value::Nil),
        (
            "return redis.acl_check_cmd('eval','s','2','xa','yb')",
            Value::Nil,
        ),
        (
            "return redis.acl_check_cmd('eval','s','5','xa')",
            Value::Int(1),
        ),
        (
            "return redis.acl_check_cmd('object','encoding','yy')",
            Value::Nil,
        ),
        ("return type(redis.acl_check_cmd('ping'))", bulk("boolean")),
        (
            "local ok, e = pcall(redis.acl_check_cmd, 'nosuch') return {tostring(ok), e}",
            Value::Array(vec![
                bulk("false"),
                bulk("ERR Invalid command passed to redis.acl_check_cmd()"),
            ]),
        ),
    ] {
        assert_eq!(check(&mut c, script), want, "{script}");
    }
    for (script, e) in [
        (
            "return redis.acl_check_cmd('invalid-cmd','arg')",
            "Invalid command passed to redis.acl_check_cmd()",
        ),
        (
            "return redis.acl_check_cmd('config','nosuch')",
            "Invalid command passed to redis.acl_check_cmd()",
        ),
        (
            "return redis.acl_check_cmd()",
            "Please specify at least one argument for this redis lib call",
        ),
        (
            "return redis.acl_check_cmd('get', {})",
            "Lua redis lib command arguments must be strings or integers",
        ),
    ] {
        let got = err(&mut c, &["EVAL", script, "0"]);
        assert!(got.contains(e), "{script}: {got}");
    }
    // Nothing is logged: the check is a question, not a denial.
    let Value::Array(log) = cmd(&mut admin, &["ACL", "LOG"]) else {
        panic!("ACL LOG")
    };
    assert!(log.is_empty(), "{log:?}");
    // The default user may run anything.
    assert_eq!(
        check(&mut admin, "return redis.acl_check_cmd('hset','yy','f',1)"),
        Value::Int(1)
    );
    // As many keys as Lua passes (7,000; 100,000 is Lua's own error, as in Redis),
    // every one allowed but the last: answered, and the server still serves.
    let many = "local t = {} for i = 1, 7000 do t[i] = 'x' .. i end t[#t] = 'nope' \
                return redis.acl_check_cmd('del', unpack(t))";
    assert_eq!(check(&mut c, many), Value::Nil);
    let most = "local t = {} for i = 1, 7000 do t[i] = 'x' .. i end \
                return redis.acl_check_cmd('del', unpack(t))";
    assert_eq!(check(&mut c, most), Value::Int(1));
    let huge = "local t = {} for i = 1, 100000 do t[i] = 'x' .. i end \
                return redis.acl_check_cmd('del', unpack(t))";
    let got = err(&mut c, &["EVAL", huge, "0"]);
    assert!(got.contains("too many results to unpack"), "{got}");
    assert_eq!(cmd(&mut c, &["PING"]), Value::SimpleString("PONG".into()));
    // It runs in functions as well.
    let lib = "#!lua name=chk\nredis.register_function('chk', function(keys, args) \
               return redis.acl_check_cmd(unpack(args)) end)";
    cmd(&mut admin, &["FUNCTION", "LOAD", lib]);
    assert_eq!(
        cmd(&mut c, &["FCALL", "chk", "0", "get", "xy"]),
        Value::Int(1)
    );
    assert_eq!(cmd(&mut c, &["FCALL", "chk", "0", "get", "yy"]), Value::Nil);
}

#[test]
fn read_only_scripts_cannot_write() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    cmd(&mut c, &["SET", "k", "v"]);
    assert_eq!(
        cmd(
            &mut c,
            &["EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "k"]
        ),
        bulk("v")
    );
    let e = err(
        &mut c,
        &[
            "EVAL_RO",
            "return redis.call('SET', KEYS[1], 'w')",
            "1",
            "k",
        ],
    );
    assert!(
        e.contains("Write commands are not allowed from read-only scripts"),
        "{e}"
    );
    let sha: String = redis::cmd("SCRIPT")
        .arg(&["LOAD", "return redis.call('DEL', KEYS[1])"])
        .query(&mut c)
        .unwrap();
    let e = err(&mut c, &["EVALSHA_RO", &sha, "1", "k"]);
    assert!(e.contains("read-only scripts"), "{e}");
    assert_eq!(cmd(&mut c, &["GET", "k"]), bulk("v"));
}

#[test]
fn functions_load_and_run() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let lib = "#!lua name=mylib\n\
        redis.register_function('bump', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)\n\
        redis.register_function{function_name='peek', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}";
    assert_eq!(cmd(&mut c, &["FUNCTION", "LOAD", lib]), bulk("mylib"));
    assert!(err(&mut c, &["FUNCTION", "LOAD", lib]).contains("already exists"));
    assert_eq!(
        cmd(&mut c, &["FCALL", "bump", "1", "n", "5"]),
        Value::Int(5)
    );
    assert_eq!(cmd(&mut c, &["FCALL_RO", "peek", "1", "n"]), bulk("5"));
    assert!(err(&mut c, &["FCALL_RO", "bump", "1", "n", "1"]).contains("write flag"));
    assert!(err(&mut c, &["FCALL", "nosuch", "0"]).contains("Function not found"));
    // Another connection (another event loop's interpreter) sees the library.
    let mut other = connect(&addr);
    assert_eq!(
        cmd(&mut other, &["FCALL", "bump", "1", "n", "1"]),
        Value::Int(6)
    );
    assert_eq!(cmd(&mut c, &["FUNCTION", "FLUSH"]), Value::Okay);
    assert_eq!(cmd(&mut c, &["FUNCTION", "LIST"]), Value::Array(vec![]));
    assert!(err(&mut c, &["FCALL", "bump", "1", "n", "1"]).contains("Function not found"));
}

/// The strings of a reply, nested ones too, in order.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::BulkString(b) => out.push(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => out.push(s.clone()),
        Value::Array(items) | Value::Set(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Map(pairs) => pairs.iter().for_each(|(k, v)| {
            strings(k, out);
            strings(v, out);
        }),
        _ => {}
    }
}

#[test]
fn a_library_loads_with_register_function_log_and_the_version_only() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let load = |c: &mut Connection, body: &str| {
        err(c, &["FUNCTION", "LOAD", &format!("#!lua name=l\n{body}")])
    };
    // Anything but `redis` (and of it, anything but what a library may use) is a
    // nonexistent global while the library loads.
    for (body, name) in [
        ("return math.random()", "math"),
        ("return redis.call('PING')", "call"),
        ("redis.setresp(3)", "setresp"),
        ("local mt = getmetatable(_G)", "getmetatable"),
        ("redis.math.random()", "math"),
    ] {
        let e = load(&mut c, body);
        assert!(
            e.contains(&format!(
                "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable '{name}'"
            )),
            "{body}: {e}"
        );
    }
    assert!(load(&mut c, "x = 1").contains("Attempt to modify a readonly table"));
    // register_function's checks, with Redis's texts.
    for (body, text) in [
        (
            "redis.register_function()",
            "wrong number of arguments to redis.register_function",
        ),
        (
            "redis.register_function('f')",
            "with a single argument is only applicable to Lua table",
        ),
        (
            "redis.register_function(nil, function() end)",
            "first argument to redis.register_function must be a string",
        ),
        (
            "redis.register_function('f', 'x')",
            "second argument to redis.register_function must be a function",
        ),
        (
            "redis.register_function('a b', function() end)",
            "Library names can only contain letters",
        ),
        (
            "redis.register_function{function_name='f'}",
            "must get a callback argument",
        ),
        (
            "redis.register_function{callback=function() end}",
            "must get a function name argument",
        ),
        (
            "redis.register_function{function_name='f', callback=function() end, x=1}",
            "unknown argument given",
        ),
        (
            "redis.register_function{function_name='f', callback=function() end, flags='x'}",
            "flags argument to redis.register_function must be a table",
        ),
        (
            "redis.register_function{function_name='f', callback=function() end, flags={'x'}}",
            "unknown flag given",
        ),
        (
            "redis.register_function{function_name=1, callback='x'}",
            "callback argument given to redis.register_function must be a function",
        ),
    ] {
        let e = load(&mut c, body);
        assert!(
            e.contains("Error registering functions: ERR "),
            "{body}: {e}"
        );
        assert!(e.contains(text), "{body}: {e}");
    }
    // The metadata line, as Redis reads it.
    let meta = |c: &mut Connection, line: &str| {
        err(c, &["FUNCTION", "LOAD", &format!("{line}\nreturn 1")])
    };
    assert!(meta(&mut c, "#! name=l").contains("Engine '' not found"));
    assert!(meta(&mut c, "#!lua name=a name=b").contains("name argument was given multiple times"));
    assert!(meta(&mut c, "#!lua name=\"l").contains("Invalid library metadata"));
    let lib = "#!LUA name=\"lib\"\n\
        local api = redis\n\
        redis.log(redis.LOG_NOTICE, 'loading', redis.REDIS_VERSION)\n\
        redis.register_function{FUNCTION_NAME='Late', callback=function() api.register_function('x', function() end) end}\n\
        redis.register_function('inner', function() return redis.register_function end)\n\
        redis.register_function{function_name='flagged', callback=function() return 1 end, flags={'ALLOW-OOM', 'no-writes'}, description=7}";
    assert_eq!(cmd(&mut c, &["FUNCTION", "LOAD", lib]), bulk("lib"));
    // Functions are found ignoring case; the library's `redis` refuses to register
    // once it loaded, and the functions' own `redis` has no register_function.
    let e = err(&mut c, &["FCALL", "LATE", "0"]);
    assert!(
        e.contains("redis.register_function can only be called on FUNCTION LOAD command"),
        "{e}"
    );
    assert_eq!(cmd(&mut c, &["FCALL", "inner", "0"]), Value::Nil);
    assert!(err(&mut c, &["FCALL", "flagged", "x"]).contains("Bad number of keys provided"));
    let mut words = Vec::new();
    strings(
        &cmd(&mut c, &["FUNCTION", "LIST", "LIBRARYNAME", "lib"]),
        &mut words,
    );
    for w in ["flagged", "allow-oom", "no-writes", "7"] {
        assert!(words.iter().any(|x| x == w), "{w}: {words:?}");
    }
    // FUNCTION's argument errors.
    let e = err(&mut c, &["FUNCTION", "LOAD", "foo", lib]);
    assert!(e.contains("Unknown option given: foo"), "{e}");
    assert_eq!(
        cmd(&mut c, &["FUNCTION", "LOAD", "REPLACE", "replace", lib]),
        bulk("lib")
    );
    assert!(err(&mut c, &["FUNCTION", "LIST", "LIBRARYNAME"])
        .contains("library name argument was not given"));
    assert!(err(&mut c, &["FUNCTION", "LIST", "WITHCODE", "withcode"])
        .contains("Unknown argument withcode"));
    let e = err(&mut c, &["FUNCTION", "FLUSH", "SYNC", "x"]);
    assert!(
        e.contains("unknown subcommand or wrong number of arguments for 'FLUSH'"),
        "{e}"
    );
}

#[test]
fn functions_and_flagged_scripts_are_held_to_maxmemory_unless_allow_oom() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let lib = "#!lua name=m\n\
        redis.register_function('plain', function(keys) return redis.call('SET', keys[1], 'p') end)\n\
        redis.register_function{function_name='oom', callback=function(keys) return redis.call('SET', keys[1], 'o') end, flags={'allow-oom'}}\n\
        redis.register_function{function_name='ro', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}";
    cmd(&mut c, &["FUNCTION", "LOAD", lib]);
    let dump = match cmd(&mut c, &["FUNCTION", "DUMP"]) {
        Value::BulkString(b) => b,
        other => panic!("{other:?}"),
    };
    cmd(&mut c, &["CONFIG", "SET", "maxmemory", "1"]);
    assert!(
        err(&mut c, &["FCALL", "plain", "1", "k"]).contains("command not allowed when used memory")
    );
    assert_eq!(cmd(&mut c, &["FCALL", "oom", "1", "k"]), Value::Okay);
    assert_eq!(cmd(&mut c, &["FCALL_RO", "ro", "1", "k"]), bulk("o"));
    // A script with a shebang line is checked the same way; one without is refused
    // only at its first command that may add memory.
    assert!(err(&mut c, &["EVAL", "#!lua\nreturn 1", "0"])
        .contains("command not allowed when used memory"));
    let allowed = "#!lua flags=allow-oom\nreturn redis.call('SET', KEYS[1], 'e')";
    assert_eq!(cmd(&mut c, &["EVAL", allowed, "1", "k"]), Value::Okay);
    assert_eq!(cmd(&mut c, &["EVAL", "return 1", "0"]), Value::Int(1));
    // Libraries may add memory: FUNCTION LOAD and RESTORE are refused too, even with
    // no library loaded.
    cmd(&mut c, &["FUNCTION", "FLUSH"]);
    assert!(
        err(&mut c, &["FUNCTION", "LOAD", lib]).contains("command not allowed when used memory")
    );
    let e = match try_cmd(&mut c, &["FUNCTION", "RESTORE"]) {
        Ok(v) => panic!("{v:?}"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("wrong number of arguments"), "{e}");
    let restore: redis::RedisResult<Value> = redis::cmd("FUNCTION")
        .arg("RESTORE")
        .arg(&dump)
        .query(&mut c);
    assert!(restore
        .unwrap_err()
        .to_string()
        .contains("command not allowed when used memory"));
    cmd(&mut c, &["CONFIG", "SET", "maxmemory", "0"]);
    let restored: Value = redis::cmd("FUNCTION")
        .arg("RESTORE")
        .arg(&dump)
        .query(&mut c)
        .unwrap();
    assert_eq!(restored, Value::Okay);
    assert_eq!(cmd(&mut c, &["FCALL", "plain", "1", "k"]), Value::Okay);
}

#[test]
fn a_scripts_writes_survive_kill_9_whole() {
    let path = temp("scripting", "script.aof");
    let _ = std::fs::remove_file(&path);
    let path = path.to_string_lossy().into_owned();
    let args = ["--port", "0", "--aof", &path, "--appendfsync", "always"];
    let script = "for i = 1, 100 do redis.call('SET', 'k' .. i, i) end
                  redis.call('RPUSH', 'list', 'a', 'b')
                  redis.call('DEL', 'k50')
                  return redis.call('DBSIZE')";
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        assert_eq!(eval(&mut c, script, &[], &[]), Value::Int(100));
        // Inside MULTI the script queues and runs at EXEC, in the transaction's record.
        cmd(&mut c, &["MULTI"]);
        cmd(&mut c, &["EVAL", "return redis.call('INCR', 'k1')", "0"]);
        cmd(&mut c, &["SET", "after", "1"]);
        assert_eq!(
            cmd(&mut c, &["EXEC"]),
            Value::Array(vec![Value::Int(2), Value::Okay])
        );
        // _server is killed (SIGKILL) here.
    }
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(cmd(&mut c, &["DBSIZE"]), Value::Int(101));
    assert_eq!(cmd(&mut c, &["GET", "k1"]), bulk("2"));
    assert_eq!(cmd(&mut c, &["GET", "k100"]), bulk("100"));
    assert_eq!(cmd(&mut c, &["GET", "k50"]), Value::Nil);
    assert_eq!(cmd(&mut c, &["LLEN", "list"]), Value::Int(2));
    assert_eq!(cmd(&mut c, &["GET", "after"]), bulk("1"));
}

/// Sends `line` on a raw socket without waiting for the reply.
#[test]
fn function_libraries_survive_kill_9_and_a_rewrite() {
    let aof = fresh_log("kvs-functions");
    let args = durable_args(&aof);
    let lib = |name: &str, reply: &str| {
        format!(
            "#!lua name={name}\nredis.register_function('{name}_f', function() return '{reply}' end)"
        )
    };
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        cmd(&mut c, &["FUNCTION", "LOAD", &lib("kept", "one")]);
        cmd(
            &mut c,
            &["FUNCTION", "LOAD", "REPLACE", &lib("kept", "two")],
        );
        cmd(&mut c, &["FUNCTION", "LOAD", &lib("gone", "x")]);
        cmd(&mut c, &["FUNCTION", "DELETE", "gone"]);
    }
    let (server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(cmd(&mut c, &["FCALL", "kept_f", "0"]), bulk("two"));
    assert!(err(&mut c, &["FCALL", "gone_f", "0"]).contains("Function not found"));
    // A rewrite keeps the libraries (they are not keys).
    cmd(&mut c, &["SET", "k", "v"]);
    common::rewrite_log(&mut c);
    drop(server);
    let (server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(cmd(&mut c, &["FCALL", "kept_f", "0"]), bulk("two"));
    assert_eq!(cmd(&mut c, &["GET", "k"]), bulk("v"));
    cmd(&mut c, &["FUNCTION", "FLUSH"]);
    drop(server);
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert!(err(&mut c, &["FCALL", "kept_f", "0"]).contains("Function not found"));
}

fn send(addr: &str, line: &[u8]) -> std::net::TcpStream {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.write_all(line).expect("send");
    s
}

#[test]
fn a_long_script_gets_busy_replies_and_script_kill_from_another_loop() {
    // Two event loops: consecutive connections are dealt to different loops.
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut admin = connect(&addr);
    cmd(
        &mut admin,
        &["CONFIG", "SET", "busy-reply-threshold", "100"],
    );
    cmd(&mut admin, &["SET", "k", "v"]);
    let e = err(&mut admin, &["SCRIPT", "KILL"]);
    assert!(e.contains("No scripts in execution right now"), "{e}");
    // The script runs on the loop after the admin connection's.
    let mut runner = send(&addr, b"EVAL \"while true do end\" 0\r\n");
    let start = Instant::now();
    let busy = loop {
        match try_cmd(&mut admin, &["GET", "k"]) {
            Err(e) if e.to_string().contains("BUSY") => break e.to_string(),
            _ if start.elapsed() > Duration::from_secs(10) => panic!("never BUSY"),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    assert!(busy.contains("SCRIPT KILL"), "{busy}");
    // New clients are dealt to the loop that is not busy: each gets a reply at once
    // (whichever loop the round-robin would have given it).
    for _ in 0..4 {
        let mut late = connect(&addr);
        let t = Instant::now();
        let pong = try_cmd(&mut late, &["PING"]);
        assert!(t.elapsed() < Duration::from_secs(2), "{pong:?}");
    }
    assert_eq!(cmd(&mut admin, &["SCRIPT", "KILL"]), Value::Okay);
    let mut reply = [0u8; 256];
    runner
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = runner.read(&mut reply).expect("the script's reply");
    let reply = String::from_utf8_lossy(&reply[..n]);
    assert!(reply.starts_with("-ERR Script killed by user"), "{reply}");
    assert_eq!(cmd(&mut admin, &["GET", "k"]), bulk("v"));

    // A script that wrote cannot be killed: it would leave half its writes. (A
    // connection in between, so the script's lands on the other loop again.)
    let _spacer = send(&addr, b"");
    let mut writer = send(
        &addr,
        b"EVAL \"redis.call('SET', 'w', 1) local t = redis.call('TIME')[1] + 1 while tonumber(redis.call('TIME')[1]) <= t do end return 'done'\" 0\r\n",
    );
    let start = Instant::now();
    loop {
        match try_cmd(&mut admin, &["SCRIPT", "KILL"]) {
            Err(e) if e.to_string().contains("already executed write commands") => break,
            _ if start.elapsed() > Duration::from_secs(10) => panic!("never UNKILLABLE"),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut reply = [0u8; 64];
    writer
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = writer.read(&mut reply).expect("the script's reply");
    assert_eq!(&reply[..n], b"$4\r\ndone\r\n");
    assert_eq!(cmd(&mut admin, &["GET", "w"]), bulk("1"));
}

#[test]
fn one_loop_answers_busy_and_kills_a_script_that_catches_errors() {
    // One event loop: the script's own loop answers its other clients from the
    // script's instruction hook.
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "1"]);
    let mut admin = connect(&addr);
    cmd(&mut admin, &["CONFIG", "SET", "lua-time-limit", "50"]);
    // The loop lends its connections to the hook once a script has run.
    assert_eq!(eval(&mut admin, "return 1", &[], &[]), Value::Int(1));
    let mut runner = send(
        &addr,
        b"EVAL \"local f = function() while 1 do redis.call('PING') end end while 1 do pcall(f) end\" 0\r\n",
    );
    let start = Instant::now();
    loop {
        match try_cmd(&mut admin, &["PING"]) {
            Err(e) if e.to_string().contains("busy running a script") => break,
            _ if start.elapsed() > Duration::from_secs(10) => panic!("never BUSY"),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    // The kill is not caught by the script's pcall.
    assert_eq!(cmd(&mut admin, &["SCRIPT", "KILL"]), Value::Okay);
    let mut reply = [0u8; 256];
    runner
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = runner.read(&mut reply).expect("the script's reply");
    let reply = String::from_utf8_lossy(&reply[..n]);
    assert!(reply.starts_with("-ERR Script killed by user"), "{reply}");
    assert_eq!(
        cmd(&mut admin, &["PING"]),
        Value::SimpleString("PONG".into())
    );
}

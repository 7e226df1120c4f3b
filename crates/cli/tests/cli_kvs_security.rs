//! The key-value server against a client that has the password (or none is set) and
//! tries to hang, crash, escape or steer it, through the real binary: scripts that
//! never end (on the default single event loop, the first script after start
//! included), a sandbox whose tables, metatables and loader can't be changed or
//! worked around, Lua inputs that crashed or aborted stock Lua 5.1, the script cache
//! past Lua's 8,000 handles, a panic (the process ends, it never goes deaf),
//! protected and immutable configuration, DEBUG, and CONFIG REWRITE writing what is
//! in force.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{bulk, cmd, connect, kvs_serve, kvs_serve_teed, temp, try_cmd};
use redis::{Connection, Value};

fn err(con: &mut Connection, args: &[&str]) -> String {
    match try_cmd(con, args) {
        Ok(v) => panic!("{args:?}: expected an error, got {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn eval(con: &mut Connection, script: &str) -> redis::RedisResult<Value> {
    try_cmd(con, &["EVAL", script, "0"])
}

/// Sends one inline request on a new connection (its reply is read later).
fn send(addr: &str, line: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.write_all(format!("{line}\r\n").as_bytes()).expect("send");
    s
}

/// Reads until `n` one-line replies have arrived (a reply may come in pieces, and
/// the replies to a pipelined line may come in one read or several).
fn read_lines(s: &mut TcpStream, n: usize, wait: Duration) -> Vec<String> {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while got.windows(2).filter(|w| w == b"\r\n").count() < n {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
    }
    String::from_utf8_lossy(&got)
        .split_terminator("\r\n")
        .map(str::to_owned)
        .collect()
}

fn read_reply(s: &mut TcpStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).expect("a reply");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Asks `line` on a new connection until the reply contains `want` (10 s at most).
fn until_reply(addr: &str, line: &str, want: &str) -> String {
    let start = Instant::now();
    loop {
        // The reply that counts is the one to the last command on the line.
        let mut s = send(addr, line);
        let replies = read_lines(&mut s, line.split("\r\n").count(), Duration::from_secs(3));
        let got = replies.last().cloned().unwrap_or_default();
        if replies.len() == line.split("\r\n").count() && got.contains(want) {
            return got;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{line}: never '{want}', last {got:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A script that never ends, run on the default server (one event loop) as its very
/// first script; `kill` is the command that must stop it.
fn never_ending(script: &str, kill: &str, prefix: &[&str], suffix: &[&str]) {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut admin = connect(&addr);
    cmd(
        &mut admin,
        &["CONFIG", "SET", "busy-reply-threshold", "100"],
    );
    let mut runner = TcpStream::connect(&addr).expect("connect");
    for p in prefix {
        runner.write_all(p.as_bytes()).unwrap();
        runner.write_all(b"\r\n").unwrap();
    }
    let mut req = Vec::new();
    req.extend_from_slice(format!("*3\r\n$4\r\nEVAL\r\n${}\r\n", script.len()).as_bytes());
    req.extend_from_slice(script.as_bytes());
    req.extend_from_slice(b"\r\n$1\r\n0\r\n");
    runner.write_all(&req).unwrap();
    for p in suffix {
        runner.write_all(p.as_bytes()).unwrap();
        runner.write_all(b"\r\n").unwrap();
    }
    // An existing client and a new one get BUSY with Redis's text.
    let busy = until_reply(&addr, "PING", "BUSY");
    assert!(
        busy.contains("Redis is busy running a script. You can only call"),
        "{busy}"
    );
    let e = err(&mut admin, &["GET", "x"]);
    assert!(e.contains("BUSY"), "{e}");
    let kill_reply = until_reply(&addr, kill, "OK");
    assert!(kill_reply.starts_with("+OK"), "{kill_reply}");
    let mut got = String::new();
    let start = Instant::now();
    while !got.contains("killed") && start.elapsed() < Duration::from_secs(10) {
        got.push_str(&read_reply(&mut runner));
    }
    assert!(got.contains("Script killed by user"), "{got}");
    assert_eq!(
        cmd(&mut admin, &["PING"]),
        Value::SimpleString("PONG".into())
    );
}

#[test]
fn the_first_script_on_the_default_loop_gets_busy_and_script_kill() {
    never_ending("while true do end", "SCRIPT KILL", &[], &[]);
}

#[test]
fn a_script_that_catches_the_kill_with_xpcall_still_ends() {
    never_ending(
        "while true do xpcall(function() while true do end end, function() return 1 end) end",
        "SCRIPT KILL",
        &[],
        &[],
    );
    never_ending(
        "while true do pcall(function() while true do local t = {} end end) end",
        "SCRIPT KILL",
        &[],
        &[],
    );
}

#[test]
fn a_never_ending_script_inside_multi_gets_killed_too() {
    never_ending("while true do end", "SCRIPT KILL", &["MULTI"], &["EXEC"]);
}

#[test]
fn function_load_of_a_looping_library_stops_and_functions_get_killed() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let t = Instant::now();
    let e = err(
        &mut c,
        &["FUNCTION", "LOAD", "#!lua name=spin\nwhile true do end"],
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(e.contains("FUNCTION LOAD timeout"), "{e}");
    assert_eq!(cmd(&mut c, &["FUNCTION", "LIST"]), Value::Array(vec![]));
    // A function that never ends: FUNCTION KILL, from a new connection.
    cmd(
        &mut c,
        &[
            "FUNCTION",
            "LOAD",
            "#!lua name=lib\nredis.register_function('spin', function() while true do end end)",
        ],
    );
    cmd(&mut c, &["CONFIG", "SET", "lua-time-limit", "100"]);
    let mut runner = send(&addr, "FCALL spin 0");
    let busy = until_reply(&addr, "GET x", "BUSY");
    assert!(busy.contains("FUNCTION KILL"), "{busy}");
    until_reply(&addr, "FUNCTION KILL", "OK");
    assert!(read_reply(&mut runner).contains("killed"));
    assert_eq!(cmd(&mut c, &["PING"]), Value::SimpleString("PONG".into()));
}

#[test]
fn while_busy_a_client_without_the_password_can_neither_kill_nor_shut_down() {
    let (mut server, addr) = kvs_serve(&["--port", "0", "--requirepass", "s3cret"]);
    let mut admin = connect(&addr);
    cmd(&mut admin, &["AUTH", "s3cret"]);
    cmd(
        &mut admin,
        &["CONFIG", "SET", "busy-reply-threshold", "100"],
    );
    let mut runner = send(&addr, "AUTH s3cret\r\nEVAL \"while true do end\" 0");
    until_reply(&addr, "AUTH s3cret\r\nPING", "BUSY");
    for attempt in ["SHUTDOWN NOSAVE", "SCRIPT KILL", "PING"] {
        let mut s = send(&addr, attempt);
        let r = read_reply(&mut s);
        assert!(r.starts_with("-NOAUTH"), "{attempt}: {r}");
    }
    assert!(server.0.try_wait().unwrap().is_none(), "the server exited");
    until_reply(&addr, "AUTH s3cret\r\nSCRIPT KILL", "OK");
    let replies = read_lines(&mut runner, 2, Duration::from_secs(10));
    assert_eq!(replies[0], "+OK");
    assert!(replies[1].contains("killed"), "{replies:?}");
}

#[test]
fn the_sandbox_refuses_bytecode_and_nothing_outlives_a_script() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut a = connect(&addr);
    let mut b = connect(&addr);
    // Binary chunks: refused by the loader itself, however string.byte looks.
    let r = eval(
        &mut a,
        "local f, e = loadstring(string.dump(function() return 1 end)) return {tostring(f), e}",
    )
    .unwrap();
    assert_eq!(
        r,
        Value::Array(vec![bulk("nil"), bulk("binary chunks are not allowed")])
    );
    assert!(eval(&mut a, "string.byte = function() return 0 end")
        .unwrap_err()
        .to_string()
        .contains("readonly"));
    // Text chunks still load, in the sandbox.
    assert_eq!(
        eval(&mut a, "return loadstring('return 6 * 7')()").unwrap(),
        Value::Int(42)
    );
    assert!(eval(&mut a, "loadstring('x = 1')()")
        .unwrap_err()
        .to_string()
        .contains("Attempt to modify a readonly table"));
    // Every way at a library table or a metatable, from one connection...
    for trick in [
        "getmetatable(_G).__index = {}",
        "getmetatable(_G).__index.x = 1",
        "getmetatable('').__index = {}",
        "getmetatable('').__index.upper = function() return 'owned' end",
        "getmetatable(redis).__index = {}",
        "getmetatable(redis).__index.call = function() return 'owned' end",
        "string.upper = function() return 'owned' end",
        "table.insert(string, 'owned')",
        "rawset(string, 'upper', 1)",
        "rawset(getmetatable(string), '__index', {})",
        "math.floor = nil",
        "cjson.encode = nil",
        "cmsgpack.pack = nil",
        "bit.band = nil",
        "setmetatable(string, {})",
        "redis.call = function() return 'owned' end",
    ] {
        if let Ok(v) = eval(&mut a, trick) {
            panic!("{trick}: ran, {v:?}");
        }
    }
    // ... and nothing of it is seen from another.
    assert_eq!(eval(&mut b, "return ('abc'):upper()").unwrap(), bulk("ABC"));
    assert_eq!(
        eval(&mut b, "return string.upper('abc') .. tostring(string[1])").unwrap(),
        bulk("ABCnil")
    );
    cmd(&mut b, &["SET", "k", "v"]);
    assert_eq!(
        eval(&mut b, "return redis.call('GET', 'k')").unwrap(),
        bulk("v")
    );
    // Reading through the read-only tables works as in Redis.
    assert_eq!(
        eval(
            &mut b,
            "local n = 0 for k, v in pairs(string) do n = n + 1 end return n > 10"
        )
        .unwrap(),
        Value::Int(1)
    );
    assert_eq!(
        eval(&mut b, "return type(rawget(string, 'len'))").unwrap(),
        bulk("function")
    );
}

#[test]
fn lua_inputs_that_crashed_stock_lua_are_errors_and_the_server_goes_on() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let cases: [(&str, &str); 5] = [
        (
            "return unpack({}, -2^31, 2^31-1)",
            "too many results to unpack",
        ),
        ("return unpack({}, 0, 2^31-2)", "too many results to unpack"),
        ("return #string.rep('x', 1e10)", "not enough memory"),
        (
            "local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i, i, i, i, i, i} end",
            "not enough memory",
        ),
        (
            "return string.find('aaa', string.rep('a?', 100000))",
            "pattern too complex",
        ),
    ];
    for (script, want) in cases {
        let e = eval(&mut c, script).unwrap_err().to_string();
        assert!(e.contains(want), "{script}: {e}");
        // The interpreter is usable at once after each.
        assert_eq!(eval(&mut c, "return 1 + 1").unwrap(), Value::Int(2));
    }
    // What stays legal.
    assert_eq!(
        eval(&mut c, "return {unpack({1, 2, 3})}").unwrap(),
        Value::Array(vec![Value::Int(1), Value::Int(2), Value::Int(3)])
    );
    assert_eq!(
        eval(&mut c, "return string.rep('', 1e10) .. string.rep('ab', 2)").unwrap(),
        bulk("abab")
    );
    assert_eq!(
        eval(&mut c, "return string.gsub('hello world', 'o', '0')").unwrap(),
        bulk("hell0 w0rld")
    );
}

#[test]
fn ten_thousand_cached_scripts_leave_a_working_server() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let mut pipe = redis::pipe();
    for i in 0..10_000 {
        pipe.cmd("SCRIPT").arg("LOAD").arg(format!("return {i}"));
    }
    let shas: Vec<String> = pipe.query(&mut c).expect("10,000 SCRIPT LOADs");
    assert_eq!(cmd(&mut c, &["EVALSHA", &shas[0], "0"]), Value::Int(0));
    assert_eq!(
        cmd(&mut c, &["EVALSHA", &shas[9_999], "0"]),
        Value::Int(9_999)
    );
    assert_eq!(cmd(&mut c, &["PING"]), Value::SimpleString("PONG".into()));
    // Scripts only EVAL brought are bounded (Redis 7.4's 500, least recently used
    // first); SCRIPT LOAD's are not.
    let mut sha_of = |i: usize| {
        let v = cmd(&mut c, &["SCRIPT", "LOAD", &format!("return 'e{i}'")]);
        cmd(&mut c, &["SCRIPT", "FLUSH"]);
        match v {
            Value::BulkString(b) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        }
    };
    let (first, second) = (sha_of(0), sha_of(1));
    cmd(&mut c, &["SCRIPT", "LOAD", "return 'kept'"]);
    let mut pipe = redis::pipe();
    for i in 0..600 {
        pipe.cmd("EVAL")
            .arg(format!("return 'e{i}'"))
            .arg(0)
            .ignore();
        if i % 100 == 50 {
            // Used again: the second stays among the recent ones.
            pipe.cmd("EVALSHA").arg(&second).arg(0).ignore();
        }
    }
    let () = pipe.query(&mut c).expect("600 EVALs");
    let e = err(&mut c, &["EVALSHA", &first, "0"]);
    assert!(e.contains("No matching script"), "{e}");
    assert_eq!(cmd(&mut c, &["EVALSHA", &second, "0"]), bulk("e1"));
    assert_eq!(cmd(&mut c, &["EVAL", "return 'kept'", "0"]), bulk("kept"));
    let cached = common::info_num(&mut c, "memory", "number_of_cached_scripts");
    assert_eq!(cached, 501, "500 EVAL-only scripts and the loaded one");
}

#[test]
fn a_panic_ends_the_process_with_a_message_instead_of_a_deaf_server() {
    let log = temp("kvs-security", "panic.log");
    let _ = std::fs::remove_file(&log);
    let (mut server, addr, _) = kvs_serve_teed(
        &["--port", "0", "--enable-debug-command", "yes"],
        Some(&log),
    );
    let mut c = connect(&addr);
    let _ = try_cmd(&mut c, &["DEBUG", "PANIC"]);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = server.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still running after a panic"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(70));
    std::thread::sleep(Duration::from_millis(200));
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.contains("a bug ended the server"), "{text}");
    assert!(text.contains("DEBUG PANIC"), "{text}");
}

#[test]
fn debug_and_path_settings_are_protected_as_in_redis() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let e = err(&mut c, &["DEBUG", "SLEEP", "3600"]);
    assert!(e.contains("DEBUG command not allowed"), "{e}");
    for (name, value, why) in [
        ("dir", "/tmp", "can't set protected config"),
        ("dbfilename", "x.rdb", "can't set protected config"),
        (
            "appendfilename",
            "/root/.ssh/authorized_keys2",
            "can't set immutable config",
        ),
        ("appenddirname", "x", "can't set immutable config"),
        ("cluster-config-file", "x", "can't set immutable config"),
        ("enable-debug-command", "yes", "can't set immutable config"),
        (
            "enable-protected-configs",
            "yes",
            "can't set immutable config",
        ),
    ] {
        let e = err(&mut c, &["CONFIG", "SET", name, value]);
        assert!(
            e.contains(&format!("(possibly related to argument '{name}') - {why}")),
            "{name}: {e}"
        );
    }
    // Scripts can't reach CONFIG or change the cluster at all.
    for call in [
        "redis.call('CONFIG', 'SET', 'maxmemory', '1')",
        "redis.call('CONFIG', 'GET', 'dir')",
        "redis.call('CLUSTER', 'MEET', '127.0.0.1', '1')",
        "redis.call('DEBUG', 'SLEEP', '0')",
    ] {
        let e = eval(&mut c, call).unwrap_err().to_string();
        assert!(e.contains("not allowed from script"), "{call}: {e}");
    }
    // Allowed where the settings say so: `local` from the loopback address.
    let (_open, addr) = kvs_serve(&[
        "--port",
        "0",
        "--enable-debug-command",
        "local",
        "--enable-protected-configs",
        "yes",
    ]);
    let mut c = connect(&addr);
    assert_eq!(cmd(&mut c, &["DEBUG", "SLEEP", "0"]), Value::Okay);
    assert_eq!(cmd(&mut c, &["CONFIG", "SET", "dir", "/tmp"]), Value::Okay);
    assert_eq!(
        cmd(&mut c, &["CONFIG", "GET", "enable-debug-command"]),
        Value::Array(vec![bulk("enable-debug-command"), bulk("local")])
    );
}

#[test]
fn config_rewrite_keeps_the_log_in_force_and_every_setting_round_trips() {
    let dir = temp("kvs-security", "rewrite");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let aof = dir.join("data.aof");
    let conf = dir.join("server.conf");
    std::fs::write(
        &conf,
        format!(
            "appendonly yes\nappendfilename {}\nmaxmemory 100mb\nmaxmemory-policy allkeys-lru\n\
             appendfsync always\nnotify-keyspace-events KEA\nslowlog-max-len 77\n\
             slowlog-log-slower-than 1234\nhz 20\nbusy-reply-threshold 1234\n\
             enable-debug-command local\nenable-protected-configs local\n\
             client-output-buffer-limit pubsub 64mb 16mb 90\nrequirepass \"a b\"\n",
            aof.display()
        ),
    )
    .unwrap();
    let conf_s = conf.to_string_lossy().into_owned();
    let args = ["--port", "0", "--config", conf_s.as_str()];
    let all = |c: &mut Connection| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> =
            redis::cmd("CONFIG").arg("GET").arg("*").query(c).unwrap();
        v.retain(|(k, _)| k != "port");
        v.sort();
        v
    };
    let before;
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        cmd(&mut c, &["AUTH", "a b"]);
        let mut pipe = redis::pipe();
        for i in 0..1000 {
            pipe.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
        }
        let () = pipe.query(&mut c).unwrap();
        // Every other setting CONFIG SET takes, moved off its value, so that each of
        // them goes through the rewrite and the restart.
        let fixed = [
            "port",
            "bind",
            "requirepass",
            "appendonly",
            "appendfilename",
            "threads",
            "databases",
            "tcp-backlog",
            "enable-debug-command",
            "enable-protected-configs",
            "dir",
            "dbfilename",
            "client-output-buffer-limit",
            "save",
            "cluster-port",
            "aclfile",
            // Set in the file already; a tiny limit would evict the keys.
            "maxmemory",
            "maxmemory-policy",
            // Set by REPLICAOF only.
            "replicaof",
            "slaveof",
        ];
        for (k, v) in all(&mut c) {
            // The TLS settings are set at start only, as `port` is.
            if fixed.contains(&k.as_str()) || k.starts_with("tls-") {
                continue;
            }
            let next = match v.as_str() {
                "yes" => "no".to_string(),
                "no" => "yes".to_string(),
                n if n.parse::<u64>().is_ok() => (n.parse::<u64>().unwrap() + 2).to_string(),
                n if n.parse::<i64>().is_ok() => (n.parse::<i64>().unwrap() - 1).to_string(),
                _ => match k.as_str() {
                    "maxmemory-policy" => "noeviction".into(),
                    "appendfsync" => "everysec".into(),
                    "notify-keyspace-events" => "Kg".into(),
                    "loglevel" => "warning".into(),
                    "acl-pubsub-default" => "allchannels".into(),
                    "latency-tracking-info-percentiles" => "12.5 99".into(),
                    _ => format!("{v}x"),
                },
            };
            assert_eq!(
                cmd(&mut c, &["CONFIG", "SET", &k, &next]),
                Value::Okay,
                "{k} {v} -> {next}"
            );
        }
        assert_eq!(cmd(&mut c, &["CONFIG", "REWRITE"]), Value::Okay);
        before = all(&mut c);
    }
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(
        text.contains(&format!("appendfilename {}", aof.display())),
        "{text}"
    );
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    cmd(&mut c, &["AUTH", "a b"]);
    assert_eq!(cmd(&mut c, &["DBSIZE"]), Value::Int(1000));
    assert_eq!(all(&mut c), before);
    // Rewriting again and starting on that file changes nothing either.
    assert_eq!(cmd(&mut c, &["CONFIG", "REWRITE"]), Value::Okay);
    drop(c);
    drop(_server);
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    cmd(&mut c, &["AUTH", "a b"]);
    assert_eq!(cmd(&mut c, &["DBSIZE"]), Value::Int(1000));
    assert_eq!(all(&mut c), before);
}

#[test]
fn exec_during_a_script_on_another_loop_is_aborted_whole() {
    // Two event loops: consecutive connections are dealt to different loops.
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut a = connect(&addr);
    cmd(&mut a, &["CONFIG", "SET", "busy-reply-threshold", "100"]);
    cmd(&mut a, &["SET", "xx", "1"]);
    assert_eq!(cmd(&mut a, &["MULTI"]), Value::Okay);
    cmd(&mut a, &["INCR", "xx"]);
    let mut runner = send(&addr, "EVAL \"while true do end\" 0");
    std::thread::sleep(Duration::from_millis(400));
    let e = err(&mut a, &["EXEC"]);
    assert!(
        e.contains("Transaction discarded") && e.contains("BUSY"),
        "{e}"
    );
    until_reply(&addr, "SCRIPT KILL", "OK");
    assert!(read_reply(&mut runner).contains("killed"));
    // Nothing of the transaction ran, and the connection is out of MULTI.
    assert_eq!(cmd(&mut a, &["GET", "xx"]), bulk("1"));
    assert_eq!(cmd(&mut a, &["PING"]), Value::SimpleString("PONG".into()));
}

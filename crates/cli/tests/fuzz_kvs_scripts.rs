//! Scripts fuzzed from a grammar against the real binary, for a bounded time: random
//! Lua built from expressions over the library surface a script sees (string, table,
//! math, cjson, cmsgpack, bit, redis, unpack, select, loadstring, pcall, metatables),
//! with hostile arguments (huge and negative counts, NaN and infinities, long and
//! binary strings, deep and cyclic tables, long patterns). Every script must get a
//! reply (a value or an error), and the server must answer and stay up after all of
//! them: no input to a library function may crash, hang or abort it.
//!
//! The seed is printed; `WIRESPEED_FUZZ_SEED=N` replays a run and
//! `WIRESPEED_FUZZ_SECS=N` runs longer (default 30 s, at most 2,000 scripts per
//! second of it); `WIRESPEED_FUZZ_DUMP=FILE` writes the scripts, one a line.

mod common;

use std::time::{Duration, Instant};

use common::{connect, kvs_serve_teed, temp, try_cmd};
use redis::Value;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const NUMBERS: &[&str] = &[
    "0", "1", "-1", "2", "7", "255", "256", "65536", "2^31", "-2^31", "2^31-1", "2^32", "2^53",
    "-2^53", "2^63", "1e10", "1e308", "-1e308", "1/0", "-1/0", "0/0", "0.5", "-0.5", "8000",
    "7990", "1e6",
];

const STRINGS: &[&str] = &[
    "''",
    "'a'",
    "'abc'",
    "'%'",
    "'%a+'",
    "'(.-)'",
    "'[%z]'",
    "'%b()'",
    "'%f[%w]'",
    "'\\0\\1\\2'",
    "'\\27Lua'",
    "'{}'",
    "'[1,2'",
    "'{\"a\":[1,{\"b\":null}]}'",
    "'\\255\\254'",
    "'%s%d%q%5.2f'",
    "'%99d'",
    "'*'",
    "'x->y'",
    "string.rep('a', 1000)",
    "string.rep('(', 300)",
    "string.rep('a?', 3000)",
    "string.rep('[', 50)",
    "string.rep('%', 101)",
    "tostring(1e300)",
    "cjson.encode({1,2,3})",
    "cmsgpack.pack({1,'x',{y=2}})",
];

const FUNCTIONS: &[(&str, usize)] = &[
    ("string.byte", 3),
    ("string.char", 3),
    ("string.find", 4),
    ("string.format", 3),
    ("string.gmatch", 2),
    ("string.gsub", 4),
    ("string.len", 1),
    ("string.lower", 1),
    ("string.match", 3),
    ("string.rep", 2),
    ("string.reverse", 1),
    ("string.sub", 3),
    ("string.upper", 1),
    ("table.concat", 4),
    ("table.insert", 3),
    ("table.remove", 2),
    ("table.sort", 2),
    ("table.getn", 1),
    ("math.floor", 1),
    ("math.fmod", 2),
    ("math.frexp", 1),
    ("math.ldexp", 2),
    ("math.max", 3),
    ("math.random", 2),
    ("math.randomseed", 1),
    ("math.pow", 2),
    ("math.modf", 1),
    ("cjson.encode", 1),
    ("cjson.decode", 1),
    ("cmsgpack.pack", 3),
    ("cmsgpack.unpack", 1),
    ("bit.band", 3),
    ("bit.bor", 2),
    ("bit.lshift", 2),
    ("bit.arshift", 2),
    ("bit.tohex", 2),
    ("bit.tobit", 1),
    ("bit.bswap", 1),
    ("redis.sha1hex", 1),
    ("redis.error_reply", 1),
    ("redis.status_reply", 1),
    ("redis.pcall", 3),
    ("redis.setresp", 1),
    ("unpack", 3),
    ("select", 3),
    ("tostring", 1),
    ("tonumber", 2),
    ("type", 1),
    ("loadstring", 1),
    ("setmetatable", 2),
    ("getmetatable", 1),
    ("rawget", 2),
    ("rawset", 3),
    ("rawequal", 2),
    ("next", 2),
    ("ipairs", 1),
    ("pairs", 1),
    ("error", 2),
    ("assert", 2),
    ("collectgarbage", 1),
];

/// A random expression, at most `depth` calls deep.
fn expr(r: &mut Rng, depth: usize) -> String {
    let choice = if depth == 0 { r.below(5) } else { r.below(9) };
    match choice {
        0 | 1 => r.pick(NUMBERS).to_string(),
        2 | 3 => r.pick(STRINGS).to_string(),
        4 => r
            .pick(&[
                "nil",
                "true",
                "false",
                "{}",
                "t",
                "_G",
                "string",
                "redis",
                "KEYS",
                "ARGV",
                "cyc",
                "deep",
                "cjson.null",
            ])
            .to_string(),
        5 => {
            let n = r.below(4);
            let items: Vec<String> = (0..n).map(|_| expr(r, depth - 1)).collect();
            format!("{{{}}}", items.join(", "))
        }
        6 => format!(
            "({} {} {})",
            expr(r, depth - 1),
            r.pick(&["..", "+", "-", "*", "/", "%", "^", "==", "<"]),
            expr(r, depth - 1)
        ),
        _ => {
            let (name, arity) = FUNCTIONS[r.below(FUNCTIONS.len())];
            let n = r.below(arity + 1);
            let args: Vec<String> = (0..n).map(|_| expr(r, depth - 1)).collect();
            format!("{name}({})", args.join(", "))
        }
    }
}

/// A random script: a few statements, each a call (in pcall or not) or an
/// assignment to a local, then a return.
fn script(r: &mut Rng) -> String {
    let mut s = String::from(
        "local t = {1, 'two', {3}} local cyc = {} cyc.self = cyc cyc[1] = cyc \
         local deep = {} local d = deep for i = 1, 300 do d[1] = {} d = d[1] end\n",
    );
    for _ in 0..1 + r.below(5) {
        let e = expr(r, 3);
        match r.below(4) {
            0 => s.push_str(&format!("pcall(function() return {e} end)\n")),
            1 => s.push_str(&format!("local v = {e}\n")),
            2 => s.push_str(&format!(
                "for i = 1, {} do local v = {e} end\n",
                1 + r.below(20)
            )),
            _ => s.push_str(&format!("t[#t + 1] = {e}\n")),
        }
    }
    s.push_str(&format!("return {}\n", expr(r, 2)));
    s
}

#[test]
fn random_scripts_never_crash_or_hang_the_server() {
    let seed: u64 = std::env::var("WIRESPEED_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
        | 1;
    let secs: u64 = std::env::var("WIRESPEED_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    eprintln!("fuzz_kvs_scripts: seed {seed} (WIRESPEED_FUZZ_SEED={seed} replays it), {secs} s");
    let log = temp("fuzz-kvs-scripts", "server.log");
    let _ = std::fs::remove_file(&log);
    let (mut server, addr, _) = kvs_serve_teed(&["--port", "0"], Some(&log));
    let server_log = || {
        std::thread::sleep(Duration::from_millis(200));
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    };
    let mut c = connect(&addr);
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // A script that loops longer than this is answered BUSY to others; none of these
    // loops, and each must end on its own.
    // WIRESPEED_FUZZ_DUMP=FILE writes every script, one a line, to replay a failure.
    let mut dump = std::env::var_os("WIRESPEED_FUZZ_DUMP")
        .map(|p| std::fs::File::create(p).expect("create the dump file"));
    let mut r = Rng(seed);
    let start = Instant::now();
    let (mut runs, mut errors) = (0u64, 0u64);
    while start.elapsed() < Duration::from_secs(secs) && runs < secs * 2000 {
        let body = script(&mut r);
        if let Some(f) = dump.as_mut() {
            use std::io::Write;
            let _ = writeln!(f, "{}", body.replace('\n', " "));
        }
        let t = Instant::now();
        match try_cmd(&mut c, &["EVAL", &body, "0"]) {
            Ok(_) => {}
            Err(e) if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() => {
                panic!(
                    "seed {seed}, script {runs}: no reply ({e}); the script:\n{body}\nthe server's log:\n{}",
                    server_log()
                )
            }
            Err(e) if e.code().is_some() => errors += 1,
            // The client refused the reply (the redis crate stops at 100 nesting
            // levels; Redis's own reply is as deep): the server is fine, the client's
            // stream is not, so a new connection goes on.
            Err(_) => {
                errors += 1;
                c = connect(&addr);
                c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "seed {seed}: a script took {:?}:\n{body}",
            t.elapsed()
        );
        runs += 1;
    }
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "seed {seed}: the server exited"
    );
    assert_eq!(
        try_cmd(&mut c, &["PING"]).unwrap(),
        Value::SimpleString("PONG".into())
    );
    // A fresh connection sees a clean sandbox after all of it.
    let mut fresh = connect(&addr);
    assert_eq!(
        try_cmd(
            &mut fresh,
            &["EVAL", "return string.upper('ok') .. type(redis.call)", "0"]
        )
        .unwrap(),
        Value::BulkString(b"OKfunction".to_vec())
    );
    eprintln!("fuzz_kvs_scripts: {runs} scripts, {errors} errors, no crash");
    assert!(runs > 100, "only {runs} scripts ran");
}

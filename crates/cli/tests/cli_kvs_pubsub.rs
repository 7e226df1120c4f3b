//! Pub/sub through the real binary, with subscribers and publishers on different
//! event loops: channel, pattern and shard-channel messages in publication order,
//! PUBLISH's receiver count, PUBSUB's introspection, the RESP2 subscribed context
//! (only (un)subscribe, PING, QUIT and RESET), RESP3 push frames beside ordinary
//! replies, subscriptions dropped when a client unsubscribes, RESETs or leaves, a
//! subscriber that does not read closed at the `pubsub` output limit, keyspace
//! notifications, and CLIENT LIST/INFO/KILL across the event loops.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use common::{cmd, connect, kvs_serve};
use redis::{Connection, Value};

/// A raw connection that reads RESP frames as text lines.
struct Raw(BufReader<TcpStream>);

impl Raw {
    fn new(addr: &str) -> Raw {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        Raw(BufReader::new(s))
    }

    fn send(&mut self, args: &[&str]) {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.0.get_mut().write_all(out.as_bytes()).unwrap();
    }

    /// One frame, flattened to its lines' contents: `>3 message ch hello`.
    fn frame(&mut self) -> String {
        let mut parts = Vec::new();
        let mut left = 1;
        while left > 0 {
            left -= 1;
            let mut line = String::new();
            self.0.read_line(&mut line).unwrap();
            let line = line.trim_end().to_string();
            let (tag, rest) = line.split_at(1);
            match tag {
                "*" | ">" | "%" => {
                    let n: i64 = rest.parse().unwrap();
                    if n > 0 {
                        left += if tag == "%" { 2 * n } else { n } as usize;
                    }
                    parts.push(line.clone());
                }
                "$" => {
                    let n: i64 = rest.parse().unwrap();
                    if n >= 0 {
                        let mut buf = vec![0u8; n as usize + 2];
                        self.0.read_exact(&mut buf).unwrap();
                        parts.push(String::from_utf8_lossy(&buf[..n as usize]).into_owned());
                    } else {
                        parts.push("(nil)".into());
                    }
                }
                _ => parts.push(line.clone()),
            }
        }
        parts.join(" ")
    }
}

fn numsub(c: &mut Connection, ch: &str) -> i64 {
    match cmd(c, &["PUBSUB", "NUMSUB", ch]) {
        Value::Array(v) => match v.get(1) {
            Some(Value::Int(n)) => *n,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// Waits until `ch` has `n` subscribers.
fn wait_subs(c: &mut Connection, ch: &str, n: i64) {
    let start = Instant::now();
    while numsub(c, ch) != n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never {n} on {ch}"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn messages_reach_subscribers_on_every_loop_in_order() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&addr);
    let mut a = Raw::new(&addr);
    let mut b = Raw::new(&addr);
    a.send(&["SUBSCRIBE", "news", "sport"]);
    assert_eq!(a.frame(), "*3 subscribe news :1");
    assert_eq!(a.frame(), "*3 subscribe sport :2");
    b.send(&["PSUBSCRIBE", "n*"]);
    assert_eq!(b.frame(), "*3 psubscribe n* :1");
    b.send(&["SSUBSCRIBE", "shard"]);
    assert_eq!(b.frame(), "*3 ssubscribe shard :1");

    assert_eq!(cmd(&mut p, &["PUBLISH", "news", "hello"]), Value::Int(2));
    assert_eq!(a.frame(), "*3 message news hello");
    assert_eq!(b.frame(), "*4 pmessage n* news hello");
    assert_eq!(cmd(&mut p, &["SPUBLISH", "shard", "s1"]), Value::Int(1));
    assert_eq!(b.frame(), "*3 smessage shard s1");
    assert_eq!(
        cmd(&mut p, &["PUBLISH", "nobody", "x"]),
        Value::Int(1),
        "n* matches"
    );
    assert_eq!(b.frame(), "*4 pmessage n* nobody x");

    // Many messages arrive in publication order.
    for i in 0..500 {
        cmd(&mut p, &["PUBLISH", "sport", &i.to_string()]);
    }
    for i in 0..500 {
        assert_eq!(a.frame(), format!("*3 message sport {i}"));
    }

    // Introspection.
    assert_eq!(numsub(&mut p, "news"), 1);
    assert_eq!(cmd(&mut p, &["PUBSUB", "NUMPAT"]), Value::Int(1));
    let chans = cmd(&mut p, &["PUBSUB", "CHANNELS", "*"]);
    assert_eq!(
        chans,
        Value::Array(vec![
            Value::BulkString(b"news".to_vec()),
            Value::BulkString(b"sport".to_vec())
        ])
    );

    // The RESP2 subscribed context: only the pub/sub commands, PING, QUIT, RESET.
    a.send(&["GET", "k"]);
    let e = a.frame();
    assert!(e.starts_with("-ERR Can't execute 'get'"), "{e}");
    a.send(&["PING"]);
    assert_eq!(a.frame(), "*2 pong ");
    // Unsubscribing from everything, and messages stop.
    a.send(&["UNSUBSCRIBE"]);
    let mut left = vec![a.frame(), a.frame()];
    left.sort();
    assert_eq!(left, ["*3 unsubscribe news :1", "*3 unsubscribe sport :0"]);
    a.send(&["PING"]);
    assert_eq!(a.frame(), "+PONG", "out of the subscribed context");
    assert_eq!(cmd(&mut p, &["PUBLISH", "sport", "x"]), Value::Int(0));

    // RESET drops b's subscriptions; a client that leaves drops its own.
    b.send(&["RESET"]);
    assert_eq!(b.frame(), "+RESET");
    assert_eq!(cmd(&mut p, &["PUBSUB", "NUMPAT"]), Value::Int(0));
    let mut c = Raw::new(&addr);
    c.send(&["SUBSCRIBE", "gone"]);
    c.frame();
    assert_eq!(numsub(&mut p, "gone"), 1);
    drop(c);
    wait_subs(&mut p, "gone", 0);
}

#[test]
fn resp3_clients_get_push_frames_and_may_run_anything() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&addr);
    let mut r = Raw::new(&addr);
    r.send(&["HELLO", "3"]);
    assert!(r.frame().starts_with("%7"));
    r.send(&["SUBSCRIBE", "ch"]);
    assert_eq!(r.frame(), ">3 subscribe ch :1");
    r.send(&["SET", "k", "v"]);
    assert_eq!(r.frame(), "+OK");
    assert_eq!(cmd(&mut p, &["PUBLISH", "ch", "m"]), Value::Int(1));
    assert_eq!(r.frame(), ">3 message ch m");
    r.send(&["GET", "k"]);
    assert_eq!(r.frame(), "v");
    r.send(&["PING"]);
    assert_eq!(r.frame(), "+PONG");
}

#[test]
fn a_subscriber_that_does_not_read_is_closed_at_the_pubsub_limit() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&addr);
    cmd(
        &mut p,
        &[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "pubsub 256kb 0 0",
        ],
    );
    let mut slow = Raw::new(&addr);
    slow.0.get_ref().set_read_timeout(None).unwrap();
    slow.send(&["SUBSCRIBE", "flood"]);
    assert_eq!(slow.frame(), "*3 subscribe flood :1");
    let payload = "x".repeat(4096);
    let start = Instant::now();
    // It never reads: the kernel buffers fill, then its pending replies pass 256 KiB.
    while numsub(&mut p, "flood") == 1 {
        assert!(start.elapsed() < Duration::from_secs(30), "never closed");
        for _ in 0..64 {
            cmd(&mut p, &["PUBLISH", "flood", &payload]);
        }
    }
    let info: String = redis::cmd("INFO").arg("stats").query(&mut p).unwrap();
    assert!(
        info.contains("client_output_buffer_limit_disconnections:1"),
        "{info}"
    );
    assert_eq!(cmd(&mut p, &["PING"]), Value::SimpleString("PONG".into()));
}

#[test]
fn keyspace_notifications_follow_redis_event_names() {
    // The events and their order as redis-server 7 sends them for the same commands.
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&addr);
    cmd(&mut p, &["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    assert_eq!(
        cmd(&mut p, &["CONFIG", "GET", "notify-keyspace-events"]),
        Value::Array(vec![
            Value::BulkString(b"notify-keyspace-events".to_vec()),
            Value::BulkString(b"AKE".to_vec())
        ])
    );
    let mut s = Raw::new(&addr);
    // Pub/sub frames go out whatever CLIENT REPLY says (RESP2 here).
    s.send(&["CLIENT", "REPLY", "OFF"]);
    s.send(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    assert_eq!(s.frame(), "*3 psubscribe __keyevent@0__:* :1");
    for c in [
        &["SET", "a", "1"][..],
        &["INCR", "a"],
        &["DEL", "nope"], // changes nothing: no event
        &["RPUSH", "l", "x"],
        &["LMOVE", "l", "m", "LEFT", "RIGHT"],
        &["SET", "t", "v", "EX", "100"],
        &["RENAME", "t", "u"],
        &["HSET", "h", "f", "v"],
        &["ZADD", "z", "1", "m"],
        &["ZPOPMIN", "z"],
    ] {
        cmd(&mut p, c);
    }
    let want = [
        "set a",
        "incrby a",
        "rpush l",
        "rpush m",
        "lpop l",
        "del l",
        "set t",
        "expire t",
        "rename_from t",
        "rename_to u",
        "hset h",
        "zadd z",
        "zpopmin z",
        "del z",
    ];
    for w in want {
        let (ev, key) = w.split_once(' ').unwrap();
        assert_eq!(
            s.frame(),
            format!("*4 pmessage __keyevent@0__:* __keyevent@0__:{ev} {key}"),
            "{w}"
        );
    }
    // Only the classes asked for: lists alone, keyspace channel.
    cmd(&mut p, &["CONFIG", "SET", "notify-keyspace-events", "Kl"]);
    let mut k = Raw::new(&addr);
    k.send(&["PSUBSCRIBE", "__keyspace@0__:*"]);
    k.frame();
    cmd(&mut p, &["SET", "s", "1"]);
    cmd(&mut p, &["LPUSH", "l2", "v"]);
    assert_eq!(
        k.frame(),
        "*4 pmessage __keyspace@0__:* __keyspace@0__:l2 lpush"
    );
    let e = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("Kq")
        .query::<Value>(&mut p)
        .unwrap_err();
    assert!(
        e.to_string().contains("Invalid event class character"),
        "{e}"
    );
}

#[test]
fn expired_new_evicted_and_keymiss_events_are_sent() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&addr);
    cmd(&mut p, &["CONFIG", "SET", "notify-keyspace-events", "Exne"]);
    let mut s = Raw::new(&addr);
    s.send(&["PSUBSCRIBE", "__keyevent@*__:*"]);
    assert_eq!(s.frame(), "*3 psubscribe __keyevent@*__:* :1");
    let event = |db: usize, ev: &str, key: &str| {
        format!("*4 pmessage __keyevent@*__:* __keyevent@{db}__:{ev} {key}")
    };
    // A new key, not one written again; in another database too.
    cmd(&mut p, &["SET", "a", "1"]);
    cmd(&mut p, &["SET", "a", "2"]);
    cmd(&mut p, &["SELECT", "3"]);
    cmd(&mut p, &["HSET", "h", "f", "v"]);
    assert_eq!(s.frame(), event(0, "new", "a"));
    assert_eq!(s.frame(), event(3, "new", "h"));
    // Expired when read after its deadline...
    cmd(&mut p, &["PSETEX", "gone", "50", "v"]);
    assert_eq!(s.frame(), event(3, "new", "gone"));
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(cmd(&mut p, &["EXISTS", "gone"]), Value::Int(0));
    assert_eq!(s.frame(), event(3, "expired", "gone"));
    // ...and by the background sweep when nobody reads it.
    cmd(&mut p, &["SELECT", "0"]);
    cmd(&mut p, &["PSETEX", "swept", "50", "v"]);
    assert_eq!(s.frame(), event(0, "new", "swept"));
    assert_eq!(s.frame(), event(0, "expired", "swept"));
    let info: String = redis::cmd("INFO").arg("stats").query(&mut p).unwrap();
    assert!(info.contains("expired_keys:2\r\n"), "{info}");
    // A lower maxmemory evicts at once under allkeys-lru.
    cmd(
        &mut p,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
    );
    cmd(&mut p, &["CONFIG", "SET", "maxmemory", "1"]);
    let mut evicted = vec![s.frame(), s.frame()];
    evicted.sort();
    assert_eq!(
        evicted,
        [event(0, "evicted", "a"), event(3, "evicted", "h")]
    );
    cmd(&mut p, &["CONFIG", "SET", "maxmemory", "0"]);
    // Reads of keys that are not there send `keymiss` (class m); writes do not.
    cmd(&mut p, &["CONFIG", "SET", "notify-keyspace-events", "Em"]);
    cmd(&mut p, &["SET", "here", "1"]);
    cmd(&mut p, &["MGET", "here", "nothere"]);
    assert_eq!(s.frame(), event(0, "keymiss", "nothere"));
    cmd(&mut p, &["DEL", "nothere2"]);
    cmd(&mut p, &["HGET", "nohash", "f"]);
    assert_eq!(s.frame(), event(0, "keymiss", "nohash"));
}

/// A bulk or verbatim reply as text.
fn text_of(v: Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        Value::VerbatimString { text, .. } => text,
        v => panic!("{v:?}"),
    }
}

#[test]
fn client_list_and_kill_see_every_loop() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut a = connect(&addr);
    cmd(&mut a, &["CLIENT", "SETNAME", "alpha"]);
    let mut sub = Raw::new(&addr);
    sub.send(&["SUBSCRIBE", "c1", "c2"]);
    sub.frame();
    sub.frame();
    let mut b = connect(&addr);
    let text = text_of(cmd(&mut b, &["CLIENT", "LIST"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("name=alpha") && l.contains("cmd=client")),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("sub=2") && l.contains("flags=P")),
        "{text}"
    );
    let info = text_of(cmd(&mut a, &["CLIENT", "INFO"]));
    assert!(
        info.contains("name=alpha") && info.lines().count() == 1,
        "{info}"
    );
    // Kill the subscriber by type (on whichever loop it is): it is closed.
    assert_eq!(
        cmd(&mut b, &["CLIENT", "KILL", "TYPE", "pubsub"]),
        Value::Int(1)
    );
    wait_subs(&mut b, "c1", 0);
    // By id; the old form by address; a client does not kill itself unless asked.
    let Value::Int(a_id) = cmd(&mut a, &["CLIENT", "ID"]) else {
        panic!()
    };
    assert_eq!(
        cmd(&mut b, &["CLIENT", "KILL", "ID", &a_id.to_string()]),
        Value::Int(1)
    );
    assert!(
        redis::cmd("PING").query::<Value>(&mut a).is_err(),
        "a was closed"
    );
    let Value::Int(b_id) = cmd(&mut b, &["CLIENT", "ID"]) else {
        panic!()
    };
    assert_eq!(
        cmd(&mut b, &["CLIENT", "KILL", "ID", &b_id.to_string()]),
        Value::Int(0)
    );
    let e = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("10.0.0.1:1")
        .query::<Value>(&mut b)
        .unwrap_err();
    assert!(e.to_string().contains("No such client"), "{e}");
}

/// The id a raw connection's server gives it (CLIENT ID).
fn raw_id(r: &mut Raw) -> String {
    r.send(&["CLIENT", "ID"]);
    r.frame().trim_start_matches(':').to_string()
}

/// Client-side caching (CLIENT TRACKING) across loops: default mode on a RESP3
/// connection, OPTIN and OPTOUT with CLIENT CACHING, BCAST with prefixes and NOLOOP
/// redirected to a RESP2 subscriber, a redirect to a RESP3 client, FLUSHALL's null
/// invalidation, a redirect gone, and Redis's errors.
#[test]
fn client_tracking_sends_invalidations() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut w = connect(&addr);
    let mut r = Raw::new(&addr);
    r.send(&["HELLO", "3"]);
    assert!(r.frame().starts_with("%7"));
    r.send(&["CLIENT", "TRACKING", "on"]);
    assert_eq!(r.frame(), "+OK");
    cmd(&mut w, &["SET", "a", "1"]);
    r.send(&["GET", "a"]);
    assert_eq!(r.frame(), "1");
    cmd(&mut w, &["SET", "a", "2"]);
    assert_eq!(r.frame(), ">2 invalidate *1 a");
    // Sent once: the key is forgotten until read again.
    cmd(&mut w, &["SET", "a", "3"]);
    r.send(&["PING"]);
    assert_eq!(r.frame(), "+PONG");

    // OPTIN: only after CLIENT CACHING YES.
    r.send(&["CLIENT", "TRACKING", "off"]);
    assert_eq!(r.frame(), "+OK");
    r.send(&["CLIENT", "TRACKING", "on", "OPTIN"]);
    assert_eq!(r.frame(), "+OK");
    r.send(&["GET", "a"]);
    assert_eq!(r.frame(), "3");
    cmd(&mut w, &["SET", "a", "4"]);
    r.send(&["PING"]);
    assert_eq!(r.frame(), "+PONG");
    r.send(&["CLIENT", "CACHING", "yes"]);
    assert_eq!(r.frame(), "+OK");
    r.send(&["GET", "a"]);
    assert_eq!(r.frame(), "4");
    cmd(&mut w, &["SET", "a", "5"]);
    assert_eq!(r.frame(), ">2 invalidate *1 a");
    r.send(&["CLIENT", "CACHING", "no"]);
    assert!(r
        .frame()
        .starts_with("-ERR CLIENT CACHING NO is only valid"));

    // OPTOUT: unless CLIENT CACHING NO.
    r.send(&["CLIENT", "TRACKING", "off"]);
    assert_eq!(r.frame(), "+OK");
    r.send(&["CLIENT", "TRACKING", "on", "OPTOUT"]);
    assert_eq!(r.frame(), "+OK");
    r.send(&["CLIENT", "CACHING", "no"]);
    assert_eq!(r.frame(), "+OK");
    r.send(&["GET", "a"]);
    assert_eq!(r.frame(), "5");
    cmd(&mut w, &["SET", "a", "6"]);
    r.send(&["PING"]);
    assert_eq!(r.frame(), "+PONG");
    r.send(&["GET", "a"]);
    assert_eq!(r.frame(), "6");
    cmd(&mut w, &["SET", "a", "7"]);
    assert_eq!(r.frame(), ">2 invalidate *1 a");
    r.send(&["CLIENT", "TRACKING", "off"]);
    assert_eq!(r.frame(), "+OK");

    // Errors, as Redis words them.
    for (args, err) in [
        (
            &["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"][..],
            "-ERR You can't specify both OPTIN mode and OPTOUT mode",
        ),
        (
            &["CLIENT", "TRACKING", "on", "PREFIX", "x"][..],
            "-ERR PREFIX option requires BCAST mode to be enabled",
        ),
        (
            &["CLIENT", "TRACKING", "on", "REDIRECT", "999999"][..],
            "-ERR The client ID you want redirect to does not exist",
        ),
        (
            &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"][..],
            "-ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap.",
        ),
    ] {
        r.send(args);
        assert_eq!(r.frame(), err);
    }

    // BCAST with a prefix and NOLOOP, redirected to a RESP2 subscriber.
    let mut sub = Raw::new(&addr);
    let sub_id = raw_id(&mut sub);
    sub.send(&["SUBSCRIBE", "__redis__:invalidate"]);
    assert_eq!(sub.frame(), "*3 subscribe __redis__:invalidate :1");
    let mut t = Raw::new(&addr);
    let on = [
        "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "NOLOOP",
    ];
    t.send(&[&on[..], &["REDIRECT", sub_id.as_str()][..]].concat());
    assert_eq!(t.frame(), "+OK");
    cmd(&mut w, &["MSET", "user:1", "x", "other", "y"]);
    assert_eq!(sub.frame(), "*3 message __redis__:invalidate *1 user:1");
    t.send(&["SET", "user:2", "z"]);
    assert_eq!(t.frame(), "+OK");
    cmd(&mut w, &["SET", "user:3", "z"]);
    assert_eq!(sub.frame(), "*3 message __redis__:invalidate *1 user:3");
    t.send(&["CLIENT", "TRACKINGINFO"]);
    let info = format!("*6 flags *3 on bcast noloop redirect :{sub_id} prefixes *1 user:");
    assert_eq!(t.frame(), info);

    // A RESP2 client redirected to a RESP3 one; FLUSHALL tells every tracking client.
    let r_id = raw_id(&mut r);
    let mut t2 = Raw::new(&addr);
    t2.send(&["CLIENT", "TRACKING", "on", "REDIRECT", &r_id]);
    assert_eq!(t2.frame(), "+OK");
    t2.send(&["GET", "b"]);
    assert_eq!(t2.frame(), "(nil)");
    cmd(&mut w, &["SET", "b", "1"]);
    assert_eq!(r.frame(), ">2 invalidate *1 b");
    t2.send(&["CLIENT", "GETREDIR"]);
    assert_eq!(t2.frame(), format!(":{r_id}"));
    cmd(&mut w, &["FLUSHALL"]);
    assert_eq!(r.frame(), ">2 invalidate _");
    assert_eq!(sub.frame(), "*3 message __redis__:invalidate *-1");

    // The client redirected to is gone: a RESP3 tracking client is told.
    let mut gone = Raw::new(&addr);
    let gone_id = raw_id(&mut gone);
    let mut t3 = Raw::new(&addr);
    t3.send(&["HELLO", "3"]);
    assert!(t3.frame().starts_with("%7"));
    t3.send(&["CLIENT", "TRACKING", "on", "REDIRECT", &gone_id]);
    assert_eq!(t3.frame(), "+OK");
    t3.send(&["GET", "c"]);
    assert_eq!(t3.frame(), "_");
    drop(gone);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let list = text_of(cmd(&mut w, &["CLIENT", "LIST"]));
        if !list.contains(&format!("id={gone_id} ")) {
            break;
        }
        assert!(Instant::now() < deadline, "the closed client stays listed");
        thread::sleep(Duration::from_millis(20));
    }
    cmd(&mut w, &["SET", "c", "1"]);
    assert_eq!(t3.frame(), format!(">2 tracking-redir-broken :{gone_id}"));
}

#!/usr/bin/env python3
"""Checks a Redis-protocol server with the redis-py client, in RESP2 and RESP3.

Usage: redis_py_check.py HOST PORT [AUTH_PORT]

HOST:PORT is a server without a password; its keyspace is flushed. AUTH_PORT, when
given, is a server on HOST started with the password "pw" (requirepass). The same
checks pass against a real Redis 7 server (redis-server --save "" --appendonly no),
which is how the script itself was checked.

Needs only the standard library and redis-py. Exits 0 when every check passes; on
the first failure prints what was expected and what came back, and exits 1.
"""

import sys
import time
import traceback

import redis
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, ResponseError
from redis.retry import Retry


def client(host, port, proto, **kw):
    """A client that does not retry (AuthenticationError is a ConnectionError to
    redis-py: it would come back only after backoff and retries) and does not wait
    for ever on a server that does not answer."""
    return redis.Redis(
        host=host,
        port=port,
        protocol=proto,
        retry=Retry(NoBackoff(), 0),
        socket_timeout=10,
        socket_connect_timeout=10,
        **kw,
    )


def check(cond, what):
    """An assertion that `python -O` does not remove."""
    if not cond:
        raise AssertionError(what)


def equal(got, want, what):
    check(got == want, f"{what}: got {got!r}, want {want!r}")


def raises(fn, says, what, kinds=(ResponseError,)):
    """fn() must raise one of `kinds` whose message contains `says`; returns it."""
    try:
        got = fn()
    except kinds as e:
        check(says.lower() in str(e).lower(), f"{what}: error {e!r} lacks {says!r}")
        return e
    raise AssertionError(f"{what}: no error, got {got!r}")


def within(got, lo, hi, what):
    check(lo <= got <= hi, f"{what}: {got!r} not in [{lo}, {hi}]")


def strings(r, proto):
    r.flushall()
    equal(r.ping(), True, "PING")
    equal(r.echo("hello world"), "hello world", "ECHO")

    # SET and its options.
    equal(r.set("k", "v1"), True, "SET")
    equal(r.get("k"), "v1", "GET")
    equal(r.get("missing"), None, "GET of a missing key")
    equal(r.set("k", "v2", nx=True), None, "SET NX on an existing key")
    equal(r.get("k"), "v1", "SET NX left the value")
    equal(r.set("new", "n", nx=True), True, "SET NX on a new key")
    equal(r.set("absent", "x", xx=True), None, "SET XX on a missing key")
    equal(r.exists("absent"), 0, "SET XX did not create")
    equal(r.set("k", "v2", xx=True), True, "SET XX on an existing key")
    equal(r.set("k", "v3", get=True), "v2", "SET GET returns the old value")
    equal(r.set("fresh", "f", get=True), None, "SET GET on a new key")
    equal(r.get("fresh"), "f", "SET GET set it")

    equal(r.set("ex", "v", ex=100), True, "SET EX")
    within(r.ttl("ex"), 99, 100, "TTL after SET EX 100")
    equal(r.set("px", "v", px=100_000), True, "SET PX")
    within(r.pttl("px"), 98_000, 100_000, "PTTL after SET PX 100000")
    now = int(time.time())
    equal(r.set("exat", "v", exat=now + 100), True, "SET EXAT")
    within(r.ttl("exat"), 98, 101, "TTL after SET EXAT now+100")
    now_ms = int(time.time() * 1000)
    equal(r.set("pxat", "v", pxat=now_ms + 100_000), True, "SET PXAT")
    within(r.pttl("pxat"), 97_000, 100_000, "PTTL after SET PXAT now+100s")
    equal(r.set("exat", "v", exat=now - 10), True, "SET EXAT in the past")
    equal(r.exists("exat"), 0, "SET EXAT in the past leaves no key")

    equal(r.set("ex", "w", keepttl=True), True, "SET KEEPTTL")
    within(r.ttl("ex"), 98, 100, "SET KEEPTTL kept the deadline")
    equal(r.get("ex"), "w", "SET KEEPTTL changed the value")
    equal(r.set("ex", "z"), True, "SET without KEEPTTL")
    equal(r.ttl("ex"), -1, "SET without KEEPTTL clears the deadline")
    raises(lambda: r.set("k", "v", ex=0), "invalid expire time", "SET EX 0")
    raises(
        lambda: r.execute_command("SET", "k", "v", "EX", 10, "PX", 10),
        "syntax error",
        "SET EX and PX",
    )
    raises(
        lambda: r.execute_command("SET", "k", "v", "NX", "XX"),
        "syntax error",
        "SET NX and XX",
    )

    # Expiry really happens.
    r.set("short", "v", px=50)
    time.sleep(0.15)
    equal(r.get("short"), None, "a key past its PX deadline")
    equal(r.exists("short"), 0, "EXISTS of an expired key")

    # SETNX, GETDEL, GETEX.
    equal(r.setnx("snx", "1"), True, "SETNX on a new key")
    equal(r.setnx("snx", "2"), False, "SETNX on an existing key")
    equal(r.get("snx"), "1", "SETNX kept the first value")
    equal(r.getdel("snx"), "1", "GETDEL")
    equal(r.getdel("snx"), None, "GETDEL of a removed key")
    equal(r.exists("snx"), 0, "GETDEL removed the key")

    r.set("gx", "val")
    equal(r.getex("gx"), "val", "GETEX without options")
    equal(r.ttl("gx"), -1, "GETEX without options keeps no deadline")
    equal(r.getex("gx", ex=50), "val", "GETEX EX")
    within(r.ttl("gx"), 49, 50, "TTL after GETEX EX 50")
    equal(r.getex("gx", px=60_000), "val", "GETEX PX")
    within(r.pttl("gx"), 58_000, 60_000, "PTTL after GETEX PX 60000")
    equal(r.getex("gx", exat=int(time.time()) + 70), "val", "GETEX EXAT")
    within(r.ttl("gx"), 68, 71, "TTL after GETEX EXAT")
    equal(r.getex("gx", pxat=int(time.time() * 1000) + 80_000), "val", "GETEX PXAT")
    within(r.pttl("gx"), 77_000, 80_000, "PTTL after GETEX PXAT")
    equal(r.getex("gx", persist=True), "val", "GETEX PERSIST")
    equal(r.ttl("gx"), -1, "GETEX PERSIST removed the deadline")
    equal(r.getex("nope", ex=10), None, "GETEX of a missing key")

    # MSET, MGET, DEL, UNLINK, EXISTS, TYPE.
    equal(r.mset({"m1": "a", "m2": "b", "m3": "c"}), True, "MSET")
    equal(r.mget("m1", "nope", "m3", "m2"), ["a", None, "c", "b"], "MGET")
    equal(r.exists("m1", "m2", "nope", "m1"), 3, "EXISTS counts each argument")
    equal(r.type("m1"), "string", "TYPE of a string")
    equal(r.type("nope"), "none", "TYPE of a missing key")
    equal(r.delete("m1", "m2", "nope"), 2, "DEL")
    equal(r.unlink("m3", "nope"), 1, "UNLINK")
    equal(r.exists("m1", "m2", "m3"), 0, "DEL and UNLINK removed the keys")

    # Binary-safe values through a client that does not decode.
    kw = r.connection_pool.connection_kwargs
    raw = client(kw["host"], kw["port"], proto)
    blob = bytes(range(256)) + b"\r\n$3\r\n*1\r\n"
    raw.set(b"bin\x00key", blob)
    equal(raw.get(b"bin\x00key"), blob, "binary value and key round-trip")
    equal(raw.strlen(b"bin\x00key"), len(blob), "STRLEN of a binary value")
    raw.close()

    # Counters.
    equal(r.incr("ctr"), 1, "INCR of a missing key")
    equal(r.incrby("ctr", 10), 11, "INCRBY")
    equal(r.decr("ctr"), 10, "DECR")
    equal(r.decrby("ctr", 5), 5, "DECRBY")
    equal(r.incrby("ctr", -7), -2, "INCRBY negative")
    equal(r.get("ctr"), "-2", "counter stored as a string")
    r.set("word", "abc")
    raises(lambda: r.incr("word"), "not an integer", "INCR of a non-integer")
    raises(lambda: r.incrby("word", 2), "not an integer", "INCRBY of a non-integer")
    raises(lambda: r.decr("word"), "not an integer", "DECR of a non-integer")
    raises(lambda: r.decrby("word", 2), "not an integer", "DECRBY of a non-integer")
    r.set("f", "1.5")
    raises(lambda: r.incr("f"), "not an integer", "INCR of a float")
    r.set("big", str(2**63 - 1))
    raises(lambda: r.incr("big"), "overflow", "INCR past i64::MAX")
    equal(r.get("big"), str(2**63 - 1), "a failed INCR changes nothing")

    # APPEND, STRLEN.
    equal(r.append("ap", "hello"), 5, "APPEND to a missing key")
    equal(r.append("ap", " world"), 11, "APPEND")
    equal(r.get("ap"), "hello world", "APPEND result")
    equal(r.strlen("ap"), 11, "STRLEN")
    equal(r.strlen("nope"), 0, "STRLEN of a missing key")


def expiry(r):
    r.flushall()
    r.set("e", "v")
    equal(r.ttl("e"), -1, "TTL of a key without a deadline")
    equal(r.pttl("e"), -1, "PTTL of a key without a deadline")
    equal(r.ttl("nope"), -2, "TTL of a missing key")
    equal(r.pttl("nope"), -2, "PTTL of a missing key")
    equal(r.expire("e", 100), True, "EXPIRE")
    within(r.ttl("e"), 99, 100, "TTL after EXPIRE 100")
    equal(r.pexpire("e", 50_000), True, "PEXPIRE")
    within(r.pttl("e"), 48_000, 50_000, "PTTL after PEXPIRE 50000")
    within(r.ttl("e"), 48, 50, "TTL after PEXPIRE 50000")
    equal(r.persist("e"), True, "PERSIST of a key with a deadline")
    equal(r.persist("e"), False, "PERSIST of a key without one")
    equal(r.ttl("e"), -1, "TTL after PERSIST")
    equal(r.expire("nope", 100), False, "EXPIRE of a missing key")
    equal(r.pexpire("nope", 100), False, "PEXPIRE of a missing key")
    equal(r.persist("nope"), False, "PERSIST of a missing key")
    raises(lambda: r.expire("e", "soon"), "not an integer", "EXPIRE of a non-integer")
    equal(r.expire("e", -1), True, "EXPIRE with a negative time")
    equal(r.exists("e"), 0, "EXPIRE with a negative time deletes")
    r.set("p", "v")
    equal(r.pexpire("p", 40), True, "PEXPIRE 40")
    time.sleep(0.12)
    equal(r.get("p"), None, "a key past its PEXPIRE deadline")
    equal(r.ttl("p"), -2, "TTL of an expired key")

    # Redis 7's NX | XX | GT | LT options.
    r.set("o", "v")
    equal(r.expire("o", 100, xx=True), False, "EXPIRE XX without a deadline")
    equal(r.ttl("o"), -1, "EXPIRE XX set nothing")
    equal(r.expire("o", 100, gt=True), False, "EXPIRE GT without a deadline")
    equal(r.ttl("o"), -1, "EXPIRE GT set nothing")
    equal(r.expire("o", 100, nx=True), True, "EXPIRE NX without a deadline")
    within(r.ttl("o"), 99, 100, "EXPIRE NX set the deadline")
    equal(r.expire("o", 200, nx=True), False, "EXPIRE NX with a deadline")
    within(r.ttl("o"), 99, 100, "EXPIRE NX kept the deadline")
    equal(r.expire("o", 200, lt=True), False, "EXPIRE LT with a longer time")
    within(r.ttl("o"), 99, 100, "EXPIRE LT kept the deadline")
    equal(r.expire("o", 50, lt=True), True, "EXPIRE LT with a shorter time")
    within(r.ttl("o"), 49, 50, "EXPIRE LT shortened it")
    equal(r.expire("o", 20, gt=True), False, "EXPIRE GT with a shorter time")
    equal(r.expire("o", 300, gt=True), True, "EXPIRE GT with a longer time")
    within(r.ttl("o"), 299, 300, "EXPIRE GT lengthened it")
    equal(r.pexpire("o", 10_000, xx=True), True, "PEXPIRE XX with a deadline")
    within(r.pttl("o"), 9_000, 10_000, "PEXPIRE XX set it")
    r.persist("o")
    equal(r.expire("o", 100, lt=True), True, "EXPIRE LT without a deadline")
    within(r.ttl("o"), 99, 100, "EXPIRE LT without a deadline sets one")
    raises(
        lambda: r.execute_command("EXPIRE", "o", 10, "NX", "XX"),
        "not compatible",
        "EXPIRE NX XX",
    )
    raises(
        lambda: r.execute_command("EXPIRE", "o", 10, "GT", "LT"),
        "not compatible",
        "EXPIRE GT LT",
    )
    raises(
        lambda: r.execute_command("EXPIRE", "o", 10, "SOMETIMES"),
        "unsupported option",
        "EXPIRE with an unknown option",
    )
    within(r.ttl("o"), 98, 100, "refused EXPIREs changed nothing")


def keyspace(r):
    r.flushall()
    equal(r.dbsize(), 0, "DBSIZE after FLUSHALL")
    for i in range(1, 4):
        r.set(f"user:{i}", i)
    r.set("other", "x")
    r.set("usr:9", "y")
    equal(sorted(r.keys("user:*")), ["user:1", "user:2", "user:3"], "KEYS user:*")
    equal(sorted(r.keys("u?er:[12]")), ["user:1", "user:2"], "KEYS with ? and []")
    equal(len(r.keys("*")), 5, "KEYS *")
    equal(r.keys("zzz*"), [], "KEYS with no match")

    want = {f"scan:{i}" for i in range(500)}
    pipe = r.pipeline(transaction=False)
    for k in want:
        pipe.set(k, "v")
    pipe.execute()
    got = list(r.scan_iter(match="scan:*", count=7))
    equal(set(got), want, "SCAN MATCH scan:* COUNT 7 finds every key")
    check(len(got) >= len(want), "SCAN returned fewer keys than there are")
    every = set(r.scan_iter(count=1000))
    equal(len(every), 505, "SCAN without MATCH")
    equal(r.dbsize(), 505, "DBSIZE")
    equal(r.flushall(), True, "FLUSHALL")
    equal(r.dbsize(), 0, "DBSIZE after FLUSHALL")
    equal(list(r.scan_iter()), [], "SCAN of an empty keyspace")


def server(r, port):
    r.flushall()
    # CLIENT.
    cid = r.client_id()
    check(isinstance(cid, int) and cid > 0, f"CLIENT ID: {cid!r}")
    equal(r.client_id(), cid, "CLIENT ID is stable on one connection")
    equal(r.client_getname(), None, "CLIENT GETNAME before SETNAME")
    equal(r.client_setname("checker"), True, "CLIENT SETNAME")
    equal(r.client_getname(), "checker", "CLIENT GETNAME")
    raises(lambda: r.client_setname("has space"), "cannot contain", "CLIENT SETNAME with a space")

    # INFO, section by section.
    r.set("a", "1")
    r.set("b", "2", ex=1000)
    r.set("c", "3")
    r.get("a")
    r.get("nope")
    info = r.info("server")
    check(isinstance(info, dict), f"INFO server is a dict: {info!r}")
    check(str(info.get("redis_version", "")).startswith("7."), f"redis_version: {info!r}")
    equal(info.get("tcp_port"), port, "INFO server tcp_port")
    check(isinstance(info.get("process_id"), int), "INFO server process_id")
    check(isinstance(info.get("uptime_in_seconds"), int), "INFO server uptime_in_seconds")
    equal(info.get("redis_mode"), "standalone", "INFO server redis_mode")
    check("used_memory" not in info, "INFO server has only the server section")
    info = r.info("clients")
    check(info.get("connected_clients", 0) >= 1, f"INFO clients: {info!r}")
    info = r.info("memory")
    for f in ("used_memory", "used_memory_rss", "maxmemory"):
        check(isinstance(info.get(f), int), f"INFO memory {f}: {info!r}")
    check(info["used_memory"] > 0, "INFO memory used_memory > 0")
    check(info["used_memory_rss"] > 0, "INFO memory used_memory_rss > 0")
    equal(info["maxmemory"], 0, "INFO memory maxmemory")
    equal(info.get("maxmemory_policy"), "noeviction", "INFO memory maxmemory_policy")
    info = r.info("persistence")
    equal(info.get("loading"), 0, "INFO persistence loading")
    equal(info.get("aof_enabled"), 0, "INFO persistence aof_enabled")
    info = r.info("stats")
    for f in (
        "total_connections_received",
        "total_commands_processed",
        "expired_keys",
        "evicted_keys",
        "keyspace_hits",
        "keyspace_misses",
    ):
        check(isinstance(info.get(f), int), f"INFO stats {f}: {info!r}")
    check(info["total_commands_processed"] > 5, "INFO stats total_commands_processed")
    check(info["keyspace_hits"] >= 1, "INFO stats keyspace_hits")
    check(info["keyspace_misses"] >= 1, "INFO stats keyspace_misses")
    equal(info["evicted_keys"], 0, "INFO stats evicted_keys")
    info = r.info("keyspace")
    db0 = info.get("db0")
    check(isinstance(db0, dict), f"INFO keyspace db0: {info!r}")
    equal(db0.get("keys"), 3, "INFO keyspace db0 keys")
    equal(db0.get("expires"), 1, "INFO keyspace db0 expires")
    check("avg_ttl" in db0, "INFO keyspace db0 avg_ttl")
    everything = r.info()
    for f in ("redis_version", "connected_clients", "used_memory", "loading", "keyspace_hits", "db0"):
        check(f in everything, f"INFO (default) has {f}")
    r.flushall()
    equal(r.info("keyspace"), {}, "INFO keyspace of an empty keyspace")

    # CONFIG GET / SET maxmemory.
    equal(r.config_get("maxmemory"), {"maxmemory": "0"}, "CONFIG GET maxmemory")
    equal(r.config_set("maxmemory", "100mb"), True, "CONFIG SET maxmemory 100mb")
    equal(r.config_get("maxmemory"), {"maxmemory": str(100 << 20)}, "CONFIG GET after SET")
    equal(r.info("memory")["maxmemory"], 100 << 20, "INFO memory after CONFIG SET")
    raises(lambda: r.config_set("maxmemory", "lots"), "maxmemory", "CONFIG SET maxmemory lots")
    equal(r.config_set("maxmemory", 0), True, "CONFIG SET maxmemory 0")
    equal(r.config_get("maxmemory"), {"maxmemory": "0"}, "CONFIG GET after reset")
    check("maxmemory-policy" in r.config_get("maxmemory*"), "CONFIG GET with a pattern")

    # COMMAND COUNT.
    n = r.command_count()
    check(isinstance(n, int) and n >= 30, f"COMMAND COUNT: {n!r}")

    # SELECT: 0 works; an index past the last database is refused.
    equal(r.execute_command("SELECT", 0), True, "SELECT 0")
    dbs = int(r.config_get("databases").get("databases", "16"))
    if dbs == 1:
        raises(lambda: r.execute_command("SELECT", 1), "out of range", "SELECT 1 with one database")
    else:
        equal(r.execute_command("SELECT", 1), True, "SELECT 1")
        equal(r.execute_command("SELECT", 0), True, "SELECT 0 again")
    raises(lambda: r.execute_command("SELECT", dbs), "out of range", f"SELECT {dbs}")
    raises(lambda: r.execute_command("SELECT", "x"), "not an integer", "SELECT x")
    r.set("after-select", "v")
    equal(r.get("after-select"), "v", "database 0 after the SELECTs")


def pipelines(r):
    r.flushall()
    pipe = r.pipeline(transaction=False)
    for i in range(1000):
        pipe.set(f"p:{i}", f"value-{i}")
    res = pipe.execute()
    equal(len(res), 1000, "pipeline of 1000 SETs: replies")
    check(all(x is True for x in res), "pipeline of 1000 SETs: all OK")
    pipe = r.pipeline(transaction=False)
    for i in range(1000):
        pipe.get(f"p:{i}")
    res = pipe.execute()
    equal(res, [f"value-{i}" for i in range(1000)], "pipeline of 1000 GETs")
    pipe = r.pipeline(transaction=False)
    for i in range(1000):
        pipe.incr("pctr") if i % 2 == 0 else pipe.get("pctr")
    res = pipe.execute()
    equal(res[-2:], [500, "500"], "pipeline of 1000 INCR/GET in order")
    # An error inside a pipeline comes back in its place.
    pipe = r.pipeline(transaction=False)
    pipe.set("w", "abc")
    pipe.incr("w")
    pipe.get("w")
    res = pipe.execute(raise_on_error=False)
    equal(res[0], True, "pipeline with an error: reply 0")
    check(isinstance(res[1], ResponseError), f"pipeline with an error: reply 1 {res[1]!r}")
    equal(res[2], "abc", "pipeline with an error: reply 2")
    equal(r.dbsize(), 1002, "DBSIZE after the pipelines")


def errors(r):
    e = raises(lambda: r.execute_command("NOSUCHCMD", "a", "b"), "unknown command", "unknown command")
    check("NOSUCHCMD" in str(e), f"unknown command names it: {e}")
    raises(lambda: r.execute_command("GET"), "wrong number of arguments", "GET without a key")
    raises(lambda: r.execute_command("GET", "a", "b"), "wrong number of arguments", "GET with two keys")
    raises(lambda: r.execute_command("SET", "k"), "wrong number of arguments", "SET without a value")
    raises(lambda: r.execute_command("MSET", "a", "1", "b"), "wrong number of arguments", "MSET odd")
    raises(lambda: r.execute_command("DEL"), "wrong number of arguments", "DEL without keys")
    raises(lambda: r.execute_command("SET", "k", "v", "BOGUS"), "syntax error", "SET BOGUS")
    # The connection is still usable after the errors.
    equal(r.ping(), True, "PING after errors")


def auth(host, port, proto):
    # No password: the first command is refused with NOAUTH.
    bare = client(host, port, proto, decode_responses=True)
    try:
        e = raises(
            lambda: bare.set("k", "v"),
            "authenticat",
            f"RESP{proto} command without AUTH",
            kinds=(AuthenticationError, ResponseError),
        )
        check(
            isinstance(e, AuthenticationError) or "NOAUTH" in str(e),
            f"not a NOAUTH error: {e!r}",
        )
    finally:
        bare.close()
    wrong = client(host, port, proto, password="nope")
    try:
        raises(
            lambda: wrong.ping(),
            "",
            f"RESP{proto} wrong password",
            kinds=(AuthenticationError, ResponseError),
        )
    finally:
        wrong.close()
    good = client(host, port, proto, password="pw", decode_responses=True)
    try:
        equal(good.ping(), True, f"RESP{proto} PING with the password")
        equal(good.set("authed", "yes"), True, f"RESP{proto} SET with the password")
        equal(good.get("authed"), "yes", f"RESP{proto} GET with the password")
        equal(good.execute_command("AUTH", "pw"), True, "AUTH again with the right password")
        raises(
            lambda: good.execute_command("AUTH", "bad"),
            "",
            "AUTH with a wrong password",
            kinds=(AuthenticationError, ResponseError),
        )
    finally:
        good.close()


def transactions(r, host, port, proto):
    """redis-py's default pipeline is a MULTI/EXEC transaction; WATCH retries."""
    r.flushall()
    r.set("acct:a", 100)
    r.set("acct:b", 0)
    pipe = r.pipeline()  # transaction=True is the default
    pipe.decrby("acct:a", 30)
    pipe.incrby("acct:b", 30)
    pipe.get("acct:a")
    equal(pipe.execute(), [70, 30, "70"], "transactional pipeline: replies in order")
    # A command that fails while queued discards the whole transaction.
    pipe = r.pipeline()
    pipe.incrby("acct:a", 1)
    pipe.execute_command("SET", "acct:a")  # wrong number of arguments
    raises(pipe.execute, "", "transaction with a queuing error")
    equal(r.get("acct:a"), "70", "nothing of a discarded transaction was applied")
    # A command that fails when run does not stop the others (Redis's semantics).
    r.set("text", "abc")
    pipe = r.pipeline()
    pipe.incr("text")
    pipe.set("after", "yes")
    res = pipe.execute(raise_on_error=False)
    check(isinstance(res[0], ResponseError), f"run-time error in a transaction: {res[0]!r}")
    equal(res[1], True, "the command after a run-time error ran")
    # WATCH: another client's write between WATCH and EXEC aborts, and
    # Redis.transaction() retries until it goes through.
    other = client(host, port, proto, decode_responses=True)
    try:
        attempts = []

        def move(p):
            balance = int(p.get("acct:a"))
            if not attempts:
                other.incrby("acct:a", 5)  # a write by someone else: EXEC must abort
            attempts.append(balance)
            p.multi()
            p.set("acct:a", balance - 10)

        r.transaction(move, "acct:a")
        equal(attempts, [70, 75], "WATCH aborted the first try and the retry saw the new value")
        equal(r.get("acct:a"), "65", "the retried transaction applied once")
    finally:
        other.close()
    pipe = r.pipeline()
    pipe.watch("acct:b")
    other = client(host, port, proto, decode_responses=True)
    try:
        other.set("acct:b", 1)
    finally:
        other.close()
    pipe.multi()
    pipe.set("acct:b", 2)
    raises(pipe.execute, "", "EXEC after a watched key changed", kinds=(redis.WatchError,))
    equal(r.get("acct:b"), "1", "the aborted transaction changed nothing")


def pubsub(r, host, port, proto):
    """PubSub objects: subscribe and pattern confirmations, messages, listen(),
    unsubscribe; the asyncio client the same."""
    p = r.pubsub()
    p.subscribe("py:ch")
    p.psubscribe("py:*")
    kinds = []
    deadline = time.time() + 10
    while len(kinds) < 2 and time.time() < deadline:
        m = p.get_message(timeout=1)
        if m:
            kinds.append(m["type"])
    equal(sorted(kinds), ["psubscribe", "subscribe"], "subscribe confirmations")
    equal(r.publish("py:ch", "hello"), 2, "PUBLISH counts a channel and a pattern receiver")
    got = []
    for m in p.listen():
        if m["type"] in ("message", "pmessage"):
            got.append((m["type"], m["channel"], m["data"], m.get("pattern")))
        if len(got) == 2:
            break
    equal(
        sorted(got, key=lambda g: g[0]),
        [("message", "py:ch", "hello", None), ("pmessage", "py:ch", "hello", "py:*")],
        "message and pmessage",
    )
    equal(r.pubsub_numsub("py:ch"), [("py:ch", 1)], "PUBSUB NUMSUB")
    equal(r.pubsub_numpat(), 1, "PUBSUB NUMPAT")
    p.unsubscribe()
    p.punsubscribe()
    deadline = time.time() + 10
    while r.pubsub_numpat() != 0 and time.time() < deadline:
        p.get_message(timeout=0.1)
    equal(r.pubsub_numpat(), 0, "PUNSUBSCRIBE")
    p.close()

    import asyncio
    import redis.asyncio as aredis

    async def run():
        a = aredis.Redis(host=host, port=port, protocol=proto, decode_responses=True)
        try:
            ps = a.pubsub()
            await ps.subscribe("py:async")
            m = await ps.get_message(timeout=5)
            equal(m and m["type"], "subscribe", "async subscribe confirmation")
            equal(await a.publish("py:async", "x"), 1, "async PUBLISH")
            m = None
            deadline = time.time() + 10
            while m is None and time.time() < deadline:
                m = await ps.get_message(ignore_subscribe_messages=True, timeout=1)
            equal(m and m["data"], "x", "async message")
            await ps.aclose() if hasattr(ps, "aclose") else await ps.close()
        finally:
            await a.aclose() if hasattr(a, "aclose") else await a.close()

    asyncio.run(run())


def blocking(r, host, port, proto):
    """Blocking pops: a timeout gives None; a push from another client serves them."""
    import threading

    r.delete("py:q", "py:z", "py:src", "py:dst")
    t = time.time()
    equal(r.blpop(["py:q"], timeout=0.1), None, "BLPOP timeout")
    check(time.time() - t >= 0.1, "BLPOP waited its timeout")

    def push_later(cmd, *args):
        def go():
            time.sleep(0.2)
            c = client(host, port, proto, decode_responses=True)
            try:
                c.execute_command(cmd, *args)
            finally:
                c.close()

        th = threading.Thread(target=go)
        th.start()
        return th

    th = push_later("RPUSH", "py:q", "v")
    equal(tuple(r.blpop(["py:none", "py:q"], timeout=10)), ("py:q", "v"), "BLPOP served")
    th.join()
    th = push_later("ZADD", "py:z", 5, "m")
    got = r.bzpopmin("py:z", timeout=10)
    equal((got[0], got[1], float(got[2])), ("py:z", "m", 5.0), "BZPOPMIN served")
    th.join()
    th = push_later("LPUSH", "py:src", "e")
    equal(r.blmove("py:src", "py:dst", 10, "LEFT", "RIGHT"), "e", "BLMOVE served")
    th.join()
    equal(r.lrange("py:dst", 0, -1), ["e"], "BLMOVE pushed")
    equal(r.lmpop(2, "py:none", "py:dst", direction="LEFT"), ["py:dst", ["e"]], "LMPOP")
def scripting(r):
    """EVAL/EVALSHA through redis-py's own users of them: Script objects and Lock."""
    r.delete("lk", "sc")
    incr_by = r.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    equal(incr_by(keys=["sc"], args=[5]), 5, "register_script first call (EVALSHA, NOSCRIPT, EVAL)")
    equal(incr_by(keys=["sc"], args=[2]), 7, "register_script second call (EVALSHA)")
    r.script_flush()
    equal(incr_by(keys=["sc"], args=[1]), 8, "register_script after SCRIPT FLUSH")
    equal(r.script_exists(incr_by.sha), [True], "SCRIPT EXISTS")
    lock = r.lock("lk", timeout=10)
    check(lock.acquire(blocking=False), "Lock.acquire")
    check(not r.lock("lk").acquire(blocking=False), "a held lock is not acquired twice")
    check(lock.owned(), "Lock.owned")
    check(lock.extend(20), "Lock.extend")
    within(r.pttl("lk"), 25_000, 30_000, "Lock.extend adds to the TTL")
    check(lock.reacquire(), "Lock.reacquire")
    within(r.pttl("lk"), 5_000, 10_000, "Lock.reacquire resets the TTL")
    lock.release()
    equal(r.exists("lk"), 0, "Lock.release deletes the key")
    raises(lock.release, "", "releasing a released lock", kinds=(Exception,))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    host, port = sys.argv[1], int(sys.argv[2])
    auth_port = int(sys.argv[3]) if len(sys.argv) == 4 else None
    print(f"redis-py {redis.__version__} against {host}:{port}")
    for proto in (2, 3):
        r = client(host, port, proto, decode_responses=True)
        try:
            for name, step in (
                ("strings", lambda: strings(r, proto)),
                ("expiry", lambda: expiry(r)),
                ("keyspace", lambda: keyspace(r)),
                ("server", lambda: server(r, port)),
                ("pipelines", lambda: pipelines(r)),
                ("errors", lambda: errors(r)),
                ("transactions", lambda: transactions(r, host, port, proto)),
                ("pubsub", lambda: pubsub(r, host, port, proto)),
                ("blocking", lambda: blocking(r, host, port, proto)),
                ("scripting", lambda: scripting(r)),
            ):
                step()
                print(f"RESP{proto} {name}: ok")
            if auth_port is not None:
                auth(host, auth_port, proto)
                print(f"RESP{proto} auth: ok")
        finally:
            r.close()
    if auth_port is None:
        print("auth: not checked (no AUTH_PORT)")
    print("all checks passed")


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)

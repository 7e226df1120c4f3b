#!/usr/bin/env python3
"""cluster-bench.py -- Redis Cluster measurements for ONE server kind.

Runs the same measurements against any server that speaks the Redis Cluster
protocol (CLUSTER ADDSLOTSRANGE / SET-CONFIG-EPOCH / MEET / INFO / NODES /
SLOTS, MIGRATE, CLUSTER SETSLOT, cluster-bus failover) and can be started from
a command template:

  1. throughput: hand-built clusters of 1, 2 and 3 primaries (no replicas);
     `redis-benchmark --cluster -t set,get -n N -c 50 -r 100000 -q` and the
     same with `-P 16` (for 1 primary without --cluster, which redis-benchmark
     7.0 refuses for a single node; that node owns all slots anyway); plus server CPU cost (utime+stime of every server
     process, from /proc, before/after each run) per request, in total and per
     node; with --kvs-bench WIRESPEED, also `WIRESPEED kvs bench --cluster
     --get-ratio 0` (SET) and `--get-ratio 1` (GET) with the same requests,
     connections, key space and value size (3 bytes, redis-benchmark's), which
     reads each node's CPU time around the run itself (--server-pid);
  2. resharding: 3 primaries, deterministic fill of --reshard-keys keys
     (`key:<i>`, redis-py RedisCluster pipelines), then timed
     `redis-cli --cluster reshard ... --cluster-slots 4096 --cluster-yes`;
     keys moved = DBSIZE(source) before - after -> keys/s, slots/s; verified
     with `redis-cli --cluster check` and unchanged DBSIZE total;
  3. failover: 3 primaries + 3 replicas (`redis-cli --cluster create
     --cluster-replicas 1`), kill -9 the primary serving `foo`, poll every
     --retry-ms with `SET foo x` (following MOVED) through the surviving nodes
     until one accepts it -> seconds from kill to first accepted write; then
     restart the killed node (same port, same dir/nodes.conf) and time until
     it reports role:slave with master_link_status:up (informational).

QUANTISATION: in --cluster mode redis-benchmark 7.0 runs one thread per
master, and a threaded run only notices it is done on its 250 ms
showThroughput timer tick, so every --cluster result is requests /
(k * ~0.25 s) -- e.g. 20000 requests gave exactly 39.7k/s (0.504 s) or 26.4k/s
(0.758 s).  Hence the large default -n: each test should last >= ~2.5 s so the
tick costs <= ~10% (biased low).  The 1-primary shape (plain mode, one
thread) is not quantised.

Only deps: Python 3, redis-py, redis-cli, redis-benchmark.

Template placeholders: {port}, {dir} (a private empty working directory for
that instance; the process also runs with cwd={dir}), {timeout}
(--node-timeout ms).  Ports are chosen so that port+10000 (cluster bus) is
free too and port < 55000.  Examples:
  --server 'redis-server --port {port} --cluster-enabled yes --cluster-config-file {dir}/nodes.conf --cluster-node-timeout {timeout} --save "" --appendonly no'
  --server 'target/release/wirespeed kvs serve --port {port} --cluster-enabled --cluster-config-file {dir}/nodes.conf --cluster-node-timeout {timeout}'
"""
import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.cluster import RedisCluster, ClusterNode

CHILDREN = []  # Popen objects we started (each in its own process group)
USED_PORTS = set()
CLK_TCK = os.sysconf("SC_CLK_TCK")
NSLOTS = 16384


class PhaseTimeout(Exception):
    pass


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _bindable(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_cluster_port():
    """a port p < 55000 with p and p+10000 (cluster bus) both free."""
    for _ in range(2000):
        p = random.randint(20000, 54999)
        if p in USED_PORTS or p + 10000 in USED_PORTS:
            continue
        if _bindable(p) and _bindable(p + 10000):
            USED_PORTS.update((p, p + 10000))
            return p
    raise RuntimeError("no free port pair found")


def spawn(argv, cwd, logname, nice):
    if nice:
        argv = ["nice", "-n", str(nice)] + argv
    out = open(os.path.join(cwd, logname), "ab")
    p = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    out.close()
    CHILDREN.append(p)
    return p


def kill_proc(p, sig=signal.SIGKILL):
    if p is None or p.poll() is not None:
        return
    try:
        os.killpg(p.pid, sig)  # our own child's process group (start_new_session)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def kill_all():
    for p in CHILDREN:
        kill_proc(p)


def client(port, timeout=2.0):
    # No internal retries: redis-py 8 retries ConnectionError with exponential
    # backoff (up to 1 s sleeps) inside each call, which would quantise the
    # failover measurement; callers poll themselves.
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout,
                       socket_connect_timeout=timeout, decode_responses=True,
                       protocol=2, retry=Retry(NoBackoff(), 0))


def wait_until(pred, timeout, what, interval=0.05):
    end = time.monotonic() + timeout
    last_exc = None
    while time.monotonic() < end:
        try:
            v = pred()
            if v:
                return v
        except Exception as e:  # noqa: BLE001 -- servers may be starting
            last_exc = e
        time.sleep(interval)
    raise PhaseTimeout(f"timeout after {timeout}s waiting for {what}"
                       + (f" (last error: {last_exc!r})" if last_exc else ""))


def kv_lines(raw):
    if isinstance(raw, dict):
        return {k: str(v) for k, v in raw.items()}
    out = {}
    for line in str(raw).splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def info_fields(r, section="replication"):
    return kv_lines(r.execute_command("INFO", section))


def cluster_info(r):
    return kv_lines(r.execute_command("CLUSTER", "INFO"))


def group_cpu_seconds(pgid):
    """utime+stime (s) of every live process in process group pgid."""
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        # fields[0]=state [1]=ppid [2]=pgrp ... [11]=utime [12]=stime
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


class Server:
    def __init__(self, args, root, name):
        self.args = args
        self.name = name
        self.port = free_cluster_port()
        self.dir = os.path.join(root, f"{name}-{self.port}")
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        self.node_id = None

    def argv(self):
        return [a.format(port=self.port, dir=self.dir, timeout=self.args.node_timeout)
                for a in shlex.split(self.args.server)]

    def start(self):
        self.proc = spawn(self.argv(), self.dir, "server.log", self.args.nice)
        r = self.r()

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}; log tail: {self.log_tail()!r}")
            return r.ping()
        wait_until(up, self.args.start_timeout, f"{self.name} (port {self.port}) to answer PING")
        self.node_id = self.r().execute_command("CLUSTER", "MYID")
        return self

    def log_tail(self, n=600):
        try:
            with open(os.path.join(self.dir, "server.log"), "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def r(self, timeout=2.0):
        return client(self.port, timeout)

    def cmd(self, *a, timeout=5.0):
        """execute_command with a precise error message naming node+command."""
        try:
            return self.r(timeout).execute_command(*a)
        except Exception as e:  # noqa: BLE001
            raise RuntimeError(f"{self.name}:{self.port} {' '.join(map(str, a))} -> {type(e).__name__}: {e}") from e

    def cpu(self):
        return group_cpu_seconds(self.proc.pid) if self.proc and self.proc.poll() is None else 0.0

    def kill9(self):
        kill_proc(self.proc, signal.SIGKILL)


def wait_cluster_ok(args, servers, n_known=None, timeout=None):
    n_known = n_known or len(servers)

    def ok():
        for s in servers:
            ci = cluster_info(s.r())
            if ci.get("cluster_state") != "ok" or int(ci.get("cluster_known_nodes", 0)) != n_known:
                return False
        return True
    t = time.monotonic()
    try:
        wait_until(ok, timeout or args.phase_timeout, f"cluster_state:ok and cluster_known_nodes:{n_known} on all nodes", 0.1)
    except PhaseTimeout as e:
        detail = []
        for s in servers:
            try:
                ci = cluster_info(s.r())
                detail.append(f"{s.name}:{s.port} state={ci.get('cluster_state')} known={ci.get('cluster_known_nodes')}"
                              f" slots_ok={ci.get('cluster_slots_ok')}")
            except Exception as ee:  # noqa: BLE001
                detail.append(f"{s.name}:{s.port} {ee!r}")
        raise PhaseTimeout(f"{e}; " + "; ".join(detail)) from None
    return time.monotonic() - t


def build_cluster(args, root, n, prefix):
    """n primaries, no replicas, slots split evenly, meet node0."""
    servers = [Server(args, root, f"{prefix}{i}").start() for i in range(n)]
    for i, s in enumerate(servers):
        a = i * NSLOTS // n
        b = (i + 1) * NSLOTS // n - 1
        s.cmd("CLUSTER", "ADDSLOTSRANGE", a, b)
        s.cmd("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
    for s in servers[1:]:
        s.cmd("CLUSTER", "MEET", "127.0.0.1", servers[0].port)
    dt = wait_cluster_ok(args, servers)
    log(f"  {n}-primary cluster ok in {dt:.2f}s (ports {', '.join(str(s.port) for s in servers)})")
    return servers


RPS_RE = {t: re.compile(rf"^{t}:\s*([0-9.]+)\s+requests per second", re.M) for t in ("SET", "GET")}


def bench(args, servers, pipeline, n):
    # redis-benchmark 7.0 refuses --cluster with a single node ("Invalid
    # cluster: 1 node(s)"); that node owns all 16384 slots, so plain mode
    # against it sends exactly the same traffic.
    cl = ["--cluster"] if len(servers) > 1 else []
    argv = [args.benchmark] + cl + ["-h", "127.0.0.1", "-p", str(servers[0].port),
            "-t", "set,get", "-n", str(n), "-c", str(args.clients), "-r", str(args.keyspace), "-q"]
    if pipeline > 1:
        argv += ["-P", str(pipeline)]
    if args.nice:
        argv = ["nice", "-n", str(args.nice)] + argv
    cpu0 = [s.cpu() for s in servers]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=args.phase_timeout)
    cpu1 = [s.cpu() for s in servers]
    out = res.stdout.replace("\r", "\n")
    rps = {}
    for t, rx in RPS_RE.items():
        m = rx.findall(out)
        if not m:
            raise RuntimeError(f"cannot parse redis-benchmark {t} result (rc {res.returncode}): "
                               f"{out[-800:]!r} {res.stderr[-800:]!r}")
        rps[t] = float(m[-1])
    rps["cpu_us_per_req"] = (sum(cpu1) - sum(cpu0)) * 1e6 / (2 * n)
    rps["node_cpu_us_per_req"] = [(b - a) * 1e6 / (2 * n) for a, b in zip(cpu0, cpu1)]
    if cl:
        short = min(n / rps["SET"], n / rps["GET"])
        if short < 2.5:  # see QUANTISATION in the module docstring
            log(f"    note: a test lasted only {short:.2f}s; --cluster results are quantised to 0.25 s"
                f" (error up to {0.25 / short:.0%}); raise --n/--n-pipelined")
    return rps


def kvs_bench(args, servers, pipeline, n):
    """`wirespeed kvs bench --cluster`: a SET run (--get-ratio 0), then a GET run
    (--get-ratio 1), each n requests; the server CPU is read by kvs bench itself
    around each run (the preload before it is not counted), per node."""
    out = {}
    pids = ",".join(str(s.proc.pid) for s in servers)
    cpu_by_node = [0.0] * len(servers)
    for name, ratio in (("SET", "0"), ("GET", "1")):
        argv = [args.kvs_bench, "kvs", "bench", "--cluster", "--addr", f"127.0.0.1:{servers[0].port}",
                "--connections", str(args.clients), "--pipeline", str(pipeline), "--requests", str(n),
                "--keys", str(args.keyspace), "--value-size", "3", "--get-ratio", ratio,
                "--threads", str(args.kvs_bench_threads), "--server-pid", pids, "--json"]
        if args.nice:
            argv = ["nice", "-n", str(args.nice)] + argv
        res = subprocess.run(argv, capture_output=True, text=True, timeout=args.phase_timeout)
        if res.returncode != 0:
            raise RuntimeError(f"kvs bench rc={res.returncode}: {res.stdout[-800:]!r} {res.stderr[-800:]!r}")
        doc = json.loads(res.stdout.strip().splitlines()[-1])
        if doc["mismatches"] or doc["requests"] != n:
            raise RuntimeError(f"kvs bench: {doc}")
        out[name] = doc["per_sec"]
        out[f"{name}_redirects"] = doc["moved"] + doc["asks"]
        by_pid = {e["pid"]: e["cpu_s"] for e in doc["server_cpu_s_by_pid"]}
        for i, s in enumerate(servers):
            cpu_by_node[i] += by_pid[s.proc.pid]
    out["cpu_us_per_req"] = sum(cpu_by_node) * 1e6 / (2 * n)
    out["node_cpu_us_per_req"] = [c * 1e6 / (2 * n) for c in cpu_by_node]
    return out


def median_cell(runs):
    cell = {k: statistics.median(r[k] for r in runs) for k in ("SET", "GET", "cpu_us_per_req")}
    nodes = len(runs[0]["node_cpu_us_per_req"])
    cell["node_cpu_us_per_req"] = [statistics.median(r["node_cpu_us_per_req"][i] for r in runs)
                                   for i in range(nodes)]
    cell["runs"] = runs
    return cell


def phase_throughput(args, root):
    log("phase 1: SET/GET throughput, clusters of 1/2/3 primaries (redis-benchmark --cluster"
        + (", wirespeed kvs bench --cluster)" if args.kvs_bench else ")"))
    results = {}
    for n in (1, 2, 3):
        servers = build_cluster(args, root, n, f"tp{n}-node")
        row = {}
        clients = [("redis-benchmark", bench)]
        if args.kvs_bench:
            clients.append(("kvs-bench", kvs_bench))
        for client_name, run in clients:
            for label, pl, nreq in (("unpipelined", 1, args.n), (f"P{args.pipeline}", args.pipeline, args.n_pipelined)):
                cell = median_cell([run(args, servers, pl, nreq) for _ in range(args.repeat)])
                key = label if client_name == "redis-benchmark" else f"{client_name} {label}"
                row[key] = cell
                per_node = "/".join(f"{c:.2f}" for c in cell["node_cpu_us_per_req"])
                log(f"  {n} primar{'y' if n == 1 else 'ies'} {key:22s}: SET {cell['SET']:>11,.0f}/s  GET {cell['GET']:>11,.0f}/s"
                    f"  server CPU {cell['cpu_us_per_req']:.2f} us/req (per node {per_node})"
                    f"  (n={nreq}, {args.repeat} run(s))")
        results[f"{n}_primaries"] = row
        for s in servers:
            s.kill9()
    return results


def dbsize(s):
    return int(s.cmd("DBSIZE"))


def phase_reshard(args, root):
    log(f"phase 2: resharding 4096 slots node0 -> node1 with {args.reshard_keys:,} keys")
    servers = build_cluster(args, root, 3, "rs-node")
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", s.port) for s in servers],
                      decode_responses=True, socket_timeout=10, protocol=2)
    t = time.monotonic()
    batch = 2000
    for i0 in range(0, args.reshard_keys, batch):
        p = rc.pipeline(transaction=False)
        for i in range(i0, min(i0 + batch, args.reshard_keys)):
            p.set(f"key:{i}", f"val:{i}")
        p.execute()
    sizes0 = [dbsize(s) for s in servers]
    log(f"  filled in {time.monotonic() - t:.1f}s; DBSIZE per node {sizes0} (total {sum(sizes0):,})")
    rc.close()
    if sum(sizes0) != args.reshard_keys:
        raise RuntimeError(f"DBSIZE total {sum(sizes0)} != {args.reshard_keys} after fill")
    argv = [args.cli, "--cluster", "reshard", f"127.0.0.1:{servers[0].port}",
            "--cluster-from", servers[0].node_id, "--cluster-to", servers[1].node_id,
            "--cluster-slots", str(args.reshard_slots), "--cluster-yes"]
    if args.nice:
        argv = ["nice", "-n", str(args.nice)] + argv
    t = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=args.phase_timeout)
    dt = time.monotonic() - t
    with open(os.path.join(root, "reshard.out"), "w") as f:
        f.write(res.stdout + res.stderr)
    errs = [ln for ln in (res.stdout + res.stderr).splitlines() if "ERR" in ln or "[ERR" in ln or "error" in ln.lower()]
    if res.returncode != 0 or errs:
        raise RuntimeError(f"redis-cli --cluster reshard rc={res.returncode}; error lines: {errs[:5]}; "
                           f"tail: {(res.stdout + res.stderr)[-800:]!r}")
    sizes1 = [dbsize(s) for s in servers]
    moved = sizes0[0] - sizes1[0]
    out = {"seconds": round(dt, 3), "slots": args.reshard_slots, "keys_moved": moved,
           "keys_per_s": round(moved / dt, 1), "slots_per_s": round(args.reshard_slots / dt, 1),
           "dbsize_before": sizes0, "dbsize_after": sizes1}
    log(f"  reshard of {args.reshard_slots} slots took {dt:.2f}s: {moved:,} keys moved"
        f" -> {out['keys_per_s']:,.0f} keys/s, {out['slots_per_s']:,.0f} slots/s; DBSIZE after {sizes1}")
    # verification
    t = time.monotonic()
    try:
        wait_cluster_ok(args, servers, timeout=10)
    except PhaseTimeout as e:
        log(f"  WARNING: {e}")
    chk_argv = [args.cli, "--cluster", "check", f"127.0.0.1:{servers[0].port}"]
    chk = subprocess.run(chk_argv, capture_output=True, text=True, timeout=args.phase_timeout)
    chk_txt = chk.stdout + chk.stderr
    chk_ok = chk.returncode == 0 and "[OK] All 16384 slots covered" in chk_txt and "[ERR]" not in chk_txt and "[WARNING]" not in chk_txt
    out["check_ok"] = chk_ok
    out["dbsize_total_unchanged"] = sum(sizes1) == sum(sizes0)
    # spot check: every key readable through a fresh cluster client
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", servers[2].port)],
                      decode_responses=True, socket_timeout=10, protocol=2)
    sample = random.Random(1).sample(range(args.reshard_keys), min(2000, args.reshard_keys))
    p = rc.pipeline(transaction=False)
    for i in sample:
        p.get(f"key:{i}")
    vals = p.execute()
    bad = sum(1 for i, v in zip(sample, vals) if v != f"val:{i}")
    rc.close()
    out["sample_read_mismatches"] = bad
    log(f"  verify: cluster check {'OK' if chk_ok else 'FAILED'}; DBSIZE total {sum(sizes1):,}"
        f" ({'unchanged' if out['dbsize_total_unchanged'] else 'CHANGED'}); {bad}/{len(sample)} sampled keys wrong")
    if not chk_ok:
        out["check_output"] = [ln for ln in chk_txt.splitlines() if "ERR" in ln or "WARN" in ln or "OK" in ln][:20]
        log("  cluster check output: " + " | ".join(out["check_output"]))
    for s in servers:
        s.kill9()
    return out


def slot_owner_port(r, slot):
    for rng in r.execute_command("CLUSTER", "SLOTS"):
        if int(rng[0]) <= slot <= int(rng[1]):
            return int(rng[2][1])
    return None


def try_set_following_moved(port, key, val, timeout, max_hops=3):
    """SET via port, following MOVED/ASK; returns the port that accepted it."""
    for _ in range(max_hops):
        c = client(port, timeout)
        try:
            c.execute_command("SET", key, val)
            return port
        except redis.exceptions.ResponseError as e:
            # redis-py turns "-MOVED 12182 127.0.0.1:21005" into MovedError
            # whose str() is "12182 127.0.0.1:21005" (prefix stripped)
            if isinstance(e, redis.exceptions.AskError):  # MovedError subclasses AskError
                port = int(e.port)
                continue
            m = re.match(r"(?:MOVED|ASK) \d+ [^:\s]*:(\d+)", str(e))
            if not m:
                raise
            port = int(m.group(1))
        finally:
            c.close()
    raise RuntimeError("too many redirections")


def phase_failover(args, root):
    log(f"phase 3: failover, 3 primaries + 3 replicas, node timeout {args.node_timeout} ms")
    servers = [Server(args, root, f"fo-node{i}").start() for i in range(6)]
    argv = [args.cli, "--cluster", "create"] + [f"127.0.0.1:{s.port}" for s in servers] + \
        ["--cluster-replicas", "1", "--cluster-yes"]
    t = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=args.phase_timeout)
    with open(os.path.join(root, "create.out"), "w") as f:
        f.write(res.stdout + res.stderr)
    if res.returncode != 0 or "[OK] All 16384 slots covered" not in res.stdout:
        raise RuntimeError(f"redis-cli --cluster create rc={res.returncode}; tail: {(res.stdout + res.stderr)[-1000:]!r}")
    wait_cluster_ok(args, servers)
    roles = {s.port: info_fields(s.r()).get("role") for s in servers}
    replicas = [s for s in servers if roles[s.port] == "slave"]
    if len(replicas) != 3:
        raise RuntimeError(f"expected 3 replicas after create, roles: {roles}")
    wait_until(lambda: all(info_fields(s.r()).get("master_link_status") == "up" for s in replicas),
               args.phase_timeout, "all replicas master_link_status:up", 0.1)
    log(f"  cluster created and replicas linked in {time.monotonic() - t:.1f}s")

    slot = int(servers[0].cmd("CLUSTER", "KEYSLOT", "foo"))
    victim_port = try_set_following_moved(servers[0].port, "foo", "before", 2.0)
    victim = [s for s in servers if s.port == victim_port][0]
    if roles[victim.port] != "master":
        raise RuntimeError(f"SET foo accepted by non-master {victim.port}")
    others = [s for s in servers if s is not victim]
    vrep = [s for s in replicas if info_fields(s.r()).get("master_port") == str(victim.port)]
    log(f"  slot {slot} (foo) served by {victim.name}:{victim.port}; its replica(s): {[s.port for s in vrep]}")
    time.sleep(0.5)  # let the replica ack the last write / settle
    log(f"  kill -9 {victim.name} (port {victim.port})")
    t_kill = time.monotonic()
    victim.kill9()
    attempts, errors, new_port = 0, {}, None
    deadline = t_kill + args.phase_timeout
    i = 0
    while time.monotonic() < deadline:
        attempts += 1
        via = others[i % len(others)]
        i += 1
        try:
            p = try_set_following_moved(via.port, "foo", "x", args.retry_ms / 1000.0 * 5)
            if p != victim.port:
                new_port = p
                break
        except Exception as e:  # noqa: BLE001
            k = type(e).__name__
            if type(e) is redis.exceptions.ResponseError and str(e):
                k += ":" + str(e).split()[0]
            errors[k] = errors.get(k, 0) + 1
        time.sleep(args.retry_ms / 1000.0)
    t_write = time.monotonic()
    if new_port is None:
        raise PhaseTimeout("no node accepted SET foo within phase timeout after kill -9")
    fo = t_write - t_kill
    try:  # informational: the new primary's own view of the slot
        owner = slot_owner_port(client(new_port), slot)
    except Exception as e:  # noqa: BLE001
        owner = repr(e)
    log(f"  first SET foo accepted by port {new_port} {fo:.3f}s after kill -9 ({attempts} attempts, errors: {errors});"
        f" CLUSTER SLOTS (on {new_port}) owner {owner}")
    out = {"failover_s": round(fo, 3), "node_timeout_ms": args.node_timeout, "new_primary_port": new_port,
           "was_replica_of_victim": new_port in [s.port for s in vrep], "attempts": attempts,
           "client_errors": errors, "retry_ms": args.retry_ms}
    if args.rejoin:
        t = time.monotonic()
        victim.start()
        try:
            wait_until(lambda: (lambda i: i.get("role") == "slave" and i.get("master_link_status") == "up")(info_fields(victim.r())),
                       args.phase_timeout, "restarted node to become a linked replica", 0.1)
            out["rejoin_as_replica_s"] = round(time.monotonic() - t, 3)
            log(f"  restarted node is role:slave with link up {out['rejoin_as_replica_s']}s after restart")
        except PhaseTimeout as e:
            out["rejoin_as_replica_s"] = None
            log(f"  WARNING: {e}; INFO replication: {info_fields(victim.r()) if victim.proc.poll() is None else 'dead'}")
    for s in servers:
        s.kill9()
    return out


def cpu_model():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                k = k.strip()
                if k in ("model name", "cpu family") and k not in info:
                    info[k] = v.strip()
    except OSError:
        pass
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True, help="command template; {port}, {dir}, {timeout} are substituted")
    ap.add_argument("--benchmark", default="redis-benchmark")
    ap.add_argument("--cli", default="redis-cli")
    ap.add_argument("--kvs-bench", help="a wirespeed binary: also measure with its `kvs bench --cluster`")
    ap.add_argument("--kvs-bench-threads", type=int, default=1, help="kvs bench --threads")
    ap.add_argument("--phases", default="throughput,reshard,failover")
    ap.add_argument("--n", type=int, default=100000, help="requests per test (SET and GET each) per unpipelined run")
    ap.add_argument("--n-pipelined", type=int, default=1000000, help="requests per test per pipelined run")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--keyspace", type=int, default=100000, help="redis-benchmark -r")
    ap.add_argument("--repeat", type=int, default=3, help="benchmark runs per cell (median reported)")
    ap.add_argument("--reshard-keys", type=int, default=100000)
    ap.add_argument("--reshard-slots", type=int, default=4096)
    ap.add_argument("--node-timeout", type=int, default=2000, help="ms, substituted for {timeout}")
    ap.add_argument("--retry-ms", type=float, default=20.0, help="poll interval during failover")
    ap.add_argument("--no-rejoin", dest="rejoin", action="store_false", help="skip restarting the killed primary")
    ap.add_argument("--nice", type=int, default=10, help="nice level for all child processes (0 = none)")
    ap.add_argument("--start-timeout", type=float, default=10.0)
    ap.add_argument("--phase-timeout", type=float, default=60.0)
    ap.add_argument("--max-seconds", type=int, default=600, help="hard limit for the whole run")
    ap.add_argument("--json", help="also write results to this file")
    ap.add_argument("--keep-dir", action="store_true", help="keep the temp dir (logs)")
    args = ap.parse_args()

    for tool in (args.benchmark, args.cli):
        if shutil.which(tool) is None and not os.path.exists(tool):
            sys.exit(f"not found: {tool}")

    def on_signal(signum, frame):
        raise SystemExit(f"signal {signum}")

    def on_alarm(signum, frame):
        raise PhaseTimeout(f"--max-seconds {args.max_seconds} exceeded")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(args.max_seconds)

    root = tempfile.mkdtemp(prefix="cluster-bench-")
    cpu = cpu_model()
    load0 = os.getloadavg()
    log(f"command: {shlex.join(sys.argv)}")
    log(f"workdir {root}; server template: {args.server}")
    log(f"cpu: {cpu.get('model name')} (family {cpu.get('cpu family')}); nproc {os.cpu_count()};"
        f" loadavg at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    results = {"server": args.server, "argv": sys.argv, "command": shlex.join(sys.argv),
               "redis_py": redis.__version__, "cpu_model": cpu.get("model name"),
               "cpu_family": cpu.get("cpu family"), "nproc": os.cpu_count(),
               "loadavg_start": load0, "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
    t_all = time.monotonic()
    rc = 0
    try:
        phases = args.phases.split(",")
        if "throughput" in phases:
            results["throughput"] = phase_throughput(args, root)
            kill_all()
        if "reshard" in phases:
            results["reshard"] = phase_reshard(args, root)
            kill_all()
        if "failover" in phases:
            results["failover"] = phase_failover(args, root)
    except BaseException as e:  # noqa: BLE001 -- always clean up, report
        log(f"ERROR: {type(e).__name__}: {e}")
        results["error"] = f"{type(e).__name__}: {e}"
        rc = 1
    finally:
        signal.alarm(0)
        kill_all()
        results["elapsed_s"] = round(time.monotonic() - t_all, 1)
        results["loadavg_end"] = os.getloadavg()
        log(f"elapsed {results['elapsed_s']}s; loadavg at end {results['loadavg_end'][0]:.2f}"
            f" {results['loadavg_end'][1]:.2f} {results['loadavg_end'][2]:.2f}")
        if args.keep_dir or rc:
            log(f"logs kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(results, indent=2, default=str))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2, default=str)
    return rc


if __name__ == "__main__":
    sys.exit(main())

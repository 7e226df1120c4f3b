#!/usr/bin/env python3
"""The key-value server comparison of BENCHMARKS.md, in one command.

    python3 tools/kvs_bench.py [--rounds 3] [--secs 3] [--out target/kvs-bench]

Installs redis-server, redis-tools and memcached with apt-get when they are missing
(as root), builds `wirespeed` in release mode, starts wirespeed kvs, redis-server and
memcached pinned to core 0 (single-threaded each: one event loop, Redis's main thread,
`memcached -t 1`), and drives them from core 1 with the same load generator
(`wirespeed kvs bench`: 16-byte keys, 10,000 keys, 90% GET / 10% SET, every reply
checked). Rounds alternate between the servers; the summary gives the median of the
rounds. Measured:

- closed loop, 50 connections unpipelined, pipeline depth 16, and one connection
  request by request, with 64- and 1024-byte values: requests/s, p50/p99, server CPU
  seconds per million requests (from /proc/PID/stat);
- open loop at 70% of Redis's unpipelined maximum (64-byte values): p99, p99.9;
- a sweep of offered rates from 10% to 100% of that maximum, drawn as one SVG
  (p99 solid, p50 dashed, a line per server);
- `appendfsync always` (SETs only, 50 connections) against Redis with the same policy;
- redis-benchmark's tests for strings, lists, sets, hashes and sorted sets (BENCH_TESTS)
  against wirespeed and Redis, unpipelined and -P 16.

Writes every raw result to OUT/results.json, the plot to OUT/latency.svg and prints a
Markdown summary.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WS = os.path.join(ROOT, "target", "release", "wirespeed")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def ensure_peers():
    missing = [t for t in ("redis-server", "redis-benchmark", "memcached") if not shutil.which(t)]
    if not missing:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit(f"missing {', '.join(missing)}: install redis-server, redis-tools and memcached")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sh(["apt-get", "update", "-q"], env=env)
    sh(["apt-get", "install", "-y", "-q", "redis-server", "redis-tools", "memcached"], env=env)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc):
    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server on port {port} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on port {port}")


class Servers:
    """wirespeed, redis and memcached pinned to the server core."""

    def __init__(self, pin, aof_dir=None):
        self.procs = {}
        self.ports = {}
        self.pin = pin
        self.aof_dir = aof_dir

    def start(self, name, fsync_always=False):
        port = free_port()
        if name == "wirespeed":
            cmd = [WS, "kvs", "serve", "--port", str(port)]
            if fsync_always:
                cmd += ["--aof", os.path.join(self.aof_dir, "ws.aof"), "--appendfsync", "always"]
        elif name == "redis":
            cmd = ["redis-server", "--port", str(port), "--save", "", "--bind", "127.0.0.1"]
            if fsync_always:
                cmd += ["--appendonly", "yes", "--appendfsync", "always", "--dir", self.aof_dir]
            else:
                cmd += ["--appendonly", "no"]
        else:
            cmd = ["memcached", "-p", str(port), "-U", "0", "-l", "127.0.0.1", "-t", "1"]
            if os.geteuid() == 0:
                cmd += ["-u", "root"]
        proc = subprocess.Popen(self.pin + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(port, proc)
        self.procs[name], self.ports[name] = proc, port

    def stop(self):
        for p in self.procs.values():
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs.clear()


def bench(pin, servers, name, *args):
    proto = "memcache" if name == "memcached" else "resp"
    cmd = pin + [WS, "kvs", "bench", "--addr", f"127.0.0.1:{servers.ports[name]}",
                 "--protocol", proto, "--server-pid", str(servers.procs[name].pid), "--json"]
    out = sh(cmd + [str(a) for a in args], capture_output=True, text=True).stdout
    return json.loads(out)


def median(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


# redis-benchmark's tests run against both servers: strings and every collection type.
BENCH_TESTS = "set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset"


def redis_benchmark(pin, port, pipeline):
    cmd = pin + ["redis-benchmark", "-p", str(port), "-t", BENCH_TESTS, "-n", "200000", "-c", "50",
                 "-P", str(pipeline), "-q"]
    out = sh(cmd, capture_output=True, text=True).stdout
    rates = {}
    for line in out.replace("\r", "\n").splitlines():
        name, _, rest = line.partition(": ")
        if rest and "requests per second" in rest and "rps=" not in line:
            rates[name.strip()] = float(rest.split()[0])
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=float, default=3.0)
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "kvs-bench"))
    a = ap.parse_args()
    ensure_peers()
    sh(["cargo", "build", "--release", "-q", "-p", "wirespeed-cli"], cwd=ROOT)
    os.makedirs(a.out, exist_ok=True)
    cores = os.cpu_count() or 1
    spin, cpin = (["taskset", "-c", "0"], ["taskset", "-c", "1"]) if cores >= 2 and shutil.which("taskset") else ([], [])
    names = ["wirespeed", "redis", "memcached"]
    with open("/proc/cpuinfo") as f:
        model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    results = {"machine": model,
               "cores": cores, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "closed": {}, "open": {}, "sweep": {}, "fsync_always": {}, "redis_benchmark": {}}
    secs = str(a.secs)
    srv = Servers(spin)
    for n in names:
        srv.start(n)
    try:
        for size in (64, 1024):
            for test, args in (("50 connections", ["--connections", 50]),
                               ("pipeline 16", ["--connections", 50, "--pipeline", 16]),
                               ("1 connection", ["--connections", 1])):
                rows = {n: [] for n in names}
                for _ in range(a.rounds):
                    for n in names:
                        rows[n].append(bench(cpin, srv, n, *args, "--value-size", size, "--duration", secs))
                results["closed"][f"{test}, {size} B"] = rows
                print(f"{test}, {size} B: " + ", ".join(
                    f"{n} {median(rows[n], 'per_sec'):,.0f}/s" for n in names), file=sys.stderr)
        redis_max = median(results["closed"]["50 connections, 64 B"]["redis"], "per_sec")
        rate = int(0.7 * redis_max)
        rows = {n: [] for n in names}
        for _ in range(a.rounds):
            for n in names:
                rows[n].append(bench(cpin, srv, n, "--connections", 8, "--rate", rate, "--duration", secs))
        results["open"] = {"rate": rate, "rows": rows}
        rates = ",".join(str(int(redis_max * f / 10)) for f in range(1, 11))
        files = []
        for n in names:
            f = os.path.join(a.out, f"sweep-{n}.json")
            bench(cpin, srv, n, "--connections", 8, "--sweep", rates, "--duration", "2",
                  "--label", n, "--sweep-json", f)
            files.append(f)
        sh([WS, "kvs", "bench", "--svg-merge", *files, "--svg", os.path.join(a.out, "latency.svg")],
           capture_output=True)
        for n in ("wirespeed", "redis"):
            results["redis_benchmark"][n] = {
                "unpipelined": redis_benchmark(cpin, srv.ports[n], 1),
                "pipeline 16": redis_benchmark(cpin, srv.ports[n], 16)}
    finally:
        srv.stop()
    with tempfile.TemporaryDirectory() as d:
        srv = Servers(spin, d)
        try:
            for n in ("wirespeed", "redis"):
                srv.start(n, fsync_always=True)
            rows = {n: [] for n in ("wirespeed", "redis")}
            for _ in range(a.rounds):
                for n in rows:
                    rows[n].append(bench(cpin, srv, n, "--connections", 50, "--get-ratio", 0,
                                         "--duration", secs))
            results["fsync_always"] = rows
        finally:
            srv.stop()
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    report(results)


def report(r):
    print(f"{r['machine']}, {r['cores']} cores, {r['date']}; medians of the rounds\n")
    print("| test | wirespeed req/s | Redis req/s | memcached req/s | vs Redis | vs memcached "
          "| p50 / p99 us (ws, Redis, mc) | server CPU s per 1M (ws, Redis, mc) |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for test, rows in r["closed"].items():
        w, rd, mc = (median(rows[n], "per_sec") for n in ("wirespeed", "redis", "memcached"))
        lat = ", ".join(f"{median(rows[n], 'p50_us'):.0f} / {median(rows[n], 'p99_us'):.0f}"
                        for n in ("wirespeed", "redis", "memcached"))
        cpu = ", ".join(f"{median(rows[n], 'cpu_s_per_million'):.2f}" for n in ("wirespeed", "redis", "memcached"))
        print(f"| {test} | {w:,.0f} | {rd:,.0f} | {mc:,.0f} | {w / rd:.2f} | {w / mc:.2f} | {lat} | {cpu} |")
    o = r["open"]
    print(f"\nOpen loop at {o['rate']:,} req/s (70% of Redis's unpipelined maximum), 8 connections:\n")
    print("| server | achieved req/s | p50 us | p99 us | p99.9 us | max us |")
    print("|---|---:|---:|---:|---:|---:|")
    for n, rows in o["rows"].items():
        print(f"| {n} | {median(rows, 'per_sec'):,.0f} | {median(rows, 'p50_us'):.0f} | "
              f"{median(rows, 'p99_us'):.0f} | {median(rows, 'p999_us'):.0f} | {median(rows, 'max_us'):.0f} |")
    f = r["fsync_always"]
    w, rd = median(f["wirespeed"], "per_sec"), median(f["redis"], "per_sec")
    print(f"\nappendfsync always, SETs, 50 connections: wirespeed {w:,.0f}/s, Redis {rd:,.0f}/s, "
          f"ratio {w / rd:.2f}; mismatches {sum(x['mismatches'] for v in f.values() for x in v)}")
    b = r["redis_benchmark"]
    for mode in ("unpipelined", "pipeline 16"):
        ws, rs = b["wirespeed"][mode], b["redis"][mode]
        print(f"\nredis-benchmark {mode} (requests/s):\n")
        print("| test | wirespeed | Redis | ratio |")
        print("|---|---:|---:|---:|")
        for t in rs:
            print(f"| {t} | {ws.get(t, 0):,.0f} | {rs[t]:,.0f} | {ws.get(t, 0) / max(rs[t], 1):.2f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""sync-stall.py -- what a replica's full sync costs the primary's writers.

For one server kind (any RESP server started from a command template, turned into a
replica with REPLICAOF):

  1. fill the primary with --keys keys of --value-size bytes (pipelined SETs);
  2. a writer sends one SET every --interval-ms and times each reply;
  3. a replica of the same kind attaches (full sync); the writer goes on until the
     replica's offset equals the primary's;
  4. report the writer's worst and p99 reply time before and during the sync, the
     sync's duration, and the primary's RSS before and at its peak during the sync;
  5. optionally, --unread K raw connections send PSYNC ? -1 and never read: the
     primary's RSS after 3 s.

Template placeholders: {port}, {dir} (a private working directory; also the cwd).
  --server 'redis-server --port {port} --save "" --appendonly no'
  --server 'target/release/wirespeed kvs serve --port {port}'
Prints one JSON object. Only deps: Python 3 and redis-py.
"""
import argparse
import json
import os
import shlex
import socket
import subprocess
import tempfile
import threading
import time

import redis


def start(template, port):
    d = tempfile.mkdtemp(prefix="sync-stall-")
    cmd = template.format(port=port, dir=d)
    p = subprocess.Popen(shlex.split(cmd), cwd=d, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    c = redis.Redis(port=port)
    for _ in range(200):
        try:
            if c.ping():
                return p, c
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    raise SystemExit(f"no server on {port}: {cmd}")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def pct(xs, q):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--keys", type=int, default=1_200_000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--interval-ms", type=float, default=0.5)
    ap.add_argument("--unread", type=int, default=0)
    a = ap.parse_args()

    pport, rport = free_port(), free_port()
    prim, pc = start(a.server, pport)
    try:
        value = b"v" * a.value_size
        pipe = pc.pipeline(transaction=False)
        for i in range(a.keys):
            pipe.set(f"key:{i:08d}", value)
            if i % 10_000 == 9_999:
                pipe.execute()
        pipe.execute()
        rss_before = rss_kib(prim.pid)

        lat = []  # (t, seconds)
        stop = threading.Event()

        def writer():
            w = redis.Redis(port=pport)
            n = 0
            nxt = time.perf_counter()
            while not stop.is_set():
                t0 = time.perf_counter()
                w.set(f"w:{n % 1000}", n)
                lat.append((t0, time.perf_counter() - t0))
                n += 1
                nxt += a.interval_ms / 1000
                d = nxt - time.perf_counter()
                if d > 0:
                    time.sleep(d)
                else:
                    nxt = time.perf_counter()

        th = threading.Thread(target=writer)
        th.start()
        time.sleep(1.0)
        t_attach = time.perf_counter()
        repl, rc = start(a.server, rport)
        rc.execute_command("REPLICAOF", "127.0.0.1", pport)
        peak = rss_before
        while True:
            peak = max(peak, rss_kib(prim.pid))
            ri = rc.info("replication")
            pi = pc.info("replication")
            if (ri.get("master_link_status") == "up"
                    and ri.get("slave_repl_offset") == pi.get("master_repl_offset")
                    and rc.dbsize() >= a.keys):
                break
            if time.perf_counter() - t_attach > 600:
                raise SystemExit("the replica did not sync in 600 s")
            time.sleep(0.02)
        t_synced = time.perf_counter()
        time.sleep(0.3)
        stop.set()
        th.join()
        before = [s for t, s in lat if t < t_attach]
        during = [s for t, s in lat if t_attach <= t <= t_synced]
        out = {
            "server": a.server,
            "keys": a.keys,
            "value_size": a.value_size,
            "writer_interval_ms": a.interval_ms,
            "writes_before": len(before),
            "writes_during": len(during),
            "before_max_ms": round(max(before) * 1000, 2) if before else None,
            "before_p99_ms": round(pct(before, 0.99) * 1000, 2),
            "during_max_ms": round(max(during) * 1000, 2) if during else None,
            "during_p99_ms": round(pct(during, 0.99) * 1000, 2),
            "sync_s": round(t_synced - t_attach, 2),
            "rss_before_mib": round(rss_before / 1024, 1),
            "rss_peak_mib": round(peak / 1024, 1),
        }
        repl.kill()
        repl.wait()
        if a.unread:
            socks = []
            for _ in range(a.unread):
                s = socket.create_connection(("127.0.0.1", pport))
                s.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
                socks.append(s)
            peak = 0
            for _ in range(30):
                peak = max(peak, rss_kib(prim.pid))
                time.sleep(0.1)
            out["unread_psyncs"] = a.unread
            out["rss_with_unread_mib"] = round(peak / 1024, 1)
            for s in socks:
                s.close()
        print(json.dumps(out))
    finally:
        prim.kill()
        prim.wait()


if __name__ == "__main__":
    main()

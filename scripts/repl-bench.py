#!/usr/bin/env python3
"""repl-bench.py -- replication / failover measurements for ONE server kind.

Runs the same measurements against any RESP server that can be started from a
command template and turned into a replica with `REPLICAOF host port`:

  1. throughput: redis-benchmark `-t set -n N -c 50 -q` (unpipelined) and the
     same with `-P 16`, with 0, 1 and 2 replicas attached (ratios vs 0 replicas);
  2. replication lag under that load (unpipelined and -P 16 background load),
     measured end-to-end with probe keys (see LAG METHOD below);
  3. failover: 3 redis-sentinel processes (quorum 2), primary + 2 replicas,
     kill -9 the primary, time until the first write accepted through
     redis-py's Sentinel(...).master_for(...); optionally restart the old
     primary and time until Sentinel has turned it into a replica.

Only deps: Python 3, redis-py, redis-benchmark, redis-sentinel (Redis's own
Sentinel is used for the failover phase whatever the server kind).

Template placeholders: {port} (the port to listen on), {dir} (a private
empty working directory for that instance; the process also runs with
cwd={dir}).  Examples:
  --server 'redis-server --port {port} --save "" --appendonly no'
  --server 'target/release/wirespeed kvs serve --port {port}'

LAG METHOD: a probe client, while redis-benchmark loads the primary, does every
--probe-interval-ms: t0=now; SET lagprobe <seq> on the primary (t_ack = when the
reply arrives); then polls GET lagprobe on each replica (back-to-back, no sleep)
until it returns >= seq.  Reported per replica:
  * visible_after_issue = t_seen - t0   (what a client doing write-then-read-
    from-replica experiences; includes the primary's write RTT)
  * visible_after_ack   = t_seen - t_ack (pure propagation delay as far as a
    client can observe it; resolution = one GET RTT on the replica)
Offset-based lag (master_repl_offset - slaveN offset) is NOT used as the main
figure because Redis replicas only send REPLCONF ACK once per second, so the
acked offset is a 1 s-granular lower bound, not a latency; it is sampled and
reported as bytes for information only.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel

CHILDREN = []  # Popen objects we started (each in its own process group)


class PhaseTimeout(Exception):
    pass


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


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
    if p.poll() is not None:
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


def client(port, timeout=2.0, protocol=None):
    kw = dict(host="127.0.0.1", port=port, socket_timeout=timeout,
              socket_connect_timeout=timeout, decode_responses=True)
    if protocol:
        kw["protocol"] = protocol
    return redis.Redis(**kw)


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


def info_fields(r, section="replication"):
    raw = r.execute_command("INFO", section)
    if isinstance(raw, dict):  # redis-py may already parse it
        return {k: str(v) for k, v in raw.items()}
    out = {}
    for line in str(raw).splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


class Server:
    def __init__(self, args, root, name):
        self.args = args
        self.name = name
        self.port = free_port()
        self.dir = os.path.join(root, f"{name}-{self.port}")
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None

    def start(self):
        argv = [a.format(port=self.port, dir=self.dir)
                for a in shlex.split(self.args.server)]
        self.proc = spawn(argv, self.dir, "server.log", self.args.nice)
        r = client(self.port, protocol=self.args.protocol)
        wait_until(lambda: r.ping(), self.args.start_timeout,
                   f"{self.name} (port {self.port}) to answer PING")
        return self

    def r(self, timeout=2.0):
        return client(self.port, timeout, protocol=self.args.protocol)

    def replicaof(self, primary):
        self.r().execute_command("REPLICAOF", "127.0.0.1", str(primary.port))

    def kill9(self):
        kill_proc(self.proc, signal.SIGKILL)


def wait_synced(primary, replicas, timeout):
    """link up on every replica, primary lists them, offsets equal (if reported)."""
    def ok():
        pi = info_fields(primary.r())
        if int(pi.get("connected_slaves", "0")) < len(replicas):
            return False
        for rep in replicas:
            ri = info_fields(rep.r())
            if ri.get("master_link_status") != "up":
                return False
            mo, so = pi.get("master_repl_offset"), ri.get("slave_repl_offset")
            if mo is not None and so is not None and int(so) < int(mo):
                return False
        return True
    wait_until(ok, timeout, "replicas in sync", interval=0.1)


RPS_RE = re.compile(r"SET:\s*([0-9.]+)\s+requests per second")


def bench(args, port, pipeline, n):
    argv = [args.benchmark, "-h", "127.0.0.1", "-p", str(port), "-t", "set",
            "-n", str(n), "-c", str(args.clients), "-r", str(args.keyspace), "-q"]
    if pipeline > 1:
        argv += ["-P", str(pipeline)]
    if args.nice:
        argv = ["nice", "-n", str(args.nice)] + argv
    res = subprocess.run(argv, capture_output=True, text=True,
                         timeout=args.phase_timeout)
    m = RPS_RE.findall(res.stdout.replace("\r", "\n"))
    if not m:
        raise RuntimeError(f"cannot parse redis-benchmark output: {res.stdout!r} {res.stderr!r}")
    return float(m[-1])


def phase_throughput(args, root):
    log("phase 1: SET throughput with 0/1/2 replicas")
    primary = Server(args, root, "tp-primary").start()
    reps = [Server(args, root, f"tp-replica{i}").start() for i in (1, 2)]
    results = {}
    for k in (0, 1, 2):
        if k:
            reps[k - 1].replicaof(primary)
        wait_synced(primary, reps[:k], args.phase_timeout)
        row = {}
        for label, pl, n in (("unpipelined", 1, args.n), (f"P{args.pipeline}", args.pipeline, args.n_pipelined)):
            vals = []
            for _ in range(args.repeat):
                vals.append(bench(args, primary.port, pl, n))
                wait_synced(primary, reps[:k], args.phase_timeout)
            row[label] = statistics.median(vals)
            log(f"  {k} replica(s) {label:12s}: {row[label]:>12,.0f} SET/s  (runs: {', '.join(f'{v:,.0f}' for v in vals)})")
        results[k] = row
    for k in (1, 2):
        for label in list(results[k]):
            results[k][label + "_ratio"] = results[k][label] / results[0][label]
    for s in [primary] + reps:
        s.kill9()
    return results


def pct(vals, q):
    if not vals:
        return float("nan")
    s = sorted(vals)
    i = min(len(s) - 1, max(0, int(round(q / 100.0 * (len(s) - 1)))))
    return s[i]


def measure_lag(args, primary, reps, pipeline):
    """Start background load, probe for args.lag_seconds, stop load."""
    argv = [args.benchmark, "-h", "127.0.0.1", "-p", str(primary.port), "-t", "set",
            "-n", str(10 ** 9), "-c", str(args.clients), "-r", str(args.keyspace), "-q"]
    if pipeline > 1:
        argv += ["-P", str(pipeline)]
    load = spawn(argv, primary.dir, f"load-P{pipeline}.log", args.nice)
    time.sleep(0.5)  # let the load ramp up
    pw = primary.r(timeout=5)
    rr = [rep.r(timeout=5) for rep in reps]
    issue = [[] for _ in reps]
    ack = [[] for _ in reps]
    write_rtt = []
    offs = [[] for _ in reps]
    stop = threading.Event()

    def sample_offsets():  # informational only (1 s ACK granularity)
        r = primary.r(timeout=5)
        while not stop.is_set():
            try:
                pi = info_fields(r)
                mo = int(pi.get("master_repl_offset", "0"))
                for i in range(len(reps)):
                    v = pi.get(f"slave{i}")
                    if v:
                        d = dict(kv.split("=", 1) for kv in v.split(",") if "=" in kv)
                        offs[i].append(mo - int(d.get("offset", mo)))
            except Exception:  # noqa: BLE001
                pass
            stop.wait(0.2)

    th = threading.Thread(target=sample_offsets, daemon=True)
    th.start()
    seq = 0
    timeouts = 0
    end = time.monotonic() + args.lag_seconds
    try:
        while time.monotonic() < end:
            seq += 1
            t0 = time.perf_counter()
            pw.set("lagprobe", seq)
            t_ack = time.perf_counter()
            write_rtt.append(t_ack - t0)
            pending = set(range(len(reps)))
            deadline = t_ack + 5.0
            while pending and time.perf_counter() < deadline:
                for i in list(pending):
                    v = rr[i].get("lagprobe")
                    if v is not None and int(v) >= seq:
                        t = time.perf_counter()
                        issue[i].append(t - t0)
                        ack[i].append(t - t_ack)
                        pending.discard(i)
            timeouts += len(pending)
            time.sleep(args.probe_interval_ms / 1000.0)
    finally:
        stop.set()
        kill_proc(load, signal.SIGINT)
        kill_proc(load)
        th.join(timeout=2)
    ms = lambda x: round(x * 1000, 3)  # noqa: E731
    out = {"probes": seq, "probe_timeouts_5s": timeouts,
           "primary_write_rtt_ms": {"p50": ms(pct(write_rtt, 50)), "p99": ms(pct(write_rtt, 99))},
           "replicas": []}
    for i in range(len(reps)):
        out["replicas"].append({
            "visible_after_issue_ms": {"p50": ms(pct(issue[i], 50)), "p99": ms(pct(issue[i], 99)),
                                        "max": ms(max(issue[i])) if issue[i] else None},
            "visible_after_ack_ms": {"p50": ms(pct(ack[i], 50)), "p99": ms(pct(ack[i], 99))},
            "acked_offset_lag_bytes(1s-granular)": {"p50": pct(offs[i], 50), "max": max(offs[i]) if offs[i] else None},
        })
    return out


def phase_lag(args, root):
    log(f"phase 2: replication lag under load ({args.lag_seconds}s per load kind, probe every {args.probe_interval_ms} ms)")
    primary = Server(args, root, "lag-primary").start()
    reps = [Server(args, root, f"lag-replica{i}").start() for i in (1, 2)]
    for rep in reps:
        rep.replicaof(primary)
    wait_synced(primary, reps, args.phase_timeout)
    results = {}
    for label, pl in (("unpipelined", 1), (f"P{args.pipeline}", args.pipeline)):
        res = measure_lag(args, primary, reps, pl)
        results[label] = res
        for i, rr in enumerate(res["replicas"]):
            log(f"  load {label:12s} replica{i + 1}: after-issue p50 {rr['visible_after_issue_ms']['p50']} ms"
                f" p99 {rr['visible_after_issue_ms']['p99']} ms | after-ack p50 {rr['visible_after_ack_ms']['p50']}"
                f" p99 {rr['visible_after_ack_ms']['p99']} ms  ({res['probes']} probes, {res['probe_timeouts_5s']} timeouts)")
    for s in [primary] + reps:
        s.kill9()
    return results


SENTINEL_CONF = """port {port}
bind 127.0.0.1
daemonize no
dir {dir}
logfile {dir}/sentinel.log
sentinel monitor mymaster 127.0.0.1 {mport} 2
sentinel down-after-milliseconds mymaster {down_after}
sentinel failover-timeout mymaster {failover_timeout}
sentinel parallel-syncs mymaster 2
"""


def phase_failover(args, root):
    log("phase 3: failover through 3 sentinels (quorum 2)")
    primary = Server(args, root, "fo-primary").start()
    reps = [Server(args, root, f"fo-replica{i}").start() for i in (1, 2)]
    for rep in reps:
        rep.replicaof(primary)
    wait_synced(primary, reps, args.phase_timeout)
    sports = []
    for i in range(3):
        sp = free_port()
        d = os.path.join(root, f"sentinel{i}-{sp}")
        os.makedirs(d)
        conf = os.path.join(d, "sentinel.conf")
        with open(conf, "w") as f:
            f.write(SENTINEL_CONF.format(port=sp, dir=d, mport=primary.port,
                                         down_after=args.down_after_ms,
                                         failover_timeout=args.failover_timeout_ms))
        spawn([args.sentinel, conf], d, "stdout.log", args.nice)
        sports.append(sp)
    sent = [client(p) for p in sports]

    def all_see_everything():
        for s in sent:
            m = s.execute_command("SENTINEL", "MASTER", "mymaster")
            if isinstance(m, list):
                m = dict(zip(m[::2], m[1::2]))
            if int(m["num-slaves"]) < 2 or int(m["num-other-sentinels"]) < 2:
                return False
            if "s_down" in m["flags"] or "disconnected" in m["flags"]:
                return False
        return True
    t = time.monotonic()
    wait_until(all_see_everything, args.phase_timeout, "sentinels to discover 2 replicas + 2 peers", 0.2)
    log(f"  sentinels converged in {time.monotonic() - t:.1f}s")

    skw = {"socket_timeout": 0.5, "socket_connect_timeout": 0.5}
    ckw = dict(skw)
    if args.protocol:
        ckw["protocol"] = args.protocol
    sentinel = Sentinel([("127.0.0.1", p) for p in sports], sentinel_kwargs=dict(skw), **ckw)
    mkw = dict(ckw)
    if args.client_retries >= 0:
        # redis-py 8 retries ConnectionError 10x with exponential backoff (up
        # to 1 s sleeps) inside each call, which would quantise the measured
        # time; by default we retry ourselves every --retry-ms instead.
        mkw["retry"] = Retry(NoBackoff(), args.client_retries)
    m = sentinel.master_for("mymaster", **mkw)
    for i in range(20):  # steady state writes through the Sentinel client
        m.set(f"pre:{i}", i)
        time.sleep(0.01)
    assert sentinel.discover_master("mymaster")[1] == primary.port

    log(f"  kill -9 primary (port {primary.port})")
    t_kill = time.monotonic()
    primary.kill9()
    errors = {}
    attempts = 0
    new_port = None
    deadline = t_kill + args.phase_timeout
    while time.monotonic() < deadline:
        attempts += 1
        try:
            m.set("after-failover", attempts)
            # a replica would answer READONLY (-> error), the old primary is
            # dead, so an accepted write means a new primary; its address:
            conn_port = m.connection_pool.master_address[1]
            if conn_port != primary.port:
                new_port = conn_port
                break
        except Exception as e:  # noqa: BLE001
            errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
        time.sleep(args.retry_ms / 1000.0)
    t_write = time.monotonic()
    if new_port is None:
        raise PhaseTimeout("no write accepted by a new primary within phase timeout")
    failover_s = t_write - t_kill
    log(f"  first write accepted by new primary (port {new_port}) {failover_s:.3f}s after kill -9"
        f" ({attempts} attempts, errors: {errors})")
    res = {"failover_s": round(failover_s, 3), "new_primary_port": new_port,
           "client_retries": args.client_retries, "retry_ms": args.retry_ms,
           "attempts": attempts, "client_errors": errors}

    # the other replica must now follow the new primary
    other = [rep for rep in reps if rep.port != new_port][0]
    t = time.monotonic()
    try:
        wait_until(lambda: (lambda i: i.get("master_port") == str(new_port) and i.get("master_link_status") == "up")(info_fields(other.r())),
                   args.phase_timeout, "other replica to follow the new primary", 0.1)
        res["other_replica_following_s"] = round(time.monotonic() - t_kill, 3)
        log(f"  other replica following new primary {res['other_replica_following_s']}s after kill")
    except PhaseTimeout as e:
        res["other_replica_following_s"] = None
        log(f"  WARNING: {e}")

    if args.rejoin:
        # Restart the old primary on its old port: Sentinel must demote it
        # (it sends MULTI/SLAVEOF/CONFIG REWRITE/CLIENT KILL/EXEC).
        old = primary
        t_restart = time.monotonic()
        old.start()
        try:
            wait_until(lambda: (lambda i: i.get("role") == "slave" and i.get("master_port") == str(new_port))(info_fields(old.r())),
                       args.phase_timeout, "old primary to be reconfigured as replica", 0.2)
            res["old_primary_demoted_s"] = round(time.monotonic() - t_restart, 3)
            log(f"  restarted old primary demoted to replica {res['old_primary_demoted_s']}s after restart")
        except PhaseTimeout as e:
            res["old_primary_demoted_s"] = None
            log(f"  WARNING: {e}")

    # sentinel event timeline from the logs (relative to kill)
    ev = []
    for i, p in enumerate(sports):
        d = [x for x in os.listdir(root) if x.startswith(f"sentinel{i}-")][0]
        try:
            with open(os.path.join(root, d, "sentinel.log")) as f:
                for line in f:
                    mm = re.search(r"(\+sdown master|\+odown|\+elected-leader|\+promoted-slave|\+switch-master|\+failover-end |\+convert-to-slave)", line)
                    if mm:
                        ev.append(f"s{i}: {line.strip()}")
        except OSError:
            pass
    # "pid:X 26 Nov 2026 02:40:25.187 # +sdown ..." -> sort by time of day
    ev.sort(key=lambda x: (re.search(r"\d\d:\d\d:\d\d\.\d+", x) or re.search("", x)).group(0))
    res["sentinel_events"] = ev
    try:
        sentinel.close()
    except Exception:  # noqa: BLE001
        pass
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True, help="command template; {port} and {dir} are substituted")
    ap.add_argument("--benchmark", default="redis-benchmark")
    ap.add_argument("--sentinel", default="redis-sentinel")
    ap.add_argument("--phases", default="throughput,lag,failover")
    ap.add_argument("--n", type=int, default=50000, help="requests per unpipelined benchmark run")
    ap.add_argument("--n-pipelined", type=int, default=300000, help="requests per pipelined run")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--keyspace", type=int, default=100000, help="redis-benchmark -r")
    ap.add_argument("--repeat", type=int, default=1, help="benchmark runs per cell (median reported)")
    ap.add_argument("--lag-seconds", type=float, default=5.0)
    ap.add_argument("--probe-interval-ms", type=float, default=5.0)
    ap.add_argument("--down-after-ms", type=int, default=1000)
    ap.add_argument("--failover-timeout-ms", type=int, default=10000)
    ap.add_argument("--retry-ms", type=float, default=20.0, help="sleep between failed writes during failover")
    ap.add_argument("--client-retries", type=int, default=0,
                    help="internal redis-py retries for the failover write client "
                         "(default 0: the script retries every --retry-ms; -1: redis-py's default Retry)")
    ap.add_argument("--no-rejoin", dest="rejoin", action="store_false",
                    help="skip restarting the killed primary")
    ap.add_argument("--protocol", type=int, default=None,
                    help="RESP version for redis-py clients (default: redis-py's default, which is 3 in redis-py 8)")
    ap.add_argument("--nice", type=int, default=10, help="nice level for all child processes (0 = none)")
    ap.add_argument("--start-timeout", type=float, default=10.0)
    ap.add_argument("--phase-timeout", type=float, default=60.0)
    ap.add_argument("--max-seconds", type=int, default=600, help="hard limit for the whole run")
    ap.add_argument("--json", help="also write results to this file")
    ap.add_argument("--keep-dir", action="store_true", help="keep the temp dir (logs)")
    args = ap.parse_args()

    for tool in (args.benchmark, args.sentinel):
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

    root = tempfile.mkdtemp(prefix="repl-bench-")
    log(f"workdir {root}; server template: {args.server}")
    results = {"server": args.server, "argv": sys.argv, "redis_py": redis.__version__}
    t_all = time.monotonic()
    rc = 0
    try:
        phases = args.phases.split(",")
        if "throughput" in phases:
            results["throughput"] = phase_throughput(args, root)
            kill_all()
        if "lag" in phases:
            results["lag"] = phase_lag(args, root)
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

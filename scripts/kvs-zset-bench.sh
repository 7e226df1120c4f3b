#!/usr/bin/env bash
# kvs-zset-bench.sh -- sorted-set rank operations on one large sorted set, wirespeed
# against redis-server: memory per member, then redis-benchmark rates of ZRANK,
# ZREVRANK, ZRANGE by index, ZRANGEBYSCORE and ZREMRANGEBYRANK, alternating the servers
# ROUNDS times (the set is filled again after each server's round), and the medians.
#
# Usage: scripts/kvs-zset-bench.sh ROUNDS REQUESTS [MEMBERS]
#   MEMBERS (default 1000000) members named as redis-benchmark's `-r MEMBERS`
#   `__rand_int__` (12 digits, zero-padded), the score of member i is i; filled with
#   `redis-cli --pipe`, 1,000 members a ZADD. 50 connections, unpipelined.
# Env: WS  the wirespeed binary (default target/release/wirespeed)
# Example: scripts/kvs-zset-bench.sh 3 200000
set -euo pipefail
set -f
cd "$(dirname "$0")/.."
ROUNDS=${1:?rounds}
N=${2:?requests}
M=${3:-1000000}
WS=${WS:-$PWD/target/release/wirespeed}
tmp=$(mktemp -d)
trap 'kill ${wpid:-} ${rpid:-} 2>/dev/null || true; rm -rf "$tmp"' EXIT
python3 - "$tmp" "$M" <<'EOF'
import random, sys
d, n = sys.argv[1], int(sys.argv[2])
def cmd(*a):
    out = [b"*%d\r\n" % len(a)]
    for x in a:
        x = str(x).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(x), x))
    return b"".join(out)
def write(name, order):
    with open(f"{d}/{name}", "wb") as f:
        f.write(cmd("DEL", "z"))
        for s in range(0, len(order), 1000):
            args = ["ZADD", "z"]
            for i in order[s:s + 1000]:
                args += [i, "%012d" % i]
            f.write(cmd(*args))
order = list(range(n))
write("ordered.resp", order)
random.Random(7).shuffle(order)
write("shuffled.resp", order)
EOF
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wport=$(free_port); rport=$(free_port)
"$WS" kvs serve --port "$wport" >/dev/null 2>&1 & wpid=$!
redis-server --port "$rport" --save '' --appendonly no --dir "$tmp" >/dev/null 2>&1 & rpid=$!
for port in $wport $rport; do
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
name() { if [ "$1" = "$wport" ]; then echo wirespeed; else echo redis; fi; }
fill() { redis-cli -p "$1" --pipe < "$tmp/$2.resp" >/dev/null; }
info() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: -v k="$2" '$1==k {print $2}'; }
for port in $wport $rport; do
  for f in shuffled ordered; do
    redis-cli -p "$port" del z >/dev/null
    m0=$(info "$port" used_memory); r0=$(info "$port" used_memory_rss)
    fill "$port" "$f"
    m1=$(info "$port" used_memory); r1=$(info "$port" used_memory_rss)
    echo "$(name "$port") $f fill: used_memory $(( (m1 - m0) / M )) B/member, RSS $(( (r1 - r0) / M )) B/member"
  done
done
mid=$((M / 2))
workloads=("ZRANK z __rand_int__" "ZREVRANK z __rand_int__" "ZRANGE z $mid $((mid + 9))"
  "ZRANGEBYSCORE z $mid $((mid + 9))" "ZREMRANGEBYRANK z $mid $mid")
out="$tmp/rates"
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="$wport $rport"; else order="$rport $wport"; fi
  for port in $order; do
    for wl in "${workloads[@]}"; do
      # shellcheck disable=SC2086
      rps=$(redis-benchmark -p "$port" -n "$N" -c 50 -r "$M" -q $wl 2>/dev/null \
        | tr '\r' '\n' | awk '/requests per second/ {v=$(NF-5)} END {print v}')
      echo "round $round $(name "$port") [$wl]: $rps" | tee -a "$out"
    done
    fill "$port" ordered
  done
done
echo "medians (requests per second):"
for wl in "${workloads[@]}"; do
  for kind in wirespeed redis; do
    m=$(grep -F "$kind [$wl]:" "$out" | awk '{print $NF}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    echo "  $kind [$wl]: $m"
  done
done

#!/usr/bin/env bash
# kvs-cmd-bench.sh -- redis-benchmark throughput of any commands on wirespeed and on
# redis-server, a fresh server each, alternating, ROUNDS times; prints one line per
# round, server and workload, and the median of each at the end.
#
# Usage: scripts/kvs-cmd-bench.sh ROUNDS REQUESTS PIPELINE 'CMD ARGS...' ['CMD ARGS...' ...]
#   Each workload is one command line for redis-benchmark (`__rand_int__` in a key or
#   member is replaced by a random number below 100000; redis-benchmark pads it with
#   zeros, so it cannot be an integer argument). 50 connections.
# Env: SETUP  redis-cli commands run on each fresh server first, separated by ';'
#      WS     the wirespeed binary (default target/release/wirespeed)
# Example: SETUP='SETRANGE big 1048575 x' scripts/kvs-cmd-bench.sh 3 200000 1 'BITCOUNT big'
set -euo pipefail
# The workloads are split into words but never globbed (XADD's `*` ID stays `*`).
set -f
cd "$(dirname "$0")/.."
ROUNDS=${1:?rounds}
N=${2:?requests}
P=${3:?pipeline}
shift 3
WS=${WS:-$PWD/target/release/wirespeed}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
out=$(mktemp)
for round in $(seq "$ROUNDS"); do
  for kind in wirespeed redis; do
    port=$(free_port); dir=$(mktemp -d)
    if [ "$kind" = wirespeed ]; then
      "$WS" kvs serve --port "$port" 2>/dev/null & pid=$!
    else
      redis-server --port "$port" --save '' --appendonly no --dir "$dir" >/dev/null 2>&1 & pid=$!
    fi
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    if [ -n "${SETUP:-}" ]; then
      IFS=';' read -ra steps <<< "$SETUP"
      for s in "${steps[@]}"; do
        # shellcheck disable=SC2086
        redis-cli -p "$port" $s >/dev/null
      done
    fi
    for wl in "$@"; do
      # shellcheck disable=SC2086
      rps=$(redis-benchmark -p "$port" -n "$N" -c 50 -P "$P" -r 100000 -q $wl 2>/dev/null \
        | tr '\r' '\n' | awk '/requests per second/ {v=$(NF-5)} END {print v}')
      echo "round $round $kind [$wl]: $rps" | tee -a "$out"
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$dir"
  done
done
echo "medians (requests per second):"
for wl in "$@"; do
  for kind in wirespeed redis; do
    m=$(grep -F "$kind [$wl]:" "$out" | awk '{print $NF}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    echo "  $kind [$wl]: $m"
  done
done
rm -f "$out"

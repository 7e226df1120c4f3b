#!/usr/bin/env bash
# RDB load and save speed of wirespeed beside redis-server, on the same file.
#
#   scripts/kvs-rdb-bench.sh [KEYS] [ROUNDS]
#
# Fills a redis-server with KEYS (default 1,000,000) 100-byte strings and one big list,
# set, hash and sorted set (redis-benchmark's LPUSH/SADD/HSET/ZADD), SAVEs it, then for
# ROUNDS rounds (default 3): loads that file in wirespeed and in redis-server (each
# server's own log gives the load time), and times SAVE of the same keyspace on each
# (redis-cli's round trip). Prints the file size, each time, and MB/s; the medians are
# the figures to quote. Needs redis-server, redis-cli, redis-benchmark and a release
# build (cargo build --release).
set -euo pipefail
set -f
KEYS=${1:-1000000}
ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WS=${WS:-$ROOT/target/release/wirespeed}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 600); do redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return; sleep 0.1; done; echo "server on $1 did not start" >&2; exit 1; }
now_ms() { date +%s%3N; }

mkdir -p "$WORK/fill"
P=$(port)
redis-server --port "$P" --dir "$WORK/fill" --save '' --appendonly no >"$WORK/fill.log" 2>&1 &
FILL=$!
wait_up "$P"
redis-benchmark -p "$P" -q -n "$KEYS" -r "$KEYS" -d 100 -P 32 -t set >/dev/null
redis-benchmark -p "$P" -q -n 200000 -r 200000 -P 32 -t lpush,sadd,hset,zadd >/dev/null
redis-cli -p "$P" save >/dev/null
kill "$FILL"; wait "$FILL" 2>/dev/null || true
FILE="$WORK/fill/dump.rdb"
BYTES=$(stat -c %s "$FILE")
echo "file: $BYTES bytes, $(redis-check-rdb "$FILE" | grep -o '[0-9]* keys read')"
mbs() { python3 -c "print(f'{$BYTES/1e6/max($1,1)*1000:.0f}')"; }

for r in $(seq "$ROUNDS"); do
  for who in wirespeed redis; do
    D="$WORK/$who-$r"; mkdir -p "$D"; cp "$FILE" "$D/dump.rdb"; P=$(port)
    if [ $who = wirespeed ]; then
      "$WS" kvs serve --port "$P" --dir "$D" >"$D/log" 2>&1 &
    else
      redis-server --port "$P" --dir "$D" --save '' --appendonly no >"$D/log" 2>&1 &
    fi
    S=$!
    wait_up "$P"
    if [ $who = wirespeed ]; then
      LOAD=$(grep -o 'in [0-9]* ms' "$D/log" | grep -o '[0-9]*')
    else
      LOAD=$(python3 -c "import re,sys; print(round(float(re.search(r'DB loaded from disk: ([0-9.]+) seconds', open('$D/log').read()).group(1))*1000))")
    fi
    T0=$(now_ms); redis-cli -p "$P" save >/dev/null; T1=$(now_ms)
    SAVE=$((T1 - T0))
    echo "round $r $who: load $LOAD ms ($(mbs "$LOAD") MB/s), save $SAVE ms ($(mbs "$SAVE") MB/s), saved $(stat -c %s "$D/dump.rdb") bytes"
    kill "$S"; wait "$S" 2>/dev/null || true
    rm -rf "$D"
  done
done

#!/usr/bin/env bash
# A/B of the key-value server's CPU per request: two wirespeed binaries, alternating
# rounds, each server on core 0 with one event loop, `wirespeed kvs bench` on core 1
# (50 connections, 90% GET, 64-byte values, every reply checked); prints per round the
# requests/s, the server's CPU seconds per million requests and the mismatches.
#   scripts/kvs-ab-cpu.sh OLD_BIN NEW_BIN [PIPELINE] [REQUESTS] [ROUNDS]
set -euo pipefail
OLD=$1; NEW=$2; PL=${3:-1}; N=${4:-1000000}; ROUNDS=${5:-3}
PORT=${PORT:-7400}
for round in $(seq 1 "$ROUNDS"); do
  for which in old new; do
    BIN=$OLD; [ "$which" = new ] && BIN=$NEW
    taskset -c 0 "$BIN" kvs serve --port "$PORT" >/dev/null 2>&1 & PID=$!
    sleep 0.5
    r=$(taskset -c 1 "$NEW" kvs bench --addr 127.0.0.1:"$PORT" --connections 50 \
        --pipeline "$PL" --requests "$N" --server-pid "$PID" --json)
    echo "$which round=$round pipeline=$PL $(echo "$r" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("per_sec", round(d["per_sec"]), "cpu_s_per_million", round(d["cpu_s_per_million"], 3), "mismatches", d["mismatches"])')"
    kill "$PID"; wait "$PID" 2>/dev/null || true
  done
done
